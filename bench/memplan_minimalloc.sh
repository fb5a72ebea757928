#!/usr/bin/env bash
# Runs the 11 MiniMalloc benchmarks (testdata/minimalloc) and prints a Markdown
# table for docs/benchmarks.md:
#   - greedy peak (`npuplan memplan --greedy-only`);
#   - search peak after TIME_LIMIT seconds (`npuplan memplan --time-limit`): on
#     D and J (optimum open) the search runs to the limit, so this column
#     depends on machine speed and load;
#   - time to reach the best-known peak: user CPU and wall time of the gtest
#     case Challenging/MinimallocBenchmarkTest.ReachesBestKnownPeak/<file>,
#     which stops at the best-known peak (node-budgeted, so deterministic).
# Usage: bench/memplan_minimalloc.sh [BUILD_DIR] [TIME_LIMIT_S]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
BIN=$BUILD/bin/npuplan
TESTS=$BUILD/npuplan/memory/memory_tests
LIMIT=${2:-10}
declare -A BEST=([A]=1048576 [B]=1048576 [C]=1039360 [D]=1031168 [E]=1048576 [F]=1048576
                 [G]=1048576 [H]=1048576 [I]=1048576 [J]=1036288 [K]=1048576)
field() { sed -n "s/^$1: \([0-9.]*\).*/\1/p" <<<"$2"; }
echo "| file | lower bound | best-known | greedy peak | ratio | peak at ${LIMIT} s | ratio | to best-known: nodes | CPU (s) | wall (s) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for f in A B C D E F G H I J K; do
  in=testdata/minimalloc/$f.1048576.csv
  g=$("$BIN" memplan "$in" --greedy-only)
  s=$("$BIN" memplan "$in" --time-limit "$LIMIT")
  gp=$(field peak "$g"); sp=$(field peak "$s"); lb=$(field lower_bound "$s")
  out=$( { /usr/bin/time -f "time %U %e" "$TESTS" \
           --gtest_filter="Challenging/MinimallocBenchmarkTest.ReachesBestKnownPeak/$f"; } 2>&1)
  grep -q "PASSED.*1 test" <<<"$out" || { echo "$f: gtest case failed" >&2; exit 1; }
  nodes=$(sed -n "s/^minimalloc .*nodes \([0-9]*\).*/\1/p" <<<"$out")
  t=$(sed -n "s/^time //p" <<<"$out")
  printf "| %s | %s | %s | %s | %.3f | %s | %.3f | %s | %s | %s |\n" "$f" "$lb" "${BEST[$f]}" \
    "$gp" "$(bc -l <<<"$gp/${BEST[$f]}")" "$sp" "$(bc -l <<<"$sp/${BEST[$f]}")" "$nodes" \
    ${t% *} ${t#* }
done
