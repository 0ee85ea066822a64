# SHOW commands planned as a procedure call followed by the ordinary operators: YIELD (with
# renames), WHERE, ORDER BY / SKIP / LIMIT after YIELD or in RETURN, aggregation in RETURN,
# and the errors of unknown columns. Rows and error codes are Neo4j 5.26 Community's answers
# (names start with HEALTH5 so the shared Neo4j's other indexes stay out of the answers).

statement ok
CREATE INDEX HEALTH5_age FOR (n:HEALTH5_Person) ON (n.age)

statement ok
CREATE TEXT INDEX HEALTH5_name FOR (n:HEALTH5_Person) ON (n.name)

statement ok
CREATE INDEX HEALTH5_since FOR ()-[r:HEALTH5_KNOWS]-() ON (r.since)

statement ok
CREATE CONSTRAINT HEALTH5_id FOR (n:HEALTH5_Person) REQUIRE n.id IS UNIQUE

query ordered
SHOW INDEXES YIELD name, type WHERE name STARTS WITH 'HEALTH5' RETURN name, type ORDER BY name DESC
----
'HEALTH5_since' | 'RANGE'
'HEALTH5_name' | 'TEXT'
'HEALTH5_id' | 'RANGE'
'HEALTH5_age' | 'RANGE'

query ordered
SHOW INDEXES YIELD name, type WHERE name STARTS WITH 'HEALTH5' RETURN name, type ORDER BY name SKIP 1 LIMIT 2
----
'HEALTH5_id' | 'RANGE'
'HEALTH5_name' | 'TEXT'

query ordered
SHOW INDEXES YIELD name, type WHERE name STARTS WITH 'HEALTH5' RETURN name, type ORDER BY type DESC, name SKIP 1 LIMIT 2
----
'HEALTH5_age' | 'RANGE'
'HEALTH5_id' | 'RANGE'

query ordered
SHOW INDEXES YIELD name AS n, type AS t WHERE n STARTS WITH 'HEALTH5' RETURN t, n ORDER BY n
----
'RANGE' | 'HEALTH5_age'
'RANGE' | 'HEALTH5_id'
'TEXT' | 'HEALTH5_name'
'RANGE' | 'HEALTH5_since'

# ORDER BY right after YIELD, then WHERE.
query ordered
SHOW INDEXES YIELD name, entityType ORDER BY name DESC WHERE name STARTS WITH 'HEALTH5'
----
'HEALTH5_since' | 'RELATIONSHIP'
'HEALTH5_name' | 'NODE'
'HEALTH5_id' | 'NODE'
'HEALTH5_age' | 'NODE'

query ordered
SHOW INDEXES YIELD name AS n ORDER BY n WHERE n STARTS WITH 'HEALTH5' RETURN n
----
'HEALTH5_age'
'HEALTH5_id'
'HEALTH5_name'
'HEALTH5_since'

query
SHOW INDEXES YIELD * WHERE name = 'HEALTH5_name' RETURN name, type, entityType, labelsOrTypes, properties, owningConstraint
----
'HEALTH5_name' | 'TEXT' | 'NODE' | ['HEALTH5_Person'] | ['name'] | null

query ordered
SHOW INDEXES YIELD name, type WHERE name STARTS WITH 'HEALTH5' RETURN type, count(*) AS c ORDER BY type
----
'RANGE' | 3
'TEXT' | 1

query
SHOW INDEXES YIELD name WHERE name STARTS WITH 'HEALTH5' RETURN collect(name) AS names
----
['HEALTH5_age', 'HEALTH5_id', 'HEALTH5_name', 'HEALTH5_since']

query ordered
SHOW INDEXES YIELD name WHERE name STARTS WITH 'HEALTH5' RETURN toUpper(name) AS up ORDER BY up SKIP 2
----
'HEALTH5_NAME'
'HEALTH5_SINCE'

query
SHOW INDEXES YIELD name, owningConstraint WHERE owningConstraint IS NOT NULL AND name STARTS WITH 'HEALTH5' RETURN name, owningConstraint
----
'HEALTH5_id' | 'HEALTH5_id'

query
SHOW CONSTRAINTS YIELD name, type, labelsOrTypes, properties, ownedIndex WHERE name STARTS WITH 'HEALTH5' RETURN name, type, labelsOrTypes, properties, ownedIndex
----
'HEALTH5_id' | 'UNIQUENESS' | ['HEALTH5_Person'] | ['id'] | 'HEALTH5_id'

query ordered
SHOW RANGE INDEXES YIELD name, type WHERE name STARTS WITH 'HEALTH5' RETURN name, type ORDER BY name
----
'HEALTH5_age' | 'RANGE'
'HEALTH5_id' | 'RANGE'
'HEALTH5_since' | 'RANGE'

query
SHOW TEXT INDEXES YIELD name WHERE name STARTS WITH 'HEALTH5' RETURN name
----
'HEALTH5_name'

query
SHOW PROCEDURES YIELD name, mode WHERE name = 'db.labels' RETURN name, mode
----
'db.labels' | 'READ'

query
SHOW PROCEDURES YIELD name, mode WHERE name = 'nope.nope' RETURN count(*) AS n
----
0

query ordered
SHOW FUNCTIONS YIELD name, category, isBuiltIn WHERE name IN ['toUpper', 'count'] RETURN name, category, isBuiltIn ORDER BY name
----
'count' | 'Aggregating' | true
'toUpper' | 'String' | true

statement error Neo.ClientError.Statement.SyntaxError Trying to YIELD non-existing column: `nope`
SHOW INDEXES YIELD nope

statement error Neo.ClientError.Statement.SyntaxError Variable `nope` not defined
SHOW INDEXES YIELD name RETURN nope

# The plan of a SHOW command (Neo4j names the call `ShowIndexes`; Arbor's is the internal
# procedure's call).
query explain
SHOW INDEXES YIELD name WHERE name STARTS WITH 'x' RETURN name ORDER BY name
----
01)ProduceResults: name
02)--Sort
03)----Filter
04)------ProcedureCall: SHOW INDEXES
05)--------Argument
