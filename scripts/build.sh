#!/usr/bin/env bash
# Configures and builds npuplan (Release) into ${BUILD_DIR:-build}.
# TARGETS="npuplan ..." builds only those targets (and what they need);
# default: everything (libraries, CLI, tests, benchmarks).
# A new build directory gets a unity build of the libraries and the CLI
# (CMake option NPUPLAN_UNITY_BUILD; UNITY_BUILD=OFF compiles file by file,
# the better mode for editing one file and rebuilding).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
GEN=()
if command -v ninja >/dev/null 2>&1; then GEN=(-G Ninja); fi
if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  cmake -S . -B "$BUILD_DIR" "${GEN[@]}" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-Release} \
    -DNPUPLAN_UNITY_BUILD=${UNITY_BUILD:-ON} "$@"
fi
TARGET_ARGS=()
if [[ -n "${TARGETS:-}" ]]; then
  read -r -a targets <<<"$TARGETS"
  TARGET_ARGS=(--target "${targets[@]}")
fi
cmake --build "$BUILD_DIR" -j "${JOBS:-$(nproc)}" "${TARGET_ARGS[@]}"
