#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The completion policies (cqperf(7) POLICIES) in both RC tools: each runs,
# loses nothing, and its counters add up (completions caught spinning
# plus those after a wakeup are all of them); each shows its own mark
# (empty:N and ski sleep, timer naps, ski and adaptive measure a wakeup,
# adaptive learns a budget); the strategy map takes them; and
# --poll-batch auto grows the batch when completions queue up.
. "$(dirname "$0")/lib.sh"
require_device

policies="empty:8 timer ski ski:rand adaptive"
adds_up='all(s[k] >= 0 for k in ("spin_us", "naps", "budget_mean_us",
	  "wake_cpu_us")) and
	 s["spin_completions"] + s["sleep_completions"] == s["completions"]'

# cq_event_lat: one client, a row per policy, both sides in its mode.
serve cq_event_lat 20
lat pp --compare-modes "${policies// /,}" -n 300 --warmup 50
check "cq_event_lat: a row per policy, every exchange done" json_check \
	"$WORK/pp.json" '[r["label"] for r in d["results"]] ==
	 "'"$policies"'".split() and
	 all(r["iterations"] == 300 for r in d["results"]) and
	 "error" not in d' || show "$WORK/pp.err"
check "cq_event_lat: each side's counters add up" json_check "$WORK/pp.json" \
	'all((lambda s: '"$adds_up"')(r[side]) for r in d["results"]
	     for side in ("client", "server"))'
# Ping-pong under TCG: a round trip is hundreds of us, far more than 8
# empty polls.
check "empty:8 sleeps on every side" json_check "$WORK/pp.json" \
	'all(r[s]["wakeups"] > 0 for r in d["results"] if r["label"] ==
	     "empty:8" for s in ("client", "server"))'
check "timer naps and reports its nap as the budget" json_check \
	"$WORK/pp.json" 'all(r["server"]["naps"] > 0 and
	 r["server"]["budget_mean_us"] > 0 for r in d["results"]
	 if r["label"] == "timer")'
check "ski, ski:rand and adaptive measure a wakeup's CPU" json_check \
	"$WORK/pp.json" 'all(r["server"]["wake_cpu_us"] > 0 or
	 r["server"]["wakeups"] == 0 for r in d["results"]
	 if r["label"] in ("ski", "ski:rand", "adaptive"))'
# The budget follows the estimate as wakeups are measured, and under TCG
# one early wakeup can cost 10x the final median, so the row's budgets are
# not tied to its last estimate here (test_policy checks the rule exactly);
# a unit slip (ns for us) or a budget of nothing shows.
check "ski and ski:rand spin a budget of the order of a wakeup" json_check \
	"$WORK/pp.json" 'all(0 < r["server"]["budget_p50_us"] and
	 r["server"]["budget_p99_us"] < 10000 for r in d["results"]
	 if r["label"] in ("ski", "ski:rand") and r["server"]["wakeups"])'

# The human report: a policy line per side, within 100 columns.
"$CQPERF_BIN/cq_event_lat" -d "$DEV" -p "$port" --timeout 20 \
	--cq-mode adaptive -n 200 "$ADDR" >"$WORK/human.out" 2>&1
check "human report: the policy's own line" grep -Eq \
	'^ +policy +spin ms +naps +budget us +budget p99 +wake CPU us' \
	"$WORK/human.out" || show "$WORK/human.out"
fits "cq_event_lat --cq-mode adaptive" "$WORK/human.out"

# Open loop: the map over policies names one of them at each rate.
lat map --rates 300,1500 --compare-modes poll,event,empty:16,timer,adaptive \
	-n 300 --warmup 20
check "the map: a row per policy and rate, a choice at each rate" json_check \
	"$WORK/map.json" 'len(d["results"]) == 10 and
	 len(d["strategy"]) == 2 and all(s["choice"] in
	 ("poll", "event", "empty:16", "timer", "adaptive")
	 for s in d["strategy"])' || show "$WORK/map.err"
# 5 ms between messages, far above a wakeup's cost: ski sleeps through
# most gaps.  A first, cold wakeup once set its estimate alone (9.6 ms),
# and ski then spun through every gap and never slept to learn better.
lat ski-open --cq-mode ski --rate 200 -n 100 --warmup 10
check "ski at 200/s: the server sleeps, timing each wakeup on the wall clock" \
	json_check "$WORK/ski-open.json" 'r["server"]["wakeups"] >= 50 and
	 r["server"]["wake_wait_us"] > 0 and r["server"]["wake_reap_us"] > 0' ||
	show "$WORK/ski-open.json" "$WORK/ski-open.err"
stop_server

# cq_poll_bw: each policy moves every message; its counters add up.
serve cq_poll_bw 20
for mode in $policies; do
	client "$WORK/bw-$mode.json" --cq-mode "$mode" -s 4096 -n 1500 \
		--warmup 0 --output json
	check "cq_poll_bw $mode: every message arrives, counters add up" \
		json_check "$WORK/bw-$mode.json" 'r["iterations"] == 1500 and
		 r["server"]["completions"] == 1500 and
		 (lambda s: '"$adds_up"')(r["server"])' ||
		show "$WORK/bw-$mode.json.err"
done
# A deep send queue signalled every time: send completions queue up
# faster than one poll of 16 takes them.
client "$WORK/auto.json" --poll-batch auto --cq-mode poll -s 64 -n 20000 \
	-t 512 --output json
check "--poll-batch auto: the batch grows beyond 16" json_check \
	"$WORK/auto.json" 'd["params"]["poll_batch"] == "auto" and
	 max(r["client"]["batch_max"], r["server"]["batch_max"]) > 16' ||
	show "$WORK/auto.json" "$WORK/auto.json.err"
stop_server

# UD reaps through the same engine.
serve ud_send_bw 20
client "$WORK/ud.json" --cq-mode timer -s 1024 -n 1000 --output json
check "ud_send_bw timer: counters add up" json_check "$WORK/ud.json" \
	'r["server"]["completions"] > 0 and (lambda s: '"$adds_up"')(r["server"])' ||
	show "$WORK/ud.json.err"
stop_server
finish
