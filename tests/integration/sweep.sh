#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# scripts/installed/cqperf-sweep on soft-RoCE: a small grid against a --persistent
# server it starts itself, one point that fails (and the sweep going on),
# the manifest, the merged results.csv, and scripts/installed/cqperf-plot's PNGs when
# a plotting backend is installed.
. "$(dirname "$0")/lib.sh"
require_device

SCRIPTS=$(cd "$(dirname "$0")/../../scripts/installed" && pwd)
OUT=$WORK/sweep
port=$(next_port)

# 3 modes x 2 sizes, the middle mode an invalid word for --cq-mode:
# the client exits 2 with no document, the sweep goes on.
"$SCRIPTS/cqperf-sweep" --tool cq_poll_bw --bin-dir "$CQPERF_BIN" \
	--start-server --host "$ADDR" --port "$port" --out "$OUT" \
	--server-args "-d $DEV --timeout 20" \
	--client-args "-d $DEV --timeout 20 -n 200" \
	--grid cq-mode=poll,bogus,event --grid size=64,4096 \
	>"$WORK/sweep.out" 2>"$WORK/sweep.err"
rc=$?
check "sweep exits 1 because of the failing points (got $rc)" \
	test "$rc" -eq 1 || show "$WORK/sweep.out" "$WORK/sweep.err"
check "sweep prints a progress line per run and '6 runs, 2 failed'" \
	eval 'test "$(grep -c "^\[[0-9]/6\] " "$WORK/sweep.out")" -eq 6 &&
	      grep -qx "6 runs, 2 failed" "$WORK/sweep.out"' ||
	show "$WORK/sweep.out"
for mode in poll event; do
	for size in 64 4096; do
		f=$OUT/cq_poll_bw-cq-mode_$mode-size_$size.json
		check "$mode $size B: a document, no error, the point's options" \
			json_check "$f" \
			'"error" not in d and d["tool"] == "cq_poll_bw" and
			 d["params"]["cq_mode"] == "'$mode'" and
			 r["bytes"] == '$size' and r["bw_avg_gbps"] > 0' ||
			show "$OUT/sweep/cq_poll_bw-cq-mode_$mode-size_$size.err"
	done
done
check "the failing points leave no document" \
	eval '! ls "$OUT"/cq_poll_bw-cq-mode_bogus-* 2>/dev/null'
check "the failing point ran between good ones (the sweep went on)" \
	json_check "$OUT/sweep/manifest.json" \
	'[x["params"]["cq-mode"] for x in d["runs"]] ==
	 ["poll", "poll", "bogus", "bogus", "event", "event"]'
check "manifest: both failures recorded with status, exit 2 and stderr" \
	json_check "$OUT/sweep/manifest.json" \
	'd["schema"] == "cqperf-sweep/1" and d["total"] == 6 and
	 d["failed"] == 2 and
	 [x["index"] for x in d["runs"] if x["status"] == "failed"] == [3, 4]
	 and all(x["exit_status"] == 2 and "cq-mode" in x["error"] and
	         x["stderr_tail"] and x["file"] is None
	         for x in d["runs"] if x["status"] == "failed") and
	 all(x["exit_status"] == 0 and x["error"] is None and x["file"]
	     for x in d["runs"] if x["status"] == "ok")' ||
	show "$OUT/sweep/manifest.json"
check "manifest: the exact command of each run" \
	json_check "$OUT/sweep/manifest.json" \
	'all(x["command"][-4:] == ["--size=" + x["params"]["size"], "--output",
	                           "json", "'"$ADDR"'"] for x in d["runs"])'
check "commands.txt: 6 command lines" \
	test "$(wc -l <"$OUT/sweep/commands.txt")" -eq 6
check "the server was started and stopped" \
	json_check "$OUT/sweep/manifest.json" \
	'[e["event"] for e in d["server"]["events"]] == ["started", "stopped"]'
check "no server left listening" eval '! ss -Hltn "sport = :$port" | grep -q .'

python3 - "$OUT/results.csv" >"$WORK/csv.out" 2>&1 <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cols = list(rows[0].keys())
assert cols[:5] == ["file", "tool", "cq-mode", "size", "status"], cols
for c in ("bytes", "iterations", "bw_avg_gbps", "msg_rate_mpps",
          "client.cpu_pct", "server.cpu_pct", "client.wakeups",
          "client.compl_per_wakeup", "error"):
    assert c in cols, c
assert cols[-1] == "error", cols[-1]
assert len(rows) == 6, len(rows)
good = [r for r in rows if r["status"] == "ok"]
bad = [r for r in rows if r["status"] == "failed"]
assert len(good) == 4 and len(bad) == 2, (len(good), len(bad))
for r in good:
    assert r["bytes"] == r["size"] and float(r["bw_avg_gbps"]) > 0, r
    assert r["file"] == "cq_poll_bw-cq-mode_%s-size_%s.json" % (
        r["cq-mode"], r["size"]), r
for r in bad:
    assert r["bytes"] == "" and "cq-mode" in r["error"], r
PY
check "results.csv: 6 lines, grid columns, flattened row fields, errors" \
	test $? -eq 0 || show "$WORK/csv.out" "$OUT/results.csv"

# A latency sweep, each point twice (--repeat 2): lat rows for the plot's
# latency chart, drawn at the medians with min-max whiskers.
port=$(next_port)
"$SCRIPTS/cqperf-sweep" --tool cq_event_lat --bin-dir "$CQPERF_BIN" \
	--start-server --host "$ADDR" --port "$port" --out "$WORK/lat" \
	--server-args "-d $DEV --timeout 20" \
	--client-args "-d $DEV --timeout 20 -n 200" \
	--grid cq-mode=poll,event --grid size=64,1024 --repeat 2 \
	>"$WORK/lat.out" 2>&1
rc=$?
check "latency sweep --repeat 2: 8 runs, exit 0 (got $rc)" \
	eval 'test $rc -eq 0 && grep -qx "8 runs, 0 failed" "$WORK/lat.out"' ||
	show "$WORK/lat.out"
check "latency sweep: results.csv has lat_us.p50 and lat_us.p99" \
	eval 'head -1 "$WORK/lat/results.csv" | grep -q "lat_us.p50,.*lat_us.p99"'
check "--repeat 2: rounds over all points, not one point twice in a row" \
	json_check "$WORK/lat/sweep/manifest.json" \
	'[(x["repeat"], x["params"]["cq-mode"], x["params"]["size"])
	  for x in d["runs"]] ==
	 [(k, m, s) for k in (1, 2) for m in ("poll", "event")
	  for s in ("64", "1024")] and
	 all(x["file"].endswith("-rep_%d.json" % x["repeat"]) for x in d["runs"])'
python3 - "$WORK/lat/results.csv" >"$WORK/rep.out" 2>&1 <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cols = list(rows[0].keys())
assert cols[:6] == ["file", "tool", "cq-mode", "size", "repeat",
                    "status"], cols
runs = [r for r in rows if r["status"] == "ok"]
assert len(runs) == 8, len(runs)
for m in ("poll", "event"):
    for s in ("64", "1024"):
        pt = [r for r in rows if r["cq-mode"] == m and r["size"] == s]
        got = {r["repeat"]: r for r in pt}
        assert sorted(got) == ["1", "2", "max", "median", "min"], sorted(got)
        v = [float(got[k]["lat_us.p50"]) for k in ("1", "2")]
        assert float(got["median"]["lat_us.p50"]) == statistics.median(v)
        assert float(got["min"]["lat_us.p50"]) == min(v)
        assert float(got["max"]["lat_us.p50"]) == max(v)
        assert got["median"]["status"] == "summary", got["median"]
        assert got["median"]["bytes"] == s, got["median"]
PY
check "--repeat 2: results.csv keeps both measurements and each point's median, min and max" \
	test $? -eq 0 || show "$WORK/rep.out"

# Usage errors: exit 2.
"$SCRIPTS/cqperf-sweep" --tool cq_poll_bw --out "$WORK/x" --grid size \
	>/dev/null 2>&1
rc=$?
check "a malformed --grid is a usage error, exit 2 (got $rc)" test "$rc" -eq 2

# Plots, when a backend is there.
if python3 -c 'import matplotlib' 2>/dev/null ||
	/usr/bin/python3 -c 'import matplotlib' 2>/dev/null ||
	command -v gnuplot >/dev/null; then
	"$SCRIPTS/cqperf-plot" "$OUT" >"$WORK/plot.out" 2>"$WORK/plot.err"
	rc=$?
	check "cqperf-plot (bw): exit 0 (got $rc)" test "$rc" -eq 0 ||
		show "$WORK/plot.err"
	for p in cq_poll_bw-bw cq_poll_bw-cpu; do
		check "cqperf-plot: $p.png, a non-empty PNG" \
			eval 'test -s "$OUT/plots/$p.png" &&
			      head -c 8 "$OUT/plots/$p.png" | grep -q PNG'
	done
	"$SCRIPTS/cqperf-plot" "$WORK/lat" --out "$WORK/latplots" \
		>"$WORK/plot2.out" 2>"$WORK/plot2.err"
	rc=$?
	check "cqperf-plot (lat) --out: exit 0 (got $rc)" test "$rc" -eq 0 ||
		show "$WORK/plot2.err"
	for p in cq_event_lat-lat cq_event_lat-cpu; do
		check "cqperf-plot: $p.png, a non-empty PNG" \
			eval 'test -s "$WORK/latplots/$p.png" &&
			      head -c 8 "$WORK/latplots/$p.png" | grep -q PNG'
	done
else
	echo "# no matplotlib or gnuplot: cqperf-plot not tested"
fi
finish
