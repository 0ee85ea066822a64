# Explicit transactions: commit, rollback, and a failed statement rolls back everything.

statement ok
:begin

statement ok
CREATE (:T {v: 1})

query
MATCH (t:T) RETURN t.v
----
1

statement ok
:rollback

query
MATCH (t:T) RETURN count(t)
----
0

statement ok
:begin

statement ok
CREATE (:T {v: 2})

statement ok
:commit

query
MATCH (t:T) RETURN t.v
----
2

statement error Neo.ClientError.Statement
UNWIND [1, 0] AS x CREATE (:T {v: 10 / x})

query
MATCH (t:T) RETURN count(t)
----
1
