#!/usr/bin/env bash
# bench/slurm.sh: topology/tree, topology/tree with --switches (a careful
# site's job_submit rule) and topology/topognn on a real localhost Slurm
# cluster, over several slices of a real job log, each replayed several times
# per arm (docs/bench.md). Not part of make check or scripts/test.sh: one run
# takes about 3 minutes, `--slices 3 --replicates 2` (18 runs) about 60.
#
# What it does:
#   1. a fabric of 4 groups x 8 hosts x 2 rails (fattree_json, hosts
#      n001..n032), the topology.conf that topognn-discover writes for it;
#   2. K slices of the KTH SP2 log (bench/slurm_replay schedule): slice k
#      starts at the log's job skip + k x stride; every slice is compressed
#      by the same factor F (default 1000: 1,000 s of the log in 1 s, so the
#      offered load stays the log's) and holds the jobs submitted within the
#      first S seconds of compressed time (default 60); processors map to
#      nodes as ceil(procs x 32 / 100); runs capped at R s (default 60);
#   3. for each slice, N replicates; each replicate runs three arms, each on
#      a fresh 32-slurmd cluster (tests/slurm/cluster.sh), the order rotated
#      from one replicate and slice to the next, each run under its own flock
#      of the machine's cluster lock (TOPOGNN_BENCH_LOCK), so other users can
#      interleave; replicate-major (every slice's replicate 1 first), so an
#      interrupted run still covers every slice. The arms:
#        tree           stock topology/tree on the topology.conf below;
#        tree-switches  the same, each heavy (multi-node) job submitted with
#                       --switches=<g_min>@<budget> as a job_submit rule
#                       would add it: g_min the fewest leaf switches of
#                       topology.conf that hold its nodes on the empty
#                       cluster, budget topognn's default LocalityWait=1,8h
#                       of its (compressed) limit, min(1 x limit, 8 h), the
#                       wait topognn's run may spend; SchedulerParameters
#                       adds max_switch_wait=<the largest budget>;
#        topognn        topology/topognn, Mode=enforce, default LocalityWait,
#                       Policy=model unless --policy gnn; --runtime-prediction
#                       adds RuntimePrediction=yes (without --history each
#                       run starts with no saved predictor state: it learns
#                       from the jobs that end within the run);
#   4. a run: start, wait until every node is idle, then submit the whole
#      slice ahead of time with `sbatch --begin=T0+floor(submit_s)` (T0 a
#      start barrier far enough ahead for all submissions), so the job's
#      eligibility times are exact and the same in every run instead of
#      depending on when a loaded shell got to each sbatch (both clusters
#      add sched_interval=1, so that the main scheduler, not only backfill,
#      sees jobs as they become eligible); at T0 reset sdiag; after the last begin time wait until the queue is empty
#      (bounded), save sdiag, the jobcomp records and slurmctld.log, stop;
#        sbatch --exclusive -N n --time=limit -J heavy-<id>|none-<id> \
#               --comment comm=heavy|none --begin=... --wrap "sleep s"
#      multi-node jobs are named heavy-*, and topognn.conf's
#      ClassRule=name=^heavy- class=heavy makes them heavy;
#   5. bench/slurm_replay analyze turns each run into metrics (waits count
#      from each job's begin time), and the report gives per slice the
#      topognn/tree and topognn/tree-switches ratios of each replicate and
#      the medians over all replicates (median_ratio,
#      median_ratio_tree_switches), the means over all slice x replicate
#      pairs with the half-width of their 95 % Student-t interval
#      (mean_ratio, mean_ratio_tree_switches), whether the median bytes and
#      wait ratios to tree-switches are <= 1.0 (issue 18's goal), and
#      sim_tree_agreement (the median over the tree runs).
#
# Metrics (per run; see bench/slurm_replay.c and docs/bench.md):
#   cross_group_bytes_heavy  fabric bytes of heavy jobs between nodes of
#       different groups (a ring all-reduce over Slurm's allocation, the
#       job's astra-sim profile as topognn-sim draws it, seed 1)
#   heavy_jobs_multi_group   heavy jobs over more than one group
#   mean_wait_s              start - begin time over all jobs
#   sched_cycle_mean_us      sdiag "Main schedule statistics" Mean cycle
#   bf_cycle_mean_us         sdiag "Backfilling stats" Mean cycle
#   sim_tree_agreement       share of the tree run's allocations that the
#       engine's `tree` policy (topognn-sim's baseline) reproduces exactly
#       (and the variants _ignoring_plans, _no_queue; docs/bench.md)
#
# Usage: bench/slurm.sh [--json] [--slices K] [--replicates N] [--skip J]
#                       [--stride J] [--factor F] [--span S] [--jobs N]
#                       [--max-runtime R] [--trace FILE] [--policy model|gnn]
#                       [--runtime-prediction] [--out DIR | --report DIR]
#                       [--users N] [--history H]
#   --policy and --runtime-prediction configure the topognn arm only.
#   --users N: submit each job as one of N Unix users, tgnnbench00.. (the
#   log's user id modulo N; sbatch --uid/--gid, as root), so that a run-time
#   predictor sees users, as at a site, instead of one user for every job.
#   The users that do not exist yet are created (useradd --system, no home,
#   nologin) and removed again at exit; every arm runs with the same users.
#   Needs root. Default 0: every job is the invoking user's.
#   --history H (with --runtime-prediction): the topognn arm starts with a
#   saved predictor state (StateSaveLocation/topognn_runtime.state) that has
#   learned the H jobs of the log before the slice, compressed like the
#   slice and by the same users (bench/slurm_replay predictor), as a site's
#   predictor knows its users' past jobs. Default 0: it starts empty. A
#   slice needs H jobs before it: with --skip below H the history is shorter.
#   --out DIR keeps the inputs, logs and records (default: a temp dir,
#   removed at exit); --report DIR analyses a kept DIR again and prints the
#   report without running Slurm.
# Environment: as tests/slurm/cluster.sh (TOPOGNN_SLURM_PREFIX,
#   TOPOGNN_CLUSTER_PORT, ...), plus
#   TOPOGNN_BUILD_DIR      build configured --with-slurm-source (default
#                          <repo>/_build/default)
#   TOPOGNN_PLUGIN_SO_DIR  dir of topology_topognn.so, prep_topognn.so
#   TOPOGNN_BENCH_LOCK     the lock file taken around each single run
#                          (default TOPOGNN_CLUSTER_LOCK, else
#                          /tmp/topognn-cluster.lock: the one scripts/test.sh
#                          holds around each cluster test; "none": no lock).
#                          Do not run the whole script under flock of it.
#   TOPOGNN_BENCH_RETRIES  start attempts while another cluster runs (15,
#                          60 s apart)
#   TOPOGNN_BENCH_DRAIN    seconds to wait for the queue after the last
#                          begin time (300)
set -euo pipefail

script_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd -- "$script_dir/.." && pwd)
cluster="$repo_root/tests/slurm/cluster.sh"

build_dir=${TOPOGNN_BUILD_DIR:-$repo_root/_build/default}
so_dir=${TOPOGNN_PLUGIN_SO_DIR:-$build_dir/slurm-plugin/.libs}
retries=${TOPOGNN_BENCH_RETRIES:-15}
drain_s=${TOPOGNN_BENCH_DRAIN:-300}
lock=${TOPOGNN_BENCH_LOCK:-${TOPOGNN_CLUSTER_LOCK:-/tmp/topognn-cluster.lock}}
export TOPOGNN_CLUSTER_DIR=${TOPOGNN_CLUSTER_DIR:-$repo_root/.local/cluster-bench}
export TOPOGNN_CLUSTER_NODES=32

readonly FABRIC="groups=4,hosts=8,rails=2,spines=2,prefix=n,digits=3"
readonly METRICS=(cross_group_bytes_heavy heavy_jobs_multi_group mean_wait_s
                  sched_cycle_mean_us bf_cycle_mean_us)

json=0 slices=1 replicates=1 skip=0 stride=5000 factor=1000 span=60 jobs=400
max_runtime=60 out="" report="" policy=model runtime_prediction=0 users=0 history=0
trace="$repo_root/examples/traces/KTH-SP2-1996-2.1-cln.swf.gz"
usage() {
    printf 'usage: %s [--json] [--slices K] [--replicates N] [--skip J] [--stride J] [--factor F]\n' "$0" >&2
    printf '       [--span S] [--jobs N] [--max-runtime R] [--trace FILE] [--policy model|gnn]\n' >&2
    printf '       [--runtime-prediction] [--users N] [--history H] [--out DIR | --report DIR]\n' >&2
    exit 2
}
while (( $# )); do
    case $1 in
        --json) json=1; shift ;;
        --slices|--replicates|--skip|--stride|--factor|--span|--jobs|--max-runtime|--users|--history)
            (( $# >= 2 )) && [[ "$2" =~ ^[0-9]+$ ]] || usage
            v=${1#--}
            printf -v "${v//-/_}" '%s' "$2"; shift 2 ;;
        --trace) (( $# >= 2 )) || usage; trace=$2; shift 2 ;;
        --policy) (( $# >= 2 )) && [[ "$2" == model || "$2" == gnn ]] || usage
            policy=$2; shift 2 ;;
        --runtime-prediction) runtime_prediction=1; shift ;;
        --out) out=$2; shift 2 ;;
        --report) report=$2; shift 2 ;;
        *) usage ;;
    esac
done
(( slices >= 1 && replicates >= 1 && factor >= 1 && span >= 10 && users <= 100 )) || usage

say() { printf '[bench/slurm] %s\n' "$*" >&2; }
die() { printf '[bench/slurm] ERROR: %s\n' "$*" >&2; exit 1; }
(( history == 0 || runtime_prediction )) || die "--history needs --runtime-prediction"

replay="$build_dir/bench/slurm_replay"
for f in "$replay" "$build_dir/slurm-plugin/fattree_json" "$build_dir/tools/topognn-discover" \
         "$so_dir/topology_topognn.so" "$so_dir/prep_topognn.so"; do
    [[ -e "$f" ]] || die "missing $f (configure --with-slurm-source and make)"
done
[[ -f "$trace" ]] || die "no trace at $trace (--trace FILE)"

if [[ -n "$report" ]]; then
    [[ -f "$report/params" ]] || die "$report holds no kept run (params)"
    work=$(cd -- "$report" && pwd)
    # shellcheck disable=SC1091
    source "$work/params"
    keep=1
elif [[ -n "$out" ]]; then
    mkdir -p -- "$out"
    work=$(cd -- "$out" && pwd)
    keep=1
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/topognn-bench.XXXXXX")
    keep=0
fi
chmod 755 "$work"
# ---- the users jobs are submitted as (--users) -------------------------------
bench_uids=() bench_gids=() created_users=()
make_users() {
    local i u
    (( EUID == 0 )) || die "--users needs root: it creates Unix users and submits with sbatch --uid"
    for (( i = 0; i < users; i++ )); do
        printf -v u 'tgnnbench%02d' "$i"
        if ! getent passwd "$u" > /dev/null; then
            useradd --system --user-group --no-create-home --home-dir /nonexistent \
                --shell /usr/sbin/nologin "$u" || die "useradd $u failed"
            created_users+=("$u")
        fi
        bench_uids+=("$(id -u "$u")")
        bench_gids+=("$(id -g "$u")")
    done
    say "jobs are submitted as $users users tgnnbench00..; ${#created_users[@]} created now (removed at exit)"
}
remove_users() {
    local u
    for u in "${created_users[@]}"; do
        userdel "$u" || say "userdel $u failed: remove it by hand"
    done
    (( ${#created_users[@]} == 0 )) || say "removed the users created: ${created_users[*]}"
}
# the predictor's users: uid:gid per user slot, as submit_all submits
predictor_ids() {
    local i ids=()
    if (( users )); then
        for (( i = 0; i < users; i++ )); do ids+=("${bench_uids[i]}:${bench_gids[i]}"); done
    else
        ids=("$(id -u):$(id -g)")
    fi
    local IFS=,
    echo "${ids[*]}"
}

# "$work/cluster.up" while a cluster of this run is up (runs are subshells,
# under the lock): stopped at exit too, so a killed run leaves none behind
cleanup() {
    if [[ -e "$work/cluster.up" ]]; then
        "$cluster" stop >/dev/null 2>&1 || true
        say "stopped the cluster that was up"
    fi
    remove_users
    (( keep )) || rm -rf -- "$work"
}
trap cleanup EXIT

# ---- tree-switches: what a job_submit rule adds ----------------------------
# The leaf switches of topology.conf (SwitchName lines with Nodes=), their
# node counts largest first: a job of n nodes needs at least as many leaf
# switches as it takes to add up to n (g_min on the empty cluster).
leaf_sizes() { # topology.conf -> "8 8 8 8"
    awk '/^SwitchName=/ && / Nodes=/ {
            for (i = 1; i <= NF; i++) if ($i ~ /^Nodes=/) { sub(/^Nodes=/, "", $i); print $i } }' "$1" |
        while read -r hl; do hostlist_count "$hl"; done | sort -rn | tr '\n' ' '
}
# the node count of a hostlist like n[001-008],n010 (no scontrol needed)
hostlist_count() {
    awk -v hl="$1" 'BEGIN {
        n = 0; s = hl
        while (length(s)) {
            if (match(s, /^[^,\[]*\[[^]]*\]/)) { item = substr(s, 1, RLENGTH); s = substr(s, RLENGTH + 1) }
            else if (match(s, /^[^,]+/)) { item = substr(s, 1, RLENGTH); s = substr(s, RLENGTH + 1) }
            sub(/^,/, "", s)
            if (item == "") continue
            if (match(item, /\[.*\]/)) {
                r = substr(item, RSTART + 1, RLENGTH - 2); m = split(r, parts, ",")
                for (i = 1; i <= m; i++) {
                    if (split(parts[i], ab, "-") == 2) n += ab[2] - ab[1] + 1; else n++ }
            } else n++
        }
        print n }'
}
# g_min of a job of n nodes given leaf sizes largest first
switch_gmin() { # n sizes...
    local n=$1 got=0 k=0 sz
    shift
    for sz in "$@"; do
        (( got >= n )) && break
        got=$(( got + sz )); k=$(( k + 1 ))
    done
    echo "$k"
}
# the budget of a job with a limit of `limit` minutes, in minutes: topognn's
# default LocalityWait=1,8h (PLACE_LOCALITY_WAIT_*_DEFAULT in place.h), the
# whole limit capped at 8 h; the limit is the replay's compressed one
switch_budget_min() { local l=$1; (( l > 480 )) && l=480; echo "$l"; }
# the largest budget over all slices' heavy jobs, in seconds
switch_budgets_max() { # work
    awk '!/^#/ && $5 ~ /^heavy-/ { l = $3 > 480 ? 480 : $3; if (l > m) m = l } END { print (m + 1) * 60 }' \
        "$1"/s*/schedule.txt
}

# ---- inputs ------------------------------------------------------------------
if [[ -z "$report" ]]; then
    printf 'slices=%d replicates=%d skip=%d stride=%d factor=%d span=%d jobs=%d max_runtime=%d policy=%s runtime_prediction=%d users=%d history=%d\n' \
        "$slices" "$replicates" "$skip" "$stride" "$factor" "$span" "$jobs" "$max_runtime" \
        "$policy" "$runtime_prediction" "$users" "$history" > "$work/params"
    (( users == 0 )) || make_users
    "$build_dir/slurm-plugin/fattree_json" "$FABRIC" > "$work/graph.json"
    "$build_dir/tools/topognn-discover" --graph "$work/graph.json" --topology-conf tree \
        > "$work/topology.conf"
    for (( k = 1; k <= slices; k++ )); do
        mkdir -p "$work/s$k"
        "$replay" schedule --trace "$trace" --jobs "$jobs" --skip $(( skip + (k - 1) * stride )) \
            --nodes 32 --machine-procs 100 --span "$span" --factor "$factor" \
            --max-runtime "$max_runtime" > "$work/s$k/schedule.txt"
        say "slice $k: $(head -n 1 "$work/s$k/schedule.txt" | sed 's/^# //')"
        if (( history )); then
            "$replay" predictor --trace "$trace" --skip $(( skip + (k - 1) * stride )) \
                --history "$history" --nodes 32 --machine-procs 100 --factor "$factor" \
                --max-runtime "$max_runtime" --ids "$(predictor_ids)" \
                --out "$work/s$k/topognn_runtime.state" > "$work/s$k/predictor.txt"
            say "slice $k: $(sed 's/^# //' "$work/s$k/predictor.txt")"
        fi
    done
    # DebugFlags=Backfill logs backfill's node plans for waiting jobs (for
    # sim_tree_agreement) at level verbose; HetJob, backfill's "Started JobId=N
    # in P on NODES" (info in 24.11 and 25.11, under HetJob from 26.05): without
    # it a backfill start's wait is jobcomp's whole seconds and the replay
    # misses its nodes. Every run logs the same, so every run pays the same.
    # (A repeated slurm.conf key: Slurm uses the last value.)
    # sched_interval=1: the main scheduler also tests the queue every second,
    # as jobs become eligible at their begin times (no submission triggers it)
    printf 'DebugFlags=Backfill,HetJob\nSlurmctldDebug=verbose\n' > "$work/tree-extra.conf"
    printf 'SchedulerParameters=bf_interval=1,sched_min_interval=100000,sched_interval=1\n' \
        >> "$work/tree-extra.conf"
    cat "$work/tree-extra.conf" > "$work/topognn-extra.conf"
    # tree-switches: the same, max_switch_wait raised to the largest budget
    # (Slurm caps a job's --switches wait at it; default 300 s)
    max_wait=$(switch_budgets_max "$work")
    { printf 'DebugFlags=Backfill,HetJob\nSlurmctldDebug=verbose\n'
      printf 'SchedulerParameters=bf_interval=1,sched_min_interval=100000,sched_interval=1,max_switch_wait=%d\n' \
          "$max_wait"; } > "$work/tree-switches-extra.conf"
    printf 'PrEpPlugins=prep/script,prep/topognn\n' >> "$work/topognn-extra.conf"
fi

# ---- one run -----------------------------------------------------------------
start_cluster() { # retries while another cluster owns the machine
    local try msg failures=0
    for (( try = 1; try <= retries; try++ )); do
        if msg=$("$cluster" start 2>&1); then return 0; fi
        if grep -q 'other Slurm daemons run' <<< "$msg"; then
            say "another Slurm cluster runs; retry $try/$retries in 60 s"
            sleep 60
            continue
        fi
        # anything else (e.g. a slurmd that did not register): twice more
        printf '%s\n' "$msg" | tail -n 5 >&2
        (( ++failures < 3 )) || return 1
        say "start failed; retry in 10 s"
        "$cluster" stop >/dev/null 2>&1 || true
        sleep 10
    done
    say "gave up after $retries attempts: another cluster kept running"
    return 1
}

# Submit every job of the schedule ahead, eligible at T0 + floor(submit_s).
# Counts the jobs refused and those whose begin time had passed by the time
# their sbatch ran (late: then the barrier was too close).
# With switches=1 (the tree-switches arm) each heavy job also gets
# --switches=<g_min>@<budget> (written to DIR/switches.txt).
submit_all() { # run_dir schedule t0 switches
    local dir=$1 schedule=$2 t0=$3 switches=$4 submit nodes limit sleep_s name log_s user begin
    local failed=0 late=0 sizes=() sw as chdir=$dir slot
    (( switches )) && read -r -a sizes <<< "$(leaf_sizes "$work/topology.conf")"
    (( users == 0 )) || chdir=/tmp # the bench users cannot enter the run dir
    while read -r submit nodes limit sleep_s name log_s user; do
        [[ "$submit" == \#* ]] && continue
        as=()
        if (( users )); then
            slot=0
            [[ "$user" =~ ^[0-9]+$ ]] && slot=$(( user % users ))
            as=(--uid="${bench_uids[slot]}" --gid="${bench_gids[slot]}")
        fi
        begin=$(( t0 + ${submit%%.*} ))
        (( EPOCHSECONDS < begin )) || late=$(( late + 1 ))
        sw=()
        if (( switches )) && [[ "$name" == heavy-* ]]; then
            sw=("--switches=$(switch_gmin "$nodes" "${sizes[@]}")@$(switch_budget_min "$limit")")
            printf '%s %s\n' "$name" "${sw[0]}" >> "$dir/switches.txt"
        fi
        if ! timeout 10 sbatch --parsable --exclusive -N "$nodes" --time="$limit" -J "$name" \
                "${sw[@]}" "${as[@]}" --comment "comm=${name%%-*}" --chdir="$chdir" --output=/dev/null \
                --begin="$(printf '%(%Y-%m-%dT%H:%M:%S)T' "$begin")" \
                --wrap "sleep $sleep_s" >> "$dir/sbatch.ids" 2>> "$dir/sbatch.err"; then
            failed=$(( failed + 1 ))
        fi
    done < "$schedule"
    echo "$failed" > "$dir/sbatch.failed"
    echo "$late" > "$dir/sbatch.late"
}

wait_drained() { # -> 0 when the queue emptied in time
    local deadline=$(( SECONDS + drain_s )) q
    while (( SECONDS < deadline )); do
        q=$(timeout 10 squeue -h -o %i 2>/dev/null | wc -l) || q=1
        (( q == 0 )) && return 0
        sleep 2
    done
    return 1
}

sleep_until() { # epoch seconds
    local d=$(( $1 - EPOCHSECONDS ))
    (( d <= 0 )) || sleep "$d"
}

run_once() { # dir name topology-plugin schedule
    local dir=$1 name=$2 plugin=$3 schedule=$4 t_start t0 njobs last state
    mkdir -p -- "$dir"
    chmod 755 "$dir"
    export TOPOGNN_TOPOLOGY_PLUGIN=$plugin
    if [[ "$name" == tree || "$name" == tree-switches ]]; then
        export TOPOGNN_TOPOLOGY_CONF="$work/topology.conf"
        export TOPOGNN_CLUSTER_EXTRA_CONF="$work/$name-extra.conf"
        unset TOPOGNN_PLUGIN_DIRS TOPOGNN_CLUSTER_EXTRA_FILES TOPOGNN_CLUSTER_STATE_FILES
    else
        cat > "$dir/topognn.conf" <<EOF
# topognn.conf for bench/slurm.sh
GraphFile=$work/graph.json
Mode=enforce
DecisionLog=$dir/decisions.jsonl
Candidates=32
ClassRule=name=^none- class=none
ClassRule=name=^heavy- class=heavy
Policy=$policy
EOF
        if (( runtime_prediction )); then echo 'RuntimePrediction=yes' >> "$dir/topognn.conf"; fi
        state=$(dirname -- "$schedule")/topognn_runtime.state
        if (( history )) && [[ -f "$state" ]]; then
            export TOPOGNN_CLUSTER_STATE_FILES="$state"
        else
            unset TOPOGNN_CLUSTER_STATE_FILES
        fi
        unset TOPOGNN_TOPOLOGY_CONF
        export TOPOGNN_PLUGIN_DIRS="$so_dir"
        export TOPOGNN_CLUSTER_EXTRA_CONF="$work/topognn-extra.conf"
        export TOPOGNN_CLUSTER_EXTRA_FILES="$dir/topognn.conf"
    fi
    start_cluster || { say "$name: the cluster did not start"; return 1; }
    : > "$work/cluster.up"
    eval "$("$cluster" env)"
    "$cluster" wait-idle >/dev/null || { "$cluster" stop >/dev/null 2>&1; rm -f -- "$work/cluster.up"; return 1; }
    njobs=$(grep -vc '^#' "$schedule")
    last=$(awk '!/^#/ { t = $1 } END { printf "%d", t }' "$schedule")
    # the barrier: ahead by the submissions' time (0.25 s each on a loaded
    # 2-core machine) plus 10 s
    t0=$(( EPOCHSECONDS + 10 + (njobs + 3) / 4 ))
    echo "$t0" > "$dir/t0"
    say "$name: cluster up ($plugin); $njobs jobs, begin times T0..T0+${last} s"
    submit_all "$dir" "$schedule" "$t0" "$([[ "$name" == tree-switches ]] && echo 1 || echo 0)"
    sleep_until "$t0"
    timeout 10 sdiag --reset >/dev/null 2>&1 || say "$name: sdiag --reset failed"
    t_start=$SECONDS
    sleep_until $(( t0 + last ))
    say "$name: all eligible ($(cat "$dir/sbatch.failed") refused, $(cat "$dir/sbatch.late") late); waiting for the queue (<= ${drain_s} s)"
    if wait_drained; then
        echo 1 > "$dir/drained"
    else
        echo 0 > "$dir/drained"
        say "$name: queue not empty after ${drain_s} s; cancelling the rest"
        # every job, whichever bench user submitted it
        timeout 10 squeue -h -o %i 2>/dev/null | xargs -r timeout 10 scancel || true
        sleep 3
    fi
    echo $(( SECONDS - t_start )) > "$dir/elapsed_s"
    timeout 10 sdiag > "$dir/sdiag.txt" 2>&1 || true
    cp -- "$TOPOGNN_CLUSTER_DIR/log/jobcomp.txt" "$dir/jobcomp.txt" 2>/dev/null || : > "$dir/jobcomp.txt"
    cp -- "$TOPOGNN_CLUSTER_DIR/log/slurmctld.log" "$dir/slurmctld.log"
    "$cluster" stop >/dev/null 2>&1 || true
    rm -f -- "$work/cluster.up"
    say "$name: done in $(cat "$dir/elapsed_s") s after T0"
}

# One run under the machine's cluster lock (only this run: others can take
# their turn between runs).
locked_run() {
    if [[ "$lock" == none ]]; then
        run_once "$@"
    else
        ( flock 9; run_once "$@" ) 9> "$lock"
    fi
}

# sdiag's "Mean cycle" of a section ("Main schedule" or "Backfilling")
sdiag_mean() { # file section
    awk -v sec="$2" 'index($0, sec) { on = 1 } on && /Mean cycle:/ { print $3; exit }' "$1"
}

analyze() { # dir schedule [--agreement]
    local dir=$1 schedule=$2
    shift 2
    "$replay" analyze --graph "$work/graph.json" --schedule "$schedule" \
        --jobcomp "$dir/jobcomp.txt" --ctld-log "$dir/slurmctld.log" \
        --begin-epoch "$(cat "$dir/t0")" "$@" > "$dir/metrics.txt"
    {
        printf 'sched_cycle_mean_us %s\n' "$(sdiag_mean "$dir/sdiag.txt" 'Main schedule')"
        printf 'bf_cycle_mean_us %s\n' "$(sdiag_mean "$dir/sdiag.txt" 'Backfilling')"
        printf 'sbatch_refused %s\n' "$(cat "$dir/sbatch.failed")"
        printf 'sbatch_late %s\n' "$(cat "$dir/sbatch.late")"
        printf 'drained %s\n' "$(cat "$dir/drained")"
        printf 'elapsed_s %s\n' "$(cat "$dir/elapsed_s")"
        eval_profile "$dir/slurmctld.log"
    } >> "$dir/metrics.txt"
    local jobs from_log
    jobs=$(val "$dir/metrics.txt" jobs)
    from_log=$(val "$dir/metrics.txt" waits_from_log)
    if (( ${from_log:-0} < ${jobs:-0} )); then
        say "WARNING: $dir: $(( jobs - ${from_log:-0} )) of $jobs starts are not in slurmctld.log; their waits are jobcomp's whole seconds"
    fi
}

# The plugin's own "eval profile" lines (topognn runs): evaluations, and the
# mean us per evaluation in total and per part (engine, record, tree, ...),
# weighted over the lines.
eval_profile() { # slurmctld.log
    { grep -o 'eval profile over .*' "$1" 2>/dev/null || true; } | awk '
        { for (i = 1; i <= NF; i++) if ($(i + 1) ~ /\//) {
              split($(i + 1), v, "/"); us[$i] += v[1] * v[2]; n[$i] += v[2] } }
        END { if (n["total"] > 0) {
                printf "evals %d\n", n["total"]
                for (p in us) if (n[p] > 0) printf "eval_%s_us %.1f\neval_%s_calls %d\n", p, us[p] / n[p], p, n[p] } }'
}

readonly ARMS=(tree tree-switches topognn)
if [[ -z "$report" ]]; then
    for (( r = 1; r <= replicates; r++ )); do
        for (( k = 1; k <= slices; k++ )); do
            # rotate the order: each arm goes first, second and third in turn
            rot=$(( (r - 1 + k - 1) % ${#ARMS[@]} ))
            order=("${ARMS[@]:rot}" "${ARMS[@]:0:rot}")
            for name in "${order[@]}"; do
                plugin=topology/${name%-switches}
                say "replicate $r/$replicates, slice $k/$slices: $name"
                # a failed run (e.g. another cluster held the machine too
                # long) leaves its comparisons out, not the whole benchmark
                locked_run "$work/s$k/r$r/$name" "$name" "$plugin" "$work/s$k/schedule.txt" \
                    || say "replicate $r slice $k $name failed; its comparisons are left out"
            done
        done
    done
fi

# ---- report ------------------------------------------------------------------
val() { [[ -f "$1" ]] || return 0; awk -v k="$2" '$1 == k { print $2; exit }' "$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0 || a == "") print "null"; else printf "%.3f", a / b }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) print "null"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# "mean half n": the mean of the values read and the half-width of its 95 %
# Student-t interval (null with fewer than two values)
mean_ci() {
    awk 'BEGIN { split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228 2.201 2.179 2.160 2.145 2.131 2.120 2.110 2.101 2.093 2.086", t, " ") }
        { v[NR] = $1; s += $1 }
        END {
            if (NR < 2) { printf "%s null %d\n", NR ? sprintf("%.3f", s) : "null", NR; exit }
            m = s / NR
            for (i = 1; i <= NR; i++) ss += (v[i] - m) ^ 2
            q = NR - 1 <= 20 ? t[NR - 1] : 1.96
            printf "%.3f %.3f %d\n", m, q * sqrt(ss / (NR - 1) / NR), NR
        }'
}

# The comparisons: "num/den" of two arms of the same slice and replicate.
readonly PAIRS=(topognn/tree topognn/tree-switches tree-switches/tree)
: > "$work/ratios.txt" # slice replicate pair metric ratio
: > "$work/agreement.txt"
for (( k = 1; k <= slices; k++ )); do
    for (( r = 1; r <= replicates; r++ )); do
        d="$work/s$k/r$r"
        for name in "${ARMS[@]}"; do
            if [[ -f "$d/$name/sdiag.txt" ]]; then
                if [[ "$name" == tree ]]; then
                    analyze "$d/$name" "$work/s$k/schedule.txt" --agreement
                else
                    analyze "$d/$name" "$work/s$k/schedule.txt"
                fi
            elif [[ "$name" != tree-switches || -d "$d/$name" ]]; then
                # (a kept run from before the tree-switches arm has none)
                say "$d/$name: the run is missing (interrupted?): its comparisons are left out"
            fi
        done
        for pair in "${PAIRS[@]}"; do
            num=${pair%/*} den=${pair#*/}
            [[ -f "$d/$num/metrics.txt" && -f "$d/$den/metrics.txt" ]] || continue
            for m in "${METRICS[@]}"; do
                printf '%d %d %s %s %s\n' "$k" "$r" "$pair" "$m" \
                    "$(ratio "$(val "$d/$num/metrics.txt" "$m")" "$(val "$d/$den/metrics.txt" "$m")")" \
                    >> "$work/ratios.txt"
            done
        done
        [[ -f "$d/tree/metrics.txt" ]] &&
            printf '%d %d %s\n' "$k" "$r" "$(val "$d/tree/metrics.txt" sim_tree_agreement)" >> "$work/agreement.txt"
    done
done
ratios_of() { # pair metric [slice]
    awk -v p="$1" -v m="$2" -v k="${3:-0}" \
        '$3 == p && $4 == m && (k == 0 || $1 == k) && $5 != "null" { print $5 }' "$work/ratios.txt"
}
ratio_at() { # pair metric slice replicate
    awk -v p="$1" -v m="$2" -v k="$3" -v r="$4" '$1 == k && $2 == r && $3 == p && $4 == m { print $5 }' \
        "$work/ratios.txt"
}
npairs() { ratios_of "$1" cross_group_bytes_heavy | wc -l; }
agreement_median=$(awk '$3 != "" { print $3 }' "$work/agreement.txt" | median)
# issue 18's goal: median bytes and wait of topognn <= 1.0x tree-switches
goal() { # metric -> true|false|null
    local v
    v=$(ratios_of topognn/tree-switches "$1" | median)
    [[ "$v" == null ]] && { echo null; return; }
    awk -v v="$v" 'BEGIN { print (v <= 1.0 ? "true" : "false") }'
}
goal_bytes=$(goal cross_group_bytes_heavy)
goal_wait=$(goal mean_wait_s)
means_json() { # pair: {"metric": {"mean": m, "half_width_95": h, "n": n}, ...}
    local m sep="" a
    printf '{'
    for m in "${METRICS[@]}"; do
        read -r -a a <<< "$(ratios_of "$1" "$m" | mean_ci)"
        printf '%s"%s": {"mean": %s, "half_width_95": %s, "n": %s}' "$sep" "$m" "${a[0]}" "${a[1]}" "${a[2]}"
        sep=", "
    done
    printf '}'
}
medians_json() { # pair [slice]
    local m sep=""
    printf '{'
    for m in "${METRICS[@]}"; do
        printf '%s"%s": %s' "$sep" "$m" "$(ratios_of "$1" "$m" "${2:-0}" | median)"
        sep=", "
    done
    printf '}'
}

if (( json )); then
    obj() { # metrics-file
        local k sep=""
        [[ -f "$1" ]] || { printf 'null'; return; }
        printf '{'
        for k in "${METRICS[@]}" jobs heavy_jobs sim_tree_agreement sbatch_refused sbatch_late drained elapsed_s \
                 evals eval_total_us eval_engine_us eval_record_us eval_tree_us eval_tree_calls; do
            v=$(val "$1" "$k")
            printf '%s"%s": %s' "$sep" "$k" "${v:-null}"
            sep=", "
        done
        printf '}'
    }
    printf '{"slices": %d, "replicates": %d, "pairs": %d, "pairs_tree_switches": %d, "factor": %d, "span_s": %d' \
        "$slices" "$replicates" "$(npairs topognn/tree)" "$(npairs topognn/tree-switches)" "$factor" "$span"
    printf ', "topognn_policy": "%s", "runtime_prediction": %s, "users": %d, "history": %d' \
        "$policy" "$( (( runtime_prediction )) && echo true || echo false)" "$users" "$history"
    printf ', "median_ratio": %s' "$(medians_json topognn/tree)"
    printf ', "median_ratio_tree_switches": %s' "$(medians_json topognn/tree-switches)"
    printf ', "median_ratio_switches_to_tree": %s' "$(medians_json tree-switches/tree)"
    printf ', "mean_ratio": %s' "$(means_json topognn/tree)"
    printf ', "mean_ratio_tree_switches": %s' "$(means_json topognn/tree-switches)"
    printf ', "mean_ratio_switches_to_tree": %s' "$(means_json tree-switches/tree)"
    printf ', "goal_vs_tree_switches": {"bytes_le_1": %s, "wait_le_1": %s}' "$goal_bytes" "$goal_wait"
    printf ', "sim_tree_agreement": %s, "per_slice": [' "$agreement_median"
    for (( k = 1; k <= slices; k++ )); do
        (( k == 1 )) || printf ', '
        printf '{"slice": %d, "schedule": "%s", "median_ratio": %s, "median_ratio_tree_switches": %s, "runs": [' \
            "$k" "$(head -n 1 "$work/s$k/schedule.txt" | sed 's/^# //; s/"/'"'"'/g')" \
            "$(medians_json topognn/tree "$k")" "$(medians_json topognn/tree-switches "$k")"
        for (( r = 1; r <= replicates; r++ )); do
            (( r == 1 )) || printf ', '
            printf '{"replicate": %d, "tree": %s, "tree-switches": %s, "topognn": %s' "$r" \
                "$(obj "$work/s$k/r$r/tree/metrics.txt")" "$(obj "$work/s$k/r$r/tree-switches/metrics.txt")" \
                "$(obj "$work/s$k/r$r/topognn/metrics.txt")"
            for pair in "${PAIRS[@]}"; do
                case $pair in
                    topognn/tree) key=ratio ;;
                    topognn/tree-switches) key=ratio_tree_switches ;;
                    *) key=ratio_switches_to_tree ;;
                esac
                printf ', "%s": {' "$key"
                sep=""
                for m in "${METRICS[@]}"; do
                    v=$(ratio_at "$pair" "$m" "$k" "$r")
                    printf '%s"%s": %s' "$sep" "$m" "${v:-null}"
                    sep=", "
                done
                printf '}'
            done
            printf '}'
        done
        printf ']}'
    done
    printf ']}\n'
else
    printf 'bench/slurm: %d slices x %d replicates of the KTH SP2 log (compressed %dx, %d s each) on 32 slurmd\n' \
        "$slices" "$replicates" "$factor" "$span"
    printf 'topognn arm: Policy=%s, RuntimePrediction=%s; jobs as %s; predictor history: %s\n' \
        "$policy" "$( (( runtime_prediction )) && echo yes || echo no)" \
        "$( (( users )) && echo "$users users" || echo "one user")" \
        "$( (( history )) && echo "$history jobs" || echo none)"
    for (( k = 1; k <= slices; k++ )); do
        printf '\nslice %d: %s\n' "$k" "$(head -n 1 "$work/s$k/schedule.txt" | sed 's/^# //')"
        for pair in "${PAIRS[@]}"; do
            printf '%-26s' "$pair"
            for (( r = 1; r <= replicates; r++ )); do printf ' %9s' "rep$r"; done
            printf ' %9s\n' median
            for m in "${METRICS[@]}"; do
                printf '  %-24s' "$m"
                for (( r = 1; r <= replicates; r++ )); do
                    v=$(ratio_at "$pair" "$m" "$k" "$r")
                    printf ' %9s' "${v:--}"
                done
                printf ' %9s\n' "$(ratios_of "$pair" "$m" "$k" | median)"
            done
        done
        for (( r = 1; r <= replicates; r++ )); do
            for name in "${ARMS[@]}"; do
                f="$work/s$k/r$r/$name/metrics.txt"
                [[ -f "$f" ]] || continue
                printf '  rep%d %-13s jobs %s heavy %s multi-group %s wait %s s main %s us bf %s us drained %s late %s\n' \
                    "$r" "$name" "$(val "$f" jobs)" "$(val "$f" heavy_jobs)" \
                    "$(val "$f" heavy_jobs_multi_group)" "$(val "$f" mean_wait_s)" \
                    "$(val "$f" sched_cycle_mean_us)" "$(val "$f" bf_cycle_mean_us)" \
                    "$(val "$f" drained)" "$(val "$f" sbatch_late)"
                [[ -z "$(val "$f" evals)" ]] || printf '       eval profile: %s evaluations, us each: total %s, state %s, engine %s, record %s, select %s (%s calls), tree %s (%s calls)\n' \
                    "$(val "$f" evals)" "$(val "$f" eval_total_us)" "$(val "$f" eval_state_us)" \
                    "$(val "$f" eval_engine_us)" "$(val "$f" eval_record_us)" \
                    "$(val "$f" eval_select_us)" "$(val "$f" eval_select_calls)" \
                    "$(val "$f" eval_tree_us)" "$(val "$f" eval_tree_calls)"
            done
        done
    done
    for pair in "${PAIRS[@]}"; do
        printf '\nover all %d pairs (%s): median, mean +- half-width of its 95 %% t interval\n' \
            "$(npairs "$pair")" "$pair"
        for m in "${METRICS[@]}"; do
            read -r -a a <<< "$(ratios_of "$pair" "$m" | mean_ci)"
            printf '  %-26s %9s  %s +- %s\n' "$m" "$(ratios_of "$pair" "$m" | median)" "${a[0]}" "${a[1]}"
        done
    done
    printf '\ngoal (issue 18): median topognn/tree-switches bytes <= 1.0: %s; wait <= 1.0: %s\n' \
        "$goal_bytes" "$goal_wait"
    printf 'sim_tree_agreement (median over the tree runs): %s (%s)\n' "$agreement_median" \
        "$(awk '{ printf "%s%s", s, $3; s = " " }' "$work/agreement.txt")"
fi
(( keep )) && say "records kept in $work"
exit 0
