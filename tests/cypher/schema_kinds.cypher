# TEXT, POINT and LOOKUP indexes listed as what they are, index usage statistics, and
# property-type constraints. Index rows, columns and errors are Neo4j 5.26 Community's answers;
# property-type constraints are Enterprise-only there (Community answers
# `Neo.DatabaseError.Schema.ConstraintCreationFailed ... requires Neo4j Enterprise Edition`), so
# they follow Enterprise's documented behaviour, with Community's normalised type text.

# A fresh database has Neo4j's two token lookup indexes.
query
SHOW LOOKUP INDEXES YIELD name, state, type, entityType, labelsOrTypes, properties, indexProvider, options, createStatement RETURN name, state, type, entityType, labelsOrTypes, properties, indexProvider, options, createStatement
----
'index_343aff4e' | 'ONLINE' | 'LOOKUP' | 'NODE' | null | null | 'token-lookup-1.0' | {indexConfig: {}, indexProvider: 'token-lookup-1.0'} | 'CREATE LOOKUP INDEX `index_343aff4e` FOR (n) ON EACH labels(n)'
'index_f7700477' | 'ONLINE' | 'LOOKUP' | 'RELATIONSHIP' | null | null | 'token-lookup-1.0' | {indexConfig: {}, indexProvider: 'token-lookup-1.0'} | 'CREATE LOOKUP INDEX `index_f7700477` FOR ()-[r]-() ON EACH type(r)'

statement ok
CREATE LOOKUP INDEX IF NOT EXISTS FOR (n) ON EACH labels(n)

statement error Neo.ClientError.Schema.IndexAlreadyExists There already exists an index (:<any-labels>).
CREATE LOOKUP INDEX schema_l FOR (n) ON EACH labels(n)

statement error Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists An equivalent index already exists, 'Index( id=2, name='index_f7700477', type='LOOKUP', schema=()-[:<any-types>]-(), indexProvider='token-lookup-1.0' )'.
CREATE LOOKUP INDEX FOR ()-[r]-() ON EACH type(r)

statement error Neo.ClientError.Statement.SyntaxError Failed to create node lookup index: Function 'type' is not allowed, valid function is 'labels'.
CREATE LOOKUP INDEX schema_l2 FOR (n) ON EACH type(n)

# TEXT and POINT indexes next to a RANGE index on the same property.
statement ok
CREATE TEXT INDEX schema_t1 FOR (n:SCHEMA_P) ON (n.name)

statement ok
CREATE POINT INDEX schema_p1 FOR (n:SCHEMA_P) ON (n.loc)

statement ok
CREATE TEXT INDEX schema_t2 FOR ()-[r:SCHEMA_R]-() ON (r.name) OPTIONS {indexProvider: 'text-2.0'}

statement ok
CREATE RANGE INDEX schema_r1 FOR (n:SCHEMA_P) ON (n.name)

statement error Neo.ClientError.Statement.SyntaxError Only single property text indexes are supported
CREATE TEXT INDEX schema_t3 FOR (n:SCHEMA_P) ON (n.a, n.b)

statement error Neo.ClientError.Schema.IndexAlreadyExists There already exists an index (:SCHEMA_P {name}).
CREATE TEXT INDEX schema_t4 FOR (n:SCHEMA_P) ON (n.name)

statement ok
CREATE TEXT INDEX schema_t1 IF NOT EXISTS FOR (n:SCHEMA_P) ON (n.name)

query
SHOW INDEXES YIELD name, state, type, entityType, labelsOrTypes, properties, indexProvider, owningConstraint, readCount, failureMessage, createStatement WHERE name STARTS WITH 'schema' RETURN name, state, type, entityType, labelsOrTypes, properties, indexProvider, owningConstraint, readCount, failureMessage, createStatement
----
'schema_p1' | 'ONLINE' | 'POINT' | 'NODE' | ['SCHEMA_P'] | ['loc'] | 'point-1.0' | null | null | '' | 'CREATE POINT INDEX `schema_p1` FOR (n:`SCHEMA_P`) ON (n.`loc`) OPTIONS {indexConfig: {`spatial.cartesian-3d.max`: [1000000.0, 1000000.0, 1000000.0],`spatial.cartesian-3d.min`: [-1000000.0, -1000000.0, -1000000.0],`spatial.cartesian.max`: [1000000.0, 1000000.0],`spatial.cartesian.min`: [-1000000.0, -1000000.0],`spatial.wgs-84-3d.max`: [180.0, 90.0, 1000000.0],`spatial.wgs-84-3d.min`: [-180.0, -90.0, -1000000.0],`spatial.wgs-84.max`: [180.0, 90.0],`spatial.wgs-84.min`: [-180.0, -90.0]}}'
'schema_r1' | 'ONLINE' | 'RANGE' | 'NODE' | ['SCHEMA_P'] | ['name'] | 'range-1.0' | null | null | '' | 'CREATE RANGE INDEX `schema_r1` FOR (n:`SCHEMA_P`) ON (n.`name`)'
'schema_t1' | 'ONLINE' | 'TEXT' | 'NODE' | ['SCHEMA_P'] | ['name'] | 'text-2.0' | null | null | '' | 'CREATE TEXT INDEX `schema_t1` FOR (n:`SCHEMA_P`) ON (n.`name`)'
'schema_t2' | 'ONLINE' | 'TEXT' | 'RELATIONSHIP' | ['SCHEMA_R'] | ['name'] | 'text-2.0' | null | null | '' | 'CREATE TEXT INDEX `schema_t2` FOR ()-[r:`SCHEMA_R`]-() ON (r.`name`)'

query
SHOW TEXT INDEXES YIELD name, type RETURN name, type
----
'schema_t1' | 'TEXT'
'schema_t2' | 'TEXT'

query
SHOW POINT INDEXES YIELD name, type RETURN name, type
----
'schema_p1' | 'POINT'

query
SHOW RANGE INDEXES YIELD name, type RETURN name, type
----
'schema_r1' | 'RANGE'

query
SHOW INDEXES YIELD name, options WHERE name IN ['schema_t1', 'schema_r1'] RETURN name, options
----
'schema_r1' | {indexConfig: {}, indexProvider: 'range-1.0'}
'schema_t1' | {indexConfig: {}, indexProvider: 'text-2.0'}

query
SHOW POINT INDEXES YIELD options RETURN options.indexProvider, options.indexConfig['spatial.wgs-84.min'], size(keys(options.indexConfig))
----
'point-1.0' | [-180.0, -90.0] | 8

# TEXT and POINT indexes answer seeks; results never depend on them.
statement ok
CREATE (:SCHEMA_P {name: 'Ann', loc: point({x: 1, y: 2})}), (:SCHEMA_P {name: 'Anders', loc: point({x: 3, y: 4})}), (:SCHEMA_P {name: 7})

query
MATCH (n:SCHEMA_P) WHERE n.name STARTS WITH 'An' RETURN n.name
----
'Ann'
'Anders'

query
MATCH (n:SCHEMA_P) WHERE n.loc = point({x: 3, y: 4}) RETURN n.name
----
'Anders'

# Usage statistics count real reads: the equality seek used the RANGE index, the prefix seek
# the TEXT index, the point seek the POINT index.
query
SHOW INDEXES YIELD name, readCount, lastRead, trackedSince WHERE name STARTS WITH 'schema' RETURN name, readCount, lastRead IS NOT NULL, trackedSince <= lastRead
----
'schema_p1' | 1 | true | true
'schema_r1' | null | false | null
'schema_t1' | 1 | true | true
'schema_t2' | null | false | null

query
MATCH (n:SCHEMA_P) WHERE n.name = 'Ann' RETURN n.name
----
'Ann'

query
SHOW INDEXES YIELD name, readCount WHERE name = 'schema_r1' RETURN readCount
----
1

# Neo4j 5.26 drops a LOOKUP index (see schema_lookup.cypher); it is created again here.
statement ok
DROP INDEX index_343aff4e

statement ok
CREATE LOOKUP INDEX FOR (n) ON EACH labels(n)

# Property-type constraints: existing data is checked when the constraint is created.
statement ok
CREATE (:SCHEMA_Movie {title: 'Up'}), (:SCHEMA_Movie {title: 13})

statement error Neo.DatabaseError.Schema.ConstraintCreationFailed type='NODE PROPERTY TYPE', schema=(:SCHEMA_Movie {title}), propertyType=STRING ):
CREATE CONSTRAINT schema_movie_title FOR (n:SCHEMA_Movie) REQUIRE n.title IS :: STRING

statement error Neo.DatabaseError.Schema.ConstraintCreationFailed with label `SCHEMA_Movie` required the property `title` to be of type `STRING`, but was of type `INTEGER`.
CREATE CONSTRAINT schema_movie_title FOR (n:SCHEMA_Movie) REQUIRE n.title IS :: STRING

statement ok
MATCH (n:SCHEMA_Movie {title: 13}) SET n.title = '13'

statement ok
CREATE CONSTRAINT schema_movie_title FOR (n:SCHEMA_Movie) REQUIRE n.title IS :: STRING

statement ok
CREATE CONSTRAINT schema_movie_title IF NOT EXISTS FOR (n:SCHEMA_Movie) REQUIRE n.title IS :: STRING

statement ok
CREATE CONSTRAINT schema_movie_year FOR (n:SCHEMA_Movie) REQUIRE n.year :: INT | FLOAT

statement ok
CREATE CONSTRAINT schema_movie_tags FOR (n:SCHEMA_Movie) REQUIRE n.tags IS TYPED ANY<LIST<STRING NOT NULL> | BOOL>

statement ok
CREATE CONSTRAINT schema_part_order FOR ()-[r:SCHEMA_PART_OF]-() REQUIRE r.order IS :: LIST<INTEGER NOT NULL> | STRING

statement error Neo.ClientError.Schema.ConstraintAlreadyExists Conflicting constraint already exists
CREATE CONSTRAINT schema_movie_title2 FOR (n:SCHEMA_Movie) REQUIRE n.title IS :: INTEGER

query
SHOW CONSTRAINTS YIELD name, type, entityType, labelsOrTypes, properties, ownedIndex, propertyType, options, createStatement WHERE name STARTS WITH 'schema' RETURN name, type, entityType, labelsOrTypes, properties, ownedIndex, propertyType, options, createStatement
----
'schema_movie_tags' | 'NODE_PROPERTY_TYPE' | 'NODE' | ['SCHEMA_Movie'] | ['tags'] | null | 'BOOLEAN | LIST<STRING NOT NULL>' | null | 'CREATE CONSTRAINT `schema_movie_tags` FOR (n:`SCHEMA_Movie`) REQUIRE (n.`tags`) IS :: BOOLEAN | LIST<STRING NOT NULL>'
'schema_movie_title' | 'NODE_PROPERTY_TYPE' | 'NODE' | ['SCHEMA_Movie'] | ['title'] | null | 'STRING' | null | 'CREATE CONSTRAINT `schema_movie_title` FOR (n:`SCHEMA_Movie`) REQUIRE (n.`title`) IS :: STRING'
'schema_movie_year' | 'NODE_PROPERTY_TYPE' | 'NODE' | ['SCHEMA_Movie'] | ['year'] | null | 'INTEGER | FLOAT' | null | 'CREATE CONSTRAINT `schema_movie_year` FOR (n:`SCHEMA_Movie`) REQUIRE (n.`year`) IS :: INTEGER | FLOAT'
'schema_part_order' | 'RELATIONSHIP_PROPERTY_TYPE' | 'RELATIONSHIP' | ['SCHEMA_PART_OF'] | ['order'] | null | 'STRING | LIST<INTEGER NOT NULL>' | null | 'CREATE CONSTRAINT `schema_part_order` FOR ()-[r:`SCHEMA_PART_OF`]-() REQUIRE (r.`order`) IS :: STRING | LIST<INTEGER NOT NULL>'

# Violations fail the commit and change nothing; a missing property is allowed.
statement error Neo.ClientError.Schema.ConstraintValidationFailed with label `SCHEMA_Movie` required the property `title` to be of type `STRING`, but was of type `INTEGER`.
CREATE (:SCHEMA_Movie {title: 1})

statement error Neo.ClientError.Schema.ConstraintValidationFailed required the property `year` to be of type `INTEGER | FLOAT`, but was of type `STRING`.
MATCH (n:SCHEMA_Movie {title: 'Up'}) SET n.year = '1999'

statement error Neo.ClientError.Schema.ConstraintValidationFailed required the property `tags` to be of type `BOOLEAN | LIST<STRING NOT NULL>`, but was of type `LIST<INTEGER NOT NULL>`.
MATCH (n:SCHEMA_Movie {title: 'Up'}) SET n.tags = [1, 2]

statement error Neo.ClientError.Schema.ConstraintValidationFailed with type `SCHEMA_PART_OF` required the property `order` to be of type `STRING | LIST<INTEGER NOT NULL>`, but was of type `FLOAT`.
CREATE (:SCHEMA_A)-[:SCHEMA_PART_OF {order: 1.5}]->(:SCHEMA_B)

statement error Neo.ClientError.Schema.ConstraintValidationFailed
MATCH (n:SCHEMA_Movie {title: 'Up'}) SET n:SCHEMA_Other, n.title = 5

statement ok
CREATE (:SCHEMA_Movie {title: 'Heat', year: 1995, tags: ['crime']}), (:SCHEMA_Movie), (:SCHEMA_A)-[:SCHEMA_PART_OF {order: [1, 2]}]->(:SCHEMA_B)

statement ok
MATCH (n:SCHEMA_Movie {title: 'Up'}) SET n.year = 2009.0, n.tags = true

query
MATCH (n:SCHEMA_Movie) RETURN n.title, n.year, n.tags
----
'Up' | 2009.0 | true
'13' | null | null
'Heat' | 1995 | ['crime']
null | null | null

# The type grammar: what a property cannot have is a syntax error, as in Neo4j.
statement error Neo.ClientError.Statement.SyntaxError Failed to create node property type constraint: Invalid property type `STRING NOT NULL`.
CREATE CONSTRAINT schema_c2 FOR (n:SCHEMA_P) REQUIRE n.name IS :: STRING NOT NULL

statement error Neo.ClientError.Statement.SyntaxError Failed to create node property type constraint: Invalid property type `LIST<STRING>`. Lists cannot have nullable inner types.
CREATE CONSTRAINT schema_c2 FOR (n:SCHEMA_P) REQUIRE n.name IS :: LIST<STRING>

statement error Neo.ClientError.Statement.SyntaxError Failed to create node property type constraint: Invalid property type `ANY`.
CREATE CONSTRAINT schema_c2 FOR (n:SCHEMA_P) REQUIRE n.name IS :: ANY

statement error Neo.ClientError.Statement.SyntaxError Failed to create node property type constraint: Invalid property type `MAP`.
CREATE CONSTRAINT schema_c2 FOR (n:SCHEMA_P) REQUIRE n.name IS :: MAP

statement error Neo.ClientError.Statement.SyntaxError Constraint type 'IS TYPED' does not allow multiple properties
CREATE CONSTRAINT schema_c2 FOR (n:SCHEMA_P) REQUIRE (n.a, n.b) IS :: INTEGER

statement error Neo.ClientError.Statement.SyntaxError Failed to create node property type constraint: Invalid property type `LIST<LIST<INTEGER NOT NULL> NOT NULL>`. Lists cannot have lists as an inner type.
CREATE CONSTRAINT schema_c2 FOR (n:SCHEMA_P) REQUIRE n.name IS :: LIST<LIST<INTEGER NOT NULL> NOT NULL>

statement error Neo.ClientError.Statement.SyntaxError Failed to create node property type constraint: Invalid property type `STRING | INTEGER NOT NULL`.
CREATE CONSTRAINT schema_c2 FOR (n:SCHEMA_P) REQUIRE n.name IS :: STRING | INTEGER NOT NULL

statement error Neo.ClientError.Statement.SyntaxError Failed to create relationship property type constraint: Invalid property type `NODE`.
CREATE CONSTRAINT schema_c2 FOR ()-[r:SCHEMA_R]-() REQUIRE r.name IS :: NODE

# Durable: rules and their kinds survive a clean restart and a crash (WAL replay).
restart

query
SHOW INDEXES YIELD name, type, indexProvider WHERE name STARTS WITH 'schema' RETURN name, type, indexProvider
----
'schema_p1' | 'POINT' | 'point-1.0'
'schema_r1' | 'RANGE' | 'range-1.0'
'schema_t1' | 'TEXT' | 'text-2.0'
'schema_t2' | 'TEXT' | 'text-2.0'

statement error Neo.ClientError.Schema.ConstraintValidationFailed
CREATE (:SCHEMA_Movie {title: 1})

statement ok
CREATE CONSTRAINT schema_after_restart FOR (n:SCHEMA_Movie) REQUIRE n.rating IS :: FLOAT

statement ok
CREATE POINT INDEX schema_p2 FOR ()-[r:SCHEMA_R]-() ON (r.loc)

crash

query
SHOW CONSTRAINTS YIELD name, type, propertyType WHERE name STARTS WITH 'schema' RETURN name, type, propertyType
----
'schema_after_restart' | 'NODE_PROPERTY_TYPE' | 'FLOAT'
'schema_movie_tags' | 'NODE_PROPERTY_TYPE' | 'BOOLEAN | LIST<STRING NOT NULL>'
'schema_movie_title' | 'NODE_PROPERTY_TYPE' | 'STRING'
'schema_movie_year' | 'NODE_PROPERTY_TYPE' | 'INTEGER | FLOAT'
'schema_part_order' | 'RELATIONSHIP_PROPERTY_TYPE' | 'STRING | LIST<INTEGER NOT NULL>'

query
SHOW INDEXES YIELD name, type, entityType WHERE name = 'schema_p2' RETURN name, type, entityType
----
'schema_p2' | 'POINT' | 'RELATIONSHIP'

statement error Neo.ClientError.Schema.ConstraintValidationFailed required the property `rating` to be of type `FLOAT`, but was of type `STRING`.
CREATE (:SCHEMA_Movie {rating: 'good'})

statement ok
DROP CONSTRAINT schema_movie_title

statement ok
CREATE (:SCHEMA_Movie {title: 1})
