#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bench-cm_event_stress.sh: runs the benchmark cm_event_stress, class CmEventStress in
# scripts/bench/cqperf-bench, whose docstring `bench-cm_event_stress.sh --help` prints.
exec python3 "$(dirname "$0")/cqperf-bench" cm_event_stress "$@"
