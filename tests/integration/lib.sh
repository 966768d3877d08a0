# shellcheck shell=bash
# Shared helpers of the soft-RoCE integration tests (sourced, not run).
#
# Each test script prints one line per check: "ok - what" or
# "not ok - what" (run.sh counts them), and exits 0, 1, or 77 to skip when
# there is no RDMA device.  Binaries come from $CQPERF_BIN (a build's src/
# directory); the device and server address from the soft-RoCE harness.

. "$(dirname "${BASH_SOURCE[0]}")/../checks.sh"

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

finish() { exit $((CHECKS_FAILED > 0)); }

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
