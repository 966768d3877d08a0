#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Quick start on a fresh Debian/Ubuntu machine: install the packages, build
# cqperf if needed, then run a cq_poll_bw server and client on soft-RoCE in
# each completion mode (poll, event, hybrid) and print the client's tables.
#
# Usage: quickstart.sh [--size SIZE] [--iters N]
#
# Soft-RoCE comes from scripts/guest/softroce-run.sh: the host's rdma_rxe when the
# kernel has it, else a throw-away QEMU guest. Exit status: 0 when every
# run passed, non-zero otherwise.
set -euo pipefail

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
bin=$top/build/src/cq_poll_bw
usage() { sed -n 's/^# \{0,1\}Usage: //p' "$0" >&2; exit 2; }

# ---------------------------------------------------------------------------
# Inner part, on soft-RoCE: one persistent server, one client per mode
# (--inner SIZE ITERS [MODE...]; scripts/dev/readme-examples.sh runs the first).
if [ "${1:-}" = --inner ]; then
    size=$2 iters=$3
    shift 3
    modes=("$@")
    [ "${#modes[@]}" -gt 0 ] || modes=(poll event hybrid)
    dev=${CQPERF_RXE_DEV:?} addr=${CQPERF_SERVER_ADDR:?}
    server_log=${CQPERF_OUT:?}/server.log
    port=18600

    . "$here/guest/serve.sh"
    # Stop the server however we leave; a signal must run the EXIT trap too.
    trap serve_stop EXIT
    trap 'exit 143' TERM
    trap 'exit 130' INT
    serve_start "$bin" "$port" "$server_log" -d "$dev" || exit 1

    failed=()
    for mode in "${modes[@]}"; do
        echo
        echo "### cq_poll_bw -d $dev --cq-mode $mode -s $size -n $iters $addr"
        "$bin" -d "$dev" -p "$port" --cq-mode "$mode" -s "$size" -n "$iters" \
            "$addr" || failed+=("$mode")
    done

    serve_stop
    trap - EXIT

    if [ "${#failed[@]}" -gt 0 ]; then
        echo "$prog: FAILED in mode(s): ${failed[*]}; server log:" >&2
        cat "$server_log" >&2
        exit 1
    fi
    echo
    echo "$prog: every mode ran (${modes[*]})"
    exit 0
fi

# ---------------------------------------------------------------------------
# Outer part, on the host.
size=4K
iters=5000
while [ $# -gt 0 ]; do
    case $1 in
        --size) [ $# -ge 2 ] || usage; size=$2; shift 2 ;;
        --size=*) size=${1#*=}; shift ;;
        --iters) [ $# -ge 2 ] || usage; iters=$2; shift 2 ;;
        --iters=*) iters=${1#*=}; shift ;;
        -h|--help) usage ;;
        *) echo "$prog: unknown argument $1" >&2; usage ;;
    esac
done

# Everything below works relative to the source tree (and the guest cannot
# run from /tmp, which it hides behind its own mount).
cd "$top"

"$here/deps.sh"

# configure and build/Makefile only once; make itself rebuilds whatever is
# missing or older than its sources.
if [ ! -x build/src/cq_poll_bw ] || [ ! -f build/Makefile ]; then
    [ -x configure ] || ./autogen.sh
    mkdir -p build
    [ -f build/Makefile ] || (cd build && ../configure)
fi
make -C build -j"$(nproc)" >/dev/null
[ -x "$bin" ] || { echo "$prog: build did not produce $bin" >&2; exit 1; }

"$here/guest/softroce-run.sh" --timeout 600 -- "$here/$prog" --inner "$size" "$iters"
