#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The regression gate as users run it (scripts/cqperf-regress against the
# committed ci/baseline), then proof that it would catch a regression:
# figures planted into this very measurement must fail it.
#   tests/regress/run.sh [BIN_DIR]   (default build/src)
# Prints "ok - ..." lines and "N passed, N failed, N skipped".
set -u
top=$(cd "$(dirname "$0")/../.." && pwd) || exit 99
. "$top/tests/checks.sh"
bin=${1:-$top/build/src}
base=$top/ci/baseline
out=${CQPERF_REGRESS_OUT:-$top/results/regress}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cqperf-regress.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
summary() {
	echo "$CHECKS_PASSED passed, $CHECKS_FAILED failed, 0 skipped"
	[ "$CHECKS_FAILED" -eq 0 ]
	exit
}

if [ -z "${CQPERF_REGRESS_REUSE:-}" ]; then
	"$top/scripts/cqperf-regress" --bin-dir "$bin" --out "$out" \
		--tries "${CQPERF_REGRESS_TRIES:-3}" 2>&1 | tee "$tmp/gate.out"
	rc=${PIPESTATUS[0]}
	check "the gate passes against the committed baseline (exit $rc)" \
		test "$rc" -eq 0
fi

# The last try measured is the one the verdict came from.
cur=$out
for d in "$out"/try-*; do [ -d "$d" ] && cur=$d; done
check "a measurement to plant regressions into" \
	test -f "$cur/calibration.json" || summary

# plant NAME FILE PYTHON: a copy of the measurement with FILE's document
# edited; the comparison must fail and name FILE.  PYTHON sees the
# document as d (its rows r), the baseline's as b, and S, the factors
# --normalize scales by, so a figure is set relative to the baseline
# whatever this measurement happened to give.
plant() {
	local name=$1 file=$2 edit=$3
	rm -rf "$tmp/p"
	cp -R "$cur" "$tmp/p"
	CQP_EDIT=$edit python3 - "$tmp/p/$file" "$base/$file" "$base" "$tmp/p" <<-'EOF' || return 1
	import json, os, sys
	load = lambda p: json.load(open(p))
	d, b = load(sys.argv[1]), load(sys.argv[2])
	bc = load(os.path.join(sys.argv[3], "calibration.json"))
	cc = load(os.path.join(sys.argv[4], "calibration.json"))
	S = {"rate": bc["rate_mpps"] / cc["rate_mpps"],
	     "lat": bc["lat_p50_us"] / cc["lat_p50_us"]}
	r = d["results"]
	exec(os.environ["CQP_EDIT"])
	with open(sys.argv[1], "w") as f:
	    json.dump(d, f)
	EOF
	"$top/scripts/cqperf-compare" --normalize --tol-file "$base/tolerances" \
		"$base" "$tmp/p" >"$tmp/cmp.out" 2>&1
	local crc=$?
	check "$name: the gate fails (exit $crc)" test "$crc" -eq 1 &&
		check "$name: it names $file" grep -q "^$file .*REGRESSED" "$tmp/cmp.out" ||
		sed 's/^/# /' "$tmp/cmp.out"
}
# Each at half (or twice) the baseline's figure once normalized.
plant "bandwidth halved" cq_poll_bw-size_4096-cq-mode_poll.json '
for k in ("bw_avg_gbps", "msg_rate_mpps"):
    r[0][k] = b["results"][0][k] * 0.5 / S["rate"]'
plant "event-mode message rate halved" ud_send_bw-size_64-cq-mode_event.json '
r[0]["msg_rate_mpps"] = b["results"][0]["msg_rate_mpps"] * 0.5 / S["rate"]'
plant "latency doubled" ud_send_lat-size_64-cq-mode_poll.json '
r[0]["lat_us"]["p50"] = b["results"][0]["lat_us"]["p50"] * 2 / S["lat"]'
plant "RDMA CM connection rate halved" cm_event_stress-cm-mode_block.json '
d["summary"]["conn_per_s"] = b["summary"]["conn_per_s"] * 0.5 / S["rate"]'
summary
