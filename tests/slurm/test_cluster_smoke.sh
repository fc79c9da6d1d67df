#!/usr/bin/env bash
# test_cluster_smoke.sh: the local Slurm cluster starts, runs plain sbatch jobs and
# places them the way topology/tree should on a small two-level fabric.
#
# Fabric (topology.conf written here): 4 leaf switches x 8 nodes under 1 spine.
# Three `sbatch --exclusive -N 8` jobs run at once; each must land inside one leaf
# and no two may share a leaf. Allocations are read back from jobcomp/filetxt.
#
# Needs root and the Slurm from scripts/build-slurm.sh (built here if missing).
# Environment: as tests/slurm/cluster.sh; the run dir defaults to
# <repo>/.local/cluster-smoke. Prints "N passed, N failed" last; exit 1 on failure.
set -euo pipefail

script_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd -- "$script_dir/../.." && pwd)
cluster="$script_dir/cluster.sh"

export TOPOGNN_CLUSTER_DIR=${TOPOGNN_CLUSTER_DIR:-$repo_root/.local/cluster-smoke}
export TOPOGNN_CLUSTER_NODES=32
export TOPOGNN_TOPOLOGY_PLUGIN=topology/tree

readonly LEAVES=4 PER_LEAF=8 JOBS=3 JOB_TIMEOUT=90

passed=0
failed=0
pass() { passed=$(( passed + 1 )); printf 'ok   - %s\n' "$*"; }
fail() { failed=$(( failed + 1 )); printf 'FAIL - %s\n' "$*"; }

work=$(mktemp -d "${TMPDIR:-/tmp}/topognn-smoke.XXXXXX")
cleanup() {
    "$cluster" stop >/dev/null 2>&1 || true
    rm -rf -- "$work"
}
trap cleanup EXIT

# ---- setup -----------------------------------------------------------------
"$repo_root/scripts/build-slurm.sh"

{
    for (( l = 1; l <= LEAVES; l++ )); do
        printf 'SwitchName=leaf%d Nodes=n[%03d-%03d]\n' \
            "$l" $(( (l - 1) * PER_LEAF + 1 )) $(( l * PER_LEAF ))
    done
    printf 'SwitchName=spine Switches=leaf[1-%d]\n' "$LEAVES"
} > "$work/topology.conf"
export TOPOGNN_TOPOLOGY_CONF="$work/topology.conf"

eval "$("$cluster" env)"
if "$cluster" start; then
    pass "cluster started: $TOPOGNN_CLUSTER_NODES slurmd idle"
else
    fail "cluster start"
    printf '%d passed, %d failed\n' "$passed" "$failed"
    exit 1
fi
jobcomp="$TOPOGNN_CLUSTER_DIR/log/jobcomp.txt"

# ---- topology is loaded ----------------------------------------------------
topo=$(timeout 10 scontrol show topology 2>&1 || true)
switches=$(grep -c '^SwitchName=' <<< "$topo" || true)
if (( switches == LEAVES + 1 )); then
    pass "scontrol show topology lists $switches switches"
else
    fail "scontrol show topology lists $switches switches, want $(( LEAVES + 1 )): $topo"
fi

# ---- submit ----------------------------------------------------------------
job_ids=()
for (( j = 1; j <= JOBS; j++ )); do
    if id=$(timeout 10 sbatch --parsable --exclusive -N "$PER_LEAF" --job-name="smoke$j" \
            --chdir="$work" --output=/dev/null --wrap 'sleep 2'); then
        job_ids+=("${id%%;*}")
    else
        fail "sbatch job $j"
    fi
done
(( ${#job_ids[@]} == JOBS )) && pass "sbatch accepted $JOBS jobs: ${job_ids[*]}"

# ---- wait for completion records -------------------------------------------
record() { grep -E "^JobId=$1 " "$jobcomp" 2>/dev/null | tail -n 1; }
field() { tr ' ' '\n' <<< "$1" | sed -n "s/^$2=//p" | head -n 1; }

deadline=$(( SECONDS + JOB_TIMEOUT ))
while (( SECONDS < deadline )); do
    done_count=0
    for id in "${job_ids[@]}"; do
        [[ -n "$(record "$id")" ]] && done_count=$(( done_count + 1 ))
    done
    (( done_count == ${#job_ids[@]} )) && break
    sleep 1
done

# ---- assertions on the real allocations ------------------------------------
declare -A leaf_owner=()
for id in "${job_ids[@]}"; do
    rec=$(record "$id")
    if [[ -z "$rec" ]]; then
        fail "job $id: no completion record within ${JOB_TIMEOUT}s"
        timeout 10 squeue -j "$id" -o '%i %T %R %N' || true
        continue
    fi
    state=$(field "$rec" JobState)
    nodelist=$(field "$rec" NodeList)
    if [[ "$state" == COMPLETED ]]; then
        pass "job $id completed on $nodelist"
    else
        fail "job $id ended in state $state on $nodelist"
    fi

    mapfile -t hosts < <(timeout 10 scontrol show hostnames "$nodelist")
    if (( ${#hosts[@]} == PER_LEAF )); then
        pass "job $id got $PER_LEAF nodes"
    else
        fail "job $id got ${#hosts[@]} nodes ($nodelist), want $PER_LEAF"
    fi

    leaves=()
    for h in "${hosts[@]}"; do
        [[ "$h" =~ ^n([0-9]{3})$ ]] || { fail "job $id: unexpected host name $h"; continue; }
        leaves+=($(( (10#${BASH_REMATCH[1]} - 1) / PER_LEAF + 1 )))
    done
    mapfile -t distinct < <(printf '%s\n' "${leaves[@]}" | sort -u)
    if (( ${#distinct[@]} == 1 )); then
        pass "job $id lies within leaf${distinct[0]}"
        if [[ -n "${leaf_owner[${distinct[0]}]:-}" ]]; then
            fail "job $id and job ${leaf_owner[${distinct[0]}]} share leaf${distinct[0]}"
        else
            leaf_owner[${distinct[0]}]=$id
        fi
    else
        fail "job $id spans leaves ${distinct[*]} ($nodelist)"
    fi
done
if (( ${#leaf_owner[@]} == JOBS )); then
    pass "the $JOBS jobs occupy $JOBS distinct leaves"
else
    fail "the $JOBS jobs occupy ${#leaf_owner[@]} distinct whole leaves"
fi

# ---- a fragmented leaf: topology/tree must not straddle it -----------------
# A 4-node job holds half of one leaf; an 8-node job must then take a whole free
# leaf (Slurm's generic consecutive best-fit would take the 8 nodes right after
# the small job, straddling two leaves).
if small=$(timeout 10 sbatch --parsable --exclusive -N 4 --job-name=smoke-frag \
        --chdir="$work" --output=/dev/null --wrap 'sleep 60'); then
    small=${small%%;*}
    deadline=$(( SECONDS + 30 ))
    small_state=""
    while (( SECONDS < deadline )); do
        small_state=$(timeout 10 squeue -h -j "$small" -o '%T' 2>/dev/null || true)
        [[ "$small_state" == RUNNING ]] && break
        sleep 0.5
    done
    small_nodes=$(timeout 10 squeue -h -j "$small" -o '%N' 2>/dev/null || true)
    mapfile -t hosts < <(timeout 10 scontrol show hostnames "$small_nodes" 2>/dev/null || true)
    small_leaves=$(printf '%s\n' "${hosts[@]}" | sed -n 's/^n\([0-9]\{3\}\)$/\1/p' \
        | while read -r n; do echo $(( (10#$n - 1) / PER_LEAF + 1 )); done | sort -u | tr '\n' ' ')
    if [[ "$small_state" == RUNNING && ${#hosts[@]} -eq 4 && "$small_leaves" =~ ^[0-9]+\ $ ]]; then
        pass "4-node job $small runs on $small_nodes (leaf${small_leaves% })"
    else
        fail "4-node job $small: state '$small_state', nodes '$small_nodes', leaves '$small_leaves'"
    fi

    if big=$(timeout 10 sbatch --parsable --exclusive -N "$PER_LEAF" --job-name=smoke-big \
            --chdir="$work" --output=/dev/null --wrap 'sleep 1'); then
        big=${big%%;*}
        deadline=$(( SECONDS + JOB_TIMEOUT ))
        until [[ -n "$(record "$big")" ]] || (( SECONDS >= deadline )); do sleep 0.5; done
        rec=$(record "$big")
        nodelist=$(field "$rec" NodeList)
        mapfile -t hosts < <(timeout 10 scontrol show hostnames "$nodelist" 2>/dev/null || true)
        big_leaves=$(printf '%s\n' "${hosts[@]}" | sed -n 's/^n\([0-9]\{3\}\)$/\1/p' \
            | while read -r n; do echo $(( (10#$n - 1) / PER_LEAF + 1 )); done | sort -u | tr '\n' ' ')
        if [[ -z "$rec" ]]; then
            fail "8-node job $big: no completion record within ${JOB_TIMEOUT}s"
        elif [[ ${#hosts[@]} -eq $PER_LEAF && "$big_leaves" =~ ^[0-9]+\ $ \
                && "$big_leaves" != "$small_leaves" ]]; then
            pass "8-node job $big took a whole free leaf: $nodelist"
        else
            fail "8-node job $big got $nodelist (leaves $big_leaves; 4-node job on leaf $small_leaves)"
        fi
    else
        fail "sbatch 8-node job beside the fragment"
    fi
    timeout 10 scancel "$small" || true
else
    fail "sbatch 4-node fragment job"
fi

# ---- --switches: the control for test_topognn.sh's Mode=off and enforce -----
# (Slurm's testsuite: test_switches) 10 nodes cannot fit under one leaf of 8:
# with --switches=1 topology/tree keeps the job pending, never drops the limit.
if sw=$(timeout 10 sbatch --parsable -N 10 --switches=1@10:00 --job-name=smoke-sw \
        --chdir="$work" --output=/dev/null --wrap 'sleep 1'); then
    sleep 4
    st=$(timeout 10 squeue -h -j "$sw" -o '%T' 2>/dev/null || true)
    if [[ "$st" == PENDING ]]; then
        pass "topology/tree: --switches=1 -N 10 (leaves of 8) stays pending"
    else
        fail "topology/tree: --switches=1 -N 10 is '$st'"
    fi
    timeout 10 scancel "$sw" || true
else
    fail "sbatch --switches=1 -N 10"
fi

# ---- SLURM_TOPOLOGY_ADDR: the control for test_topognn.sh's -------------------
# topology/tree's own address of n012: every level, top first.
addr_out="$work/addr-n012.txt"
if timeout 10 sbatch --parsable -N 1 -w n012 --job-name=smoke-addr --chdir="$work" \
        --output="$addr_out" --wrap 'echo "$SLURM_TOPOLOGY_ADDR $SLURM_TOPOLOGY_ADDR_PATTERN"' >/dev/null; then
    deadline=$(( SECONDS + 30 ))
    until [[ -s "$addr_out" ]] || (( SECONDS >= deadline )); do sleep 0.5; done
fi
addr=$(cat "$addr_out" 2>/dev/null || true)
if [[ "$addr" == "spine.leaf2.n012 switch.switch.node" ]]; then
    pass "topology/tree: SLURM_TOPOLOGY_ADDR $addr"
else
    fail "topology/tree: SLURM_TOPOLOGY_ADDR of n012 is '$addr'"
fi

# ---- teardown, then the summary as the last line ---------------------------
if "$cluster" stop; then
    pass "cluster stopped"
else
    fail "cluster stop"
fi
printf '%d passed, %d failed\n' "$passed" "$failed"
(( failed == 0 ))
