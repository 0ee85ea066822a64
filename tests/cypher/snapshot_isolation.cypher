# Snapshot isolation across connections: a reader in an explicit transaction keeps the snapshot
# it started with while a writer commits; its own later transaction sees the commit. Writes of
# an open transaction are invisible to others until commit, and gone after a rollback.

statement ok
CREATE (:Account {id: 1, balance: 100}), (:Account {id: 2, balance: 10})

connection reader
statement ok
:begin

connection reader
query
MATCH (a:Account {id: 1}) RETURN a.balance
----
100

connection writer
statement ok
MATCH (a:Account {id: 1}) SET a.balance = 50

connection writer
statement ok
CREATE (:Account {id: 3, balance: 0})

connection reader
query
MATCH (a:Account) RETURN a.id, a.balance
----
1 | 100
2 | 10

query
MATCH (a:Account) RETURN a.id, a.balance
----
1 | 50
2 | 10
3 | 0

connection reader
statement ok
:commit

connection reader
query
MATCH (a:Account {id: 1}) RETURN a.balance
----
50

# Uncommitted writes are visible to their own transaction only.
connection writer
statement ok
:begin

connection writer
statement ok
MATCH (a:Account {id: 2}) SET a.balance = 999

connection writer
query
MATCH (a:Account {id: 2}) RETURN a.balance
----
999

query
MATCH (a:Account {id: 2}) RETURN a.balance
----
10

connection writer
statement ok
:rollback

query
MATCH (a:Account) RETURN sum(a.balance)
----
60

# Two explicit transactions at once; the later commit sees the earlier one's data afterwards.
connection a
statement ok
:begin

connection b
statement ok
:begin

connection a
statement ok
CREATE (:Item {by: 'a'})

connection b
statement ok
CREATE (:Item {by: 'b'})

connection b
query
MATCH (i:Item) RETURN i.by
----
'b'

connection a
statement ok
:commit

connection b
statement ok
:commit

query
MATCH (i:Item) RETURN i.by
----
'a'
'b'
