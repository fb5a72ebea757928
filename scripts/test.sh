#!/usr/bin/env bash
# README command 2: set up, build, and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
# Real ONNX models for the importer tests; skips softly (exit 0) when offline.
scripts/fetch_models.sh || echo "test.sh: fetch_models.sh failed; real-model tests will be skipped" >&2
cd build
ctest --output-on-failure -j "$(nproc)" --timeout 900
