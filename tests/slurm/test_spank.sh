#!/usr/bin/env bash
# test_spank.sh: the SPANK plugin spank_topognn.so in a real two-node Slurm cluster.
#
# n001 is described by the LLNL Lassen lstopo XML (4 V100, mlx5_0..3), n002 by
# hwloc's conan XML (one ConnectX-4, mlx5_0); plugstack.conf points the plugin
# at ETC/%n.xml. IRQs are audited and enforced on a fake proc/sys tree written
# here (4 HCAs, 2 IRQs each, all on CPU 0: the incident), never on this machine.
# Checks, on the environment jobs really get from srun:
#   - GPUs 0,1 on n001: NCCL_IB_HCA==mlx5_0:1,mlx5_1:1, UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,
#     NCCL_SOCKET_IFNAME=eth0; GPU 3: =mlx5_2:1; n002 GPU 0: =mlx5_0:1;
#   - a user-set NCCL_IB_HCA is preserved (UCX_NET_DEVICES still planned);
#   - --topognn-nic=none sets no HCA variable, --topognn-nic=mlx5_3 gives =mlx5_3:1;
#   - TOPOGNN_PLAN=rail=1 moves GPU 0 to mlx5_1;
#   - the job's report JSON lists the shared-core findings; enforce (the prolog of
#     an exclusive job, whose CPUs are all of the node's: housekeeping=0-1) put
#     mlx5_0's IRQs on core 0 and mlx5_1's on core 1 during the job, and the
#     epilog restored every file byte for byte.
#
# Needs root, the Slurm from scripts/build-slurm.sh and a build configured with
# --with-slurm-source (TOPOGNN_BUILD_DIR, default <repo>/_build/default as scripts/test.sh builds it). Only one cluster may run
# on a machine: if another one runs, waits (bounded) for it to go away.
# Prints "N passed, N failed" last; exit 1 on failure, 77 when it cannot run.
set -euo pipefail

script_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd -- "$script_dir/../.." && pwd)
cluster="$script_dir/cluster.sh"
# shellcheck source=tests/slurm/spank_fake.sh
source "$script_dir/spank_fake.sh"
build_dir=${TOPOGNN_BUILD_DIR:-$repo_root/_build/default}
plugin="$build_dir/slurm-plugin/.libs/spank_topognn.so"
fixtures=${FIXTURES_DIR:-$repo_root/tests/fixtures}

export TOPOGNN_CLUSTER_DIR=${TOPOGNN_CLUSTER_DIR:-$repo_root/.local/cluster-spank}
export TOPOGNN_CLUSTER_NODES=2
export TOPOGNN_CLUSTER_PORT=${TOPOGNN_CLUSTER_PORT:-27817}
readonly START_TRIES=${TOPOGNN_SPANK_START_TRIES:-10}

passed=0
failed=0
pass() { passed=$(( passed + 1 )); printf 'ok   - %s\n' "$*"; }
fail() { failed=$(( failed + 1 )); printf 'FAIL - %s\n' "$*"; }

[[ $(id -u) -eq 0 ]] || { echo "SKIP: needs root"; exit 77; }

work=$(mktemp -d "${TMPDIR:-/tmp}/topognn-spank.XXXXXX")
cleanup() {
    "$cluster" stop >/dev/null 2>&1 || true
    rm -rf -- "$work"
}
trap cleanup EXIT

# ---- setup -----------------------------------------------------------------
"$repo_root/scripts/build-slurm.sh" >/dev/null
if [[ ! -f "$plugin" ]]; then
    fail "spank_topognn.so is built in $build_dir (configure with --with-slurm-source)"
    printf '%d passed, %d failed\n' "$passed" "$failed"
    exit 1
fi

etc="$TOPOGNN_CLUSTER_DIR/etc"
cp -- "$fixtures/hwloc/llnl-lassen-power9-4v100-4mlx5.xml" "$work/n001.xml"
cp -- "$fixtures/hwloc/hwloc-test-2n8c2t-pci-cuda-mlx5.xml" "$work/n002.xml"

# The fake tree: mlx5_0..3 at Lassen's PCI addresses, IRQs 40..47 all on CPU 0.
fake="$work/fake"
spank_fake_tree "$fake"
cp -a "$fake/proc/irq" "$work/irq.orig"

report_dir="$TOPOGNN_CLUSTER_DIR/report"
rm -rf -- "$report_dir" "$TOPOGNN_CLUSTER_DIR/irq"     # job ids start again at 1
printf 'required %s hwloc=%s/%%n.xml socket_ifname=eth0 irq=enforce housekeeping=0-1 state_dir=%s/irq/%%n report_dir=%s proc_root=%s/proc sys_root=%s/sys\n' \
    "$plugin" "$etc" "$TOPOGNN_CLUSTER_DIR" "$report_dir" "$fake" "$fake" > "$work/plugstack.conf"
spank_slurm_conf "$etc" > "$work/extra.conf"
export TOPOGNN_PLUGIN_DIRS="$build_dir/slurm-plugin/.libs"
export TOPOGNN_CLUSTER_EXTRA_FILES="$work/n001.xml:$work/n002.xml:$work/plugstack.conf"
export TOPOGNN_CLUSTER_EXTRA_CONF="$work/extra.conf"

eval "$("$cluster" env)"
started=0
spank_start_cluster "$cluster" "$START_TRIES" && started=1
if (( started )); then
    pass "cluster started with PlugStackConfig (2 nodes)"
else
    fail "cluster start"
    printf '%d passed, %d failed\n' "$passed" "$failed"
    exit 1
fi

# ---- jobs ------------------------------------------------------------------
# run NODE [srun options...] -- ENV ASSIGNMENTS: the job's environment, one per line.
run() {
    local node=$1; shift
    local opts=() vars=()
    while (( $# )) && [[ "$1" != -- ]]; do opts+=("$1"); shift; done
    (( $# )) && shift
    vars=("$@")
    env "${vars[@]}" timeout 60 srun -N1 -n1 -w "$node" "${opts[@]}" /usr/bin/env 2>"$work/srun.err" \
        || { echo "srun failed: $(cat "$work/srun.err")" >&2; return 1; }
}
get() { sed -n "s/^$1=//p" <<< "$2" | head -n 1; }
expect() { # name got want
    if [[ "$2" == "$3" ]]; then pass "$1: $2"; else fail "$1: got '$2', want '$3'"; fi
}

# While the job runs, enforce has spread the fake IRQs (prolog before the task).
out=$(run n001 -- CUDA_VISIBLE_DEVICES=0,1) || out=""
expect "n001 GPUs 0,1 NCCL_IB_HCA" "$(get NCCL_IB_HCA "$out")" "=mlx5_0:1,mlx5_1:1"
expect "n001 GPUs 0,1 UCX_NET_DEVICES" "$(get UCX_NET_DEVICES "$out")" "mlx5_0:1,mlx5_1:1"
expect "n001 NCCL_SOCKET_IFNAME" "$(get NCCL_SOCKET_IFNAME "$out")" "eth0"
job1=$(get SLURM_JOB_ID "$out")

out=$(run n001 -- CUDA_VISIBLE_DEVICES=3) || out=""
expect "n001 GPU 3 NCCL_IB_HCA" "$(get NCCL_IB_HCA "$out")" "=mlx5_2:1"

out=$(run n002 -- CUDA_VISIBLE_DEVICES=0) || out=""
expect "n002 GPU 0 NCCL_IB_HCA" "$(get NCCL_IB_HCA "$out")" "=mlx5_0:1"
expect "n002 GPU 0 UCX_NET_DEVICES" "$(get UCX_NET_DEVICES "$out")" "mlx5_0:1"

out=$(run n001 -- CUDA_VISIBLE_DEVICES=0,1 NCCL_IB_HCA=mlx5_3) || out=""
expect "user-set NCCL_IB_HCA preserved" "$(get NCCL_IB_HCA "$out")" "mlx5_3"
expect "UCX_NET_DEVICES still planned beside it" "$(get UCX_NET_DEVICES "$out")" "mlx5_0:1,mlx5_1:1"

out=$(run n001 --topognn-nic=none -- CUDA_VISIBLE_DEVICES=0,1) || out=""
expect "--topognn-nic=none: no NCCL_IB_HCA" "$(get NCCL_IB_HCA "$out")" ""
expect "--topognn-nic=none: no NCCL_SOCKET_IFNAME" "$(get NCCL_SOCKET_IFNAME "$out")" ""
out=$(run n001 --topognn-nic=mlx5_3 -- CUDA_VISIBLE_DEVICES=0) || out=""
expect "--topognn-nic=mlx5_3" "$(get NCCL_IB_HCA "$out")" "=mlx5_3:1"

out=$(run n001 -- CUDA_VISIBLE_DEVICES=0 TOPOGNN_PLAN="su1:n001;rail=1") || out=""
expect "plan rail=1 moves GPU 0 to mlx5_1" "$(get NCCL_IB_HCA "$out")" "=mlx5_1:1"

# ---- IRQ report, enforce and restore ---------------------------------------
report="$report_dir/job-$job1.n001.json"
if [[ -n "$job1" && -f "$report" ]]; then
    pass "report $report written"
    shared=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["irq"]["status"], sum(f["kind"]=="shared-core" for f in r["irq"].get("findings",[])), (r["irq"].get("changed") or 0) > 0, r["plan"]["NCCL_IB_HCA"])' "$report" 2>&1)
    expect "report: status, shared-core findings, IRQs changed, job HCAs" "$shared" "ok 8 True =mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1"
else
    fail "no report $report (job '$job1'): $(ls "$report_dir" 2>&1)"
fi

# A job that reads the fake affinities while it runs, then the restore.
out=$(timeout 60 srun -N1 -n1 -w n001 --export=ALL,CUDA_VISIBLE_DEVICES=0 \
      cat "$fake/proc/irq/40/smp_affinity_list" "$fake/proc/irq/42/smp_affinity_list" 2>&1 || true)
during=$(tr '\n' ' ' <<< "$out")
expect "during the job IRQs 40 (mlx5_0), 42 (mlx5_1) on housekeeping cores" "$during" "0 1 "
"$cluster" wait-idle >/dev/null 2>&1 || true
if diff -r "$work/irq.orig" "$fake/proc/irq" >/dev/null; then
    pass "after the jobs every fake smp_affinity_list is back byte for byte"
else
    fail "fake IRQ affinities not restored: $(diff -r "$work/irq.orig" "$fake/proc/irq" | head -5)"
fi
left=$(ls "$TOPOGNN_CLUSTER_DIR/irq/n001" 2>/dev/null | tr '\n' ' ')
expect "no saved state or marker left on n001" "$left" ""

if grep -q 'topognn: NCCL_IB_HCA kept as set by the user (mlx5_3)' "$TOPOGNN_CLUSTER_DIR"/log/slurmd-n001.log; then
    pass "slurmd log says the user's NCCL_IB_HCA was kept"
else
    fail "no 'kept as set by the user' line in slurmd-n001.log"
fi

# ---- teardown ----------------------------------------------------------------
if "$cluster" stop >/dev/null; then pass "cluster stopped"; else fail "cluster stop"; fi
printf '%d passed, %d failed\n' "$passed" "$failed"
(( failed == 0 ))
