#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bench-ud_send_bw.sh: runs the benchmark ud_send_bw, class UdSendBw in
# scripts/bench/cqperf-bench, whose docstring `bench-ud_send_bw.sh --help` prints.
exec python3 "$(dirname "$0")/cqperf-bench" ud_send_bw "$@"
