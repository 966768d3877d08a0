#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Fan-in (--clients K): one ud_send_bw server, K client processes.  The
# server's record against its clients' own (each client's sent, what the
# server counted of it, the sums, fairness) and against the kernel (one
# QP for all of them, a ring sized for all); then what must not disturb a
# group: a client asking for another test, a group that never fills, a
# latecomer, a client killed mid-step.
. "$(dirname "$0")/lib.sh"
require_device
prefer_sanitized

K=8
RX=64

# clients N PORT PREFIX ARGS...: N clients ($TOOL) at once, their JSON
# in $WORK/PREFIX.N.json and exit codes in $WORK/PREFIX.N.rc.
TOOL=ud_send_bw
clients() {
	local n=$1 port=$2 prefix=$3 i
	shift 3
	for i in $(seq 1 "$n"); do
		("$CQPERF_BIN/$TOOL" -d "$DEV" -p "$port" --timeout 20 \
			--output json "$@" "$ADDR" >"$WORK/$prefix.$i.json" \
			2>"$WORK/$prefix.$i.err"
		echo $? >"$WORK/$prefix.$i.rc") &
	done
}

# wait_for_file FILE SEC: until FILE exists, at most SEC seconds.
wait_for_file() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# ends_failed WHAT SEC: the server ends its run with a failure, not a
# hang, within SEC seconds from now.
ends_failed() {
	local t0 rc
	t0=$(date +%s)
	wait_server 40
	rc=$?
	check "$1 ends the server's run with a failure (exit $rc)" \
		test "$rc" != 0 -a "$rc" != 124
	check "...within $2 s, not at the step's end ($(($(date +%s) - t0)) s)" \
		test $(($(date +%s) - t0)) -lt "$2"
}

# all_ok PREFIX N: every client of PREFIX exited 0.
all_ok() {
	local i
	for i in $(seq 1 "$2"); do
		[ "$(cat "$WORK/$1.$i.rc" 2>/dev/null)" = 0 ] || {
			show "$WORK/$1.$i.err"
			return 1
		}
	done
}

# --- K clients, one server ---
port=$(next_port)
start_server ud_send_bw:group "$port" --timeout 20 --output json \
	--clients $K --join-timeout 60 || not_ok "server of $K listens"
clients $K "$port" c -s 64 -n 1000 --rx-depth $RX --cq-depth 128
wait_server 120
check "the server of $K clients exits 0" test $? -eq 0 ||
	show "$WORK/ud_send_bw:group.server.err"
wait
check "its $K clients exit 0" all_ok c $K
srv=$WORK/ud_send_bw:group.server.out
check "the server's row is the group's: $K clients, their rates summed" \
	python3 - "$srv" "$WORK"/c.*.json <<'EOF'
import json, math, sys
s = json.load(open(sys.argv[1]))
cs = [json.load(open(f)) for f in sys.argv[2:]]
r = s["results"][0]
each = r["clients"]
assert r["client_count"] == len(each) == len(cs), r["client_count"]
assert len({c["address"] for c in each}) == len(cs)
# What each client sent, by its own count, is what the server lists.
mine = sorted((c["results"][0]["sent"], c["results"][0]["received"]) for c in cs)
theirs = sorted((c["sent"], c["received"]) for c in each)
assert mine == theirs, (mine, theirs)
assert r["sent"] == sum(c["sent"] for c in each)
assert r["received"] == sum(c["received"] for c in each)
rate = sum(c["results"][0]["msg_rate_mpps"] for c in cs)
# JSON keeps 9 digits of each figure.
assert math.isclose(r["msg_rate_mpps"], rate, rel_tol=1e-6), (r, rate)
rates = [c["msg_rate_mpps"] for c in each]
jain = sum(rates) ** 2 / (len(rates) * sum(x * x for x in rates))
assert math.isclose(r["fairness"], jain, rel_tol=1e-6) and 0 < jain <= 1
assert math.isclose(r["slowest_mpps"], min(rates), rel_tol=1e-6)
assert s["server_mem"]["clients"] == len(cs)
EOF
check "one UD QP serves all $K, its ring $K x --rx-depth $RX" json_check "$srv" \
	"d['server_mem']['qps'] == 1 and d['server_mem']['recv_wqes'] >= $K * $RX"
check "...on a CQ that takes the whole ring, whatever --cq-depth the clients gave" \
	json_check "$srv" "d['server_mem']['cqes'] >= d['params']['rx_depth'] == $K * $RX"
check "its log line says what the clients asked, not the ring it grew" grep -qE \
	"$K clients, first [0-9.:]+ \(.*--rx-depth ${RX}[ )].*: done" \
	"$WORK/ud_send_bw:group.server.err" || show "$WORK/ud_send_bw:group.server.err"
check "the server says who sent and who was lost, per client" json_check "$srv" \
	"all('loss_pct' in c and 'rx_dry' in c for c in d['results'][0]['clients'])"

# --- RC: a QP per client QP, on the thread's CQs ---
# rc_group NAME K ARGS...: a cq_poll_bw server of K clients with ARGS,
# the kernel's count of its QPs mid-run in $WORK/NAME.kqps.
rc_group() {
	local name=$1 k=$2 port i
	shift 2
	port=$(next_port)
	TOOL=cq_poll_bw
	start_server "cq_poll_bw:$name" "$port" --timeout 20 --output json \
		--clients "$k" --join-timeout 60 || not_ok "$name: server listens"
	clients "$k" "$port" "$name" -s 64 -D 2 "$@"
	for i in $(seq 1 100); do
		[ "$(rdma resource show qp 2>/dev/null |
			grep "pid $SERVER_PID " | grep -c RTS)" -gt 0 ] && break
		sleep 0.1
	done
	rdma resource show qp 2>/dev/null | grep -c "pid $SERVER_PID " \
		>"$WORK/$name.kqps"
	wait_server 60
	check "$name: the server of $k clients exits 0" test $? -eq 0 ||
		show "$WORK/cq_poll_bw:$name.server.err"
	wait
	check "$name: its clients exit 0" all_ok "$name" "$k"
	TOOL=ud_send_bw
}
rc_group rc 4 -q 2 --rx-depth 128
srv=$WORK/cq_poll_bw:rc.server.out
check "rc: 4 clients of -q 2 hold 8 QPs on the thread's 2 CQs (kernel: $(cat "$WORK/rc.kqps"))" \
	json_check "$srv" "(lambda m: m['qps'] == 8 == $(cat "$WORK/rc.kqps") and
	 m['cqs'] == 2 and m['recv_wqes'] >= 8 * 128 and m['clients'] == 4)(d['server_mem'])"
check "rc: the row sums its clients' rates" python3 - "$srv" "$WORK"/rc.*.json <<'EOF'
import json, math, sys
s = json.load(open(sys.argv[1]))
cs = [json.load(open(f)) for f in sys.argv[2:]]
r = s["results"][0]
assert r["client_count"] == len(r["clients"]) == len(cs) == 4
rate = sum(c["results"][0]["msg_rate_mpps"] for c in cs)
assert math.isclose(r["msg_rate_mpps"], rate, rel_tol=1e-6), (r, rate)
assert sorted(c["msg_rate_mpps"] for c in r["clients"]) == \
    sorted(c["results"][0]["msg_rate_mpps"] for c in cs)
EOF
rc_group rcsrq 4 -q 2 --srq --rx-depth 128
check "rc --srq: 8 QPs on one shared receive queue, its slots not 8 times over" \
	python3 - "$WORK/cq_poll_bw:rc.server.out" "$WORK/cq_poll_bw:rcsrq.server.out" <<'EOF'
import json, sys
rc, srq = (json.load(open(f))["server_mem"] for f in sys.argv[1:])
assert srq["qps"] == 8 and srq["srqs"] == 1 and rc["srqs"] == 0, srq
assert 128 <= srq["recv_wqes"] < 8 * 128 <= rc["recv_wqes"], (srq, rc)
EOF
rc_group rct 3 --threads 2
check "rc, --threads 2: 3 clients' 6 QPs over the server's 2 threads" \
	json_check "$WORK/cq_poll_bw:rct.server.out" \
	"d['server_mem']['qps'] == 6 and len(d['results'][0]['server']['threads']) == 2"

# --- the sweep over group sizes ---
out=$WORK/ksweep
"$(dirname "$0")/../../scripts/installed/cqperf-sweep" --tool ud_send_bw \
	--bin-dir "$CQPERF_BIN" --start-server --port "$(next_port)" \
	--out "$out" --clients 1,3 --client-args "-d $DEV -n 500 --timeout 20" \
	--server-args "-d $DEV --timeout 20" --grid size=64 \
	>"$WORK/ksweep.out" 2>"$WORK/ksweep.err"
check "cqperf-sweep --clients 1,3 runs a server of each size (exit $?)" \
	grep -qx "2 runs, 0 failed" "$WORK/ksweep.out" ||
	show "$WORK/ksweep.out" "$WORK/ksweep.err"
check "...each point's document the server's, the group's row at 3" \
	python3 - "$out" <<'EOF'
import csv, json, os, sys
d = sys.argv[1]
one = json.load(open(os.path.join(d, "ud_send_bw-clients_1-size_64.json")))
three = json.load(open(os.path.join(d, "ud_send_bw-clients_3-size_64.json")))
assert one["role"] == three["role"] == "server"
assert "client_count" not in one["results"][0]
assert three["results"][0]["client_count"] == 3
assert three["server_mem"]["clients"] == 3
mine = [json.load(open(os.path.join(d, "sweep",
        "ud_send_bw-clients_3-size_64.client-%d.json" % i))) for i in range(3)]
assert sum(m["results"][0]["sent"] for m in mine) == three["results"][0]["sent"]
rows = list(csv.DictReader(open(os.path.join(d, "results.csv"))))
assert [r["clients"] for r in rows] == ["1", "3"], rows
EOF

# --- a client asking for another test is refused, naming the option ---
port=$(next_port)
start_server ud_send_bw:odd "$port" --timeout 20 --clients 2 \
	--join-timeout 60 || not_ok "server of 2 listens"
clients 1 "$port" a -s 64 -n 500
sleep 1
clients 1 "$port" b -s 128 -n 500
wait_for_file "$WORK/b.1.rc" 60
check "the odd client is refused (exit $(cat "$WORK/b.1.rc"))" \
	test "$(cat "$WORK/b.1.rc")" != 0
check "...naming the option and both values" grep -q \
	"size 128, where the group of 2 clients runs --size 64" "$WORK/b.1.err" ||
	show "$WORK/b.1.err"
clients 1 "$port" c2 -s 64 -n 500
wait_server 60
check "the group then runs" test $? -eq 0 ||
	show "$WORK/ud_send_bw:odd.server.err"
wait
check "...for its two clients" all_ok a 1 && all_ok c2 1

# --- a group that never fills ---
port=$(next_port)
start_server ud_send_bw:short "$port" --timeout 20 --clients 3 \
	--join-timeout 2 || not_ok "server of 3 listens"
clients 1 "$port" s -s 64 -n 500
wait_server 30
rc=$?
check "a group that does not fill ends the server with a failure (exit $rc)" \
	test "$rc" != 0 -a "$rc" != 124
check "...naming how many came" grep -q \
	"join-timeout 2 s: 1 of 3 clients came" "$WORK/ud_send_bw:short.server.err" ||
	show "$WORK/ud_send_bw:short.server.err"
wait
check "...and the client hears why" grep -q "1 of 3 clients came" \
	"$WORK/s.1.err" || show "$WORK/s.1.err"

# --- a latecomer, and a client killed mid-step ---
port=$(next_port)
start_server ud_send_bw:lost "$port" --timeout 5 --clients 2 \
	--join-timeout 60 || not_ok "server of 2 listens"
clients 2 "$port" l -s 64 -D 30
sleep 3
clients 1 "$port" late -s 64 -n 100
wait_for_file "$WORK/late.1.rc" 30
check "a third client is refused at once: server full" grep -q \
	"server full: 2 clients" "$WORK/late.1.err" || show "$WORK/late.1.err"
kill -9 "$(pgrep -f -- "-p $port .*-D 30 $ADDR" | head -1)"
ends_failed "a client killed mid-step" 25
check "...naming the lost client" grep -qE \
	"client .*(closed|gone|hung up|failed)|peer .*(closed|gone)" \
	"$WORK/ud_send_bw:lost.server.err" || show "$WORK/ud_send_bw:lost.server.err"
wait

# --- a client that freezes mid-step: its silence is named ---
port=$(next_port)
start_server ud_send_bw:frozen "$port" --timeout 3 --clients 2 \
	--join-timeout 60 || not_ok "server of 2 listens"
clients 2 "$port" f -s 64 -D 2
sleep 1.5
frozen=$(pgrep -f -- "-p $port .*-D 2 $ADDR" | head -1)
kill -STOP "$frozen"
ends_failed "a frozen client" 15
kill -CONT "$frozen" 2>/dev/null
check "...naming the silent client" grep -qE \
	"no datagram and no word from client [0-9.:]+ for 3 s" \
	"$WORK/ud_send_bw:frozen.server.err" || show "$WORK/ud_send_bw:frozen.server.err"
wait

# --- --max-mem bounds the server across its clients ---
port=$(next_port)
start_server ud_send_bw:mem "$port" --timeout 20 --clients 16 \
	--max-mem 1M || not_ok "server of 16 listens"
clients 1 "$port" m -s 1024 --rx-depth 64 -n 100
wait_for_file "$WORK/m.1.rc" 30
check "a group whose rings pass --max-mem is refused (exit $(cat "$WORK/m.1.rc"))" \
	test "$(cat "$WORK/m.1.rc")" != 0
check "...naming --max-mem (16 clients' rings: 16 x 64 x 1064 B)" grep -q \
	"above this server's --max-mem of 1048576" "$WORK/m.1.err" || show "$WORK/m.1.err"
stop_server
finish
