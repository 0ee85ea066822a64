# TEXT indexes on relationships: CONTAINS and ENDS WITH scan the index
# (DirectedRelationshipIndexContainsScan / ...EndsWithScan, Neo4j 5.26's operators), STARTS WITH
# and equality seek it; the predicate stays in the filter. Rows are Neo4j 5.26's answers.

statement ok
CREATE TEXT INDEX schema_rel_text_s FOR ()-[r:SCHEMA_RT]-() ON (r.s)

statement ok
CREATE (a:SCHEMA_RQ {k: 'a'}), (b:SCHEMA_RQ {k: 'b'}), (a)-[:SCHEMA_RT {k: 'r1', s: 'Hannah'}]->(b), (a)-[:SCHEMA_RT {k: 'r2', s: 'Anna'}]->(b), (b)-[:SCHEMA_RT {k: 'r3', s: 'naïve café'}]->(a), (b)-[:SCHEMA_RT {k: 'r4', s: 5}]->(a)

query explain
MATCH ()-[r:SCHEMA_RT]->() WHERE r.s CONTAINS 'ab' RETURN r.k
----
01)ProduceResults: r.k
02)--Projection
03)----Filter
04)------DirectedRelationshipIndexContainsScan: :SCHEMA_RT(s)
05)--------Argument

query explain
MATCH ()-[r:SCHEMA_RT]-() WHERE r.s ENDS WITH 'ab' RETURN r.k
----
01)ProduceResults: r.k
02)--Projection
03)----Filter
04)------UndirectedRelationshipIndexEndsWithScan: :SCHEMA_RT(s)
05)--------Argument

query explain
MATCH ()-[r:SCHEMA_RT]->() WHERE r.s STARTS WITH 'ab' RETURN r.k
----
01)ProduceResults: r.k
02)--Projection
03)----Filter
04)------DirectedRelationshipIndexSeekByRange: :SCHEMA_RT(s)
05)--------Argument

query
MATCH (x)-[r:SCHEMA_RT]->(y) WHERE r.s CONTAINS 'nn' RETURN r.k, x.k, y.k ORDER BY r.k
----
'r1' | 'a' | 'b'
'r2' | 'a' | 'b'

query
MATCH ()-[r:SCHEMA_RT]-() WHERE r.s CONTAINS 'nn' RETURN r.k ORDER BY r.k
----
'r1'
'r1'
'r2'
'r2'

query
MATCH ()-[r:SCHEMA_RT]->() WHERE r.s ENDS WITH 'é' RETURN r.k ORDER BY r.k
----
'r3'

query
MATCH ()-[r:SCHEMA_RT]->() WHERE r.s ENDS WITH '' RETURN r.k ORDER BY r.k
----
'r1'
'r2'
'r3'

query
MATCH ()-[r:SCHEMA_RT]->() WHERE r.s CONTAINS 'a' RETURN r.k ORDER BY r.k
----
'r1'
'r2'
'r3'

query
MATCH ()-[r:SCHEMA_RT]->() WHERE r.s STARTS WITH 'An' RETURN r.k ORDER BY r.k
----
'r2'

query
MATCH ()-[r:SCHEMA_RT]->() WHERE r.s = 'Anna' RETURN r.k ORDER BY r.k
----
'r2'

query
MATCH ()-[r:SCHEMA_RT]->() WHERE r.s CONTAINS null RETURN r.k ORDER BY r.k
----

query
MATCH ()-[r:SCHEMA_RT]->() WHERE r.s CONTAINS 5 RETURN r.k ORDER BY r.k
----

# A transaction's own writes are seen by its scans.
query
MATCH ()-[r:SCHEMA_RT {k: 'r2'}]->() SET r.s = 'Savannah' WITH count(*) AS c MATCH ()-[q:SCHEMA_RT]->() WHERE q.s ENDS WITH 'nnah' RETURN q.k ORDER BY q.k
----
'r1'
'r2'

restart

query
MATCH ()-[r:SCHEMA_RT]->() WHERE r.s ENDS WITH 'nnah' RETURN r.k ORDER BY r.k
----
'r1'
'r2'
