#!/usr/bin/env bash
# test_monitoring.sh: the shipped Grafana dashboard and alert rules
# (contrib/) against a real Prometheus, fed by a real Slurm cluster run.
#
# An 8-node cluster (tests/slurm/cluster.sh) runs topology/topognn and
# prep/topognn (the decision log) and the SPANK plugin spank_topognn.so (a
# job report per job and node; IRQs audited on a fake proc/sys tree where
# every HCA interrupt sits on CPU 0, the incident, never on this machine).
# Jobs: heavy ones in one group and over two, a light one, one Slurm places
# itself (--contiguous, a fallback). Then `placement-report metrics` over the
# decision log, the graph and the node reports goes into node_exporter's
# textfile collector directory (the documented setup), a real Prometheus
# (Debian's binary, loopback port, its own tmp storage) scrapes it every
# second with contrib/prometheus/topognn.rules.yml loaded, and
# tests/monitoring_check.py requires:
#   - every dashboard panel target's query to parse and return >= 1 series;
#   - every rule loaded, evaluated, health "ok", and every metric it names
#     to have series;
#   - after the metrics file renames one metric (topognn_hosts_busy), the
#     same check to fail, naming the panel and the rule that lost it.
#
# Needs root, the Slurm from scripts/build-slurm.sh, a build configured with
# --with-slurm-source (TOPOGNN_BUILD_DIR, default <repo>/_build/default), and
# the Debian packages prometheus and prometheus-node-exporter (skips, 77,
# without them). Only one cluster may run on a machine: waits (bounded) for
# another one to go away. Prints "N passed, N failed" last; exit 1 on failure.
set -euo pipefail

script_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd -- "$script_dir/../.." && pwd)
cluster="$script_dir/cluster.sh"
# shellcheck source=tests/slurm/spank_fake.sh
source "$script_dir/spank_fake.sh"
build_dir=${TOPOGNN_BUILD_DIR:-$repo_root/_build/default}
so_dir="$build_dir/slurm-plugin/.libs"
tool="$build_dir/tools/placement-report"
fixtures=${FIXTURES_DIR:-$repo_root/tests/fixtures}
check_py="$repo_root/tests/monitoring_check.py"
rules="$repo_root/contrib/prometheus/topognn.rules.yml"
dash="$repo_root/contrib/grafana/topognn.json"

export TOPOGNN_CLUSTER_DIR=${TOPOGNN_CLUSTER_DIR:-$repo_root/.local/cluster-monitoring}
export TOPOGNN_CLUSTER_NODES=8
export TOPOGNN_TOPOLOGY_PLUGIN=topology/topognn
export TOPOGNN_PLUGIN_DIRS="$so_dir"
readonly START_TRIES=${TOPOGNN_MONITORING_START_TRIES:-10} PER_GROUP=4

passed=0
failed=0
pass() { passed=$(( passed + 1 )); printf 'ok   - %s\n' "$*"; }
fail() { failed=$(( failed + 1 )); printf 'FAIL - %s\n' "$*"; }
finish() { printf '%d passed, %d failed\n' "$passed" "$failed"; (( failed == 0 )); }

[[ $(id -u) -eq 0 ]] || { echo "SKIP: needs root"; exit 77; }
prometheus=$(command -v prometheus || true)
node_exporter=$(command -v prometheus-node-exporter || command -v node_exporter || true)
if [[ -z "$prometheus" || -z "$node_exporter" ]]; then
    echo "SKIP: prometheus or prometheus-node-exporter is not installed (scripts/deps.sh)"
    exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/topognn-monitoring.XXXXXX")
chmod 755 "$work"
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    "$cluster" stop >/dev/null 2>&1 || true
    rm -rf -- "$work"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

# ---- setup -----------------------------------------------------------------
"$repo_root/scripts/build-slurm.sh" >/dev/null
for f in "$so_dir/topology_topognn.so" "$so_dir/prep_topognn.so" "$so_dir/spank_topognn.so" \
         "$build_dir/slurm-plugin/fattree_json" "$tool"; do
    [[ -e "$f" ]] || { fail "missing $f (configure --with-slurm-source and make)"; finish; exit 1; }
done

etc="$TOPOGNN_CLUSTER_DIR/etc"
report_dir="$TOPOGNN_CLUSTER_DIR/report"
rm -rf -- "$report_dir" "$TOPOGNN_CLUSTER_DIR/irq"     # job ids start again at 1
"$build_dir/slurm-plugin/fattree_json" "groups=2,hosts=$PER_GROUP,rails=2,spines=2,prefix=n,digits=3" \
    > "$work/graph.json"
extra_files="$work/topognn.conf:$work/plugstack.conf"
for i in 1 2 3 4 5 6 7 8; do
    cp -- "$fixtures/hwloc/llnl-lassen-power9-4v100-4mlx5.xml" "$work/n00$i.xml"
    extra_files+=":$work/n00$i.xml"
done
fake="$work/fake"
spank_fake_tree "$fake"
cat > "$work/topognn.conf" <<EOF
# topognn.conf for tests/slurm/test_monitoring.sh
GraphFile=$work/graph.json
Mode=enforce
DecisionLog=$work/decisions.jsonl
Candidates=32
ClassRule=name=^light class=light
ClassRule=minnodes=2 class=heavy
EOF
printf 'required %s hwloc=%s/%%n.xml socket_ifname=eth0 irq=audit state_dir=%s/irq/%%n report_dir=%s proc_root=%s/proc sys_root=%s/sys\n' \
    "$so_dir/spank_topognn.so" "$etc" "$TOPOGNN_CLUSTER_DIR" "$report_dir" "$fake" "$fake" > "$work/plugstack.conf"
# PrologFlags=Alloc: the prolog (and the plugin's report) on every node of a
# job at allocation, not only where a step starts (the batch step: one node)
printf 'PrEpPlugins=prep/script,prep/topognn\nPrologFlags=Alloc\nPlugStackConfig=%s/plugstack.conf\n' "$etc" > "$work/extra.conf"
export TOPOGNN_CLUSTER_EXTRA_CONF="$work/extra.conf"
export TOPOGNN_CLUSTER_EXTRA_FILES="$extra_files"

eval "$("$cluster" env)"
if spank_start_cluster "$cluster" "$START_TRIES"; then
    pass "cluster started: topology/topognn, prep/topognn and spank_topognn.so on 8 nodes"
else
    fail "cluster start"
    finish
    exit 1
fi

# ---- jobs ------------------------------------------------------------------
submit() {
    local id
    if id=$(timeout 10 sbatch --parsable --exclusive --chdir="$work" --output=/dev/null "$@" \
            --wrap 'sleep 2'); then
        echo "${id%%;*}"
    else
        echo none
    fi
}
jobs=()
jobs+=("$(submit -N 2 -J heavy2)")
jobs+=("$(submit -N 6 -J heavy6)")         # two groups of 4: spans both
jobs+=("$(submit -N 1 -J light1)")
jobs+=("$(submit -N 2 --contiguous -J light-contig)")  # Slurm places it itself
jobs+=("$(submit -N 3 -J heavy3)")
if [[ " ${jobs[*]} " == *" none "* ]]; then fail "sbatch refused a job: ${jobs[*]}"; fi
deadline=$(( SECONDS + 120 ))
while (( SECONDS < deadline )) && [[ -n "$(timeout 10 squeue -h 2>/dev/null || echo busy)" ]]; do
    sleep 1
done
if [[ -z "$(timeout 10 squeue -h 2>/dev/null || echo busy)" ]]; then
    pass "${#jobs[@]} jobs ran and ended (${jobs[*]})"
else
    fail "jobs still queued after 120 s: $(timeout 10 squeue 2>&1 | tr '\n' ' ')"
fi
lines=$(grep -c '"job_id"' "$work/decisions.jsonl" 2>/dev/null || true)
if [[ "${lines:-0}" -ge ${#jobs[@]} ]]; then
    pass "the decision log has a commit line for every job ($lines)"
else
    fail "the decision log has ${lines:-0} commit lines for ${#jobs[@]} jobs"
fi
nreports=$(find "$report_dir" -name 'job-*.json' 2>/dev/null | wc -l)
if (( nreports >= 14 )); then
    pass "the SPANK plugin wrote a report per job and node ($nreports)"
else
    fail "only $nreports node reports in $report_dir: $(ls "$report_dir" 2>&1 | tr '\n' ' ')"
fi

# ---- placement-report metrics into the textfile collector ------------------
textdir="$work/textfile"
mkdir -p "$textdir"
write_metrics() { # [sed expression]: write then rename, as docs/metrics.md says
    "$tool" --decisions "$work/decisions.jsonl" --graph "$work/graph.json" \
        --node-reports "$report_dir" metrics > "$work/topognn.prom.raw" 2> "$work/metrics.err" || return 1
    sed -e "${1:-}" "$work/topognn.prom.raw" > "$textdir/topognn.prom.$$"
    mv "$textdir/topognn.prom.$$" "$textdir/topognn.prom"
}
if write_metrics; then
    pass "placement-report metrics wrote $(grep -vc '^#' "$textdir/topognn.prom") samples"
else
    fail "placement-report metrics: $(cat "$work/metrics.err")"
fi
sample() { grep -E "^$1 " "$textdir/topognn.prom" | awk '{print $2}'; }
spanning=$(sample topognn_heavy_jobs_spanning_groups_total)
fallbacks=$(sample topognn_decisions_failed_total)
findings=$(grep -c '^topognn_node_irq_findings{node="n00[1-8]",kind="shared-core"} 8$' "$textdir/topognn.prom" || true)
if [[ "$spanning" -ge 1 && "$fallbacks" -ge 1 && "$findings" -ge 4 ]]; then
    pass "the metrics carry the run: $spanning heavy job(s) over two groups, $fallbacks fallback(s), $findings nodes with 8 shared-core IRQ findings"
else
    fail "metrics: spanning '$spanning', fallbacks '$fallbacks', nodes with shared-core findings '$findings'"
fi

# ---- node_exporter and Prometheus ----------------------------------------------
# shellcheck source=tests/free_port.sh
source "$repo_root/tests/free_port.sh"
pe=$(free_port)
pp=$(free_port)
timeout 300 "$node_exporter" --web.listen-address="127.0.0.1:$pe" --collector.disable-defaults \
    --collector.textfile --collector.textfile.directory="$textdir" > "$work/ne.log" 2>&1 &
pids+=($!)
cat > "$work/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $rules
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:$pe']
        labels: {instance: slurmctld}
EOF
timeout 300 "$prometheus" --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
    --web.listen-address="127.0.0.1:$pp" --log.level=warn > "$work/prometheus.log" 2>&1 &
pids+=($!)
url="http://127.0.0.1:$pp"
up=1
deadline=$(( SECONDS + 90 ))
while (( SECONDS < deadline )); do
    if curl -sf "$url/api/v1/query?query=topognn_decisions_failed_total" 2>/dev/null |
            grep -q '"result":\[{'; then
        up=0
        break
    fi
    sleep 0.5
done
if (( up == 0 )); then
    pass "Prometheus scrapes placement-report's metrics through node_exporter's textfile collector"
else
    fail "Prometheus has no topognn metrics after 90 s: $(tail -n 5 "$work/prometheus.log" "$work/ne.log" | tr '\n' ' ')"
    finish
    exit 1
fi
# a few scrapes and rule evaluations, so rate() and increase() have two samples
sleep 6

if python3 "$check_py" live "$url" "$dash" "$rules" > "$work/live.out" 2>&1; then
    pass "every panel query returns series, every rule evaluates with health ok and has data: $(grep -c '^ok' "$work/live.out") checks"
else
    fail "live check against Prometheus:"
fi
sed 's/^/  | /' "$work/live.out"

# ---- a renamed metric fails the check -------------------------------------------
write_metrics 's/^topognn_hosts_busy /topognn_hosts_busy_now /; s/^# \(HELP\|TYPE\) topognn_hosts_busy /# \1 topognn_hosts_busy_now /'
gone=1
deadline=$(( SECONDS + 30 ))
while (( SECONDS < deadline )); do
    if curl -sf "$url/api/v1/query?query=topognn_hosts_busy" | grep -q '"result":\[\]'; then
        gone=0
        break
    fi
    sleep 0.5
done
python3 "$check_py" live "$url" "$dash" "$rules" > "$work/renamed.out" 2>&1 && rc=0 || rc=$?
if (( gone == 0 && rc == 1 )) &&
        grep -q "^FAIL - panel [0-9]* 'Hosts busy / idle' target A: 0 series: topognn_hosts_busy$" "$work/renamed.out" &&
        grep -q "^FAIL - rule TopognnFragmentationHigh: its metric topognn_hosts_busy has series now" "$work/renamed.out"; then
    pass "renaming topognn_hosts_busy in the metrics fails the check, naming the panel and the rule"
else
    fail "renamed metric not caught (gone $gone, exit $rc):"
    grep '^FAIL' "$work/renamed.out" | sed 's/^/  | /'
fi

# ---- teardown ----------------------------------------------------------------
if "$cluster" stop >/dev/null; then pass "cluster stopped"; else fail "cluster stop"; fi
finish
