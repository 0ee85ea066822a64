#!/bin/bash
# Instructions per query of mgBench Q1-Q16 in process (callgrind), as BENCHMARKS.md's
# "Instructions per query and per row" tables report them.
# Usage: scripts/profile-scan-loop.sh SCAN_LOOP_BIN STORE OUT.tsv [Q numbers...]
#   SCAN_LOOP_BIN: target/release/examples/scan_loop (cargo build --release -p arbor-engine --example scan_loop)
#   STORE: an `arbor import` of the Pokec-small CSVs plus `CREATE INDEX FOR (u:User) ON (u.id)`
# Appends "Q<TAB>rows per query<TAB>instructions per query" to OUT.tsv. Per query = (callgrind total of
# N runs - of 1 run) / (N - 1): N = 21 for Q1-Q4; for Q5-Q16, N = 11, averaged over the ids 17, 4242 and
# 9001 inlined into the query. The callgrind files stay in $CG_DIR (default: a new temporary directory).
set -e
BIN=$1; STORE=$2; OUT=$3; shift 3
CG=${CG_DIR:-$(mktemp -d)}
QS=${@:-"1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16"}
declare -A T
T[1]='MATCH (n:User) RETURN n.age, COUNT(*)'
T[2]='MATCH (n) RETURN count(n), count(n.age)'
T[3]='MATCH (n:User) WHERE n.age >= 18 RETURN n.age, COUNT(*)'
T[4]='MATCH (n) RETURN min(n.age), max(n.age), avg(n.age)'
T[5]='MATCH (s:User {id: $id})-->(n:User) RETURN n.id'
T[6]='MATCH (s:User {id: $id})-->(n:User) WHERE n.age >= 18 RETURN n.id'
T[7]='MATCH (s:User {id: $id})-->()-->(n:User) RETURN DISTINCT n.id'
T[8]='MATCH (s:User {id: $id})-->()-->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id'
T[9]='MATCH (s:User {id: $id})-->()-->()-->(n:User) RETURN DISTINCT n.id'
T[10]='MATCH (s:User {id: $id})-->()-->()-->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id'
T[11]='MATCH (s:User {id: $id})-->()-->()-->()-->(n:User) RETURN DISTINCT n.id'
T[12]='MATCH (s:User {id: $id})-->()-->()-->()-->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id'
T[13]='MATCH (s:User {id: $id})-[*1..2]->(n:User) RETURN DISTINCT n.id'
T[14]='MATCH (s:User {id: $id})-[*1..2]->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id'
T[15]='MATCH (s:User {id: $id})-[*1..2]->(n:User) RETURN DISTINCT n.id, n'
T[16]='MATCH (s:User {id: $id})-[*1..2]->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id, n'
tot() { valgrind --tool=callgrind --callgrind-out-file=$1 "${@:2}" >/dev/null 2>&1; grep '^totals:' $1 | awk '{print $2}'; }
for q in $QS; do
  t=${T[$q]}
  if [[ $t == *'$id'* ]]; then
    args=("${t//\$id/17}" "${t//\$id/4242}" "${t//\$id/9001}"); k=3; hi=11
  else
    args=("$t"); k=1; hi=21
  fi
  a=$(tot $CG/cg.q$q.lo $BIN $STORE 1 "${args[@]}")
  b=$(tot $CG/cg.q$q.hi $BIN $STORE $hi "${args[@]}")
  per=$(( (b - a) / (hi - 1) / k ))
  rows=$($BIN $STORE 1 "${args[@]}" 2>/dev/null | awk '{s+=$3} END {print s/NR}')
  echo -e "$q\t$rows\t$per" | tee -a $OUT
done
