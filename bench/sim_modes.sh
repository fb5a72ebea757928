#!/usr/bin/env bash
# Single-stream vs multi-stream on generated transformers, simulated
# (docs/benchmarks.md, "Execution and simulation").
#
#   bench/sim_modes.sh [build/bin/npuplan]
#
# For each configuration: npuplan gen, compile with the default options and
# with ge.enableSingleStream=true, npuplan simulate --json. Prints a markdown
# table: nodes, streams, events, makespan, the plan's own lower bound
# max(critical path, total work / streams), their ratio, critical path and
# total work. The simulator's defaults are used (docs/execution.md).
set -euo pipefail
BIN=${1:-build/bin/npuplan}
[[ -x "$BIN" ]] || { echo "sim_modes.sh: no npuplan binary at $BIN" >&2; exit 2; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/sim_modes.XXXXXX"); trap 'rm -rf "$dir"' EXIT
echo "| graph | nodes | mode | streams | events | makespan (µs) | lower bound (µs) | makespan / LB | critical path (µs) | total work (µs) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
row() {  # label gen-args...
  local label=$1; shift
  "$BIN" gen "$@" --seed 1 -o "$dir/g.json" >/dev/null
  for mode in multi single; do
    local opt=(); [[ $mode == single ]] && opt=(--option ge.enableSingleStream=true)
    "$BIN" compile "$dir/g.json" -o "$dir/p.json" "${opt[@]}" >/dev/null
    "$BIN" simulate "$dir/p.json" --json >"$dir/s.json"
    python3 - "$label" "$mode" "$dir/p.json" "$dir/s.json" <<'PY'
import json, sys
label, mode, plan, sim = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))
print(f"| {label} | {len(plan['nodes'])} | {mode} | {plan['streams']['logical']} | {len(plan['events'])} | "
      f"{sim['makespan_us']:.1f} | {sim['lower_bound_us']:.1f} | {sim['makespan_over_lower_bound']:.3f} | "
      f"{sim['critical_path_us']:.1f} | {sim['total_work_us']:.1f} |")
PY
  done
}
row "4 layers" --layers 4
row "16 layers" --layers 16
row "32 layers" --layers 32
row "64 layers" --layers 64
row "16 layers, If every 2nd" --layers 16 --if-every 2
row "16 layers, no HCCL / AI CPU" --layers 16 --no-hccl --no-aicpu
