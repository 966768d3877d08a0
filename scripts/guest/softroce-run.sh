#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#: Run a command on soft-RoCE: on the host when its kernel has rdma_rxe
#: (and a device can be used or made), else inside a throw-away QEMU guest
#: that shares this machine's / read-only and runs its binaries.
#:
#: Usage: softroce-run.sh [--timeout SEC] [--mem MB] [--out DIR] -- CMD [ARGS...]
#:
#:   --timeout SEC  end CMD (and the guest) after SEC seconds (1800)
#:   --mem MB       the guest's memory (the host path ignores it)
#:   --out DIR      where CMD's $CQPERF_OUT is kept afterwards
#:
#: CMD sees:
#:   CQPERF_RXE_DEV        the soft-RoCE device (rxe0): pass it as -d
#:   CQPERF_SERVER_ADDR    the address a client connects to (198.18.0.1)
#:   CQPERF_RXE_GID_INDEX  the GID index of that address (-x)
#:   CQPERF_IN_GUEST       1 in the guest, 0 on the host
#:   CQPERF_OUT            a writable folder (--out keeps it)
#: Exit status: CMD's; 124 on timeout; 125 when the guest failed; 2 for a
#: bad option.  CQPERF_FORCE_GUEST=1 skips the host path.
#: Example: scripts/guest/softroce-run.sh -- sh -c 'cq_poll_bw -d "$CQPERF_RXE_DEV" &
#:          sleep 1; cq_poll_bw -d "$CQPERF_RXE_DEV" "$CQPERF_SERVER_ADDR"'
set -euo pipefail

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
# --help: the "#:" lines above, on stdout, exit 0; a mistake: the usage
# line on stderr, exit 2.
help() { sed -n 's/^#: \{0,1\}//p' "$0"; exit 0; }
usage() { sed -n 's/^#: Usage: //p' "$0" >&2; exit 2; }

timeout_s=1800
out_dir=
mem=
. "$here/guest-args.sh"
guest_args timeout=timeout_s mem=mem out=out_dir -- "$@" || usage
[ "$GUEST_HELP" = 0 ] || help
set -- "${GUEST_REST[@]}"
guest_opts=()
[ -z "$mem" ] || guest_opts+=(--mem "$mem")
[ $# -gt 0 ] || usage
[[ $timeout_s =~ ^[0-9]+$ ]] || { echo "$prog: --timeout wants seconds" >&2; exit 2; }

run_guest() {
    [ -z "$out_dir" ] || guest_opts+=(--out "$out_dir")
    exec "$here/softroce-guest.sh" --timeout "$timeout_s" "${guest_opts[@]}" -- "$@"
}

if [ "${CQPERF_FORCE_GUEST:-0}" = 1 ] || ! "$here/softroce-host.sh" check 2>/dev/null; then
    run_guest "$@"
fi

if ! env_lines=$("$here/softroce-host.sh" up); then
    echo "$prog: host soft-RoCE setup failed; using the guest" >&2
    run_guest "$@"
fi
eval "$env_lines"

# Same contract as the guest: CQPERF_OUT is a writable scratch dir.
tmp_out=
if [ -n "$out_dir" ]; then
    mkdir -p "$out_dir"
    CQPERF_OUT=$(cd "$out_dir" && pwd)
else
    tmp_out=$(mktemp -d "${TMPDIR:-/tmp}/cqperf-out.XXXXXX")
    CQPERF_OUT=$tmp_out
fi
export CQPERF_OUT

# timeout(1) puts CMD in its own process group and kills the whole group
# (servers left in the background too); run it in the background so our
# INT/TERM trap can pass signals on to it.
tpid=
# shellcheck disable=SC2317  # invoked via trap
on_signal() {
    [ -z "$tpid" ] || kill -TERM "$tpid" 2>/dev/null || true
    [ -z "$tmp_out" ] || rm -rf "$tmp_out"
    exit "$1"
}
trap 'on_signal 130' INT
trap 'on_signal 143' TERM
timeout --kill-after=10 "$timeout_s" "$@" &
tpid=$!
set +e
wait "$tpid"
rc=$?
set -e
[ -z "$tmp_out" ] || rm -rf "$tmp_out"
if [ "$rc" = 124 ]; then
    echo "$prog: TIMEOUT after ${timeout_s}s running: $*" >&2
fi
exit "$rc"
