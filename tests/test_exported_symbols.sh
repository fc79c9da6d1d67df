#!/bin/sh
# test_exported_symbols.sh: every installed library and every Slurm plugin
# exports exactly the symbols its allow-list in tests/symbols/ names, so an
# accidental export (a helper that lost its `static`, a header that was not
# meant to be public) fails make check instead of becoming a promise.
#
#   libtopo.so, libgnn.so   only what the installed headers mark
#                           TOPOGNN_EXPORT / GNN_EXPORT (hidden visibility);
#   topology_topognn.so,    only Slurm's entry points (their -export-symbols-
#   prep_topognn.so,        regex in slurm-plugin/); checked when the plugins
#   spank_topognn.so        were built (configure --with-slurm-source).
#                           topology_topognn.so implements the interface of
#                           the Slurm it was built for: 24.11's list is
#                           topology_topognn.txt, 25.11's and 26.05's
#                           topology_topognn-2511.txt and -2605.txt
#                           (SLURM_API, from configure).
#
# An intended change to the public API updates the list in the same commit:
#   nm -D --defined-only LIB | awk '{ print $NF }' | grep -v '^_' | sort -u
# Prints "N passed, N failed".
set -u
B=${BUILD_DIR:-..}
S=$(cd "$(dirname "$0")/.." && pwd)
lists=$S/tests/symbols
command -v nm > /dev/null || { echo "SKIP: no nm"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/exports.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/check.sh"

# exports LIB: the defined dynamic symbols, without the linker's own (_init,
# _fini, _edata, _end, __bss_start) and an ifunc resolver's ".resolver" twin
exports() {
	nm -D --defined-only "$1" | awk '{ print $NF }' | grep -v '^_' | sed 's/\.resolver$//' | sort -u
}

# matches LIB LIST: the exports of LIB are the lines of LIST (comments and
# blank lines aside); prints what differs
matches() {
	[ -f "$1" ] || { echo "  $1 was not built"; return 1; }
	[ -f "$2" ] || { echo "  $2: no such allow-list"; return 1; }
	exports "$1" > "$tmp/have"
	grep -v '^#' "$2" | grep -v '^$' | sort -u > "$tmp/want"
	if cmp -s "$tmp/have" "$tmp/want"; then
		return 0
	fi
	comm -23 "$tmp/have" "$tmp/want" | sed 's/^/  exported, not in the list: /' | head -n 20
	comm -13 "$tmp/have" "$tmp/want" | sed 's/^/  listed, not exported:     /' | head -n 20
	return 1
}

check "libtopo.so exports exactly tests/symbols/libtopo.txt" \
	matches "$B/topo/.libs/libtopo.so" "$lists/libtopo.txt"
check "libgnn.so exports exactly tests/symbols/libgnn.txt" \
	matches "$B/gnn-infer/.libs/libgnn.so" "$lists/libgnn.txt"
for p in topology_topognn prep_topognn spank_topognn; do
	so=$B/slurm-plugin/.libs/$p.so
	list=$p.txt
	case "$p:${SLURM_API:-2411}" in
	topology_topognn:2411) ;;
	topology_topognn:*) list=$p-$SLURM_API.txt ;;
	esac
	if [ -f "$so" ]; then
		check "$p.so exports exactly tests/symbols/$list" matches "$so" "$lists/$list"
	else
		echo "skip - $p.so: the Slurm plugins were not built"
	fi
done
finish
