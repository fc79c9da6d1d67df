#!/bin/sh
# test_discover_netq.sh: topognn-discover --netq end to end: a NetQ topology
# graph of 2 leaves, 1 spine and 8 hosts gives the same graph kinds as an
# ibnetdiscover dump (levels from the cabling and the tiers, groups, cables
# with their counts), NIC role rules keep storage NICs out of the fabric, and
# bad files fail naming the file and the JSON path.
# Prints "N passed, N failed".
set -u
tool=${BUILD_DIR:-..}/tools/topognn-discover
fx=${FIXTURES_DIR:-$(dirname "$0")/fixtures}
netq=$fx/netq/roce-2leaf-1spine.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/check.sh"

json_get() { # json_get FILE KEY -> value of a top-level key
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

"$tool" --netq "$netq" --summary --json >"$tmp/summary.json"
for kv in switches=3 leaf_switches=2 spine_switches=1 hosts=8 groups=2 links=48 nics=32 \
	hcas=0 anomalies=0; do
	key=${kv%%=*}
	want=${kv#*=}
	check "netq summary $key = $want" test "$(json_get "$tmp/summary.json" "$key")" = "$want"
done

"$tool" --netq "$netq" --json >"$tmp/graph.json"
check "gpu-03's NIC ens2f0np1 is Ethernet, cabled to roce-leaf-01 port swp2s2" python3 -c '
import json, sys
g = json.load(open(sys.argv[1]))
v = [x for x in g["vertices"] if x["name"] == "gpu-03/ens2f0np1"][0]
assert v["link_layer"] == "eth" and v["netdev"] == "ens2f0np1", v
assert v["attrs"] == {"fabric": "compute", "switch_port": "roce-leaf-01:swp2s2"}, v
up = [e for e in g["edges"] if e["kind"] == "fabric" and e["a"] == "switch:roce-leaf-01"
      and e["b"] == "switch:roce-spine-01"]
assert len(up) == 8, len(up)
' "$tmp/graph.json"
"$tool" --graph "$tmp/graph.json" --json >"$tmp/graph2.json"
check "netq graph file round trip is byte-identical" cmp -s "$tmp/graph.json" "$tmp/graph2.json"
"$tool" --netq "$netq" --topology-conf tree >"$tmp/topology.conf"
check "tree topology.conf: leaf 1 holds gpu-[01-04]" \
	grep -qx 'SwitchName=roce-leaf-01 Nodes=gpu-\[01-04\]' "$tmp/topology.conf"
check "tree topology.conf: the spine holds both leaves" \
	grep -qx 'SwitchName=roce-spine-01 Switches=roce-leaf-\[01-02\]' "$tmp/topology.conf"

# storage NICs (ens3, ens4) are kept, tagged, and out of the fabric
"$tool" --netq "$netq" --nic-role 'storage=^ens[34]' --json >"$tmp/roles.json"
check "storage rule: 16 compute cables to hosts left, storage NICs tagged" python3 -c '
import json, sys
g = json.load(open(sys.argv[1]))
hca = [v for v in g["vertices"] if v["kind"] == "hca"]
st = [v for v in hca if v["attrs"]["fabric"] == "storage"]
assert len(hca) == 32 and len(st) == 16, (len(hca), len(st))
assert all(v["name"].split("/")[1].startswith(("ens3", "ens4")) for v in st)
cables = [e for e in g["edges"] if e["kind"] == "fabric" and e["a"].startswith("hca:")]
assert len(cables) == 16, len(cables)
' "$tmp/roles.json"

# tiers: a spine claimed as tier 1 is an anomaly
python3 - "$netq" "$tmp/tier.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for t in d[0]["nodes"]:
    for n in t["compounded_nodes"]:
        if n["name"] == "roce-spine-01":
            n["tier"] = 1
json.dump(d, open(sys.argv[2], "w"))
PY
"$tool" --netq "$tmp/tier.json" --summary --json >"$tmp/tier-summary.json"
check "a spine NetQ puts in tier 1 is a tier-mismatch anomaly" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert s["anomaly_kinds"] == {"tier-mismatch": 1} and s["spine_switches"] == 1, s
' "$tmp/tier-summary.json"

# errors
printf '[{"nodes": [{"compounded_nodes": [\n {"id": "a", "name": "h1", "tier": -1},\n' >"$tmp/cut.json"
"$tool" --netq "$tmp/cut.json" --summary >/dev/null 2>"$tmp/err"
check "truncated JSON exits 1 naming file and line" grep -q "cut.json:3:" "$tmp/err"
python3 - "$netq" "$tmp/dangling.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d[0]["links"][2]["compounded_links"][1]["interfaces"][0]["node"] = "sw9"
json.dump(d, open(sys.argv[2], "w"))
PY
"$tool" --netq "$tmp/dangling.json" --summary >/dev/null 2>"$tmp/err"
check "a cable to an unlisted device names its JSON path" \
	grep -q 'dangling.json: links\[2\].compounded_links\[1\]: the cable ends at device "sw9"' "$tmp/err"
echo '[{"nodes": [], "links": []}, {}]' >"$tmp/two.json"
"$tool" --netq "$tmp/two.json" --summary >/dev/null 2>"$tmp/err"
check "two response objects are refused" grep -q "expected an array of one object" "$tmp/err"
"$tool" --netq "$netq" --nic-role 'fast=^ens' --summary >/dev/null 2>"$tmp/err"
check "an unknown NIC role is a clear error" grep -q 'NIC role rule "fast=^ens"' "$tmp/err"

finish
