# shellcheck shell=bash
# Shared part of the side-by-side benchmarks (scripts/bench-*.sh): ours and
# perftest's counterpart in one soft-RoCE run, runs alternating ours/theirs
# so drift in the (noisy, TCG-emulated) guest hits both tools alike, failed
# runs retried, medians, ratios and verdicts. Sourced, not run: the script
# ends with `bench_main "$@"`, which re-invokes it with --inner on
# soft-RoCE.
#
# The script sets before bench_main:
#   case_column   TSV name of the first column (what a CASE is: "size")
#   tsv_columns   array, names of the columns `record` fills
#   need_files    array, files under the tree that must be executable
#   need_cmds     assoc. array, command => hint when it is missing
# and defines the hooks:
#   make_specs                outer part: specs=(CASE:ITERS ...) from the
#                             environment; exit 2 on bad values
#   run_ours|run_theirs CASE ITERS LOG
#                             one run (start_server, timed_client,
#                             finish_server); 0 when it got its figures
#   plausible TOOL CASE ITERS the figures agree with the wall clock
#   record TOOL CASE ITERS RUN
#                             fields=(the TSV columns); progress to stderr
#   describe CASE             CASE in words, for messages
#   report TSV TARGET JSON    the table to stdout, the summary to JSON
# Hooks see dev, addr, gid, out and logs (bench_inner's locals), wall_us
# (timed_client) and the globals below.

# What the sourcing script sets (after sourcing) and the lib reads.
case_column=case
tsv_columns=()
need_files=()
declare -A need_cmds=()

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

    server_pid=
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

# The server's exit status, once the client is done with it.
finish_server() {
    local pid=$server_pid
    server_pid=
    wait "$pid"
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
