#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The human report as a person sees it in a terminal.  Each tool's
# usual invocations print no line wider than 100 columns; the other
# test files check their own human outputs with `fits` (-a, open loop,
# --compare-modes, --project, -H, --threads --per-thread, UD loss, CM
# events).  Here: what they do not run (--idle-sec, a shared receive
# queue, UD latency, CM workers), every tool's server, and --wide.
. "$(dirname "$0")/lib.sh"
require_device

# run TOOL NAME ARGS...: a client of TOOL's server on $port.
run() {
	local tool=$1 name=$2
	shift 2
	timeout 120 "$CQPERF_BIN/$tool" -p "$port" --timeout 30 "$@" "$ADDR" \
		>"$WORK/$tool-$name.out" 2>"$WORK/$tool-$name.err"
	check "$tool $name: a report" grep -q -- '^----' "$WORK/$tool-$name.out" ||
		show "$WORK/$tool-$name.err"
}

served() { # served TOOL: stop it; its own reports fit too
	stop_server
	fits "$1 server" "$WORK/$1.server.out"
}

serve cq_poll_bw 30
run cq_poll_bw wide -d "$DEV" -s 4K -n 200 --cq-mode event --wide
check "cq_poll_bw --wide: the row and both sides' cost on one line" eval \
	"grep -q 'client: CPU%.*server: CPU%' '$WORK/cq_poll_bw-wide.out' &&
	 awk '/^ 4096 +200 / { n++; if (NF < 17) bad = 1 }
	      END { exit !(n == 1 && !bad) }' '$WORK/cq_poll_bw-wide.out' &&
	 ! grep -q '^     cost ' '$WORK/cq_poll_bw-wide.out'" ||
	show "$WORK/cq_poll_bw-wide.out"
served cq_poll_bw

serve cq_event_lat 30
run cq_event_lat idle -d "$DEV" --compare-modes --idle-sec 1 -s 4K -n 100
fits "cq_event_lat --compare-modes --idle-sec" "$WORK/cq_event_lat-idle.out"
served cq_event_lat

serve ud_send_bw 30
run ud_send_bw srq -d "$DEV" -q 8 --srq -r 4096 --verify --cq-mode event \
	-n 1000
fits "ud_send_bw -q 8 --srq" "$WORK/ud_send_bw-srq.out"
served ud_send_bw

serve ud_send_lat 30
run ud_send_lat modes -d "$DEV" --compare-modes -n 100
fits "ud_send_lat --compare-modes" "$WORK/ud_send_lat-modes.out"
run ud_send_lat rate -d "$DEV" --rate 200 -n 100
fits "ud_send_lat --rate" "$WORK/ud_send_lat-rate.out"
served ud_send_lat

serve cm_event_stress 30
run cm_event_stress workers --threads 4 --msgs 4 -c 20
fits "cm_event_stress --threads" "$WORK/cm_event_stress-workers.out"
served cm_event_stress

finish
