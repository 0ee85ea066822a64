# Neo4j 5 pattern expressions: a pattern is an existence test wherever a boolean is expected
# (WHERE, NOT, AND/OR/XOR, a searched CASE's WHEN, list and quantifier filters, exists()),
# and an error anywhere else (Neo4j 4's list of paths is gone). Every answer and error here
# was taken from Neo4j 5.26.

statement ok
CREATE (a:P {name: 'a'})-[:KNOWS]->(b:P {name: 'b'}), (b)-[:KNOWS]->(c:P {name: 'c'}), (:Q {name: 'd'})

query
MATCH (a:P) RETURN a.name, NOT (a)-->() AS isNew
----
'a' | false
'b' | false
'c' | true

query
MATCH (a:P), (b:P) RETURN a.name, b.name, NOT (a)-[:KNOWS]-(b) AS isNew
----
'a' | 'a' | true
'a' | 'b' | false
'a' | 'c' | true
'b' | 'a' | false
'b' | 'b' | true
'b' | 'c' | false
'c' | 'a' | true
'c' | 'b' | false
'c' | 'c' | true

query
MATCH (a:P) WHERE NOT (a)-->() AND a.name <> 'x' RETURN a.name
----
'c'

query
MATCH (a:P) WHERE (a)-->(:P {name: 'c'}) RETURN a.name
----
'b'

query
MATCH (a:P) WITH a WHERE (a)-->() RETURN a.name
----
'a'
'b'

query
MATCH (a:P) RETURN a.name, (a)-->() OR false AS s
----
'a' | true
'b' | true
'c' | false

query
MATCH (a:P) RETURN a.name, (a)-->() XOR true AS s
----
'a' | false
'b' | false
'c' | true

query
MATCH (a:P) RETURN a.name, CASE WHEN (a)-->() THEN 1 ELSE 0 END AS c
----
'a' | 1
'b' | 1
'c' | 0

query
MATCH (a:P) WITH a ORDER BY a.name WITH collect(a) AS ps RETURN [p IN ps WHERE (p)-[:KNOWS]->() | p.name] AS r
----
['a', 'b']

query
MATCH (a:P) RETURN a.name, [p IN [a] WHERE (p)-[:KNOWS]->() AND (p)<-[:KNOWS]-() | p.name] AS s
----
'a' | []
'b' | ['b']
'c' | []

query
MATCH (a:P) RETURN a.name, all(x IN [1] WHERE (a)-->()) AS s
----
'a' | true
'b' | true
'c' | false

query
MATCH (a:P) RETURN a.name, any(x IN [1] WHERE NOT (a)-->()) AS s
----
'a' | false
'b' | false
'c' | true

query
MATCH (a:P) RETURN a.name, NOT (a)<--(:P {name: 'a'}) AS s
----
'a' | true
'b' | false
'c' | true

query
MATCH (a:P) RETURN a.name, NOT (a)-[:KNOWS*2]->() AS s
----
'a' | false
'b' | true
'c' | true

query
MATCH (a:P) RETURN count(*) AS c, NOT (a)-->() AS s
----
2 | false
1 | true

# exists() of a pattern is the existence test itself.
query
MATCH (a:P) RETURN a.name, exists((a)-->()) AS s
----
'a' | true
'b' | true
'c' | false

query
MATCH (a:P) RETURN a.name, exists((a)-->()) AND true AS s
----
'a' | true
'b' | true
'c' | false

# Outside boolean positions a pattern expression is an error.
statement error Neo.ClientError.Statement.SyntaxError A pattern expression should only be used in order to test the existence of a pattern. It should therefore only be used in contexts that evaluate to a boolean
MATCH (a:P) RETURN a.name, (a)-->() AS has

statement error Neo.ClientError.Statement.SyntaxError A pattern expression should only be used in order to test the existence of a pattern
MATCH (a:P) RETURN (a)-->()

statement error Neo.ClientError.Statement.SyntaxError A pattern expression should only be used in order to test the existence of a pattern
MATCH (a:P) WITH a, (a)-->() AS has RETURN a.name, has

statement error Neo.ClientError.Statement.SyntaxError A pattern expression should only be used in order to test the existence of a pattern
MATCH (a:P) RETURN a.name ORDER BY (a)-->(), a.name

statement error Neo.ClientError.Statement.SyntaxError A pattern expression should only be used in order to test the existence of a pattern
MATCH (a:P) RETURN (a)-->() = true AS s

statement error Neo.ClientError.Statement.SyntaxError A pattern expression should only be used in order to test the existence of a pattern
MATCH (a:P) RETURN coalesce((a)-->(), 1) AS s

statement error Neo.ClientError.Statement.SyntaxError A pattern expression should only be used in order to test the existence of a pattern
MATCH (a:P) RETURN CASE true WHEN (a)-->() THEN 1 END AS s

statement error Neo.ClientError.Statement.SyntaxError A pattern expression should only be used in order to test the existence of a pattern
MATCH (a:P) RETURN CASE (a)-->() WHEN true THEN 1 END AS s

statement error Neo.ClientError.Statement.SyntaxError A pattern expression should only be used in order to test the existence of a pattern
MATCH (a:P) RETURN [x IN [1] | (a)-->()] AS s

statement error Neo.ClientError.Statement.SyntaxError A pattern expression should only be used in order to test the existence of a pattern
MATCH (a:P) SET a.k = (a)-->() RETURN a.k

statement error Neo.ClientError.Statement.SyntaxError It can no longer be used inside the function size(), an alternative is to replace size() with COUNT {}.
MATCH (a:P) RETURN a.name, size((a)-->()) AS s

statement error Neo.ClientError.Statement.SyntaxError
MATCH (a:P) RETURN a.name, toString((a)-->()) AS s

statement error Neo.ClientError.Statement.SyntaxError
MATCH (a:P) UNWIND [(a)-->()] AS x RETURN x

# A pattern expression may not introduce variables.
statement error Neo.ClientError.Statement.SyntaxError PatternExpressions are not allowed to introduce new variables: 'r'.
MATCH (a:P) WHERE (a)-[r]->() RETURN a.name

statement error Neo.ClientError.Statement.SyntaxError PatternExpressions are not allowed to introduce new variables: 'x'.
MATCH (a:P) WHERE (a)-->(x) RETURN a.name

statement error Neo.ClientError.Statement.SyntaxError PatternExpressions are not allowed to introduce new variables: 'r'.
MATCH (a:P) RETURN a.name, (a)-[r]->() AS s
