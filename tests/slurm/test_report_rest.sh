#!/usr/bin/env bash
# test_report_rest.sh: placement-report against a real slurmrestd.
#
# Starts the local test cluster (tests/slurm/cluster.sh, 8 nodes in two
# leaves of 4) with JWT as the alternative authentication, runs slurmrestd
# (unprivileged, on a UNIX socket, rest_auth/jwt), submits two jobs and
# drains a node, then asserts that placement-report --slurmrestd sees the
# running jobs on their nodes, the drained node, and that whatif avoids
# both; that a bad token gives the HTTP status and slurmrestd's complaint;
# and that a dead slurmrestd leaves the decision-log view working.
#
# Needs root and the Slurm from scripts/build-slurm.sh (with slurmrestd and
# auth/jwt; reused from TOPOGNN_SLURM_PREFIX). Only one Slurm cluster can run
# on a machine: when another one runs, the start is retried every 60 s for
# up to TOPOGNN_REST_WAIT seconds (default 600). Prints "N passed, N failed".
set -euo pipefail

script_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd -- "$script_dir/../.." && pwd)
cluster="$script_dir/cluster.sh"
build=${TOPOGNN_BUILD_DIR:-$repo_root/_build/default}
tool=$build/tools/placement-report
discover=$build/tools/topognn-discover

export TOPOGNN_CLUSTER_DIR=${TOPOGNN_CLUSTER_DIR:-$repo_root/.local/cluster-report}
export TOPOGNN_CLUSTER_NODES=8
export TOPOGNN_TOPOLOGY_PLUGIN=topology/tree
wait_total=${TOPOGNN_REST_WAIT:-600}

passed=0
failed=0
pass() { passed=$(( passed + 1 )); printf 'ok   - %s\n' "$*"; }
fail() { failed=$(( failed + 1 )); printf 'FAIL - %s\n' "$*"; }
check() { local name=$1; shift; if "$@"; then pass "$name"; else fail "$name"; fi; }
jq_py() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
eq() { [[ "$1" == "$2" ]] || { echo "  expected [$2], got [$1]"; return 1; }; }

work=$(mktemp -d "${TMPDIR:-/tmp}/topognn-rest.XXXXXX")
chmod 755 "$work"
rest_pid=""
cleanup() {
    if [[ -n "$rest_pid" ]]; then kill "$rest_pid" 2>/dev/null || true; wait "$rest_pid" 2>/dev/null || true; fi
    "$cluster" stop >/dev/null 2>&1 || true
    rm -rf -- "$work"
}
trap cleanup EXIT
trap "exit 143" TERM INT

[[ -x "$tool" ]] || { echo "placement-report not built in $build (set TOPOGNN_BUILD_DIR)"; exit 1; }
"$repo_root/scripts/build-slurm.sh"

# ---- cluster with JWT --------------------------------------------------------
printf 'SwitchName=leaf1 Nodes=n[001-004]\nSwitchName=leaf2 Nodes=n[005-008]\nSwitchName=spine Switches=leaf[1-2]\n' \
    > "$work/topology.conf"
export TOPOGNN_TOPOLOGY_CONF="$work/topology.conf"
head -c 32 /dev/urandom > "$work/jwt_hs256.key"
chmod 600 "$work/jwt_hs256.key"
printf 'AuthAltTypes=auth/jwt\nAuthAltParameters=jwt_key=%s\n' "$work/jwt_hs256.key" > "$work/extra.conf"
export TOPOGNN_CLUSTER_EXTRA_CONF="$work/extra.conf"
eval "$("$cluster" env)"

started=0
deadline=$(( SECONDS + wait_total ))
while :; do
    if "$cluster" start > "$work/start.log" 2>&1; then started=1; break; fi
    if grep -q "other Slurm daemons run on this machine" "$work/start.log" && (( SECONDS + 60 < deadline )); then
        echo "# another Slurm cluster runs here; retrying in 60 s"
        sleep 60
        continue
    fi
    cat "$work/start.log"
    break
done
if (( started == 0 )); then
    fail "cluster started with auth/jwt"
    echo "$passed passed, $failed failed"
    exit 1
fi
pass "cluster started with auth/jwt: 8 slurmd idle"
conf=$SLURM_CONF

# ---- slurmrestd ---------------------------------------------------------------
# slurmrestd drops to nobody before it binds: its socket directory is nobody's
install -d -o nobody -m 700 "$work/rest"
sock="$work/rest/rest.sock"
nobody_uid=$(id -u nobody)
nobody_gid=$(getent group nogroup | cut -d: -f3)
# SLURM_JWT=daemon: slurmrestd talks to slurmctld with each client's JWT
SLURM_CONF=$conf SLURM_JWT=daemon slurmrestd -f "$conf" -a rest_auth/jwt -s openapi/slurmctld \
    -u "$nobody_uid" -g "$nobody_gid" "unix:$sock" > "$work/rest.log" 2>&1 &
rest_pid=$!
for _ in $(seq 1 50); do [[ -S "$sock" ]] && break; sleep 0.2; done
check "slurmrestd listens on its socket" test -S "$sock" || { cat "$work/rest.log"; }

token=$(scontrol token username=root lifespan=900 | sed -n 's/^SLURM_JWT=//p')
check "scontrol token gives a JWT" test -n "$token"

# ---- two jobs and a drained node ---------------------------------------------
j1=$(sbatch --parsable -N 3 --exclusive -o /dev/null --wrap "sleep 300")
j2=$(sbatch --parsable -N 2 --exclusive -o /dev/null --wrap "sleep 300")
scontrol update nodename=n008 state=drain reason=report-test
for _ in $(seq 1 60); do
    [[ "$(squeue -h -t R -o %i | wc -l)" -eq 2 ]] && break
    sleep 0.5
done
check "both jobs run" eq "$(squeue -h -t R -o %i | wc -l)" 2
nodes1=$(squeue -h -j "$j1" -o %N)
nodes2=$(squeue -h -j "$j2" -o %N)
echo "# job $j1 on $nodes1, job $j2 on $nodes2"

"$discover" --topology-conf "$work/topology.conf" --json > "$work/graph.json"
R=("$tool" --graph "$work/graph.json" --slurmrestd "unix:$sock")

SLURM_JWT=$token "${R[@]}" --json cluster > "$work/c.json" || true
check "cluster from slurmrestd: 2 running jobs, 5 busy, 2 idle (n008 drained)" \
    eq "$(jq_py "$work/c.json" 'd["running_jobs"], d["busy_hosts"], d["idle_hosts"], d["sources"]["slurmrestd"]')" \
    "(2, 5, 2, True)"
SLURM_JWT=$token "${R[@]}" --json --html "$work/c.html" cluster > /dev/null || true
check "picture: job $j1's nodes carry it" \
    eval "[ \$(grep -o 'data-job=\"$j1\"><title>' '$work/c.html' | wc -l) -eq 3 ]"
check "picture: n008 drawn drained" grep -q '<title>n008: drained</title>' "$work/c.html"

SLURM_JWT=$token "${R[@]}" --json whatif --nodes 2 --gpus-per-node 0 > "$work/w.json" || true
busy=$(python3 -c '
import subprocess, sys
names = []
for expr in sys.argv[1:]:
    names += subprocess.run(["scontrol", "show", "hostnames", expr], capture_output=True, text=True).stdout.split()
print(" ".join(sorted(names + ["n008"])))' "$nodes1" "$nodes2")
check "whatif from slurmrestd: 2 hosts, none busy or drained" \
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); busy = set(sys.argv[2].split())
hosts = d["decision"]["chosen"]["hosts"]
print("  chose", hosts, "busy/drained", sorted(busy))
sys.exit(0 if len(hosts) == 2 and not busy & set(hosts) and d["running_jobs"] == 2 else 1)' "$work/w.json" "$busy"

# ---- failures ----------------------------------------------------------------
SLURM_JWT=not-a-token "${R[@]}" cluster > /dev/null 2> "$work/e401" || true
# slurmrestd passes the token on; slurmctld's refusal comes back as 511
check "bad token: the status, slurmrestd's complaint and the JWT hint named" \
    grep -q "live cluster not available: http://localhost/slurm/v0.0.42/jobs: HTTP 511: Unable to query jobs (is the JWT valid?" "$work/e401"
sed 's/^/  # /' "$work/e401"
kill "$rest_pid"; wait "$rest_pid" 2>/dev/null || true; rest_pid=""
printf '{"job":%s,"timestamp":%s,"ok":true,"policy":"model","baseline_policy":"tree","scorer":"model","candidates":1,"latency_us":9,"chosen":{"hosts":["n005","n006"],"kind":"tree","nhosts":2,"groups":1,"leaves":1,"hop_diameter":2,"cost":1,"comm_time_s":0,"frag_cost":0},"baseline":null,"alternatives":[]}\n' \
    "$j2" "$(date +%s)" > "$work/d.log"
SLURM_JWT=$token "${R[@]}" --decisions "$work/d.log" --json cluster > "$work/c2.json" 2>/dev/null || true
check "slurmrestd gone: the log still shows its job, with a note" \
    eq "$(jq_py "$work/c2.json" 'd["running_jobs"], d["sources"]["slurmrestd"], "live cluster not available" in d["notes"][0]')" \
    "(1, False, True)"

scancel "$j1" "$j2" || true
echo "$passed passed, $failed failed"
(( failed == 0 ))
