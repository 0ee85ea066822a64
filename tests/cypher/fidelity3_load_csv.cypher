# LOAD CSV WITH HEADERS rows keep the header's key order (keys(), results); linenumber() and
# file() follow the record through WITH, ORDER BY and a CALL that imports a variable, and are
# null past an aggregation or in a CALL that imports nothing. Answers from Neo4j 5.26.30 over
# the same file (served to it over http; file() differs by URL and is not pinned).

# (This harness prints a map's keys sorted; keys() shows the order, and Bolt, the shell and
# toString() send it as Neo4j does: {zeta: '1', alpha: '2', mid: '3'}.)
query ordered
LOAD CSV WITH HEADERS FROM 'file:///fidelity3_order.csv' AS row RETURN row, keys(row) AS k
----
{alpha: '2', mid: '3', zeta: '1'} | ['zeta', 'alpha', 'mid']
{alpha: '5', mid: '6', zeta: '4'} | ['zeta', 'alpha', 'mid']

query
LOAD CSV WITH HEADERS FROM 'file:///fidelity3_order.csv' AS row WITH collect(row) AS rows RETURN keys(rows[1]) AS k
----
['zeta', 'alpha', 'mid']

query
LOAD CSV WITH HEADERS FROM 'file:///fidelity3_order.csv' AS row WITH count(*) AS c RETURN c, linenumber() AS l, file() AS f
----
2 | null | null

query ordered
LOAD CSV WITH HEADERS FROM 'file:///fidelity3_order.csv' AS row WITH row.zeta AS z RETURN z, linenumber() AS l
----
'1' | 2
'4' | 3

query ordered
LOAD CSV WITH HEADERS FROM 'file:///fidelity3_order.csv' AS row RETURN count(*) AS c, linenumber() AS l ORDER BY l
----
1 | 2
1 | 3

query
LOAD CSV WITH HEADERS FROM 'file:///fidelity3_order.csv' AS row RETURN max(linenumber()) AS l
----
3

query ordered
LOAD CSV WITH HEADERS FROM 'file:///fidelity3_order.csv' AS row WITH row ORDER BY row.zeta DESC RETURN row.zeta, linenumber() AS l
----
'4' | 3
'1' | 2

query ordered
LOAD CSV WITH HEADERS FROM 'file:///fidelity3_order.csv' AS row CALL (row) { RETURN linenumber() AS l } RETURN row.zeta, l
----
'1' | 2
'4' | 3

query ordered
LOAD CSV WITH HEADERS FROM 'file:///fidelity3_order.csv' AS row CALL { WITH row RETURN linenumber() AS l } RETURN row.zeta, l
----
'1' | 2
'4' | 3

query ordered
LOAD CSV WITH HEADERS FROM 'file:///fidelity3_order.csv' AS row CALL () { RETURN linenumber() AS l } RETURN row.zeta, l
----
'1' | null
'4' | null

query ordered
LOAD CSV WITH HEADERS FROM 'file:///fidelity3_order.csv' AS row CALL { RETURN linenumber() AS l } RETURN row.zeta, l
----
'1' | null
'4' | null

query ordered
LOAD CSV WITH HEADERS FROM 'file:///fidelity3_order.csv' AS row WITH collect(row) AS rows UNWIND rows AS r RETURN r.zeta, linenumber() AS l
----
'1' | null
'4' | null

query ordered
LOAD CSV WITH HEADERS FROM 'file:///fidelity3_order.csv' AS row WITH row, count(*) AS c RETURN row.zeta, c, linenumber() AS l ORDER BY row.zeta
----
'1' | 1 | null
'4' | 1 | null
