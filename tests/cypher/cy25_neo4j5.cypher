# Neo4j 5 features probed against Neo4j 5.26 (issue 18 §1): FINISH, dynamic property keys in
# SET / REMOVE (`n[key]`), SHOW SETTINGS / SHOW DEFAULT|HOME DATABASE / SHOW DATABASE name,
# SHOW SERVERS (refused as Neo4j Community refuses it) and db.stats.*. Every answer and error
# here was taken from Neo4j 5.26 unless a comment says otherwise.

statement ok
FINISH

statement ok
CREATE (:CY25_A {k: 1}), (:CY25_A {k: 2}) FINISH

statement ok
MATCH (n:CY25_A) SET n.x = n.k * 10 FINISH

query
MATCH (n:CY25_A) RETURN n.k, n.x
----
1 | 10
2 | 20

query
CALL { MATCH (n:CY25_A) SET n.y = 1 FINISH } RETURN 1 AS one
----
1

statement ok
UNWIND [1, 2] AS x FINISH

statement error Neo.ClientError.Statement.SyntaxError FINISH can only be used at the end of the query
FINISH MATCH (n) RETURN n

statement error Neo.ClientError.Statement.SyntaxError FINISH can only be used at the end of the query
MATCH (n:CY25_A) FINISH RETURN 1

query
MATCH (n:CY25_A {k: 1}) SET n['dyn'] = 'a' RETURN n.dyn
----
'a'

params {key: 'other'}
query
MATCH (n:CY25_A {k: 1}) SET n[$key] = 5, n['a' + 'b'] = 3 RETURN n.other, n.ab
----
5 | 3

params {key: 'other'}
query
MATCH (n:CY25_A {k: 1}) REMOVE n[$key] RETURN n.other, 'other' IN keys(n), size(keys(n))
----
null | false | 5

query
MATCH (n:CY25_A {k: 1}) SET n['ab'] = null RETURN n.ab, n.k
----
null | 1

query
CREATE (a:CY25_A {k: 3})-[r:CY25_R]->(b:CY25_A {k: 4}) SET r['w'] = 7 RETURN r.w
----
7

query
MATCH (:CY25_A)-[r:CY25_R]->() REMOVE r['w'] RETURN r.w
----
null

statement error Neo.ClientError.Statement.SyntaxError node or relationship property key must be given as String, but was Integer
MATCH (n:CY25_A) SET n[1] = 2

statement error Neo.ClientError.Statement.SyntaxError node or relationship property key must be given as String, but was Integer
MATCH (n:CY25_A) REMOVE n[1]

params {key: 1}
statement error Neo.ClientError.Statement.SyntaxError node or relationship property key must be given as String, but was Integer
MATCH (n:CY25_A) SET n[$key] = 2

params {key: null}
statement error Neo.ClientError.Statement.TypeError
MATCH (n:CY25_A) SET n[$key] = 2

query
SHOW SETTINGS 'db.transaction.timeout' YIELD name, value, defaultValue, isDeprecated
----
'db.transaction.timeout' | '0s' | '0s' | false

params {names: ['db.transaction.timeout', 'no.such.setting']}
query
SHOW SETTINGS $names YIELD name RETURN name
----
'db.transaction.timeout'

params {name: 'db.transaction.timeout'}
query
SHOW SETTING $name YIELD name, value WHERE value = '0s' RETURN name
----
'db.transaction.timeout'

query
SHOW SETTINGS 'no.such.setting'
----

query
SHOW SETTINGS YIELD name WHERE name = 'initial.dbms.default_database' RETURN name
----
'initial.dbms.default_database'

query
SHOW DEFAULT DATABASE YIELD name, type, access, role, writer, currentStatus
----
'neo4j' | 'standard' | 'read-write' | 'primary' | true | 'online'

query
SHOW HOME DATABASE YIELD name, type, currentStatus
----
'neo4j' | 'standard' | 'online'

query
SHOW DATABASE neo4j YIELD name, default, home
----
'neo4j' | true | true

params {db: 'neo4j'}
query
SHOW DATABASE $db YIELD name
----
'neo4j'

query
SHOW DATABASE nope
----

statement error Neo.ClientError.Statement.NotSystemDatabaseError Unsupported administration command: SHOW SERVERS
SHOW SERVERS

query
CALL db.stats.retrieve('GRAPH COUNTS') YIELD section, data
RETURN section, [x IN data.nodes WHERE x.label = 'CY25_A'] AS a,
  [k IN ['nodes', 'relationships', 'indexes', 'constraints'] WHERE k IN keys(data)] AS keys
----
'GRAPH COUNTS' | [{count: 4, label: 'CY25_A'}] | ['nodes', 'relationships', 'indexes', 'constraints']

query
CALL db.stats.retrieve('GRAPH COUNTS') YIELD data
RETURN [x IN data.relationships WHERE x.relationshipType = 'CY25_R'] AS r
----
[{count: 1, relationshipType: 'CY25_R'}, {count: 1, relationshipType: 'CY25_R', startLabel: 'CY25_A'}, {count: 1, endLabel: 'CY25_A', relationshipType: 'CY25_R'}]

statement error Neo.ClientError.General.InvalidArguments Unknown section 'NOPE', known sections are [GRAPH COUNTS, TOKENS, QUERIES]
CALL db.stats.retrieve('NOPE')

statement error Neo.ClientError.General.InvalidArguments Section 'GRAPH COUNTS' does not have to be explicitly collected
CALL db.stats.clear('GRAPH COUNTS')

query
CALL db.stats.retrieve('TOKENS') YIELD data RETURN 'CY25_R' IN data.relationshipTypes AS r, 'CY25_A' IN data.labels AS l
----
true | true

statement ok
MATCH (n:CY25_A) DETACH DELETE n
