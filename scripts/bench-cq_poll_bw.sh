#!/usr/bin/env bash
# Side-by-side bandwidth of cq_poll_bw (poll mode) and perftest's ib_send_bw
# on soft-RoCE, with equivalent settings, runs alternating ours/theirs so
# drift in the (noisy, TCG-emulated) guest hits both tools alike.
#
# Usage: bench-cq_poll_bw.sh [--out DIR] [--timeout SEC]
#
# Sizes 64, 4096 and 65536 bytes, BENCH_RUNS (default 3) runs per tool and
# size; iterations per size from BENCH_ITERS_64, BENCH_ITERS_4096 and
# BENCH_ITERS_65536. Prints every run's average bandwidth in MB/s (2^20
# bytes/s), the medians, the ratio ours/theirs and a verdict against the
# target ratio (BENCH_TARGET, default 1.0); writes summary.json and
# runs.tsv to DIR (default: build/bench-cq_poll_bw).
# Both tools run server on CPU 0 and client on CPU 1 (BENCH_NO_PIN=1: no).
# Exit status: 0 whatever the verdict (this is a measurement), 1 when a run
# still fails after its retries, 2 on usage errors, else softroce-run.sh's.
set -euo pipefail

# shellcheck source=scripts/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"

sizes=(64 4096 65536)
# Sized for a few seconds per run under TCG (ib_send_bw 4 KiB ~ 30-60 MB/s).
declare -A default_iters=([64]=50000 [4096]=20000 [65536]=2000)
ours_port=18600
theirs_port=18515
# perftest's settings we match: its defaults (tx 128, rx 512, one QP) with a
# signaled send every 100 (-Q 100). Inline: perftest's bandwidth tests use
# none by default, and on a device it does not recognise (rxe) it forces 0
# even when -I asks for more ("Max inline data : 0[B]" in its header), so
# ours runs with -I 0 too.
inline=0
tx_depth=128
rx_depth=512
signal_every=100

case_column=size
tsv_columns=(mbps wall_mbps)
need_files=(build/src/cq_poll_bw)
declare -A need_cmds=([ib_send_bw]="scripts/deps.sh installs perftest")

describe() { echo "$1 B"; }

make_specs() {
    local size var iters
    for size in "${sizes[@]}"; do
        var=BENCH_ITERS_$size
        iters=${!var:-${default_iters[$size]}}
        # perftest wants more iterations than signaling period and tx depth.
        if ! [[ $iters =~ ^[0-9]+$ ]] || [ "$iters" -lt 1000 ]; then
            echo "$prog: $var wants a count >= 1000" >&2
            exit 2
        fi
        specs+=("$size:$iters")
    done
}

# The reported bandwidth cannot be below bytes over the client's whole wall
# time. perftest converts CPU cycles to time with a sampled cycle rate that
# TCG sometimes gets badly wrong (it has printed 0.00 MB/s): treat that as
# a failed run. Sets $wall_mbps, the wall-clock figure, for the record.
plausible() {
    local size=$2 iters=$3
    wall_mbps=$(awk -v b="$size" -v n="$iters" -v us="$wall_us" \
        'BEGIN { printf "%.4f", b * n / (us / 1e6) / 1048576 }')
    if awk -v r="$mbps" -v w="$wall_mbps" 'BEGIN { exit !(r < 0.99 * w) }'; then
        echo "$prog: reported $mbps MB/s is below the wall-clock bound $wall_mbps" >&2
        return 1
    fi
}

record() {
    local size=$2 run=$4
    fields=("$mbps" "$wall_mbps")
    printf '%s: %6s B run %d %-6s %10.2f MB/s (client wall clock: %.2f)\n' \
        "$prog" "$size" "$run" "$1" "$mbps" "$wall_mbps" >&2
}

run_ours() {
    local size=$1 iters=$2 log=$3 bin=$top/build/src/cq_poll_bw
    mbps=
    # The server adopts the client's test settings (negotiated).
    start_server "$log" "$ours_port" "$bin" -d "$dev" -x "$gid" \
        -p "$ours_port" || return 1
    timed_client "$log" "$bin" -d "$dev" -x "$gid" -p "$ours_port" \
        -t "$tx_depth" -r "$rx_depth" --signal-every "$signal_every" \
        -I "$inline" --cq-mode poll -s "$size" -n "$iters" --output json \
        "$addr" || return 1
    finish_server || return 1
    # bw_avg_gbps is 10^9 bit/s; report 2^20 byte/s like perftest.
    mbps=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print("%.4f" % (r["bw_avg_gbps"] * 1e9 / 8 / 2**20))' "$log.client")
}

run_theirs() {
    local size=$1 iters=$2 log=$3
    local args=(-d "$dev" -x "$gid" -p "$theirs_port" -s "$size" -n "$iters"
                -t "$tx_depth" -r "$rx_depth" -Q "$signal_every" -F)
    mbps=
    start_server "$log" "$theirs_port" ib_send_bw "${args[@]}" || return 1
    timed_client "$log" ib_send_bw "${args[@]}" "$addr" || return 1
    finish_server || return 1
    # The row under the "BW average[MB/sec]" header (MiB/s, as perftest's
    # --help says; MsgRate * size agrees) whose first field is the size.
    mbps=$(awk -v size="$size" '
        /BW average\[MB\/sec\]/ { hdr = 1; next }
        hdr && $1 == size { print $4; found = 1; exit }
        END { exit !found }' "$log.client")
}

# Medians, ratios and verdicts to stdout; the same as JSON to $3.
report() {
    bench_python "$@" <<'EOF'
tsv, target, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
rows = load(tsv)
summary = []
print("cq_poll_bw (poll) vs ib_send_bw, average bandwidth in MB/s (2^20 B/s)")
for size in distinct(rows, "size"):
    mine = [r for r in rows if r["size"] == size]
    label = "%7d B" % int(size)
    ours, theirs = values(mine, "ours", "mbps"), values(mine, "theirs", "mbps")
    # Bytes over each client's whole run, setup included: a check on the
    # tools' own clocks, not the figure compared.
    wall_o = values(mine, "ours", "wall_mbps")
    wall_t = values(mine, "theirs", "wall_mbps")
    entry = {"bytes": int(size), "iterations": int(mine[0]["iters"]),
             "ours_mbps": ours, "theirs_mbps": theirs,
             "ours_wall_mbps": wall_o, "theirs_wall_mbps": wall_t,
             "retries": sum(int(r["attempts"]) - 1 for r in mine)}
    series(label, ours, theirs)
    if compare(label, mine, "mbps", target, False, entry) and wall_o and wall_t:
        print("%s  wall-clock check (setup included): ours %.2f  theirs %.2f"
              % (" " * len(label), statistics.median(wall_o),
                 statistics.median(wall_t)))
    summary.append((label, entry))
for label, e in summary:
    verdict(label, e, target, False)
json.dump({"benchmark": "cq_poll_bw poll vs ib_send_bw", "unit": "MiB/s",
           "target_ratio": target, "sizes": [e for _, e in summary]},
          open(out, "w"), indent=2)
EOF
}

bench_main "$@"
