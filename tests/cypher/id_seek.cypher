# Seeks by id and element id (`NodeByIdSeek`, `NodeByElementIdSeek`, the relationship forms):
# EXPLAIN names Neo4j's operators, and the answers are the scan's (checked against Neo4j 5.26:
# a list matches a node once however often it names it (Neo4j's seek repeats an element id
# listed twice, its scan does not: we follow the predicate); a malformed or foreign element id,
# or one of the other kind, matches nothing).

statement ok
CREATE (a:IDSEEK7_A {v: 1})-[:IDSEEK7_T {w: 1}]->(b:IDSEEK7_A {v: 2}), (b)-[:IDSEEK7_U {w: 2}]->(:IDSEEK7_B {v: 3})

params {id: 0, ids: ['n:0']}
query explain
MATCH (n) WHERE id(n) = $id RETURN n
----
01)ProduceResults: n
02)--Filter
03)----NodeByIdSeek
04)------Argument

params {id: 0, ids: ['n:0']}
query explain
MATCH (n:IDSEEK7_A) WHERE elementId(n) IN $ids RETURN n
----
01)ProduceResults: n
02)--Filter
03)----NodeByElementIdSeek
04)------Argument

params {id: 0, ids: ['n:0']}
query explain
MATCH ()-[r]->() WHERE id(r) = $id RETURN r
----
01)ProduceResults: r
02)--Filter
03)----DirectedRelationshipByIdSeek
04)------Argument

params {id: 'r:0'}
query explain
MATCH ()-[r:IDSEEK7_T]-() WHERE elementId(r) = $id RETURN r
----
01)ProduceResults: r
02)--Filter
03)----UndirectedRelationshipByElementIdSeek
04)------Argument

query explain
MATCH (m:IDSEEK7_A {v: 1}) MATCH (n) WHERE id(n) = id(m) + 1 RETURN n.v
----
01)ProduceResults: n.v
02)--Projection
03)----Filter
04)------NodeByIdSeek
05)--------NodeIndexSeek: :IDSEEK7_A(v)
06)----------Argument

query
MATCH (m:IDSEEK7_A {v: 1}) MATCH (n) WHERE id(n) = id(m) RETURN n.v
----
1

query
MATCH (m:IDSEEK7_A) WITH collect(id(m)) AS ids MATCH (n) WHERE id(n) IN ids + ids RETURN n.v
----
1
2

query
MATCH (m:IDSEEK7_A {v: 1}) WITH elementId(m) AS e MATCH (n) WHERE elementId(n) IN [e, e, 'junk', 'n:', 'n:x', '4:abc:0', null] RETURN n.v
----
1

query
MATCH (m:IDSEEK7_A {v: 1}) WITH elementId(m) AS e MATCH (n:IDSEEK7_B) WHERE elementId(n) = e RETURN n.v
----

query
MATCH (m:IDSEEK7_A {v: 1}) WITH toFloat(id(m)) AS f MATCH (n) WHERE id(n) = f RETURN n.v
----
1

query
MATCH (n) WHERE id(n) = null RETURN n.v
----

query
MATCH ()-[r:IDSEEK7_T]->() WITH elementId(r) AS e MATCH (n) WHERE elementId(n) = e RETURN n.v
----

query
MATCH ()-[s:IDSEEK7_T]->() MATCH ()-[r]->() WHERE id(r) IN [id(s), id(s)] RETURN type(r), r.w
----
'IDSEEK7_T' | 1

query
MATCH ()-[s:IDSEEK7_T]->() MATCH (x)-[r]-(y) WHERE id(r) = id(s) RETURN x.v, y.v
----
1 | 2
2 | 1

query
MATCH ()-[s:IDSEEK7_T]->() MATCH (x)<-[r]-() WHERE elementId(r) = elementId(s) RETURN x.v
----
2

query
MATCH ()-[s:IDSEEK7_T]->() MATCH (x:IDSEEK7_B)<-[r]-() WHERE id(r) = id(s) RETURN x.v
----

query
MATCH ()-[s:IDSEEK7_U]->() MATCH ()-[r:IDSEEK7_T]->() WHERE id(r) = id(s) RETURN r.w
----

query
MATCH (a:IDSEEK7_A) OPTIONAL MATCH (n:IDSEEK7_B) WHERE id(n) = id(a) RETURN a.v, n.v
----
1 | null
2 | null

query
MATCH (a:IDSEEK7_A) WHERE EXISTS { MATCH (n) WHERE id(n) = id(a) AND n.v = 2 } RETURN a.v
----
2
