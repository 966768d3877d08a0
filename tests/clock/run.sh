#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# --clock where it matters: in a guest booted without tsc=reliable, whose
# clocksource is the HPET (every clock_gettime a trap into the emulator),
# a timestamp from clock_gettime must cost several TSC reads; in the usual
# guest (clocksource tsc, clock_gettime in the vDSO) it must not be a
# system call.  Ping-pongs on each clock (PAIRS alternating runs) must
# report the clock they were given; their latencies are printed only.
#   tests/clock/run.sh BIN_DIR
# Prints "ok - ..." lines and "N passed, N failed, N skipped".
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
bin=$(cd "${1:?usage: run.sh BIN_DIR}" && pwd)

if [ -z "${CLOCK_GUEST:-}" ]; then
	# Outer: the same checks in each guest, one after the other; the
	# summary line adds them up.
	cd "$top" || exit 1
	p=0 f=0 rc=0
	for reliable in 0 1; do
		CQPERF_GUEST_TSC_RELIABLE=$reliable CQPERF_FORCE_GUEST=1 \
			CQPERF_PASS_ENV=CLOCK_GUEST CLOCK_GUEST=$reliable \
			"$top/scripts/guest/softroce-run.sh" --timeout 600 -- \
			"$here/run.sh" "$bin" >"$bin/../clock-$reliable.log" 2>&1 || rc=1
		grep -v ' passed, ' "$bin/../clock-$reliable.log"
		line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$bin/../clock-$reliable.log")
		[ -n "$line" ] || { echo "not ok - clock suite (tsc=reliable $reliable) did not finish"; f=$((f + 1)); }
		p=$((p + ${line%% *}))
		line=${line#* passed, }
		f=$((f + ${line%% *}))
	done
	echo "$p passed, $f failed, 0 skipped"
	[ "$f" -eq 0 ] && [ "$rc" -eq 0 ]
	exit
fi

. "$top/tests/checks.sh"
. "$top/scripts/guest/wait-listen.sh"
DEV=${CQPERF_RXE_DEV:-rxe0}
ADDR=${CQPERF_SERVER_ADDR:-198.18.0.1}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cqperf-clock.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
PAIRS=${CLOCK_PAIRS:-3}
cs=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)
echo "# guest booted with tsc=reliable: $CLOCK_GUEST; clocksource: $cs"
if [ "$CLOCK_GUEST" = 0 ]; then
	check "without tsc=reliable the clocksource is slow (not tsc)" test "$cs" != tsc
else
	check "with tsc=reliable the clocksource is tsc" test "$cs" = tsc
fi

# p50 CLOCK: one poll-mode ping-pong, both sides on CLOCK; its p50.
p50() {
	local port=$((19700 + RANDOM % 200)) out=$WORK/$1-$RANDOM.json
	taskset -c 0 "$bin/cq_event_lat" -d "$DEV" -p "$port" --clock "$1" \
		--timeout 20 >/dev/null 2>&1 &
	local srv=$!
	wait_listen "$port" "$srv" 5
	taskset -c 1 "$bin/cq_event_lat" -d "$DEV" -p "$port" --clock "$1" \
		--timeout 20 --output json -n 2000 -s 64 --cq-mode poll --rtt "$ADDR" >"$out"
	wait "$srv"
	# 0 when the run did not use the source it was given.
	json_get "$out" 'r["lat_us"]["p50"] if d["clock"]["source"] == "'"${2:-$1}"'" else 0'
}
tsc=() mono=()
for ((i = 0; i < PAIRS; i++)); do
	tsc+=("$(p50 force-tsc tsc)")
	mono+=("$(p50 monotonic)")
done
# The latencies are for the reader: one HPET read (~1.4 us a round trip
# here) is smaller than TCG's run-to-run swing, so they are not checked.
echo "# p50 (round trip) usec, force-tsc: ${tsc[*]}; monotonic: ${mono[*]}"
check "every run reported on the clock it was given" \
	sh -c "! printf '%s\n' ${tsc[*]} ${mono[*]} | grep -qx '0\(\.0\)\?'"
# What one timestamp costs, read directly.
cost=$("$bin/../tests/clock/clockcost")
ct=$(echo "$cost" | awk '{print $2}') cm=$(echo "$cost" | awk '{print $4}')
echo "# ns per timestamp: TSC $ct, CLOCK_MONOTONIC $cm"
if [ "$CLOCK_GUEST" = 0 ]; then
	check "$cs guest: a clock_gettime ($cm ns) costs over 5x a TSC read ($ct ns)" \
		awk -v t="${ct:-0}" -v m="${cm:-0}" 'BEGIN { exit !(t > 0 && m > 5 * t) }'
else
	check "tsc guest: clock_gettime ($cm ns) is no system call: under 1 us, within 10x a TSC read ($ct ns)" \
		awk -v t="${ct:-0}" -v m="${cm:-0}" 'BEGIN { exit !(t > 0 && m > 0 && m < 1000 && m < 10 * t) }'
fi
echo "$CHECKS_PASSED passed, $CHECKS_FAILED failed, 0 skipped"
[ "$CHECKS_FAILED" -eq 0 ]
