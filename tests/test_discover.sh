#!/bin/sh
# test_discover.sh: topognn-discover end to end on the real fixtures: summary
# counts of the DGX H100 SuperPOD fabric, the graph file round trip, the
# topology.conf it writes, hwloc affinity of a real Lassen node, and errors.
# Prints "N passed, N failed".
set -u
tool=${BUILD_DIR:-..}/tools/topognn-discover
fx=${FIXTURES_DIR:-$(dirname "$0")/fixtures}
fabric=$fx/fabrics/dgx-h100-superpod.ibnetdiscover
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/check.sh"

json_get() { # json_get FILE KEY -> integer value of a top-level key
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

"$tool" --ibnetdiscover "$fabric" --summary --json >"$tmp/summary.json"
for kv in hosts=119 switches=40 leaf_switches=31 spine_switches=9 groups=8 links=998 \
	anomalies=75 sharp_switches=40; do
	key=${kv%%=*}
	want=${kv#*=}
	check "summary $key = $want" test "$(json_get "$tmp/summary.json" "$key")" = "$want"
done

"$tool" --ibnetdiscover "$fabric" --json >"$tmp/graph.json"
"$tool" --graph "$tmp/graph.json" --json >"$tmp/graph2.json"
check "graph file round trip is byte-identical" cmp -s "$tmp/graph.json" "$tmp/graph2.json"
"$tool" --graph "$tmp/graph.json" --summary --json >"$tmp/summary2.json"
check "summary from the graph file equals the summary from the dump" \
	cmp -s "$tmp/summary.json" "$tmp/summary2.json"

"$tool" --ibnetdiscover "$fabric" --topology-conf tree >"$tmp/topology.conf"
check "topology.conf puts su1 under its pseudo-switch" \
	grep -qx 'SwitchName=su1 Nodes=a05-p1-dgx-01-c\[01,03-04,09,12-15,17-18\]' "$tmp/topology.conf"
check "topology.conf has 9 spines above the 8 units" \
	test "$(grep -c '^SwitchName=.*SPINE.* Switches=su\[1-8\]' "$tmp/topology.conf")" = 9
"$tool" --topology-conf "$tmp/topology.conf" --summary --json >"$tmp/tc.json"
check "the written topology.conf reads back with 119 hosts" test "$(json_get "$tmp/tc.json" hosts)" = 119

"$tool" --hwloc "$fx/hwloc/llnl-lassen-power9-4v100-4mlx5.xml" --affinity --json >"$tmp/aff.json"
check "lassen gpu 0004:04:00.0 is nearest mlx5_0 on NUMA 0" python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))
g = [x for x in a["gpus"] if x["pci_busid"] == "0004:04:00.0"][0]
assert g["nearest_hca"] == "mlx5_0" and g["numa"] == 0, g
h = [x for x in a["hcas"] if x["name"] == "mlx5_2"][0]
assert h["numa"] == 8 and h["netdev"] == "hsi2", h
assert len(a["gpus"]) == 4 and len(a["hcas"]) == 4
' "$tmp/aff.json"

printf 'Switch\t36 "S-0001"\t\t# "leaf" enhanced port 0 lid 1 lmc 0\n[99]\t"H-0002"[1](2)\t\t# "n1 mlx5_0" lid 2 4xHDR\n' >"$tmp/bad.txt"
"$tool" --ibnetdiscover "$tmp/bad.txt" --summary >"$tmp/out" 2>"$tmp/err"
rc=$?
check "a bad dump exits 1" test $rc = 1
check "the error names file and line" grep -q "bad.txt:2:" "$tmp/err"
"$tool" --summary >/dev/null 2>&1
check "no source is a usage error (exit 2)" test $? = 2

finish
