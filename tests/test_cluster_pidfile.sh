#!/usr/bin/env bash
# test_cluster_pidfile.sh: tests/slurm/cluster.sh reads its daemons' pid
# files the way slurmctld leaves them, and stops its daemons even when a pid
# file is wrong. After `scontrol reconfigure` the new slurmctld rewrites its
# pid file in place without truncating it, so once pids have wrapped a
# shorter pid leaves the old one's last digits on a second line ("463\n3\n"
# over "31463\n"). cluster.sh used to join every digit of the file into a pid
# that did not exist, call slurmctld "not running" and leave it running.
#
# No Slurm needed: the daemons are stand-ins whose process name is slurmctld
# or slurmd (a copy of bash, so /proc/PID/comm says so) and whose command
# line names this run's slurm.conf, as the real ones' does (-f CONF).
# Prints "N passed, N failed". Takes about 15 s (stop waits for
# `scontrol shutdown` before it signals).
set -u
S=$(cd "$(dirname "$0")/.." && pwd)
. "$(dirname "$0")/check.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pidfile.XXXXXX")
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT

run="$tmp/cluster"
mkdir -p "$tmp/bin" "$run/run" "$run/etc"
conf="$run/etc/slurm.conf"
: > "$conf"
cp "$(command -v bash)" "$tmp/bin/slurmctld"
cp "$(command -v bash)" "$tmp/bin/slurmd"

# a stand-in daemon: NAME runs until killed, its command line naming $conf.
# Started from a command substitution, so not this shell's child: once
# killed it is reaped, not left a zombie that `kill -0` still finds.
daemon() {
	"$tmp/bin/$1" -c 'while :; do sleep 1; done' "$1" -f "$conf" </dev/null >/dev/null 2>&1 &
	echo "$!"
}

cluster() {
	TOPOGNN_CLUSTER_DIR="$run" TOPOGNN_CLUSTER_NODES=1 TOPOGNN_SLURM_PREFIX="$tmp/noslurm" \
		PATH="/usr/bin:/bin" "$S/tests/slurm/cluster.sh" "$@" 2>&1
}

ctld=$(daemon slurmctld)
slurmd=$(daemon slurmd)
pids=("$ctld" "$slurmd")
for _ in 1 2 3 4 5 6 7 8 9 10; do # until /proc shows the copies' names
	[[ "$(cat "/proc/$ctld/comm" 2>/dev/null)" == slurmctld &&
		"$(cat "/proc/$slurmd/comm" 2>/dev/null)" == slurmd ]] && break
	sleep 0.1
done
printf '%s\n' "$slurmd" > "$run/run/slurmd-n001.pid"

printf '%s\n' "$ctld" > "$run/run/slurmctld.pid"
check "a plain pid file: slurmctld running (pid $ctld)" \
	grep -qxF "[cluster] slurmctld running (pid $ctld)" <(cluster status)

printf '%s\n9\n' "$ctld" > "$run/run/slurmctld.pid"
out=$(cluster status)
check "a pid file rewritten without truncation (\"$ctld\\n9\"): the first line counts" \
	grep -qxF "[cluster] slurmctld running (pid $ctld)" <<< "$out"
check "... and status succeeds with the slurmd up" \
	grep -qxF "[cluster] slurmd running: 1 of 1" <<< "$out"

printf '%s' "$ctld" > "$run/run/slurmctld.pid"
check "a pid file without a newline" \
	grep -qxF "[cluster] slurmctld running (pid $ctld)" <(cluster status)

printf '1\n' > "$run/run/slurmctld.pid"
check "a pid file naming another process (pid 1): not running" \
	grep -qxF "[cluster] slurmctld not running" <(cluster status)

printf 'x1\n' > "$run/run/slurmctld.pid"
check "a pid file that is not a number: not running" \
	grep -qxF "[cluster] slurmctld not running" <(cluster status)

# stop with a wrong pid file: the daemons are found by their command line
printf '1\n' > "$run/run/slurmctld.pid"
out=$(cluster stop)
check "stop with a wrong pid file stops both daemons" \
	grep -qxF "[cluster] stopped (2 daemons)" <<< "$out"
gone() { ! kill -0 "$1" 2>/dev/null; }
for _ in 1 2 3 4 5 6 7 8 9 10; do gone "$ctld" && gone "$slurmd" && break; sleep 0.2; done
check "... and neither is left" eval 'gone "$ctld" && gone "$slurmd"'
[[ "$out" == *"stopped (2 daemons)"* ]] || printf '%s\n' "$out" | sed 's/^/  /'
finish
