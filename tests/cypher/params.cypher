# Parameters of every type a driver can send, returned unchanged, stored as properties and
# used in predicates.

params {i: 42, neg: -9223372036854775808, f: 2.5, s: 'it\'s', e: '', t: true, n: null}
query
RETURN $i, $neg, $f, $s, $e, $t, $n
----
42 | -9223372036854775808 | 2.5 | 'it\'s' | '' | true | null

params {l: [1, 'two', [3.0], {four: 4}], m: {b: 2, a: [true, null]}, empty: [], em: {}}
query
RETURN $l, $m, $empty, $em
----
[1, 'two', [3.0], {four: 4}] | {a: [true, null], b: 2} | [] | {}

params {d: date('2024-02-29'), dt: datetime('2024-02-29T12:30:00+01:00'), ldt: localdatetime('2024-02-29T12:30:00'), tm: time('12:30:00Z'), lt: localtime('12:30:01.5'), dur: duration('P1Y2M3DT4H5M6S')}
query
RETURN $d, $dt, $ldt, $tm, $lt, $dur
----
'2024-02-29' | '2024-02-29T12:30+01:00' | '2024-02-29T12:30' | '12:30Z' | '12:30:01.500' | 'P1Y2M3DT4H5M6S'

params {p: point({x: 1.5, y: -2.0}), g: point({longitude: 13.4, latitude: 52.5})}
query
RETURN $p.x, $p.y, $g.longitude, $g.latitude
----
1.5 | -2.0 | 13.4 | 52.5

params {props: {name: 'Ann', tags: ['a', 'b'], born: date('1990-05-01'), score: 0.5}}
statement ok
CREATE (p:Person) SET p = $props

params {name: 'Ann'}
query
MATCH (p:Person {name: $name}) RETURN p
----
(:Person {born: '1990-05-01', name: 'Ann', score: 0.5, tags: ['a', 'b']})

params {names: ['Bob', 'Ann'], min: 0.25}
query
MATCH (p:Person) WHERE p.name IN $names AND p.score > $min RETURN p.name
----
'Ann'

params {rows: [{k: 1}, {k: 2}, {k: 3}]}
query ordered
UNWIND $rows AS r RETURN r.k * 2 AS k ORDER BY k DESC
----
6
4
2

# A parameter map may span lines until its braces balance.
params {
  a: 1,
  b: {c: 'x'}
}
query
RETURN $a + 1, $b.c
----
2 | 'x'
