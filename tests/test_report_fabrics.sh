#!/bin/sh
# test_report_fabrics.sh: placement-report job shows a job's NVLink domains
# and its SHARP eligibility (text and JSON) on a generated fat-tree of 4
# groups of 4 hosts, each group one NVLink domain, SHARP on every leaf and
# on spines 1-2 (reached by the leaves of groups 1 and 3 only), with every
# communicating job a SHARP user (topognn-sim --sharp-share 1).
# Job 1 (4 hosts) fills group 1; jobs 2 and 3 (8 hosts each) start after
# it: model puts job 2 under the SHARP tree (groups 1 and 3), job 3 gets
# groups 2 and 4, whose leaves no SHARP spine joins.
# Prints "N passed, N failed".
set -u
B=${BUILD_DIR:-..}
tool=$B/tools/placement-report
sim=$B/tools/topognn-sim
fx=${FIXTURES_DIR:-$(dirname "$0")/fixtures}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/check.sh"

py() { # py FILE EXPR: a python expression over the JSON as d
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
eq() { [ "$1" = "$2" ] || { echo "  expected [$2], got [$1]"; return 1; }; }

F="groups=4,hosts=4,rails=1,oversub=2,spines=4,sharp=2,gpus=4,nvl=4,prefix=n,digits=2"
cat > "$tmp/t.swf" <<'SWF'
1 0 0 100 4 -1 -1 4 100 -1 1 1 1 -1 -1 -1 -1 -1
2 200 0 100 8 -1 -1 8 100 -1 1 1 1 -1 -1 -1 -1 -1
3 201 0 100 8 -1 -1 8 100 -1 1 1 1 -1 -1 -1 -1 -1
SWF
"$sim" --fattree "$F" --trace "$tmp/t.swf" --comm "$fx/comm" --policies model \
	--sharp-share 1 --decision-log "$tmp/d.log" > "$tmp/sim.out" 2>&1
check "topognn-sim --sharp-share: 3 decisions" eq "$(grep -c '"chosen"' "$tmp/d.log")" 3
check "the records mark SHARP users" eq "$(grep -c '"sharp":true' "$tmp/d.log")" 3
"$sim" --fattree "$F" --trace "$tmp/t.swf" --sharp-share 2 > /dev/null 2> "$tmp/e1"
check "--sharp-share 2: refused" grep -q 'sharp-share wants a share 0..1, not "2"' "$tmp/e1"

R="$tool --decisions $tmp/d.log --fattree $F"
$R --json job 1 > "$tmp/j1.json"
check "job 1: one NVLink domain" eq "$(py "$tmp/j1.json" 'd["nvlink_domains"], d["nnvlink_domains"]')" "('nvl1', 1)"
check "job 1: SHARP user, eligible (its leaf alone)" \
	eq "$(py "$tmp/j1.json" 'd["sharp_user"], d["sharp_eligible"]')" "(True, True)"
$R --json job 2 > "$tmp/j2.json"
check "job 2: groups 1 and 3 (under SHARP spines)" eq "$(py "$tmp/j2.json" 'd["groups"]')" "su1,su3"
check "job 2: two domains, eligible" \
	eq "$(py "$tmp/j2.json" 'd["nvlink_domains"], d["sharp_eligible"]')" "('nvl1,nvl3', True)"
$R --json job 3 > "$tmp/j3.json"
check "job 3: groups 2 and 4, not eligible" \
	eq "$(py "$tmp/j3.json" 'd["groups"], d["sharp_eligible"]')" "('su2,su4', False)"
$R --no-color job 3 > "$tmp/j3.txt"
check "job 3 text: the nvlink line" grep -q '^  nvlink        2 domains: nvl2,nvl4$' "$tmp/j3.txt"
check "job 3 text: the sharp line" \
	grep -q '^  sharp         not eligible (no SHARP tree joins its leaves); a SHARP user$' "$tmp/j3.txt"
$R --no-color job 2 > "$tmp/j2.txt"
check "job 2 text: eligible" \
	grep -q '^  sharp         eligible (under one SHARP aggregation tree); a SHARP user$' "$tmp/j2.txt"

finish
