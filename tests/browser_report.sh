#!/usr/bin/env bash
# Browser test of `npuplan report` (docs/report.md):
#   tests/browser_report.sh path/to/npuplan
# 1. writes the HTML reports of three plans — the bundled example
#    (examples/transformer_block.json, small), a generated plan of about 1.5k
#    tasks, and the 30,000-node generated plan compiled with LoadBalance:4 —
#    and the kernel report of a generated FlashAttention-like case that spills;
# 2. static checks: the plan pages' CSP allows inline style and script only
#    (default-src 'none'; the kernel page: no script at all), no http(s)://
#    URL, no src=/href= attribute, no fetch/XMLHttpRequest/WebSocket/import(;
#    the 30k page is under 2 MB;
# 3. opens them in headless Chromium (Debian's `chromium`, installed with
#    `scripts/setup.sh --with browser` when missing) with background
#    networking off, a fresh profile per start and every host name
#    unresolvable:
#    --dump-dom: the script ran — #timeline and #memory say data-state="ready"
#    with lanes, drawn tasks (boxes or pixel columns), arrows (small and 1.5k
#    pages), drawn pool buffers; <html> has no data-error; with #find=NAME in
#    the address the search found and marked that task; the kernel page has an
#    L1 chart and one SPILL_OUT tick per reported spill;
#    --enable-logging: no console message from the page (errors, exceptions);
#    --screenshot: not blank (many non-white pixels, several colours); kept in
#    $NPUPLAN_KEEP_SCREENSHOTS when set;
#    --log-net-log: no request that the page initiated (Chromium's own
#    service requests carry initiator "not an origin" and are ignored). A
#    control page with an <img src="http://…"> must show up in the same check,
#    so the check itself is tested.
# Page sizes and the time to render are printed; bench/report_render.sh
# measures the time against a blank page for docs/benchmarks.md.
# Exit 0 pass, 1 fail, 77 skipped (chromium not installed and not installable,
# e.g. offline CI: the reason is printed).
set -euo pipefail
NPUPLAN=${1:?usage: browser_report.sh path/to/npuplan}
NPUPLAN=$(cd "$(dirname "$NPUPLAN")" && pwd)/$(basename "$NPUPLAN")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SKIP=77

# NPUPLAN_CHROMIUM names the browser binary (tests of this script set it to a
# missing path); NPUPLAN_NO_INSTALL=1 forbids installing it.
find_chromium() {
  if [[ -n "${NPUPLAN_CHROMIUM:-}" ]]; then command -v "$NPUPLAN_CHROMIUM" || true; return; fi
  command -v chromium || command -v chromium-browser || true
}
CHROMIUM=$(find_chromium)
if [[ -z "$CHROMIUM" ]]; then
  if [[ -n "${NPUPLAN_NO_INSTALL:-}" ]]; then
    echo "browser_report: SKIPPED: chromium is not installed and NPUPLAN_NO_INSTALL is set"; exit $SKIP
  fi
  if [[ $(id -u) -ne 0 ]] && ! sudo -n true 2>/dev/null; then
    echo "browser_report: SKIPPED: chromium is not installed and installing needs root (scripts/setup.sh --with browser)"; exit $SKIP
  fi
  echo "browser_report: installing chromium (scripts/setup.sh --with browser)"
  if ! timeout 240 "$ROOT/scripts/setup.sh" --with browser >/dev/null 2>&1; then
    echo "browser_report: SKIPPED: could not install chromium (offline? no apt mirror?)"; exit $SKIP
  fi
  CHROMIUM=$(find_chromium)
  [[ -n "$CHROMIUM" ]] || { echo "browser_report: SKIPPED: chromium still not found after setup.sh"; exit $SKIP; }
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/browser_report.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "browser_report: FAIL: $*" >&2; exit 1; }

# 1. The pages.
"$NPUPLAN" compile "$ROOT/examples/transformer_block.json" -o "$tmp/small.plan.json" -q
"$NPUPLAN" gen --nodes 1400 --seed 3 --if-every 3 --while-every 4 -o "$tmp/mid.graph.json" >/dev/null
"$NPUPLAN" compile "$tmp/mid.graph.json" --option ge.autoMultistreamParallelMode=LoadBalance:4 -o "$tmp/mid.plan.json" -q
"$NPUPLAN" gen --nodes 30000 -o "$tmp/big.graph.json" >/dev/null
"$NPUPLAN" compile "$tmp/big.graph.json" --option ge.autoMultistreamParallelMode=LoadBalance:4 -o "$tmp/big.plan.json" -q
for p in small mid big; do
  "$NPUPLAN" report "$tmp/$p.plan.json" -o "$tmp/$p.html" -q
  [[ -s "$tmp/$p.html" ]] || fail "no report written for $p"
done
"$NPUPLAN" kernel gen --kind flash-attention --seq 8 --out "$tmp/fa.json"
mkdir -p "$tmp/kernel"
"$NPUPLAN" kernel plan "$tmp/fa.json" --out-dir "$tmp/kernel" >/dev/null
"$NPUPLAN" report "$tmp/kernel/fa_report.json" --case "$tmp/fa.json" -o "$tmp/kernel.html"
# A task to look for: the first task named in the middle page's data.
find_name=$(python3 - "$tmp/mid.html" <<'PY'
import json, re, sys
html = open(sys.argv[1], encoding="utf-8").read()
d = json.loads(re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S).group(1))
names, prev = [], ""
n = d["names"]
for i in range(0, len(n), 3):  # [shared prefix, shared suffix, middle] in UTF-16 units (ASCII here)
    prev = prev[:n[i]] + n[i + 2] + (prev[len(prev) - n[i + 1]:] if n[i + 1] else "")
    names.append(prev)
plain = sum(len(t) // 2 for t in d["tasks"]) - len(d["ext"]) // 5  # nodes numbered by the plain tasks
print(names[plain // 2])
PY
)
find_url=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$find_name")

# 2. Static checks on the files themselves.
for page in "$tmp/small.html" "$tmp/mid.html" "$tmp/big.html" "$tmp/kernel.html"; do
  name=$(basename "$page")
  if [[ $name == kernel.html ]]; then
    csp="default-src 'none'; style-src 'unsafe-inline'\""
    grep -qi "<script" "$page" && fail "$name: the kernel page has a script"
  else
    csp="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'\""
  fi
  grep -q "http-equiv=\"Content-Security-Policy\" content=\"$csp" "$page" || fail "$name: no CSP meta with $csp"
  if grep -qiE "https?://|[[:space:]](src|href)=|fetch\(|XMLHttpRequest|WebSocket|import\(" "$page"; then
    grep -noiE ".{0,40}(https?://|[[:space:]](src|href)=|fetch\(|XMLHttpRequest|WebSocket|import\().{0,40}" "$page" | head -3 >&2
    fail "$name: the page contains a URL, a src/href attribute or a network call"
  fi
done
for p in small mid big; do
  tasks=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["nodes"])' "$tmp/$p.plan.json")
  echo "browser_report: $p: $tasks plan nodes, page $(stat -c %s "$tmp/$p.html") bytes"
done
[[ $(stat -c %s "$tmp/big.html") -lt 2000000 ]] || fail "the 30k-node page is $(stat -c %s "$tmp/big.html") bytes, not under 2 MB"

# 3. Headless Chromium.
run_chromium() {  # log file, then chromium arguments; a fresh profile every time
  local log=$1; shift
  local ud; ud=$(mktemp -d "$tmp/ud.XXXXXX")
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --disable-extensions \
    --disable-default-apps --host-resolver-rules="MAP * ~NOTFOUND" --user-data-dir="$ud" --hide-scrollbars \
    --enable-logging=stderr --v=0 "$@" 2>"$log"
}
for p in small mid big; do
  run_chromium "$tmp/$p.dom.log" --log-net-log="$tmp/$p.net.json" --window-size=1400,1000 --virtual-time-budget=5000 \
    --dump-dom "file://$tmp/$p.html" >"$tmp/$p.dom.html" || fail "chromium --dump-dom on $p failed"$'\n'"$(tail -5 "$tmp/$p.dom.log")"
  run_chromium "$tmp/$p.shot.log" --window-size=1400,1400 --virtual-time-budget=5000 --screenshot="$tmp/$p.png" \
    "file://$tmp/$p.html" >/dev/null || fail "chromium --screenshot on $p failed"$'\n'"$(tail -5 "$tmp/$p.shot.log")"
done
run_chromium "$tmp/find.log" --window-size=1400,1000 --virtual-time-budget=5000 --dump-dom \
  "file://$tmp/mid.html#find=$find_url" >"$tmp/find.dom.html" || fail "chromium on mid.html#find= failed"
run_chromium "$tmp/kernel.log" --dump-dom "file://$tmp/kernel.html" >"$tmp/kernel-dom.html" ||
  fail "chromium --dump-dom on the kernel report failed"
printf '<!DOCTYPE html><html><body><img src="http://example.invalid/control.png"></body></html>\n' >"$tmp/control.html"
run_chromium "$tmp/control.log" --log-net-log="$tmp/control-net.json" --dump-dom "file://$tmp/control.html" >/dev/null ||
  fail "chromium on the control page failed"
if [[ -n "${NPUPLAN_KEEP_SCREENSHOTS:-}" ]]; then
  mkdir -p "$NPUPLAN_KEEP_SCREENSHOTS" && cp "$tmp"/small.png "$tmp"/mid.png "$tmp"/big.png "$NPUPLAN_KEEP_SCREENSHOTS"/
fi

python3 - "$tmp" "$find_name" <<'PY'
import json, re, struct, sys, zlib
from html.parser import HTMLParser

tmp, find_name = sys.argv[1], sys.argv[2]
def fail(msg):
    print("browser_report: FAIL: " + msg, file=sys.stderr)
    sys.exit(1)

class Elements(HTMLParser):
    """Attributes of the elements with an id, and of <html>, as the browser left them."""
    def __init__(self):
        super().__init__()
        self.by_id, self.html, self.svgs, self.stack = {}, {}, {}, []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "html": self.html = a
        if "id" in a: self.by_id[a["id"]] = a
        if tag == "svg":
            self.stack.append(a.get("id", ""))
            self.svgs.setdefault(self.stack[-1], [])
        elif self.stack:
            self.svgs[self.stack[-1]].append((tag, a))
    def handle_endtag(self, tag):
        if tag == "svg" and self.stack: self.stack.pop()

def dom(path):
    p = Elements()
    p.feed(open(path, encoding="utf-8").read())
    return p

for page in ("small", "mid", "big"):
    d = dom(f"{tmp}/{page}.dom.html")
    if d.html.get("data-error"): fail(f"{page}: the page's script failed: {d.html['data-error']}")
    if d.html.get("data-report") != "ready": fail(f"{page}: the page's script did not finish (no data-report=ready)")
    tl, mem = d.by_id.get("timeline", {}), d.by_id.get("memory", {})
    if tl.get("data-state") != "ready": fail(f"{page}: the timeline was not drawn")
    lanes, tasks = int(tl.get("data-lanes", 0)), int(tl.get("data-tasks", 0))
    drawn = int(tl.get("data-drawn-tasks", 0)) + int(tl.get("data-drawn-columns", 0))
    arrows = int(tl.get("data-drawn-arrows", 0))
    buffers = int(mem.get("data-drawn-buffers", 0))
    print(f"browser_report: {page}: {lanes} lanes, {tasks} tasks ({tl.get('data-drawn-tasks')} boxes, "
          f"{tl.get('data-drawn-columns')} pixel columns), {arrows} arrows in {tl.get('data-drawn-bundles')} bundles, "
          f"{tl.get('data-critical')} critical-path tasks; memory: {buffers} buffers")
    if lanes == 0 or tasks == 0 or drawn == 0: fail(f"{page}: no lane or no task drawn")
    if page != "big" and arrows == 0: fail(f"{page}: no event arrow drawn")
    if int(tl.get("data-critical", 0)) == 0: fail(f"{page}: no critical-path task marked")
    if mem.get("data-state") != "ready" or buffers == 0: fail(f"{page}: the memory chart has no buffer")
    if "utilisation" not in d.svgs or not any(t == "rect" for t, _ in d.svgs["utilisation"]): fail(f"{page}: no utilisation bars")
    # Console: the page itself must log nothing (no error, no uncaught exception).
    for log in (f"{tmp}/{page}.dom.log", f"{tmp}/{page}.shot.log"):
        msgs = [l for l in open(log, errors="replace") if ":CONSOLE" in l]
        if msgs: fail(f"{page}: console messages: {msgs[:3]}")

f = dom(f"{tmp}/find.dom.html")
found = f.by_id.get("tl-found", {})
results = open(f"{tmp}/find.dom.html", encoding="utf-8").read()
if f.html.get("data-error"): fail("search: the script failed: " + f.html["data-error"])
if not re.search(r'id="tl-results"[^>]*>\s*<li>', results): fail(f"search for {find_name!r} listed nothing")
if f.by_id.get("timeline", {}).get("data-selected") != find_name:
    fail(f"search for {find_name!r} marked {f.by_id.get('timeline', {}).get('data-selected')!r}")
print(f"browser_report: search for {find_name!r}: listed and marked")

# --- Kernel report: one SPILL_OUT tick per spill of the report, a resident curve per chart.
k = dom(f"{tmp}/kernel-dom.html")
spills = json.load(open(f"{tmp}/kernel/fa_report.json"))["spills"]
charts = [i for i in k.svgs if i.startswith("cache-")]
ticks = sum(1 for i in charts for t, a in k.svgs[i] if t == "line" and a.get("class") == "spill-out")
curves = sum(1 for i in charts for t, a in k.svgs[i] if t == "polyline" and a.get("class") == "resident")
print(f"browser_report: kernel DOM: charts {sorted(charts)}, {ticks} SPILL_OUT ticks (report: {spills} spills)")
if "cache-L1" not in charts or curves != len(charts): fail("the kernel report has no L1 chart or a chart without its curve")
if ticks != spills: fail(f"{ticks} SPILL_OUT ticks drawn for {spills} spills")

# --- Screenshots: decode the PNG (8-bit RGB/RGBA, not interlaced) and count non-white pixels.
def png_stats(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n": fail(f"{path} is not a PNG")
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, typ = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if typ == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace: fail(f"unexpected PNG format depth={depth} type={ctype}")
            bpp = 3 if ctype == 2 else 4
        elif typ == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride, prev, rows = zlib.decompress(idat), w * bpp, None, []
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        prev = prev or bytearray(stride)
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], (prev[i - bpp] if i >= bpp else 0)
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    nonwhite, colours = 0, set()
    for line in rows[::2]:
        for x in range(0, w, 2):
            px = tuple(line[x * bpp:x * bpp + 3])
            colours.add(px)
            if px != (255, 255, 255): nonwhite += 1
    return w, h, nonwhite / max(1, (h // 2) * (w // 2)), len(colours)
for page in ("small", "mid", "big"):
    w, h, frac, colours = png_stats(f"{tmp}/{page}.png")
    print(f"browser_report: {page} screenshot {w}x{h}: {100 * frac:.1f}% non-white pixels, {colours} colours")
    if frac < 0.05 or colours < 12: fail(f"the {page} screenshot is blank")

# --- Network: requests the page initiated (not Chromium's own "not an origin" ones).
def page_requests(path):
    j = json.load(open(path))
    names = {v: k for k, v in j["constants"]["logEventTypes"].items()}
    out = []
    for e in j["events"]:
        prm = e.get("params") or {}
        if names.get(e["type"]) == "URL_REQUEST_START_JOB" and "url" in prm and prm.get("initiator") != "not an origin":
            out.append(prm["url"])
    return out
control = page_requests(f"{tmp}/control-net.json")
if not any("example.invalid" in u for u in control):
    fail("the net-log check does not see the control page's <img> request: the check is broken")
for page in ("small", "mid", "big"):
    mine = page_requests(f"{tmp}/{page}.net.json")
    if mine: fail(f"the {page} report made network requests: " + ", ".join(mine[:5]))
print("browser_report: no network request from the reports (control page request detected)")
PY
echo "browser_report: PASS"
