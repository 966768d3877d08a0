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
selftest mlx5-roce mlx5-arm-unpolled
FAULT=port_err:2@0 selftest mlx5-roce port-err
selftest bnxt_re bnxt-inline
selftest irdma irdma-transport
selftest mlx5-ib mlx5-ib-lid

# run NAME PERSONALITY TOOL ARGS...: a server and a client of TOOL under
# the personality (the server's options come from the client); $SFAULT:
# the server's faults.  Sets RC (client).
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
	wait_server 15 || true # its faults show in the client's RC
}

# --verb: mlx5 serves 16 READs or atomics per QP each way and refuses
# more (EINVAL); bnxt_re says it has no atomics.
run read-mlx5 mlx5-roce cq_poll_bw --verb read -t 128 -n 300 -s 4096
check "mlx5 --verb read -t 128: every READ, 16 in flight at most" \
	json_check "$WORK/read-mlx5.json" \
	'"error" not in d and r["iterations"] == 300 and
	 d["device"]["rd_atom"] == 16 and r["server"]["completions"] == 0' ||
	show "$WORK/read-mlx5.err"
run atomic-mlx5 mlx5-roce cq_event_lat --verb atomic -n 100 --verify
check "mlx5 --verb atomic: every fetch-and-add, counted right" \
	json_check "$WORK/atomic-mlx5.json" \
	'"error" not in d and r["iterations"] == 100' ||
	show "$WORK/atomic-mlx5.err"
run atomic-bnxt bnxt_re cq_poll_bw --verb atomic -n 100 -I 64
check "bnxt_re --verb atomic: refused at setup, exit 2, naming atomic_cap" \
	eval 'test "$RC" -eq 2 && grep -q "atomic_cap NONE" "$WORK/atomic-bnxt.err"' ||
	show "$WORK/atomic-bnxt.err"

# A device that keeps no READ or atomic in flight (max_qp_rd_atom 0):
# refused at setup, naming the limit, not by modify_qp later.
FAULT=no_rd_atom run read-nord mlx5-roce cq_poll_bw --verb read -n 100
check "no_rd_atom --verb read: refused at setup, exit 2, naming max_qp_rd_atom" \
	eval 'test "$RC" -eq 2 && grep -q "max_qp_rd_atom 0" "$WORK/read-nord.err"' ||
	show "$WORK/read-nord.err"

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

# The policies that learn a wakeup's cost, on a moderated CQ (mlx5's
# period runs from the last event): no exchange stalls.
for mode in ski adaptive; do
	run "lat-$mode-mod" mlx5-roce cq_event_lat --cq-mode "$mode" \
		--cq-mod 4,100 -n 200 -s 64
	check "mlx5 --cq-mod 4,100, cq_event_lat $mode: every exchange" \
		json_check "$WORK/lat-$mode-mod.json" \
		'r["iterations"] == 200 and "error" not in d' ||
		show "$WORK/lat-$mode-mod.err"
done

# One blocking channel for 4 CQs, watched by epoll (the --cq-mod N,0
# residue timer): a wakeup takes every event queued on it, as --nonblock
# does, or each other CQ's event ends the next wait at once and counts
# as a wakeup that never slept (up to one per CQ).
for nb in block nonblock; do
	extra=()
	[ $nb = nonblock ] && extra=(--nonblock)
	run "wake4-$nb" mlx5-roce cq_poll_bw --cq-mode event --cq-mod 16,0 \
		-q 4 -n 400 -s 1024 "${extra[@]}"
done
wb=$(json_get "$WORK/wake4-block.json" 'r["server"]["wakeups"]')
wn=$(json_get "$WORK/wake4-nonblock.json" 'r["server"]["wakeups"]')
check "mlx5 --cq-mod 16,0 -q 4: blocking and --nonblock wake alike ($wb vs $wn)" \
	json_check "$WORK/wake4-block.json" \
	'"error" not in d and r["server"]["completions"] == 1600 and
	 r["server"]["wakeups"] <= 1.5 * '"${wn:-0}"' + 8' ||
	show "$WORK/wake4-block.err"

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

# Every binary under each personality, shortly, so that no provider
# path rots unseen.  mlx5: moderation on the receive side of each tool.
run all-bw mlx5-roce cq_poll_bw --cq-mode event --cq-mod 8,0 -n 300 -s 1024
check "mlx5: cq_poll_bw" json_check "$WORK/all-bw.json" \
	'r["server"]["completions"] == 300' || show "$WORK/all-bw.err"
run all-udbw mlx5-roce ud_send_bw --cq-mode hybrid --cq-mod 8,0 -n 300 -q 2
check "mlx5: ud_send_bw" json_check "$WORK/all-udbw.json" \
	'"error" not in d and r["iterations"] > 0' || show "$WORK/all-udbw.err"
run all-udlat mlx5-roce ud_send_lat --cq-mode event --cq-mod 2,0 -n 100
check "mlx5: ud_send_lat" json_check "$WORK/all-udlat.json" \
	'r["iterations"] == 100' || show "$WORK/all-udlat.err"
run all-cm mlx5-roce cm_event_stress -c 50 --cm-mode batch --msgs 2
check "mlx5: cm_event_stress" json_check "$WORK/all-cm.json" \
	'"error" not in d and d["summary"]["client"]["established"] == 50' ||
	show "$WORK/all-cm.err"

# bnxt_re refuses inline above 96 bytes with no QP and errno as it was: the auto
# inline size is bisected to what it grants.
for tool in cq_poll_bw cq_event_lat ud_send_bw ud_send_lat; do
	run "bnxt-$tool" bnxt_re "$tool" -n 100 -s 64
	check "bnxt_re: $tool, inline bisected to 96 or less" json_check \
		"$WORK/bnxt-$tool.json" '"error" not in d and
		 0 < d["device"]["inline_bytes"] <= 96' ||
		show "$WORK/bnxt-$tool.err"
done
# Finding 10: the inline probe runs once per run, not once per QP.
rm -f "$WORK/bnxt-q16.log"
CQPERF_TEST_DOUBLE_LOG=$WORK/bnxt-q16.log run bnxt-q16 bnxt_re cq_poll_bw \
	-q 16 -n 160 -s 64
n=$(grep -c '^create_qp' "$WORK/bnxt-q16.log" 2>/dev/null)
check "bnxt_re -q 16: the inline probe once a side ($n ibv_create_qp for 32 QPs)" \
	test "${n:-999}" -le 56 -a "$RC" -eq 0
run bnxt-cm bnxt_re cm_event_stress -c 50 --cm-mode nonblock
check "bnxt_re: cm_event_stress" json_check "$WORK/bnxt-cm.json" \
	'"error" not in d' || show "$WORK/bnxt-cm.err"

# irdma is iWARP: the RC and UD tools refuse it (exit 2, before any QP);
# RDMA CM runs (without QPs: rxe's kernel would not move an iWARP QP).
for tool in cq_poll_bw cq_event_lat ud_send_bw ud_send_lat; do
	run "irdma-$tool" irdma "$tool" -n 10
	check "irdma: $tool refuses iWARP with exit 2" test "$RC" -eq 2 &&
		check "irdma: $tool says why" grep -q "is an iWARP device" \
			"$WORK/irdma-$tool.err" || show "$WORK/irdma-$tool.err"
done
run irdma-cm irdma cm_event_stress -c 50 --no-qp --cm-mode block
check "irdma: cm_event_stress --no-qp" json_check "$WORK/irdma-cm.json" \
	'"error" not in d' || show "$WORK/irdma-cm.err"

# InfiniBand: without -x the tools address by LID alone (no GRH); the
# double routes that over rxe, so the whole path runs.  --mcast needs an
# SA join there: refused.
for tool in cq_poll_bw cq_event_lat ud_send_bw ud_send_lat; do
	CQPERF_TEST_DOUBLE_LOG=$WORK/ib-$tool.log run "ib-$tool" mlx5-ib "$tool" \
		-n 100 -s 256
	check "mlx5-ib: $tool addresses by LID" json_check "$WORK/ib-$tool.json" \
		'"error" not in d and d["device"]["addressing"] == "LID" and
		 d["device"]["link_layer"] == "InfiniBand"' ||
		show "$WORK/ib-$tool.err"
	check "mlx5-ib: $tool's address vectors had no GRH" \
		grep -q "lid-route" "$WORK/ib-$tool.log"
done
run ib-cm mlx5-ib cm_event_stress -c 50 --cm-mode nonblock
check "mlx5-ib: cm_event_stress" json_check "$WORK/ib-cm.json" \
	'"error" not in d' || show "$WORK/ib-cm.err"
run ib-mcast mlx5-ib ud_send_bw --mcast ::ffff:239.1.2.5 -n 10
check "mlx5-ib: --mcast refused (exit 2)" test "$RC" -eq 2 ||
	show "$WORK/ib-mcast.err"

# Faults on demand: each ends the run by its name, or is got around.
fault() { # fault NAME FAULT PATTERN ARGS...: the client fails naming it
	local name=$1 f=$2 pat=$3
	shift 3
	FAULT=$f run "fault-$name" mlx5-roce "$@"
	check "fault $f: exit 1, naming it" test "$RC" -eq 1 &&
		check "fault $f: the message names it" \
			grep -qi "$pat" "$WORK/fault-$name.err" ||
		show "$WORK/fault-$name.err"
}
fault qpfatal qp_fatal@200 "reported .* on QP" cq_poll_bw -D 3 -s 64
fault cqerr cq_err@200 "CQ overran" cq_poll_bw -D 3 -s 64
fault enomem send_enomem@50 "ibv_post_send.*Cannot allocate memory" \
	cq_poll_bw -n 300 -s 64
fault rnr wc_rnr@40 "RNR retry" cq_poll_bw -n 300 -s 64
# A send's completion behind a receive that came later (rxe's completer
# and responder are separate tasks): a ping-pong with one send in flight
# (-t 1) must retire the send before it makes room for the next.
for mode in poll event; do
	FAULT=send_late SFAULT=send_late run "late-$mode" mlx5-roce \
		ud_send_lat -t 1 -n 300 --warmup 10 --retry-us 200000 \
		--cq-mode "$mode"
	check "send_late, ud_send_lat -t 1 $mode: every exchange, none lost" \
		json_check "$WORK/late-$mode.json" \
		'"error" not in d and r["iterations"] == 300 and
		 r["lost_exchanges"] == 0' || show "$WORK/late-$mode.err"
done
FAULT=no_relaxed_ordering run relaxed mlx5-roce cq_poll_bw -n 100 -s 64
check "a device that refuses relaxed ordering: registered without it" \
	test "$RC" -eq 0 || show "$WORK/relaxed.err"

finish
