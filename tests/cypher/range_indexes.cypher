# Range, prefix and IN seeks through an index return exactly what a scan returns.
# Every query below runs twice: before the index exists (label scan + filter) and after
# (NodeIndexSeekByRange / NodeIndexSeek + the same filter), with the same expected rows.

statement ok
CREATE (:P {id: 1, v: 1}), (:P {id: 2, v: 2.5}), (:P {id: 3, v: 3}), (:P {id: 4, v: 0.0/0.0}), (:P {id: 5, v: 'apple'}), (:P {id: 6, v: 'banana'}), (:P {id: 7, v: 'ap'}), (:P {id: 8, v: true}), (:P {id: 9}), (:P {id: 10, v: [1, 2]}), (:P {id: 11, v: date('2020-05-01')}), (:P {id: 12, v: -7}), (:Other {id: 13, v: 2})

query
MATCH (n:P) WHERE n.v > 1 RETURN n.id
----
2
3

query
MATCH (n:P) WHERE 1 <= n.v < 3 RETURN n.id
----
1
2

query
MATCH (n:P) WHERE n.v <= 2.5 RETURN n.id
----
1
2
12

query
MATCH (n:P) WHERE n.v >= 'b' RETURN n.id
----
6

query
MATCH (n:P) WHERE n.v STARTS WITH 'ap' RETURN n.id
----
5
7

query
MATCH (n:P) WHERE n.v IN [3, 'ap', 2.5, null] RETURN n.id
----
2
3
7

query
MATCH (n:P) WHERE n.v > 0.0/0.0 RETURN n.id
----

query
MATCH (n:P) WHERE n.v < date('2021-01-01') RETURN n.id
----
11

query
MATCH (n:P) WHERE n.v > false RETURN n.id
----
8

query ordered
MATCH (n:P) WHERE n.v > -10 RETURN n.id ORDER BY n.v DESC
----
3
2
1
12

statement ok
CREATE INDEX p_v IF NOT EXISTS FOR (n:P) ON (n.v)

statement ok
CALL db.awaitIndexes()

query
MATCH (n:P) WHERE n.v > 1 RETURN n.id
----
2
3

query
MATCH (n:P) WHERE 1 <= n.v < 3 RETURN n.id
----
1
2

query
MATCH (n:P) WHERE n.v <= 2.5 RETURN n.id
----
1
2
12

query
MATCH (n:P) WHERE n.v >= 'b' RETURN n.id
----
6

query
MATCH (n:P) WHERE n.v STARTS WITH 'ap' RETURN n.id
----
5
7

query
MATCH (n:P) WHERE n.v IN [3, 'ap', 2.5, null] RETURN n.id
----
2
3
7

query
MATCH (n:P) WHERE n.v > 0.0/0.0 RETURN n.id
----

query
MATCH (n:P) WHERE n.v < date('2021-01-01') RETURN n.id
----
11

query
MATCH (n:P) WHERE n.v > false RETURN n.id
----
8

query ordered
MATCH (n:P) WHERE n.v > -10 RETURN n.id ORDER BY n.v DESC
----
3
2
1
12

# Changes inside a transaction are seen by its own seeks.

statement ok
:begin

statement ok
MATCH (n:P {id: 1}) SET n.v = 100

statement ok
MATCH (n:P {id: 6}) REMOVE n:P

statement ok
CREATE (:P {id: 14, v: 'apricot'}), (:P {id: 15, v: 2})

query
MATCH (n:P) WHERE n.v > 1 RETURN n.id
----
1
2
3
15

query
MATCH (n:P) WHERE n.v >= 'b' RETURN n.id
----

query
MATCH (n:P) WHERE n.v STARTS WITH 'ap' RETURN n.id
----
5
7
14

statement ok
:rollback

query
MATCH (n:P) WHERE n.v > 1 RETURN n.id
----
2
3

query
MATCH (n:P) WHERE n.v STARTS WITH 'ap' RETURN n.id
----
5
7
