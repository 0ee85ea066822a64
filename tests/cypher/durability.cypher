# Restart (clean shutdown, checkpoint) and crash (no checkpoint: recovery replays the WAL) both
# keep every committed write, with schema; a transaction open at the crash is lost.

statement ok
CREATE INDEX person_name FOR (p:Person) ON (p.name)

statement ok
CREATE (:Person {name: 'Ann', age: 30})-[:KNOWS {since: 2020}]->(:Person {name: 'Bob', age: 40})

restart

query
MATCH (a:Person)-[k:KNOWS]->(b) RETURN a.name, k.since, b.name
----
'Ann' | 2020 | 'Bob'

statement ok
MATCH (p:Person {name: 'Bob'}) SET p.age = 41

statement ok
CREATE (:Person {name: 'Cid'})

connection open
statement ok
:begin

connection open
statement ok
CREATE (:Person {name: 'Lost'})

crash

query
MATCH (p:Person) RETURN p.name, p.age
----
'Ann' | 30
'Bob' | 41
'Cid' | null

query
SHOW INDEXES YIELD name, labelsOrTypes, properties WHERE name = 'person_name' RETURN name, labelsOrTypes, properties
----
'person_name' | ['Person'] | ['name']

# The cypher-shell spelling of the same meta-commands.
statement ok
MATCH (p:Person {name: 'Cid'}) DETACH DELETE p

statement ok
:crash

statement ok
:restart

query
MATCH (n) RETURN count(n)
----
2

query
MATCH (p:Person {name: 'Ann'}) RETURN p.age
----
30
