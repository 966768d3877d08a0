#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cq_poll_bw -a: one row per power of two from 2 B to 8 MiB, in order,
# every row with traffic, in JSON and in the human table.
. "$(dirname "$0")/lib.sh"
require_device

serve cq_poll_bw 30

# --warmup 2: the default warms each size up with 128 sends, a GiB at
# 8 MiB, which took most of this test's minute and a half under TCG.
out=$WORK/all.json
"$CQPERF_BIN/cq_poll_bw" -d "$DEV" -p "$port" --timeout 30 -a -n 8 --warmup 2 \
	--output json "$ADDR" >"$out" 2>"$out.err"
check "-a exits 0" test $? -eq 0 || show "$out.err"
check "-a gives a row per power of two, 2 B .. 8 MiB" json_check "$out" \
	'[x["bytes"] for x in d["results"]] == [2 ** k for k in range(1, 24)]'
check "-a: every row moved data" json_check "$out" \
	'all(x["bw_avg_gbps"] > 0 and x["iterations"] == 8 and
	     x["server"]["completions"] == 8 for x in d["results"])'

"$CQPERF_BIN/cq_poll_bw" -d "$DEV" -p "$port" --timeout 30 -a -n 4 --warmup 2 \
	--cq-mode hybrid "$ADDR" >"$WORK/all.txt" 2>&1
check "-a human table: 23 size rows" \
	test "$(grep -Ec '^ *[0-9]+ +4 ' "$WORK/all.txt")" -eq 23 ||
	show "$WORK/all.txt"
fits "cq_poll_bw -a" "$WORK/all.txt"

stop_server
finish
