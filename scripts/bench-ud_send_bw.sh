#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Side-by-side bandwidth of ud_send_bw and perftest's ib_send_bw -c UD on
# soft-RoCE, with equivalent settings, in pairs of runs (one of each tool,
# which goes first alternating from pair to pair) so that drift in the
# (noisy, TCG-emulated) guest cancels.
#
# Usage: bench-ud_send_bw.sh [--out DIR] [--timeout SEC] [--report TSV]...
#
# Sizes 64, 1024 and 4096 bytes (UD: at most the MTU), BENCH_PAIRS
# (default 7, at least 7, at most 1000; BENCH_RUNS is its deprecated
# alias) pairs per size; iterations per size from BENCH_ITERS_64,
# BENCH_ITERS_1024 and BENCH_ITERS_4096. Prints every run's average
# sending bandwidth in MB/s (2^20 bytes/s, the client's figure, as
# perftest's client prints it) pair by pair, the medians, the median of
# the paired ratios ours/theirs with its 95 % confidence interval (paired
# bootstrap over the pairs, fixed seed) and a verdict: ahead or behind
# when the interval excludes 1 (higher is better), else parity; also what
# was lost on the way (ours counts it; perftest's server only waits for
# it). Writes summary.json and runs.tsv to DIR (default:
# build/bench-ud_send_bw). --report TSV: no runs, the report of an earlier
# run's runs.tsv again (summary.json into DIR, default TSV's folder).
# --timeout: the whole run's (default 1800 s plus 30 s a run).
# BENCH_MODES="poll" or "event" measures one mode only (default both).
# Both tools run server on CPU 0 and client on CPU 1 (BENCH_NO_PIN=1: no).
# Exit status: 0 whatever the verdict (this is a measurement), 1 when a run
# still fails after its retries, 2 on usage errors, else softroce-run.sh's.
set -euo pipefail

# shellcheck source=scripts/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"

# perftest's settings we match: bench_tools' (and one QP). Receive queue:
# on UD, with its default rx depth, perftest posts one receive per
# iteration up to a limit (rx_depth_for; "RX depth" in its server's
# header, checked on every run), so ours gets as many.
bench_tools bw ud_send_bw ib_send_bw
# Sizes (UD: at most the MTU) and iterations, sized for a few seconds per
# run under TCG (UD 64 B ~ 10-40k messages/s, 4 KiB ~ 20-60 MB/s);
# perftest wants more iterations than signaling period and tx depth.
case_column=case
make_specs() { specs_by_mode_size 1000 64=50000 1024=30000 4096=20000; }
# perftest's UD server counts datagrams and, when some were lost, waits for
# them for a minute or two, with its client waiting on it after printing
# its figures: once the client has printed them, the server gets this many
# seconds to end before it is stopped (the run still counts).
release_grace=5

# mbps: the client's average sending bandwidth; wall_mbps: bytes over the
# client's whole wall time; loss_pct: ours only, datagrams sent but not
# received; released: theirs only, 1 when its server was still waiting for
# datagrams (lost ones) and was stopped.
tsv_columns=(mbps wall_mbps loss_pct released)

record() {
    local pair=$4 note=''
    fields=("$mbps" "$wall_mbps" "$loss" "$released")
    if [ -n "$loss" ]; then
        note=$(printf ', loss %.2f%%' "$loss")
    elif [ "$released" = 1 ]; then
        note=', server stopped waiting for lost datagrams'
    fi
    printf '%s: %-12s pair %d %-6s %10.2f MB/s (client wall clock: %.2f%s)\n' \
        "$prog" "$(describe "$2")" "$pair" "$1" "$mbps" "$wall_mbps" "$note" >&2
}

run_ours() {
    local mode=${1%-*} size=${1##*-} iters=$2 log=$3
    mbps='' loss='' released=''
    # The same watcher as perftest's runs (bench-lib.sh), idle here: the
    # pattern is the last line of our JSON, and our server ends by itself.
    ours_run --release '^}$' "$release_grace" "$log" \
        -t "$tx_depth" -r "$(rx_depth_for "$iters")" \
        --signal-every "$signal_every" -I "$inline" --cq-mode "$mode" \
        -s "$size" -n "$iters" || return 1
    released='' # theirs only
    read -r mbps loss <<<"$(result_fields "$log.client" 'mib_s()' \
        '"%.4f" % r["loss_pct"]')"
    [ -n "$mbps" ] && [ -n "$loss" ]
}

run_theirs() {
    local mode=${1%-*} size=${1##*-} iters=$2 log=$3 ev=()
    mbps='' loss='' released=''
    [ "$mode" = poll ] || ev=(-e)
    # No -r: perftest's UD rule above applies to its default only. The
    # release pattern is the result row (size, iterations, peak, average),
    # not the header: perftest prints that before the traffic.
    perftest_run --release "^ *$size +$iters +[0-9.]+ +[0-9.]+" \
        "$release_grace" "$log" -c UD -d "$dev" -x "$gid" \
        -p "$theirs_port" -s "$size" -n "$iters" -t "$tx_depth" \
        -Q "$signal_every" -F "${ev[@]}" || return 1
    perftest_like "$log" "$iters"
    mbps=$(perftest_mbps "$size" "$log")
}

# The runs, medians, paired ratios, intervals and verdicts to stdout; the
# same as JSON to $2.
report() {
    bench_python "$@" <<'EOF'
def mode_case(case, mine):
    mode, size = case.rsplit("-", 1)
    label = "%-5s %7d B" % (mode, int(size))
    loss = values(mine, "ours", "loss_pct")
    released = values(mine, "theirs", "released")
    entry = bandwidth(label, size, mine, "ib_send_bw -c UD" +
                      (" -e" if mode == "event" else ""), head={"mode": mode},
                      ours_loss_pct=loss,
                      theirs_server_stopped=int(sum(released)))
    # UD drops instead of retrying: what ours lost, and how often perftest's
    # server was left waiting for datagrams (it does not count them).
    print("%s  lost: ours %s %%;  theirs: server left waiting in %d of %d runs"
          % (" " * len(label), " ".join("%.2f" % v for v in loss) or "n/a",
             entry["theirs_server_stopped"], len(released)))
    return label, entry
summarize(sys.argv[1], sys.argv[2], "ud_send_bw vs ib_send_bw -c UD (-e in event mode), average sending"
          " bandwidth in MB/s (2^20 B/s)", "case", mode_case,
          {"benchmark": "ud_send_bw vs ib_send_bw -c UD", "unit": "MiB/s",
           "bandwidth": "client (sender) average"}, cases="cases")
EOF
}

bench_main "$@"
