#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cqperf-plot on an open-loop sweep (no device needed): the load chart
# is drawn from the rows with an offered rate, and those rows stay out
# of the charts against the message size.  Skips (77) without a backend.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/checks.sh"
plot=$here/../scripts/cqperf-plot
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cqperf-plot.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/in"
python3 - "$tmp/in/map.json" <<'PY'
import json, sys
rows = [{"label": "poll", "bytes": 2, "iterations": 100,
         "lat_us": {"p50": 10, "p99": 20}, "server": {"cpu_pct": 100}}]
for rate in (100, 1000, 10000):
    for mode, cpu in (("poll", 100), ("event", rate / 200)):
        rows.append({"label": mode, "bytes": 2, "iterations": 100,
                     "offered_rate": rate, "achieved_rate": rate,
                     "lat_us": {"p50": 30, "p99": 60},
                     "server": {"cpu_pct": cpu}})
json.dump({"schema": "cqperf/1", "tool": "cq_event_lat", "role": "client",
           "params": {"cq_mode": "poll", "rates": "100,1000,10000"},
           "results": rows}, open(sys.argv[1], "w"))
PY
"$plot" "$tmp/in" --out "$tmp/out" >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
if [ "$rc" -eq 2 ] && grep -q "no plotting backend" "$tmp/stderr"; then
	echo "skip - no matplotlib or gnuplot"
	exit 77
fi
check "cqperf-plot exits 0 (got $rc)" test "$rc" -eq 0 || show "$tmp/stderr"
check "the load chart is a non-empty PNG" sh -c \
	"head -c 8 '$tmp/out/cq_event_lat-load.png' | od -An -c | grep -q 'P   N   G'"
check "it is listed on stdout" grep -q "cq_event_lat-load.png" "$tmp/stdout"
check "the closed-loop row still makes the size charts" test -s "$tmp/out/cq_event_lat-lat.png"
exit $((CHECKS_FAILED > 0))
