# GDS basics: named in-memory projections and Dijkstra, PageRank and WCC over them, with
# GDS's columns. Expected scores: networkx 3.6 (`_pagerank_python`, alpha 0.85, converged) times
# the node count, which is GDS's unnormalised PageRank on a graph where every node has an
# outgoing relationship; shortest paths as networkx's dijkstra_path.

statement ok
CREATE (a:G {name: 'a'}), (b:G {name: 'b'}), (c:G {name: 'c'}), (d:G {name: 'd'}), (e:G {name: 'e'}), (z:H {name: 'z'}), (p:W {name: 'p'}), (q:W {name: 'q'}), (r:W {name: 'r'}), (a)-[:R {w: 1.0}]->(b), (b)-[:R {w: 2.0}]->(c), (a)-[:R {w: 5.0}]->(c), (c)-[:R {w: 1.0}]->(d), (d)-[:R {w: 1}]->(a), (e)-[:R {w: 3.0}]->(d), (z)-[:R]->(a), (p)-[:R]->(q)

query
CALL gds.graph.project('g1', 'G', 'R', {relationshipProperties: 'w'}) YIELD graphName, nodeCount, relationshipCount, nodeProjection, relationshipProjection RETURN graphName, nodeCount, relationshipCount, nodeProjection, relationshipProjection.R.properties.w.property AS weight
----
'g1' | 5 | 6 | {G: {label: 'G', properties: {}}} | 'w'

statement error Neo.ClientError.Procedure.ProcedureCallFailed A graph with name 'g1' already exists.
CALL gds.graph.project('g1', 'G', 'R')

query
CALL gds.graph.exists('g1') YIELD graphName, exists RETURN graphName, exists
----
'g1' | true

query
CALL gds.graph.exists('nope') YIELD exists RETURN exists
----
false

query
MATCH (s:G {name: 'a'}), (t:G {name: 'd'}) CALL gds.shortestPath.dijkstra.stream('g1', {sourceNode: s, targetNode: t, relationshipWeightProperty: 'w'}) YIELD index, sourceNode, targetNode, totalCost, nodeIds, costs, path RETURN index, gds.util.asNode(sourceNode).name AS s, gds.util.asNode(targetNode).name AS t, totalCost, [i IN nodeIds | gds.util.asNode(i).name] AS names, costs, [n IN nodes(path) | n.name] AS walked, length(path) AS hops
----
0 | 'a' | 'd' | 4.0 | ['a', 'b', 'c', 'd'] | [0.0, 1.0, 3.0, 4.0] | ['a', 'b', 'c', 'd'] | 3

# Unweighted: every relationship costs 1.
query
MATCH (s:G {name: 'a'}), (t:G {name: 'd'}) CALL gds.shortestPath.dijkstra.stream('g1', {sourceNode: id(s), targetNode: id(t)}) YIELD totalCost, nodeIds, costs RETURN totalCost, [i IN nodeIds | gds.util.asNode(i).name] AS names, costs
----
2.0 | ['a', 'c', 'd'] | [0.0, 1.0, 2.0]

query
MATCH (s:G {name: 'e'}), (t:G {name: 'e'}) MATCH (u:G {name: 'b'}) CALL gds.shortestPath.dijkstra.stream('g1', {sourceNode: u, targetNode: t}) YIELD totalCost RETURN totalCost
----

query ordered
MATCH (s:G {name: 'a'}) CALL gds.allShortestPaths.dijkstra.stream('g1', {sourceNode: s, relationshipWeightProperty: 'w'}) YIELD index, targetNode, totalCost RETURN index, gds.util.asNode(targetNode).name AS t, totalCost
----
0 | 'a' | 0.0
1 | 'b' | 1.0
2 | 'c' | 3.0
3 | 'd' | 4.0

statement error Neo.ClientError.Procedure.ProcedureCallFailed Relationship weight property `cost` not found
MATCH (s:G {name: 'a'}) CALL gds.allShortestPaths.dijkstra.stream('g1', {sourceNode: s, relationshipWeightProperty: 'cost'}) YIELD index RETURN index

statement error Neo.ClientError.Procedure.ProcedureCallFailed was not loaded into the graph
MATCH (s:H) CALL gds.allShortestPaths.dijkstra.stream('g1', {sourceNode: s}) YIELD index RETURN index

query
CALL gds.pageRank.stream('g1', {maxIterations: 200, tolerance: 1e-10}) YIELD nodeId, score RETURN gds.util.asNode(nodeId).name AS n, round(score, 4) AS s
----
'a' | 1.3575
'b' | 0.727
'c' | 1.3449
'd' | 1.4206
'e' | 0.15

query
CALL gds.pageRank.stream('g1', {maxIterations: 200, tolerance: 1e-10, relationshipWeightProperty: 'w'}) YIELD nodeId, score RETURN gds.util.asNode(nodeId).name AS n, round(score, 4) AS s
----
'a' | 1.4614
'b' | 0.357
'c' | 1.4887
'd' | 1.5429
'e' | 0.15

# Defaults: 20 iterations, not yet within 1e-7 on this graph.
query
CALL gds.pageRank.stats('g1') YIELD ranIterations, didConverge, centralityDistribution RETURN ranIterations, didConverge, round(centralityDistribution.min, 2) AS min
----
20 | false | 0.15

query
CALL gds.pageRank.write('g1', {writeProperty: 'pr', maxIterations: 200, tolerance: 1e-10}) YIELD nodePropertiesWritten, ranIterations, didConverge RETURN nodePropertiesWritten, ranIterations < 200 AS early, didConverge
----
5 | true | true

query
MATCH (n:G) RETURN n.name AS n, round(n.pr, 4) AS pr
----
'a' | 1.3575
'b' | 0.727
'c' | 1.3449
'd' | 1.4206
'e' | 0.15

statement error Neo.ClientError.Procedure.ProcedureCallFailed writeProperty
CALL gds.pageRank.write('g1', {})

query
CALL gds.graph.project('g2', ['G', 'W'], {R: {type: 'R', orientation: 'UNDIRECTED'}}) YIELD nodeCount, relationshipCount RETURN nodeCount, relationshipCount
----
8 | 14

query
CALL gds.wcc.stream('g2') YIELD nodeId, componentId RETURN gds.util.asNode(nodeId).name AS n, componentId
----
'a' | 0
'b' | 0
'c' | 0
'd' | 0
'e' | 0
'p' | 5
'q' | 5
'r' | 7

query
CALL gds.wcc.write('g2', {writeProperty: 'comp'}) YIELD nodePropertiesWritten, componentCount, componentDistribution RETURN nodePropertiesWritten, componentCount, componentDistribution.max AS biggest
----
8 | 3 | 5

query
MATCH (n:W) RETURN n.name AS n, n.comp AS c
----
'p' | 5
'q' | 5
'r' | 7

query
CALL gds.graph.list() YIELD graphName, nodeCount, relationshipCount, database RETURN graphName, nodeCount, relationshipCount, database
----
'g1' | 5 | 6 | 'neo4j'
'g2' | 8 | 14 | 'neo4j'

query
CALL gds.graph.drop('g1') YIELD graphName RETURN graphName
----
'g1'

statement error Neo.ClientError.Procedure.ProcedureCallFailed Graph with name `g1` does not exist on database `neo4j`
CALL gds.graph.drop('g1')

query
CALL gds.graph.drop('g1', false) YIELD graphName RETURN graphName
----

statement error Neo.ClientError.Procedure.ProcedureCallFailed Graph with name `g1` does not exist
CALL gds.pageRank.stream('g1') YIELD nodeId RETURN nodeId
