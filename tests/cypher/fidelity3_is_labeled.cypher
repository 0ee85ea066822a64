# `IS LABELED` where LABELED is a label: Neo4j 5.26 reads `n IS LABELED` in the old `IS` form
# (a label named LABELED) when what follows ends the expression. Answers from Neo4j 5.26.30.

statement ok
CREATE (:F3L:LABELED {v: 1}), (:F3L {v: 2})

query ordered
MATCH (n:F3L) RETURN n.v, n IS LABELED AS a, n IS F3L AS b ORDER BY n.v
----
1 | true | true
2 | false | true

query ordered
MATCH (n:F3L) RETURN n.v, n IS LABELED|F3L AS a, n IS LABELED&F3L AS b, n IS !LABELED AS c ORDER BY n.v
----
1 | true | true | false
2 | true | false | true

query
MATCH (n:F3L) WHERE n IS LABELED RETURN n.v
----
1

query
MATCH (n:F3L) WHERE NOT n IS LABELED RETURN n.v
----
2

query
MATCH (n:F3L WHERE n IS LABELED) RETURN n.v
----
1
