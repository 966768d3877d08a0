#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# A client whose server is not there yet (issue 32), on the loopback with
# no server: on a terminal it says once that it retries, and for how
# long; through a pipe it says nothing until it gives up, then that the
# connection was refused and how to start a server; stopped by SIGTERM
# while it waits, it says it was interrupted, not that its deadline
# passed.  A client with a wrong -d fails at once, before any connect,
# naming it and the devices there are.  A client opens its device first,
# so this needs one: the integration suite runs it in the guest
# (first_contact.sh); elsewhere it skips (77).
#
# Usage: test_client_wait.sh [BINDIR] (default $top_builddir/src under
# automake, else build/src).  Exit 0 all passed, 1 one failed, 99 a binary
# is missing.
set -u

here=$(cd "$(dirname "$0")" && pwd) || exit 99
: "${top_builddir:=$here/../build}"
bindir=${1:-$top_builddir/src}
# shellcheck source=tests/checks.sh
. "$here/checks.sh"

bin=$bindir/cq_poll_bw
[ -x "$bin" ] || { echo "ERROR: $bin missing"; exit 99; }
if [ -z "$(ls -A /sys/class/infiniband 2>/dev/null)" ]; then
	echo "SKIP: no RDMA device here (the guest suite runs this)"
	exit 77
fi
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
# A port nothing listens on: bound and closed again.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
note="cq_poll_bw: no server on 127.0.0.1:$port yet; retrying for 1 s"

if command -v script >/dev/null 2>&1; then
	script -qec "$bin -p $port --timeout 1 127.0.0.1" /dev/null >"$tmp/tty" 2>&1
	check "on a terminal: one note that it retries, and for how long" \
		test "$(grep -cF "$note" "$tmp/tty")" -eq 1 || show "$tmp/tty"
	script -qec "$bin -p $port --timeout 1 --quiet 127.0.0.1" /dev/null \
		>"$tmp/quiet" 2>&1
	check "on a terminal with --quiet: no note" \
		sh -c "! grep -q 'yet; retrying' '$tmp/quiet'" || show "$tmp/quiet"
else
	skip "on a terminal: no script(1) here"
fi
"$bin" -p "$port" --timeout 1 127.0.0.1 >/dev/null 2>"$tmp/pipe"
check "through a pipe: no note, the deadline's error" eval \
	'! grep -q "yet; retrying" "$tmp/pipe" && grep -q "within 1 s" "$tmp/pipe"' ||
	show "$tmp/pipe"
check "refused: says nothing listens, and how to start a server" grep -qF \
	"within 1 s: connection refused, no cq_poll_bw server listens there; start one on that host with \`cq_poll_bw -d DEV\`" \
	"$tmp/pipe" || show "$tmp/pipe"

# A wrong -d: at once, exit 2, before any connect (the server is not
# there either: a client that tried to connect would wait its 30 s).
t0=$(date +%s%N)
"$bin" -d no_such_dev0 -p "$port" --timeout 30 127.0.0.1 >/dev/null 2>"$tmp/dev"
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
check "a wrong -d: exit 2 (got $rc) within 2 s (took $ms ms)" \
	test "$rc" -eq 2 -a "$ms" -lt 2000 || show "$tmp/dev"
check "a wrong -d: names it and lists the devices" \
	grep -Eq -- "--ib-dev no_such_dev0: no such device \(have: [a-z]" \
	"$tmp/dev" || show "$tmp/dev"

"$bin" -p "$port" --timeout 30 127.0.0.1 >/dev/null 2>"$tmp/int" &
pid=$!
sleep 1
kill -TERM "$pid"
wait "$pid"
rc=$?
check "SIGTERM while waiting: exit 1 (got $rc), \"interrupted\", no deadline" \
	eval 'test "$rc" -eq 1 &&
	      grep -q "interrupted while waiting for the server on 127.0.0.1:$port" "$tmp/int" &&
	      ! grep -q "within" "$tmp/int"' || show "$tmp/int"
echo "$CHECKS_PASSED passed, $CHECKS_FAILED failed, $CHECKS_SKIPPED skipped"
[ "$CHECKS_FAILED" -eq 0 ]
