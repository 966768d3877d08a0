#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Side-by-side bandwidth of cq_poll_bw and perftest's ib_send_bw (poll
# mode, and event mode against ib_send_bw -e) on soft-RoCE, with
# equivalent settings, in pairs of runs (one of each tool, which goes first
# alternating from pair to pair) so that drift in the (noisy, TCG-emulated)
# guest cancels.
#
# Usage: bench-cq_poll_bw.sh [--out DIR] [--timeout SEC] [--report TSV]...
#
# Sizes 64, 4096 and 65536 bytes in each mode, BENCH_PAIRS (default 7, at
# least 7, at most 1000; BENCH_RUNS is its deprecated alias) pairs per
# size; iterations per size from BENCH_ITERS_64, BENCH_ITERS_4096 and
# BENCH_ITERS_65536.  Prints every run's average bandwidth in MB/s (2^20
# bytes/s) pair by pair, the medians, the median of the paired ratios
# ours/theirs with its interval (order statistics, at least 95 %; Holm
# over the report's verdicts) and a verdict: ahead or behind when the interval
# excludes 1 (higher is better), else parity; and the median of each
# tool's rxe retransmissions a run (rxe's completer_retry_err around the
# run; summary.json: ours_rxe_retries, theirs_rxe_retries); and the
# sending side's work a message, medians of each tool: the client's CPU,
# and the machine's tasklets and ksoftirqd CPU (/proc/softirqs,
# /proc/PID/schedstat; where a receiver's wakeups cost the sender under
# loopback rxe), each a whole run's over its messages (summary.json:
# TOOL_client_us_per_msg, TOOL_tasklets_per_msg,
# TOOL_ksoftirqd_us_per_msg).  Writes summary.json and runs.tsv to DIR
# (default: build/bench-cq_poll_bw).
# --report TSV: no runs, the report of an earlier run's runs.tsv again
# (summary.json into DIR, default TSV's folder).  --timeout: the whole
# run's (default 1800 s plus 30 s a run).
# After the pairs, each poll-mode case runs each tool's client once more
# under callgrind at 1000 and 5000 messages: user-space instructions per
# message (the difference of the Ir totals / 4000; the sender never polls
# its CQ empty there), printed after the verdicts and in summary.json
# under "work" (BENCH_WORK=0, or a BENCH_VERB other than send: not
# measured).
# BENCH_MODES="poll" or "event" measures one mode only (default both).
# BENCH_VERB=write or read: cq_poll_bw --verb VERB against ib_write_bw or
# ib_read_bw (-e in event mode; write: poll mode only, ours --cq-mode mem;
# no -r, receive queues being SEND's alone); default send.  --report
# wants the same BENCH_VERB as the run.
# Both tools run server on CPU 0 and client on CPU 1 (BENCH_NO_PIN=1: no).
# Exit status: 0 whatever the verdict (this is a measurement), 1 when a run
# still fails after its retries, 2 on usage errors, else softroce-run.sh's.
#
# The harness and this benchmark (its class in scripts/cqperf-bench) are
# Python: this script only runs it.
exec python3 "$(dirname "$0")/cqperf-bench" cq_poll_bw "$@"
