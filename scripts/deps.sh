#!/usr/bin/env bash
# Install the Debian 12 packages topognn needs to build, test and run.
# Idempotent and fast when everything is already there (one dpkg query).
# (Slurm's own build dependencies are installed by scripts/build-slurm.sh.)
set -euo pipefail

packages=(
	build-essential autoconf automake libtool pkg-config
	libhwloc-dev hwloc-nox libigraph-dev libjansson-dev libcurl4-openssl-dev libcmocka-dev
	libibnetdisc-dev libibmad-dev libibumad-dev ibsim-utils infiniband-diags
	clang libclang-rt-14-dev
	python3 ca-certificates
	prometheus prometheus-node-exporter # the telemetry test's real servers
	chromium                            # placement-report's picture test (headless)
	lldpd                               # the LLDP discovery test (network namespaces)
)

missing=()
for p in "${packages[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
	echo "deps: all ${#packages[@]} packages present"
	exit 0
fi

echo "deps: installing ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
	echo "deps: need root to install packages (run as root or with sudo)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
