#!/usr/bin/env bash
# bench/slurm_scale.sh: the scheduler's cost of topology/topognn against
# topology/tree on a real localhost Slurm cluster with many slurmd and a deep
# queue (docs/bench.md, "Scale on real Slurm"). Not part of make check or
# scripts/test.sh: one run per plugin takes about 10 minutes.
#
# What it does, once per plugin (tree first, then topognn):
#   1. starts NODES slurmd (default 128, tests/slurm/cluster.sh) on a
#      generated fat-tree of NODES/16 groups x 16 hosts x 2 rails (8 hosts
#      per group when NODES is not a multiple of 16); tree gets the
#      topology.conf that topognn-discover writes for that graph, topognn
#      the graph itself (Mode=enforce, DecisionLog, ClassRules, prep/topognn);
#   2. submits JOBS (default 2000) held jobs of mixed sizes (a fixed
#      pseudo-random mix of 1, 2, 4, 8, 16 and 32 nodes, 2-20 s of sleep,
#      `sbatch --hold --exclusive -N n --wrap "sleep s"`; the same mix for
#      both plugins), then releases them all at once and resets sdiag;
#   3. for WINDOW seconds (default 240) lets the scheduler work with the
#      queue deep, sampling slurmctld's RSS (/proc/PID/status) every 2 s;
#   4. saves sdiag, cancels whatever has not finished (scancel, repeated
#      until the queue is empty or 10 minutes pass: a loaded slurmctld
#      delays scancel's RPCs, and one scancel of ~1,400 jobs timed out),
#      and accounts for every job ID it submitted from its jobcomp/filetxt
#      record or `squeue -t all` state: COMPLETED, CANCELLED (by this
#      script), another end state, "left" (still pending or running when the
#      cluster stopped: the cancel did not get through) or "lost" (Slurm
#      knows no end and no state for it).
#
# Printed per plugin, with the ratio topognn/tree: sdiag main and backfill
# cycle (mean, max, cycles, mean depth, and mean cycle per job tested),
# slurmctld RSS (before submission, peak during the window, VmHWM), jobs
# completed in the window, and the job accounting. Goal (not a test):
# topognn's cycles at most 1.2x tree's.
#
# Usage: bench/slurm_scale.sh [--json] [--nodes N] [--jobs N] [--window S]
#                             [--only tree|topognn] [--lock FILE]
#                             [--out DIR | --report DIR]
#   --only runs one plugin into --out DIR (the other's results may already
#   be there); --report DIR prints what DIR holds without running Slurm;
#   --lock FILE takes `flock FILE` around each plugin's run (and releases it
#   in between), for machines where clusters take turns.
# Environment: as tests/slurm/cluster.sh (TOPOGNN_SLURM_PREFIX,
#   TOPOGNN_CLUSTER_PORT, TOPOGNN_CLUSTER_DIR, ...), plus
#   TOPOGNN_BUILD_DIR      build configured --with-slurm-source (default
#                          <repo>/_build/default)
#   TOPOGNN_PLUGIN_SO_DIR  dir of topology_topognn.so, prep_topognn.so
#   TOPOGNN_BENCH_SEED     seed of the job mix (1)
set -euo pipefail

script_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd -- "$script_dir/.." && pwd)
cluster="$repo_root/tests/slurm/cluster.sh"

build_dir=${TOPOGNN_BUILD_DIR:-$repo_root/_build/default}
so_dir=${TOPOGNN_PLUGIN_SO_DIR:-$build_dir/slurm-plugin/.libs}
seed=${TOPOGNN_BENCH_SEED:-1}
export TOPOGNN_CLUSTER_DIR=${TOPOGNN_CLUSTER_DIR:-$repo_root/.local/cluster-scale}
# many slurmd on a small machine start and register slowly
export TOPOGNN_CLUSTER_TIMEOUT=${TOPOGNN_CLUSTER_TIMEOUT:-600}

json=0 nodes=128 jobs=2000 window=240 only="" lock="" out="" report=""
usage() {
    printf 'usage: %s [--json] [--nodes N] [--jobs N] [--window S] [--only tree|topognn] [--lock FILE] [--out DIR | --report DIR]\n' "$0" >&2
    exit 2
}
while (( $# )); do
    case $1 in
        --json) json=1; shift ;;
        --nodes) nodes=${2:-}; shift 2 ;;
        --jobs) jobs=${2:-}; shift 2 ;;
        --window) window=${2:-}; shift 2 ;;
        --only) only=${2:-}; shift 2 ;;
        --lock) lock=${2:-}; shift 2 ;;
        --out) out=${2:-}; shift 2 ;;
        --report) report=${2:-}; shift 2 ;;
        *) usage ;;
    esac
done
if ! [[ "$nodes" =~ ^[1-9][0-9]*$ ]] || (( nodes % 8 != 0 || nodes > 992 )); then
    echo "--nodes must be a multiple of 8, at most 992" >&2
    exit 2
fi
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "--jobs must be a positive whole number" >&2; exit 2; }
[[ "$window" =~ ^[1-9][0-9]*$ ]] || { echo "--window must be a positive whole number" >&2; exit 2; }
[[ -z "$only" || "$only" == tree || "$only" == topognn ]] || usage
export TOPOGNN_CLUSTER_NODES=$nodes

say() { printf '[bench/slurm_scale] %s\n' "$*" >&2; }
die() { printf '[bench/slurm_scale] ERROR: %s\n' "$*" >&2; exit 1; }

if [[ -n "$report" ]]; then
    work=$(cd -- "$report" && pwd) || die "no dir $report"
    keep=1
elif [[ -n "$out" ]]; then
    mkdir -p -- "$out"
    work=$(cd -- "$out" && pwd)
    keep=1
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/topognn-scale.XXXXXX")
    keep=0
fi
chmod 755 "$work"
cleanup() {
    [[ -n "$report" ]] || "$cluster" stop >/dev/null 2>&1 || true
    (( keep )) || rm -rf -- "$work"
}
trap cleanup EXIT

# ---- inputs (the same for both plugins) -----------------------------------------
hosts=16
(( nodes % 16 == 0 )) || hosts=8
groups=$(( nodes / hosts ))
write_inputs() {
    local f
    for f in "$build_dir/slurm-plugin/fattree_json" "$build_dir/tools/topognn-discover" \
             "$so_dir/topology_topognn.so" "$so_dir/prep_topognn.so"; do
        [[ -e "$f" ]] || die "missing $f (configure --with-slurm-source and make)"
    done
    "$build_dir/slurm-plugin/fattree_json" \
        "groups=$groups,hosts=$hosts,rails=2,spines=2,prefix=n,digits=3" > "$work/graph.json"
    "$build_dir/tools/topognn-discover" --graph "$work/graph.json" --topology-conf tree \
        > "$work/topology.conf"
    cat > "$work/topognn.conf" <<EOF
# topognn.conf for bench/slurm_scale.sh
GraphFile=$work/graph.json
Mode=enforce
DecisionLog=$work/topognn/decisions.jsonl
Candidates=32
ClassRule=name=^none- class=none
ClassRule=name=^heavy- class=heavy
EOF
    : > "$work/tree-extra.conf"
    printf 'PrEpPlugins=prep/script,prep/topognn\n' > "$work/topognn-extra.conf"
    # the job mix: "nodes sleep_s" per line, from a seeded generator
    awk -v n="$jobs" -v seed="$seed" -v max="$nodes" 'BEGIN {
        srand(seed)
        for (i = 0; i < n; i++) {
            r = rand()
            size = r < 0.40 ? 1 : r < 0.60 ? 2 : r < 0.75 ? 4 : r < 0.87 ? 8 : r < 0.95 ? 16 : 32
            if (size > max) size = max
            printf "%d %d\n", size, 2 + int(rand() * 19)
        }
    }' > "$work/mix.txt"
}

# ---- one run -------------------------------------------------------------------
submit_held() { # dir
    local dir=$1 size sleep_s i=0 name id
    : > "$dir/ids.txt"
    : > "$dir/sbatch.err"
    while read -r size sleep_s; do
        i=$(( i + 1 ))
        if (( size == 1 )); then name=none-$i; else name=heavy-$i; fi
        if id=$(timeout 20 sbatch --parsable --hold --exclusive -N "$size" --time=10 \
                -J "$name" --chdir="$dir" --output=/dev/null --wrap "sleep $sleep_s" \
                2>> "$dir/sbatch.err"); then
            echo "${id%%;*}" >> "$dir/ids.txt"
        fi
    done < "$work/mix.txt"
}

release_all() { # dir: scontrol release in chunks of 200 IDs
    local dir=$1 chunk
    while read -r chunk; do
        timeout 30 scontrol release "$chunk" || say "scontrol release failed for a chunk"
    done < <(awk '{ ids = ids (n++ % 200 ? "," : "") $1; if (n % 200 == 0) { print ids; ids = "" } }
                  END { if (ids != "") print ids }' "$dir/ids.txt")
}

rss_kb() { # pid field
    awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0
}

count_done() { # -> jobs with a COMPLETED jobcomp record
    local n
    n=$(grep -c 'JobState=COMPLETED' "$TOPOGNN_CLUSTER_DIR/log/jobcomp.txt" 2>/dev/null) || true
    echo "${n:-0}"
}

wait_empty() { # seconds -> 0 when no job is pending, running or completing
    local deadline=$(( SECONDS + $1 )) q
    while (( SECONDS < deadline )); do
        q=$(timeout 10 squeue -h -t PD,R,CG,CF,S -o %i 2>/dev/null | wc -l) || q=1
        (( q == 0 )) && return 0
        sleep 2
    done
    return 1
}

# scancel until nothing is queued (at most 10 minutes of attempts)
cancel_all() { # name
    local deadline=$(( SECONDS + 600 ))
    while (( SECONDS < deadline )); do
        timeout 60 scancel --user="$(id -un)" || say "$1: scancel did not finish, again"
        wait_empty 60 && return 0
    done
    say "$1: jobs still queued 10 minutes after the first scancel"
}

# The job states the accounting reads: jobcomp's records and squeue -t all.
save_states() { # dir
    local dir=$1
    timeout 30 squeue -h -t all -o '%i %T' > "$dir/squeue-all.txt" 2>/dev/null || : > "$dir/squeue-all.txt"
    cp -- "$TOPOGNN_CLUSTER_DIR/log/jobcomp.txt" "$dir/jobcomp.txt" 2>/dev/null || : > "$dir/jobcomp.txt"
}

# Every submitted ID's end state: jobcomp first, then squeue -t all.
account() { # dir -> "key value" lines
    local dir=$1
    awk '
        FILENAME ~ /jobcomp/ {
            id = ""; st = ""
            for (i = 1; i <= NF; i++) {
                if ($i ~ /^JobId=/) id = substr($i, 7)
                if ($i ~ /^JobState=/) st = substr($i, 10)
            }
            if (id != "" && !(id in end)) end[id] = st
            next
        }
        FILENAME ~ /squeue/ { if (!($1 in end)) end[$1] = $2; next }
        { submitted++; ids[$1] = 1 }
        END {
            for (id in ids) {
                st = (id in end) ? end[id] : "LOST"
                if (st == "COMPLETED") completed++
                else if (st == "CANCELLED") cancelled++
                else if (st == "LOST") lost++
                else if (st ~ /^(PENDING|RUNNING|COMPLETING|CONFIGURING|SUSPENDED)$/) left++
                else other++
            }
            printf "submitted %d\ncompleted %d\ncancelled %d\nother_end %d\nleft %d\nlost %d\n",
                submitted, completed, cancelled, other, left, lost
        }' "$dir/jobcomp.txt" "$dir/squeue-all.txt" "$dir/ids.txt"
}

run_once() { # name plugin
    local name=$1 plugin=$2 dir="$work/$1" pid t0 peak=0 rss done0 submitted
    rm -rf -- "$dir"
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
    say "$name: starting $nodes slurmd ($plugin)"
    t0=$SECONDS
    "$cluster" start > "$dir/cluster-start.log" 2>&1 \
        || { tail -n 20 "$dir/cluster-start.log" >&2; die "$name: the cluster did not start with $nodes slurmd"; }
    echo $(( SECONDS - t0 )) > "$dir/start_s"
    grep -c 'is not running: starting it again' "$dir/cluster-start.log" > "$dir/slurmd_restarted" || true
    eval "$("$cluster" env)"
    read -r pid < "$TOPOGNN_CLUSTER_DIR/run/slurmctld.pid"   # first line: see cluster.sh pid_of
    rss_kb "$pid" VmRSS > "$dir/rss_idle_kb"
    say "$name: up in $(cat "$dir/start_s") s; submitting $jobs held jobs"
    t0=$SECONDS
    submit_held "$dir"
    submitted=$(wc -l < "$dir/ids.txt")
    echo $(( SECONDS - t0 )) > "$dir/submit_s"
    say "$name: $submitted submitted in $(cat "$dir/submit_s") s; releasing, then ${window} s of scheduling"
    release_all "$dir"
    timeout 10 sdiag --reset >/dev/null 2>&1 || say "sdiag --reset failed"
    done0=$(count_done)
    t0=$SECONDS
    while (( SECONDS - t0 < window )); do
        rss=$(rss_kb "$pid" VmRSS)
        (( rss > peak )) && peak=$rss
        sleep 2
    done
    echo "$peak" > "$dir/rss_peak_kb"
    rss_kb "$pid" VmHWM > "$dir/rss_hwm_kb"
    timeout 20 sdiag > "$dir/sdiag.txt" 2>&1 || true
    echo $(( $(count_done) - done0 )) > "$dir/completed_in_window"
    timeout 20 squeue -h -t PD -o %i 2>/dev/null | wc -l > "$dir/pending_at_end"
    date +%s > "$dir/cancel_epoch"
    cancel_all "$name"
    sleep 2
    save_states "$dir"
    cp -- "$TOPOGNN_CLUSTER_DIR/log/slurmctld.log" "$dir/slurmctld.log"
    "$cluster" stop > "$dir/cluster-stop.log" 2>&1 || say "$name: cluster stop reported a problem"
    say "$name: done ($(account "$dir" | tr '\n' ' '))"
}

run_locked() { # name plugin
    if [[ -n "$lock" ]]; then
        (
            flock 9
            run_once "$@"
        ) 9> "$lock" || exit 1
    else
        run_once "$@"
    fi
}

if [[ -z "$report" ]]; then
    write_inputs
    [[ -z "$only" || "$only" == tree ]] && run_locked tree topology/tree
    [[ -z "$only" || "$only" == topognn ]] && run_locked topognn topology/topognn
fi

# ---- report ----------------------------------------------------------------------
# sdiag value of a section: "Main schedule" or "Backfilling", key like "Mean cycle"
sdiag_val() { # file section key
    awk -v sec="$2" -v key="$3:" '
        index($0, sec) == 1 { on = 1; next }
        on && /^[A-Z]/ { on = 0 }
        on { line = $0; sub(/^[ \t]+/, "", line)
             if (index(line, key) == 1) { v = substr(line, length(key) + 1); gsub(/[ \t]/, "", v); print v; exit } }' "$1"
}

metrics() { # name -> "key value" lines
    local d="$work/$1" s
    [[ -f "$d/sdiag.txt" ]] || return 0
    s="$d/sdiag.txt"
    printf 'main_cycle_mean_us %s\n' "$(sdiag_val "$s" 'Main schedule' 'Mean cycle')"
    printf 'main_cycle_max_us %s\n' "$(sdiag_val "$s" 'Main schedule' 'Max cycle')"
    printf 'main_cycles %s\n' "$(sdiag_val "$s" 'Main schedule' 'Total cycles')"
    printf 'main_depth_mean %s\n' "$(sdiag_val "$s" 'Main schedule' 'Mean depth cycle')"
    printf 'bf_cycle_mean_us %s\n' "$(sdiag_val "$s" 'Backfilling' 'Mean cycle')"
    printf 'bf_cycle_max_us %s\n' "$(sdiag_val "$s" 'Backfilling' 'Max cycle')"
    printf 'bf_cycles %s\n' "$(sdiag_val "$s" 'Backfilling' 'Total cycles')"
    printf 'bf_depth_mean %s\n' "$(sdiag_val "$s" 'Backfilling' 'Depth Mean')"
    printf 'rss_idle_kb %s\n' "$(cat "$d/rss_idle_kb")"
    printf 'rss_peak_kb %s\n' "$(cat "$d/rss_peak_kb")"
    printf 'rss_hwm_kb %s\n' "$(cat "$d/rss_hwm_kb")"
    printf 'completed_in_window %s\n' "$(cat "$d/completed_in_window")"
    printf 'pending_at_end %s\n' "$(cat "$d/pending_at_end")"
    printf 'submit_s %s\n' "$(cat "$d/submit_s")"
    printf 'start_s %s\n' "$(cat "$d/start_s")"
    printf 'slurmd_restarted %s\n' "$(cat "$d/slurmd_restarted")"
    account "$d"
}

declare -A T G
while read -r k v; do T[$k]=$v; done < <(metrics tree)
while read -r k v; do G[$k]=$v; done < <(metrics topognn)
per_job() { # cycle depth -> cycle / depth
    awk -v c="$1" -v d="$2" 'BEGIN { if (c == "" || d + 0 == 0) print ""; else printf "%.1f", c / d }'
}
T[main_us_per_job]=$(per_job "${T[main_cycle_mean_us]:-}" "${T[main_depth_mean]:-}")
T[bf_us_per_job]=$(per_job "${T[bf_cycle_mean_us]:-}" "${T[bf_depth_mean]:-}")
G[main_us_per_job]=$(per_job "${G[main_cycle_mean_us]:-}" "${G[main_depth_mean]:-}")
G[bf_us_per_job]=$(per_job "${G[bf_cycle_mean_us]:-}" "${G[bf_depth_mean]:-}")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b + 0 == 0) print "null"; else printf "%.3f", a / b }'; }
keys=(main_cycle_mean_us main_cycle_max_us main_cycles main_depth_mean main_us_per_job
      bf_cycle_mean_us bf_cycle_max_us bf_cycles bf_depth_mean bf_us_per_job
      rss_idle_kb rss_peak_kb rss_hwm_kb completed_in_window pending_at_end
      submitted completed cancelled other_end left lost submit_s start_s slurmd_restarted)
ratio_keys=(main_cycle_mean_us main_cycle_max_us main_us_per_job bf_cycle_mean_us bf_cycle_max_us
            bf_us_per_job rss_peak_kb rss_hwm_kb completed_in_window)
num() { [[ "${1:-}" =~ ^-?[0-9]+(\.[0-9]+)?$ ]] && printf '%s' "$1" || printf 'null'; }

if (( json )); then
    obj() { # assoc-name
        local -n m=$1
        local k sep=""
        printf '{'
        for k in "${keys[@]}"; do
            printf '%s"%s": %s' "$sep" "$k" "$(num "${m[$k]:-}")"
            sep=", "
        done
        printf '}'
    }
    printf '{"nodes": %s, "jobs": %s, "window_s": %s, "tree": %s, "topognn": %s, "ratio": {' \
        "$nodes" "$jobs" "$window" "$(obj T)" "$(obj G)"
    sep=""
    for k in "${ratio_keys[@]}"; do
        printf '%s"%s": %s' "$sep" "$k" "$(ratio "${G[$k]:-}" "${T[$k]:-}")"
        sep=", "
    done
    printf '}}\n'
else
    printf 'bench/slurm_scale: %s slurmd (%s groups x %s hosts x 2 rails), %s held jobs released at once, %s s window\n' \
        "$nodes" "$groups" "$hosts" "$jobs" "$window"
    printf '%-22s %14s %14s %14s\n' metric tree topognn topognn/tree
    for k in "${keys[@]}"; do
        r=""
        for rk in "${ratio_keys[@]}"; do [[ $rk == "$k" ]] && r=$(ratio "${G[$k]:-}" "${T[$k]:-}"); done
        printf '%-22s %14s %14s %14s\n' "$k" "${T[$k]:-?}" "${G[$k]:-?}" "$r"
    done
fi
(( keep )) && say "records kept in $work"
exit 0
