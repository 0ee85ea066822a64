# Semantic errors with Neo4j 5.26's messages, not only its codes: variable kinds across
# clauses, aggregates where none may stand, and what a DISTINCT or aggregating WITH/RETURN
# hides from its ORDER BY and WHERE (each message checked against Neo4j 5.26).

statement error Neo.ClientError.Statement.SyntaxError Type mismatch: r defined with conflicting type Relationship (expected Node)
MATCH (a)-[r]->() MATCH (r)-->() RETURN a

statement error Neo.ClientError.Statement.SyntaxError Type mismatch: a defined with conflicting type Node (expected Relationship)
MATCH (a) MATCH (b)-[a]->() RETURN b

statement error Neo.ClientError.Statement.SyntaxError Type mismatch: r defined with conflicting type Node (expected Relationship)
MATCH (a) WITH a AS r MATCH ()-[r]->() RETURN r

statement error Neo.ClientError.Statement.SyntaxError Invalid use of aggregating function sum(...) in this context
MATCH (n) WITH n WHERE sum(n.x) > 1 RETURN n

statement error Neo.ClientError.Statement.SyntaxError Invalid use of aggregating function collect(...) in this context
MATCH (n) WHERE n.x IN collect(n.y) RETURN n

statement error Neo.ClientError.Statement.SyntaxError Invalid use of aggregating function count(...) in this context
UNWIND [1, 2] AS x WITH x WHERE count(x) > 1 RETURN x

statement error Neo.ClientError.Statement.SyntaxError Cannot use aggregation in ORDER BY if there are no aggregate expressions in the preceding RETURN
MATCH (n) RETURN DISTINCT n.x AS x ORDER BY count(*)

statement error Neo.ClientError.Statement.SyntaxError Cannot use aggregation in ORDER BY if there are no aggregate expressions in the preceding RETURN
MATCH (n) RETURN DISTINCT n.x AS x ORDER BY count(n.x)

statement error Neo.ClientError.Statement.SyntaxError Cannot use aggregation in ORDER BY if there are no aggregate expressions in the preceding WITH
MATCH (n) WITH DISTINCT n.x AS x ORDER BY count(*) RETURN x

statement error Neo.ClientError.Statement.SyntaxError Cannot use aggregation in ORDER BY if there are no aggregate expressions in the preceding RETURN
MATCH (n) RETURN n.x AS x ORDER BY sum(n.y)

statement error Neo.ClientError.Statement.SyntaxError Cannot use aggregation in ORDER BY if there are no aggregate expressions in the preceding RETURN
MATCH (n) RETURN n ORDER BY count(*) DESC

statement error Neo.ClientError.Statement.SyntaxError In a WITH/RETURN with DISTINCT or an aggregation, it is not possible to access variables declared before the WITH/RETURN: n
MATCH (n) WITH DISTINCT n.x AS x WHERE n.y = 1 RETURN x

statement error Neo.ClientError.Statement.SyntaxError In a WITH/RETURN with DISTINCT or an aggregation, it is not possible to access variables declared before the WITH/RETURN: n
MATCH (n) WITH count(*) AS c WHERE n.x > 1 RETURN c

statement error Neo.ClientError.Statement.SyntaxError In a WITH/RETURN with DISTINCT or an aggregation, it is not possible to access variables declared before the WITH/RETURN: a
MATCH (a) RETURN DISTINCT a.x AS x ORDER BY a.y

statement error Neo.ClientError.Statement.SyntaxError In a WITH/RETURN with DISTINCT or an aggregation, it is not possible to access variables declared before the WITH/RETURN: a
MATCH (a) WITH a.x AS x, count(*) AS c ORDER BY a.y RETURN x

statement error Neo.ClientError.Statement.SyntaxError Variable `m` not defined
MATCH (n) RETURN n.x AS x ORDER BY m

statement error Neo.ClientError.Statement.SyntaxError Variable `m` not defined
MATCH (n) RETURN DISTINCT n.x AS x ORDER BY m
