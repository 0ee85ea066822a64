# CALL { ... } IN TRANSACTIONS in an auto-commit transaction commits each batch: a failure in a later
# batch leaves the batches before it committed, as in Neo4j.

statement ok
UNWIND range(1, 10) AS x CALL { WITH x CREATE (:A {v: x}) } IN TRANSACTIONS OF 3 ROWS

query
MATCH (a:A) RETURN count(a), sum(a.v)
----
10 | 55

statement error Neo.ClientError.Statement.ArithmeticError
UNWIND [1, 2, 3, 0, 5] AS x CALL { WITH x CREATE (:B {v: 10 / x}) } IN TRANSACTIONS OF 2 ROWS

query
MATCH (b:B) RETURN count(b)
----
2

# Each batch sees what the batches before it committed (issue 18: a later batch used to delete a
# relationship an earlier batch had deleted, and failed with Outdated).
statement ok
CREATE (:U {id: 0})-[:R]->(:U {id: 2})

statement ok
MATCH (n:U) CALL { WITH n DETACH DELETE n } IN TRANSACTIONS OF 1 ROWS

query
MATCH (n:U) RETURN count(n)
----
0

# The part after the call reads the committed state: the deleted node has no properties left,
# a MATCH sees every batch.
statement ok
CREATE (:U {id: 0})-[:R]->(:U {id: 2})

query
MATCH (n:U) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 1 ROWS WITH n OPTIONAL MATCH (m:U) RETURN n.id, count(m)
----
null | 0

query ordered
UNWIND [1, 2, 3] AS i CALL (i) { CREATE (:X {i: i}) } IN TRANSACTIONS OF 1 ROW WITH i MATCH (x:X) RETURN i, count(x)
----
1 | 3
2 | 3
3 | 3

# CALL (*) and IN n CONCURRENT TRANSACTIONS (batches in any order: the rows are compared unordered).
query
UNWIND [1, 2, 3] AS i CALL (*) { CREATE (:Y {v: i}) } IN 2 CONCURRENT TRANSACTIONS OF 1 ROWS RETURN i
----
1
2
3

query
MATCH (y:Y) RETURN count(y), sum(y.v)
----
3 | 6

# ON ERROR CONTINUE: the failed batch is rolled back, its rows come with nulls and the status.
query ordered
UNWIND [1, 2, 0, 3, 4] AS i CALL (i) { CREATE (:E {v: 1 / i}) WITH i UNWIND [1, 2] AS k RETURN k } IN TRANSACTIONS OF 2 ROWS ON ERROR CONTINUE REPORT STATUS AS s RETURN i, k, s.started, s.committed, s.errorMessage
----
1 | 1 | true | true | null
1 | 2 | true | true | null
2 | 1 | true | true | null
2 | 2 | true | true | null
0 | null | true | false | '/ by zero'
3 | null | true | false | '/ by zero'
4 | 1 | true | true | null
4 | 2 | true | true | null

query
MATCH (e:E) RETURN count(e)
----
3

# ON ERROR BREAK: no batch runs after the failed one.
query ordered
UNWIND [1, 2, 0, 3, 4] AS i CALL (i) { CREATE (:F {v: 1 / i}) } IN TRANSACTIONS OF 2 ROWS ON ERROR BREAK REPORT STATUS AS s RETURN i, s.started, s.committed, s.errorMessage, s.transactionId IS NULL
----
1 | true | true | null | false
2 | true | true | null | false
0 | true | false | '/ by zero' | false
3 | true | false | '/ by zero' | false
4 | false | false | null | true

query
MATCH (f:F) RETURN count(f)
----
2

statement error Neo.ClientError.Statement.ArithmeticError / by zero (Transactions committed: 0)
UNWIND [1, 0] AS i CALL (i) { CREATE (:G {v: 1 / i}) } IN TRANSACTIONS OF 5 ROWS

statement error Neo.ClientError.Statement.SyntaxError CALL { ... } IN TRANSACTIONS after a write clause is not supported
CREATE (:G) WITH 1 AS x CALL { CREATE (:G) } IN TRANSACTIONS RETURN x

statement error Neo.ClientError.Statement.SyntaxError Invalid input. '0' is not a valid value. Must be a positive integer.
UNWIND [1] AS i CALL (i) { CREATE (:G) } IN TRANSACTIONS OF 0 ROWS

query
MATCH (g:G) RETURN count(g)
----
0

# In an explicit transaction: Neo4j's code and message.
statement ok
:begin

statement error Neo.DatabaseError.Transaction.TransactionStartFailed A query with 'CALL { ... } IN TRANSACTIONS' can only be executed in an implicit transaction, but tried to execute in an explicit transaction.
UNWIND [1] AS i CALL (i) { CREATE (:G) } IN TRANSACTIONS

statement ok
:rollback

# A batch size from a parameter is checked when the first batch starts (Neo4j's message).
params {n: 0}
statement error Neo.ClientError.Statement.ArgumentError OF ... ROWS: Invalid input. '0' is not a valid value. Must be a positive integer. (Transactions committed: 0)
UNWIND [1] AS i CALL (i) { RETURN 1 AS x } IN TRANSACTIONS OF $n ROWS RETURN x
