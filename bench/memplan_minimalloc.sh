#!/usr/bin/env bash
# Runs `npuplan memplan` on the 11 MiniMalloc benchmarks (testdata/minimalloc)
# greedy-only and with search, and prints a Markdown table for
# docs/benchmarks.md: peak / best-known and wall time per file.
# Usage: bench/memplan_minimalloc.sh [BUILD_DIR] [TIME_LIMIT_S]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-build}/bin/npuplan
LIMIT=${2:-10}
declare -A BEST=([A]=1048576 [B]=1048576 [C]=1039360 [D]=1031168 [E]=1048576 [F]=1048576
                 [G]=1048576 [H]=1048576 [I]=1048576 [J]=1036288 [K]=1048576)
field() { sed -n "s/^$1: \([0-9.]*\).*/\1/p" <<<"$2"; }
echo "| file | lower bound | best-known | greedy peak | ratio | search peak | ratio | search time (s) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for f in A B C D E F G H I J K; do
  in=testdata/minimalloc/$f.1048576.csv
  g=$("$BIN" memplan "$in" --greedy-only)
  s=$("$BIN" memplan "$in" --time-limit "$LIMIT")
  gp=$(field peak "$g"); sp=$(field peak "$s"); lb=$(field lower_bound "$s"); t=$(field time "$s")
  printf "| %s | %s | %s | %s | %.3f | %s | %.3f | %s |\n" "$f" "$lb" "${BEST[$f]}" "$gp" \
    "$(bc -l <<<"$gp/${BEST[$f]}")" "$sp" "$(bc -l <<<"$sp/${BEST[$f]}")" "$t"
done
