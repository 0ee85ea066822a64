# Maintained FULLTEXT indexes (issue 18 §1): the index is kept up to date at commit, and a
# query still sees exactly its transaction's snapshot plus its own writes: own uncommitted
# writes, no later commit, nothing of a rollback, label removal, deletes, restart, two
# concurrent writers; and `OPTIONS $map`. Answers outside restart were checked on Neo4j 5.26
# (FTIDX_-prefixed data). Rows are titles in title order, so scores are not compared.

statement ok
CREATE (:FTIDX_Doc {title: 'red apple'}), (:FTIDX_Doc {title: 'green apple'}), (:FTIDX_Doc {title: 'red pear'}), (:FTIDX_Other {title: 'red herring'})

params {opts: {indexConfig: {`fulltext.analyzer`: 'english', `fulltext.eventually_consistent`: true}}}
statement ok
CREATE FULLTEXT INDEX ftidx_docs FOR (n:FTIDX_Doc) ON EACH [n.title] OPTIONS $opts

statement ok
CREATE FULLTEXT INDEX ftidx_sync FOR (n:FTIDX_Doc) ON EACH [n.title, n.body]

statement ok
CALL db.awaitIndexes()

query ordered
SHOW FULLTEXT INDEXES YIELD name, state, populationPercent, options WHERE name STARTS WITH 'ftidx' RETURN name, state, populationPercent, options.indexConfig.`fulltext.analyzer`, options.indexConfig.`fulltext.eventually_consistent`
----
'ftidx_docs' | 'ONLINE' | 100.0 | 'english' | true
'ftidx_sync' | 'ONLINE' | 100.0 | 'standard-no-stop-words' | false

query ordered
CALL db.index.fulltext.queryNodes('ftidx_sync', 'red') YIELD node RETURN node.title ORDER BY node.title
----
'red apple'
'red pear'

# Own writes: a created node, a changed title and a deleted node, before commit.
connection tx
statement ok
:begin

connection tx
statement ok
CREATE (:FTIDX_Doc {title: 'red cherry'})

connection tx
statement ok
MATCH (n:FTIDX_Doc {title: 'green apple'}) SET n.title = 'red apple too'

connection tx
statement ok
MATCH (n:FTIDX_Doc {title: 'red pear'}) DETACH DELETE n

connection tx
query ordered
CALL db.index.fulltext.queryNodes('ftidx_sync', 'red') YIELD node RETURN node.title ORDER BY node.title
----
'red apple'
'red apple too'
'red cherry'

connection tx
query ordered
CALL db.index.fulltext.queryNodes('ftidx_docs', 'apples') YIELD node RETURN node.title ORDER BY node.title
----
'red apple'
'red apple too'

# Nobody else sees them, and a rollback leaves no trace.
query ordered
CALL db.index.fulltext.queryNodes('ftidx_sync', 'red') YIELD node RETURN node.title ORDER BY node.title
----
'red apple'
'red pear'

connection tx
statement ok
:rollback

query ordered
CALL db.index.fulltext.queryNodes('ftidx_sync', 'red OR green') YIELD node RETURN node.title ORDER BY node.title
----
'green apple'
'red apple'
'red pear'

# Snapshot: a reader keeps its snapshot while a writer commits. Arbor's transactions are
# snapshot-isolated, full-text queries included; Neo4j (read committed) answers the second
# reader query with the writer's commits ('red pear', 'red plum').
connection reader
statement ok
:begin

connection reader
query ordered
CALL db.index.fulltext.queryNodes('ftidx_sync', 'red') YIELD node RETURN node.title ORDER BY node.title
----
'red apple'
'red pear'

statement ok
CREATE (:FTIDX_Doc {title: 'red plum'})

statement ok
MATCH (n:FTIDX_Doc {title: 'red apple'}) REMOVE n:FTIDX_Doc

statement ok
MATCH (n:FTIDX_Other) SET n:FTIDX_Doc

connection reader
query ordered
CALL db.index.fulltext.queryNodes('ftidx_docs', 'red') YIELD node RETURN node.title ORDER BY node.title
----
'red apple'
'red pear'

connection reader
statement ok
:commit

query ordered
CALL db.index.fulltext.queryNodes('ftidx_docs', 'red') YIELD node RETURN node.title ORDER BY node.title
----
'red herring'
'red pear'
'red plum'

query ordered
CALL db.index.fulltext.queryNodes('ftidx_sync', 'red') YIELD node RETURN node.title ORDER BY node.title
----
'red herring'
'red pear'
'red plum'

# Two writers in open transactions commit one after the other: both are indexed.
connection w1
statement ok
:begin

connection w2
statement ok
:begin

connection w1
statement ok
CREATE (:FTIDX_Doc {title: 'blue one'})

connection w2
statement ok
CREATE (:FTIDX_Doc {title: 'blue two'})

connection w2
statement ok
:commit

connection w1
statement ok
:commit

query ordered
CALL db.index.fulltext.queryNodes('ftidx_sync', 'blue') YIELD node RETURN node.title ORDER BY node.title
----
'blue one'
'blue two'

statement ok
CALL db.index.fulltext.awaitEventuallyConsistentIndexRefresh()

query ordered
CALL db.index.fulltext.queryNodes('ftidx_docs', 'blue OR pear') YIELD node RETURN node.title ORDER BY node.title
----
'blue one'
'blue two'
'red pear'

# After a restart the index is rebuilt (POPULATING, then ONLINE) with the same answers.
restart

statement ok
CALL db.awaitIndexes()

query ordered
SHOW FULLTEXT INDEXES YIELD name, state, populationPercent WHERE name STARTS WITH 'ftidx' RETURN name, state, populationPercent
----
'ftidx_docs' | 'ONLINE' | 100.0
'ftidx_sync' | 'ONLINE' | 100.0

query ordered
CALL db.index.fulltext.queryNodes('ftidx_sync', 'red OR blue') YIELD node RETURN node.title ORDER BY node.title
----
'blue one'
'blue two'
'red herring'
'red pear'
'red plum'

statement ok
MATCH (n:FTIDX_Doc {title: 'blue one'}) SET n.title = 'yellow one'

query ordered
CALL db.index.fulltext.queryNodes('ftidx_docs', 'blue OR yellow') YIELD node RETURN node.title ORDER BY node.title
----
'blue two'
'yellow one'

statement ok
DROP INDEX ftidx_docs

statement ok
DROP INDEX ftidx_sync
