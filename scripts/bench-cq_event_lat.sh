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

modes=(poll event)
sizes=(64 4096)
# Sized for a few seconds per run under TCG, where an exchange takes
# ~50 us polling and ~400 us sleeping on events.
declare -A default_iters=([poll]=10000 [event]=5000)
ours_port=18600
theirs_port=18515
# perftest's settings we match: ib_send_lat's defaults (one QP, "TX depth
# : 1" in its header; no warm-up, --perform_warm_up being for BW tests only,
# so every -n exchange is measured).
# Inline: on a device it does not recognise (rxe) perftest grants none
# ("Max inline data : 0[B]" in its header, checked on every run), so ours
# runs with -I 0 too.
inline=0
tx_depth=1
warmup=0

case_column=case
# p50 and avg one-way usec as each tool reports them; wall_us, the client's
# wall time per exchange / 2; cpu_s, the client's CPU seconds, whole process
# (setup included); tool_cpu_s, ours only: its own CPU figure for the
# measured exchanges.
tsv_columns=(p50_us avg_us wall_us cpu_s tool_cpu_s)
need_files=(build/src/cq_event_lat)
declare -A need_cmds=([ib_send_lat]="scripts/deps.sh installs perftest")

# CASE is MODE-SIZE.
describe() { echo "${1%-*} ${1#*-} B"; }

make_specs() {
    local mode size var iters
    for mode in "${modes[@]}"; do
        var=BENCH_ITERS_${mode^^}
        iters=${!var:-${default_iters[$mode]}}
        # Fewer exchanges would leave the p50 and the CPU figure to noise.
        if ! [[ $iters =~ ^[0-9]+$ ]] || [ "$iters" -lt 100 ]; then
            echo "$prog: $var wants a count >= 100" >&2
            exit 2
        fi
        for size in "${sizes[@]}"; do
            specs+=("$mode-$size:$iters")
        done
    done
}

# The average exchange cannot take longer than the client's whole run:
# perftest converts CPU cycles to time with a sampled cycle rate that TCG
# sometimes gets badly wrong; treat that as a failed run. Sets $wall_lat,
# the wall-clock bound on the one-way average, for the record.
plausible() {
    local iters=$3
    wall_lat=$(awk -v n="$iters" -v us="$wall_us" \
        'BEGIN { printf "%.3f", us / n / 2 }')
    if awk -v a="$avg" -v w="$wall_lat" -v p="$p50" \
        'BEGIN { exit !(a > 1.01 * w || a <= 0 || p <= 0) }'; then
        echo "$prog: reported average $avg us (p50 $p50 us) is outside (0, wall-clock bound $wall_lat us]" >&2
        return 1
    fi
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
    local bin=$top/build/src/cq_event_lat
    p50='' avg='' tool_cpu=''
    # The server adopts the client's test settings (negotiated).
    start_server "$log" "$ours_port" "$bin" -d "$dev" -x "$gid" \
        -p "$ours_port" || return 1
    timed_client "$log" "$bin" -d "$dev" -x "$gid" -p "$ours_port" \
        -t "$tx_depth" -I "$inline" --warmup "$warmup" --cq-mode "$mode" \
        -s "$size" -n "$iters" --output json "$addr" || return 1
    finish_server || return 1
    # lat_us is one-way (round trip / 2) like perftest's columns; the CPU
    # covers the measured exchanges only.
    # (No process substitution: the guest has no /dev/fd.)
    read -r p50 avg tool_cpu <<<"$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
c = r["client"]
print(r["lat_us"]["p50"], r["lat_us"]["avg"],
      "%.6f" % (c["cpu_pct"] / 100 * c["seconds"]))' "$log.client")"
    [ -n "$p50" ] && [ -n "$avg" ] && [ -n "$tool_cpu" ]
}

run_theirs() {
    local mode=${1%-*} size=${1#*-} iters=$2 log=$3 granted
    local args=(-d "$dev" -x "$gid" -p "$theirs_port" -s "$size" -n "$iters" -F)
    [ "$mode" = poll ] || args+=(-e)
    p50='' avg='' tool_cpu=''
    start_server "$log" "$theirs_port" ib_send_lat "${args[@]}" || return 1
    timed_client "$log" ib_send_lat "${args[@]}" "$addr" || return 1
    finish_server || return 1
    granted=$(sed -n 's/^ *Max inline data *: *\([0-9]*\).*/\1/p' "$log.client")
    if [ "$granted" != "$inline" ]; then
        echo "$prog: ib_send_lat used inline $granted, ours $inline: not like for like" >&2
    fi
    # The row under the header naming the columns whose first field is the
    # size; columns found by name (t_typical is the median).
    read -r p50 avg <<<"$(awk -v size="$size" '
        /t_typical\[usec\]/ {
            for (i = 1; i <= NF; i++) {
                if ($i == "t_typical[usec]") tp = i
                if ($i == "t_avg[usec]") ta = i
            }
            next
        }
        tp && ta && $1 == size { print $tp, $ta; exit }' "$log.client")" || true
    [ -n "$p50" ] && [ -n "$avg" ]
}

# Medians, ratios and verdicts to stdout; the same as JSON to $3.
report() {
    bench_python "$@" <<'EOF'
tsv, target, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
rows = load(tsv)
summary = []
print("cq_event_lat vs ib_send_lat (-e in event mode), one-way latency in usec;"
      " p50 = perftest's t_typical")
for case in distinct(rows, "case"):
    mode, size = case.rsplit("-", 1)
    mine = [r for r in rows if r["case"] == case]
    label = "%-5s %5d B" % (mode, int(size))
    iters = int(mine[0]["iters"])
    ours, theirs = values(mine, "ours", "p50_us"), values(mine, "theirs", "p50_us")
    entry = {"mode": mode, "bytes": int(size), "iterations": iters,
             "ours_p50_us": ours, "theirs_p50_us": theirs,
             "ours_avg_us": values(mine, "ours", "avg_us"),
             "theirs_avg_us": values(mine, "theirs", "avg_us"),
             "ours_wall_us": values(mine, "ours", "wall_us"),
             "theirs_wall_us": values(mine, "theirs", "wall_us"),
             "retries": sum(int(r["attempts"]) - 1 for r in mine)}
    pad = " " * len(label)
    series(label, ours, theirs)
    if compare(label, mine, "p50_us", target, True, entry):
        med = lambda k: statistics.median(entry[k]) if entry[k] else 0
        # The wall-clock bound: a check on the tools' own clocks.
        print("%s  average: ours %.2f  theirs %.2f;  wall-clock bound"
              " (setup included): ours %.2f  theirs %.2f"
              % (pad, med("ours_avg_us"), med("theirs_avg_us"),
                 med("ours_wall_us"), med("theirs_wall_us")))
    if mode == "event":
        # usec of client CPU per exchange. "process" is the whole client
        # process (connection setup included, for both tools alike);
        # "measured" is ours' own figure for the measured exchanges only.
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
    summary.append((label, entry))
for label, e in summary:
    verdict(label, e, target, True, "p50 ")
    c = e.get("cpu_per_exchange")
    if c:
        fm = lambda k: "%.1f" % c[k] if c[k] is not None else "n/a"
        print("verdict %s: CPU/exchange ours measured %s (%s), ours process"
              " %s (%s) vs theirs process %s usec (target: ours lower)"
              % (label, c["verdict_ours_measured"],
                 fm("median_ours_measured_us"), c["verdict_ours_process"],
                 fm("median_ours_process_us"),
                 fm("median_theirs_process_us")))
json.dump({"benchmark": "cq_event_lat vs ib_send_lat", "unit": "usec",
           "latency": "one-way (round trip / 2)",
           "target_ratio": target, "cases": [e for _, e in summary]},
          open(out, "w"), indent=2)
EOF
}

bench_main "$@"
