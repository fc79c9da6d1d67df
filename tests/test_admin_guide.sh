#!/bin/bash
# test_admin_guide.sh: docs/admin-guide.md sections 2-4 are tested.
#  - Every command line in a ```sh block of those sections names its test
#    ("test: tests/..."), and that test exists.
#  - The commands naming this test run here, as written, in a scratch
#    directory: /etc/slurm, /var/log/slurm and the Prometheus textfile
#    directory become directories under it, fabric.txt is the SuperPOD dump
#    of tests/fixtures, jobs.swf the first 100 KTH SP2 jobs, and the log the
#    guide reads is a decision log topognn-sim writes for them (job 4242
#    becomes job 19 of that log). Each must exit 0 and write what it says.
#  - Commands naming another test appear in that test (its first words and
#    options), and ```conf blocks naming a test: every Key= of the block is
#    in that test (slurm.conf, plugstack.conf) or, for topognn.conf, is a
#    key topognn.conf(5) documents (tests/test_man_pages.sh ties those to
#    the parser).
# Prints "N passed, N failed".
set -u
B=${BUILD_DIR:-..}
S=$(cd "$(dirname "$0")/.." && pwd)
fx=${FIXTURES_DIR:-$S/tests/fixtures}
guide=$S/docs/admin-guide.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/check.sh"
export PATH="$B/tools:$PATH"

# Lines of sections 2-4: "sh|conf TEST<TAB>line" for every code block line.
awk '
	/^## 2\./ { on = 1 } /^## 5\./ { on = 0 }
	on && /^ *```/ {
		if (inblk) { inblk = 0; next }
		inblk = 1; kind = $0; sub(/^ *```/, "", kind); split(kind, f, " ")
		lang = f[1]; blktest = f[2]; sub(/^test=/, "", blktest)
		if (blktest == "") blktest = "-"	# tabs are whitespace to read
		next
	}
	on && inblk { sub(/^   /, ""); print lang "\t" blktest "\t" $0 }
' "$guide" > "$tmp/lines"

check "sections 2-4 have 15 or more code lines" test "$(wc -l < "$tmp/lines")" -ge 15

# ---- every sh line names an existing test ----
missing=
while IFS=$'\t' read -r lang _ line; do
	[[ $lang == sh && -n ${line// /} && ! $line =~ ^[[:space:]]*# ]] || continue
	t=$(sed -n 's/.*test: \([^ ;]*\).*/\1/p' <<< "$line")
	[[ -n $t && -e $S/$t ]] || missing="$missing
  $line"
done < "$tmp/lines"
check "every command names an existing test" eval '[ -z "$missing" ] || { echo "  no test:$missing"; false; }'

# ---- the scratch world the commands of this test run in ----
w=$tmp/w
mkdir -p "$w/etc" "$w/log" "$w/prom"
cp "$fx/fabrics/dgx-h100-superpod.ibnetdiscover" "$w/fabric.txt"
cp "$fx/traces/kth-sp2-head100.swf" "$w/jobs.swf"
topognn-sim --ibnetdiscover "$w/fabric.txt" --trace "$w/jobs.swf" --comm "$fx/comm" \
	--policies model --decision-log "$w/log/topognn-decisions.jsonl" > /dev/null 2>&1
check "a decision log of 100 jobs for the guide's commands" \
	test "$(grep -c '"chosen"' "$w/log/topognn-decisions.jsonl")" -eq 100

localize() { # the guide's paths -> the scratch world
	sed -e "s#/etc/slurm/#$w/etc/#g" -e "s#/var/log/slurm/#$w/log/#g" \
		-e "s#/var/lib/prometheus/node-exporter/#$w/prom/#g" -e 's/job 4242/job 19/'
}

# run the guide's commands for this test in order, in one shell, as written
grep -P '^sh\t' "$tmp/lines" | cut -f3 | grep 'test: tests/test_admin_guide.sh' | localize > "$tmp/ours.sh"
check "this test runs 11 or more of the guide's commands" test "$(wc -l < "$tmp/ours.sh")" -ge 11
n=0
while IFS= read -r line; do
	n=$((n + 1))
	printf '%s\n' "$line" >> "$tmp/sofar.sh"
	(cd "$w" && bash -e -c "$(cat "$tmp/sofar.sh")" > "$tmp/out.$n" 2> "$tmp/err.$n")
	rc=$?
	check "guide: ${line%%#*}" eval '[ $rc -eq 0 ] || { echo "  exit $rc: $(tail -n 3 "$tmp/err.$n")"; false; }'
	# later commands see earlier ones' effects; the variables too
	if [[ $line != R=* ]]; then
		sed -i '$d' "$tmp/sofar.sh"
		printf '# ran: %s\n' "${line%%#*}" >> "$tmp/sofar.sh"
	fi
done < "$tmp/ours.sh"

# what they wrote
check "lstopo wrote this host's XML" grep -q '<topology' "$w/hosts/$(hostname).xml"
hosts=$(python3 -c 'import json,sys; g=json.load(open(sys.argv[1])); print(sum(v["kind"]=="host" for v in g["vertices"]))' "$w/etc/topognn-graph.json")
check "the graph: the fabric's 119 hosts and this host's XML" test "$hosts" = 120
check "topology.conf names the 8 scalable units" test "$(grep -c '^SwitchName=su' "$w/topology.conf")" -eq 8
check "the picture page" grep -q '<svg' "$w/now.html"
check "the metrics file" grep -q '^topognn_decisions_total{policy="model"} 100$' "$w/prom/topognn.prom"
check "samples exported and a model trained" test -s "$w/model.json"

# ---- commands naming another test appear there ----
while IFS=$'\t' read -r lang _ line; do
	[[ $lang == sh ]] || continue
	t=$(sed -n 's/.*test: \([^ ;]*\).*/\1/p' <<< "$line")
	[[ -n $t && $t != tests/test_admin_guide.sh && -f $S/$t ]] || continue
	# the command's words up to its first option, path or redirection
	# ("scontrol show topology", "ibnetdiscover"), or "TOOL --ibnd"
	key=
	for a in ${line%%#*}; do
		case $a in -*|*/*|'>'*) break ;; esac
		key="${key:+$key }$a"
	done
	cmd=${line%%#*}
	[[ $cmd == *" --ibnd "* ]] && key="$key --ibnd"
	check "$t runs \"$key\"" grep -qF -- "$key" "$S/$t"
done < "$tmp/lines"

# ---- configuration blocks ----
while IFS=$'\t' read -r lang t line; do
	[[ $lang == conf && $t != - ]] || continue
	case $line in \#*|'') continue ;; esac
	key=${line%%=*}
	key=${key%% *}
	case $t in
	tests/test_admin_guide.sh) # topognn.conf: a documented key
		check "topognn.conf(5) documents $key" \
			grep -q "fB$key\\\\fR" "$S/slurm-plugin/topognn.conf.5" ;;
	*)	# slurm.conf: the value; plugstack.conf: every argument's name
		if [[ $line == *" "*=* && $key != *=* && $line != *"="*" #"* ]] || [[ $key == optional ]]; then
			for a in $line; do
				[[ $a == *=* ]] && check "$t passes ${a%%=*}=" grep -qF -- "${a%%=*}=" "$S/$t"
			done
		else
			v=${line#*=}
			v=${v%%[ #]*}
			check "$t sets $key=$v" grep -qF -- "$v" "$S/$t"
		fi ;;
	esac
done < "$tmp/lines"
finish
