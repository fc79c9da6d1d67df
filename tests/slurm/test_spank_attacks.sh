#!/usr/bin/env bash
# test_spank_attacks.sh: a job's user must not steer root through spank_topognn.so
# (issue 13). A real two-node Slurm cluster (as tests/slurm/test_spank.sh:
# n001 = Lassen XML with mlx5_0..3, IRQs 40..47 on a fake proc/sys tree, plus
# IRQs 0 and 1 that belong to no HCA) with irq=enforce, state_dir=.../irq/%n
# and a shared, world-writable (sticky) report_dir. Every attack runs as the
# unprivileged user `nobody` (runuser), from a directory nobody owns:
#
#   node name   SLURMD_NODENAME=../../../<attacker dir> (path traversal into
#               state_dir=%n and hwloc=%n.xml) with a planted job-999.state
#               that names IRQ 0 (outside every HCA); the same with "..",
#               "n001/../..", an empty name plus traversing node lists;
#   state       symlinked job-<next>.state.tmp / .state / .boot in that dir,
#               pointing at root-owned files;
#   report      symlinks <report_dir>/job-<ID>.<NODE>.json.tmp.<PID> (every
#               PID the prolog may get) and job-<ID>.<NODE>.json to a
#               root-owned file, for a job held until they are planted;
#               a directory planted at job-<ID>.<NODE>.json (issue 21): root's
#               report is still written;
#   options     --topognn-nic with traversal, "..", and another job's HCA on a
#               shared node (a victim job holds it); garbage TOPOGNN_PLAN,
#               CUDA_VISIBLE_DEVICES, SLURM_JOB_GPUS;
#   node drain  a job submitted through libslurm (tests/slurm/submit_big_env.c)
#               with one spank_job_env entry over 128 KiB (issue 21): the job
#               runs or is refused at submit, and the node stays idle.
#
# Asserts after each attack: the fake tree (proc/irq, interrupts, sys) is byte
# for byte as before (the victim's: as during the victim), every root-owned
# target keeps its bytes, mode and owner, no root-owned file appears in the
# attacker's directory, and the attacker's job itself ran. Needs root, the
# Slurm from scripts/build-slurm.sh and a build configured with
# --with-slurm-source. Prints "N passed, N failed" last; exit 1 on failure,
# 77 when it cannot run.
set -euo pipefail

script_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd -- "$script_dir/../.." && pwd)
cluster="$script_dir/cluster.sh"
# shellcheck source=tests/slurm/spank_fake.sh
source "$script_dir/spank_fake.sh"
build_dir=${TOPOGNN_BUILD_DIR:-$repo_root/_build/default}
plugin="$build_dir/slurm-plugin/.libs/spank_topognn.so"
fixtures=${FIXTURES_DIR:-$repo_root/tests/fixtures}

export TOPOGNN_CLUSTER_DIR=${TOPOGNN_CLUSTER_DIR:-$repo_root/.local/cluster-attacks}
export TOPOGNN_CLUSTER_NODES=2
export TOPOGNN_CLUSTER_PORT=${TOPOGNN_CLUSTER_PORT:-27817}
readonly START_TRIES=${TOPOGNN_SPANK_START_TRIES:-10}
readonly ATTACKER=nobody

passed=0
failed=0
pass() { passed=$(( passed + 1 )); printf 'ok   - %s\n' "$*"; }
fail() { failed=$(( failed + 1 )); printf 'FAIL - %s\n' "$*"; }
finish() { printf '%d passed, %d failed\n' "$passed" "$failed"; (( failed == 0 )); }

[[ $(id -u) -eq 0 ]] || { echo "SKIP: needs root"; exit 77; }
id -u "$ATTACKER" >/dev/null 2>&1 || { echo "SKIP: no user $ATTACKER"; exit 77; }
command -v runuser >/dev/null || { echo "SKIP: no runuser"; exit 77; }

work=$(mktemp -d "${TMPDIR:-/tmp}/topognn-attacks.XXXXXX")
chmod 755 "$work"
cleanup() {
    "$cluster" stop >/dev/null 2>&1 || true
    rm -rf -- "$work"
}
trap cleanup EXIT

# ---- setup -----------------------------------------------------------------
"$repo_root/scripts/build-slurm.sh" >/dev/null
[[ -f "$plugin" ]] || { fail "spank_topognn.so is built in $build_dir"; finish; exit 1; }

etc="$TOPOGNN_CLUSTER_DIR/etc"
cp -- "$fixtures/hwloc/llnl-lassen-power9-4v100-4mlx5.xml" "$work/n001.xml"
cp -- "$fixtures/hwloc/hwloc-test-2n8c2t-pci-cuda-mlx5.xml" "$work/n002.xml"

# The fake tree: mlx5_0..3 at Lassen's PCI addresses, IRQs 40..47 on CPU 0;
# IRQs 0 and 1 (a timer, a disk) belong to no HCA.
fake="$work/fake"
spank_fake_tree "$fake" with-other-irqs
chmod -R a+rX "$fake"

# Root-owned targets the attacker points symlinks at.
targets="$work/targets"
mkdir -p "$targets"
for t in state-tmp state boot report-tmp report; do
    printf 'root secret %s\n' "$t" > "$targets/$t"
    chmod 600 "$targets/$t"
done
chmod 755 "$targets"

# snapshot DIR: every file of the fake tree and the targets, with owner and mode.
snapshot() {
    ( cd "$work" && find fake targets -printf '%p %U %m %l\n' | sort
      find fake targets -type f -print0 | sort -z | xargs -0 sha256sum ) > "$1" 2>/dev/null
}
snapshot "$work/before"
cp -a "$fake" "$work/fake.pristine"
cp -a "$targets" "$work/targets.pristine"

report_dir="$TOPOGNN_CLUSTER_DIR/report"
rm -rf -- "$report_dir" "$TOPOGNN_CLUSTER_DIR/irq"     # job ids start again at 1
mkdir -p "$report_dir" && chmod 1777 "$report_dir"   # shared, like /tmp
printf 'required %s hwloc=%s/%%n.xml socket_ifname=eth0 irq=enforce housekeeping=0-1 state_dir=%s/irq/%%n report_dir=%s proc_root=%s/proc sys_root=%s/sys\n' \
    "$plugin" "$etc" "$TOPOGNN_CLUSTER_DIR" "$report_dir" "$fake" "$fake" > "$work/plugstack.conf"
{
    spank_slurm_conf "$etc"
    printf 'PartitionName=shared Nodes=ALL Default=NO MaxTime=INFINITE State=UP OverSubscribe=NO\n'
} > "$work/extra.conf"
export TOPOGNN_CLUSTER_EXTRA_FILES="$work/n001.xml:$work/n002.xml:$work/plugstack.conf"
export TOPOGNN_CLUSTER_EXTRA_CONF="$work/extra.conf"
export TOPOGNN_PLUGIN_DIRS="$build_dir/slurm-plugin/.libs"

eval "$("$cluster" env)"
started=0
spank_start_cluster "$cluster" "$START_TRIES" && started=1
(( started )) || { fail "cluster start"; finish; exit 1; }
pass "cluster started (2 nodes, irq=enforce, report_dir mode 1777)"
chmod -R a+rX "$etc" && chmod 600 "$etc/slurm.key"
mkdir -p "$report_dir" && chmod 1777 "$report_dir"

# The attacker's own directory (nobody owns it, as /tmp/evil in the issue).
evil="$work/evil"
mkdir -m 755 "$evil" && chown "$ATTACKER" "$evil"
up=$(printf '../%.0s' $(seq 1 40))      # enough ".." to reach / from any state_dir
cd /tmp

as_attacker() { runuser -u "$ATTACKER" -- env "$@"; }

# attacker_srun LABEL [VAR=VALUE...] -- [srun options...]: one step on n001
# running `echo ran`; passes when the step printed "ran".
attacker_srun() {
    local label=$1; shift
    local vars=() opts=() out
    while (( $# )) && [[ "$1" != -- ]]; do vars+=("$1"); shift; done
    (( $# )) && shift
    opts=("$@")
    out=$(as_attacker PATH="$PATH" SLURM_CONF="$SLURM_CONF" "${vars[@]}" \
          timeout 60 srun -N1 -n1 -w n001 --chdir=/tmp "${opts[@]}" /bin/echo ran 2>&1) || true
    if grep -qx ran <<< "$out"; then pass "$label: the attacker's job ran"
    else fail "$label: the attacker's job did not run: $(tail -n 3 <<< "$out" | tr '\n' ' ')"; fi
}

# reset: after a failed check, put the tree and the targets back and remove
# what root left in the attacker's directory, so each attack counts alone.
reset() {
    rm -rf -- "$fake" "$targets"
    cp -a "$work/fake.pristine" "$fake"
    cp -a "$work/targets.pristine" "$targets"
    find "$evil" -mindepth 1 -uid 0 -delete 2>/dev/null || true
}

# check LABEL [SNAPSHOT]: nothing outside the plugin's own files changed.
check() {
    local label=$1 ref=${2:-$work/before} rootfiles
    "$cluster" wait-idle >/dev/null 2>&1 || true
    sleep 1
    snapshot "$work/after"
    if diff -q "$ref" "$work/after" >/dev/null; then
        pass "$label: fake /proc/irq, /sys and root-owned targets unchanged byte for byte"
    else
        fail "$label: changed: $(diff "$ref" "$work/after" | grep '^[<>]' | head -4 | tr '\n' ' ')"
        reset
    fi
    rootfiles=$(find "$evil" -mindepth 1 -uid 0 -printf '%f ' 2>/dev/null)
    if [[ -z "$rootfiles" ]]; then pass "$label: no root-owned file in the attacker's directory"
    else fail "$label: root created in the attacker's directory: $rootfiles"; reset; fi
}

next_job_id() { # the id the next submitted job will get
    local last
    last=$(squeue -h -t all -o %i 2>/dev/null | sort -n | tail -n 1 || true)
    [[ -n "$last" ]] && echo $(( last + 1 )) || echo 1
}

# ---- 1. node name traversal with a planted state file naming IRQ 0 ----------
plant_state() { # planted job-999.state: IRQ 0 (no HCA's) and IRQ 40 to core 3
    as_attacker python3 - "$evil/job-999.state" "$fake/proc/irq" <<'EOF'
import sys
path, irq = sys.argv[1], sys.argv[2]
with open(path, "w") as f:
    f.write("topognn-irq-state 1\njob 999\n")
    f.write("save 0 mlx5_0 330a %s/0/smp_affinity_list\n" % irq)
    f.write("save 40 mlx5_0 330a %s/40/smp_affinity_list\n" % irq)
    f.write("end 2\n")
EOF
}
plant_state
attacker_srun "SLURMD_NODENAME=$up..$evil" SLURMD_NODENAME="$up..$evil"
check "SLURMD_NODENAME traversal + planted job-999.state (IRQ 0)"
attacker_srun "SLURMD_NODENAME=$up${evil#/}" SLURMD_NODENAME="$up${evil#/}"
check "SLURMD_NODENAME=../../$evil"
attacker_srun "SLURMD_NODENAME=.." SLURMD_NODENAME=..
attacker_srun "SLURMD_NODENAME=n001/../../evil" SLURMD_NODENAME="n001/../$up${evil#/}"
attacker_srun "empty SLURMD_NODENAME, traversing node lists" SLURMD_NODENAME= \
    SLURM_STEP_NODELIST="$up${evil#/}" SLURM_JOB_NODELIST="$up${evil#/}" SLURM_NODELIST="$up${evil#/}"
check "SLURMD_NODENAME .., n001/../.., empty + node lists"
if [[ -f "$evil/job-999.state" ]]; then pass "the planted state file was left alone"
else fail "the planted state file was consumed (root read and removed it)"; fi

# ---- 2. symlinked state files in the traversed state_dir --------------------
id=$(next_job_id)
for (( j = id; j < id + 4; j++ )); do
    as_attacker ln -sf "$targets/state-tmp" "$evil/job-$j.state.tmp"
done
attacker_srun "symlinked job-ID.state.tmp" SLURMD_NODENAME="$up${evil#/}"
id=$(next_job_id)
for (( j = id; j < id + 4; j++ )); do
    as_attacker ln -sf "$targets/state" "$evil/job-$j.state"
    as_attacker ln -sf "$targets/boot" "$evil/job-$j.boot"
done
attacker_srun "symlinked job-ID.state and job-ID.boot" SLURMD_NODENAME="$up${evil#/}"
check "symlinked state and marker files"

# ---- 3. symlinked report files in the shared report_dir ----------------------
cat > "$evil/job.sh" <<'EOF'
#!/bin/sh
echo ran
EOF
chown "$ATTACKER" "$evil/job.sh"; chmod 755 "$evil/job.sh"
jid=$(as_attacker PATH="$PATH" SLURM_CONF="$SLURM_CONF" sbatch --parsable --hold -w n001 \
      --chdir=/tmp -o "$evil/job.out" "$evil/job.sh" 2>/dev/null || true)
if [[ "$jid" =~ ^[0-9]+$ ]]; then
    last=$(cat /proc/sys/kernel/ns_last_pid)
    as_attacker python3 - "$report_dir" "$jid" "$last" "$targets" <<'EOF'
import os, sys
d, jid, last, t = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
for node in ("n001", "n002"):
    base = "%s/job-%s.%s.json" % (d, jid, node)
    os.symlink(t + "/report", base)
    for pid in range(last + 1, last + 30000):
        os.symlink(t + "/report-tmp", "%s.tmp.%d" % (base, pid))
EOF
    as_attacker PATH="$PATH" SLURM_CONF="$SLURM_CONF" scontrol release "$jid"
    for (( i = 0; i < 60; i++ )); do
        [[ -z "$(squeue -h -t PD,R,CG -j "$jid" 2>/dev/null)" ]] && break
        sleep 1
    done
    if grep -qx ran "$evil/job.out" 2>/dev/null; then pass "report symlinks: the attacker's batch job $jid ran"
    else fail "report symlinks: batch job $jid did not run: $(cat "$evil/job.out" 2>&1 | head -2)"; fi
    check "symlinked <report_dir>/job-$jid.n001.json{,.tmp.PID} to root-owned files"
    as_attacker find "$report_dir" -maxdepth 1 -type l -name "job-$jid.*" -delete
else
    fail "report symlinks: sbatch --hold failed: $jid"
fi

# ---- 3b. a planted directory at the report's name (issue 21) ------------------
# rename() cannot replace a directory: root's report for the job must still be
# written (under a name the attacker cannot predict).
jid=$(as_attacker PATH="$PATH" SLURM_CONF="$SLURM_CONF" sbatch --parsable --hold -w n001 \
      --chdir=/tmp -o /dev/null "$evil/job.sh" 2>/dev/null || true)
if [[ "$jid" =~ ^[0-9]+$ ]]; then
    as_attacker mkdir -p "$report_dir/job-$jid.n001.json/keep"
    as_attacker PATH="$PATH" SLURM_CONF="$SLURM_CONF" scontrol release "$jid"
    for (( i = 0; i < 60; i++ )); do
        [[ -z "$(squeue -h -t PD,R,CG -j "$jid" 2>/dev/null)" ]] && break
        sleep 1
    done
    got=$(find "$report_dir" -maxdepth 1 -type f -user root -name "job-$jid.n001*.json" \
          -exec python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["job_id"], r["node"])' {} \; 2>&1)
    if [[ "$got" == "$jid n001" ]]; then
        pass "planted directory job-$jid.n001.json: root's report for job $jid was written beside it"
    else
        fail "planted directory job-$jid.n001.json: no root-owned report for job $jid: ${got:-none} ($(ls "$report_dir" | grep "job-$jid\." | tr '\n' ' '))"
    fi
    as_attacker rm -rf -- "$report_dir/job-$jid.n001.json"
else
    fail "planted directory: sbatch --hold failed: $jid"
fi

# ---- 4. --topognn-nic and job variables -----------------------------------
attacker_srun "--topognn-nic=.." -- --topognn-nic=..
attacker_srun "garbage TOPOGNN_PLAN, CUDA_VISIBLE_DEVICES, SLURM_JOB_GPUS" \
    TOPOGNN_PLAN="rail=0-99999999;$up" CUDA_VISIBLE_DEVICES="../../x" SLURM_JOB_GPUS="0-100000"
out=$(as_attacker PATH="$PATH" SLURM_CONF="$SLURM_CONF" timeout 30 srun -N1 -n1 -w n001 \
      --chdir=/tmp --topognn-nic="$up${evil#/}" /bin/echo ran 2>&1 || true)
if grep -q 'topognn-nic wants' <<< "$out"; then pass "--topognn-nic=../..: refused by srun with a clear message"
else fail "--topognn-nic=../..: not refused: $(tail -n 2 <<< "$out" | tr '\n' ' ')"; fi
check "--topognn-nic traversal and garbage variables"

# ---- 5. another job's HCA on a shared node ----------------------------------
victim=$(sbatch --parsable -p shared -w n001 -n1 --chdir=/tmp --export=ALL,CUDA_VISIBLE_DEVICES=3 \
         --wrap 'sleep 60' 2>/dev/null || true)
for (( i = 0; i < 30; i++ )); do
    [[ "$(squeue -h -j "$victim" -o %t 2>/dev/null)" == R ]] && break
    sleep 1
done
sleep 2
snapshot "$work/during-victim"
out=$(as_attacker PATH="$PATH" SLURM_CONF="$SLURM_CONF" CUDA_VISIBLE_DEVICES=3 timeout 60 \
      srun -p shared -N1 -n1 -w n001 --chdir=/tmp --topognn-nic=mlx5_3 /bin/echo ran 2>&1 || true)
if grep -qx ran <<< "$out"; then pass "--topognn-nic=mlx5_3 beside victim $victim: the attacker's job ran"
else fail "--topognn-nic=mlx5_3 beside victim $victim: job did not run: $(tail -n 2 <<< "$out" | tr '\n' ' ')"; fi
sleep 1
snapshot "$work/after"
if diff -q "$work/during-victim" "$work/after" >/dev/null; then
    pass "another job's HCA: the victim's IRQ affinities are as before the attacker's job"
else
    fail "another job's HCA: the attacker's job changed: $(diff "$work/during-victim" "$work/after" | grep '^[<>]' | head -4 | tr '\n' ' ')"
fi
scancel "$victim" 2>/dev/null || true
check "after the victim and the attacker ended"

# ---- 6. node drain: one spank_job_env entry over 128 KiB, through the API -----
# sbatch cannot set spank_job_env; libslurm (and slurmrestd) can. A SPANK plugin
# with slurm_spank_job_prolog makes slurmd exec `slurmstepd spank prolog` with
# that environment: execve fails (E2BIG) and slurmd drains the node (issue 21).
# Passes when the job ran, or slurmctld refused it at submit, and n001 is idle.
slurm_prefix=${TOPOGNN_SLURM_PREFIX:-$repo_root/.local/slurm}
if cc -o "$work/submit_big_env" "$script_dir/submit_big_env.c" -I"$slurm_prefix/include" \
      -L"$slurm_prefix/lib" -Wl,-rpath,"$slurm_prefix/lib" -lslurm 2> "$work/cc.err"; then
    out=$(as_attacker SLURM_CONF="$SLURM_CONF" "$work/submit_big_env" n001 "$evil/big.out" 2>&1 || true)
    if [[ "$out" =~ ^submitted\ ([0-9]+) ]]; then
        big=${BASH_REMATCH[1]}
        for (( i = 0; i < 60; i++ )); do
            [[ -f "$evil/big.out" && -z "$(squeue -h -t R,CG -j "$big" 2>/dev/null)" ]] && break
            sleep 1
        done
        if grep -qx ran "$evil/big.out" 2>/dev/null; then
            pass "200 KiB spank_job_env entry: the attacker's job $big ran"
        else
            fail "200 KiB spank_job_env entry: job $big did not run: $(squeue -h -j "$big" -o '%T %r' 2>&1)"
            scancel "$big" 2>/dev/null || true
        fi
    elif [[ "$out" == refused:* ]]; then
        pass "200 KiB spank_job_env entry: refused at submit (${out#refused: })"
    else
        fail "200 KiB spank_job_env entry: submit_big_env said: $out"
    fi
    state=$(scontrol show node n001 2>&1 | sed -n 's/.* State=\([^ ]*\).*/\1/p')
    reason=$(scontrol show node n001 2>&1 | sed -n 's/.* Reason=\(.*\)/\1/p')
    if [[ "$state" == IDLE ]]; then
        pass "200 KiB spank_job_env entry: n001 stays IDLE"
    else
        fail "200 KiB spank_job_env entry: n001 is $state${reason:+ ($reason)}"
        scontrol update nodename=n001 state=resume 2>/dev/null || true
    fi
else
    fail "cannot build tests/slurm/submit_big_env.c against $slurm_prefix: $(head -n 3 "$work/cc.err")"
fi
check "200 KiB spank_job_env entry through the API"

# ---- the plugin's own work still happens for honest jobs ---------------------
if grep -q 'topognn: job .*: report written to' "$TOPOGNN_CLUSTER_DIR"/log/slurmd-n001.log; then
    pass "the plugin still wrote reports for the jobs"
else
    fail "no 'report written' line in slurmd-n001.log"
fi
# What the plugin said about the attacks (refusals; restores not from our own state_dir).
grep -h 'topognn' "$TOPOGNN_CLUSTER_DIR"/log/slurmd-n00*.log \
    | grep -iE 'refused|not trusted|skipped|restored from' | grep -v "restored from $TOPOGNN_CLUSTER_DIR/irq/n00[12]/" \
    | sed 's/^\[[^]]*\] *\(\[[^]]*\] *\)\{0,1\}/    log: /' | sort -u | head -12 || true

if "$cluster" stop >/dev/null; then pass "cluster stopped"; else fail "cluster stop"; fi
finish
