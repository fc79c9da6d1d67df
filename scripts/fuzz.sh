#!/usr/bin/env bash
# Build every libFuzzer target in fuzz/ with clang (ASan + UBSan) and run it
# from its checked-in corpus fuzz/corpus/NAME/ (fuzz/fuzz_NAME.c).
#
# Usage:
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#       short mode (CI): each target for at most SECONDS (default 20) and
#       TOPOGNN_FUZZ_RUNS inputs (default 300000), seed TOPOGNN_FUZZ_SEED
#       (default 1; 0 = libFuzzer's random seed), on a scratch copy of the
#       corpus, so a failure can be replayed and the repository is untouched.
#   scripts/fuzz.sh --long [--update-corpus] [TARGET...]
#       long mode: each target until TOPOGNN_FUZZ_LONG_RUNS executions
#       (default 10 million) or TOPOGNN_FUZZ_LONG_SECONDS (default 3600),
#       whichever comes first. The grown corpus stays in _build/fuzz/NAME.corpus;
#       with --update-corpus it is minimised (-merge=1) back into
#       fuzz/corpus/NAME/, keeping every regression input (names starting
#       with regress- or fuzz_) whatever coverage it adds.
# TARGET is a name such as topognn_conf (default: every fuzz/fuzz_*.c).
# An input that runs longer than TOPOGNN_FUZZ_TIMEOUT seconds (default 30,
# wall clock: on a loaded shared machine one second of CPU can take ten)
# fails the run as a timeout.
# Each run ends with a line "fuzz: NAME runs=N exec/s=N corpus=N files, N
# bytes" (docs/fuzzing.md records these); a crash, leak or timeout fails the
# script and leaves its input as _build/fuzz/fuzz_NAME-crash-... .
set -euo pipefail
cd "$(dirname "$0")/.."

long=0 update=0 seconds=20
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
	runs=${TOPOGNN_FUZZ_LONG_RUNS:-10000000}
	seconds=${TOPOGNN_FUZZ_LONG_SECONDS:-3600}
else
	runs=${TOPOGNN_FUZZ_RUNS:-300000}
fi

out=_build/fuzz
mkdir -p "$out"
cflags=(-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
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
	ASAN_OPTIONS=fast_unwind_on_malloc=0 LSAN_OPTIONS="$lsan" "$bin" -merge=1 -rss_limit_mb=2048 \
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

status=0
for target in "${targets[@]}"; do
	name=$(basename "$target" .c)
	corpus_name=${name#fuzz_}
	echo "fuzz: building $name"
	clang "${cflags[@]}" "$target" "${objs[@]}" "${libs[@]}" -o "$out/$name"
	if [[ $long == 1 ]]; then
		work=$out/$corpus_name.corpus
		mkdir -p "$work"
	else
		work=$(mktemp -d)
	fi
	[[ -d fuzz/corpus/$corpus_name ]] && cp -r "fuzz/corpus/$corpus_name/." "$work/"
	echo "fuzz: running $name for at most ${seconds}s and $runs executions"
	# a target may ship LeakSanitizer suppressions for leaks inside a library
	supp=fuzz/${corpus_name}.supp
	lsan=""
	[[ -f $supp ]] && lsan="suppressions=$PWD/$supp"
	dict=()
	[[ -f fuzz/${corpus_name}.dict ]] && dict=(-dict="fuzz/${corpus_name}.dict")
	if ! ASAN_OPTIONS=fast_unwind_on_malloc=0 LSAN_OPTIONS="$lsan" "$out/$name" "${dict[@]}" \
		-seed="${TOPOGNN_FUZZ_SEED:-1}" -runs="$runs" -max_total_time="$seconds" \
		-timeout="${TOPOGNN_FUZZ_TIMEOUT:-30}" -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$out/$name-" "$work" >"$out/$name.log" 2>&1; then
		echo "fuzz: $name FAILED; tail of $out/$name.log:"
		tail -n 40 "$out/$name.log"
		status=1
	fi
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$name.log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$out/$name.log" | tail -n 1)
	echo "fuzz: $name runs=${execs:-?} exec/s=${rate:-?} corpus=$(corpus_size "$work")"
	if [[ $long == 1 && ${execs:-0} -lt $runs ]]; then
		echo "fuzz: $name stopped by the time limit at ${execs:-?} executions, below $runs"
	fi
	if [[ $long == 1 && $update == 1 ]]; then
		update_corpus "$corpus_name" "$work" "$out/$name"
	elif [[ $long == 0 ]]; then
		rm -rf "$work"
	fi
done
exit $status
