#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# --verb: every verb in every mode it allows, both RC tools, against one
# persistent server each.  Every message arrives (rxe's packet counters
# against the iterations), --verify checks payloads and the atomic count,
# the target of READ and atomics takes no part, and a WRITE's target
# spins.  Then the cross-verb strategy map, recomputed from its rows.
. "$(dirname "$0")/lib.sh"
require_device

N=200
modes_of() {
	case $1 in
	write) echo mem ;;
	*) echo poll event hybrid ;;
	esac
}
size_of() { case $1 in atomic) echo 8 ;; *) echo 1024 ;; esac; }

# bw VERB MODE: cq_poll_bw, client JSON in $WORK/bw-VERB-MODE.json.
for tool in cq_poll_bw cq_event_lat; do
	serve "$tool" 20
	for verb in send write-imm write read atomic; do
		for mode in $(modes_of "$verb"); do
			out=$WORK/$tool-$verb-$mode.json
			client "$out" --verb "$verb" --cq-mode "$mode" \
				-s "$(size_of "$verb")" -n $N --warmup 0 --verify \
				--output json
			check "$tool --verb $verb --cq-mode $mode: exits 0" \
				test $? -eq 0 || show "$out.err" "$WORK/$tool.server.err"
			# Requests each way: every one is at least a packet on
			# each side (READ: the request out, the response in).
			check "$tool $verb $mode: rxe counted every message" \
				json_check "$out" \
				'r["iterations"] == '$N' and r.get("verb", "send") == "'"$verb"'" and
				 all(r[s]["hw_counters"]["sent_pkts"] >= '$N' and
				     r[s]["hw_counters"]["rcvd_pkts"] >= '$N'
				     for s in ("client", "server"))'
			case $verb in
			read | atomic)
				check "$tool $verb $mode: the target never polled or woke" \
					json_check "$out" \
					'r["server"]["wakeups"] == 0 and
					 r["server"]["polls"] == 0 and
					 r["server"]["completions"] == 0' ;;
			write)
				check "$tool $verb $mode: the target saw every WRITE in memory" \
					json_check "$out" \
					'r["server"]["completions"] >= '$N' and
					 r["server"]["wakeups"] == 0' ;;
			*)
				check "$tool $verb $mode: the target reaped a completion each" \
					json_check "$out" \
					'r["server"]["completions"] >= '$N ;;
			esac
		done
	done
	stop_server
done

# The target's CPU, over 2 s: READ in event mode costs it nothing, a
# WRITE's memory polling all of a CPU.
serve cq_poll_bw 20
client "$WORK/read-2s.json" --verb read --cq-mode event -s 4096 -D 2 \
	--output json
check "read, event, 2 s: target CPU < 5 %, no wakeups" json_check \
	"$WORK/read-2s.json" \
	'r["server"]["cpu_pct"] < 5 and r["server"]["wakeups"] == 0' ||
	show "$WORK/read-2s.json.err"
client "$WORK/write-2s.json" --verb write -s 4096 -D 2 --output json
check "write + mem, 2 s: the target spins (CPU > 80 %)" json_check \
	"$WORK/write-2s.json" 'r["server"]["cpu_pct"] > 80' ||
	show "$WORK/write-2s.json.err"
# 16 QPs, each with the default warm-up of its own: the target counts the
# measured WRITEs exactly, by -n and by -D (the client's count is its
# measured sends), whichever tails it happened to read.
client "$WORK/write-q16-n.json" --verb write -q 16 -s 64 -n 300 --output json
check "write -q 16 -n 300, default warm-up: the target counted exactly 4800" \
	json_check "$WORK/write-q16-n.json" \
	'r["iterations"] == 4800 and r["server"]["completions"] == 4800' ||
	show "$WORK/write-q16-n.json.err"
client "$WORK/write-q16-d.json" --verb write -q 16 -s 64 -D 1 --output json
check "write -q 16 -D 1: the target counted exactly the client's measured WRITEs" \
	json_check "$WORK/write-q16-d.json" \
	'r["iterations"] > 16 and
	 r["server"]["completions"] == r["iterations"]' ||
	show "$WORK/write-q16-d.json.err"
stop_server

# Every feature composes: -a (a WRITE from 8 bytes), --threads, an open
# loop with --samples and CSV, a paced WRITE, the sweep's grid.
serve cq_poll_bw 20
client "$WORK/write-all.json" --verb write -a -n 20 --warmup 0 --output json
check "write -a: every size from 8 B, each message seen in memory" \
	json_check "$WORK/write-all.json" \
	'[x["bytes"] for x in d["results"]][0] == 8 and
	 len(d["results"]) == 21 and
	 all(x["iterations"] == 20 and x["server"]["completions"] >= 20
	     for x in d["results"])' || show "$WORK/write-all.json.err"
client "$WORK/read-threads.json" --verb read --threads 2 -q 2 \
	--cq-mode event -s 4096 -n 200 --output json
check "read --threads 2 -q 2 event: 800 READs by two threads, the target idle" \
	json_check "$WORK/read-threads.json" \
	'r["iterations"] == 800 and r["client"]["completions"] == 800 and
	 [t["completions"] for t in r["client"]["threads"]] == [400, 400] and
	 r["server"]["completions"] == 0 and r["server"]["wakeups"] == 0' ||
	show "$WORK/read-threads.json.err"
client "$WORK/write-paced.json" --verb write --rate 5000 -s 1024 -n 500 \
	--warmup 0 --output json
# Paced, not flat out (1 KiB WRITEs unpaced ran at 23k/s here); a slow
# guest may fall short of the rate, so no lower bound.
check "write --rate 5000: paced WRITEs, every one seen in memory" \
	json_check "$WORK/write-paced.json" \
	'r["server"]["completions"] >= 500 and r["offered_rate"] == 5000 and
	 r["achieved_rate"] < 5500' ||
	show "$WORK/write-paced.json.err"
stop_server
serve cq_event_lat 20
client "$WORK/wimm-open.csv" --verb write-imm --rate 2000 -n 200 \
	--warmup 10 --samples "$WORK/wimm.samples" --output csv
# A READ's latency is the operation, post to completion: never halved.
client "$WORK/read-lat.out" --verb read -n 100 --samples "$WORK/read.samples"
check "read latency: each sample the whole operation, and the report says so" \
	eval 'awk -F, "\$1 ~ /^[0-9]+\$/ { n++; d = \$4 - \$2 - \$5;
		if (d > 1 || d < -1) bad++ } END { exit !(n == 100 && !bad) }" \
		"$WORK/read.samples" &&
	      flat_grep "post to completion \(a round trip, not halved\)" \
		"$WORK/read-lat.out"' ||
	show "$WORK/read-lat.out" "$WORK/read.samples"
check "write-imm --rate: CSV with its verb column, a sample per request" \
	eval 'head -1 "$WORK/wimm-open.csv" | tr , "\n" | grep -qx verb &&
	      sed -n 2p "$WORK/wimm-open.csv" | grep -q write-imm &&
	      test "$(grep -c "^[0-9]" "$WORK/wimm.samples")" -eq 200' ||
	show "$WORK/wimm-open.csv" "$WORK/wimm-open.csv.err"
stop_server
SCRIPTS=$(cd "$(dirname "$0")/../../scripts/installed" && pwd)
"$SCRIPTS/cqperf-sweep" --tool cq_event_lat --bin-dir "$CQPERF_BIN" \
	--start-server --host "$ADDR" --port "$(next_port)" \
	--out "$WORK/sweep" --server-args "-d $DEV --timeout 20" \
	--client-args "-d $DEV --timeout 20 -n 200 -s 64" \
	--grid verb=send,write-imm,write >"$WORK/sweep.out" 2>&1
sweep_docs() {
	local v
	for v in send write-imm write; do
		json_check "$WORK/sweep/cq_event_lat-verb_$v.json" \
			'd["params"]["verb"] == "'"$v"'" and "error" not in d' ||
			return 1
	done
}
check "sweep --grid verb=send,write-imm,write: a document per verb" \
	sweep_docs || show "$WORK/sweep.out"

# The map across verbs: every (verb, mode) at each rate, and the choice
# at each rate recomputed here from the rows.
serve cq_event_lat 20
client "$WORK/map.json" --verbs send,write-imm,write --rates 500,2000 \
	--compare-modes -s 64 -n 300 --warmup 20 --output json
check "map: exits 0" test $? -eq 0 || show "$WORK/map.json.err"
check "map: 7 rows per rate (3 modes of send and write-imm, write+mem)" \
	json_check "$WORK/map.json" \
	'len(d["results"]) == 14 and
	 sorted({x["label"] for x in d["results"]}) == sorted(
	   [v + "+" + m for v in ("send", "write-imm")
	    for m in ("poll", "event", "hybrid")] + ["write+mem"])'
check "map: each rate's choice is the least server CPU within the p99 slack" \
	json_check "$WORK/map.json" '
all(any(c["offered_rate"] == x["offered_rate"] for x in d["results"]) and
    c["choice"] == min((x for x in d["results"]
                        if x["offered_rate"] == c["offered_rate"] and
                        x["lat_us"]["p99"] <= (1 + d["params"]["p99_slack"] / 100) *
                        min(y["lat_us"]["p99"] for y in d["results"]
                            if y["offered_rate"] == c["offered_rate"])),
                       key=lambda x: x["server"]["cpu_pct"])["label"]
    for c in d["strategy"]) and len(d["strategy"]) == 2'
"$CQPERF_BIN/cq_event_lat" -d "$DEV" -p "$port" --timeout 20 \
	--verbs send,write --rates 1000 --compare-modes -s 64 -n 200 \
	"$ADDR" >"$WORK/map.out" 2>&1
check "map, human: the strategy line names verb and mode" \
	flat_grep 'at 1000/s: (send|write)\+(poll|event|hybrid|mem), p99' \
	"$WORK/map.out" || show "$WORK/map.out"
fits "map, human" "$WORK/map.out"
stop_server
finish
