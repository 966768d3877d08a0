#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bench-rate.sh: runs the benchmark rate, class Rate in
# scripts/bench/cqperf-bench, whose docstring `bench-rate.sh --help` prints.
exec python3 "$(dirname "$0")/cqperf-bench" rate "$@"
