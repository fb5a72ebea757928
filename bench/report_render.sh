#!/usr/bin/env bash
# Time to render the HTML report (docs/report.md) in headless Chromium against
# a blank page, and the page sizes — the numbers of docs/benchmarks.md
# "Report page".
#
#   bench/report_render.sh [--bin build/bin/npuplan] [--runs N] [--keep DIR]
#
# Pages: the bundled example (small), a generated ~1.5k-task plan
# (gen --nodes 1400 --seed 3 --if-every 3 --while-every 4, LoadBalance:4) and
# the 30,000-node generated plan (gen --nodes 30000, LoadBalance:4). Each page,
# and a blank page, is opened N times (default 5) with a fresh profile and
# `--screenshot` (the page is laid out, its script run and painted); the wall
# time of each Chromium run is taken and the median reported, with the page's
# own script time (data-script-ms, performance.now() around the script) from
# a --dump-dom run. The machine may be shared: medians, and say so.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN="$ROOT/build/bin/npuplan"
RUNS=5
KEEP=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bin) BIN=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --keep) KEEP=$2; shift 2 ;;
    *) echo "report_render.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[[ -n "$CHROMIUM" ]] || { echo "report_render.sh: chromium not found (scripts/setup.sh --with browser)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/report_render.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

"$BIN" compile "$ROOT/examples/transformer_block.json" -o "$tmp/small.plan.json" -q
"$BIN" gen --nodes 1400 --seed 3 --if-every 3 --while-every 4 -o "$tmp/mid.graph.json" >/dev/null
"$BIN" compile "$tmp/mid.graph.json" --option ge.autoMultistreamParallelMode=LoadBalance:4 -o "$tmp/mid.plan.json" -q
"$BIN" gen --nodes 30000 -o "$tmp/big.graph.json" >/dev/null
"$BIN" compile "$tmp/big.graph.json" --option ge.autoMultistreamParallelMode=LoadBalance:4 -o "$tmp/big.plan.json" -q
printf '<!DOCTYPE html><html><head><meta charset="utf-8"><title>blank</title></head><body></body></html>\n' >"$tmp/blank.html"

chrome() {
  local ud; ud=$(mktemp -d "$tmp/ud.XXXXXX")
  "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --disable-extensions --host-resolver-rules="MAP * ~NOTFOUND" \
    --user-data-dir="$ud" --hide-scrollbars --window-size=1400,1000 "$@" 2>/dev/null
  rm -rf "$ud"
}
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }
time_page() {  # page → median wall seconds of N screenshot runs
  for _ in $(seq "$RUNS"); do
    local t0 t1
    t0=$(date +%s.%N)
    chrome --screenshot="$tmp/shot.png" "file://$1" >/dev/null
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc
  done | median | awk '{ printf "%.2f", $1 }'
}

blank=$(time_page "$tmp/blank.html")
echo "| page | plan nodes | tasks | page bytes | report (s, user+sys) | Chromium wall, median of $RUNS (s) | × blank | script (ms) |"
echo "|---|---|---|---|---|---|---|---|"
echo "| blank page | – | – | $(stat -c %s "$tmp/blank.html") | – | $blank | 1.00 | – |"
for p in small mid big; do
  /usr/bin/time -f "%U %S" -o "$tmp/$p.time" "$BIN" report "$tmp/$p.plan.json" -o "$tmp/$p.html" -q
  cpu=$(awk '{ printf "%.2f", $1 + $2 }' "$tmp/$p.time")
  nodes=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["nodes"])' "$tmp/$p.plan.json")
  wall=$(time_page "$tmp/$p.html")
  dom=$(chrome --dump-dom "file://$tmp/$p.html")
  script=$(grep -o 'data-script-ms="[0-9]*"' <<<"$dom" | grep -o '[0-9]*' || echo "?")
  tasks=$(grep -o 'data-tasks="[0-9]*"' <<<"$dom" | grep -o '[0-9]*' || echo "?")
  ratio=$(echo "scale=2; $wall / $blank" | bc)
  echo "| $p | $nodes | $tasks | $(stat -c %s "$tmp/$p.html") | $cpu | $wall | $ratio | $script |"
  [[ -n "$KEEP" ]] && mkdir -p "$KEEP" && cp "$tmp/$p.html" "$tmp/shot.png" "$KEEP/" && mv "$KEEP/shot.png" "$KEEP/$p.png"
done
