#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The README's sample outputs have the layout the binaries print now:
# scripts/dev/readme-examples.sh --check runs each sample's command and
# compares (figures masked, folds joined).  A change of the human report
# that forgets the README fails here; scripts/dev/readme-examples.sh --update
# (on the host) writes the new samples.
. "$(dirname "$0")/lib.sh"
require_device

top=$(cd "$(dirname "$0")/../.." && pwd)
out=$WORK/readme-check.log
start=$(date +%s)
CQPERF_BIN=$CQPERF_BIN "$top/scripts/dev/readme-examples.sh" --check >"$out" 2>&1
rc=$?
echo "# readme-examples.sh --check: $(($(date +%s) - start)) s, exit $rc"
grep -E ' ran in | took ' "$out" | sed 's/^/# /'

n=0
while read -r line; do
	case $line in
	*": sample "*": same layout")
		name=${line#*: sample }
		ok "README sample ${name%%:*}: the layout the binaries print"
		n=$((n + 1))
		;;
	*": sample "*": the README's layout differs"*)
		name=${line#*: sample }
		not_ok "README sample ${name%%:*}: the layout the binaries print"
		n=$((n + 1))
		;;
	esac
done <"$out"
check "readme-examples.sh --check compared $n samples and passed" \
	test "$rc" -eq 0 -a "$n" -gt 0 || show "$out"
finish
