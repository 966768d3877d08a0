#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Rate accuracy of cq_poll_bw --rate against perftest's software rate
# limiter (ib_send_bw --rate_limit R --rate_limit_type SW --rate_units p)
# on soft-RoCE, 64-byte messages, in pairs of runs (one of each tool, the
# order alternating) so that drift in the TCG guest cancels.
#
# Usage: bench-rate.sh [--out DIR] [--timeout SEC] [--report TSV]...
#
# Rates 1000, 5000 and 20000 messages/s (BENCH_RATES: others), each run
# about 2 s (iterations = 2 x rate), BENCH_PAIRS pairs (default 7, at
# least 7). Per run the achieved message rate each tool reports (ours:
# achieved_rate; perftest: its MsgRate) and its error |achieved/offered -
# 1| in percent; per rate each tool's median error with its order
# statistics' interval, and the median of the paired ratios of errors ours/theirs
# with its interval and a verdict (lower is better). Writes summary.json
# and runs.tsv to DIR (default build/bench-rate). Exit status: 0 whatever
# the verdict, 1 when a run still fails after its retries, 2 on usage
# errors, else softroce-run.sh's.
#
# The harness and this benchmark (its class in scripts/cqperf-bench) are
# Python: this script only runs it.
exec python3 "$(dirname "$0")/cqperf-bench" rate "$@"
