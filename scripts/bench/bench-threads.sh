#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bench-threads.sh: runs the benchmark threads, class Threads in
# scripts/bench/cqperf-bench, whose docstring `bench-threads.sh --help` prints.
exec python3 "$(dirname "$0")/cqperf-bench" threads "$@"
