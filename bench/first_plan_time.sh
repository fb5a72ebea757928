#!/usr/bin/env bash
# Time to the first plan: README command 1 (scripts/run_example.sh) on a fresh
# clone, with no compiler cache (docs/benchmarks.md, "Build").
#
#   bench/first_plan_time.sh [REPO]     # default: this checkout
#
# Clones REPO into a temporary directory, runs scripts/run_example.sh there
# with CCACHE_DISABLE=1 and prints one markdown row: wall seconds, CPU seconds
# (user + sys of every process, load-independent), build steps, and whether
# the example plan verified. The Debian packages must already be installed
# (setup.sh is part of the run but then installs nothing): on a machine
# without them, add the time `apt-get install` takes.
set -euo pipefail
REPO=${1:-$(cd "$(dirname "$0")/.." && pwd)}
dir=$(mktemp -d "${TMPDIR:-/tmp}/first_plan.XXXXXX"); trap 'rm -rf "$dir"' EXIT
git clone -q "$REPO" "$dir/npuplan"
cd "$dir/npuplan"
export CCACHE_DISABLE=1
/usr/bin/time -f '%e %U %S' -o "$dir/time" scripts/run_example.sh >"$dir/log" 2>&1 || {
  tail -20 "$dir/log" >&2; echo "first_plan_time.sh: scripts/run_example.sh failed" >&2; exit 1; }
read -r wall user sys <"$dir/time"
steps=$(grep -c '^\[[0-9]*/[0-9]*\]' "$dir/log" || true)
verified=$(grep -q ': plan OK' "$dir/log" && echo yes || echo no)
cpu=$(python3 -c "print(f'{$user + $sys:.0f}')")
echo "| README command 1, fresh clone, no ccache | ${wall%.*} s | $cpu s | $steps | $verified | $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg) |"
