#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The regression gate as users run it (scripts/installed/cqperf-regress against the
# committed ci/baseline), then proof that it would catch a regression:
# judged against a baseline recorded from this very measurement (its
# intervals sharpened to their medians, as a quiet recording over many
# pairs gives), the measurement passes, and copies of it with a rate 15 %
# lower or one wakeup more a message fail and are named.
#   tests/regress/run.sh [BIN_DIR]   (default build/src)
# Prints "ok - ..." lines and "N passed, N failed, N skipped".
set -u
top=$(cd "$(dirname "$0")/../.." && pwd) || exit 99
. "$top/tests/checks.sh"
bin=${1:-$top/build/src}
gate=$top/scripts/installed/cqperf-regress
out=${CQPERF_REGRESS_OUT:-$top/results/regress}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cqperf-regress.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
summary() {
	echo "$CHECKS_PASSED passed, $CHECKS_FAILED failed, $CHECKS_SKIPPED skipped"
	[ "$CHECKS_FAILED" -eq 0 ]
	exit
}

if [ -z "${CQPERF_REGRESS_REUSE:-}" ]; then
	"$gate" --bin-dir "$bin" --out "$out" 2>&1 | tee "$tmp/gate.out"
	rc=${PIPESTATUS[0]}
	check "the gate passes against the committed baseline (exit $rc)" \
		test "$rc" -eq 0
fi
check "a measurement to plant regressions into" \
	test -f "$out/measure.json" || summary

mkdir "$tmp/self"
cp "$top/ci/baseline/plan" "$tmp/self/"
"$gate" --record --from "$out" --baseline "$tmp/self" 2>"$tmp/record.err" &&
	python3 "$top/tests/regress/plant.py" sharpen "$tmp/self" -
check "a baseline recorded from this measurement, sharpened to its medians" \
	test -f "$tmp/self/gate.json" || summary
"$gate" --judge "$out" --baseline "$tmp/self" >"$tmp/self.out" 2>&1
check "the measurement passes against itself" test $? -eq 0 ||
	sed 's/^/# /' "$tmp/self.out"

# plant WHAT KIND: a copy of the measurement with KIND planted
# (tests/regress/plant.py) must fail the gate and be named.
plant() {
	local fig rc
	rm -rf "$tmp/p"
	fig=$(python3 "$top/tests/regress/plant.py" "$2" "$out" "$tmp/p")
	rc=$?
	if [ "$rc" -eq 77 ]; then
		skip "$1: no figure's interval resolves it in this measurement"
		return
	fi
	check "$1: planted (in $fig)" test "$rc" -eq 0 || return
	"$gate" --judge "$tmp/p" --baseline "$tmp/self" >"$tmp/cmp.out" 2>&1
	rc=$?
	check "$1: the gate fails (exit $rc)" test "$rc" -eq 1 &&
		check "$1: it names $fig" grep -q "^$fig .*REGRESSED" "$tmp/cmp.out" ||
		sed 's/^/# /' "$tmp/cmp.out"
}
plant "a message rate 15 % lower" rate
plant "one wakeup more a message" wakeup
summary
