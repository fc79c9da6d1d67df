#!/bin/sh
# test_number_parse.sh: every number read from text in topo/, gnn-infer/,
# slurm-plugin/ and tools/ goes through topo_parse_* (topo/graph/topo_num.c),
# not a raw strtol/strtod/atoi/sscanf (issue 20; gnn-infer reads only JSON). The raw calls accept " 7", "", "7x" and out-of-range values, each
# caller re-checked a different subset, and a bad file line must name its
# problem, not become 0. The test also checks that it found the parsers'
# callers (a rename would otherwise make it pass vacuously).
# Prints "N passed, N failed".
set -u
S=$(cd "$(dirname "$0")/.." && pwd)
. "$(dirname "$0")/check.sh"

raw='\<(strto(l|ul|ll|ull|d|f|ld|imax|umax)|ato(i|l|ll|f)|v?f?sscanf|v?fscanf|v?scanf)[ \t]*\('
hits=$(cd "$S" && find topo gnn-infer slurm-plugin tools -name '*.[ch]' \
	! -path topo/graph/topo_num.c | LC_ALL=C sort |
	xargs grep -n -E "$raw" | grep -v -E '^[^:]*:[0-9]+:[ \t]*(/?\*|//)')
users=$(cd "$S" && grep -r -l -E '\<topo_parse_[a-z0-9_]+\(' topo gnn-infer slurm-plugin tools | wc -l)

check "found the strict parsers' callers ($users files)" test "$users" -gt 10
check "no raw strtol/strtod/atoi/sscanf outside topo_num.c" test -z "$hits"
[ -z "$hits" ] || printf '%s\n' "$hits" | sed 's/^/  /'
finish
