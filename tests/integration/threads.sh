#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# --threads (cq_poll_bw, cq_event_lat, ud_send_bw): T = 2 in every mode,
# each thread on its own engine and channel, their counts adding up to the row's; --rate split
# over them; --shared-channel loses nothing and moves work between the
# threads; --cpu LIST
# puts thread i on the i-th CPU; a peer killed mid-run ends every thread
# and the process within the deadline (under ASan when built).
. "$(dirname "$0")/lib.sh"
require_device
prefer_sanitized

# both TOOL NAME ARGS...: a --threads 2 client of TOOL with a fresh
# server, its output in $WORK/NAME.json; bw and lat for the two tools.
both() {
	local tool=$1 name=$2 port
	shift 2
	port=$(next_port)
	start_server "$tool:$name" "$port" --timeout 20 ||
		not_ok "$name: server listens"
	"$CQPERF_BIN/$tool" -d "$DEV" -p "$port" --timeout 20 \
		--threads 2 "$@" "$ADDR" >"$WORK/$name.json" 2>"$WORK/$name.err"
	local rc=$?
	wait_server 30
	return $rc
}
bw() { both cq_poll_bw "$@"; }
lat() { both cq_event_lat "$@"; }
ud() { both ud_send_bw "$@"; }

# Per side: two threads, whose completions and CPU add up to the side's,
# each with a channel of its own.
sums='all(len(r[s]["threads"]) == 2 and
	 sum(t["completions"] for t in r[s]["threads"]) == r[s]["completions"] and
	 abs(sum(t["cpu_pct"] for t in r[s]["threads"]) - r[s]["cpu_pct"]) < 0.01 and
	 all(t["foreign_completions"] == 0 for t in r[s]["threads"])
	 for s in ("client", "server"))'
for mode in poll event hybrid; do
	name=threads-$mode
	bw "$name" --cq-mode "$mode" -q 2 -n 300 -s 1024 --cpu 0,1 \
		--output json
	rc=$?
	check "$name: exit 0 (got $rc)" test "$rc" -eq 0 || show "$WORK/$name.err"
	check "$name: every message of both threads' QPs is counted" \
		json_check "$WORK/$name.json" 'r["iterations"] == 2 * 2 * 300 and
		 r["server"]["completions"] == 2 * 2 * 300 and
		 d["params"]["threads"] == 2 and d["params"]["cpu"] == [0, 1]'
	check "$name: per-thread completions and CPU add up to each side's" \
		json_check "$WORK/$name.json" "$sums"
	check "$name: a channel per thread on each side" \
		json_check "$WORK/$name.json" \
		'r["client"]["channels"] == 2 and r["server"]["channels"] == 2'
	check "$name: --cpu 0,1 put thread i on CPU i" \
		json_check "$WORK/$name.json" \
		'[t["cpu"] for t in r["client"]["threads"]] == [0, 1]'
done
check "event mode: each server thread slept on its own channel" \
	json_check "$WORK/threads-event.json" \
	'all(t["wakeups"] > 0 for t in r["server"]["threads"])'

bw channel-per-cq --channel-per-cq -q 3 -n 100 --cq-mode event --output json
check "--channel-per-cq -q 3: three channels a thread, six a side" \
	json_check "$WORK/channel-per-cq.json" \
	'r["client"]["channels"] == 6 and r["server"]["channels"] == 6' ||
	show "$WORK/channel-per-cq.err"
bw duration -D 2 -s 4096 --cq-mode event --output json
check "-D 2: both threads measured for the duration" \
	json_check "$WORK/duration.json" "$sums"' and
	 all(t["completions"] > 0 for t in r["server"]["threads"])' ||
	show "$WORK/duration.err"
bw rate --rate 1000 -n 1000 -s 64 --cq-mode event --output json
check "--rate 1000: split over the threads, their shares adding up" \
	json_check "$WORK/rate.json" '"late_sends" in r and
	 r["offered_rate"] == 1000 and r["iterations"] == 2 * 1000 and
	 0.7 * 1000 <= r["achieved_rate"] <= 1.05 * 1000' ||
	show "$WORK/rate.json" "$WORK/rate.err"
# --shared-channel: the server's threads all sleep on one channel and
# drain whichever CQ the event names.  -r 32 against 3000 messages a QP:
# a receive not reposted stalls the sender; --ack-batch 1 so that every
# event taken is acked by the report.
for mode in event hybrid; do
	name=shared-$mode
	bw "$name" --shared-channel --cq-mode "$mode" -q 2 -n 3000 -r 32 \
		-s 64 --ack-batch 1 --output json
	rc=$?
	check "$name: exit 0 (got $rc)" test "$rc" -eq 0 ||
		show "$WORK/$name.err" "$WORK/cq_poll_bw:$name.server.err"
	check "$name: no message lost, every receive reposted" \
		json_check "$WORK/$name.json" 'r["iterations"] == 2 * 2 * 3000 and
		 r["server"]["completions"] == 2 * 2 * 3000 and
		 sum(t["completions"] for t in r["server"]["threads"]) == 2 * 2 * 3000'
	check "$name: one channel on the server, one a thread on the client" \
		json_check "$WORK/$name.json" \
		'r["server"]["channels"] == 1 and r["client"]["channels"] == 2 and
		 "foreign_completions" not in r["client"]'
	check "$name: events taken = events acked" \
		json_check "$WORK/$name.json" \
		'r["server"]["wakeups"] == r["server"]["events_acked"] > 0'
	check "$name: threads reaped each other's CQs (foreign_completions > 0)" \
		json_check "$WORK/$name.json" \
		'r["server"]["foreign_completions"] > 0 and
		 sum(t["foreign_completions"] for t in r["server"]["threads"]) ==
		   r["server"]["foreign_completions"] and
		 r["server"]["lock_wait_us"] >= 0 and
		 all("lock_wait_us" in t for t in r["server"]["threads"])'
	check "$name: the CQs were destroyed cleanly" \
		eval '! grep -q "ibv_destroy_cq" "$WORK/cq_poll_bw:$name.server.err"' ||
		show "$WORK/cq_poll_bw:$name.server.err"
done

bw vectors --comp-vector auto -q 2 -n 100 --cq-mode event --output json
# rxe gives a vector per CPU of the guest (num_possible_cpus), so the
# spreading runs; a one-vector device says every CQ is on vector 0.
nvec=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["device"].get("comp_vectors", 0))' "$WORK/vectors.json" 2>/dev/null)
check "--comp-vector auto: runs, the JSON gives the device's vectors ($nvec)" \
	json_check "$WORK/vectors.json" 'd["device"]["comp_vectors"] >= 1 and
	 d["params"]["comp_vector"] == -1 and r["iterations"] == 2 * 2 * 100' ||
	show "$WORK/vectors.json" "$WORK/vectors.err"
if [ "${nvec:-0}" = 1 ]; then
	check "--comp-vector auto: says every CQ is on vector 0" \
		grep -q "has 1 completion vector; every CQ is on vector 0" \
		"$WORK/vectors.err"
else
	check "--comp-vector auto: no note on a device with $nvec vectors" \
		eval '! grep -q "completion vector" "$WORK/vectors.err"'
fi

bw human -n 200 --per-thread --cq-mode event
check "--per-thread: a line per thread and side under the table" \
	test "$(grep -cE '^  #[01] on CPU [0-9]+: [0-9]+ completions' "$WORK/human.json")" -eq 4 ||
	show "$WORK/human.json" "$WORK/human.err"
fits "cq_poll_bw --threads --per-thread" "$WORK/human.json"

# cq_event_lat --threads 2: two ping-pongs, their samples merged into the
# row.
for mode in poll event hybrid; do
	name=lat-threads-$mode
	lat "$name" --cq-mode "$mode" -n 300 --cpu 0,1 \
		--samples "$WORK/$name.csv" --output json
	rc=$?
	check "$name: exit 0 (got $rc)" test "$rc" -eq 0 || show "$WORK/$name.err"
	check "$name: both threads' exchanges in the row, per-thread counts adding up" \
		json_check "$WORK/$name.json" 'r["iterations"] == 2 * 300 and
		 r["client"]["channels"] == 2 and r["server"]["channels"] == 2 and
		 [t["cpu"] for t in r["client"]["threads"]] == [0, 1] and
		 all(t["completions"] > 0 for t in r["server"]["threads"])'
	check "$name: per-thread completions and CPU add up to each side's" \
		json_check "$WORK/$name.json" "$sums"
	# The row's percentiles are those of every sample the two threads
	# wrote (nearest rank, one-way: half the round trip).
	check "$name: merged percentiles are exact over both threads' samples" \
		python3 - "$WORK/$name.json" "$WORK/$name.csv" <<'PY' || show "$WORK/$name.err"
import csv, json, math, sys
r = json.load(open(sys.argv[1]))["results"][0]["lat_us"]
v = sorted(float(x["latency_ns"]) / 1e3 for x in csv.DictReader(open(sys.argv[2])))
rank = lambda p: v[max(1, math.ceil(p / 100 * len(v))) - 1]
ok = len(v) == 600 and all(abs(rank(p) - r[k]) < 1e-3 for p, k in
                           ((50, "p50"), (99, "p99"))) and abs(v[0] - r["min"]) < 1e-3
print("# %d samples, p50 %.3f vs %.3f, p99 %.3f vs %.3f" % (len(v), rank(50), r["p50"], rank(99), r["p99"]))
sys.exit(0 if ok else 1)
PY
done
lat lat-open --rate 400 -n 400 --cq-mode event --output json
check "cq_event_lat --rate 400: each thread's open loop at half, the row of both" \
	json_check "$WORK/lat-open.json" 'r["offered_rate"] == 400 and
	 r["iterations"] == 2 * 400 and "late_sends" in r and
	 0.7 * 400 <= r["achieved_rate"] <= 1.05 * 400' ||
	show "$WORK/lat-open.json" "$WORK/lat-open.err"

# ud_send_bw --threads 2: each server thread counts its own QPs'
# datagrams, the row their sums; with --srq one shared receive queue for
# both threads (its memory is one queue's: -r 256 slots of 1024 + 40 B).
for run in poll: event: hybrid:--srq; do
	mode=${run%%:*} srq=${run#*:}
	name=ud-threads-$mode${srq:+-srq}
	# shellcheck disable=SC2086
	ud "$name" -q 2 -n 400 -s 1024 -r 256 --verify --cq-mode "$mode" \
		--cpu 0,1 $srq --output json
	rc=$?
	check "$name: exit 0, every datagram's pattern checked (got $rc)" \
		test "$rc" -eq 0 || show "$WORK/$name.err"
	check "$name: both threads received, the row's counts their sums" \
		json_check "$WORK/$name.json" '0 < r["received"] <= r["sent"] and
		 r["sent"] >= 2 * 2 * 400 and
		 all(t["completions"] > 0 for t in r["server"]["threads"]) and
		 r["client"]["channels"] == 2 and r["server"]["channels"] == 2'
	check "$name: per-thread completions and CPU add up to each side's" \
		json_check "$WORK/$name.json" "$sums"
done
ud ud-shared -q 2 -n 400 -s 1024 -r 256 --verify --cq-mode hybrid \
	--shared-channel --output json
rc=$?
check "ud --shared-channel: exit 0, every datagram's pattern checked (got $rc)" \
	test "$rc" -eq 0 || show "$WORK/ud-shared.err"
check "ud --shared-channel: one server channel, threads reaping each other's CQs" \
	json_check "$WORK/ud-shared.json" '0 < r["received"] <= r["sent"] and
	 r["server"]["channels"] == 1 and r["server"]["foreign_completions"] > 0 and
	 sum(t["foreign_completions"] for t in r["server"]["threads"]) ==
	   r["server"]["foreign_completions"]' || show "$WORK/ud-shared.err"
check "ud --srq: one receive queue for both threads, four without" \
	json_check "$WORK/ud-threads-hybrid-srq.json" \
	'r["server"]["rx_mem_bytes"] == 256 * 1064' &&
	json_check "$WORK/ud-threads-event.json" \
	'r["server"]["rx_mem_bytes"] == 4 * 256 * 1064'

# A killed peer: every thread of the other side stops, the process ends
# within the deadline (5 s), and the error names the failure; with
# --shared-channel too, where the server's threads sleep on one channel.
for victim in server client client-shared lat-server; do
	port=$(next_port)
	tool=cq_poll_bw
	[ "$victim" = lat-server ] && tool=cq_event_lat
	start_server "$tool:kill-$victim" "$port" --timeout 5 ||
		not_ok "kill-$victim: server listens"
	server=$SERVER_PID
	shared=
	[ "$victim" = client-shared ] && shared=--shared-channel
	# shellcheck disable=SC2086
	"$CQPERF_BIN/$tool" -d "$DEV" -p "$port" --timeout 5 --threads 2 \
		-s 4096 -D 60 --cq-mode event $shared "$ADDR" \
		>"$WORK/kill-$victim.out" 2>"$WORK/kill-$victim.err" &
	client=$!
	sleep 3
	if [ "${victim#lat-}" = server ]; then
		kill -9 "$server"
		survivor=$client
		err=$WORK/kill-$victim.err
	else
		kill -9 "$client"
		survivor=$server
		err=$WORK/$tool:kill-$victim.server.err
	fi
	start=$(date +%s)
	wait "$survivor"
	rc=$?
	took=$(($(date +%s) - start))
	wait 2>/dev/null
	SERVER_PID=
	check "kill-$victim: the other side exits 1 (got $rc)" test "$rc" -eq 1 ||
		show "$err"
	check "kill-$victim: every thread ended within the 5 s deadline (took $took s)" \
		test "$took" -le 12
	check "kill-$victim: the message names a thread and the failure" \
		grep -Eqi 'thread [01]: .*(peer|completion|timeout|closed)' "$err" ||
		show "$err"
done
finish
