#!/bin/sh
# test_slurm_replay.sh: bench/slurm_replay, the C half of bench/slurm.sh
# (docs/bench.md, "Users and a predictor's history"), on the KTH log.
#   schedule: one job per line, 7 columns, the last the log's user id;
#   predictor: the saved state of a run-time predictor that learned the
#   --history jobs before the slice, each as the plugin would see it: the
#   Unix user and group --ids gives the log's user (user id modulo the
#   list's length), its limit in whole minutes; the same bytes twice; a
#   history cut short at the log's start says so; malformed --ids, missing
#   options and an unwritable --out are refused. Prints "N passed, N failed".
set -u
B=${BUILD_DIR:-..}
S=$(cd "$(dirname "$0")/.." && pwd)
replay=$B/bench/slurm_replay
kth=$S/examples/traces/KTH-SP2-1996-2.1-cln.swf.gz
tmp=$(mktemp -d "${TMPDIR:-/tmp}/replay.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/check.sh"

slice="--trace $kth --skip 2000 --jobs 400 --nodes 32 --machine-procs 100 --span 60 --factor 1000 --max-runtime 60"
# shellcheck disable=SC2086
"$replay" schedule $slice > "$tmp/schedule" 2> "$tmp/err"
rc=$?
check "schedule runs" sh -c "[ $rc -eq 0 ] && [ -s '$tmp/schedule' ]"
check "schedule: 7 columns, the user an integer" awk '
	/^#/ { next }
	{ n++; if (NF != 7 || $7 !~ /^-?[0-9]+$/ || $5 !~ /^(heavy|none)-[0-9]+$/) exit 1 }
	END { exit n < 20 }' "$tmp/schedule"
check "schedule: several users" sh -c \
	"awk '!/^#/ { print \$7 }' '$tmp/schedule' | sort -u | awk 'END { exit NR < 5 }'"

ids=2001:3001,2002:3002,2003:3003
predict() { # out [extra args]: predictor on the slice with $ids
	out=$1
	shift
	# shellcheck disable=SC2086
	"$replay" predictor $slice --history 500 --ids "$ids" --out "$out" "$@"
}
predict "$tmp/a.state" > "$tmp/a.txt" 2> "$tmp/err"
rc=$?
check "predictor runs" sh -c "[ $rc -eq 0 ] && [ -s '$tmp/a.state' ]"
check "predictor: the state's header" sh -c "head -n 1 '$tmp/a.state' | grep -q '^topognn-runtime '"
check "predictor: learned the 500 jobs before the slice" \
	grep -q '^global 500 ' "$tmp/a.state"
check "predictor: says which jobs it learned" \
	grep -q 'predictor learned jobs 1500\.\.1999 (500) compressed 1000\.0x, 3 users' "$tmp/a.txt"
check "predictor: users and groups are the --ids, no other" sh -c "
	awk '\$1 == \"user\" { print \$2 }' '$tmp/a.state' | sort | tr '\n' ' ' |
		grep -qx '2001 2002 2003 ' &&
	awk '\$1 == \"group\" { print \$2 }' '$tmp/a.state' | sort | tr '\n' ' ' |
		grep -qx '3001 3002 3003 '"
# each KTH user in the history is counted under uid 2001 + user % 3
check "predictor: a log user's jobs go to user id modulo 3" sh -c "
	zcat '$kth' | awk '!/^;/ && NF >= 18 && \$4 > 0' | sed -n '1501,2000p' |
		awk '{ n[\$12 % 3]++ } END { for (k in n) print 2001 + k, n[k] }' | sort > '$tmp/want'
	awk '\$1 == \"user\" { print \$2, \$3 }' '$tmp/a.state' | sort > '$tmp/got'
	cmp -s '$tmp/want' '$tmp/got'"
check "predictor: online errors on the slice printed" \
	grep -Eq '^# slice jobs 2000\.\.[0-9]+ online: median \|error\| predictor [0-9.]+ s, last-two [0-9.]+ s, limit [0-9.]+ s; under-predicted [0-9]+ %$' \
	"$tmp/a.txt"
predict "$tmp/b.state" > /dev/null 2>&1
check "predictor: the same bytes twice" cmp -s "$tmp/a.state" "$tmp/b.state"

"$replay" predictor --trace "$kth" --skip 100 --jobs 400 --span 60 --factor 1000 \
	--history 500 --ids 7:7 --out "$tmp/c.state" > "$tmp/c.txt" 2>&1
rc=$?
check "predictor: history cut at the log's start" sh -c \
	"[ $rc -eq 0 ] && grep -q 'predictor learned jobs 0\.\.99 (100)' '$tmp/c.txt'"
for bad in "" 5 5:x 5:6, -1:2 "5:6;7:8" 5:99999999999; do
	rm -f "$tmp/bad.state"
	predict "$tmp/bad.state" --ids "$bad" > /dev/null 2> "$tmp/err"
	rc=$?
	check "predictor: --ids '$bad' refused" sh -c "[ $rc -eq 2 ] && [ ! -e '$tmp/bad.state' ]"
done
predict "$tmp/no/such/dir.state" > /dev/null 2> "$tmp/err"
rc=$?
check "predictor: an unwritable --out is said, exit 1" sh -c \
	"[ $rc -eq 1 ] && grep -q 'cannot write $tmp/no/such/dir.state: No such file' '$tmp/err'"
"$replay" predictor --trace "$kth" --skip 2000 --history 500 --ids 1:1 --out "$tmp/d.state" \
	> /dev/null 2>&1
check "predictor: refused without --factor" sh -c "[ $? -eq 2 ] && [ ! -e '$tmp/d.state' ]"

# analyze: a job's start to the millisecond from slurmctld.log, for every
# scheduler and release: the main scheduler's "sched: Allocate", backfill's
# "Started" (24.11 and 25.11 log it at info; 26.05 only with
# DebugFlags=HetJob, which bench/slurm.sh sets). A start the log lacks
# falls back to jobcomp's whole seconds, and the count says so.
printf '%s\n' 'SwitchName=leaf1 Nodes=n[001-004]' 'SwitchName=leaf2 Nodes=n[005-008]' \
	'SwitchName=spine Switches=leaf[1-2]' > "$tmp/topology.conf"
"$B/tools/topognn-discover" --topology-conf "$tmp/topology.conf" --json > "$tmp/graph.json" \
	2> "$tmp/err"
t0=1796660940 # 2026-12-07T16:29:00Z
printf '%s\n' '0 2 1 1 heavy-1 1 5' '1 2 1 1 heavy-2 1 5' '2 2 1 1 heavy-3 1 5' \
	'3 2 1 1 heavy-4 1 5' > "$tmp/an.schedule"
i=0
for nodes in 'n[001-002]' 'n[003-004]' 'n[005-006]' 'n[007-008]'; do
	i=$((i + 1))
	printf 'JobId=%d Name=heavy-%d JobState=COMPLETED StartTime=2026-12-07T16:29:0%d EndTime=2026-12-07T16:29:0%d NodeList=%s SubmitTime=2026-12-07T16:28:35\n' \
		"$i" "$i" "$i" "$((i + 2))" "$nodes"
done > "$tmp/jobcomp.txt"
cat > "$tmp/ctld.log" <<'LOG'
[2026-12-07T16:28:35.001] _slurm_rpc_submit_batch_job: JobId=1 InitPrio=1 usec=500
[2026-12-07T16:28:35.002] _slurm_rpc_submit_batch_job: JobId=2 InitPrio=1 usec=500
[2026-12-07T16:28:35.003] _slurm_rpc_submit_batch_job: JobId=3 InitPrio=1 usec=500
[2026-12-07T16:28:35.004] _slurm_rpc_submit_batch_job: JobId=4 InitPrio=1 usec=500
[2026-12-07T16:29:00.250] sched: Allocate JobId=1 NodeList=n[001-002] #CPUs=8 Partition=batch
[2026-12-07T16:29:01.500] sched/backfill: _start_job: Started JobId=2 in batch on n[003-004]
[2026-12-07T16:29:02.750] sched/backfill: _start_job: HETJOB: Started JobId=3 in batch on n[005-006]
[2026-12-07T16:29:04.100] sched/backfill: _start_job: BACKFILL: Jobs backfilled since boot: 3
LOG
TZ=UTC "$replay" analyze --graph "$tmp/graph.json" --schedule "$tmp/an.schedule" \
	--jobcomp "$tmp/jobcomp.txt" --ctld-log "$tmp/ctld.log" --begin-epoch "$t0" \
	--comm "$S/tests/fixtures/comm" > "$tmp/an.txt" 2> "$tmp/err"
rc=$?
check "analyze runs on both releases' start lines" sh -c "[ $rc -eq 0 ] && grep -qx 'jobs 4' '$tmp/an.txt'"
# waits 0.25, 0.5, 0.75 from the log; job 4: jobcomp's 16:29:04 - its begin 16:29:03
check "analyze: 3 of 4 starts from the log (24.11's and 26.05's backfill lines)" \
	grep -qx 'waits_from_log 3' "$tmp/an.txt"
check "analyze: mean wait 0.625 s (the log's milliseconds, jobcomp's seconds for job 4)" \
	grep -qx 'mean_wait_s 0.625' "$tmp/an.txt"
finish
