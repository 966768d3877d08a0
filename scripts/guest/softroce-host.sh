#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Soft-RoCE (rdma_rxe) on the host itself, for kernels that have it.
#
# Usage: softroce-host.sh up|down|check
#   check  exit 0 if host soft-RoCE is usable (an active rxe device exists,
#          or rdma_rxe is available and we are root so `up` can create one)
#   up     idempotent: reuse an active rxe device if there is one, else
#          create a veth pair (MTU 4200, 198.18.0.1/24 on the first end) and
#          rxe0 on it; prints `export VAR=...` lines for eval:
#          CQPERF_IN_GUEST=0 CQPERF_RXE_DEV CQPERF_SERVER_ADDR CQPERF_RXE_GID_INDEX
#   down   remove what `up` created (never a reused, foreign rxe device)
#
# Same layout as scripts/guest/softroce-guest.sh uses inside its guest, except the
# veth names: the host may already have a "veth0", so they default to
# cqperf0/cqperf1 (CQPERF_HOST_VETH0 / CQPERF_HOST_VETH1 override).
set -euo pipefail

prog=${0##*/}
veth0=${CQPERF_HOST_VETH0:-cqperf0}
veth1=${CQPERF_HOST_VETH1:-cqperf1}
addr=198.18.0.1
rxe=rxe0
export PATH=$PATH:/usr/sbin:/sbin

say() { echo "$prog: $*" >&2; }
die() { say "$*"; exit 1; }

rxe_available() {
    [ -d /sys/module/rdma_rxe ] || modprobe -n -q rdma_rxe 2>/dev/null
}

# Soft-RoCE devices carry a "parent" attribute naming their netdev (rxe
# does; hardware RoCE does not), which also gives us the netdev.
rxe_netdev() { cat "/sys/class/infiniband/$1/parent" 2>/dev/null; }

port_active() {
    [ "$(cat "/sys/class/infiniband/$1/ports/1/state" 2>/dev/null)" = "4: ACTIVE" ]
}

# First global IPv4 address of a netdev.
ipv4_of() {
    ip -4 -o addr show dev "$1" scope global 2>/dev/null |
        awk '{ split($4, a, "/"); print a[1]; exit }'
}

# Index of the RoCE v2 GID ::ffff:A.B.C.D on DEV port 1.
gid_index_of() {
    local dev=$1 ip=$2 want g
    local -a o
    IFS=. read -r -a o <<< "$ip"
    want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "${o[@]}")
    for g in "/sys/class/infiniband/$dev/ports/1/gids/"*; do
        if [ "$(cat "$g" 2>/dev/null)" = "$want" ]; then echo "${g##*/}"; return 0; fi
    done
    return 1
}

# An active soft-RoCE device with an IPv4 address: "dev netdev addr".
find_usable() {
    local d dev nd a found=
    for d in /sys/class/infiniband/*; do
        [ -e "$d" ] || continue
        dev=${d##*/}
        nd=$(rxe_netdev "$dev") || continue
        if [ -z "$nd" ] || ! port_active "$dev"; then continue; fi
        a=$(ipv4_of "$nd")
        if [ -z "$a" ] || ! gid_index_of "$dev" "$a" >/dev/null; then continue; fi
        # Prefer our own device when several exist.
        if [ "$nd" = "$veth0" ]; then echo "$dev $nd $a"; return 0; fi
        found=${found:-"$dev $nd $a"}
    done
    [ -n "$found" ] && echo "$found"
}

print_env() {
    local dev=$1 a=$2 gi
    gi=$(gid_index_of "$dev" "$a") || die "no RoCE v2 GID for $a on $dev"
    printf 'export CQPERF_IN_GUEST=0\n'
    printf 'export CQPERF_RXE_DEV=%q\n' "$dev"
    printf 'export CQPERF_SERVER_ADDR=%q\n' "$a"
    printf 'export CQPERF_RXE_GID_INDEX=%q\n' "$gi"
}

cmd_check() {
    command -v ip >/dev/null || return 1
    command -v rdma >/dev/null || return 1
    rxe_available || return 1
    if find_usable >/dev/null; then return 0; fi
    # Nothing to reuse: `up` must create devices, which needs root.
    [ "$(id -u)" -eq 0 ]
}

cmd_up() {
    local found dev nd a
    if found=$(find_usable); then
        read -r dev nd a <<< "$found"
        say "reusing $dev on $nd ($a)"
        print_env "$dev" "$a"
        return 0
    fi
    [ "$(id -u)" -eq 0 ] || die "need root to create soft-RoCE devices"
    # Serialise concurrent `up`s (parallel test runs).
    local lockdir=/run/lock
    [ -d "$lockdir" ] && [ -w "$lockdir" ] || lockdir=/tmp
    exec 8>"$lockdir/cqperf-softroce.lock"
    flock 8
    [ -d /sys/module/rdma_rxe ] || modprobe rdma_rxe || die "cannot load rdma_rxe"
    if ! ip link show dev "$veth0" >/dev/null 2>&1; then
        ip link add "$veth0" mtu 4200 type veth peer name "$veth1" mtu 4200
    fi
    ip link set "$veth0" mtu 4200
    ip link set "$veth1" mtu 4200
    if ! ip -4 -o addr show dev "$veth0" | grep -q " $addr/"; then
        ip addr add "$addr/24" dev "$veth0"
    fi
    ip link set "$veth1" up
    ip link set "$veth0" up
    if [ "$(rxe_netdev "$rxe")" != "$veth0" ]; then
        [ ! -e "/sys/class/infiniband/$rxe" ] || die "$rxe exists but is not on $veth0"
        rdma link add "$rxe" type rxe netdev "$veth0"
    fi
    for _ in $(seq 100); do
        port_active "$rxe" && gid_index_of "$rxe" "$addr" >/dev/null && break
        sleep 0.1
    done
    port_active "$rxe" || die "$rxe did not become ACTIVE"
    say "$rxe up on $veth0 ($addr)"
    print_env "$rxe" "$addr"
}

cmd_down() {
    [ "$(id -u)" -eq 0 ] || die "need root"
    if [ "$(rxe_netdev "$rxe")" = "$veth0" ]; then
        rdma link delete "$rxe"
    fi
    if ip link show dev "$veth0" >/dev/null 2>&1; then
        ip link del "$veth0"     # takes the peer with it
    fi
}

case ${1:-} in
    up) cmd_up ;;
    down) cmd_down ;;
    check) cmd_check ;;
    *) sed -n 's/^# \{0,1\}Usage: //p' "$0" >&2; exit 2 ;;
esac
