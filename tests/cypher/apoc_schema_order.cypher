# apoc.schema.nodes lists node constraints, then node indexes, each group sorted by label (a
# stable sort), as APOC's Schemas.java does (read from its source; there is no APOC to run
# here).

statement ok
CREATE INDEX z_idx FOR (n:Zeta) ON (n.p)

statement ok
CREATE INDEX a_idx FOR (n:Alpha) ON (n.p)

statement ok
CREATE INDEX m_idx FOR (n:Mid) ON (n.p)

query ordered
CALL apoc.schema.nodes() YIELD name, label RETURN name, label
----
'a_idx' | 'Alpha'
'm_idx' | 'Mid'
'z_idx' | 'Zeta'
