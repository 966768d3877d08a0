#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# scripts/installed/cqperf-compare against hand-written cqperf/1 documents (one run
# each of cq_poll_bw, cq_event_lat --compare-modes, ud_send_bw, ud_send_lat
# and cm_event_stress): identical runs and noise within the limits pass, a
# planted regression fails and is named, overrides take effect, a missing
# run, a failed run, bad input and bad usage are reported.  No RDMA device
# needed.
#
# Run by automake's test harness with top_srcdir and top_builddir set;
# without them, both default to the directory above this script.
# Prints "ok - ..." / "not ok - ..." a check; exit 0 all passed, 1 one
# failed, 77 no python3 (the tool needs it).
set -u

here=$(cd "$(dirname "$0")" && pwd) || exit 99
: "${top_srcdir:=$here/..}"
: "${top_builddir:=$here/..}"
top_srcdir=$(cd "$top_srcdir" && pwd) || exit 99
tool=$top_srcdir/scripts/installed/cqperf-compare

if ! command -v python3 >/dev/null 2>&1; then
	echo "SKIP: python3 is not installed (cqperf-compare needs it)"
	exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cqperf-compare.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
failed=0
passed=0

ok() { echo "ok - $1"; passed=$((passed + 1)); }
not_ok() {
	echo "not ok - $1"
	failed=$((failed + 1))
	if [ -s "$tmp/out" ]; then sed 's/^/# /' "$tmp/out"; fi
}

# run ARGS...: the tool's stdout and stderr in $tmp/out, status in $rc.
rc=0
run() {
	"$tool" "$@" >"$tmp/out" 2>&1
	rc=$?
}

# expect NAME WANT ARGS...: run, and the status must be WANT.
expect() {
	local name=$1 want=$2
	shift 2
	run "$@"
	if [ "$rc" -eq "$want" ]; then
		ok "$name (exit $rc)"
		return 0
	fi
	not_ok "$name: exit $rc, expected $want"
	return 1
}

# says NAME REGEX: the last run's output has a line matching REGEX.
says() {
	if grep -E -q -e "$2" "$tmp/out"; then
		ok "$1"
	else
		not_ok "$1: no line matches /$2/"
	fi
}

# lacks NAME REGEX: no line of the last run's output matches REGEX.
lacks() {
	if grep -E -q -e "$2" "$tmp/out"; then
		not_ok "$1: a line matches /$2/"
	else
		ok "$1"
	fi
}

# mutate FILE PYTHON: edit the document in FILE with PYTHON, which sees it
# as d (and the rows as r).
mutate() {
	CQP_EDIT=$2 python3 - "$1" <<-'EOF' || exit 99
	import json, os, sys
	p = sys.argv[1]
	with open(p) as f:
	    d = json.load(f)
	r = d["results"]
	exec(os.environ["CQP_EDIT"])
	with open(p, "w") as f:
	    json.dump(d, f, indent=2)
	EOF
}

# fresh NAME: $tmp/NAME, a copy of the baseline.
fresh() {
	rm -rf "${tmp:?}/$1"
	cp -R "$tmp/base" "$tmp/$1"
}

# ---- the baseline: realistic soft-RoCE figures ----

base=$tmp/base
mkdir -p "$base"

# $1 cpu_pct, $2 completions, $3 wakeups, $4 compl_per_wakeup
cost() {
	printf '{"seconds": 2.5, "cpu_pct": %s, "completions": %s, "polls": %s, "empty_polls": 0, "wakeups": %s, "events_acked": %s, "spin_completions": 0, "sleep_completions": %s, "compl_per_wakeup": %s, "wakeups_per_s": %s, "spin_pct": 0}' \
		"$1" "$2" "$3" "$3" "$3" "$2" "$4" "$(($3 * 2 / 5))"
}
lat() { # min p50 avg stdev p99 p99_9 p99_99 max
	printf '{"min": %s, "p50": %s, "avg": %s, "stdev": %s, "p99": %s, "p99_9": %s, "p99_99": %s, "max": %s}' "$@"
}
device='{"name": "rxe0", "port": 1, "gid_index": 1, "active_mtu": 1024, "link_layer": "Ethernet", "gid": "::ffff:198.18.0.1"}'

cat >"$base/cq_poll_bw.json" <<EOF
{"schema": "cqperf/1", "tool": "cq_poll_bw", "version": "0.1.0",
 "title": "Send BW with completion polling", "role": "client",
 "params": {"size": 65536, "all": false, "iters": 5000, "cq_mode": "poll",
  "cq_mod": {"count": 16, "usec": 10}, "tx_depth": 128, "report_gbits": false,
  "ib_dev": "rxe0", "gid_index": 1, "output": "json", "post_list": 1},
 "device": $device,
 "results": [
  {"bytes": 4096, "iterations": 5000, "bw_peak_gbps": 3.91,
   "bw_avg_gbps": 3.52, "msg_rate_mpps": 0.1074,
   "client": $(cost 99.2 5000 0 null), "server": $(cost 97.8 5000 0 null)},
  {"bytes": 65536, "iterations": 5000, "bw_peak_gbps": 7.84,
   "bw_avg_gbps": 7.13, "msg_rate_mpps": 0.0136,
   "client": $(cost 99.6 5000 0 null), "server": $(cost 98.4 5000 0 null)}
 ]}
EOF

cat >"$base/cq_event_lat.json" <<EOF
{"schema": "cqperf/1", "tool": "cq_event_lat", "version": "0.1.0",
 "title": "Send latency, completion modes compared", "role": "client",
 "params": {"size": 4096, "iters": 10000, "compare_modes": true,
  "rtt": false, "ib_dev": "rxe0", "gid_index": 1, "output": "json"},
 "device": $device,
 "results": [
  {"label": "poll", "bytes": 4096, "iterations": 10000,
   "lat_us": $(lat 11.2 14.8 15.6 3.1 27.4 61.0 180.2 412.9),
   "client": $(cost 100.0 10000 0 null), "server": $(cost 100.0 10000 0 null)},
  {"label": "event", "bytes": 4096, "iterations": 10000,
   "lat_us": $(lat 19.6 25.3 27.0 5.2 48.9 96.5 240.1 655.0),
   "client": $(cost 31.5 10000 10000 1), "server": $(cost 33.0 10000 10000 1)},
  {"label": "hybrid", "bytes": 4096, "iterations": 10000,
   "lat_us": $(lat 11.9 15.4 16.8 3.9 30.2 70.4 201.7 480.3),
   "client": $(cost 64.1 10000 2300 4.35), "server": $(cost 66.0 10000 2400 4.17)}
 ],
 "projection": {"rate_bps": null, "bytes": 4096, "batch": 64,
  "compl_per_s": null, "wakeups_per_s": null, "wakeup_cost_us": 6.1,
  "core_pct": null}}
EOF

cat >"$base/ud_send_bw.json" <<EOF
{"schema": "cqperf/1", "tool": "ud_send_bw", "version": "0.1.0",
 "title": "UD send BW", "role": "client",
 "params": {"size": 1024, "iters": 20000, "qps": 1, "rx_depth": 512,
  "ib_dev": "rxe0", "gid_index": 1, "output": "json"},
 "device": $device,
 "results": [
  {"bytes": 256, "iterations": 20000, "bw_peak_gbps": 0.61,
   "bw_avg_gbps": 0.52, "msg_rate_mpps": 0.254, "sent": 21000,
   "received": 20958, "loss_pct": 0.2, "rx_dry": 0, "wire_eff_pct": 80,
   "client": $(cost 98.9 21000 0 null),
   "server": $(cost 95.1 20958 0 null)},
  {"bytes": 1024, "iterations": 20000, "bw_peak_gbps": 1.62,
   "bw_avg_gbps": 1.41, "msg_rate_mpps": 0.172, "sent": 21000,
   "received": 20937, "loss_pct": 0.3, "rx_dry": 0, "wire_eff_pct": 94.12,
   "client": $(cost 99.1 21000 0 null),
   "server": $(cost 96.4 20937 0 null)}
 ]}
EOF

cat >"$base/ud_send_lat.json" <<EOF
{"schema": "cqperf/1", "tool": "ud_send_lat", "version": "0.1.0",
 "title": "UD send latency", "role": "client",
 "params": {"size": 64, "iters": 10000, "retry_us": 100000,
  "ib_dev": "rxe0", "gid_index": 1, "output": "json"},
 "device": $device,
 "results": [
  {"bytes": 64, "iterations": 10000, "lost_exchanges": 0,
   "lat_us": $(lat 9.8 12.6 13.3 2.4 22.5 48.8 150.0 333.3),
   "client": $(cost 100.0 20000 0 null), "server": $(cost 100.0 20000 0 null)}
 ]}
EOF

cat >"$base/cm_event_stress.json" <<EOF
{"schema": "cqperf/1", "tool": "cm_event_stress", "version": "0.1.0",
 "title": "RDMA CM event storm", "role": "client",
 "params": {"conns": 500, "rounds": 1, "output": "json"},
 "device": {"name": "(RDMA CM)", "port": 0, "gid_index": 0, "active_mtu": 0,
  "link_layer": "", "gid": ""},
 "results": [
  {"side": "client", "event": "RDMA_CM_EVENT_ADDR_RESOLVED", "count": 500,
   "rate_per_s": 1650.2, "lat_us": $(lat 41 96.5 120.8 60.2 410.7 690.2 690.2 702.1)},
  {"side": "client", "event": "RDMA_CM_EVENT_ROUTE_RESOLVED", "count": 500,
   "rate_per_s": 1650.2, "lat_us": $(lat 35 88.1 101.4 44.0 301.9 520.6 520.6 533.0)},
  {"side": "client", "event": "RDMA_CM_EVENT_ESTABLISHED", "count": 500,
   "rate_per_s": 1650.2, "lat_us": $(lat 420 1210.5 1390.0 510.3 3120.8 4400.1 4400.1 4512.6)},
  {"side": "client", "event": "RDMA_CM_EVENT_DISCONNECTED", "count": 500,
   "rate_per_s": 2210.9, "lat_us": $(lat 60 180.3 220.9 91.0 640.2 900.4 900.4 915.5)},
  {"side": "server", "event": "RDMA_CM_EVENT_CONNECT_REQUEST", "count": 500,
   "rate_per_s": 1402.7, "lat_us": $(lat 300 810.0 930.2 300.7 2010.4 2950.0 2950.0 3001.0)},
  {"side": "server", "event": "RDMA_CM_EVENT_DISCONNECTED", "count": 500,
   "rate_per_s": 1402.7, "lat_us": $(lat null null null null null null null null)}
 ],
 "summary": {"connections": 500, "conn_per_s": 1650.2,
  "teardown_per_s": 2210.9, "events_per_s": 3790.4,
  "client": {"events": 2000, "events_acked": 2000, "ids_created": 500,
   "ids_destroyed": 500, "copy_ns_per_event": 310.5,
   "ack_ns_per_event": 812.5, "addr_error": 0, "route_error": 0,
   "unreachable": 0, "connect_error": 0, "rejected_unexpected": 0,
   "other": 0, "attempts": 500, "established": 500, "rejected": 0,
   "failed": 0, "disconnected": 500, "retries": 0, "msgs_sent": 0},
  "server": {"events": 1500, "events_acked": 1500, "ids_created": 500,
   "ids_destroyed": 500, "copy_ns_per_event": 290.1,
   "ack_ns_per_event": 790.0, "addr_error": 0, "route_error": 0,
   "unreachable": 0, "connect_error": 0, "rejected_unexpected": 0,
   "other": 0, "requests": 500, "accepted": 500, "rejected": 0,
   "established": 500, "disconnected": 500, "live": 0}}}
EOF

for f in "$base"/*.json; do
	python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$f" ||
		{ echo "ERROR: test fixture $f is not JSON"; exit 99; }
done

if [ -x "$tool" ]; then
	ok "cqperf-compare is executable"
else
	not_ok "cqperf-compare is not executable: $tool"
	tool="python3 $tool"
fi

# (a) identical runs.
fresh same
expect "identical runs pass" 0 "$base" "$tmp/same"
says "identical: summary line" '^[1-9][0-9]* metrics compared, 0 regressions$'
lacks "identical: nothing regressed" 'REGRESSED|MISSING'

# (b) noise within the limits: bandwidth and rates -10 %, p50 +10 %,
# p99 +20 %, CPU +5 points (where there is room), loss +0.5 points.
fresh noise
mutate "$tmp/noise/cq_poll_bw.json" '
for x in r:
    x["bw_avg_gbps"] *= 0.9; x["msg_rate_mpps"] *= 0.9
    x["server"]["cpu_pct"] -= 3'
mutate "$tmp/noise/cq_event_lat.json" '
for x in r:
    x["lat_us"]["p50"] *= 1.1; x["lat_us"]["p99"] *= 1.2
r[1]["client"]["cpu_pct"] += 5'
mutate "$tmp/noise/ud_send_bw.json" '
for x in r:
    x["bw_avg_gbps"] *= 0.92; x["loss_pct"] += 0.5'
mutate "$tmp/noise/ud_send_lat.json" 'r[0]["lat_us"]["p99"] *= 1.45'
mutate "$tmp/noise/cm_event_stress.json" '
for x in r:
    x["rate_per_s"] *= 0.9
    if x["lat_us"]["p99"] is not None: x["lat_us"]["p99"] *= 1.2
d["summary"]["conn_per_s"] *= 0.85'
expect "noise within tolerance passes" 0 "$base" "$tmp/noise"
says "noise: moves above the floor are listed" \
	'cq_event_lat\.json +event 4096 B +lat_us\.p99 .*\+20\.0% +\+50% +ok'
says "noise: summary line" '^[1-9][0-9]* metrics compared, 0 regressions$'
mutate "$tmp/noise/cq_poll_bw.json" 'r[0]["bw_avg_gbps"] = 3.52 * 0.75'
expect "a fall of exactly the limit passes" 0 "$base" "$tmp/noise"

# Moves below the noise floor are left out of the table.
fresh quiet
mutate "$tmp/quiet/cq_poll_bw.json" 'r[0]["bw_avg_gbps"] *= 0.98'
expect "a 2 % move passes" 0 "$base" "$tmp/quiet"
lacks "a 2 % move is under the noise floor" 'bw_avg_gbps'
expect "--all lists it" 0 --all "$base" "$tmp/quiet"
says "--all: the 2 % move is listed" \
	'cq_poll_bw\.json +4096 B +bw_avg_gbps .*-2\.0% +-25% +ok'

# Improvements never fail.
fresh better
mutate "$tmp/better/cq_poll_bw.json" 'r[1]["bw_avg_gbps"] *= 1.6'
mutate "$tmp/better/cq_event_lat.json" 'r[0]["lat_us"]["p99"] *= 0.4'
expect "improvements pass" 0 "$base" "$tmp/better"
says "improvements: marked better" 'cq_poll_bw\.json +65536 B +bw_avg_gbps .*better$'

# (c) planted regression: bandwidth -40 % on one row.
fresh bw
mutate "$tmp/bw/cq_poll_bw.json" 'r[1]["bw_avg_gbps"] *= 0.6'
expect "bandwidth -40 % fails" 1 "$base" "$tmp/bw"
says "bandwidth -40 %: the table names the row and metric" \
	'^cq_poll_bw\.json +65536 B +bw_avg_gbps +7\.13 +4\.28 +-40\.0% +-25% +REGRESSED$'
lacks "bandwidth -40 %: the other row is fine" '4096 B +bw_avg_gbps'
says "bandwidth -40 %: summary line" '^[1-9][0-9]* metrics compared, 1 regressions$'
expect "bandwidth -40 %: --json fails too" 1 --json "$base" "$tmp/bw"
if python3 - "$tmp/out" <<-'EOF'; then
	import json, sys
	d = json.load(open(sys.argv[1]))
	assert d["schema"] == "cqperf-compare/1" and d["status"] == 1
	assert d["regressions"] == 1 and d["compared"] > 0
	bad = [e for e in d["entries"] if e["verdict"] == "REGRESSED"]
	assert len(bad) == 1, bad
	e = bad[0]
	assert (e["file"], e["row"], e["metric"]) == \
	    ("cq_poll_bw.json", "65536 B", "bw_avg_gbps"), e
	assert abs(e["change"] + 40) < 1e-6 and e["limit"] == 25
	assert d["limits"]["lat_us.p99"]["limit"] == 50
	EOF
	ok "--json: the regression as JSON"
else
	not_ok "--json: the regression as JSON"
fi

# (d) p99 latency +80 %.
fresh p99
mutate "$tmp/p99/cq_event_lat.json" 'r[1]["lat_us"]["p99"] *= 1.8'
expect "p99 +80 % fails" 1 "$base" "$tmp/p99"
says "p99 +80 %: the table names the row and metric" \
	'^cq_event_lat\.json +event 4096 B +lat_us\.p99 +48\.90 +88\.02 +\+80\.0% +\+50% +REGRESSED$'

# (e) overrides.
expect "--tol p99=100 allows it" 0 --tol p99=100 "$base" "$tmp/p99"
expect "--tol lat_us.p99=85% allows it" 0 --tol lat_us.p99=85% "$base" "$tmp/p99"
expect "--tol lat_us.p99=79 does not" 1 --tol lat_us.p99=79 "$base" "$tmp/p99"
printf '# looser latency for this box\nlat_us.p99 = 90\nbw 30\n' >"$tmp/tol.txt"
expect "--tol-file allows it" 0 --tol-file "$tmp/tol.txt" "$base" "$tmp/p99"
expect "--tol wins over --tol-file" 1 --tol-file "$tmp/tol.txt" --tol p99=60 \
	"$base" "$tmp/p99"
printf '{"p99": 100, "bw_avg_gbps": "45%%"}\n' >"$tmp/tol.json"
expect "--tol-file as JSON allows both" 0 --tol-file "$tmp/tol.json" \
	"$base" "$tmp/p99"
expect "--tol-file as JSON allows both (bw)" 0 --tol-file "$tmp/tol.json" \
	"$base" "$tmp/bw"
expect "--only bw_avg_gbps ignores the p99 rise" 0 --only bw_avg_gbps \
	"$base" "$tmp/p99"
expect "--only p50,p99 catches it" 1 --only p50,p99 "$base" "$tmp/p99"
expect "--tol p99=off leaves p99 out" 0 --tol p99=off "$base" "$tmp/p99"
printf 'p99 = off\n' >"$tmp/tol-off.txt"
expect "p99 = off in a --tol-file too" 0 --tol-file "$tmp/tol-off.txt" "$base" "$tmp/p99"
expect "--tol p50=off does not hide p99" 1 --tol p50=off "$base" "$tmp/p99"
expect "--tol p99@cq_event_lat*=off scopes it to that run" 0 \
	--tol 'p99@cq_event_lat*=off' "$base" "$tmp/p99"
expect "--tol p99@ud_*=off leaves cq_event_lat's p99 in" 1 \
	--tol 'p99@ud_*=off' "$base" "$tmp/p99"
expect "a scoped limit wins over the plain one" 0 --tol p99=off \
	--tol 'p99@cq_event_lat*=90' "$base" "$tmp/p99"
expect "...and applies its own value" 1 --tol p99=off \
	--tol 'p99@cq_event_lat*=70' "$base" "$tmp/p99"
printf 'p99 = 10\np99@cq_event_lat.json = off\n' >"$tmp/tol-scope.txt"
expect "scoped lines in a --tol-file" 0 --tol-file "$tmp/tol-scope.txt" "$base" "$tmp/p99"
expect "stricter --tol bw=5 fails on noise" 1 --tol bw=5 "$base" "$tmp/noise"

# Other metrics: CPU points, loss points, RDMA CM rates.
fresh cpu
mutate "$tmp/cpu/cq_event_lat.json" 'r[1]["server"]["cpu_pct"] += 20'
expect "server CPU +20 points fails" 1 "$base" "$tmp/cpu"
says "CPU: named" 'event 4096 B +server\.cpu_pct +33\.00 +53\.00 +\+20\.00pt +\+15pt +REGRESSED'
expect "--tol cpu_pct=25 allows it" 0 --tol cpu_pct=25 "$base" "$tmp/cpu"
fresh loss
mutate "$tmp/loss/ud_send_bw.json" 'r[0]["loss_pct"] = 2.5'
expect "UD loss +2.3 points fails" 1 "$base" "$tmp/loss"
says "loss: named" '^ud_send_bw\.json +256 B +loss_pct .*REGRESSED$'
fresh cm
mutate "$tmp/cm/cm_event_stress.json" '
d["summary"]["conn_per_s"] *= 0.5
r[2]["rate_per_s"] *= 0.5'
expect "RDMA CM rates halved fail" 1 "$base" "$tmp/cm"
says "cm: summary conn_per_s named" '^cm_event_stress\.json +summary +conn_per_s .*REGRESSED$'
says "cm: event row named" \
	'^cm_event_stress\.json +client RDMA_CM_EVENT_ESTABLISHED +rate_per_s .*REGRESSED$'
says "cm: two regressions" ', 2 regressions$'

# (f) a run, a row or a figure missing from current.
fresh miss
rm "$tmp/miss/ud_send_bw.json"
expect "missing run fails" 1 "$base" "$tmp/miss"
says "missing run: named" '^ud_send_bw\.json +- +\(run\) .*MISSING$'
fresh missrow
mutate "$tmp/missrow/cq_event_lat.json" 'del r[2]'
expect "missing row fails" 1 "$base" "$tmp/missrow"
says "missing row: named" '^cq_event_lat\.json +hybrid 4096 B +\(row\) .*MISSING$'
fresh missfig
mutate "$tmp/missfig/cq_poll_bw.json" 'r[0]["bw_avg_gbps"] = None'
expect "a figure gone null fails" 1 "$base" "$tmp/missfig"
says "figure gone null: named" '^cq_poll_bw\.json +4096 B +bw_avg_gbps +3\.52 +- .*MISSING$'
fresh extra
cp "$base/cq_poll_bw.json" "$tmp/extra/new_run.json"
expect "a run only in current is noted, passes" 0 "$base" "$tmp/extra"
says "extra run: noted" 'note: runs only in current, not compared: new_run\.json'

# (g) a failed run (a document with "error").
fresh err
mutate "$tmp/err/ud_send_lat.json" '
d["error"] = "peer timed out after 5 s"
d["results"] = []'
run "$base" "$tmp/err"
if [ "$rc" -ne 0 ]; then ok "failed run: non-zero (exit $rc)"; else not_ok "failed run: exit 0"; fi
says "failed run: reported with its error" \
	'error: current .*ud_send_lat\.json: the run failed: peer timed out after 5 s'
expect "failed run: exit 2" 2 "$base" "$tmp/err"
says "failed run: in the table" '^ud_send_lat\.json +- +\(run\) .*ERROR$'
expect "failed run in the baseline: exit 2" 2 "$tmp/err" "$base"

# Unusable input.
fresh schema
mutate "$tmp/schema/cq_poll_bw.json" 'd["schema"] = "cqperf/2"'
expect "schema mismatch: exit 2" 2 "$base" "$tmp/schema"
says "schema mismatch: reported" 'cq_poll_bw\.json: schema "cqperf/2", expected "cqperf/1"'
fresh garbage
echo '{"schema": "cqperf/1", "tool": ' >"$tmp/garbage/cq_poll_bw.json"
expect "truncated JSON: exit 2" 2 "$base" "$tmp/garbage"
says "truncated JSON: reported" 'cq_poll_bw\.json: not JSON'
fresh tool
mutate "$tmp/tool/cq_poll_bw.json" 'd["tool"] = "ud_send_bw"'
expect "tool differs: exit 2" 2 "$base" "$tmp/tool"
mkdir -p "$tmp/empty"
expect "empty baseline: exit 2" 2 "$tmp/empty" "$base"

# Two files.
expect "two files, identical" 0 "$base/cq_poll_bw.json" "$base/cq_poll_bw.json"
expect "two files, regressed" 1 "$base/cq_poll_bw.json" "$tmp/bw/cq_poll_bw.json"

# (h) bad usage.
# (h) --normalize: a machine half as fast halves rates and doubles
# latencies; the calibration (perftest alongside) cancels that out, and a
# real regression still shows through it.
calib() { # DIR RATE_MPPS LAT_P50_US
	printf '{"schema": "cqperf-calibration/1", "rate_mpps": %s, "lat_p50_us": %s}\n' \
		"$2" "$3" >"$1/calibration.json"
}
calib "$base" 0.20 20.0
fresh slow
calib "$tmp/slow" 0.10 40.0
mutate "$tmp/slow/cq_poll_bw.json" '
for x in r:
    x["bw_avg_gbps"] *= 0.5; x["msg_rate_mpps"] *= 0.5'
mutate "$tmp/slow/cq_event_lat.json" '
for x in r:
    x["lat_us"]["p50"] *= 2; x["lat_us"]["p99"] *= 2'
mutate "$tmp/slow/cm_event_stress.json" '
d["summary"]["conn_per_s"] *= 0.5
for x in r:
    x["rate_per_s"] *= 0.5'
expect "a slower machine fails without --normalize" 1 "$base" "$tmp/slow"
expect "a slower machine passes with --normalize" 0 --normalize "$base" "$tmp/slow"
says "--normalize: the factors are shown" 'normalized .*rates x2\.000, latencies x0\.500'
lacks "--normalize: calibration.json is not a run" 'calibration\.json.*MISSING|cqperf-compare: error'
run --normalize --json "$base" "$tmp/slow"
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d["normalize"] == {"rate": 2.0, "lat": 0.5} and d["status"] == 0))' "$tmp/out"; then
	ok "--normalize --json: the factors and status"
else
	not_ok "--normalize --json: the factors and status"
fi
mutate "$tmp/slow/cq_poll_bw.json" 'r[0]["bw_avg_gbps"] *= 0.6'
expect "--normalize: a regression on top still fails" 1 --normalize "$base" "$tmp/slow"
says "--normalize: it is named" 'cq_poll_bw\.json +4096 B +bw_avg_gbps .*REGRESSED'
rm "$tmp/slow/calibration.json"
expect "--normalize without current's calibration: exit 2" 2 --normalize "$base" "$tmp/slow"
says "--normalize: names the missing file" 'current .*calibration\.json'
calib "$tmp/slow" 0 40.0
expect "--normalize: a zero rate: exit 2" 2 --normalize "$base" "$tmp/slow"
says "--normalize: names the field" '"rate_mpps" must be a positive number'
rm "$base/calibration.json"

expect "no arguments: exit 2" 2
expect "one argument: exit 2" 2 "$base"
expect "three arguments: exit 2" 2 "$base" "$base" "$base"
expect "unknown option: exit 2" 2 --frobnicate "$base" "$base"
expect "unknown metric in --tol: exit 2" 2 --tol bogus=5 "$base" "$base"
says "unknown metric: named" "unknown metric 'bogus'"
expect "non-number in --tol: exit 2" 2 --tol p99=lots "$base" "$base"
expect "negative --tol: exit 2" 2 --tol p99=-5 "$base" "$base"
expect "--tol without =: exit 2" 2 --tol p99 "$base" "$base"
expect "unknown metric in --only: exit 2" 2 --only nope "$base" "$base"
expect "missing --tol-file: exit 2" 2 --tol-file "$tmp/nope.txt" "$base" "$base"
printf 'p99 = fifty\n' >"$tmp/badtol.txt"
expect "bad --tol-file line: exit 2" 2 --tol-file "$tmp/badtol.txt" "$base" "$base"
expect "no such baseline directory: exit 2" 2 "$tmp/nope" "$base"
expect "--help: exit 0" 0 --help
says "--help: usage" 'cqperf-compare \[options\] BASELINE_DIR CURRENT_DIR'

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] || exit 1
exit 0
