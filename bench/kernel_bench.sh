#!/usr/bin/env bash
# Kernel cache planning benchmark: seed vs best (objectives traffic, balanced,
# time) on the official cases (when ../shared/data/kernels exists) and on
# generated cases. Prints a Markdown table; CPU = user+sys of the whole
# `kernel plan` process (/usr/bin/time), wall = its own plan_seconds. With a
# binary that reports lower bounds (`bound.*` lines) the table also has the
# makespan bound (and which bound gives it), the gap makespan / bound, and the
# traffic bounds over all orders and for the plan's own order.
# RUNS="best traffic;best time" limits the strategy/objective pairs.
# Usage: bench/kernel_bench.sh [path/to/npuplan]
set -euo pipefail
cd "$(dirname "$0")/.."
NPUPLAN=${1:-build/bin/npuplan}
SHARED=${NPUPLAN_SHARED_DIR:-../shared}/data/kernels
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

cases=()
for f in "$SHARED"/*.json; do [[ -f "$f" ]] && cases+=("$f"); done
gen() { "$NPUPLAN" kernel gen "${@:2}" --out "$TMP/$1.json"; cases+=("$TMP/$1.json"); }
gen gen_matmul_4x4x4 --kind matmul --m 4 --n 4 --k 4
gen gen_matmul_8x8x8 --kind matmul --m 8 --n 8 --k 8
gen gen_matmul_16x16x16 --kind matmul --m 16 --n 16 --k 16
gen gen_fa_4 --kind flash-attention --seq 4
gen gen_fa_8 --kind flash-attention --seq 8
gen gen_fa_16 --kind flash-attention --seq 16
gen gen_conv_3x8 --kind conv --layers 3 --width 8
gen gen_conv_4x24 --kind conv --layers 4 --width 24
gen gen_conv_8x48 --kind conv --layers 8 --width 48

val() { grep "^$1 " "$2" | awk '{print $2}' || true; }
bound() { grep "^bound.makespan " "$1" | awk '{print $2 " " $3}' || true; }
echo "| case | nodes | Q1 max V_stay L1 / UB | strategy / objective | extra data movement | traffic bound: any order / this order | makespan | makespan bound | gap | CPU (s) | wall (s) |"
echo "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|"
IFS=';' read -r -a RUN_LIST <<<"${RUNS:-seed balanced;best traffic;best balanced;best time}"
for f in "${cases[@]}"; do
  name=$(basename "$f" .json)
  nodes=$(grep -o '"Id"' "$f" | wc -l)
  for run in "${RUN_LIST[@]}"; do
    read -r s o <<<"$run"
    out="$TMP/$name.$s.$o.txt"
    if ! /usr/bin/time -f "cpu %U %S" -o "$TMP/time.txt" \
        "$NPUPLAN" kernel plan "$f" --strategy "$s" --objective "$o" --out-dir "$TMP" >"$out" 2>&1; then
      echo "| $name | $nodes | | $s / $o | failed: $(tail -1 "$out") | | | | | | |"
      continue
    fi
    cpu=$(awk '/^cpu/ {printf "%.2f", $2 + $3}' "$TMP/time.txt")
    echo "| $name | $nodes | $(val q1.max_vstay.L1 "$out") / $(val q1.max_vstay.UB "$out") | $s / $o | $(val extra_data_movement "$out") | $(val bound.traffic_free_order "$out") / $(val bound.traffic_fixed_order "$out") | $(val makespan "$out") | $(bound "$out") | $(val gap.makespan "$out") | $cpu | $(val plan_seconds "$out") |"
    # Every plan is re-checked by the independent evaluator from the written files.
    "$NPUPLAN" kernel eval "$f" --schedule "$TMP/${name}_schedule.txt" --memory "$TMP/${name}_memory.txt" \
      --spill "$TMP/${name}_spill.txt" >/dev/null
  done
done
