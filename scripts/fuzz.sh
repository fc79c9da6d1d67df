#!/usr/bin/env bash
# Build every libFuzzer target in fuzz/ with clang (ASan + UBSan) and run each
# for a bounded time on its seed corpus. Usage: scripts/fuzz.sh [SECONDS]
# The run is reproducible: a fixed libFuzzer seed (TOPOGNN_FUZZ_SEED, default
# 1) and at most TOPOGNN_FUZZ_RUNS inputs per target, so a failure in CI can
# be replayed; set TOPOGNN_FUZZ_SEED=0 for libFuzzer's random seed when
# exploring.
# A target fuzz/fuzz_NAME.c uses the corpus fuzz/corpus/NAME/ (copied to a
# scratch dir so runs never modify the repository).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
out=_build/fuzz
mkdir -p "$out"
cflags=(-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
	-Ignn-infer -I_build/default -DHAVE_IBNETDISC=1)
for area in topo/*/; do cflags+=(-I"${area%/}"); done
# shellcheck disable=SC2207
libs=($(pkg-config --cflags --libs hwloc jansson igraph libcurl libibnetdisc libibmad libibumad) -lm)
sources=(topo/*/*.c gnn-infer/*.c)
status=0
# the library sources once, instrumented; each target then only links
mkdir -p "$out/obj"
objs=()
for src in "${sources[@]}"; do
	obj=$out/obj/$(echo "$src" | tr / _).o
	clang "${cflags[@]/-fsanitize=fuzzer,/-fsanitize=fuzzer-no-link,}" -c "$src" -o "$obj" \
		$(pkg-config --cflags hwloc jansson igraph libcurl libibnetdisc)
	objs+=("$obj")
done
for target in fuzz/fuzz_*.c; do
	name=$(basename "$target" .c)
	corpus_name=${name#fuzz_}
	echo "fuzz: building $name"
	clang "${cflags[@]}" "$target" "${objs[@]}" "${libs[@]}" -o "$out/$name"
	work=$(mktemp -d)
	[[ -d fuzz/corpus/$corpus_name ]] && cp -r "fuzz/corpus/$corpus_name/." "$work/"
	echo "fuzz: running $name for ${seconds}s"
	# a target may ship LeakSanitizer suppressions for leaks inside a library
	supp=fuzz/${corpus_name}.supp
	lsan=""
	[[ -f $supp ]] && lsan="suppressions=$PWD/$supp"
	dict=()
	[[ -f fuzz/${corpus_name}.dict ]] && dict=(-dict="fuzz/${corpus_name}.dict")
	if ! ASAN_OPTIONS=fast_unwind_on_malloc=0 LSAN_OPTIONS="$lsan" "$out/$name" "${dict[@]}" -seed="${TOPOGNN_FUZZ_SEED:-1}" -runs="${TOPOGNN_FUZZ_RUNS:-300000}" \
		-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$out/$name-" "$work" >"$out/$name.log" 2>&1; then
		echo "fuzz: $name FAILED; tail of $out/$name.log:"
		tail -n 40 "$out/$name.log"
		status=1
	else
		grep -E '^(#[0-9]+\s+DONE|Done [0-9]+ runs)' "$out/$name.log" | tail -n 1 || true
	fi
	rm -rf "$work"
done
exit $status
