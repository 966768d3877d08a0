#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Runs every soft-RoCE integration test and prints their checks and a
# summary line "N passed, N failed, N skipped".
#   tests/integration/run.sh BIN_DIR [TEST...]
set -u
here=$(cd "$(dirname "$0")" && pwd)
export CQPERF_BIN=${1:?usage: run.sh BIN_DIR [TEST...]}
shift
tests=("$@")
if [ ${#tests[@]} -eq 0 ]; then
	for t in "$here"/*.sh; do
		case $(basename "$t") in run.sh | lib.sh) ;; *) tests+=("$t") ;; esac
	done
fi
passed=0 failed=0 skipped=0
# Timings depend on it: a slow clock source inflates every timestamp.
cs=/sys/devices/system/clocksource/clocksource0/current_clocksource
[ -r "$cs" ] && echo "# clock source: $(cat "$cs")"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cqperf-run.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	echo "# --- $name"
	start=$(date +%s)
	# Streamed, not captured: a slow guest run shows its progress.
	bash "$t" 2>&1 | tee "$tmp/out"
	rc=${PIPESTATUS[0]}
	p=$(grep -c '^ok - ' "$tmp/out")
	f=$(grep -c '^not ok - ' "$tmp/out")
	if [ "$rc" -eq 77 ]; then
		skipped=$((skipped + 1))
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $name exited $rc"
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	echo "# $name: $p passed, $f failed, rc $rc, $(($(date +%s) - start)) s"
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
