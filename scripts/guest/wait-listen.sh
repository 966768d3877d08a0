# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# wait_listen PORT [PID [SECONDS]]: wait until something listens on TCP
# PORT (ss from iproute2); 1 after SECONDS (default 10), or once PID, the
# server that should listen, has exited.  Sourced by the test scripts and
# serve.sh; the Python tools (the bench harness too) have
# cqperflib.wait_listen.
wait_listen() {
	local port=$1 pid=${2:-} tries=$((${3:-10} * 10)) i
	for ((i = 0; i < tries; i++)); do
		if ss -Hltn "sport = :$port" 2>/dev/null | grep -q .; then
			return 0
		fi
		if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
			return 1
		fi
		sleep 0.1
	done
	return 1
}
