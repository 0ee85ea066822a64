# Neo4j 5 query prefixes: CYPHER version and options, EXPLAIN/PROFILE after them, leading USE.
# Codes and accepted forms taken from Neo4j 5.26.30.

query
CYPHER 5 RETURN 1 AS x
----
1

# Neo4j 5.26 itself rejects 25; Arbor accepts it so clients written for newer servers work.
query
CYPHER 25 RETURN 1 AS x
----
1

query
CYPHER runtime=slotted RETURN 1 AS x
----
1

query
CYPHER runtime=pipelined RETURN 1 AS x
----
1

query
CYPHER 5 runtime=interpreted planner=cost RETURN 1 AS x
----
1

query
CYPHER RUNTIME=SLOTTED runtime=slotted RETURN 1 AS x
----
1

query
CYPHER 5 CYPHER planner=idp RETURN 1 AS x
----
1

statement ok
CYPHER 5 EXPLAIN RETURN 1 AS x

query
CYPHER 5 PROFILE RETURN 1 AS x
----
1

statement error Neo.ClientError.Statement.ArgumentError
CYPHER runtime=foo RETURN 1 AS x

statement error Neo.ClientError.Statement.ArgumentError
CYPHER planner=foo RETURN 1 AS x

statement error Neo.ClientError.Statement.ArgumentError
CYPHER foo=bar RETURN 1 AS x

statement error Neo.ClientError.Statement.ArgumentError
CYPHER 4 RETURN 1 AS x

statement error Neo.ClientError.Statement.ArgumentError
CYPHER runtime=slotted runtime=pipelined RETURN 1 AS x

statement ok
CREATE (:U {v: 7})

query
USE neo4j MATCH (u:U) RETURN u.v
----
7

query
USE `neo4j` RETURN 1 AS x
----
1

query
CYPHER 5 EXPLAIN USE NEO4J RETURN 1 AS x
----

statement error Neo.ClientError.Database.DatabaseNotFound
USE nope RETURN 1 AS x

statement error Neo.ClientError.Database.DatabaseNotFound
USE nope CREATE INDEX ix_nope FOR (n:U) ON (n.v)

statement error Neo.ClientError.Statement.SemanticError
USE system RETURN 1 AS x

statement ok
USE neo4j CREATE INDEX ix_use FOR (n:U) ON (n.v)

statement ok
USE neo4j DROP INDEX ix_use
