# count(*) / count(n) by label and by (label, type, label) from the count store must equal
# counting by scanning, also after label changes, deletions and inside a transaction.

statement ok
CREATE (a:A {id: 1}), (b:B {id: 2}), (c:A:B {id: 3}), (d {id: 4}), (a)-[:T]->(b), (a)-[:T]->(c), (c)-[:T]->(b), (b)-[:U]->(a), (d)-[:T]->(d), (c)-[:T]->(c)

query
MATCH (n:A) RETURN count(n)
----
2

query
MATCH (n) RETURN count(*)
----
4

query
MATCH (n:Nope) RETURN count(*)
----
0

query
MATCH (:A)-[:T]->() RETURN count(*)
----
4

query
MATCH ()-[:T]->(:B) RETURN count(*)
----
4

query
MATCH (x)-[r:T]->(:A) RETURN count(r)
----
2

query
MATCH (:B)<-[:T]-() RETURN count(*)
----
4

query
MATCH ()-[r]->() RETURN count(r)
----
6

query
MATCH ()-[:U]->(:A) RETURN count(*)
----
1

query
MATCH (:A)-[:T]->(:B) RETURN count(*)
----
4

statement ok
MATCH (n {id: 4}) SET n:A

statement ok
MATCH (n {id: 3}) REMOVE n:A

query
MATCH (:A)-[:T]->() RETURN count(*)
----
3

query
MATCH ()-[:T]->(:A) RETURN count(*)
----
1

statement ok
MATCH (n {id: 1}) DETACH DELETE n

query
MATCH ()-[:T]->(:B) RETURN count(*)
----
2

query
MATCH (n:A) RETURN count(*)
----
1

statement ok
:begin

statement ok
MATCH (n {id: 2}) SET n:A

statement ok
MATCH (a {id: 2}), (b {id: 3}) CREATE (a)-[:T]->(b)

query
MATCH (:A)-[:T]->() RETURN count(*)
----
2

query
MATCH (n:A) RETURN count(n)
----
2

statement ok
:rollback

query
MATCH (:A)-[:T]->() RETURN count(*)
----
1
