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
# TOPOGNN_SKIP_SLURM=1 to skip the real-cluster tests (only one Slurm cluster
# can run on a machine at a time). CI sets neither.
set -uo pipefail
cd "$(dirname "$0")/.."
top=$PWD
jobs=${TOPOGNN_JOBS:-2}
fuzz_seconds=${TOPOGNN_FUZZ_SECONDS:-20}
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

# Run one step; a step that fails without printing its own counts counts as one failure.
step() {
	local name=$1
	shift
	log "$name"
	if "$@"; then
		return 0
	fi
	failed=$((failed + 1))
	failures+=("$name")
	return 1
}

# Run a script that ends with "N passed, N failed"; add its counts.
integration() {
	local name=$1 out rc p f
	shift
	log "$name"
	out=$(mktemp)
	"$@" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
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

# Slurm 24.11 from Debian's source package (reused when already built): the
# plugins compile against its configured tree.
slurm_configure=()
if [[ -n ${TOPOGNN_SKIP_SLURM:-} ]]; then
	log "Slurm build and real-cluster tests skipped (TOPOGNN_SKIP_SLURM is set)"
elif step "Slurm 24.11 build" scripts/build-slurm.sh; then
	# shellcheck disable=SC1091
	source "${TOPOGNN_SLURM_PREFIX:-$top/.local/slurm}/topognn-slurm.env"
	slurm_configure=(--with-slurm-source="$SLURM_SRC" --with-slurm-build="$SLURM_BUILD")
fi

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
	for t in tests/slurm/test_*.sh; do
		integration "slurm: $(basename "$t" .sh)" env TOPOGNN_BUILD_DIR="$top/_build/default" "$t"
	done
fi

if [[ -z ${TOPOGNN_QUICK:-} ]]; then
	if compgen -G "fuzz/fuzz_*.c" >/dev/null; then
		step "fuzzers (${fuzz_seconds}s each)" scripts/fuzz.sh "$fuzz_seconds" && passed=$((passed + 1))
	fi
	step "make distcheck" bash -c "cd _build/default && make -j$jobs distcheck >distcheck.log 2>&1 || { tail -40 distcheck.log; exit 1; }" &&
		passed=$((passed + 1))
fi

log "summary"
if ((${#failures[@]})); then
	printf 'failed: %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed"
[[ $failed -eq 0 && ${#failures[@]} -eq 0 ]]
