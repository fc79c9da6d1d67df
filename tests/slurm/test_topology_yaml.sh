#!/usr/bin/env bash
# test_topology_yaml.sh: `topognn-discover --topology-yaml` writes a topology.yaml
# that Slurm 25.05+ itself accepts, with per-partition topologies.
#
# The fabric (4 leaf switches x 8 nodes under one spine) is given as a
# topology.conf; topognn-discover turns it into topology.yaml with a "tree" and
# a "block" topology. A real slurmctld (Slurm 25.11 or 26.05) starts on it
# with partition gpu (n[001-016]) on Topology=tree and partition cpu
# (n[017-032]) on Topology=block; scontrol shows both topologies as Slurm
# parsed them, and an 8-node job in each partition lands inside one leaf /
# one block. Slurm 24.11 has no topology.yaml: the test says so and runs
# nothing there.
#
# Needs root, the Slurm from scripts/build-slurm.sh (TOPOGNN_SLURM_VERSION,
# TOPOGNN_SLURM_PREFIX) and a build dir with tools/ built (TOPOGNN_BUILD_DIR,
# default <repo>/_build/default). Environment otherwise as
# tests/slurm/cluster.sh; the run dir defaults to <repo>/.local/cluster-yaml.
# Prints "N passed, N failed" last; exit 1 on failure.
set -euo pipefail

script_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd -- "$script_dir/../.." && pwd)
cluster="$script_dir/cluster.sh"
build_dir=${TOPOGNN_BUILD_DIR:-$repo_root/_build/default}
discover="$build_dir/tools/topognn-discover"

export TOPOGNN_CLUSTER_DIR=${TOPOGNN_CLUSTER_DIR:-$repo_root/.local/cluster-yaml}
export TOPOGNN_CLUSTER_NODES=32
export TOPOGNN_TOPOLOGY_PLUGIN=topology/tree

readonly JOB_TIMEOUT=60

passed=0
failed=0
pass() { passed=$(( passed + 1 )); printf 'ok   - %s\n' "$*"; }
fail() { failed=$(( failed + 1 )); printf 'FAIL - %s\n' "$*"; }
finish() { printf '%d passed, %d failed\n' "$passed" "$failed"; }

# The cluster is stopped and the scratch dir removed however the test ends.
work=$(mktemp -d "${TMPDIR:-/tmp}/topognn-yaml.XXXXXX")
trap '"$cluster" stop >/dev/null 2>&1 || true; rm -rf -- "$work"' EXIT

# ---- setup: this release's Slurm, the clients on PATH ----------------------
"$repo_root/scripts/build-slurm.sh"
eval "$("$cluster" env)"
case "$(slurmctld -V)" in
    "slurm 24."*)
        echo "Slurm 24.11 reads no topology.yaml (it came with 25.05): nothing to test"
        finish
        exit 0 ;;
esac
[[ -x "$discover" ]] || { fail "topognn-discover is built in $build_dir"; finish; exit 1; }

{
    for l in 1 2 3 4; do
        printf 'SwitchName=leaf%d Nodes=n[%03d-%03d]\n' "$l" $(( l * 8 - 7 )) $(( l * 8 ))
    done
    printf 'SwitchName=spine Switches=leaf[1-4]\n'
} > "$work/topology.conf"
if "$discover" --topology-conf "$work/topology.conf" --topology-yaml "$work/topology.yaml" &&
   grep -q '^- topology: tree$' "$work/topology.yaml" &&
   grep -q '^- topology: block$' "$work/topology.yaml"; then
    pass "topognn-discover --topology-yaml wrote a tree and a block topology"
else
    fail "topognn-discover --topology-yaml: $(cat "$work/topology.yaml" 2>/dev/null)"
    finish
    exit 1
fi

cat > "$work/partitions.conf" <<'EOF'
PartitionName=gpu Nodes=n[001-016] Topology=tree OverSubscribe=EXCLUSIVE State=UP
PartitionName=cpu Nodes=n[017-032] Topology=block OverSubscribe=EXCLUSIVE State=UP
EOF
export TOPOGNN_CLUSTER_EXTRA_FILES="$work/topology.yaml"
export TOPOGNN_CLUSTER_EXTRA_CONF="$work/partitions.conf"
if "$cluster" start; then
    pass "slurmctld $(slurmctld -V | cut -d' ' -f2) started on the written topology.yaml"
else
    fail "cluster start on the written topology.yaml"
    finish
    exit 1
fi
ctld_log="$TOPOGNN_CLUSTER_DIR/log/slurmctld.log"
if grep -qiE 'Failed to load topology.yaml|error.*topolog' "$ctld_log"; then
    fail "slurmctld logged a topology problem: $(grep -iE 'error.*topolog|topology.yaml' "$ctld_log" | head -3)"
else
    pass "no topology.yaml error in the slurmctld log"
fi

# ---- Slurm's own view of both topologies -----------------------------------
tree=$(timeout 10 scontrol show topology tree 2>&1 || true)
if (( $(grep -c '^SwitchName=' <<< "$tree") == 5 )) &&
   grep -q '^SwitchName=leaf2 .*Nodes=n\[009-016\]' <<< "$tree" &&
   grep -q '^SwitchName=spine .*Switches=leaf\[1-4\]' <<< "$tree"; then
    pass "scontrol show topology tree: the 5 switches, leaf2 = n[009-016]"
else
    fail "scontrol show topology tree: $tree"
fi
block=$(timeout 10 scontrol show topology block 2>&1 || true)
if (( $(grep -c '^BlockName=' <<< "$block") == 4 )) &&
   grep -q '^BlockName=leaf3 .*Nodes=n\[017-024\]' <<< "$block"; then
    pass "scontrol show topology block: the 4 blocks, leaf3 = n[017-024]"
else
    fail "scontrol show topology block: $block"
fi

# ---- one job per partition, placed by that partition's topology -------------
jobcomp="$TOPOGNN_CLUSTER_DIR/log/jobcomp.txt"
record() { grep -E "^JobId=$1 " "$jobcomp" 2>/dev/null | tail -n 1; }
nodes_of() {
    local id=$1 deadline=$(( SECONDS + JOB_TIMEOUT )) rec
    while (( SECONDS < deadline )); do
        rec=$(record "$id")
        [[ -n "$rec" ]] && { tr ' ' '\n' <<< "$rec" | sed -n 's/^NodeList=//p'; return; }
        sleep 1
    done
}
# Occupy n001 and n017 so that "the first 8 nodes" crosses a leaf / block.
hold_gpu=$(timeout 10 sbatch --parsable -p gpu -N 1 -w n001 --output=/dev/null --wrap 'sleep 30')
hold_cpu=$(timeout 10 sbatch --parsable -p cpu -N 1 -w n017 --output=/dev/null --wrap 'sleep 30')
for part in gpu cpu; do
    id=$(timeout 10 sbatch --parsable -p "$part" -N 8 --chdir="$work" --output=/dev/null --wrap 'sleep 1') ||
        { fail "sbatch -p $part"; continue; }
    nodes=$(nodes_of "${id%%;*}")
    want='n[009-016]'
    [[ $part == cpu ]] && want='n[025-032]'
    if [[ "$nodes" == "$want" ]]; then
        pass "-p $part -N 8 with a node of the first leaf busy: one whole leaf/block, $nodes"
    else
        fail "-p $part -N 8: got '${nodes}', want $want"
    fi
done
timeout 10 scancel "${hold_gpu%%;*}" "${hold_cpu%%;*}" 2>/dev/null || true

finish
(( failed == 0 ))
