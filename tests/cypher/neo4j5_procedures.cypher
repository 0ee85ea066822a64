# Procedures tools call to learn about the server, with Neo4j 5.26's columns.

query
CALL dbms.components() YIELD name, edition RETURN name, edition
----
'Neo4j Kernel' | 'community'

query
CALL dbms.components() YIELD versions RETURN versions[0] STARTS WITH '5.' AS five
----
true

query
CALL db.info() YIELD id, name, creationDate RETURN size(id) AS idLen, name, creationDate ENDS WITH 'Z' AS z
----
64 | 'neo4j' | true

query
CALL dbms.listConfig('db.transaction.timeout') YIELD name, value, dynamic, defaultValue, startupValue, explicitlySet, validValues RETURN name, value, dynamic, explicitlySet
----
'db.transaction.timeout' | '0s' | true | false

query
CALL dbms.clientConfig() YIELD name WHERE name = 'browser.post_connect_cmd' RETURN name
----
'browser.post_connect_cmd'

statement ok
CREATE (:Person {name: 'a', age: 3})-[:KNOWS {since: 2020}]->(:Person:Dev {name: 'b', score: 1.5}), (:Person {name: 'c'}), (:Empty)-[:LIKES]->(:Empty)

query
CALL db.schema.nodeTypeProperties() YIELD nodeType, nodeLabels, propertyName, propertyTypes, mandatory RETURN nodeType, nodeLabels, propertyName, propertyTypes, mandatory
----
':`Person`' | ['Person'] | 'name' | ['String'] | true
':`Person`' | ['Person'] | 'age' | ['Long'] | false
':`Dev`:`Person`' | ['Dev', 'Person'] | 'name' | ['String'] | true
':`Dev`:`Person`' | ['Dev', 'Person'] | 'score' | ['Double'] | true
':`Empty`' | ['Empty'] | null | null | false

query
CALL db.schema.relTypeProperties() YIELD relType, propertyName, propertyTypes, mandatory RETURN relType, propertyName, propertyTypes, mandatory
----
':`KNOWS`' | 'since' | ['Long'] | true
':`LIKES`' | null | null | false

statement ok
CALL tx.setMetaData({app: 'golden'})
