#!/bin/sh
# test_monitoring_contrib.sh: the shipped alert rules and Grafana dashboard
# (contrib/prometheus/topognn.rules.yml, contrib/grafana/topognn.json).
#   - the dashboard's JSON model: schemaVersion, the DS_PROMETHEUS datasource
#     variable, every panel with a unique id, a datasource and targets;
#   - every metric a panel or a rule uses is exported by `placement-report
#     metrics` (a simulated SuperPOD decision log, the cluster graph and a node
#     report) and documented in docs/metrics.md: a renamed metric fails here;
#   - every alert has a promtool test where it fires and one where it does not;
#   - promtool check rules and promtool test rules pass.
# The live proof (a real Prometheus after a real Slurm cluster run) is
# tests/slurm/test_monitoring.sh. Skips (77) only when promtool (Debian
# package prometheus, scripts/deps.sh) is missing, after the checks that
# need no promtool.
set -u
B=${BUILD_DIR:-..}
top=$(cd "$(dirname "$0")/.." && pwd)
fx=${FIXTURES_DIR:-$top/tests/fixtures}
tool=$B/tools/placement-report
sim=$B/tools/topognn-sim
rules=$top/contrib/prometheus/topognn.rules.yml
rules_test=$top/contrib/prometheus/topognn.rules.test.yml
dash=$top/contrib/grafana/topognn.json
mc="python3 $top/tests/monitoring_check.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/check.sh"

check "dashboard structure" $mc structure "$dash"
check "every alert tested firing and not firing" $mc coverage "$rules" "$rules_test"

G="--ibnetdiscover $fx/fabrics/dgx-h100-superpod.ibnetdiscover"
"$sim" $G --trace "$fx/traces/kth-sp2-head100.swf" --comm "$fx/comm" --policies model \
	--decision-log "$tmp/d.log" > /dev/null 2>&1
mkdir "$tmp/reports"
cat > "$tmp/reports/job-4.dgx-001.json" <<'JSON'
{"job_id": "4", "node": "dgx-001", "time": 1764435573, "from": "prolog",
 "irq": {"mode": "enforce", "status": "ok", "changed": 2,
         "findings": [{"kind": "shared-core", "irq": 40, "hca": "mlx5_0", "cpus": "0", "text": "t"}]}}
JSON
"$tool" --decisions "$tmp/d.log" $G --node-reports "$tmp/reports" metrics > "$tmp/m.prom" 2> "$tmp/m.err"
check "placement-report metrics with a graph and node reports" test -s "$tmp/m.prom"
check "every metric used is exported and documented" \
	$mc names "$dash" "$rules" "$tmp/m.prom" "$top/docs/metrics.md"
# the check must catch a rename: a dashboard using a metric nobody exports
sed 's/topognn_hosts_busy/topognn_busy_hosts/' "$dash" > "$tmp/renamed.json"
$mc names "$tmp/renamed.json" "$rules" "$tmp/m.prom" "$top/docs/metrics.md" > "$tmp/renamed.out"
rc=$?
check "a renamed metric in a panel fails the names check" \
	eval '[ $rc -eq 1 ] && grep -q "^FAIL - topognn_busy_hosts (panel .Hosts busy / idle.) is exported" "$tmp/renamed.out"'

promtool=$(command -v promtool || true)
if [ -z "$promtool" ]; then
	echo "SKIP: promtool is not installed (Debian package prometheus, scripts/deps.sh); $pass passed, $fail failed without it"
	[ "$fail" -eq 0 ] && exit 77
	exit 1
fi
check "promtool check rules" "$promtool" check rules "$rules"
(cd "$(dirname "$rules_test")" && "$promtool" test rules "$(basename "$rules_test")") > "$tmp/promtool.out" 2>&1
rc=$?
sed 's/^/  | /' "$tmp/promtool.out"
check "promtool test rules" test $rc -eq 0
finish
