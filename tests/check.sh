# tests/check.sh: the small harness the shell tests share (sourced, POSIX sh).
#   check NAME COMMAND...   counts COMMAND's success as a pass, else a failure
#   finish                  prints "N passed, N failed"; fails if any failed
pass=0
fail=0

check() {
	name=$1
	shift
	if "$@"; then
		pass=$((pass + 1))
		echo "ok   - $name"
	else
		fail=$((fail + 1))
		echo "FAIL - $name"
	fi
}

finish() {
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
}
