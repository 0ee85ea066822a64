# Neo4j 5.26 fidelity (branch fidelity5): answers taken from Neo4j 5.26.30.
#
# dbms.components() reports the version of the Neo4j it is compared with; dbms.listConfig
# lists Neo4j's settings under their names, descriptions and defaults (the values of the
# settings Arbor honours, such as the listen address, are its own and differ per server).

query
CALL dbms.components() YIELD name, versions, edition RETURN name, versions, edition
----
'Neo4j Kernel' | ['5.26.30'] | 'community'

query
CALL dbms.listConfig('server.bolt') YIELD name RETURN count(*) AS n
----
25

query ordered
CALL dbms.listConfig('server.bolt') YIELD name, dynamic, defaultValue WHERE name STARTS WITH 'server.bolt.t' RETURN name, dynamic, defaultValue
----
'server.bolt.telemetry.enabled' | false | 'false'
'server.bolt.thread_pool_keep_alive' | false | '5m'
'server.bolt.thread_pool_max_size' | false | '400'
'server.bolt.thread_pool_min_size' | false | '5'
'server.bolt.thread_starvation_clear_window_duration' | false | '10m'
'server.bolt.thread_starvation_warn_threshold' | false | '2'
'server.bolt.thread_starvation_warn_window_duration' | false | '10m'
'server.bolt.tls_level' | false | 'DISABLED'
'server.bolt.traffic_accounting_check_period' | false | '5m'
'server.bolt.traffic_accounting_clear_duration' | false | '10m'
'server.bolt.traffic_accounting_incoming_threshold_mbps' | false | '950'
'server.bolt.traffic_accounting_outgoing_threshold_mbps' | false | '950'

query
CALL dbms.listConfig('server.bolt.listen_address') YIELD name, description, dynamic, defaultValue, validValues RETURN name, description, dynamic, defaultValue, validValues
----
'server.bolt.listen_address' | 'Address the connector should bind to.' | false | ':7687' | 'A socket address in the format of `hostname:port`, `hostname`, or `:port`. If missing, it is acquired from server.default_listen_address.'

query ordered
CALL dbms.listConfig('db.transaction') YIELD name, value, dynamic, defaultValue, startupValue, explicitlySet RETURN name, value, dynamic, defaultValue, startupValue, explicitlySet
----
'db.transaction.bookmark_ready_timeout' | '30s' | true | '30s' | '30s' | false
'db.transaction.concurrent.maximum' | '1000' | true | '1000' | '1000' | false
'db.transaction.monitor.check.interval' | '2s' | false | '2s' | '2s' | false
'db.transaction.sampling.percentage' | '5' | true | '5' | '5' | false
'db.transaction.timeout' | '0s' | true | '0s' | '0s' | false
'db.transaction.tracing.level' | 'DISABLED' | true | 'DISABLED' | 'DISABLED' | false

query ordered
CALL dbms.clientConfig() YIELD name RETURN name
----
'browser.post_connect_cmd'
'browser.remote_content_hostname_whitelist'
'client.allow_telemetry'
'dbms.security.auth_enabled'

# datetime from an epoch: the instant (UTC unless a zone is given), then any other field set
# on its wall clock; a sub-second field replaces the whole fraction.

query
RETURN toString(datetime({epochSeconds: 0})) AS a, toString(datetime({epochSeconds: 1, nanosecond: 5})) AS b, toString(datetime({epochSeconds: -1, nanosecond: 999999999})) AS c
----
'1970-01-01T00:00:00Z' | '1970-01-01T00:00:01.000000005Z' | '1969-12-31T23:59:59.999999999Z'

query
RETURN toString(datetime({epochMillis: 1234})) AS a, toString(datetime({epochMillis: -1})) AS b, toString(datetime({epochMillis: 1, nanosecond: 5})) AS c, toString(datetime({epochMillis: 1, millisecond: 5, nanosecond: 7})) AS d
----
'1970-01-01T00:00:01.234Z' | '1969-12-31T23:59:59.999Z' | '1970-01-01T00:00:00.000000005Z' | '1970-01-01T00:00:00.005000007Z'

query
RETURN toString(datetime({epochSeconds: 0, timezone: 'Europe/Paris'})) AS a, toString(datetime({epochSeconds: 0, timezone: '+02:00'})) AS b, toString(datetime({epochSeconds: 1, timezone: 'Europe/Paris', hour: 5})) AS c
----
'1970-01-01T01:00:00+01:00[Europe/Paris]' | '1970-01-01T02:00:00+02:00' | '1970-01-01T05:00:01+01:00[Europe/Paris]'

query
RETURN toString(datetime({epochSeconds: 1, year: 2020})) AS a, toString(datetime({epochSeconds: 1, month: 2})) AS b, toString(datetime({epochSeconds: 1, week: 3})) AS c, toString(datetime({epochseconds: 1, ordinalDay: 3})) AS d
----
'2020-01-01T00:00:01Z' | '1970-02-01T00:00:01Z' | '1970-01-15T00:00:01Z' | '1970-01-03T00:00:01Z'

query
RETURN datetime({epochSeconds: 0}).epochSeconds AS s, datetime({epochMillis: 1500}).epochMillis AS m
----
0 | 1500

statement error Neo.ClientError.Statement.ArgumentError epochMillis cannot be selected together with epochSeconds.
RETURN datetime({epochSeconds: 1, epochMillis: 5}) AS d

statement error Neo.ClientError.Statement.ArgumentError epochSeconds cannot be selected together with date or time.
RETURN datetime({epochSeconds: 1, date: date('2020-01-01')}) AS d

statement error Neo.ClientError.Statement.ArgumentError Cannot construct date time from: Double(1.500000e+00)
RETURN datetime({epochSeconds: 1.5}) AS d

statement error Neo.ClientError.Statement.ArgumentError Cannot construct date time from: String("1")
RETURN datetime({epochSeconds: '1'}) AS d

statement error Neo.ClientError.Statement.ArgumentError Cannot construct date time from: NO_VALUE
RETURN datetime({epochSeconds: null}) AS d

statement error Neo.ClientError.Statement.TypeError Not supported: epochSeconds
RETURN localdatetime({epochSeconds: 0}) AS d

statement error Neo.ClientError.Statement.TypeError Not supported: epochSeconds
RETURN date({epochSeconds: 0}) AS d

# Dates over Java's whole year range (-999,999,999 to 999,999,999), past chrono's.

query
RETURN toString(date({year: 262144, month: 1, day: 1})) AS a, toString(date({year: 999999999, month: 12, day: 31})) AS b, toString(date({year: -999999999, month: 1, day: 1})) AS c
----
'+262144-01-01' | '+999999999-12-31' | '-999999999-01-01'

query
RETURN toString(date('+999999999-12-31')) AS d, toString(date('-999999999-01-01')) AS e, toString(date('+99999-01-01')) AS f
----
'+999999999-12-31' | '-999999999-01-01' | '+99999-01-01'

query
RETURN toString(date('+300000-06-15') + duration({days: 20})) AS a, toString(date('+300000-06-15') + duration({months: 20, days: 3})) AS b, toString(date('-300000-06-15') - duration({years: 1000})) AS c, toString(date('+300000-06-15') + duration({hours: 49})) AS d
----
'+300000-07-05' | '+300002-02-18' | '-301000-06-15' | '+300000-06-17'

query
RETURN toString(date({year: 999999999, month: 12, day: 31}) + duration({days: -400000000000})) AS d
----
'-95162803-03-15'

query
RETURN toString(date({year: 300000, week: 10, dayOfWeek: 2})) AS a, toString(date({year: 300000, ordinalDay: 60})) AS b, toString(date({year: 300000, quarter: 3, dayOfQuarter: 5})) AS c
----
'+300000-03-07' | '+300000-02-29' | '+300000-07-05'

query
RETURN toString(date.truncate('millennium', date('+300123-06-15'))) AS d, toString(date.truncate('week', date('+300123-06-15'))) AS w, toString(date.truncate('weekYear', date('+300123-01-01'))) AS y
----
'+300000-01-01' | '+300123-06-14' | '+300121-12-29'

query
RETURN toString(date({date: date('+300000-06-15'), day: 1})) AS a, toString(date({date: date('+300000-06-15'), year: 2020})) AS b, toString(date({date: date('2020-06-15'), year: 300000})) AS c
----
'+300000-06-01' | '2020-06-15' | '+300000-06-15'

query
RETURN date('+300000-06-15').year AS y, date('+300000-06-15').weekYear AS wy, date('-300000-01-01').weekYear AS wy2, date('-300000-01-01').week AS w2, date('+300000-06-15').dayOfWeek AS a, date('+300000-06-15').week AS b, date('+300000-06-15').ordinalDay AS c, date('+300000-06-15').quarter AS q
----
300000 | 300000 | -300001 | 52 | 4 | 24 | 167 | 2

query
RETURN date('+300000-06-15') = date('+300000-06-15') AS e, date('+300000-06-15') < date('+300000-06-16') AS l, date('-300000-06-15') < date('-300000-06-16') AS m, date('+300000-06-15') > date('2020-01-01') AS n
----
true | true | true | true

query ordered
UNWIND [date('+300000-06-15'), date('2020-01-01'), date('-300000-01-01')] AS d RETURN toString(d) AS s ORDER BY d
----
'-300000-01-01'
'2020-01-01'
'+300000-06-15'

query
RETURN duration.between(date('2020-01-01'), date('+300000-06-15')) AS a, duration.between(date('+300000-06-15'), date('2020-01-01')) AS b, duration.inDays(date('2020-01-01'), date('+300000-06-15')) AS c, duration.inMonths(date('2020-01-31'), date('+300000-06-15')) AS d, duration.inSeconds(date('2020-01-01'), date('+300000-06-15')) AS e
----
'P297980Y5M14D' | 'P-297980Y-5M-14D' | 'P108835126D' | 'P297980Y4M' | 'PT2612043024H'

statement error Neo.ClientError.Statement.ArithmeticError Invalid value for Year (valid values -999999999 - 999999999): 1000000000
RETURN date('+999999999-12-31') + duration({days: 1}) AS d

statement error Neo.ClientError.Statement.ArithmeticError Invalid value for Year (valid values -999999999 - 999999999): 1000000000
RETURN date('+999999999-12-31') + duration({months: 1}) AS d

statement error Neo.ClientError.Statement.ArithmeticError Invalid value for EpochDay (valid values -365243219162 - 365241780471): -365243219163
RETURN date('-999999999-01-01') - duration({days: 1}) AS d

statement error Neo.ClientError.Statement.ArgumentError Invalid value for Year (valid values -999999999 - 999999999): 1000000000
RETURN date({year: 1000000000, month: 1, day: 1}) AS d

statement error Neo.ClientError.Statement.SyntaxError Text cannot be parsed to a Date
RETURN date('+1000000000-01-01') AS d

statement ok
CREATE (:FIDELITY5_Day {d: date('+300000-06-15')}), (:FIDELITY5_Day {d: date('-999999999-01-01')}), (:FIDELITY5_Day {d: date('2020-01-01')})

query ordered
MATCH (n:FIDELITY5_Day) RETURN toString(n.d) AS d ORDER BY n.d
----
'-999999999-01-01'
'2020-01-01'
'+300000-06-15'

statement ok
CREATE INDEX fidelity5_day FOR (n:FIDELITY5_Day) ON (n.d)

query
MATCH (n:FIDELITY5_Day) WHERE n.d > date('+200000-01-01') RETURN toString(n.d) AS d
----
'+300000-06-15'

query
MATCH (n:FIDELITY5_Day) WHERE n.d = date('-999999999-01-01') RETURN toString(n.d) AS d
----
'-999999999-01-01'

# keys() of a `.*` map projection lists the projected map's or entity's keys first, then the
# named items it lacks; results still send the named items first.

query
WITH {b: 2, a: 1} AS row RETURN keys(row {.*, x: 1}) AS a, keys(row {x: 1, .*}) AS b, keys(row {.*, x: 1, a: 5}) AS c
----
['a', 'b', 'x'] | ['a', 'b', 'x'] | ['a', 'b', 'x']

query
WITH {b: 2, a: 1, c: 3} AS row, 7 AS x RETURN keys(row {.*, x}) AS a, keys(row {.*, b: 9}) AS b, keys(row {z: 1, .*, y: 2}) AS c, keys(row {.c, .a}) AS d
----
['a', 'b', 'c', 'x'] | ['a', 'b', 'c'] | ['a', 'b', 'c', 'y', 'z'] | ['a', 'c']

query
WITH {b: 2, a: 1} AS row WITH row {.*, x: 1} AS m RETURN keys(m) AS k, [x IN [m] | keys(x)] AS l
----
['a', 'b', 'x'] | [['a', 'b', 'x']]

# ANY and SHORTEST k take the shortest paths per end node, and the rows of all end nodes come
# out by length, as Neo4j's level-by-level search emits them. (Between paths of equal length
# Neo4j follows its store's relationship order, which depends on the store's history: two runs
# of this graph on one Neo4j returned different ones. Arbor takes the first the depth-first
# expansion meets, in creation order.)

statement ok
CREATE (a:FIDELITY5_P {n: 'a'}), (b:FIDELITY5_P {n: 'b'}), (c:FIDELITY5_P {n: 'c'}), (d:FIDELITY5_P {n: 'd'}), (a)-[:FIDELITY5_R {n: 'ab'}]->(b), (a)-[:FIDELITY5_R {n: 'ac'}]->(c), (b)-[:FIDELITY5_R {n: 'bd'}]->(d), (c)-[:FIDELITY5_R {n: 'cd'}]->(d), (a)-[:FIDELITY5_R {n: 'ad1'}]->(b)

query ordered
MATCH p = ANY (a:FIDELITY5_P {n: 'a'})-[:FIDELITY5_R]->+(x:FIDELITY5_P) RETURN length(p) AS l
----
1
1
2

query
MATCH p = ANY (a:FIDELITY5_P {n: 'a'})-[:FIDELITY5_R]->+(x:FIDELITY5_P) RETURN x.n AS x, length(p) AS l
----
'b' | 1
'c' | 1
'd' | 2

query
MATCH p = ANY 2 (a:FIDELITY5_P {n: 'a'})-[:FIDELITY5_R]->+(d:FIDELITY5_P {n: 'd'}) RETURN length(p) AS l
----
2
2

query
MATCH p = SHORTEST 1 (a:FIDELITY5_P {n: 'a'})-[:FIDELITY5_R]->+(d:FIDELITY5_P {n: 'd'}) RETURN length(p) AS l
----
2
