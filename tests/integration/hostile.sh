#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Hostile and broken clients against a --persistent server of every binary:
# random bytes, a wrong magic, huge announced lengths, a frame cut short, a
# valid session in one-byte writes, a client that never speaks and one that
# trickles, and parameter sets outside the command line's bounds or over
# --max-mem.  After each the server has logged one line naming what
# happened, and a real client run succeeds.
. "$(dirname "$0")/lib.sh"
require_device
prefer_sanitized

TMO=3 # the servers' --timeout: how long a silent client may hold one

# The attacks, from raw frames (hostile.py says how).
PY=$(dirname "$0")/hostile.py

# A good run of each tool; sizes and counts kept small for TCG guests.
good_args() {
	case $1 in
	cq_poll_bw | ud_send_bw) echo "-d $DEV -s 1024 -n 100" ;;
	cq_event_lat | ud_send_lat) echo "-d $DEV -s 64 -n 100" ;;
	cm_event_stress) echo "-c 10" ;;
	esac
}
# Parameters that need more buffer memory than the servers' --max-mem 1M.
big_params() {
	case $1 in
	cq_poll_bw | cq_event_lat) printf '%s' 'size=2097152\n' ;;
	ud_send_bw | ud_send_lat) printf '%s' 'size=4096\nrx-depth=4096\n' ;;
	esac
}

good_client() { # good_client TOOL: a real run against $port succeeds
	local tool=$1 rc
	# shellcheck disable=SC2046  # the arguments are words
	timeout 120 "$CQPERF_BIN/$tool" -p "$port" --timeout 30 \
		$(good_args "$tool") "$ADDR" >"$WORK/good.out" 2>"$WORK/good.err"
	rc=$?
	check "$tool: a real client runs after it (got $rc)" test "$rc" -eq 0 ||
		show "$WORK/good.err" "$SERR"
}

# new_log_line NEEDLE: the server logged exactly one line since $mark,
# and it contains NEEDLE.  Waits a little: the line comes after the drop.
new_log_line() {
	local needle=$1 n
	for _ in $(seq 1 50); do
		n=$(($(wc -l <"$SERR") - mark))
		[ "$n" -ge 1 ] && break
		sleep 0.1
	done
	tail -n +$((mark + 1)) "$SERR" >"$WORK/new.err"
	n=$(wc -l <"$WORK/new.err")
	[ "$n" -eq 1 ] && grep -qF -- "$needle" "$WORK/new.err"
}

no_cntrl() { ! LC_ALL=C grep -q '[[:cntrl:]]' "$1"; }

# attack TOOL ATTACK NEEDLE [PARAMS]: run it, check the client's view,
# the server's log line, and a real client afterwards.
attack() {
	local tool=$1 what=$2 needle=$3 params=${4:-}
	mark=$(wc -l <"$SERR")
	TMO=$TMO CQPERF_SERVER_ADDR=$ADDR timeout 60 python3 "$PY" "$what" \
		"$port" "$params" >"$WORK/py.out" 2>&1
	rc=$?
	check "$tool, $what${params:+ $params}: $(head -c 150 "$WORK/py.out")" \
		test "$rc" -eq 0 || show "$WORK/py.out"
	check "$tool, $what: the server logged one line with '$needle'" \
		new_log_line "$needle" || show "$SERR"
	good_client "$tool"
}

# besiege TOOL PORT: every attack on one persistent server of TOOL, in a
# lane of its own (its files under $WORK/TOOL): the tools' sieges share
# nothing, and mostly wait on --timeout and on python starting.
besiege() {
	local tool=$1 start key split
	port=$2
	start=$(date +%s)
	WORK=$WORK/$tool
	mkdir -p "$WORK"
	SERR=$WORK/$tool.server.err
	# --quiet: its log holds only the failures counted below.
	start_server "$tool" "$port" --persistent --timeout "$TMO" --quiet \
		--max-mem 1M || not_ok "$tool: server listens"
	good_client "$tool"

	attack "$tool" random "bad magic"
	attack "$tool" magic "bad magic 0x58515046"
	attack "$tool" huge "payload of 4294967280 bytes, over the limit"
	attack "$tool" big "larger than our 1024-byte buffer"
	attack "$tool" trunc "closed the connection (mid-frame after 25 of 76"

	# Nothing at all: dropped after --timeout while the next client
	# waits in the backlog, then served.
	mark=$(wc -l <"$SERR")
	TMO=$TMO CQPERF_SERVER_ADDR=$ADDR timeout 60 python3 "$PY" silent \
		"$port" >"$WORK/silent.out" 2>&1 &
	silent=$!
	sleep 1
	good_client "$tool"
	wait "$silent"
	rc=$?
	check "$tool, silent: $(cat "$WORK/silent.out")" test "$rc" -eq 0
	check "$tool, silent: the server logged one line about it" \
		new_log_line "within $TMO s (waiting for its HELLO)" || show "$SERR"
	# A byte now and then does not stretch the deadline.
	attack "$tool" trickle "within $TMO s (mid-frame after"

	# Out of bounds and unknown: refused with the reason.
	if [ "$tool" = cm_event_stress ]; then
		key=connections
		split='connections=10\n'
		attack "$tool" params "--connections" 'connections=0\n'
		attack "$tool" params "--concurrency" 'concurrency=99999999\n'
		# Its servers register one fixed small buffer: no --max-mem
		# case to make.
	else
		key=tx-depth
		split='size=1024\niters=100\n'
		attack "$tool" params "--size" 'size=0\n'
		attack "$tool" params "--tx-depth" 'tx-depth=99999999\n'
		attack "$tool" params "--max-mem of 1048576" "$(big_params "$tool")"
	fi
	attack "$tool" params "'bogus'" 'bogus=1\n'
	# Escape sequences in a value: refused, and not echoed raw.
	attack "$tool" params "'?[2J?]0;x?'" "$key=\\x1b[2J\\x1b]0;x\\x07\\n"
	check "$tool: no control bytes in the server's log" \
		no_cntrl "$SERR" || show "$SERR"
	# A valid session in one-byte writes is just a session.
	attack "$tool" split "hostile.sh: split session done" "$split"

	check "$tool: the server is still running" kill -0 "$SERVER_PID"
	stop_server
	echo "# $tool: $(($(date +%s) - start)) s"
}

start=$(date +%s)
n=0
while read -r tool; do
	n=$((n + 1))
	lane "$tool" besiege "$tool" $((PORT_BASE + n))
done <<<"$(cqp_tools)"
lanes_join
echo "# all sieges: $(($(date +%s) - start)) s"

finish
