# apoc.path.expand / expandConfig / subgraphNodes / subgraphAll / spanningTree: breadth-first
# expansion with APOC's relationship filters (`TYPE>`, `<TYPE`, `TYPE`) and label filters
# (`+` whitelist, `-` blacklist, `/` termination, `>` end node). Graph:
# a-K->b-K->c-K->d(:Q), a-L->e(:R), f-K->c.

statement ok
CREATE (a:P {name: 'a'})-[:K]->(b:P {name: 'b'})-[:K]->(c:P {name: 'c'})-[:K]->(d:Q {name: 'd'}), (a)-[:L]->(e:R {name: 'e'}), (c)<-[:K]-(f:P {name: 'f'})

query ordered
MATCH (a {name: 'a'}) CALL apoc.path.expand(a, 'K>', '', 1, 3) YIELD path RETURN [n IN nodes(path) | n.name] AS p, length(path) AS l
----
['a', 'b'] | 1
['a', 'b', 'c'] | 2
['a', 'b', 'c', 'd'] | 3

query ordered
MATCH (a {name: 'a'}) CALL apoc.path.expand(a, 'K>', '-Q', 1, 5) YIELD path RETURN [n IN nodes(path) | n.name] AS p
----
['a', 'b']
['a', 'b', 'c']

# A termination label: only paths ending there, and no expansion beyond.
query
MATCH (a {name: 'a'}) CALL apoc.path.expandConfig(a, {relationshipFilter: 'K>|L>', labelFilter: '/Q', minLevel: 1}) YIELD path RETURN [n IN nodes(path) | n.name] AS p
----
['a', 'b', 'c', 'd']

# An end-node label: paths ending at P nodes, expansion continuing through the others; K in
# both directions reaches f through its outgoing K into c.
query
MATCH (a {name: 'a'}) CALL apoc.path.expandConfig(a, {relationshipFilter: 'K', labelFilter: '>P', minLevel: 1, maxLevel: 3}) YIELD path RETURN [n IN nodes(path) | n.name] AS p
----
['a', 'b']
['a', 'b', 'c']
['a', 'b', 'c', 'f']

# Incoming only, a whitelist, and the zero-length path when minLevel is 0.
query
MATCH (c {name: 'c'}) CALL apoc.path.expandConfig(c, {relationshipFilter: '<K', labelFilter: '+P', minLevel: 0, maxLevel: 1}) YIELD path RETURN [n IN nodes(path) | n.name] AS p
----
['c']
['c', 'b']
['c', 'f']

query ordered
MATCH (a {name: 'a'}) CALL apoc.path.expandConfig(a, {relationshipFilter: 'K>', minLevel: 1, limit: 2}) YIELD path RETURN length(path) AS l
----
1
2

# A repeating sequence: L then K (a-L->e has no K onwards, so only the first hop).
query
MATCH (a {name: 'a'}) CALL apoc.path.expandConfig(a, {relationshipFilter: 'L>,K>', minLevel: 1}) YIELD path RETURN [n IN nodes(path) | n.name] AS p
----
['a', 'e']

# endNodes: paths ending at the given nodes.
query
MATCH (a {name: 'a'}), (c {name: 'c'}) CALL apoc.path.expandConfig(a, {relationshipFilter: 'K>', endNodes: [c]}) YIELD path RETURN [n IN nodes(path) | n.name] AS p
----
['a', 'b', 'c']

query
MATCH (a {name: 'a'}) CALL apoc.path.subgraphNodes(a, {relationshipFilter: 'K>'}) YIELD node RETURN node.name AS n
----
'a'
'b'
'c'
'd'

query
MATCH (a {name: 'a'}) CALL apoc.path.subgraphAll(a, {relationshipFilter: 'K>', maxLevel: 2}) YIELD nodes, relationships RETURN [n IN nodes | n.name] AS ns, size(relationships) AS r, [x IN relationships | startNode(x).name + '->' + endNode(x).name] AS rs
----
['a', 'b', 'c'] | 2 | ['a->b', 'b->c']

query
MATCH (a {name: 'a'}) CALL apoc.path.spanningTree(a, {relationshipFilter: 'K'}) YIELD path RETURN last([n IN nodes(path) | n.name]) AS end, length(path) AS l
----
'a' | 0
'b' | 1
'c' | 2
'd' | 3
'f' | 3

# An unknown relationship type matches nothing; `optional` gives one null path.
query
MATCH (a {name: 'a'}) CALL apoc.path.expandConfig(a, {relationshipFilter: 'NOPE>', minLevel: 1, optional: true}) YIELD path RETURN path
----
null

statement error Neo.ClientError.Statement.ArgumentError uniqueness NONE needs a maxLevel
MATCH (a {name: 'a'}) CALL apoc.path.expandConfig(a, {uniqueness: 'NONE'}) YIELD path RETURN path
