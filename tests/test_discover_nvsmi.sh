#!/bin/sh
# test_discover_nvsmi.sh: NVLink domains from `nvidia-smi -q` files:
# 36 GB200 trays in two NVL72 racks give 2 domains of 18 and a Slurm block
# topology.conf; a domain joined with a NetQ fabric is the block while the
# tree ignores it; fabric troubles are anomalies; malformed files fail
# naming the file and line. Prints "N passed, N failed".
set -u
tool=${BUILD_DIR:-..}/tools/topognn-discover
fx=${FIXTURES_DIR:-$(dirname "$0")/fixtures}
gb=$fx/nvidia-smi/gb200-nvl72x2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/check.sh"

json_get() { # json_get FILE KEY -> value of a top-level key
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

"$tool" --nvidia-smi "$gb" --summary --json >"$tmp/s.json"
check "36 hosts from the file names" test "$(json_get "$tmp/s.json" hosts)" = 36
check "2 NVLink domains" test "$(json_get "$tmp/s.json" groups)" = 2
check "18 hosts in each domain" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert s["group_hosts"] == {"nvl1": 18, "nvl2": 18}, s["group_hosts"]
assert s["anomalies"] == 0, s
' "$tmp/s.json"

"$tool" --nvidia-smi "$gb" --topology-conf block >"$tmp/block.conf"
check "block 1 is rack 1's 18 trays" grep -qx 'BlockName=nvl1 Nodes=gb200-r01-t\[01-18\]' "$tmp/block.conf"
check "block 2 is rack 2's 18 trays" grep -qx 'BlockName=nvl2 Nodes=gb200-r02-t\[01-18\]' "$tmp/block.conf"
check "BlockSizes=18,36" grep -qx 'BlockSizes=18,36' "$tmp/block.conf"
check "exactly 2 blocks" test "$(grep -c '^BlockName=' "$tmp/block.conf")" = 2
"$tool" --topology-conf "$tmp/block.conf" --summary --json >"$tmp/rb.json"
check "the block topology.conf reads back with 36 hosts in 2 blocks" \
	test "$(json_get "$tmp/rb.json" hosts)/$(json_get "$tmp/rb.json" groups)" = 36/2

"$tool" --nvidia-smi "$gb" --json >"$tmp/g.json"
check "a domain group carries kind, cluster UUID and clique" python3 -c '
import json, sys
g = json.load(open(sys.argv[1]))
v = [x for x in g["vertices"] if x["kind"] == "group" and x["name"] == "nvl2"][0]
assert v["attrs"] == {"group_kind": "nvlink", "clique_id": "32766",
                      "cluster_uuid": "1f9b6c28-a3d5-47e0-8b6c-d2e4f7a90c15"}, v
' "$tmp/g.json"

# with a NetQ fabric: gpu-01..02 in one domain, gpu-03..08 in another
mkdir "$tmp/mix"
for i in 1 2 3 4 5 6 7 8; do
	src=$gb/gb200-r01-t01.txt
	[ "$i" -gt 2 ] && src=$gb/gb200-r02-t01.txt
	cp "$src" "$tmp/mix/gpu-0$i.txt"
done
netq=$fx/netq/roce-2leaf-1spine.json
"$tool" --netq "$netq" --nvidia-smi "$tmp/mix" --topology-conf block >"$tmp/mix-block.conf"
check "with a fabric, blocks are the NVLink domains" sh -c "
	grep -qx 'BlockName=nvl1 Nodes=gpu-\[01-02\]' '$tmp/mix-block.conf' &&
	grep -qx 'BlockName=nvl2 Nodes=gpu-\[03-08\]' '$tmp/mix-block.conf'"
"$tool" --netq "$netq" --nvidia-smi "$tmp/mix" --topology-conf tree >"$tmp/mix-tree.conf"
check "with a fabric, the tree ignores NVLink domains" \
	grep -qx 'SwitchName=roce-leaf-01 Nodes=gpu-\[01-04\]' "$tmp/mix-tree.conf"
"$tool" --netq "$netq" --nvidia-smi "$tmp/mix" --summary --json >"$tmp/mix.json"
check "with a fabric: 2 fabric groups and 2 NVLink domains, 8 hosts" \
	test "$(json_get "$tmp/mix.json" groups)/$(json_get "$tmp/mix.json" hosts)" = 4/8

# anomalies
mkdir "$tmp/bad"
cp "$gb/gb200-r01-t01.txt" "$tmp/bad/ok-1.txt"
sed '0,/State                             : Completed/s//State                             : In Progress/' \
	"$gb/gb200-r01-t02.txt" >"$tmp/bad/starting.txt"
sed '0,/Bandwidth                     : Full/s//Bandwidth                     : Degraded/' \
	"$gb/gb200-r01-t03.txt" >"$tmp/bad/degraded.txt"
sed '0,/CliqueId                          : 32766/s//CliqueId                          : 5/' \
	"$gb/gb200-r01-t04.txt" >"$tmp/bad/split.txt"
"$tool" --nvidia-smi "$tmp/bad" --summary --json >"$tmp/bad.json"
check "not-ready, degraded and split hosts are anomalies" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert s["anomaly_kinds"] == {"nvlink-degraded": 1, "nvlink-domain-split": 1,
                              "nvlink-fabric-not-ready": 1}, s["anomaly_kinds"]
assert s["group_hosts"] == {"nvl1": 2}, s["group_hosts"]
' "$tmp/bad.json"

# errors
mkdir "$tmp/err1" "$tmp/err2"
sed 's/CliqueId                          : 32766/CliqueId                          : x7/' \
	"$gb/gb200-r01-t01.txt" >"$tmp/err1/n1.txt"
"$tool" --nvidia-smi "$tmp/err1" --summary >/dev/null 2>"$tmp/err"
line=$(grep -n 'CliqueId' "$tmp/err1/n1.txt" | head -1 | cut -d: -f1)
check "a malformed CliqueId names the file and its line ($line)" \
	grep -q "n1.txt:$line: GPU 00000008:01:00.0: CliqueId \"x7\"" "$tmp/err"
echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver." >"$tmp/err2/n2.txt"
"$tool" --nvidia-smi "$tmp/err2" --summary >/dev/null 2>"$tmp/err"
check "a file without GPU sections is refused" grep -q "n2.txt: no \"GPU <bus id>\" section" "$tmp/err"
"$tool" --nvidia-smi "$tmp/nonexistent" --summary >/dev/null 2>"$tmp/err"
check "a missing directory is a clear error" grep -q "nonexistent: cannot open the directory" "$tmp/err"

finish
