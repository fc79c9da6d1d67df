#!/bin/sh
# test_default_model.sh: the gnn policy works with no model named, and says
# which model it used.
#  - topognn-sim --policies gnn without --model loads the shipped model (the
#    source tree's models/<TOPOGNN_DEFAULT_MODEL>, as this runs uninstalled),
#    prints it, and every decision record names it;
#  - placement-report job shows the model of a decision, and for a plugin
#    line where Slurm's generic selection placed the job, the fallback reason
#    (not "no decision").
# (The plugin's Policy=gnn without ModelFile= is tested on a real cluster in
# tests/slurm/test_topognn.sh.) Prints "N passed, N failed".
set -u
B=${BUILD_DIR:-..}
S=$(cd "$(dirname "$0")/.." && pwd)
fx=${FIXTURES_DIR:-$S/tests/fixtures}
fabric=$fx/fabrics/dgx-h100-superpod.ibnetdiscover
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/check.sh"

eq() { [ "$1" = "$2" ] || { echo "  expected [$2], got [$1]"; return 1; }; }

model=$S/models/$(sed -n 's/^TOPOGNN_DEFAULT_MODEL=//p' "$S/configure.ac")
"$B/tools/topognn-sim" --ibnetdiscover "$fabric" --trace "$fx/traces/kth-sp2-head100.swf" \
	--policies gnn --decision-log "$tmp/d.log" > "$tmp/out" 2> "$tmp/err"
rc=$?
check "topognn-sim --policies gnn without --model: exit 0" eq "$rc" 0
check "it prints the shipped model" eq "$(sed -n 's/^gnn model: //p' "$tmp/out")" "$model"
check "the gnn row is in the table" grep -q '^gnn ' "$tmp/out"
check "all 100 decision records name the model" \
	eq "$(grep -c "\"model\":\"$model\"" "$tmp/d.log")" 100

"$B/tools/topognn-sim" --ibnetdiscover "$fabric" --trace "$fx/traces/kth-sp2-head100.swf" \
	--policies model,gnn --json > "$tmp/j" 2> /dev/null
check "--json carries the model" \
	eq "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["model"])' "$tmp/j")" "$model"

"$B/tools/placement-report" --ibnetdiscover "$fabric" --decisions "$tmp/d.log" --no-color \
	job 19 > "$tmp/j19"
check "placement-report job names the model" grep -qx "  model         $model" "$tmp/j19"

# a plugin DecisionLog line of a job Slurm placed itself, with the reason
cat > "$tmp/p.log" <<'EOF'
{"time":1700000000,"job_id":7,"name":"x","mode":"enforce","nodes":"a05-p1-dgx-01-c01","node_count":1,"groups":["su1"],"ngroups":1,"leaves":8,"running_jobs":0,"topognn":{"policy":"gnn","fallback":"it requires node n999, which the graph lacks"}}
EOF
"$B/tools/placement-report" --ibnetdiscover "$fabric" --decisions "$tmp/p.log" --no-color \
	job 7 > "$tmp/j7"
check "a plugin fallback line shows its reason" \
	grep -qx "  fallback      it requires node n999, which the graph lacks" "$tmp/j7"
check "and who placed it" \
	grep -q "placed .* by Slurm's generic selection (policy gnn fell back)" "$tmp/j7"
finish
