# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# The host side shared by the two-node suites (tests/twonode/*.sh): what
# they need to boot, where the guests' files go, the boot itself, and the
# checks of which node a document came from.  Sourced after checks.sh,
# with top set (the source tree); sets bin and out.

# twonode_preflight BIN_DIR TOOL...: exit 77 (skip) when there is nothing
# to boot two guests with, 1 when a TOOL is not built in BIN_DIR.
twonode_preflight() {
	local t busybox=${CQPERF_BUSYBOX:-/bin/busybox} cache
	bin=$(cd "${1:?usage: BIN_DIR}" && pwd -P) || exit 1
	shift
	command -v qemu-system-x86_64 >/dev/null || twonode_skip "no qemu-system-x86_64"
	if [ ! -x "$busybox" ] || ldd "$busybox" >/dev/null 2>&1; then
		twonode_skip "no static busybox"
	fi
	cache=${CQPERF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cqperf}
	if ! ls "$cache"/kernel/*/.done >/dev/null 2>&1 &&
		! apt-cache show linux-image-amd64 >/dev/null 2>&1; then
		twonode_skip "no guest kernel (cached or from apt)"
	fi
	for t in "$@"; do
		[ -x "$bin/$t" ] && continue
		not_ok "$t is built in $bin"
		echo "$CHECKS_PASSED passed, $CHECKS_FAILED failed, 0 skipped"
		exit 1
	done
}

twonode_skip() {
	echo "skip - $*"
	echo "0 passed, 0 failed, 1 skipped"
	exit 77
}

# twonode_out NAME: sets out, where both guests' files go: CQPERF_2NODE_OUT
# (DIR/server, DIR/client), else a temporary directory removed at exit.
twonode_out() {
	if [ -n "${CQPERF_2NODE_OUT:-}" ]; then
		out=$CQPERF_2NODE_OUT
		rm -rf "$out/server" "$out/client"
	else
		twonode_tmp=$(mktemp -d "${TMPDIR:-/tmp}/cqperf-$1.XXXXXX")
		trap 'rm -rf "$twonode_tmp"' EXIT
		out=$twonode_tmp/out
	fi
}

# twonode_boot SELF ARGS...: both guests, "SELF --guest-server ARGS" on
# the server and "SELF --guest-client ARGS" on the client, their output
# as comments; then the check that both exited 0.
twonode_boot() {
	local self=$1 start rc
	shift
	start=$(date +%s)
	# The guests see / read-only and their own /tmp: run from the source
	# tree (a cwd under /tmp travels as a share of its own).
	(cd "${top:?}" && "$top/scripts/guest/softroce-2node.sh" \
		--timeout "${CQPERF_2NODE_TIMEOUT:-600}" --grace 90 --out "$out" -- \
		"$self" --guest-server "$@" -- "$self" --guest-client "$@") 2>&1 |
		sed 's/^/# /'
	rc=${PIPESTATUS[0]}
	echo "# two guests: $(($(date +%s) - start)) s"
	check "two-node guests: client and server commands exit 0 (got $rc)" \
		test "$rc" -eq 0
}

# own_gid ADDR HEX: a json_check expression: the document's device is
# rxe0 with ADDR's RoCE v2 GID (::ffff:ADDR, or its hex spelling HEX).
own_gid() {
	echo 'd["device"]["name"] == "rxe0" and
	 d["device"]["gid"].lower().endswith(("::ffff:'"$1"'", "'"$2"'"))'
}
