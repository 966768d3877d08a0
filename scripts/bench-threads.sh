#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# What completion threads buy and what sharing a channel costs, on
# soft-RoCE: cq_poll_bw --threads 2 in event mode, 64 B and 4 KiB, in
# pairs of runs (the order alternating) so that drift in the TCG guest
# cancels. Two comparisons, each case a pair of configurations of ours:
#   shared-SIZE  --threads 2 --shared-channel (the server's threads on one
#                channel) against --threads 2 with a channel per thread
#   threads-SIZE --threads 2 against --threads 1 (does a second thread buy
#                anything on this device?)
#
# Usage: bench-threads.sh [--out DIR] [--timeout SEC] [--report TSV]...
#
# BENCH_PAIRS pairs (default 7, at least 7); iterations per QP and thread
# from BENCH_ITERS_64 and BENCH_ITERS_4096. Per case: each run's bandwidth
# (MB/s, 2^20 B/s) and the server's CPU per message (its threads' CPU
# time over the messages, in us), the medians, the median of the paired
# ratios with its order statistics' interval and a verdict (bandwidth: higher
# is better; CPU per message: lower). The "ours" of a case is the first
# configuration named above, "theirs" the second. Processes are not
# pinned (unlike the other bench scripts): pinned, a side's two threads
# would share one CPU. Writes summary.json and runs.tsv to DIR (default
# build/bench-threads). Exit status: 0 whatever the verdict, 1 when a run
# still fails after its retries, 2 on usage errors, else softroce-run.sh's.
#
# The harness and this benchmark (its class in scripts/cqperf-bench) are
# Python: this script only runs it.
exec python3 "$(dirname "$0")/cqperf-bench" threads "$@"
