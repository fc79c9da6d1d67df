#!/bin/bash
# test_package.sh: the Debian packages scripts/package.sh builds hold what an
# admin installs, where Debian's Slurm looks for it.
#   tests/test_package.sh [DIR]     (default <repo>/_build/deb)
# Checks, with dpkg-deb and an unpack into a scratch root (dpkg -x):
#  - slurm-topognn: the three modules in /usr/lib/<multiarch>/slurm-wlm, each
#    exporting plugin_version and bound lazily (slurmd loads them too) (its value is proven by loading them in package.sh test); topognn.conf(5);
#    Depends on topognn and on slurm-wlm-basic-plugins 24.11.5 exactly;
#  - topognn: every program of tools/*.am with its man page, the shipped
#    model configure.ac names, the communication profiles, libtopo.
# Exit 77 (skip) when DIR holds no packages. Prints "N passed, N failed".
set -u
S=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$S/_build/deb}
. "$S/tests/check.sh"

plugin=$(ls "$dir"/slurm-topognn_*.deb 2>/dev/null | tail -n 1)
tools=$(ls "$dir"/topognn_*.deb 2>/dev/null | tail -n 1)
if [[ -z $plugin || -z $tools ]]; then
	echo "SKIP: no topognn and slurm-topognn packages in $dir (scripts/package.sh build)"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dpkg -x "$plugin" "$tmp/root"
dpkg -x "$tools" "$tmp/root"

pd=$(ls -d "$tmp"/root/usr/lib/*/slurm-wlm 2>/dev/null | head -n 1)
check "slurm-topognn installs into /usr/lib/<multiarch>/slurm-wlm" test -n "$pd"
for m in topology_topognn prep_topognn spank_topognn; do
	check "$m.so in Debian's PluginDir" test -f "$pd/$m.so"
	check "$m.so exports plugin_version" \
		eval 'nm -D --defined-only "$pd/$m.so" | grep -q " plugin_version\$"'
	# slurmd loads them too, without slurmctld's symbols: binding must be lazy
	check "$m.so is not linked with -z now" \
		eval '! readelf -d "$pd/$m.so" | grep -Eq "BIND_NOW|Flags:.* NOW"'
done
check "topognn.conf(5)" test -f "$tmp/root/usr/share/man/man5/topognn.conf.5.gz"
dep=$(dpkg-deb -f "$plugin" Depends)
check "slurm-topognn depends on topognn" grep -q 'topognn (= ' <<< "$dep"
check "slurm-topognn needs slurm-wlm-basic-plugins 24.11.5 exactly" \
	grep -q 'slurm-wlm-basic-plugins (>= 24.11.5), slurm-wlm-basic-plugins (<< 24.11.6)' <<< "$dep"

for p in $(sed -n 's/^bin_PROGRAMS += *//p' "$S"/tools/*.am); do
	check "topognn: /usr/bin/$p" test -x "$tmp/root/usr/bin/$p"
	check "topognn: $p(1)" test -f "$tmp/root/usr/share/man/man1/$p.1.gz"
done
model=$(sed -n 's/^TOPOGNN_DEFAULT_MODEL=//p' "$S/configure.ac")
check "topognn: the shipped model /usr/share/topognn/$model" test -s "$tmp/root/usr/share/topognn/$model"
check "topognn: the communication profiles" \
	test -f "$tmp/root/usr/share/topognn/comm/astra-sim_Resnet50_DataParallel.txt"
check "topognn: the alert rules /usr/share/topognn/contrib/prometheus/topognn.rules.yml" \
	test -s "$tmp/root/usr/share/topognn/contrib/prometheus/topognn.rules.yml"
check "topognn: the Grafana dashboard /usr/share/topognn/contrib/grafana/topognn.json" \
	test -s "$tmp/root/usr/share/topognn/contrib/grafana/topognn.json"
check "topognn: libtopo" eval 'ls "$tmp"/root/usr/lib/*/libtopo.so.0 > /dev/null'
check "no libtool archives" eval '[ -z "$(find "$tmp/root" -name "*.la")" ]'
finish
