#!/usr/bin/env bash
# test_topognn.sh: topology/topognn (and prep/topognn) on a real one-machine
# Slurm cluster: 32 slurmd, a generated fabric of 4 groups x 8 hosts x 2 rails
# (su1 = n001-n008, su2 = n009-n016, su3 = n017-n024, su4 = n025-n032).
# Jobs are plain `sbatch --exclusive`; every check reads the node list Slurm
# really allocated (squeue) or the decision log / slurmctld log.
#
# Checked: sinfo and scontrol show topology with the plugin loaded; heavy
# jobs inside one group when one fits, fewest groups when none does; light
# jobs fill fragments; -w, --exclude, --switches; drained and down nodes
# avoided; committed decisions in the DecisionLog and the plan in the prolog
# environment (SPANK_TOPOGNN_GROUPS); shadow mode leaves topology/tree's choice and
# logs topognn's; a bad graph file leaves slurmctld up and scheduling;
# a bad graph or topognn.conf key is logged once per slurmctld start;
# restarting slurmctld keeps working; LocalityWait: a heavy job that would
# span two groups waits for one to free and then runs inside it (a short
# job behind it backfills and is recorded second in the queue), and one
# whose group does not free in time runs over two when its budget is spent;
# Policy=gnn without ModelFile= (after scontrol reconfigure) uses the shipped
# model and names it; a job Slurm places itself (--contiguous) carries the
# reason in the decision log.
#
# Needs root, the Slurm from scripts/build-slurm.sh and a build configured
# with --with-slurm-source (the plugins and the fattree_json helper).
# Environment: as tests/slurm/cluster.sh, plus
#   TOPOGNN_BUILD_DIR   build dir with slurm-plugin/ built (default <repo>/_build/default, as scripts/test.sh builds)
#   TOPOGNN_PLUGIN_SO_DIR  dir holding topology_topognn.so and prep_topognn.so
#                       (default $TOPOGNN_BUILD_DIR/slurm-plugin/.libs)
# Prints "N passed, N failed" last; exit 1 on failure.
set -euo pipefail

script_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd -- "$script_dir/../.." && pwd)
cluster="$script_dir/cluster.sh"

build_dir=${TOPOGNN_BUILD_DIR:-$repo_root/_build/default}
so_dir=${TOPOGNN_PLUGIN_SO_DIR:-$build_dir/slurm-plugin/.libs}
export TOPOGNN_CLUSTER_DIR=${TOPOGNN_CLUSTER_DIR:-$repo_root/.local/cluster-topognn}
export TOPOGNN_CLUSTER_NODES=32
export TOPOGNN_TOPOLOGY_PLUGIN=topology/topognn
export TOPOGNN_PLUGIN_DIRS="$so_dir"

readonly PER_GROUP=8 RUN_TIMEOUT=30

passed=0
failed=0
pass() { passed=$(( passed + 1 )); printf 'ok   - %s\n' "$*"; }
fail() { failed=$(( failed + 1 )); printf 'FAIL - %s\n' "$*"; }
finish() { printf '%d passed, %d failed\n' "$passed" "$failed"; (( failed == 0 )); }

work=$(mktemp -d "${TMPDIR:-/tmp}/topognn-slurm.XXXXXX")
chmod 755 "$work"
cleanup() {
    "$cluster" stop >/dev/null 2>&1 || true
    rm -rf -- "$work"
}
trap cleanup EXIT

# ---- setup -----------------------------------------------------------------
"$repo_root/scripts/build-slurm.sh" >/dev/null
for f in "$so_dir/topology_topognn.so" "$so_dir/prep_topognn.so" \
         "$build_dir/slurm-plugin/fattree_json"; do
    [[ -e "$f" ]] || { fail "missing $f (configure --with-slurm-source and make)"; finish; exit 1; }
done

"$build_dir/slurm-plugin/fattree_json" "groups=4,hosts=$PER_GROUP,rails=2,spines=2,prefix=n,digits=3" \
    > "$work/graph.json"
printf '{ "format": "topognn-graph", "version": 1, "vertices": [\n  { "kind": "host" }\n' \
    > "$work/bad-graph.json"
plan_log="$work/plan.log"
cat > "$work/prolog.sh" <<EOF
#!/bin/sh
echo "\$SLURM_JOB_ID \${SPANK_TOPOGNN_GROUPS:-none} \${SPANK_TOPOGNN_PLAN:-none}" >> "$plan_log"
exit 0
EOF
chmod 755 "$work/prolog.sh"
write_topognn_conf() { # file mode graph [extra line]
    cat > "$1" <<EOF
# topognn.conf for tests/slurm/test_topognn.sh
GraphFile=$3
Mode=$2
${4:-}
DecisionLog=$work/decisions.jsonl
Candidates=32
ClassRule=name=^light class=light
ClassRule=minnodes=2 class=heavy
# nothing listens on port 1: Prometheus is down for the whole test
TelemetryURL=http://127.0.0.1:1
TelemetryRetries=0
TelemetryIntervalSec=1
EOF
}
write_topognn_conf "$work/topognn.conf" enforce "$work/graph.json"
# OverTimeLimit: the LocalityWait check lets a job outlive its time limit
printf 'PrEpPlugins=prep/script,prep/topognn\nProlog=%s\nOverTimeLimit=3\n' "$work/prolog.sh" \
    > "$work/extra.conf"
export TOPOGNN_CLUSTER_EXTRA_CONF="$work/extra.conf"
export TOPOGNN_CLUSTER_EXTRA_FILES="$work/topognn.conf"

eval "$("$cluster" env)"
if "$cluster" start; then
    pass "cluster started with topology/topognn: $TOPOGNN_CLUSTER_NODES slurmd idle"
else
    fail "cluster start with topology/topognn"
    finish
    exit 1
fi
etc_conf="$TOPOGNN_CLUSTER_DIR/etc/topognn.conf"
ctld_log="$TOPOGNN_CLUSTER_DIR/log/slurmctld.log"

# ---- helpers ---------------------------------------------------------------
group_of() { local n=$1; n=${n#n}; echo $(( (10#$n - 1) / PER_GROUP + 1 )); }
hosts_of() { timeout 10 scontrol show hostnames "$1"; }
groups_of() { # nodelist -> distinct group numbers, one line
    local h
    for h in $(hosts_of "$1"); do group_of "$h"; done | sort -u | tr '\n' ' ' | sed 's/ $//'
}
ngroups_of() { local g; g=$(groups_of "$1"); wc -w <<< "$g"; }

# sbatch; prints the job id, or "none" when sbatch refuses (checks then fail)
submit() {
    local id
    if id=$(timeout 10 sbatch --parsable --exclusive --chdir="$work" --output=/dev/null "$@" \
            --wrap 'sleep 300'); then
        echo "${id%%;*}"
    else
        echo none
    fi
}
# wait until running; prints the node list ("" on timeout)
nodes_of() {
    local id=$1 deadline=$(( SECONDS + ${2:-$RUN_TIMEOUT} )) st
    while (( SECONDS < deadline )); do
        st=$(timeout 10 squeue -h -j "$id" -o '%T %N' 2>/dev/null || true)
        if [[ "$st" == RUNNING* ]]; then echo "${st#RUNNING }"; return 0; fi
        sleep 0.5
    done
    echo ""
}
state_of() { timeout 10 squeue -h -j "$1" -o '%T' 2>/dev/null || true; }
# switches_waits NAME NODES WHAT [LOG]: a --switches=1@10:00 job of NODES
# nodes must stay pending (and LOG, when given, be in slurmctld.log): pass WHAT.
switches_waits() {
    local job st
    job=$(submit -N "$2" --switches=1@10:00 -J "$1")
    sleep 4
    st=$(state_of "$job")
    if [[ "$st" == PENDING ]] && { [[ -z "${4:-}" ]] || grep -q -- "$4" "$ctld_log"; }; then
        pass "$3"
    else
        fail "$3: the job is '$st' on $(timeout 10 squeue -h -j "$job" -o %N)"
    fi
    [[ "$job" == none ]] || timeout 10 scancel "$job" || true
}
cancel_all() {
    timeout 10 scancel --user="$(id -un)" 2>/dev/null || true
    local deadline=$(( SECONDS + 30 ))
    while (( SECONDS < deadline )); do
        [[ -z "$(timeout 10 squeue -h 2>/dev/null)" ]] && break
        sleep 0.5
    done
    "$cluster" wait-idle >/dev/null || true
}
# desc id -> node list; "" when the job did not start (the caller's check
# then fails; a subshell cannot count failures)
run_check() { nodes_of "$2"; }
# record_field JOB REGEX: the first match of REGEX in JOB's decision record
record_field() {
    grep "\"job_id\":$1," "$work/decisions.jsonl" 2>/dev/null | grep -o "$2" | head -n 1 || true
}

# ---- plugin loaded in clients ----------------------------------------------
if timeout 10 sinfo -h -o '%D %t' | grep -q '^32 idle$'; then
    pass "sinfo with the plugin loaded: 32 idle"
else
    fail "sinfo: $(timeout 10 sinfo 2>&1 | tr '\n' ' ')"
fi
topo=$(timeout 10 scontrol show topology 2>&1 || true)
ng=$(grep -c '^GroupName=' <<< "$topo" || true)
nl=$(grep -c '^SwitchName=.* Kind=leaf' <<< "$topo" || true)
ns=$(grep -c '^SwitchName=.* Kind=spine' <<< "$topo" || true)
if (( ng == 4 && nl == 8 && ns == 2 )) && grep -q '^GroupName=su2 Nodes=n\[009-016\]' <<< "$topo"; then
    pass "scontrol show topology: 4 groups, 8 leaves, 2 spines, su2 = n[009-016]"
else
    fail "scontrol show topology: $ng groups, $nl leaves, $ns spines: $topo"
fi
# topology/tree's record format (Slurm's test_topology checks it): scripts
# matching "SwitchName=X Level=N LinkSpeed=N" must keep working
nsw=$(grep -c '^SwitchName=' <<< "$topo" || true)
ntree=$(grep -cE '^SwitchName=[^ ]+ Level=[0-9]+ LinkSpeed=[0-9]+( |$)' <<< "$topo" || true)
if (( nsw == 10 && ntree == nsw )); then
    pass "scontrol show topology: every SwitchName= record in topology/tree's format"
else
    fail "scontrol show topology: $ntree of $nsw switch records in tree's format: $(grep '^SwitchName=' <<< "$topo" | head -2)"
fi
# 24.11: scontrol show topology NODES; 25.05+: [NAME] node=NODES (a bare
# word names a topology of topology.yaml).
case "$(scontrol --version)" in
    "slurm 24."*) node_arg=n012 ;;
    *) node_arg=node=n012 ;;
esac
one=$(timeout 10 scontrol show topology "$node_arg" 2>&1 || true)
if grep -q '^GroupName=su2 ' <<< "$one"; then
    pass "scontrol show topology $node_arg names group su2"
else
    fail "scontrol show topology $node_arg: $one"
fi

# ---- heavy job: one group when one fits -------------------------------------
frag=$(submit -N 3 -w 'n[001-003]' -J light-frag)
nodes=$(run_check "fragment job" "$frag")
heavy=$(submit -N 6 -J heavy6)
nodes=$(run_check "heavy -N 6" "$heavy")
if [[ -n "$nodes" ]] && (( $(ngroups_of "$nodes") == 1 )); then
    pass "heavy -N 6 with su1 fragmented lands in one group: $nodes (group $(groups_of "$nodes"))"
else
    fail "heavy -N 6 spans groups: $nodes"
fi

# ---- heavy job: fewest groups when none fits --------------------------------
heavy12=$(submit -N 12 -J heavy12)
nodes=$(run_check "heavy -N 12" "$heavy12")
if [[ -n "$nodes" ]] && (( $(ngroups_of "$nodes") == 2 )); then
    pass "heavy -N 12 spans the fewest groups (2): $nodes"
else
    fail "heavy -N 12 spans $(ngroups_of "${nodes:-n001}") groups: $nodes"
fi

# ---- decision log and plan ----------------------------------------------------
sleep 1
if grep -q "\"job_id\":$heavy,.*\"mode\":\"enforce\",\"nodes\":\"$(sed 's/[][]/\\&/g' <<< "$(nodes_of "$heavy")")\".*\"ngroups\":1" \
        "$work/decisions.jsonl" 2>/dev/null; then
    pass "decision log records job $heavy's real allocation with ngroups 1"
else
    fail "decision log lacks job $heavy: $(cat "$work/decisions.jsonl" 2>/dev/null | tail -n 3)"
fi
if [[ $(grep -c "\"job_id\":$heavy," "$work/decisions.jsonl" 2>/dev/null) == 1 ]]; then
    pass "exactly one committed record for job $heavy (evaluations are not logged)"
else
    fail "job $heavy has $(grep -c "\"job_id\":$heavy," "$work/decisions.jsonl" 2>/dev/null) records"
fi
if grep -q "\"job_id\":$heavy12,.*\"running_jobs\":2," "$work/decisions.jsonl" 2>/dev/null; then
    pass "engine state held 2 running jobs (fragment, heavy -N 6) when job $heavy12 started"
else
    fail "running_jobs of job $heavy12: $(grep -o "\"job_id\":$heavy12,.*" "$work/decisions.jsonl" | grep -o '"running_jobs":[0-9]*')"
fi
down=$(grep -c 'telemetry: http://127.0.0.1:1: Prometheus unreachable' "$ctld_log" || true)
if grep -q 'telemetry from http://127.0.0.1:1 every 1 s' "$ctld_log" && [[ "$down" == 1 ]]; then
    pass "telemetry thread runs; Prometheus down logged once over the jobs so far, scheduling unaffected"
else
    fail "telemetry: started $(grep -c 'telemetry from' "$ctld_log" || true), down logged $down times"
fi
want_group="su$(groups_of "$(nodes_of "$heavy")")"
if grep -q "^$heavy $want_group $want_group:n" "$plan_log" 2>/dev/null; then
    pass "prolog sees SPANK_TOPOGNN_GROUPS=$want_group and the plan for job $heavy"
else
    fail "prolog environment of job $heavy: $(grep "^$heavy " "$plan_log" 2>/dev/null | head -n 1)"
fi
cancel_all

# ---- light jobs fill fragments --------------------------------------------------
frag=$(submit -N 5 -w 'n[001-005]' -J light-frag5)
run_check "fragment -N 5" "$frag" >/dev/null
light=$(submit -N 2 -J light2)
nodes=$(run_check "light -N 2" "$light")
ok=1
for h in $(hosts_of "$nodes"); do [[ "$h" =~ ^n00[6-8]$ ]] || ok=0; done
if [[ -n "$nodes" ]] && (( ok )); then
    pass "light -N 2 fills su1's fragment n[006-008]: $nodes"
else
    fail "light -N 2 broke into a whole group: $nodes"
fi
sleep 1
if grep -q "\"job_id\":$frag,.*\"running_jobs\":0," "$work/decisions.jsonl" \
        && grep -q "\"job_id\":$light,.*\"running_jobs\":1," "$work/decisions.jsonl"; then
    pass "ended jobs left the engine state: running_jobs 0 then 1 for jobs $frag, $light"
else
    fail "running_jobs after job ends: $(tail -n 2 "$work/decisions.jsonl" | grep -o '"running_jobs":[0-9]*' | tr '\n' ' ')"
fi
cancel_all

# ---- -w and --exclude -------------------------------------------------------------
wjob=$(submit -N 2 -w 'n010,n020' -J heavy-w)
nodes=$(run_check "-w" "$wjob")
if [[ "$nodes" == "n[010,020]" ]]; then
    pass "-w n010,n020 honoured: $nodes"
else
    fail "-w n010,n020 got $nodes"
fi
cancel_all
xjob=$(submit -N 8 --exclude='n[001,010,018]' -J heavy-x)
nodes=$(run_check "--exclude" "$xjob")
if [[ -n "$nodes" ]] && ! hosts_of "$nodes" | grep -qE '^n(001|010|018)$' \
        && (( $(ngroups_of "$nodes") == 1 )); then
    pass "--exclude n[001,010,018] honoured, whole free group used: $nodes"
else
    fail "--exclude n[001,010,018] got $nodes"
fi
cancel_all

# ---- --switches -------------------------------------------------------------------
switches_waits heavy-s1 10 "--switches=1 -N 10 (groups of 8) stays pending on an idle cluster"
s2job=$(submit -N 10 --switches=2 -J light-s2)
nodes=$(run_check "--switches=2" "$s2job")
if [[ -n "$nodes" ]] && (( $(ngroups_of "$nodes") <= 2 )); then
    pass "--switches=2 -N 10 within 2 groups: $nodes"
else
    fail "--switches=2 -N 10 got $nodes"
fi
cancel_all

# ---- SLURM_TOPOLOGY_ADDR: every switch level, as topology/tree gives it ---------
# (tree: "spine.leaf.node" / "switch.switch.node"; n012's two rail leaves are
# one ranged field, both spines the other)
addr_out="$work/addr-n012.txt"
if timeout 10 sbatch --parsable -N 1 -w n012 -J light-addr --chdir="$work" --output="$addr_out" \
        --wrap 'echo "$SLURM_TOPOLOGY_ADDR $SLURM_TOPOLOGY_ADDR_PATTERN"' >/dev/null; then
    deadline=$(( SECONDS + 30 ))
    until [[ -s "$addr_out" ]] || (( SECONDS >= deadline )); do sleep 0.5; done
fi
addr=$(cat "$addr_out" 2>/dev/null || true)
if [[ "$addr" =~ ^[^.\ ]+\.SU2-LEAF-R\[0-1\]\.n012\ switch\.switch\.node$ ]]; then
    pass "SLURM_TOPOLOGY_ADDR has every switch level: $addr"
else
    fail "SLURM_TOPOLOGY_ADDR of n012: '$addr'"
fi

# ---- drained and down nodes -----------------------------------------------------
timeout 10 scontrol update nodename=n009 state=drain reason=topognn-test || true
timeout 10 scontrol update nodename=n026 state=down reason=topognn-test || true
ids=()
for j in 1 2 3; do ids+=("$(submit -N 7 -J "heavy-d$j")"); done
bad=0 all=""
for id in "${ids[@]}"; do
    nodes=$(run_check "drain/down job" "$id")
    all+="$nodes "
    if [[ -z "$nodes" ]] || hosts_of "$nodes" | grep -qE '^n(009|026)$' \
            || (( $(ngroups_of "$nodes") != 1 )); then bad=1; fi
done
if (( ! bad )); then
    pass "3 heavy -N 7 jobs avoid drained n009 and down n026, one group each: $all"
else
    fail "drained/down nodes or group spans: $all"
fi
cancel_all
for n in n009 n026; do
    timeout 10 scontrol update nodename="$n" state=resume 2>/dev/null || true
done
"$cluster" wait-idle >/dev/null || fail "n009/n026 did not return to idle"

# ---- restart slurmctld keeps working and rebuilds the engine state ---------------
keep=$(submit -N 4 -w 'n[001-004]' -J light-keep)
run_check "job across the restart" "$keep" >/dev/null
if "$cluster" restart-ctld >/dev/null; then
    job=$(submit -N 8 -J heavy-restart)
    nodes=$(run_check "after restart" "$job")
    if [[ -n "$nodes" ]] && (( $(ngroups_of "$nodes") == 1 )) \
            && [[ $(timeout 10 scontrol show topology | grep -c '^GroupName=') == 4 ]]; then
        pass "after a slurmctld restart: topology shown, heavy -N 8 in one group: $nodes"
    else
        fail "after a slurmctld restart: $nodes"
    fi
    sleep 1
    rebuilt=$(grep -o 'engine state rebuilt from slurmctld: [0-9]* running jobs' "$ctld_log" | tail -n 1)
    if [[ "$rebuilt" == *": 1 running jobs" ]] \
            && grep -q "\"job_id\":$job,.*\"running_jobs\":1," "$work/decisions.jsonl"; then
        pass "restart rebuilt the engine state from the running job $keep: $rebuilt"
    else
        fail "engine state after restart: '$rebuilt', $(grep -o "\"job_id\":$job,.*" "$work/decisions.jsonl" | grep -o '"running_jobs":[0-9]*')"
    fi
else
    fail "slurmctld restart"
fi
cancel_all

# ---- LocalityWait (default 1,8h): a heavy job waits for a whole group -----------
# su1 n[001-006] busy for 3 min (-t 3), su2 and su3 busy without limit, su4
# n[025-030] busy: free are n007, n008 (su1) and n031, n032 (su4). A heavy
# -N 4 -t 60 job (budget 60 min) would span two groups; su1 is predicted
# to free within its budget: it stays pending. When su1 frees it runs there.
fill_but_su1() { # time limit of the su1 job
    local a
    a=$(submit -N 6 -w 'n[001-006]' -t "$1" -J light-su1)
    run_check "su1 filler" "$a" >/dev/null
    for w in 'n[009-016]' 'n[017-024]' 'n[025-030]'; do
        run_check "filler" "$(submit -N "$(hosts_of "$w" | wc -l)" -w "$w" -J light-fill)" >/dev/null
    done
    echo "$a"
}
su1=$(fill_but_su1 3)
wjob=$(submit -N 4 -t 60 -J heavy-wait)
sleep 5
st=$(state_of "$wjob")
if [[ "$st" == PENDING ]]; then
    pass "heavy -N 4 with 4 nodes free over 2 groups waits for locality: $st"
else
    fail "heavy -N 4 did not wait for locality: $st on $(timeout 10 squeue -h -j "$wjob" -o %N)"
fi
# A short light job submitted behind it starts at once (backfill: it ends
# before su1 frees) and is second in the queue when placed.
bjob=$(submit -N 2 -t 1 -J light-behind)
bnodes=$(nodes_of "$bjob" 30)
sleep 1
qpos=$(record_field "$bjob" '"queue_position":[0-9]*')
if [[ -n "$bnodes" ]] && [[ "$qpos" == '"queue_position":2' ]] && [[ "$(state_of "$wjob")" == PENDING ]]; then
    pass "a job behind the held one runs ($bnodes) and its record places it second: $qpos"
else
    fail "job $bjob behind the held job: nodes '$bnodes', '$qpos', held job $(state_of "$wjob")"
fi
[[ "$su1" == none ]] || timeout 10 scancel "$su1" || true
nodes=$(run_check "after su1 frees" "$wjob")
if [[ -n "$nodes" ]] && [[ "$(groups_of "$nodes")" == 1 ]]; then
    pass "when su1 frees the waiting job runs inside it: $nodes"
else
    fail "the waiting job got $nodes (groups $(groups_of "${nodes:-n001}"))"
fi
sleep 1
waited=$(record_field "$wjob" '"waited_s":[0-9.]*')
if [[ -n "$waited" ]] && awk -v w="${waited#*:}" 'BEGIN { exit !(w >= 4) }'; then
    pass "its decision record says how long it waited for locality: $waited"
else
    fail "no waited_s in job $wjob's record: $(grep "\"job_id\":$wjob," "$work/decisions.jsonl" | grep -o '"locality":{[^}]*}' || true)"
fi
# the only job pending in its partition: the head of its queue
qpos=$(record_field "$wjob" '"queue_position":[0-9]*')
if [[ "$qpos" == '"queue_position":1' ]]; then
    pass "its decision record places it at the head of the queue: $qpos"
else
    fail "queue_position of job $wjob: '$qpos'"
fi
# slurmctld's log says why it waited, once however often it was evaluated
held=$(grep -c "JobId=$wjob: held for locality: best placement now spans 2 groups" "$ctld_log" || true)
if [[ "$held" == 1 ]]; then
    pass "slurmctld's log has one line for its hold: $(grep -o "JobId=$wjob: held for locality: .*" "$ctld_log")"
else
    fail "$held hold lines for job $wjob in slurmctld's log: $(grep -o "JobId=$wjob: .*" "$ctld_log" | head -n 5)"
fi
cancel_all

# The same, but the su1 job (-t 1) outlives its limit (OverTimeLimit): the
# heavy -N 4 -t 1 job (budget 1 x 1 min = 60 s) waits, then runs over two
# groups once its budget is spent, while su1 is still busy.
su1=$(fill_but_su1 1)
wjob=$(submit -N 4 -t 1 -J heavy-budget)
sleep 20
st=$(state_of "$wjob")
# budget 60 s, then Slurm's next scheduling pass (sched_interval, 60 s)
nodes=$(nodes_of "$wjob" 150)
if [[ "$st" == PENDING ]] && [[ -n "$nodes" ]] && [[ "$(groups_of "$nodes")" == "1 4" ]] \
        && [[ "$(state_of "$su1")" == RUNNING ]]; then
    pass "after its locality budget the job takes the best placement there is: $nodes"
else
    fail "budget: state at 20 s $st, then $nodes (groups $(groups_of "${nodes:-n001}")), su1 $(state_of "$su1")"
fi
sleep 1
line=$(record_field "$wjob" '"locality":{[^}]*}')
if [[ "$line" == *'"checked":true'* && "$line" == *'budget of 60 s spent'* ]]; then
    pass "its decision record says the budget was spent: $line"
else
    fail "locality record of job $wjob: $line"
fi
cancel_all

# ---- shadow mode: topology/tree's choice stands, topognn's is logged --------------
# With n[001-003] busy, Slurm's generic consecutive best fit would give -N 6
# n[004-009] (2 groups); topology/tree takes the first leaf switch that fits
# it whole, su2: n[009-014]. The plugin runs Slurm's own tree code.
write_topognn_conf "$etc_conf" shadow "$work/graph.json"
"$cluster" restart-ctld >/dev/null || fail "restart into shadow mode"
frag=$(submit -N 3 -w 'n[001-003]' -J light-frag)
run_check "shadow fragment" "$frag" >/dev/null
job=$(submit -N 6 -J heavy-shadow)
nodes=$(run_check "shadow -N 6" "$job")
if [[ "$nodes" == "n[009-014]" ]]; then
    pass "shadow mode: topology/tree's choice stands: $nodes (1 group)"
else
    fail "shadow mode: heavy -N 6 got $nodes, want topology/tree's n[009-014]"
fi
sleep 1
if grep -q "shadow JobId=$job: slurm chose n\[009-014\] (1 groups), topognn would choose .* (1 groups" "$ctld_log"; then
    pass "shadow mode logs both choices and scores: $(grep -o "shadow JobId=$job.*" "$ctld_log" | head -n 1)"
else
    fail "no shadow log line for job $job"
fi
if grep -q "\"job_id\":$job,.*\"mode\":\"shadow\"" "$work/decisions.jsonl"; then
    pass "shadow decision of job $job in the decision log"
else
    fail "no shadow decision record for job $job"
fi
cancel_all

# ---- Mode=off: topology/tree's evaluation on the graph, --switches kept -----------
# (control: test_cluster_smoke.sh runs the same --switches job under topology/tree)
write_topognn_conf "$etc_conf" off "$work/graph.json"
"$cluster" restart-ctld >/dev/null || fail "restart into Mode=off"
switches_waits off-s1 10 "Mode=off: --switches=1 -N 10 (groups of 8) stays pending, as under topology/tree"
frag=$(submit -N 3 -w 'n[001-003]' -J off-frag)
run_check "Mode=off fragment" "$frag" >/dev/null
job=$(submit -N 6 -J off-6)
nodes=$(run_check "Mode=off -N 6" "$job")
if [[ "$nodes" == "n[009-014]" ]]; then
    pass "Mode=off: topology/tree's choice, not the generic one: $nodes"
else
    fail "Mode=off: -N 6 got $nodes, want topology/tree's n[009-014]"
fi
cancel_all

# ---- Policy=gnn without ModelFile=: the shipped model; fallbacks carry a reason ----
# as the admin guide changes keys: scontrol reconfigure (a fresh slurmctld in 24.11)
write_topognn_conf "$etc_conf" enforce "$work/graph.json" "Policy=gnn"
if timeout 30 scontrol reconfigure; then
    for _ in $(seq 30); do
        grep -q "policy gnn, model" "$ctld_log" && timeout 5 scontrol ping | grep -q 'is UP' && break
        sleep 1
    done
    pass "scontrol reconfigure with Policy=gnn"
else
    fail "scontrol reconfigure with Policy=gnn"
fi
model="$repo_root/models/$(sed -n 's/^TOPOGNN_DEFAULT_MODEL=//p' "$repo_root/configure.ac")"
if grep -qF "policy gnn, model $model (shipped default)" "$ctld_log"; then
    pass "Policy=gnn without ModelFile= loads the shipped model: $model"
else
    fail "no 'policy gnn, model $model (shipped default)' in slurmctld.log"
fi
job=$(submit -N 6 -J heavy-gnn)
run_check "gnn -N 6" "$job" >/dev/null
if grep -qF "\"job_id\":$job," "$work/decisions.jsonl" &&
        grep "\"job_id\":$job," "$work/decisions.jsonl" | grep -qF "\"model\":\"$model\""; then
    pass "the decision log line of job $job names the model"
else
    fail "job $job: no decision line naming $model"
fi
job=$(submit -N 2 --contiguous -J light-contig)
run_check "contiguous" "$job" >/dev/null
if grep "\"job_id\":$job," "$work/decisions.jsonl" |
        grep -qF '"topognn":{"policy":"gnn","fallback":"contiguous jobs are placed by Slurm"}'; then
    pass "a job Slurm placed itself carries the reason in the decision log"
else
    fail "job $job: no fallback reason: $(grep "\"job_id\":$job," "$work/decisions.jsonl")"
fi
if grep -q "JobId=$job: Slurm's generic selection: contiguous jobs are placed by Slurm" "$ctld_log"; then
    pass "and the reason is logged at info level"
else
    fail "job $job: no info line with the fallback reason in slurmctld.log"
fi
cancel_all

# ---- a bad graph file: slurmctld stays up and schedules ---------------------------
# "ERRORS FALLBACKS": how often slurmctld.log logged ERROR (a grep pattern)
# and the fallback since line $log_from, i.e. since the last restart
logged_since() {
    printf '%s %s' "$(tail -n +"$log_from" "$ctld_log" | grep -c -- "$1" || true)" \
        "$(tail -n +"$log_from" "$ctld_log" | grep -c "falling back to Slurm's generic node selection" || true)"
}
write_topognn_conf "$etc_conf" enforce "$work/bad-graph.json"
log_from=$(($(wc -l < "$ctld_log") + 1))
if "$cluster" restart-ctld >/dev/null && timeout 5 scontrol ping | grep -q 'is UP'; then
    pass "slurmctld up with a broken graph file"
else
    fail "slurmctld with a broken graph file"
fi
if grep -q "bad-graph.json:[0-9]*: " "$ctld_log" \
        && grep -q "falling back to Slurm's generic node selection" "$ctld_log"; then
    pass "broken graph logged with file and line: $(grep -o 'bad-graph.json:[0-9]*: .*' "$ctld_log" | head -n 1)"
else
    fail "no located error for the broken graph in slurmctld.log"
fi
# one start reads topognn.conf and the graph once: each problem is logged once
counts=$(logged_since "bad-graph.json:[0-9]*: ")
if [[ "$counts" == "1 1" ]]; then
    pass "broken graph: its error and the fallback logged once per slurmctld start"
else
    fail "broken graph: error and fallback logged $counts times in one start (want 1 1)"
fi
job=$(submit -N 4 -J heavy-fallback)
nodes=$(run_check "fallback" "$job")
if [[ -n "$nodes" ]]; then
    pass "fallback scheduling with a broken graph: $nodes"
else
    fail "no job runs with a broken graph ($(state_of "$job"))"
fi
# --switches is never dropped: without the graph no switch is known, so the
# job waits (topology/tree never places it over more switches than asked)
switches_waits light-nograph-s1 2 "broken graph: a --switches=1 job waits (logged), the limit is not dropped" \
    "--switches=1 cannot be checked without the graph"
cancel_all

# ---- a bad topognn.conf key: logged once, with file and line ----------------------
write_topognn_conf "$etc_conf" enforce "$work/graph.json"
echo "Candidats=8" >> "$etc_conf"
bad_line=$(wc -l < "$etc_conf")
log_from=$(($(wc -l < "$ctld_log") + 1))
if ! "$cluster" restart-ctld >/dev/null || ! timeout 5 scontrol ping | grep -q 'is UP'; then
    fail "slurmctld with a bad topognn.conf key"
elif [[ "$(logged_since "topognn.conf:$bad_line: unknown key \"Candidats\"")" == "1 1" ]]; then
    pass "bad topognn.conf key logged once as topognn.conf:$bad_line, one fallback"
else
    fail "bad topognn.conf key and fallback logged $(logged_since "topognn.conf:$bad_line: unknown key") times in one start (want 1 1)"
fi

finish
