# Relationship property indexes answering ranges, STARTS WITH and IN: results as Neo4j 5.26
# returns them (checked against the anchor), with the indexes created before and after the data.

statement ok
CREATE INDEX rel_p FOR ()-[r:T]-() ON (r.p)

statement ok
CREATE (a:N {id: 1}), (b:N {id: 2}), (c:N {id: 3}), (a)-[:T {p: 1, s: 'ab'}]->(b), (b)-[:T {p: 2.5, s: 'abc'}]->(c), (c)-[:T {p: 4, s: 'b'}]->(a), (a)-[:T {p: 'x', s: 'a'}]->(a), (a)-[:U {p: 2}]->(b), (b)-[:T {s: 1}]->(a)

statement ok
CREATE INDEX rel_s FOR ()-[r:T]-() ON (r.s)

statement ok
CALL db.awaitIndexes()

query
MATCH (x)-[r:T]->(y) WHERE r.p > 1 RETURN x.id, y.id, r.p
----
2 | 3 | 2.5
3 | 1 | 4

query
MATCH (x)-[r:T]-(y) WHERE 1 <= r.p < 4 RETURN x.id, y.id, r.p
----
1 | 2 | 1
2 | 1 | 1
2 | 3 | 2.5
3 | 2 | 2.5

query
MATCH (x)<-[r:T]-(y) WHERE r.p <= 2.5 RETURN x.id, y.id
----
2 | 1
3 | 2

query
MATCH (x)-[r:T]->(y) WHERE r.p >= 'a' RETURN x.id, r.p
----
1 | 'x'

query
MATCH (x)-[r:T]->(y) WHERE r.s STARTS WITH 'ab' RETURN x.id, r.s
----
1 | 'ab'
2 | 'abc'

query
MATCH (x)-[r:T]-(y) WHERE r.s STARTS WITH 'a' RETURN x.id, y.id
----
1 | 2
2 | 1
2 | 3
3 | 2
1 | 1

query
MATCH (x)-[r:T]->(y) WHERE r.p IN [1, 4.0, 'x', null] RETURN x.id, y.id
----
1 | 2
3 | 1
1 | 1

query
MATCH (x)-[r:T]->(x) WHERE r.s > 'a' OR r.p = 'x' RETURN x.id
----
1

query
UNWIND [1, 'a', null] AS v MATCH (x)-[r:T]->(y) WHERE r.p > v RETURN v, x.id
----
1 | 2
1 | 3
'a' | 1

query ordered
MATCH (x)-[r:T]->(y) WHERE r.p > 2 RETURN x.id ORDER BY r.p DESC
----
3
2

statement error Neo.ClientError.Statement.SyntaxError
MATCH (x)-[r:T]->(y) WHERE r.p IN 5 RETURN x.id

# The transaction's own writes are seen by the seeks.
statement ok
:begin

statement ok
MATCH (:N {id: 3})-[r:T]->() SET r.p = 0, r.s = 'abd'

statement ok
MATCH (a:N {id: 2}) CREATE (a)-[:T {p: 3, s: 'aa'}]->(a)

query
MATCH (x)-[r:T]->(y) WHERE r.p > 1 RETURN x.id, y.id, r.p
----
2 | 3 | 2.5
2 | 2 | 3

query
MATCH (x)-[r:T]->(y) WHERE r.s STARTS WITH 'ab' RETURN x.id, r.s
----
1 | 'ab'
2 | 'abc'
3 | 'abd'

statement ok
:rollback

query
MATCH (x)-[r:T]->(y) WHERE r.p > 1 RETURN x.id, y.id, r.p
----
2 | 3 | 2.5
3 | 1 | 4
