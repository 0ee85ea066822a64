# FULLTEXT indexes (issue 18), in Neo4j 5.26's syntax. Every expected answer and error code
# below was taken from Neo4j 5.26 Community running this file.
#
# How scores are checked: Lucene's and tantivy's BM25 give different values, so no score is
# printed. Ranked queries return `ORDER BY score DESC, node.title`: the same ranking gives the
# same rows, and ties (equal scores in both engines) are ordered by title rather than by each
# engine's internal document order. The first query also checks that every score is positive
# and that the scores do not increase. Constant-score queries (wildcards, fuzzy, regex,
# ranges, *:*) compare membership only: Lucene scores fuzzy matches, tantivy does not.

statement ok
CREATE (:FULLTEXT_Movie {title: 'The Matrix', description: 'A computer hacker learns about the true nature of reality'}), (:FULLTEXT_Movie {title: 'The Matrix Reloaded', description: 'Neo and the rebel leaders estimate they have 72 hours'}), (:FULLTEXT_Book {title: 'Matrix Analysis', description: 'linear algebra', tags: ['textbook', 'Mathematics']}), (:FULLTEXT_Movie {title: 'Cloud Atlas', description: 'stories of the matrix of souls'}), (:FULLTEXT_Movie {title: 42}), (:FULLTEXT_Person {name: 'Theo'})-[:FULLTEXT_R {note: 'a lonely writer falls for an operating system'}]->(:FULLTEXT_Person {name: 'Samantha'})-[:FULLTEXT_S {note: 'operating instructions'}]->(:FULLTEXT_Person {name: 'Ann'})

statement ok
CREATE FULLTEXT INDEX fulltext_titles FOR (n:FULLTEXT_Movie|FULLTEXT_Book) ON EACH [n.title, n.description]

statement ok
CREATE FULLTEXT INDEX fulltext_en IF NOT EXISTS FOR (n:FULLTEXT_Movie) ON EACH [n.description] OPTIONS {indexConfig: {`fulltext.analyzer`: 'english', `fulltext.eventually_consistent`: true}}

statement ok
CREATE FULLTEXT INDEX fulltext_rel FOR ()-[r:FULLTEXT_R|FULLTEXT_S]-() ON EACH [r.note]

statement ok
CREATE FULLTEXT INDEX fulltext_tags FOR (n:FULLTEXT_Book) ON EACH [n.tags]

statement ok
CALL db.awaitIndexes()

query ordered
SHOW FULLTEXT INDEXES YIELD name, state, populationPercent, type, entityType, labelsOrTypes, properties, indexProvider, owningConstraint
----
'fulltext_en' | 'ONLINE' | 100.0 | 'FULLTEXT' | 'NODE' | ['FULLTEXT_Movie'] | ['description'] | 'fulltext-1.0' | null
'fulltext_rel' | 'ONLINE' | 100.0 | 'FULLTEXT' | 'RELATIONSHIP' | ['FULLTEXT_R', 'FULLTEXT_S'] | ['note'] | 'fulltext-1.0' | null
'fulltext_tags' | 'ONLINE' | 100.0 | 'FULLTEXT' | 'NODE' | ['FULLTEXT_Book'] | ['tags'] | 'fulltext-1.0' | null
'fulltext_titles' | 'ONLINE' | 100.0 | 'FULLTEXT' | 'NODE' | ['FULLTEXT_Movie', 'FULLTEXT_Book'] | ['title', 'description'] | 'fulltext-1.0' | null

query ordered
SHOW FULLTEXT INDEXES YIELD name, options, createStatement, failureMessage
----
'fulltext_en' | {indexConfig: {`fulltext.analyzer`: 'english', `fulltext.eventually_consistent`: true}, indexProvider: 'fulltext-1.0'} | 'CREATE FULLTEXT INDEX `fulltext_en` FOR (n:`FULLTEXT_Movie`) ON EACH [n.`description`] OPTIONS {indexConfig: {`fulltext.analyzer`: \'english\',`fulltext.eventually_consistent`: true}}' | ''
'fulltext_rel' | {indexConfig: {`fulltext.analyzer`: 'standard-no-stop-words', `fulltext.eventually_consistent`: false}, indexProvider: 'fulltext-1.0'} | 'CREATE FULLTEXT INDEX `fulltext_rel` FOR ()-[r:`FULLTEXT_R`|`FULLTEXT_S`]-() ON EACH [r.`note`] OPTIONS {indexConfig: {`fulltext.analyzer`: \'standard-no-stop-words\',`fulltext.eventually_consistent`: false}}' | ''
'fulltext_tags' | {indexConfig: {`fulltext.analyzer`: 'standard-no-stop-words', `fulltext.eventually_consistent`: false}, indexProvider: 'fulltext-1.0'} | 'CREATE FULLTEXT INDEX `fulltext_tags` FOR (n:`FULLTEXT_Book`) ON EACH [n.`tags`] OPTIONS {indexConfig: {`fulltext.analyzer`: \'standard-no-stop-words\',`fulltext.eventually_consistent`: false}}' | ''
'fulltext_titles' | {indexConfig: {`fulltext.analyzer`: 'standard-no-stop-words', `fulltext.eventually_consistent`: false}, indexProvider: 'fulltext-1.0'} | 'CREATE FULLTEXT INDEX `fulltext_titles` FOR (n:`FULLTEXT_Movie`|`FULLTEXT_Book`) ON EACH [n.`title`, n.`description`] OPTIONS {indexConfig: {`fulltext.analyzer`: \'standard-no-stop-words\',`fulltext.eventually_consistent`: false}}' | ''

query
SHOW INDEXES YIELD name, type WHERE type = 'FULLTEXT' RETURN count(*) AS n
----
4

query ordered
CALL db.index.fulltext.queryNodes('fulltext_titles', 'matrix') YIELD node, score WITH node, score ORDER BY score DESC, node.title WITH collect(node.title) AS titles, collect(score) AS scores RETURN titles, all(i IN range(0, size(scores) - 1) WHERE scores[i] > 0 AND (i = 0 OR scores[i - 1] >= scores[i])) AS ranked
----
['Cloud Atlas', 'Matrix Analysis', 'The Matrix', 'The Matrix Reloaded'] | true

query ordered
CALL db.index.fulltext.queryNodes('fulltext_titles', 'title:matrix AND NOT reloaded') YIELD node, score RETURN node.title ORDER BY score DESC, node.title
----
'Matrix Analysis'
'The Matrix'

query ordered
CALL db.index.fulltext.queryNodes('fulltext_titles', '"the matrix"') YIELD node, score RETURN node.title ORDER BY score DESC, node.title
----
'Cloud Atlas'
'The Matrix'
'The Matrix Reloaded'

query ordered
CALL db.index.fulltext.queryNodes('fulltext_titles', 'the') YIELD node, score RETURN node.title ORDER BY score DESC, node.title
----
'The Matrix'
'The Matrix Reloaded'
'Cloud Atlas'

query ordered
CALL db.index.fulltext.queryNodes('fulltext_titles', '+matrix -cloud') YIELD node, score RETURN node.title ORDER BY score DESC, node.title
----
'Matrix Analysis'
'The Matrix'
'The Matrix Reloaded'

query ordered
CALL db.index.fulltext.queryNodes('fulltext_titles', 'matrix^3 OR cloud') YIELD node, score RETURN node.title ORDER BY score DESC, node.title
----
'Cloud Atlas'
'Matrix Analysis'
'The Matrix'
'The Matrix Reloaded'

query ordered
CALL db.index.fulltext.queryNodes('fulltext_titles', 'description:(rebel OR hacker)') YIELD node, score RETURN node.title ORDER BY score DESC, node.title
----
'The Matrix'
'The Matrix Reloaded'

# Cloud Atlas ranks first; the two that follow tie.
query
CALL db.index.fulltext.queryNodes('fulltext_titles', 'matrix', {skip: 1, limit: 2}) YIELD node RETURN node.title
----
'Matrix Analysis'
'The Matrix'

query
CALL db.index.fulltext.queryNodes('fulltext_titles', 'matr*') YIELD node, score RETURN node.title, score
----
'Cloud Atlas' | 1.0
'Matrix Analysis' | 1.0
'The Matrix Reloaded' | 1.0
'The Matrix' | 1.0

query
CALL db.index.fulltext.queryNodes('fulltext_titles', '*atrix') YIELD node, score RETURN node.title ORDER BY score DESC, node.title
----
'Cloud Atlas'
'Matrix Analysis'
'The Matrix Reloaded'
'The Matrix'

query
CALL db.index.fulltext.queryNodes('fulltext_titles', 'matrx~') YIELD node, score RETURN node.title ORDER BY score DESC, node.title
----
'Cloud Atlas'
'Matrix Analysis'
'The Matrix Reloaded'
'The Matrix'

query
CALL db.index.fulltext.queryNodes('fulltext_titles', 'title:/ma.*x/') YIELD node, score RETURN node.title ORDER BY score DESC, node.title
----
'Matrix Analysis'
'The Matrix Reloaded'
'The Matrix'

query
CALL db.index.fulltext.queryNodes('fulltext_titles', '[a TO m]') YIELD node, score RETURN node.title ORDER BY score DESC, node.title
----
'Cloud Atlas'
'Matrix Analysis'
'The Matrix Reloaded'
'The Matrix'

query
CALL db.index.fulltext.queryNodes('fulltext_titles', '*:*') YIELD node, score RETURN node.title ORDER BY score DESC, node.title
----
'Cloud Atlas'
'Matrix Analysis'
'The Matrix Reloaded'
'The Matrix'

query
CALL db.index.fulltext.queryNodes('fulltext_titles', 'NOT matrix') YIELD node, score RETURN node.title ORDER BY score DESC, node.title
----

query
CALL db.index.fulltext.queryNodes('fulltext_titles', 'nosuchfield:matrix') YIELD node, score RETURN node.title ORDER BY score DESC, node.title
----

query ordered
CALL db.index.fulltext.queryNodes('fulltext_en', 'learning hackers') YIELD node, score RETURN node.title ORDER BY score DESC, node.title
----
'The Matrix'

query ordered
CALL db.index.fulltext.queryNodes('fulltext_en', 'the') YIELD node, score RETURN node.title ORDER BY score DESC, node.title
----

query ordered
CALL db.index.fulltext.queryNodes('fulltext_tags', 'mathematics') YIELD node, score RETURN node.title ORDER BY score DESC, node.title
----
'Matrix Analysis'

query ordered
CALL db.index.fulltext.queryRelationships('fulltext_rel', 'operating') YIELD relationship, score RETURN type(relationship) AS t, relationship.note AS note ORDER BY score DESC, note
----
'FULLTEXT_S' | 'operating instructions'
'FULLTEXT_R' | 'a lonely writer falls for an operating system'

query ordered
CALL db.index.fulltext.queryRelationships('fulltext_rel', '"operating system"') YIELD relationship RETURN startNode(relationship).name, endNode(relationship).name
----
'Theo' | 'Samantha'

query ordered
MATCH (m:FULLTEXT_Movie) WHERE m.title STARTS WITH 'The' CALL db.index.fulltext.queryNodes('fulltext_titles', '"' + m.title + '"') YIELD node, score WITH m, node ORDER BY score DESC, node.title RETURN m.title, collect(node.title) AS hits ORDER BY m.title
----
'The Matrix' | ['Cloud Atlas', 'The Matrix', 'The Matrix Reloaded']
'The Matrix Reloaded' | ['The Matrix Reloaded']

statement error Neo.ClientError.Statement.TypeError
MATCH (m:FULLTEXT_Movie) CALL db.index.fulltext.queryNodes('fulltext_titles', m.title) YIELD node RETURN node

statement error Neo.ClientError.Procedure.ProcedureCallFailed There is no such fulltext schema index: nope
CALL db.index.fulltext.queryNodes('nope', 'x')

statement error Neo.ClientError.Procedure.ProcedureCallFailed Encountered " <AND> "AND "" at line 1, column 0.
CALL db.index.fulltext.queryNodes('fulltext_titles', 'AND (')

statement error Neo.ClientError.Procedure.ProcedureCallFailed Encountered "<EOF>" at line 1, column 0.
CALL db.index.fulltext.queryNodes('fulltext_titles', '')

statement error Neo.ClientError.Procedure.ProcedureCallFailed Lexical error at line 1, column 14.
CALL db.index.fulltext.queryNodes('fulltext_titles', '"unterminated')

statement error Neo.ClientError.Procedure.ProcedureCallFailed is an index on NODE, so it cannot be queried for relationships.
CALL db.index.fulltext.queryRelationships('fulltext_titles', 'x')

statement error Neo.ClientError.Procedure.ProcedureCallFailed is an index on RELATIONSHIP, so it cannot be queried for nodes.
CALL db.index.fulltext.queryNodes('fulltext_rel', 'x')

statement error Neo.ClientError.Procedure.ProcedureCallFailed Limit argument cannot be negative: -1.
CALL db.index.fulltext.queryNodes('fulltext_titles', 'matrix', {limit: -1})

statement error Neo.ClientError.Schema.IndexWithNameAlreadyExists There already exists an index called 'fulltext_titles'.
CREATE FULLTEXT INDEX fulltext_titles FOR (n:FULLTEXT_Movie) ON EACH [n.title]

statement error Neo.ClientError.Schema.IndexWithNameAlreadyExists There already exists an index called 'fulltext_titles'.
CREATE INDEX fulltext_titles FOR (n:FULLTEXT_Movie) ON (n.x)

statement error Neo.ClientError.Schema.IndexAlreadyExists There already exists an index (:FULLTEXT_Movie:FULLTEXT_Book {title, description}).
CREATE FULLTEXT INDEX fulltext_other FOR (n:FULLTEXT_Movie|FULLTEXT_Book) ON EACH [n.title, n.description]

statement error Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists An equivalent index already exists
CREATE FULLTEXT INDEX fulltext_titles FOR (n:FULLTEXT_Movie|FULLTEXT_Book) ON EACH [n.title, n.description]

statement ok
CREATE FULLTEXT INDEX fulltext_titles IF NOT EXISTS FOR (n:FULLTEXT_Movie) ON EACH [n.title]

statement error Neo.DatabaseError.Statement.ExecutionFailed No such full-text analyzer: 'klingon'.
CREATE FULLTEXT INDEX fulltext_bad FOR (n:FULLTEXT_Movie) ON EACH [n.title] OPTIONS {indexConfig: {`fulltext.analyzer`: 'klingon'}}

statement error Neo.DatabaseError.Statement.ExecutionFailed Invalid index config key 'fulltext.foo', it was not recognized as an index setting.
CREATE FULLTEXT INDEX fulltext_bad FOR (n:FULLTEXT_Movie) ON EACH [n.title] OPTIONS {indexConfig: {`fulltext.foo`: 'x'}}

statement error Neo.ClientError.General.InvalidArguments Could not create fulltext index with specified index provider 'range-1.0'.
CREATE FULLTEXT INDEX fulltext_bad FOR (n:FULLTEXT_Movie) ON EACH [n.title] OPTIONS {indexProvider: 'range-1.0'}

statement error Neo.ClientError.Statement.SyntaxError Invalid option provided, valid options are `indexProvider` and `indexConfig`.
CREATE FULLTEXT INDEX fulltext_bad FOR (n:FULLTEXT_Movie) ON EACH [n.title] OPTIONS {foo: 1}

query ordered
CALL db.index.fulltext.listAvailableAnalyzers() YIELD analyzer, stopwords WHERE analyzer IN ['standard-no-stop-words', 'standard', 'english', 'simple', 'whitespace', 'keyword'] RETURN analyzer, size(stopwords) AS n ORDER BY analyzer
----
'english' | 33
'keyword' | 0
'simple' | 0
'standard' | 33
'standard-no-stop-words' | 0
'whitespace' | 0

statement ok
CALL db.index.fulltext.awaitEventuallyConsistentIndexRefresh()

# A transaction sees its own writes (created, changed and relabelled entities); others do not,
# and nothing of it remains after a rollback.
statement ok
:begin

statement ok
CREATE (:FULLTEXT_Movie {title: 'Matrix Resurrections'})

query
CALL db.index.fulltext.queryNodes('fulltext_titles', 'resurrections') YIELD node, score RETURN node.title ORDER BY score DESC, node.title
----
'Matrix Resurrections'

statement ok
MATCH (m:FULLTEXT_Movie {title: 'Cloud Atlas'}) SET m.description = 'six nested stories'

query ordered
CALL db.index.fulltext.queryNodes('fulltext_titles', 'matrix') YIELD node, score RETURN node.title ORDER BY score DESC, node.title
----
'Matrix Analysis'
'Matrix Resurrections'
'The Matrix'
'The Matrix Reloaded'

connection other
query
CALL db.index.fulltext.queryNodes('fulltext_titles', 'resurrections') YIELD node, score RETURN node.title ORDER BY score DESC, node.title
----

statement ok
:rollback

query
CALL db.index.fulltext.queryNodes('fulltext_titles', 'resurrections OR nested') YIELD node, score RETURN node.title ORDER BY score DESC, node.title
----

statement ok
MATCH (m:FULLTEXT_Movie {title: 'The Matrix Reloaded'}) REMOVE m:FULLTEXT_Movie SET m:FULLTEXT_Gone

query ordered
CALL db.index.fulltext.queryNodes('fulltext_titles', 'matrix') YIELD node, score RETURN node.title ORDER BY score DESC, node.title
----
'Cloud Atlas'
'Matrix Analysis'
'The Matrix'

restart

# Definitions survive a restart.
query ordered
SHOW FULLTEXT INDEXES YIELD name RETURN name
----
'fulltext_en'
'fulltext_rel'
'fulltext_tags'
'fulltext_titles'

statement ok
DROP INDEX fulltext_en

query ordered
SHOW FULLTEXT INDEXES YIELD name RETURN name
----
'fulltext_rel'
'fulltext_tags'
'fulltext_titles'

statement error Neo.ClientError.Procedure.ProcedureCallFailed There is no such fulltext schema index: fulltext_en
CALL db.index.fulltext.queryNodes('fulltext_en', 'x')

# neo4j-graphrag's create_fulltext_index: the name as a parameter.
params {name: 'fulltext_param'}
statement ok
CREATE FULLTEXT INDEX $name IF NOT EXISTS FOR (n:`Movie`) ON EACH [n.`title`]

query ordered
SHOW FULLTEXT INDEXES YIELD name, labelsOrTypes, properties WHERE name = 'fulltext_param' RETURN name, labelsOrTypes, properties
----
'fulltext_param' | ['Movie'] | ['title']

params {name: 'fulltext_param'}
statement ok
DROP INDEX $name IF EXISTS
