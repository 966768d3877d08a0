#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Side-by-side bandwidth of ud_send_bw and perftest's ib_send_bw -c UD on
# soft-RoCE, with equivalent settings, in pairs of runs (one of each tool,
# which goes first alternating from pair to pair) so that drift in the
# (noisy, TCG-emulated) guest cancels.
#
# Usage: bench-ud_send_bw.sh [--out DIR] [--timeout SEC] [--report TSV]...
#
# Sizes 64, 1024 and 4096 bytes (UD: at most the MTU), BENCH_PAIRS
# (default 7, at least 7, at most 1000; BENCH_RUNS is its deprecated
# alias) pairs per size; iterations per size from BENCH_ITERS_64,
# BENCH_ITERS_1024 and BENCH_ITERS_4096. Prints every run's average
# sending bandwidth in MB/s (2^20 bytes/s, the client's figure, as
# perftest's client prints it) pair by pair, the medians, the median of
# the paired ratios ours/theirs with its interval (order statistics, at
# least 95 %; Holm over the report's verdicts) and a verdict: ahead or behind
# when the interval excludes 1 (higher is better), else parity; also what
# was lost on the way (ours counts it; perftest's server only waits for
# it); the sending side's work a message, and each tool's user-space
# instructions per message in poll mode (BENCH_WORK=0: not measured), as
# bench-cq_poll_bw.sh says.
# Writes summary.json and runs.tsv to DIR (default:
# build/bench-ud_send_bw). --report TSV: no runs, the report of an earlier
# run's runs.tsv again (summary.json into DIR, default TSV's folder).
# --timeout: the whole run's (default 1800 s plus 30 s a run).
# BENCH_MODES="poll" or "event" measures one mode only (default both).
# Both tools run server on CPU 0 and client on CPU 1 (BENCH_NO_PIN=1: no).
# Exit status: 0 whatever the verdict (this is a measurement), 1 when a run
# still fails after its retries, 2 on usage errors, else softroce-run.sh's.
#
# The harness and this benchmark (its class in scripts/cqperf-bench) are
# Python: this script only runs it.
exec python3 "$(dirname "$0")/cqperf-bench" ud_send_bw "$@"
