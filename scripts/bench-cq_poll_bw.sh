#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Side-by-side bandwidth of cq_poll_bw and perftest's ib_send_bw (poll
# mode, and event mode against ib_send_bw -e) on soft-RoCE, with
# equivalent settings, in pairs of runs (one of each tool, which goes first
# alternating from pair to pair) so that drift in the (noisy, TCG-emulated)
# guest cancels.
#
# Usage: bench-cq_poll_bw.sh [--out DIR] [--timeout SEC] [--report TSV]...
#
# Sizes 64, 4096 and 65536 bytes in each mode, BENCH_PAIRS (default 7, at
# least 7, at most 1000; BENCH_RUNS is its deprecated alias) pairs per
# size; iterations per size from BENCH_ITERS_64, BENCH_ITERS_4096 and
# BENCH_ITERS_65536.  Prints every run's average bandwidth in MB/s (2^20
# bytes/s) pair by pair, the medians, the median of the paired ratios
# ours/theirs with its 95 % confidence interval (paired bootstrap over the
# pairs, fixed seed) and a verdict: ahead or behind when the interval
# excludes 1 (higher is better), else parity; and the median of each
# tool's rxe retransmissions a run (rxe's completer_retry_err around the
# run; summary.json: ours_rxe_retries, theirs_rxe_retries).  Writes
# summary.json and runs.tsv to DIR (default: build/bench-cq_poll_bw).
# --report TSV: no runs, the report of an earlier run's runs.tsv again
# (summary.json into DIR, default TSV's folder).  --timeout: the whole
# run's (default 1800 s plus 30 s a run).
# BENCH_MODES="poll" or "event" measures one mode only (default both).
# Both tools run server on CPU 0 and client on CPU 1 (BENCH_NO_PIN=1: no).
# Exit status: 0 whatever the verdict (this is a measurement), 1 when a run
# still fails after its retries, 2 on usage errors, else softroce-run.sh's.
set -euo pipefail

# shellcheck source=scripts/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"

bench_tools bw cq_poll_bw ib_send_bw
# Sizes and iterations, sized for a few seconds per run under TCG
# (ib_send_bw 4 KiB ~ 30-60 MB/s); perftest wants more iterations than
# signaling period and tx depth.
case_column=case
make_specs() { specs_by_mode_size 1000 64=50000 4096=20000 65536=2000; }
# perftest's settings we match besides bench_tools': its default rx depth
# (one QP).
rx_depth=512

# rxe_retries: rxe's retransmissions in the run (measure's $run_retries).
tsv_columns=(mbps wall_mbps rxe_retries)

record() {
    local pair=$4
    fields=("$mbps" "$wall_mbps" "$run_retries")
    printf '%s: %-12s pair %d %-6s %10.2f MB/s (client wall clock: %.2f)\n' \
        "$prog" "$(describe "$2")" "$pair" "$1" "$mbps" "$wall_mbps" >&2
}

run_ours() {
    local mode=${1%-*} size=${1##*-} iters=$2 log=$3
    mbps=
    ours_run "$log" -t "$tx_depth" -r "$rx_depth" \
        --signal-every "$signal_every" -I "$inline" --cq-mode "$mode" \
        -s "$size" -n "$iters" || return 1
    mbps=$(result_fields "$log.client" 'mib_s()')
}

run_theirs() {
    local mode=${1%-*} size=${1##*-} iters=$2 log=$3 ev=()
    mbps=
    [ "$mode" = poll ] || ev=(-e)
    perftest_run "$log" -d "$dev" -x "$gid" -p "$theirs_port" \
        -s "$size" -n "$iters" -t "$tx_depth" -r "$rx_depth" \
        -Q "$signal_every" -F "${ev[@]}" || return 1
    mbps=$(perftest_mbps "$size" "$log")
}

# The runs, medians, paired ratios, intervals and verdicts to stdout; the
# same as JSON to $2.
report() {
    bench_python "$@" <<'EOF'
def mode_case(case, mine):
    mode, size = case.rsplit("-", 1)
    label = "%-5s %7d B" % (mode, int(size))
    entry = bandwidth(label, size, mine, "ib_send_bw" +
                      (" -e" if mode == "event" else ""),
                      head={"mode": mode})
    counts(label, entry, mine, "rxe_retries",
           "rxe retransmissions a run (its retry timer fired)")
    return label, entry
summarize(sys.argv[1], sys.argv[2], "cq_poll_bw vs ib_send_bw (-e in event mode), average bandwidth in"
          " MB/s (2^20 B/s)", "case", mode_case,
          {"benchmark": "cq_poll_bw vs ib_send_bw", "unit": "MiB/s"},
          cases="cases")
EOF
}

bench_main "$@"
