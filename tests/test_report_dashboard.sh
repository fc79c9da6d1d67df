#!/bin/sh
# test_report_dashboard.sh: placement-report dashboard, the Grafana dashboard
# (contrib/grafana/topognn.json) as a static HTML page, in headless Chromium.
# The data: scripts/demo.sh's decision log (the gnn policy, shipped model, on
# the first 300 KTH SP2 jobs on the DGX H100 SuperPOD in examples/) and a
# node report. Asserts on the DOM Chromium built: as many panels as the
# Grafana JSON, with its titles in its order, each drawn (an SVG chart) or
# saying why not; nothing the page loads from outside; then on the
# screenshot's pixels (the heatmap's orange and line colours are painted).
# Skips (77) when Chromium is not installed (scripts/deps.sh installs it).
set -u
B=${BUILD_DIR:-..}
top=$(cd "$(dirname "$0")/.." && pwd)
tool=$B/tools/placement-report
sim=$B/tools/topognn-sim
fabric=$top/examples/superpod/dgx-h100-superpod.ibnetdiscover
kth=$top/examples/traces/KTH-SP2-1996-2.1-cln.swf.gz
dash=$top/contrib/grafana/topognn.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/check.sh"
. "$(dirname "$0")/chrome.sh"
[ -n "$browser" ] || { echo "SKIP: chromium not installed (scripts/deps.sh)"; exit 77; }


"$sim" --ibnetdiscover "$fabric" --trace "$kth" --jobs 300 --policies gnn \
	--decision-log "$tmp/d.log" > /dev/null 2>&1
mkdir "$tmp/reports"
cat > "$tmp/reports/job-4.dgx-001.json" <<'JSON'
{"job_id": "4", "node": "dgx-001", "time": 1764435573, "from": "prolog",
 "irq": {"mode": "enforce", "status": "error", "error": "/proc/interrupts: unreadable",
         "findings": [{"kind": "shared-core"}, {"kind": "shared-core"}]}}
JSON
"$tool" --decisions "$tmp/d.log" --ibnetdiscover "$fabric" --node-reports "$tmp/reports" \
	dashboard --html "$tmp/dash.html" 2> "$tmp/err"
check "placement-report dashboard --html writes the page" test -s "$tmp/dash.html"
check "self-contained: no script, no stylesheet, image or frame fetched" \
	eval '! grep -Eiq "<script|<link|<img|<iframe| src=|@import|url\(" "$tmp/dash.html"'

chrome --dump-dom "file://$tmp/dash.html" > "$tmp/dom.html"
check "chromium rendered the page" grep -q '<section class="panel' "$tmp/dom.html"
python3 - "$dash" "$tmp/dom.html" > "$tmp/titles.out" <<'PY'
import html, json, re, sys
want = [p["title"] for p in json.load(open(sys.argv[1]))["panels"]]
dom = open(sys.argv[2]).read()
got = [html.unescape(t) for t in re.findall(r'<h2 class="title">(.*?)</h2>', dom)]
drawn = len(re.findall(r'<section class="panel[^"]*" id="panel-\d+"><h2 class="title">[^<]*</h2>\s*(<svg|<p class="nodata")', dom))
print("grafana %d panels, page %d, drawn or explained %d" % (len(want), len(got), drawn))
for w, g in zip(want, got):
    if w != g:
        print("differs: grafana %r page %r" % (w, g))
sys.exit(0 if want == got and drawn == len(want) else 1)
PY
rc=$?
sed 's/^/  | /' "$tmp/titles.out"
check "DOM: the Grafana dashboard's panels, count and titles in order" test $rc -eq 0
nsvg=$(grep -c '<svg class="chart"' "$tmp/dom.html")
check "DOM: 16 panels drawn (the demo log, the graph and a node report give every one data): $nsvg" \
	test "$nsvg" -eq 16
check "DOM: the node's enforce failure is shown" grep -q '>dgx-001 enforce</text>' "$tmp/dom.html"
check "DOM: 2 shared-core findings on dgx-001" \
	grep -q '>dgx-001 shared-core</text>.*>2</text>' "$tmp/dom.html"

chrome --window-size=1280,2600 --screenshot="$tmp/dash.png" "file://$tmp/dash.html" > /dev/null
check "screenshot taken" test -s "$tmp/dash.png"
env PYTHONPATH="$(dirname "$0")" python3 - "$tmp/dash.png" > "$tmp/px.out" <<'PY'
import sys
from png_pixels import png_pixels
px, w, h = png_pixels(sys.argv[1])
colours = {px(x, y) for y in range(0, h, 2) for x in range(0, w, 2)}
orange = sum(1 for r, g, b in colours if r > 200 and 60 < g < 190 and b < 120)
print("%d distinct colours sampled, %d orange-ish (the latency heatmap)" % (len(colours), orange))
sys.exit(0 if len(colours) > 20 and orange > 0 else 1)
PY
rc=$?
sed 's/^/  | /' "$tmp/px.out"
check "screenshot: charts painted in colour, the heatmap's orange among them" test $rc -eq 0
finish
