# Administration commands planned as a procedure call followed by the ordinary operators, as
# SHOW commands are: SHOW USERS / SHOW CURRENT USER / SHOW TRANSACTIONS / TERMINATE
# TRANSACTIONS with YIELD (renames, *), WHERE, ORDER BY / SKIP / LIMIT, aggregation in RETURN;
# CREATE / ALTER / RENAME / DROP USER as void calls; EXPLAIN of them; their errors. Rows and error
# codes are Neo4j 5.26 Community's answers on `system` with authentication disabled (names start
# with admin8_ so the shared Neo4j's other users stay out of the answers). The plans are Arbor's
# (Neo4j shows one `AdministrationCommand` operator for user commands and `ShowTransactions`
# for SHOW TRANSACTIONS; Arbor's leaf is the internal procedure's call).

statement ok
CREATE USER admin8_ann SET PASSWORD 'ann-password' CHANGE NOT REQUIRED

statement ok
CREATE USER admin8_bob SET PASSWORD 'bob-password'

query ordered
SHOW USERS YIELD user, passwordChangeRequired WHERE user STARTS WITH 'admin8_' RETURN user, passwordChangeRequired ORDER BY user
----
'admin8_ann' | false
'admin8_bob' | true

query
SHOW USERS YIELD user WHERE user STARTS WITH 'admin8_' RETURN count(*) AS n
----
2

# ORDER BY right after YIELD, then WHERE.
query ordered
SHOW USERS YIELD user AS u ORDER BY u DESC WHERE u STARTS WITH 'admin8_' RETURN u
----
'admin8_bob'
'admin8_ann'

query
SHOW USERS YIELD user, roles WHERE user = 'admin8_ann'
----
'admin8_ann' | null

query ordered
SHOW USER YIELD user WHERE user STARTS WITH 'admin8_' RETURN user ORDER BY user SKIP 1 LIMIT 5
----
'admin8_bob'

params {name: 'admin8_cat', pw: 'cat-password'}
statement ok
CREATE USER $name SET PASSWORD $pw CHANGE NOT REQUIRED

params {name: 'admin8_cat'}
query
SHOW USERS YIELD user, passwordChangeRequired WHERE user = $name
----
'admin8_cat' | false

statement ok
RENAME USER admin8_cat TO admin8_dog

statement ok
ALTER USER admin8_dog SET PASSWORD CHANGE REQUIRED

query
SHOW USERS YIELD * WHERE user IN ['admin8_cat', 'admin8_dog'] RETURN user, passwordChangeRequired
----
'admin8_dog' | true

statement ok
DROP USER admin8_dog

statement ok
DROP USER admin8_dog IF EXISTS

query
SHOW USERS YIELD user WHERE user STARTS WITH 'admin8_' RETURN collect(user) AS users
----
['admin8_ann', 'admin8_bob']

# Without authentication there is no current user.
query
SHOW CURRENT USER YIELD user RETURN count(*) AS n
----
0

statement error Neo.ClientError.Statement.SyntaxError `nope`
SHOW USERS YIELD nope

statement error Neo.ClientError.Statement.SyntaxError Variable `nope` not defined
SHOW USERS YIELD user RETURN nope

statement error Neo.ClientError.Statement.ArgumentError Failed to delete the specified user 'admin8_nobody': User does not exist.
DROP USER admin8_nobody

statement error Neo.ClientError.Statement.ArgumentError Failed to create the specified user 'admin8_bob': User already exists.
CREATE USER admin8_bob SET PASSWORD 'bob-password'

statement error Neo.ClientError.Statement.ArgumentError A password must be at least 8 characters.
CREATE USER admin8_cat SET PASSWORD 'short'

statement error Neo.ClientError.Statement.ArgumentError Failed to alter the specified user 'admin8_bob': Old password and new password cannot be the same.
ALTER USER admin8_bob SET PASSWORD 'bob-password'

statement error Neo.ClientError.Statement.ArgumentError Failed to rename the specified user 'admin8_nobody' to 'admin8_x': The user 'admin8_nobody' does not exist.
RENAME USER admin8_nobody TO admin8_x

statement error Neo.DatabaseError.Statement.ExecutionFailed User failed to alter their own password: Command not available with auth disabled.
ALTER CURRENT USER SET PASSWORD FROM 'a-password' TO 'b-password'

statement error Neo.ClientError.Procedure.ProcedureNotFound There is no procedure with the name `dbms.showCurrentUser` registered
CALL dbms.showCurrentUser()

params {name: 5}
statement error Neo.ClientError.Statement.TypeError $name to have type String
DROP USER $name

statement error Neo.ClientError.Statement.ParameterMissing Expected parameter(s): pw
CREATE USER admin8_cat SET PASSWORD $pw

# SHOW TRANSACTIONS lists the statement that runs it.
query
SHOW TRANSACTIONS YIELD currentQuery, status WHERE currentQuery STARTS WITH 'SHOW TRANSACTIONS YIELD currentQuery' RETURN status, count(*) AS n
----
'Running' | 1

query
SHOW TRANSACTIONS YIELD transactionId AS t WHERE t = 'neo4j-transaction-0' RETURN count(t) AS n
----
0

query
SHOW TRANSACTIONS YIELD transactionId, status WHERE status = 'nope' RETURN count(*) AS n
----
0

params {ids: ['neo4j-transaction-0']}
query
SHOW TRANSACTIONS $ids YIELD transactionId RETURN count(*) AS n
----
0

params {ids: 5}
statement error Neo.ClientError.Statement.TypeError Expected a string or a list of strings
SHOW TRANSACTIONS $ids YIELD transactionId

statement error Neo.ClientError.Statement.SyntaxError Trying to YIELD non-existing column: `nope`
SHOW TRANSACTIONS YIELD nope

query
TERMINATE TRANSACTIONS 'neo4j-transaction-999999' YIELD transactionId, message RETURN transactionId, message
----
'neo4j-transaction-999999' | 'Transaction not found.'

params {ids: ['neo4j-transaction-999998', 'neo4j-transaction-999999']}
query
TERMINATE TRANSACTIONS $ids
----
'neo4j-transaction-999998' | null | 'Transaction not found.'
'neo4j-transaction-999999' | null | 'Transaction not found.'

statement error Neo.ClientError.General.InvalidArguments Could not parse id (expected format: <databasename>-transaction-<id>)
TERMINATE TRANSACTION 'foo'

# The plans: the command's internal procedure call, then the tail's operators.
query explain
SHOW USERS YIELD user WHERE user STARTS WITH 'x' RETURN user ORDER BY user
----
01)ProduceResults: user
02)--Sort
03)----Filter
04)------ProcedureCall: SHOW USERS
05)--------Argument

query explain
SHOW TRANSACTIONS YIELD transactionId WHERE transactionId = 'x'
----
01)ProduceResults: transactionId
02)--Filter
03)----ProcedureCall: SHOW TRANSACTIONS
04)------Argument

query explain
TERMINATE TRANSACTIONS 'neo4j-transaction-999999'
----
01)ProduceResults: transactionId, username, message
02)--ProcedureCall: TERMINATE TRANSACTIONS
03)----Argument

query explain
CREATE USER admin8_x SET PASSWORD 'x-password'
----
01)ProduceResults
02)--ProcedureCall: CREATE USER
03)----Argument

# EXPLAIN runs nothing.
query
SHOW USERS YIELD user WHERE user = 'admin8_x' RETURN count(*) AS n
----
0

statement ok
DROP USER admin8_ann

statement ok
DROP USER admin8_bob
