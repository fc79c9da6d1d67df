#!/bin/sh
# test_function_length.sh: no function in topo/, gnn-infer/, slurm-plugin/ or
# tools/ is longer than 150 lines (its body, between the braces). A longer one
# does several things; split it into named steps (issue 20).
#
# The house style (Linux kernel's) opens a function body with "{" alone on
# the line after the signature and closes it with "}" alone on a line, so
# awk can measure without a C parser; struct and array initialisers open
# with "= {" and are not counted. The test also checks that it measured
# functions at all (a style change would otherwise make it pass vacuously).
# Prints "N passed, N failed".
set -u
S=$(cd "$(dirname "$0")/.." && pwd)
max=${MAX_FUNCTION_LINES:-150}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/funclen.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/check.sh"

(cd "$S" && find topo gnn-infer slurm-plugin tools -name '*.c' | LC_ALL=C sort |
	xargs awk '
	FNR == 1 { start = 0; prev = ""; name = "?" }
	start == 0 && /^[A-Za-z_].*\(/ {
		name = $0; sub(/\(.*/, "", name); sub(/.*[ \t*]/, "", name)
	}
	start == 0 && $0 == "{" && prev ~ /\)[ \t]*$/ { start = FNR; prev = $0; next }
	start > 0 && $0 == "}" {
		printf "%d %s:%d %s\n", FNR - start - 1, FILENAME, start - 1, name
		start = 0
	}
	{ prev = $0 }') > "$tmp/lengths"

n=$(wc -l < "$tmp/lengths")
check "measured the functions of the four trees ($n)" test "$n" -gt 1000
awk -v max="$max" '$1 > max' "$tmp/lengths" | sort -rn > "$tmp/long"
check "no function is over $max lines" test ! -s "$tmp/long"
sed 's/^/  /' "$tmp/long"
echo "  the longest: $(sort -rn "$tmp/lengths" | head -n 3 | tr '\n' ';')"
finish
