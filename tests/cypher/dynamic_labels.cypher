# Dynamic labels and relationship types (Neo4j 5.26): `$(expr)`, `$all(expr)` and `$any(expr)`
# in MATCH, and `$(expr)` in CREATE, MERGE, SET and REMOVE; the expression is a string or a
# list of strings. Errors for null, non-strings and empty names, at compile time for literals
# and at run time otherwise. Every answer and error here was taken from Neo4j 5.26.

statement ok
CREATE (:CYPHER5_A {c5: 1}), (:CYPHER5_B {c5: 2}), (:CYPHER5_A:CYPHER5_B {c5: 3}), (:CYPHER5_C {c5: 4})

query
MATCH (n:$('CYPHER5_A')) RETURN n.c5
----
1
3

query
MATCH (n:$(['CYPHER5_A', 'CYPHER5_B'])) RETURN n.c5
----
3

query
MATCH (n:$all(['CYPHER5_A', 'CYPHER5_B'])) RETURN n.c5
----
3

query
MATCH (n:$any(['CYPHER5_A', 'CYPHER5_C'])) RETURN n.c5
----
1
3
4

query
MATCH (n:$all(['CYPHER5_A', 'CYPHER5_B'])|CYPHER5_C) RETURN n.c5
----
3
4

query
MATCH (n:CYPHER5_A:$('CYPHER5_B')) RETURN n.c5
----
3

query
MATCH (n:$([])) WHERE n.c5 IS NOT NULL RETURN n.c5
----
1
2
3
4

params {p: []}
query
MATCH (n:$any($p)) WHERE n.c5 IS NOT NULL RETURN n.c5
----

params {p: 'CYPHER5_B'}
query
MATCH (n:$($p)) RETURN n.c5
----
2
3

query
WITH 'CYPHER5_C' AS l MATCH (n:$(l)) RETURN n.c5
----
4

query
MATCH (n:$(toUpper('cypher5_c'))) RETURN n.c5
----
4

query
UNWIND ['CYPHER5_A', 'CYPHER5_B', 'CYPHER5_C'] AS l MATCH (n:$(l)) RETURN l, n.c5
----
'CYPHER5_A' | 1
'CYPHER5_A' | 3
'CYPHER5_B' | 2
'CYPHER5_B' | 3
'CYPHER5_C' | 4

statement error Neo.ClientError.Statement.SyntaxError Null is not a valid token name. Token names cannot be empty or contain any null-bytes.
MATCH (n:$(null)) RETURN n

statement error Neo.ClientError.Statement.SyntaxError Type mismatch: expected String or List<String> but was Integer
MATCH (n:$(1)) RETURN n

statement error Neo.ClientError.Statement.SyntaxError '' is not a valid token name. Token names cannot be empty or contain any null-bytes.
MATCH (n:$('')) RETURN n

statement error Neo.ClientError.Statement.SyntaxError Dynamic Label and Types are only allowed in MATCH, CREATE, MERGE, SET and REMOVE clauses.
MATCH (n) WHERE n:$('CYPHER5_A') RETURN n

statement error Neo.ClientError.Statement.SyntaxError Dynamic Label and Types are only allowed in MATCH, CREATE, MERGE, SET and REMOVE clauses.
MATCH (n WHERE n:$('CYPHER5_A')) RETURN n

params {p: null}
statement error Neo.ClientError.Statement.TypeError Expected node label to be a string or list of strings.
MATCH (n:$($p)) RETURN n

params {p: 1}
statement error Neo.ClientError.Statement.TypeError Expected node label to be a string or list of strings.
MATCH (n:$($p)) RETURN n

params {p: ['CYPHER5_A', null]}
statement error Neo.ClientError.Statement.TypeError Expected node label to be a string or list of strings.
MATCH (n:$($p)) RETURN n

params {p: ''}
statement error Neo.ClientError.Schema.TokenNameError '' is not a valid token name. Token names cannot be empty or contain any null-bytes.
MATCH (n:$($p)) RETURN n

statement ok
CREATE (a:CYPHER5_D {c5: 10})-[:CYPHER5_T]->(b:CYPHER5_D {c5: 11})

query
MATCH ()-[r:$('CYPHER5_T')]->(b) RETURN b.c5
----
11

query
MATCH ()-[r:$any(['CYPHER5_T', 'CYPHER5_U'])]->(b) RETURN b.c5
----
11

query
MATCH ()-[r:$(['CYPHER5_T', 'CYPHER5_U'])]->(b) RETURN b.c5
----

params {p: 1}
statement error Neo.ClientError.Statement.TypeError Expected relationship type to be a string or list of strings.
MATCH ()-[r:$($p)]->() RETURN r

params {p: ''}
statement error Neo.ClientError.Schema.TokenNameError '' is not a valid token name. Token names cannot be empty or contain any null-bytes.
MATCH ()-[r:$($p)]->() RETURN r

query
CREATE (n:$('CYPHER5_E') {c5: 20}) RETURN labels(n) AS l
----
['CYPHER5_E']

query
CREATE (n:$(['CYPHER5_E', 'CYPHER5_F']):CYPHER5_G {c5: 21}) RETURN labels(n) AS l
----
['CYPHER5_E', 'CYPHER5_F', 'CYPHER5_G']

query
WITH 'CYPHER5_H' AS l CREATE (n:$(l) {c5: 22}) RETURN labels(n) AS l
----
['CYPHER5_H']

params {p: []}
query
CREATE (n:$($p) {c5: 23}) WITH n, labels(n) AS l DELETE n RETURN l
----
[]

statement error Neo.ClientError.Statement.SyntaxError Dynamic labels using `$any()` are not allowed in CREATE or MERGE.
CREATE (n:$any('CYPHER5_E'))

statement error Neo.ClientError.Statement.SyntaxError Null is not a valid token name. Token names cannot be empty or contain any null-bytes.
CREATE (n:$(null))

params {p: null}
statement error Neo.ClientError.Statement.TypeError Expected node label to be a string or list of strings.
CREATE (n:$($p))

params {p: ''}
statement error Neo.ClientError.Schema.TokenNameError '' is not a valid token name. Token names cannot be empty or contain any null-bytes.
CREATE (n:$($p))

query
CREATE (a:CYPHER5_E)-[r:$('CYPHER5_R')]->(b:CYPHER5_E) RETURN type(r) AS t
----
'CYPHER5_R'

params {p: ['CYPHER5_R']}
query
CREATE (a:CYPHER5_E)-[r:$($p)]->(b:CYPHER5_E) RETURN type(r) AS t
----
'CYPHER5_R'

statement error Neo.ClientError.Statement.SyntaxError A single relationship type must be specified for CREATE
CREATE (a:CYPHER5_E)-[r:$(['CYPHER5_R', 'CYPHER5_S'])]->(b:CYPHER5_E) RETURN type(r)

params {p: []}
statement error Neo.DatabaseError.Statement.ExecutionFailed Exactly one relationship type must be specified, but 0 were found.
CREATE (a:CYPHER5_E)-[r:$($p)]->(b:CYPHER5_E) RETURN type(r)

params {p: null}
statement error Neo.ClientError.Statement.TypeError Expected relationship type to be a string or list of strings.
CREATE (a:CYPHER5_E)-[r:$($p)]->(b:CYPHER5_E) RETURN type(r)

query
MATCH (n:CYPHER5_D) SET n:$('CYPHER5_I') RETURN n.c5, n:CYPHER5_I AS i, size(labels(n)) AS s
----
11 | true | 2
10 | true | 2

query
MATCH (n:CYPHER5_I) SET n:$(['CYPHER5_J', 'CYPHER5_K']):CYPHER5_L RETURN n.c5, n:CYPHER5_J&CYPHER5_K&CYPHER5_L AS jkl, size(labels(n)) AS s
----
11 | true | 5
10 | true | 5

query
MATCH (n:CYPHER5_I) REMOVE n:$('CYPHER5_I'), n:$(['CYPHER5_K']) RETURN n.c5, n:CYPHER5_I|CYPHER5_K AS ik, size(labels(n)) AS s
----
11 | false | 3
10 | false | 3

params {p: 'CYPHER5_J'}
query
MATCH (n:CYPHER5_J) REMOVE n:$($p) RETURN n.c5, n:CYPHER5_J AS j, size(labels(n)) AS s
----
11 | false | 2
10 | false | 2

statement error Neo.ClientError.Statement.SyntaxError Null is not a valid token name. Token names cannot be empty or contain any null-bytes.
MATCH (n:CYPHER5_L) SET n:$(null)

statement error Neo.ClientError.Statement.SyntaxError Invalid input 'any': expected '('
MATCH (n:CYPHER5_L) SET n:$any('CYPHER5_X')

params {p: null}
statement error Neo.ClientError.Statement.TypeError Expected node label to be a string or list of strings.
MATCH (n:CYPHER5_L) SET n:$($p)

params {p: null}
statement error Neo.ClientError.Statement.TypeError Expected node label to be a string or list of strings.
MATCH (n:CYPHER5_L) REMOVE n:$($p)

params {p: ''}
statement error Neo.ClientError.Schema.TokenNameError '' is not a valid token name. Token names cannot be empty or contain any null-bytes.
MATCH (n:CYPHER5_L) SET n:$($p)

query
MERGE (n:$('CYPHER5_M') {c5: 30}) RETURN labels(n) AS l, n.c5
----
['CYPHER5_M'] | 30

query
MERGE (n:$('CYPHER5_M') {c5: 30}) RETURN labels(n) AS l, n.c5
----
['CYPHER5_M'] | 30

query
MATCH (n:CYPHER5_M) RETURN count(n) AS c
----
1

query
MERGE (a:CYPHER5_M {c5: 30}) MERGE (a)-[r:$('CYPHER5_R')]->(b:$('CYPHER5_M') {c5: 31}) RETURN type(r) AS t, b.c5
----
'CYPHER5_R' | 31

query
MERGE (a:CYPHER5_M {c5: 30}) MERGE (a)-[r:$('CYPHER5_R')]->(b:$('CYPHER5_M') {c5: 31}) RETURN type(r) AS t, b.c5
----
'CYPHER5_R' | 31

query
MATCH (:CYPHER5_M)-[r]->() RETURN count(r) AS c
----
1
