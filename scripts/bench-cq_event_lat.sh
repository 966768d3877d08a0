#!/usr/bin/env bash
# Side-by-side latency of cq_event_lat and perftest's ib_send_lat on
# soft-RoCE, with equivalent settings: poll mode against ib_send_lat, event
# mode against ib_send_lat -e, runs alternating ours/theirs so drift in the
# (noisy, TCG-emulated) guest hits both tools alike.
#
# Usage: bench-cq_event_lat.sh [--out DIR] [--timeout SEC]
#
# Sizes 64 and 4096 bytes in each mode, BENCH_RUNS (default 3) runs per
# tool, mode and size; BENCH_ITERS_POLL (default 10000) and
# BENCH_ITERS_EVENT (default 5000) exchanges per run. Prints every run's
# one-way p50 latency in usec (perftest's t_typical), the medians, the
# ratio ours/theirs and a verdict against the target ratio (BENCH_TARGET,
# default 1.0; ours must be at most that); for event mode also the
# client's CPU time per exchange. Writes summary.json and runs.tsv to DIR
# (default: build/bench-cq_event_lat).
# Both tools run server on CPU 0 and client on CPU 1 (BENCH_NO_PIN=1: no).
# Exit status: 0 whatever the verdict (this is a measurement), 1 when a run
# still fails after its retries, 2 on usage errors, else softroce-run.sh's.
set -euo pipefail

# shellcheck source=scripts/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"

# perftest's settings we match: bench_tools' (and one QP).
bench_tools lat cq_event_lat ib_send_lat
modes=(poll event)
sizes=(64 4096)
# Sized for a few seconds per run under TCG, where an exchange takes
# ~50 us polling and ~400 us sleeping on events.
declare -A default_iters=([poll]=10000 [event]=5000)

case_column=case
# p50 and avg one-way usec as each tool reports them; wall_us, the client's
# wall time per exchange / 2; cpu_s, the client's CPU seconds, whole process
# (setup included); tool_cpu_s, ours only: its own CPU figure for the
# measured exchanges.
tsv_columns=(p50_us avg_us wall_us cpu_s tool_cpu_s)

# CASE is MODE-SIZE.
describe() { echo "${1%-*} ${1#*-} B"; }

make_specs() {
    local mode size iters
    for mode in "${modes[@]}"; do
        # Fewer exchanges would leave the p50 and the CPU figure to noise.
        bench_iters "BENCH_ITERS_${mode^^}" "${default_iters[$mode]}" 100
        for size in "${sizes[@]}"; do
            specs+=("$mode-$size:$iters")
        done
    done
}

record() {
    local run=$4
    fields=("$p50" "$avg" "$wall_lat" "$cpu_s" "$tool_cpu")
    printf '%s: %-5s %4s B run %d %-6s p50 %8.2f us avg %8.2f us (wall clock bound %.2f) CPU %.3f s\n' \
        "$prog" "${2%-*}" "${2#*-}" "$run" "$1" "$p50" "$avg" "$wall_lat" \
        "$cpu_s" >&2
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

# Medians, ratios and verdicts to stdout; the same as JSON to $3.
report() {
    bench_python "$@" <<'EOF'
def mode_case(case, mine, target):
    mode, size = case.rsplit("-", 1)
    label = "%-5s %5d B" % (mode, int(size))
    entry = latency(label, size, mine, target, {"mode": mode})
    if mode == "event":
        # usec of client CPU per exchange. "process" is the whole client
        # process (connection setup included, for both tools alike);
        # "measured" is ours' own figure for the measured exchanges only.
        iters, pad = entry["iterations"], " " * len(label)
        cpu = {"ours_measured_us": "tool_cpu_s", "ours_process_us": "cpu_s",
               "theirs_process_us": "cpu_s"}
        for k, col in list(cpu.items()):
            runs = [v / iters * 1e6 for v in values(mine, k.split("_")[0], col)]
            cpu[k] = runs
            cpu["median_" + k] = statistics.median(runs) if runs else None
            print("%s  CPU/exchange %-17s %s" % (
                pad, k[:-3].replace("_", " ") + ":",
                "  ".join("%7.1f" % v for v in runs)))
        t = cpu["median_theirs_process_us"]
        for k in ("ours_measured", "ours_process"):
            m = cpu["median_%s_us" % k]
            cpu["verdict_" + k] = ("NO DATA" if t is None or m is None
                                   else "PASS" if m < t else "FAIL")
        entry["cpu_per_exchange"] = cpu
    return label, entry

def cpu_verdict(label, e):
    c = e.get("cpu_per_exchange")
    if c:
        fm = lambda k: "%.1f" % c[k] if c[k] is not None else "n/a"
        print("verdict %s: CPU/exchange ours measured %s (%s), ours process"
              " %s (%s) vs theirs process %s usec (target: ours lower)"
              % (label, c["verdict_ours_measured"],
                 fm("median_ours_measured_us"), c["verdict_ours_process"],
                 fm("median_ours_process_us"),
                 fm("median_theirs_process_us")))

summarize("cq_event_lat vs ib_send_lat (-e in event mode), one-way latency"
          " in usec; p50 = perftest's t_typical", "case", mode_case, True,
          {"benchmark": "cq_event_lat vs ib_send_lat", "unit": "usec",
           "latency": "one-way (round trip / 2)"},
          cases="cases", what="p50 ", more=cpu_verdict)
EOF
}

bench_main "$@"
