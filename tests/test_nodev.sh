#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# A server or a client on a machine with no RDMA device at all (this
# suite's host, before any guest boots) exits at once, with the "no RDMA device" status
# (77) and the hint that fits, instead of listening for a client that
# could not be served (issue 32).  Skips (77) where a device exists.
#
# Usage: test_nodev.sh [BINDIR] (default $top_builddir/src under
# automake, else build/src).  Exit 0 all passed, 1 one failed, 77 skipped,
# 99 a binary is missing.
set -u

here=$(cd "$(dirname "$0")" && pwd) || exit 99
: "${top_builddir:=$here/../build}"
bindir=${1:-$top_builddir/src}
# shellcheck source=tests/checks.sh
. "$here/checks.sh"

if [ -n "$(ls -A /sys/class/infiniband 2>/dev/null)" ]; then
	echo "SKIP: this machine has RDMA devices"
	exit 77
fi
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
port=$((20000 + $$ % 5000))
for tool in $(cqp_tools); do
	[ -x "$bindir/$tool" ] || { echo "ERROR: $bindir/$tool missing"; exit 99; }
	t0=$(date +%s%N)
	timeout 20 "$bindir/$tool" -p "$port" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	# Not a timing check: a server that listens waits the 20 s out.
	check "$tool server, no device: exit 77 at once (got $rc after $ms ms)" \
		test "$rc" -eq 77 -a "$ms" -lt 10000 || show "$tmp/err"
	check "$tool server, no device: the hint" \
		grep -q "no RDMA device found: .*modprobe rdma_rxe.*quick start" \
		"$tmp/err" || show "$tmp/err"
	check "$tool server, no device: nothing on stdout" test ! -s "$tmp/out"
	# A client too, before it connects (nothing listens on the port).
	t0=$(date +%s%N)
	timeout 20 "$bindir/$tool" -p "$port" --timeout 10 127.0.0.1 \
		>"$tmp/out" 2>"$tmp/err"
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	check "$tool client, no device: exit 77 before it connects (got $rc after $ms ms)" \
		test "$rc" -eq 77 -a "$ms" -lt 5000 || show "$tmp/err"
	check "$tool client, no device: the hint" \
		grep -q "no RDMA device found: .*quick start" "$tmp/err" ||
		show "$tmp/err"
done
echo "$CHECKS_PASSED passed, $CHECKS_FAILED failed, 0 skipped"
[ "$CHECKS_FAILED" -eq 0 ]
