# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# Check helpers of the shell test suites (sourced, not run): one line per
# check, "ok - what" or "not ok - what", counted in CHECKS_PASSED and
# CHECKS_FAILED, and JSON assertions over a cqperf document.

# cqp_tools: every tool's name, a line each, from its row in
# src/base/tools.h (gen/tools_list.py): no suite repeats the list.
cqp_tools() {
	python3 "$(dirname "${BASH_SOURCE[0]}")/../gen/tools_list.py"
}

CHECKS_PASSED=0
CHECKS_FAILED=0
CHECKS_SKIPPED=0

ok() {
	echo "ok - $*"
	CHECKS_PASSED=$((CHECKS_PASSED + 1))
}
not_ok() {
	echo "not ok - $*"
	CHECKS_FAILED=$((CHECKS_FAILED + 1))
}
skip() { # a check this run could not make, and why
	echo "ok - # SKIP $*"
	CHECKS_SKIPPED=$((CHECKS_SKIPPED + 1))
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

# check_timed DESCRIPTION RERUN COMMAND...: check, for a figure that one
# stall of a TCG guest's host can spoil (CI's machines stall for hundreds
# of ms now and then): when COMMAND fails, RERUN (a function that
# measures again, rewriting what COMMAND reads) and COMMAND once more.  A
# bug fails both; the first failure's words stay in the log.
check_timed() {
	local what=$1 rerun=$2
	shift 2
	if "$@"; then
		ok "$what"
		return 0
	fi
	echo "# $what: failed once; measuring again"
	if "$rerun" && "$@"; then
		ok "$what (second run)"
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
    # Name the failing clauses and their operands' values: CI shows only
    # a part of the log, so the first lines must say what was wrong.
    import ast
    env = {"d": d, "r": res[0]}
    tree = ast.parse("(" + sys.argv[2] + ")", mode="eval").body
    parts = tree.values if isinstance(tree, ast.BoolOp) and \
        isinstance(tree.op, ast.And) else [tree]
    for part in parts:
        code = ast.unparse(part)
        try:
            if eval(code, env):
                continue
        except Exception as e:
            print("# raised %r: %s" % (e, code))
            continue
        ops = part.comparators + [part.left] \
            if isinstance(part, ast.Compare) else []
        vals = []
        for o in sorted(ops, key=lambda o: o.col_offset):
            try:
                v = eval(ast.unparse(o), env)
            except Exception:
                continue
            if not isinstance(o, ast.Constant):
                vals.append("%s = %s" % (ast.unparse(o), json.dumps(v)[:200]))
        print("# false: %s%s" % (code, ("  (" + "; ".join(vals) + ")") if vals else ""))
    print("# result: %s" % json.dumps(res[0])[:1200])
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
