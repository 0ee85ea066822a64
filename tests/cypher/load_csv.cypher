# LOAD CSV from the import directory (tests/cypher/import for goldens): headers, quoted fields,
# empty fields as null, blank lines, a byte order mark, another field terminator, gzip,
# linenumber(), Neo4j's errors, and batched writes. Answers from Neo4j 5.26 over the same files.

query ordered
LOAD CSV WITH HEADERS FROM 'file:///people.csv' AS row RETURN replace(row.name, '\n', '/'), row.age, row.city, linenumber()
----
'Ann' | '30' | 'Paris, FR' | 2
'Bob' | null | 'He said "hi"' | 3
'multi/line' | '5' | null | 4

query ordered
LOAD CSV FROM 'file:///edge.csv' AS row RETURN row, linenumber()
----
['a', 'b', 'c'] | 1
['', '  x ', null] | 2
['1', '2', '3', '4'] | 3
['1'] | 4

query ordered
LOAD CSV WITH HEADERS FROM 'file:///edge.csv' AS row RETURN row
----
{a: '', b: '  x ', c: null}
{a: '1', b: '2', c: '3'}
{a: '1', b: null, c: null}

query ordered
LOAD CSV FROM 'file:///blank.csv' AS row RETURN row, linenumber()
----
['x', 'y'] | 1
['1', '2'] | 2

query
LOAD CSV WITH HEADERS FROM 'file:///bom.csv' AS row RETURN keys(row), row.id
----
['id', 'v'] | '1'

query ordered
LOAD CSV FROM 'file:///semi.csv' AS row FIELDTERMINATOR ';' RETURN row
----
['a', 'b']
['1', '2']

query
LOAD CSV WITH HEADERS FROM 'file:///people.csv.gz' AS row RETURN count(row), collect(row.name)[0]
----
3 | 'Ann'

query
RETURN linenumber(), file()
----
null | null

# Writes in batches: each record's node, with the record's line number.
statement ok
LOAD CSV WITH HEADERS FROM 'file:///people.csv' AS row CALL (row) { CREATE (:Person {name: row.name, line: linenumber()}) } IN TRANSACTIONS OF 2 ROWS

query ordered
MATCH (p:Person) RETURN replace(p.name, '\n', '/'), p.line ORDER BY p.line
----
'Ann' | 2
'Bob' | 3
'multi/line' | 4

statement error Neo.ClientError.Statement.ExternalResourceFailed Cannot load from URL 'file:///nope.csv': Couldn't load the external resource at: file:///nope.csv ()
LOAD CSV FROM 'file:///nope.csv' AS row RETURN row

statement error Neo.ClientError.Statement.ExternalResourceFailed Invalid URL 'nope.csv': no protocol: nope.csv ()
LOAD CSV FROM 'nope.csv' AS row RETURN row

statement error Neo.ClientError.Statement.ExternalResourceFailed Cannot load from URL 'ftp://x/y.csv': Couldn't load the external resource at: ftp://x/y.csv ()
LOAD CSV FROM 'ftp://x/y.csv' AS row RETURN row

statement error Neo.ClientError.Statement.SyntaxError Type mismatch: expected String but was Integer
LOAD CSV FROM 1 AS row RETURN row

statement error Neo.ClientError.Statement.SyntaxError CSV field terminator can only be one character wide
LOAD CSV FROM 'file:///semi.csv' AS row FIELDTERMINATOR ';;' RETURN row

# Relationships from an id-pair file in batches, through an index (the bulk-load shape): a record
# whose end is missing (9) creates nothing, every record leaves the call once. Answers from
# Neo4j 5.26.
statement ok
UNWIND range(1, 3) AS i CREATE (:User {id: i})

statement ok
CREATE INDEX user_id FOR (u:User) ON (u.id)

query
LOAD CSV WITH HEADERS FROM 'file:///friends.csv' AS row CALL (row) { MATCH (a:User {id: toInteger(row.`:START_ID(User)`)}) MATCH (b:User {id: toInteger(row.`:END_ID(User)`)}) CREATE (a)-[:FRIEND {line: linenumber()}]->(b) } IN TRANSACTIONS OF 2 ROWS RETURN count(*) AS rows, sum(linenumber()) AS lines
----
7 | 35

query ordered
MATCH (a:User)-[r:FRIEND]->(b:User) RETURN a.id, b.id, r.line ORDER BY r.line
----
1 | 2 | 2
2 | 3 | 3
3 | 1 | 4
2 | 2 | 6
3 | 2 | 7
1 | 2 | 8

# Seeks and expansions with several results for one record: every result row carries the whole
# record (the last result takes the record's row, the others copies). Answers from Neo4j 5.26.
query ordered
LOAD CSV WITH HEADERS FROM 'file:///friends.csv' AS row MATCH (a:User {id: toInteger(row.`:START_ID(User)`)})-[r:FRIEND]->(b) RETURN linenumber() AS l, row.`:END_ID(User)` AS t, r.line AS rl, b.id AS b ORDER BY l, rl
----
2 | '2' | 2 | 2
2 | '2' | 8 | 2
3 | '3' | 3 | 3
3 | '3' | 6 | 2
4 | '1' | 4 | 1
4 | '1' | 7 | 2
5 | '9' | 2 | 2
5 | '9' | 8 | 2
6 | '2' | 3 | 3
6 | '2' | 6 | 2
7 | '2' | 4 | 1
7 | '2' | 7 | 2
8 | '2' | 2 | 2
8 | '2' | 8 | 2

statement ok
UNWIND [[1, 'a'], [1, 'b'], [2, 'c'], [3, 'd']] AS p CREATE (:Dup {id: p[0], k: p[1]})

statement ok
CREATE INDEX dup_id FOR (d:Dup) ON (d.id)

query ordered
LOAD CSV WITH HEADERS FROM 'file:///friends.csv' AS row CALL (row) { MATCH (d:Dup {id: toInteger(row.`:START_ID(User)`)}) MATCH (e:Dup {id: toInteger(row.`:END_ID(User)`)}) RETURN d.k AS dk, e.k AS ek } IN TRANSACTIONS OF 3 ROWS RETURN linenumber() AS l, row.`:START_ID(User)` AS s, row.`:END_ID(User)` AS t, dk, ek ORDER BY l, dk, ek
----
2 | '1' | '2' | 'a' | 'c'
2 | '1' | '2' | 'b' | 'c'
3 | '2' | '3' | 'c' | 'd'
4 | '3' | '1' | 'd' | 'a'
4 | '3' | '1' | 'd' | 'b'
6 | '2' | '2' | 'c' | 'c'
7 | '3' | '2' | 'd' | 'c'
8 | '1' | '2' | 'a' | 'c'
8 | '1' | '2' | 'b' | 'c'

# A body without RETURN that runs several times for one input row still passes that row once.
query
UNWIND [1, 2, 3] AS x CALL (x) { UNWIND range(1, x) AS k CREATE (:Item {x: x, k: k}) } IN TRANSACTIONS OF 2 ROWS RETURN x
----
1
2
3

query
MATCH (n:Item) RETURN count(n), sum(n.x * 10 + n.k)
----
6 | 150
