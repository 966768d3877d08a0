#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The device double (tests/double/double.h): first proof that it behaves
# as the providers it imitates, then the real binaries on their hardware
# paths under each personality: mlx5's CQ moderation in event and hybrid
# mode, a port error on the port not in use, bnxt_re's inline refusal,
# irdma's iWARP refusals.
. "$(dirname "$0")/lib.sh"
require_device

DOUBLE=$CQPERF_BIN/../tests/double/libcqpdouble.so
SELFTEST=$CQPERF_BIN/../tests/double/test_double
if [ ! -r "$DOUBLE" ] || [ ! -x "$SELFTEST" ]; then
	not_ok "the device double is built ($DOUBLE)"
	finish
fi
GIDX=${CQPERF_RXE_GID_INDEX:-1}

# as PERSONALITY CMD...: CMD with the double preloaded ($FAULT: faults).
as() {
	local p=$1
	shift
	LD_PRELOAD=$DOUBLE CQPERF_TEST_DEVICE=$p CQPERF_TEST_FAULT=${FAULT:-} "$@"
}

selftest() { # selftest PERSONALITY CHECK
	as "$1" "$SELFTEST" "$DEV" "$GIDX" "$2" >"$WORK/self-$2.out" 2>&1
	local rc=$?
	sed 's/^/# /' "$WORK/self-$2.out"
	check "double $1: $2" test "$rc" -eq 0
}

selftest mlx5-roce mlx5-ports
selftest mlx5-roce mlx5-count
selftest mlx5-roce mlx5-period
selftest mlx5-roce mlx5-plain
FAULT=port_err:2@0 selftest mlx5-roce port-err
selftest bnxt_re bnxt-inline
selftest irdma irdma-transport

# run NAME PERSONALITY TOOL ARGS...: a server and a client of TOOL under
# the personality (the server's options come from the client); $SFAULT:
# the server's faults.  Sets RC (client) and SRC (server).
run() {
	local name=$1 p=$2 tool=$3 port
	shift 3
	port=$(next_port)
	FAULT=${SFAULT:-} as "$p" start_server "$tool:$name" "$port" \
		--timeout 10 || {
		not_ok "$name: server listens"
		return 1
	}
	as "$p" "$CQPERF_BIN/$tool" -d "$DEV" -p "$port" --timeout 10 \
		--output json "$@" "$ADDR" >"$WORK/$name.json" 2>"$WORK/$name.err"
	RC=$?
	wait_server 15
	SRC=$?
}

# Finding 1: mlx5 withholds the event until COUNT completions (or the
# period); a waiter that never polls again stalls to --timeout.
for mode in event hybrid; do
	for mod in 4 4,0 4,100; do
		run "lat-$mode-$mod" mlx5-roce cq_event_lat --cq-mode "$mode" \
			--cq-mod "$mod" -n 100 -s 64
		check "mlx5 --cq-mod $mod, cq_event_lat $mode: every exchange" \
			json_check "$WORK/lat-$mode-$mod.json" \
			'r["iterations"] == 100 and "error" not in d' ||
			show "$WORK/lat-$mode-$mod.err"
	done
	run "bw-$mode" mlx5-roce cq_poll_bw --cq-mode "$mode" --cq-mod 4,0 \
		-n 301 -s 4096
	check "mlx5 --cq-mod 4,0, cq_poll_bw $mode: every message" \
		json_check "$WORK/bw-$mode.json" \
		'r["server"]["completions"] == 301 and "error" not in d' ||
		show "$WORK/bw-$mode.err"
done

# Finding 6: a port error on port 2 (down, unused) is not ours; one on
# our port ends the run by its name.  Async events are read when idle:
# --idle-sec makes sure there is such a moment.
SFAULT=port_err:2@0 FAULT=port_err:2@0 run porterr2 mlx5-roce \
	cq_event_lat --cq-mode event -n 100 -s 64 --idle-sec 1
check "PORT_ERR on unused port 2: the run goes on" json_check \
	"$WORK/porterr2.json" 'r["iterations"] == 100 and "error" not in d' ||
	show "$WORK/porterr2.err"
check "PORT_ERR on port 2: a note names the port" \
	grep -q "port 2 reported an error" "$WORK/porterr2.err"
FAULT=port_err:1@0 run porterr1 mlx5-roce cq_event_lat --cq-mode event \
	-n 100 -s 64 --idle-sec 1
check "PORT_ERR on port 1: the client fails, naming it" \
	grep -q "reported port error" "$WORK/porterr1.err" ||
	show "$WORK/porterr1.err"

finish
