#!/usr/bin/env bash
# Side-by-side latency of ud_send_lat and perftest's ib_send_lat -c UD on
# soft-RoCE, with equivalent settings (poll mode), runs alternating
# ours/theirs so drift in the (noisy, TCG-emulated) guest hits both tools
# alike.
#
# Usage: bench-ud_send_lat.sh [--out DIR] [--timeout SEC]
#
# Size 64 bytes, BENCH_RUNS (default 3) runs per tool; BENCH_ITERS_64
# (default 10000) exchanges per run. Prints every run's one-way p50
# latency in usec (perftest's t_typical), the medians, the ratio
# ours/theirs and a verdict against the target ratio (BENCH_TARGET,
# default 1.0; ours must be at most that). Writes summary.json and
# runs.tsv to DIR (default: build/bench-ud_send_lat).
# Both tools run server on CPU 0 and client on CPU 1 (BENCH_NO_PIN=1: no).
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
# Size and iterations, sized for a few seconds per run under TCG, where a
# UD exchange takes ~40 us when nothing else runs, and far more when
# something does; fewer exchanges would leave the p50 to noise.
make_specs() { specs_by_size 100 64=10000; }
# ib_send_lat does not retry a lost datagram: its run then hangs until
# this deadline (and is retried), where a normal one takes well under.
run_timeout=90

# p50 and avg one-way usec as each tool reports them; wall_us, the client's
# wall time per exchange / 2; lost, ours only: exchanges whose ping or pong
# was lost and retried (perftest would hang on them).
tsv_columns=(p50_us avg_us wall_us lost)

record() {
    local size=$2 run=$4 note=''
    fields=("$p50" "$avg" "$wall_lat" "$lost")
    [ -z "$lost" ] || note=", $lost exchanges lost and retried"
    printf '%s: %4s B run %d %-6s p50 %8.2f us avg %8.2f us (wall clock bound %.2f%s)\n' \
        "$prog" "$size" "$run" "$1" "$p50" "$avg" "$wall_lat" "$note" >&2
}

run_ours() {
    local size=$1 iters=$2 log=$3
    p50='' avg='' lost=''
    ours_run "$log" -t "$tx_depth" -r "$(rx_depth_for "$iters")" \
        -I "$inline" --warmup "$warmup" --cq-mode poll -s "$size" \
        -n "$iters" || return 1
    # lat_us is one-way (round trip / 2) like perftest's columns.
    read -r p50 avg lost <<<"$(result_fields "$log.client" \
        'r["lat_us"]["p50"]' 'r["lat_us"]["avg"]' 'r["lost_exchanges"]')"
    [ -n "$p50" ] && [ -n "$avg" ] && [ -n "$lost" ]
}

run_theirs() {
    local size=$1 iters=$2 log=$3
    p50='' avg='' lost=''
    # No -r: perftest's UD rule above applies to its default only.
    perftest_run "$log" -c UD -d "$dev" -x "$gid" \
        -p "$theirs_port" -s "$size" -n "$iters" -F || return 1
    perftest_like "$log" "$iters"
    perftest_latency "$size" "$log"
}

# Medians, ratios and verdicts to stdout; the same as JSON to $3.
report() {
    bench_python "$@" <<'EOF'
def size_case(size, mine, target):
    label = "%5d B" % int(size)
    lost = [int(v) for v in values(mine, "ours", "lost")]
    entry = latency(label, size, mine, target, ours_lost_exchanges=lost)
    print("%s  exchanges lost and retried by ours: %s"
          % (" " * len(label), " ".join(str(v) for v in lost) or "n/a"))
    return label, entry
summarize("ud_send_lat vs ib_send_lat -c UD (poll), one-way latency in usec;"
          " p50 = perftest's t_typical", "size", size_case, True,
          {"benchmark": "ud_send_lat vs ib_send_lat -c UD", "unit": "usec",
           "latency": "one-way (round trip / 2)"}, what="p50 ")
EOF
}

bench_main "$@"
