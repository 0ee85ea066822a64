# LOOKUP indexes can be dropped and created again, as in Neo4j 5.26; label and type scans
# answer the same without them (Neo4j then plans AllNodesScan + Filter; Arbor's scans are
# built in and keep their plan). What exists survives a restart.

statement ok
CREATE (:SCHEMA_LK {k: 1})-[:SCHEMA_LKR]->(:SCHEMA_LK {k: 2}), (:SCHEMA_LKO {k: 3})

statement ok
DROP INDEX index_343aff4e

query
SHOW LOOKUP INDEXES YIELD name, entityType RETURN name, entityType
----
'index_f7700477' | 'RELATIONSHIP'

query
MATCH (n:SCHEMA_LK) RETURN n.k ORDER BY n.k
----
1
2

statement error Neo.DatabaseError.Schema.IndexDropFailed Unable to drop index called `index_343aff4e`. There is no such index.
DROP INDEX index_343aff4e

statement ok
DROP INDEX index_343aff4e IF EXISTS

params {name: 'index_f7700477'}
statement ok
DROP INDEX $name

query
MATCH ()-[r:SCHEMA_LKR]->() RETURN count(r)
----
1

query
SHOW LOOKUP INDEXES YIELD name
----

restart

query
SHOW INDEXES YIELD name, type WHERE type = 'LOOKUP' RETURN name
----

query
MATCH (n:SCHEMA_LK)-[:SCHEMA_LKR]->(m) RETURN n.k, m.k
----
1 | 2

statement ok
CREATE LOOKUP INDEX schema_lk_nodes FOR (n) ON EACH labels(n)

statement ok
CREATE LOOKUP INDEX IF NOT EXISTS FOR ()-[r]-() ON EACH type(r)

statement error Neo.ClientError.Schema.IndexAlreadyExists There already exists an index (:<any-labels>).
CREATE LOOKUP INDEX schema_lk_other FOR (n) ON EACH labels(n)

restart

query
SHOW LOOKUP INDEXES YIELD id, name, entityType, createStatement RETURN id, name, entityType, createStatement
----
1 | 'schema_lk_nodes' | 'NODE' | 'CREATE LOOKUP INDEX `schema_lk_nodes` FOR (n) ON EACH labels(n)'
2 | 'index_f7700477' | 'RELATIONSHIP' | 'CREATE LOOKUP INDEX `index_f7700477` FOR ()-[r]-() ON EACH type(r)'
