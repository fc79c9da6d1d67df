#!/usr/bin/env bash
# The main job on the bundled example cluster, from a fresh Debian 12 machine:
# install dependencies, build, discover the real DGX H100 SuperPOD fabric in
# examples/, print its summary and the topology.conf it implies, then place
# 1,000 jobs of the KTH SP2 log on it under Slurm's policies (linear, tree)
# and topognn's (model, gnn with the shipped model) and compare them.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
scripts/deps.sh
if [[ ! -x _build/default/bench/placement || configure.ac -nt _build/default/config.status ]]; then
	./autogen.sh >/dev/null 2>&1
	mkdir -p _build/default
	(cd _build/default && "$top/configure" -q && make -j2 >/dev/null)
else
	make -C _build/default -j2 >/dev/null
fi
bin=_build/default/tools
fabric=examples/superpod/dgx-h100-superpod.ibnetdiscover

echo "== topognn-discover --ibnetdiscover $fabric --summary"
"$bin/topognn-discover" --ibnetdiscover "$fabric" --summary
echo
echo "== the topology.conf an admin would otherwise write by hand (first lines)"
"$bin/topognn-discover" --ibnetdiscover "$fabric" --topology-conf tree | head -n 15
echo
echo "== placement on the same fabric: 1,000 KTH SP2 jobs, each policy (bench/placement --quick)"
_build/default/bench/placement --quick
