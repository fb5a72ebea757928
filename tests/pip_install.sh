#!/usr/bin/env bash
# `pip install .` from the source tree, offline (issue 24, docs/api.md "Python"):
#   tests/pip_install.sh BUILD_DIR
# A venv over Debian's site packages (numpy, onnx), pip install --no-index of
# the repository (setup.py drives CMake; NPUPLAN_BUILD_DIR=BUILD_DIR reuses the
# built extension, so nothing is recompiled), then the installed package — not
# the build tree's — compiles and verifies the example. Skips (77) without
# python3-venv or python3-pip.
set -euo pipefail
build=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
/usr/bin/python3 -c 'import ensurepip' 2>/dev/null || { echo "pip_install: SKIPPED: no python3-venv"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/npuplan_pip.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "pip_install: FAIL: $*" >&2; exit 1; }

/usr/bin/python3 -m venv --system-site-packages "$tmp/venv" || fail "python3 -m venv"
NPUPLAN_BUILD_DIR=$build PIP_DISABLE_PIP_VERSION_CHECK=1 "$tmp/venv/bin/pip" install --no-index -q "$root" \
  >"$tmp/pip.log" 2>&1 || { cat "$tmp/pip.log"; fail "pip install --no-index ."; }
cd "$tmp"
env -u PYTHONPATH "$tmp/venv/bin/python" - "$root/examples/transformer_block.json" "$tmp/venv" <<'PY' || fail "the installed package"
import sys
import npuplan
assert npuplan.__file__.startswith(sys.argv[2]), npuplan.__file__
plan = npuplan.compile(sys.argv[1])
plan.verify()
print(f"pip_install: OK: npuplan {npuplan.__version__} from {npuplan.__file__}: {plan.summary()}")
PY
