# Errors carry Neo4j's exact status codes (and the message names the problem); a failed
# statement changes nothing, and a failure inside an explicit transaction ends it.

statement error Neo.ClientError.Statement.SyntaxError
MATCH (a RETURN a

statement error Neo.ClientError.Statement.SyntaxError
RETURN 1 +

statement error Neo.ClientError.Statement.SyntaxError Variable `nope` not defined
RETURN nope

statement error Neo.ClientError.Statement.ParameterMissing
RETURN $missing

statement error Neo.ClientError.Statement.ArithmeticError
RETURN 1 / 0

statement error Neo.ClientError.Statement.TypeError
RETURN 1 + true

statement error Neo.ClientError.Statement.ArgumentError
RETURN range(1, 10, 0)

statement error Neo.ClientError.Procedure.ProcedureNotFound
CALL no.such.procedure()

statement ok
CREATE CONSTRAINT person_id FOR (p:Person) REQUIRE p.id IS UNIQUE

statement ok
CREATE (:Person {id: 1})

statement error Neo.ClientError.Schema.ConstraintValidationFailed
CREATE (:Person {id: 1})

statement error Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists
CREATE CONSTRAINT person_id FOR (p:Person) REQUIRE p.id IS UNIQUE

statement ok
:begin

statement ok
CREATE (:Person {id: 2})

statement error Neo.ClientError.Schema.ConstraintValidationFailed
CREATE (:Person {id: 1})

# The failed transaction refuses further work; its commit fails and ends it.
statement error Neo.ClientError.Transaction.Terminated
MATCH (p:Person) RETURN p.id

statement error Neo.ClientError.Transaction.Terminated
:commit

query
MATCH (p:Person) RETURN p.id
----
1

# Rolling a failed transaction back succeeds (it is already rolled back).

statement ok
:begin

statement ok
CREATE (:Person {id: 3})

statement error Neo.ClientError.Statement.ArithmeticError
RETURN 1 / 0

statement error Neo.ClientError.Transaction.Terminated
RETURN 1

statement ok
:rollback

query
MATCH (p:Person) RETURN p.id
----
1
