# Vector similarity functions (issue 18, item 2). Every answer and error below was checked
# against Neo4j 5.26.30 (scores are f32 values widened to f64, as Neo4j returns them).

query
RETURN vector.similarity.cosine([1.0, 2.0], [2.0, 4.0]) AS a, vector.similarity.cosine([1, 0], [0, 1]) AS b, vector.similarity.cosine([1, 0], [-1, 0]) AS c
----
1.0 | 0.5 | 0.0

query
RETURN vector.similarity.cosine([0.1, 0.2, 0.3], [0.3, 0.2, 0.1]) AS s
----
0.8571428656578064

query
RETURN vector.similarity.euclidean([1.0, 2.0], [2.0, 4.0]) AS a, vector.similarity.euclidean([0, 0], [0, 0]) AS b
----
0.1666666716337204 | 1.0

query
RETURN vector.similarity.cosine(null, [1]) AS a, vector.similarity.euclidean([1], null) AS b
----
null | null

statement error Neo.ClientError.Statement.ArgumentError Invalid input for 'vector.similarity.cosine()': The supplied vectors do not have the same number of dimensions.
RETURN vector.similarity.cosine([1, 2], [1])

statement error Neo.ClientError.Statement.ArgumentError Invalid input for 'vector.similarity.cosine()': Argument a is not a valid vector for this similarity function.
RETURN vector.similarity.cosine([0, 0], [1, 1])

statement error Neo.ClientError.Statement.ArgumentError Invalid input for 'vector.similarity.cosine()': Argument a is not a valid vector for this similarity function.
RETURN vector.similarity.cosine([], [])

statement error Neo.ClientError.Statement.ArgumentError Invalid input for 'vector.similarity.euclidean()': Argument a is not a valid vector for this similarity function.
RETURN vector.similarity.euclidean([1, null], [1, 2])

statement error Neo.ClientError.Statement.ArgumentError Invalid input for 'vector.similarity.euclidean()': Argument a is not a valid vector for this similarity function.
RETURN vector.similarity.euclidean([1e300], [1.0])

statement error Neo.ClientError.Statement.ArgumentError Invalid input for 'vector.similarity.cosine()': Argument b is not a valid vector for this similarity function.
RETURN vector.similarity.cosine([1, 2], ['x', 1])

# Scores over stored properties, best first.
statement ok
CREATE (:Doc {id: 1, emb: [1.0, 0.0]}), (:Doc {id: 2, emb: [0.6, 0.8]}), (:Doc {id: 3, emb: [0.0, 1.0]})

query ordered
MATCH (d:Doc) RETURN d.id, vector.similarity.cosine(d.emb, [1.0, 0.0]) AS s ORDER BY s DESC
----
1 | 1.0
2 | 0.800000011920929
3 | 0.5

# Vector indexes (issue 18, item 2): answers, columns and errors checked against Neo4j 5.26.
# Without quantization Neo4j's index scores are exact (those below); with quantization (its
# default) they are off by up to about 0.001, while Arbor always stores f32 vectors.
statement ok
CREATE VECTOR INDEX vdocs IF NOT EXISTS FOR (n:VDoc) ON n.emb OPTIONS {indexConfig: {`vector.dimensions`: 2, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}}

statement ok
CREATE (:VDoc {id: 1, emb: [1.0, 0.0]}), (:VDoc {id: 2, emb: [0.0, 1.0]}), (:VDoc {id: 3, emb: [1.0, 1.0]}), (:VDoc {id: 4, emb: [1, 2]}), (:VDoc {id: 5, emb: 'x'}), (:VDoc {id: 6, emb: [1.0, 2.0, 3.0]})

query ordered
CALL db.index.vector.queryNodes('vdocs', 10, [1.0, 0.5]) YIELD node, score RETURN node.id, score
----
3 | 0.974341630935669
1 | 0.9472135901451111
4 | 0.8999999761581421
2 | 0.7236068248748779

query
SHOW VECTOR INDEXES YIELD name, state, type, entityType, labelsOrTypes, properties, indexProvider, owningConstraint, failureMessage
----
'vdocs' | 'ONLINE' | 'VECTOR' | 'NODE' | ['VDoc'] | ['emb'] | 'vector-2.0' | null | ''

query
SHOW INDEXES YIELD name, type, options, createStatement WHERE type = 'VECTOR' RETURN name, options, createStatement
----
'vdocs' | {indexConfig: {`vector.dimensions`: 2, `vector.hnsw.ef_construction`: 100, `vector.hnsw.m`: 16, `vector.quantization.enabled`: false, `vector.similarity_function`: 'COSINE'}, indexProvider: 'vector-2.0'} | 'CREATE VECTOR INDEX `vdocs` FOR (n:`VDoc`) ON (n.`emb`) OPTIONS {indexConfig: {`vector.dimensions`: 2,`vector.hnsw.ef_construction`: 100,`vector.hnsw.m`: 16,`vector.quantization.enabled`: false,`vector.similarity_function`: \'COSINE\'}}'

query
SHOW TEXT INDEXES YIELD name
----

statement error Neo.ClientError.Procedure.ProcedureCallFailed Failed to invoke procedure `db.index.vector.queryNodes`: Caused by: java.lang.IllegalArgumentException: There is no such vector schema index: nope
CALL db.index.vector.queryNodes('nope', 10, [1.0, 0.5]) YIELD node, score RETURN node.id, score

statement error Neo.ClientError.Procedure.ProcedureCallFailed Failed to invoke procedure `db.index.vector.queryNodes`: Caused by: java.lang.IllegalArgumentException: 'numberOfNearestNeighbours' must be positive
CALL db.index.vector.queryNodes('vdocs', 0, [1.0, 0.5]) YIELD node, score RETURN node.id, score

statement error Neo.ClientError.Procedure.ProcedureCallFailed Failed to invoke procedure `db.index.vector.queryNodes`: Caused by: java.lang.IllegalArgumentException: Index query vector has 3 dimensions, but indexed vectors have 2.
CALL db.index.vector.queryNodes('vdocs', 2, [1.0, 0.5, 3.0]) YIELD node, score RETURN node.id, score

statement error Neo.ClientError.Schema.IndexAlreadyExists There already exists an index (:VDoc {emb}).
CREATE VECTOR INDEX vdocs2 FOR (n:VDoc) ON n.emb

statement error Neo.ClientError.Schema.IndexWithNameAlreadyExists There already exists an index called 'vdocs'.
CREATE VECTOR INDEX vdocs FOR (n:VDoc) ON n.other

statement ok
CREATE VECTOR INDEX vdocs IF NOT EXISTS FOR (n:VDoc) ON n.other

statement error Neo.DatabaseError.Statement.ExecutionFailed 'vector.dimensions' must be between 1 and 4096 inclusively
CREATE VECTOR INDEX vbad FOR (n:VDoc) ON n.x OPTIONS {indexConfig: {`vector.dimensions`: 5000}}

statement error Neo.DatabaseError.Schema.IndexDropFailed Unable to drop index called `vnope`. There is no such index.
DROP INDEX vnope

# Durable: the definition after a crash (WAL replay) and the vectors written since.
statement ok
CREATE (:VDoc {id: 7, emb: [0.0, -1.0]})

crash

query ordered
CALL db.index.vector.queryNodes('vdocs', 2, [0.0, -1.0]) YIELD node, score RETURN node.id, score
----
7 | 1.0
1 | 0.5

params {name: 'vdocs'}
statement ok
DROP INDEX $name IF EXISTS

params {name: 'vdocs'}
statement ok
DROP INDEX $name IF EXISTS

query
SHOW VECTOR INDEXES YIELD name
----
