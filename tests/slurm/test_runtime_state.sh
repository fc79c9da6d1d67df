#!/usr/bin/env bash
# test_runtime_state.sh: the plugin's run-time predictor and shadow records
# on a real one-machine Slurm cluster (32 slurmd, 4 groups x 8 hosts x 2
# rails, Mode=shadow, RuntimePrediction=yes).
#
# Checked: slurmctld starts with no saved predictor state and says so; jobs
# that end are learned (prep/topognn's epilog_slurmctld) and the state file
# appears in StateSaveLocation (mode 0600, the predictor's header); the
# decision log gets end events, commit lines with wait_s and the shadow
# block (model and tree-switches) and placement-report shadow reads it;
# the plugin tells the engine the queue (topognn_queue.c): with the
# cluster fragmented, a heavy job's record says the hold was refused while
# fewer than 8 jobs wait, with the count it saw, and that the queue's
# predicted wait allowed it once 9 wait; with Policy=gnn the ensemble's
# learned hold gate decides that hold instead; after a slurmctld restart the
# state is loaded again (log line with the jobs learned); a corrupt state
# file and a symlink in its place are logged and ignored, slurmctld stays
# up and schedules.
#
# Needs root, the Slurm from scripts/build-slurm.sh and a build configured
# with --with-slurm-source. Environment: as tests/slurm/cluster.sh, plus
#   TOPOGNN_BUILD_DIR      build dir (default <repo>/_build/default)
#   TOPOGNN_PLUGIN_SO_DIR  dir of topology_topognn.so, prep_topognn.so
#   TOPOGNN_TEST_LOCK      a lock file taken for the whole test (e.g. the one
#                          bench/slurm.sh takes around each run), none: no lock
# Prints "N passed, N failed" last; exit 1 on failure.
set -euo pipefail

script_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd -- "$script_dir/../.." && pwd)
cluster="$script_dir/cluster.sh"

if [[ -n "${TOPOGNN_TEST_LOCK:-}" && "${TOPOGNN_TEST_LOCK}" != none && -z "${TOPOGNN_TEST_LOCKED:-}" ]]; then
    export TOPOGNN_TEST_LOCKED=1
    exec flock "$TOPOGNN_TEST_LOCK" "$0" "$@"
fi

build_dir=${TOPOGNN_BUILD_DIR:-$repo_root/_build/default}
so_dir=${TOPOGNN_PLUGIN_SO_DIR:-$build_dir/slurm-plugin/.libs}
export TOPOGNN_CLUSTER_DIR=${TOPOGNN_CLUSTER_DIR:-$repo_root/.local/cluster-runtime}
export TOPOGNN_CLUSTER_NODES=32
export TOPOGNN_TOPOLOGY_PLUGIN=topology/topognn
export TOPOGNN_PLUGIN_DIRS="$so_dir"

passed=0
failed=0
pass() { passed=$(( passed + 1 )); printf 'ok   - %s\n' "$*"; }
fail() { failed=$(( failed + 1 )); printf 'FAIL - %s\n' "$*"; }
finish() { printf '%d passed, %d failed\n' "$passed" "$failed"; (( failed == 0 )); }

work=$(mktemp -d "${TMPDIR:-/tmp}/topognn-runtime.XXXXXX")
chmod 755 "$work"
cleanup() {
    "$cluster" stop >/dev/null 2>&1 || true
    rm -rf -- "$work"
}
trap cleanup EXIT

"$repo_root/scripts/build-slurm.sh" >/dev/null
for f in "$so_dir/topology_topognn.so" "$so_dir/prep_topognn.so" \
         "$build_dir/slurm-plugin/fattree_json" "$build_dir/tools/placement-report"; do
    [[ -e "$f" ]] || { fail "missing $f (configure --with-slurm-source and make)"; finish; exit 1; }
done
"$build_dir/slurm-plugin/fattree_json" "groups=4,hosts=8,rails=2,spines=2,prefix=n,digits=3" \
    > "$work/graph.json"
cat > "$work/topognn.conf" <<EOF
# topognn.conf for tests/slurm/test_runtime_state.sh
GraphFile=$work/graph.json
Mode=shadow
RuntimePrediction=yes
DecisionLog=$work/decisions.jsonl
ClassRule=minnodes=2 class=heavy
EOF
printf 'PrEpPlugins=prep/script,prep/topognn\n' > "$work/extra.conf"
export TOPOGNN_CLUSTER_EXTRA_CONF="$work/extra.conf"
export TOPOGNN_CLUSTER_EXTRA_FILES="$work/topognn.conf"

eval "$("$cluster" env)"
if ! "$cluster" start; then
    fail "cluster start with topology/topognn"
    finish
    exit 1
fi
ctld_log="$TOPOGNN_CLUSTER_DIR/log/slurmctld.log"
state="$TOPOGNN_CLUSTER_DIR/state/topognn_runtime.state"

# run a job of N nodes for S seconds and wait until it left the queue
run_job() { # nodes seconds name
    local id deadline=$(( SECONDS + 60 ))
    id=$(timeout 10 sbatch --parsable --exclusive -N "$1" -t 2 -J "$3" --chdir="$work" \
         --output=/dev/null --wrap "sleep $2") || return 1
    id=${id%%;*}
    while (( SECONDS < deadline )); do
        [[ -z "$(timeout 10 squeue -h -j "$id" -o %i 2>/dev/null)" ]] && return 0
        sleep 0.5
    done
    return 1
}
# wait up to 20 s for a pattern in slurmctld.log (after line FROM)
log_has() { # pattern from
    local deadline=$(( SECONDS + 20 ))
    while (( SECONDS < deadline )); do
        tail -n +"$2" "$ctld_log" | grep -q -- "$1" && return 0
        sleep 0.5
    done
    return 1
}
lines() { wc -l < "$ctld_log"; }

if log_has 'no saved run-time predictor state at .*: it starts empty' 1; then
    pass "first start: no saved predictor state, logged"
else
    fail "first start: no 'starts empty' line in slurmctld.log"
fi

for k in 1 2 3; do
    run_job 10 1 "heavy-$k" || fail "job heavy-$k did not run and leave the queue"
done
deadline=$(( SECONDS + 20 ))
until [[ -f "$state" ]] || (( SECONDS > deadline )); do sleep 0.5; done
if [[ -f "$state" && ! -L "$state" ]] && [[ "$(stat -c %a "$state")" == 600 ]] &&
   head -n 1 "$state" | grep -q '^topognn-runtime'; then
    pass "jobs ended: the predictor state appeared in StateSaveLocation (0600, $(wc -c < "$state") bytes)"
else
    fail "no predictor state at $state: $(ls -l "$TOPOGNN_CLUSTER_DIR/state" 2>&1 | tr '\n' ' ')"
fi

ends=$(grep -c '"event":"end"' "$work/decisions.jsonl" 2>/dev/null || true)
shadowed=$(grep '"job_id"' "$work/decisions.jsonl" 2>/dev/null | grep '"wait_s"' |
           grep -c '"shadow":\[{"policy":"model".*"policy":"tree-switches"' || true)
if (( ends >= 3 && shadowed >= 3 )); then
    pass "decision log: $ends end events, $shadowed commit lines with wait_s and the shadow baselines"
else
    fail "decision log: $ends end events, $shadowed shadow commit lines: $(head -c 600 "$work/decisions.jsonl" 2>&1)"
fi
report=$("$build_dir/tools/placement-report" --decisions "$work/decisions.jsonl" shadow --json 2>&1 || true)
if python3 -c 'import json,sys; r=json.load(sys.stdin); sys.exit(0 if r["with_shadow"] >= 3 and r["ended"] >= 3 and len(r["baselines"]) == 2 else 1)' <<< "$report"; then
    pass "placement-report shadow reads the live log: $(python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["verdict"])' <<< "$report")"
else
    fail "placement-report shadow: $report"
fi

# ---- the queue seen by the hold rule (place_defer.c, PLACE_HOLD_QUEUE_JOBS 8) ----
# Four 5-node jobs (-t 2, predicted ~1 s from the jobs above, so expected to
# end "as long again as they have run") leave 3 nodes free per group. A
# heavy -N 8 job (--priority=TOP: evaluated at submit, ahead of the -N 20
# queue fillers that cannot start) spans 3 groups now and one group is
# predicted to free within its budget (-t 3: 180 s), later than its own
# predicted communication time. Its hold is refused with a short queue and
# allowed on the queue's predicted wait with 9 jobs waiting (Mode=shadow:
# Slurm's tree places it anyway; the commit line carries topognn's decision).
queue_jobs=()
for w in 'n[001-005]' 'n[009-013]' 'n[017-021]' 'n[025-029]'; do
    if id=$(timeout 10 sbatch --parsable --exclusive -N 5 -w "$w" -t 2 -J queue-frag \
            --chdir="$work" --output=/dev/null --wrap 'sleep 300'); then
        queue_jobs+=("${id%%;*}")
    fi
done
fill_queue() { # N: submit N more -N 20 jobs that stay pending
    local k id
    for (( k = 0; k < $1; k++ )); do
        if id=$(timeout 10 sbatch --parsable --exclusive -N 20 -t 5 -J queue-fill \
                --chdir="$work" --output=/dev/null --wrap 'sleep 1'); then
            queue_jobs+=("${id%%;*}")
        fi
    done
}
# the heavy probe's locality "why" from its commit line ("" when none)
probe_why() {
    local id deadline=$(( SECONDS + 30 ))
    id=$(timeout 10 sbatch --parsable --exclusive -N 8 -t 3 --priority=TOP -J queue-probe \
         --chdir="$work" --output=/dev/null --wrap 'sleep 1') || return 0
    id=${id%%;*}
    while (( SECONDS < deadline )); do
        grep -q "\"job_id\":$id," "$work/decisions.jsonl" 2>/dev/null &&
            [[ -z "$(timeout 10 squeue -h -j "$id" -o %i 2>/dev/null)" ]] && break
        sleep 0.5
    done
    grep "\"job_id\":$id," "$work/decisions.jsonl" 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    loc = (json.loads(line).get("decision") or {}).get("locality") or {}
    print(loc.get("why", ""))' || true
}
sleep 20 # the fragments' expected ends grow with their run time
fill_queue 3
why=$(probe_why)
if [[ "$why" == *"the queue's predicted 0 s (4 jobs waiting): placed now over "[2-4] ]]; then
    pass "short queue (3 pending + the job): the hold is refused, the engine saw the queue: $why"
else
    fail "short queue: locality why of the heavy probe: '$why'"
fi
fill_queue 5
from=$(lines)
why=$(probe_why)
if [[ "$why" == "best placement now spans "[2-4]" groups"*"and the queue's predicted "[1-9]*" s (9 jobs waiting)" ]]; then
    pass "loaded queue (8 pending + the job): held on the queue's predicted wait: $why"
else
    fail "loaded queue: locality why of the heavy probe: '$why'"
fi
# Mode=shadow: slurmctld's log names the hold that enforcing would make
if log_has 'shadow JobId=[0-9]*: topognn would hold it for locality: best placement now spans' "$from"; then
    pass "slurmctld's log: $(tail -n +"$from" "$ctld_log" | grep -o 'shadow JobId=[0-9]*: topognn would hold .*' | head -n 1)"
else
    fail "no shadow hold line in slurmctld's log: $(tail -n +"$from" "$ctld_log" | grep -i 'hold\|locality' | head -n 5)"
fi
# what the engine was told of the probe's duration, in its commit line's
# record: the limit (-t 3) and the prediction, never above it
told=$(grep '"name":"queue-probe"' "$work/decisions.jsonl" 2>/dev/null | tail -n 1 | python3 -c '
import json, sys
r = (json.load(sys.stdin).get("decision") or {}).get("request") or {}
print(r.get("time_limit_s"), 0 < r.get("predicted_run_s", 0) <= r.get("time_limit_s", 0))' 2>&1)
if [[ "$told" == "180.0 True" ]]; then
    pass "the record carries the probe's time limit (180 s) and a prediction within it"
else
    fail "the probe's request time_limit_s / predicted_run_s: '$told'"
fi
# Policy=gnn: the shipped ensemble's learned hold gate (models/default-hold.json,
# docs/gnn.md) decides the same hold in slurmctld, and the record says so
printf 'Policy=gnn\n' >> "$(dirname "$SLURM_CONF")/topognn.conf"
"$cluster" restart-ctld >/dev/null || true
why=$(probe_why)
if [[ "$why" == *"the learned hold gate gives a hold "[01].[0-9][0-9]* ]]; then
    pass "Policy=gnn: the ensemble's hold gate decided the hold in slurmctld: $why"
else
    fail "Policy=gnn: locality why of the heavy probe: '$why'"
fi
timeout 10 scancel "${queue_jobs[@]}" 2>/dev/null || true
deadline=$(( SECONDS + 30 ))
until [[ -z "$(timeout 10 squeue -h 2>/dev/null)" ]] || (( SECONDS > deadline )); do sleep 0.5; done

from=$(lines)
if "$cluster" restart-ctld >/dev/null &&
   log_has 'run-time predictor state loaded from .*: \([3-9]\|[1-9][0-9]\+\) jobs learned' "$from"; then
    pass "after a slurmctld restart: $(tail -n +"$from" "$ctld_log" | grep -o 'run-time predictor state loaded from .*' | head -n 1)"
else
    fail "restart: no 'state loaded' line: $(tail -n +"$from" "$ctld_log" | grep topognn | head -n 5)"
fi

# a corrupt file: logged, ignored, slurmctld schedules
printf 'topognn-runtime 1\ngarbage here\n' > "$state"
from=$(lines)
if "$cluster" restart-ctld >/dev/null && log_has 'ignoring the run-time predictor state' "$from" &&
   run_job 2 1 heavy-after-corrupt; then
    pass "a corrupt state file is logged and ignored; slurmctld schedules"
else
    fail "corrupt state: $(tail -n +"$from" "$ctld_log" | grep -i 'topognn\|fatal' | head -n 5)"
fi

# a symlink in its place is not followed
rm -f -- "$state"
ln -s /etc/passwd "$state"
from=$(lines)
if "$cluster" restart-ctld >/dev/null &&
   log_has 'cannot read the run-time predictor state .*it starts empty' "$from" &&
   run_job 2 1 heavy-after-link && [[ -f "$state" && ! -L "$state" ]] &&
   head -n 1 "$state" | grep -q '^topognn-runtime'; then
    pass "a symlink as the state file is not followed; the next save replaces it with a file"
else
    fail "symlink: $(tail -n +"$from" "$ctld_log" | grep -i 'topognn' | head -n 5); $(ls -l "$state" 2>&1)"
fi
"$cluster" stop >/dev/null 2>&1 || true
finish
