#!/bin/bash
# --clock where it matters: a guest booted without tsc=reliable, whose
# clocksource is the HPET (every clock_gettime a trap into the emulator),
# must time ping-pongs faster with the TSC than with CLOCK_MONOTONIC; in
# the usual guest (clocksource tsc, clock_gettime in the vDSO) the two
# agree.  Alternating runs, medians of PAIRS each.
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
			"$top/scripts/softroce-run.sh" --timeout 600 -- \
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
DEV=${CQPERF_RXE_DEV:-rxe0}
ADDR=${CQPERF_SERVER_ADDR:-198.18.0.1}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cqperf-clock.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
PAIRS=${CLOCK_PAIRS:-5}
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
	for _ in $(seq 50); do ss -Hltn "sport = :$port" | grep -q . && break; sleep 0.1; done
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
echo "# p50 (round trip) usec, force-tsc: ${tsc[*]}; monotonic: ${mono[*]}"
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
mt=$(median "${tsc[@]}") mm=$(median "${mono[@]}")
check "every run reported on the clock it was given" \
	sh -c "! printf '%s\n' ${tsc[*]} ${mono[*]} | grep -qx '0\(\.0\)\?'"
if [ "$CLOCK_GUEST" = 0 ]; then
	check "$cs guest: p50 with the TSC ($mt) below p50 with clock_gettime ($mm)" \
		awk -v t="$mt" -v m="$mm" 'BEGIN { exit !(t > 0 && t < m) }'
else
	# Runs swing up to 2x under TCG; medians of alternating runs agree
	# far closer.
	check "tsc guest: p50 with the TSC ($mt) and with clock_gettime ($mm) agree within 25 %" \
		awk -v t="$mt" -v m="$mm" 'BEGIN { exit !(t > 0 && m > 0 && t < 1.25 * m && m < 1.25 * t) }'
fi
echo "$CHECKS_PASSED passed, $CHECKS_FAILED failed, 0 skipped"
[ "$CHECKS_FAILED" -eq 0 ]
