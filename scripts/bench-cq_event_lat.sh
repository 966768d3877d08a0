#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Side-by-side latency of cq_event_lat, perftest's ib_send_lat and
# rdma-core's ibv_rc_pingpong (the floor: the least an RC ping-pong loop
# costs) on soft-RoCE, with equivalent settings: poll mode against
# ib_send_lat and ibv_rc_pingpong, event mode against ib_send_lat -e and
# ibv_rc_pingpong -e; in groups of runs, one of each tool (a "pair"), the
# order rotating from pair to pair so that drift in the (noisy,
# TCG-emulated) guest cancels.
#
# Usage: bench-cq_event_lat.sh [--out DIR] [--timeout SEC] [--report TSV]...
#
# Sizes 64 and 4096 bytes in each mode, BENCH_PAIRS (default 7, at least
# 7, at most 1000; BENCH_RUNS is its deprecated alias) pairs per mode and
# size; BENCH_ITERS_POLL (default 10000) and BENCH_ITERS_EVENT (default
# 5000) exchanges per run. Prints every run's one-way latency in usec pair
# by pair (p50, perftest's t_typical, and average; ibv_rc_pingpong prints
# only an average, its usec/iter being a round trip: half of it), the
# medians, and per comparison the median of the paired ratios with its
# interval (order statistics, at least 95 %; Holm over the report)
# and a verdict, ahead or behind when the interval excludes 1 (lower is
# better), else parity: our p50 over ib_send_lat's, and our average over
# ibv_rc_pingpong's (the floor); for event mode also the client's CPU time
# per exchange against ib_send_lat's. Writes summary.json and runs.tsv to
# DIR (default: build/bench-cq_event_lat). --report TSV: no runs, the
# report of an earlier run's runs.tsv again (summary.json into DIR,
# default TSV's folder). --timeout: the whole run's (default 1800 s plus
# 30 s a run).
# After the pairs, each event-mode case runs each tool's client once more
# under callgrind at 300 and 1300 exchanges: user-space instructions per
# exchange (the difference of the Ir totals / 1000), printed after the
# verdicts and in summary.json under "work" (BENCH_WORK=0: not measured).
# BENCH_MODES="poll" or "event" measures one mode only (default both).
# BENCH_VERB=write, read or atomic: cq_event_lat --verb VERB against
# ib_write_lat, ib_read_lat or ib_atomic_lat (-e in event mode; write: poll
# mode only, ours --cq-mode mem; atomic: 8 bytes; no floor: rdma-core has
# no ping-pong of those verbs); default send.  --report wants the same
# BENCH_VERB as the run.
# All tools run server on CPU 0 and client on CPU 1 (BENCH_NO_PIN=1: no).
# Exit status: 0 whatever the verdict (this is a measurement), 1 when a run
# still fails after its retries, 2 on usage errors, else softroce-run.sh's.
#
# The harness and this benchmark (its class in scripts/cqperf-bench) are
# Python: this script only runs it.
exec python3 "$(dirname "$0")/cqperf-bench" cq_event_lat "$@"
