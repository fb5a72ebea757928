#!/usr/bin/env bash
# README command 1: set up, build the CLI (only the `npuplan` target: no
# tests, no benchmarks — scripts/test.sh builds the rest into the same build/),
# and compile + verify the bundled example graph.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
TARGETS=npuplan scripts/build.sh
mkdir -p out
build/bin/npuplan compile examples/transformer_block.json -o out/transformer_block.plan.json
build/bin/npuplan verify out/transformer_block.plan.json
