# Basic reads and writes, run in process on a fresh database.

query
RETURN 1 AS x
----
1

statement ok
CREATE (:User {id: 1, name: 'Ada', age: 36}), (:User {id: 2, name: 'Bob', age: 17}), (:User {id: 3, name: 'Cy', age: 52})

statement ok
MATCH (a:User {id: 1}), (b:User {id: 2}) CREATE (a)-[:Friend {since: 2020}]->(b)

statement ok
MATCH (a:User {id: 2}), (b:User {id: 3}) CREATE (a)-[:Friend {since: 2021}]->(b)

query
MATCH (n:User) WHERE n.age >= 18 RETURN n.name
----
'Ada'
'Cy'

query ordered
MATCH (n:User) RETURN n.name AS name ORDER BY n.age DESC
----
'Cy'
'Ada'
'Bob'

query
MATCH (s:User {id: 1})-->()-->(n:User) RETURN DISTINCT n.id
----
3

query
MATCH (s:User {id: 1})-[*1..2]->(n:User) RETURN DISTINCT n.id
----
2
3

query
MATCH (n) RETURN count(n), count(n.age)
----
3 | 3

query
MATCH (n) RETURN min(n.age), max(n.age), avg(n.age)
----
17 | 52 | 35.0

query
MATCH (a:User {id: 1})-[r:Friend]->(b) RETURN a.name, r.since, b
----
'Ada' | 2020 | (:User {age: 17, id: 2, name: 'Bob'})

query
MATCH (n:User {id: 2}) OPTIONAL MATCH (n)-[:Nope]->(m) RETURN n.name, m
----
'Bob' | null

query
UNWIND [3, 1, 2] AS x WITH x ORDER BY x SKIP 1 LIMIT 1 RETURN x
----
2

statement ok
MATCH (n:User {id: 2}) SET n.property = -1

query
MATCH (n:User {id: 2}) RETURN n.property
----
-1

statement error Neo.ClientError.Schema.ConstraintValidationFailed
MATCH (n:User {id: 2}) DELETE n

statement ok
MATCH (n:User {id: 2}) DETACH DELETE n

query
MATCH (n:User) RETURN count(*)
----
2

statement error Neo.ClientError.Statement.SyntaxError
MATCH (n RETURN n

query
MERGE (u:User {id: 9}) ON CREATE SET u.created = true RETURN u.created
----
true

query
MERGE (u:User {id: 9}) ON CREATE SET u.created = false ON MATCH SET u.matched = true RETURN u.created, u.matched
----
true | true
