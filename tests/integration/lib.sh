# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# Shared helpers of the soft-RoCE integration tests (sourced, not run).
#
# Each test script prints one line per check: "ok - what" or
# "not ok - what" (run.sh counts them), and exits 0, 1, or 77 to skip when
# there is no RDMA device.  Binaries come from $CQPERF_BIN (a build's src/
# directory); the device and server address from the soft-RoCE harness.

. "$(dirname "${BASH_SOURCE[0]}")/../checks.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/guest/wait-listen.sh"

CQPERF_BIN=${CQPERF_BIN:?set CQPERF_BIN to the directory of the binaries}
DEV=${CQPERF_RXE_DEV:-rxe0}
ADDR=${CQPERF_SERVER_ADDR:-198.18.0.1}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cqperf-it.XXXXXX")
SERVER_PID=
# Each script gets its own port range so leftovers never collide.
PORT_BASE=${PORT_BASE:-$((19000 + ($$ % 500) * 8))}
PORT_NEXT=$PORT_BASE

cleanup() {
	[ -n "$SERVER_PID" ] && kill -9 "$SERVER_PID" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT

# prefer_sanitized: this script's binaries come from the ASan+UBSan build
# when there is one ($CQPERF_ASAN_BIN): for scripts that feed servers
# hostile input or fail runs midway, where a memory error would hide.
# finish then checks that no output holds a sanitizer report.
SANITIZED=0
prefer_sanitized() {
	[ -n "${CQPERF_ASAN_BIN:-}" ] && [ -x "$CQPERF_ASAN_BIN/cq_poll_bw" ] ||
		return 0
	CQPERF_BIN=$CQPERF_ASAN_BIN
	export ASAN_OPTIONS=detect_leaks=1:exitcode=23
	export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=23
	SANITIZED=1
	echo "# binaries: the ASan+UBSan build in $CQPERF_BIN"
}

finish() {
	check_documents "$WORK"
	if [ "$SANITIZED" = 1 ]; then
		local reports
		reports=$(grep -rlE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$WORK")
		check "no sanitizer report in any output" test -z "$reports" ||
			while read -r f; do
				echo "# $f:"
				sed 's/^/# /' "$f" | head -20
			done <<<"$reports"
	fi
	exit $((CHECKS_FAILED > 0))
}

require_device() {
	if ! ibv_devinfo -d "$DEV" >/dev/null 2>&1; then
		echo "skip - no RDMA device $DEV"
		exit 77
	fi
}

next_port() {
	PORT_NEXT=$((PORT_NEXT + 1))
	echo "$PORT_NEXT"
}

# lane NAME COMMAND...: COMMAND in a background subshell of its own, for
# parts of a script that share nothing (their own server, port and files)
# and mostly wait: their checks go to $WORK/lanes/NAME until lanes_join
# prints each lane's in the order they started and counts them.  A lane
# kills its own server on the way out.
LANES=()
lane() {
	local name=$1
	shift
	mkdir -p "$WORK/lanes"
	(
		trap '[ -n "$SERVER_PID" ] && kill -9 "$SERVER_PID" 2>/dev/null' EXIT
		"$@"
	) >"$WORK/lanes/$name" 2>&1 &
	LANES+=("$name:$!")
}
lanes_join() {
	local l out s
	for l in "${LANES[@]}"; do
		wait "${l##*:}"
		out=$WORK/lanes/${l%:*}
		cat "$out"
		s=$(grep -c '^ok - # SKIP' "$out")
		CHECKS_SKIPPED=$((CHECKS_SKIPPED + s))
		CHECKS_PASSED=$((CHECKS_PASSED + $(grep -c '^ok - ' "$out") - s))
		CHECKS_FAILED=$((CHECKS_FAILED + $(grep -c '^not ok - ' "$out")))
	done
	LANES=()
}

# start_server NAME PORT ARGS...: a server in the background, output in
# $WORK/NAME.out/.err; waits until it listens.
start_server() {
	local name=$1 port=$2 tool
	shift 2
	tool=$name
	case $name in *:*) tool=${name%%:*} ;; esac
	"$CQPERF_BIN/$tool" -d "$DEV" -p "$port" "$@" \
		>"$WORK/$name.server.out" 2>"$WORK/$name.server.err" &
	SERVER_PID=$!
	wait_listen "$port"
}

# serve TOOL TIMEOUT [ARGS...]: a --persistent server of TOOL with that
# --timeout on a new $port, for the client below.
serve() {
	SERVE_TOOL=$1 SERVE_TMO=$2
	shift 2
	port=$(next_port)
	start_server "$SERVE_TOOL" "$port" --persistent --timeout "$SERVE_TMO" "$@" ||
		not_ok "$SERVE_TOOL: server listens"
}

# client OUT ARGS...: one client of the server serve started; stdout in
# OUT, stderr in OUT.err.
client() {
	local out=$1
	shift
	timeout 300 "$CQPERF_BIN/$SERVE_TOOL" -d "$DEV" -p "$port" \
		--timeout "$SERVE_TMO" "$@" "$ADDR" >"$out" 2>"$out.err"
}

# lat NAME ARGS...: a cq_event_lat client of the server on $port, JSON
# output in $WORK/NAME.json, stderr in $WORK/NAME.err.
lat() {
	local name=$1
	shift
	"$CQPERF_BIN/cq_event_lat" -d "$DEV" -p "$port" --timeout 20 \
		--output json "$@" "$ADDR" >"$WORK/$name.json" 2>"$WORK/$name.err"
}

# flat_grep ERE FILE: the human report with its folded lines joined and
# blanks squeezed to one, so a check does not depend on where a line folds.
flat_grep() {
	tr -s ' \n' '  ' <"$2" | grep -Eq -- "$1"
}

# fits NAME FILE: a human report as a terminal shows it, every line
# within 100 columns; the widest goes to the log.
fits() {
	local n
	n=$(awk '{ n = length($0); if (n > m) m = n } END { print m + 0 }' "$2")
	echo "# widest: $1 $n"
	check "$1: every line <= 100 columns (widest $n)" test "$n" -le 100 ||
		show "$2"
}

# wait_server SECS: the server's exit status once it ends by itself,
# waiting at most SECS (a client that failed before connecting leaves it
# listening): past that it is killed, and the status is 124.
wait_server() {
	local i
	for ((i = 0; i < $1 * 10; i++)); do
		kill -0 "$SERVER_PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$SERVER_PID" 2>/dev/null; then
		kill -9 "$SERVER_PID" 2>/dev/null
		wait "$SERVER_PID" 2>/dev/null
		SERVER_PID=
		return 124
	fi
	wait "$SERVER_PID"
	local rc=$?
	SERVER_PID=
	return $rc
}

stop_server() {
	[ -n "$SERVER_PID" ] || return 0
	kill "$SERVER_PID" 2>/dev/null
	wait "$SERVER_PID" 2>/dev/null
	SERVER_PID=
}

# samples_match CSV JSON: a --samples file against the report: per row
# (mode, size and open-loop rate), nearest-rank p50 and p99 and the max recomputed from
# the file equal the reported ones, and the file holds one line per
# measured iteration.
samples_match() { # samples_match CSV JSON: each row's p50, p99, max, count
	python3 - "$1" "$2" <<'PY'
import csv, json, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
doc = json.load(open(sys.argv[2]))
def rank(p, n):
    return min(max(math.ceil(p / 100 * n - 1e-9), 1), n)
ok = bool(doc["results"])
for r in doc["results"]:
    mode = r.get("label") or doc["params"]["cq_mode"]
    rate = "%.0f" % r["offered_rate"] if "offered_rate" in r else ""
    v = sorted(float(x["latency_ns"]) for x in rows
               if x["mode"] == mode and int(x["bytes"]) == r["bytes"]
               and x["rate"] == rate)
    got = {"p50": v[rank(50, len(v)) - 1] / 1e3, "p99": v[rank(99, len(v)) - 1] / 1e3,
           "max": v[-1] / 1e3}
    for k, x in got.items():
        if abs(x - r["lat_us"][k]) > 1e-6 * max(1, x):
            print("# %s %s: file %.6f, report %.6f" % (mode, k, x, r["lat_us"][k]))
            ok = False
    if len(v) != r["iterations"]:
        print("# %s: %d samples, %d iterations" % (mode, len(v), r["iterations"]))
        ok = False
    if any(int(x["completed_ns"]) - int(x["posted_ns"]) <= 0 for x in rows):
        ok = False
sys.exit(0 if ok else 1)
PY
}
