#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Side-by-side latency of ud_send_lat, perftest's ib_send_lat -c UD and
# rdma-core's ibv_ud_pingpong (the floor: the least a UD ping-pong loop
# costs) on soft-RoCE, with equivalent settings (poll mode, and event mode with -e); in groups of
# runs, one of each tool (a "pair"), the order rotating from pair to pair
# so that drift in the (noisy, TCG-emulated) guest cancels.
#
# Usage: bench-ud_send_lat.sh [--out DIR] [--timeout SEC] [--report TSV]...
#
# Size 64 bytes, BENCH_PAIRS (default 7, at least 7, at most 1000;
# BENCH_RUNS is its deprecated alias) pairs; BENCH_ITERS_64 (default
# 10000) exchanges per run. Prints every run's one-way latency in usec
# pair by pair (p50, perftest's t_typical, and average; ibv_ud_pingpong
# prints only an average, its usec/iter being a round trip: half of it),
# the medians, and per comparison the median of the paired ratios with its
# 95 % confidence interval (paired bootstrap over the pairs, fixed seed)
# and a verdict, ahead or behind when the interval excludes 1 (lower is
# better), else parity: our p50 over ib_send_lat's, and our average over
# ibv_ud_pingpong's (the floor). Writes summary.json and runs.tsv to DIR
# (default: build/bench-ud_send_lat). --report TSV: no runs, the report of
# an earlier run's runs.tsv again (summary.json into DIR, default TSV's
# folder). --timeout: the whole run's (default 1800 s plus 30 s a run).
# BENCH_MODES="poll" or "event" measures one mode only (default both).
# All tools run server on CPU 0 and client on CPU 1 (BENCH_NO_PIN=1: no).
# Exit status: 0 whatever the verdict (this is a measurement), 1 when a run
# still fails after its retries, 2 on usage errors, else softroce-run.sh's.
set -euo pipefail

# shellcheck source=scripts/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"

# perftest's settings we match: bench_tools' (and one QP). Receive queue:
# on UD perftest posts one receive per iteration up to a limit
# (rx_depth_for; "RX depth" in its server's header, checked on every
# run), so ours gets as many.
bench_tools lat ud_send_lat ib_send_lat
# The floor: rdma-core's UD ping-pong (which takes the port's MTU itself).
bench_floor ibv_ud_pingpong
# Size and iterations, sized for a few seconds per run under TCG, where a
# UD exchange takes ~40 us when nothing else runs, and far more when
# something does; fewer exchanges would leave the p50 to noise.
case_column=case
make_specs() { specs_by_mode_size 100 64=10000; }
# ib_send_lat and ibv_ud_pingpong do not retry a lost datagram: their run
# then hangs until this deadline (and is retried), where a normal one
# takes well under.
run_timeout=90

# p50 and avg one-way usec as each tool reports them (the ping-pong: avg
# only); wall_us, the client's
# wall time per exchange / 2; lost, ours only: exchanges whose ping or pong
# was lost and retried (perftest would hang on them).
tsv_columns=(p50_us avg_us wall_us lost)

record() {
    local pair=$4 note='' p50_text=${p50:+$(printf 'p50 %8.2f us' "$p50")}
    fields=("$p50" "$avg" "$wall_lat" "$lost")
    [ -z "$lost" ] || note=", $lost exchanges lost and retried"
    printf '%s: %-10s pair %d %-8s %-15s avg %8.2f us (wall clock bound %.2f%s)\n' \
        "$prog" "$(describe "$2")" "$pair" "$1" "$p50_text" "$avg" "$wall_lat" \
        "$note" >&2
}

run_ours() {
    local mode=${1%-*} size=${1##*-} iters=$2 log=$3
    p50='' avg='' lost=''
    ours_run "$log" -t "$tx_depth" -r "$(rx_depth_for "$iters")" \
        -I "$inline" --warmup "$warmup" --cq-mode "$mode" -s "$size" \
        -n "$iters" || return 1
    # lat_us is one-way (round trip / 2) like perftest's columns.
    read -r p50 avg lost <<<"$(result_fields "$log.client" \
        'r["lat_us"]["p50"]' 'r["lat_us"]["avg"]' 'r["lost_exchanges"]')"
    [ -n "$p50" ] && [ -n "$avg" ] && [ -n "$lost" ]
}

run_theirs() {
    local mode=${1%-*} size=${1##*-} iters=$2 log=$3 ev=()
    p50='' avg='' lost=''
    [ "$mode" = poll ] || ev=(-e)
    # No -r: perftest's UD rule above applies to its default only.
    perftest_run "$log" -c UD -d "$dev" -x "$gid" \
        -p "$theirs_port" -s "$size" -n "$iters" -F "${ev[@]}" || return 1
    perftest_like "$log" "$iters"
    perftest_latency "$size" "$log"
}

run_pingpong() {
    local mode=${1%-*} size=${1##*-} iters=$2 log=$3 ev=()
    lost=''
    [ "$mode" = poll ] || ev=(-e)
    pingpong_run "$log" "$iters" -s "$size" "${ev[@]}"
}

# The runs, medians, paired ratios, intervals and verdicts to stdout; the
# same as JSON to $2.
report() {
    bench_python "$@" <<'EOF'
def mode_case(case, mine):
    mode, size = case.rsplit("-", 1)
    label = "%-5s %5d B" % (mode, int(size))
    ev = " -e" if mode == "event" else ""
    lost = [int(v) for v in values(mine, "ours", "lost")]
    entry = latency(label, size, mine, "ib_send_lat -c UD" + ev,
                    "ibv_ud_pingpong" + ev, {"mode": mode},
                    ours_lost_exchanges=lost)
    print("%s  exchanges lost and retried by ours: %s"
          % (" " * len(label), " ".join(str(v) for v in lost) or "n/a"))
    return label, entry
summarize(sys.argv[1], sys.argv[2], "ud_send_lat vs ib_send_lat -c UD (-e in event mode), and"
          " ibv_ud_pingpong as the"
          " floor;\none-way latency in usec; p50 = perftest's t_typical;"
          " ibv_ud_pingpong: avg only (usec/iter / 2)", "case", mode_case,
          {"benchmark": "ud_send_lat vs ib_send_lat -c UD; floor"
                        " ibv_ud_pingpong", "unit": "usec",
           "latency": "one-way (round trip / 2)",
           "floor": "ibv_ud_pingpong: average only (usec/iter, a round trip,"
                    " / 2), compared with our average"}, cases="cases")
EOF
}

bench_main "$@"
