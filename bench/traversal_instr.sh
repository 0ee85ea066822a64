#!/usr/bin/env bash
# Instructions per warm traversal run, per mode, for one `arbor-bench` binary: the user-space
# instructions (`perf stat -e instructions:u`) of `--runs 25` minus those of `--runs 5`, divided
# by 20, so building/opening the tree cancels out. Load-insensitive, unlike the wall clock: use it
# to A/B two builds (each on a tree it built itself).
# Usage: bench/traversal_instr.sh ARBOR_BENCH_BIN DATA_DIR [TAG]
set -euo pipefail
BIN=${1:?usage: traversal_instr.sh ARBOR_BENCH_BIN DATA_DIR [TAG]}
DATA=${2:?usage: traversal_instr.sh ARBOR_BENCH_BIN DATA_DIR [TAG]}
TAG=${3:-$(basename "$BIN")}
mkdir -p "$DATA"
cd "$DATA"
"$BIN" traversal --warmup 0 --runs 1 --cold-runs 0 --modes depth-first > build.log 2>&1
instr() {
  perf stat -x, -e instructions:u "$BIN" traversal --warmup 0 --runs "$2" --cold-runs 0 --modes "$1" \
    2>&1 >/dev/null | grep instructions | cut -d, -f1
}
for m in depth-first breadth-first cypher cypher-distinct; do
  a=$(instr "$m" 5)
  b=$(instr "$m" 25)
  echo "$TAG $m $(((b - a) / 20))"
done
