#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cqperf-plot on an open-loop sweep (no device needed): the load chart
# is drawn from the rows with an offered rate, and those rows stay out
# of the charts against the message size.  The trade-off chart (p99
# against the server's CPU %, a line per mode through its rates) is drawn
# from the rows with both figures, with each backend installed, and only
# when a mode has two rates.  Skips (77) without a backend.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/checks.sh"
plot=$here/../scripts/installed/cqperf-plot
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

# ------------------------------------------------ the trade-off chart
# trade: poll, event, adaptive and labels with : and + at three rates
# (listed out of rate order), an event row without the server's CPU and
# an adaptive row without a p99 (both left out).  single: one mode with
# one open-loop row with both figures, and one whose two rows lack the
# server's CPU: no trade-off chart.
mkdir "$tmp/trade" "$tmp/single"
python3 - "$tmp/trade/map.json" "$tmp/single/map.json" <<'PY'
import json, sys
modes = {  # mode: {rate: (server CPU %, p99 us)}
    "poll": {1000: (99.5, 40), 5000: (99.5, 40), 20000: (99.5, 40)},
    "event": {1000: (4, 900), 5000: (20, 600), 20000: (80, 300)},
    "adaptive": {1000: (3, 120), 5000: (15, 130), 20000: (60, 400)},
    "hybrid:50": {1000: (10, 300), 5000: (25, 310), 20000: (70, 5000)},
    "send+adaptive": {1000: (4, 150), 5000: (18, 160), 20000: (65, 450)},
}
def row(mode, rate, cpu, p99):
    r = {"label": mode, "bytes": 2, "iterations": 100, "lat_us": {"p50": 9}}
    if rate is not None:
        r.update(offered_rate=rate, achieved_rate=rate)
    if cpu is not None:
        r["server"] = {"cpu_pct": cpu}
    if p99 is not None:
        r["lat_us"]["p99"] = p99
    return r
def doc(path, rows):
    json.dump({"schema": "cqperf/1", "tool": "cq_event_lat",
               "role": "client", "params": {"cq_mode": "poll"},
               "results": rows}, open(path, "w"))
rows = [row("poll", None, 100, 20)]
for rate in (20000, 1000, 5000):
    rows += [row(m, rate, *pts[rate]) for m, pts in modes.items()]
rows += [row("event", 50000, None, 700), row("adaptive", 50000, 90, None)]
doc(sys.argv[1], rows)
doc(sys.argv[2], [row("poll", None, 100, 20), row("poll", 1000, 99, 40),
                  row("event", 1000, None, 900),
                  row("event", 5000, None, 600)])
PY

# spec_check DIR DESCRIPTION PYTHON-EXPR: the trade-off chart cqperf-plot
# makes of DIR, whatever the backend: t, its spec or None; lines, {mode:
# [(server CPU, p99, rate)]}; labels, {mode: [(x, y, text)]}.
spec_check() {
	check "$2" python3 - "$plot" "$1" "$3" <<'PY'
import importlib.machinery, importlib.util, sys
plot, d, expr = sys.argv[1:]
loader = importlib.machinery.SourceFileLoader("cqperf_plot", plot)
mod = importlib.util.module_from_spec(
    importlib.util.spec_from_loader("cqperf_plot", loader))
loader.exec_module(mod)
specs = mod.charts(mod.series_of(mod.load_docs(d)))
t = ([s for s in specs if s[0].endswith("-tradeoff.png")] or [None])[0]
drawn = t[3][0][1] if t else []
lines = {n: [(p[0], p[1], p[6]) for p in pts] for n, _s, pts in drawn}
labels = dict(zip(lines, mod.tradeoff_labels(drawn)))
ok = eval(expr)
if not ok:
    print("# false: %s\n# lines: %r\n# labels: %r" % (expr, lines, labels))
sys.exit(0 if ok else 1)
PY
}
spec_check "$tmp/trade" "trade-off: one line per mode, names with : and + kept" \
	'set(lines) == {"poll", "event", "adaptive", "hybrid:50", "send+adaptive"}'
spec_check "$tmp/trade" "trade-off: points in rate order, rows lacking a figure left out" \
	'all([p[2] for p in v] == [1000, 5000, 20000] for v in lines.values())'
spec_check "$tmp/trade" "trade-off: x is the server's CPU %, y the p99" \
	'lines["event"] == [(4, 900, 1000), (20, 600, 5000), (80, 300, 20000)]'
spec_check "$tmp/trade" "trade-off: points labelled 1k, 5k, 20k" \
	'[x[2] for x in labels["adaptive"]] == ["1k", "5k", "20k"]'
spec_check "$tmp/trade" "trade-off: coinciding points share a label" \
	'[x[2] for x in labels["poll"]] == ["1k-20k"]'
spec_check "$tmp/trade" "trade-off: the title says which corner is better" \
	't[0] == "cq_event_lat-tradeoff.png" and "lower left is better" in t[1]'
spec_check "$tmp/single" "no trade-off chart without a mode at two rates" 't is None'

is_png() { head -c 8 "$1" 2>/dev/null | od -An -c | grep -q 'P   N   G'; }
drawn=0
for backend in matplotlib gnuplot; do
	out=$tmp/out-$backend
	"$plot" --backend "$backend" "$tmp/trade" --out "$out" \
		>"$tmp/stdout" 2>"$tmp/stderr"
	rc=$?
	if [ "$rc" -eq 2 ] && grep -Eq "cannot import matplotlib|not on the PATH" "$tmp/stderr"; then
		skip "$backend: not installed"
		continue
	fi
	drawn=$((drawn + 1))
	check "$backend: cqperf-plot exits 0 on the trade-off rows (got $rc)" \
		test "$rc" -eq 0 || show "$tmp/stderr"
	check "$backend: no error for the rows without a figure" \
		eval '! grep -Eq "error|Traceback" "$tmp/stderr"' || show "$tmp/stderr"
	check "$backend: the trade-off chart is a PNG" is_png "$out/cq_event_lat-tradeoff.png"
	check "$backend: it is listed on stdout" grep -q "cq_event_lat-tradeoff.png" "$tmp/stdout"
	"$plot" --backend "$backend" "$tmp/single" --out "$out-single" \
		>"$tmp/stdout" 2>"$tmp/stderr"
	rc=$?
	check "$backend: a mode at one rate: exit 0 (got $rc)" test "$rc" -eq 0 ||
		show "$tmp/stderr"
	check "$backend: ... the load chart drawn" is_png "$out-single/cq_event_lat-load.png"
	check "$backend: ... and no trade-off chart" \
		test ! -e "$out-single/cq_event_lat-tradeoff.png"
done
check "the trade-off chart was drawn with a backend" test "$drawn" -gt 0

# The fan-in chart: servers' documents of a --clients sweep, a line per
# transport against K.
mkdir "$tmp/fan"
python3 - "$tmp/fan" <<'PY'
import json, os, sys
for tool, srq in (("ud_send_bw", False), ("cq_poll_bw", False),
                  ("cq_poll_bw", True)):
    for k in (1, 2, 4):
        row = {"bytes": 64, "iterations": 100, "msg_rate_mpps": 0.1 * k,
               "server": {"cpu_pct": 50, "cpu_ns_per_msg": 1000.0 * k}}
        if k > 1:
            row.update(client_count=k, fairness=0.9, slowest_mpps=0.1)
        doc = {"schema": "cqperf/1", "tool": tool, "role": "server",
               "params": {"clients": k, "srq": srq}, "results": [row],
               "server_mem": {"clients": k, "per_client": {
                   "registered_bytes": 8192.0 * (1 if tool[0] == "u" else k)
                   / k}}}
        json.dump(doc, open(os.path.join(sys.argv[1], "%s-%s-%d.json"
                                         % (tool, srq, k)), "w"))
PY
check "fan-in: a line each for UD, RC and RC+SRQ against K" python3 - "$plot" "$tmp/fan" <<'PY'
import importlib.machinery, importlib.util, sys
plot, d = sys.argv[1:]
loader = importlib.machinery.SourceFileLoader("cqperf_plot", plot)
mod = importlib.util.module_from_spec(
    importlib.util.spec_from_loader("cqperf_plot", loader))
loader.exec_module(mod)
servers = []
mod.load_docs(d, servers)
spec = mod.fanin_chart(servers)
assert spec and spec[0] == "fanin.png" and spec[2] == "fanin", spec
panels = dict(spec[3])
cpu = {n: [(p[0], p[1]) for p in pts]
       for n, _s, pts in panels["server CPU per message (ns)"]}
assert set(cpu) == {"UD", "RC", "RC+SRQ"}, cpu
assert cpu["UD"] == [(1, 1000.0), (2, 2000.0), (4, 4000.0)], cpu
fair = {n: [p[1] for p in pts] for n, _s, pts in panels["fairness (Jain's index)"]}
assert fair["RC"] == [1.0, 0.9, 0.9], fair
mem = {n: [p[1] for p in pts]
       for n, _s, pts in panels["registered per client (KiB)"]}
assert mem["UD"] == [8.0, 4.0, 2.0] and mem["RC"] == [8.0, 8.0, 8.0], mem
PY
for backend in matplotlib gnuplot; do
	"$plot" --backend "$backend" "$tmp/fan" --out "$tmp/fan-$backend" \
		>"$tmp/stdout" 2>"$tmp/stderr" || continue
	check "$backend: the fan-in chart is a PNG" is_png "$tmp/fan-$backend/fanin.png"
done
exit $((CHECKS_FAILED > 0))
