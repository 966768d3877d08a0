#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Install (only) the Debian packages cqperf needs to build, test and run the
# soft-RoCE guest harness. Safe to run repeatedly: installed packages are
# detected with dpkg-query, and apt-get is not touched when nothing is missing.
set -euo pipefail

build_pkgs=(gcc make autoconf automake libtool pkg-config libibverbs-dev
            librdmacm-dev python3 valgrind)
runtime_pkgs=(rdma-core ibverbs-utils rdmacm-utils perftest iproute2 kmod)
# scripts/installed/cqperf-plot draws sweep results with matplotlib.
plot_pkgs=(python3-matplotlib)
# Every JSON document the tests write is validated against
# doc/cqperf-1.schema.json (tests/schema_check.py).
schema_pkgs=(python3-jsonschema)
# scripts/dev/test-packages.sh builds the .deb (lintian checks it) and the
# .rpm from the make dist tarball.
package_pkgs=(debhelper dpkg-dev lintian rpm)
# The fuzz smoke run (tests/fuzz/smoke.sh): libFuzzer lives in
# libclang-rt-dev, only a Recommends of clang, which
# --no-install-recommends skips.
fuzz_pkgs=(clang libclang-rt-dev)
# The guest harness (scripts/guest/softroce-guest.sh) boots a distribution kernel
# under QEMU with a busybox initramfs; apt-get/dpkg-deb fetch the kernel.
# scripts/dev/lint.sh: the C formatting, the shell scripts, the Python.
lint_pkgs=(clang-format shellcheck pyflakes3)
guest_pkgs=(qemu-system-x86 busybox-static cpio)
# The launchers' two-node test (tests/twonode/launchers.sh) runs a real
# sshd and a real Slurm cluster inside the guests, which run this
# machine's binaries; their configuration lives in the test's own folder.
cluster_pkgs=(openssh-client openssh-server munge slurmctld slurmd slurm-client)

missing=()
for p in "${build_pkgs[@]}" "${runtime_pkgs[@]}" "${plot_pkgs[@]}" "${schema_pkgs[@]}" "${package_pkgs[@]}" \
    "${fuzz_pkgs[@]}" "${lint_pkgs[@]}" "${guest_pkgs[@]}" "${cluster_pkgs[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [ "$status" = "install ok installed" ] || missing+=("$p")
done

# The guest harness fetches its kernel with apt-get download, which needs
# the package lists even when every package is installed.
lists_ok=1
apt-cache show linux-image-amd64 >/dev/null 2>&1 || lists_ok=0

if [ "${#missing[@]}" -eq 0 ] && [ "$lists_ok" -eq 1 ]; then
    echo "deps.sh: all packages already installed"
    exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "deps.sh: not root and no sudo" >&2; exit 1; }
    sudo=(sudo)
fi
"${sudo[@]}" apt-get update
[ "${#missing[@]}" -gt 0 ] || exit 0
echo "deps.sh: installing: ${missing[*]}"
# The daemons' packages would start sshd, munged, slurmctld and slurmd on
# this machine: a policy-rc.d that denies every start, for the install
# only, unless the machine has one of its own (containers often do).
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# scripts/deps.sh: no service starts while it installs\nexit 101\n' |
        "${sudo[@]}" tee "$policy" >/dev/null
    "${sudo[@]}" chmod 755 "$policy"
    trap '"${sudo[@]}" rm -f "$policy"' EXIT
fi
# Recommends would pull in e.g. QEMU's GUI and firmware we never use.
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${missing[@]}"
