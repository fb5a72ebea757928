#!/usr/bin/env bash
# compile vs verify on generated graphs (issue 22 item 1; docs/benchmarks.md,
# "Whole compile"): how far a default compile is from the floor of reading a
# graph, and how both grow with the node count.
#
#   bench/compile_vs_verify.sh [BIN] [--sizes 10000,100000,1000000]
#       [--gens transformer,random-dag] [--runs 3] [--large-runs 1]
#       [--large 1000000] [--extra-args ARGS]
#
# Generators: transformer (`gen --nodes N`), random-dag (`gen --random-dag
# --nodes N`), transformer-dyn (`gen --nodes N --dynamic-prob 0.3`: the
# dynamic-shape partition cuts it), random-dag-dyn (the same on the random
# DAG). Every graph is generated once into a temporary folder. Per size and
# generator, `compile G -o P --stats -q` and `verify G` (the input graph:
# parse + topological sort + graph checks — the issue's floor) run
# alternately --runs times (--large-runs times for sizes >= --large: 1M-node
# compiles take ~30 s CPU and ~2 GB). Medians of user+sys CPU and of wall
# time (the child's rusage, microseconds). Prints a markdown table — nodes
# (as generated), compile, verify, their ratio, the three stages with the
# most CPU in the median compile's --stats — then per generator the growth
# exponents of compile and verify CPU: the least-squares slope of log(time)
# on log(nodes) over all sizes, and the end-to-end slope from the smallest
# to the largest size.
set -euo pipefail
BIN=build/bin/npuplan
SIZES=10000,100000,1000000
GENS=transformer,random-dag
RUNS=3
LARGE_RUNS=1
LARGE=1000000
if [[ $# -gt 0 && $1 != --* ]]; then BIN=$1; shift; fi
while [[ $# -gt 0 ]]; do
  case $1 in
    --sizes) SIZES=$2; shift 2 ;;
    --gens) GENS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --large-runs) LARGE_RUNS=$2; shift 2 ;;
    --large) LARGE=$2; shift 2 ;;
    *) echo "compile_vs_verify.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -x "$BIN" ]] || { echo "compile_vs_verify.sh: no npuplan binary at $BIN" >&2; exit 2; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/compile_vs_verify.XXXXXX"); trap 'rm -rf "$dir"' EXIT

# timed OUT ERR CMD...: runs CMD (stdout dropped, stderr to ERR) and writes
# "cpu wall rss_kb" to OUT: the child's user+sys CPU from its rusage and the
# wall time, in microseconds' resolution (GNU time truncates user and sys to
# hundredths each, which understated the ~0.07 s of a 10k compile and raised
# the growth exponent by up to ~0.05).
timed() {
  python3 - "$@" <<'PY'
import os, sys, time
out, err, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
# wait4: this child's own rusage (RUSAGE_CHILDREN also counted the
# interpreter's forking here).
actions = [(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
           (os.POSIX_SPAWN_OPEN, 2, err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)]
start = time.perf_counter()
pid = os.posix_spawnp(cmd[0], cmd, os.environ, file_actions=actions)
_, status, ru = os.wait4(pid, 0)
wall = time.perf_counter() - start
with open(out, "w") as o:
    o.write(f"{ru.ru_utime + ru.ru_stime:.6f} {wall:.6f} {ru.ru_maxrss}\n")
sys.exit(os.waitstatus_to_exitcode(status))
PY
}

gen_args() {  # generator size
  case $1 in
    transformer) echo "--nodes $2" ;;
    random-dag) echo "--random-dag --nodes $2" ;;
    transformer-dyn) echo "--nodes $2 --dynamic-prob 0.3" ;;
    random-dag-dyn) echo "--random-dag --nodes $2 --dynamic-prob 0.3" ;;
    *) echo "compile_vs_verify.sh: unknown generator '$1'" >&2; exit 2 ;;
  esac
}

# One line per run into $dir/runs.tsv: gen, size, nodes, command, cpu, wall, rss_kb, stats file.
IFS=, read -r -a sizes <<<"$SIZES"
IFS=, read -r -a gens <<<"$GENS"
for g in "${gens[@]}"; do
  for n in "${sizes[@]}"; do
    graph="$dir/$g-$n.json"
    # shellcheck disable=SC2046
    "$BIN" gen $(gen_args "$g" "$n") -o "$graph" >"$dir/gen.txt"
    nodes=$(sed -n 's/.*: \([0-9]*\) nodes.*/\1/p' "$dir/gen.txt")
    runs=$RUNS; (( n >= LARGE )) && runs=$LARGE_RUNS
    for ((r = 0; r < runs; r++)); do
      for cmd in compile verify; do
        stats="$dir/$g-$n-$r-$cmd.stats"
        if [[ $cmd == compile ]]; then
          args=(compile "$graph" -o "$dir/plan.json" --stats -q)
        else
          args=(verify "$graph")
        fi
        if ! timed "$dir/time.txt" "$stats" "$BIN" "${args[@]}"; then
          echo "compile_vs_verify.sh: '$BIN ${args[*]}' failed:" >&2; tail -3 "$stats" >&2; exit 1
        fi
        read -r cpu wall rss <"$dir/time.txt"
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$g" "$n" "$nodes" "$cmd" \
          "$cpu" "$wall" "$rss" "$stats" >>"$dir/runs.tsv"
      done
    done
    rm -f "$graph" "$dir/plan.json"
  done
done

python3 - "$dir/runs.tsv" <<'PY'
import math, re, statistics, sys
from collections import defaultdict

runs = defaultdict(list)  # (gen, size, cmd) -> [(cpu, wall, rss, stats)]
nodes = {}
order = []
for line in open(sys.argv[1]):
    g, n, nn, cmd, cpu, wall, rss, stats = line.rstrip("\n").split("\t")
    key = (g, int(n))
    if key not in nodes:
        order.append(key)
    nodes[key] = int(nn)
    runs[(g, int(n), cmd)].append((float(cpu), float(wall), int(rss), stats))

def median_run(rs):
    """The run with the median CPU time (lower median), and the medians."""
    by_cpu = sorted(rs, key=lambda r: r[0])
    return (by_cpu[(len(by_cpu) - 1) // 2], statistics.median(r[0] for r in rs),
            statistics.median(r[1] for r in rs))

STAGE = re.compile(r"^time\s+[\d.]+ s\s+[\d.]+%\s+cpu\s+([\d.]+) s  (\S.*)$")
def top_stages(stats, k=3):
    stages = []
    for line in open(stats):
        m = STAGE.match(line.rstrip("\n"))
        if m and m.group(2) != "total" and not m.group(2).startswith(" "):
            stages.append((float(m.group(1)), m.group(2)))
    stages.sort(key=lambda s: -s[0])
    return ", ".join(f"{name} {cpu:.2f}" for cpu, name in stages[:k])

print("| generator | nodes | runs | compile CPU (s) | compile wall (s) | verify CPU (s) | verify wall (s) "
      "| CPU ratio | wall ratio | compile max RSS (MB) | top stages (CPU s, median compile) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
series = defaultdict(list)  # gen -> [(nodes, compile cpu, verify cpu)]
for g, n in order:
    c_run, c_cpu, c_wall = median_run(runs[(g, n, "compile")])
    _, v_cpu, v_wall = median_run(runs[(g, n, "verify")])
    series[g].append((nodes[(g, n)], c_cpu, v_cpu))
    print(f"| {g} | {nodes[(g, n)]:,} | {len(runs[(g, n, 'compile')])} | {c_cpu:.3f} | {c_wall:.3f} "
          f"| {v_cpu:.3f} | {v_wall:.3f} | {c_cpu / v_cpu:.2f} | {c_wall / v_wall:.2f} "
          f"| {c_run[2] // 1024:,} | {top_stages(c_run[3])} |")

def fit(points):
    xs = [math.log(p[0]) for p in points]
    ys = [math.log(max(p[1], 1e-3)) for p in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den > 0 else float("nan")

print()
print("| generator | sizes (nodes) | compile exponent (fit / ends) | verify exponent (fit / ends) |")
print("|---|---|---|---|")
for g, pts in series.items():
    if len(pts) < 2:
        continue
    c = [(p[0], p[1]) for p in pts]
    v = [(p[0], p[2]) for p in pts]
    print(f"| {g} | {pts[0][0]:,} → {pts[-1][0]:,} | {fit(c):.2f} / {fit([c[0], c[-1]]):.2f} "
          f"| {fit(v):.2f} / {fit([v[0], v[-1]]):.2f} |")
PY
