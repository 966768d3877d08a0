#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# qemu-plugins/libqcount.so in a guest booted with it: every snapshot the guest
# asks for is taken, and scripts/dev/qcount.py finds the kernel's work per
# exchange plausible and alike for ud_send_lat and perftest's ib_send_lat
# -c UD (the same verbs calls: ~18,000 instructions each here; within a
# factor of two, as the kernel's odd random-pool reseeding lands in one
# short run or another).  Short runs: the plugin slows the guest.
#   tests/qcount/run.sh BIN_DIR
# Prints "ok - ..." lines and "N passed, N failed, N skipped".
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
bin=$(cd "${1:?usage: run.sh BIN_DIR}" && pwd)
. "$top/tests/checks.sh"
plugin=$bin/../qemu-plugins/libqcount.so
out=$(mktemp -d "${TMPDIR:-/tmp}/cqperf-qcount.XXXXXX")
trap 'rm -rf "$out"' EXIT
cd "$top" || exit 1

if ! command -v ib_send_lat >/dev/null; then
	skip "no perftest here"
	echo "$CHECKS_PASSED passed, $CHECKS_FAILED failed, $CHECKS_SKIPPED skipped"
	exit 77
fi
CQPERF_FORCE_GUEST=1 CQPERF_QEMU_PLUGIN=$plugin \
	"$top/scripts/guest/softroce-run.sh" --timeout 400 --out "$out" -- \
	"$top/scripts/dev/qcount.py" run --bin "$bin" --lengths 500,4500 \
	>"$out/guest.log" 2>&1
rc=$?
check "the guest's runs end well, every snapshot answered (exit $rc)" \
	test "$rc" -eq 0 || show "$out/guest.log"
check "eight snapshots: before and after each tool's two runs" \
	test "$(grep -c ' vcpus ' "$out/qcount.log" 2>/dev/null)" -eq 8
"$top/scripts/dev/qcount.py" report --json "$out" >"$out/report.json" 2>"$out/report.err"
check "the report reads them" test -s "$out/report.json" ||
	show "$out/report.err"
# vCPU c's kernel instructions per exchange, ours or perftest's.
kins() {
	json_get "$out/report.json" \
		"int(d['per_exchange']['$1'][$2]['insns_k'])" 2>/dev/null || echo 0
}
for c in 0 1; do
	o=$(kins ours $c) p=$(kins perftest $c)
	echo "# vCPU$c kernel instructions per exchange: ours $o, perftest $p"
	check "vCPU$c: both tools' kernel work per exchange plausible (3k..100k)" \
		awk -v o="$o" -v p="$p" 'BEGIN { exit !(o > 3000 && o < 100000 && p > 3000 && p < 100000) }'
	check "vCPU$c: ours within a factor of two of perftest's (the same calls)" \
		awk -v o="$o" -v p="$p" 'BEGIN { exit !(p > 0 && o / p > 0.5 && o / p < 2) }'
done
echo "$CHECKS_PASSED passed, $CHECKS_FAILED failed, $CHECKS_SKIPPED skipped"
[ "$CHECKS_FAILED" -eq 0 ]
