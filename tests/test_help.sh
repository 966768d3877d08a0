#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# --help read through a pipe, for every binary: no line over 80 columns,
# every option the tool takes (tests/test_options --list, the table)
# listed exactly once, and the headings in their order (issue 32).
#
# Usage: test_help.sh [BINDIR]; BINDIR holds the five binaries (default
# $top_builddir/src under automake, else build/src).  Exit 0 all passed,
# 1 one failed, 77 test_options not built, 99 a binary is missing.
set -u

here=$(cd "$(dirname "$0")" && pwd) || exit 99
: "${top_builddir:=$here/../build}"
bindir=${1:-$top_builddir/src}
lister=$top_builddir/tests/test_options
# shellcheck source=tests/checks.sh
. "$here/checks.sh"

[ -x "$lister" ] || { echo "SKIP: $lister is not built"; exit 77; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
order="Connection: Traffic: Completion: Open loop: Threads: Output:"

for tool in $(cqp_tools); do
	[ -x "$bindir/$tool" ] || { echo "ERROR: $bindir/$tool missing"; exit 99; }
	"$bindir/$tool" --help | cat >"$tmp/help"
	widest=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' \
		"$tmp/help")
	check "$tool --help | cat: no line over 80 columns (widest $widest)" \
		test "$widest" -le 80
	bad=
	for opt in $("$lister" --list | awk -v t="$tool" '$1 == t { print $2 }' |
		sort -u); do
		n=$(grep -cE -- "^  (-., |    )--$opt([=[ ]|\$)" "$tmp/help")
		[ "$n" -eq 1 ] || bad="$bad --$opt ($n)"
	done
	check "$tool --help: every option listed once${bad:+, not:$bad}" \
		test -z "$bad"
	got=$(grep -E '^[A-Z][a-z ]*:$' "$tmp/help" | tr '\n' ' ')
	want=
	for h in Connection: Traffic: Completion: "Open loop:" Threads: Output:; do
		grep -qx -- "$h" "$tmp/help" && want="$want$h "
	done
	check "$tool --help: headings in the order $order (got: $got)" \
		test -n "$got" -a "$got" = "$want"
done
# The soft-RoCE runner: --help says what it does, its options and what a
# command gets, on stdout, exit 0 (it printed one usage line and exited 2).
sr=$here/../scripts/guest/softroce-run.sh
"$sr" --help >"$tmp/sr.out" 2>"$tmp/sr.err"
rc=$?
check "softroce-run.sh --help: exit 0 (got $rc), on stdout" \
	test "$rc" -eq 0 -a ! -s "$tmp/sr.err"
for word in --timeout --mem --out CQPERF_RXE_DEV CQPERF_SERVER_ADDR \
	CQPERF_RXE_GID_INDEX CQPERF_IN_GUEST CQPERF_OUT; do
	check "softroce-run.sh --help: says $word" grep -q -- "$word" "$tmp/sr.out"
done
"$sr" --bogus >/dev/null 2>"$tmp/sr.err"
rc=$?
check "softroce-run.sh --bogus: exit 2 (got $rc), the usage line" \
	eval 'test "$rc" -eq 2 && grep -q "softroce-run.sh \[" "$tmp/sr.err"'
echo "$CHECKS_PASSED passed, $CHECKS_FAILED failed, 0 skipped"
[ "$CHECKS_FAILED" -eq 0 ]
