# APOC core procedures as the GraphRAG/OGM libraries call them. Expected rows follow APOC's
# documented semantics (apoc.meta.data: property rows count 0, relationship rows typed
# RELATIONSHIP with the end labels in `other`).

statement ok
CREATE (a:Person {name: 'Keanu', born: 1964, tags: ['x']})-[:ACTED_IN {roles: ['Neo']}]->(m:Movie {title: 'The Matrix', rating: 8.7}), (b:Person {name: 'Carrie'})-[:ACTED_IN {roles: ['Trinity']}]->(m), (b)-[:KNOWS]->(a)

query
CALL apoc.meta.data() YIELD label, property, count, unique, index, existence, type, array, sample, left, right, other, otherLabels, elementType RETURN label, property, count, unique, index, existence, type, array, sample, other, otherLabels, elementType
----
'Person' | 'ACTED_IN' | 2 | false | false | false | 'RELATIONSHIP' | true | null | ['Movie'] | [] | 'node'
'Person' | 'KNOWS' | 1 | false | false | false | 'RELATIONSHIP' | true | null | ['Person'] | [] | 'node'
'Person' | 'born' | 0 | false | false | false | 'INTEGER' | false | null | [] | [] | 'node'
'Person' | 'name' | 0 | false | false | false | 'STRING' | false | null | [] | [] | 'node'
'Person' | 'tags' | 0 | false | false | false | 'LIST' | true | null | [] | [] | 'node'
'Movie' | 'rating' | 0 | false | false | false | 'FLOAT' | false | null | [] | [] | 'node'
'Movie' | 'title' | 0 | false | false | false | 'STRING' | false | null | [] | [] | 'node'
'ACTED_IN' | 'roles' | 0 | false | false | false | 'LIST' | true | null | [] | [] | 'relationship'

# neo4j-graphrag's and langchain-neo4j's exact schema queries.
params {SAMPLE: 1000, EXCLUDED_LABELS: ['_Bloom_Perspective_', '_Bloom_Scene_']}
query
CALL apoc.meta.data({sample: $SAMPLE}) YIELD label, other, elementType, type, property WHERE NOT type = 'RELATIONSHIP' AND elementType = 'node' AND NOT label IN $EXCLUDED_LABELS WITH label AS nodeLabel, collect({property:property, type:type}) AS properties RETURN {label: nodeLabel, properties: size(properties)} AS output
----
{label: 'Movie', properties: 2}
{label: 'Person', properties: 3}

params {SAMPLE: 1000, EXCLUDED_LABELS: ['_Bloom_Perspective_', '_Bloom_Scene_']}
query
CALL apoc.meta.data({sample: $SAMPLE}) YIELD label, other, elementType, type, property WHERE type = 'RELATIONSHIP' AND elementType = 'node' UNWIND other AS other_node WITH * WHERE NOT label IN $EXCLUDED_LABELS AND NOT other_node IN $EXCLUDED_LABELS RETURN {start: label, type: property, end: toString(other_node)} AS output
----
{end: 'Movie', start: 'Person', type: 'ACTED_IN'}
{end: 'Person', start: 'Person', type: 'KNOWS'}

params {SAMPLE: 1000, EXCLUDED_LABELS: []}
query
CALL apoc.meta.data({sample: $SAMPLE}) YIELD label, other, elementType, type, property WHERE NOT type = 'RELATIONSHIP' AND elementType = 'relationship' AND NOT label in $EXCLUDED_LABELS WITH label AS relType, collect({property:property, type:type}) AS properties RETURN {type: relType, properties: properties} AS output
----
{properties: [{property: 'roles', type: 'LIST'}], type: 'ACTED_IN'}

query
CALL apoc.meta.data({includeLabels: ['Movie']}) YIELD label, property RETURN label, property
----
'Movie' | 'rating'
'Movie' | 'title'

# apoc.merge.node: MERGE with dynamic labels; onCreate on a new node, onMatch on an existing one.
query
CALL apoc.merge.node(['Person'], {name: 'Keanu'}, {created: true}, {matched: true}) YIELD node RETURN node.name, node.born, node.created, node.matched
----
'Keanu' | 1964 | null | true

query
CALL apoc.merge.node(['Person', 'Actor'], {name: 'Hugo'}, {created: true}, {matched: true}) YIELD node RETURN labels(node), node.name, node.created, node.matched
----
['Actor', 'Person'] | 'Hugo' | true | null

statement error Neo.ClientError.Statement.ArgumentError identifying property
CALL apoc.merge.node(['Person'], {}, {}, {})

# langchain-neo4j's add_graph_documents import.
params {data: [{source_label: 'Entity', source: 'x', target_label: 'Entity', target: 'y', type: 'LINKS', properties: {w: 1}}, {source_label: 'Entity', source: 'x', target_label: 'Entity', target: 'y', type: 'LINKS', properties: {w: 2}}]}
query
UNWIND $data AS row CALL apoc.merge.node([row.source_label], {id: row.source},{}, {}) YIELD node as source CALL apoc.merge.node([row.target_label], {id: row.target},{}, {}) YIELD node as target CALL apoc.merge.relationship(source, row.type, {}, row.properties, target) YIELD rel RETURN distinct 'done'
----
'done'

query
MATCH (a:Entity)-[r:LINKS]->(b:Entity) RETURN a.id, r.w, b.id
----
'x' | 1 | 'y'

query
MATCH (a:Entity {id: 'x'}), (b:Entity {id: 'y'}) CALL apoc.merge.relationship(a, 'LINKS', {}, {}, b, {w: 5}) YIELD rel RETURN type(rel), rel.w
----
'LINKS' | 5

# apoc.create.*
query
CALL apoc.create.node(['Tmp', 'X'], {k: 1}) YIELD node WITH node CALL apoc.create.relationship(node, 'SELF', {w: 2}, node) YIELD rel RETURN labels(node), node.k, type(rel), rel.w
----
['Tmp', 'X'] | 1 | 'SELF' | 2

query
MATCH (n:Tmp) CALL apoc.create.addLabels(n, ['Y']) YIELD node RETURN labels(node)
----
['Tmp', 'X', 'Y']

query
MATCH (n:Tmp) CALL apoc.create.removeLabels([n], ['X']) YIELD node RETURN labels(node)
----
['Tmp', 'Y']

query
MATCH (n:Tmp) CALL apoc.create.setLabels(n, ['Tmp', 'Z']) YIELD node RETURN labels(node)
----
['Tmp', 'Z']

statement error Neo.ClientError.Statement.ArgumentError without a type
MATCH (n:Tmp) CALL apoc.create.relationship(n, '', {}, n) YIELD rel RETURN rel

# apoc.refactor.mergeNodes as neo4j-graphrag's entity resolver calls it.
statement ok
CREATE (:R:A {name: 'one', k: 1})-[:T {w: 1}]->(x:Tgt), (:R:B {name: 'two', j: 2})-[:T {w: 2}]->(x), (:Src)-[:IN]->(:R:C {name: 'three'})

query
MATCH (n:R) WITH n ORDER BY n.name DESC WITH collect(n) AS nodes CALL apoc.refactor.mergeNodes(nodes, {properties: 'discard', mergeRels: true}) YIELD node RETURN labels(node), node.name, node.k, node.j
----
['A', 'B', 'C', 'R'] | 'two' | 1 | 2

query
MATCH (n:R)-[r:T]->(:Tgt) RETURN count(n), count(r), r.w
----
1 | 1 | 2

query
MATCH (:Src)-[:IN]->(n:R) RETURN n.name
----
'two'

# apoc.schema.assert: asserted rules are kept or created, the others dropped (dropExisting
# defaults to true); langchain-neo4j resets a schema with `apoc.schema.assert({}, {})`.
statement ok
CREATE INDEX apoc_person_name FOR (p:Person) ON (p.name)

statement ok
CREATE CONSTRAINT apoc_movie_title FOR (m:Movie) REQUIRE m.title IS UNIQUE

query
CALL apoc.schema.assert({Person: ['name', 'born']}, {Movie: ['title']}) YIELD label, key, keys, unique, action RETURN label, key, keys, unique, action
----
'Person' | 'name' | ['name'] | false | 'KEPT'
'Person' | 'born' | ['born'] | false | 'CREATED'
'Movie' | 'title' | ['title'] | true | 'KEPT'

query
CALL apoc.schema.nodes() YIELD label, properties, type, size, valuesSelectivity WHERE type = 'RANGE' RETURN label, properties, type, size, valuesSelectivity ORDER BY properties[0]
----
'Person' | ['born'] | 'RANGE' | 1 | 1.0
'Person' | ['name'] | 'RANGE' | 3 | 1.0

query
CALL apoc.schema.assert({}, {}) YIELD label, keys, unique, action RETURN label, keys, unique, action ORDER BY unique, keys[0]
----
'Person' | ['born'] | false | 'DROPPED'
'Person' | ['name'] | false | 'DROPPED'
'Movie' | ['title'] | true | 'DROPPED'

query
SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN count(*) AS n
----
0

# APOC functions the libraries call (apoc.any.property is x[key]).
query
RETURN apoc.coll.sort(['b', 'a', 'c']) AS s, apoc.coll.toSet([1, 2, 1, 3]) AS t, apoc.coll.flatten([[1, [2]], 3]) AS f, apoc.coll.flatten([[1, [2]], 3], true) AS r
----
['a', 'b', 'c'] | [1, 2, 3] | [1, [2], 3] | [1, 2, 3]

query
RETURN apoc.map.clean({a: 1, b: 'x', c: null, d: ''}, ['a'], ['']) AS m, apoc.meta.cypher.types({i: 1, s: 'x', l: ['a'], d: date('2020-01-01')}) AS t
----
{b: 'x'} | {d: 'DATE', i: 'INTEGER', l: 'LIST OF STRING', s: 'STRING'}

query
MATCH (m:Movie) RETURN apoc.any.property(m, 'title') AS t, apoc.any.property({type: 'KNOWS', count: 2}, 'count') AS c, apoc.any.properties(m).rating AS r
----
'The Matrix' | 2 | 8.7

# apoc.util.sleep waits (and is interrupted by timeouts: tests/driver).
query
CALL apoc.util.sleep(10) RETURN 1 AS done
----
1

# point(): x/y in a geographic CRS are longitude/latitude, as Neo4j accepts them.
query
RETURN point({x: 1.0, y: 2.0, crs: 'wgs-84'}) = point({longitude: 1.0, latitude: 2.0}) AS same
----
true

statement error Neo.ClientError.Statement.ArgumentError Geographic points does not support coordinate reference system: cartesian
RETURN point({latitude: 1.0, longitude: 2.0, crs: 'cartesian'})

statement error Neo.ClientError.Statement.ArgumentError Valid range for Y coordinate is [-90, 90]
RETURN point({x: 1.0, y: 95.0, crs: 'wgs-84'})

# apoc.meta.graph / apoc.meta.subGraph: a virtual node per label ({name, count}) and a virtual
# relationship per (start label, type, end label) ({type, count}), with negative ids.
query
CALL apoc.meta.graph({sample: 1000, maxRels: 100}) YIELD nodes, relationships RETURN apoc.coll.sort([n IN nodes WHERE n.name IN ['Person', 'Movie'] | [n.name, n.count]]) AS ns, apoc.coll.sort([r IN relationships WHERE apoc.any.property(r, 'type') IN ['ACTED_IN', 'KNOWS'] | [apoc.any.property(r, 'type'), apoc.any.property(r, 'count'), type(r) = r.type]]) AS rs, all(n IN nodes WHERE id(n) < 0) AS virtual
----
[['Movie', 1], ['Person', 3]] | [['ACTED_IN', 2, true], ['KNOWS', 1, true]] | true

query
CALL apoc.meta.subGraph({labels: ['Person'], rels: ['KNOWS']}) YIELD nodes, relationships RETURN [n IN nodes | n.name] AS ns, [r IN relationships | type(r)] AS rs
----
['Person'] | ['KNOWS']
