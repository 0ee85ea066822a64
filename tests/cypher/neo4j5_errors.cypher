# Error codes drivers and libraries branch on, as Neo4j 5.26.30 answers them.

statement error Neo.DatabaseError.Schema.IndexDropFailed
DROP INDEX missing

statement ok
DROP INDEX missing IF EXISTS

statement error Neo.DatabaseError.Schema.ConstraintDropFailed
DROP CONSTRAINT missing

statement ok
DROP CONSTRAINT missing IF EXISTS

# Integer overflow is an error, also where the planner folds constants.
statement error Neo.ClientError.Statement.ArithmeticError
RETURN -(-9223372036854775808) AS x

statement error Neo.ClientError.Statement.ArithmeticError
RETURN 9223372036854775807 + 1 AS x

statement error Neo.ClientError.Statement.ArithmeticError
RETURN -9223372036854775808 * -1 AS x

statement error Neo.ClientError.Statement.ArithmeticError
WITH -9223372036854775808 AS m RETURN -m AS x

query
RETURN -(-9223372036854775807) AS x
----
9223372036854775807

# Transaction metadata outside a driver: empty, and settable.
query
CALL tx.getMetaData() YIELD metadata RETURN size(keys(metadata)) AS n
----
0
