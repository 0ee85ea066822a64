# PageRank on the example graph of GDS's PageRank documentation page; the expected scores,
# iteration counts and convergence are the ones that page shows (no GDS to run here). They pin
# GDS's Pregel formulation: superstep 0 only sends, later supersteps add and forward changes,
# and a node stops sending once its change is at most `tolerance`.

statement ok
CREATE (home:Page {name:'Home'}), (about:Page {name:'About'}), (product:Page {name:'Product'}), (links:Page {name:'Links'}), (a:Page {name:'Site A'}), (b:Page {name:'Site B'}), (c:Page {name:'Site C'}), (d:Page {name:'Site D'}), (home)-[:LINKS {weight: 0.2}]->(about), (home)-[:LINKS {weight: 0.2}]->(links), (home)-[:LINKS {weight: 0.6}]->(product), (about)-[:LINKS {weight: 1.0}]->(home), (product)-[:LINKS {weight: 1.0}]->(home), (a)-[:LINKS {weight: 1.0}]->(home), (b)-[:LINKS {weight: 1.0}]->(home), (c)-[:LINKS {weight: 1.0}]->(home), (d)-[:LINKS {weight: 1.0}]->(home), (links)-[:LINKS {weight: 0.8}]->(home), (links)-[:LINKS {weight: 0.05}]->(a), (links)-[:LINKS {weight: 0.05}]->(b), (links)-[:LINKS {weight: 0.05}]->(c), (links)-[:LINKS {weight: 0.05}]->(d)

statement ok
CALL gds.graph.project('myGraph', 'Page', 'LINKS', {relationshipProperties: 'weight'})

query ordered
CALL gds.pageRank.stream('myGraph') YIELD nodeId, score
RETURN gds.util.asNode(nodeId).name AS name, round(score, 12) AS score ORDER BY score DESC, name ASC
----
'Home' | 3.215681999884
'About' | 1.054270055215
'Links' | 1.054270055215
'Product' | 1.054270055215
'Site A' | 0.327857896449
'Site B' | 0.327857896449
'Site C' | 0.327857896449
'Site D' | 0.327857896449

query ordered
CALL gds.pageRank.stream('myGraph', {maxIterations: 20, dampingFactor: 0.85, relationshipWeightProperty: 'weight'}) YIELD nodeId, score
RETURN gds.util.asNode(nodeId).name AS name, round(score, 12) AS score ORDER BY score DESC, name ASC
----
'Home' | 3.537510283963
'Product' | 1.935783829165
'About' | 0.745261276388
'Links' | 0.745261276388
'Site A' | 0.181526771355
'Site B' | 0.181526771355
'Site C' | 0.181526771355
'Site D' | 0.181526771355

query ordered
CALL gds.pageRank.stream('myGraph', {maxIterations: 20, dampingFactor: 0.85, tolerance: 0.1}) YIELD nodeId, score
RETURN gds.util.asNode(nodeId).name AS name, round(score, 12) AS score ORDER BY score DESC, name ASC
----
'Home' | 1.581245066958
'About' | 0.598019435638
'Links' | 0.598019435638
'Product' | 0.598019435638
'Site A' | 0.233749551542
'Site B' | 0.233749551542
'Site C' | 0.233749551542
'Site D' | 0.233749551542

query ordered
CALL gds.pageRank.stream('myGraph', {maxIterations: 20, dampingFactor: 0.05}) YIELD nodeId, score
RETURN gds.util.asNode(nodeId).name AS name, round(score, 12) AS score ORDER BY score DESC, name ASC
----
'Home' | 1.248730942584
'About' | 0.970812181872
'Links' | 0.970812181872
'Product' | 0.970812181872
'Site A' | 0.959708121624
'Site B' | 0.959708121624
'Site C' | 0.959708121624
'Site D' | 0.959708121624

query
CALL gds.pageRank.write('myGraph', {maxIterations: 20, dampingFactor: 0.85, writeProperty: 'pagerank'}) YIELD nodePropertiesWritten, ranIterations
----
8 | 20

query
CALL gds.pageRank.stats('myGraph', {maxIterations: 20, dampingFactor: 0.85}) YIELD centralityDistribution
RETURN round(centralityDistribution.max, 4) AS max
----
3.2157

# Convergence (not on the page; follows from the same computation): with a large tolerance
# the supersteps stop early and report convergence.
query
CALL gds.pageRank.stats('myGraph', {tolerance: 0.1}) YIELD ranIterations, didConverge
----
6 | true

# WCC on the example graph of GDS's WCC documentation page (answers from that page):
# component ids are the smallest node index of each component; with a weight, only
# relationships above `threshold` join; `consecutiveIds` renumbers from 0.
statement ok
CREATE (nAlice:User {name: 'Alice'}), (nBridget:User {name: 'Bridget'}), (nCharles:User {name: 'Charles'}), (nDoug:User {name: 'Doug'}), (nMark:User {name: 'Mark'}), (nMichael:User {name: 'Michael'}), (nAlice)-[:LINK {weight: 0.5}]->(nBridget), (nAlice)-[:LINK {weight: 4}]->(nCharles), (nMark)-[:LINK {weight: 1.1}]->(nDoug), (nMark)-[:LINK {weight: 2}]->(nMichael)

statement ok
CALL gds.graph.project('wccGraph', 'User', 'LINK', {relationshipProperties: 'weight'})

query ordered
CALL gds.wcc.stream('wccGraph') YIELD nodeId, componentId
RETURN gds.util.asNode(nodeId).name AS name, componentId ORDER BY componentId, name
----
'Alice' | 0
'Bridget' | 0
'Charles' | 0
'Doug' | 3
'Mark' | 3
'Michael' | 3

query
CALL gds.wcc.stats('wccGraph') YIELD componentCount
----
2

query ordered
CALL gds.wcc.stream('wccGraph', {relationshipWeightProperty: 'weight', threshold: 1.0}) YIELD nodeId, componentId
RETURN gds.util.asNode(nodeId).name AS Name, componentId AS ComponentId ORDER BY ComponentId, Name
----
'Alice' | 0
'Charles' | 0
'Bridget' | 1
'Doug' | 3
'Mark' | 3
'Michael' | 3

query
CALL gds.wcc.write('wccGraph', {writeProperty: 'componentId', relationshipWeightProperty: 'weight', threshold: 1.0}) YIELD nodePropertiesWritten, componentCount
----
6 | 3

query ordered
CALL gds.wcc.stream('wccGraph', {consecutiveIds: true}) YIELD nodeId, componentId
RETURN gds.util.asNode(nodeId).name AS name, componentId ORDER BY componentId, name
----
'Alice' | 0
'Bridget' | 0
'Charles' | 0
'Doug' | 1
'Mark' | 1
'Michael' | 1
