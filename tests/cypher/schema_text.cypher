# TEXT indexes answer CONTAINS and ENDS WITH through their trigram postings, with Neo4j 5.26's
# operators (NodeIndexContainsScan / NodeIndexEndsWithScan); STARTS WITH and equality still seek
# by range. Rows are Neo4j 5.26's answers on the same data; a non-string value, a list and a
# missing property never match; non-ASCII text is cut into trigrams by character.

statement ok
CREATE TEXT INDEX schema_text_name FOR (n:SCHEMA_TX) ON (n.name)

statement ok
CREATE (:SCHEMA_TX {name: 'Anna'}), (:SCHEMA_TX {name: 'Hannah'}), (:SCHEMA_TX {name: 5}), (:SCHEMA_TX {name: 'Ångström'}), (:SCHEMA_TX {name: 'naïve café'}), (:SCHEMA_TX {name: '日本語テキスト'}), (:SCHEMA_TX {name: ''}), (:SCHEMA_TX {name: ['nn']}), (:SCHEMA_TX)

query explain
MATCH (n:SCHEMA_TX) WHERE n.name CONTAINS 'nn' RETURN n.name
----
01)ProduceResults: n.name
02)--Projection
03)----Filter
04)------NodeIndexContainsScan: :SCHEMA_TX(name)
05)--------Argument

query explain
MATCH (n:SCHEMA_TX) WHERE n.name ENDS WITH 'ah' RETURN n.name
----
01)ProduceResults: n.name
02)--Projection
03)----Filter
04)------NodeIndexEndsWithScan: :SCHEMA_TX(name)
05)--------Argument

# With both, ENDS WITH is the scan and CONTAINS the filter, as Neo4j plans it.
query explain
MATCH (n:SCHEMA_TX) WHERE n.name CONTAINS 'a' AND n.name ENDS WITH 'h' RETURN n.name
----
01)ProduceResults: n.name
02)--Projection
03)----Filter
04)------NodeIndexEndsWithScan: :SCHEMA_TX(name)
05)--------Argument

query explain
MATCH (n:SCHEMA_TX) WHERE n.name STARTS WITH 'An' RETURN n.name
----
01)ProduceResults: n.name
02)--Projection
03)----Filter
04)------NodeIndexSeekByRange: :SCHEMA_TX(name)
05)--------Argument

# No TEXT index on the property: a label scan, as in Neo4j.
query explain
MATCH (n:SCHEMA_TX) WHERE n.other CONTAINS 'a' RETURN n.other
----
01)ProduceResults: n.other
02)--Projection
03)----Filter
04)------NodeByLabelScan: :SCHEMA_TX
05)--------Argument

query
MATCH (n:SCHEMA_TX) WHERE n.name CONTAINS 'nn' RETURN n.name
----
'Anna'
'Hannah'

query
MATCH (n:SCHEMA_TX) WHERE n.name CONTAINS '' RETURN n.name
----
'Anna'
'Hannah'
'Ångström'
'naïve café'
'日本語テキスト'
''

query
MATCH (n:SCHEMA_TX) WHERE n.name ENDS WITH 'ah' RETURN n.name
----
'Hannah'

query
MATCH (n:SCHEMA_TX) WHERE n.name ENDS WITH 'é' RETURN n.name
----
'naïve café'

query
MATCH (n:SCHEMA_TX) WHERE n.name CONTAINS 'ströM' RETURN n.name
----

query
MATCH (n:SCHEMA_TX) WHERE n.name CONTAINS '語テ' RETURN n.name
----
'日本語テキスト'

query
MATCH (n:SCHEMA_TX) WHERE n.name CONTAINS null RETURN n.name
----

query
MATCH (n:SCHEMA_TX) WHERE n.name CONTAINS 5 RETURN n.name
----

query
UNWIND ['nn', 'a'] AS x MATCH (n:SCHEMA_TX) WHERE n.name CONTAINS x RETURN x, n.name
----
'nn' | 'Anna'
'nn' | 'Hannah'
'a' | 'Anna'
'a' | 'Hannah'
'a' | 'naïve café'

# The scans count as reads of the TEXT index, one per seek (a null or non-string needle reads
# nothing).
query
SHOW INDEXES YIELD name, readCount WHERE name = 'schema_text_name' RETURN readCount
----
8

# A transaction's own writes, changes and deletions are seen by its scans.
query
MATCH (n:SCHEMA_TX {name: 'Anna'}) SET n.name = 'Annah' WITH count(*) AS c MATCH (m:SCHEMA_TX) WHERE m.name ENDS WITH 'nah' RETURN m.name
----
'Annah'
'Hannah'

query
MATCH (n:SCHEMA_TX) WHERE n.name ENDS WITH 'nah' RETURN n.name
----
'Annah'
'Hannah'

statement ok
MATCH (n:SCHEMA_TX {name: 'Hannah'}) DELETE n

query
MATCH (n:SCHEMA_TX) WHERE n.name CONTAINS 'nna' RETURN n.name
----
'Annah'

# After a restart the values live in the base: its postings answer the same.
restart

query
MATCH (n:SCHEMA_TX) WHERE n.name CONTAINS 'nna' OR n.name CONTAINS 'ö' RETURN n.name
----
'Annah'
'Ångström'

query
MATCH (n:SCHEMA_TX) WHERE n.name ENDS WITH 'キスト' RETURN n.name
----
'日本語テキスト'

statement ok
CREATE (:SCHEMA_TX {name: 'Savannah'})

query
MATCH (n:SCHEMA_TX) WHERE n.name ENDS WITH 'nnah' RETURN n.name
----
'Annah'
'Savannah'

# Without the TEXT index the same queries scan the label and answer the same.
statement ok
DROP INDEX schema_text_name

query explain
MATCH (n:SCHEMA_TX) WHERE n.name ENDS WITH 'nnah' RETURN n.name
----
01)ProduceResults: n.name
02)--Projection
03)----Filter
04)------NodeByLabelScan: :SCHEMA_TX
05)--------Argument

query
MATCH (n:SCHEMA_TX) WHERE n.name ENDS WITH 'nnah' RETURN n.name
----
'Annah'
'Savannah'
