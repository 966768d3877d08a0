#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bench-cq_poll_bw.sh: runs the benchmark cq_poll_bw, class CqPollBw in
# scripts/bench/cqperf-bench, whose docstring `bench-cq_poll_bw.sh --help` prints.
exec python3 "$(dirname "$0")/cqperf-bench" cq_poll_bw "$@"
