#!/usr/bin/env bash
# Instructions per query and per result row for the 23 mgBench queries (callgrind), in process:
# `arbor shell --data STORE` runs each query with K parameter sets (ids 17, 4242, 9001, of
# mgBench's kinds), once (file 1) and twice (file 2, the same K again), each run against a fresh
# copy of STORE (the writes Q20-Q22 change it).
#   cold = (file 1 - a baseline run of open + `RETURN 1`) / K: planning once, first reads of
#          the store's pages, execution, the shell's plain-text output of the rows;
#   hot  = (file 2 - file 1) / K: the plan cached, the pages read, as in a warmed-up server.
#
# Usage: [ONLY="9 7 13"] scripts/profile-mgbench.sh ARBOR_BIN STORE [OUT.tsv]
#   ONLY: measure just these query numbers (default: all 23).
#   STORE: a Pokec data directory with the `User(id)` index, e.g.
#     arbor import --data /tmp/p --nodes=users.csv --relationships=friends.csv
#     arbor shell --data /tmp/p "CREATE INDEX user_id FOR (n:User) ON (n.id)"
#   (the CSVs from `arbor bench mgbench`'s Pokec generator, or ../shared/bench/gen_pokec.py).
# Output: one line per query, tab-separated: q, name, rows per query, cold instructions per
# query, hot instructions per query, hot instructions per row (rows = 0: "-").
# Not part of CI (47 callgrind runs: 10-20 minutes on a loaded 2-core machine).
set -euo pipefail

BIN=${1:?usage: profile-mgbench.sh ARBOR_BIN STORE [OUT.tsv]}
STORE=${2:?usage: profile-mgbench.sh ARBOR_BIN STORE [OUT.tsv]}
OUT=${3:-/dev/stdout}
IDS=(17 4242 9001)
K=${#IDS[@]}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/profile-mgbench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# q|name|kind|query ($id, or $from/$to for kind "pair"; kind "x10": the id times 10 + 1,000,000).
QUERIES=$(cat <<'EOF'
1|aggregate|none|MATCH (n:User) RETURN n.age, COUNT(*)
2|aggregate_count|none|MATCH (n) RETURN count(n), count(n.age)
3|aggregate_with_filter|none|MATCH (n:User) WHERE n.age >= 18 RETURN n.age, COUNT(*)
4|min_max_avg|none|MATCH (n) RETURN min(n.age), max(n.age), avg(n.age)
5|expansion_1|id|MATCH (s:User {id: $id})-->(n:User) RETURN n.id
6|expansion_1_with_filter|id|MATCH (s:User {id: $id})-->(n:User) WHERE n.age >= 18 RETURN n.id
7|expansion_2|id|MATCH (s:User {id: $id})-->()-->(n:User) RETURN DISTINCT n.id
8|expansion_2_with_filter|id|MATCH (s:User {id: $id})-->()-->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id
9|expansion_3|id|MATCH (s:User {id: $id})-->()-->()-->(n:User) RETURN DISTINCT n.id
10|expansion_3_with_filter|id|MATCH (s:User {id: $id})-->()-->()-->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id
11|expansion_4|id|MATCH (s:User {id: $id})-->()-->()-->()-->(n:User) RETURN DISTINCT n.id
12|expansion_4_with_filter|id|MATCH (s:User {id: $id})-->()-->()-->()-->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id
13|neighbours_2|id|MATCH (s:User {id: $id})-[*1..2]->(n:User) RETURN DISTINCT n.id
14|neighbours_2_with_filter|id|MATCH (s:User {id: $id})-[*1..2]->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id
15|neighbours_2_with_data|id|MATCH (s:User {id: $id})-[*1..2]->(n:User) RETURN DISTINCT n.id, n
16|neighbours_2_with_data_and_filter|id|MATCH (s:User {id: $id})-[*1..2]->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id, n
17|pattern_cycle|id|MATCH (n:User {id: $id})-[e1]->(m)-[e2]->(n) RETURN e1, m, e2
18|pattern_long|id|MATCH (n1:User {id: $id})-[e1]->(n2)-[e2]->(n3)-[e3]->(n4)<-[e4]-(n5) RETURN n5 LIMIT 1
19|pattern_short|id|MATCH (n:User {id: $id})-[e]->(m) RETURN m LIMIT 1
20|single_edge_write|pair|MATCH (n:User {id: $from}), (m:User {id: $to}) WITH n, m CREATE (n)-[e:Temp]->(m) RETURN e
21|single_vertex_write|x10|CREATE (n:UserTemp {id : $id}) RETURN n
22|single_vertex_property_update|id|MATCH (n:User {id: $id}) SET n.property = -1
23|single_vertex_read|id|MATCH (n:User {id : $id}) RETURN n
EOF
)

# Runs the shell under callgrind on script $1 against a fresh copy of the store; prints
# "instructions output_lines".
measure() {
    rm -rf "$WORK/store" && cp -r "$STORE" "$WORK/store"
    valgrind --tool=callgrind --dump-instr=no --collect-jumps=no \
        --callgrind-out-file="$WORK/cg.out" "$BIN" shell --format plain --data "$WORK/store" \
        <"$1" >"$WORK/out.txt" 2>"$WORK/vg.log"
    local ir
    ir=$(grep -o 'refs: *[0-9,]*' "$WORK/vg.log" | tr -dc '0-9')
    echo "$ir $(wc -l <"$WORK/out.txt")"
}

echo 'RETURN 1;' >"$WORK/base.cypher"
read -r BASE _ < <(measure "$WORK/base.cypher")

{
    printf 'q\tname\trows/query\tcold instr/query\thot instr/query\thot instr/row\n'
    while IFS='|' read -r q name kind text; do
        if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $q "* ]]; then continue; fi
        : >"$WORK/q.cypher"
        for i in "${!IDS[@]}"; do
            id=${IDS[$i]}
            case $kind in
                id) echo ":param id => $id" ;;
                x10) echo ":param id => $((id * 10 + 1000000))" ;;
                pair) echo ":param from => $id"
                      echo ":param to => ${IDS[$(((i + 1) % K))]}" ;;
            esac
            echo "$text;"
        done >>"$WORK/q.cypher"
        cat "$WORK/q.cypher" "$WORK/q.cypher" >"$WORK/q2.cypher"
        read -r ir1 lines < <(measure "$WORK/q.cypher")
        read -r ir2 _ < <(measure "$WORK/q2.cypher")
        # Plain output: one header line per statement that returns columns.
        if [ "$q" = 22 ]; then headers=0; else headers=$K; fi
        rows=$(((lines - headers) / K))
        cold=$(((ir1 - BASE) / K))
        hot=$(((ir2 - ir1) / K))
        if [ "$rows" -gt 0 ]; then per_row=$((hot / rows)); else per_row=-; fi
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$q" "$name" "$rows" "$cold" "$hot" "$per_row"
    done <<<"$QUERIES"
} >"$OUT"
