#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# server_mem (cqperf(7) SERVER MEMORY): what the server says it holds,
# against the kernel's view of its process while the run goes on: its QPs,
# CQs and their entries, and its memory regions (`rdma resource show`),
# and the pages they pin (VmPin in /proc/PID/status); the client's record
# carries the server's figures too.  RC with -q 2, UD with and without an
# SRQ, a ping-pong.
. "$(dirname "$0")/lib.sh"
require_device

# res KIND FIELD: FIELD of each of the server's KIND resources, a line each
# (KIND's lines without FIELD print nothing).
res() {
	rdma resource show "$1" 2>/dev/null | awk -v pid="$SERVER_PID" -v k="$2" '
		{ split("", f); for (i = 1; i < NF; i++) f[$i] = $(i + 1) }
		f["pid"] == pid && (k in f) { print f[k] }'
}

# kernel_view: the server's QPs, CQs, CQ entries, MR bytes and MRs, and
# VmPin in bytes, once its QPs are in RTS (the client is running).
kernel_view() {
	local i
	for i in $(seq 1 100); do
		[ "$(res qp state | grep -c RTS)" -gt 0 ] && break
		sleep 0.1
	done
	echo "$(res qp lqpn | wc -l) $(res cq cqe | wc -l)" \
		"$(res cq cqe | awk '{ n += $1 } END { print n + 0 }')" \
		"$(res mr mrlen | awk '{ n += $1 } END { print n + 0 }')" \
		"$(res mr mrlen | wc -l)" \
		"$(awk '/^VmPin:/ { print $2 * 1024 }' "/proc/$SERVER_PID/status")"
}

# held NAME TOOL ARGS...: a server of TOOL and a 3 s client with ARGS;
# the kernel's view of the server mid-run in $WORK/NAME.kernel, both
# JSON reports in $WORK/NAME.{server,client}.json.
held() {
	local name=$1 tool=$2 port view
	shift 2
	port=$(next_port)
	start_server "$tool:$name" "$port" --timeout 20 --output json "$@" ||
		not_ok "$name: server listens"
	"$CQPERF_BIN/$tool" -d "$DEV" -p "$port" --timeout 20 --output json \
		-D 3 -s 64 "$@" "$ADDR" >"$WORK/$name.client.json" \
		2>"$WORK/$name.client.err" &
	local cpid=$!
	view=$(kernel_view)
	echo "$view" >"$WORK/$name.kernel"
	wait "$cpid"
	check "$name: the client ran" test $? -eq 0 || show "$WORK/$name.client.err"
	wait_server 20
	cp "$WORK/$tool:$name.server.out" "$WORK/$name.server.json"
}

# agrees NAME WANT: the server's server_mem against the kernel's view
# (qps, cqs, cqes, registered_bytes exactly; VmPin the MRs' pages), and
# python WANT over m, its server_mem.
agrees() {
	local name=$1 want=$2 qps cqs cqes mrbytes mrs pin
	read -r qps cqs cqes mrbytes mrs pin <"$WORK/$name.kernel"
	echo "# $name: kernel qps $qps cqs $cqs cqes $cqes mr $mrbytes B in $mrs, VmPin $pin B"
	check "$name: QPs, CQs, CQ entries and registered bytes as the kernel counts them" \
		json_check "$WORK/$name.server.json" "(lambda m: m['qps'] == $qps and
		 m['cqs'] == $cqs and m['cqes'] == $cqes and
		 m['registered_bytes'] == $mrbytes)(d['server_mem'])" ||
		show "$WORK/$name.server.json"
	check "$name: the MRs' pages pinned (VmPin $pin B)" json_check \
		"$WORK/$name.server.json" "0 < d['server_mem']['registered_bytes'] <= $pin
		 < d['server_mem']['registered_bytes'] + ($mrs + 1) * 4096"
	check "$name: $want" json_check "$WORK/$name.server.json" \
		"(lambda m: $want)(d['server_mem'])"
	check "$name: the client's record has the server's figures" python3 -c '
import json, sys
a, b = (json.load(open(f))["server_mem"] for f in sys.argv[1:])
sys.exit(a != b)' "$WORK/$name.server.json" "$WORK/$name.client.json"
}

held rc cq_poll_bw -q 2 --rx-depth 128
agrees rc "m['clients'] == 1 and m['qps'] == 2 and m['srqs'] == 0 and
	m['recv_wqes'] >= 256 and m['per_client'] == {k: m[k] for k in m['per_client']}"
held rc-srq cq_poll_bw -q 4 --srq --rx-depth 256
agrees rc-srq "m['qps'] == 4 and m['srqs'] == 1 and 256 <= m['recv_wqes'] < 4 * 256"
held ud ud_send_bw --rx-depth 256
agrees ud "m['qps'] == 1 and m['srqs'] == 0 and m['recv_wqes'] >= 256"
held ud-srq ud_send_bw -q 2 --srq --rx-depth 256
agrees ud-srq "m['qps'] == 2 and m['srqs'] == 1 and m['recv_wqes'] >= 256"
held lat cq_event_lat
agrees lat "m['qps'] == 1 and m['cqs'] >= 1"

finish
