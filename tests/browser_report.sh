#!/usr/bin/env bash
# Browser test of `npuplan report` (docs/report.md):
#   tests/browser_report.sh path/to/npuplan
# 1. compiles the bundled example (examples/transformer_block.json) and writes
#    its HTML report; plans a generated FlashAttention-like kernel case that
#    spills and writes its kernel report;
# 2. static checks: the CSP meta forbids every fetch (default-src 'none'), the
#    page has no <script>, no http(s):// URL and no src=/href= attribute;
# 3. opens it in headless Chromium (Debian's `chromium`, installed with
#    `scripts/setup.sh --with browser` when missing) with background
#    networking off and every host name unresolvable:
#    --dump-dom: the timeline <svg id="timeline"> has task <rect>s, the memory
#    chart <svg id="memory"> has buffer <rect>s and the live-bytes polyline;
#    the kernel page has an L1 chart and one SPILL_OUT tick per reported spill;
#    --screenshot: the PNG is not blank (many non-white pixels, several colours);
#    --log-net-log: no request that the page initiated (Chromium's own
#    service requests carry initiator "not an origin" and are ignored). A
#    control page with an <img src="http://…"> must show up in the same check,
#    so the check itself is tested.
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

"$NPUPLAN" compile "$ROOT/examples/transformer_block.json" -o "$tmp/plan.json" >/dev/null
"$NPUPLAN" report "$tmp/plan.json" -o "$tmp/report.html"
[[ -s "$tmp/report.html" ]] || fail "no report written"
# A kernel plan too: a generated FlashAttention-like case that spills.
"$NPUPLAN" kernel gen --kind flash-attention --seq 8 --out "$tmp/fa.json"
mkdir -p "$tmp/kernel"
"$NPUPLAN" kernel plan "$tmp/fa.json" --out-dir "$tmp/kernel" >/dev/null
"$NPUPLAN" report "$tmp/kernel/fa_report.json" --case "$tmp/fa.json" -o "$tmp/kernel.html"

# 2. Static checks on the files themselves.
for page in "$tmp/report.html" "$tmp/kernel.html"; do
  grep -q "http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'" "$page" ||
    fail "$(basename "$page"): no CSP meta with default-src 'none'"
  if grep -qiE "<script|https?://|[[:space:]](src|href)=" "$page"; then
    grep -noiE ".{0,40}(<script|https?://|[[:space:]](src|href)=).{0,40}" "$page" | head -3 >&2
    fail "$(basename "$page"): the page contains a script, a URL or a src/href attribute"
  fi
done

# 3. Headless Chromium.
run_chromium() {  # user-data-dir, then chromium arguments
  local ud=$1; shift
  timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --disable-extensions --disable-default-apps --no-first-run \
    --host-resolver-rules="MAP * ~NOTFOUND" --user-data-dir="$ud" --hide-scrollbars "$@" 2>>"$tmp/chromium.log"
}
run_chromium "$tmp/ud1" --log-net-log="$tmp/net.json" --dump-dom "file://$tmp/report.html" >"$tmp/dom.html" ||
  fail "chromium --dump-dom failed (see below)"$'\n'"$(tail -5 "$tmp/chromium.log")"
run_chromium "$tmp/ud2" --window-size=1400,1400 --screenshot="$tmp/shot.png" "file://$tmp/report.html" >/dev/null ||
  fail "chromium --screenshot failed"$'\n'"$(tail -5 "$tmp/chromium.log")"
run_chromium "$tmp/ud4" --dump-dom "file://$tmp/kernel.html" >"$tmp/kernel-dom.html" ||
  fail "chromium --dump-dom on the kernel report failed"
printf '<!DOCTYPE html><html><body><img src="http://example.invalid/control.png"></body></html>\n' >"$tmp/control.html"
run_chromium "$tmp/ud3" --log-net-log="$tmp/control-net.json" --dump-dom "file://$tmp/control.html" >/dev/null ||
  fail "chromium on the control page failed"

python3 - "$tmp" <<'PY'
import json, struct, sys, zlib
from html.parser import HTMLParser

tmp = sys.argv[1]
def fail(msg):
    print("browser_report: FAIL: " + msg, file=sys.stderr)
    sys.exit(1)

# --- DOM: elements inside each <svg id=...>, as the browser parsed them.
class Svgs(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.svgs = [], {}
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg":
            self.stack.append(a.get("id", ""))
            self.svgs.setdefault(self.stack[-1], {"attrs": a, "children": []})
        elif self.stack:
            self.svgs[self.stack[-1]]["children"].append((tag, a))
    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag == "svg": self.stack.pop()
    def handle_endtag(self, tag):
        if tag == "svg" and self.stack: self.stack.pop()

p = Svgs()
p.feed(open(f"{tmp}/dom.html", encoding="utf-8").read())
def count(svg_id, tag, cls):
    if svg_id not in p.svgs: fail(f'no <svg id="{svg_id}"> in the DOM')
    return sum(1 for t, a in p.svgs[svg_id]["children"] if t == tag and cls in a.get("class", "").split())
for svg_id in ("timeline", "memory", "utilisation"):
    if svg_id not in p.svgs: fail(f'no <svg id="{svg_id}"> in the DOM')
    a = p.svgs[svg_id]["attrs"]
    if float(a.get("width", 0)) <= 0 or float(a.get("height", 0)) <= 0: fail(f"<svg id={svg_id}> has no size")
tasks, events = count("timeline", "rect", "task"), count("timeline", "line", "event")
tensors, live = count("memory", "rect", "tensor"), count("memory", "polyline", "live")
print(f"browser_report: DOM: timeline {tasks} task rects, {events} event arrows; memory {tensors} buffer rects, {live} live curve")
if tasks == 0: fail("the timeline has no task <rect>")
if events == 0: fail("the timeline has no event arrow")
if tensors == 0 or live != 1: fail("the memory chart has no buffer <rect> or no live-bytes curve")

# --- Kernel report: one SPILL_OUT tick per spill of the report, a resident curve per chart.
k = Svgs()
k.feed(open(f"{tmp}/kernel-dom.html", encoding="utf-8").read())
spills = json.load(open(f"{tmp}/kernel/fa_report.json"))["spills"]
charts = [i for i in k.svgs if i.startswith("cache-")]
ticks = sum(1 for i in charts for t, a in k.svgs[i]["children"] if t == "line" and a.get("class") == "spill-out")
curves = sum(1 for i in charts for t, a in k.svgs[i]["children"] if t == "polyline" and a.get("class") == "resident")
print(f"browser_report: kernel DOM: charts {sorted(charts)}, {ticks} SPILL_OUT ticks (report: {spills} spills)")
if "cache-L1" not in charts or curves != len(charts): fail("the kernel report has no L1 chart or a chart without its curve")
if ticks != spills: fail(f"{ticks} SPILL_OUT ticks drawn for {spills} spills")

# --- Screenshot: decode the PNG (8-bit RGB/RGBA, not interlaced) and count non-white pixels.
data = open(f"{tmp}/shot.png", "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n": fail("screenshot is not a PNG")
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
frac = nonwhite / max(1, (h // 2) * (w // 2))
print(f"browser_report: screenshot {w}x{h}: {100 * frac:.1f}% non-white pixels, {len(colours)} colours")
if frac < 0.02 or len(colours) < 8: fail("the screenshot is blank")

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
mine = page_requests(f"{tmp}/net.json")
if mine: fail("the report made network requests: " + ", ".join(mine[:5]))
print("browser_report: no network request from the report (control page request detected)")
PY
echo "browser_report: PASS"
