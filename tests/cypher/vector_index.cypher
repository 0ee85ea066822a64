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
