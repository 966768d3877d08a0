#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# What completion threads buy and what sharing a channel costs, on
# soft-RoCE: cq_poll_bw --threads 2 in event mode, 64 B and 4 KiB, in
# pairs of runs (the order alternating) so that drift in the TCG guest
# cancels. Two comparisons, each case a pair of configurations of ours:
#   shared-SIZE  --threads 2 --shared-channel (the server's threads on one
#                channel) against --threads 2 with a channel per thread
#   threads-SIZE --threads 2 against --threads 1 (does a second thread buy
#                anything on this device?)
#
# Usage: bench-threads.sh [--out DIR] [--timeout SEC] [--report TSV]...
#
# BENCH_PAIRS pairs (default 7, at least 7); iterations per QP and thread
# from BENCH_ITERS_64 and BENCH_ITERS_4096. Per case: each run's bandwidth
# (MB/s, 2^20 B/s) and the server's CPU per message (its threads' CPU
# time over the messages, in us), the medians, the median of the paired
# ratios with its 95 % bootstrap interval and a verdict (bandwidth: higher
# is better; CPU per message: lower). The "ours" of a case is the first
# configuration named above, "theirs" the second. Processes are not
# pinned (unlike the other bench scripts): pinned, a side's two threads
# would share one CPU. Writes summary.json and runs.tsv to DIR (default
# build/bench-threads). Exit status: 0 whatever the verdict, 1 when a run
# still fails after its retries, 2 on usage errors, else softroce-run.sh's.
set -euo pipefail

# shellcheck source=scripts/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"

# Both sides are ours: no perftest in this comparison.
kind=bw ours_tool=cq_poll_bw
tools=(ours theirs)
need_files+=("build/src/$ours_tool")
tx_depth=128
pin_server=()
pin_client=()
case_column=case
make_specs() {
    local kind size iters
    for kind in shared threads; do
        for size in 64 4096; do
            bench_iters "BENCH_ITERS_$size" 4000 100
            specs+=("$kind-$size:$iters")
        done
    done
}
describe() { echo "${1%-*} ${1##*-} B"; }
tsv_columns=(mbps wall_mbps us_per_msg foreign)

record() {
    fields=("$mbps" "$wall_mbps" "$us_per_msg" "$foreign")
    printf '%s: %-14s pair %d %-6s %8.2f MB/s, server %.2f us CPU/msg, %s foreign\n' \
        "$prog" "$(describe "$2")" "$4" "$1" "$mbps" "$us_per_msg" \
        "$foreign" >&2
}

# run_config CASE ITERS LOG THREADS [ARGS...]: one cq_poll_bw run, event
# mode; sets mbps, us_per_msg (the server's threads' CPU seconds over its
# completions) and foreign.
run_config() {
    local size=${1##*-} iters=$2 log=$3 threads=$4
    shift 4
    mbps=
    ours_run "$log" -t "$tx_depth" -s "$size" -n "$iters" --cq-mode event \
        --threads "$threads" "$@" || return 1
    read -r mbps us_per_msg foreign <<<"$(result_fields "$log.client" 'mib_s()' \
        '"%.4f" % (r["server"]["cpu_pct"] / 100 * r["server"]["seconds"] * 1e6 / r["server"]["completions"])' \
        'r["server"].get("foreign_completions", 0)')"
}

run_ours() {
    case $1 in
        shared-*) run_config "$@" 2 --shared-channel ;;
        *) run_config "$@" 2 ;;
    esac
}

run_theirs() {
    case $1 in
        shared-*) run_config "$@" 2 ;;
        *) run_config "$@" 1 ;;
    esac
}

report() {
    bench_python "$@" <<'PY'
NAMES = {"shared": ("--shared-channel", "a channel per thread"),
         "threads": ("--threads 2", "--threads 1")}
def thread_case(case, mine):
    kind, size = case.rsplit("-", 1)
    ours, theirs = NAMES[kind]
    label = "%-7s %5d B" % (kind, int(size))
    pad = " " * len(label)
    entry = run_entry(size, mine, ("mbps", "us_per_msg", "foreign"),
                      head={"case": kind, "ours": ours, "theirs": theirs})
    table(label, mine, [("MB/s " + ours, "ours", "mbps", "%.2f", 1),
                        ("MB/s " + theirs, "theirs", "mbps", "%.2f", 1),
                        ("us/msg " + ours, "ours", "us_per_msg", "%.2f", 1),
                        ("us/msg " + theirs, "theirs", "us_per_msg", "%.2f", 1),
                        ("foreign " + ours, "ours", "foreign", "%.0f", 1)])
    print("%s  median MB/s %s %s, %s %s; server us CPU/msg %s %s, %s %s"
          % (pad, ours, fmt(med(entry["ours_mbps"])), theirs,
             fmt(med(entry["theirs_mbps"])), ours,
             fmt(med(entry["ours_us_per_msg"])), theirs,
             fmt(med(entry["theirs_us_per_msg"]))))
    entry["ratio"] = compare(label, mine, "mbps", False, "bandwidth",
                             vs_name=theirs)
    entry["cpu_ratio"] = compare(label, mine, "us_per_msg", True,
                                 "server CPU per message", vs_name=theirs)
    entry["verdict"] = entry["ratio"]["verdict"]
    return label, entry
summarize(sys.argv[1], sys.argv[2], "cq_poll_bw --threads, event mode: --shared-channel vs a channel"
          " per thread, and --threads 2 vs 1; bandwidth in MB/s (2^20 B/s)"
          " and the server's CPU per message", "case", thread_case,
          {"benchmark": "cq_poll_bw threads", "unit": "MiB/s; us/msg"},
          cases="cases")
PY
}

bench_main "$@"
