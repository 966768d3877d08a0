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
# runs.tsv to DIR (default: a scratch dir, printed at the end when kept).
# Both tools run server on CPU 0 and client on CPU 1 (BENCH_NO_PIN=1: no).
# Exit status: 0 whatever the verdict (this is a measurement), 1 when a run
# still fails after its retries, 2 on usage errors, else softroce-run.sh's.
set -euo pipefail

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
usage() { sed -n 's/^# \{0,1\}Usage: //p' "$0" >&2; exit 2; }

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
attempts_max=3
# Server and client each on a CPU of their own, for both tools alike: left
# to the scheduler, two spinning processes in a 2-CPU TCG guest swing
# 64 B runs by up to 2x; pinned, runs agree within a few percent.
pin_server=(taskset -c 0)
pin_client=(taskset -c 1)
if [ "$(nproc)" -lt 2 ] || [ -n "${BENCH_NO_PIN:-}" ]; then
    pin_server=()
    pin_client=()
fi
run_timeout=180

# ---------------------------------------------------------------------------
# Inner part: runs on soft-RoCE (in the guest), given RUNS TARGET SIZE:ITERS...
inner() {
    local runs=$1 target=$2
    shift 2
    local dev=${CQPERF_RXE_DEV:?} addr=${CQPERF_SERVER_ADDR:?}
    local gid=${CQPERF_RXE_GID_INDEX:?} out=${CQPERF_OUT:?}
    local logs=$out/logs
    mkdir -p "$logs"
    local tsv=$out/runs.tsv
    printf 'size\titers\trun\ttool\tattempts\tmbps\twall_mbps\n' >"$tsv"

    server_pid=
    # Never leave a server behind, whatever way we leave (a signal too).
    trap 'stop_server' EXIT
    trap 'exit 143' TERM
    trap 'exit 130' INT

    local spec size iters run tool failed=0
    for spec in "$@"; do
        size=${spec%%:*} iters=${spec#*:}
        for ((run = 1; run <= runs; run++)); do
            for tool in ours theirs; do
                if measure "$tool" "$size" "$iters" "$run"; then
                    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$size" "$iters" \
                        "$run" "$tool" "$attempts" "$mbps" "$wall_mbps" >>"$tsv"
                    printf '%s: %6s B run %d %-6s %10.2f MB/s (client wall clock: %.2f)\n' \
                        "$prog" "$size" "$run" "$tool" "$mbps" "$wall_mbps" >&2
                else
                    failed=1
                    printf '%s\t%s\t%s\t%s\t%s\t\t\n' "$size" "$iters" "$run" \
                        "$tool" "$attempts" >>"$tsv"
                fi
            done
        done
    done

    report "$tsv" "$target" "$out/summary.json"
    return "$failed"
}

stop_server() {
    [ -n "${server_pid:-}" ] || return 0
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=
}

# Wait until something listens on TCP PORT, or the server PID died.
wait_listen() {
    local port=$1 pid=$2 i
    for ((i = 0; i < 300; i++)); do
        if [ -n "$(ss -ltnH "sport = :$port")" ]; then
            return 0
        fi
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}

# One measurement with retries; sets globals $mbps and $attempts (no
# subshell, so that $server_pid stays ours to clean up).
measure() {
    local tool=$1 size=$2 iters=$3 run=$4 log
    for ((attempts = 1; attempts <= attempts_max; attempts++)); do
        log=$logs/$tool-$size-run$run-try$attempts
        mbps=
        case $tool in
            ours) run_ours "$size" "$iters" "$log" &&
                plausible "$size" "$iters" && return 0 ;;
            theirs) run_theirs "$size" "$iters" "$log" &&
                plausible "$size" "$iters" && return 0 ;;
        esac
        stop_server
        # Say why: perftest's CPU-frequency estimate ("Correlation
        # coefficient r^2 ... Can't produce a report") fails now and then
        # under TCG, which is what the retries are for.
        echo "$prog: $tool $size B run $run attempt $attempts failed:" >&2
        tail -n 5 "$log.client" "$log.server" 2>/dev/null | sed 's/^/    /' >&2
    done
    attempts=$attempts_max
    return 1
}

# Run a client under the per-run timeout, output to $1.client; sets
# $wall_us, its wall-clock time (connection setup included).
timed_client() {
    local log=$1 t0 t1
    shift
    t0=${EPOCHREALTIME/[.,]/}
    timeout "$run_timeout" "$@" >"$log.client" 2>&1 || return 1
    t1=${EPOCHREALTIME/[.,]/}
    wall_us=$((t1 - t0))
}

# The reported bandwidth cannot be below bytes over the client's whole wall
# time. perftest converts CPU cycles to time with a sampled cycle rate that
# TCG sometimes gets badly wrong (it has printed 0.00 MB/s): treat that as
# a failed run. Sets $wall_mbps, the wall-clock figure, for the record.
plausible() {
    local size=$1 iters=$2
    wall_mbps=$(awk -v b="$size" -v n="$iters" -v us="$wall_us" \
        'BEGIN { printf "%.4f", b * n / (us / 1e6) / 1048576 }')
    if awk -v r="$mbps" -v w="$wall_mbps" 'BEGIN { exit !(r < 0.99 * w) }'; then
        echo "$prog: reported $mbps MB/s is below the wall-clock bound $wall_mbps" >&2
        return 1
    fi
}

run_ours() {
    local size=$1 iters=$2 log=$3 bin=$top/build/src/cq_poll_bw
    # The server adopts the client's test settings (negotiated).
    "${pin_server[@]}" timeout "$run_timeout" "$bin" -d "$dev" -x "$gid" \
        -p "$ours_port" >"$log.server" 2>&1 &
    server_pid=$!
    wait_listen "$ours_port" "$server_pid" || return 1
    timed_client "$log" "${pin_client[@]}" "$bin" -d "$dev" -x "$gid" -p "$ours_port" \
        -t "$tx_depth" -r "$rx_depth" --signal-every "$signal_every" \
        -I "$inline" --cq-mode poll -s "$size" -n "$iters" --output json \
        "$addr" || return 1
    wait "$server_pid" || { server_pid=; return 1; }
    server_pid=
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
    "${pin_server[@]}" timeout "$run_timeout" ib_send_bw "${args[@]}" \
        >"$log.server" 2>&1 &
    server_pid=$!
    wait_listen "$theirs_port" "$server_pid" || return 1
    timed_client "$log" "${pin_client[@]}" ib_send_bw "${args[@]}" "$addr" || return 1
    wait "$server_pid" || { server_pid=; return 1; }
    server_pid=
    # The row under the "BW average[MB/sec]" header (MiB/s, as perftest's
    # --help says; MsgRate * size agrees) whose first field is the size.
    mbps=$(awk -v size="$size" '
        /BW average\[MB\/sec\]/ { hdr = 1; next }
        hdr && $1 == size { print $4; found = 1; exit }
        END { exit !found }' "$log.client")
}

# Medians, ratios and verdicts to stdout; the same as JSON to $3.
report() {
    python3 - "$@" <<'EOF'
import csv, json, statistics, sys

tsv, target, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
rows = list(csv.DictReader(open(tsv), delimiter="\t"))
sizes, summary = [], []
for r in rows:
    if int(r["size"]) not in sizes:
        sizes.append(int(r["size"]))
print("cq_poll_bw (poll) vs ib_send_bw, average bandwidth in MB/s (2^20 B/s)")
for size in sizes:
    mine = [r for r in rows if int(r["size"]) == size]
    def vals(tool, key="mbps"):
        return [float(r[key]) for r in mine if r["tool"] == tool and r[key]]
    ours, theirs = vals("ours"), vals("theirs")
    # Bytes over each client's whole run, setup included: a check on the
    # tools' own clocks, not the figure compared.
    wall_o, wall_t = vals("ours", "wall_mbps"), vals("theirs", "wall_mbps")
    entry = {"bytes": size, "iterations": int(mine[0]["iters"]),
             "ours_mbps": ours, "theirs_mbps": theirs,
             "ours_wall_mbps": wall_o, "theirs_wall_mbps": wall_t,
             "retries": sum(int(r["attempts"]) - 1 for r in mine)}
    print("%7d B  ours:   %s" % (size, "  ".join("%9.2f" % v for v in ours)))
    print("%7s    theirs: %s" % ("", "  ".join("%9.2f" % v for v in theirs)))
    if ours and theirs:
        mo, mt = statistics.median(ours), statistics.median(theirs)
        pairs = [o / t for o, t in zip(ours, theirs) if t > 0]
        ratio = mo / mt if mt > 0 else None
        entry.update(ours_median_mbps=mo, theirs_median_mbps=mt,
                     ratio=ratio,
                     paired_ratio_median=statistics.median(pairs)
                     if pairs else None)
        print("%7s    median ours %.2f  theirs %.2f  ratio %s"
              " (median of paired ratios %s)"
              % ("", mo, mt, "%.3f" % ratio if ratio else "n/a",
                 "%.3f" % entry["paired_ratio_median"] if pairs else "n/a"))
        if wall_o and wall_t:
            print("%7s    wall-clock check (setup included): ours %.2f"
                  "  theirs %.2f" % ("", statistics.median(wall_o),
                                     statistics.median(wall_t)))
        entry["verdict"] = ("PASS" if ratio is not None and ratio >= target
                            else "FAIL")
    else:
        entry["verdict"] = "NO DATA"
    summary.append(entry)
for e in summary:
    print("verdict %7d B: %s (ratio %s, target >= %g)"
          % (e["bytes"], e["verdict"],
             "%.3f" % e["ratio"] if e.get("ratio") else "n/a", target))
json.dump({"benchmark": "cq_poll_bw poll vs ib_send_bw", "unit": "MiB/s",
           "target_ratio": target, "sizes": summary},
          open(out, "w"), indent=2)
EOF
}

# ---------------------------------------------------------------------------
# Outer part: check arguments and hand the inner part to soft-RoCE.
if [ "${1:-}" = --inner ]; then
    shift
    inner "$@"
    exit
fi

out_dir=
timeout_s=1800
while [ $# -gt 0 ]; do
    case $1 in
        --out) [ $# -ge 2 ] || usage; out_dir=$2; shift 2 ;;
        --out=*) out_dir=${1#*=}; shift ;;
        --timeout) [ $# -ge 2 ] || usage; timeout_s=$2; shift 2 ;;
        --timeout=*) timeout_s=${1#*=}; shift ;;
        -h|--help) usage ;;
        *) echo "$prog: unknown argument $1" >&2; usage ;;
    esac
done

runs=${BENCH_RUNS:-3}
target=${BENCH_TARGET:-1.0}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "$prog: BENCH_RUNS wants a count" >&2; exit 2; }
[[ $target =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "$prog: BENCH_TARGET wants a number" >&2; exit 2; }
specs=()
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

[ -x "$top/build/src/cq_poll_bw" ] ||
    { echo "$prog: build/src/cq_poll_bw missing (build first)" >&2; exit 1; }
command -v ib_send_bw >/dev/null ||
    { echo "$prog: ib_send_bw missing (scripts/deps.sh installs perftest)" >&2; exit 1; }

# Without --out the results would vanish with the guest: keep them in a
# host dir (not under /tmp, which the guest hides).
if [ -z "$out_dir" ]; then
    out_dir=$top/build/bench-cq_poll_bw
fi
mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)
rm -rf "$out_dir/logs"

# The guest runs commands in our cwd and hides /tmp: run from the tree.
cd "$top"
rc=0
"$here/softroce-run.sh" --timeout "$timeout_s" --out "$out_dir" -- \
    "$here/$prog" --inner "$runs" "$target" "${specs[@]}" || rc=$?
echo "$prog: results in $out_dir (summary.json, runs.tsv, logs/)" >&2
exit "$rc"
