#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Every binary across two soft-RoCE nodes: the server in one QEMU guest, the
# client in another (scripts/guest/softroce-2node.sh), each guest with its own
# rxe0 on its own NIC.  Run on the host, not in a guest: it boots the guests
# itself, once for all five tools (the server guest serves each tool once,
# the client guest runs the clients in turn), then checks the results here.
# The nodes' netdev MTUs differ (1500 and 4200: every tool must agree on
# the smaller path MTU, and -m above it is refused), and --tclass is
# checked against the TOS byte of the packets on the client's wire
# (roce-tos.py).
# Prints "ok - ..." / "not ok - ..." per check and a last line
# "N passed, N failed, N skipped"; exits 1 on failure, 77 when there is no
# QEMU, static busybox or guest kernel to boot.
#   tests/twonode/run.sh BIN_DIR
# CQPERF_2NODE_TIMEOUT: deadline of the guests in seconds (default 600).
set -u
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")

tools=(cq_poll_bw cq_event_lat ud_send_bw ud_send_lat cm_event_stress)
port_of() { # the OOB (and RDMA CM) port of each tool's server
	case $1 in
	cq_poll_bw) echo 18711 ;; cq_event_lat) echo 18712 ;;
	ud_send_bw) echo 18713 ;; ud_send_lat) echo 18714 ;;
	cm_event_stress) echo 18715 ;;
	mtu) echo 18716 ;;
	tclass-rc) echo 18717 ;; tclass-ud) echo 18718 ;;
	ib-cq_poll_bw) echo 18721 ;; ib-cq_event_lat) echo 18722 ;;
	ib-ud_send_bw) echo 18723 ;; ib-ud_send_lat) echo 18724 ;;
	esac
}
# The RC and UD tools once more as InfiniBand nodes, through the device
# double's mlx5-ib personality (tests/double/double_ib.c): each node has a
# LID, and without -x both address the other by LID alone, no GRH.
ib_tools=(ib-cq_poll_bw ib-cq_event_lat ib-ud_send_bw ib-ud_send_lat)
as_ib() { # as_ib BIN CMD...: CMD under the mlx5-ib personality
	local bin=$1
	shift
	LD_PRELOAD=$bin/../tests/double/libcqpdouble.so \
		CQPERF_TEST_DEVICE=mlx5-ib "$@"
}
# tool_of NAME: the binary of a server/client pair that is not a tool's
# own (the --tclass checks), else NAME itself.
tool_of() {
	case $1 in
	tclass-rc) echo cq_poll_bw ;; tclass-ud) echo ud_send_bw ;;
	ib-*) echo "${1#ib-}" ;;
	*) echo "$1" ;;
	esac
}
# tool_args TOOL client|server: its arguments, one a line.
tool_args() {
	# cm_event_stress finds its device through RDMA CM.
	[ "$1" = cm_event_stress ] || printf '%s\n' -d "${CQPERF_RXE_DEV:-rxe0}"
	printf '%s\n' -p "$(port_of "$1")"
	[ "$2" = client ] || return 0
	case $1 in
	cq_poll_bw) printf '%s\n' -s 4096 -n 500 ;;
	cq_event_lat) printf '%s\n' -n 300 ;;
	ud_send_bw) printf '%s\n' -s 1024 -n 500 ;;
	ud_send_lat) printf '%s\n' -n 300 ;;
	cm_event_stress) printf '%s\n' -c 50 --reject-pct 20 ;;
	esac
}

# --- In the server guest: one server per tool, each serving one client
# and exiting.  A server whose client has not come IDLE seconds after the
# last one ended (or after the start) is stopped, so that the others'
# results still come back.
if [ "${1:-}" = --guest-server ]; then
	bin=$2
	out=$CQPERF_OUT
	idle=${CQPERF_2NODE_IDLE:-60}
	declare -A pid=() want=()
	# Real fabrics mix MTUs: this node's netdev takes 1500 bytes (rxe's
	# active MTU 1024), the client's 4200 (4096).  Every tool must agree
	# on 1024 with the other side.
	ip link set eth0 mtu 1500 || exit 1
	for _ in $(seq 50); do
		ibv_devinfo -d "${CQPERF_RXE_DEV:-rxe0}" | grep -q 'active_mtu:.*1024' && break
		sleep 0.1
	done
	for t in "${tools[@]}"; do
		mapfile -t args <<<"$(tool_args "$t" server)"
		"$bin/$t" "${args[@]}" --timeout 60 --output json \
			>"$out/$t.server.json" 2>"$out/$t.server.err" &
		pid[$t]=$!
		want[$t]=0
	done
	# A client asking for more than this node's MTU: a usage error on
	# both sides.
	"$bin/cq_poll_bw" -d "${CQPERF_RXE_DEV:-rxe0}" -p "$(port_of mtu)" \
		--timeout 60 --output json >"$out/mtu.server.json" \
		2>"$out/mtu.server.err" &
	pid[mtu]=$!
	want[mtu]=2
	# --tclass: the TOS byte of every RoCE v2 packet, counted on the
	# client's wire.
	for t in tclass-rc tclass-ud; do
		tool=$(tool_of "$t")
		"$bin/$tool" -d "${CQPERF_RXE_DEV:-rxe0}" -p "$(port_of "$t")" \
			--timeout 60 --output json >"$out/$t.server.json" \
			2>"$out/$t.server.err" &
		pid[$t]=$!
		want[$t]=0
	done
	for t in "${ib_tools[@]}"; do
		as_ib "$bin" "$bin/$(tool_of "$t")" -d "${CQPERF_RXE_DEV:-rxe0}" \
			-p "$(port_of "$t")" --timeout 60 --output json \
			>"$out/$t.server.json" 2>"$out/$t.server.err" &
		pid[$t]=$!
		want[$t]=0
	done
	echo "# servers started on $CQPERF_NODE_ADDR"
	rc=0
	last=$(date +%s)
	while [ ${#pid[@]} -gt 0 ]; do
		for t in "${!pid[@]}"; do
			kill -0 "${pid[$t]}" 2>/dev/null && continue
			wait "${pid[$t]}"
			r=$?
			echo "$r" >"$out/$t.server.rc"
			echo "# $t server exited $r"
			[ "$r" -eq "${want[$t]}" ] || rc=1
			unset "pid[$t]"
			last=$(date +%s)
		done
		if [ ${#pid[@]} -gt 0 ] && [ $(($(date +%s) - last)) -ge "$idle" ]; then
			for t in "${!pid[@]}"; do
				echo "# $t server: no client within ${idle} s, stopped"
				kill "${pid[$t]}" 2>/dev/null
				wait "${pid[$t]}"
				echo "no client" >"$out/$t.server.rc"
			done
			exit 1
		fi
		sleep 0.2
	done
	exit "$rc"
fi

# --- In the client guest: the clients in turn.  The first one waits for
# the server guest to boot (the clients retry until their --timeout).
if [ "${1:-}" = --guest-client ]; then
	bin=$2
	out=$CQPERF_OUT
	rc=0
	for t in "${tools[@]}"; do
		start=$(date +%s)
		mapfile -t args <<<"$(tool_args "$t" client)"
		timeout 180 "$bin/$t" "${args[@]}" --timeout 90 --output json \
			"$CQPERF_SERVER_ADDR" >"$out/$t.json" 2>"$out/$t.err"
		r=$?
		echo "$r" >"$out/$t.rc"
		echo "# $t client exited $r, $(($(date +%s) - start)) s"
		[ "$r" -eq 0 ] || rc=1
	done
	timeout 180 "$bin/cq_poll_bw" -d "${CQPERF_RXE_DEV:-rxe0}" \
		-p "$(port_of mtu)" -m 2048 --timeout 90 "$CQPERF_SERVER_ADDR" \
		>"$out/mtu.out" 2>"$out/mtu.err"
	r=$?
	echo "$r" >"$out/mtu.rc"
	echo "# cq_poll_bw -m 2048 exited $r"
	[ "$r" -eq 2 ] || rc=1
	for t in "${ib_tools[@]}"; do
		as_ib "$bin" timeout 180 "$bin/$(tool_of "$t")" \
			-d "${CQPERF_RXE_DEV:-rxe0}" -p "$(port_of "$t")" -n 200 \
			-s 256 --timeout 90 --output json "$CQPERF_SERVER_ADDR" \
			>"$out/$t.json" 2>"$out/$t.err"
		r=$?
		echo "$r" >"$out/$t.rc"
		echo "# $t client exited $r"
		[ "$r" -eq 0 ] || rc=1
	done
	for t in tclass-rc tclass-ud; do
		tool=$(tool_of "$t")
		python3 "$(dirname "$0")/roce-tos.py" 120 eth0 >"$out/$t.tos" \
			2>"$out/$t.tos.err" &
		sniffer=$!
		for _ in $(seq 50); do
			grep -q ready "$out/$t.tos.err" 2>/dev/null && break
			sleep 0.1
		done
		timeout 60 "$bin/$tool" -d "${CQPERF_RXE_DEV:-rxe0}" \
			-p "$(port_of "$t")" -n 200 -s 64 --tclass 104 --sl 3 \
			--timeout 30 "$CQPERF_SERVER_ADDR" >/dev/null 2>"$out/$t.err"
		r=$?
		echo "$r" >"$out/$t.rc"
		sleep 0.5
		kill -TERM "$sniffer"
		wait "$sniffer"
		echo "# $tool --tclass 104 exited $r; TOS seen: $(tr '\n' ' ' <"$out/$t.tos")"
		[ "$r" -eq 0 ] || rc=1
	done
	exit "$rc"
fi

# --- On the host.
top=$(cd "$(dirname "$self")/../.." && pwd)
. "$top/tests/checks.sh"
. "$top/tests/twonode/lib.sh"
twonode_preflight "${1:-}" "${tools[@]}"
twonode_out 2node-test
twonode_boot "$self" "$bin"

# Each side used its own node: the client's rxe0 has the client's address,
# the server's the server's (so the traffic crossed the socket network).
client_gid=$(own_gid 198.18.1.2 ffff:c612:102)
server_gid=$(own_gid 198.18.1.1 ffff:c612:101)
common() {
	echo 'd["tool"] == "'"$1"'" and d["role"] == "client" and
	 "error" not in d and len(d["results"]) >= 1'
}
declare -A expect=(
	[cq_poll_bw]='r["bytes"] == 4096 and r["iterations"] == 500 and
		r["bw_avg_gbps"] > 0 and r["msg_rate_mpps"] > 0 and
		r["server"]["completions"] == 500'
	[cq_event_lat]='r["iterations"] == 300 and
		0 < r["lat_us"]["min"] <= r["lat_us"]["p50"] <=
		r["lat_us"]["p99"] <= r["lat_us"]["max"] and
		r["server"]["completions"] >= 2 * 300 - 1'
	[ud_send_bw]='r["bytes"] == 1024 and r["sent"] == 500 and
		0 < r["received"] <= 500 and r["bw_avg_gbps"] > 0 and
		r["server"]["completions"] == r["received"]'
	[ud_send_lat]='r["iterations"] == 300 and
		0 < r["lat_us"]["min"] <= r["lat_us"]["p50"] <=
		r["lat_us"]["p99"] <= r["lat_us"]["max"] and
		r["lost_exchanges"] < 300'
	[cm_event_stress]='d["summary"]["server"]["requests"] == 50 and
		d["summary"]["server"]["rejected"] == 10 and
		d["summary"]["client"]["attempts"] == 50 and
		d["summary"]["client"]["failed"] == 0 and
		d["summary"]["client"]["established"] ==
		d["summary"]["server"]["accepted"] == 40 and
		d["summary"]["client"]["rejected"] == 10'
)
for t in "${tools[@]}"; do
	c=$out/client/$t
	s=$out/server/$t
	r=$(cat "$c.rc" 2>/dev/null || echo none)
	check "$t: client exits 0 across nodes (got $r)" test "$r" = 0 ||
		show "$c.err" "$s.server.err"
	check "$t: client JSON has the expected results" \
		json_check "$c.json" "$(common "$t") and ${expect[$t]}" ||
		show "$c.err"
	if [ "$t" != cm_event_stress ]; then
		check "$t: client ran on its own node's rxe0 (198.18.1.2)" \
			json_check "$c.json" "$client_gid"
	fi
	r=$(cat "$s.server.rc" 2>/dev/null || echo none)
	check "$t: server exits 0 after serving the other node (got $r)" \
		test "$r" = 0 || show "$s.server.err"
	if [ "$t" != cm_event_stress ]; then
		check "$t: server ran on its own node's rxe0 (198.18.1.1)" \
			json_check "$s.server.json" "$server_gid"
	fi
done
# The path MTU is the smaller of the two ports' active MTUs.
for t in cq_poll_bw cq_event_lat ud_send_bw ud_send_lat; do
	check "$t: both sides agree on path MTU 1024 (4096 here, 1024 there)" \
		json_check "$out/client/$t.json" 'd["device"]["active_mtu"] == 4096 and
			d["device"]["path_mtu"] == 1024 and
			d["device"]["gid_type"] == "RoCE v2" and
			d["device"]["addressing"] == "GRH"' ||
		show "$out/client/$t.json"
	check "$t: the server reports the same path MTU" \
		json_check "$out/server/$t.server.json" 'd["device"]["active_mtu"] == 1024 and
			d["device"]["path_mtu"] == 1024'
done
# As InfiniBand nodes: LID routing across the two, both sides agreeing.
for t in "${ib_tools[@]}"; do
	r=$(cat "$out/client/$t.rc" 2>/dev/null || echo none)
	check "$t: client exits 0 as an IB node (got $r)" test "$r" = 0 ||
		show "$out/client/$t.err" "$out/server/$t.server.err"
	for side in client/$t.json server/$t.server.json; do
		check "$t: ${side%%/*} addresses by LID, no GRH, path MTU 1024" \
			json_check "$out/$side" '"error" not in d and
			d["device"]["link_layer"] == "InfiniBand" and
			d["device"]["addressing"] == "LID" and
			d["device"]["path_mtu"] == 1024' || show "$out/$side"
	done
done
r=$(cat "$out/client/mtu.rc" 2>/dev/null || echo none)
check "-m 2048 against a 1024 peer: exit 2 (got $r)" test "$r" = 2
check "-m 2048: the message names --mtu and both ports' MTUs" \
	grep -q -- "--mtu 2048 exceeds the active MTU of the peer's port (4096 here, 1024 on the peer" \
	"$out/client/mtu.err" || show "$out/client/mtu.err"
r=$(cat "$out/server/mtu.server.rc" 2>/dev/null || echo none)
check "-m 2048: the server refuses too, exit 2 (got $r)" test "$r" = 2

for t in tclass-rc tclass-ud; do
	tos=$(awk '{print $1}' "$out/client/$t.tos" 2>/dev/null | tr '\n' ' ')
	n=$(awk '{n += $2} END {print n + 0}' "$out/client/$t.tos" 2>/dev/null)
	check "$t: --tclass 104 puts TOS 104 on all $n RoCE v2 packets (saw: $tos)" \
		test "$tos" = "104 " -a "${n:-0}" -ge 200
done

# RC and UD ping-pong cross the same wire, so their fastest exchanges must
# be alike.  Over QEMU's TCP socket netdev, Nagle held each RC reply behind
# rxe's ACK until a delayed ACK: RC's minimum was 23x UD's (3.3 ms against
# 0.15 ms; p50 26 ms), where over UDP it is 1.2-1.8x.  Minima, not medians:
# host scheduling moves RC's median (more kernel steps in both guests) up
# to 11x UD's, but not the fastest of 300 exchanges.
lat() { json_get "$1" "r['lat_us']['$2']" 2>/dev/null; }
rc=$out/client/cq_event_lat.json ud=$out/client/ud_send_lat.json
echo "# p50: RC $(lat "$rc" p50) us, UD $(lat "$ud" p50) us (not checked)"
rc_min=$(lat "$rc" min) ud_min=$(lat "$ud" min)
check "RC min ($rc_min us) within 10x UD's ($ud_min us) across the nodes" \
	python3 -c 'import sys; sys.exit(not float(sys.argv[1]) <= 10 * float(sys.argv[2]))' \
	"${rc_min:-inf}" "${ud_min:-0}"
check_documents "$out"
echo "$CHECKS_PASSED passed, $CHECKS_FAILED failed, 0 skipped"
[ "$CHECKS_FAILED" -eq 0 ]
