#!/usr/bin/env bash
# The main job on the bundled example cluster, from a fresh clone on a
# Debian machine, in any directory: install the dependencies, build, discover
# the real DGX H100 SuperPOD fabric in examples/, print its summary and the
# topology.conf it implies, compare Slurm's placement policies (linear, tree)
# with topognn's (model, gnn with the shipped model) on 1,000 jobs of the KTH
# SP2 log, then write a decision log of the gnn policy and show it with
# placement-report: the cluster as a picture (SVG) and a page (HTML), and one
# heavy job that spans groups, and the Grafana dashboard's panels as a static
# page. Everything it writes goes to _build/demo/.
# Needs nothing outside the checkout (examples/ holds the fabric and traces).
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
start=$SECONDS
build=$top/_build/default
out=$top/_build/demo

step() { printf '\n== %s  (%ds)\n' "$*" $((SECONDS - start)); }

# run LOG WHAT PATTERN CMD...: CMD's output goes to LOG; every 5 s a line
# says how many lines of LOG match PATTERN (configure's checks, make's "CC"
# lines), so a build is never a silent minute. On failure: LOG's tail.
run() {
	local log=$1 what=$2 pattern=$3 last=-1 n
	shift 3
	"$@" > "$log" 2>&1 &
	local pid=$! t=0
	while kill -0 "$pid" 2>/dev/null; do
		sleep 1
		(((t += 1) % 5 == 0)) || continue
		n=$(grep -c -- "$pattern" "$log" 2>/dev/null || true)
		if [[ $n != "$last" ]]; then
			printf '   %s: %d (%ds)\n' "$what" "$n" $((SECONDS - start))
			last=$n
		fi
	done
	if ! wait "$pid"; then
		tail -n 30 "$log" >&2
		echo "demo: failed; the whole log is $log" >&2
		exit 1
	fi
}

step "dependencies (scripts/deps.sh)"
scripts/deps.sh

step "build (autogen, configure, make -j2 in _build/default)"
mkdir -p "$build"
if [[ ! -f $build/config.status || configure.ac -nt $build/config.status ]]; then
	run "$build/autogen.log" "autogen: lines of output" . ./autogen.sh
	run "$build/configure.log" "configure: checks done" '^checking' \
		sh -c 'cd "$1" && "$2/configure"' sh "$build" "$top"
fi
run "$build/make.log" "make -j2: files compiled or linked" '^ *\(CC\|CCLD\) ' make -C "$build" -j2
echo "   built"
bin=$build/tools
fabric=examples/superpod/dgx-h100-superpod.ibnetdiscover
kth=examples/traces/KTH-SP2-1996-2.1-cln.swf.gz

step "topognn-discover --ibnetdiscover $fabric --summary"
"$bin/topognn-discover" --ibnetdiscover "$fabric" --summary

step "the topology.conf an admin would otherwise write by hand (first lines)"
"$bin/topognn-discover" --ibnetdiscover "$fabric" --topology-conf tree | head -n 15

step "placement on this fabric: 1,000 KTH SP2 jobs, each policy (bench/placement --quick)"
"$build/bench/placement" --quick

step "a decision log: the gnn policy (shipped model) on the first 300 KTH jobs"
mkdir -p "$out"
"$bin/topognn-sim" --ibnetdiscover "$fabric" --trace "$kth" --jobs 300 --policies gnn \
	--decision-log "$out/decisions.jsonl" > "$out/sim.txt" 2> "$out/sim.err" || {
	cat "$out/sim.err" >&2
	exit 1
}
cat "$out/sim.txt"
echo "   $out/decisions.jsonl: $(wc -l < "$out/decisions.jsonl") lines"

# The moment to look at: the start of the heavy job spanning groups that
# found the busiest cluster (most jobs starting before it and ending after).
read -r job at < <(python3 - "$out/decisions.jsonl" <<'EOF'
import json, sys
recs, ends = [], {}
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d.get("event") == "end":
        ends[d["job"]] = d["timestamp"]
    elif d.get("ok"):
        recs.append(d)
def busy(r):
    t = r["timestamp"]
    return sum(1 for o in recs if o["timestamp"] <= t < ends.get(o["job"], 1e30))
heavy = [r for r in recs if r["request"]["comm"]["class"] == "heavy" and r["chosen"]["groups"] > 1]
best = max(heavy or recs, key=busy)
print(best["job"], best["timestamp"])
EOF
)
G=(--ibnetdiscover "$fabric" --decisions "$out/decisions.jsonl" --at "$at")

step "placement-report cluster, at the start of job $job"
"$bin/placement-report" "${G[@]}" --no-color --svg "$out/cluster.svg" --html "$out/cluster.html" cluster

step "placement-report job $job (a heavy job that spans groups)"
"$bin/placement-report" "${G[@]}" --no-color job "$job"

step "placement-report dashboard: the Grafana dashboard's panels as a page"
"$bin/placement-report" --ibnetdiscover "$fabric" --decisions "$out/decisions.jsonl" \
	dashboard --html "$out/dashboard.html"

step "done"
echo "picture: $out/cluster.svg"
echo "page:    $out/cluster.html"
echo "dashboard: $out/dashboard.html (contrib/grafana/topognn.json in Grafana)"
echo "decision log: $out/decisions.jsonl (placement-report --help for more views)"
