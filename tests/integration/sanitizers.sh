#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Every binary under AddressSanitizer + UBSan (a build configured with
# --enable-sanitizers, in $CQPERF_ASAN_BIN) in every mode, and under
# valgrind memcheck; any report fails the check.
. "$(dirname "$0")/lib.sh"
require_device

pair() { # pair NAME SERVER-WRAPPER CLIENT-WRAPPER BIN/TOOL ARGS...
	local name=$1 swrap=$2 cwrap=$3 tool=$4 port
	shift 4
	port=$(next_port)
	# shellcheck disable=SC2086
	$swrap "$tool" -d "$DEV" -p "$port" --timeout 60 \
		>"$WORK/$name.s.out" 2>"$WORK/$name.s.err" &
	SERVER_PID=$!
	# No wait for the server to listen: the client retries until its
	# --timeout, so the two start side by side (valgrind takes seconds
	# to start under TCG).
	# shellcheck disable=SC2086
	$cwrap "$tool" -d "$DEV" -p "$port" --timeout 60 "$@" "$ADDR" \
		>"$WORK/$name.c.out" 2>"$WORK/$name.c.err"
	local crc=$?
	wait "$SERVER_PID"
	local src=$?
	SERVER_PID=
	check "$name: client exit 0 (got $crc), server exit 0 (got $src), no reports" \
		eval 'test $crc -eq 0 -a $src -eq 0 &&
		      ! grep -Eq "ERROR: AddressSanitizer|runtime error|ERROR SUMMARY: [1-9]|definitely lost: [1-9]" \
		      "$WORK/$name.c.err" "$WORK/$name.s.err"' ||
		show "$WORK/$name.c.err" "$WORK/$name.s.err"
}

if [ -n "${CQPERF_ASAN_BIN:-}" ] && [ -x "$CQPERF_ASAN_BIN/cq_poll_bw" ]; then
	export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=23
	export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
	for mode in poll event hybrid; do
		pair "asan-bw-$mode" "" "" "$CQPERF_ASAN_BIN/cq_poll_bw" \
			--cq-mode "$mode" -s 4096 -n 500 -q 2 --output json
	done
	pair "asan-bw-threads" "" "" "$CQPERF_ASAN_BIN/cq_poll_bw" \
		--threads 2 -q 2 --cq-mode ski --poll-batch auto -s 1024 \
		-n 200 --output json
	# -a: a warm-up of 2 sends a size, not 128 (a GiB a QP at 8 MiB).
	pair "asan-bw-shared" "" "" "$CQPERF_ASAN_BIN/cq_poll_bw" \
		--threads 2 --shared-channel --cq-mode hybrid -a -n 4 -r 8 \
		--warmup 2
	pair "asan-bw-all" "" "" "$CQPERF_ASAN_BIN/cq_poll_bw" -a -n 2 --warmup 2 \
		--cq-mode event --nonblock --channel-per-cq -q 2
	pair "asan-lat-modes" "" "" "$CQPERF_ASAN_BIN/cq_event_lat" \
		--compare-modes --idle-sec 1 -H --project 10g -n 300 --output json
	pair "asan-lat-threads" "" "" "$CQPERF_ASAN_BIN/cq_event_lat" \
		--threads 2 --compare-modes -n 200 -H --samples /dev/null \
		--output json
	pair "asan-lat-all" "" "" "$CQPERF_ASAN_BIN/cq_event_lat" -a -n 3 \
		--warmup 1 --cq-mode event --nonblock --solicited --ack-batch 8
	# --verb: every verb in every mode, payloads and counts checked.
	pair "asan-lat-verbs" "" "" "$CQPERF_ASAN_BIN/cq_event_lat" \
		--verbs send,write-imm,write,read,atomic --compare-modes \
		-s 8 -n 40 --verify --output json
	pair "asan-bw-verbs" "" "" "$CQPERF_ASAN_BIN/cq_poll_bw" \
		--verbs send,write-imm,write,read,atomic -s 8 -n 60 -q 2 \
		--verify --cq-mode event --output json
	pair "asan-lat-verbs-open" "" "" "$CQPERF_ASAN_BIN/cq_event_lat" \
		--verbs write,read --rates 1k --compare-modes -s 64 -n 100 \
		--output json
	# Every completion policy (cqperf(7) POLICIES) on the server.
	pair "asan-lat-open" "" "" "$CQPERF_ASAN_BIN/cq_event_lat" \
		--compare-modes poll,event,hybrid,empty:8,timer,ski:rand,adaptive \
		--p99-target 50 --rate 2k --arrival burst:8 -n 400 -H \
		--client-cq-mode hybrid \
		--samples /dev/null --output json
	for mode in poll event hybrid; do
		pair "asan-ud-bw-$mode" "" "" "$CQPERF_ASAN_BIN/ud_send_bw" \
			--cq-mode "$mode" -s 1024 -n 500 -q 2 --verify --output json
	done
	pair "asan-ud-bw-all" "" "" "$CQPERF_ASAN_BIN/ud_send_bw" -a -n 20 \
		--srq -q 2 --cq-mode event --nonblock --channel-per-cq
	pair "asan-ud-bw-threads" "" "" "$CQPERF_ASAN_BIN/ud_send_bw" \
		--threads 2 --srq -q 2 --verify -n 300 --cq-mode event
	pair "asan-ud-bw-cm" "" "" "$CQPERF_ASAN_BIN/ud_send_bw" --rdma-cm \
		-q 2 -n 200
	pair "asan-ud-bw-mcast" "" "" "$CQPERF_ASAN_BIN/ud_send_bw" \
		--mcast ::ffff:239.1.2.4 -q 2 -n 200
	pair "asan-ud-lat-modes" "" "" "$CQPERF_ASAN_BIN/ud_send_lat" \
		--compare-modes --idle-sec 1 -H --project 10g -n 200 --verify \
		--output json
	for mode in block nonblock batch; do
		pair "asan-cm-$mode" "" "" "$CQPERF_ASAN_BIN/cm_event_stress" \
			-c 200 --reject-pct 30 --cm-mode "$mode" --output json
	done
	pair "asan-cm-threads" "" "" "$CQPERF_ASAN_BIN/cm_event_stress" \
		-c 200 --reject-pct 30 --threads 4 --msgs 2 --cm-batch 4 \
		--cm-mode batch --rounds 2
	pair "asan-cm-noqp" "" "" "$CQPERF_ASAN_BIN/cm_event_stress" \
		-c 200 --no-qp --cm-mode nonblock --threads 2
	pair "asan-ud-lat-all" "" "" "$CQPERF_ASAN_BIN/ud_send_lat" -a -n 3 \
		--warmup 1 --cq-mode event --nonblock --solicited --srq -q 2 \
		--rdma-cm
else
	echo "# no sanitizer build in CQPERF_ASAN_BIN: ASan checks not run"
	not_ok "sanitizer build available"
fi

vg="valgrind -q --error-exitcode=19 --leak-check=full --errors-for-leak-kinds=definite --suppressions=$(dirname "$0")/valgrind.supp"
if command -v valgrind >/dev/null; then
	pair "valgrind-bw" "$vg" "$vg" "$CQPERF_BIN/cq_poll_bw" \
		--cq-mode event -s 1024 -n 200 --output json
	pair "valgrind-bw-threads" "$vg" "$vg" "$CQPERF_BIN/cq_poll_bw" \
		--threads 2 --cq-mode hybrid -s 1024 -n 100 --output json
	pair "valgrind-bw-shared" "$vg" "$vg" "$CQPERF_BIN/cq_poll_bw" \
		--threads 2 --shared-channel --cq-mode event -s 1024 -n 100 -r 16
	pair "valgrind-lat" "$vg" "$vg" "$CQPERF_BIN/cq_event_lat" \
		--compare-modes -n 100 --warmup 10 -H --output json
	pair "valgrind-lat-verbs" "$vg" "$vg" "$CQPERF_BIN/cq_event_lat" \
		--verbs send,write-imm,write,read,atomic -s 8 -n 30 \
		--warmup 5 --verify --output json
	pair "valgrind-lat-open" "$vg" "$vg" "$CQPERF_BIN/cq_event_lat" \
		--rate 500 --arrival pareto:1.5 --cq-mode timer \
		--client-cq-mode adaptive -n 200 --warmup 10 --output json
	pair "valgrind-ud-bw" "$vg" "$vg" "$CQPERF_BIN/ud_send_bw" \
		--cq-mode event -s 1024 -n 200 -q 2 --srq --verify --output json
	pair "valgrind-ud-bw-cm" "$vg" "$vg" "$CQPERF_BIN/ud_send_bw" \
		--rdma-cm -n 100
	# An event read after its ack would show here as an invalid read.
	pair "valgrind-cm" "$vg" "$vg" "$CQPERF_BIN/cm_event_stress" \
		-c 100 --reject-pct 30 --msgs 2 --output json
	pair "valgrind-cm-threads" "$vg" "$vg" "$CQPERF_BIN/cm_event_stress" \
		-c 100 --reject-pct 30 --no-qp --threads 2 --cm-mode batch
	pair "valgrind-ud-lat" "$vg" "$vg" "$CQPERF_BIN/ud_send_lat" \
		--compare-modes -n 100 --warmup 10 --verify --output json
else
	not_ok "valgrind installed"
fi
finish
