#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Run a server command and a client command on two soft-RoCE nodes: two
# throw-away QEMU guests (softroce-guest.sh), joined by a QEMU socket network
# over UDP on two loopback ports, each with its own NIC (eth0) and its own
# rxe0 on it.
#
# Usage: softroce-2node.sh [--timeout SEC] [--mem MB] [--out DIR] [--port PORT] [--grace SEC] -- SERVER_CMD [ARGS...] -- CLIENT_CMD [ARGS...]
#
# The server guest is 198.18.1.1/24 (its QEMU binds UDP 127.0.0.1:PORT, a
# free port unless --port), the client guest 198.18.1.2/24 (its QEMU binds
# PORT+1; each sends to the other).  Both commands see what softroce-guest.sh gives (HOME,
# CQPERF_RXE_DEV=rxe0, CQPERF_RXE_GID_INDEX, CQPERF_OUT...) plus
# CQPERF_SERVER_ADDR=198.18.1.1, CQPERF_NODE_ADDR (their own address),
# CQPERF_PEER_ADDR (the other's) and CQPERF_NODE (server or client).  The
# guests boot in parallel and at different speeds: the client must retry its
# connection to the server until a deadline.
#
# The client's output streams to stdout/stderr; the server's is printed to
# stderr, prefixed "[server] ", once it is done.  --out DIR keeps each
# guest's CQPERF_OUT files in DIR/server and DIR/client, and the server's
# output in DIR/server.stdout and DIR/server.stderr.
#
# Once the client is done the server has --grace seconds (default 60) to
# end by itself, else it is stopped; a server that fails early leaves the
# client the same grace.  Exit status: the client's when it is not 0, else
# the server's (124 when it had to be stopped); 124 on timeout, 125 when a
# guest failed before its command finished (see softroce-guest.sh).
set -euo pipefail

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
usage() { sed -n 's/^# \{0,1\}Usage: //p' "$0" >&2; exit 2; }

timeout_s=1800
out_dir=''
port=''
grace=60
mem=''
. "$here/guest-args.sh"
guest_args timeout=timeout_s mem=mem out=out_dir port=port grace=grace \
    -- "$@" || usage
# SERVER_CMD follows "--" only.
[ "$GUEST_HELP" = 0 ] && [ "$GUEST_DASHED" = 1 ] || usage
set -- "${GUEST_REST[@]}"
guest_opts=()
[ -z "$mem" ] || guest_opts+=(--mem "$mem")
server_cmd=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do server_cmd+=("$1"); shift; done
[ $# -gt 0 ] || usage
shift
client_cmd=("$@")
if [ ${#server_cmd[@]} -eq 0 ] || [ ${#client_cmd[@]} -eq 0 ]; then usage; fi
[[ $timeout_s =~ ^[0-9]+$ ]] || { echo "$prog: --timeout wants seconds" >&2; exit 2; }
[[ $grace =~ ^[0-9]+$ ]] || { echo "$prog: --grace wants seconds" >&2; exit 2; }

server_ip=198.18.1.1
client_ip=198.18.1.2
# Both ports of the pair, PORT and PORT+1, must be free.
listening() { ss -Hlun "sport = :$1 or sport = :$(($1 + 1))" 2>/dev/null | grep -q .; }
if [ -z "$port" ]; then
    for _ in $(seq 50); do
        port=$((20000 + RANDOM % 30000))
        listening "$port" || break
    done
fi
if ! [[ $port =~ ^[0-9]{1,5}$ ]] || [ "$port" -lt 1 ] || [ "$port" -gt 65534 ]; then
    echo "$prog: --port wants a UDP port 1..65534" >&2
    exit 2
fi
if listening "$port"; then
    echo "$prog: UDP 127.0.0.1:$port or $((port + 1)) is already in use" >&2
    exit 125
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/cqperf-2node.XXXXXX")
spid=''
cpid=''
# shellcheck disable=SC2317  # invoked via trap
cleanup() {
    local p
    for p in $cpid $spid; do kill -TERM "$p" 2>/dev/null || true; done
    for p in $cpid $spid; do wait "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

export CQPERF_PASS_ENV="${CQPERF_PASS_ENV:-} CQPERF_NODE CQPERF_PEER_ADDR"
common=(--timeout "$timeout_s" "${guest_opts[@]}" --server-addr "$server_ip")
CQPERF_NODE=server CQPERF_PEER_ADDR=$client_ip CQPERF_STREAM=0 \
    "$here/softroce-guest.sh" "${common[@]}" --out "$work/server" \
    --node-addr "$server_ip/24" --netdev-listen "$port" -- "${server_cmd[@]}" \
    >"$work/server.stdout" 2>"$work/server.stderr" &
spid=$!
# softroce-guest.sh --netdev-connect waits for the server's QEMU to bind.
CQPERF_NODE=client CQPERF_PEER_ADDR=$server_ip \
    "$here/softroce-guest.sh" "${common[@]}" --out "$work/client" \
    --node-addr "$client_ip/24" --netdev-connect "$port" -- "${client_cmd[@]}" &
cpid=$!

now() { date +%s; }
srv_rc=''
srv_end=''
crc=''
while :; do
    if [ -z "$srv_rc" ] && ! kill -0 "$spid" 2>/dev/null; then
        set +e; wait "$spid"; srv_rc=$?; set -e
        spid=''
        srv_end=$(now)
    fi
    if ! kill -0 "$cpid" 2>/dev/null; then
        set +e; wait "$cpid"; crc=$?; set -e
        cpid=''
        break
    fi
    if [ -n "$srv_rc" ] && [ "$srv_rc" != 0 ] && [ $(($(now) - srv_end)) -ge "$grace" ]; then
        echo "$prog: the server failed (exit $srv_rc); stopping the client after ${grace}s" >&2
        kill -TERM "$cpid" 2>/dev/null || true
        set +e; wait "$cpid"; crc=$?; set -e
        cpid=''
        break
    fi
    sleep 0.2
done
if [ -z "$srv_rc" ]; then
    deadline=$(($(now) + grace))
    while kill -0 "$spid" 2>/dev/null && [ "$(now)" -lt "$deadline" ]; do sleep 0.2; done
    if kill -0 "$spid" 2>/dev/null; then
        echo "$prog: the server did not end within ${grace}s of the client; stopping it" >&2
        kill -TERM "$spid" 2>/dev/null || true
        set +e; wait "$spid"; set -e
        srv_rc=124
    else
        set +e; wait "$spid"; srv_rc=$?; set -e
    fi
    spid=''
fi

sed 's/^/[server] /' "$work/server.stdout" "$work/server.stderr" >&2 || true
if [ -n "$out_dir" ]; then
    mkdir -p "$out_dir"
    for side in server client; do
        if [ -d "$work/$side" ]; then
            mkdir -p "$out_dir/$side"
            cp -a "$work/$side/." "$out_dir/$side/"
        fi
    done
    cp "$work/server.stdout" "$work/server.stderr" "$out_dir/"
fi
if [ "$crc" != 0 ]; then
    echo "$prog: client exited $crc (server $srv_rc)" >&2
    exit "$crc"
fi
if [ "$srv_rc" != 0 ]; then
    echo "$prog: the client succeeded but the server exited $srv_rc" >&2
    exit "$srv_rc"
fi
exit 0
