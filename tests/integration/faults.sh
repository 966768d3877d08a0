#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Faults, for every binary, beyond what each binary's own script checks:
# a peer SIGKILLed or SIGSTOPped mid-run, nobody listening, SIGINT.  The
# side left behind ends with exit 1 and a message within its --timeout,
# at once where the peer's channel closed; a persistent server cleans up
# and serves the next client within seconds; the partial report says it
# is partial; nothing stays behind on the device or in the process list.
. "$(dirname "$0")/lib.sh"
require_device
prefer_sanitized

TO=3 # the --timeout of the side that has to notice
CLIENT_PID=
RC=0
TOOK=0
RUN=()

cleanup_faults() {
	[ -n "$CLIENT_PID" ] && kill -CONT "$CLIENT_PID" 2>/dev/null &&
		kill -9 "$CLIENT_PID" 2>/dev/null
	[ -n "$SERVER_PID" ] && kill -CONT "$SERVER_PID" 2>/dev/null
	cleanup
}
trap cleanup_faults EXIT

now_ms() { echo $(($(date +%s%N) / 1000000)); }
secs() { printf '%d.%d' $(($1 / 1000)) $(($1 % 1000 / 100)); }

# long_run TOOL: RUN, the arguments of a run that lasts well past every
# fault below.
long_run() {
	case $1 in
	cm_event_stress) RUN=(-c 1000000 --concurrency 16) ;;
	*) RUN=(-s 1024 -D 60) ;;
	esac
}

# client_bg NAME TOOL PORT ARGS...: a client in the background
# ($CLIENT_PID), its output in $WORK/NAME.out and .err.
client_bg() {
	local name=$1 tool=$2 port=$3
	shift 3
	"$CQPERF_BIN/$tool" -d "$DEV" -p "$port" "$@" "$ADDR" \
		>"$WORK/$name.out" 2>"$WORK/$name.err" &
	CLIENT_PID=$!
}

alive() { # a zombie is not
	local st
	st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) && [ "$st" != Z ]
}

# reap PID FROM_MS LIMIT_S: waits for PID, killing it after LIMIT_S
# seconds; RC is its exit status, TOOK the ms from FROM_MS to its end.
reap() {
	local pid=$1 from=$2 i=0
	while alive "$pid" && [ $i -lt $(($3 * 10)) ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if alive "$pid"; then
		kill -CONT "$pid" 2>/dev/null
		kill -9 "$pid" 2>/dev/null
	fi
	wait "$pid" 2>/dev/null
	RC=$?
	TOOK=$(($(now_ms) - from))
}

res_line() { # the device's resource counts: "pd 1 cq 1 qp 1 ..."
	rdma resource show 2>/dev/null | sed -n "s/^[0-9]*: $DEV: //p"
}
res_count() { res_line | grep -o " $1 [0-9]*" | awk '{print $2}'; }

# Mid-run: both sides have their QPs (CM: some connections), and a
# second more for the traffic to flow.
wait_running() {
	local base=$1 i
	for i in $(seq 1 100); do
		[ "$(res_count qp)" -ge $((base + 2)) ] 2>/dev/null && break
		sleep 0.1
	done
	sleep 1
}

# --- server SIGKILLed mid-run: the client ends within its --timeout,
# naming the peer, with a report marked partial.  (cq_poll_bw and
# ud_send_lat have this in their own scripts.)
server_killed() {
	local tool=$1 port base fault
	port=$(next_port)
	base=$(res_count qp)
	start_server "$tool:sk" "$port" --timeout 30 ||
		not_ok "$tool: server listens"
	long_run "$tool"
	# A long --timeout: the client must notice the dead peer, not its
	# own deadline.
	client_bg "$tool-sk" "$tool" "$port" --timeout 15 "${RUN[@]}" \
		--output json
	wait_running "$base"
	kill -9 "$SERVER_PID"
	fault=$(now_ms)
	wait "$SERVER_PID" 2>/dev/null
	SERVER_PID=
	reap "$CLIENT_PID" "$fault" 20
	CLIENT_PID=
	check "$tool, server killed: client exits 1 (got $RC) at once, long before its 15 s timeout (took $(secs $TOOK) s)" \
		test "$RC" -eq 1 -a "$TOOK" -le 4000 ||
		show "$WORK/$tool-sk.err"
	check "$tool, server killed: the message names the peer" \
		grep -q "$ADDR:$port" "$WORK/$tool-sk.err" ||
		show "$WORK/$tool-sk.err"
	check "$tool, server killed: the report is marked partial" \
		json_check "$WORK/$tool-sk.out" '"error" in d'
}

# --- client SIGKILLed mid-run: a persistent server whose own timeout is
# far off notices the closed channel, says so and serves the next client.
# (ud_send_bw and cm_event_stress have this in their own scripts.)
client_killed() {
	local tool=$1 port base fault
	port=$(next_port)
	base=$(res_count qp)
	start_server "$tool:ck" "$port" --persistent --timeout 15 ||
		not_ok "$tool: server listens"
	long_run "$tool"
	client_bg "$tool-victim" "$tool" "$port" --timeout 15 "${RUN[@]}"
	wait_running "$base"
	kill -9 "$CLIENT_PID"
	fault=$(now_ms)
	wait "$CLIENT_PID" 2>/dev/null
	CLIENT_PID=
	timeout 40 "$CQPERF_BIN/$tool" -d "$DEV" -p "$port" --timeout 15 \
		-s 1024 -n 100 --output json "$ADDR" \
		>"$WORK/$tool-next.json" 2>"$WORK/$tool-next.err"
	RC=$?
	TOOK=$(($(now_ms) - fault))
	check "$tool, client killed: the persistent server served the next client $(secs $TOOK) s after the kill (its timeout: 15 s)" \
		test "$RC" -eq 0 -a "$TOOK" -le 6000 ||
		show "$WORK/$tool-next.err" "$WORK/$tool:ck.server.err"
	check "$tool, client killed: the server named the peer and kept serving" \
		grep -q "peer $ADDR:.*(still serving)" "$WORK/$tool:ck.server.err" ||
		show "$WORK/$tool:ck.server.err"
	stop_server
}

# --- SIGSTOP on the server: the client hits its --timeout; the server,
# continued, finds its client gone and ends too.  (cq_event_lat has the
# first half in its own script.)
server_stopped() {
	local tool=$1 port base fault limit=$((TO + 4))
	port=$(next_port)
	base=$(res_count qp)
	long_run "$tool"
	# A UD sender cannot tell a stopped receiver from a lossy one: it
	# learns at the results, so its run is short.
	if [ "$tool" = ud_send_bw ]; then
		RUN=(-s 1024 -D 2)
		limit=$((TO + 2 + 4))
	fi
	start_server "$tool:ss" "$port" --timeout 30 ||
		not_ok "$tool: server listens"
	client_bg "$tool-ss" "$tool" "$port" --timeout "$TO" "${RUN[@]}"
	wait_running "$base"
	kill -STOP "$SERVER_PID"
	fault=$(now_ms)
	reap "$CLIENT_PID" "$fault" 30
	CLIENT_PID=
	check "$tool, server stopped: client exits 1 (got $RC) at its $TO s deadline (took $(secs $TOOK) s)" \
		test "$RC" -eq 1 -a "$TOOK" -le $((limit * 1000)) ||
		show "$WORK/$tool-ss.err"
	check "$tool, server stopped: the client says what it waited for" \
		grep -q "$TO s" "$WORK/$tool-ss.err" || show "$WORK/$tool-ss.err"
	kill -CONT "$SERVER_PID"
	fault=$(now_ms)
	reap "$SERVER_PID" "$fault" 20
	SERVER_PID=
	check "$tool, server continued: it ends, exit 1 (got $RC), $(secs $TOOK) s later (its timeout: 30 s)" \
		test "$RC" -eq 1 -a "$TOOK" -le 6000 ||
		show "$WORK/$tool:ss.server.err"
}

# --- SIGSTOP on the client: the server hits its --timeout; the client,
# continued, ends too.
client_stopped() {
	local tool=$1 port base fault
	port=$(next_port)
	base=$(res_count qp)
	start_server "$tool:cs" "$port" --timeout "$TO" ||
		not_ok "$tool: server listens"
	long_run "$tool"
	client_bg "$tool-cs" "$tool" "$port" --timeout "$TO" "${RUN[@]}"
	wait_running "$base"
	kill -STOP "$CLIENT_PID"
	fault=$(now_ms)
	reap "$SERVER_PID" "$fault" 30
	SERVER_PID=
	check "$tool, client stopped: server exits 1 (got $RC) at its $TO s deadline (took $(secs $TOOK) s)" \
		test "$RC" -eq 1 -a "$TOOK" -le $(((TO + 4) * 1000)) ||
		show "$WORK/$tool:cs.server.err"
	check "$tool, client stopped: the server says what it waited for" \
		grep -q "$TO s" "$WORK/$tool:cs.server.err" ||
		show "$WORK/$tool:cs.server.err"
	kill -CONT "$CLIENT_PID"
	fault=$(now_ms)
	reap "$CLIENT_PID" "$fault" 20
	CLIENT_PID=
	check "$tool, client continued: it ends, exit 1 (got $RC), $(secs $TOOK) s later" \
		test "$RC" -eq 1 -a "$TOOK" -le 5000 || show "$WORK/$tool-cs.err"
}

# --- SIGINT on the client: the steps done so far, marked partial, exit
# 1; once the server has ended too, the device holds what it held before.
# (cq_poll_bw's own script counts QPs after a poll-mode run.)
sigint() {
	local tool=$1 port base before fault i limit
	shift
	port=$(next_port)
	base=$(res_count qp)
	before=$(res_line)
	# -a: whole steps are done before the signal lands.
	RUN=(-a -D 1)
	[ "$tool" = cm_event_stress ] && long_run "$tool"
	start_server "$tool:int" "$port" --timeout 10 ||
		not_ok "$tool: server listens"
	client_bg "$tool-int" "$tool" "$port" --timeout 10 "${RUN[@]}" "$@" \
		--output json
	wait_running "$base"
	sleep 3
	kill -INT "$CLIENT_PID"
	fault=$(now_ms)
	reap "$CLIENT_PID" "$fault" 20
	CLIENT_PID=
	# cm_event_stress tears down the connections in flight: up to ~5 s.
	limit=3
	[ "$tool" = cm_event_stress ] && limit=8
	check "$tool, SIGINT: client exits 1 (got $RC) in $(secs $TOOK) s" \
		test "$RC" -eq 1 -a "$TOOK" -le $((limit * 1000)) ||
		show "$WORK/$tool-int.err"
	if [ "$tool" = cm_event_stress ]; then
		check "$tool, SIGINT: a JSON report with the error" \
			json_check "$WORK/$tool-int.out" \
			'"interrupt" in d["error"]' || show "$WORK/$tool-int.err"
	else
		check "$tool, SIGINT: the steps done so far, marked partial" \
			json_check "$WORK/$tool-int.out" \
			'"interrupt" in d["error"] and len(d["results"]) >= 1' ||
			show "$WORK/$tool-int.err"
	fi
	reap "$SERVER_PID" "$(now_ms)" 15
	SERVER_PID=
	check "$tool, SIGINT: the server ends too (exit $RC, $(secs $TOOK) s)" \
		test "$RC" -eq 1 || show "$WORK/$tool:int.server.err"
	# The kernel may release a dead context's objects a little later.
	for i in $(seq 1 30); do
		[ "$(res_line)" = "$before" ] && break
		sleep 0.1
	done
	check "$tool, SIGINT: device resources back to '$before' (now '$(res_line)')" \
		test "$(res_line)" = "$before"
}

start=$(now_ms)
baseline=$(res_line)
echo "# device resources at the start: $baseline"

for tool in cq_event_lat ud_send_bw cm_event_stress; do
	server_killed "$tool"
done
for tool in cq_poll_bw cq_event_lat ud_send_lat; do
	client_killed "$tool"
done
for tool in cq_poll_bw ud_send_bw ud_send_lat cm_event_stress; do
	server_stopped "$tool"
done
for tool in cq_poll_bw cq_event_lat ud_send_bw ud_send_lat cm_event_stress; do
	client_stopped "$tool"
done

# --- nobody listening: each client retries until its --timeout, then
# says where it tried.  All at once: they only wait.  (cq_poll_bw has
# this in its own script.)
pids=()
noserver=(cq_event_lat ud_send_bw ud_send_lat cm_event_stress)
ns_start=$(now_ms)
for tool in "${noserver[@]}"; do
	port=$(next_port)
	(
		s=$(now_ms)
		"$CQPERF_BIN/$tool" -d "$DEV" -p "$port" --timeout "$TO" "$ADDR" \
			>/dev/null 2>"$WORK/$tool-ns.err"
		echo "$? $(($(now_ms) - s)) $port" >"$WORK/$tool-ns.rc"
	) &
	pids+=($!)
done
for p in "${pids[@]}"; do
	reap "$p" "$ns_start" 30
done
for tool in "${noserver[@]}"; do
	read -r rc took port <"$WORK/$tool-ns.rc" || rc=x
	check "$tool, no server: exit 1 (got $rc) after retrying about $TO s (took $(secs "${took:-0}") s)" \
		test "$rc" = 1 -a "${took:-0}" -ge $(((TO - 1) * 1000)) \
		-a "${took:-0}" -le $(((TO + 4) * 1000)) || show "$WORK/$tool-ns.err"
	check "$tool, no server: says where it tried" \
		grep -q "$ADDR:$port" "$WORK/$tool-ns.err" || show "$WORK/$tool-ns.err"
done

sigint cq_poll_bw --cq-mode event
sigint cq_event_lat --cq-mode hybrid
sigint ud_send_bw
sigint ud_send_lat
sigint cm_event_stress

check "the device holds what it held at the start ('$baseline')" \
	test "$(res_line)" = "$baseline"
echo "# faults took $(secs $(($(now_ms) - start))) s"
finish
