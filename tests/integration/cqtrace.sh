#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# qemu-plugins/libcqptrace.so preloaded into ud_send_lat, and into ib_send_lat -c
# UD where perftest is installed: both sides write their traces at exit,
# and scripts/dev/cqtrace.py finds every exchange of each run in them, with
# segments in their order (ping and pong each shorter than the round
# trip), and compares the two tools.
. "$(dirname "$0")/lib.sh"
require_device

LIB=$CQPERF_BIN/../qemu-plugins/libcqptrace.so
TOOL=$(cd "$(dirname "$0")/../.." && pwd)/scripts/dev/cqtrace.py
if [ ! -r "$LIB" ]; then
	not_ok "the trace library is built ($LIB)"
	finish
fi
GIDX=${CQPERF_RXE_GID_INDEX:-1}
N=300

# pingpong NAME SERVER_CMD... -- CLIENT_ARGS...: the server, then its
# client with CLIENT_ARGS and the address, both traced into $WORK/t-NAME-*.
pingpong() {
	local name=$1 srv=() rc
	shift
	while [ "$1" != -- ]; do
		srv+=("$1")
		shift
	done
	shift
	port=$(next_port)
	CQPERF_TRACE=$WORK/t-$name-s LD_PRELOAD=$LIB "${srv[@]}" -p "$port" \
		>"$WORK/$name-s.out" 2>&1 &
	local spid=$!
	wait_listen "$port"
	CQPERF_TRACE=$WORK/t-$name-c LD_PRELOAD=$LIB "${srv[@]}" -p "$port" \
		"$@" "$ADDR" >"$WORK/$name-c.out" 2>&1
	rc=$?
	wait "$spid"
	check "$name under the trace library: client exits 0 (got $rc)" \
		test "$rc" -eq 0 || show "$WORK/$name-c.out"
	RUNS+=("$name=$(echo "$WORK/t-$name-c".*),$(echo "$WORK/t-$name-s".*)")
}

RUNS=()
pingpong ours "$CQPERF_BIN/ud_send_lat" -d "$DEV" -x "$GIDX" --timeout 30 \
	-- -t 1 -n "$N" --warmup 0 --cq-mode poll
if command -v ib_send_lat >/dev/null; then
	pingpong perftest ib_send_lat -c UD -d "$DEV" -x "$GIDX" -s 64 -n "$N" \
		-F --
fi

check "every trace whole (none dropped)" \
	eval '! grep -L " dropped 0$" "$WORK"/t-* | grep -q .'
python3 "$TOOL" --json "${RUNS[@]}" >"$WORK/segments.json" 2>"$WORK/seg.err"
check "cqtrace.py reads the traces" test $? -eq 0 || show "$WORK/seg.err"
for run in "${RUNS[@]}"; do
	name=${run%%=*}
	# Retries (a datagram lost) have no whole path: a few may be missing.
	check "$name: every exchange found ($N, or a few fewer)" \
		json_check "$WORK/segments.json" \
		"$N - 3 <= d['$name']['exchanges'] <= $N"
	check "$name: segments in order (0 < ping, pong < rtt; post, turn > 0)" \
		json_check "$WORK/segments.json" \
		"0 < d['$name']['ping'] < d['$name']['rtt'] and
		 0 < d['$name']['pong'] < d['$name']['rtt'] and
		 d['$name']['post'] > 0 and d['$name']['turn'] > 0"
done
if [ ${#RUNS[@]} -eq 2 ]; then
	python3 "$TOOL" "${RUNS[@]}" >"$WORK/segments.txt" 2>&1
	sed 's/^/# /' "$WORK/segments.txt"
	check "ours against perftest: a ratio column" \
		grep -q "^rtt .* [0-9.]*$" "$WORK/segments.txt"
fi
finish
