#!/bin/sh
# test_lldp_netns.sh: topognn-discover --lldp and --lldp-live against real
# lldpd. Network namespaces stand for 4 hosts, 2 leaf switches and 1 spine,
# joined by veth pairs (2 cables from each leaf to the spine); lldpd runs in
# each (its own UTS namespace for its system name, its own control socket),
# and lldpcli's JSON from every namespace is the input. Checks switch names,
# ports, link speeds (veth: 10G), levels, groups, cable counts and the host
# NIC -> RDMA device mapping from a fake sysfs. Needs root, ip, unshare and
# lldpd: skips (77) otherwise. Bounded (lldpd gets at most 30 s to see its
# neighbors); the trap always stops the daemons and deletes the namespaces.
# Prints "N passed, N failed".
set -u
tool=${BUILD_DIR:-..}/tools/topognn-discover
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root (network namespaces)"
	exit 77
fi
for c in ip unshare lldpd lldpcli python3; do
	if ! command -v "$c" >/dev/null 2>&1; then
		echo "SKIP: $c is not installed (scripts/deps.sh installs lldpd)"
		exit 77
	fi
done
tmp=$(mktemp -d)
chmod 755 "$tmp" # lldpd drops to its own user, which must reach the sockets
ns=tgn$$ # namespace prefix: unique per run
nodes="rh1 rh2 rh3 rh4 rleaf1 rleaf2 rspine1"
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	for p in $pids; do
		i=0
		while kill -0 "$p" 2>/dev/null && [ $i -lt 20 ]; do sleep 0.1; i=$((i + 1)); done
		kill -9 "$p" 2>/dev/null
	done
	for n in $nodes; do ip netns del "$ns-$n" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
. "$(dirname "$0")/check.sh"

for n in $nodes; do
	ip netns add "$ns-$n" || exit 1
	ip -n "$ns-$n" link set lo up
	ip netns exec "$ns-$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null
done
# cable NODE_A IF_A NODE_B IF_B
cable() {
	ip link add "$2" netns "$ns-$1" type veth peer name "$4" netns "$ns-$3" || exit 1
	ip -n "$ns-$1" link set "$2" up
	ip -n "$ns-$3" link set "$4" up
}
cable rh1 ens1f0 rleaf1 swp1
cable rh2 ens1f0 rleaf1 swp2
cable rh3 ens1f0 rleaf2 swp1
cable rh4 ens1f0 rleaf2 swp2
cable rleaf1 swp31 rspine1 swp1
cable rleaf1 swp32 rspine1 swp2
cable rleaf2 swp31 rspine1 swp3
cable rleaf2 swp32 rspine1 swp4
# a switch is a bridge to LLDP: an empty one gives the Bridge capability
# without forwarding anything (no loop over the parallel up-links)
for n in rleaf1 rleaf2 rspine1; do
	ip -n "$ns-$n" link add br0 type bridge && ip -n "$ns-$n" link set br0 up
done
echo "configure lldp tx-interval 1" >"$tmp/lldpd.conf"
for n in $nodes; do
	ip netns exec "$ns-$n" unshare --uts sh -c \
		'hostname "$1" && exec lldpd -d -u "$2" -O "$3"' sh "$n" "$tmp/$n.sock" "$tmp/lldpd.conf" \
		>"$tmp/$n.log" 2>&1 &
	pids="$pids $!"
done

# wait (at most 30 s) until every node sees all its neighbors
deadline=$(($(date +%s) + 30))
mkdir "$tmp/lldp"
while :; do
	for n in $nodes; do
		ip netns exec "$ns-$n" lldpcli -u "$tmp/$n.sock" -f json show neighbors details \
			>"$tmp/lldp/$n.json" 2>/dev/null
	done
	python3 -c '
import json, sys
want = {"rh": 1, "rleaf": 4, "rspine": 4}
for n in sys.argv[2:]:
    try:
        i = json.load(open(sys.argv[1] + "/" + n + ".json"))["lldp"].get("interface", {})
    except Exception:
        sys.exit(1)
    if len(i) != want[n.rstrip("0123456789")]:
        sys.exit(1)
' "$tmp/lldp" $nodes && break
	if [ "$(date +%s)" -ge "$deadline" ]; then
		echo "lldpd did not see all neighbors within 30 s"
		tail -n 3 "$tmp"/*.log
		exit 1
	fi
	sleep 1
done
check "lldpd in 7 namespaces saw all 16 cable ends" true
# LLDP_SAVE_DIR=DIR keeps lldpcli's outputs (how tests/fixtures/lldp was made)
[ -n "${LLDP_SAVE_DIR:-}" ] && cp "$tmp/lldp"/*.json "$LLDP_SAVE_DIR/"

# fake sysfs: the hosts' ens1f0 is RDMA device mlx5_0 (rh3: mlx5_2)
for h in rh1 rh2 rh3 rh4; do
	dev=mlx5_0
	[ $h = rh3 ] && dev=mlx5_2
	mkdir -p "$tmp/sysfs/$h/class/net/ens1f0/device/infiniband/$dev"
	echo 10000 >"$tmp/sysfs/$h/class/net/ens1f0/speed"
done

json_get() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }
"$tool" --lldp "$tmp/lldp" --sysfs "$tmp/sysfs" --summary --json >"$tmp/s.json"
for kv in switches=3 leaf_switches=2 spine_switches=1 hosts=4 groups=2 links=8 nics=4 anomalies=0; do
	check "lldp summary ${kv%%=*} = ${kv#*=}" test "$(json_get "$tmp/s.json" "${kv%%=*}")" = "${kv#*=}"
done
"$tool" --lldp "$tmp/lldp" --sysfs "$tmp/sysfs" --json >"$tmp/g.json"
check "rh3's ens1f0 is RDMA device mlx5_2 on rleaf2 port swp1 at 10G" python3 -c '
import json, sys
g = json.load(open(sys.argv[1]))
v = [x for x in g["vertices"] if x["name"] == "rh3/mlx5_2"][0]
assert v["netdev"] == "ens1f0" and v["device"] == "mlx5_2" and v["link_layer"] == "eth", v
assert v["attrs"]["switch_port"] == "rleaf2:swp1", v
e = [x for x in g["edges"] if x["kind"] == "fabric" and x["a"] == "hca:rh3/mlx5_2"]
assert len(e) == 1 and e[0]["b"] == "switch:rleaf2", e
assert e[0]["speed"] == "10G" and e[0]["gbps"] == 10.0, e
' "$tmp/g.json"
check "2 cables from each leaf to the spine, 10G each" python3 -c '
import json, sys
g = json.load(open(sys.argv[1]))
up = [e for e in g["edges"] if e["kind"] == "fabric" and e["b"] == "switch:rspine1"]
assert sorted(e["a"] for e in up) == ["switch:rleaf1"] * 2 + ["switch:rleaf2"] * 2, up
assert all(e["gbps"] == 10.0 for e in up), up
' "$tmp/g.json"
"$tool" --lldp "$tmp/lldp" --topology-conf tree >"$tmp/tree.conf"
check "tree topology.conf: rleaf1 holds rh[1-2]" grep -q '^SwitchName=rleaf1 Nodes=rh\[1-2\]' "$tmp/tree.conf"
check "tree topology.conf: rspine1 above both leaves" \
	grep -q '^SwitchName=rspine1 Switches=rleaf\[1-2\]' "$tmp/tree.conf"

# the hosts' files alone: the leaves are known only from the hosts' side
mkdir "$tmp/hostsonly"
cp "$tmp/lldp"/rh*.json "$tmp/hostsonly/"
"$tool" --lldp "$tmp/hostsonly" --summary --json >"$tmp/ho.json"
check "hosts' files alone: 2 leaves, 4 hosts, 4 cables" \
	test "$(json_get "$tmp/ho.json" leaf_switches)/$(json_get "$tmp/ho.json" hosts)/$(json_get "$tmp/ho.json" links)" = 2/4/4

# live, inside host rh2's namespace (its /sys is the namespace's)
ip netns exec "$ns-rh2" "$tool" --lldp-live --lldp-socket "$tmp/rh2.sock" --hostname rh2 \
	--json >"$tmp/live.json" 2>"$tmp/live.err"
check "--lldp-live on rh2: ens1f0 on rleaf1 port swp2, 10G" python3 -c '
import json, sys
g = json.load(open(sys.argv[1]))
v = [x for x in g["vertices"] if x["kind"] == "hca"]
assert [x["name"] for x in v] == ["rh2/ens1f0"], v
assert v[0]["attrs"]["switch_port"] == "rleaf1:swp2", v
e = [x for x in g["edges"] if x["kind"] == "fabric"]
assert len(e) == 1 and e[0]["gbps"] == 10.0, e
' "$tmp/live.json"
"$tool" --lldp-live --lldp-socket "$tmp/none.sock" --summary >/dev/null 2>"$tmp/err"
check "--lldp-live without lldpd fails cleanly" grep -q "lldpcli: failed" "$tmp/err"

finish
