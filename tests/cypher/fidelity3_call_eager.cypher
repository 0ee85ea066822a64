# A CALL subquery that writes does not see its own writes in the driving rows: all outer rows
# are read first (Neo4j plans an Eager before the Apply). The Cypher manual's "Peter" example
# in Neo4j 5 syntax; answers from Neo4j 5.26.30.

statement ok
CREATE (a:F3E {name: 'Alice'}), (b:F3E {name: 'Bob'}), (:F3E {name: 'Carl'}), (b)-[:WORKS_FOR]->(a)

query ordered
MATCH (n:F3E)
OPTIONAL MATCH (n)-[:WORKS_FOR]->(m:F3E)
CALL (n, m) {
  WITH n, m WHERE m IS NULL
  MERGE (f:F3E {name: 'Peter'})
  MERGE (n)-[:WORKS_FOR]->(f)
  RETURN f
}
RETURN n.name AS employee, f.name AS manager ORDER BY employee
----
'Alice' | 'Peter'
'Carl' | 'Peter'

query ordered
MATCH (n:F3E)-[:WORKS_FOR]->(m) RETURN n.name, m.name ORDER BY n.name
----
'Alice' | 'Peter'
'Bob' | 'Alice'
'Carl' | 'Peter'

# Four rows in, four created; the scan does not reach the new nodes.
query
MATCH (n:F3E) CALL (n) { CREATE (:F3E {name: n.name + '2'}) } RETURN count(*) AS c
----
4

query
MATCH (n:F3E) RETURN count(*) AS c
----
8
