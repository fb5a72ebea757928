#!/usr/bin/env bash
# Installs the Debian packages npuplan needs, only those that are missing.
# Idempotent; safe to run on every build. Needs root (or sudo) when something is missing.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  nlohmann-json3-dev libcli11-dev libfmt-dev libabsl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  llvm-14-tools
  libonnx-dev libprotobuf-dev protobuf-compiler
  libjemalloc-dev  # the tool's heap on transparent huge pages (tools/malloc/)
  python3  # tests/browser_report.sh and scripts/e2e_models.sh read JSON and PNG with it
  python3-onnx python3-numpy  # tests/onnx/gen_transformers.py builds ONNX models at test time
  # The Python package (python/, docs/api.md): pybind11, the headers of Debian's
  # python3, pytest; pip install . (setuptools driving CMake) into a venv; cpack -G DEB.
  pybind11-dev python3-pybind11 python3-dev python3-pytest
  python3-venv python3-pip python3-setuptools python3-wheel dpkg-dev
)
# Extra package sets a later step may ask for: scripts/setup.sh --with onnx
while [[ $# -gt 0 ]]; do
  case "$1" in
    --with) shift; case "${1:-}" in
      onnx) ;;  # part of the default set since the ONNX importer joined the build
      fuzz) PACKAGES+=(clang-14 libclang-rt-14-dev) ;;
      format) PACKAGES+=(clang-format-14) ;;  # scripts/check_format.sh
      browser) PACKAGES+=(chromium) ;;
      *) echo "setup.sh: unknown package set '${1:-}'" >&2; exit 2 ;;
    esac ;;
    *) echo "setup.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi
echo "setup.sh: installing ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
