#!/usr/bin/env bash
# npuplan memplan against MiniMalloc itself, same machine, same run
# (docs/benchmarks.md, "Memory planning"; issue 22 item 2).
#
#   bench/memplan_vs_minimalloc.sh MINIMALLOC_BINARY [BUILD_DIR] [RUNS]
#
# MiniMalloc is not part of npuplan: build it yourself from
# https://github.com/google/minimalloc (its README) and pass the binary.
# For each of the 11 files in testdata/minimalloc at its best-known peak
# capacity, both tools answer "does it fit in C?" RUNS times (default 5),
# alternating; the table gives the median CPU seconds (user + sys) of each,
# their ratio, and whether each answer was a valid plan within C (checked by
# `npuplan memplan --verify` for both outputs).
set -euo pipefail
MM=${1:?usage: memplan_vs_minimalloc.sh MINIMALLOC_BINARY [BUILD_DIR] [RUNS]}
BUILD=${2:-build}
RUNS=${3:-5}
cd "$(dirname "$0")/.."
BIN=$BUILD/bin/npuplan
[[ -x "$MM" ]] || { echo "memplan_vs_minimalloc.sh: no MiniMalloc binary at $MM" >&2; exit 2; }
[[ -x "$BIN" ]] || { echo "memplan_vs_minimalloc.sh: no npuplan binary at $BIN" >&2; exit 2; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/mm_vs.XXXXXX"); trap 'rm -rf "$dir"' EXIT
declare -A BEST=([A]=1048576 [B]=1048576 [C]=1039360 [D]=1031168 [E]=1048576 [F]=1048576
                 [G]=1048576 [H]=1048576 [I]=1048576 [J]=1036288 [K]=1048576)
cpu() {  # command... -> CPU seconds (user + sys, microsecond resolution) on stdout
  # posix_spawn + wait4: the rusage of exactly that process. Python's
  # subprocess forks a copy of the interpreter first, and that child's fork,
  # close-fds and exec teardown would be charged to the tool and swamp the
  # runs that take a few milliseconds.
  python3 - "$@" <<'PY' || echo fail
import os, sys
null = os.open(os.devnull, os.O_WRONLY)
pid = os.posix_spawnp(sys.argv[1], sys.argv[1:], os.environ,
                      file_actions=[(os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)])
_, status, ru = os.wait4(pid, 0)
if os.waitstatus_to_exitcode(status) != 0:
    sys.exit(1)
print(f"{ru.ru_utime + ru.ru_stime:.4f}")
PY
}
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
fits() {  # csv capacity -> yes/no
  local peak
  peak=$("$BIN" memplan "$1" --verify -q 2>/dev/null | sed -n "s/^valid: .*peak \([0-9]*\)$/\1/p")
  [[ -n "$peak" && "$peak" -le "$2" ]] && echo yes || echo no
}
echo "| file | capacity | npuplan CPU (s) | MiniMalloc CPU (s) | npuplan / MiniMalloc | npuplan fits | MiniMalloc fits |"
echo "|---|---:|---:|---:|---:|---|---|"
total_n=0; total_m=0
for f in A B C D E F G H I J K; do
  in=testdata/minimalloc/$f.1048576.csv; c=${BEST[$f]}
  tn=""; tm=""
  for ((r = 0; r < RUNS; r++)); do
    tn+=" $(cpu "$BIN" memplan "$in" --capacity "$c" -q -o "$dir/n.csv")"
    tm+=" $(cpu "$MM" --input="$in" --capacity="$c" --output="$dir/m.csv")"
  done
  n=$(median <<<"$tn"); m=$(median <<<"$tm")
  total_n=$(awk -v a="$total_n" -v b="$n" 'BEGIN {print a + b}')
  total_m=$(awk -v a="$total_m" -v b="$m" 'BEGIN {print a + b}')
  printf "| %s | %s | %.3f | %.3f | %.3f | %s | %s |\n" "$f" "$c" "$n" "$m" \
    "$(awk -v a="$n" -v b="$m" 'BEGIN {print (b > 0) ? a / b : 0}')" \
    "$(fits "$dir/n.csv" "$c")" "$(fits "$dir/m.csv" "$c")"
done
printf "| all | | %.2f | %.2f | %.3f | | |\n" "$total_n" "$total_m" \
  "$(awk -v a="$total_n" -v b="$total_m" 'BEGIN {print a / b}')"
