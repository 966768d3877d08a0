#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bench-ud_send_lat.sh: runs the benchmark ud_send_lat, class UdSendLat in
# scripts/bench/cqperf-bench, whose docstring `bench-ud_send_lat.sh --help` prints.
exec python3 "$(dirname "$0")/cqperf-bench" ud_send_lat "$@"
