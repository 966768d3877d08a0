# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# Shared part of the side-by-side benchmarks (scripts/bench-*.sh): ours and
# its counterparts (perftest's, and for latency rdma-core's minimal
# ping-pong as a floor) in one soft-RoCE run, in BENCH_PAIRS pairs (a pair:
# one run of each tool, the order rotating from pair to pair so that drift
# in the noisy, TCG-emulated guest cancels), failed runs retried; then per
# pair the ratio ours/theirs, the median of those ratios, a 95 % interval
# from a paired bootstrap and a verdict ahead, parity or behind (bench_py);
# with several sizes of a mode, also a verdict over all of them (pooled).
# Sourced, not run: the script ends with `bench_main "$@"`, which
# re-invokes it with --inner on soft-RoCE, or with --report TSV makes the
# report of an earlier run's runs.tsv again, on this machine (of several
# runs pooled, when given more than once).
#
# The script calls bench_tools (which sets tools, need_files, need_cmds
# and the perftest settings to match), and bench_floor for latency, sets
# before bench_main:
#   case_column   TSV name of the first column (what a CASE is; "size"
#                 unless set)
#   tsv_columns   array, names of the columns `record` fills
#   need_files    array, files under the tree that must be executable
#   need_cmds     assoc. array, command => hint when it is missing
# and defines the hooks:
#   make_specs                outer part: specs=(CASE:ITERS ...) from the
#                             environment; exit 2 on bad values
#                             (specs_by_size, bench_iters)
#   run_TOOL CASE ITERS LOG   for each of tools (run_ours, run_theirs,
#                             run_pingpong): one run (ours_run,
#                             perftest_run, pingpong_run, or start_server,
#                             timed_client, finish_server); 0 when it got
#                             its figures
#   record TOOL CASE ITERS PAIR
#                             fields=(the TSV columns); progress to stderr
#   report TSV JSON           the table to stdout, the summary to JSON
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
# The tools a pair runs, in the order of the first pair (bench_tools,
# bench_floor); TSV names, each with its hook run_TOOL.
tools=()

# Settings the helpers and hooks below read.
# Ports: ours, perftest's default, and one for rdma-core's ping-pong (whose
# default is perftest's).
ours_port=18600
theirs_port=18515
pingpong_port=18700
# Pairs of runs: at least this many (BENCH_PAIRS), so that the interval of
# the median of the paired ratios can exclude 1 at all (bench_py's
# MIN_PAIRS is the same), and at most that many.
pairs_default=7
pairs_min=7
pairs_max=1000
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
    tools=(ours theirs)
    need_files+=("build/src/$ours_tool")
    need_cmds[$theirs_tool]="scripts/deps.sh installs perftest"
    # shellcheck disable=SC2034  # for the hooks
    case $kind in
        bw) tx_depth=128 signal_every=100 ;;
        lat) tx_depth=1 warmup=0 ;;
        *) echo "$prog: bench_tools: no kind $kind" >&2; exit 2 ;;
    esac
}

# bench_floor TOOL, after bench_tools lat: a third tool, rdma-core's
# ping-pong TOOL (ibv_rc_pingpong or ibv_ud_pingpong, pingpong_run), as
# "pingpong" in the TSV with its hook run_pingpong: the floor, the least a
# ping-pong loop costs on the device.
bench_floor() {
    floor_tool=$1
    tools+=(pingpong)
    need_cmds[$floor_tool]="scripts/deps.sh installs ibverbs-utils"
    need_cmds[ibv_devinfo]="scripts/deps.sh installs ibverbs-utils"
}

plausible() { "plausible_$kind" "$@"; }
# A CASE is SIZE, or MODE-SIZE (specs_by_mode_size).
describe() { if [[ $1 == *-* ]]; then echo "${1%-*} ${1##*-} B"; else echo "$1 B"; fi; }

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
usage() { sed -n 's/^# \{0,1\}Usage: //p' "$0" >&2; exit 2; }

attempts_max=3
run_retries= # measure's, for record
run_timeout=180
# Server and client each on a CPU of their own, for both tools alike
# (cqperfbench.py's pin: the rule and its reason, shared with the gate).
read -ra pin_server <<<"$(python3 "$here/cqperfbench.py" pin 0)"
read -ra pin_client <<<"$(python3 "$here/cqperfbench.py" pin 1)"

# ---------------------------------------------------------------------------
# Inner part: runs on soft-RoCE (in the guest), given PAIRS CASE:ITERS...
bench_inner() {
    local pairs=$1
    shift
    # shellcheck disable=SC2034  # dev, addr and gid are for the hooks
    local dev=${CQPERF_RXE_DEV:?} addr=${CQPERF_SERVER_ADDR:?} \
        gid=${CQPERF_RXE_GID_INDEX:?} out=${CQPERF_OUT:?}
    local logs=$out/logs
    mkdir -p "$logs"
    local tsv=$out/runs.tsv
    {
        printf '%s\titers\tpair\torder\ttool\tattempts' "$case_column"
        printf '\t%s' "${tsv_columns[@]}"
        printf '\n'
    } >"$tsv"

    server_pid='' releaser_pid=''
    # Never leave a server behind, whatever way we leave (a signal too).
    trap 'stop_server' EXIT
    trap 'exit 143' TERM
    trap 'exit 130' INT

    local spec case iters pair order tool failed=0 ntools=${#tools[@]} i
    for spec in "$@"; do
        case=${spec%%:*} iters=${spec#*:}
        for ((pair = 1; pair <= pairs; pair++)); do
            # The order rotates: with two tools ours-theirs, then
            # theirs-ours; with three each tool takes each place once in
            # every three pairs. Linear drift cancels over each such
            # round (within one pair it leans one way, then the other).
            for ((order = 1; order <= ntools; order++)); do
                i=$(((pair - 1 + order - 1) % ntools))
                tool=${tools[$i]}
                if measure "$tool" "$case" "$iters" "$pair"; then
                    record "$tool" "$case" "$iters" "$pair"
                else
                    failed=1
                    # As many empty fields as columns: a failed run.
                    fields=("${tsv_columns[@]/*/}")
                fi
                {
                    printf '%s\t%s\t%s\t%s\t%s\t%s' "$case" "$iters" \
                        "$pair" "$order" "$tool" "$attempts"
                    printf '\t%s' "${fields[@]}"
                    printf '\n'
                } >>"$tsv"
            done
        done
    done

    report "$tsv" "$out/summary.json"
    return "$failed"
}

stop_server() {
    stop_releaser
    [ -n "${server_pid:-}" ] || return 0
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=
}

# wait_listen PORT PID SECONDS (scripts/wait-listen.sh).
. "$(dirname "${BASH_SOURCE[0]}")/wait-listen.sh"

# start_server LOG PORT CMD...: CMD in the background on the server CPU,
# output to LOG.server; 0 once it listens on PORT.
start_server() {
    local log=$1 port=$2
    shift 2
    "${pin_server[@]}" timeout "$run_timeout" "$@" >"$log.server" 2>&1 &
    server_pid=$!
    wait_listen "$port" "$server_pid" 30
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
# A builtin read: the watcher below calls it 5 times a second.
running() {
    local stat
    read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
    stat=${stat##*) }
    [ "${stat%% *}" != Z ]
}

# For servers that may never end on their own: perftest's UD bandwidth
# server waits (for minutes) for datagrams that were lost on the way, and
# its client, figures printed, waits for the server. The watcher wakes 5
# times a second during the run, and in event mode under TCG that alone
# moved UD bandwidth by 10-20 %: give both tools of a bench the same
# watcher (perftest_run and ours_run take --release). release_server LOG
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
    local tool=$1 case=$2 iters=$3 pair=$4 log r0
    for ((attempts = 1; attempts <= attempts_max; attempts++)); do
        log=$logs/$tool-$case-pair$pair-try$attempts
        r0=$(rxe_retries)
        if "run_$tool" "$case" "$iters" "$log" &&
            plausible "$tool" "$case" "$iters"; then
            run_retries=$(rxe_retries)
            if [ -n "$r0" ] && [ -n "$run_retries" ]; then
                run_retries=$((run_retries - r0))
            else
                run_retries=
            fi
            return 0
        fi
        stop_server
        # Say why: perftest's CPU-frequency estimate ("Correlation
        # coefficient r^2 ... Can't produce a report") fails now and then
        # under TCG, which is what the retries are for.
        echo "$prog: $tool $(describe "$case") pair $pair attempt $attempts failed:" >&2
        tail -n 5 "$log.client" "$log.server" 2>/dev/null | sed 's/^/    /' >&2
    done
    attempts=$attempts_max
    return 1
}

# rxe_retries: the device's count of RC retransmissions, rxe's
# completer_retry_err (its retry timer fired and the unacknowledged sends
# went again), or nothing where the device has no such counter.
# measure() sets $run_retries, the run's share, for record.  Under TCG
# rxe retransmits all through a stream, at a rate a second that is the
# same for both tools: a longer (slower) run counts more.
rxe_retries() {
    local f=/sys/class/infiniband/$dev/ports/1/hw_counters/completer_retry_err
    [ -r "$f" ] && cat "$f"
    return 0
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

# specs_by_mode_size MIN SIZE=ITERS..., make_specs where a CASE is
# MODE-SIZE: specs_by_size's cases for each of $modes in turn (poll and
# event, or BENCH_MODES: some of them). The script sets case_column=case
# (the guest's half reads it too).
modes=(poll event)
# bench_modes: $modes from BENCH_MODES when set; exit 2 on other words.
bench_modes() {
    local mode
    [ -n "${BENCH_MODES:-}" ] || return 0
    read -ra modes <<<"$BENCH_MODES"
    for mode in "${modes[@]}"; do
        case $mode in poll | event) ;; *)
            echo "$prog: BENCH_MODES wants poll and/or event, not '$mode'" >&2
            exit 2 ;;
        esac
    done
}
specs_by_mode_size() {
    local mode i first
    bench_modes
    for mode in "${modes[@]}"; do
        first=${#specs[@]}
        specs_by_size "$@"
        for ((i = first; i < ${#specs[@]}; i++)); do
            specs[i]=$mode-${specs[i]}
        done
    done
}

# plausible_bw TOOL SIZE ITERS, for plausible: the reported bandwidth
# $mbps cannot be below bytes over the client's whole wall time. perftest
# converts CPU cycles to time with a sampled cycle rate that TCG sometimes
# gets badly wrong (it has printed 0.00 MB/s): treat that as a failed run.
# Sets $wall_mbps, the wall-clock figure, for the record.
plausible_bw() {
    local size=${2##*-} iters=$3
    wall_mbps=$(awk -v b="$size" -v n="$iters" -v us="$wall_us" \
        'BEGIN { printf "%.4f", b * n / (us / 1e6) / 1048576 }')
    # shellcheck disable=SC2154  # mbps is the hooks'
    if awk -v r="$mbps" -v w="$wall_mbps" 'BEGIN { exit !(r < 0.99 * w) }'; then
        echo "$prog: reported $mbps MB/s is below the wall-clock bound $wall_mbps" >&2
        return 1
    fi
}

# plausible_lat TOOL CASE ITERS, for plausible: the average one-way
# latency $avg (and $p50, one-way too, where the tool reports one: the
# ping-pong does not) cannot be more than the client's whole run over
# ITERS exchanges, each two ways; the cycle rate again. Sets $wall_lat,
# the wall-clock bound on the one-way average, for the record.
plausible_lat() {
    local iters=$3
    wall_lat=$(awk -v n="$iters" -v us="$wall_us" \
        'BEGIN { printf "%.3f", us / n / 2 }')
    if awk -v a="$avg" -v w="$wall_lat" -v p="${p50:-$avg}" \
        'BEGIN { exit !(a > 1.01 * w || a <= 0 || p <= 0) }'; then
        echo "$prog: reported average $avg us${p50:+ (p50 $p50 us)} is outside (0, wall-clock bound $wall_lat us]" >&2
        return 1
    fi
}

# release_opts ARGS...: a leading --release PATTERN GRACE of ours_run or
# perftest_run into $rel_pattern and $rel_grace; $rel_shift, the words
# it took.
release_opts() {
    rel_pattern='' rel_grace='' rel_shift=0
    if [ "${1:-}" = --release ]; then
        rel_pattern=$2 rel_grace=$3 rel_shift=3
    fi
}

# release_start LOG and release_finish LOG: release_server and
# finish_released_server when release_opts found --release, else nothing
# and finish_server.
release_start() {
    [ -z "$rel_pattern" ] || release_server "$1" "$rel_pattern" "$rel_grace"
}
release_finish() {
    if [ -n "$rel_pattern" ]; then
        finish_released_server "$1"
    else
        finish_server
    fi
}

# ours_run [--release PATTERN GRACE] LOG ARGS...: one run of our tool
# (bench_tools) on $ours_port, the server adopting the client's test
# settings (negotiated), the client given ARGS and writing JSON to
# LOG.client; 0 when both ended well (with --release, the server also
# within GRACE of the client's output matching PATTERN: ours must end by
# itself, so being stopped is a failure).
ours_run() {
    release_opts "$@"
    shift "$rel_shift"
    local log=$1 bin=$top/build/src/$ours_tool
    shift
    start_server "$log" "$ours_port" "$bin" -d "$dev" -x "$gid" \
        -p "$ours_port" || return 1
    release_start "$log"
    timed_client "$log" "$bin" -d "$dev" -x "$gid" -p "$ours_port" \
        "$@" --output json "$addr" || return 1
    release_finish "$log" || return 1
    # $released is set by finish_released_server only: with --release.
    if [ -n "$rel_pattern" ] && [ "$released" = 1 ]; then
        echo "$prog: $ours_tool's server had to be stopped after its client ended" >&2
        return 1
    fi
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
    release_opts "$@"
    shift "$rel_shift"
    local log=$1
    shift
    start_server "$log" "$theirs_port" "$theirs_tool" "$@" || return 1
    release_start "$log"
    timed_client "$log" "$theirs_tool" "$@" "$addr" || return 1
    release_finish "$log"
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
    python3 "$here/cqperfbench.py" perftest "$2.client" "$1" "BW average[MB/sec]"
}

# perftest_latency SIZE LOG: from a perftest latency client's LOG.client,
# the row under the header naming the columns whose first field is SIZE;
# columns found by name. Sets $p50 (t_typical, the median) and $avg; 0
# when both were found.
perftest_latency() {
    read -r p50 avg <<<"$(python3 "$here/cqperfbench.py" perftest \
        "$2.client" "$1" "t_typical[usec]" "t_avg[usec]" 2>/dev/null)" || true
    [ -n "$p50" ] && [ -n "$avg" ]
}

# pingpong_mtu: sets $active_mtu, the active MTU of port 1 of $dev in
# bytes (ibv_devinfo), which our tools and perftest use and
# ibv_rc_pingpong must be told (its default is 1024); asked once.
pingpong_mtu() {
    if [ -z "${active_mtu:-}" ]; then
        active_mtu=$(ibv_devinfo -d "$dev" -i 1 |
            sed -n 's/^[[:space:]]*active_mtu:[[:space:]]*\([0-9]*\).*/\1/p')
    fi
    [ -n "$active_mtu" ] || {
        echo "$prog: no active_mtu for $dev in ibv_devinfo's output" >&2
        return 1
    }
}

# pingpong_run LOG ITERS ARGS...: one run of rdma-core's ping-pong
# (bench_floor's tool) on $pingpong_port with device, GID index and ITERS,
# server and client also given ARGS (-s SIZE, -e, -m MTU: their flags must
# match, as nothing checks them), the client the server's address. Sets
# $avg, the one-way average in usec, and $p50 to nothing (it prints only
# an average); 0 when both ended well and the client printed its figure.
# The figure: "N iters in S seconds = X usec/iter", where an iteration is
# one send and one receive on each side (the client's ping and the
# server's pong; its bytes line counts SIZE * N * 2), so X is a round trip
# and the one-way average, like perftest's and ours, is X / 2.
pingpong_run() {
    local log=$1 iters=$2 n='' x=''
    shift 2
    local args=(-d "$dev" -g "$gid" -p "$pingpong_port" -n "$iters" "$@")
    avg='' p50=''
    # Their flags, for the record: nothing else shows them.
    echo "$floor_tool ${args[*]} [$addr]" >"$log.cmd"
    start_server "$log" "$pingpong_port" "$floor_tool" "${args[@]}" ||
        return 1
    timed_client "$log" "$floor_tool" "${args[@]}" "$addr" || return 1
    finish_server || return 1
    read -r n x <<<"$(sed -n 's/^\([0-9]*\) iters in [0-9.]* seconds = \([0-9.]*\) usec\/iter$/\1 \2/p' \
        "$log.client")" || true
    if [ "$n" != "$iters" ] || [ -z "$x" ]; then
        echo "$prog: $floor_tool printed no \"$iters iters in ... usec/iter\"" >&2
        return 1
    fi
    avg=$(awk -v x="$x" 'BEGIN { printf "%.3f", x / 2 }')
}

# The `report` hooks' Python: bench_python TSV JSON runs the script on
# stdin after `from cqperfbench import *` (scripts/cqperfbench.py: the
# statistics, shared with cqperf-regress, and summarize with its helpers).
bench_python() {
    python3 -c "import sys; sys.path.insert(0, '$here'); from cqperfbench import *
$(cat)" "$@"
}

# ---------------------------------------------------------------------------
# Outer part: check arguments and hand the inner part to soft-RoCE.

# bench_pairs: sets $pairs from BENCH_PAIRS (else its deprecated alias
# BENCH_RUNS, else pairs_default); exit 2 unless a count from pairs_min
# to pairs_max.
bench_pairs() {
    local var=BENCH_PAIRS
    pairs=${BENCH_PAIRS:-}
    if [ -z "$pairs" ] && [ -n "${BENCH_RUNS:-}" ]; then
        var=BENCH_RUNS
        pairs=$BENCH_RUNS
        echo "$prog: BENCH_RUNS is deprecated, use BENCH_PAIRS (pairs of runs)" >&2
    fi
    pairs=${pairs:-$pairs_default}
    if ! [[ $pairs =~ ^[0-9]{1,9}$ ]] ||
        [ $((10#$pairs)) -lt "$pairs_min" ] ||
        [ $((10#$pairs)) -gt "$pairs_max" ]; then
        echo "$prog: $var=$pairs: BENCH_PAIRS wants a count from $pairs_min to $pairs_max" >&2
        exit 2
    fi
    pairs=$((10#$pairs))
}

bench_main() {
    if [ "${1:-}" = --inner ]; then
        shift
        bench_inner "$@"
        exit
    fi

    local out_dir='' timeout_s='' report_tsv='' reports=()
    while [ $# -gt 0 ]; do
        case $1 in
            --out) [ $# -ge 2 ] || usage; out_dir=$2; shift 2 ;;
            --out=*) out_dir=${1#*=}; shift ;;
            --timeout) [ $# -ge 2 ] || usage; timeout_s=$2; shift 2 ;;
            --timeout=*) timeout_s=${1#*=}; shift ;;
            --report) [ $# -ge 2 ] || usage; reports+=("$2"); shift 2 ;;
            --report=*) reports+=("${1#*=}"); shift ;;
            -h|--help) usage ;;
            *) echo "$prog: unknown argument $1" >&2; usage ;;
        esac
    done

    # --report TSV: the report of an earlier run again, here and now (no
    # soft-RoCE needed), summary.json into --out DIR, else beside TSV.
    # Given more than once: those runs' pairs pooled into one report
    # (DIR/runs-pooled.tsv, pairs renamed RUN.PAIR), which wants --out.
    if [ ${#reports[@]} -gt 0 ]; then
        for report_tsv in "${reports[@]}"; do
            [ -f "$report_tsv" ] || { echo "$prog: --report: no file $report_tsv" >&2; exit 2; }
        done
        if [ ${#reports[@]} -gt 1 ] && [ -z "$out_dir" ]; then
            echo "$prog: --report given ${#reports[@]} times: pooling them wants --out DIR" >&2
            exit 2
        fi
        report_tsv=${reports[0]}
        out_dir=${out_dir:-$(dirname "$report_tsv")}
        mkdir -p "$out_dir"
        if [ ${#reports[@]} -gt 1 ]; then
            report_tsv=$out_dir/runs-pooled.tsv
            bench_python "$report_tsv" "${reports[@]}" <<<'pool(sys.argv[2:], sys.argv[1])' ||
                exit
        fi
        report "$report_tsv" "$out_dir/summary.json"
        exit
    fi

    local pairs f c
    bench_pairs
    specs=()
    make_specs
    # The whole run's deadline: every run may take a while under TCG.
    if [ -z "$timeout_s" ]; then
        timeout_s=$((1800 + ${#specs[@]} * pairs * ${#tools[@]} * 30))
    fi
    [[ $timeout_s =~ ^[0-9]+$ ]] || { echo "$prog: --timeout wants seconds" >&2; exit 2; }

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
        "$here/$prog" --inner "$pairs" "${specs[@]}" || rc=$?
    echo "$prog: results in $out_dir (summary.json, runs.tsv, logs/)" >&2
    exit "$rc"
}
