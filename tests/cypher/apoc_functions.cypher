# APOC functions users call: apoc.text.*, apoc.convert.*Json, apoc.map.*, apoc.util digests,
# apoc.date.*, apoc.create.uuid. Expected values follow APOC's documented examples; digests
# are the standard test vectors (md5('1a') computed with Python's hashlib).

query
RETURN apoc.text.clean('Hello, World!') AS c, apoc.text.replace('a1b22', '[0-9]+', '-') AS r, apoc.text.split('a, b,c', ',\\s*') AS s, apoc.text.split('a,b,,', ',') AS t
----
'helloworld' | 'a-b-' | ['a', 'b', 'c'] | ['a', 'b']

query
RETURN apoc.text.regexGroups('tel: 123-456, 789-012', '(\\d+)-(\\d+)') AS g, apoc.text.regexGroups('none', 'x(y)?') AS e
----
[['123-456', '123', '456'], ['789-012', '789', '012']] | []

query
RETURN apoc.text.capitalize('neo4j') AS a, apoc.text.capitalizeAll('graph data base') AS b, apoc.text.camelCase('FOO_BAR') AS c, apoc.text.camelCase('Foo$$Bar') AS d, apoc.text.upperCamelCase('foo bar') AS e, apoc.text.snakeCase('fooBar') AS f, apoc.text.snakeCase('test Snake Case') AS g
----
'Neo4j' | 'Graph Data Base' | 'fooBar' | 'fooBar' | 'FooBar' | 'foo-bar' | 'test-snake-case'

query
RETURN apoc.text.distance('kitten', 'sitting') AS d, apoc.text.levenshteinDistance('', 'abc') AS e, apoc.text.levenshteinSimilarity('neo4j', 'neo4j') AS s, apoc.text.fuzzyMatch('Neo4j', 'Neo4j!') AS f, apoc.text.fuzzyMatch('ab', 'ac') AS g, apoc.text.hammingDistance('abc', 'abd') AS h
----
3 | 3 | 1.0 | true | false | 1

query
RETURN apoc.text.lpad('7', 3, '0') AS l, apoc.text.rpad('ab', 4) AS r, apoc.text.indexOf('banana', 'an', 2) AS i, apoc.text.join(['a', 'b'], '-') AS j, apoc.text.clean(null) AS n
----
'007' | 'ab  ' | 3 | 'a-b' | null

statement error Neo.ClientError.Statement.ArgumentError Invalid regular expression
RETURN apoc.text.replace('x', '(', '')

query
RETURN apoc.convert.toJson({a: 1, b: [true, null, 1.5], c: 'x'}) AS j, apoc.convert.toJson(date('2020-01-02')) AS d, apoc.convert.toJson(null) AS n
----
'{"a":1,"b":[true,null,1.5],"c":"x"}' | '"2020-01-02"' | 'null'

query
RETURN apoc.convert.fromJsonMap('{"x": {"y": [1, 2.5]}, "s": "t"}') AS m, apoc.convert.fromJsonMap('{"x": {"y": 1}}', '$.x') AS p, apoc.convert.fromJsonList('[1, "a", null, {"k": false}]') AS l, apoc.convert.fromJsonList('{"a": [[1], [2]]}', '$.a[1]') AS q
----
{s: 't', x: {y: [1, 2.5]}} | {y: 1} | [1, 'a', null, {k: false}] | [2]

statement error Neo.ClientError.Statement.ArgumentError not an object
RETURN apoc.convert.fromJsonMap('[1]')

statement error Neo.ClientError.Statement.ArgumentError not valid JSON
RETURN apoc.convert.fromJsonList('[1,')

query
RETURN apoc.map.setKey({a: 1}, 'b', 2) AS s, apoc.map.removeKey({a: 1, b: 2}, 'a') AS r, apoc.map.removeKeys({a: 1, b: 2, c: 3}, ['a', 'c']) AS rs, apoc.map.fromLists(['a', 'b'], [1, 2]) AS f
----
{a: 1, b: 2} | {b: 2} | {b: 2} | {a: 1, b: 2}

query
RETURN apoc.map.values({a: 1, b: 2}, ['b', 'a', 'z']) AS v, apoc.map.values({a: 1}, ['a', 'z'], true) AS vn, apoc.map.submap({a: 1, b: 2}, ['a']) AS s, apoc.map.mergeList([{a: 1}, {a: 2, b: 3}]) AS m
----
[2, 1] | [1, null] | {a: 1} | {a: 2, b: 3}

statement error Neo.ClientError.Statement.ArgumentError is not in the map
RETURN apoc.map.submap({a: 1}, ['z'])

query
RETURN apoc.util.md5(['abc']) AS m, apoc.util.md5([1, 'a']) AS m2, apoc.util.sha1(['a', 'bc']) AS s1, apoc.util.sha256(['abc']) AS s2
----
'900150983cd24fb0d6963f7d28e17f72' | 'efaa153b0f682ae5170a3184fa0df28c' | 'a9993e364706816aba3e25717850c26c9cd0d89d' | 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'

query
RETURN apoc.date.format(0) AS a, apoc.date.format(1577934245, 's', 'yyyy-MM-dd') AS b, apoc.date.format(1577934245123, 'ms', "yyyy-MM-dd'T'HH:mm:ss.SSSXXX", 'Europe/Stockholm') AS c, apoc.date.format(1577934245123, 'ms', 'EEE, d MMM yyyy') AS d
----
'1970-01-01 00:00:00' | '2020-01-02' | '2020-01-02T04:04:05.123+01:00' | 'Thu, 2 Jan 2020'

query
RETURN apoc.date.parse('2020-01-02 03:04:05', 's') AS a, apoc.date.parse('02/01/2020', 'ms', 'dd/MM/yyyy') AS b, apoc.date.parse('2020-01-02 01:00', 'h', 'yyyy-MM-dd HH:mm', '+01:00') AS c, apoc.date.parse(null) AS n
----
1577934245 | 1577923200000 | 438312 | null

query
RETURN apoc.date.currentTimestamp() > 1600000000000 AS now, apoc.date.convert(1, 'd', 'h') AS c, apoc.date.add(0, 'ms', 1, 'd') AS a, apoc.date.toISO8601(0) AS i, apoc.date.fromISO8601('1970-01-01T00:00:01Z') AS f
----
true | 24 | 86400000 | '1970-01-01T00:00:00.000Z' | 1000

statement error Neo.ClientError.Statement.ArgumentError does not match the format
RETURN apoc.date.parse('yesterday')

statement error Neo.ClientError.Statement.ArgumentError unsupported time unit
RETURN apoc.date.format(0, 'fortnights')

query
WITH apoc.create.uuid() AS u RETURN size(u) AS n, u =~ '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}' AS v4
----
36 | true
