#!/bin/sh
# test_report_picture.sh: placement-report's picture as a browser shows it.
# Renders the --html page of a SuperPOD decision log (cut while jobs 3, 4,
# 25 and 60 run) in headless Chromium, then asserts on what the page shows:
# the DOM Chromium built (group labels and occupancy, every host of job 4
# tagged with it, the legend) and the pixels of the screenshot (job 4's
# hosts painted in job 4's legend colour, an idle host grey).
# Skips (77) when Chromium is not installed (scripts/deps.sh installs it).
set -u
B=${BUILD_DIR:-..}
tool=$B/tools/placement-report
sim=$B/tools/topognn-sim
fx=${FIXTURES_DIR:-$(dirname "$0")/fixtures}
fabric=$fx/fabrics/dgx-h100-superpod.ibnetdiscover
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/check.sh"
. "$(dirname "$0")/chrome.sh"
[ -n "$browser" ] || { echo "skip - chromium not installed"; exit 77; }

G="--ibnetdiscover $fabric"
"$sim" $G --trace "$fx/traces/kth-sp2-head100.swf" --comm "$fx/comm" --policies model \
	--decision-log "$tmp/d.log" > /dev/null 2>&1
head -n 120 "$tmp/d.log" > "$tmp/part.log"
"$tool" --decisions "$tmp/part.log" $G --html "$tmp/c.html" --svg "$tmp/c.svg" cluster > /dev/null
check "html and svg written" test -s "$tmp/c.html" -a -s "$tmp/c.svg"
check "the svg is well-formed XML" python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$tmp/c.svg"

chrome --dump-dom "file://$tmp/c.html" > "$tmp/dom.html"
check "chromium rendered the page" grep -q '<svg' "$tmp/dom.html"
check "DOM: the eight groups are labelled" \
	eval 'for g in su1 su2 su3 su4 su5 su6 su7 su8; do grep -q "class=\"gname\">$g</text>" "$tmp/dom.html" || exit 1; done'
check "DOM: su4 shows 17/17 busy" grep -q 'class="gocc">17/17 busy</text>' "$tmp/dom.html"
check "DOM: 17 hosts carry job 4" eval '[ "$(grep -o "data-job=\"4\"><title>" "$tmp/dom.html" | wc -l)" -eq 17 ]'
check "DOM: a08-p1-dgx-04-c01 is job 4's" grep -q 'data-host="a08-p1-dgx-04-c01" data-job="4"' "$tmp/dom.html"
check "DOM: the legend lists job 4" grep -q 'job 4: 17 hosts, 1 group, 4 leaves, heavy, model' "$tmp/dom.html"
check "DOM: 9 spine switches" eval '[ "$(grep -o "class=\"switch spine\"" "$tmp/dom.html" | wc -l)" -eq 9 ]'

chrome --window-size=1400,700 --screenshot="$tmp/c.png" "file://$tmp/c.html" > /dev/null
check "screenshot taken" test -s "$tmp/c.png"
# where the svg put hosts, and the colours it gave them
cat > "$tmp/png.py" <<'PY'
import re, sys

from png_pixels import png_pixels

svg = open(sys.argv[2]).read()
px = png_pixels(sys.argv[1])[0]
def host(name):
    m = re.search(r'data-host="%s"[^>]*>.*?<rect x="(\d+)" y="(\d+)"[^>]*fill="#([0-9a-f]{6})"' % re.escape(name), svg)
    return int(m.group(1)), int(m.group(2)), tuple(int(m.group(3)[i:i + 2], 16) for i in (0, 2, 4))
legend = re.search(r'class="legend-job" data-job="4"><rect[^>]*fill="#([0-9a-f]{6})"', svg).group(1)
legend = tuple(int(legend[i:i + 2], 16) for i in (0, 2, 4))
bad = 0
for name, want in (("a08-p1-dgx-04-c01", legend), ("a08-p1-dgx-04-c17", legend),
                   ("b05-p1-dgx-05-c05", (0xe4, 0xe4, 0xe0))):
    x, y, fill = host(name)
    got = px(x + 4, y + 4)
    close = all(abs(g - w) <= 6 for g, w in zip(got, want))
    print("  %s at (%d,%d): painted %s, expected %s" % (name, x + 4, y + 4, got, want))
    bad += not close
sys.exit(1 if bad else 0)
PY
check "pixels: job 4's hosts in its legend colour, an idle host grey" \
	env PYTHONPATH="$(dirname "$0")" python3 "$tmp/png.py" "$tmp/c.png" "$tmp/c.svg"

finish
