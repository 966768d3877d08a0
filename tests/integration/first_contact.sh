#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# First contact (issue 32): a server checks its device before it listens
# and fails where the typo was made; it says what it serves and logs each
# client; a client interrupted while it waits for a server says so.
. "$(dirname "$0")/lib.sh"
require_device

netdev=$(rdma link show "$DEV/1" 2>/dev/null | sed -n 's/.* netdev \([^ ]*\).*/\1/p')

# port_state: the port's state as ibv_devinfo shows it.
port_state() {
	ibv_devinfo -d "$DEV" -i 1 | awk '$1 == "state:" { print $2; exit }'
}
# link_up: the netdev up, and the port active again (rxe follows it).
link_up() {
	ip link set "$netdev" up
	for _ in $(seq 1 100); do
		[ "$(port_state)" = PORT_ACTIVE ] && return 0
		sleep 0.1
	done
	return 1
}
trap 'link_up; cleanup' EXIT

# serve_fail NAME ARGS...: a server that should not start; its exit status
# in rc, its time in ms, its stderr in $WORK/NAME.err.
serve_fail() {
	local name=$1 t0
	shift
	t0=$(date +%s%N)
	timeout 20 "$CQPERF_BIN/cq_poll_bw" -p "$(next_port)" "$@" \
		>"$WORK/$name.out" 2>"$WORK/$name.err"
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
}
rerun_nosuchdev() { serve_fail nosuch -d nosuchdev; }
rerun_nosuchdev
check_timed "server -d nosuchdev: exits non-zero within 2 s (rc $rc, $ms ms)" \
	rerun_nosuchdev eval 'test "$rc" -ne 0 -a "$rc" -ne 124 -a "$ms" -lt 2000'
check "server -d nosuchdev: names it and lists $DEV" \
	grep -q "nosuchdev: no such device (have: .*$DEV" "$WORK/nosuch.err" ||
	show "$WORK/nosuch.err"

# A persistent server, the serving lines, one line per client.
port=$(next_port)
start_server cq_poll_bw "$port" --persistent --timeout 20 ||
	not_ok "cq_poll_bw: server listens"
serr=$WORK/cq_poll_bw.server.err
check "the serving line: device, port, GID and TCP port" grep -qE \
	"^cq_poll_bw: serving on $DEV port 1 \(RoCE v2, GID [0-9]+ ::ffff:$ADDR\), TCP $port\$" \
	"$serr" || show "$serr"
check "then: waiting for a client" grep -qx \
	"cq_poll_bw: waiting for a client (Ctrl-C to stop)" "$serr" || show "$serr"
for n in 100 200; do
	timeout 60 "$CQPERF_BIN/cq_poll_bw" -d "$DEV" -p "$port" --timeout 20 \
		-s 1024 -n "$n" "$ADDR" >/dev/null 2>"$WORK/c$n.err" ||
		show "$WORK/c$n.err"
done
check "a persistent server logs one line per client, with what it asked" \
	test "$(grep -cE "^cq_poll_bw: client $ADDR:[0-9]+ \(.*--size 1024 --iters (100|200).*\): done\$" \
		"$serr")" -eq 2 || show "$serr"

# The port down: a new server fails at start naming the state; the
# persistent one fails that client, keeps serving, and serves the next
# once the port is back.
if [ -z "$netdev" ]; then
	not_ok "rdma link shows the netdev of $DEV"
elif ip link set "$netdev" down; then
	for _ in $(seq 1 50); do
		[ "$(port_state)" = PORT_ACTIVE ] || break
		sleep 0.1
	done
	serve_fail down -d "$DEV"
	check "port down: a new server exits non-zero (rc $rc, $ms ms)" \
		test "$rc" -ne 0 -a "$rc" -ne 124 || show "$WORK/down.err"
	check "port down: it says the port is not active" \
		grep -q "$DEV port 1 is .*not ACTIVE" "$WORK/down.err" ||
		show "$WORK/down.err"
	timeout 60 "$CQPERF_BIN/cq_poll_bw" -d "$DEV" -p "$port" --timeout 10 \
		-s 1024 -n 100 "$ADDR" >/dev/null 2>"$WORK/cdown.err"
	check "port down: the persistent server's client fails" test $? -ne 0
	check "port up again" link_up
	timeout 60 "$CQPERF_BIN/cq_poll_bw" -d "$DEV" -p "$port" --timeout 20 \
		-s 1024 -n 300 "$ADDR" >/dev/null 2>"$WORK/cup.err"
	check "port back: the persistent server serves the next client" \
		test $? -eq 0 || show "$WORK/cup.err" "$serr"
else
	not_ok "ip link set $netdev down"
fi
stop_server

# --quiet: nothing on stderr.
port=$(next_port)
start_server cq_poll_bw:quiet "$port" --timeout 20 --quiet ||
	not_ok "cq_poll_bw --quiet: server listens"
timeout 60 "$CQPERF_BIN/cq_poll_bw" -d "$DEV" -p "$port" --timeout 20 \
	-s 1024 -n 100 "$ADDR" >/dev/null 2>&1
wait "$SERVER_PID"
SERVER_PID=
check "a --quiet server says nothing" test ! -s "$WORK/cq_poll_bw:quiet.server.err" ||
	show "$WORK/cq_poll_bw:quiet.server.err"

# A client waiting for a server that is not there, stopped by SIGTERM.
port=$(next_port)
"$CQPERF_BIN/cq_event_lat" -d "$DEV" -p "$port" --timeout 30 "$ADDR" \
	>/dev/null 2>"$WORK/int.err" &
pid=$!
sleep 1
kill -TERM "$pid"
wait "$pid"
rc=$?
check "an interrupted client exits 1 (got $rc) and says it was interrupted" \
	eval 'test "$rc" -eq 1 && grep -q "interrupted while waiting for the server on $ADDR:$port" "$WORK/int.err" && ! grep -q "within" "$WORK/int.err"' ||
	show "$WORK/int.err"

# The client's side of first contact, which needs a device since a client
# opens its own before it connects (the unit suite skips it on a host
# without one): its waits, the refusal's words, a wrong -d.
bash "$(dirname "$0")/../test_client_wait.sh" "$CQPERF_BIN" |
	grep -v '^[0-9]* passed, ' | sed 's/^\(\(not \)\?ok - \)/\1client: /'
finish
