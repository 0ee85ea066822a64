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
