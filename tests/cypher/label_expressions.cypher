# Label and relationship type expressions (GQL, Neo4j 5): `|`, `&`, `!`, `%`, parentheses, the
# old `:A:B`, the `IS` form, in MATCH, OPTIONAL MATCH, WHERE, RETURN, pattern predicates and
# EXISTS / COUNT subqueries; and Neo4j's errors for the old colon forms mixed with the symbols.
# Every answer and error here was taken from Neo4j 5.26 (names carry the CYPHER5_ prefix and a
# `c5` property so the shared server's other data stays out of the answers).

statement ok
CREATE (a:CYPHER5_A {c5: 1}), (b:CYPHER5_B {c5: 2}), (ab:CYPHER5_A:CYPHER5_B {c5: 3}), (c:CYPHER5_C {c5: 4}), (n {c5: 5}), (a)-[:CYPHER5_T {w: 1}]->(b), (b)-[:CYPHER5_U {w: 2}]->(ab), (ab)-[:CYPHER5_V {w: 3}]->(c), (c)-[:CYPHER5_T {w: 4}]->(a)

query
MATCH (n:CYPHER5_A|CYPHER5_B) RETURN n.c5
----
1
2
3

query
MATCH (n:CYPHER5_A&CYPHER5_B) RETURN n.c5
----
3

query
MATCH (n:CYPHER5_A:CYPHER5_B) RETURN n.c5
----
3

query
MATCH (n:!CYPHER5_A {c5: 2}) RETURN n.c5
----
2

query
MATCH (n:!CYPHER5_A) WHERE n.c5 IS NOT NULL RETURN n.c5
----
2
4
5

query
MATCH (n:%) WHERE n.c5 IS NOT NULL RETURN n.c5
----
1
2
4
3

query
MATCH (n:!%) WHERE n.c5 IS NOT NULL RETURN n.c5
----
5

query
MATCH (n:(CYPHER5_A|CYPHER5_B)&!CYPHER5_C&!CYPHER5_B) RETURN n.c5
----
1

query
MATCH (n:CYPHER5_A&(CYPHER5_B|CYPHER5_C)) RETURN n.c5
----
3

query
MATCH (n:CYPHER5_C|CYPHER5_A&CYPHER5_B) RETURN n.c5
----
4
3

query
MATCH (n IS CYPHER5_A) RETURN n.c5
----
1
3

query
MATCH (n IS CYPHER5_A|CYPHER5_C) RETURN n.c5
----
1
4
3

query
MATCH (n) WHERE n:CYPHER5_A|CYPHER5_C RETURN n.c5
----
1
4
3

query
MATCH (n) WHERE n IS CYPHER5_B RETURN n.c5
----
2
3

query
MATCH (n) WHERE n.c5 IS NOT NULL RETURN n.c5, n:CYPHER5_A|CYPHER5_B AS ab, n IS !CYPHER5_A AS na, n:% AS any
----
1 | true | false | true
2 | true | true | true
4 | false | true | true
5 | false | true | false
3 | true | false | true

query
MATCH ()-[r:CYPHER5_T|CYPHER5_U]->() RETURN r.w
----
1
2
4

query
MATCH ()-[r:!CYPHER5_T]->() WHERE r.w IS NOT NULL RETURN r.w
----
2
3

query
MATCH (:CYPHER5_A)-[r:%]->() RETURN r.w
----
1
3

query
MATCH (:CYPHER5_A)-[r:CYPHER5_T&CYPHER5_U]->() RETURN r.w
----

query
MATCH ()-[r IS CYPHER5_V]->() RETURN r.w
----
3

query
MATCH (a:CYPHER5_C)-[:!CYPHER5_U]->(b:CYPHER5_A|CYPHER5_B) RETURN a.c5, b.c5
----
4 | 1

query
MATCH ()-[r]->() WHERE r:CYPHER5_T|CYPHER5_V RETURN r.w
----
1
4
3

query
MATCH ()-[r]->() WHERE r.w IS NOT NULL RETURN r.w, r:!CYPHER5_T AS nt, r IS CYPHER5_U|CYPHER5_V AS uv
----
1 | false | false
2 | true | true
3 | true | true
4 | false | false

query
MATCH (n:CYPHER5_A) OPTIONAL MATCH (n)-[:CYPHER5_V|CYPHER5_U]->(m:!CYPHER5_B) RETURN n.c5, m.c5
----
1 | null
3 | 4

query
MATCH (n:CYPHER5_A|CYPHER5_B|CYPHER5_C) WHERE (n)-[:!CYPHER5_T]->(:CYPHER5_B|CYPHER5_C) RETURN n.c5
----
2
3

query
MATCH (n:CYPHER5_A|CYPHER5_B|CYPHER5_C) WHERE EXISTS { (n)-->(m:CYPHER5_A&!CYPHER5_B) } RETURN n.c5
----
4

query
MATCH (n:CYPHER5_A|CYPHER5_B|CYPHER5_C) RETURN n.c5, COUNT { (n)-[:CYPHER5_T|CYPHER5_U|CYPHER5_V]-(:%) } AS c
----
1 | 2
2 | 2
4 | 2
3 | 2

query
MATCH (n:CYPHER5_A|CYPHER5_B|CYPHER5_C) RETURN n.c5, [(n)-->(m:!CYPHER5_C) | m.c5] AS ms
----
1 | [2]
2 | [3]
4 | [1]
3 | []

query
MATCH (n) WHERE n.c5 IS NOT NULL RETURN n.c5, [x IN [n] WHERE x:CYPHER5_A | x.c5] AS xs
----
1 | [1]
2 | []
4 | []
5 | []
3 | [3]

query
MATCH (n) WHERE n.c5 IS NOT NULL RETURN n.c5, [x IN [n] WHERE x:(CYPHER5_A|CYPHER5_C) | x.c5] AS xs
----
1 | [1]
2 | []
4 | [4]
5 | []
3 | [3]

query
RETURN null:CYPHER5_A|CYPHER5_B AS x
----
null

query
MATCH (n:CYPHER5_A) RETURN n.c5, n IS NULL AS x, n IS NOT NULL AS y
----
1 | false | true
3 | false | true

# Variable-length relationships take no type expression, only a dynamic type (which every
# relationship must have).
statement error Neo.ClientError.Statement.SyntaxError Variable length relationships must not use relationship type expressions.
MATCH (a:CYPHER5_A {c5: 1})-[:!CYPHER5_V*1..3]->(b) RETURN b.c5

statement error Neo.ClientError.Statement.SyntaxError Variable length relationships must not use relationship type expressions.
MATCH (a:CYPHER5_A {c5: 1})-[r:!CYPHER5_U*]->(b) RETURN b.c5, size(r) AS n

statement error Neo.ClientError.Statement.SyntaxError Variable length relationships must not use relationship type expressions.
MATCH (a:CYPHER5_C)-[:%*2]->(b) RETURN b.c5

# Neo4j 5.26 ignores a dynamic type on a variable-length relationship (it answers as for `*`,
# walking the CYPHER5_V relationship too); the answers below are derived by hand for the
# documented meaning, every relationship having one of the types.
query
MATCH p = (a:CYPHER5_C)-[:$any(['CYPHER5_T', 'CYPHER5_U'])*]->(b) RETURN b.c5, length(p) AS n
----
1 | 1
2 | 2
3 | 3

query
MATCH (a:CYPHER5_C)-[r:$('CYPHER5_T')*]->(b) RETURN b.c5, size(r) AS n
----
1 | 1
2 | 2

query
MATCH (a:CYPHER5_C)-[:$('CYPHER5_T')*]->(b) RETURN b.c5
----
1
2

statement error Neo.ClientError.Statement.SyntaxError Mixing label expression symbols ('|', '&', '!', and '%') with colon (':') between labels is not allowed. Please only use one set of symbols. This expression could be expressed as :(CYPHER5_A&CYPHER5_B)|CYPHER5_C.
MATCH (n:CYPHER5_A:CYPHER5_B|CYPHER5_C) RETURN n

statement error Neo.ClientError.Statement.SyntaxError Mixing label expression symbols ('|', '&', '!', and '%') with colon (':') between labels is not allowed. Please only use one set of symbols. This expression could be expressed as :CYPHER5_A&CYPHER5_B&CYPHER5_C.
MATCH (n:CYPHER5_A&CYPHER5_B:CYPHER5_C) RETURN n

statement error Neo.ClientError.Statement.SyntaxError Mixing label expression symbols ('|', '&', '!', and '%') with colon (':') between labels is not allowed. Please only use one set of symbols. This expression could be expressed as :!CYPHER5_A&CYPHER5_B.
MATCH (n:!CYPHER5_A:CYPHER5_B) RETURN n

statement error Neo.ClientError.Statement.SyntaxError Mixing label expression symbols ('|', '&', '!', and '%') with colon (':') between labels is not allowed. Please only use one set of symbols. This expression could be expressed as :(CYPHER5_A&CYPHER5_B)|CYPHER5_C.
MATCH (n) WHERE n:CYPHER5_A:CYPHER5_B|CYPHER5_C RETURN n

statement error Neo.ClientError.Statement.SyntaxError Mixing the IS keyword with colon (':') between labels is not allowed. This expression could be expressed as IS CYPHER5_A&CYPHER5_B.
MATCH (n IS CYPHER5_A:CYPHER5_B) RETURN n

statement error Neo.ClientError.Statement.SyntaxError Label expressions are not allowed to contain '|:'.
MATCH (n:CYPHER5_A|:CYPHER5_B) RETURN n

statement error Neo.ClientError.Statement.SyntaxError Relationship types in a relationship type expressions may not be combined using ':'
MATCH ()-[r:CYPHER5_T:CYPHER5_U]->() RETURN r

statement error Neo.ClientError.Statement.SyntaxError The semantics of using colon in the separation of alternative relationship types in conjunction with
MATCH ()-[r:CYPHER5_T|:CYPHER5_U]->() RETURN r

query
MATCH ()-[:CYPHER5_T|:CYPHER5_U]->(b) RETURN b.c5
----
2
3
1

statement error Neo.ClientError.Statement.SyntaxError Label expressions in patterns are not allowed in a CREATE clause, but only in a MATCH clause and in expressions
CREATE (n:CYPHER5_A|CYPHER5_B)

statement error Neo.ClientError.Statement.SyntaxError Label expressions in patterns are not allowed in a CREATE clause, but only in a MATCH clause and in expressions
CREATE (n:!CYPHER5_A)

statement error Neo.ClientError.Statement.SyntaxError Relationship type expressions in patterns are not allowed in a CREATE clause, but only in a MATCH clause
CREATE ()-[:!CYPHER5_T]->()

statement error Neo.ClientError.Statement.SyntaxError Label expressions in patterns are not allowed in a MERGE clause, but only in a MATCH clause and in expressions
MERGE (n:CYPHER5_A|CYPHER5_B)

statement error Neo.ClientError.Statement.SyntaxError Type mismatch: expected Node or Relationship but was String
WITH 'a' AS x RETURN x:CYPHER5_A|CYPHER5_B AS y

statement ok
CREATE (n:CYPHER5_X&CYPHER5_Y {c5: 6})

query
MATCH (n:CYPHER5_X) RETURN labels(n) AS l, n.c5
----
['CYPHER5_X', 'CYPHER5_Y'] | 6

statement ok
MATCH (n {c5: 5}) WHERE labels(n) = [] DELETE n
