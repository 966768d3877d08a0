#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Side-by-side RDMA CM connection setup of cm_event_stress and rdma-core's
# cmtime (rdmacm-utils) on soft-RoCE: the full-connect rate of a storm of
# connections with QPs, in pairs of runs (one of each tool, which goes
# first alternating from pair to pair) so that drift in the (noisy,
# TCG-emulated) guest cancels.
#
# Usage: bench-cm_event_stress.sh [--out DIR] [--timeout SEC] [--report TSV]...
#
# BENCH_CONNECTIONS (default 500) connections per run, BENCH_PAIRS
# (default 7, at least 7, at most 1000; BENCH_RUNS is its deprecated
# alias) pairs. Prints every run's full-connect rate in connections/s of
# both tools and the ratio ours/cmtime pair by pair, the medians, the
# median of the paired ratios with its interval (order statistics, at
# least 95 %; Holm's step-down over the report's verdicts) and a verdict: ahead or behind
# when the interval excludes 1 (higher is better), else parity; then, as
# a note, each step's figures of both tools (medians over the runs) side
# by side. Writes summary.json and runs.tsv to DIR (default:
# build/bench-cm_event_stress). --report TSV: no runs, the report of an
# earlier run's runs.tsv again (summary.json into DIR, default TSV's
# folder). --timeout: the whole run's (default 1800 s plus 30 s a run).
# Both tools run server on CPU 0 and client on CPU 1 (BENCH_NO_PIN=1: no).
# Exit status: 0 whatever the verdict (this is a measurement), 1 when a run
# still fails after its retries, 2 on usage errors, else softroce-run.sh's.
#
# The full-connect rate: connections over the time from the first
# rdma_create_id to the last connection ESTABLISHED, with QPs (the
# client's made after route resolution, before rdma_connect; the server's
# on each request, before rdma_accept).
#  - ours: summary.conn_per_s of the client's JSON, its connections
#    established over its connect phase, which runs from the first
#    rdma_create_id to the last ESTABLISHED.
#  - cmtime: connections (-c) over the sum of the "total ms" of its client's
#    connect-side steps: create id, bind addr (only with -b, so not here),
#    resolve addr, resolve route, create qp, connect. cmtime runs each step
#    for every connection before the next step, timing each step from its
#    first call to its last completion (connect: to the last ESTABLISHED),
#    back to back, so the sum is the same span as ours (less the few
#    printf()s between steps). Its disconnect and destroy steps are
#    teardown, left out (ours' teardown phase is left out alike).
# Like for like: cmtime issues every connection's call of a step at once,
# so ours runs with --concurrency equal to the connections (all in
# flight); both create an RC QP per connection on both sides (ours without
# --no-qp; cmtime with rdma_create_qp), take events with a blocking
# rdma_get_cm_event (ours --cm-mode block, --threads 0), retry a failed
# resolution cmtime's default 2 times (--retries / -r) with cmtime's
# default 2000 ms timeout (--cm-timeout-ms / -t). What differs: cmtime
# goes step by step for all connections, ours takes each connection on to
# its next step as its event arrives; ours does all on one thread, where
# cmtime's client takes events on a thread of its own while its main
# thread makes the calls, and its server hands requests and disconnects
# to worker threads; cmtime's -r is also its connections' transport retry
# count (ours 7: no matter without loss).
#
# The note's per-step figures are not alike either: cmtime (rdma-core 44)
# prints per step its total (first call to last completion), "us / conn"
# (that total over the connections: an amortized time, not a latency),
# and the least and most time one connection took. Ours has no step
# totals (its steps overlap); it has each connection's latency from the
# call to its event (ADDR_RESOLVED, ROUTE_RESOLVED, ESTABLISHED and, in the
# teardown, DISCONNECTED from rdma_disconnect), shown as p50, average, min
# and max, the last two comparable with cmtime's min and max.
#
# cmtime's server (v44) counts disconnects and should end after the
# client's; in the soft-RoCE guest it has not (its connection ids all
# destroyed, only its listener left, its main thread waiting in
# rdma_get_cm_event and its worker threads for work): once its client has
# ended it gets release_grace seconds, then is stopped (the run still
# counts, "released" in runs.tsv; the server measures nothing). cmtime's exit
# status ignores failed connections, so a run whose output names an error
# event or failure is a failed run (and retried).
#
# The harness and this benchmark (its class in scripts/cqperf-bench) are
# Python: this script only runs it.
exec python3 "$(dirname "$0")/cqperf-bench" cm_event_stress "$@"
