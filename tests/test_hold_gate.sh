#!/bin/sh
# test_hold_gate.sh: the learned hold gate end to end, from the command line
# (docs/gnn.md, "The hold gate"). topognn-sim --emit-holds writes the
# lookahead teacher's hold samples under this build's feature names;
# topognn-train --holds fits the gate from them, the same bytes twice; an
# ensemble naming it makes gnn+pred's holds the gate's (its probability in
# the decision log); bad sample files are refused naming file, line and
# problem; placement-report job shows what the gate weighed and which
# decision held a job, history the holds against their predicted waits. Prints "N passed, N failed".
set -u
B=${BUILD_DIR:-..}
S=$(cd "$(dirname "$0")/.." && pwd)
fx=$S/tests/fixtures
sim=$B/tools/topognn-sim
train=$B/tools/topognn-train
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hold.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/check.sh"

# 400 KTH jobs on a 256-host 4:1 fat-tree: about a hundred weighed holds
run() { # run POLICY ARGS...
	p=$1
	shift
	"$sim" --fattree groups=8,hosts=32,rails=4,oversub=4 --scale 2 \
		--trace "$S/examples/traces/KTH-SP2-1996-2.1-cln.swf.gz" --comm "$fx/comm" \
		--jobs 400 --seed 1 --policies "$p" "$@" > "$tmp/out" 2> "$tmp/err"
}
columns() { # every sample line: 12 features and 2 objectives, numbers
	awk 'NR > 1 { if (NF != 14) exit 1; for (i = 1; i <= NF; i++)
		if ($i !~ /^-?[0-9.]+(e[-+]?[0-9]+)?$/) exit 1; n++ }
		END { exit !(n >= 50) }' "$1"
}

check "topognn-sim --emit-holds under lookahead-model+pred" \
	run lookahead-model+pred --emit-holds "$tmp/h.txt"
check "the header names this build's features, then j_hold and j_start" \
	test "$(head -1 "$tmp/h.txt")" = "# topognn-holds 1: analytic_hold better_set wait_per_gain groups_saved comm_share drain_per_wait wait_per_duration budget_left queue_jobs_log queue_hosts_share duration_per_running wait_per_running j_hold j_start"
check "at least 50 samples of 14 numbers each" columns "$tmp/h.txt"
check "topognn-train --holds writes a gate" \
	sh -c "\"$train\" --holds \"$tmp/h.txt\" --out \"$tmp/g1.json\" 2>/dev/null"
"$train" --holds "$tmp/h.txt" --out "$tmp/g2.json" 2>/dev/null
check "training again gives the same bytes" cmp -s "$tmp/g1.json" "$tmp/g2.json"
check "the gate file is a topognn-hold, version 1" \
	grep -q '"format": "topognn-hold"' "$tmp/g1.json"

# an ensemble of one shipped member and the gate: gnn+pred's holds are the gate's
cp "$S/models/default-1.json" "$tmp/m.json"
printf '{"format": "topognn-ensemble", "version": 1, "models": ["m.json"], "hold": "g1.json"}\n' \
	> "$tmp/ens.json"
check "gnn+pred runs with the gated ensemble" \
	run gnn+pred --model "$tmp/ens.json" --decision-log "$tmp/d.log"
check "its holds carry the gate's probability in the decision log" \
	grep -q '"hold_gate": *0\.[0-9]' "$tmp/d.log"
check "and the why names the gate" grep -q 'learned hold gate gives a hold' "$tmp/d.log"
check "and the features it weighed, by name" \
	grep -q '"hold_features": *{"analytic_hold": *[01]\.0*, *"better_set": *1\.0*, *"wait_per_gain"' "$tmp/d.log"

# a DAgger round: dagger-gnn+pred runs the student (gnn+pred with the gate)
# and has the teacher label the holds it weighed with a better set
run dagger-gnn+pred,gnn+pred --model "$tmp/ens.json" --json --emit-holds "$tmp/dag.txt"
same_run() { # every metric but the latencies equal in both policies' runs
	python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))["policies"]
a, b = p["dagger-gnn+pred"], p["gnn+pred"]
diff = [k for k in a if k not in ("decision_p50_us", "decision_p99_us", "refresh_p99_us") and a[k] != b[k]]
print(len(a) > 20 and a["deferrals"] > 0 and not diff, diff)' "$1"
}
check "dagger-gnn+pred follows the student: its run is gnn+pred's, metric for metric" \
	test "$(same_run "$tmp/out" 2>&1)" = "True []"
labelled() { # at least 50 samples, every one with a better set
	columns "$1" && awk 'NR > 1 && $2 != 1 { exit 1 }' "$1"
}
check "and the teacher labelled at least 50 of its holds, each with a better set" \
	labelled "$tmp/dag.txt"
check "topognn-train --holds takes the teacher's and the student's samples together" \
	sh -c "\"$train\" --holds \"$tmp/h.txt\" --holds \"$tmp/dag.txt\" --out \"$tmp/g3.json\" 2>&1 |
		grep -q 'hold gate from [0-9]* samples'"

# placement-report job shows what the gate weighed, and a held job's hold
rep=$B/tools/placement-report
gated=$(grep '"hold_gate"' "$tmp/d.log" | head -1 | sed 's/^{"job": *\([0-9]*\).*/\1/')
held=$(grep '"deferred": *true' "$tmp/d.log" | head -1 | sed 's/^{"job": *\([0-9]*\).*/\1/')
"$rep" --decisions "$tmp/d.log" --no-color job "$gated" > "$tmp/j.txt" 2>&1
"$rep" --decisions "$tmp/d.log" --json job "$held" > "$tmp/h.json" 2>&1
check "placement-report job shows the gate's probability and the features by name" \
	sh -c "grep -q '^ *hold gate  *0\.[0-9][0-9] (the learned gate holds above 0.50) on:' '$tmp/j.txt' &&
		grep -q '^ *analytic_hold [01], better_set 1, wait_per_gain ' '$tmp/j.txt' &&
		grep -q '^ *why  *.*learned hold gate gives a hold' '$tmp/j.txt'"
check "placement-report job shows what the engine was told of the job's run time" \
	grep -q '^ *run time  *predicted [0-9.]* s of a [0-9.]* s limit$' "$tmp/j.txt"
run_time_json() { # --json: the prediction and the limit, the prediction not above it
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["request"]
print(0 < r["predicted_run_s"] <= r["time_limit_s"])' "$1"
}
check "and so does --json" test "$(run_time_json "$tmp/h.json" 2>&1)" = True
held_json() { # what --json says of the hold: decisions, deferred, a gate, a why
	python3 -c 'import json, sys
h = json.load(open(sys.argv[1]))["held"]
f = h["first"]
print(h["decisions"] >= 1, f["deferred"], 0 <= f["hold_gate"] <= 1, f["expected_wait_s"] > 0,
      "wait_per_gain" in f["hold_features"], "learned hold gate" in f["why"])' "$1"
}
check "a held job's report names the decision that held it (--json)" \
	test "$(held_json "$tmp/h.json" 2>&1)" = "True True True True True True"
"$rep" --decisions "$tmp/d.log" --no-color history > "$tmp/hist.txt" 2>&1
check "placement-report history counts the holds and the wait they got against the promise" \
	sh -c "grep -q '^  holds  *[1-9][0-9]* jobs\{0,1\} held for locality, [0-9]* placed over the groups they waited for' '$tmp/hist.txt' &&
		grep -q 'wait got / predicted when held: median [0-9.]*x' '$tmp/hist.txt'"

run gnn+pred --model "$S/models/default-1.json" --decision-log "$tmp/d0.log"
check "a member alone has no gate: no hold_gate in its log" \
	sh -c "! grep -q hold_gate '$tmp/d0.log'"

# bad sample files: file, line and problem
refused() { # refused FILE TEXT: topognn-train fails, saying TEXT
	! "$train" --holds "$1" --out "$tmp/bad.json" 2> "$tmp/err" && grep -qF "$2" "$tmp/err" &&
		[ ! -e "$tmp/bad.json" ]
}
echo "something else" > "$tmp/b1.txt"
check "a file that is not hold samples" refused "$tmp/b1.txt" "b1.txt:1: not a hold sample file"
sed '1s/groups_saved/groups_kept/' "$tmp/h.txt" > "$tmp/b2.txt"
check "a column of other features" refused "$tmp/b2.txt" \
	'b2.txt:1: column 4 is "groups_kept", this topognn builds "groups_saved" there'
sed '3s/^[^ ]* [^ ]* [^ ]* [^ ]* [^ ]*/1 1 0.5 0.5 x/' "$tmp/h.txt" > "$tmp/b3.txt"
check "a word where a number belongs" refused "$tmp/b3.txt" "b3.txt:3: column 5: expected a number"
head -5 "$tmp/h.txt" > "$tmp/b4.txt"
check "too few samples to fit" refused "$tmp/b4.txt" "the gate needs at least 24"
finish
