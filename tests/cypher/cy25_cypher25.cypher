# Cypher 25 (Neo4j 2025.06+) clauses and functions, accepted with or without a `CYPHER 25`
# prefix: LET, FILTER, NEXT and the coll.* functions. Neo4j 5.26 refuses all of these, so the
# answers follow the Cypher 25 manual's definitions (and its own examples for coll.*).

query
CYPHER 25 LET x = 1, y = x + 1 RETURN x, y
----
1 | 2

query
UNWIND [1, 2, 3, 4] AS x FILTER x > 2 RETURN x
----
3
4

query
UNWIND [1, 2, 3] AS x FILTER WHERE x % 2 = 1 LET y = x * 10 RETURN x, y
----
1 | 10
3 | 30

statement error Neo.ClientError.Statement.SyntaxError
UNWIND [1] AS x LET x = 2 RETURN x

query ordered
UNWIND [3, 1, 2] AS x RETURN x ORDER BY x NEXT RETURN collect(x) AS xs
----
[1, 2, 3]

query
UNWIND [1, 2] AS x RETURN x, x * 2 NEXT RETURN x + `x * 2` AS s
----
3
6

query
RETURN 1 AS a UNION RETURN 2 AS a NEXT RETURN sum(a) AS s
----
3

query
CREATE (n:CY25_N {v: 1}) RETURN n NEXT MATCH (m:CY25_N) RETURN n = m AS same, m.v AS v
----
true | 1

query
UNWIND [1, 2, 3] AS x RETURN x NEXT FILTER x <> 2 RETURN x NEXT LET y = x + 1 RETURN y
----
2
4

statement ok
MATCH (n:CY25_N) DELETE n

# The manual's examples for the collection functions (Neo4j 2025.11).
query
RETURN coll.distinct([true, false, false, true, true, false]) AS d
----
[true, false]

query
RETURN coll.flatten([1, [2]]) AS a, coll.flatten([false, ['a']], 2) AS b, coll.flatten([[[1]]]) AS c
----
[1, 2] | [false, 'a'] | [[1]]

query
RETURN coll.indexOf(['A', 'new', 'function'], 'new') AS i, coll.indexOf([1, 2], 3) AS j
----
1 | -1

query
RETURN coll.insert([1, 2, 4], 2, 3) AS l
----
[1, 2, 3, 4]

query
RETURN coll.max([1.5, 2, 5.4, 0, 4]) AS hi, coll.min([1.5, 2, 5.4, 0, 4]) AS lo, coll.max([]) AS none
----
5.4 | 0 | null

query
RETURN coll.remove(['a', 'a', 'b', 'c', 'd'], 2) AS l
----
['a', 'a', 'c', 'd']

query
RETURN coll.sort([3, 1, 4, 2, 'a', 'c', 'b']) AS l, coll.sort(null) AS n
----
['a', 'b', 'c', 1, 2, 3, 4] | null

statement error Neo.ClientError.Statement.ArgumentError
RETURN coll.insert([1, 2], 3, 0)

statement error Neo.ClientError.Statement.ArgumentError
RETURN coll.remove([1, 2], 2)

statement error Neo.ClientError.Statement.TypeError
RETURN coll.sort(1)
