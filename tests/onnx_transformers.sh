#!/usr/bin/env bash
# Issue 18's transformer test: tests/onnx/gen_transformers.py builds an
# encoder and a decoder with past key/values at opsets 14, 17, 18, 20 and 21
# (Debian's python3-onnx at test time; nothing fetched, nothing committed);
# each must import with every input pinned and 0 unknown-shape tensors (and
# no shape warning), then compile, verify and run with 0 violations. The
# decoders are pinned once with --input-shape and once with --dim.
#   tests/onnx_transformers.sh NPUPLAN_BINARY
# Exit 0 when every step passed, 1 otherwise, 77 (skipped) without python3-onnx.
set -uo pipefail
npuplan=$1
root=$(cd "$(dirname "$0")/.." && pwd)
if ! /usr/bin/python3 -c 'import onnx, numpy' 2>/dev/null; then
  echo "onnx_transformers: SKIPPED: /usr/bin/python3 lacks onnx or numpy (scripts/setup.sh installs python3-onnx python3-numpy)"
  exit 77
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 "$root/tests/onnx/gen_transformers.py" "$tmp" >/dev/null || { echo "generator failed"; exit 1; }
pass=0; fail=0
check() {  # label model import-args...
  local label=$1 model=$2; shift 2
  local stem="$tmp/$label" why=""
  if ! "$npuplan" import "$model" "$@" -o "$stem.graph.json" >"$stem.import.log" 2>&1; then
    why="import failed: $(tail -1 "$stem.import.log")"
  elif ! grep -q " 0 unknown-shape tensors" "$stem.import.log"; then
    why="unknown shapes: $(grep -o '[0-9]* unknown-shape tensors' "$stem.import.log")"
  elif grep -q "^warning: shape inference" "$stem.import.log"; then
    why="shape warning: $(grep -m1 '^warning: shape inference' "$stem.import.log")"
  elif ! "$npuplan" compile -q "$stem.graph.json" -o "$stem.plan.json" >"$stem.compile.log" 2>&1; then
    why="compile failed: $(tail -1 "$stem.compile.log")"
  elif ! "$npuplan" verify "$stem.plan.json" >"$stem.verify.log" 2>&1; then
    why="verify failed: $(tail -1 "$stem.verify.log")"
  elif ! run_out=$("$npuplan" run "$stem.plan.json" 2>&1) || [[ "$run_out" != *", 0 violations "* ]]; then
    why="run failed: $(echo "$run_out" | tail -1)"
  fi
  if [[ -z "$why" ]]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1)); echo "FAIL $label: $why"
  fi
}
for opset in 14 17 18 20 21; do
  check "encoder$opset" "$tmp/encoder_opset$opset.onnx" \
    --input-shape input_ids=2x16 --input-shape attention_mask=2x16
  pasts=()
  for l in 0 1; do
    for kv in key value; do pasts+=(--input-shape "past_key_values.$l.$kv=1x4x8x8"); done
  done
  check "decoder$opset" "$tmp/decoder_opset$opset.onnx" \
    --input-shape input_ids=1x1 --input-shape attention_mask=1x9 "${pasts[@]}"
  check "decoder${opset}_dims" "$tmp/decoder_opset$opset.onnx" \
    --dim batch=1 --dim sequence_length=3 --dim past_sequence_length=8 --dim total_sequence_length=11
done
echo "onnx_transformers: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
