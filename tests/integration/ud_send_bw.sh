#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# ud_send_bw on soft-RoCE: sizes 64 B to the MTU in every completion mode,
# -a stopping at the MTU, the MTU and inline limits, --verify, -q with and
# without --srq (and --solicited on it), --rdma-cm, --mcast, and loss
# accounting that matches the
# device's own packet counter when the receive queue is made too shallow.
. "$(dirname "$0")/lib.sh"
require_device

BW=$CQPERF_BIN/ud_send_bw
serve ud_send_bw 20

for mode in poll event hybrid; do
	for size in 64 1024 4096; do
		out=$WORK/$mode-$size.json
		client "$out" --cq-mode "$mode" -s "$size" -n 1000 --output json
		rc=$?
		check "$mode $size B: client exits 0 (got $rc)" test "$rc" -eq 0 ||
			show "$out.err" "$WORK/ud_send_bw.server.err"
		check "$mode $size B: contract keys, rate > 0" json_check "$out" \
			'd["schema"] == "cqperf/1" and d["tool"] == "ud_send_bw" and
			 "error" not in d and r["bytes"] == '"$size"' and
			 r["iterations"] == 1000 and r["bw_avg_gbps"] > 0 and
			 r["msg_rate_mpps"] > 0'
		check "$mode $size B: delivery figures add up" json_check "$out" \
			'r["sent"] == 1000 and r["received"] <= 1000 and
			 abs(r["loss_pct"] - 100.0 * (1000 - r["received"]) / 1000) < 1e-5
			 and r["server"]["completions"] == r["received"]'
		# RoCE v2 over IPv4: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 +
		# DETH 8 + ICRC 4 + FCS 4 + preamble and gap 20.
		check "$mode $size B: wire efficiency is payload / (payload + 90)" \
			json_check "$out" \
			'd["device"]["wire"] == "RoCE v2 over IPv4" and
			 d["device"]["wire_overhead_bytes"] == 90 and
			 abs(r["wire_eff_pct"] - 100.0 * '"$size"' / ('"$size"' + 90)) < 1e-5'
		check "$mode $size B: receive memory is rx-depth slots of payload + GRH" \
			json_check "$out" \
			'r["server"]["rx_mem_bytes"] == 512 * ('"$size"' + 40) and
			 r["client"]["rx_mem_bytes"] == 0'
	done
done
check "nothing lost at 1 KiB with receives to spare (poll)" \
	json_check "$WORK/poll-1024.json" 'r["loss_pct"] == 0 and r["rx_dry"] == 0'

# -D: a second of warm-up left out of the figures, but not of the loss.
client "$WORK/duration.json" -s 1024 -D 2 --cq-mode event --output json
check "-D 2: measured after the warm-up; sent and received count it all" \
	json_check "$WORK/duration.json" \
	'"error" not in d and 0 < r["iterations"] < r["sent"] and
	 r["received"] <= r["sent"] and r["loss_pct"] < 5'

# -a: powers of two from 2 bytes up to the MTU, and no further.
client "$WORK/all.json" -a -n 200 --output json
check "-a: 12 rows, 2 B to the 4096 B MTU" json_check "$WORK/all.json" \
	'[x["bytes"] for x in d["results"]] == [2 ** k for k in range(1, 13)]'
client "$WORK/all-mtu.json" -a -n 100 -m 1024 --output json
check "-a -m 1024: stops at 1024 B" json_check "$WORK/all-mtu.json" \
	'd["results"][-1]["bytes"] == 1024 and len(d["results"]) == 10'

# The progress line (cqperf(7), --quiet): on a terminal's stderr only,
# rewritten in place, cleared before the table.  script(1) gives the
# client a pseudo-terminal; raw_check reads what that terminal received.
# -D 1 -a -m 256 (8 steps, about 20 s) stands for the issue's -D 3 -a
# (12 steps of 4 s here): the same line, at a third of the guest time.
check "plain redirect: no progress bytes on stderr" \
	eval '! grep -qE "step |$(printf "\r|\033")" "$WORK/all.json.err"' ||
	show "$WORK/all.json.err"
# raw_check FILE EXPR: EXPR is true of the capture FILE, with raw (its
# text), draws (each progress line drawn: (step, steps, what, left)),
# tail (what followed the last draw) and screen (the terminal's final
# lines, \r and ESC [ K played as a terminal does).
raw_check() {
	python3 - "$1" "$2" <<'PY'
import re, sys
raw = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
pat = re.compile(r"\r(step (\d+)/(\d+)  (.*?)  ([^\r\x1b]*) left)\x1b\[K")
found = list(pat.finditer(raw))
draws = [(int(m.group(2)), int(m.group(3)), m.group(4), m.group(5))
         for m in found]
longest = max([len(m.group(1)) for m in found] or [0])
tail = raw[found[-1].end():] if found else raw
screen, row, col, i = [""], 0, 0, 0
while i < len(raw):
    m = re.match(r"\x1b\[[0-9;?]*([A-Za-z])", raw[i:])
    if m:
        if m.group(1) == "K":
            screen[row] = screen[row][:col]
        i += m.end()
        continue
    ch = raw[i]
    if ch == "\r":
        col = 0
    elif ch == "\n":
        row, col = row + 1, 0
        if row == len(screen):
            screen.append("")
    else:
        line = screen[row].ljust(col)
        screen[row] = line[:col] + ch + line[col + 1:]
        col += 1
    i += 1
if eval("(" + sys.argv[2] + ")"):
    sys.exit(0)
print("# %d draws, longest %d columns; first and last: %r" %
      (len(draws), longest, draws[:2] + draws[-2:]))
print("# after the last draw: %r" % tail[:120])
for line in screen[-12:]:
    print("# | " + line)
sys.exit(1)
PY
}
# pty OUT REDIRECT ARGS...: a client with a pseudo-terminal for stdout and
# stderr (less what REDIRECT sends elsewhere); OUT: what the terminal got.
pty() {
	local out=$1 redirect=$2 cmd
	shift 2
	cmd="$(printf '%q ' "$BW" -d "$DEV" -p "$port" --timeout 20 "$@" \
		"$ADDR") $redirect"
	script -qec "$cmd" /dev/null </dev/null >"$out" 2>&1
}
if check "script(1) is there to give a client a terminal" \
	eval 'command -v script >/dev/null'; then
	progress_start=$(date +%s)
	pty_duration() {
		pty "$WORK/pty-D.raw" "" -D 1 -a -m 256
	}
	start=$(date +%s)
	pty_duration
	rc=$?
	echo "# -D 1 -a -m 256 on a terminal: $(($(date +%s) - start)) s"
	check "-D 1 -a on a terminal: exits 0 (got $rc)" test "$rc" -eq 0 ||
		show "$WORK/pty-D.raw"
	check "-D 1 -a on a terminal: each of the 8 steps said, size in order, in 79 columns" \
		raw_check "$WORK/pty-D.raw" \
		'sorted(set((s, n, w.split(" B,")[0]) for s, n, w, l in draws)) ==
		 [(k, 8, str(2 ** k)) for k in range(1, 9)] and longest <= 79'
	check "-D 1 -a on a terminal: the time left known from -D at once (8 x 1 s)" \
		raw_check "$WORK/pty-D.raw" \
		'draws[0][0] == 1 and draws[0][3] == "8 s"'
	check_timed "-D 1 -a on a terminal: the line rewritten within steps as time runs" \
		pty_duration raw_check "$WORK/pty-D.raw" \
		'len(draws) > 8 and len(set(l for s, n, w, l in draws)) > 4'
	check "-D 1 -a on a terminal: cleared (\\r ESC[K), then the table" \
		raw_check "$WORK/pty-D.raw" \
		'tail.startswith("\r\x1b[K") and "#bytes" in tail and
		 "step 1/" not in tail'
	check "-D 1 -a on a terminal: the final screen has the table, no progress line" \
		raw_check "$WORK/pty-D.raw" \
		'any("#bytes" in x for x in screen) and
		 not any(re.match(r"\s*step \d+/", x) for x in screen)'

	# Without -D: "?" until a step has finished.  JSON on stdout does
	# not change: the line is stderr's.
	pty "$WORK/pty-json.raw" ">$(printf %q "$WORK/pty.json")" -a -n 200 \
		-m 256 --output json
	rc=$?
	check "-a --output json, stderr a terminal: exits 0 (got $rc)" \
		test "$rc" -eq 0 || show "$WORK/pty-json.raw"
	check "-a --output json, stderr a terminal: progress on stderr, ? left at first" \
		raw_check "$WORK/pty-json.raw" \
		'draws and draws[0][:2] == (1, 8) and draws[0][3] == "?" and
		 tail == "\r\x1b[K"'
	check "-a --output json, stderr a terminal: a valid document, 8 rows" \
		json_check "$WORK/pty.json" \
		'"error" not in d and len(d["results"]) == 8'

	# --quiet, and stderr a file with stdout on the terminal: nothing.
	pty "$WORK/pty-quiet.raw" "" -a -n 200 -m 256 --quiet
	rc=$?
	check "--quiet on a terminal: exits 0 (got $rc), the table and no progress" \
		raw_check "$WORK/pty-quiet.raw" \
		'not draws and "step 1/" not in raw and "\x1b[K" not in raw and
		 "#bytes" in raw and '"$rc"' == 0'
	pty "$WORK/pty-err.raw" "2>$(printf %q "$WORK/pty-err.err")" -a -n 200 \
		-m 256
	rc=$?
	check "stdout a terminal, stderr a file: exits 0 (got $rc), the table, no progress" \
		raw_check "$WORK/pty-err.raw" \
		'not draws and "\x1b[K" not in raw and "#bytes" in raw and
		 '"$rc"' == 0'
	check "stdout a terminal, stderr a file: no progress bytes in the file" \
		eval '! grep -qE "step |$(printf "\r|\033")" "$WORK/pty-err.err"' ||
		show "$WORK/pty-err.err"
	echo "# progress line checks: $(($(date +%s) - progress_start)) s"
fi

# Limits: a message above the MTU, inline the device will not grant.
client "$WORK/big.out" -s 8192
rc=$?
check "-s 8192: exit 2 naming --size and the 4096 B MTU (got $rc)" \
	eval 'test $rc -eq 2 && grep -q -- "--size 8192 exceeds the UD path MTU of 4096" "$WORK/big.out.err"' ||
	show "$WORK/big.out.err"
client "$WORK/bigmtu.out" -s 2048 -m 1024
rc=$?
check "-s 2048 -m 1024: exit 2 naming --mtu (got $rc)" \
	eval 'test $rc -eq 2 && grep -q -- "MTU of 1024 bytes (--mtu)" "$WORK/bigmtu.out.err"' ||
	show "$WORK/bigmtu.out.err"
client "$WORK/inline.out" -s 64 -I 4000
rc=$?
check "-I 4000: exit 2 saying what the device grants (got $rc)" \
	eval 'test $rc -eq 2 && grep -Eq -- "--inline 4000: .* grants at most [0-9]+ bytes" "$WORK/inline.out.err"' ||
	show "$WORK/inline.out.err"

# --verify with 4 QPs: every payload checked, sequences only forward.
client "$WORK/verify.json" -s 1024 -n 500 -q 4 --verify --cq-mode event \
	--output json
check "--verify -q 4: passes, 2000 messages" json_check "$WORK/verify.json" \
	'"error" not in d and r["sent"] == 2000 and r["iterations"] == 2000' ||
	show "$WORK/verify.json.err"
client "$WORK/verify-small.json" -s 2 -n 500 --verify --output json
check "--verify at 2 B (the sequence's low bytes only)" \
	json_check "$WORK/verify-small.json" '"error" not in d'

# --srq: one queue of rx-depth receives instead of one per QP.
client "$WORK/q4.json" -s 1024 -n 300 -q 4 -r 256 --output json
client "$WORK/srq.json" -s 1024 -n 300 -q 4 -r 256 --srq --output json
check "-q 4: four receive queues of 256 slots" json_check "$WORK/q4.json" \
	'r["server"]["rx_mem_bytes"] == 4 * 256 * 1064 and r["sent"] == 1200'
check "-q 4 --srq: one shared queue, a quarter of the memory" \
	json_check "$WORK/srq.json" \
	'"error" not in d and r["server"]["rx_mem_bytes"] == 256 * 1064 and
	 r["sent"] == 1200 and r["received"] > 0' || show "$WORK/srq.json.err"

# --solicited on one shared queue: the 8 senders' solicited marks fall
# due together, so each must mark 8 times as often, or a receiver armed
# for them sleeps through 8 x rx-depth/4 datagrams and the queue runs
# dry.  rxe in one guest drops nothing: it received every packet it sent.
# A stalled receiver vCPU can let the queue run dry by itself: measured
# again once (the defect ran it dry in every run).
srq_sol() {
	client "$WORK/srq-sol.json" -s 64 -n 2000 -q 8 --srq --solicited \
		--cq-mode event --output json
}
srq_sol
check_timed "-q 8 --srq --solicited, event: nothing lost, the queue never ran dry" \
	srq_sol json_check "$WORK/srq-sol.json" \
	'"error" not in d and r["sent"] == 16000 and r["received"] == 16000 and
	 r["rx_dry"] == 0' || show "$WORK/srq-sol.json.err"
check "-q 8 --srq --solicited: rxe's counters show no drop" \
	json_check "$WORK/srq-sol.json" \
	'r["server"]["hw_counters"]["rcvd_pkts"] ==
	 r["server"]["hw_counters"]["sent_pkts"] >= 16000'

# --rdma-cm: the path from RDMA CM's SIDR exchange.
client "$WORK/cm.json" -s 1024 -n 300 -q 2 --rdma-cm --output json
check "--rdma-cm -q 2: runs, Q_Key is RDMA CM's" json_check "$WORK/cm.json" \
	'"error" not in d and r["sent"] == 600 and r["received"] > 0 and
	 d["params"]["rdma_cm"] is True' || show "$WORK/cm.json.err"

# --mcast: every server QP gets every message.
client "$WORK/mcast.json" -s 1024 -n 300 -q 2 --mcast ::ffff:239.1.2.3 \
	--output json
check "--mcast -q 2: fanout 2, loss against sent x fanout" \
	json_check "$WORK/mcast.json" \
	'"error" not in d and r["fanout"] == 2 and r["sent"] == 600 and
	 abs(r["loss_pct"] - 100.0 * (1200 - r["received"]) / 1200) < 1e-5 and
	 r["received"] > 600' || show "$WORK/mcast.json.err"

# A client killed mid-run: the server notices its channel close during the
# next quiet spell, not at its 20 s timeout, and serves the next client.
"$BW" -d "$DEV" -p "$port" --timeout 20 -s 1024 -D 30 "$ADDR" \
	>/dev/null 2>&1 &
victim=$!
sleep 2
kill -9 "$victim"
wait "$victim" 2>/dev/null
start=$(date +%s)
client "$WORK/after.json" -s 1024 -n 300 --output json
rc=$?
took=$(($(date +%s) - start))
check "client killed: the persistent server serves the next one in $took s" \
	eval 'test $rc -eq 0 -a $took -le 8' ||
	show "$WORK/after.json.err" "$WORK/ud_send_bw.server.err"
stop_server

# Loss: two receives posted, a slow event-mode receiver.  Everything the
# client sent reached the device (its packet counter says so); what the
# receive queue could not take is the loss, and the report blames it.
counter() {
	rdma statistic show link "$DEV/1" 2>/dev/null |
		grep -o "rcvd_pkts [0-9]*" | awk '{print $2}'
}
port=$(next_port)
start_server ud_send_bw:loss "$port" --timeout 20 || not_ok "server listens"
before=$(counter)
"$BW" -d "$DEV" -p "$port" --timeout 20 -s 1024 -n 3000 -r 2 \
	--cq-mode event --verify --output json "$ADDR" \
	>"$WORK/loss.json" 2>"$WORK/loss.err"
rc=$?
wait "$SERVER_PID"
SERVER_PID=
after=$(counter)
check "shallow receive queue: run ends normally (got $rc)" test "$rc" -eq 0 ||
	show "$WORK/loss.err"
check "shallow receive queue: loss reported, blamed on the receive queue" \
	json_check "$WORK/loss.json" \
	'r["sent"] == 3000 and r["received"] < 3000 and r["loss_pct"] > 0
	 and r["rx_dry"] > 0'
if [ -n "$before" ] && [ -n "$after" ]; then
	check "shallow receive queue: the device received all $((after - before)) packets the client sent" \
		test "$((after - before))" -eq 3000
else
	echo "# rdma statistic has no rcvd_pkts counter here"
fi
"$BW" -d "$DEV" -p "$port" --timeout 20 -s 1024 -n 3000 -r 2 \
	--cq-mode event "$ADDR" >"$WORK/loss.out" 2>&1 &
"$BW" -d "$DEV" -p "$port" --timeout 20 >/dev/null 2>&1
wait
check "shallow receive queue: the table says to raise --rx-depth" \
	grep -q 'receives ran out .* (raise --rx-depth)' "$WORK/loss.out" ||
	show "$WORK/loss.out"
fits "ud_send_bw, loss" "$WORK/loss.out"
finish
