#!/bin/sh
# test_golden_sim.sh: the measured numbers do not move by accident. The
# simulator's --json (every policy, 40 KTH SP2 jobs on the DGX H100 SuperPOD,
# seed 7) and the decision log the gnn policy writes for the same run must be
# byte-identical to tests/fixtures/golden/. Only what is measured on the wall
# clock (the "*_us" latencies) and the model file's absolute path are masked
# before the comparison; every other byte counts.
#
# A change that alters results ON PURPOSE (new simulator semantics, a new
# model) regenerates the golden files and says so in its commit message:
#   cd _build/default && REGENERATE=1 BUILD_DIR=$PWD ../../tests/test_golden_sim.sh
# then review `git diff tests/fixtures/golden/` before committing it.
# Prints "N passed, N failed".
set -u
B=${BUILD_DIR:-..}
S=$(cd "$(dirname "$0")/.." && pwd)
fx=${FIXTURES_DIR:-$S/tests/fixtures}
golden=$S/tests/fixtures/golden
sim=$B/tools/topognn-sim
tmp=$(mktemp -d "${TMPDIR:-/tmp}/golden.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/check.sh"

run() { # run OUT ARGS...: the fixed run, then ARGS (policies, outputs)
	out=$1
	shift
	"$sim" --ibnetdiscover "$fx/fabrics/dgx-h100-superpod.ibnetdiscover" \
		--trace "$fx/traces/kth-sp2-head100.swf" --comm "$fx/comm" \
		--model "$S/models/default.json" --jobs 40 --seed 7 "$@" > "$out" 2> "$tmp/err" ||
		{ cat "$tmp/err"; return 1; }
}

mask() { # mask IN OUT: wall-clock latencies and the model's absolute path
	sed -E -e 's/"([a-z0-9_]+_us)": ?[-+.eE0-9]+/"\1":"<us>"/g' \
		-e "s#$S/models/#<models>/#g" "$1" > "$2"
}

same() { # same NAME: the masked output equals the golden file
	if [ "${REGENERATE:-0}" = 1 ]; then
		cp "$tmp/$1" "$golden/$1"
		echo "  regenerated $golden/$1"
	fi
	cmp -s "$tmp/$1" "$golden/$1" && return 0
	echo "  $1 differs from $golden/$1:"
	diff "$golden/$1" "$tmp/$1" | head -n 10 | sed 's/^/    /'
	return 1
}

run "$tmp/raw.json" --policies linear,tree,model,gnn,lookahead --json &&
	mask "$tmp/raw.json" "$tmp/sim.json"
check "topognn-sim --json (5 policies, seed 7) is byte-identical" same sim.json
run "$tmp/out" --policies gnn --decision-log "$tmp/raw.log" &&
	mask "$tmp/raw.log" "$tmp/decisions.log"
check "the gnn decision log (40 decisions) is byte-identical" same decisions.log
check "the decision log holds 40 decisions" \
	test "$(grep -c '"chosen"' "$tmp/decisions.log")" = 40
finish
