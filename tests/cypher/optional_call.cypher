# OPTIONAL CALL of a procedure (Neo4j 5.24+): a row with nulls for the yielded columns when the
# call yields none for an input row; and OPTIONAL CALL of subqueries with and without a scope
# clause. Every answer here was taken from Neo4j 5.26 (labels carry the CYPHER5_ prefix).

statement ok
CREATE (a:CYPHER5_A {c5: 1})-[:CYPHER5_T]->(b:CYPHER5_B {c5: 2}), (:CYPHER5_A {c5: 3})

query
OPTIONAL CALL db.labels() YIELD label WHERE label = 'nope' RETURN label
----
null

query
UNWIND ['CYPHER5_A', 'nope', 'CYPHER5_B'] AS x OPTIONAL CALL db.labels() YIELD label WHERE label = x RETURN x, label
----
'CYPHER5_A' | 'CYPHER5_A'
'nope' | null
'CYPHER5_B' | 'CYPHER5_B'

query
OPTIONAL CALL db.labels() YIELD label WHERE label = 'nope' RETURN count(*) AS c
----
1

query
WITH 1 AS x OPTIONAL CALL db.labels() YIELD label WHERE label = 'nope' RETURN x, label
----
1 | null

query
UNWIND [1, 2] AS x OPTIONAL CALL db.labels() YIELD label AS l WHERE l STARTS WITH 'CYPHER5_' AND x = 2 RETURN x, l
----
1 | null
2 | 'CYPHER5_A'
2 | 'CYPHER5_B'

statement error Neo.ClientError.Statement.SyntaxError Query cannot conclude with CALL (must be a RETURN clause, a FINISH clause, an update clause, a unit subquery call, or a procedure call with no YIELD).
OPTIONAL CALL db.labels() YIELD label WHERE label = 'nope'

statement error Neo.ClientError.Statement.SyntaxError Cannot use `YIELD *` outside standalone call
OPTIONAL CALL db.labels() YIELD * RETURN 1

query
MATCH (n:CYPHER5_A) OPTIONAL CALL (n) { MATCH (n)-[:CYPHER5_T]->(m) RETURN m.c5 AS m } RETURN n.c5, m
----
3 | null
1 | 2

query
MATCH (n:CYPHER5_A) OPTIONAL CALL { WITH n MATCH (n)-[:CYPHER5_NOPE]->(m) RETURN m } RETURN n.c5, m
----
3 | null
1 | null

query
OPTIONAL CALL { MATCH (z:CYPHER5_NONE) RETURN z } RETURN z
----
null

query
UNWIND [1, 2] AS i OPTIONAL CALL (i) { UNWIND range(1, i - 1) AS j RETURN j } RETURN i, j
----
1 | null
2 | 1

query
MATCH (n:CYPHER5_A) OPTIONAL CALL (n) { MATCH (n)-->(m) OPTIONAL CALL (m) { MATCH (m)-->(k) RETURN k } RETURN m.c5 AS m, k } RETURN n.c5, m, k
----
3 | null | null
1 | 2 | null
