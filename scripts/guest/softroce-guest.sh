#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Run a command on soft-RoCE (rdma_rxe) inside a throw-away QEMU guest.
#
# Why: the build/test machines run a kernel without RDMA. The guest boots a
# Debian kernel that has rdma_rxe, shares the host's / read-only over 9p and
# chroots into it, so the command runs with the host's own binaries and
# libraries. See /work/shared/softroce-vm.md for the facts this relies on.
#
# Usage: softroce-guest.sh [--timeout SEC] [--mem MB] [--out DIR] [NODE OPTIONS] -- CMD [ARGS...]
#
# Inside the guest CMD runs as root in the host's current directory (read
# only), with HOME=/tmp (a tmpfs), CQPERF_IN_GUEST=1, CQPERF_RXE_DEV=rxe0,
# CQPERF_SERVER_ADDR=198.18.0.1, CQPERF_RXE_GID_INDEX (GID of that address),
# CQPERF_OUT (a writable dir whose files --out copies back), plus the host
# variables named in CQPERF_PASS_ENV.  Exit status: CMD's; 124 on timeout;
# 125 when the guest failed before CMD finished.
#
# Node options (two-node mode, see softroce-2node.sh): --node-addr A.B.C.D/LEN
# with --netdev-listen PORT or --netdev-connect PORT gives the guest one NIC,
# eth0 (virtio-net on a QEMU UDP socket netdev on 127.0.0.1:PORT, joined to the
# other guest's), instead of the veth pair, and puts rxe0 on it at that
# address (within 198.18.0.0/15).  --netdev-connect waits for the listening
# guest's QEMU.  --server-addr A.B.C.D sets CQPERF_SERVER_ADDR (default: the
# node's own address); CQPERF_NODE_ADDR is the node's address.
#
# Environment: CQPERF_CACHE (kernel/initramfs cache), CQPERF_VERBOSE=1
# (console log + timings on stderr), CQPERF_KVM=1 (try KVM, fall back to
# TCG), CQPERF_STREAM=0 (print output at the end instead of live),
# CQPERF_GUEST_KERNEL_PKG (pin the kernel package), CQPERF_GUEST_SMP,
# CQPERF_GUEST_MEM, CQPERF_KERNEL_ARGS (extra guest kernel arguments),
# CQPERF_QEMU_PLUGIN (a TCG plugin, e.g. build/qemu-plugins/libqcount.so, loaded
# with dir= the guest's CQPERF_OUT as seen from the host).
set -euo pipefail

prog=${0##*/}
die() { echo "$prog: $*" >&2; exit 125; }
usage() {
    sed -n 's/^# \{0,1\}Usage: //p' "$0" >&2
    exit 2
}

timeout_s=1800
mem=${CQPERF_GUEST_MEM:-2048}
out_dir=
node_addr=''
net_listen=''
net_connect=''
server_addr=''
. "$(dirname "$0")/guest-args.sh"
guest_args node-addr=node_addr netdev-listen=net_listen \
    netdev-connect=net_connect server-addr=server_addr timeout=timeout_s \
    mem=mem out=out_dir -- "$@" || usage
[ "$GUEST_HELP" = 0 ] || usage
set -- "${GUEST_REST[@]}"
[ $# -gt 0 ] || usage
[[ $timeout_s =~ ^[0-9]+$ ]] || die "--timeout wants seconds, got '$timeout_s'"
[[ $mem =~ ^[0-9]+$ ]] || die "--mem wants MB, got '$mem'"
smp=${CQPERF_GUEST_SMP:-2}
verbose=${CQPERF_VERBOSE:-0}

# Two-node mode: checked here, used by stage 2 (node.conf), cmd.sh and QEMU.
in_bench_net() { # A.B.C.D within 198.18.0.0/15
    local IFS=. o
    [[ $1 =~ ^198\.1[89]\.[0-9]{1,3}\.[0-9]{1,3}$ ]] || return 1
    for o in $1; do [ "$((10#$o))" -le 255 ] || return 1; done
}
node_args=()
if [ -n "$node_addr$net_listen$net_connect" ]; then
    [ -n "$node_addr" ] || die "--netdev-listen/--netdev-connect want --node-addr"
    if [ -n "$net_listen" ] && [ -n "$net_connect" ] ||
       [ -z "$net_listen$net_connect" ]; then
        die "--node-addr wants one of --netdev-listen PORT or --netdev-connect PORT"
    fi
    node_ip=${node_addr%/*}
    node_len=${node_addr#*/}
    if ! in_bench_net "$node_ip" || ! [[ $node_len =~ ^[0-9]{1,2}$ ]] ||
       [ "$node_len" -lt 15 ] || [ "$node_len" -gt 30 ]; then
        die "--node-addr wants A.B.C.D/LEN (LEN 15..30) within 198.18.0.0/15, got '$node_addr'"
    fi
    net_port=$net_listen$net_connect
    if ! [[ $net_port =~ ^[0-9]{1,5}$ ]] || [ "$net_port" -lt 1 ] || [ "$net_port" -gt 65535 ]; then
        die "--netdev-listen/--netdev-connect want a UDP port, got '$net_port'"
    fi
    server_addr=${server_addr:-$node_ip}
    IFS=. read -r _ o2 o3 o4 <<<"$node_ip"
    # RoCE v2 GID of the address, and a MAC of its own (QEMU gives every
    # guest the same default one).
    node_gid=$(printf '0000:0000:0000:0000:0000:ffff:c6%02x:%02x%02x' "$((10#$o2))" "$((10#$o3))" "$((10#$o4))")
    node_mac=$(printf '52:54:00:%02x:%02x:%02x' "$((10#$o2))" "$((10#$o3))" "$((10#$o4))")
    # UDP, not QEMU's TCP socket netdev: over TCP, Nagle held rxe's ACK
    # and the reply sent right after it until the peer's delayed ACK, so
    # an RC ping-pong took ~23 ms.  The listening side binds PORT, the
    # connecting side PORT+1, each sending to the other.
    [ "$net_port" -lt 65535 ] || die "--netdev-listen/--netdev-connect want a port below 65535"
    if [ -n "$net_listen" ]; then
        node_args=(-netdev "socket,id=n0,localaddr=127.0.0.1:$net_port,udp=127.0.0.1:$((net_port + 1))")
    else
        node_args=(-netdev "socket,id=n0,localaddr=127.0.0.1:$((net_port + 1)),udp=127.0.0.1:$net_port")
    fi
    node_args+=(-device "virtio-net-pci,netdev=n0,mac=$node_mac")
fi
server_addr=${server_addr:-198.18.0.1}
in_bench_net "$server_addr" || die "--server-addr wants A.B.C.D within 198.18.0.0/15, got '$server_addr'"

# The guest sees the host's / through 9p, but puts its own tmpfs over /tmp,
# /run and /var/tmp: a cwd there (a CI clone in /tmp, say) travels as a
# share of its own, mounted at the same path.  /proc /sys /dev cannot.
cwd=$(pwd -P)
work_share=()
case $cwd/ in
    /proc/*|/sys/*|/dev/*)
        die "cannot run from $cwd: the guest has its own /proc /sys /dev; cd elsewhere (e.g. the source tree)" ;;
    /tmp/*|/run/*|/var/tmp/*)
        work_share=(-virtfs "local,path=$cwd,mount_tag=work,security_model=none,readonly=on,multidevs=remap") ;;
esac

need() {
    local t
    for t in "$@"; do
        command -v "$t" >/dev/null || die "missing $t (run scripts/deps.sh)"
    done
}
need qemu-system-x86_64 flock
busybox=${CQPERF_BUSYBOX:-/bin/busybox}
# A dynamic busybox would find no libc in the initramfs.
if [ ! -x "$busybox" ] || ldd "$busybox" >/dev/null 2>&1; then
    die "$busybox is not a static busybox (install busybox-static)"
fi

now_ms() { local t=${EPOCHREALTIME/./}; echo $((10#$t / 1000)); }
t_start=$(now_ms)

# ---------------------------------------------------------------------------
# Guest init (PID 1, busybox sh). Changing this text changes the stamp and so
# rebuilds the initramfs.
read -r -d '' init_script <<'INIT' || true
#!/bin/sh
# The kernel found no /dev/console in the initramfs (we build it without
# root, so it cannot hold device nodes): mount devtmpfs first, then attach
# the console.
/bin/busybox mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
/bin/busybox --install -s /bin
export PATH=/bin
say() { echo "cqperf-init: $*"; }
R=/newroot
S=$R/run/cqperf
finish() { sync; poweroff -f; sleep 5; reboot -f; }
die() {
    say "FATAL: $*"
    [ -d "$S" ] && echo "init: $*" > "$S/guest-error"
    finish
}
mount -t proc proc /proc
mount -t sysfs sysfs /sys
# Modules in dependency order (computed on the host with modprobe
# --show-depends); optional ones may fail.
while read -r ko; do
    insmod "/lib/modules/$ko" || say "insmod $ko failed"
done < /modules.list
mkdir -p $R
o=trans=virtio,version=9p2000.L,msize=262144
mount -t 9p -o $o,ro,cache=loose host $R || die "cannot mount host / over 9p"
mount -t tmpfs -o mode=1777 tmpfs $R/tmp || die "tmpfs /tmp"
mount -t tmpfs -o mode=1777 tmpfs $R/var/tmp || die "tmpfs /var/tmp"
mount -t tmpfs -o mode=755 tmpfs $R/run || die "tmpfs /run"
mount -o bind /proc $R/proc
mount -o bind /sys $R/sys
mount -o bind /dev $R/dev
mkdir -p $R/dev/pts $R/dev/shm
mount -t devpts devpts $R/dev/pts
mount -t tmpfs -o mode=1777 tmpfs $R/dev/shm
mkdir -p $S
mount -t 9p -o $o cqperfout $S || die "cannot mount the output share"
[ -f $S/stage2.sh ] || die "no stage2.sh in the output share"
if [ -s $S/work-path ]; then
    W=$(cat $S/work-path)
    mkdir -p "$R$W"
    mount -t 9p -o $o,ro,cache=loose work "$R$W" || die "cannot mount the work tree"
fi
say "booted, uptime $(cut -d' ' -f1 /proc/uptime)"
chroot $R /bin/bash /run/cqperf/stage2.sh
say "stage2 exited $?"
finish
INIT

# Stage 2 runs inside the chroot with the host's bash and tools. It is
# written per run into the share, so it needs no initramfs rebuild.
read -r -d '' stage2_script <<'STAGE2' || true
#!/bin/bash
set -u
S=/run/cqperf
say() { local up _; read -r up _ </proc/uptime; echo "cqperf-guest: [$up] $*"; }
fail() { say "setup failed: $*"; echo "guest setup: $*" > "$S/guest-error"; exit 1; }
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
say "stage2 start"
netdev=veth0
# RoCE v2 GID of 198.18.0.1 (::ffff:c612:1); perftest etc. need its index.
want=0000:0000:0000:0000:0000:ffff:c612:0001
want_text=::ffff:198.18.0.1
if [ -s "$S/node.conf" ]; then
# Two-node mode: NODE_ADDR (A.B.C.D/LEN) and NODE_GID (its GID) go on eth0,
# the socket NIC to the other guest.
. "$S/node.conf"
ip -batch - <<IP || fail "loopback/eth0 setup"
link set lo up
link set eth0 mtu 4200
addr add $NODE_ADDR dev eth0
link set eth0 up
IP
netdev=eth0 want=$NODE_GID want_text=::ffff:${NODE_ADDR%/*}
say "eth0 up ($NODE_ADDR)"
else
# busybox ip cannot create veth pairs; the host's iproute2 can. One batch:
# each exec of a host binary costs ~0.1 s over 9p under TCG.
# Only veth0 gets an address: a second 198.18.0.0/24 address on veth1 would
# make RDMA CM resolve some peers to veth1, which has no rxe device.
ip -batch - <<'IP' || fail "loopback/veth setup"
link set lo up
link add veth0 mtu 4200 type veth peer name veth1 mtu 4200
addr add 198.18.0.1/24 dev veth0
link set veth1 up
link set veth0 up
IP
say "veth up"
fi
rdma link add rxe0 type rxe netdev $netdev || fail "rdma link add rxe0 (rdma_rxe loaded?)"
say "rxe0 added"
gid_index=
# Poll sysfs (cheap) rather than ibv_devinfo (dlopens every provider over
# 9p, slow under TCG); ibv_devinfo then confirms it once.
port=/sys/class/infiniband/rxe0/ports/1
for _ in $(seq 300); do
    if [ "$(cat $port/state 2>/dev/null)" = "4: ACTIVE" ]; then
        for g in $port/gids/*; do
            if [ "$(cat "$g" 2>/dev/null)" = "$want" ]; then gid_index=${g##*/}; break; fi
        done
        [ -n "$gid_index" ] && break
    fi
    sleep 0.1
done
[ -n "$gid_index" ] || fail "rxe0 not ACTIVE with GID $want_text after 30 s"
say "rxe0 active in sysfs"
ibv_devinfo -d rxe0 | grep -q PORT_ACTIVE || fail "ibv_devinfo -d rxe0 does not show PORT_ACTIVE"
mkdir -p "$S/out"
read -r up _ </proc/uptime
echo "$up" > "$S/started"
say "rxe0 active (gid index $gid_index), running command"
env -i PATH="$PATH" HOME=/tmp CQPERF_RXE_GID_INDEX="$gid_index" \
    /bin/bash "$S/cmd.sh" </dev/null >"$S/stdout" 2>"$S/stderr"
rc=$?
echo "$rc" > "$S/rc.tmp" && mv "$S/rc.tmp" "$S/rc"
say "command exited $rc"
STAGE2

# ---------------------------------------------------------------------------
# Kernel + initramfs cache.
cache=${CQPERF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cqperf}
mkdir -p "$cache"
# Serialise cache builds between concurrent runs.
exec 9>"$cache/.lock"
flock 9

# Load order. crc32_generic: crypto soft dependency of rdma_rxe that
# --show-depends does not list, so it goes first; it is gone on newer
# kernels, hence optional. ib_umad: only for diagnostic tools.
guest_mods=(virtio_pci 9pnet_virtio 9p veth crc32_generic rdma_rxe ib_uverbs rdma_ucm ib_umad)
optional_mods=" crc32_generic ib_umad "

kpkg=${CQPERF_GUEST_KERNEL_PKG:-}
# apt-cache takes ~1 s; remember its answer until the apt lists change.
kpkg_file=$cache/kernel-pkg
if [ -z "$kpkg" ] && [ -s "$kpkg_file" ] && [ "$kpkg_file" -nt /var/lib/apt/lists ]; then
    kpkg=$(cat "$kpkg_file")
fi
if [ -z "$kpkg" ]; then
    kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
           awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }') || true
    if [ -n "$kpkg" ]; then echo "$kpkg" > "$kpkg_file"; fi
fi
if [ -z "$kpkg" ]; then
    # No apt metadata (offline?): use whatever kernel is already cached.
    kpkg=$(find "$cache/kernel" -mindepth 2 -maxdepth 2 -name .done -printf '%h\n' 2>/dev/null |
           sort -V | tail -n1 | xargs -r basename) || true
    [ -n "$kpkg" ] || die "cannot resolve linux-image-amd64's kernel package (apt-get update?)"
fi
kdir=$cache/kernel/$kpkg
if [ ! -f "$kdir/.done" ]; then
    echo "$prog: fetching guest kernel $kpkg (once)" >&2
    need apt-get dpkg-deb depmod
    rm -rf "$kdir" "$kdir.tmp"
    mkdir -p "$kdir.tmp/dl"
    # apt-get warns when its _apt sandbox user cannot write here; harmless.
    if ! (cd "$kdir.tmp/dl" && apt-get download "$kpkg" >/dev/null 2>&1); then
        debs=(/var/cache/apt/archives/"${kpkg}"_*.deb)
        [ -f "${debs[0]}" ] || die "apt-get download $kpkg failed"
        cp "${debs[0]}" "$kdir.tmp/dl/"
    fi
    dpkg-deb -x "$kdir.tmp"/dl/*.deb "$kdir.tmp/root"
    rm -rf "$kdir.tmp/dl"
    kv=$(ls "$kdir.tmp/root/lib/modules")
    depmod -b "$kdir.tmp/root" "$kv"
    touch "$kdir.tmp/.done"
    mv "$kdir.tmp" "$kdir"
    # Drop superseded kernels (~450 MB each).
    find "$cache/kernel" -mindepth 1 -maxdepth 1 ! -name "$kpkg" -exec rm -rf {} +
fi
kroot=$kdir/root
kver=$(ls "$kroot/lib/modules")
vmlinuz=$kroot/boot/vmlinuz-$kver
[ -f "$vmlinuz" ] || die "no $vmlinuz"

# Under TCG, decompressing the bzImage takes the guest ~3.5 s. With
# CONFIG_PVH, QEMU boots the plain ELF vmlinux directly, so unpack it once
# here (find the compressed payload by its magic, try each hit).
extract_vmlinux() {
    local img=$1 dst=$2 magic off
    local -a cmd
    for fmt in xz gzip zstd; do
        case $fmt in
            xz) magic=$'\xfd''7zXZ'; cmd=(xz -dc --single-stream) ;;
            gzip) magic=$'\x1f\x8b\x08'; cmd=(gzip -dc) ;;
            zstd) magic=$'\x28\xb5\x2f\xfd'; cmd=(zstd -qdc) ;;
        esac
        command -v "${cmd[0]}" >/dev/null || continue
        # shellcheck disable=SC2013  # one offset per line, no spaces
        for off in $(LC_ALL=C grep -obUa "$magic" "$img" | cut -d: -f1); do
            tail -c +$((off + 1)) "$img" | "${cmd[@]}" > "$dst" 2>/dev/null || true
            if [ "$(head -c 4 "$dst" | od -An -tx1 | tr -d ' ')" = 7f454c46 ]; then
                return 0
            fi
        done
    done
    rm -f "$dst"
    return 1
}
kernel=$vmlinuz
if grep -qx 'CONFIG_PVH=y' "$kroot/boot/config-$kver" 2>/dev/null; then
    if [ ! -f "$kdir/vmlinux.done" ]; then
        if extract_vmlinux "$vmlinuz" "$kdir/vmlinux"; then
            touch "$kdir/vmlinux.done"
        else
            touch "$kdir/vmlinux.failed"
        fi
    fi
    [ -f "$kdir/vmlinux.done" ] && kernel=$kdir/vmlinux
fi
[ -n "${CQPERF_GUEST_BZIMAGE:-}" ] && kernel=$vmlinuz
# The guest would otherwise spend ~0.7 s measuring loops-per-jiffy; TCG's TSC
# runs at the host's rate, so compute it from the host (HZ from the config).
lpj_arg=
hz=$(sed -n 's/^CONFIG_HZ=//p' "$kroot/boot/config-$kver" 2>/dev/null || true)
mhz=$(awk -F': *' '/^cpu MHz/ { print int($2 * 1000); exit }' /proc/cpuinfo 2>/dev/null || true)
if [ -n "$hz" ] && [ -n "$mhz" ] && [ "$mhz" -gt 0 ]; then
    lpj_arg="lpj=$((mhz * 1000 / hz))"
fi

stamp=$({ printf '%s\n' "$init_script" "$kpkg" "${guest_mods[@]}"
          sha256sum < "$busybox"; } | sha256sum | cut -c1-16)
initrd=$cache/initramfs-$stamp.cpio
if [ ! -f "$initrd" ]; then
    echo "$prog: building initramfs for $kver" >&2
    need modprobe cpio
    stage=$(mktemp -d "$cache/stage.XXXXXX")
    mkdir -p "$stage"/{bin,dev,proc,sys,newroot,lib/modules}
    cp "$busybox" "$stage/bin/busybox"
    ln -s busybox "$stage/bin/sh"
    printf '%s\n' "$init_script" > "$stage/init"
    chmod 755 "$stage/init"
    declare -A seen=()
    : > "$stage/modules.list"
    for m in "${guest_mods[@]}"; do
        # -C /dev/null: ignore the host's modprobe.d (blacklists, options).
        if ! deps=$(modprobe -C /dev/null -d "$kroot" -S "$kver" --show-depends "$m" 2>/dev/null); then
            case $optional_mods in
                *" $m "*) echo "$prog: note: optional module $m not in $kver" >&2; continue ;;
                *) rm -rf "$stage"; die "module $m not found in $kver" ;;
            esac
        fi
        while read -r verb path _; do
            [ "$verb" = insmod ] || continue          # "builtin X": nothing to load
            name=${path##*/}
            [ -z "${seen[$name]:-}" ] || continue
            seen[$name]=1
            # busybox insmod wants plain .ko files.
            case $name in
                *.ko.xz) xz -dc "$path" > "$stage/lib/modules/${name%.xz}"; name=${name%.xz} ;;
                *.ko.zst) zstd -qdc "$path" > "$stage/lib/modules/${name%.zst}"; name=${name%.zst} ;;
                *.ko.gz) gzip -dc "$path" > "$stage/lib/modules/${name%.gz}"; name=${name%.gz} ;;
                *) cp "$path" "$stage/lib/modules/$name" ;;
            esac
            echo "$name" >> "$stage/modules.list"
        done <<< "$deps"
    done
    # Uncompressed: the kernel unpacks it faster under TCG than gzip.
    (cd "$stage" && find . -print0 | LC_ALL=C sort -z |
        cpio --null -o -H newc -R 0:0 --quiet) > "$initrd.tmp"
    mv "$initrd.tmp" "$initrd"
    rm -rf "$stage"
    find "$cache" -maxdepth 1 -name 'initramfs-*.cpio' ! -name "${initrd##*/}" -delete
fi
# Two-node mode: the same initramfs with the virtio-net driver appended as a
# second cpio archive (the kernel unpacks both, the later /modules.list
# replacing the first), so the single-guest initramfs stays as it is.
if [ ${#node_args[@]} -gt 0 ]; then
    net_mods=(virtio_net)
    net_initrd=$cache/netinitrd-${initrd##*/initramfs-}
    if [ ! -f "$net_initrd" ]; then
        need modprobe cpio
        stage=$(mktemp -d "$cache/stage.XXXXXX")
        mkdir -p "$stage/lib/modules"
        cpio -i --quiet --to-stdout modules.list < "$initrd" > "$stage/modules.list"
        [ -s "$stage/modules.list" ] || { rm -rf "$stage"; die "no modules.list in $initrd"; }
        for m in "${net_mods[@]}"; do
            deps=$(modprobe -C /dev/null -d "$kroot" -S "$kver" --show-depends "$m" 2>/dev/null) ||
                { rm -rf "$stage"; die "module $m not found in $kver"; }
            while read -r verb path _; do
                [ "$verb" = insmod ] || continue
                name=${path##*/}
                case $name in
                    *.ko.xz) xz -dc "$path" > "$stage/tmp.ko"; name=${name%.xz} ;;
                    *.ko.zst) zstd -qdc "$path" > "$stage/tmp.ko"; name=${name%.zst} ;;
                    *.ko.gz) gzip -dc "$path" > "$stage/tmp.ko"; name=${name%.gz} ;;
                    *) cp "$path" "$stage/tmp.ko" ;;
                esac
                if grep -qx "$name" "$stage/modules.list"; then rm -f "$stage/tmp.ko"; continue; fi
                mv "$stage/tmp.ko" "$stage/lib/modules/$name"
                echo "$name" >> "$stage/modules.list"
            done <<< "$deps"
        done
        { cat "$initrd"
          (cd "$stage" && find modules.list lib/modules -type f -print0 | LC_ALL=C sort -z |
              cpio --null -o -H newc -R 0:0 --quiet); } > "$net_initrd.tmp"
        mv "$net_initrd.tmp" "$net_initrd"
        rm -rf "$stage"
    fi
    find "$cache" -maxdepth 1 -name 'netinitrd-*.cpio' ! -name "${net_initrd##*/}" -delete
    initrd=$net_initrd
fi
exec 9>&-

# ---------------------------------------------------------------------------
# Per-run work dir: share/ is the guest's writable 9p share.
work=$(mktemp -d "${TMPDIR:-/tmp}/cqperf-guest.XXXXXX")
share=$work/share
console=$work/console.log
mkdir -p "$share"
qpid=
# shellcheck disable=SC2317  # invoked via trap
cleanup() {
    if [ -n "$qpid" ]; then stop_qemu 2>/dev/null; fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

printf '%s\n' "$stage2_script" > "$share/stage2.sh"
if [ ${#work_share[@]} -gt 0 ]; then echo "$cwd" > "$share/work-path"; fi
if [ ${#node_args[@]} -gt 0 ]; then
    printf 'NODE_ADDR=%s\nNODE_GID=%s\n' "$node_addr" "$node_gid" > "$share/node.conf"
fi
{
    echo '# generated by softroce-guest.sh'
    for v in ${CQPERF_PASS_ENV:-}; do
        [[ $v =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || die "CQPERF_PASS_ENV: bad name '$v'"
        [ -n "${!v+set}" ] || continue
        printf 'export %s=%q\n' "$v" "${!v}"
    done
    echo "export CQPERF_IN_GUEST=1 CQPERF_RXE_DEV=rxe0 CQPERF_SERVER_ADDR=$server_addr"
    if [ ${#node_args[@]} -gt 0 ]; then echo "export CQPERF_NODE_ADDR=$node_ip"; fi
    echo 'export CQPERF_OUT=/run/cqperf/out'
    printf 'cd -- %q || exit 125\n' "$cwd"
    printf 'exec'; printf ' %q' "$@"; printf '\n'
} > "$share/cmd.sh"

# tsc=reliable: under TCG the guest distrusts the TSC and falls back to the
# HPET, which turns every clock_gettime into a system call plus an emulated
# MMIO read (microseconds) and inflates whatever a benchmark times with it.
# CQPERF_GUEST_TSC_RELIABLE=0 leaves it out, to test exactly that.
tsc_arg=tsc=reliable
[ "${CQPERF_GUEST_TSC_RELIABLE:-1}" = 1 ] || tsc_arg=

# run_qemu ACCEL CPU BOOT_LIMIT_S: 0 when QEMU exited by itself, 124 on
# timeout, 126 when the guest did not reach the command within BOOT_LIMIT_S
# (0 = no limit; used to give up on KVM).
run_qemu() {
    local accel=$1 cpu=$2 boot_limit=$3 t0 now result=0
    local -a tails=()
    rm -rf "${share:?}"/{out,started,rc,rc.tmp,stdout,stderr,guest-error}
    # Created up front so tail can follow them; the guest truncates them.
    : > "$share/stdout"
    : > "$share/stderr"
    if [ -n "$net_connect" ]; then
        # Boot after the listening side's QEMU has bound its port, so the
        # first frames are not lost.
        until ss -Huln "sport = :$net_connect" 2>/dev/null | grep -q .; do
            [ $(($(now_ms) - t_run)) -lt $((timeout_s * 1000)) ] || return 124
            sleep 0.1
        done
    fi
    qemu-system-x86_64 -accel "$accel" -cpu "$cpu" -smp "$smp" -m "$mem" \
        -nographic -no-reboot -nic none \
        -vga none -kernel "$kernel" -initrd "$initrd" \
        -append "console=ttyS0 quiet loglevel=1 panic=-1 $tsc_arg $lpj_arg ${CQPERF_KERNEL_ARGS:-}" \
        -virtfs local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap \
        -virtfs "local,path=$share,mount_tag=cqperfout,security_model=none" \
        "${work_share[@]}" "${node_args[@]}" \
        ${CQPERF_QEMU_PLUGIN:+-plugin "$CQPERF_QEMU_PLUGIN,arg=dir=$share/out"} \
        </dev/null >"$console" 2>&1 &
    qpid=$!
    if [ "$stream" = 1 ]; then
        # tail --pid reads what is left once QEMU is gone, so nothing is
        # lost; fds 5/6 are the harness's real stdout/stderr.
        tail -f --pid="$qpid" -s 0.2 -c +1 "$share/stdout" >&5 2>/dev/null &
        tails+=($!)
        tail -f --pid="$qpid" -s 0.2 -c +1 "$share/stderr" >&6 2>/dev/null &
        tails+=($!)
    fi
    t0=$(now_ms)
    t_qemu=$t0
    t_started=
    while kill -0 "$qpid" 2>/dev/null; do
        now=$(now_ms)
        if [ -z "$t_started" ] && [ -f "$share/started" ]; then t_started=$now; fi
        if [ $((now - t_run)) -ge $((timeout_s * 1000)) ]; then
            result=124; break
        fi
        if [ "$boot_limit" -gt 0 ] && [ -z "$t_started" ] &&
           [ $((now - t0)) -ge $((boot_limit * 1000)) ]; then
            result=126; break
        fi
        sleep 0.1
    done
    if [ "$result" = 0 ]; then
        wait "$qpid" || true
        qpid=
    else
        stop_qemu
    fi
    if [ "${#tails[@]}" -gt 0 ]; then wait "${tails[@]}" || true; fi
    return "$result"
}
stop_qemu() {
    kill "$qpid" 2>/dev/null || true
    for _ in $(seq 20); do kill -0 "$qpid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$qpid" 2>/dev/null || true
    wait "$qpid" 2>/dev/null || true
    qpid=
}

# SeaBIOS clears the screen with escape sequences; keep them off the user's
# terminal.
console_text() { sed 's/\x1b\[[0-9;?]*[A-Za-z]//g; s/\x1bc//g; s/\r//g' "$console"; }
console_tail() {
    echo "---- guest console (last 40 lines) ----" >&2
    console_text | tail -n 40 >&2 || true
    echo "---- end of console ----" >&2
}
# Partial output is still worth seeing when the guest failed.
emit_output() {
    if [ "$stream" != 1 ]; then
        if [ -f "$share/stdout" ]; then cat "$share/stdout"; fi
        if [ -f "$share/stderr" ]; then cat "$share/stderr" >&2; fi
    fi
    if [ -n "$out_dir" ] && [ -d "$share/out" ]; then
        mkdir -p "$out_dir"
        cp -a "$share/out/." "$out_dir/"
    fi
}

# CQPERF_STREAM=0: print CMD's output only after the guest is gone (one
# block each for stdout and stderr) instead of following it live.
stream=${CQPERF_STREAM:-1}
exec 5>&1 6>&2
status=1
t_run=$(now_ms)   # --timeout counts from here, not from cache building
# KVM fails on the usual test machines (see softroce-vm.md), so it is only
# tried on request, with a boot deadline, and TCG takes over if it fails.
if [ "${CQPERF_KVM:-0}" = 1 ] && [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
    # 2>/dev/null: bash's own "Aborted" job notice when QEMU dies of KVM.
    set +e; run_qemu kvm host "${CQPERF_KVM_BOOT_LIMIT:-30}" 2>/dev/null; status=$?; set -e
    if [ "$status" = 124 ] || [ -f "$share/started" ]; then
        :   # the command ran (or time is up): keep this result
    else
        echo "$prog: KVM guest did not come up; falling back to TCG" >&2
        [ "$verbose" = 1 ] && console_tail
        status=1
    fi
fi
if [ "$status" = 1 ]; then
    set +e; run_qemu tcg max 0 2>/dev/null; status=$?; set -e
fi
t_end=$(now_ms)

if [ "$verbose" = 1 ]; then
    echo "---- guest console ----" >&2
    console_text >&2
    echo "---- end of console ----" >&2
    if [ -n "$t_started" ]; then
        echo "$prog: timing: qemu start to command $((t_started - t_qemu))ms" \
             "(guest uptime $(cat "$share/started")s), harness total $((t_end - t_start))ms" >&2
    fi
fi

if [ "$status" = 124 ]; then
    emit_output
    echo "$prog: TIMEOUT: guest killed after ${timeout_s}s running: $*" >&2
    [ "$verbose" = 1 ] || console_tail
    exit 124
fi
if [ ! -f "$share/rc" ]; then
    emit_output
    if [ -f "$share/guest-error" ]; then
        echo "$prog: guest failed: $(cat "$share/guest-error")" >&2
    else
        echo "$prog: guest stopped without the command's exit status" >&2
    fi
    [ "$verbose" = 1 ] || console_tail
    exit 125
fi
emit_output
rc=$(cat "$share/rc")
exit "$rc"
