#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Rate accuracy of cq_poll_bw --rate against perftest's software rate
# limiter (ib_send_bw --rate_limit R --rate_limit_type SW --rate_units p)
# on soft-RoCE, 64-byte messages, in pairs of runs (one of each tool, the
# order alternating) so that drift in the TCG guest cancels.
#
# Usage: bench-rate.sh [--out DIR] [--timeout SEC] [--report TSV]...
#
# Rates 1000, 5000 and 20000 messages/s (BENCH_RATES: others), each run
# about 2 s (iterations = 2 x rate), BENCH_PAIRS pairs (default 7, at
# least 7). Per run the achieved message rate each tool reports (ours:
# achieved_rate; perftest: its MsgRate) and its error |achieved/offered -
# 1| in percent; per rate each tool's median error with a 95 % bootstrap
# interval, and the median of the paired ratios of errors ours/theirs
# with its interval and a verdict (lower is better). Writes summary.json
# and runs.tsv to DIR (default build/bench-rate). Exit status: 0 whatever
# the verdict, 1 when a run still fails after its retries, 2 on usage
# errors, else softroce-run.sh's.
set -euo pipefail

# shellcheck source=scripts/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"

bench_tools bw cq_poll_bw ib_send_bw
case_column=rate
make_specs() {
    local r
    for r in ${BENCH_RATES:-1000 5000 20000}; do
        [[ $r =~ ^[1-9][0-9]*$ ]] ||
            { echo "$prog: BENCH_RATES wants messages/s, not '$r'" >&2; exit 2; }
        specs+=("$r:$((2 * r))")
    done
}
describe() { echo "$1/s"; }
size=64
# The wall-clock check of plausible_bw, on the message size (a CASE here
# is a rate).
plausible() { plausible_bw "$1" "$size" "$3"; }
tsv_columns=(mbps wall_mbps achieved err_pct)

record() {
    fields=("$mbps" "$wall_mbps" "$achieved" "$err_pct")
    printf '%s: %-8s pair %d %-6s achieved %10.1f/s (error %.3f %%)\n' \
        "$prog" "$(describe "$2")" "$4" "$1" "$achieved" "$err_pct" >&2
}

# err_of RATE: $err_pct from $achieved; $mbps for the wall-clock check.
err_of() {
    read -r err_pct mbps <<<"$(awk -v a="$achieved" -v r="$1" -v s="$size" \
        'BEGIN { e = a / r - 1; printf "%.4f %.4f", (e < 0 ? -e : e) * 100, a * s / 1048576 }')"
}

run_ours() {
    local rate=$1 iters=$2 log=$3
    achieved=
    ours_run "$log" -t "$tx_depth" --signal-every "$signal_every" \
        -I "$inline" -s "$size" -n "$iters" --rate "$rate" || return 1
    achieved=$(result_fields "$log.client" 'r["achieved_rate"]')
    err_of "$rate"
}

run_theirs() {
    local rate=$1 iters=$2 log=$3
    achieved=
    perftest_run "$log" -d "$dev" -x "$gid" -p "$theirs_port" -s "$size" \
        -n "$iters" -t "$tx_depth" -Q "$signal_every" -F \
        --rate_limit "$rate" --rate_limit_type SW --rate_units p || return 1
    perftest_like "$log"
    # The result row: bytes, iterations, peak, average, MsgRate[Mpps].
    achieved=$(awk -v size="$size" '
        /MsgRate\[Mpps\]/ { hdr = 1; next }
        hdr && $1 == size { printf "%.1f", $5 * 1e6; found = 1; exit }
        END { exit !found }' "$log.client") || return 1
    err_of "$rate"
}

report() {
    bench_python "$@" <<'PY'
def rate_case(rate, mine):
    label = "%6d/s" % int(rate)
    pad = " " * len(label)
    entry = run_entry(0, mine, ("achieved", "err_pct"), head={"rate": int(rate)})
    del entry["bytes"]
    table(label, mine, [("ours /s", "ours", "achieved", "%.1f", 1),
                        ("theirs /s", "theirs", "achieved", "%.1f", 1),
                        ("ours err%", "ours", "err_pct", "%.3f", 1),
                        ("theirs err%", "theirs", "err_pct", "%.3f", 1)])
    for tool in ("ours", "theirs"):
        errs = values(mine, tool, "err_pct")
        lo, hi = bootstrap_ci(errs) if len(errs) >= MIN_PAIRS else (None, None)
        entry[tool + "_median_err_pct"] = med(errs)
        entry[tool + "_err_ci95"] = [lo, hi] if lo is not None else None
        print("%s  %s median error %s %% (95%% CI [%s, %s])"
              % (pad, tool, fmt(med(errs), "%.3f"), fmt(lo, "%.3f"),
                 fmt(hi, "%.3f")))
    # Errors near zero make ratios jumpy: a floor of 0.001 % each.
    for r in mine:
        if r["err_pct"]:
            r["err_pct"] = "%.4f" % max(float(r["err_pct"]), 0.001)
    entry["ratio"] = compare(label, mine, "err_pct", True, "rate error",
                             vs_name="ib_send_bw --rate_limit_type SW")
    entry["verdict"] = entry["ratio"]["verdict"]
    return label, entry
summarize(sys.argv[1], sys.argv[2], "cq_poll_bw --rate vs ib_send_bw --rate_limit (SW, pps), 64 B:"
          " achieved message rate and its error against the offered rate",
          "rate", rate_case,
          {"benchmark": "cq_poll_bw --rate vs ib_send_bw --rate_limit",
           "unit": "percent error of the achieved rate"}, cases="rates")
PY
}

bench_main "$@"
