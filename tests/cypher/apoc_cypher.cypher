# apoc.cypher.run/doIt, apoc.when/do.when, apoc.case/do.case (a nested statement in the
# caller's transaction, rows as `value` maps), apoc.meta.schema and the type-properties
# procedures, apoc.schema.properties.distinct(Count), apoc.create.* property setters, apoc.help.

statement ok
CREATE (:Person {name: 'x', age: 3})-[:KNOWS {since: 2000}]->(:Person:Dev {name: 'y'})

query
CALL apoc.cypher.run('MATCH (n:Person) WHERE n.name = $who RETURN n.name AS name, n.age AS age', {who: 'x'}) YIELD value RETURN value
----
{age: 3, name: 'x'}

query
UNWIND ['x', 'y'] AS who CALL apoc.cypher.run('MATCH (n:Person {name: $who}) RETURN labels(n) AS l', {who: who}) YIELD value RETURN who, value.l AS l
----
'x' | ['Person']
'y' | ['Dev', 'Person']

statement error Neo.ClientError.Statement.AccessMode Write operations are not allowed
CALL apoc.cypher.run('CREATE (:Nope)', {})

query
CALL apoc.cypher.doIt('CREATE (z:Zed {v: $v}) RETURN z.v AS v', {v: 3}) YIELD value RETURN value
----
{v: 3}

query
MATCH (z:Zed) RETURN count(z) AS n
----
1

query
CALL apoc.when(true, 'RETURN $a AS r', 'RETURN 0 AS r', {a: 1}) YIELD value RETURN value.r AS yes
----
1

query
CALL apoc.when(false, 'RETURN $a AS r', 'RETURN 0 AS r', {a: 1}) YIELD value RETURN value.r AS no
----
0

query
CALL apoc.when(false, 'RETURN 1 AS r') YIELD value RETURN value
----

query
CALL apoc.do.when(true, 'CREATE (w:Wen) RETURN count(w) AS c', '', {}) YIELD value RETURN value
----
{c: 1}

query
CALL apoc.case([false, 'RETURN 1 AS r', true, 'RETURN 2 AS r'], 'RETURN 3 AS r', {}) YIELD value RETURN value.r AS r
----
2

query
CALL apoc.case([false, 'RETURN 1 AS r'], 'RETURN $x AS r', {x: 3}) YIELD value RETURN value.r AS r
----
3

query
CALL apoc.do.case([true, 'MATCH (w:Wen) DELETE w RETURN 1 AS d'], '', {}) YIELD value RETURN value
----
{d: 1}

statement error Neo.ClientError.Statement.AccessMode Write operations are not allowed
CALL apoc.case([true, 'CREATE (:Nope)'], '', {})

query
CALL apoc.meta.schema() YIELD value RETURN value.Person.type AS t, value.Person.count AS c, value.Person.labels AS l, value.Person.properties AS p, value.Person.relationships AS r
----
'node' | 2 | ['Dev'] | {age: {array: false, existence: false, indexed: false, type: 'INTEGER', unique: false}, name: {array: false, existence: false, indexed: false, type: 'STRING', unique: false}} | {KNOWS: {count: 1, direction: 'out', labels: ['Dev', 'Person'], properties: {since: {array: false, existence: false, type: 'INTEGER'}}}}

query
CALL apoc.meta.schema() YIELD value RETURN value.Dev.relationships AS d, value.KNOWS AS k, value.Zed.count AS z
----
{KNOWS: {count: 1, direction: 'in', labels: ['Person'], properties: {since: {array: false, existence: false, type: 'INTEGER'}}}} | {count: 1, properties: {since: {array: false, existence: false, type: 'INTEGER'}}, type: 'relationship'} | 1

query
CALL apoc.meta.nodeTypeProperties() YIELD nodeType, nodeLabels, propertyName, propertyTypes, mandatory, propertyObservations, totalObservations RETURN nodeType, nodeLabels, propertyName, propertyTypes, mandatory, propertyObservations, totalObservations
----
':`Person`' | ['Person'] | 'age' | ['Long'] | true | 1 | 1
':`Person`' | ['Person'] | 'name' | ['String'] | true | 1 | 1
':`Dev`:`Person`' | ['Dev', 'Person'] | 'name' | ['String'] | true | 1 | 1
':`Zed`' | ['Zed'] | 'v' | ['Long'] | true | 1 | 1

query
CALL apoc.meta.relTypeProperties({includeRels: ['KNOWS']}) YIELD relType, sourceNodeLabels, targetNodeLabels, propertyName, propertyTypes, mandatory, propertyObservations, totalObservations RETURN relType, sourceNodeLabels, targetNodeLabels, propertyName, propertyTypes, mandatory, propertyObservations, totalObservations
----
':`KNOWS`' | ['Person'] | ['Dev', 'Person'] | 'since' | ['Long'] | true | 1 | 1

query
CALL apoc.schema.properties.distinct('Person', 'name') YIELD value RETURN value
----
['x', 'y']

query
CALL apoc.schema.properties.distinctCount('Person', 'name') YIELD label, key, value, count RETURN label, key, value, count
----
'Person' | 'name' | 'x' | 1
'Person' | 'name' | 'y' | 1

query
CALL apoc.create.nodes(['T1'], [{a: 1}, {a: 2}]) YIELD node RETURN node.a AS a
----
1
2

query
MATCH (n:T1) CALL apoc.create.setProperty(n, 'b', n.a * 10) YIELD node RETURN node.a AS a, node.b AS b
----
1 | 10
2 | 20

query
MATCH (n:T1 {a: 1}) CALL apoc.create.setProperties(n, ['c', 'd'], [true, 'x']) YIELD node RETURN node.c AS c, node.d AS d
----
true | 'x'

query
MATCH (n:T1 {a: 1}) CALL apoc.create.removeProperties(n, ['c']) YIELD node RETURN apoc.coll.sort(keys(node)) AS k
----
['a', 'b', 'd']

query
MATCH (a:T1 {a: 1}), (b:T1 {a: 2}) CREATE (a)-[r:TR]->(b) WITH r CALL apoc.create.setRelProperty(r, 'w', 5) YIELD rel WITH rel CALL apoc.create.setRelProperties(rel, ['u'], ['v']) YIELD rel AS r2 RETURN r2.w AS w, r2.u AS u
----
5 | 'v'

statement error Neo.ClientError.Statement.ArgumentError 2 keys and 1 values
MATCH (n:T1 {a: 1}) CALL apoc.create.setProperties(n, ['c', 'd'], [true]) YIELD node RETURN node

query
CALL apoc.help('path.expand') YIELD type, name, writes RETURN type, name, writes
----
'procedure' | 'apoc.path.expand' | false
'procedure' | 'apoc.path.expandConfig' | false

query
CALL apoc.help('text.camel') YIELD type, name RETURN type, name
----
'function' | 'apoc.text.camelCase'

# An unaliased map projection is named after its variable, in RETURN and in WITH, as in
# Neo4j 5.26 (neo4j-graphrag renders records by column name: `<Record node={...}>`).
query
CALL apoc.cypher.run('MATCH (node:Person {name: $n}) RETURN node {.name}', {n: 'x'}) YIELD value RETURN value
----
{node: {name: 'x'}}

query
MATCH (n:Person {name: 'x'}) WITH n {.name, .age} RETURN n.name AS name, n.age AS age
----
'x' | 3
