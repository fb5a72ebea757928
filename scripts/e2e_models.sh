#!/usr/bin/env bash
# End to end on the real ONNX models of ../shared/guides/WORKLOADS.md and docs/onnx.md
# (fetched by scripts/fetch_models.sh into $NPUPLAN_MODEL_CACHE or .cache/models).
#
#   scripts/e2e_models.sh [--bin build/bin/npuplan] [--only FILE.onnx]... [--out-dir DIR]
#
# For each model present (absent ones are listed as skipped): import with the
# pinned input shapes of docs/onnx.md, then for each mode
#   default                   no option
#   single                    ge.enableSingleStream=true
#   LoadBalance:4             ge.autoMultistreamParallelMode=LoadBalance:4
#   CriticalPath:4            ge.autoMultistreamParallelMode=CriticalPath:4
#   CriticalPath:4 +reorder   the same with npuplan.stream.reorder=true
#   + dyn (dynamic models)    the three auto modes again with ENABLE_DYNAMIC_SHAPE_MULTI_STREAM=1
# compile (npuplan.eventOptimization = exact, the default), verify, run on the
# CPU back end with jitter (3 runs, must report 0 violations), simulate with a
# trace that tests/trace_check.py accepts (no flow ends before it starts); and
# compile again with npuplan.eventOptimization = none and ge (memory search
# off, verified too) to count the events each optimisation leaves.
# Prints a markdown table on stdout (progress on stderr). Exit 0 when every
# step passed, 1 when any failed, 77 when no model is present.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN="$ROOT/build/bin/npuplan"
CACHE=${NPUPLAN_MODEL_CACHE:-$ROOT/.cache/models}
ONLY=()
OUT_DIR=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bin) BIN=$2; shift 2 ;;
    --only) ONLY+=("$2"); shift 2 ;;
    --out-dir) OUT_DIR=$2; shift 2 ;;
    *) echo "e2e_models.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -x "$BIN" ]] || { echo "e2e_models.sh: no npuplan binary at $BIN (build first or pass --bin)" >&2; exit 2; }
if [[ -z "$OUT_DIR" ]]; then
  OUT_DIR=$(mktemp -d "${TMPDIR:-/tmp}/e2e_models.XXXXXX")
  trap 'rm -rf "$OUT_DIR"' EXIT
fi
mkdir -p "$OUT_DIR"

# file  label  pinned input shapes (docs/onnx.md)
MODELS=(
  "ch_ppocr_mobile_v2.0_cls_infer.onnx|PP-OCR cls|x=1x3x48x192"
  "ch_PP-OCRv4_det_infer.onnx|PP-OCRv4 det|x=1x3x960x960"
  "ch_PP-OCRv4_rec_infer.onnx|PP-OCRv4 rec|x=1x3x48x320"
  "silero_vad_v5.onnx|Silero VAD v5|input=1x512 state=2x1x128 sr="
  "silero_vad_legacy.onnx|Silero VAD legacy|input=1x512 h=2x1x64 c=2x1x64 sr="
  "melspectrogram.onnx|openWakeWord melspectrogram|input=1x1280"
  "embedding_model.onnx|openWakeWord embedding|input_1=1x76x32x1"
  "hey_jarvis_v0.1.onnx|openWakeWord hey_jarvis|"
)

# One line of facts from a plan: nodes, partition, streams, events, memory.
plan_facts() {
  python3 - "$1" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
s, p = j["summary"], j.get("partition", {})
kinds = [g["kind"] for g in p.get("subgraphs", [])]
part = f'{kinds.count("known")}/{kinds.count("unknown")}' if kinds else p.get("decision", "-")
print(s["nodes"], part, f'{s["logical_streams"]}/{s["physical_streams"]}', s["events"] + s["notifies"],
      s["memory_peak"], s["memory_lower_bound"], j["streams"].get("mode", "-"))
PY
}
sim_facts() {
  python3 -c 'import json,sys; j=json.load(sys.stdin); print("%.1f %.1f" % (j["makespan_us"], j["lower_bound_us"]))'
}
# Last line of a log, shortened and safe inside a markdown table cell.
cell() { tail -1 "$1" | tr '|' '/' | cut -c1-160; }
kib() { awk -v b="$1" 'BEGIN { printf "%.0f", b / 1024 }'; }

failed=0
ran=0
skipped=()
rows=()
for entry in "${MODELS[@]}"; do
  IFS='|' read -r file label shapes <<<"$entry"
  if [[ ${#ONLY[@]} -gt 0 ]] && [[ ! " ${ONLY[*]} " == *" $file "* ]]; then continue; fi
  model="$CACHE/$file"
  if [[ ! -f "$model" ]]; then
    skipped+=("$file"); echo "e2e: SKIPPED $file: not in $CACHE (run scripts/fetch_models.sh)" >&2; continue
  fi
  ran=$((ran + 1))
  stem=$OUT_DIR/${file%.onnx}
  shape_args=()
  for s in $shapes; do shape_args+=(--input-shape "$s"); done
  echo "e2e: $label: import" >&2
  if ! "$BIN" import "$model" "${shape_args[@]}" -o "$stem.graph.json" >"$stem.import.log" 2>&1; then
    rows+=("| $label | import | FAIL: $(cell "$stem.import.log") |||||||"); failed=1; continue
  fi
  # label|options (space-separated KEY=VALUE)|dyn
  modes=("default|" "single|ge.enableSingleStream=true"
         "LoadBalance:4|ge.autoMultistreamParallelMode=LoadBalance:4"
         "CriticalPath:4|ge.autoMultistreamParallelMode=CriticalPath:4"
         "CriticalPath:4 +reorder|ge.autoMultistreamParallelMode=CriticalPath:4 npuplan.stream.reorder=true")
  dynamic=""
  for m in "${modes[@]}" "LoadBalance:4 +dyn|ge.autoMultistreamParallelMode=LoadBalance:4|dyn" \
           "CriticalPath:4 +dyn|ge.autoMultistreamParallelMode=CriticalPath:4|dyn" \
           "CriticalPath:4 +dyn +reorder|ge.autoMultistreamParallelMode=CriticalPath:4 npuplan.stream.reorder=true|dyn"; do
    IFS='|' read -r mode opt dyn <<<"$m"
    if [[ -n "$dyn" && -z "$dynamic" ]]; then continue; fi  # +dyn modes only for dynamic models
    tag=$stem.${mode//[^A-Za-z0-9]/_}
    env_prefix=()
    [[ -n "$dyn" ]] && env_prefix=(env ENABLE_DYNAMIC_SHAPE_MULTI_STREAM=1)
    opts=()
    for o in $opt; do opts+=(--option "$o"); done
    status=""
    echo "e2e: $label: $mode" >&2
    if ! "${env_prefix[@]}" "$BIN" compile -q "$stem.graph.json" "${opts[@]}" -o "$tag.plan.json" >"$tag.log" 2>&1; then
      rows+=("| $label | $mode | FAIL compile: $(cell "$tag.log") |||||||"); failed=1; continue
    fi
    events=()
    for eo in none ge; do
      if ! "${env_prefix[@]}" "$BIN" compile -q "$stem.graph.json" "${opts[@]}" --option npuplan.eventOptimization=$eo \
           --option npuplan.memory.searchSteps=0 -o "$tag.$eo.plan.json" >>"$tag.log" 2>&1 ||
         ! "$BIN" verify "$tag.$eo.plan.json" >>"$tag.log" 2>&1; then
        status+="FAIL events=$eo: $(cell "$tag.log"); "; failed=1; events+=("?"); continue
      fi
      read -r _ _ _ ev _ <<<"$(plan_facts "$tag.$eo.plan.json")"
      events+=("$ev")
    done
    read -r nodes part streams ev_exact peak lb smode <<<"$(plan_facts "$tag.plan.json")"
    [[ "$mode" == "default" && "$part" != "static" && "$part" != "skipped" ]] && dynamic=1
    if ! "$BIN" verify "$tag.plan.json" >>"$tag.log" 2>&1; then status+="FAIL verify; "; failed=1; fi
    if ! run_out=$("$BIN" run --jitter 1 --repeat 3 "$tag.plan.json" 2>&1) || [[ "$run_out" != *": 3 runs, 0 violations "* ]]; then
      status+="FAIL run: $(echo "$run_out" | tail -1 | tr "|" "/" | cut -c1-160); "; failed=1
    fi
    if ! sim=$("$BIN" simulate --json --trace "$tag.trace.json" "$tag.plan.json" 2>>"$tag.log" | sim_facts); then
      status+="FAIL simulate; "; failed=1; sim="- -"
    elif ! python3 "$ROOT/tests/trace_check.py" "$tag.trace.json" --label "$label $mode" >>"$tag.log" 2>&1; then
      status+="FAIL trace: $(cell "$tag.log"); "; failed=1
    fi
    read -r mk slb <<<"$sim"
    status=${status:-ok}
    rows+=("| $label | $mode | $nodes | $part | $streams ($smode) | ${events[0]} / ${events[1]} / $ev_exact | $(kib "$peak") / $(kib "$lb") | $mk / $slb | $status |")
  done
done

if [[ $ran -eq 0 ]]; then
  echo "e2e_models.sh: SKIPPED: no model present in $CACHE (scripts/fetch_models.sh fetches them)"
  exit 77
fi
echo "| model | mode | nodes | subgraphs static/dynamic | streams logical/physical (mode) | events none / ge / exact | memory peak / lower bound (KiB) | simulated makespan / lower bound (µs) | verify + run (jitter, 3 runs) + simulate + trace |"
echo "|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
if [[ ${#skipped[@]} -gt 0 ]]; then echo; echo "Skipped (not fetched): ${skipped[*]}"; fi
exit $failed
