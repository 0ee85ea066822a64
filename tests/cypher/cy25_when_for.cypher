# Cypher 25 conditional queries (WHEN ... THEN ... ELSE), FOR and IS [NOT] LABELED, accepted with
# or without a `CYPHER 25` prefix. Neo4j 5.26 refuses all three ("25 is not a valid option for
# cypher version"), so the answers come from the Cypher 25 manual: its conditional-queries page
# (examples and graph, labels prefixed CY25W_), the FOR clause page, and the label expression
# predicates page (IS LABELED, Neo4j 2026.04).

query
WHEN false THEN RETURN 1 AS x
WHEN true THEN RETURN 2 AS x
WHEN true THEN RETURN 3 AS x
ELSE RETURN 3 AS x
----
2

query
CYPHER 25 WHEN false THEN RETURN 1 AS x ELSE RETURN 4 AS x
----
4

# No true branch and no ELSE: no rows.
query
WHEN false THEN RETURN 1 AS x
----

# A null predicate is not true.
query
WHEN null THEN RETURN 1 AS x ELSE RETURN 2 AS x
----
2

statement ok
CREATE (alice:CY25W_Person {name:'Alice', age: 65}),
       (bob:CY25W_Person {name: 'Bob', age: 25}),
       (charlie:CY25W_Person {name: 'Charlie', age: 61}),
       (daniel:CY25W_Person {name: 'Daniel', age: 39}),
       (eskil:CY25W_Person {name: 'Eskil', age: 39}),
       (bob)-[:WORKS_FOR]->(alice),
       (alice)-[:WORKS_FOR]->(daniel),
       (charlie)-[:WORKS_FOR]->(daniel),
       (bob)-[:LOVES]->(eskil),
       (charlie)-[:LOVES]->(alice)

query
WHEN true THEN {
  MATCH (n:CY25W_Person) WHERE n.name STARTS WITH "A"
  RETURN n.name AS name
}
ELSE {
  MATCH (n:CY25W_Person)
  RETURN n.name AS name
}
----
'Alice'

# Branches must agree on their columns, like UNION.
statement error Neo.ClientError.Statement.SyntaxError
WHEN true THEN RETURN 2 AS x ELSE RETURN 3 AS y

statement error Neo.ClientError.Statement.SyntaxError
WHEN true THEN RETURN 2 AS x, 3 AS y ELSE RETURN 3 AS x

# WHEN is not a regular clause.
statement error Neo.ClientError.Statement.SyntaxError
MATCH (n:CY25W_Person) WHEN n.age > 1 THEN RETURN 1 AS x

# Combined with UNION, a conditional query must be braced.
statement error Neo.ClientError.Statement.SyntaxError
WHEN true THEN RETURN 1 AS x ELSE RETURN 3 AS x UNION RETURN 4 AS x

query
{
  WHEN true THEN RETURN 1 AS x
  WHEN false THEN RETURN 2 AS x
  ELSE RETURN 3 AS x
}
UNION
{
  WHEN false THEN RETURN 4 AS x
  WHEN false THEN RETURN 5 AS x
  ELSE RETURN 6 AS x
}
----
1
6

query
MATCH (n:CY25W_Person)
WHERE EXISTS {
  WHEN n.age > 40 THEN {
    RETURN n.name AS x
  }
  ELSE {
    MATCH (n)-[:LOVES]->(x:CY25W_Person)
    RETURN x
  }
}
RETURN n.name AS name, n.age AS age
----
'Alice' | 65
'Charlie' | 61
'Bob' | 25

query
MATCH (n:CY25W_Person)
OPTIONAL MATCH (n)-[r:WORKS_FOR]->(m:CY25W_Person)
CALL (*) {
  WHEN n.age > 60 THEN {
    SET n.ageGroup = 'Veteran'
    RETURN n.ageGroup AS ageGroup
  }
  WHEN n.age >= 35 AND n.age <= 59 THEN {
    SET n.ageGroup = 'Senior'
    RETURN n.ageGroup AS ageGroup
  }
  ELSE {
    SET n.ageGroup = 'Junior'
    RETURN n.ageGroup AS ageGroup
  }
}
CALL (*) {
  WHEN m.age > n.age THEN {
    RETURN collect([m.name, m.ageGroup]) AS manager
  }
}
RETURN n.name AS name, ageGroup, manager
----
'Bob' | 'Junior' | [['Alice', 'Veteran']]

# The manual's example starts `MATCH (n:Person) OPTIONAL MATCH ...`; Neo4j plans an Eager
# there so the MERGEd Peter is not matched again. Arbor does not yet place one before a write
# inside CALL, so the rows are collected first here (same answer).
query
MATCH (p:CY25W_Person) WITH collect(p) AS ps UNWIND ps AS n
OPTIONAL MATCH (n)-[:WORKS_FOR]->(m:CY25W_Person)
CALL (*) {
 WHEN m IS NULL THEN {
   MERGE (f:CY25W_Person {name: 'Peter', age: 36})
   MERGE (n)-[:WORKS_FOR]->(f)
   RETURN f, n.name AS employee
 }
}
RETURN f.name AS manager, collect(employee) AS employees
----
'Peter' | ['Daniel', 'Eskil']

query
MATCH (n:CY25W_Person)
CALL (n) {
  OPTIONAL MATCH (n)-[r:LOVES]->(m:CY25W_Person)
  CALL (*) {
    WHEN r IS NULL THEN {
      RETURN n.name AS person, "Loves no one" AS message
    }
    ELSE {
      RETURN n.name AS person, "Loves somebody" AS message
    }
  }
  RETURN person, message
  UNION
  CALL (*) {
    WHEN n.age < 40 THEN {
     RETURN n.name AS person, "Under 40" AS message
    }
    ELSE {
     RETURN n.name AS person, "40 or older" AS message
    }
  }
  RETURN person, message
}
RETURN person, collect(message) AS status
----
'Alice' | ['Loves no one', '40 or older']
'Charlie' | ['Loves somebody', '40 or older']
'Daniel' | ['Loves no one', 'Under 40']
'Eskil' | ['Loves no one', 'Under 40']
'Peter' | ['Loves no one', 'Under 40']
'Bob' | ['Loves somebody', 'Under 40']

# The branch is chosen before it runs: a branch's write does not make a later predicate true.
query
CALL () {
  WHEN NOT EXISTS { MATCH (:CY25W_Flag) } THEN { CREATE (:CY25W_Flag) RETURN 'created' AS r }
  ELSE RETURN 'existed' AS r
}
RETURN r
----
'created'

query
WHEN EXISTS { MATCH (:CY25W_Flag) } THEN RETURN 'existed' AS r ELSE RETURN 'missing' AS r
----
'existed'

# FOR is UNWIND's GQL spelling.
query
FOR x IN [1, 2, 3, null]
RETURN x, 'val' AS y
----
1 | 'val'
2 | 'val'
3 | 'val'
null | 'val'

query
WITH [[1, 2], [3]] AS nested FOR x IN nested FOR y IN x RETURN collect(y) AS ys
----
[1, 2, 3]

query
FOR x IN [] RETURN x
----

query
WITH [1, 2] AS for FOR x IN for RETURN sum(x) AS s
----
3

# IS [NOT] LABELED: the colon form, negated as a whole.
query
MATCH (n:CY25W_Person) WHERE n IS LABELED CY25W_Person & !Other RETURN count(*) AS c
----
6

query
MATCH (n:CY25W_Person {name: 'Bob'}) RETURN n IS LABELED CY25W_Person AS a, n IS NOT LABELED CY25W_Person AS b, n IS LABELED Other|CY25W_Person AS c, n IS NOT LABELED Other&CY25W_Person AS d
----
true | false | true | true

query
MATCH (:CY25W_Person {name: 'Bob'})-[r]->() RETURN r IS LABELED LOVES AS loves ORDER BY loves
----
false
true

query
RETURN null IS LABELED A AS a, null IS NOT LABELED A AS b
----
null | null

statement ok
MATCH (n) WHERE n:CY25W_Person OR n:CY25W_Flag DETACH DELETE n
