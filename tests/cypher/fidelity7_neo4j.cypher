# Neo4j 5.26 fidelity (branch fidelity7): codes, messages and answers taken from Neo4j 5.26.30.

# --- Scoped subqueries: a body may not declare a new variable under an imported name ---

statement error Neo.ClientError.Statement.SyntaxError The variable `x` is shadowing an imported variable with the same name and needs to be renamed (line 1, column 34 (offset: 33))
WITH 1 AS x CALL (x) { WITH 2 AS x RETURN x AS y } RETURN y

statement error Neo.ClientError.Statement.SyntaxError The variable `x` is shadowing an imported variable with the same name and needs to be renamed (line 1, column 38 (offset: 37))
WITH 1 AS x CALL (x) { UNWIND [2] AS x RETURN x AS y } RETURN y

statement error Neo.ClientError.Statement.SyntaxError The variable `x` is shadowing an imported variable with the same name and needs to be renamed (line 1, column 38 (offset: 37))
WITH 1 AS x CALL (x) { WITH x + 1 AS x RETURN x AS y } RETURN y

statement error Neo.ClientError.Statement.SyntaxError The variable `x` is shadowing an imported variable with the same name and needs to be renamed (line 1, column 41 (offset: 40))
WITH 1 AS x CALL (x) { WITH count(*) AS x RETURN x AS y } RETURN y

statement error Neo.ClientError.Statement.SyntaxError The variable `x` is shadowing an imported variable with the same name and needs to be renamed (line 1, column 34 (offset: 33))
WITH 1 AS x CALL (*) { WITH 2 AS x RETURN x AS y } RETURN y

statement error Neo.ClientError.Statement.SyntaxError The variable `x` is shadowing an imported variable with the same name and needs to be renamed (line 1, column 38 (offset: 37))
WITH 1 AS x CALL (*) { UNWIND [2] AS x RETURN x AS y } RETURN y

# Even after the imported variable went out of scope, and in a later UNION branch.
statement error Neo.ClientError.Statement.SyntaxError The variable `x` is shadowing an imported variable with the same name and needs to be renamed (line 1, column 46 (offset: 45))
WITH 1 AS x CALL (x) { WITH x AS z WITH z AS x RETURN x AS y } RETURN y

statement error Neo.ClientError.Statement.SyntaxError The variable `x` is shadowing an imported variable with the same name and needs to be renamed (line 1, column 54 (offset: 53))
WITH 1 AS x CALL (x) { RETURN 2 AS y UNION WITH 3 AS x RETURN x AS y } RETURN y

statement error Neo.ClientError.Statement.SyntaxError The variable `x` is shadowing an imported variable with the same name and needs to be renamed (line 1, column 56 (offset: 55))
WITH 1 AS x CALL (x) { CALL db.labels() YIELD label AS x RETURN 1 AS y } RETURN y

# A nested scoped call checks its own imports.
statement error Neo.ClientError.Statement.SyntaxError The variable `x` is shadowing an imported variable with the same name and needs to be renamed (line 1, column 45 (offset: 44))
WITH 1 AS x CALL (x) { CALL (x) { WITH 2 AS x RETURN x AS q } RETURN q AS y } RETURN y

# Returning a name the outer query has is reported first.
statement error Neo.ClientError.Statement.SyntaxError Variable `x` already declared in outer scope
WITH 1 AS x CALL (x) { WITH 2 AS x RETURN 1 AS x } RETURN x

statement error Neo.ClientError.Statement.SyntaxError Variable `x` not defined (line 1, column 7 (offset: 6))
CALL (x) { RETURN 1 AS y } RETURN y

# Passing the variable on, importing nothing, the old CALL form, nested unscoped calls and
# FOREACH are allowed.
query
WITH 1 AS x CALL (x) { WITH x AS x RETURN x AS y } RETURN y
----
1

query
WITH 1 AS x CALL (x) { WITH x ORDER BY x WITH x AS x RETURN x AS y } RETURN y
----
1

query
WITH 1 AS x CALL () { WITH 2 AS x RETURN x AS y } RETURN y
----
2

query
WITH 1 AS x CALL { WITH x WITH 2 AS x RETURN x AS y } RETURN y
----
2

query
WITH 1 AS x CALL (x) { CALL () { WITH 2 AS x RETURN x AS q } RETURN q AS y } RETURN y
----
2

query
WITH 1 AS x CALL (x) { CALL { WITH 2 AS x RETURN x AS q } RETURN q AS y } RETURN y
----
2

query
WITH 1 AS x CALL (x) { RETURN [x IN [5] | x] AS y } RETURN y
----
[5]

# --- Slices and substrings: positions must fit a Java int (a database error in Neo4j) ---

statement error Neo.DatabaseError.Statement.ExecutionFailed Expected an integer between -2147483648 and 2147483647, but got: 9223372036854775807
RETURN [1, 2, 3][0..9223372036854775807] AS r

statement error Neo.DatabaseError.Statement.ExecutionFailed Expected an integer between -2147483648 and 2147483647, but got: -9223372036854775807
RETURN [1, 2, 3][-9223372036854775807..] AS r

statement error Neo.DatabaseError.Statement.ExecutionFailed Expected an integer between -2147483648 and 2147483647, but got: -9223372036854775808
RETURN [1, 2, 3][1..-9223372036854775807 - 1] AS r

query
RETURN [1, 2, 3][9223372036854775807] AS a, [1, 2, 3][-9223372036854775807 - 1] AS b, [1, 2, 3][-5..5] AS c, [1, 2, 3][2147483647..] AS d
----
null | null | [1, 2, 3] | []

statement error Neo.DatabaseError.Statement.ExecutionFailed Invalid input for length value in function 'substring()': Expected an integer between -2147483648 and 2147483647, but got: 9223372036854775807
RETURN substring('abc', 1, 9223372036854775807) AS r

statement error Neo.DatabaseError.Statement.ExecutionFailed Invalid input for start value in function 'substring()': Expected an integer between -2147483648 and 2147483647, but got: 9223372036854775807
RETURN substring('abc', 9223372036854775807, 9223372036854775807) AS r

statement error Neo.DatabaseError.Statement.ExecutionFailed Cannot handle negative start index nor negative length
RETURN substring('abc', 1, -1) AS r

statement error Neo.DatabaseError.Statement.ExecutionFailed Cannot handle negative start index nor negative length
RETURN substring('abc', -1) AS r

statement error Neo.DatabaseError.Statement.ExecutionFailed Cannot handle negative start index nor negative length
RETURN left('abc', -1) AS r

statement error Neo.DatabaseError.Statement.ExecutionFailed negative length
RETURN right('abc', -1) AS r

query
RETURN substring('abc', 5) AS a, substring('abc', 0, 0) AS b, left('abc', 9223372036854775807) AS c, right('abc', 9223372036854775807) AS d, left('abc', null) AS e, right(null, -1) AS f, substring('abc', null) AS g
----
'' | '' | 'abc' | 'abc' | null | null | null

# --- Temporal construction: what Neo4j refuses and how it normalises ---

statement error Neo.ClientError.Statement.ArgumentError Invalid date 'FEBRUARY 30'
RETURN date({year: 2020, month: 2, day: 30}) AS d

statement error Neo.ClientError.Statement.ArgumentError Invalid date 'February 29' as '2021' is not a leap year
RETURN date({year: 2021, month: 2, day: 29}) AS d

statement error Neo.ClientError.Statement.ArgumentError Invalid value for DayOfMonth (valid values 1 - 28/31): 32
RETURN date({year: 2020, month: 1, day: 32}) AS d

statement error Neo.ClientError.Statement.ArgumentError Invalid value for MonthOfYear (valid values 1 - 12): 13
RETURN date({year: 2020, month: 13}) AS d

statement error Neo.ClientError.Statement.ArgumentError Invalid value for WeekOfWeekBasedYear (valid values 1 - 52/53): 54
RETURN date({year: 2020, week: 54}) AS d

statement error Neo.ClientError.Statement.ArgumentError Invalid value for DayOfWeek (valid values 1 - 7): 8
RETURN date({year: 2020, week: 1, dayOfWeek: 8}) AS d

statement error Neo.ClientError.Statement.ArgumentError Invalid value for DayOfYear (valid values 1 - 365/366): 367
RETURN date({year: 2020, ordinalDay: 367}) AS d

statement error Neo.ClientError.Statement.ArgumentError Invalid date 'DayOfYear 366' as '2021' is not a leap year
RETURN date({year: 2021, ordinalDay: 366}) AS d

statement error Neo.ClientError.Statement.ArgumentError Invalid value for QuarterOfYear (valid values 1 - 4): 5
RETURN date({year: 2020, quarter: 5}) AS d

statement error Neo.ClientError.Statement.ArgumentError Invalid value for DayOfQuarter (valid values 1 - 90/92): 93
RETURN date({year: 2020, quarter: 1, dayOfQuarter: 93}) AS d

statement error Neo.ClientError.Statement.ArgumentError day cannot be specified without month
RETURN date({year: 2020, day: 3}) AS d

statement error Neo.ClientError.Statement.ArgumentError dayOfWeek cannot be specified without week
RETURN date({year: 2020, dayOfWeek: 3}) AS d

statement error Neo.ClientError.Statement.ArgumentError year must be specified
RETURN date({month: 3}) AS d

statement error Neo.ClientError.Statement.TypeError Cannot assign month to week date.
RETURN date({year: 2020, month: 3, dayOfWeek: 2}) AS d

statement error Neo.ClientError.Statement.TypeError Cannot assign ordinalDay to calendar date.
RETURN date({year: 2020, ordinalDay: 3, month: 2}) AS d

statement error Neo.ClientError.Statement.TypeError Cannot assign quarter to calendar date.
RETURN date({year: 2020, quarter: 1, month: 2}) AS d

# Week 53 of a 52-week year and a day past a quarter's end run on into what follows.
query
RETURN toString(date({year: 2020, week: 53})) AS a, toString(date({year: 2021, week: 53})) AS b, toString(date({year: 2021, week: 53, dayOfWeek: 7})) AS c, toString(date({year: 2020, quarter: 1, dayOfQuarter: 92})) AS d, toString(date({year: 2021, quarter: 1, dayOfQuarter: 91})) AS e, toString(date({year: 2020, quarter: 4, dayOfQuarter: 92})) AS f
----
'2020-12-28' | '2022-01-03' | '2022-01-09' | '2020-04-01' | '2021-04-01' | '2020-12-31'

query
RETURN toString(date({date: date('2021-03-31'), month: 2})) AS a, toString(date({date: date('2020-02-29'), year: 2021})) AS b
----
'2021-02-28' | '2021-02-28'

statement error Neo.ClientError.Statement.ArgumentError Invalid value for HourOfDay (valid values 0 - 23): 24
RETURN time({hour: 24}) AS t

statement error Neo.ClientError.Statement.ArgumentError Invalid value for MinuteOfHour (valid values 0 - 59): 60
RETURN time({hour: 23, minute: 60}) AS t

statement error Neo.ClientError.Statement.ArgumentError Invalid value for SecondOfMinute (valid values 0 - 59): 60
RETURN localtime({hour: 1, minute: 0, second: 60}) AS t

statement error Neo.ClientError.Statement.ArgumentError Invalid value for HourOfDay (valid values 0 - 23): 24
RETURN datetime({year: 2020, month: 1, day: 1, hour: 24}) AS t

statement error Neo.ClientError.Statement.ArgumentError hour must be specified
RETURN localtime({minute: 3}) AS t

statement error Neo.ClientError.Statement.ArgumentError second cannot be specified without minute
RETURN time({hour: 23, second: 30}) AS t

statement error Neo.ClientError.Statement.ArgumentError subsecond cannot be specified without minute
RETURN localtime({hour: 1, nanosecond: 1000000000}) AS t

statement error Neo.ClientError.Statement.ArgumentError subsecond cannot be specified without second
RETURN localtime({hour: 1, minute: 0, millisecond: 5}) AS t

statement error Neo.ClientError.Statement.ArgumentError Invalid value for Nanosecond: 1000000000
RETURN localtime({hour: 1, minute: 0, second: 0, nanosecond: 1000000000}) AS t

statement error Neo.ClientError.Statement.ArgumentError Invalid value for Millisecond: 1000
RETURN localtime({hour: 1, minute: 0, second: 0, millisecond: 1000}) AS t

statement error Neo.ClientError.Statement.ArgumentError Invalid value for Microsecond: 1000
RETURN localtime({hour: 1, minute: 0, second: 0, millisecond: 5, microsecond: 1000}) AS t

statement error Neo.ClientError.Statement.ArgumentError Invalid value for Nanosecond: 1000
RETURN localtime({hour: 1, minute: 0, second: 0, microsecond: 5, nanosecond: 1000}) AS t

statement error Neo.ClientError.Statement.ArgumentError Invalid value for Nanosecond: -1
RETURN localtime({hour: 1, minute: 0, second: 0, nanosecond: -1}) AS t

query
RETURN toString(localtime({hour: 1, minute: 0, second: 0, millisecond: 5, microsecond: 999})) AS a, toString(localtime({hour: 1, minute: 0, second: 0, millisecond: 5, nanosecond: 999999})) AS b, toString(localtime({hour: 1, minute: 0, second: 0, microsecond: 1500})) AS c
----
'01:00:00.005999' | '01:00:00.005999999' | '01:00:00.0015'

# Over a base time a sub-second field replaces the whole fraction.
query
RETURN toString(localtime({time: localtime('10:00:00.123456789'), millisecond: 5})) AS a, toString(localtime({time: localtime('10:00:00.123456789'), microsecond: 5})) AS b, toString(localtime({time: localtime('10:00:00.123456789'), millisecond: 5, nanosecond: 7})) AS c, toString(localtime({time: localtime('10:00:00.123456789'), microsecond: 1500, nanosecond: 3})) AS d, toString(localtime({time: localtime('10:00:00.123456789'), minute: 7})) AS e
----
'10:00:00.005' | '10:00:00.000005' | '10:00:00.005000007' | '10:00:00.001500003' | '10:07:00.123456789'

statement error Neo.ClientError.Statement.ArgumentError Invalid value for HourOfDay (valid values 0 - 23): 24
RETURN localtime({time: localtime('10:00:00.123456789'), hour: 24}) AS t

statement error Neo.ClientError.Statement.ArgumentError Invalid value for Nanosecond: 1000000000
RETURN datetime({epochSeconds: 1, nanosecond: 1000000000}) AS t

statement error Neo.ClientError.Statement.ArgumentError Invalid value for Nanosecond: -1
RETURN datetime({epochSeconds: 1, nanosecond: -1}) AS t

query
RETURN toString(datetime({epochSeconds: 1, nanosecond: 999999999})) AS a, toString(datetime({epochMillis: 1, nanosecond: 999999})) AS b, toString(datetime({epochSeconds: 1, millisecond: 5})) AS c
----
'1970-01-01T00:00:01.999999999Z' | '1970-01-01T00:00:00.000999999Z' | '1970-01-01T00:00:01.005Z'

# Text that is no temporal is a syntax error; a week the year lacks an argument error.
statement error Neo.ClientError.Statement.SyntaxError Text cannot be parsed to a Date
RETURN date('abc') AS d

statement error Neo.ClientError.Statement.SyntaxError
RETURN date('2020-13-01') AS d

statement error Neo.ClientError.Statement.SyntaxError
RETURN date('2020-02-30') AS d

statement error Neo.ClientError.Statement.SyntaxError
RETURN localtime('25:00') AS t

statement error Neo.ClientError.Statement.SyntaxError
RETURN localdatetime('2020-01-01T24:00') AS t

statement error Neo.ClientError.Statement.SyntaxError Text cannot be parsed to a Duration
RETURN duration('abc') AS d

statement error Neo.ClientError.Statement.ArgumentError Year 2021 does not contain 53 weeks.
RETURN date('2021-W53') AS d

# Fractions cascade down to smaller units (months as 30.436875 days).
query
RETURN toString(duration({days: 1.5})) AS a, toString(duration({months: 1.5})) AS b, toString(duration({years: 1.5})) AS c, toString(duration({weeks: 1.5})) AS d, toString(duration({days: 1.5, hours: 1.5})) AS e, toString(duration('P1Y1.5M')) AS g
----
'P1DT12H' | 'P1M15DT5H14M33S' | 'P1Y6M' | 'P10DT12H' | 'P1DT13H30M' | 'P1Y1M15DT5H14M33S'

# --- Integer overflow: where Neo4j errors, the same code ---

statement error Neo.ClientError.Statement.ArithmeticError long overflow
RETURN 9223372036854775807 + 1 AS r

statement error Neo.ClientError.Statement.ArithmeticError long overflow
RETURN -9223372036854775807 - 2 AS r

statement error Neo.ClientError.Statement.ArithmeticError long overflow
RETURN -(-9223372036854775807 - 1) AS r

statement error Neo.ClientError.Statement.TypeError integer, -9223372036854775809, is too large
RETURN toInteger('-9223372036854775809') AS r

query
RETURN toInteger(9223372036854775808.0) AS a, toInteger('-12.7') AS b, toInteger(2 ^ 63) AS c
----
9223372036854775807 | -12 | 9223372036854775807
