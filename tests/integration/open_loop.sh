#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cq_event_lat --rate: an open loop that keeps its schedule (achieved
# rate, arrival spread, bursts), times each request from when it was due
# (a stalled server shows, as ping-pong cannot show it), and what the
# server's mode costs at a low rate; --rates maps the strategy; the
# bandwidth tools' --rate paces their sends.
. "$(dirname "$0")/lib.sh"
require_device

serve cq_event_lat 20

# stall_server AFTER SEC: SIGSTOP the server AFTER seconds from now, for SEC.
stall_server() {
	(sleep "$1" && kill -STOP "$SERVER_PID" && sleep "$2" &&
		kill -CONT "$SERVER_PID") &
	STALL_PID=$!
}

# over_ms CSV MS: how many samples of the file took longer than MS.
over_ms() {
	python3 -c 'import csv,sys; print(sum(float(r["latency_ns"]) > float(sys.argv[2]) * 1e6 for r in csv.DictReader(open(sys.argv[1]))))' "$1" "$2"
}

# The closed-loop maximum bounds the rates below.
lat max -n 2000
max=$(json_get "$WORK/max.json" 'int(r["iterations"] / r["client"]["seconds"])')
rate=$((max / 2 < 2000 ? max / 2 : 2000))
echo "# closed loop: $max exchanges/s; open loop at $rate/s"

# 3 s: a TCG stall of tens of ms at the very end stays under 2 %.
fixed() { lat fixed --rate "$rate" -n $((rate * 3)) --cq-mode event --samples "$WORK/fixed.csv"; }
fixed
check_timed "fixed arrivals: achieved rate within 2 % of offered, spread < 0.1" fixed \
	json_check "$WORK/fixed.json" 'r["offered_rate"] == '"$rate"' and
	 abs(r["achieved_rate"] / r["offered_rate"] - 1) <= 0.02 and
	 r["arrival_cv"] < 0.1 and r["iterations"] == 3 * '"$rate"' and
	 0 < r["service_lat_us"]["p50"] <= r["lat_us"]["p50"] + 1e-6' ||
	show "$WORK/fixed.json" "$WORK/fixed.err"
check "--samples: the file's p50, p99 and max are the report's" \
	samples_match "$WORK/fixed.csv" "$WORK/fixed.json"
check "--samples: scheduled <= posted, rate column" python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
sys.exit(not rows or any(int(r["scheduled_ns"]) > int(r["posted_ns"]) or
                         r["rate"] != sys.argv[2] for r in rows))' \
	"$WORK/fixed.csv" "$rate"

poisson() { lat poisson --rate "$rate" --arrival poisson -n $((rate * 2)) --cq-mode event; }
poisson
check_timed "poisson arrivals: spread 0.85..1.15, rate within 10 %" poisson json_check \
	"$WORK/poisson.json" '0.85 <= r["arrival_cv"] <= 1.15 and
	 abs(r["achieved_rate"] / r["offered_rate"] - 1) <= 0.1 and
	 d["params"]["arrival"] == "poisson"' || show "$WORK/poisson.err"

lat burst --rate "$rate" --arrival burst:32 -t 64 -r 64 -n $((rate * 2)) \
	--cq-mode event
check "burst:32 in event mode: more than one completion per server wakeup" \
	json_check "$WORK/burst.json" 'r["server"]["compl_per_wakeup"] > 1 and
	 d["params"]["arrival"] == "burst:32"' || show "$WORK/burst.err"

# onoff:100,200: 7 ON windows of R/10 requests, about 2 s.  The schedule,
# not the guest's pace: scheduled times in 10 ms bins from the first hold
# R/100 in ON (bins 0..9 of each 30) and none in OFF.
lat onoff --rate "$rate" --arrival onoff:100,200 -n $((rate * 7 / 10)) \
	--warmup 0 --samples "$WORK/onoff.csv"
check "onoff:100,200: ~R/100 a 10 ms bin while ON, none while OFF" python3 -c '
import csv, json, sys
rate = int(sys.argv[3])
t = [int(r["scheduled_ns"]) for r in csv.DictReader(open(sys.argv[1]))]
bins = [0] * 191 # the last: anything past the 7th ON window
for x in t:
    bins[min((x - t[0]) // 10000000, 190)] += 1
on = [c for b, c in enumerate(bins[:190]) if b % 30 < 10]
off = [c for b, c in enumerate(bins) if b % 30 >= 10]
print("# onoff: ON bins hold %d..%d, OFF bins %d" % (min(on), max(on), sum(off)))
sys.exit(len(t) != rate * 7 // 10 or sum(off) or
         any(abs(c - rate / 100) > 2 for c in on) or
         json.load(open(sys.argv[2]))["params"]["arrival"] != "onoff:100,200")' \
	"$WORK/onoff.csv" "$WORK/onoff.json" "$rate" || show "$WORK/onoff.err"

# A sleeping load: the client waits on its channel until a reply comes
# or its next request is due, and keeps the rate all the same.
client_event() { lat client-event --rate "$rate" -n $((rate * 3)) --cq-mode poll --client-cq-mode event; }
client_event
check_timed "--client-cq-mode event: the client sleeps, the rate holds within 2 %" client_event \
	json_check "$WORK/client-event.json" 'r["client"]["wakeups"] > 0 and
	 r["server"]["wakeups"] == 0 and
	 abs(r["achieved_rate"] / r["offered_rate"] - 1) <= 0.02 and
	 d["params"]["client_cq_mode"] == "event"' ||
	show "$WORK/client-event.json" "$WORK/client-event.err"

# At about 1 % of the maximum an event-mode server sleeps between
# requests; a polling one burns its core all the same.
low=$((max / 100 > 50 ? max / 100 : 50))
low_runs() {
	lat low-event --rate "$low" -n $((low * 2)) --cq-mode event
	lat low-poll --rate "$low" -n $((low * 2)) --cq-mode poll
}
low_runs
check_timed "at $low/s the poll-mode server uses > 90 % of a core" low_runs \
	json_check "$WORK/low-poll.json" 'r["server"]["cpu_pct"] > 90'
# Against the polling server of the same run, not a fixed share: a TCG
# wakeup costs 150 to 500 us of CPU from one run to the next.
fifth() {
	python3 -c 'import json, sys
cpu = [json.load(open(f))["results"][0]["server"]["cpu_pct"] for f in sys.argv[1:]]
print("# event %.1f %% vs poll %.1f %%" % tuple(cpu))
sys.exit(not cpu[0] < cpu[1] / 5)' "$WORK/low-event.json" "$WORK/low-poll.json"
}
check_timed "at $low/s the event-mode server uses under a fifth of the polling one's CPU" \
	low_runs fifth || show "$WORK/low-event.json"

# Coordinated omission: a 300 ms stall of the server mid-run.  Open
# loop: every request due meanwhile waits for it, and says so; the
# service time (from the post) stays what it was.
stall_server 1.5 0.3
lat stall --rate "$rate" -n $((rate * 3)) --cq-mode event --samples "$WORK/stall.csv"
wait "$STALL_PID"
slow=$(over_ms "$WORK/stall.csv" 150)
echo "# open loop: $slow of $((rate * 3)) requests above 150 ms"
check "open loop: a 300 ms stall shows in >= 0.4 R S response times" \
	test "$slow" -ge $((rate * 3 * 4 / 100)) || show "$WORK/stall.err"
# Measured against the stall, not the unstalled run: the burst of late
# posts queues behind itself, and TCG noise alone doubled that median in CI.
check "open loop: the stall's requests are late sends, service p50 < 1/10 of the stall" \
	json_check "$WORK/stall.json" 'r["late_sends"] > 0 and
	 r["service_lat_us"]["p50"] < 30000 and r["lat_us"]["p99"] >= 150000'
stall_server 1.5 0.3
lat stall-pp -D 3 --cq-mode event --samples "$WORK/stall-pp.csv"
wait "$STALL_PID"
slow=$(over_ms "$WORK/stall-pp.csv" 150)
echo "# ping-pong: $slow samples above 150 ms"
check "ping-pong: the same stall hides in one or two samples" \
	test "$slow" -le 2 -a "$(json_get "$WORK/stall-pp.json" 'r["iterations"]')" -gt 100

# The map: a row per rate in every mode, and the cheapest server whose
# p99 is within the slack of the best, recomputed here from the rows.
# Under TCG a wakeup adds hundreds of microseconds to the tail, and a p99
# of 600 samples is their sixth worst: at the default 10 % (and even at
# 100 %) a sleeping server wins or loses by noise.  1000 % here: the test
# is of the choice's arithmetic and of what it favours at a low rate.
lat sweep --rates "$low,$rate,max" --compare-modes -n 600 --p99-slack 1000 \
	--samples "$WORK/sweep.csv"
check "--rates with --compare-modes: closed row, then 3 rates x 3 modes" \
	json_check "$WORK/sweep.json" 'len(d["results"]) == 10 and
	 "offered_rate" not in d["results"][0] and
	 [x["offered_rate"] for x in d["results"][1:7]] == ['"$low"'] * 3 + ['"$rate"'] * 3 and
	 d["results"][9]["offered_rate"] == int(d["results"][0]["iterations"] /
	                                        d["results"][0]["client"]["seconds"])' ||
	show "$WORK/sweep.err"
check "--samples of a sweep: every rate's figures are the file's" \
	samples_match "$WORK/sweep.csv" "$WORK/sweep.json"
check "strategy: the least server CPU within 1000 % of the best p99, per rate" \
	json_check "$WORK/sweep.json" '
	 len(d["strategy"]) == 3 and all(
	   s["choice"] == min((x for x in d["results"][1:]
	                        if x["offered_rate"] == s["offered_rate"] and
	                        x["lat_us"]["p99"] <= 11.0 * min(y["lat_us"]["p99"]
	                          for y in d["results"][1:]
	                          if y["offered_rate"] == s["offered_rate"])),
	                       key=lambda x: x["server"]["cpu_pct"])["label"]
	   for s in d["strategy"]) and isinstance(d["crossovers"], list)'
check "strategy at $low/s: a sleeping server (event or hybrid)" json_check \
	"$WORK/sweep.json" 'd["strategy"][0]["choice"] in ("event", "hybrid")' ||
	show "$WORK/sweep.json"

# --spin-us LIST: a hybrid row per budget, in ping-pong and in the map.
lat spins --cq-mode hybrid --spin-us 0,2000 -n 300
check "--spin-us 0,2000: a row each; the long spin catches more spinning" \
	json_check "$WORK/spins.json" '[x["label"] for x in d["results"]] ==
	 ["hybrid:0", "hybrid:2000"] and d["params"]["spin_us"] == [0, 2000] and
	 d["results"][1]["client"]["spin_pct"] > d["results"][0]["client"]["spin_pct"]' ||
	show "$WORK/spins.json" "$WORK/spins.err"
lat spinmap --rates "$low,$rate" --compare-modes --spin-us 0,200 -n 300
check "--rates with --spin-us: every budget is a mode of the map" \
	json_check "$WORK/spinmap.json" 'len(d["results"]) == 8 and
	 all(len(s["modes"]) == 4 for s in d["strategy"]) and
	 {m["mode"] for m in d["strategy"][0]["modes"]} ==
	 {"poll", "event", "hybrid:0", "hybrid:200"}' ||
	show "$WORK/spinmap.json" "$WORK/spinmap.err"

# The other formats carry the same figures.
"$CQPERF_BIN/cq_event_lat" -d "$DEV" -p "$port" --timeout 20 --output csv \
	--rate "$rate" -n 500 "$ADDR" >"$WORK/csv.out" 2>&1
check "CSV: offered, achieved, late, spread and service columns" grep -q \
	'offered_rate,achieved_rate,late_sends,arrival_cv,service_lat_us_min' \
	"$WORK/csv.out" || show "$WORK/csv.out"
"$CQPERF_BIN/cq_event_lat" -d "$DEV" -p "$port" --timeout 20 \
	--rate "$rate" -n 500 "$ADDR" >"$WORK/human.out" 2>&1
check "human: the header says open loop and which side runs which mode" \
	flat_grep "Open loop: $rate requests/s, fixed arrivals.*client polls.*server reaps in poll" \
	"$WORK/human.out" || show "$WORK/human.out"
"$CQPERF_BIN/cq_event_lat" -d "$DEV" -p "$port" --timeout 20 \
	--rates "$low,$rate" --compare-modes -n 300 "$ADDR" >"$WORK/map.out" 2>&1
check "human: one strategy line per rate" test "$(grep -c "^  at [0-9]*/s: [a-z]*, p99 " "$WORK/map.out")" -eq 2 ||
	show "$WORK/map.out"
fits "cq_event_lat --rate" "$WORK/human.out"
fits "cq_event_lat --rates --compare-modes" "$WORK/map.out"
stop_server

# UD: the same open loop; a request whose reply never comes is counted
# lost after --retry-us, not retried and not in the percentiles.
port=$(next_port)
CQPERF_TEST_DROP_EVERY=50 start_server ud_send_lat "$port" --persistent \
	--timeout 20 || not_ok "ud_send_lat server listens"
# --retry-us 200 ms: a TCG stall of the client or the guest past it loses
# every request in flight (400 at 2000/s); 50 ms lost 5 % more in CI.
ud_open() {
	"$CQPERF_BIN/ud_send_lat" -d "$DEV" -p "$port" --timeout 20 --output json \
		--rate "$rate" -n $((rate * 3)) --warmup 0 --retry-us 200000 \
		--cq-mode event --samples "$WORK/ud.csv" "$ADDR" >"$WORK/ud.json" 2>"$WORK/ud.err"
}
ud_open
check_timed "ud_send_lat --rate: one in 50 lost (and what TCG stalls add), counted" ud_open \
	json_check "$WORK/ud.json" '0.02 * '$((rate * 3))' <= r["lost_exchanges"] <= 0.06 * '$((rate * 3))' and
	 r["iterations"] == '$((rate * 3))' - r["lost_exchanges"]' ||
	show "$WORK/ud.json" "$WORK/ud.err"
check_timed "ud_send_lat --rate: paced, and never waited past --retry-us" ud_open \
	json_check "$WORK/ud.json" 'abs(r["achieved_rate"] / r["offered_rate"] - 1) <= 0.02 and
	 r["service_lat_us"]["max"] <= 200000 and r["arrival_cv"] < 0.1' ||
	show "$WORK/ud.err"
check "ud_send_lat --samples: the file's figures are the report's" \
	samples_match "$WORK/ud.csv" "$WORK/ud.json"
stop_server

# Paced bandwidth: the receiver's mode at a partial load.
for tool in cq_poll_bw ud_send_bw; do
	port=$(next_port)
	start_server "$tool" "$port" --persistent --timeout 20 ||
		not_ok "$tool server listens"
	paced() {
		"$CQPERF_BIN/$tool" -d "$DEV" -p "$port" --timeout 20 --output json \
			--rate 1k -n 3000 -s 64 --cq-mode event --project 100g "$ADDR" \
			>"$WORK/$tool-rate.json" 2>"$WORK/$tool-rate.err"
	}
	paced
	# 1k/s: far below the model's knee 1/t (t, the CPU of a wakeup, is
	# 150 to 500 us under TCG), so min(R, 1/t) is R whatever t did.
	check_timed "$tool --rate 1k: achieved within 2 %, spread < 0.1, receiver sleeps" paced \
		json_check "$WORK/$tool-rate.json" 'r["offered_rate"] == 1000 and
		 abs(r["achieved_rate"] / 1000 - 1) <= 0.02 and r["arrival_cv"] < 0.1 and
		 abs(r["msg_rate_mpps"] * 1e6 - r["achieved_rate"]) < 1 and
		 r["server"]["wakeups"] > 0 and r["server"]["cpu_pct"] < 90' ||
		show "$WORK/$tool-rate.json" "$WORK/$tool-rate.err"
	check_timed "$tool --rate --project: measured wakeups/s within 25 % of the model" paced \
		json_check "$WORK/$tool-rate.json" '
		 abs(d["projection_check"]["measured_wakeups_per_s"] /
		     d["projection_check"]["model_wakeups_per_s"] - 1) <= 0.25 and
		 d["projection"]["wakeup_cost_us"] > 0'
	stop_server
done

# A paced sender polls without a deadline of its own: a receiver that
# stalls (its receives run out, RNR retries forever) must still end the
# run at --timeout, not hang it.
port=$(next_port)
start_server cq_poll_bw "$port" --timeout 20 || not_ok "cq_poll_bw server listens"
stall_server 1 6
start=$(date +%s)
"$CQPERF_BIN/cq_poll_bw" -d "$DEV" -p "$port" --timeout 3 --rate 5k -n 100000 \
	-s 64 "$ADDR" >"$WORK/bw-stall.out" 2>"$WORK/bw-stall.err"
rc=$? took=$(($(date +%s) - start))
wait "$STALL_PID"
check "paced cq_poll_bw, receiver stalled: exit 1 at --timeout (got $rc after $took s)" \
	test "$rc" -eq 1 -a "$took" -le 8 || show "$WORK/bw-stall.err"
check "paced cq_poll_bw, receiver stalled: it says why" \
	grep -q "no send completed for 3 s" "$WORK/bw-stall.err"
stop_server
finish
