#!/usr/bin/env bash
# Set up and run topognn's whole test suite on a Debian 12 machine:
#   1. install the Debian packages (scripts/deps.sh),
#   2. build and `make check` (cmocka unit tests),
#   3. the same under AddressSanitizer + UBSan (leaks are errors),
#   4. integration tests against real parts (ibsim fabric simulator, ...),
#   5. each libFuzzer target for a short, bounded time,
#   6. `make distcheck`.
# Ends with one line "N passed, N failed" and exits non-zero on any failure.
# Set TOPOGNN_QUICK=1 to skip the sanitizer build, fuzzing and distcheck, and
# TOPOGNN_SKIP_SLURM=1 to skip the real-cluster tests. CI sets neither. Only
# one Slurm cluster can run on a machine at a time: each real-cluster test
# file holds the lock file TOPOGNN_CLUSTER_LOCK (default
# /tmp/topognn-cluster.lock), so two runs on one machine take turns.
#
# Slurm releases: TOPOGNN_SLURM_VERSION (default 24.11.5) is the one the main
# build and every real-cluster test use. With the default, when the newer
# releases' tarballs are at hand (TOPOGNN_SLURM_TARBALL, which .ci/run sets),
# two more passes follow (TOPOGNN_SLURM_ALSO overrides the list, "" for none):
# 26.05.3 and 25.11.7 each build the plugins and run every real-cluster test
# again. Each release lives in its own prefix, a sibling slurm-VER of
# TOPOGNN_SLURM_PREFIX's.
# Each step's wall time is listed at the end.
set -uo pipefail
cd "$(dirname "$0")/.."
top=$PWD
jobs=${TOPOGNN_JOBS:-2}
fuzz_seconds=${TOPOGNN_FUZZ_SECONDS:-600} # a guard only: fuzz.sh runs a fixed number of inputs
passed=0
failed=0
failures=()

log() { printf '\n=== %s\n' "$*"; }

# Count what a build's `make check` ran, from the tests' logs: cmocka's
# "[  PASSED  ] N test(s)" lines, and "N passed, N failed" of the test scripts.
count_checks() {
	local dir=$1 logs p f
	logs=$(find "$dir/tests" -name '*.log' ! -name test-suite.log)
	[[ -n $logs ]] || return 0
	# shellcheck disable=SC2086
	p=$(cat $logs | sed -n -e 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' \
		-e 's/^\([0-9]*\) passed, [0-9]* failed.*/\1/p' | awk '{s+=$1} END {print s+0}')
	# shellcheck disable=SC2086
	f=$(cat $logs | sed -n -e 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' \
		-e 's/^[0-9]* passed, \([0-9]*\) failed.*/\1/p' | awk '{s+=$1} END {print s+0}')
	passed=$((passed + p))
	failed=$((failed + f))
}

# Wall time of each step, listed in the summary.
timings=()
timed() {
	local name=$1 t0=$SECONDS rc
	shift
	"$@"
	rc=$?
	timings+=("$(printf '%6ds  %s' $((SECONDS - t0)) "$name")")
	return $rc
}

# Run one step; a step that fails without printing its own counts counts as one failure.
step() {
	local name=$1
	shift
	log "$name"
	if timed "$name" "$@"; then
		return 0
	fi
	failed=$((failed + 1))
	failures+=("$name")
	return 1
}

# Run a script that ends with "N passed, N failed"; add its counts.
integration() {
	local name=$1 out rc p f t0
	shift
	log "$name"
	out=$(mktemp)
	t0=$SECONDS
	"$@" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	timings+=("$(printf '%6ds  %s' $((SECONDS - t0)) "$name")")
	p=$(sed -n 's/^\(.*: \)\{0,1\}\([0-9]*\) passed, \([0-9]*\) failed.*/\2/p' "$out" | tail -n 1)
	f=$(sed -n 's/^\(.*: \)\{0,1\}\([0-9]*\) passed, \([0-9]*\) failed.*/\3/p' "$out" | tail -n 1)
	rm -f "$out"
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	if [[ $rc -ne 0 ]]; then
		[[ ${f:-0} -gt 0 ]] || failed=$((failed + 1))
		failures+=("$name")
	fi
}

build() {
	local dir=$1
	shift
	mkdir -p "$dir" && (cd "$dir" && "$top/configure" -q "$@" && make -j"$jobs" >/dev/null)
}

# make check in DIR; each failing test is named in the summary as "LABEL: test".
check() {
	local dir=$1 label=$2 rc t name
	(cd "$dir" && make -j"$jobs" check >/dev/null 2>&1)
	rc=$?
	count_checks "$dir"
	while IFS= read -r t; do
		grep -q -E ':test-result: (PASS|SKIP|XFAIL)' "$t" && continue
		echo "failed: $(basename "$t" .trs) (see ${t%.trs}.log)"
		name=${t%.trs}
		failures+=("$label: ${name#"$dir"/tests/}")
		tail -n 20 "${t%.trs}.log"
		# a crash (sanitizer report, signal) leaves no cmocka count: count it here
		grep -q -E '^(\[  FAILED  \]|[0-9]+ passed, [1-9][0-9]* failed)' "${t%.trs}.log" ||
			failed=$((failed + 1))
	done < <(find "$dir/tests" -name '*.trs' | sort)
	return $rc
}

step "dependencies" scripts/deps.sh || { echo "0 passed, 1 failed"; exit 1; }
step "autogen" ./autogen.sh >/dev/null 2>&1 || { echo "0 passed, 1 failed"; exit 1; }

# The install prefix of Slurm release $1: TOPOGNN_SLURM_PREFIX for the
# release it holds (24.11.5 unless it is named slurm-VER), else its sibling
# slurm-$1; without it, build-slurm.sh's default.
slurm_prefix() {
	local ver=$1 p=${TOPOGNN_SLURM_PREFIX:-}
	if [[ -z $p ]]; then
		if [[ $ver == 24.11.5 ]]; then echo "$top/.local/slurm"; else echo "$top/.local/slurm-$ver"; fi
		return
	fi
	case "$(basename "$p")" in
	"slurm-$ver") echo "$p" ;;
	slurm-[0-9]*) echo "$(dirname "$p")/slurm-$ver" ;;
	*) if [[ $ver == 24.11.5 ]]; then echo "$p"; else echo "$(dirname "$p")/slurm-$ver"; fi ;;
	esac
}

# Build Slurm release $1 (adopted when already built) and set
# slurm_configure to the configure options for it.
slurm_release() {
	local ver=$1 prefix
	prefix=$(slurm_prefix "$ver")
	slurm_configure=()
	step "Slurm $ver build" env TOPOGNN_SLURM_VERSION="$ver" TOPOGNN_SLURM_PREFIX="$prefix" \
		scripts/build-slurm.sh || return 1
	# shellcheck disable=SC1091
	source "$prefix/topognn-slurm.env"
	slurm_configure=(--with-slurm-source="$SLURM_SRC" --with-slurm-build="$SLURM_BUILD")
}

# The real-cluster tests $3.. against Slurm release $1 with the plugins of build dir $2.
# One real cluster at a time per machine: every cluster shares the node's
# auth/slurm socket and slurmd spool, so two test runs side by side would
# break each other. Each test file holds TOPOGNN_CLUSTER_LOCK (flock) while
# it runs; a second run waits for it between files.
cluster_lock=${TOPOGNN_CLUSTER_LOCK:-/tmp/topognn-cluster.lock}

slurm_tests() {
	local ver=$1 dir=$2 t
	shift 2
	for t in "$@"; do
		integration "slurm $ver: $(basename "$t" .sh)" flock "$cluster_lock" \
			env TOPOGNN_SLURM_VERSION="$ver" TOPOGNN_SLURM_PREFIX="$(slurm_prefix "$ver")" \
			TOPOGNN_BUILD_DIR="$top/$dir" "$t"
	done
}

slurm_version=${TOPOGNN_SLURM_VERSION:-24.11.5}
if [[ $slurm_version == 24.11.5 && -n ${TOPOGNN_SLURM_TARBALL:-} ]]; then
	slurm_also=${TOPOGNN_SLURM_ALSO-26.05.3 25.11.7}
else
	slurm_also=${TOPOGNN_SLURM_ALSO-}
fi

# The main Slurm release (24.11 from Debian's source package by default;
# reused when already built): the plugins compile against its configured tree.
slurm_configure=()
if [[ -n ${TOPOGNN_SKIP_SLURM:-} ]]; then
	log "Slurm build and real-cluster tests skipped (TOPOGNN_SKIP_SLURM is set)"
	slurm_also=
else
	slurm_release "$slurm_version" || true
fi
[[ -n ${TOPOGNN_SKIP_SLURM:-} || -n $slurm_also || $slurm_version != 24.11.5 ]] ||
	log "Slurm 25.11.7 and 26.05.3 passes skipped: no TOPOGNN_SLURM_TARBALL (see scripts/build-slurm.sh)"

built=0
if step "build" build _build/default --with-ibnetdisc "${slurm_configure[@]}"; then
	built=1
	log "unit tests (make check)"
	check _build/default "unit tests" || failures+=("unit tests")
fi

if [[ -z ${TOPOGNN_QUICK:-} ]]; then
	if step "build with ASan/UBSan" build _build/asan --enable-sanitizers --with-ibnetdisc; then
		log "unit tests under ASan/UBSan"
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
			check _build/asan "unit tests (ASan/UBSan)" || failures+=("unit tests (ASan/UBSan)")
	fi
fi

# Real Slurm: a one-machine cluster of 32 slurmd started and stopped by each test.
if ((${#slurm_configure[@]} && built)); then
	slurm_tests "$slurm_version" _build/default tests/slurm/test_*.sh
fi

# The other Slurm releases: their own Slurm and plugin build (only what the
# real-cluster tests use: the engine libraries, the plugins, the tools).
for ver in $slurm_also; do
	slurm_release "$ver" || continue
	dir=_build/slurm-$ver
	step "build (plugins for Slurm $ver)" bash -c 'mkdir -p "$1" && cd "$1" && shift &&
		"$0/configure" -q "$@" && for d in gnn-infer topo tools slurm-plugin; do
			make -j"'"$jobs"'" -C "$d" >/dev/null || exit 1; done' \
		"$top" "$dir" --with-ibnetdisc "${slurm_configure[@]}" || continue
	slurm_tests "$ver" "$dir" tests/slurm/test_*.sh
done

if [[ -z ${TOPOGNN_QUICK:-} ]]; then
	if compgen -G "fuzz/fuzz_*.c" >/dev/null; then
		step "fuzzers (${TOPOGNN_FUZZ_RUNS:-200000} inputs each, seed 1)" scripts/fuzz.sh "$fuzz_seconds" && passed=$((passed + 1))
	fi
	step "make distcheck" bash -c "cd _build/default && make -j$jobs distcheck >distcheck.log 2>&1 || { tail -40 distcheck.log; exit 1; }" &&
		passed=$((passed + 1))
fi

log "summary"
printf 'wall time per step:\n'
printf '%s\n' "${timings[@]}"
if ((${#failures[@]})); then
	printf 'failed: %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed"
[[ $failed -eq 0 && ${#failures[@]} -eq 0 ]]
