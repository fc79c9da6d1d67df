#!/bin/sh
# test_prefixes.sh: names say where they live (issue 20). Every function that
# a file in topo/*/ or gnn-infer/ defines without `static` starts with one of
# the prefixes tests/prefixes.txt lists for its folder, so the name tells a
# reader which folder to open (as Redis's sds.c exports sds*, jansson json_*).
# A misplaced name, or a new folder missing from the list, fails.
#
# The functions are found without a C parser: comments, strings and character
# constants are blanked, and each top-level declaration (text at brace depth
# 0 up to a ";" or a "{") that ends in "{" and has a "(" is a definition; its
# name is the identifier before its first "(" (__attribute__ lists removed).
# `static`, or a macro named *_INLINE (gnn_layers.c's GNN_INLINE is "static
# inline ..."), makes it file-local.
# The test also checks that it found functions at all, and that the parser
# tells a static from an exported one, on a file of its own (a style change
# would otherwise make it pass vacuously). Prints "N passed, N failed".
set -u
S=$(cd "$(dirname "$0")/.." && pwd)
list="$S/tests/prefixes.txt"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/prefixes.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/check.sh"

# Print "FILE NAME" for each non-static function defined in the files given.
exported_functions() {
	LC_ALL=C awk '
	function flush(head,   name) {
		gsub(/__attribute__[ \t]*\(\([^;{]*\)\)/, " ", head)
		if (head !~ /\(/ || head ~ /(^|[^A-Za-z0-9_])(static|typedef|[A-Z_]*_INLINE)([^A-Za-z0-9_]|$)/ ||
		    head ~ /=[^(]*\(/ || head ~ /^[ \t]*(struct|union|enum)[^(]*$/)
			return
		name = head
		sub(/[ \t]*\(.*/, "", name)
		sub(/.*[^A-Za-z0-9_]/, "", name)
		if (name != "")
			print FILENAME, name
	}
	FNR == 1 { depth = 0; incomment = 0; head = ""; inpp = 0 }
	inpp || (/^[ \t]*#/ && !incomment) { inpp = /\\$/; next }
	{
		line = $0
		out = ""
		i = 1
		n = length(line)
		while (i <= n) {
			c = substr(line, i, 1)
			two = substr(line, i, 2)
			if (incomment) {
				if (two == "*/") { incomment = 0; i += 2 } else i++
				continue
			}
			if (two == "/*") { incomment = 1; i += 2; continue }
			if (two == "//") break
			if (c == "\"" || c == "'\''") {
				q = c
				i++
				while (i <= n && substr(line, i, 1) != q)
					i += substr(line, i, 1) == "\\" ? 2 : 1
				i++
				out = out " "
				continue
			}
			if (c == "{") {
				if (depth == 0) { flush(head); head = "" }
				depth++
			} else if (c == "}") {
				depth--
			} else if (c == ";" && depth == 0) {
				head = ""
			} else if (depth == 0) {
				head = head c
			}
			i++
		}
		if (depth == 0)
			head = head " "
	}' "$@"
}

# The parser itself, on a file with one exported and three file-local functions.
cat > "$tmp/sample.c" <<'EOF'
#include <stdio.h>
/* int commented_out(void) { } */
static int helper(int a,
		  int b)
{
	return a + b; /* { */
}
static inline void quiet(void) { }
#define SAMPLE_INLINE static inline
SAMPLE_INLINE int fast(int x) { return x; }
int sample_add(const char *s, int n) __attribute__((nonnull(1)));
const char *sample_name(void) { return "{"; }
struct sample_pair { int a, b; };
static const struct sample_pair pairs[] = { { 1, 2 } };
EOF
exported_functions "$tmp/sample.c" | sed 's/.* //' > "$tmp/sample.out"
check "the parser finds exactly the one exported function of four" \
	test "$(cat "$tmp/sample.out")" = "sample_name"

# Every folder with C files, and its prefixes from the list.
cd "$S" || exit 1
folders=$(find topo gnn-infer -name '*.[ch]' | sed 's|/[^/]*$||' | LC_ALL=C sort -u)
: > "$tmp/bad"
total=0
for dir in $folders; do
	prefixes=$(awk -v d="$dir" '$1 == d { $1 = ""; print }' "$list")
	if [ -z "$prefixes" ]; then
		echo "  $dir: no line in tests/prefixes.txt (add the folder and its prefixes)" >> "$tmp/bad"
		continue
	fi
	exported_functions "$dir"/*.[ch] > "$tmp/found"
	total=$((total + $(wc -l < "$tmp/found")))
	while read -r file name; do
		ok=0
		for p in $prefixes; do
			case "$p" in
			!*) case "$name" in "${p#!}"*) ok=0; break ;; esac ;;
			*) case "$name" in "$p"*) ok=1 ;; esac ;;
			esac
		done
		[ "$ok" -eq 1 ] || echo "  $file: $name: not one of its folder's prefixes:$prefixes" >> "$tmp/bad"
	done < "$tmp/found"
done
check "found the exported functions of topo/ and gnn-infer/ ($total)" test "$total" -gt 300
check "every exported function's prefix is its folder's (tests/prefixes.txt)" test ! -s "$tmp/bad"
cat "$tmp/bad"
finish
