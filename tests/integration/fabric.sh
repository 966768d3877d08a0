#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The fabric choices (cqperf(7) RUNNING ON HARDWARE) on a host whose rxe
# netdev has two addresses, as multi-homed hosts and VLANs give real NICs:
# the GID follows the address the oob connection runs over, on both sides
# and for RC and UD; --gid-index still wins; the Device line and JSON say
# the GID type, the agreed path MTU, the addressing and the granted
# inline size.  (tests/twonode/run.sh has the MTU mismatch.)
. "$(dirname "$0")/lib.sh"
require_device

netdev=$(rdma link show "$DEV/1" 2>/dev/null | sed -n 's/.* netdev \([^ ]*\).*/\1/p')
ADDR2=198.18.3.1
gid2=0000:0000:0000:0000:0000:ffff:c612:0301
[ -n "$netdev" ] || { not_ok "rdma link shows the netdev of $DEV"; finish; }
ip addr add "$ADDR2/24" dev "$netdev" || { not_ok "a second address on $netdev"; finish; }
trap 'ip addr del "$ADDR2/24" dev "$netdev" 2>/dev/null; cleanup' EXIT
# gid_index_of GID: its index in port 1's table ("" while rxe adds it).
gid_index_of() {
	grep -l "^$1\$" /sys/class/infiniband/"$DEV"/ports/1/gids/* 2>/dev/null |
		sed 's|.*/||' | sort -n | head -n 1
}
for _ in $(seq 50); do
	[ -n "$(gid_index_of "$gid2")" ] && break
	sleep 0.1
done
idx2=$(gid_index_of "$gid2")
idx1=$(gid_index_of 0000:0000:0000:0000:0000:ffff:c612:0001)
echo "# $netdev: $ADDR at GID index $idx1, $ADDR2 at $idx2"
check "rxe added a GID for $ADDR2 after $ADDR's" \
	test -n "$idx2" -a -n "$idx1" -a "${idx2:-0}" -gt "${idx1:-0}"

# run TOOL NAME HOST ARGS...: a client run over the oob address HOST
# against a fresh server; JSON in $WORK/NAME.json, the server's in
# $WORK/NAME.server.json.
run() {
	local tool=$1 name=$2 host=$3 port
	shift 3
	port=$(next_port)
	start_server "$tool:$name" "$port" --timeout 20 --output json ||
		not_ok "$name: server listens"
	"$CQPERF_BIN/$tool" -d "$DEV" -p "$port" --timeout 20 --output json \
		"$@" "$host" >"$WORK/$name.json" 2>"$WORK/$name.err"
	local rc=$?
	wait "$SERVER_PID"
	SERVER_PID=
	mv "$WORK/$tool:$name.server.out" "$WORK/$name.server.json"
	return $rc
}
# uses NAME ADDR: both sides ran on ADDR's RoCE v2 GID.
uses() {
	local want='d["device"]["gid"] == "::ffff:'$2'" and
		d["device"]["gid_type"] == "RoCE v2" and
		d["device"]["path_mtu"] == 4096 and
		d["device"]["addressing"] == "GRH"'
	json_check "$WORK/$1.json" "$want" &&
		json_check "$WORK/$1.server.json" "$want"
}

for tool in cq_poll_bw ud_send_lat; do
	run "$tool" "$tool-2nd" "$ADDR2" -n 50 -s 64
	check "$tool over $ADDR2: exit 0" test $? -eq 0 || show "$WORK/$tool-2nd.err"
	# The old rule (the first RoCE v2 IPv4 GID) would take $ADDR's.
	check "$tool over $ADDR2: both sides use its GID (index $idx2)" \
		uses "$tool-2nd" "$ADDR2" || show "$WORK/$tool-2nd.json"
	run "$tool" "$tool-1st" "$ADDR" -n 50 -s 64
	check "$tool over $ADDR: both sides use its GID (index $idx1)" \
		uses "$tool-1st" "$ADDR" || show "$WORK/$tool-1st.json"
done
# The oob over loopback matches no GID: the first RoCE v2 IPv4 one.
run cq_event_lat lo 127.0.0.1 -n 50
check "oob over 127.0.0.1: both sides fall back to $ADDR's GID" \
	uses lo "$ADDR" || show "$WORK/lo.json" "$WORK/lo.err"
run cq_poll_bw forced "$ADDR2" -n 50 -s 64 --gid-index "$idx1"
check "--gid-index $idx1 over $ADDR2: the client uses what it was told" \
	json_check "$WORK/forced.json" \
	'd["device"]["gid"] == "::ffff:'"$ADDR"'" and d["device"]["gid_index"] == '"$idx1" ||
	show "$WORK/forced.json" "$WORK/forced.err"
check "--gid-index: the inline size the QP got is reported" \
	json_check "$WORK/forced.json" 'd["device"]["inline_bytes"] >= 236'

# A --gid-index at an empty entry is refused when the device opens,
# before any QP, with the entries that would work (it used to fail at
# the QP's move to RTR with "No data available").
ngids=$(find /sys/class/infiniband/"$DEV"/ports/1/gids -mindepth 1 | wc -l)
# A client checks its device before it connects: no server needed.
"$CQPERF_BIN/cq_poll_bw" -d "$DEV" -p "$(next_port)" --timeout 20 -n 50 \
	--gid-index 77 "$ADDR" >"$WORK/badgid.json" 2>"$WORK/badgid.err"
check "--gid-index 77 (an empty entry): exit 2" test $? -eq 2
check "... the message names the option, the port's range and the usable GIDs" \
	grep -qF -- "--gid-index 77: the entry is empty; $DEV port 1 has GIDs 0..$((ngids - 1)); usable: 0 (fe80::" \
	"$WORK/badgid.err" || show "$WORK/badgid.err"
check "... $ADDR's and $ADDR2's among them, as RoCE v2" \
	grep -qF "$idx1 (::ffff:$ADDR, RoCE v2), $idx2 (::ffff:$ADDR2, RoCE v2)" \
	"$WORK/badgid.err"
check "... and no queue pair was created" \
	sh -c "! grep -q 'QP\\|RTR' '$WORK/badgid.err'"

port=$(next_port)
start_server cq_poll_bw:human "$port" --timeout 20 || not_ok "human: server listens"
"$CQPERF_BIN/cq_poll_bw" -d "$DEV" -p "$port" --timeout 20 -n 50 "$ADDR2" \
	>"$WORK/human.out" 2>&1
wait "$SERVER_PID"
SERVER_PID=
check "the Device line names the GID type, path MTU and inline size" \
	flat_grep "GID index $idx2 \(::ffff:$ADDR2, RoCE v2\) active MTU 4096 path MTU 4096 link Ethernet inline [0-9]+ " \
	"$WORK/human.out" || show "$WORK/human.out"
# --tclass and --sl reach both sides (tests/twonode/run.sh counts the
# TOS bytes on the wire: rxe loops a local peer's packets back inside the
# driver, past any netdev).  The port's counters over the step are in both
# sides' JSON: rxe's sent_pkts holds at least the 200 sends (one port for
# both sides here).
hw_ok='all(r[s]["hw_counters"]["sent_pkts"] >= 200 and
	r[s]["hw_counters"]["rcvd_pkts"] >= 200 and
	r[s]["hw_counters"].get("send_err", 0) == 0 for s in ("client", "server"))'
for tool in cq_poll_bw ud_send_bw; do
	run "$tool" "$tool-tc" "$ADDR" -n 200 -s 64 --tclass 104 --sl 3
	rc=$?
	check "$tool --tclass 104 --sl 3: exit 0 (got $rc), the server adopts them" \
		json_check "$WORK/$tool-tc.server.json" \
		"$rc == 0 and d['params']['tclass'] == 104 and d['params']['sl'] == 3" ||
		show "$WORK/$tool-tc.err"
	check "$tool: hw_counters deltas on both sides, >= 200 packets each way" \
		json_check "$WORK/$tool-tc.json" "$hw_ok" || show "$WORK/$tool-tc.json"
done
port=$(next_port)
start_server cq_poll_bw:pkey "$port" --timeout 10 || not_ok "pkey: server listens"
"$CQPERF_BIN/cq_poll_bw" -d "$DEV" -p "$port" --timeout 10 --pkey-index 65535 \
	"$ADDR" >/dev/null 2>"$WORK/pkey.err"
rc=$?
wait "$SERVER_PID"
SERVER_PID=
check "--pkey-index 65535: exit 2 (got $rc), naming the port's P_Key range" \
	eval 'test $rc -eq 2 && grep -Eq -- "--pkey-index 65535: port 1 of $DEV has P_Keys 0\.\.[0-9]+" "$WORK/pkey.err"' ||
	show "$WORK/pkey.err"

# A second RDMA device (rxe1 on veth1, 198.18.2.1), as on a host with a
# management NIC: RDMA CM routes by address, whatever -d says.
cm_dev=rxe1
cm_ip=198.18.2.1
peer=$(ip -o link show "$netdev" | sed -n 's/.*@\([^:]*\):.*/\1/p')
if [ -n "$peer" ] && ip addr add "$cm_ip/24" dev "$peer" &&
	rdma link add "$cm_dev" type rxe netdev "$peer"; then
	trap 'rdma link delete "$cm_dev" 2>/dev/null
		ip addr del "$cm_ip/24" dev "$peer" 2>/dev/null
		ip addr del "$ADDR2/24" dev "$netdev" 2>/dev/null; cleanup' EXIT
	for _ in $(seq 50); do
		ibv_devinfo -d "$cm_dev" 2>/dev/null | grep -q PORT_ACTIVE && break
		sleep 0.1
	done
	# pair_on TOOL NAME SERVER_DEV CLIENT_DEV CLIENT_ARGS...: a server
	# of TOOL on SERVER_DEV, a client on CLIENT_DEV (TCP channel over
	# $ADDR); exits in $crc and $src, output in $WORK/NAME.out, NAME.err,
	# NAME.server.err.
	pair_on() {
		local tool=$1 name=$2 sdev=$3 cdev=$4 port
		shift 4
		port=$(next_port)
		"$CQPERF_BIN/$tool" -d "$sdev" -p "$port" --timeout 10 \
			>/dev/null 2>"$WORK/$name.server.err" &
		SERVER_PID=$!
		wait_listen "$port" || not_ok "$name: server listens"
		"$CQPERF_BIN/$tool" -d "$cdev" -p "$port" --timeout 10 "$@" \
			"$ADDR" >"$WORK/$name.out" 2>"$WORK/$name.err"
		crc=$?
		wait "$SERVER_PID"
		src=$?
		SERVER_PID=
	}
	# cm_pair NAME SERVER_DEV CLIENT_DEV CLIENT_ARGS...: UD over RDMA CM,
	# its JSON in $WORK/NAME.json.
	cm_pair() {
		pair_on ud_send_bw "$1" "$2" "$3" --rdma-cm -n 50 --output json \
			"${@:4}"
		mv "$WORK/$1.out" "$WORK/$1.json"
	}
	# Both sides' QPs on rxe1, but RDMA CM resolves $ADDR, rxe0's.
	cm_pair cmdev "$cm_dev" "$cm_dev"
	check "--rdma-cm -d $cm_dev towards $ADDR (rxe0's): exit 2 (got $crc), naming both" \
		eval 'test $crc -eq 2 && grep -q -- "RDMA CM reaches $ADDR through rxe0, but the queue pairs are on $cm_dev" \
		"$WORK/cmdev.err"' || show "$WORK/cmdev.err"
	# The server's side of it: a request that came in on another device.
	cm_pair cmsrv "$DEV" "$cm_dev" --cm-addr "$cm_ip"
	check "a server on $DEV refuses a request that came in on $cm_dev (exit $src)" \
		eval 'test $src -eq 2 && grep -q -- "request came in on $cm_dev, but the queue pairs are on $DEV" \
		"$WORK/cmsrv.server.err"' || show "$WORK/cmsrv.server.err" "$WORK/cmsrv.err"
	# --cm-addr: the TCP channel over $ADDR, RDMA CM over rxe1's address.
	cm_pair cmaddr "$cm_dev" "$cm_dev" --cm-addr "$cm_ip"
	check "--cm-addr $cm_ip: the run works over $cm_dev (exit $crc)" \
		json_check "$WORK/cmaddr.json" \
		"$crc == 0 and d['device']['name'] == '$cm_dev' and r['received'] > 0" ||
		show "$WORK/cmaddr.err"
	# cm_event_stress takes -d as a check of RDMA CM's choice, on each
	# side, never as a word it ignores.
	cm_stress() { pair_on cm_event_stress "$1" "$2" "$3" -c 4; }
	cm_stress cmstress "$DEV" "$cm_dev"
	check "cm_event_stress -d $cm_dev towards $ADDR: exit 2 (got $crc), naming both" \
		eval 'test $crc -eq 2 && grep -q -- "-d $cm_dev: RDMA CM reaches $ADDR through $DEV" \
		"$WORK/cmstress.err"' || show "$WORK/cmstress.err"
	cm_stress cmstress-srv "$cm_dev" "$DEV"
	check "a cm_event_stress server on -d $cm_dev refuses a request on $DEV (exit $src)" \
		eval 'test $src -eq 2 && grep -q -- "-d $cm_dev: a request from $ADDR:[0-9]* came in on $DEV" \
		"$WORK/cmstress-srv.server.err"' ||
		show "$WORK/cmstress-srv.server.err" "$WORK/cmstress-srv.err"
	cm_stress cmstress-ok "$DEV" "$DEV"
	check "cm_event_stress -d $DEV on both sides: runs, the header names it (exit $crc)" \
		eval 'test $crc -eq 0 && grep -q "Device: $DEV (-d), checked against RDMA CM" \
		"$WORK/cmstress-ok.out"' || show "$WORK/cmstress-ok.out" "$WORK/cmstress-ok.err"
else
	not_ok "a second rxe device on $netdev's peer"
fi

# -n on a fast link is milliseconds: cq_poll_bw warms up first, in a
# phase of its own.  Exactly --iters are measured on both sides; rxe's
# sent_pkts says the warm-up went out too.
run cq_poll_bw warm "$ADDR" -n 200 --warmup 300 -q 2 -s 64
rc=$?
check "--warmup 300 -n 200 -q 2: 400 measured on both sides, 1000+ packets sent (exit $rc)" \
	json_check "$WORK/warm.json" "$rc == 0 and r['iterations'] == 400 and
		r['server']['completions'] == 400 and
		r['client']['hw_counters']['sent_pkts'] >= 1000" ||
	show "$WORK/warm.json" "$WORK/warm.err"

# pinned NAME TOOL-COMMAND...: 3 s of event-mode ping-pong against a
# cq_event_lat server run as TOOL-COMMAND; sets main_cpus and wd_cpus (the
# CPUs its benchmark thread and its watchdog thread may use) and wd_woke
# (the watchdog's context switches over one second of it).
pinned() {
	local name=$1 port spid cpid sw0 sw1 t c
	shift
	port=$(next_port)
	"$@" -d "$DEV" -p "$port" --timeout 20 >"$WORK/$name.server.out" \
		2>"$WORK/$name.server.err" &
	SERVER_PID=$!
	spid=$SERVER_PID
	wait_listen "$port" || not_ok "$name: server listens"
	"$CQPERF_BIN/cq_event_lat" -d "$DEV" -p "$port" --timeout 20 -D 3 \
		--cq-mode event "$ADDR" >/dev/null 2>"$WORK/$name.err" &
	cpid=$!
	# The watchdog thread's context switches so far (empty: none yet).
	wd_switches() {
		for t in /proc/"$spid"/task/*; do
			[ "$(cat "$t/comm" 2>/dev/null)" = cqp-watchdog ] &&
				awk '/ctxt_switches/ { n += $2 } END { print n }' \
					"$t/status" 2>/dev/null
		done
	}
	sleep 1
	sw0=$(wd_switches)
	sleep 1
	sw1=$(wd_switches)
	main_cpus='' wd_cpus=''
	for t in /proc/"$spid"/task/*; do
		c=$(awk '/Cpus_allowed_list/ {print $2}' "$t/status" 2>/dev/null)
		case $(cat "$t/comm" 2>/dev/null) in
		cqp-watchdog) wd_cpus=$c ;;
		cq_event_lat) [ "${t##*/}" = "$spid" ] && main_cpus=$c ;;
		esac
	done
	wait "$cpid"
	wait "$SERVER_PID"
	SERVER_PID=
	echo "# $name: watchdog context switches over 1 s of ping-pong: $sw0 -> $sw1"
	wd_woke=$((${sw1:-99} - ${sw0:-0}))
	[ -n "$sw0" ] && [ -n "$sw1" ] || wd_woke=99
}

# --cpu pins the benchmark thread; its watchdog must run elsewhere, and
# there keep quiet: a deadline-exact watchdog would wake at every
# re-armed wait's deadline, the old 50 ms tick 20 times a second, and
# each wakeup lands on the peer's CPU (under TCG that cost the peer 5 %
# of its rate).  Without --cpu the watchdog keeps the CPUs the user gave
# the process: under taskset -c 0 it escaped to the peer's CPU and cost
# ours 3 to 4 % of its event-mode bandwidth (issue 31).
if [ "$(nproc)" -ge 2 ]; then
	pinned pin "$CQPERF_BIN/cq_event_lat" --cpu 0
	check "--cpu 0: the benchmark thread runs on CPU 0 (got '$main_cpus')" \
		test "$main_cpus" = 0
	check "--cpu 0: its watchdog thread runs on the others (got '$wd_cpus')" \
		test -n "$wd_cpus" -a "$wd_cpus" != 0
	check "the watchdog wakes at most 6 times in that second" \
		test "$wd_woke" -le 6
	pinned taskset taskset -c 0 "$CQPERF_BIN/cq_event_lat"
	check "taskset -c 0: the benchmark thread runs on CPU 0 (got '$main_cpus')" \
		test "$main_cpus" = 0
	check "taskset -c 0, no --cpu: the watchdog stays on CPU 0 (got '$wd_cpus')" \
		test "$wd_cpus" = 0
else
	echo "# one CPU: the watchdog has nowhere else to go"
fi
finish
