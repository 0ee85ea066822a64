# Output details a Neo4j 5.26 client sees, with answers from Neo4j 5.26.30 (branch fidelity4).
#
# toString() of times prints the seconds always and the fraction without trailing zeros
# (java.time's ISO formatters), unlike the result display of the same values (`12:00Z`).

query
RETURN toString(time('12:00Z')) AS a, toString(localtime('12:00')) AS b, toString(time('12:00:00.000+01:00')) AS c
----
'12:00:00Z' | '12:00:00' | '12:00:00+01:00'

query
RETURN toString(datetime('2020-01-01T12:00Z')) AS a, toString(localdatetime('2020-01-01T12:00')) AS b
----
'2020-01-01T12:00:00Z' | '2020-01-01T12:00:00'

query
RETURN toString(datetime('2020-01-01T12:00[Europe/Paris]')) AS a
----
'2020-01-01T12:00:00+01:00[Europe/Paris]'

query
RETURN toString(time('12:00:00.5Z')) AS a, toString(localtime('12:00:00.120')) AS b, toString(localtime('12:00:00.123456')) AS c, toString(time('12:00:00.1234Z')) AS d
----
'12:00:00.5Z' | '12:00:00.12' | '12:00:00.123456' | '12:00:00.1234Z'

query
RETURN toString(localdatetime('+10000-01-01T00:00')) AS a, toStringOrNull(time('12:00Z')) AS b, toStringList([localtime('01:02')]) AS c
----
'+10000-01-01T00:00:00' | '12:00:00Z' | ['01:02:00']

query
RETURN [x IN [1, 2] | toString(localtime({hour: x}))] AS t
----
['01:00:00', '02:00:00']

# A map projection with `.*` lists the named items before the map's or entity's own keys
# (graphrag's hybrid retriever reads `node {.*, embedding: null}` by position). This file's
# rows print maps by key; the order Bolt sends is checked in tests/libraries/test_fast_subset.py.

query
WITH {b: 2, a: 1} AS row RETURN row {.*, x: 1} AS m
----
{a: 1, b: 2, x: 1}

query
WITH {b: 2, a: 1} AS row RETURN row {x: 1, .*} AS m
----
{a: 1, b: 2, x: 1}

query
WITH {b: 2, a: 1, c: 3} AS row RETURN row {.*, b: 9} AS m
----
{a: 1, b: 9, c: 3}

query
WITH {b: 2, a: 1} AS row, 7 AS q RETURN row {.*, q} AS m
----
{a: 1, b: 2, q: 7}

query
WITH {b: 2, a: 1} AS row RETURN row {.*, nope: null} AS m
----
{a: 1, b: 2, nope: null}

query
WITH {b: 2, a: 1} AS row RETURN row {.*} AS m, row {.b, .a} AS n
----
{a: 1, b: 2} | {a: 1, b: 2}

# Path selectors with the optional PATH/PATHS words and `ALL [PATHS]`.

statement ok
CREATE (a:F4P {n: 'a'})-[:F4R]->(b:F4P {n: 'b'})-[:F4R]->(c:F4P {n: 'c'}), (a)-[:F4R]->(c)

query ordered
MATCH p = SHORTEST 2 PATHS (a:F4P {n: 'a'})-[:F4R]->+(c:F4P {n: 'c'}) RETURN length(p) AS l ORDER BY l
----
1
2

query
MATCH p = SHORTEST 1 PATH GROUPS (a:F4P {n: 'a'})-[:F4R]->+(c:F4P {n: 'c'}) RETURN length(p) AS l
----
1

query
MATCH p = SHORTEST GROUPS (a:F4P {n: 'a'})-[:F4R]->+(c:F4P {n: 'c'}) RETURN length(p) AS l
----
1

query ordered
MATCH p = ALL PATHS (a:F4P {n: 'a'})-[:F4R]->+(c:F4P {n: 'c'}) RETURN length(p) AS l ORDER BY l
----
1
2

query ordered
MATCH p = ALL (a:F4P {n: 'a'})-[:F4R]->+(c:F4P {n: 'c'}) RETURN length(p) AS l ORDER BY l
----
1
2

query ordered
MATCH p = ALL SHORTEST PATHS (a:F4P {n: 'a'})-[:F4R]->+(c:F4P {n: 'c'}) RETURN length(p) AS l
----
1
