# shellcheck shell=bash
# Shared helpers of the soft-RoCE integration tests (sourced, not run).
#
# Each test script prints one line per check: "ok - what" or
# "not ok - what" (run.sh counts them), and exits 0, 1, or 77 to skip when
# there is no RDMA device.  Binaries come from $CQPERF_BIN (a build's src/
# directory); the device and server address from the soft-RoCE harness.

CQPERF_BIN=${CQPERF_BIN:?set CQPERF_BIN to the directory of the binaries}
DEV=${CQPERF_RXE_DEV:-rxe0}
ADDR=${CQPERF_SERVER_ADDR:-198.18.0.1}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cqperf-it.XXXXXX")
FAILED=0
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

ok() { echo "ok - $*"; }
not_ok() {
	echo "not ok - $*"
	FAILED=1
}
check() { # check DESCRIPTION COMMAND...: fails (for `|| show`) when it does
	local what=$1
	shift
	if "$@"; then
		ok "$what"
		return 0
	fi
	not_ok "$what"
	return 1
}
finish() { exit "$FAILED"; }

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

wait_listen() {
	local i
	for i in $(seq 1 100); do
		if ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}

stop_server() {
	[ -n "$SERVER_PID" ] || return 0
	kill "$SERVER_PID" 2>/dev/null
	wait "$SERVER_PID" 2>/dev/null
	SERVER_PID=
}

# json_check FILE PYTHON-EXPR: the JSON document in FILE (bound to d, its
# first result to r) satisfies the expression; says why when it does not.
json_check() {
	python3 - "$1" "$2" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("# invalid JSON in %s: %s" % (sys.argv[1], e))
    sys.exit(1)
res = d.get("results") or [{}]
try:
    ok = eval("(" + sys.argv[2] + ")", {"d": d, "r": res[0]})
except Exception as e:
    print("# %s raised %r" % (sys.argv[2], e))
    sys.exit(1)
if not ok:
    print("# false: %s" % sys.argv[2])
    print("# document: %s" % json.dumps(d)[:1500])
sys.exit(0 if ok else 1)
PY
}

# json_get FILE EXPR: prints the value of a Python expression over d (and r).
json_get() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=(d.get("results") or [{}])[0]; print(eval(sys.argv[2]))' "$1" "$2"
}

# show FILE...: the files' contents as comments, for a failed check.
show() {
	local f
	for f in "$@"; do
		[ -s "$f" ] && sed "s|^|# $(basename "$f"): |" "$f" | tail -n 20
	done
	return 0
}
