#!/usr/bin/env bash
# Build every libFuzzer target in fuzz/ with clang (ASan + UBSan) and run it
# from its checked-in corpus fuzz/corpus/NAME/ (fuzz/fuzz_NAME.c).
#
# Usage:
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#       short mode (CI): each target runs TOPOGNN_FUZZ_RUNS inputs (default
#       200000; 120000 for hwloc_xml, see short_runs) from seed
#       TOPOGNN_FUZZ_SEED (default 1; 0 = libFuzzer's
#       random seed), on a scratch copy of the corpus, so that a failure can
#       be replayed and the repository is untouched. A fixed seed and a fixed
#       number of inputs make the run the same on every machine: a pass here
#       is a pass in CI, whatever its speed. SECONDS (default 600) only stops
#       a target that is far slower than expected.
#       TOPOGNN_FUZZ_JOBS targets run at a time (default: 2, or 1 on a
#       one-CPU machine); each target's output is shown when it ends.
#   scripts/fuzz.sh --long [--update-corpus] [TARGET...]
#       long mode, cumulative over runs and sessions: fuzz/counts.tsv keeps
#       each target's total executions; a run adds its executions there only
#       when it ended without a crash, leak or timeout (an interrupted run,
#       SIGINT/SIGTERM, counts too: it found nothing). Each target runs until
#       its total reaches TOPOGNN_FUZZ_LONG_RUNS (default 10 million; a target
#       already there is skipped), for at most TOPOGNN_FUZZ_LONG_SECONDS
#       (default 3600) and not past TOPOGNN_FUZZ_UNTIL (a `date -d` time,
#       e.g. 10:45), whichever comes first. The grown corpus stays in
#       _build/fuzz/NAME.corpus (the next run starts from it); with
#       --update-corpus it is minimised (-merge=1) back into fuzz/corpus/NAME/,
#       keeping every regression input (names starting with regress- or
#       fuzz_) whatever coverage it adds; a target at its goal or past
#       TOPOGNN_FUZZ_UNTIL is then only minimised. Commit fuzz/counts.tsv with the
#       corpus. The seed is random unless TOPOGNN_FUZZ_SEED is set, so that
#       runs which add up do not repeat each other.
# TARGET is a name such as topognn_conf (default: every fuzz/fuzz_*.c).
# An input that runs longer than TOPOGNN_FUZZ_TIMEOUT seconds (default 30,
# wall clock: on a loaded shared machine one second of CPU can take ten)
# fails the run as a timeout.
# Each run ends with a line "fuzz: NAME runs=N exec/s=N corpus=N files, N
# bytes" (docs/fuzzing.md records these); a crash, leak or timeout fails the
# script and leaves its input as _build/fuzz/fuzz_NAME-crash-... .
set -euo pipefail
cd "$(dirname "$0")/.."

long=0 update=0 seconds=600
while [[ $# -gt 0 ]]; do
	case $1 in
	--long) long=1 ;;
	--update-corpus) update=1 ;;
	[0-9]*) seconds=$1 ;;
	-*) echo "usage: scripts/fuzz.sh [SECONDS | --long [--update-corpus]] [TARGET...]" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
if [[ $# -gt 0 ]]; then
	targets=()
	for t in "$@"; do
		[[ -f fuzz/fuzz_$t.c ]] || { echo "fuzz: no target fuzz/fuzz_$t.c" >&2; exit 2; }
		targets+=("fuzz/fuzz_$t.c")
	done
else
	targets=(fuzz/fuzz_*.c)
fi
if [[ $long == 1 ]]; then
	goal=${TOPOGNN_FUZZ_LONG_RUNS:-10000000}
	seed=0 # random: runs that add up must not repeat each other's inputs
	seconds=${TOPOGNN_FUZZ_LONG_SECONDS:-3600}
	if [[ -n ${TOPOGNN_FUZZ_UNTIL:-} ]]; then
		until_epoch=$(date -d "$TOPOGNN_FUZZ_UNTIL" +%s)
	fi
else
	seed=1 # inputs per target: short_runs
	jobs=${TOPOGNN_FUZZ_JOBS:-$(($(nproc) > 1 ? 2 : 1))}
fi

out=_build/fuzz
mkdir -p "$out"
# FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION (the name OSS-Fuzz uses) lowers
# limits whose legal maximum only slows fuzzing (topo_hostlist.h)
cflags=(-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
	-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	-Ignn-infer -I_build/default -DHAVE_IBNETDISC=1
	# where place_model_file.c looks for the shipped model (as configure sets them)
	-DTOPOGNN_DEFAULT_MODEL='"default.json"' -DTOPOGNN_PKGDATADIR='"/usr/share/topognn"'
	-DTOPOGNN_ABS_SRCDIR="\"$PWD\"" -DTOPOGNN_ABS_BUILDDIR="\"$PWD/_build/default\"")
for area in topo/*/; do cflags+=(-I"${area%/}"); done
# shellcheck disable=SC2207
libs=($(pkg-config --cflags --libs hwloc jansson igraph libcurl libibnetdisc libibmad libibumad) -lm)
sources=(topo/*/*.c gnn-infer/*.c)

# the library sources once, instrumented (again only when newer than the
# object); each target then only links
mkdir -p "$out/obj"
objs=()
for src in "${sources[@]}"; do
	obj=$out/obj/$(echo "$src" | tr / _).o
	if [[ ! $obj -nt $src ]] || find topo gnn-infer -name '*.h' -newer "$obj" | grep -q .; then
		clang "${cflags[@]/-fsanitize=fuzzer,/-fsanitize=fuzzer-no-link,}" -c "$src" -o "$obj" \
			$(pkg-config --cflags hwloc jansson igraph libcurl libibnetdisc)
	fi
	objs+=("$obj")
done

# "N files, N bytes" of a directory
corpus_size() {
	echo "$(find "$1" -type f | wc -l) files, $(find "$1" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}') bytes"
}

# Minimise work dir $2 (with the checked-in corpus) into fuzz/corpus/$1,
# under the target's LeakSanitizer suppressions ($lsan).
update_corpus() {
	local name=$1 work=$2 bin=$3 merged
	merged=$(mktemp -d)
	LSAN_OPTIONS="$lsan" "$bin" -merge=1 -rss_limit_mb=2048 \
		-timeout="${TOPOGNN_FUZZ_TIMEOUT:-30}" -artifact_prefix="$out/fuzz_$name-merge-" \
		"$merged" "fuzz/corpus/$name" "$work" >"$out/fuzz_$name.merge.log" 2>&1
	mkdir -p "fuzz/corpus/$name"
	find "fuzz/corpus/$name" -maxdepth 1 -type f \( -name 'regress-*' -o -name 'fuzz_*' \) \
		-exec cp {} "$merged/" \;
	rm -rf "fuzz/corpus/$name"
	mv "$merged" "fuzz/corpus/$name"
	chmod 755 "fuzz/corpus/$name"
	echo "fuzz: fuzz/corpus/$name minimised: $(corpus_size "fuzz/corpus/$name")"
}

# libFuzzer's -max_len for target $1 (empty: libFuzzer's own, the larger of
# 4096 and the largest corpus input). A larger input than the target reads
# only wastes executions: hostlist skips inputs over 512 bytes (an
# expression is a few terms).
max_len() {
	case $1 in
	hostlist) echo 512 ;;
	esac
}

# Short-mode inputs of target $1 when TOPOGNN_FUZZ_RUNS is not set: fewer
# for hwloc_xml, the slowest (hwloc's import; 227 to 6,000 executions/s),
# so that it ends within the guard on a loaded machine and CI runs a prefix of what passed here (137,375 inputs from seed 1 on
# 3 December 2026).
short_runs() {
	case $1 in
	hwloc_xml) echo "${TOPOGNN_FUZZ_RUNS:-120000}" ;;
	*) echo "${TOPOGNN_FUZZ_RUNS:-200000}" ;;
	esac
}

# fuzz/counts.tsv: TARGET, total executions, clean runs, last run (UTC).
counts=fuzz/counts.tsv
count_of() {
	awk -v t="$1" '$1 == t { print $2; f = 1 } END { if (!f) print 0 }' "$counts" 2>/dev/null ||
		echo 0
}
# Add $2 executions to target $1 (under a lock: two runs may share the file).
count_add() {
	(
		flock 9
		[[ -f $counts ]] || printf '# target\texecutions\tclean runs\tlast run (UTC)\n' >"$counts"
		awk -v t="$1" -v n="$2" -v d="$(date -u +%Y-%m-%dT%H:%MZ)" 'BEGIN { OFS = "\t" }
			/^#/ { print; next }
			$1 == t { $2 += n; $3 += 1; $4 = d; f = 1 }
			{ print }
			END { if (!f) print t, n, 1, d }' "$counts" >"$counts.tmp"
		mv "$counts.tmp" "$counts"
	) 9>"$out/counts.lock"
}

interrupted=0
trap 'interrupted=1' INT TERM

# Run target $name on work corpus $work for $runs executions and $seconds
# seconds; in long mode add its executions to $counts when it found nothing.
run_target() {
	local dict=() maxlen=() reload=() rc=0 execs rate
	[[ -f fuzz/${corpus_name}.dict ]] && dict=(-dict="fuzz/${corpus_name}.dict")
	[[ -n $(max_len "$corpus_name") ]] && maxlen=(-max_len="$(max_len "$corpus_name")")
	# short mode: nothing but this run writes the scratch corpus; not
	# re-reading it keeps the run the same everywhere
	[[ $long == 0 ]] && reload=(-reload=0)
	echo "fuzz: running $name for at most ${seconds}s and $runs executions"
	LSAN_OPTIONS="$lsan" "$out/$name" "${dict[@]}" \
		"${maxlen[@]}" "${reload[@]}" -seed="${TOPOGNN_FUZZ_SEED:-$seed}" -runs="$runs" -max_total_time="$seconds" \
		-timeout="${TOPOGNN_FUZZ_TIMEOUT:-30}" -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$out/$name-" "$work" >"$out/$name.log" 2>&1 || rc=$?
	# 72: libFuzzer's exit on SIGINT/SIGTERM, after its final statistics
	if [[ $rc == 72 ]] && grep -q 'run interrupted' "$out/$name.log"; then
		echo "fuzz: $name interrupted"
		interrupted=1
		rc=0
	fi
	if [[ $rc != 0 ]]; then
		echo "fuzz: $name FAILED; tail of $out/$name.log:"
		tail -n 40 "$out/$name.log"
		status=1
	fi
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$name.log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$out/$name.log" | tail -n 1)
	echo "fuzz: $name runs=${execs:-?} exec/s=${rate:-?} corpus=$(corpus_size "$work")"
	if [[ $long == 1 && $rc == 0 && -n $execs ]]; then
		count_add "$corpus_name" "$execs"
		echo "fuzz: $name total $(count_of "$corpus_name") executions of $goal ($counts)"
	elif [[ $long == 1 ]]; then
		echo "fuzz: $name: the run failed, its executions are not counted"
	fi
}

# One target: build, run (or skip), minimise or clean up. Sets status=1 on
# a failure and returns it.
fuzz_target() {
	local target=$1 name corpus_name skip="" done_runs left runs=${runs:-0}
	name=$(basename "$target" .c)
	corpus_name=${name#fuzz_}
	[[ $long == 1 ]] || runs=$(short_runs "$corpus_name")
	if [[ $long == 1 ]]; then
		done_runs=$(count_of "$corpus_name")
		runs=$((goal - done_runs))
		[[ $runs -le 0 ]] && skip="has $done_runs executions in $counts, at the goal of $goal"
		if [[ -n ${until_epoch:-} ]]; then
			left=$((until_epoch - $(date +%s)))
			[[ $left -lt $seconds ]] && seconds=$left
			[[ $seconds -le 0 ]] && skip="not run: past TOPOGNN_FUZZ_UNTIL"
		fi
		# nothing to run and nothing to minimise
		if [[ -n $skip && $update == 0 ]]; then
			echo "fuzz: $name $skip"
			return 0
		fi
	fi
	echo "fuzz: building $name"
	clang "${cflags[@]}" "$target" "${objs[@]}" "${libs[@]}" -o "$out/$name"
	if [[ $long == 1 ]]; then
		work=$out/$corpus_name.corpus
		mkdir -p "$work"
	else
		work=$(mktemp -d)
	fi
	[[ -d fuzz/corpus/$corpus_name ]] && cp -r "fuzz/corpus/$corpus_name/." "$work/"
	# a target may ship LeakSanitizer suppressions for leaks inside a library
	lsan=""
	[[ -f fuzz/${corpus_name}.supp ]] && lsan="suppressions=$PWD/fuzz/${corpus_name}.supp"
	if [[ -z $skip ]]; then
		run_target
	else
		echo "fuzz: $name $skip; minimising its corpus only"
	fi
	if [[ $long == 1 && $update == 1 ]]; then
		update_corpus "$corpus_name" "$work" "$out/$name"
	elif [[ $long == 0 ]]; then
		rm -rf "$work"
	fi
	return $status
}

status=0
if [[ $long == 1 || $jobs -le 1 ]]; then
	for target in "${targets[@]}"; do
		[[ $interrupted == 1 ]] && break
		fuzz_target "$target" || true
	done
	exit $status
fi
# short mode, $jobs targets at a time: each prints into its own file, shown
# when it ends; the next target starts as soon as one ends
declare -A running=()
finish_one() {
	local pid rc=0
	wait -n -p pid "${!running[@]}" || rc=1
	cat "$out/$(basename "${running[$pid]}" .c).out"
	unset "running[$pid]"
	return $rc
}
for target in "${targets[@]}"; do
	while [[ ${#running[@]} -ge $jobs ]]; do finish_one || status=1; done
	fuzz_target "$target" >"$out/$(basename "$target" .c).out" 2>&1 &
	running[$!]=$target
done
while [[ ${#running[@]} -gt 0 ]]; do finish_one || status=1; done
exit $status
