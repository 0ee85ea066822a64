# POINT indexes answer point.distance(p, c) < r / <= r and point.withinBBox(p, lo, hi) through
# their Z-order (NodeIndexSeekByRange / DirectedRelationshipIndexSeekByRange, Neo4j 5.26's
# operators); the predicate stays in the filter. Rows are Neo4j 5.26's answers on the same data:
# cartesian and WGS-84, 2D and 3D, across the dateline, near the poles, non-point values.
# One deliberate difference: Neo4j 5.26's POINT index misses a point stored exactly at a pole
# (its label scan finds it); Arbor answers as the scan does.

statement ok
CREATE POINT INDEX schema_point_p FOR (n:SCHEMA_PT) ON (n.p)

statement ok
CREATE (:SCHEMA_PT {k: 'c00', p: point({x: 0, y: 0})}), (:SCHEMA_PT {k: 'c11', p: point({x: 1, y: 1})}), (:SCHEMA_PT {k: 'c34', p: point({x: 3, y: 4})}), (:SCHEMA_PT {k: 'cm50', p: point({x: -5, y: 0})}), (:SCHEMA_PT {k: 'c1010', p: point({x: 10, y: 10})}), (:SCHEMA_PT {k: 'cbig', p: point({x: 1e7, y: -1e7})}), (:SCHEMA_PT {k: 'str', p: 'point'}), (:SCHEMA_PT {k: 'num', p: 5}), (:SCHEMA_PT {k: 'none'})

statement ok
CREATE (:SCHEMA_PT {k: 'east', p: point({longitude: 179.9, latitude: 0})}), (:SCHEMA_PT {k: 'west', p: point({longitude: -179.9, latitude: 0})}), (:SCHEMA_PT {k: 'nearpole', p: point({longitude: 0, latitude: 89.9})}), (:SCHEMA_PT {k: 'pole', p: point({longitude: 180, latitude: 90})}), (:SCHEMA_PT {k: 'farpole', p: point({longitude: -120, latitude: 89.95})}), (:SCHEMA_PT {k: 'origin', p: point({longitude: 0, latitude: 0})}), (:SCHEMA_PT {k: 'malmo', p: point({longitude: 13.0, latitude: 55.6})}), (:SCHEMA_PT {k: 'south', p: point({longitude: 10, latitude: -90})})

statement ok
CREATE (:SCHEMA_PT {k: 'c000', p: point({x: 0, y: 0, z: 0})}), (:SCHEMA_PT {k: 'c111', p: point({x: 1, y: 1, z: 1})}), (:SCHEMA_PT {k: 'c222', p: point({x: 2, y: 2, z: 2})}), (:SCHEMA_PT {k: 'h0', p: point({longitude: 0, latitude: 0, height: 0})}), (:SCHEMA_PT {k: 'h1000', p: point({longitude: 0, latitude: 0, height: 1000})})

query explain
MATCH (n:SCHEMA_PT) WHERE point.distance(n.p, point({x: 0, y: 0})) < 5 RETURN n.k
----
01)ProduceResults: n.k
02)--Projection
03)----Filter
04)------NodeIndexSeekByRange: :SCHEMA_PT(p)
05)--------Argument

query explain
MATCH (n:SCHEMA_PT) WHERE point.withinBBox(n.p, point({x: -1, y: -1}), point({x: 3, y: 4})) RETURN n.k
----
01)ProduceResults: n.k
02)--Projection
03)----Filter
04)------NodeIndexSeekByRange: :SCHEMA_PT(p)
05)--------Argument

query explain
MATCH (n:SCHEMA_PT) WHERE 10 > point.distance(point({x: 1, y: 2}), n.p) RETURN n.k
----
01)ProduceResults: n.k
02)--Projection
03)----Filter
04)------NodeIndexSeekByRange: :SCHEMA_PT(p)
05)--------Argument

# Without a POINT index on the property: a label scan, as in Neo4j.
query explain
MATCH (n:SCHEMA_PT) WHERE point.distance(n.q, point({x: 0, y: 0})) < 5 RETURN n.k
----
01)ProduceResults: n.k
02)--Projection
03)----Filter
04)------NodeByLabelScan: :SCHEMA_PT
05)--------Argument

query
MATCH (n:SCHEMA_PT) WHERE point.distance(n.p, point({x: 0, y: 0})) < 5 RETURN n.k ORDER BY n.k
----
'c00'
'c11'

query
MATCH (n:SCHEMA_PT) WHERE point.distance(n.p, point({x: 0, y: 0})) <= 5 RETURN n.k ORDER BY n.k
----
'c00'
'c11'
'c34'
'cm50'

query
MATCH (n:SCHEMA_PT) WHERE point.distance(point({x: 0, y: 0}), n.p) <= 5.0 RETURN n.k ORDER BY n.k
----
'c00'
'c11'
'c34'
'cm50'

query
MATCH (n:SCHEMA_PT) WHERE 1e9 > point.distance(n.p, point({x: 0, y: 0})) RETURN n.k ORDER BY n.k
----
'c00'
'c1010'
'c11'
'c34'
'cbig'
'cm50'

query
MATCH (n:SCHEMA_PT) WHERE point.distance(n.p, point({longitude: 180, latitude: 0})) < 20000 RETURN n.k ORDER BY n.k
----
'east'
'west'

# Neo4j's index answers farpole and nearpole only; its scan (and Arbor) also the pole itself.
query
MATCH (n:SCHEMA_PT) WHERE point.distance(n.p, point({longitude: 0, latitude: 89.99})) < 20000 RETURN n.k ORDER BY n.k
----
'farpole'
'nearpole'
'pole'

query
MATCH (n:SCHEMA_PT) WHERE point.distance(n.p, point({longitude: 12.5, latitude: 55.7})) < 100000 RETURN n.k, round(point.distance(n.p, point({longitude: 12.5, latitude: 55.7}))) AS d ORDER BY n.k
----
'malmo' | 33320.0

query
MATCH (n:SCHEMA_PT) WHERE point.distance(n.p, point({x: 0, y: 0, z: 0})) <= 1.8 RETURN n.k ORDER BY n.k
----
'c000'
'c111'

query
MATCH (n:SCHEMA_PT) WHERE point.distance(n.p, point({longitude: 0, latitude: 0, height: 0})) < 500 RETURN n.k ORDER BY n.k
----
'h0'

query
MATCH (n:SCHEMA_PT) WHERE point.withinBBox(n.p, point({x: -1, y: -1}), point({x: 3, y: 4})) RETURN n.k ORDER BY n.k
----
'c00'
'c11'
'c34'

# A WGS-84 box whose lower longitude is above its upper one crosses the dateline.
query
MATCH (n:SCHEMA_PT) WHERE point.withinBBox(n.p, point({longitude: 170, latitude: -10}), point({longitude: -170, latitude: 10})) RETURN n.k ORDER BY n.k
----
'east'
'west'

query
MATCH (n:SCHEMA_PT) WHERE point.withinBBox(n.p, point({longitude: -10, latitude: 50}), point({longitude: 20, latitude: 90})) RETURN n.k ORDER BY n.k
----
'malmo'
'nearpole'

query
MATCH (n:SCHEMA_PT) WHERE point.withinBBox(n.p, point({x: 0, y: 0, z: 0}), point({x: 1.5, y: 1.5, z: 1.5})) RETURN n.k ORDER BY n.k
----
'c000'
'c111'

# A cartesian box does not wrap: nothing.
query
MATCH (n:SCHEMA_PT) WHERE point.withinBBox(n.p, point({x: 5, y: 0}), point({x: -5, y: 10})) RETURN n.k ORDER BY n.k
----

query
RETURN point.withinBBox(point({x: 6, y: 1}), point({x: 5, y: 0}), point({x: -5, y: 10})) AS a, point.withinBBox(point({longitude: 175, latitude: 1}), point({longitude: 170, latitude: 0}), point({longitude: -170, latitude: 10})) AS b
----
false | true

query
MATCH (n:SCHEMA_PT) WHERE point.withinBBox(n.p, point({x: 0, y: 0}), point({longitude: 1, latitude: 1})) RETURN n.k ORDER BY n.k
----

query
MATCH (n:SCHEMA_PT) WHERE point.distance(n.p, null) < 5 RETURN n.k ORDER BY n.k
----

query
MATCH (n:SCHEMA_PT) WHERE point.distance(n.p, point({x: 0, y: 0})) < null RETURN n.k ORDER BY n.k
----

query
MATCH (n:SCHEMA_PT) WHERE point.distance(n.p, point({x: 0, y: 0})) < -1 RETURN n.k ORDER BY n.k
----

query
UNWIND [1, 5, 15] AS r MATCH (n:SCHEMA_PT) WHERE point.distance(n.p, point({x: 1, y: 1})) <= r RETURN r, count(n) AS c ORDER BY r
----
1 | 1
5 | 3
15 | 5

query
MATCH (n:SCHEMA_PT) WHERE point.distance(n.p, point({x: 0, y: 0})) < 'a' RETURN n.k ORDER BY n.k
----

query
MATCH (n:SCHEMA_PT) WHERE point.distance(n.p, 5) < 5 RETURN n.k ORDER BY n.k
----

# A transaction's own writes, moves and deletions are seen by its seeks.
query
MATCH (n:SCHEMA_PT {k: 'c34'}) SET n.p = point({x: 0.5, y: 0.5}) WITH count(*) AS c MATCH (m:SCHEMA_PT) WHERE point.distance(m.p, point({x: 0, y: 0})) < 1 RETURN m.k ORDER BY m.k
----
'c00'
'c34'

query
MATCH (n:SCHEMA_PT {k: 'c00'}) DETACH DELETE n WITH count(*) AS c MATCH (m:SCHEMA_PT) WHERE point.distance(m.p, point({x: 0, y: 0})) < 1 RETURN m.k ORDER BY m.k
----
'c34'

# After a restart the points live in the base: its Z-ordered ids answer the same.
restart

query
MATCH (n:SCHEMA_PT) WHERE point.distance(n.p, point({x: 0, y: 0})) <= 5 RETURN n.k ORDER BY n.k
----
'c11'
'c34'
'cm50'

query
MATCH (n:SCHEMA_PT) WHERE point.withinBBox(n.p, point({longitude: 170, latitude: -10}), point({longitude: -170, latitude: 10})) RETURN n.k ORDER BY n.k
----
'east'
'west'

statement ok
CREATE (:SCHEMA_PT {k: 'new', p: point({x: 2, y: 2})})

query
MATCH (n:SCHEMA_PT) WHERE point.withinBBox(n.p, point({x: -1, y: -1}), point({x: 3, y: 4})) RETURN n.k ORDER BY n.k
----
'c11'
'c34'
'new'

# Relationships: the same seeks on a relationship POINT index.
statement ok
CREATE POINT INDEX schema_point_r FOR ()-[r:SCHEMA_PR]-() ON (r.p)

statement ok
CREATE (a:SCHEMA_PQ {k: 'a'}), (b:SCHEMA_PQ {k: 'b'}), (a)-[:SCHEMA_PR {k: 'r1', p: point({x: 0, y: 0})}]->(b), (a)-[:SCHEMA_PR {k: 'r2', p: point({x: 3, y: 4})}]->(b), (b)-[:SCHEMA_PR {k: 'r3', p: point({longitude: -179.9, latitude: 0})}]->(a), (b)-[:SCHEMA_PR {k: 'r4', p: point({longitude: 179.9, latitude: 0})}]->(a)

query explain
MATCH ()-[r:SCHEMA_PR]->() WHERE point.distance(r.p, point({x: 0, y: 0})) < 5 RETURN r.k
----
01)ProduceResults: r.k
02)--Projection
03)----Filter
04)------DirectedRelationshipIndexSeekByRange: :SCHEMA_PR(p)
05)--------Argument

query explain
MATCH ()-[r:SCHEMA_PR]-() WHERE point.withinBBox(r.p, point({x: 0, y: 0}), point({x: 1, y: 1})) RETURN r.k
----
01)ProduceResults: r.k
02)--Projection
03)----Filter
04)------UndirectedRelationshipIndexSeekByRange: :SCHEMA_PR(p)
05)--------Argument

query
MATCH ()-[r:SCHEMA_PR]->() WHERE point.distance(r.p, point({x: 0, y: 0})) < 5 RETURN r.k ORDER BY r.k
----
'r1'

query
MATCH ()-[r:SCHEMA_PR]-() WHERE point.distance(r.p, point({x: 0, y: 0})) <= 5 RETURN r.k ORDER BY r.k
----
'r1'
'r1'
'r2'
'r2'

query
MATCH ()-[r:SCHEMA_PR]->() WHERE point.withinBBox(r.p, point({longitude: 179, latitude: -1}), point({longitude: -179, latitude: 1})) RETURN r.k ORDER BY r.k
----
'r3'
'r4'

# indexConfig: given settings replace Neo4j's defaults; SHOW INDEXES lists every setting.
statement ok
CREATE POINT INDEX schema_point_cfg FOR (n:SCHEMA_PC) ON (n.q) OPTIONS {indexConfig: {`spatial.cartesian.min`: [-100.0, -100.0], `spatial.cartesian.max`: [100, 100]}, indexProvider: 'point-1.0'}

statement ok
CREATE POINT INDEX schema_point_cfg3 FOR ()-[r:SCHEMA_PCR]-() ON (r.q) OPTIONS {indexConfig: {`spatial.wgs-84-3d.max`: [170.0, 80.0, 1000.0]}}

query
SHOW POINT INDEXES YIELD name, options, createStatement WHERE name STARTS WITH 'schema_point_cfg' RETURN name, options, createStatement
----
'schema_point_cfg' | {indexConfig: {`spatial.cartesian-3d.max`: [1000000.0, 1000000.0, 1000000.0], `spatial.cartesian-3d.min`: [-1000000.0, -1000000.0, -1000000.0], `spatial.cartesian.max`: [100.0, 100.0], `spatial.cartesian.min`: [-100.0, -100.0], `spatial.wgs-84-3d.max`: [180.0, 90.0, 1000000.0], `spatial.wgs-84-3d.min`: [-180.0, -90.0, -1000000.0], `spatial.wgs-84.max`: [180.0, 90.0], `spatial.wgs-84.min`: [-180.0, -90.0]}, indexProvider: 'point-1.0'} | 'CREATE POINT INDEX `schema_point_cfg` FOR (n:`SCHEMA_PC`) ON (n.`q`) OPTIONS {indexConfig: {`spatial.cartesian-3d.max`: [1000000.0, 1000000.0, 1000000.0],`spatial.cartesian-3d.min`: [-1000000.0, -1000000.0, -1000000.0],`spatial.cartesian.max`: [100.0, 100.0],`spatial.cartesian.min`: [-100.0, -100.0],`spatial.wgs-84-3d.max`: [180.0, 90.0, 1000000.0],`spatial.wgs-84-3d.min`: [-180.0, -90.0, -1000000.0],`spatial.wgs-84.max`: [180.0, 90.0],`spatial.wgs-84.min`: [-180.0, -90.0]}}'
'schema_point_cfg3' | {indexConfig: {`spatial.cartesian-3d.max`: [1000000.0, 1000000.0, 1000000.0], `spatial.cartesian-3d.min`: [-1000000.0, -1000000.0, -1000000.0], `spatial.cartesian.max`: [1000000.0, 1000000.0], `spatial.cartesian.min`: [-1000000.0, -1000000.0], `spatial.wgs-84-3d.max`: [170.0, 80.0, 1000.0], `spatial.wgs-84-3d.min`: [-180.0, -90.0, -1000000.0], `spatial.wgs-84.max`: [180.0, 90.0], `spatial.wgs-84.min`: [-180.0, -90.0]}, indexProvider: 'point-1.0'} | 'CREATE POINT INDEX `schema_point_cfg3` FOR ()-[r:`SCHEMA_PCR`]-() ON (r.`q`) OPTIONS {indexConfig: {`spatial.cartesian-3d.max`: [1000000.0, 1000000.0, 1000000.0],`spatial.cartesian-3d.min`: [-1000000.0, -1000000.0, -1000000.0],`spatial.cartesian.max`: [1000000.0, 1000000.0],`spatial.cartesian.min`: [-1000000.0, -1000000.0],`spatial.wgs-84-3d.max`: [170.0, 80.0, 1000.0],`spatial.wgs-84-3d.min`: [-180.0, -90.0, -1000000.0],`spatial.wgs-84.max`: [180.0, 90.0],`spatial.wgs-84.min`: [-180.0, -90.0]}}'

query
SHOW POINT INDEXES YIELD name, options WHERE name = 'schema_point_p' RETURN options.indexConfig.`spatial.wgs-84.min` AS lo, options.indexConfig.`spatial.cartesian-3d.max` AS hi
----
[-180.0, -90.0] | [1000000.0, 1000000.0, 1000000.0]

# A point outside the configured bounds is still indexed and found.
statement ok
CREATE (:SCHEMA_PC {q: point({x: 500, y: 500})})

query
MATCH (n:SCHEMA_PC) WHERE point.distance(n.q, point({x: 499, y: 499})) < 2 RETURN n.q.x AS x
----
500.0

statement error Neo.DatabaseError.Statement.ExecutionFailed Invalid spatial index settings.
CREATE POINT INDEX schema_point_e1 FOR (n:SCHEMA_PC) ON (n.a) OPTIONS {indexConfig: {`spatial.cartesian.min`: [-100.0]}}

statement error Neo.DatabaseError.Statement.ExecutionFailed Invalid spatial index settings.
CREATE POINT INDEX schema_point_e2 FOR (n:SCHEMA_PC) ON (n.b) OPTIONS {indexConfig: {`spatial.cartesian.min`: [100.0, 100.0], `spatial.cartesian.max`: [-100.0, -100.0]}}

statement error Neo.DatabaseError.Statement.ExecutionFailed Invalid index config key 'spatial.foo.min', it was not recognized as an index setting.
CREATE POINT INDEX schema_point_e3 FOR (n:SCHEMA_PC) ON (n.c) OPTIONS {indexConfig: {`spatial.foo.min`: [1.0, 1.0]}}

statement error Neo.ClientError.General.InvalidArguments Could not create point index with specified index config '{spatial.cartesian.min: "x"}'. Expected a map from String to Double[].
CREATE POINT INDEX schema_point_e5 FOR (n:SCHEMA_PC) ON (n.e) OPTIONS {indexConfig: {`spatial.cartesian.min`: 'x'}}

statement error Neo.ClientError.General.InvalidArguments Could not create point index with specified index provider 'range-1.0'.
CREATE POINT INDEX schema_point_e7 FOR (n:SCHEMA_PC) ON (n.g) OPTIONS {indexProvider: 'range-1.0'}

statement error Neo.ClientError.Statement.SyntaxError Failed to create point node index: Invalid option provided, valid options are `indexProvider` and `indexConfig`.
CREATE POINT INDEX schema_point_e8 FOR (n:SCHEMA_PC) ON (n.h) OPTIONS {foo: 1}

restart

query
SHOW POINT INDEXES YIELD name, options WHERE name = 'schema_point_cfg' RETURN options.indexConfig.`spatial.cartesian.max` AS hi, options.indexConfig.`spatial.cartesian.min` AS lo
----
[100.0, 100.0] | [-100.0, -100.0]

query
SHOW POINT INDEXES YIELD name, options WHERE name = 'schema_point_cfg3' RETURN options.indexConfig.`spatial.wgs-84-3d.max` AS hi
----
[170.0, 80.0, 1000.0]
