#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cq_event_lat: every completion mode and engine option completes and
# reports sane latency; solicited arming, batched acks, non-blocking
# channels, idle cost, mode comparison, histograms and projections.
. "$(dirname "$0")/lib.sh"
require_device

serve cq_event_lat 20

# The server restarts its counters on the first measured ping, after
# counting its receive: 2N - 1 completions (N - 1 receives, N sends).
sane='r["iterations"] == N and 0 < r["lat_us"]["min"] <= r["lat_us"]["p50"]
      <= r["lat_us"]["p99"] <= r["lat_us"]["max"] and
      r["lat_us"]["min"] <= r["lat_us"]["avg"] <= r["lat_us"]["max"] and
      r["server"]["completions"] >= 2 * N - 1'

for mode in poll event hybrid; do
	for size in 64 4096; do
		lat "$mode-$size" --cq-mode "$mode" -s "$size" -n 500
		check "$mode $size B: exit 0 and sane percentiles" json_check \
			"$WORK/$mode-$size.json" "${sane//N/500}" ||
			show "$WORK/$mode-$size.err"
	done
done
check "poll mode never sleeps" json_check "$WORK/poll-64.json" \
	'r["client"]["wakeups"] == 0 and r["server"]["wakeups"] == 0'
# At most one wakeup an exchange; fewer where the reply is already in the
# CQ when a side polls once more before it arms (the client found 527 of
# its 1000 completions so, with 233 wakeups, once in CI): at least one in
# five here, where poll mode has none.
check "event mode: a wakeup for up to every exchange on each side" json_check \
	"$WORK/event-64.json" \
	'0.2 * 500 <= r["client"]["wakeups"] <= 1.05 * 500 and
	 0.2 * 500 <= r["server"]["wakeups"] <= 1.05 * 500'
check "event mode burns less CPU than poll mode" json_check \
	"$WORK/event-64.json" 'r["client"]["cpu_pct"] < '"$(json_get "$WORK/poll-64.json" 'r["client"]["cpu_pct"]')"
# --rtt reports whole round trips: over a run, the latencies add up to
# about the measured time; one-way figures to about half of it.  Each run
# checks itself, so a noisy neighbour cannot flip the verdict.
lat rtt --rtt -n 1000 --cq-mode poll && lat oneway -n 1000 --cq-mode poll
share='r["lat_us"]["avg"] * r["iterations"] / 1e6 / r["client"]["seconds"]'
echo "# share of the run time: rtt $(json_get "$WORK/rtt.json" "$share"), one-way $(json_get "$WORK/oneway.json" "$share")"
check "--rtt: latencies add up to the run time" json_check "$WORK/rtt.json" \
	'd["params"]["rtt"] and 0.7 <= '"$share"' <= 1.02'
check "one-way: latencies add up to half the run time" json_check \
	"$WORK/oneway.json" 'not d["params"]["rtt"] and 0.35 <= '"$share"' <= 0.51'

# --signal-every 8: a send completion for one ping in 8, which retires
# the 7 before it; every exchange still done, and the server's
# completions are its receives and one send in 8 (perftest's way).
lat sig --cq-mode poll --signal-every 8 -s 4096 -n 400 --warmup 0
check "--signal-every 8: one send completion in 8" json_check "$WORK/sig.json" \
	'r["iterations"] == 400 and d["params"]["signal_every"] == 8 and
	 450 <= r["client"]["completions"] <= 451 and
	 448 <= r["server"]["completions"] <= 451' || show "$WORK/sig.err"

# Engine options: solicited arming, batched acks, non-blocking channels.
lat sol --cq-mode event --solicited -n 400
check "--solicited: at most one wakeup per solicited message" json_check \
	"$WORK/sol.json" "${sane//N/400}"' and r["client"]["wakeups"] <= 400 + 2'
lat ack --cq-mode event --ack-batch 128 -n 400
check "--ack-batch 128 ends cleanly, acks in batches" json_check \
	"$WORK/ack.json" "${sane//N/400}"' and
	 r["client"]["events_acked"] % 128 == 0 and
	 r["client"]["wakeups"] - 128 < r["client"]["events_acked"]'
lat nb --cq-mode event --nonblock --idle-sec 2 -n 300
check "--nonblock: completes, and idles without a busy loop" json_check \
	"$WORK/nb.json" "${sane//N/300}"' and r["client"]["idle_cpu_pct"] < 10
	 and r["server"]["idle_cpu_pct"] < 10'
lat hyb --cq-mode hybrid --spin-us 1000 -n 300
check "hybrid with a long spin catches completions while spinning" \
	json_check "$WORK/hyb.json" "${sane//N/300}"' and
	 r["client"]["spin_completions"] > 0'

# Warm-up is excluded on both sides; duration mode uses the histogram.
lat warm --warmup 200 -n 100 --cq-mode event
check "--warmup 200 -n 100: 100 measured, server counts 100 too" json_check \
	"$WORK/warm.json" "${sane//N/100}"' and r["server"]["completions"] <= 2 * 100 + 2'
lat dur -D 2 --cq-mode hybrid
check "-D 2: about 2 s measured" json_check "$WORK/dur.json" \
	'1.8 <= r["client"]["seconds"] <= 4 and r["iterations"] > 10 and
	 r["lat_us"]["min"] <= r["lat_us"]["p50"] <= r["lat_us"]["max"]'

# Mode comparison with idle cost: a row per mode, idle CPU ordered.
lat cmp --compare-modes --idle-sec 2 -n 300 -s 4096
check "--compare-modes: a row per mode" json_check "$WORK/cmp.json" \
	'[x["label"] for x in d["results"]] == ["poll", "event", "hybrid"]'
check "--idle-sec: every side reports idle CPU" json_check "$WORK/cmp.json" \
	'all("idle_cpu_pct" in x[s] for x in d["results"] for s in ("client", "server"))'
idle() { json_get "$WORK/cmp.json" '[x["client"]["idle_cpu_pct"] for x in d["results"] if x["label"] == "'"$1"'"][0]'; }
echo "# idle CPU %: poll $(idle poll), hybrid $(idle hybrid), event $(idle event)"
check "idle CPU: poll spins (> 50 %), event sleeps (< 5 %)" \
	awk -v p="$(idle poll)" -v e="$(idle event)" 'BEGIN { exit !(p > 50 && e < 5) }'
check "idle CPU order: poll > hybrid >= event" \
	awk -v p="$(idle poll)" -v h="$(idle hybrid)" -v e="$(idle event)" \
	'BEGIN { exit !(p > h && h + 0.5 >= e) }'

# Projection from the event-mode row; histogram; -a; human table.
lat proj --compare-modes --project 100g --poll-batch 64 -s 4096 -n 300
check "--project 100g at 4 KiB: 3.05 M completions/s, 47.7 k wakeups/s" \
	json_check "$WORK/proj.json" \
	'abs(d["projection"]["compl_per_s"] - 3.0518e6) < 1e3 and
	 abs(d["projection"]["wakeups_per_s"] - 47684) < 10 and
	 d["projection"]["wakeup_cost_us"] > 0 and d["projection"]["core_pct"] > 0'
lat hist -H -n 300
check "-H: histogram buckets add up to the iterations" json_check \
	"$WORK/hist.json" 'sum(b["count"] for b in r["histogram"]) == 300'
lat all -a -n 20 --warmup 5 -H
check "-a: a row per power of two up to 8 MiB" json_check "$WORK/all.json" \
	'[x["bytes"] for x in d["results"]] == [2 ** k for k in range(1, 24)]'
check "-a -H: each row has its own histogram" json_check "$WORK/all.json" \
	'all(sum(b["count"] for b in x["histogram"]) == 20 for x in d["results"])
	 and d["results"][0]["histogram"] != d["results"][-1]["histogram"]'
"$CQPERF_BIN/cq_event_lat" -d "$DEV" -p "$port" --timeout 20 -n 200 -H \
	--compare-modes --project 100g "$ADDR" >"$WORK/human.txt" 2>&1
check "human table: latency columns, one-way note, histogram, projection" \
	eval 'grep -q "t_min\[usec\].*p50.*t_avg.*t_stdev.*p99.*p99.9.*p99.99.*t_max" "$WORK/human.txt" &&
	      grep -qi "one-way" "$WORK/human.txt" && grep -q "#" "$WORK/human.txt" &&
	      grep -qi "projection" "$WORK/human.txt"' || show "$WORK/human.txt"
fits "cq_event_lat -H --compare-modes --project" "$WORK/human.txt"

stop_server
# Its lines are the serving note and one per client (first_contact.sh),
# a long one folded at 100 columns (continued on indented lines).
check "server stops cleanly on SIGTERM" test "$(sed -e ':a' -e 'N' -e '$!ba' \
	-e 's/\n  */ /g' "$WORK/cq_event_lat.server.err" |
	grep -cvE '^cq_event_lat: (serving on |waiting for a client|client .*: done$)')" -eq 0 ||
	show "$WORK/cq_event_lat.server.err"

# A stalled peer while the client sleeps in a blocking ibv_get_cq_event:
# the watchdog must break the wait at --timeout.
port=$(next_port)
start_server cq_event_lat "$port" --timeout 30 || not_ok "server listens"
"$CQPERF_BIN/cq_event_lat" -d "$DEV" -p "$port" --timeout 3 -D 60 \
	--cq-mode event "$ADDR" >"$WORK/stall.out" 2>"$WORK/stall.err" &
client=$!
sleep 3
kill -STOP "$SERVER_PID"
start=$(date +%s)
wait "$client"
rc=$?
took=$(($(date +%s) - start))
kill -CONT "$SERVER_PID"
stop_server
check "stalled server: blocked client exits 1 (got $rc)" test "$rc" -eq 1 ||
	show "$WORK/stall.err"
check "stalled server: within the 3 s timeout (took $took s)" test "$took" -le 8
check "stalled server: says no completion came" \
	grep -q "no completion for 3 s" "$WORK/stall.err"

# --solicited arms for solicited events only, and our own sends raise
# none: a side that slept waiting for its last send's completion at the end
# of a step stalled until --timeout (1 run in 3 under load).  Steps end
# often with -a; ten runs catch a regression most of the time.
port=$(next_port)
start_server cq_event_lat "$port" --persistent --timeout 20 ||
	not_ok "server listens"
stalls=0
for i in $(seq 1 10); do
	"$CQPERF_BIN/cq_event_lat" -d "$DEV" -p "$port" --timeout 5 -a -n 3 \
		--warmup 1 --cq-mode event --nonblock --solicited --ack-batch 8 \
		"$ADDR" >/dev/null 2>"$WORK/sol.err" || {
		stalls=$((stalls + 1))
		cp "$WORK/sol.err" "$WORK/sol-$i.err"
	}
done
stop_server
check "--solicited -a: ten runs end without a stall ($stalls stalled)" \
	test "$stalls" -eq 0 || show "$WORK"/sol-*.err
# --samples: every measured sample, from which the reported percentiles
# come out again exactly (samples_match, lib.sh).
port=$(next_port)
start_server cq_event_lat:samples "$port" --timeout 20 || not_ok "samples: server listens"
"$CQPERF_BIN/cq_event_lat" -d "$DEV" -p "$port" --timeout 20 -n 200 \
	--compare-modes --samples "$WORK/samples.csv" --output json "$ADDR" \
	>"$WORK/samples.json" 2>"$WORK/samples.err"
rc=$?
wait "$SERVER_PID"
SERVER_PID=
check "--samples: exit 0 (got $rc), 600 samples and a header" \
	test "$rc" -eq 0 -a "$(wc -l <"$WORK/samples.csv")" -eq 601 ||
	show "$WORK/samples.err"
check "--samples: each mode's p50, p99 and max recomputed from the file are the report's" \
	samples_match "$WORK/samples.csv" "$WORK/samples.json"
"$CQPERF_BIN/cq_event_lat" -d "$DEV" -p "$port" --samples /nonexistent/dir/f \
	--timeout 2 "$ADDR" >/dev/null 2>"$WORK/samples-bad.err"
rc=$?
check "--samples into a directory that does not exist: exit 2 (got $rc), naming --samples" \
	eval 'test $rc -eq 2 && grep -q -- "--samples /nonexistent/dir/f" "$WORK/samples-bad.err"' ||
	show "$WORK/samples-bad.err"
finish
