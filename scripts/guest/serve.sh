# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# A persistent cqperf server for scripts that run clients against it
# (sourced, not run): scripts/quickstart.sh, scripts/readme-examples.sh.
#
#   serve_start BIN PORT LOG [ARGS...]  start BIN -p PORT --persistent ARGS
#                                       in the background, output in LOG;
#                                       return once it listens, or 1 with
#                                       LOG on stderr when it did not
#   serve_stop                          interrupt it (how a persistent
#                                       server is meant to stop), then kill
#                                       it if it has not gone in 5 s
#
# The caller's EXIT trap should call serve_stop: a server must not
# outlive the script.
. "$(dirname "${BASH_SOURCE[0]}")/wait-listen.sh"

SERVE_PID=

serve_start() {
	local bin=$1 port=$2 log=$3
	shift 3
	"$bin" -p "$port" --persistent "$@" >"$log" 2>&1 &
	SERVE_PID=$!
	if ! wait_listen "$port" "$SERVE_PID" 30; then
		echo "${0##*/}: ${bin##*/} did not start listening on port $port:" >&2
		cat "$log" >&2
		serve_stop
		return 1
	fi
}

serve_stop() {
	local i
	[ -n "$SERVE_PID" ] || return 0
	kill -INT "$SERVE_PID" 2>/dev/null || true
	for ((i = 0; i < 50; i++)); do
		kill -0 "$SERVE_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$SERVE_PID" 2>/dev/null || true
	wait "$SERVE_PID" 2>/dev/null || true
	SERVE_PID=
}
