#!/usr/bin/env bash
# bench/slurm.sh: topology/tree against topology/topognn on a real localhost
# Slurm cluster, over several slices of a real job log, each replayed several
# times per plugin (docs/bench.md). Not part of make check or scripts/test.sh:
# one run takes about 3 minutes, `--slices 3 --replicates 2` about 40.
#
# What it does:
#   1. a fabric of 4 groups x 8 hosts x 2 rails (fattree_json, hosts
#      n001..n032), the topology.conf that topognn-discover writes for it;
#   2. K slices of the KTH SP2 log (bench/slurm_replay schedule): slice k
#      starts at the log's job skip + k x stride; every slice is compressed
#      by the same factor F (default 1000: 1,000 s of the log in 1 s, so the
#      offered load stays the log's) and holds the jobs submitted within the
#      first S seconds of compressed time (default 80); processors map to
#      nodes as ceil(procs x 32 / 100); runs capped at R s (default 60);
#   3. for each slice, N replicates; each replicate runs tree and topognn on
#      a fresh 32-slurmd cluster (tests/slurm/cluster.sh), alternating which
#      goes first (ABBA), each run under its own flock of the machine's
#      cluster lock (TOPOGNN_BENCH_LOCK), so other users can interleave;
#   4. a run: start, wait until every node is idle, then submit the whole
#      slice ahead of time with `sbatch --begin=T0+floor(submit_s)` (T0 a
#      start barrier far enough ahead for all submissions), so the job's
#      eligibility times are exact and the same in every run instead of
#      depending on when a loaded shell got to each sbatch; at T0 reset
#      sdiag; after the last begin time wait until the queue is empty
#      (bounded), save sdiag, the jobcomp records and slurmctld.log, stop;
#        sbatch --exclusive -N n --time=limit -J heavy-<id>|none-<id> \
#               --comment comm=heavy|none --begin=... --wrap "sleep s"
#      multi-node jobs are named heavy-*, and topognn.conf's
#      ClassRule=name=^heavy- class=heavy makes them heavy;
#   5. bench/slurm_replay analyze turns each run into metrics (waits count
#      from each job's begin time), and the report gives per slice the
#      topognn/tree ratio of each replicate pair and the median over all
#      pairs (median_ratio), and sim_tree_agreement (the median over the
#      tree runs).
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
#                       [--max-runtime R] [--trace FILE] [--out DIR | --report DIR]
#   --out DIR keeps the inputs, logs and records (default: a temp dir,
#   removed at exit); --report DIR analyses a kept DIR again and prints the
#   report without running Slurm.
# Environment: as tests/slurm/cluster.sh (TOPOGNN_SLURM_PREFIX,
#   TOPOGNN_CLUSTER_PORT, ...), plus
#   TOPOGNN_BUILD_DIR      build configured --with-slurm-source (default
#                          <repo>/_build/default)
#   TOPOGNN_PLUGIN_SO_DIR  dir of topology_topognn.so, prep_topognn.so
#   TOPOGNN_BENCH_LOCK     the lock file taken around each single run
#                          (/tmp/topognn-slurm.lock; "none": no lock). Do not
#                          run the whole script under flock of the same file.
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
lock=${TOPOGNN_BENCH_LOCK:-/tmp/topognn-slurm.lock}
export TOPOGNN_CLUSTER_DIR=${TOPOGNN_CLUSTER_DIR:-$repo_root/.local/cluster-bench}
export TOPOGNN_CLUSTER_NODES=32

readonly FABRIC="groups=4,hosts=8,rails=2,spines=2,prefix=n,digits=3"
readonly METRICS=(cross_group_bytes_heavy heavy_jobs_multi_group mean_wait_s
                  sched_cycle_mean_us bf_cycle_mean_us)

json=0 slices=1 replicates=1 skip=0 stride=5000 factor=1000 span=80 jobs=400
max_runtime=60 out="" report=""
trace="$repo_root/examples/traces/KTH-SP2-1996-2.1-cln.swf.gz"
usage() {
    printf 'usage: %s [--json] [--slices K] [--replicates N] [--skip J] [--stride J] [--factor F]\n' "$0" >&2
    printf '       [--span S] [--jobs N] [--max-runtime R] [--trace FILE] [--out DIR | --report DIR]\n' >&2
    exit 2
}
while (( $# )); do
    case $1 in
        --json) json=1; shift ;;
        --slices|--replicates|--skip|--stride|--factor|--span|--jobs|--max-runtime)
            (( $# >= 2 )) && [[ "$2" =~ ^[0-9]+$ ]] || usage
            v=${1#--}
            printf -v "${v//-/_}" '%s' "$2"; shift 2 ;;
        --trace) trace=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --report) report=$2; shift 2 ;;
        *) usage ;;
    esac
done
(( slices >= 1 && replicates >= 1 && factor >= 1 && span >= 10 )) || usage

say() { printf '[bench/slurm] %s\n' "$*" >&2; }
die() { printf '[bench/slurm] ERROR: %s\n' "$*" >&2; exit 1; }

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
cleanup() {
    (( keep )) || rm -rf -- "$work"
}
trap cleanup EXIT

# ---- inputs ------------------------------------------------------------------
if [[ -z "$report" ]]; then
    printf 'slices=%d replicates=%d skip=%d stride=%d factor=%d span=%d jobs=%d max_runtime=%d\n' \
        "$slices" "$replicates" "$skip" "$stride" "$factor" "$span" "$jobs" "$max_runtime" \
        > "$work/params"
    "$build_dir/slurm-plugin/fattree_json" "$FABRIC" > "$work/graph.json"
    "$build_dir/tools/topognn-discover" --graph "$work/graph.json" --topology-conf tree \
        > "$work/topology.conf"
    for (( k = 1; k <= slices; k++ )); do
        mkdir -p "$work/s$k"
        "$replay" schedule --trace "$trace" --jobs "$jobs" --skip $(( skip + (k - 1) * stride )) \
            --nodes 32 --machine-procs 100 --span "$span" --factor "$factor" \
            --max-runtime "$max_runtime" > "$work/s$k/schedule.txt"
        say "slice $k: $(head -n 1 "$work/s$k/schedule.txt" | sed 's/^# //')"
    done
    # DebugFlags=Backfill logs backfill's node plans for waiting jobs (for
    # sim_tree_agreement) at level verbose; both runs log the same, so both
    # pay the same. (A repeated slurm.conf key: Slurm uses the last value.)
    printf 'DebugFlags=Backfill\nSlurmctldDebug=verbose\n' > "$work/tree-extra.conf"
    cat "$work/tree-extra.conf" > "$work/topognn-extra.conf"
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
submit_all() { # run_dir schedule t0
    local dir=$1 schedule=$2 t0=$3 submit nodes limit sleep_s name rest begin
    local failed=0 late=0
    while read -r submit nodes limit sleep_s name rest; do
        [[ "$submit" == \#* ]] && continue
        begin=$(( t0 + ${submit%%.*} ))
        (( EPOCHSECONDS < begin )) || late=$(( late + 1 ))
        if ! timeout 10 sbatch --parsable --exclusive -N "$nodes" --time="$limit" -J "$name" \
                --comment "comm=${name%%-*}" --chdir="$dir" --output=/dev/null \
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
    local dir=$1 name=$2 plugin=$3 schedule=$4 t_start t0 njobs last
    mkdir -p -- "$dir"
    chmod 755 "$dir"
    export TOPOGNN_TOPOLOGY_PLUGIN=$plugin
    if [[ "$name" == tree ]]; then
        export TOPOGNN_TOPOLOGY_CONF="$work/topology.conf"
        export TOPOGNN_CLUSTER_EXTRA_CONF="$work/tree-extra.conf"
        unset TOPOGNN_PLUGIN_DIRS TOPOGNN_CLUSTER_EXTRA_FILES
    else
        cat > "$dir/topognn.conf" <<EOF
# topognn.conf for bench/slurm.sh
GraphFile=$work/graph.json
Mode=enforce
DecisionLog=$dir/decisions.jsonl
Candidates=32
ClassRule=name=^none- class=none
ClassRule=name=^heavy- class=heavy
EOF
        unset TOPOGNN_TOPOLOGY_CONF
        export TOPOGNN_PLUGIN_DIRS="$so_dir"
        export TOPOGNN_CLUSTER_EXTRA_CONF="$work/topognn-extra.conf"
        export TOPOGNN_CLUSTER_EXTRA_FILES="$dir/topognn.conf"
    fi
    start_cluster || { say "$name: the cluster did not start"; return 1; }
    eval "$("$cluster" env)"
    "$cluster" wait-idle >/dev/null || { "$cluster" stop >/dev/null 2>&1; return 1; }
    njobs=$(grep -vc '^#' "$schedule")
    last=$(awk '!/^#/ { t = $1 } END { printf "%d", t }' "$schedule")
    # the barrier: ahead by the submissions' time (0.25 s each on a loaded
    # 2-core machine) plus 10 s
    t0=$(( EPOCHSECONDS + 10 + (njobs + 3) / 4 ))
    echo "$t0" > "$dir/t0"
    say "$name: cluster up ($plugin); $njobs jobs, begin times T0..T0+${last} s"
    submit_all "$dir" "$schedule" "$t0"
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
        timeout 10 scancel --user="$(id -un)" || true
        sleep 3
    fi
    echo $(( SECONDS - t_start )) > "$dir/elapsed_s"
    timeout 10 sdiag > "$dir/sdiag.txt" 2>&1 || true
    cp -- "$TOPOGNN_CLUSTER_DIR/log/jobcomp.txt" "$dir/jobcomp.txt" 2>/dev/null || : > "$dir/jobcomp.txt"
    cp -- "$TOPOGNN_CLUSTER_DIR/log/slurmctld.log" "$dir/slurmctld.log"
    "$cluster" stop >/dev/null 2>&1 || true
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
    } >> "$dir/metrics.txt"
}

if [[ -z "$report" ]]; then
    for (( k = 1; k <= slices; k++ )); do
        for (( r = 1; r <= replicates; r++ )); do
            order=(tree topognn)
            (( r % 2 )) || order=(topognn tree)
            for name in "${order[@]}"; do
                plugin=topology/$name
                say "slice $k/$slices, replicate $r/$replicates: $name"
                locked_run "$work/s$k/r$r/$name" "$name" "$plugin" "$work/s$k/schedule.txt" \
                    || die "slice $k replicate $r $name failed"
            done
        done
    done
fi

# ---- report ------------------------------------------------------------------
val() { awk -v k="$2" '$1 == k { print $2; exit }' "$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0 || a == "") print "null"; else printf "%.3f", a / b }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) print "null"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

: > "$work/ratios.txt"
: > "$work/agreement.txt"
for (( k = 1; k <= slices; k++ )); do
    for (( r = 1; r <= replicates; r++ )); do
        d="$work/s$k/r$r"
        [[ -f "$d/tree/sdiag.txt" && -f "$d/topognn/sdiag.txt" ]] || die "$d: a run is missing"
        analyze "$d/tree" "$work/s$k/schedule.txt" --agreement
        analyze "$d/topognn" "$work/s$k/schedule.txt"
        for m in "${METRICS[@]}"; do
            printf '%d %d %s %s\n' "$k" "$r" "$m" \
                "$(ratio "$(val "$d/topognn/metrics.txt" "$m")" "$(val "$d/tree/metrics.txt" "$m")")" \
                >> "$work/ratios.txt"
        done
        printf '%d %d %s\n' "$k" "$r" "$(val "$d/tree/metrics.txt" sim_tree_agreement)" >> "$work/agreement.txt"
    done
done
ratios_of() { # metric [slice]
    awk -v m="$1" -v k="${2:-0}" '$3 == m && (k == 0 || $1 == k) && $4 != "null" { print $4 }' "$work/ratios.txt"
}
agreement_median=$(awk '$3 != "" { print $3 }' "$work/agreement.txt" | median)

if (( json )); then
    obj() { # metrics-file
        local k sep=""
        printf '{'
        for k in "${METRICS[@]}" jobs heavy_jobs sim_tree_agreement sbatch_refused sbatch_late drained elapsed_s; do
            v=$(val "$1" "$k")
            printf '%s"%s": %s' "$sep" "$k" "${v:-null}"
            sep=", "
        done
        printf '}'
    }
    printf '{"slices": %d, "replicates": %d, "factor": %d, "span_s": %d, "median_ratio": {' \
        "$slices" "$replicates" "$factor" "$span"
    sep=""
    for m in "${METRICS[@]}"; do
        printf '%s"%s": %s' "$sep" "$m" "$(ratios_of "$m" | median)"
        sep=", "
    done
    printf '}, "sim_tree_agreement": %s, "per_slice": [' "$agreement_median"
    for (( k = 1; k <= slices; k++ )); do
        (( k == 1 )) || printf ', '
        printf '{"slice": %d, "schedule": "%s", "median_ratio": {' "$k" \
            "$(head -n 1 "$work/s$k/schedule.txt" | sed 's/^# //; s/"/'"'"'/g')"
        sep=""
        for m in "${METRICS[@]}"; do
            printf '%s"%s": %s' "$sep" "$m" "$(ratios_of "$m" "$k" | median)"
            sep=", "
        done
        printf '}, "runs": ['
        for (( r = 1; r <= replicates; r++ )); do
            (( r == 1 )) || printf ', '
            printf '{"replicate": %d, "tree": %s, "topognn": %s, "ratio": {' "$r" \
                "$(obj "$work/s$k/r$r/tree/metrics.txt")" "$(obj "$work/s$k/r$r/topognn/metrics.txt")"
            sep=""
            for m in "${METRICS[@]}"; do
                printf '%s"%s": %s' "$sep" "$m" \
                    "$(awk -v k="$k" -v r="$r" -v m="$m" '$1 == k && $2 == r && $3 == m { print $4 }' "$work/ratios.txt")"
                sep=", "
            done
            printf '}}'
        done
        printf ']}'
    done
    printf ']}\n'
else
    printf 'bench/slurm: %d slices x %d replicates of the KTH SP2 log (compressed %dx, %d s each) on 32 slurmd\n' \
        "$slices" "$replicates" "$factor" "$span"
    for (( k = 1; k <= slices; k++ )); do
        printf '\nslice %d: %s\n' "$k" "$(head -n 1 "$work/s$k/schedule.txt" | sed 's/^# //')"
        printf '%-26s' 'topognn/tree'
        for (( r = 1; r <= replicates; r++ )); do printf ' %9s' "rep$r"; done
        printf ' %9s\n' median
        for m in "${METRICS[@]}"; do
            printf '%-26s' "$m"
            for (( r = 1; r <= replicates; r++ )); do
                printf ' %9s' "$(awk -v k="$k" -v r="$r" -v m="$m" '$1 == k && $2 == r && $3 == m { print $4 }' "$work/ratios.txt")"
            done
            printf ' %9s\n' "$(ratios_of "$m" "$k" | median)"
        done
        for (( r = 1; r <= replicates; r++ )); do
            for name in tree topognn; do
                f="$work/s$k/r$r/$name/metrics.txt"
                printf '  rep%d %-8s jobs %s heavy %s multi-group %s wait %s s main %s us bf %s us drained %s late %s\n' \
                    "$r" "$name" "$(val "$f" jobs)" "$(val "$f" heavy_jobs)" \
                    "$(val "$f" heavy_jobs_multi_group)" "$(val "$f" mean_wait_s)" \
                    "$(val "$f" sched_cycle_mean_us)" "$(val "$f" bf_cycle_mean_us)" \
                    "$(val "$f" drained)" "$(val "$f" sbatch_late)"
            done
        done
    done
    printf '\nmedian over all %d pairs (topognn/tree):\n' $(( slices * replicates ))
    for m in "${METRICS[@]}"; do
        printf '  %-26s %s\n' "$m" "$(ratios_of "$m" | median)"
    done
    printf 'sim_tree_agreement (median over the tree runs): %s (%s)\n' "$agreement_median" \
        "$(awk '{ printf "%s%s", s, $3; s = " " }' "$work/agreement.txt")"
fi
(( keep )) && say "records kept in $work"
exit 0
