#!/usr/bin/env bash
# test_topo_parity.sh: what an admin relied on under topology/tree keeps
# working under topology/topognn, checked on a real 8-node cluster for
# topology/topognn AND, as control, for Slurm's own topology/tree, on the
# same fabric (Slurm's testsuite assertions reproduced; the logic is copied,
# Slurm's files are not read):
#
#   l1 = n[001,003]  l2 = n[002,004]  l3 = n[005,007]  l4 = n[006,008]
#   sp1 = l[1-2]     sp2 = l[3-4]     root = sp[1-2]   (LinkSpeed 25/100/400)
#
# (leaves interleave the node names, so node ranking by leaf is visible).
# topology/tree reads it as topology.conf; topology/topognn reads the graph
# `topognn-discover --topology-conf` makes of the same file (Mode=enforce).
#
# Checked for both plugins:
#   --switches (Slurm's test_143_1): --switches=2 -N2 runs; --switches=1
#     --exclusive -N1 runs; --switches=1 -N3 (no leaf has 3 nodes) stays
#     "queued and waiting for resources";
#   scontrol show topology <switch> (24.11: NAME, 25.05+: switch=NAME): the
#     switch record "SwitchName=l1 Level=0 LinkSpeed=25 Nodes=..." alone, and
#     root's "SwitchName=root Level=2 LinkSpeed=400 Nodes=n[001-008]
#     Switches=sp[1-2]" (topognn adds " Kind=leaf|spine|core" last);
#   TopologyParam=RouteTree (Slurm's test_133_1, tests/slurm/route_split.c):
#     libslurm splits each hostlist into topology/tree's sublists, in order;
#   --segment (25.05+): the job runs (tree ignores it; topognn says so once
#     in the slurmctld log);
#   node ranking for srun's task layout: 26.05 (topology_p_get_rank): task 0
#     of `srun -N2 -n2 -w n[002-003]` is on n003 (leaf l1 ranks first);
#   TopologyParam=SwitchAsNodeRank (after a slurmctld restart with it): the
#     node table is ordered by leaf (scontrol show nodes: n001 n003 n002 ...)
#     and task 0 of the same srun is on n003 on every release.
# topology/topognn only: --exclusive=topo keeps other jobs off the job's
# leaf (tree does not offer it), and each TopologyParam it ignores or honours
# is named on one slurmctld log line (BlockAsNodeRank, TopoMaxSizeUnroll,
# TopoOptional, SwitchAsNodeRank, RouteTree).
#
# Needs root, the Slurm from scripts/build-slurm.sh and a build configured
# with --with-slurm-source (the plugins, tools/topognn-discover).
# Environment: as tests/slurm/cluster.sh, plus TOPOGNN_BUILD_DIR (default
# <repo>/_build/default), TOPOGNN_PLUGIN_SO_DIR (default
# $TOPOGNN_BUILD_DIR/slurm-plugin/.libs), TOPOGNN_PARITY_PLUGINS (default
# "topology/topognn topology/tree"). Prints "N passed, N failed" last.
set -euo pipefail

script_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd -- "$script_dir/../.." && pwd)
cluster="$script_dir/cluster.sh"
build_dir=${TOPOGNN_BUILD_DIR:-$repo_root/_build/default}
so_dir=${TOPOGNN_PLUGIN_SO_DIR:-$build_dir/slurm-plugin/.libs}
discover="$build_dir/tools/topognn-discover"
export TOPOGNN_CLUSTER_DIR=${TOPOGNN_CLUSTER_DIR:-$repo_root/.local/cluster-parity}
export TOPOGNN_CLUSTER_NODES=8
export TOPOGNN_PLUGIN_DIRS="$so_dir"
plugins=${TOPOGNN_PARITY_PLUGINS:-"topology/topognn topology/tree"}

passed=0
failed=0
tag=""
pass() { passed=$(( passed + 1 )); printf 'ok   - [%s] %s\n' "$tag" "$*"; }
fail() { failed=$(( failed + 1 )); printf 'FAIL - [%s] %s\n' "$tag" "$*"; }
finish() { printf '%d passed, %d failed\n' "$passed" "$failed"; (( failed == 0 )); }

work=$(mktemp -d "${TMPDIR:-/tmp}/topognn-parity.XXXXXX")
chmod 755 "$work"
trap '"$cluster" stop >/dev/null 2>&1 || true; rm -rf -- "$work"' EXIT

"$repo_root/scripts/build-slurm.sh" >/dev/null
slurm_prefix=${TOPOGNN_SLURM_PREFIX:-$repo_root/.local/slurm}
eval "$("$cluster" env)"
release=$(slurmctld -V | cut -d' ' -f2)
case "$release" in
    24.*) old_scontrol=1 ;;
    *) old_scontrol=0 ;;
esac

cat > "$work/topology.conf" <<'EOF'
SwitchName=l1 Nodes=n[001,003] LinkSpeed=25
SwitchName=l2 Nodes=n[002,004] LinkSpeed=25
SwitchName=l3 Nodes=n[005,007] LinkSpeed=25
SwitchName=l4 Nodes=n[006,008] LinkSpeed=25
SwitchName=sp1 Switches=l[1-2] LinkSpeed=100
SwitchName=sp2 Switches=l[3-4] LinkSpeed=100
SwitchName=root Switches=sp[1-2] LinkSpeed=400
EOF
# RouteTree: topology/tree's sublists for this fabric (test_133_1's format:
# the hostlist, then each expected sublist; blank line between cases).
cat > "$work/route.cases" <<'EOF'
# all nodes: one list per spine below root (TreeWidth alone: 8 lists)
n[001-008]
n[001-004]
n[005-008]

# two leaves of one spine: one list per leaf, in leaf order
n[002-003]
n003
n002

# one whole leaf: TreeWidth's split
n[001,003]
n001
n003

# leaves under different spines: root's children
n[001,005]
n001
n005

# two leaves and part of a third
n[001-004,006]
n[001-004]
n006
EOF

# route_split against this Slurm's libslurmfull and internal headers, as
# Slurm's testsuite compiles test_133_1.c.
env_file="$slurm_prefix/topognn-slurm.env"
route_bin="$work/route_split"
if [[ -f "$env_file" ]] && ( . "$env_file" &&
     cc -o "$route_bin" "$script_dir/route_split.c" -DHAVE_CONFIG_H \
        -I"$SLURM_BUILD" -I"$SLURM_BUILD/slurm" -I"$SLURM_SRC" \
        -L"$slurm_prefix/lib/slurm" -Wl,-rpath,"$slurm_prefix/lib/slurm" \
        -lslurmfull -lpthread 2> "$work/cc.err" ); then
    :
else
    route_bin=""
fi

submit() { # sbatch args...: the job id, "none" if refused
    local id
    if id=$(timeout 10 sbatch --parsable --chdir="$work" --output=/dev/null "$@" \
            --wrap 'sleep 300' 2>>"$work/sbatch.err"); then
        echo "${id%%;*}"
    else
        echo none
    fi
}
state_after() { # id seconds: the job's state after up to that long running
    local id=$1 deadline=$(( SECONDS + $2 )) st=""
    while (( SECONDS < deadline )); do
        st=$(timeout 10 squeue -h -j "$id" -o '%T' 2>/dev/null || true)
        [[ "$st" == RUNNING ]] && break
        sleep 0.5
    done
    echo "${st:-GONE}"
}
show_topo() { # switch name
    if (( old_scontrol )); then
        timeout 10 scontrol show topology "$1" 2>&1 || true
    else
        timeout 10 scontrol show topology "switch=$1" 2>&1 || true
    fi
}
task0_node() { # srun's node of task 0 on n[002-003]
    timeout 30 srun -N2 -n2 -w 'n[002-003]' -l printenv SLURMD_NODENAME 2>/dev/null \
        | sed -n 's/^0: //p' || true
}

# ---- the checks, once per plugin ---------------------------------------------
switches_checks() {
    local out rc
    if timeout 30 srun --switches=2 -N2 true 2>"$work/srun.err"; then
        pass "--switches=2 -N2 ran (test_143_1)"
    else
        fail "--switches=2 -N2: $(head -c 300 "$work/srun.err")"
    fi
    if timeout 30 srun --switches=1 --exclusive -N1 true 2>"$work/srun.err"; then
        pass "--switches=1 --exclusive -N1 ran (test_143_1)"
    else
        fail "--switches=1 --exclusive -N1: $(head -c 300 "$work/srun.err")"
    fi
    rc=0
    out=$(timeout 8 srun --switches=1 -N3 true 2>&1) || rc=$?
    if (( rc != 0 )) && grep -Eq 'srun: job [0-9]+ queued and waiting for resources' <<< "$out"; then
        pass "--switches=1 -N3 (no leaf holds 3) queued and waiting (test_143_1)"
    else
        fail "--switches=1 -N3: rc $rc: $out"
    fi
    scancel --user=root >/dev/null 2>&1 || true
}

topology_checks() {
    local out
    out=$(show_topo l1)
    if [[ "$(wc -l <<< "$out")" == 1 ]] &&
       grep -Eq '^SwitchName=l1 Level=0 LinkSpeed=25 Nodes=n\[001,003\]( Kind=leaf)?$' <<< "$out"; then
        pass "scontrol show topology l1: the switch record alone: $out"
    else
        fail "scontrol show topology l1: $out"
    fi
    out=$(show_topo root)
    if grep -Eq '^SwitchName=root Level=2 LinkSpeed=400 Nodes=n\[001-008\] Switches=sp\[1-2\]( Kind=core)?$' <<< "$out"; then
        pass "scontrol show topology root: $out"
    else
        fail "scontrol show topology root: $out"
    fi
}

route_checks() {
    local out
    if [[ -z "$route_bin" ]]; then
        fail "cannot build tests/slurm/route_split.c against $slurm_prefix: $(head -n 3 "$work/cc.err" 2>/dev/null)"
        return
    fi
    out=$(SLURM_CONF="$SLURM_CONF" timeout 60 "$route_bin" "$work/route.cases" 2>&1 || true)
    if grep -q 'Failed cases 0$' <<< "$out"; then
        pass "RouteTree: $(grep -c '^case' <<< "$out") hostlists split as topology/tree (test_133_1)"
    else
        fail "RouteTree: $(grep -E '^(FAIL|Total)' <<< "$out" | tr '\n' ';' | head -c 600) $(head -c 600 <<< "$out")"
    fi
}

segment_check() {
    local id st
    (( old_scontrol )) && return 0
    id=$(submit -N2 --segment=2)
    st=$(state_after "$id" 30)
    if [[ "$st" == RUNNING ]]; then
        pass "--segment=2 -N2: the job runs"
    else
        fail "--segment=2 -N2: job $id is $st: $(tail -n 2 "$work/sbatch.err" 2>/dev/null)"
    fi
    if [[ "$tag" == topognn ]]; then
        if grep -q "JobId=$id: --segment=2 ignored: topology/topognn" "$ctld_log"; then
            pass "--segment: the slurmctld log says it is ignored"
        else
            fail "--segment: no log line for job $id"
        fi
    fi
    scancel "$id" 2>/dev/null || true
}

exclusive_topo_check() {
    local a b c
    a=$(submit -N1 -w n001 --exclusive=topo)
    [[ "$(state_after "$a" 30)" == RUNNING ]] || { fail "--exclusive=topo job $a did not start"; return; }
    b=$(submit -N1 -w n003)
    c=$(submit -N1 -w n002)
    if [[ "$(state_after "$c" 30)" == RUNNING && "$(state_after "$b" 5)" == PENDING ]]; then
        pass "--exclusive=topo on n001: n003 (same leaf) kept out, n002 runs"
    else
        fail "--exclusive=topo: n003 job $b is $(state_after "$b" 1), n002 job $c is $(state_after "$c" 1)"
    fi
    scancel "$a" "$b" "$c" 2>/dev/null || true
}

param_log_checks() {
    local p missing=""
    for p in SwitchAsNodeRank RouteTree TopoOptional BlockAsNodeRank TopoMaxSizeUnroll; do
        grep -q "TopologyParam=$p" "$ctld_log" || missing+=" $p"
    done
    if [[ -z "$missing" ]]; then
        pass "every TopologyParam option named once in the slurmctld log"
    else
        fail "TopologyParam options the slurmctld log does not name:$missing"
    fi
}

rank_checks() { # phase: "get_rank" (26.05 only) or "SwitchAsNodeRank"
    local n order leaves
    if [[ "$1" == SwitchAsNodeRank ]]; then
        # Slurm sorts by rank alone: inside a leaf the order is qsort's.
        order=$(timeout 10 scontrol show nodes -o | sed -n 's/^NodeName=\([^ ]*\).*/\1/p' | tr '\n' ' ')
        leaves=$(for n in $order; do n=$(( 10#${n#n} )); echo -n "l$(( (n - 1) / 4 * 2 + 2 - n % 2 )) "; done)
        if [[ "$leaves" == "l1 l1 l2 l2 l3 l3 l4 l4 " ]]; then
            pass "SwitchAsNodeRank: nodes ordered by leaf: $order"
        else
            fail "SwitchAsNodeRank: node order $order (leaves $leaves)"
        fi
    elif [[ "$release" != 26.* ]]; then
        return 0
    fi
    n=$(task0_node)
    if [[ "$n" == n003 ]]; then
        pass "$1: srun task 0 of n[002-003] on n003 (leaf l1 ranks first)"
    else
        fail "$1: srun task 0 of n[002-003] on '${n:-none}', not n003"
    fi
}

run_plugin() {
    local plugin=$1 params="RouteTree"
    tag=${plugin#topology/}
    export TOPOGNN_TOPOLOGY_PLUGIN=$plugin
    unset TOPOGNN_TOPOLOGY_CONF TOPOGNN_CLUSTER_EXTRA_FILES
    if [[ "$plugin" == topology/tree ]]; then
        export TOPOGNN_TOPOLOGY_CONF="$work/topology.conf"
    else
        "$discover" --topology-conf "$work/topology.conf" --json > "$work/graph.json"
        printf 'GraphFile=%s\nMode=enforce\n' "$work/graph.json" > "$work/topognn.conf"
        export TOPOGNN_CLUSTER_EXTRA_FILES="$work/topognn.conf"
    fi
    printf 'TopologyParam=%s\n' "$params" > "$work/extra.conf"
    export TOPOGNN_CLUSTER_EXTRA_CONF="$work/extra.conf"
    if "$cluster" start >"$work/start.log" 2>&1; then
        pass "$plugin: 8 slurmd idle (Slurm $release)"
    else
        fail "$plugin: cluster start: $(tail -n 5 "$work/start.log")"
        return
    fi
    ctld_log="$TOPOGNN_CLUSTER_DIR/log/slurmctld.log"
    switches_checks
    topology_checks
    route_checks
    segment_check
    rank_checks get_rank
    [[ "$plugin" == topology/topognn ]] && exclusive_topo_check

    # SwitchAsNodeRank ranks the node table when slurmctld reads its config.
    params="RouteTree,SwitchAsNodeRank"
    [[ "$plugin" == topology/topognn ]] &&
        params+=",TopoOptional,BlockAsNodeRank,TopoMaxSizeUnroll=4"
    sed -i "s/^TopologyParam=.*/TopologyParam=$params/" "$SLURM_CONF"
    if "$cluster" restart-ctld >"$work/restart.log" 2>&1 && "$cluster" wait-idle >/dev/null 2>&1; then
        rank_checks SwitchAsNodeRank
        [[ "$plugin" == topology/topognn ]] && param_log_checks
    else
        fail "$plugin: slurmctld restart with TopologyParam=$params: $(tail -n 5 "$work/restart.log")"
    fi
    "$cluster" stop >/dev/null 2>&1 || true
}

if [[ "$plugins" == *topognn* ]]; then
    for f in "$so_dir/topology_topognn.so" "$discover"; do
        [[ -e "$f" ]] || { tag=setup; fail "missing $f (configure --with-slurm-source and make)"; finish; exit 1; }
    done
fi
for plugin in $plugins; do
    run_plugin "$plugin"
done
finish
