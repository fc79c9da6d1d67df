#!/usr/bin/env bash
# package.sh: build topognn's Debian packages for Debian 13 (trixie) and
# prove them on trixie's own Slurm.
#
#   scripts/package.sh [build] [test]     (default: both)
#
# build: in a trixie root (debootstrap from the Debian archive; kept and
#   reused), install the build dependencies, fetch trixie's slurm-wlm source
#   (apt-get source; the orig tarball, sha256 checked), configure it with
#   Debian's flags (no build: the plugins need its headers and config.h),
#   and run dpkg-buildpackage on a copy of this checkout. Writes topognn_*.deb
#   and slurm-topognn_*.deb to $TOPOGNN_DEB_OUT. Building inside trixie
#   means trixie's compiler and headers, the ones slurmctld was built with.
# test: in the same root, install Debian's slurmctld and slurmd packages and
#   the built packages, write slurm.conf with TopologyPlugin=topology/topognn
#   and PrEpPlugins=prep/script,prep/topognn and a topognn.conf with
#   Policy=gnn and no ModelFile= (the shipped model), start the
#   distribution's slurmctld and slurmd (on TOPOGNN_CLUSTER_PORT and the port
#   after it), submit jobs with plain sbatch, and check that they ran, that
#   the plugin loaded and logged a decision per job naming the model, and
#   that the three modules sit in Debian's PluginDir. Run it under
#   `flock /tmp/topognn-cluster.lock` (scripts/test.sh's lock) when other clusters may run.
#
# Environment:
#   TOPOGNN_DEB_ROOT        the trixie root (default /var/tmp/topognn-trixie)
#   TOPOGNN_DEB_OUT         where the .deb files go (default <repo>/_build/deb)
#   TOPOGNN_DEBIAN_MIRROR   Debian mirror (default http://deb.debian.org/debian)
#   TOPOGNN_CLUSTER_PORT    slurmctld's port for the test (default 29000)
# Needs root and chroot; installs debootstrap when it is missing. Prints "package: ... passed" at the end.
set -euo pipefail

readonly SLURM_VERSION=24.11.5
readonly SLURM_SHA256=e1a5547edd212c38b5e3230a284133f777b32746551f094aaa81cc4af375e332
repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
root=${TOPOGNN_DEB_ROOT:-/var/tmp/topognn-trixie}
out=${TOPOGNN_DEB_OUT:-$repo/_build/deb}
mirror=${TOPOGNN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
port=${TOPOGNN_CLUSTER_PORT:-29000}

log() { printf '[package] %s\n' "$*"; }
die() { printf '[package] ERROR: %s\n' "$*" >&2; exit 1; }

[[ $mirror =~ ^https?://[A-Za-z0-9.-]+(:[0-9]+)?(/[A-Za-z0-9._~/-]*)?$ ]] ||
	die "TOPOGNN_DEBIAN_MIRROR is not a plain http(s) URL: $mirror"
[[ $port =~ ^[0-9]+$ ]] && ((port > 1024 && port < 65000)) ||
	die "TOPOGNN_CLUSTER_PORT must be a port number: $port"
case $root in /*) ;; *) die "TOPOGNN_DEB_ROOT must be absolute: $root" ;; esac
[[ $(id -u) -eq 0 ]] || die "must run as root (debootstrap, chroot)"

steps=("$@")
((${#steps[@]})) || steps=(build test)
for s in "${steps[@]}"; do
	[[ $s == build || $s == test ]] || die "unknown step \"$s\" (build, test)"
done

# ---- the root ------------------------------------------------------------

mounted=()
cleanup() {
	local i
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount -l -- "${mounted[i]}" 2>/dev/null || true
	done
}
trap 'stop_daemons; cleanup' EXIT

mount_root() {
	local d
	for d in proc sys dev dev/pts; do
		mountpoint -q -- "$root/$d" && continue
		case $d in
		proc) mount -t proc proc "$root/proc" ;;
		*) mount --bind "/$d" "$root/$d" ;;
		esac
		mounted+=("$root/$d")
	done
}

# in_root SCRIPT ARGS...: run a bash script (from stdin) in the root, with
# ARGS as its positional parameters; nothing from outside is spliced in.
in_root() {
	chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive bash -s -- "$@"
}

make_root() {
	if [[ -x $root/usr/bin/apt-get ]]; then
		log "reusing the trixie root $root"
	else
		if ! command -v debootstrap >/dev/null; then
			log "installing debootstrap (apt-get)"
			{ apt-get update -qq && apt-get install -y -qq --no-install-recommends debootstrap; } \
				> /dev/null || die "cannot install debootstrap with apt-get"
		fi
		log "debootstrap trixie into $root (a few minutes)"
		debootstrap --variant=minbase --include=ca-certificates trixie "$root" "$mirror" \
			> "$root.debootstrap.log" 2>&1 || die "debootstrap failed: $root.debootstrap.log"
	fi
	printf 'deb %s trixie main\ndeb-src %s trixie main\n' "$mirror" "$mirror" \
		> "$root/etc/apt/sources.list"
	# daemons are started by hand, never by package scripts
	printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
	chmod 755 "$root/usr/sbin/policy-rc.d"
	cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
	mount_root
}

# ---- build ---------------------------------------------------------------

build() {
	log "build dependencies (apt-get in the root)"
	in_root <<'EOF'
set -e
apt-get -o APT::Sandbox::User=root update -qq
apt-get -o APT::Sandbox::User=root install -y -qq --no-install-recommends \
	build-essential debhelper dpkg-dev autoconf automake libtool pkgconf \
	libhwloc-dev libjansson-dev libigraph-dev libcurl4-openssl-dev libcmocka-dev \
	libibnetdisc-dev libibmad-dev libibumad-dev python3 \
	libmunge-dev libpam0g-dev > /dev/null
EOF
	log "trixie's slurm-wlm $SLURM_VERSION source, configured as Debian does"
	in_root "$SLURM_VERSION" "$SLURM_SHA256" <<'EOF'
set -e
version=$1 sha=$2
mkdir -p /build/slurm && cd /build/slurm
orig=slurm-wlm_$version.orig.tar.gz
if [ ! -f "$orig" ]; then
	# the .dsc and Debian's patch tarball may be missing from the mirror;
	# the orig tarball is what the headers come from
	apt-get -o APT::Sandbox::User=root source --download-only -qq "slurm-wlm/trixie" || true
fi
[ -f "$orig" ] || { echo "no $orig from apt-get source" >&2; exit 1; }
echo "$sha  $orig" | sha256sum -c --quiet
if [ ! -f "slurm-$version/config.h" ] || [ ! -f "slurm-$version/slurm/slurm_version.h" ]; then
	rm -rf "slurm-$version" unpack && mkdir unpack
	tar xzf "$orig" -C unpack	# the top folder is slurm-slurm-24-11-5-1 (GitHub's name)
	mv unpack/* "slurm-$version" && rmdir unpack
	cd "slurm-$version"
	# slurm-wlm's debian/rules: dh_auto_configure with these flags; dh adds
	# --prefix=/usr --libdir=/usr/lib/<multiarch> and the like
	ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
	./configure -q --prefix=/usr --sysconfdir=/etc/slurm --localstatedir=/var \
		--libdir="/usr/lib/$ma" --runstatedir=/run \
		--with-munge --enable-pam --without-rpath --disable-debug > ../configure.log 2>&1
	cd ..
fi
# configure generates what the plugins include beyond the sources
# (config.h, slurm/slurm_version.h); slurm/ has no Makefile of its own
[ -f "slurm-$version/config.h" ] && [ -f "slurm-$version/slurm/slurm_version.h" ]
EOF
	log "dpkg-buildpackage (in the root, on a copy of this checkout)"
	rm -rf "$root/build/topognn"
	mkdir -p "$root/build/topognn"
	# one tar reads the whole list (xargs would split it into several
	# archives, and the reader stops at the first one's end)
	(cd "$repo" && git ls-files -z --cached --others --exclude-standard |
		tar cf - --no-recursion --null -T -) | tar xf - -C "$root/build/topognn"
	rm -f "$root"/build/*.deb "$root"/build/*.buildinfo "$root"/build/*.changes
	in_root "$SLURM_VERSION" <<'EOF' > "$root/build/dpkg-buildpackage.log" 2>&1 ||
set -e
src=/build/slurm/slurm-$1
cd /build/topognn
export TOPOGNN_SLURM_SRC=$src TOPOGNN_SLURM_BUILD=$src
DEB_BUILD_OPTIONS="nocheck parallel=2" dpkg-buildpackage -us -uc -b
EOF
		{ tail -n 40 "$root/build/dpkg-buildpackage.log" >&2; die "dpkg-buildpackage failed"; }
	mkdir -p "$out"
	cp "$root"/build/*.deb "$out/"
	log "packages in $out:"
	ls -1 "$out"/*.deb
}

# ---- test ----------------------------------------------------------------

# The daemons fork into the background and write their pid files when
# ready: read them when stopping, not when starting. Also run at exit and
# before a start, so that no daemon of an earlier run keeps the ports.
stop_daemons() {
	local f p
	for f in "$root"/var/tmp/topognn-test/slurmctld.pid "$root"/var/tmp/topognn-test/slurmd.pid; do
		p=$(head -n 1 -- "$f" 2>/dev/null) || continue
		[[ $p =~ ^[0-9]+$ ]] && kill "$p" 2>/dev/null || true
		rm -f -- "$f"
	done
	sleep 1
}

test_cluster() {
	[[ -n $(ls "$out"/slurm-topognn_*.deb 2>/dev/null) ]] || die "no packages in $out: run build first"
	log "package contents (tests/test_package.sh)"
	bash "$repo/tests/test_package.sh" "$out" || die "tests/test_package.sh failed"
	rm -rf "$root/debs" && mkdir -p "$root/debs" && cp "$out"/*.deb "$root/debs/"
	log "Debian's slurmctld and slurmd, then the built packages (apt-get in the root)"
	in_root <<'EOF'
set -e
apt-get -o APT::Sandbox::User=root install -y -qq --no-install-recommends slurmctld slurmd slurm-client > /dev/null
# --reinstall: a rebuild keeps the version number
apt-get -o APT::Sandbox::User=root install -y -qq --reinstall --no-install-recommends /debs/*.deb > /dev/null
dpkg-query -W -f='${Package} ${Version}\n' slurmctld slurmd slurm-wlm-basic-plugins topognn slurm-topognn
EOF
	stop_daemons
	log "slurm.conf, topognn.conf, the graph; start slurmctld and slurmd on $port-$((port + 1))"
	in_root "$port" <<'EOF'
set -e
port=$1 etc=/etc/slurm run=/var/tmp/topognn-test
rm -rf "$run" && mkdir -p "$run/state" "$run/spool" "$etc"
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
dd if=/dev/urandom of="$etc/slurm.key" bs=64 count=1 status=none
chmod 600 "$etc/slurm.key"
cat > "$etc/slurm.conf" <<CONF
ClusterName=trixie
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/slurm
CredType=cred/slurm
StateSaveLocation=$run/state
SlurmdSpoolDir=$run/spool
SlurmctldPidFile=$run/slurmctld.pid
SlurmdPidFile=$run/slurmd.pid
SlurmctldLogFile=$run/slurmctld.log
SlurmdLogFile=$run/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
TopologyPlugin=topology/topognn
PrEpPlugins=prep/script,prep/topognn
SchedulerType=sched/backfill
ReturnToService=2
SlurmdParameters=config_overrides
NodeName=n001 NodeHostname=localhost CPUs=2 RealMemory=500 State=UNKNOWN
PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
# no cgroup: the root sees /sys but not the cgroup mounts under it
# (proctrack/linuxproc and task/none need none)
printf 'CgroupPlugin=disabled\n' > "$etc/cgroup.conf"
printf 'SwitchName=leaf1 Nodes=n001\n' > "$run/topology.conf"
topognn-discover --topology-conf "$run/topology.conf" --json > "$etc/topognn-graph.json"
cat > "$etc/topognn.conf" <<CONF
GraphFile=topognn-graph.json
Mode=enforce
Policy=gnn
DecisionLog=$run/decisions.jsonl
CONF
slurmctld -f "$etc/slurm.conf"
slurmd -f "$etc/slurm.conf" -N n001
EOF
	sleep 3
	log "three jobs with plain sbatch"
	if ! in_root <<'EOF'; then
set -e
run=/var/tmp/topognn-test
for i in $(seq 30); do
	sinfo -h -o %T 2>/dev/null | grep -qx idle && break
	sleep 2
done
sinfo
for i in 1 2 3; do sbatch -N1 -o "$run/job-%j.out" --wrap 'hostname; echo ok'; done
for i in $(seq 60); do
	[ "$(ls "$run"/job-*.out 2>/dev/null | wc -l)" -eq 3 ] && [ -z "$(squeue -h)" ] && break
	sleep 2
done
squeue
EOF
		tail -n 30 "$root/var/tmp/topognn-test/slurmctld.log" >&2
		stop_daemons
		die "the cluster did not run the jobs"
	fi
	local r=$root/var/tmp/topognn-test fail=0
	verify() { if "${@:2}"; then log "ok   - $1"; else log "FAIL - $1"; fail=1; fi; }
	verify "slurmctld loaded topology/topognn with the shipped model" \
		grep -q 'policy gnn, model /usr/share/topognn/default.json (shipped default)' "$r/slurmctld.log"
	count() { cat -- "${@:2}" 2>/dev/null | grep -c -- "$1" || true; }
	verify "three jobs ran and wrote ok" test "$(count '^ok$' "$r"/job-*.out)" -eq 3
	verify "three decision log lines" test "$(count '"job_id"' "$r/decisions.jsonl")" -eq 3
	verify "every line names the model" \
		test "$(count '"model":"/usr/share/topognn/default.json"' "$r/decisions.jsonl")" -eq 3
	stop_daemons
	((fail == 0)) || die "the trixie cluster test failed (logs in $r)"
	log "trixie test passed: Debian's slurmctld/slurmd $SLURM_VERSION ran 3 sbatch jobs with topology/topognn"
}

make_root
for s in "${steps[@]}"; do
	case $s in
	build) build ;;
	test) test_cluster ;;
	esac
done
log "package: ${steps[*]} passed"
