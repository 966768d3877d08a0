#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bench-cq_event_lat.sh: runs the benchmark cq_event_lat, class CqEventLat in
# scripts/bench/cqperf-bench, whose docstring `bench-cq_event_lat.sh --help` prints.
exec python3 "$(dirname "$0")/cqperf-bench" cq_event_lat "$@"
