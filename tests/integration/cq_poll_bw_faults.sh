#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Failures end quickly and clearly: a killed server, no server at all, bad
# flags, device limits, a client the server must reject, SIGINT.
. "$(dirname "$0")/lib.sh"
require_device

# A server killed mid-run: the client exits 1 within --timeout.
port=$(next_port)
start_server cq_poll_bw "$port" --timeout 5 || not_ok "server listens"
"$CQPERF_BIN/cq_poll_bw" -d "$DEV" -p "$port" --timeout 5 -s 4096 -D 60 \
	"$ADDR" >"$WORK/killed.out" 2>"$WORK/killed.err" &
client=$!
sleep 3
kill -9 "$SERVER_PID"
SERVER_PID=
start=$(date +%s)
wait "$client"
rc=$?
took=$(($(date +%s) - start))
check "killed server: client exits 1 (got $rc)" test "$rc" -eq 1 ||
	show "$WORK/killed.err"
check "killed server: client gives up within the 5 s timeout (took $took s)" \
	test "$took" -le 12
check "killed server: the message names the failure" \
	grep -Eqi 'peer|completion|timeout' "$WORK/killed.err"
check "killed server: partial results are marked" \
	grep -q 'partial' "$WORK/killed.out"

# Nobody listening: retries until the deadline, then says so.
port=$(next_port)
start=$(date +%s)
"$CQPERF_BIN/cq_poll_bw" -d "$DEV" -p "$port" --timeout 2 "$ADDR" \
	>/dev/null 2>"$WORK/noserver.err"
rc=$?
took=$(($(date +%s) - start))
check "no server: exit 1 (got $rc)" test "$rc" -eq 1
check "no server: retried about 2 s (took $took s)" \
	test "$took" -ge 1 -a "$took" -le 8
check "no server: says where it tried" grep -q "$ADDR:$port" "$WORK/noserver.err" ||
	show "$WORK/noserver.err"

# Usage errors: exit 2 and the option's name.
bad_flag() { # bad_flag NEEDLE ARGS...
	local needle=$1
	shift
	"$CQPERF_BIN/cq_poll_bw" "$@" >/dev/null 2>"$WORK/bad.err"
	local rc=$?
	check "cq_poll_bw $*: exit 2 naming $needle (got $rc)" \
		eval 'test $rc -eq 2 && grep -q -- "$needle" "$WORK/bad.err"'
}
bad_flag --size -s 0 "$ADDR"
bad_flag --cq-mode --cq-mode busy "$ADDR"
bad_flag --tx-depth --tx-depth 99999 "$ADDR"
bad_flag bogus --bogus "$ADDR"

# Device limits, checked once the server has the client's parameters.
port=$(next_port)
start_server cq_poll_bw "$port" --persistent --timeout 10 --max-mem 1M ||
	not_ok "server listens"
limit() { # limit NEEDLE EXPECTED_RC ARGS...
	local needle=$1 want=$2
	shift 2
	"$CQPERF_BIN/cq_poll_bw" -d "$DEV" -p "$port" --timeout 10 -n 10 "$@" \
		"$ADDR" >/dev/null 2>"$WORK/limit.err"
	local rc=$?
	check "cq_poll_bw $*: exit $want naming '$needle' (got $rc)" \
		eval 'test $rc -eq $want && grep -q -- "$needle" "$WORK/limit.err"' ||
		show "$WORK/limit.err"
}
limit "max-mem" 1 -s 4M
# Small buffers, large queues: the estimate of the queues counts too.  A
# SEND's buffers are two: the one it sends from, the one it receives into.
limit "needs 4196352 bytes (2048 of buffers, about 4194304 of queues)" 1 \
	-s 1024 --tx-depth 8192 --rx-depth 8192
limit "grants at most" 2 -s 64 -I 4000
limit "CQ moderation" 1 -s 64 --cq-mod 16,10
limit "completion vectors 0.." 2 -s 64 --comp-vector 1000
limit "--cpu 4000" 2 -s 64 --cpu 4000
# ...and the persistent server still serves the next good client.
"$CQPERF_BIN/cq_poll_bw" -d "$DEV" -p "$port" --timeout 10 -s 1024 -n 100 \
	--output json "$ADDR" >"$WORK/after.json" 2>"$WORK/after.err"
check "server serves a good client after refusals" json_check \
	"$WORK/after.json" 'r["iterations"] == 100' || show "$WORK/after.err"
stop_server

# SIGINT mid-run: partial results, exit 1, resources released.
port=$(next_port)
start_server cq_poll_bw "$port" --timeout 10 || not_ok "server listens"
"$CQPERF_BIN/cq_poll_bw" -d "$DEV" -p "$port" --timeout 10 -s 4096 -D 60 \
	--output json "$ADDR" >"$WORK/int.json" 2>"$WORK/int.err" &
client=$!
sleep 3
kill -INT "$client"
wait "$client"
rc=$?
check "SIGINT: client exits 1 (got $rc)" test "$rc" -eq 1
check "SIGINT: a JSON document with the error" json_check "$WORK/int.json" \
	'"interrupt" in d["error"]' || show "$WORK/int.err"
wait "$SERVER_PID" 2>/dev/null
SERVER_PID=
check "SIGINT: no QP left behind" test \
	"$(rdma resource show qp 2>/dev/null | grep -c 'type RC')" -eq 0

# CQPERF_TRACE=oob: each side logs every frame it sends and receives, by
# name, and every wait, so a stuck pair shows who waits for what.
port=$(next_port)
CQPERF_TRACE=oob start_server cq_poll_bw "$port" --timeout 10 ||
	not_ok "trace: server listens"
CQPERF_TRACE=oob "$CQPERF_BIN/cq_poll_bw" -d "$DEV" -p "$port" --timeout 10 \
	-s 64 -n 100 "$ADDR" >"$WORK/trace.out" 2>"$WORK/trace.err"
check "CQPERF_TRACE=oob: the run still succeeds" test $? -eq 0
wait "$SERVER_PID"
SERVER_PID=
for f in "-> HELLO" "-> PARAMS" "<- ACCEPT" "oob waits for RESULTS" "-> RESULTS" "<- RESULTS"; do
	check "trace: the client logs '$f'" grep -qF -- "$f" "$WORK/trace.err" ||
		show "$WORK/trace.err"
done
check "trace: the server logs the client's PARAMS with their text" \
	grep -qE -- "cq_poll_bw\[[0-9]+\] oob \+[0-9.]+ s <- PARAMS [0-9]+ B from .*: .*iters=100" \
	"$WORK/cq_poll_bw.server.err" || show "$WORK/cq_poll_bw.server.err"
check "trace: nothing on stdout" sh -c "! grep -q ' oob ' '$WORK/trace.out'"

# --max-run-sec 2: a -D 30 client is ended within 4 s with the reason, in
# poll and in event mode, and the server serves the next client.
port=$(next_port)
start_server cq_poll_bw "$port" --persistent --timeout 10 --max-run-sec 2 ||
	not_ok "--max-run-sec: server listens"
for mode in poll event; do
	t0=$(date +%s%N)
	"$CQPERF_BIN/cq_poll_bw" -d "$DEV" -p "$port" --timeout 10 -s 4096 \
		-D 30 --cq-mode "$mode" --output json "$ADDR" \
		>"$WORK/maxrun-$mode.json" 2>"$WORK/maxrun-$mode.err"
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	check "--max-run-sec 2, $mode: a -D 30 client exits 1 (got $rc) within 4 s (${ms} ms)" \
		test "$rc" -eq 1 -a "$ms" -lt 4000
	check "--max-run-sec 2, $mode: its stderr gives the server's reason" \
		grep -q "ended the client's run at this server's --max-run-sec of 2 s" \
		"$WORK/maxrun-$mode.err" || show "$WORK/maxrun-$mode.err"
done
"$CQPERF_BIN/cq_poll_bw" -d "$DEV" -p "$port" --timeout 10 -s 1024 -n 100 \
	--output json "$ADDR" >"$WORK/maxrun-next.json" 2>"$WORK/maxrun-next.err"
check "--max-run-sec: the server serves the next client" json_check \
	"$WORK/maxrun-next.json" 'r["iterations"] == 100' ||
	show "$WORK/maxrun-next.err"
check "--max-run-sec: the server logs each ended run, still serving" \
	test "$(grep -c "max-run-sec of 2 s (still serving)" \
		"$WORK/cq_poll_bw.server.err")" -eq 2 ||
	show "$WORK/cq_poll_bw.server.err"
stop_server

finish
