# Relationship uniqueness and key constraints (Neo4j 5.7+ syntax), enforced on every write,
# listed with Neo4j's type names, backed by an index that seeks use, and refused where Neo4j
# refuses (checked against Neo4j 5.26 except the key constraints, Enterprise-only there).

statement ok
CREATE (a:N {id: 1}), (b:N {id: 2}), (a)-[:T {p: 1, q: 1}]->(b), (b)-[:T {p: 1, q: 2}]->(a), (a)-[:T {q: 3}]->(a)

statement error Neo.DatabaseError.Schema.ConstraintCreationFailed
CREATE CONSTRAINT ru FOR ()-[r:T]-() REQUIRE r.p IS UNIQUE

statement error Neo.DatabaseError.Schema.ConstraintCreationFailed
CREATE CONSTRAINT rk FOR ()-[r:T]-() REQUIRE r.p IS REL KEY

statement error Neo.ClientError.Statement.SyntaxError
CREATE CONSTRAINT bad FOR ()-[r:T]-() REQUIRE r.q IS NODE KEY

statement error Neo.ClientError.Statement.SyntaxError
CREATE CONSTRAINT bad FOR (n:N) REQUIRE n.q IS REL UNIQUE

statement ok
CREATE CONSTRAINT ru FOR ()-[r:T]-() REQUIRE r.q IS REL UNIQUE

statement ok
CREATE CONSTRAINT ru IF NOT EXISTS FOR ()-[r:T]-() REQUIRE r.q IS UNIQUE

statement error Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists
CREATE CONSTRAINT ru FOR ()-[r:T]-() REQUIRE r.q IS UNIQUE

query
SHOW CONSTRAINTS YIELD name, type, entityType, labelsOrTypes, properties, ownedIndex RETURN name, type, entityType, labelsOrTypes, properties, ownedIndex
----
'ru' | 'RELATIONSHIP_UNIQUENESS' | 'RELATIONSHIP' | ['T'] | ['q'] | 'ru'

query
SHOW INDEXES YIELD name, type, entityType, labelsOrTypes, properties, owningConstraint RETURN name, type, entityType, labelsOrTypes, properties, owningConstraint
----
'index_343aff4e' | 'LOOKUP' | 'NODE' | null | null | null
'index_f7700477' | 'LOOKUP' | 'RELATIONSHIP' | null | null | null
'ru' | 'RANGE' | 'RELATIONSHIP' | ['T'] | ['q'] | 'ru'

# Every write path: CREATE, SET, SET +=, MERGE's create, two in one statement.
statement error Neo.ClientError.Schema.ConstraintValidationFailed
MATCH (a:N {id: 1}), (b:N {id: 2}) CREATE (a)-[:T {q: 1}]->(b)

statement error Neo.ClientError.Schema.ConstraintValidationFailed
MATCH (a:N {id: 1}), (b:N {id: 2}) CREATE (a)-[:T {q: 1.0}]->(b)

statement ok
MATCH (a:N {id: 1}), (b:N {id: 2}) CREATE (a)-[:T {q: 9}]->(b)

statement error Neo.ClientError.Schema.ConstraintValidationFailed
MATCH ()-[r:T {q: 9}]->() SET r.q = 2

statement error Neo.ClientError.Schema.ConstraintValidationFailed
MATCH ()-[r:T {q: 9}]->() SET r += {q: 3}

statement error Neo.ClientError.Schema.ConstraintValidationFailed
MATCH (a:N {id: 2}) MERGE (a)-[:T {q: 1, p: 5}]->(a)

statement error Neo.ClientError.Schema.ConstraintValidationFailed
MATCH (a:N {id: 1}) CREATE (a)-[:T {q: 20}]->(a), (a)-[:T {q: 20}]->(a)

statement error Neo.ClientError.Schema.ConstraintValidationFailed
UNWIND [21, 22, 21] AS q MATCH (a:N {id: 1}) CREATE (a)-[:T {q: q}]->(a)

# A relationship may keep its own value, other types and missing values are not constrained.
statement ok
MATCH ()-[r:T {q: 9}]->() SET r.q = 9

statement ok
MATCH (a:N {id: 1}) CREATE (a)-[:U {q: 1}]->(a), (a)-[:T]->(a), (a)-[:T]->(a)

query
MATCH ()-[r:T]->() RETURN r.q ORDER BY r.q
----
1
2
3
9
null
null

# Swapping values in one transaction: checked per statement against what it sees.
statement ok
:begin

statement ok
MATCH ()-[r:T {q: 9}]->() SET r.q = 10

statement ok
MATCH ()-[r:T {q: 1}]->() SET r.q = 9

statement error Neo.ClientError.Schema.ConstraintValidationFailed
MATCH ()-[r:T {q: 2}]->() SET r.q = 9

statement ok
:rollback

query
MATCH (x)-[r:T]->(y) WHERE r.q = 2 RETURN x.id, y.id
----
2 | 1

query
MATCH (x)-[r:T]->(y) WHERE r.q >= 3 RETURN x.id, y.id, r.q
----
1 | 1 | 3
1 | 2 | 9

# An index where the constraint's index exists, and a constraint where an index exists.
statement error Neo.ClientError.Schema.ConstraintAlreadyExists
CREATE INDEX rx FOR ()-[r:T]-() ON (r.q)

statement ok
CREATE INDEX rx IF NOT EXISTS FOR ()-[r:T]-() ON (r.q)

statement error Neo.ClientError.Schema.ConstraintAlreadyExists
CREATE CONSTRAINT rk FOR ()-[r:T]-() REQUIRE r.q IS RELATIONSHIP KEY

statement ok
CREATE INDEX ry FOR ()-[r:T]-() ON (r.y)

statement error Neo.ClientError.Schema.IndexAlreadyExists
CREATE CONSTRAINT ruy FOR ()-[r:T]-() REQUIRE r.y IS UNIQUE

statement error Neo.ClientError.Schema.IndexAlreadyExists
CREATE CONSTRAINT ruy IF NOT EXISTS FOR ()-[r:T]-() REQUIRE r.y IS UNIQUE

statement ok
DROP CONSTRAINT ru

statement ok
MATCH (a:N {id: 1}), (b:N {id: 2}) CREATE (a)-[:T {q: 1}]->(b)

query
SHOW CONSTRAINTS YIELD name RETURN count(*)
----
0

# Relationship keys: unique and every key present (composite).
statement ok
CREATE (a:K {id: 1})-[:W {a: 1, b: 'x'}]->(b:K {id: 2}), (b)-[:W {a: 1, b: 'y'}]->(a)

statement ok
CREATE CONSTRAINT wk FOR ()-[r:W]-() REQUIRE (r.a, r.b) IS RELATIONSHIP KEY

query
SHOW CONSTRAINTS YIELD name, type, properties RETURN name, type, properties
----
'wk' | 'RELATIONSHIP_KEY' | ['a', 'b']

statement error Neo.ClientError.Schema.ConstraintValidationFailed
MATCH (a:K {id: 1}) CREATE (a)-[:W {a: 2}]->(a)

statement error Neo.ClientError.Schema.ConstraintValidationFailed
MATCH ()-[r:W {b: 'x'}]->() REMOVE r.a

statement error Neo.ClientError.Schema.ConstraintValidationFailed
MATCH (a:K {id: 1}) CREATE (a)-[:W {a: 1.0, b: 'y'}]->(a)

statement ok
MATCH (a:K {id: 1}) CREATE (a)-[:W {a: 1, b: 'z'}]->(a)

query
MATCH (x)-[r:W {a: 1, b: 'z'}]->(y) RETURN x.id, y.id
----
1 | 1

statement ok
DROP CONSTRAINT wk

statement ok
MATCH (a:K {id: 1}) CREATE (a)-[:W {a: 2}]->(a)
