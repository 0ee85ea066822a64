# EXPLAIN plans (the plan in the result summary, in process and over Bolt): an index seek is
# chosen when an index exists, counts come from the count store, and EXPLAIN runs nothing.

statement ok
CREATE INDEX acct_id FOR (a:Account) ON (a.id)

statement ok
CREATE (:Account {id: 1})-[:PAID]->(:Account {id: 2}), (:Account {id: 3})

query explain
MATCH (a:Account {id: 1}) RETURN a.id
----
01)ProduceResults: a.id
02)--Projection
03)----NodeIndexSeek: :Account(id)
04)------Argument

query explain
MATCH (a:Account) WHERE a.id > 1 RETURN a.id
----
01)ProduceResults: a.id
02)--Projection
03)----Filter
04)------NodeIndexSeekByRange: :Account(id)
05)--------Argument

query explain
MATCH (a:Account) RETURN count(a)
----
01)ProduceResults: count(a)
02)--NodeCountFromCountStore
03)----Argument

query explain
MATCH (:Account)-[:PAID]->() RETURN count(*)
----
01)ProduceResults: count(*)
02)--RelationshipCountFromCountStore
03)----Argument

query explain
MATCH (a:Account)-[:PAID]->(b) RETURN b.id
----
01)ProduceResults: b.id
02)--Projection
03)----Expand(All): :PAID
04)------NodeByLabelScan: :Account
05)--------Argument

query explain
CREATE (:Account {id: 99})
----
01)ProduceResults
02)--Create
03)----Argument

query
MATCH (a:Account {id: 99}) RETURN count(a)
----
0
