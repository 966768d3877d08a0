# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# Check helpers of the shell test suites (sourced, not run): one line per
# check, "ok - what" or "not ok - what", counted in CHECKS_PASSED and
# CHECKS_FAILED, and JSON assertions over a cqperf document.

CHECKS_PASSED=0
CHECKS_FAILED=0

ok() {
	echo "ok - $*"
	CHECKS_PASSED=$((CHECKS_PASSED + 1))
}
not_ok() {
	echo "not ok - $*"
	CHECKS_FAILED=$((CHECKS_FAILED + 1))
}
check() { # check DESCRIPTION COMMAND...: fails (for `|| show`) when it does
	local what=$1
	shift
	if "$@"; then
		ok "$what"
		return 0
	fi
	not_ok "$what"
	return 1
}

# json_check FILE PYTHON-EXPR: the JSON document in FILE (bound to d, its
# first result to r) satisfies the expression; says why when it does not.
json_check() {
	python3 - "$1" "$2" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("# invalid JSON in %s: %s" % (sys.argv[1], e))
    sys.exit(1)
res = d.get("results") or [{}]
try:
    ok = eval("(" + sys.argv[2] + ")", {"d": d, "r": res[0]})
except Exception as e:
    print("# %s raised %r" % (sys.argv[2], e))
    sys.exit(1)
if not ok:
    print("# false: %s" % " ".join(sys.argv[2].split()))
    print("# document: %s" % json.dumps(d)[:1500])
sys.exit(0 if ok else 1)
PY
}

# json_get FILE EXPR: prints the value of a Python expression over d (and r).
json_get() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=(d.get("results") or [{}])[0]; print(eval(sys.argv[2]))' "$1" "$2"
}

# show FILE...: the files' contents as comments, for a failed check.
show() {
	local f
	for f in "$@"; do
		[ -s "$f" ] || continue
		# The first lines say what went wrong first (a valgrind log
		# ends with leak records that are not the error).
		if [ "$(wc -l <"$f")" -gt 40 ]; then
			{ head -n 25 "$f"; echo "[...]"; tail -n 15 "$f"; }
		else
			cat "$f"
		fi | sed "s|^|# $(basename "$f"): |"
	done
	return 0
}

# check_documents DIR: every cqperf report under DIR (a binary's stdout
# with --output json in a *.json or *.out file, one document or, from a
# --persistent server, several; sweep folders) validates against
# doc/cqperf-1.schema.json; one check, naming the invalid ones.  Logs
# (server.log: stdout and stderr together) are not reports.
SCHEMA_CHECK=$(dirname "${BASH_SOURCE[0]}")/schema_check.py
check_documents() {
	local docs out rc
	# No process substitution: the soft-RoCE guest has no /dev/fd.
	out=$(grep -rl --include='*.json' --include='*.out' \
		'"schema": "cqperf/1"' "$1")
	[ -n "$out" ] || return 0
	mapfile -t docs <<<"$out"
	out=$(python3 "$SCHEMA_CHECK" --quiet "${docs[@]}" 2>&1)
	rc=$?
	check "all ${#docs[@]} JSON documents validate against cqperf-1.schema.json" \
		test "$rc" -eq 0 || sed 's/^/# /' <<<"$out" | head -20
}
