# shellcheck shell=bash
# Shared part of the side-by-side benchmarks (scripts/bench-*.sh): ours and
# perftest's counterpart in one soft-RoCE run, runs alternating ours/theirs
# so drift in the (noisy, TCG-emulated) guest hits both tools alike, failed
# runs retried, medians, ratios and verdicts. Sourced, not run: the script
# ends with `bench_main "$@"`, which re-invokes it with --inner on
# soft-RoCE.
#
# The script calls bench_tools (which sets need_files, need_cmds and
# the perftest settings to match), sets before bench_main:
#   case_column   TSV name of the first column (what a CASE is; "size"
#                 unless set)
#   tsv_columns   array, names of the columns `record` fills
#   need_files    array, files under the tree that must be executable
#   need_cmds     assoc. array, command => hint when it is missing
# and defines the hooks:
#   make_specs                outer part: specs=(CASE:ITERS ...) from the
#                             environment; exit 2 on bad values
#                             (specs_by_size, bench_iters)
#   run_ours|run_theirs CASE ITERS LOG
#                             one run (ours_run or perftest_run, or
#                             start_server, timed_client, finish_server);
#                             0 when it got its figures
#   record TOOL CASE ITERS RUN
#                             fields=(the TSV columns); progress to stderr
#   report TSV TARGET JSON    the table to stdout, the summary to JSON
#                             (bench_python, summarize)
# and may redefine
#   plausible TOOL CASE ITERS the figures agree with the wall clock
#                             (default: plausible_bw or plausible_lat,
#                             by bench_tools' KIND)
#   describe CASE             CASE in words, for messages (default "CASE B")
# Hooks see dev, addr, gid, out and logs (bench_inner's locals), wall_us
# (timed_client) and the globals below.

# What the sourcing script sets (after sourcing) and the lib reads.
case_column=size
tsv_columns=()
need_files=()
declare -A need_cmds=()

# Settings the helpers and hooks below read.
# Ports: ours, and perftest's default.
ours_port=18600
theirs_port=18515
# On UD, with its default rx depth, perftest posts one receive per
# iteration up to 16000 (UC_MAX_RX; "RX depth" in its server's header):
# rx_depth_for ITERS is the receive queue that matches it.
perftest_ud_max_rx=16000
rx_depth_for() { echo $(($1 < perftest_ud_max_rx ? $1 : perftest_ud_max_rx)); }

# Inline: perftest's bandwidth tests use none by default, and on a device
# it does not recognise (rxe) perftest grants none even when -I asks for
# more ("Max inline data : 0[B]" in its header; perftest_like checks it),
# so ours runs with -I 0 too.
inline=0

# bench_tools KIND OURS THEIRS: the script compares our build/src/OURS
# (ours_run) with perftest's THEIRS (perftest_run), both needed, using
# perftest's settings for KIND (for ours to match), with plausible for
# KIND's figures:
#   bw   bandwidth: tx depth 128 (perftest's default) and a signaled send
#        every 100 (-Q 100); plausible_bw
#   lat  latency: ib_send_lat's defaults, tx depth 1 ("TX depth : 1" in
#        its header) and no warm-up (--perform_warm_up being for BW tests
#        only, every -n exchange is measured); plausible_lat
bench_tools() {
    kind=$1 ours_tool=$2 theirs_tool=$3
    need_files+=("build/src/$ours_tool")
    need_cmds[$theirs_tool]="scripts/deps.sh installs perftest"
    # shellcheck disable=SC2034  # for the hooks
    case $kind in
        bw) tx_depth=128 signal_every=100 ;;
        lat) tx_depth=1 warmup=0 ;;
        *) echo "$prog: bench_tools: no kind $kind" >&2; exit 2 ;;
    esac
}

plausible() { "plausible_$kind" "$@"; }
describe() { echo "$1 B"; }

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
usage() { sed -n 's/^# \{0,1\}Usage: //p' "$0" >&2; exit 2; }

attempts_max=3
run_timeout=180
# Server and client each on a CPU of their own, for both tools alike: left
# to the scheduler, two spinning processes in a 2-CPU TCG guest swing
# 64 B runs by up to 2x; pinned, runs agree within a few percent.
pin_server=(taskset -c 0)
pin_client=(taskset -c 1)
if [ "$(nproc)" -lt 2 ] || [ -n "${BENCH_NO_PIN:-}" ]; then
    pin_server=()
    pin_client=()
fi

# ---------------------------------------------------------------------------
# Inner part: runs on soft-RoCE (in the guest), given RUNS TARGET CASE:ITERS...
bench_inner() {
    local runs=$1 target=$2
    shift 2
    # shellcheck disable=SC2034  # dev, addr and gid are for the hooks
    local dev=${CQPERF_RXE_DEV:?} addr=${CQPERF_SERVER_ADDR:?} \
        gid=${CQPERF_RXE_GID_INDEX:?} out=${CQPERF_OUT:?}
    local logs=$out/logs
    mkdir -p "$logs"
    local tsv=$out/runs.tsv
    {
        printf '%s\titers\trun\ttool\tattempts' "$case_column"
        printf '\t%s' "${tsv_columns[@]}"
        printf '\n'
    } >"$tsv"

    server_pid='' releaser_pid=''
    # Never leave a server behind, whatever way we leave (a signal too).
    trap 'stop_server' EXIT
    trap 'exit 143' TERM
    trap 'exit 130' INT

    local spec case iters run tool failed=0
    for spec in "$@"; do
        case=${spec%%:*} iters=${spec#*:}
        for ((run = 1; run <= runs; run++)); do
            for tool in ours theirs; do
                if measure "$tool" "$case" "$iters" "$run"; then
                    record "$tool" "$case" "$iters" "$run"
                else
                    failed=1
                    # As many empty fields as columns: a failed run.
                    fields=("${tsv_columns[@]/*/}")
                fi
                {
                    printf '%s\t%s\t%s\t%s\t%s' "$case" "$iters" "$run" \
                        "$tool" "$attempts"
                    printf '\t%s' "${fields[@]}"
                    printf '\n'
                } >>"$tsv"
            done
        done
    done

    report "$tsv" "$target" "$out/summary.json"
    return "$failed"
}

stop_server() {
    stop_releaser
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

# start_server LOG PORT CMD...: CMD in the background on the server CPU,
# output to LOG.server; 0 once it listens on PORT.
start_server() {
    local log=$1 port=$2
    shift 2
    "${pin_server[@]}" timeout "$run_timeout" "$@" >"$log.server" 2>&1 &
    server_pid=$!
    wait_listen "$port" "$server_pid"
}

# wait_cm_listen PORT PID: wait_listen for a server that listens on RDMA
# CM PORT only (cmtime: no TCP socket for ss to see); `rdma resource show
# cm_id` (iproute2) lists its listener as "state LISTEN ... src-addr
# ADDR:PORT".
wait_cm_listen() {
    local port=$1 pid=$2 i
    for ((i = 0; i < 300; i++)); do
        if rdma resource show cm_id 2>/dev/null |
            grep -Eq "state LISTEN .*src-addr [^ ]*:$port( |\$)"; then
            return 0
        fi
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}

# start_cm_server LOG PORT CMD...: start_server for such a server; 0 once
# it listens on RDMA CM PORT.
start_cm_server() {
    local log=$1 port=$2
    shift 2
    "${pin_server[@]}" timeout "$run_timeout" "$@" >"$log.server" 2>&1 &
    server_pid=$!
    wait_cm_listen "$port" "$server_pid"
}

# The server's exit status, once the client is done with it.
finish_server() {
    local pid=$server_pid
    server_pid=
    wait "$pid"
}

# Whether process PID still runs (a zombie, not yet waited for, does not).
running() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    [ "${stat%% *}" != Z ]
}

# For servers that may never end on their own: perftest's UD bandwidth
# server waits (for minutes) for datagrams that were lost on the way, and
# its client, figures printed, waits for the server. release_server LOG
# PATTERN GRACE, called after start_server: in the background, once
# LOG.client matches PATTERN (grep -E), give the server GRACE seconds to
# end, then stop it and say so in LOG.released. finish_released_server
# LOG, instead of finish_server: 0 when the server ended well or was
# stopped so; sets $released (1: stopped, 0: not).
release_server() {
    local log=$1 pattern=$2 grace=$3 pid=$server_pid
    rm -f "$log.released"
    (
        trap - EXIT TERM INT
        while running "$pid"; do
            if grep -Eq -- "$pattern" "$log.client" 2>/dev/null; then
                for ((i = 0; i < grace * 10; i++)); do
                    running "$pid" || exit 0
                    sleep 0.1
                done
                echo "server still running ${grace} s after its client's figures: stopped" \
                    >"$log.released"
                kill -TERM "$pid" 2>/dev/null
                exit 0
            fi
            sleep 0.2
        done
    ) &
    releaser_pid=$!
}

stop_releaser() {
    [ -n "${releaser_pid:-}" ] || return 0
    kill -TERM "$releaser_pid" 2>/dev/null || true
    wait "$releaser_pid" 2>/dev/null || true
    releaser_pid=
}

finish_released_server() {
    local log=$1 rc=0
    # The client is done: the releaser has acted by now, or has no need to.
    stop_releaser
    finish_server || rc=$?
    # shellcheck disable=SC2034  # for the hooks
    released=0
    if [ -e "$log.released" ]; then
        # shellcheck disable=SC2034  # for the hooks
        released=1
        return 0
    fi
    return "$rc"
}

# finish_server_within LOG GRACE, instead of finish_server, for servers
# that may not end once their client has (which has already printed its
# figures and ended): give the server GRACE seconds to end, then stop it
# and say so in LOG.released. 0 when it ended well or was stopped so; sets
# $released (1: stopped, 0: not).
finish_server_within() {
    local log=$1 grace=$2 pid=$server_pid i
    rm -f "$log.released"
    for ((i = 0; i < grace * 10; i++)); do
        running "$pid" || break
        sleep 0.1
    done
    # shellcheck disable=SC2034  # for the hooks
    released=0
    if running "$pid"; then
        echo "server still running ${grace} s after its client ended: stopped" \
            >"$log.released"
        # shellcheck disable=SC2034  # for the hooks
        released=1
        kill -TERM "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        server_pid=
        return 0
    fi
    finish_server
}

# One measurement with retries; sets $attempts (no subshell, so that
# $server_pid stays ours to clean up).
measure() {
    local tool=$1 case=$2 iters=$3 run=$4 log
    for ((attempts = 1; attempts <= attempts_max; attempts++)); do
        log=$logs/$tool-$case-run$run-try$attempts
        if case $tool in
            ours) run_ours "$case" "$iters" "$log" ;;
            *) run_theirs "$case" "$iters" "$log" ;;
        esac && plausible "$tool" "$case" "$iters"; then
            return 0
        fi
        stop_server
        # Say why: perftest's CPU-frequency estimate ("Correlation
        # coefficient r^2 ... Can't produce a report") fails now and then
        # under TCG, which is what the retries are for.
        echo "$prog: $tool $(describe "$case") run $run attempt $attempts failed:" >&2
        tail -n 5 "$log.client" "$log.server" 2>/dev/null | sed 's/^/    /' >&2
    done
    attempts=$attempts_max
    return 1
}

# timed_client LOG CMD...: CMD on the client CPU under the per-run timeout,
# output to LOG.client. Sets $wall_us, its wall-clock time, and $cpu_s, its
# user + system CPU seconds; both include connection setup.
timed_client() {
    local log=$1 t0 t1
    shift
    t0=${EPOCHREALTIME/[.,]/}
    # A subshell whose only child is the client: the second line of its
    # `times` is then the client's own CPU (getrusage of waited children).
    (timeout "$run_timeout" "${pin_client[@]}" "$@" >"$log.client" 2>&1 &&
        times >"$log.times") || return 1
    t1=${EPOCHREALTIME/[.,]/}
    # shellcheck disable=SC2034  # for the hooks
    wall_us=$((t1 - t0))
    # "1m2.345s 0m0.678s": minutes and seconds, user then system.
    # shellcheck disable=SC2034  # for the hooks
    cpu_s=$(awk 'NR == 2 {
        n = split($0, f, /[ms ]+/); s = 0
        for (i = 1; i + 1 <= n; i += 2) s += f[i] * 60 + f[i + 1]
        printf "%.3f", s }' "$log.times")
}

# ---------------------------------------------------------------------------
# Helpers for the hooks.

# bench_iters VAR DEFAULT MIN: sets $iters to $VAR, else DEFAULT; exit 2
# unless that is a count of at least MIN.
bench_iters() {
    local var=$1 min=$3
    iters=${!var:-$2}
    if ! [[ $iters =~ ^[0-9]+$ ]] || [ "$iters" -lt "$min" ]; then
        echo "$prog: $var wants a count >= $min" >&2
        exit 2
    fi
}

# specs_by_size MIN SIZE=ITERS..., make_specs where a CASE is a size:
# SIZE:N for each SIZE in order, N from BENCH_ITERS_SIZE, else ITERS, and
# at least MIN.
specs_by_size() {
    local min=$1 spec size iters
    shift
    for spec in "$@"; do
        size=${spec%%=*}
        bench_iters "BENCH_ITERS_$size" "${spec#*=}" "$min"
        specs+=("$size:$iters")
    done
}

# plausible_bw TOOL SIZE ITERS, for plausible: the reported bandwidth
# $mbps cannot be below bytes over the client's whole wall time. perftest
# converts CPU cycles to time with a sampled cycle rate that TCG sometimes
# gets badly wrong (it has printed 0.00 MB/s): treat that as a failed run.
# Sets $wall_mbps, the wall-clock figure, for the record.
plausible_bw() {
    local size=$2 iters=$3
    wall_mbps=$(awk -v b="$size" -v n="$iters" -v us="$wall_us" \
        'BEGIN { printf "%.4f", b * n / (us / 1e6) / 1048576 }')
    # shellcheck disable=SC2154  # mbps is the hooks'
    if awk -v r="$mbps" -v w="$wall_mbps" 'BEGIN { exit !(r < 0.99 * w) }'; then
        echo "$prog: reported $mbps MB/s is below the wall-clock bound $wall_mbps" >&2
        return 1
    fi
}

# plausible_lat TOOL CASE ITERS, for plausible: the average one-way
# latency $avg (and $p50, one-way too) cannot be more than the client's
# whole run over ITERS exchanges, each two ways; the cycle rate again.
# Sets $wall_lat, the wall-clock bound on the one-way average, for the
# record.
plausible_lat() {
    local iters=$3
    wall_lat=$(awk -v n="$iters" -v us="$wall_us" \
        'BEGIN { printf "%.3f", us / n / 2 }')
    if awk -v a="$avg" -v w="$wall_lat" -v p="$p50" \
        'BEGIN { exit !(a > 1.01 * w || a <= 0 || p <= 0) }'; then
        echo "$prog: reported average $avg us (p50 $p50 us) is outside (0, wall-clock bound $wall_lat us]" >&2
        return 1
    fi
}

# ours_run LOG ARGS...: one run of our tool (bench_tools) on $ours_port,
# the server adopting the client's test settings (negotiated), the client
# given ARGS and writing JSON to LOG.client; 0 when both ended well.
ours_run() {
    local log=$1 bin=$top/build/src/$ours_tool
    shift
    start_server "$log" "$ours_port" "$bin" -d "$dev" -x "$gid" \
        -p "$ours_port" || return 1
    timed_client "$log" "$bin" -d "$dev" -x "$gid" -p "$ours_port" \
        "$@" --output json "$addr" || return 1
    finish_server
}

# result_fields FILE EXPR...: each Python EXPR, over r, the first of the
# "results" in our JSON output FILE, on one line. mib_s() is its
# bw_avg_gbps (10^9 bit/s) in 2^20 byte/s, like perftest's, as "%.4f".
# (No process substitution for `read`ing them: the guest has no /dev/fd.)
result_fields() {
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
def mib_s():
    return "%.4f" % (r["bw_avg_gbps"] * 1e9 / 8 / 2**20)
print(*(eval(e) for e in sys.argv[2:]))' "$@"
}

# perftest_run [--release PATTERN GRACE] LOG ARGS...: one run of
# perftest's tool (bench_tools), server and client with ARGS (which name
# $theirs_port), the client also given the server's address; 0 when both
# ended well. --release: release_server LOG PATTERN GRACE for the server.
perftest_run() {
    local pattern='' grace=''
    if [ "$1" = --release ]; then
        pattern=$2 grace=$3
        shift 3
    fi
    local log=$1
    shift
    start_server "$log" "$theirs_port" "$theirs_tool" "$@" || return 1
    [ -z "$pattern" ] || release_server "$log" "$pattern" "$grace"
    timed_client "$log" "$theirs_tool" "$@" "$addr" || return 1
    if [ -n "$pattern" ]; then
        finish_released_server "$log"
    else
        finish_server
    fi
}

# perftest_like LOG [ITERS]: say so (the run still counts) where
# perftest's headers show other settings than ours: the inline size it
# granted (LOG.client) against $inline and, given ITERS, its UD server's
# rx depth (LOG.server) against rx_depth_for ITERS.
perftest_like() {
    local log=$1 granted depth
    granted=$(sed -n 's/^ *Max inline data *: *\([0-9]*\).*/\1/p' "$log.client")
    if [ "$granted" != "$inline" ]; then
        echo "$prog: $theirs_tool used inline $granted, ours $inline: not like for like" >&2
    fi
    [ $# -ge 2 ] || return 0
    depth=$(sed -n 's/^ *RX depth *: *\([0-9]*\).*/\1/p' "$log.server")
    if [ "$depth" != "$(rx_depth_for "$2")" ]; then
        echo "$prog: $theirs_tool's server used rx depth $depth, ours $(rx_depth_for "$2"): not like for like" >&2
    fi
}

# perftest_mbps SIZE LOG: from a perftest bandwidth client's LOG.client,
# the row under the "BW average[MB/sec]" header (MiB/s, as perftest's
# --help says; MsgRate * size agrees) whose first field is SIZE: its
# average; 1 when there is none.
perftest_mbps() {
    awk -v size="$1" '
        /BW average\[MB\/sec\]/ { hdr = 1; next }
        hdr && $1 == size { print $4; found = 1; exit }
        END { exit !found }' "$2.client"
}

# perftest_latency SIZE LOG: from a perftest latency client's LOG.client,
# the row under the header naming the columns whose first field is SIZE;
# columns found by name. Sets $p50 (t_typical, the median) and $avg; 0
# when both were found.
perftest_latency() {
    read -r p50 avg <<<"$(awk -v size="$1" '
        /t_typical\[usec\]/ {
            for (i = 1; i <= NF; i++) {
                if ($i == "t_typical[usec]") tp = i
                if ($i == "t_avg[usec]") ta = i
            }
            next
        }
        tp && ta && $1 == size { print $tp, $ta; exit }' "$2.client")" || true
    [ -n "$p50" ] && [ -n "$avg" ]
}

# Python helpers for the `report` hooks: bench_python ARGS... runs the
# script on stdin after them.
# shellcheck disable=SC2016  # Python, not shell
bench_py='
import csv, json, statistics, sys

def load(tsv):
    return list(csv.DictReader(open(tsv), delimiter="\t"))

def distinct(rows, key):
    seen = []
    for r in rows:
        if r[key] not in seen:
            seen.append(r[key])
    return seen

def values(rows, tool, key):
    return [float(r[key]) for r in rows if r["tool"] == tool and r[key]]

def by_run(rows, tool, key):
    return {r["run"]: float(r[key]) for r in rows
            if r["tool"] == tool and r[key]}

def fmt(v, f="%.3f"):
    return f % v if v else "n/a"

def series(label, ours, theirs, f="%9.2f"):
    """Every run of both tools; the second line is indented as wide
    as label."""
    print("%s  ours:   %s" % (label, "  ".join(f % v for v in ours)))
    print("%s  theirs: %s" % (" " * len(label),
                              "  ".join(f % v for v in theirs)))

def compare(label, rows, key, target, lower_better, entry):
    """Medians of column key and their ratio ours/theirs, printed under
    label and added to entry as ours_median_KEY, theirs_median_KEY, ratio,
    paired_ratio_median and verdict (against target)."""
    ours, theirs = values(rows, "ours", key), values(rows, "theirs", key)
    if not (ours and theirs):
        entry["verdict"] = "NO DATA"
        return False
    mo, mt = statistics.median(ours), statistics.median(theirs)
    # Runs pair up by number: neighbours in time, alike in drift.
    o, t = by_run(rows, "ours", key), by_run(rows, "theirs", key)
    pairs = [o[r] / t[r] for r in o if r in t and t[r] > 0]
    ratio = mo / mt if mt > 0 else None
    entry.update({"ours_median_" + key: mo, "theirs_median_" + key: mt,
                  "ratio": ratio,
                  "paired_ratio_median": statistics.median(pairs)
                  if pairs else None})
    print("%s  median ours %.2f  theirs %.2f  ratio %s"
          " (median of paired ratios %s)"
          % (" " * len(label), mo, mt, fmt(ratio),
             fmt(entry["paired_ratio_median"]) if pairs else "n/a"))
    ok = ratio is not None and (ratio <= target if lower_better
                                else ratio >= target)
    entry["verdict"] = "PASS" if ok else "FAIL"
    return True

def verdict(label, entry, target, lower_better, what=""):
    print("verdict %s: %s%s (ratio %s, target %s %g)"
          % (label, what, entry["verdict"], fmt(entry.get("ratio")),
             "<=" if lower_better else ">=", target))

def run_entry(size, mine, columns, head={}, **extra):
    """The summary entry of a case: the items of head, bytes, iterations,
    the runs of each tool for each of columns (ours_COL, theirs_COL), the
    items of extra, retries."""
    entry = dict(head, bytes=int(size), iterations=int(mine[0]["iters"]))
    for col in columns:
        for tool in ("ours", "theirs"):
            entry[tool + "_" + col] = values(mine, tool, col)
    entry.update(extra)
    entry["retries"] = sum(int(r["attempts"]) - 1 for r in mine)
    return entry

def bandwidth(label, size, mine, target, **extra):
    """A bandwidth case (columns mbps and wall_mbps, higher is better):
    the runs, medians, ratio and wall-clock check printed under label; its
    entry (run_entry, compare) returned."""
    entry = run_entry(size, mine, ("mbps", "wall_mbps"), **extra)
    wall_o, wall_t = entry["ours_wall_mbps"], entry["theirs_wall_mbps"]
    series(label, entry["ours_mbps"], entry["theirs_mbps"])
    # Bytes over the whole run of each client, setup included: a check on
    # the clocks of the tools themselves, not the figure compared.
    if compare(label, mine, "mbps", target, False, entry) and wall_o and wall_t:
        print("%s  wall-clock check (setup included): ours %.2f  theirs %.2f"
              % (" " * len(label), statistics.median(wall_o),
                 statistics.median(wall_t)))
    return entry

def latency(label, size, mine, target, head={}, **extra):
    """A latency case (columns p50_us, avg_us and wall_us; p50 compared,
    lower is better): the runs, medians, ratio, averages and wall-clock
    bounds printed under label; its entry (run_entry, compare) returned."""
    entry = run_entry(size, mine, ("p50_us", "avg_us", "wall_us"), head,
                      **extra)
    series(label, entry["ours_p50_us"], entry["theirs_p50_us"])
    if compare(label, mine, "p50_us", target, True, entry):
        med = lambda k: statistics.median(entry[k]) if entry[k] else 0
        # The wall-clock bound: a check on the clocks of the tools.
        print("%s  average: ours %.2f  theirs %.2f;  wall-clock bound"
              " (setup included): ours %.2f  theirs %.2f"
              % (" " * len(label), med("ours_avg_us"), med("theirs_avg_us"),
                 med("ours_wall_us"), med("theirs_wall_us")))
    return entry

def summarize(title, key, case, lower_better, meta, cases="sizes",
              what="", more=None):
    """The whole report, from the arguments of the hook: title; for each
    value of column key, in order, case(value, its rows, target) -> (label,
    entry), printing its part; then the verdict of each case (and
    more(label, entry)); the JSON: the items of meta, target_ratio, and the
    entries under the name cases."""
    rows, target, out = load(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
    print(title)
    summary = [case(v, [r for r in rows if r[key] == v], target)
               for v in distinct(rows, key)]
    for label, e in summary:
        verdict(label, e, target, lower_better, what)
        if more:
            more(label, e)
    json.dump(dict(meta, target_ratio=target,
                   **{cases: [e for _, e in summary]}),
              open(out, "w"), indent=2)
'
bench_python() {
    python3 -c "$bench_py$(cat)" "$@"
}

# ---------------------------------------------------------------------------
# Outer part: check arguments and hand the inner part to soft-RoCE.
bench_main() {
    if [ "${1:-}" = --inner ]; then
        shift
        bench_inner "$@"
        exit
    fi

    local out_dir='' timeout_s=1800
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

    local runs=${BENCH_RUNS:-3} target=${BENCH_TARGET:-1.0} f c
    [[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "$prog: BENCH_RUNS wants a count" >&2; exit 2; }
    [[ $target =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "$prog: BENCH_TARGET wants a number" >&2; exit 2; }
    specs=()
    make_specs

    for f in "${need_files[@]}"; do
        [ -x "$top/$f" ] || { echo "$prog: $f missing (build first)" >&2; exit 1; }
    done
    for c in "${!need_cmds[@]}"; do
        command -v "$c" >/dev/null ||
            { echo "$prog: $c missing (${need_cmds[$c]})" >&2; exit 1; }
    done

    # Without --out the results would vanish with the guest: keep them in a
    # host dir (not under /tmp, which the guest hides).
    if [ -z "$out_dir" ]; then
        out_dir=$top/build/${prog%.sh}
    fi
    mkdir -p "$out_dir"
    out_dir=$(cd "$out_dir" && pwd)
    rm -rf "$out_dir/logs"

    # The guest starts from a clean environment: hand BENCH_NO_PIN on.
    export CQPERF_PASS_ENV="${CQPERF_PASS_ENV:-} BENCH_NO_PIN"
    # The guest runs commands in our cwd and hides /tmp: run from the tree.
    cd "$top" || exit 1
    local rc=0
    "$here/softroce-run.sh" --timeout "$timeout_s" --out "$out_dir" -- \
        "$here/$prog" --inner "$runs" "$target" "${specs[@]}" || rc=$?
    echo "$prog: results in $out_dir (summary.json, runs.tsv, logs/)" >&2
    exit "$rc"
}
