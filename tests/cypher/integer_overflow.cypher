# Integer and duration overflow, as Neo4j 5.26.30 answers (codes and values taken from it).

statement error Neo.ClientError.Statement.TypeError integer, 9223372036854775808, is too large
RETURN toInteger('9223372036854775808') AS x

statement error Neo.ClientError.Statement.TypeError
RETURN toInteger('-9223372036854775809') AS x

statement error Neo.ClientError.Statement.TypeError
RETURN toInteger('1e19') AS x

statement error Neo.ClientError.Statement.TypeError
RETURN toInteger('1e400') AS x

query
RETURN toInteger('9223372036854775807') AS a, toInteger('12.7') AS b, toInteger('1e3') AS c, toInteger('+5') AS d
----
9223372036854775807 | 12 | 1000 | 5

# No blanks, no hex, NaN and Infinity are null.
query
RETURN toInteger(' 12') AS a, toInteger('12 ') AS b, toInteger('0x1F') AS c, toInteger('NaN') AS d, toInteger('Infinity') AS e
----
null | null | null | null | null

# A float converts as Java casts it: saturating, NaN is 0.
query
RETURN toInteger(1e19) AS a, toInteger(-1e19) AS b, toInteger(9.3e18) AS c, toInteger(0.0 / 0.0) AS d
----
9223372036854775807 | -9223372036854775808 | 9223372036854775807 | 0

query
RETURN toIntegerOrNull('9223372036854775808') AS a, toIntegerOrNull(1e19) AS b, toIntegerList(['9223372036854775808', '1']) AS c
----
null | 9223372036854775807 | [null, 1]

statement error Neo.ClientError.Statement.ArithmeticError long overflow
WITH -9223372036854775807 - 1 AS m RETURN -m AS x

statement error Neo.ClientError.Statement.ArithmeticError long overflow
RETURN 9223372036854775807 * 2 AS x

statement error Neo.ClientError.Statement.SyntaxError
RETURN 9223372036854775808 AS x

# sum() goes on as a float past the integer range (no error in Neo4j).
query
UNWIND [9223372036854775807, 1] AS v RETURN toString(sum(v)) AS x
----
'9.223372036854776E18'

query
UNWIND [9223372036854775807, 1, -5] AS v RETURN toString(sum(v)) AS x
----
'9.223372036854776E18'

# (Neo4j 5.26 answers [-9223372036854775807] for range(-MAX, MAX, MAX): its element count
# overflows. Arbor gives the three elements the definition asks for; not pinned here.)
query
RETURN range(9223372036854775806, 9223372036854775807, 2) AS a, size(range(0, 9223372036854775807, 4611686018427387904)) AS b
----
[9223372036854775806] | 2

# A duration whose length in average seconds leaves the integer range is refused (the Python
# driver could not decode it).
statement error Neo.ClientError.Statement.ArgumentError Invalid value for duration, will cause overflow
RETURN duration({days: 9223372036854775807}) AS x

statement error Neo.ClientError.Statement.ArgumentError Invalid value for duration, will cause overflow
RETURN duration({months: 9223372036854775807}) AS x

statement error Neo.ClientError.Statement.ArgumentError Invalid value for duration, will cause overflow
RETURN duration('P9223372036854775807D') AS x

query
RETURN duration({days: 106751991167300}) AS a, duration({seconds: 9223372036854775807}) AS b
----
'P106751991167300D' | 'PT2562047788015215H30M7S'

statement error Neo.ClientError.Statement.ArgumentError
RETURN date({year: 1000000000}) AS x
