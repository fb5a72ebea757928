#!/usr/bin/env bash
# The CLI's ONNX plugin (docs/onnx.md, "The ONNX plugin"):
#   1. the CLI does not need libonnx or libprotobuf at start-up;
#   2. it reads .onnx models through the plugin, with the same result as the
#      in-process importer would give the library (the API's CLI-equality
#      tests compare plans; here: import works and the plan verifies);
#   3. without a usable plugin, a command on an .onnx model fails with exit 1,
#      a message naming the plugin's path, and no output file; commands on
#      JSON graphs do not need the plugin.
set -uo pipefail
npuplan=$1
pass=0; fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); }
bad() { echo "onnx_plugin: FAIL: $*"; fail=$((fail + 1)); }
root=$(cd "$(dirname "$0")/.." && pwd)

needed=$(readelf -d "$npuplan" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
if grep -E 'libonnx|libprotobuf' <<<"$needed"; then bad "the CLI needs ONNX libraries at start-up"; else ok; fi

/usr/bin/python3 - "$tmp/m.onnx" <<'PY' || { echo "onnx_plugin: cannot build the test model (python3-onnx)"; exit 1; }
import sys
from onnx import TensorProto, helper, save
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])
nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"), helper.make_node("Sigmoid", ["r"], ["y"], name="sig")]
g = helper.make_graph(nodes, "g", [x], [y])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
PY

if "$npuplan" compile "$tmp/m.onnx" -o "$tmp/p.json" -q && "$npuplan" verify "$tmp/p.json" >/dev/null; then ok
else bad "compile of an .onnx model through the plugin"; fi
if "$npuplan" import "$tmp/m.onnx" -o "$tmp/g.json" -q && grep -q '"relu"' "$tmp/g.json"; then ok
else bad "import through the plugin"; fi
"$npuplan" import --list-ops >"$tmp/ops.md" 2>&1
if grep -q "| Relu |" "$tmp/ops.md"; then ok; else bad "import --list-ops through the plugin: $(head -3 "$tmp/ops.md")"; fi

expect_refused() {  # plugin path, expected message part
  local rc
  NPUPLAN_ONNX_PLUGIN=$1 "$npuplan" compile "$tmp/m.onnx" -o "$tmp/refused.json" 2>"$tmp/err"; rc=$?
  if [[ $rc -ne 1 ]]; then bad "plugin '$1': exit $rc, want 1"; return; fi
  if ! grep -q "^error: .*ONNX plugin '$1' $2" "$tmp/err"; then bad "plugin '$1': message: $(cat "$tmp/err")"; return; fi
  if [[ -e "$tmp/refused.json" ]]; then bad "plugin '$1': an output was written"; return; fi
  ok
}
expect_refused "$tmp/none.so" "cannot be loaded"
expect_refused "$(ldd "$npuplan" | awk '/libfmt/ {print $3}')" "is not an npuplan ONNX plugin"

if NPUPLAN_ONNX_PLUGIN=$tmp/none.so "$npuplan" compile "$root/examples/transformer_block.json" -o "$tmp/j.json" -q; then ok
else bad "a JSON graph needs the plugin"; fi

echo "onnx_plugin: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
