#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Device resource limits for every RDMA binary: queue and CQ depths above
# what the device reports, more QPs than it (or our cap) allows, buffers
# over the server's --max-mem, inline data it will not grant.  Each fails
# with exit 2 when the request itself is wrong (the option's bounds, or
# the device's, found before anything is created) or 1 when the server
# refuses it, and the message names the option and the limit's value.  A
# persistent server keeps serving through all of it.
# (cq_poll_bw_faults.sh has the --max-mem and inline cases of cq_poll_bw.)
. "$(dirname "$0")/lib.sh"
require_device
prefer_sanitized

MAXMEM=33554432 # the servers' --max-mem: 32 MiB (above -t 32768 -r 32768's queues)

# attr NAME: a device limit as ibv_devinfo -v shows it.
attr() {
	ibv_devinfo -v -d "$DEV" | awk -v k="$1:" '$1 == k { print $2; exit }'
}
max_qp=$(attr max_qp)
max_cq=$(attr max_cq)
max_qp_wr=$(attr max_qp_wr)
max_cqe=$(attr max_cqe)
echo "# $DEV: max_qp $max_qp, max_cq $max_cq, max_qp_wr $max_qp_wr," \
	"max_cqe $max_cqe"
for v in "$max_qp" "$max_cq" "$max_qp_wr" "$max_cqe"; do
	[[ $v =~ ^[0-9]+$ ]] || {
		not_ok "ibv_devinfo -v shows the device's limits"
		finish
	}
done

# Our own caps, from the option table.
CAP_DEPTH=32768
CAP_CQ_DEPTH=4194304
CAP_QPS=1024

# A short run, should a limit not stop it.
iters() { [ "$1" = cm_event_stress ] && echo "-c 10" || echo "-n 10"; }

# limit TOOL WANT_RC ARGS... -- NEEDLE...: a client run against $port
# exits WANT_RC and its message holds every NEEDLE.
limit() {
	local tool=$1 want=$2 args=() needles=() n rc ok=true
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	shift
	needles=("$@")
	# shellcheck disable=SC2046  # the arguments are words
	timeout 120 "$CQPERF_BIN/$tool" -d "$DEV" -p "$port" --timeout 20 \
		$(iters "$tool") "${args[@]}" "$ADDR" >/dev/null \
		2>"$WORK/limit.err"
	rc=$?
	# kept for finish's look for sanitizer reports
	cat "$WORK/limit.err" >>"$WORK/limit-all.err"
	[ "$rc" -eq "$want" ] || ok=false
	for n in "${needles[@]}"; do
		grep -qF -- "$n" "$WORK/limit.err" || ok=false
	done
	check "$tool ${args[*]}: exit $want naming ${needles[*]} (got $rc)" \
		$ok || show "$WORK/limit.err"
}

# Nothing in a persistent server's log but its one line per failure.
only_still_serving() { ! grep -v '(still serving)$' "$1" | grep -q .; }

good_args() {
	case $1 in
	cq_poll_bw | ud_send_bw) echo "-s 1024 -n 100" ;;
	*) echo "-s 64 -n 100" ;;
	esac
}

for tool in cq_poll_bw cq_event_lat ud_send_bw ud_send_lat; do
	start=$(date +%s)
	port=$(next_port)
	# --quiet: its log holds only the failures checked below.
	start_server "$tool" "$port" --persistent --timeout 20 --quiet \
		--max-mem "$MAXMEM" || not_ok "$tool: server listens"
	serr=$WORK/$tool.server.err
	case $tool in ud_*) s=(-s 64) ;; *) s=(-s 1024) ;; esac

	# CQ depth: asked for, or made by the queue depths.
	if [ $((max_cqe + 1)) -le $CAP_CQ_DEPTH ]; then
		limit "$tool" 2 "${s[@]}" --cq-depth $((max_cqe + 1)) -- \
			"--cq-depth $((max_cqe + 1))" "$max_cqe"
	else
		limit "$tool" 2 "${s[@]}" --cq-depth $((CAP_CQ_DEPTH + 1)) -- \
			"--cq-depth" "1..$CAP_CQ_DEPTH"
	fi
	if [ $((2 * CAP_DEPTH)) -gt "$max_cqe" ] &&
		[ "$CAP_DEPTH" -le "$max_qp_wr" ]; then
		limit "$tool" 2 "${s[@]}" -t $CAP_DEPTH -r $CAP_DEPTH -- \
			"--tx-depth $CAP_DEPTH + --rx-depth $CAP_DEPTH" \
			"max_cqe $max_cqe"
	fi

	# Work queue depth: the device's max_qp_wr, or our cap above it.
	if [ "$max_qp_wr" -lt $CAP_DEPTH ]; then
		limit "$tool" 2 "${s[@]}" -t $((max_qp_wr + 1)) -- \
			"--tx-depth $((max_qp_wr + 1))" "max_qp_wr $max_qp_wr"
		limit "$tool" 2 "${s[@]}" -r $((max_qp_wr + 1)) -- \
			"--rx-depth $((max_qp_wr + 1))" "max_qp_wr $max_qp_wr"
	else
		limit "$tool" 2 "${s[@]}" -t $((CAP_DEPTH + 1)) -- \
			"--tx-depth" "1..$CAP_DEPTH"
		limit "$tool" 2 "${s[@]}" -r $((CAP_DEPTH + 1)) -- \
			"--rx-depth" "1..$CAP_DEPTH"
	fi

	# QPs: the device's max_qp (a CQ each: max_cq), or our cap.
	if [ "$tool" = cq_event_lat ]; then
		limit "$tool" 2 "${s[@]}" -q 2 -- "'-q'"
	elif [ "$max_qp" -lt $CAP_QPS ]; then
		limit "$tool" 2 "${s[@]}" -q $((max_qp + 1)) -- \
			"--qps $((max_qp + 1))" "max_qp $max_qp"
	elif [ "$max_cq" -lt $CAP_QPS ]; then
		limit "$tool" 2 "${s[@]}" -q $((max_cq + 1)) -- \
			"--qps $((max_cq + 1))" "max_cq $max_cq"
	else
		limit "$tool" 2 "${s[@]}" -q $((CAP_QPS + 1)) -- \
			"--qps" "1..$CAP_QPS"
	fi

	# Buffers over the server's --max-mem: it refuses, naming it.
	if [ "$tool" != cq_poll_bw ]; then
		case $tool in
		cq_event_lat) big=(-s 32M) ;;
		ud_*) big=(-s 4096 -r 8192) ;; # 8192 x (4096 + 40 GRH)
		esac
		limit "$tool" 1 "${big[@]}" -- "--max-mem of $MAXMEM" "rejected"
	fi
	# Inline data the device will not grant (ud_send_bw.sh and
	# cq_poll_bw_faults.sh cover the other two).
	case $tool in cq_event_lat | ud_send_lat)
		limit "$tool" 2 -s 64 -I 4000 -- "--inline 4000" "grants at most"
		;;
	esac

	# shellcheck disable=SC2046  # the arguments are words
	"$CQPERF_BIN/$tool" -d "$DEV" -p "$port" --timeout 20 \
		$(good_args "$tool") --output json "$ADDR" >"$WORK/good.json" \
		2>"$WORK/good.err"
	cat "$WORK/good.err" >>"$WORK/good-all.err"
	check "$tool: the server serves a good client after all that" \
		json_check "$WORK/good.json" '"error" not in d and
		 r["iterations"] == 100' || show "$WORK/good.err" "$serr"
	check "$tool: every failure the server saw is one log line" \
		only_still_serving "$serr" || show "$serr"
	stop_server
	check "$tool: no QP left behind" test \
		"$(rdma resource show qp 2>/dev/null | grep -Ec 'type (RC|UD)')" -eq 0
	echo "# $tool: $(($(date +%s) - start)) s"
done

# cm_event_stress makes QPs per connection, bounded by its options.
limit cm_event_stress 2 -c 1000001 -- "--connections" "1..1000000"
limit cm_event_stress 2 --concurrency 65537 -- "--concurrency" "1..65536"

finish
