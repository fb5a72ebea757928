#!/usr/bin/env bash
# Auto multi-stream modes against the default on the real models of
# scripts/e2e_models.sh (issue 22, item 3): for each model present in
# $NPUPLAN_MODEL_CACHE (or .cache/models), import with the pinned shapes of
# docs/onnx.md, compile with no auto mode (the default) and with every auto
# mode of docs/auto-streams.md at N = 4 (plus CriticalPath:4 with
# npuplan.stream.reorder=true), simulate each plan (`npuplan simulate`, the
# simulator's makespan) and require makespan(auto) <= makespan(default).
# Dynamic models also run every mode with ENABLE_DYNAMIC_SHAPE_MULTI_STREAM=1
# against the default under that switch.
#
#   scripts/auto_vs_default.sh [--bin build/bin/npuplan] [--only FILE.onnx]...
#
# Prints a markdown table (model, mode, streams, events, simulated makespan
# of the mode and of the default). Exit 0 when every auto plan is at most the
# default, 1 otherwise (or on any failed step), 77 when no model is present.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN="$ROOT/build/bin/npuplan"
CACHE=${NPUPLAN_MODEL_CACHE:-$ROOT/.cache/models}
ONLY=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bin) BIN=$2; shift 2 ;;
    --only) ONLY+=("$2"); shift 2 ;;
    *) echo "auto_vs_default.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -x "$BIN" ]] || { echo "auto_vs_default.sh: no npuplan binary at $BIN" >&2; exit 2; }
OUT=$(mktemp -d "${TMPDIR:-/tmp}/auto_vs_default.XXXXXX")
trap 'rm -rf "$OUT"' EXIT

# The model list and pinned shapes of scripts/e2e_models.sh.
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
AUTO_MODES=("LoadBalance:4" "MainStream:4" "WeightedLoadBalance:4" "CriticalPath:4" "CriticalPath:4 +reorder")

# streams events makespan_us of one compile (options as arguments).
measure() {
  local plan=$1; shift
  "$@" -o "$plan" >"$plan.log" 2>&1 || { echo "FAIL compile: $(tail -1 "$plan.log" | tr '|' '/')"; return 1; }
  local facts
  facts=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; print(s["logical_streams"], s["events"] + s["notifies"])' "$plan")
  local mk
  mk=$("$BIN" simulate --json "$plan" | python3 -c 'import json,sys; print("%.3f" % json.load(sys.stdin)["makespan_us"])') ||
    { echo "FAIL simulate"; return 1; }
  echo "$facts $mk"
}

failed=0
ran=0
rows=()
for entry in "${MODELS[@]}"; do
  IFS='|' read -r file label shapes <<<"$entry"
  if [[ ${#ONLY[@]} -gt 0 ]] && [[ ! " ${ONLY[*]} " == *" $file "* ]]; then continue; fi
  model="$CACHE/$file"
  if [[ ! -f "$model" ]]; then echo "auto_vs_default: SKIPPED $file: not in $CACHE" >&2; continue; fi
  ran=$((ran + 1))
  stem=$OUT/${file%.onnx}
  shape_args=()
  for s in $shapes; do shape_args+=(--input-shape "$s"); done
  if ! "$BIN" import "$model" "${shape_args[@]}" -o "$stem.graph.json" >"$stem.import.log" 2>&1; then
    rows+=("| $label | import | FAIL: $(tail -1 "$stem.import.log" | tr '|' '/') ||||"); failed=1; continue
  fi
  dynamic=""
  for env in "" "ENABLE_DYNAMIC_SHAPE_MULTI_STREAM=1"; do
    [[ -n "$env" && -z "$dynamic" ]] && continue  # the switch only matters on dynamic models
    suffix=${env:+ +dyn}
    run=(env $env "$BIN" compile -q "$stem.graph.json")
    echo "auto_vs_default: $label: default$suffix" >&2
    if ! base=$(measure "$stem.default${env:+_dyn}.plan.json" "${run[@]}"); then
      rows+=("| $label | default$suffix | $base ||||"); failed=1; continue
    fi
    read -r b_streams b_events b_mk <<<"$base"
    if [[ -z "$env" ]]; then
      mode=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["streams"]["mode"])' "$stem.default.plan.json")
      [[ "$mode" == dynamic-* ]] && dynamic=1
    fi
    rows+=("| $label | default$suffix | $b_streams | $b_events | $b_mk | $b_mk | - |")
    for am in "${AUTO_MODES[@]}"; do
      read -r value extra <<<"$am"
      opts=(--option "ge.autoMultistreamParallelMode=$value")
      [[ "$extra" == "+reorder" ]] && opts+=(--option npuplan.stream.reorder=true)
      tag=${am//[^A-Za-z0-9]/_}${env:+_dyn}
      echo "auto_vs_default: $label: $am$suffix" >&2
      if ! res=$(measure "$stem.$tag.plan.json" "${run[@]}" "${opts[@]}"); then
        rows+=("| $label | $am$suffix | $res ||||"); failed=1; continue
      fi
      read -r streams events mk <<<"$res"
      verdict=ok
      if ! python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= float(sys.argv[2]) else 1)' "$mk" "$b_mk"; then
        verdict="WORSE (+$(python3 -c 'import sys; print("%.2f %%" % (100 * (float(sys.argv[1]) / float(sys.argv[2]) - 1)))' "$mk" "$b_mk"))"
        failed=1
      fi
      rows+=("| $label | $am$suffix | $streams | $events | $mk | $b_mk | $verdict |")
    done
  done
done

if [[ $ran -eq 0 ]]; then
  echo "auto_vs_default.sh: SKIPPED: no model present in $CACHE (scripts/fetch_models.sh fetches them)"
  exit 77
fi
echo "| model | mode | streams | events | simulated makespan (µs) | default's (µs) | auto ≤ default |"
echo "|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
exit $failed
