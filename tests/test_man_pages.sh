#!/bin/sh
# test_man_pages.sh: the manual keeps up with the code.
#  - every program in bin_PROGRAMS (tools/*.am) has a man page in
#    dist_man_MANS, and every --option its --help prints appears in it;
#  - every key the topognn.conf parser accepts (slurm-plugin/topognn_conf.c,
#    the telemetry keys it hands to topo/telemetry/telemetry.c and the class
#    keys of topo/place/place_classify.c) appears in topognn.conf(5);
#  - the shipped model configure.ac names is installed by models/Makefile.am.
# A new option or key fails this test until it is documented: that is the
# point. Prints "N passed, N failed".
set -u
B=${BUILD_DIR:-..}
S=$(cd "$(dirname "$0")/.." && pwd)
. "$(dirname "$0")/check.sh"

# in_man PAGE WORD: WORD (e.g. --model or ModelFile) appears in the troff
# source (font escapes like \fB left out), written with \- or -, not as part
# of a longer word.
in_man() {
	pat=$(printf '%s' "$2" | sed 's/-/(\\\\-|-)/g')
	sed 's/\\f[BIRP]//g' "$1" | grep -Eq "(^|[^A-Za-z0-9-])${pat}([^A-Za-z0-9-]|\$)"
}

# documented PAGE WORD...: every WORD is in PAGE; names the missing ones.
documented() {
	page=$1
	shift
	missing=
	for w in "$@"; do
		in_man "$page" "$w" || missing="$missing $w"
	done
	[ -z "$missing" ] || { echo "  $(basename "$page") lacks:$missing"; return 1; }
}

programs=$(sed -n 's/^bin_PROGRAMS += *//p' "$S"/tools/*.am | tr ' ' '\n' | sort -u)
check "tools/*.am installs 5 or more programs" test "$(echo "$programs" | wc -w)" -ge 5
for p in $programs; do
	page=$S/tools/$p.1
	check "$p has a man page in dist_man_MANS" \
		grep -Eq "^dist_man_MANS \+=.*(^| )$p\.1( |\$)" "$S"/tools/*.am
	opts=$("$B/tools/$p" --help 2>&1 | grep -Eo -- '--[a-z][a-z0-9-]*' | sort -u)
	check "$p --help lists options" test -n "$opts"
	check "every option of $p --help is in $p(1)" documented "$page" $opts
done

# The keys: literal names compared with the key in the parsers.
keys=$(grep -Eoh '(x?str(n)?casecmp)\(key, *"[A-Z][A-Za-z]+"' \
	"$S/slurm-plugin/topognn_conf.c" "$S/topo/telemetry/telemetry_config.c" \
	"$S/topo/place/place_classify.c" | sed 's/.*"\(.*\)"/\1/' | sort -u)
check "the parsers accept 20 or more topognn.conf keys" test "$(echo "$keys" | wc -w)" -ge 20
check "every topognn.conf key is in topognn.conf(5)" \
	documented "$S/slurm-plugin/topognn.conf.5" $(echo "$keys" | grep -vx Telemetry)

model=$(sed -n 's/^TOPOGNN_DEFAULT_MODEL=//p' "$S/configure.ac")
check "configure.ac names the shipped model" test -n "$model"
check "models/Makefile.am installs $model" \
	grep -Eq "^dist_pkgdata_DATA *\+?=.*(^| )$model( |\$)" "$S/models/Makefile.am"
check "models/$model exists" test -s "$S/models/$model"
finish
