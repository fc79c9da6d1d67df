#!/bin/sh
# test_discover_lldp.sh: topognn-discover --lldp on real lldpcli output
# (tests/fixtures/lldp, captured from lldpd in network namespaces; the live
# test is test_lldp_netns.sh, which needs root): switch names, ports, speeds,
# levels, groups, the NIC -> RDMA device mapping from a fake sysfs, NIC
# roles, a host cabled to a host, and malformed input.
# Prints "N passed, N failed".
set -u
tool=${BUILD_DIR:-..}/tools/topognn-discover
fx=${FIXTURES_DIR:-$(dirname "$0")/fixtures}
lldp=$fx/lldp/netns-2leaf-1spine
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/check.sh"

json_get() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

"$tool" --lldp "$lldp" --summary --json >"$tmp/s.json"
for kv in switches=3 leaf_switches=2 spine_switches=1 hosts=4 groups=2 links=8 nics=4 anomalies=0; do
	check "lldp summary ${kv%%=*} = ${kv#*=}" test "$(json_get "$tmp/s.json" "${kv%%=*}")" = "${kv#*=}"
done

# a fake sysfs: rh1's ens1f0 is a RoCE port of mlx5_1, 100 Gb/s
mkdir -p "$tmp/sysfs/rh1/class/net/ens1f0/device/infiniband/mlx5_1"
echo 100000 >"$tmp/sysfs/rh1/class/net/ens1f0/speed"
"$tool" --lldp "$lldp" --sysfs "$tmp/sysfs" --json >"$tmp/g.json"
check "rh1's ens1f0 is mlx5_1 on rleaf1:swp1; LLDP's 10G wins over sysfs" python3 -c '
import json, sys
g = json.load(open(sys.argv[1]))
v = [x for x in g["vertices"] if x["name"] == "rh1/mlx5_1"][0]
assert v["netdev"] == "ens1f0" and v["device"] == "mlx5_1", v
assert v["attrs"] == {"fabric": "compute", "switch_port": "rleaf1:swp1"}, v
e = [x for x in g["edges"] if x["kind"] == "fabric" and x["a"] == "hca:rh1/mlx5_1"][0]
assert e["b"] == "switch:rleaf1" and e["gbps"] == 10.0, e
# without sysfs the NIC keeps its netdev name
assert [x for x in g["vertices"] if x["name"] == "rh2/ens1f0"], "rh2"
' "$tmp/g.json"
check "rleaf2's up-links are its ports 3 and 4 (swp31, swp32 in name order)" python3 -c '
import json, sys
g = json.load(open(sys.argv[1]))
up = [(e["port_a"], e["port_b"]) for e in g["edges"] if e["kind"] == "fabric"
      and e["a"] == "switch:rleaf2" and e["b"] == "switch:rspine1"]
assert sorted(up) == [(3, 3), (4, 4)], up
' "$tmp/g.json"

# a speed LLDP does not give comes from sysfs
mkdir "$tmp/nomau"
python3 - "$lldp/rh4.json" "$tmp/nomau/rh4.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for i in d["lldp"]["interface"].values():
    del i["port"]["auto-negotiation"]
json.dump(d, open(sys.argv[2], "w"))
PY
mkdir -p "$tmp/sysfs/rh4/class/net/ens1f0"
echo 25000 >"$tmp/sysfs/rh4/class/net/ens1f0/speed"
"$tool" --lldp "$tmp/nomau" --sysfs "$tmp/sysfs" --json >"$tmp/nomau.json"
check "without a MAU type, rh4's speed is sysfs' 25000 Mb/s" python3 -c '
import json, sys
g = json.load(open(sys.argv[1]))
e = [x for x in g["edges"] if x["kind"] == "fabric"][0]
assert e["speed"] == "25G" and e["gbps"] == 25.0, e
' "$tmp/nomau.json"

# roles: rh3 and rh4's ports on rleaf2 are storage
"$tool" --lldp "$lldp" --nic-role 'storage=^rleaf2:' --summary --json >"$tmp/r.json"
check "a storage rule on rleaf2's ports leaves 2 hosts under 1 leaf" \
	test "$(json_get "$tmp/r.json" leaf_switches)/$(json_get "$tmp/r.json" groups)/$(json_get "$tmp/r.json" nics)" = 1/1/4

# a host cabled straight to another host
mkdir "$tmp/h2h"
python3 - "$lldp/rleaf1.json" "$lldp/rh1.json" "$tmp/h2h/rh9.json" <<'PY'
import json, sys
sw = json.load(open(sys.argv[1]))
h = json.load(open(sys.argv[2]))
ifs = h["lldp"]["interface"]
ifs["ens2f0"] = json.loads(json.dumps(ifs["ens1f0"]))
ifs["ens2f0"]["chassis"] = sw["lldp"]["interface"][0]["swp1"]["chassis"]
json.dump(h, open(sys.argv[3], "w"))
PY
"$tool" --lldp "$tmp/h2h" --summary --json >"$tmp/h2h.json"
check "a host cabled to a host is an anomaly, the rest loads" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert s["anomaly_kinds"] == {"host-to-host-link": 1} and s["switches"] == 1, s
' "$tmp/h2h.json"

# errors
mkdir "$tmp/e1" "$tmp/e2"
echo '{"lldp": {"interface": {"eth0": {"port": {}}}}}' >"$tmp/e1/n1.json"
"$tool" --lldp "$tmp/e1" --summary >/dev/null 2>"$tmp/err"
check "a neighbor without a chassis names file and interface" \
	grep -q 'n1.json: interface eth0: a neighbor without a chassis' "$tmp/err"
printf '{"lldp": {\n  "interface": [\n' >"$tmp/e2/n2.json"
"$tool" --lldp "$tmp/e2" --summary >/dev/null 2>"$tmp/err"
check "truncated JSON names file and line" grep -q 'n2.json:3:' "$tmp/err"

finish
