#!/usr/bin/env bash
# bench/slurm.sh: topology/tree against topology/topognn on a real localhost
# Slurm cluster, with the same slice of a real job log (docs/bench.md).
# Not part of make check or scripts/test.sh: it takes about 15 minutes.
#
# What it does:
#   1. a fabric of 4 groups x 8 hosts x 2 rails (fattree_json, hosts
#      n001..n032), the topology.conf that topognn-discover writes for it,
#      and a time-compressed slice of the KTH SP2 log (bench/slurm_replay
#      schedule: default 300 jobs, submit and run times divided by one
#      factor so the slice is submitted over 240 s, processors mapped to
#      nodes as ceil(procs x 32 / 100), runs capped at 120 s);
#   2. two runs on the same 32-slurmd cluster (tests/slurm/cluster.sh):
#      topology/tree with that topology.conf, then topology/topognn
#      (Mode=enforce) with the same graph. Each job is a plain
#        sbatch --exclusive -N n --time=limit -J heavy-<id>|none-<id> \
#               --comment comm=heavy|none --wrap "sleep s"
#      at its compressed submit time; multi-node jobs are named heavy-*,
#      and topognn.conf's ClassRule=name=^heavy- class=heavy makes them heavy.
#      Both clusters log backfill's node plans (DebugFlags=Backfill,
#      SlurmctldDebug=verbose) for the agreement replay;
#   3. waits until the queue is empty (bounded), saves sdiag, the jobcomp
#      filetxt records and slurmctld.log, stops the cluster;
#   4. bench/slurm_replay analyze turns what Slurm did into the metrics.
#
# Metrics (per run):
#   cross_group_bytes_heavy  fabric bytes of heavy jobs between nodes of
#       different groups. Per heavy job on n nodes (Slurm's allocation, node
#       order): a closed ring all-reduce, one flow per node to the next,
#       each flow carrying 2(n-1)/n x B bytes per iteration, B = the bytes
#       per iteration of the astra-sim profile drawn for the job's log id
#       (as topognn-sim draws it, seed 1), iterations = the job's runtime
#       in the log / (compute per iteration + 2(n-1)/n x B x 8 / 800 Gb/s);
#       summed over the flows whose two nodes are in different groups.
#   mean_wait_s              start - submit over all jobs (slurmctld.log
#       millisecond timestamps; jobcomp seconds when the log lacks a job)
#   sched_cycle_mean_us      sdiag "Main schedule statistics" Mean cycle
#   bf_cycle_mean_us         sdiag "Backfilling stats" Mean cycle
#   sim_tree_agreement       share of the tree run's allocations that the
#       engine's `tree` policy (topognn-sim's baseline) reproduces exactly
#       when replayed in slurmctld.log order on the same busy nodes (a
#       backfill start also avoiding the nodes its backfill cycle planned
#       for other waiting jobs, logged with DebugFlags=Backfill);
#       sim_tree_agreement_ignoring_plans: without that;
#       sim_tree_disagree_recent_release: disagreements where the policy
#       took a node whose job had ended < 1 s before (possibly still
#       completing in Slurm, which the log does not show);
#       sim_tree_agreement_no_queue: the same over the allocations made
#       while no other job waited (backfill reserves particular nodes for
#       waiting jobs, which the replay cannot see)
#
# Usage: bench/slurm.sh [--json] [--jobs N] [--skip K] [--span S]
#                       [--max-runtime R] [--trace FILE] [--out DIR | --report DIR]
#   --out DIR keeps the inputs, logs and records (default: a temp dir,
#   removed at exit); --report DIR analyses a kept DIR again and prints the
#   report without running Slurm (e.g. once as a table, once with --json).
# Environment: as tests/slurm/cluster.sh (TOPOGNN_SLURM_PREFIX, ...), plus
#   TOPOGNN_BUILD_DIR      build configured --with-slurm-source (default
#                          <repo>/_build/default)
#   TOPOGNN_PLUGIN_SO_DIR  dir of topology_topognn.so, prep_topognn.so
#   TOPOGNN_BENCH_RETRIES  start attempts while another cluster runs (15,
#                          60 s apart)
#   TOPOGNN_BENCH_DRAIN    seconds to wait for the queue after the last
#                          submission (420)
set -euo pipefail

script_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd -- "$script_dir/.." && pwd)
cluster="$repo_root/tests/slurm/cluster.sh"

build_dir=${TOPOGNN_BUILD_DIR:-$repo_root/_build/default}
so_dir=${TOPOGNN_PLUGIN_SO_DIR:-$build_dir/slurm-plugin/.libs}
retries=${TOPOGNN_BENCH_RETRIES:-15}
drain_s=${TOPOGNN_BENCH_DRAIN:-420}
export TOPOGNN_CLUSTER_DIR=${TOPOGNN_CLUSTER_DIR:-$repo_root/.local/cluster-bench}
export TOPOGNN_CLUSTER_NODES=32

readonly FABRIC="groups=4,hosts=8,rails=2,spines=2,prefix=n,digits=3"

json=0 jobs=300 skip=0 span=240 max_runtime=120 out="" report=""
trace="$repo_root/examples/traces/KTH-SP2-1996-2.1-cln.swf.gz"
while (( $# )); do
    case $1 in
        --json) json=1; shift ;;
        --jobs) jobs=$2; shift 2 ;;
        --skip) skip=$2; shift 2 ;;
        --span) span=$2; shift 2 ;;
        --max-runtime) max_runtime=$2; shift 2 ;;
        --trace) trace=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --report) report=$2; shift 2 ;;
        *) printf 'usage: %s [--json] [--jobs N] [--skip K] [--span S] [--max-runtime R] [--trace FILE] [--out DIR | --report DIR]\n' "$0" >&2
           exit 2 ;;
    esac
done

say() { printf '[bench/slurm] %s\n' "$*" >&2; }
die() { printf '[bench/slurm] ERROR: %s\n' "$*" >&2; exit 1; }

replay="$build_dir/bench/slurm_replay"
for f in "$replay" "$build_dir/slurm-plugin/fattree_json" "$build_dir/tools/topognn-discover" \
         "$so_dir/topology_topognn.so" "$so_dir/prep_topognn.so"; do
    [[ -e "$f" ]] || die "missing $f (configure --with-slurm-source and make)"
done
[[ -f "$trace" ]] || die "no trace at $trace (--trace FILE)"

if [[ -n "$report" ]]; then
    [[ -f "$report/tree/sdiag.txt" && -f "$report/topognn/sdiag.txt" ]] \
        || die "$report holds no finished run (tree/sdiag.txt, topognn/sdiag.txt)"
    work=$(cd -- "$report" && pwd)
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
cleanup() {
    [[ -n "$report" ]] || "$cluster" stop >/dev/null 2>&1 || true
    (( keep )) || rm -rf -- "$work"
}
trap cleanup EXIT

# ---- inputs ------------------------------------------------------------------
if [[ -z "$report" ]]; then
"$build_dir/slurm-plugin/fattree_json" "$FABRIC" > "$work/graph.json"
"$build_dir/tools/topognn-discover" --graph "$work/graph.json" --topology-conf tree \
    > "$work/topology.conf"
"$replay" schedule --trace "$trace" --jobs "$jobs" --skip "$skip" --nodes 32 \
    --machine-procs 100 --span "$span" --max-runtime "$max_runtime" > "$work/schedule.txt"
say "$(head -n 1 "$work/schedule.txt" | sed 's/^# //')"
cat > "$work/topognn.conf" <<EOF
# topognn.conf for bench/slurm.sh
GraphFile=$work/graph.json
Mode=enforce
DecisionLog=$work/topognn/decisions.jsonl
Candidates=32
ClassRule=name=^none- class=none
ClassRule=name=^heavy- class=heavy
EOF
# DebugFlags=Backfill logs backfill's node plans for waiting jobs (for
# sim_tree_agreement) at level verbose; both runs log the same, so both pay
# the same. (A repeated slurm.conf key: Slurm uses the last value.)
printf 'DebugFlags=Backfill\nSlurmctldDebug=verbose\n' > "$work/tree-extra.conf"
cat "$work/tree-extra.conf" > "$work/topognn-extra.conf"
printf 'PrEpPlugins=prep/script,prep/topognn\n' >> "$work/topognn-extra.conf"
fi
njobs=$(grep -vc '^#' "$work/schedule.txt")

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

submit_all() { # run_dir
    local dir=$1 t0 now delay submit nodes limit sleep_s name rest failed=0
    t0=$EPOCHREALTIME
    while read -r submit nodes limit sleep_s name rest; do
        [[ "$submit" == \#* ]] && continue
        now=$EPOCHREALTIME
        delay=$(awk -v a="$t0" -v b="$now" -v s="$submit" 'BEGIN { d = a + s - b; print (d > 0 ? d : 0) }')
        sleep "$delay"
        if ! timeout 10 sbatch --parsable --exclusive -N "$nodes" --time="$limit" -J "$name" \
                --comment "comm=${name%%-*}" --chdir="$dir" --output=/dev/null \
                --wrap "sleep $sleep_s" >> "$dir/sbatch.ids" 2>> "$dir/sbatch.err"; then
            failed=$(( failed + 1 ))
        fi
    done < "$work/schedule.txt"
    echo "$failed" > "$dir/sbatch.failed"
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

run_once() { # name topology-plugin
    local name=$1 plugin=$2 dir="$work/$1" t_start
    mkdir -p -- "$dir"
    chmod 755 "$dir"
    export TOPOGNN_TOPOLOGY_PLUGIN=$plugin
    if [[ "$name" == tree ]]; then
        export TOPOGNN_TOPOLOGY_CONF="$work/topology.conf"
        export TOPOGNN_CLUSTER_EXTRA_CONF="$work/tree-extra.conf"
        unset TOPOGNN_PLUGIN_DIRS TOPOGNN_CLUSTER_EXTRA_FILES
    else
        unset TOPOGNN_TOPOLOGY_CONF
        export TOPOGNN_PLUGIN_DIRS="$so_dir"
        export TOPOGNN_CLUSTER_EXTRA_CONF="$work/topognn-extra.conf"
        export TOPOGNN_CLUSTER_EXTRA_FILES="$work/topognn.conf"
    fi
    start_cluster || die "$name: the cluster did not start"
    eval "$("$cluster" env)"
    say "$name: cluster up ($plugin); submitting $njobs jobs over ${span} s"
    t_start=$SECONDS
    submit_all "$dir"
    say "$name: submitted ($(cat "$dir/sbatch.failed") refused); waiting for the queue (<= ${drain_s} s)"
    if wait_drained; then
        echo 1 > "$dir/drained"
    else
        echo 0 > "$dir/drained"
        say "$name: queue not empty after ${drain_s} s; cancelling the rest"
        timeout 10 scancel --user="$(id -un)" || true
        sleep 3
    fi
    echo $(( SECONDS - t_start )) > "$dir/elapsed_s"
    timeout 10 sdiag > "$dir/sdiag.txt" 2>&1 || true
    cp -- "$TOPOGNN_CLUSTER_DIR/log/jobcomp.txt" "$dir/jobcomp.txt" 2>/dev/null || : > "$dir/jobcomp.txt"
    cp -- "$TOPOGNN_CLUSTER_DIR/log/slurmctld.log" "$dir/slurmctld.log"
    "$cluster" stop >/dev/null 2>&1 || true
    say "$name: done in $(cat "$dir/elapsed_s") s"
}

# sdiag's "Mean cycle" of a section ("Main schedule" or "Backfilling")
sdiag_mean() { # file section
    awk -v sec="$2" 'index($0, sec) { on = 1 } on && /Mean cycle:/ { print $3; exit }' "$1"
}

analyze() { # name [--agreement]
    local dir="$work/$1"
    shift
    "$replay" analyze --graph "$work/graph.json" --schedule "$work/schedule.txt" \
        --jobcomp "$dir/jobcomp.txt" --ctld-log "$dir/slurmctld.log" "$@" > "$dir/metrics.txt"
    printf 'sched_cycle_mean_us %s\n' "$(sdiag_mean "$dir/sdiag.txt" 'Main schedule')" >> "$dir/metrics.txt"
    printf 'bf_cycle_mean_us %s\n' "$(sdiag_mean "$dir/sdiag.txt" 'Backfilling')" >> "$dir/metrics.txt"
    printf 'sbatch_refused %s\n' "$(cat "$dir/sbatch.failed")" >> "$dir/metrics.txt"
    printf 'drained %s\n' "$(cat "$dir/drained")" >> "$dir/metrics.txt"
    printf 'elapsed_s %s\n' "$(cat "$dir/elapsed_s")" >> "$dir/metrics.txt"
}

if [[ -z "$report" ]]; then
    run_once tree topology/tree
    run_once topognn topology/topognn
fi
analyze tree --agreement
analyze topognn

# ---- report ------------------------------------------------------------------
declare -A T G
while read -r k v; do T[$k]=${v:-0}; done < "$work/tree/metrics.txt"
while read -r k v; do G[$k]=${v:-0}; done < "$work/topognn/metrics.txt"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "null"; else printf "%.3f", a / b }'; }
metrics=(cross_group_bytes_heavy cross_group_frac_heavy heavy_jobs_multi_group mean_wait_s
         sched_cycle_mean_us bf_cycle_mean_us jobs heavy_jobs)

if (( json )); then
    obj() { # assoc-name
        local -n m=$1
        local k sep=""
        printf '{'
        for k in "${metrics[@]}" sbatch_refused drained elapsed_s; do
            printf '%s"%s": %s' "$sep" "$k" "${m[$k]:-null}"
            sep=", "
        done
        printf '}'
    }
    printf '{"jobs_scheduled": %s, "tree": %s, "topognn": %s, "ratio": {' "$njobs" "$(obj T)" "$(obj G)"
    sep=""
    for k in "${metrics[@]}"; do
        printf '%s"%s": %s' "$sep" "$k" "$(ratio "${G[$k]:-0}" "${T[$k]:-0}")"
        sep=", "
    done
    printf '}, "sim_tree_agreement": %s, "sim_tree_compared": %s' \
        "${T[sim_tree_agreement]:-null}" "${T[sim_tree_compared]:-0}"
    printf ', "sim_tree_agreement_ignoring_plans": %s, "sim_tree_backfill_plans": %s' \
        "${T[sim_tree_agreement_ignoring_plans]:-null}" "${T[sim_tree_backfill_plans]:-0}"
    printf ', "sim_tree_agreement_no_queue": %s, "sim_tree_compared_no_queue": %s' \
        "${T[sim_tree_agreement_no_queue]:-null}" "${T[sim_tree_compared_no_queue]:-0}"
    printf ', "sim_tree_disagree_recent_release": %s}\n' "${T[sim_tree_disagree_recent_release]:-null}"
else
    printf 'bench/slurm: %s jobs of the KTH SP2 log on 32 slurmd (4 groups x 8 hosts x 2 rails)\n' "$njobs"
    printf '%-26s %14s %14s %14s\n' metric tree topognn topognn/tree
    for k in "${metrics[@]}"; do
        printf '%-26s %14s %14s %14s\n' "$k" "${T[$k]:-?}" "${G[$k]:-?}" "$(ratio "${G[$k]:-0}" "${T[$k]:-0}")"
    done
    printf '%-26s %14s %14s\n' drained "${T[drained]}" "${G[drained]}"
    printf '%-26s %14s %14s\n' elapsed_s "${T[elapsed_s]}" "${G[elapsed_s]}"
    printf 'sim_tree_agreement %s (%s allocations of the tree run replayed)\n' \
        "${T[sim_tree_agreement]:-?}" "${T[sim_tree_compared]:-0}"
    printf 'sim_tree_agreement_ignoring_plans %s (backfill plans not applied; %s plans logged)\n' \
        "${T[sim_tree_agreement_ignoring_plans]:-?}" "${T[sim_tree_backfill_plans]:-0}"
    printf 'sim_tree_agreement_no_queue %s (%s of them made while no other job waited)\n' \
        "${T[sim_tree_agreement_no_queue]:-?}" "${T[sim_tree_compared_no_queue]:-0}"
    printf 'sim_tree_disagree_recent_release %s (disagreements where tree took a node freed < 1 s before)\n' \
        "${T[sim_tree_disagree_recent_release]:-?}"
fi
(( keep )) && say "records kept in $work"
exit 0
