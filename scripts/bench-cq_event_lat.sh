#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Side-by-side latency of cq_event_lat, perftest's ib_send_lat and
# rdma-core's ibv_rc_pingpong (the floor: the least an RC ping-pong loop
# costs) on soft-RoCE, with equivalent settings: poll mode against
# ib_send_lat and ibv_rc_pingpong, event mode against ib_send_lat -e and
# ibv_rc_pingpong -e; in groups of runs, one of each tool (a "pair"), the
# order rotating from pair to pair so that drift in the (noisy,
# TCG-emulated) guest cancels.
#
# Usage: bench-cq_event_lat.sh [--out DIR] [--timeout SEC] [--report TSV]...
#
# Sizes 64 and 4096 bytes in each mode, BENCH_PAIRS (default 7, at least
# 7, at most 1000; BENCH_RUNS is its deprecated alias) pairs per mode and
# size; BENCH_ITERS_POLL (default 10000) and BENCH_ITERS_EVENT (default
# 5000) exchanges per run. Prints every run's one-way latency in usec pair
# by pair (p50, perftest's t_typical, and average; ibv_rc_pingpong prints
# only an average, its usec/iter being a round trip: half of it), the
# medians, and per comparison the median of the paired ratios with its
# 95 % confidence interval (paired bootstrap over the pairs, fixed seed)
# and a verdict, ahead or behind when the interval excludes 1 (lower is
# better), else parity: our p50 over ib_send_lat's, and our average over
# ibv_rc_pingpong's (the floor); for event mode also the client's CPU time
# per exchange against ib_send_lat's. Writes summary.json and runs.tsv to
# DIR (default: build/bench-cq_event_lat). --report TSV: no runs, the
# report of an earlier run's runs.tsv again (summary.json into DIR,
# default TSV's folder). --timeout: the whole run's (default 1800 s plus
# 30 s a run).
# BENCH_MODES="poll" or "event" measures one mode only (default both).
# All tools run server on CPU 0 and client on CPU 1 (BENCH_NO_PIN=1: no).
# Exit status: 0 whatever the verdict (this is a measurement), 1 when a run
# still fails after its retries, 2 on usage errors, else softroce-run.sh's.
set -euo pipefail

# shellcheck source=scripts/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"

# perftest's settings we match: bench_tools' (and one QP). The floor:
# rdma-core's RC ping-pong, told the port's MTU (its default is 1024).
bench_tools lat cq_event_lat ib_send_lat
bench_floor ibv_rc_pingpong
sizes=(64 4096)
# Sized for a few seconds per run under TCG, where an exchange takes
# ~50 us polling and ~400 us sleeping on events.
declare -A default_iters=([poll]=10000 [event]=5000)

case_column=case
# p50 and avg one-way usec as each tool reports them (the ping-pong: avg
# only); wall_us, the client's wall time per exchange / 2; cpu_s, the
# client's CPU seconds, whole process (setup included); tool_cpu_s, ours
# only: its own CPU figure for the measured exchanges.
tsv_columns=(p50_us avg_us wall_us cpu_s tool_cpu_s)

# CASE is MODE-SIZE.
describe() { echo "${1%-*} ${1#*-} B"; }

make_specs() {
    local mode size iters
    bench_modes
    for mode in "${modes[@]}"; do
        # Fewer exchanges would leave the p50 and the CPU figure to noise.
        bench_iters "BENCH_ITERS_${mode^^}" "${default_iters[$mode]}" 100
        for size in "${sizes[@]}"; do
            specs+=("$mode-$size:$iters")
        done
    done
}

record() {
    local pair=$4 p50_text=${p50:+$(printf 'p50 %8.2f us' "$p50")}
    fields=("$p50" "$avg" "$wall_lat" "$cpu_s" "$tool_cpu")
    printf '%s: %-5s %4s B pair %d %-8s %-15s avg %8.2f us (wall clock bound %.2f) CPU %.3f s\n' \
        "$prog" "${2%-*}" "${2#*-}" "$pair" "$1" "$p50_text" "$avg" \
        "$wall_lat" "$cpu_s" >&2
}

run_ours() {
    local mode=${1%-*} size=${1#*-} iters=$2 log=$3
    p50='' avg='' tool_cpu=''
    ours_run "$log" -t "$tx_depth" -I "$inline" \
        --warmup "$warmup" --cq-mode "$mode" -s "$size" -n "$iters" ||
        return 1
    # lat_us is one-way (round trip / 2) like perftest's columns; the CPU
    # covers the measured exchanges only.
    read -r p50 avg tool_cpu <<<"$(result_fields "$log.client" \
        'r["lat_us"]["p50"]' 'r["lat_us"]["avg"]' \
        '"%.6f" % (r["client"]["cpu_pct"] / 100 * r["client"]["seconds"])')"
    [ -n "$p50" ] && [ -n "$avg" ] && [ -n "$tool_cpu" ]
}

run_theirs() {
    local mode=${1%-*} size=${1#*-} iters=$2 log=$3
    local args=(-d "$dev" -x "$gid" -p "$theirs_port" -s "$size" -n "$iters" -F)
    [ "$mode" = poll ] || args+=(-e)
    p50='' avg='' tool_cpu=''
    perftest_run "$log" "${args[@]}" || return 1
    perftest_like "$log"
    perftest_latency "$size" "$log"
}

run_pingpong() {
    local mode=${1%-*} size=${1#*-} iters=$2 log=$3
    pingpong_mtu || return 1
    local args=(-s "$size" -m "$active_mtu")
    [ "$mode" = poll ] || args+=(-e)
    tool_cpu=''
    pingpong_run "$log" "$iters" "${args[@]}"
}

# The runs, medians, paired ratios, intervals and verdicts to stdout; the
# same as JSON to $2.
report() {
    bench_python "$@" <<'EOF'
def mode_case(case, mine):
    mode, size = case.rsplit("-", 1)
    label = "%-5s %5d B" % (mode, int(size))
    entry = latency(label, size, mine,
                    "ib_send_lat" + (" -e" if mode == "event" else ""),
                    "ibv_rc_pingpong" + (" -e" if mode == "event" else ""),
                    {"mode": mode})
    if mode == "event":
        # usec of client CPU per exchange, pair by pair. "process" is the
        # whole client process (connection setup included, for all tools
        # alike); "measured" is ours' own figure for the measured
        # exchanges only. Compared: ours against ib_send_lat -e.
        iters = entry["iterations"]
        per = 1e6 / iters
        table(" " * len(label), mine, [
            ("CPU/exchange ours measured", "ours", "tool_cpu_s", "%.1f", per),
            ("CPU/exchange ours process", "ours", "cpu_s", "%.1f", per),
            ("CPU/exchange theirs process", "theirs", "cpu_s", "%.1f", per),
            ("CPU/exchange pingpong process", "pingpong", "cpu_s", "%.1f",
             per)])
        cpu = {}
        for k, tool, col in (("ours_measured_us", "ours", "tool_cpu_s"),
                             ("ours_process_us", "ours", "cpu_s"),
                             ("theirs_process_us", "theirs", "cpu_s"),
                             ("pingpong_process_us", "pingpong", "cpu_s")):
            cpu[k] = [v * per for v in values(mine, tool, col)]
            cpu["median_" + k] = med(cpu[k])
        cpu["ratio_process"] = compare(
            label, mine, "cpu_s", True, "CPU/exchange process vs process",
            vs_name="ib_send_lat -e")
        cpu["ratio_measured"] = compare(
            label, mine, "tool_cpu_s", True,
            "CPU/exchange measured vs process", vs_name="ib_send_lat -e",
            vs_key="cpu_s")
        entry["cpu_per_exchange"] = cpu
    return label, entry

summarize(sys.argv[1], sys.argv[2], "cq_event_lat vs ib_send_lat (-e in event mode), and ibv_rc_pingpong"
          " (-e) as the floor;\none-way latency in usec; p50 = perftest's"
          " t_typical; ibv_rc_pingpong: avg only (usec/iter / 2)",
          "case", mode_case,
          {"benchmark": "cq_event_lat vs ib_send_lat; floor ibv_rc_pingpong",
           "unit": "usec", "latency": "one-way (round trip / 2)",
           "floor": "ibv_rc_pingpong: average only (usec/iter, a round trip,"
                    " / 2), compared with our average"},
          cases="cases")
EOF
}

bench_main "$@"
