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

# Mid-run: both sides have their QPs (CM: some connections), then the
# port has sent 200 packets more (rxe's counter; a second at most): the
# traffic flows.
pkts() { cat "/sys/class/infiniband/$DEV/ports/1/hw_counters/sent_pkts" 2>/dev/null || echo 0; }
wait_running() {
	local base=$1 i from
	for i in $(seq 1 100); do
		[ "$(res_count qp)" -ge $((base + 2)) ] 2>/dev/null && break
		sleep 0.1
	done
	from=$(pkts)
	for i in $(seq 1 10); do
		sleep 0.1
		[ $(($(pkts) - from)) -ge 200 ] && break
	done
}

# qp_psn PID: the sq-psn of PID's first QP in RTS (nothing while it has
# none): the packets one side sent, whatever else runs beside it.
qp_psn() {
	rdma resource show qp 2>/dev/null | awk -v pid="$1" '
		{ split("", f); for (i = 1; i < NF; i++) f[$i] = $(i + 1) }
		f["pid"] == pid && f["state"] == "RTS" { print f["sq-psn"]; exit }'
}

# cell_running SERVER_PID CLIENT_PID TOOL: both sides have a QP in RTS,
# then the client's has sent 200 packets more (a second at most).  By
# the cell's own processes: the lanes below run cells side by side.
cell_running() {
	local i from now
	for i in $(seq 1 100); do
		[ -n "$(qp_psn "$1")" ] && from=$(qp_psn "$2") &&
			[ -n "$from" ] && break
		sleep 0.1
	done
	# A storm's connections come and go: its QPs are its traffic.
	[ "$3" = cm_event_stress ] && { sleep 0.5; return; }
	for i in $(seq 1 10); do
		sleep 0.1
		now=$(qp_psn "$2")
		[ -n "$now" ] && [ -n "$from" ] &&
			[ $(((now - from) & 0xffffff)) -ge 200 ] && break
	done
}

# --- The fault matrix: every tool, both roles, every verb the tool has,
# each fault (SIGKILL, SIGSTOP) mid-step, the completion mode taken in
# turn from the tool's modes so that every verb meets more than one and
# every mode both roles.  The survivor ends within its deadline (a kill:
# at once; a freeze: its --timeout), non-zero, naming the peer; a
# persistent server says so and serves the next client.
RC_VERBS=(send write-imm write read atomic)
CQ_MODES=(poll event hybrid adaptive timer ski)
CM_MODES=(block nonblock batch)

# wait_line FILE ERE LIMIT_S FROM_MS: waits for a line; TOOK the ms from
# FROM_MS to it (or to the limit).
wait_line() {
	until grep -Eq "$2" "$1" 2>/dev/null; do
		[ $(($(now_ms) - $4)) -lt $(($3 * 1000)) ] || break
		sleep 0.1
	done
	TOOK=$(($(now_ms) - $4))
	grep -Eq "$2" "$1" 2>/dev/null
}

# cell TOOL VERB MODE VICTIM FAULT: one run, VICTIM (client or server)
# frozen (STOP) or killed (KILL) once traffic flows.
cell() {
	local tool=$1 verb=$2 mode=$3 victim=$4 fault=$5 port t0 limit
	local name args=() next=(-n 50) size=(-s 64)
	# A plain WRITE's target polls memory, its only mode.
	[ "$verb" = write ] && mode=mem
	name="$tool-$verb-$mode-$victim-$fault"
	port=$(next_port)
	RUN=(-D 60)
	# Atomics are 8 bytes, which the tools take without -s.
	[ "$verb" = atomic ] && size=()
	case $tool in
	cm_event_stress) args=(--cm-mode "$mode") next=(-c 20) size=()
		RUN=(-c 1000000 --concurrency 16) ;;
	*) [ "$mode" = mem ] || args=(--cq-mode "$mode") ;;
	esac
	[ "$verb" = - ] || args+=(--verb "$verb")
	limit=$([ "$fault" = KILL ] && echo 4 || echo $((TO + 4)))
	# A frozen server whose CPU takes no part in the step (a UD receiver
	# the sender cannot tell from a lossy one; the target of a one-sided
	# verb, which the NIC serves) is learnt of at the results: the run is
	# short, its deadline its length (and warm-up) plus --timeout.
	case $victim$fault:$tool:$verb in
	serverSTOP:ud_send_bw:* | serverSTOP:cq_poll_bw:write | \
		serverSTOP:cq_*:read | serverSTOP:cq_*:atomic)
		RUN=(-D 2)
		limit=$((TO + 2 + 1 + 4))
		;;
	esac
	if [ "$victim" = server ]; then
		start_server "$tool:$name" "$port" --timeout 30 ||
			not_ok "$name: server listens"
		client_bg "$name" "$tool" "$port" --timeout "$TO" \
			"${RUN[@]}" "${size[@]}" "${args[@]}" --output json
	else
		start_server "$tool:$name" "$port" --persistent \
			--timeout "$TO" || not_ok "$name: server listens"
		client_bg "$name" "$tool" "$port" --timeout 30 "${RUN[@]}" \
			"${size[@]}" "${args[@]}"
	fi
	cell_running "$SERVER_PID" "$CLIENT_PID" "$tool"
	t0=$(now_ms)
	if [ "$victim" = server ]; then
		kill "-$fault" "$SERVER_PID"
		reap "$CLIENT_PID" "$t0" $((limit + 10))
		check "$name: the client exits 1 (got $RC) in $(secs "$TOOK") s (limit $limit s)" \
			test "$RC" -eq 1 -a "$TOOK" -le $((limit * 1000)) ||
			show "$WORK/$name.err"
		check "$name: the client names the server and marks its report partial" \
			grep -q "$ADDR:$port" "$WORK/$name.err" &&
			json_check "$WORK/$name.out" '"error" in d' ||
			show "$WORK/$name.err"
		kill -CONT "$SERVER_PID" 2>/dev/null
		kill -9 "$SERVER_PID" 2>/dev/null
		wait "$SERVER_PID" 2>/dev/null
		SERVER_PID=
		CLIENT_PID=
		return
	fi
	kill "-$fault" "$CLIENT_PID"
	wait_line "$WORK/$tool:$name.server.err" \
		"$ADDR:[0-9]+.*\\(still serving\\)" \
		$((limit + 10)) "$t0"
	check "$name: the server names the client in $(secs "$TOOK") s (limit $limit s) and serves on" \
		test $? -eq 0 -a "$TOOK" -le $((limit * 1000)) ||
		show "$WORK/$tool:$name.server.err"
	kill -CONT "$CLIENT_PID" 2>/dev/null
	kill -9 "$CLIENT_PID" 2>/dev/null
	wait "$CLIENT_PID" 2>/dev/null
	CLIENT_PID=
	timeout 30 "$CQPERF_BIN/$tool" -d "$DEV" -p "$port" --timeout 15 \
		"${next[@]}" "${size[@]}" "${args[@]}" "$ADDR" \
		>"$WORK/$name-next.out" \
		2>"$WORK/$name-next.err"
	check "$name: ... and serves the next client (exit $?)" \
		test $? -eq 0 || show "$WORK/$name-next.err"
	stop_server
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
	# (A -D 1 step is a second of warm-up and one measured.)
	sleep 4
	kill -INT "$CLIENT_PID"
	fault=$(now_ms)
	reap "$CLIENT_PID" "$fault" 20
	CLIENT_PID=
	# cm_event_stress tears down the connections in flight: up to ~5 s.
	limit=3
	[ "$tool" = cm_event_stress ] && limit=8
	check "$tool, SIGINT: client exits 1 (got $RC) in $(secs "$TOOK") s" \
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
	check "$tool, SIGINT: the server ends too (exit $RC, $(secs "$TOOK") s)" \
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

# The cells, "LANE TOOL VERB MODE VICTIM FAULT" each, in two lanes side
# by side: the tools in turn, so RC's two (20 cells each) take one each.
cells=() k=0 t=0
while read -r tool; do
	verbs=(-) modes=("${CQ_MODES[@]}")
	case $tool in
	cq_*) verbs=("${RC_VERBS[@]}") ;;
	cm_*) modes=("${CM_MODES[@]}") ;;
	esac
	for verb in "${verbs[@]}"; do
		for victim in client server; do
			for fault in KILL STOP; do
				cells+=("$((t % 2)) $tool $verb ${modes[k % ${#modes[@]}]} $victim $fault")
				k=$((k + 1))
			done
		done
	done
	t=$((t + 1))
done <<<"$(cqp_tools)"

# cells_lane N: lane N's cells, on ports of its own.
cells_lane() {
	local c
	PORT_NEXT=$((PORT_BASE + $1 * 2))
	for c in "${cells[@]}"; do
		# shellcheck disable=SC2086  # the words of a cell
		[ "${c%% *}" = "$1" ] && cell ${c#* }
	done
}
lane even cells_lane 0
lane odd cells_lane 1
lanes_join
echo "# the fault matrix: ${#cells[@]} cells in $(secs $(($(now_ms) - start))) s"

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
