#!/bin/sh
# test_install.sh: the installed library is usable from outside the tree.
# `make install DESTDIR=...` into a scratch root, then the only headers there
# are the public ones (topognn/topognn.h and what it includes), and
# `pkg-config --cflags --libs topognn` from that root builds and links
# tests/install_user.c, which runs against the installed libtopo.so and
# libgnn.so: it loads the SuperPOD dump, places a 4-host job and loads one
# of the shipped models. Skips (77) without pkg-config or a C compiler.
# Prints "N passed, N failed".
set -u
B=${BUILD_DIR:-..}
S=$(cd "$(dirname "$0")/.." && pwd)
fx=${FIXTURES_DIR:-$S/tests/fixtures}
command -v pkg-config > /dev/null || { echo "SKIP: no pkg-config"; exit 77; }
CC=${CC:-cc}
command -v "$CC" > /dev/null || { echo "SKIP: no C compiler"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/check.sh"

eq_list() { # eq_list FILE "A B C": the lines of FILE are A, B, C
	[ "$(tr '\n' ' ' < "$1" | sed 's/ $//')" = "$2" ] ||
		{ echo "  got: $(tr '\n' ' ' < "$1")"; return 1; }
}

root=$tmp/root
${MAKE:-make} -C "$B/gnn-infer" install DESTDIR="$root" > "$tmp/install.log" 2>&1 &&
	${MAKE:-make} -C "$B/topo" install DESTDIR="$root" >> "$tmp/install.log" 2>&1
rc=$?
check "make install DESTDIR=... (gnn-infer, topo)" test "$rc" = 0 || tail -n 20 "$tmp/install.log"
pc=$(find "$root" -name topognn.pc | head -n 1)
check "topognn.pc is installed" test -n "$pc"
[ -n "$pc" ] || { finish; exit 1; }
inc=$(dirname "$(find "$root" -path '*/include/topognn/topognn.h' | head -n 1)")
lib=$(dirname "$(find "$root" -name 'libtopo.so' | head -n 1)")

# public headers only: the umbrella and what it includes, no private header
(cd "$inc" && ls) > "$tmp/headers"
check "the public headers are installed, the private ones are not" \
	eq_list "$tmp/headers" "gnn_error.h gnn_export.h gnn_infer.h gnn_model.h gnn_train.h place.h \
topo_error.h topo_fabric.h topo_graph.h topo_hostlist.h topo_ibnetdiscover.h topo_json.h \
topo_topology_conf.h topognn.h topognn_export.h"

export PKG_CONFIG_PATH="$(dirname "$pc")" PKG_CONFIG_SYSROOT_DIR="$root"
flags=$(pkg-config --cflags --libs topognn)
check "pkg-config --cflags --libs topognn" test -n "$flags"
# a sanitizer build's libraries need the program to load the ASan runtime first
san=""
ldd "$lib/libtopo.so" | grep -q libasan && san="-fsanitize=address,undefined"
# shellcheck disable=SC2086 # flags and san are word lists
"$CC" -std=c11 -Wall -Werror $san -o "$tmp/user" "$S/tests/install_user.c" $flags > "$tmp/cc.log" 2>&1
rc=$?
check "a program using <topognn/topognn.h> compiles and links" test "$rc" = 0 || cat "$tmp/cc.log"
out=$(LD_LIBRARY_PATH=$lib "$tmp/user" "$fx/fabrics/dgx-h100-superpod.ibnetdiscover" \
	"$S/models/default-1.json" 2>&1)
check "it runs on the installed libraries: 119 hosts, 4 chosen, a model loaded" \
	sh -c 'expr "$1" : "hosts=119 chosen=4 params=[1-9][0-9]*\$" > /dev/null || { echo "  got: $1"; exit 1; }' - "$out"
check "it resolved libtopo and libgnn from the install" \
	sh -c "LD_LIBRARY_PATH='$lib' ldd '$tmp/user' | grep -q '$lib/libtopo.so.0'"
finish
