# Pruning expansions (VarLengthExpand(Pruning)): a chain of anonymous hops or a var-length
# pattern under DISTINCT yields distinct end nodes without enumerating every trail. Each query
# comes twice: as written (rewritten plan) and with a path variable (the plain plan, which
# enumerates trails); both must give the hand-checked answer.
# Graph: a cycle 1->2->3->1, a self-loop on 2, two parallel relationships 1->4, 4->5, 3->5.

statement ok
CREATE (a:User {id: 1, age: 30}), (b:User {id: 2, age: 20}), (c:User {id: 3, age: 10}), (d:User {id: 4, age: 40}), (e:User {id: 5, age: 15}), (a)-[:Friend]->(b), (b)-[:Friend]->(c), (c)-[:Friend]->(a), (b)-[:Friend]->(b), (a)-[:Friend]->(d), (a)-[:Friend]->(d), (d)-[:Friend]->(e), (c)-[:Friend]->(e)

# 3-hop trails from 1: 1-2-3-1, 1-2-3-5, 1-2-2-3 (the self-loop once only).
query
MATCH (s:User {id: 1})-->()-->()-->(n:User) RETURN DISTINCT n.id
----
1
3
5

query
MATCH p = (s:User {id: 1})-->()-->()-->(n:User) RETURN DISTINCT n.id
----
1
3
5

# 4-hop trails from 1 end at 4 (both parallel relationships), 1 and 5 (via the self-loop).
query
MATCH (s:User {id: 1})-->()-->()-->()-->(n:User) RETURN DISTINCT n.id
----
1
4
5

query
MATCH p = (s:User {id: 1})-->()-->()-->()-->(n:User) RETURN DISTINCT n.id
----
1
4
5

query
MATCH (s:User {id: 1})-->()-->()-->()-->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id
----
1
4

query
MATCH p = (s:User {id: 1})-->()-->()-->()-->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id
----
1
4

# The self-loop cannot be taken twice: 2-2-2 is no trail.
query
MATCH (s:User {id: 2})-->()-->(n:User) RETURN DISTINCT n.id
----
1
3
5

query
MATCH p = (s:User {id: 2})-->()-->(n:User) RETURN DISTINCT n.id
----
1
3
5

query
MATCH (s:User {id: 1})-[*1..2]->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id
----
2
4

query
MATCH p = (s:User {id: 1})-[*1..2]->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id
----
2
4

# The start is an end only through a cycle short enough (3-1-2-3 has 3 relationships).
query
MATCH (s:User {id: 3})-[*1..2]->(n:User) RETURN DISTINCT n.id
----
1
2
4
5

query
MATCH (s:User {id: 3})-[*1..3]->(n:User) RETURN DISTINCT n.id
----
1
2
3
4
5

query
MATCH p = (s:User {id: 3})-[*1..3]->(n:User) RETURN DISTINCT n.id
----
1
2
3
4
5

query
MATCH (s:User {id: 2})-[*1..1]->(n:User) RETURN DISTINCT n.id
----
2
3

# Undirected: 5-4-5 and 5-3-5 would reuse a relationship.
query
MATCH (s:User {id: 5})-[*2..2]-(n:User) RETURN DISTINCT n.id
----
1
2

query
MATCH p = (s:User {id: 5})-[*2..2]-(n:User) RETURN DISTINCT n.id
----
1
2

query
MATCH (s:User {id: 4})<-[*]-(n:User) RETURN DISTINCT n.id
----
1
2
3

query
MATCH (a:User)-[*1..2]->(b) RETURN count(DISTINCT b)
----
5

query
MATCH p = (a:User)-[*1..2]->(b) RETURN count(DISTINCT b)
----
5
