#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Side-by-side latency of ud_send_lat, perftest's ib_send_lat -c UD and
# rdma-core's ibv_ud_pingpong (the floor: the least a UD ping-pong loop
# costs) on soft-RoCE, with equivalent settings (poll mode, and event mode with -e); in groups of
# runs, one of each tool (a "pair"), the order rotating from pair to pair
# so that drift in the (noisy, TCG-emulated) guest cancels.
#
# Usage: bench-ud_send_lat.sh [--out DIR] [--timeout SEC] [--report TSV]...
#
# Size 64 bytes, BENCH_PAIRS (default 7, at least 7, at most 1000;
# BENCH_RUNS is its deprecated alias) pairs; BENCH_ITERS_64 (default
# 10000) exchanges per run. Prints every run's one-way latency in usec
# pair by pair (p50, perftest's t_typical, and average; ibv_ud_pingpong
# prints only an average, its usec/iter being a round trip: half of it),
# the medians, and per comparison the median of the paired ratios with its
# interval (order statistics, at least 95 %; Holm over the report)
# and a verdict, ahead or behind when the interval excludes 1 (lower is
# better), else parity: our p50 over ib_send_lat's, and our average over
# ibv_ud_pingpong's (the floor). Writes summary.json and runs.tsv to DIR
# (default: build/bench-ud_send_lat). --report TSV: no runs, the report of
# an earlier run's runs.tsv again (summary.json into DIR, default TSV's
# folder). --timeout: the whole run's (default 1800 s plus 30 s a run).
# After the pairs, the event-mode case runs each tool's client once more
# under callgrind at 300 and 1300 exchanges: user-space instructions per
# exchange (the difference of the Ir totals / 1000), printed after the
# verdicts and in summary.json under "work" (BENCH_WORK=0: not measured).
# BENCH_MODES="poll" or "event" measures one mode only (default both).
# All tools run server on CPU 0 and client on CPU 1 (BENCH_NO_PIN=1: no).
# Exit status: 0 whatever the verdict (this is a measurement), 1 when a run
# still fails after its retries, 2 on usage errors, else softroce-run.sh's.
#
# The harness and this benchmark (its class in scripts/cqperf-bench) are
# Python: this script only runs it.
exec python3 "$(dirname "$0")/cqperf-bench" ud_send_lat "$@"
