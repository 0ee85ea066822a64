# Relationship property indexes: equality seeks return exactly what scans return.

statement ok
CREATE (a:N {id: 1}), (b:N {id: 2}), (c:N {id: 3}), (a)-[:T {p: 1}]->(b), (b)-[:T {p: 1.0}]->(c), (c)-[:T {p: 2}]->(a), (a)-[:T {p: 1}]->(a), (a)-[:U {p: 1}]->(b)

query
MATCH (x)-[r:T {p: 1}]->(y) RETURN x.id, y.id
----
1 | 2
2 | 3
1 | 1

query
MATCH (x)-[r:T {p: 1}]-(y) RETURN x.id, y.id
----
1 | 2
2 | 1
2 | 3
3 | 2
1 | 1

query
MATCH (x)<-[r:T {p: 1}]-(y) RETURN x.id, y.id
----
2 | 1
3 | 2
1 | 1

query
MATCH (x)-[r:T {p: 1}]->(x) RETURN x.id
----
1

query
MATCH (x)-[r:T]->(y) WHERE r.p = 2 RETURN x.id, y.id
----
3 | 1

query
MATCH ()-[r:T {p: 1}]->()-[s:T]->(z) RETURN r.p, z.id
----
1 | 3
1.0 | 1
1 | 2

query
MATCH (x:N)-[r:T {p: 1}]->(y:N {id: 3}) RETURN x.id
----
2

query
MATCH (x)-[r:T {p: null}]->(y) RETURN x.id
----


query
MATCH (x)-[r:U {p: 1}]->(y) RETURN x.id, y.id
----
1 | 2

query
MATCH p = (x)-[r:T {p: 2}]->(y) RETURN length(p), x.id, [n IN nodes(p) | n.id]
----
1 | 3 | [3, 1]

query
MATCH (x)-[r:T {p: 2}]->(y)-[:T*1..2]->(z) RETURN x.id, z.id
----
3 | 1
3 | 2
3 | 2
3 | 3

statement ok
CREATE INDEX rel_p IF NOT EXISTS FOR ()-[r:T]-() ON (r.p)

# On existing relationships it populates in the background.
statement ok
CALL db.awaitIndexes()

query
SHOW INDEXES YIELD name, entityType, labelsOrTypes, properties, state RETURN name, entityType, labelsOrTypes, properties, state
----
'index_343aff4e' | 'NODE' | null | null | 'ONLINE'
'index_f7700477' | 'RELATIONSHIP' | null | null | 'ONLINE'
'rel_p' | 'RELATIONSHIP' | ['T'] | ['p'] | 'ONLINE'

query
MATCH (x)-[r:T {p: 1}]->(y) RETURN x.id, y.id
----
1 | 2
2 | 3
1 | 1

query
MATCH (x)-[r:T {p: 1}]-(y) RETURN x.id, y.id
----
1 | 2
2 | 1
2 | 3
3 | 2
1 | 1

query
MATCH (x)<-[r:T {p: 1}]-(y) RETURN x.id, y.id
----
2 | 1
3 | 2
1 | 1

query
MATCH (x)-[r:T {p: 1}]->(x) RETURN x.id
----
1

query
MATCH (x)-[r:T]->(y) WHERE r.p = 2 RETURN x.id, y.id
----
3 | 1

query
MATCH ()-[r:T {p: 1}]->()-[s:T]->(z) RETURN r.p, z.id
----
1 | 3
1.0 | 1
1 | 2

query
MATCH (x:N)-[r:T {p: 1}]->(y:N {id: 3}) RETURN x.id
----
2

query
MATCH (x)-[r:T {p: null}]->(y) RETURN x.id
----


query
MATCH (x)-[r:U {p: 1}]->(y) RETURN x.id, y.id
----
1 | 2

query
MATCH p = (x)-[r:T {p: 2}]->(y) RETURN length(p), x.id, [n IN nodes(p) | n.id]
----
1 | 3 | [3, 1]

query
MATCH (x)-[r:T {p: 2}]->(y)-[:T*1..2]->(z) RETURN x.id, z.id
----
3 | 1
3 | 2
3 | 2
3 | 3

statement ok
:begin

statement ok
MATCH (x {id: 1})-[r:T]->(y {id: 2}) SET r.p = 5

statement ok
MATCH (x {id: 3}), (y {id: 2}) CREATE (x)-[:T {p: 5}]->(y)

query
MATCH (x)-[r:T {p: 5}]->(y) RETURN x.id, y.id
----
1 | 2
3 | 2

query
MATCH (x)-[r:T {p: 1}]->(y) RETURN x.id, y.id
----
2 | 3
1 | 1

statement ok
:rollback

query
MATCH (x)-[r:T {p: 5}]->(y) RETURN x.id, y.id
----

statement ok
DROP INDEX rel_p

query
MATCH (x)-[r:T {p: 1}]->(y) RETURN x.id, y.id
----
1 | 2
2 | 3
1 | 1

query
MATCH (x)-[r:T {p: 1}]-(y) RETURN x.id, y.id
----
1 | 2
2 | 1
2 | 3
3 | 2
1 | 1

query
MATCH (x)<-[r:T {p: 1}]-(y) RETURN x.id, y.id
----
2 | 1
3 | 2
1 | 1

query
MATCH (x)-[r:T {p: 1}]->(x) RETURN x.id
----
1

query
MATCH (x)-[r:T]->(y) WHERE r.p = 2 RETURN x.id, y.id
----
3 | 1

query
MATCH ()-[r:T {p: 1}]->()-[s:T]->(z) RETURN r.p, z.id
----
1 | 3
1.0 | 1
1 | 2

query
MATCH (x:N)-[r:T {p: 1}]->(y:N {id: 3}) RETURN x.id
----
2

query
MATCH (x)-[r:T {p: null}]->(y) RETURN x.id
----


query
MATCH (x)-[r:U {p: 1}]->(y) RETURN x.id, y.id
----
1 | 2

query
MATCH p = (x)-[r:T {p: 2}]->(y) RETURN length(p), x.id, [n IN nodes(p) | n.id]
----
1 | 3 | [3, 1]

query
MATCH (x)-[r:T {p: 2}]->(y)-[:T*1..2]->(z) RETURN x.id, z.id
----
3 | 1
3 | 2
3 | 2
3 | 3
