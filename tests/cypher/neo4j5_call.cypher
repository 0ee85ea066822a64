# Neo4j 5 subquery calls: the variable scope clause `CALL (x) { ... }` (5.23+), `OPTIONAL CALL`
# (5.24+), and the scoping of the older `CALL { ... }`, which sees only what a leading importing
# WITH imports. Every answer and error here was taken from Neo4j 5.26.

statement ok
CREATE (a:P {name: 'a'})-[:KNOWS]->(b:P {name: 'b'}), (b)-[:KNOWS]->(c:P {name: 'c'}), (:Q {name: 'd'})

# An outer variable that is not imported is invisible: the inner `x` is a new node variable.
query
WITH 1 AS x CALL { MATCH (x) RETURN count(x) AS c } RETURN c
----
4

statement error Neo.ClientError.Statement.SyntaxError Variable `x` not defined
WITH 1 AS x CALL { RETURN x AS y } RETURN y

statement error Neo.ClientError.Statement.SyntaxError Variable `x` not defined
WITH 1 AS x CALL { WITH 2 AS q RETURN q, x AS y } RETURN y

query
WITH 1 AS x CALL { WITH 2 AS q RETURN q AS y } RETURN x, y
----
1 | 2

query
WITH 1 AS x CALL { WITH x MATCH (n) RETURN count(n) AS c } RETURN c
----
4

query
WITH 1 AS x CALL { WITH * RETURN x AS y } RETURN y
----
1

query
WITH 1 AS x CALL { WITH x AS x RETURN x AS y } RETURN y
----
1

query
WITH 1 AS x CALL { WITH [x IN [5] | x] AS l RETURN l } RETURN x, l
----
1 | [5]

query
WITH 1 AS x CALL { UNWIND [7] AS x RETURN x AS y } RETURN x, y
----
1 | 7

# Each UNION branch imports for itself.
query
WITH 1 AS x CALL { WITH x RETURN x AS y UNION WITH x RETURN x + 1 AS y } RETURN y
----
1
2

statement error Neo.ClientError.Statement.SyntaxError Variable `x` not defined
WITH 1 AS x CALL { WITH x RETURN x AS y UNION RETURN x + 1 AS y } RETURN y

statement error Neo.ClientError.Statement.SyntaxError Variable `x` already declared in outer scope
WITH 1 AS x CALL { MATCH (x) RETURN x } RETURN x

# The importing WITH imports and nothing else.
statement error Neo.ClientError.Statement.SyntaxError Importing WITH should consist only of simple references to outside variables. Aliasing or expressions are not supported.
WITH 1 AS x CALL { WITH x AS q RETURN q AS y } RETURN y

statement error Neo.ClientError.Statement.SyntaxError Importing WITH should consist only of simple references to outside variables. Aliasing or expressions are not supported.
WITH 1 AS x CALL { WITH x, 2 AS q RETURN q AS y } RETURN y

statement error Neo.ClientError.Statement.SyntaxError Importing WITH should consist only of simple references to outside variables. Aliasing or expressions are not supported.
WITH 1 AS x CALL { WITH *, 2 AS q RETURN x AS y } RETURN y

statement error Neo.ClientError.Statement.SyntaxError Importing WITH should consist only of simple references to outside variables. WHERE is not allowed.
WITH 1 AS x CALL { WITH x WHERE x > 0 RETURN x AS y } RETURN y

statement error Neo.ClientError.Statement.SyntaxError Importing WITH should consist only of simple references to outside variables. ORDER BY is not allowed.
WITH 1 AS x CALL { WITH x ORDER BY x RETURN x AS y } RETURN y

statement error Neo.ClientError.Statement.SyntaxError Importing WITH should consist only of simple references to outside variables. DISTINCT is not allowed.
WITH 1 AS x CALL { WITH DISTINCT x RETURN x AS y } RETURN y

statement error Neo.ClientError.Statement.SyntaxError Importing WITH should consist only of simple references to outside variables. SKIP is not allowed.
WITH 1 AS x CALL { WITH x SKIP 0 RETURN x AS y } RETURN y

statement error Neo.ClientError.Statement.SyntaxError Importing WITH should consist only of simple references to outside variables. LIMIT is not allowed.
WITH 1 AS x CALL { WITH x LIMIT 1 RETURN x AS y } RETURN y

# The variable scope clause. In Neo4j 5.26 a WITH inside it is an ordinary WITH.
query
WITH 1 AS x CALL (x) { RETURN x AS y } RETURN y
----
1

query
WITH 1 AS x, 2 AS z CALL (*) { RETURN x + z AS y } RETURN y
----
3

query
WITH 1 AS x CALL (x, x) { RETURN x AS z } RETURN z
----
1

query
CALL (*) { RETURN 1 AS z } RETURN z
----
1

query
WITH 1 AS x CALL (x) { WITH x AS q RETURN q AS y } RETURN y
----
1

query
WITH 1 AS x CALL () { WITH 2 AS q RETURN q AS y } RETURN x, y
----
1 | 2

query
WITH 1 AS x CALL (x) { RETURN x AS y UNION RETURN x + 1 AS y } RETURN y
----
1
2

query
MATCH (a:P) CALL (a) { MATCH (a)-[:KNOWS]->(b) RETURN b.name AS next } RETURN a.name, next
----
'a' | 'b'
'b' | 'c'

statement error Neo.ClientError.Statement.SyntaxError Variable `x` not defined
WITH 1 AS x CALL () { RETURN x AS y } RETURN y

statement error Neo.ClientError.Statement.SyntaxError Variable `y` not defined
WITH 1 AS x CALL (y) { RETURN 1 AS y } RETURN y

statement error Neo.ClientError.Statement.SyntaxError Variable `x` already declared in outer scope
WITH 1 AS x CALL (x) { RETURN 1 AS x } RETURN x

statement error Neo.ClientError.Statement.SyntaxError Invalid input '+'
WITH 1 AS x CALL (x + 1) { RETURN 1 AS z } RETURN z

statement error Neo.ClientError.Statement.SyntaxError Invalid input '}'
WITH 1 AS x CALL (x) { } RETURN x

# Nested calls start from their own scope clause, not the enclosing call's.
statement error Neo.ClientError.Statement.SyntaxError Variable `x` not defined
WITH 1 AS x CALL (x) { CALL () { RETURN x AS z } RETURN z } RETURN z

statement error Neo.ClientError.Statement.SyntaxError Variable `x` not defined
WITH 1 AS x CALL (x) { CALL { RETURN x AS z } RETURN z } RETURN z

query
WITH 1 AS x CALL (x) { CALL { WITH x RETURN x AS z } RETURN z } RETURN z
----
1

# OPTIONAL CALL: a row with nulls for the returned columns when the body returns none.
query
UNWIND [1, 2, 3] AS x OPTIONAL CALL (x) { MATCH (n:P) WHERE n.name = 'a' AND x = 2 RETURN n.name AS nm } RETURN x, nm
----
1 | null
2 | 'a'
3 | null

query
UNWIND [1, 2] AS x OPTIONAL CALL (x) { UNWIND range(1, x - 1) AS i RETURN i, i * 10 AS j } RETURN x, i, j
----
1 | null | null
2 | 1 | 10

query
UNWIND [1, 2] AS x OPTIONAL CALL { WITH x UNWIND range(1, x - 1) AS i RETURN i } RETURN x, i
----
1 | null
2 | 1

query
OPTIONAL CALL () { RETURN 1 AS z } RETURN z
----
1

query
MATCH (a:P) OPTIONAL CALL (a) { MATCH (a)-[:KNOWS]->(b) RETURN b.name AS next } RETURN a.name, next
----
'a' | 'b'
'b' | 'c'
'c' | null

# A unit OPTIONAL CALL passes every row through.
query
UNWIND [1, 2] AS x OPTIONAL CALL (x) { CREATE (:Tmp {x: x}) } RETURN x
----
1
2

query
MATCH (t:Tmp) RETURN count(t)
----
2

# IN TRANSACTIONS with a scope clause, and OPTIONAL CALL in transactions.
statement ok
MATCH (t:Tmp) CALL (t) { DELETE t } IN TRANSACTIONS

query
UNWIND [1, 2] AS x OPTIONAL CALL (x) { UNWIND range(1, x - 1) AS i RETURN i } IN TRANSACTIONS RETURN x, i
----
1 | null
2 | 1

statement ok
UNWIND [1, 2, 3] AS x CALL (x) { CREATE (:Tmp {x: x}) } IN TRANSACTIONS OF 1 ROW

query
MATCH (t:Tmp) RETURN count(t), sum(t.x)
----
3 | 6

# IN CONCURRENT TRANSACTIONS (5.21+) and ON ERROR FAIL (the default) are accepted; batches may
# run in any order, so only the totals are asserted.
statement ok
UNWIND range(1, 5) AS x CALL (x) { CREATE (:C {x: x}) } IN 2 CONCURRENT TRANSACTIONS OF 2 ROWS

statement ok
UNWIND range(1, 5) AS x CALL (x) { CREATE (:C {x: x}) } IN CONCURRENT TRANSACTIONS

statement ok
UNWIND range(1, 5) AS x CALL (x) { CREATE (:C {x: x}) } IN TRANSACTIONS OF 2 ROWS ON ERROR FAIL

query
MATCH (c:C) RETURN count(c), sum(c.x)
----
15 | 45

statement error Neo.ClientError.Statement.SyntaxError Invalid input. '0' is not a valid value. Must be a positive integer.
UNWIND range(1, 5) AS x CALL (x) { CREATE (:C {x: x}) } IN 0 CONCURRENT TRANSACTIONS

statement error Neo.ClientError.Statement.SyntaxError REPORT STATUS can only be used when specifying ON ERROR CONTINUE or ON ERROR BREAK
UNWIND [1, 0, 2] AS x CALL (x) { CREATE (:E {v: 1 / x}) } IN TRANSACTIONS OF 1 ROW REPORT STATUS AS s RETURN x, s
