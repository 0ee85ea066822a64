# Indexes and constraints: DDL in Neo4j 5 and pre-5 syntax, SHOW, composite keys, existence and
# node-key constraints; violating writes fail and change nothing.

statement ok
CREATE (:Person {first: 'Ada', last: 'Lovelace', email: 'ada@x'}), (:Person {first: 'Alan', last: 'Turing', email: 'alan@x'}), (:Person {first: 'Ada', last: 'Byron'})

# A composite index (Neo4j 5 syntax) and a pre-5 single-property index.
statement ok
CREATE INDEX person_name IF NOT EXISTS FOR (n:Person) ON (n.first, n.last)

statement ok
CREATE INDEX ON :Person(email)

statement ok
CREATE INDEX person_name IF NOT EXISTS FOR (n:Person) ON (n.first, n.last)

statement error Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists
CREATE INDEX person_name FOR (n:Person) ON (n.first, n.last)

# Indexes on existing data fill in the background; awaitIndexes waits for them.
statement ok
CALL db.awaitIndexes(60)

statement ok
CALL db.awaitIndex('person_name')

statement error Neo.ClientError.Statement.ArgumentError
CALL db.awaitIndex('no_such_index', 1)

query
SHOW INDEXES YIELD name, populationPercent WHERE name = 'person_name' RETURN populationPercent
----
100.0

query
SHOW INDEXES YIELD name, type, labelsOrTypes, properties, state WHERE name = 'person_name' RETURN name, type, labelsOrTypes, properties, state
----
'person_name' | 'RANGE' | ['Person'] | ['first', 'last'] | 'ONLINE'

query
MATCH (n:Person {first: 'Ada', last: 'Byron'}) RETURN n.first
----
'Ada'

# Existence constraint on data that violates it.
statement error Neo.DatabaseError.Schema.ConstraintCreationFailed
CREATE CONSTRAINT person_email FOR (n:Person) REQUIRE n.email IS NOT NULL

statement ok
MATCH (n:Person {last: 'Byron'}) SET n.email = 'byron@x'

statement ok
CREATE CONSTRAINT person_email FOR (n:Person) REQUIRE n.email IS NOT NULL

statement error Neo.ClientError.Schema.ConstraintValidationFailed
CREATE (:Person {first: 'Grace'})

statement error Neo.ClientError.Schema.ConstraintValidationFailed
MATCH (n:Person {first: 'Alan'}) REMOVE n.email

statement error Neo.ClientError.Schema.ConstraintValidationFailed
CREATE (n:Other {first: 'Grace'}) SET n:Person

query
MATCH (n:Person) RETURN count(*), count(n.email)
----
3 | 3

# Composite uniqueness.
statement ok
DROP INDEX person_name

statement ok
CREATE CONSTRAINT person_full FOR (n:Person) REQUIRE (n.first, n.last) IS UNIQUE

statement error Neo.ClientError.Schema.ConstraintValidationFailed
CREATE (:Person {first: 'Ada', last: 'Lovelace', email: 'other@x'})

statement ok
CREATE (:Person {first: 'Ada', last: 'King', email: 'king@x'})

statement ok
CREATE (:Person {first: 'Ada', email: 'nolast@x'})

statement ok
CREATE (:Person {first: 'Ada', email: 'nolast2@x'})

# Node keys: unique and required. Neo4j refuses a key where a uniqueness constraint on the
# same schema exists.
statement error Neo.ClientError.Schema.ConstraintAlreadyExists
CREATE CONSTRAINT ON (n:Person) ASSERT (n.first, n.last) IS NODE KEY

statement ok
DROP CONSTRAINT person_full

statement error Neo.DatabaseError.Schema.ConstraintCreationFailed
CREATE CONSTRAINT ON (n:Person) ASSERT (n.first, n.last) IS NODE KEY

statement ok
MATCH (n:Person) WHERE n.last IS NULL DETACH DELETE n

statement ok
CREATE CONSTRAINT ON (n:Person) ASSERT (n.first, n.last) IS NODE KEY

statement error Neo.ClientError.Schema.ConstraintValidationFailed
CREATE (:Person {first: 'Ada', email: 'nolast@x'})

statement ok
CREATE CONSTRAINT ON (n:Account) ASSERT exists(n.id)

statement ok
CREATE CONSTRAINT account_id ON (n:Account) ASSERT n.id IS UNIQUE

statement error Neo.ClientError.Schema.ConstraintValidationFailed
CREATE (:Account {id: 1}), (:Account {id: 1.0})

statement error Neo.ClientError.Schema.ConstraintValidationFailed
UNWIND [1, 2, 3] AS i CREATE (:Account {id: i}) WITH i WHERE i = 3 CREATE (:Account)

query
MATCH (n:Account) RETURN count(*)
----
0

query
SHOW CONSTRAINTS YIELD type, labelsOrTypes, properties RETURN type, labelsOrTypes, properties ORDER BY type, properties
----
'NODE_KEY' | ['Person'] | ['first', 'last']
'NODE_PROPERTY_EXISTENCE' | ['Account'] | ['id']
'NODE_PROPERTY_EXISTENCE' | ['Person'] | ['email']
'UNIQUENESS' | ['Account'] | ['id']

statement ok
DROP CONSTRAINT ON (n:Account) ASSERT exists(n.id)

statement ok
DROP CONSTRAINT account_id

statement error Neo.DatabaseError.Schema.ConstraintDropFailed
DROP CONSTRAINT account_id

statement ok
DROP CONSTRAINT account_id IF EXISTS

statement ok
CREATE (:Account)

statement ok
DROP INDEX ON :Person(email)

query
SHOW INDEXES YIELD name, type, owningConstraint RETURN count(*)
----
3

# Relationship existence constraints (Neo4j 5 and pre-5 syntax).
statement ok
CREATE (a:RelC)-[:KNOWS {since: 2020}]->(b:RelC), (a)-[:LIKES]->(b)

statement error Neo.DatabaseError.Schema.ConstraintCreationFailed
CREATE CONSTRAINT likes_w FOR ()-[r:LIKES]-() REQUIRE r.w IS NOT NULL

statement ok
CREATE CONSTRAINT knows_since FOR ()-[r:KNOWS]-() REQUIRE r.since IS NOT NULL

statement error Neo.DatabaseError.Schema.ConstraintCreationFailed
CREATE CONSTRAINT ON ()-[r:LIKES]-() ASSERT exists(r.w)

statement error Neo.ClientError.Schema.ConstraintValidationFailed
MATCH (a:RelC), (b:RelC) WHERE a <> b CREATE (a)-[:KNOWS]->(b)

statement error Neo.ClientError.Schema.ConstraintValidationFailed
MATCH ()-[r:KNOWS]->() REMOVE r.since

statement ok
MATCH (a:RelC)-[r:KNOWS]->(b) CREATE (b)-[:KNOWS {since: 2024}]->(a)

query
MATCH ()-[r:KNOWS]->() RETURN r.since ORDER BY r.since
----
2020
2024

query
SHOW CONSTRAINTS YIELD name, type, entityType, labelsOrTypes, properties WHERE name = 'knows_since' RETURN type, entityType, labelsOrTypes, properties
----
'RELATIONSHIP_PROPERTY_EXISTENCE' | 'RELATIONSHIP' | ['KNOWS'] | ['since']

statement ok
DROP CONSTRAINT ON ()-[r:KNOWS]-() ASSERT exists(r.since)

statement ok
MATCH ()-[r:KNOWS]->() REMOVE r.since
