#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Side-by-side RDMA CM connection setup of cm_event_stress and rdma-core's
# cmtime (rdmacm-utils) on soft-RoCE: the full-connect rate of a storm of
# connections with QPs, in pairs of runs (one of each tool, which goes
# first alternating from pair to pair) so that drift in the (noisy,
# TCG-emulated) guest cancels.
#
# Usage: bench-cm_event_stress.sh [--out DIR] [--timeout SEC] [--report TSV]...
#
# BENCH_CONNECTIONS (default 500) connections per run, BENCH_PAIRS
# (default 7, at least 7, at most 1000; BENCH_RUNS is its deprecated
# alias) pairs. Prints every run's full-connect rate in connections/s of
# both tools and the ratio ours/cmtime pair by pair, the medians, the
# median of the paired ratios with its 95 % confidence interval (paired
# bootstrap over the pairs, fixed seed) and a verdict: ahead or behind
# when the interval excludes 1 (higher is better), else parity; then, as
# a note, each step's figures of both tools (medians over the runs) side
# by side. Writes summary.json and runs.tsv to DIR (default:
# build/bench-cm_event_stress). --report TSV: no runs, the report of an
# earlier run's runs.tsv again (summary.json into DIR, default TSV's
# folder). --timeout: the whole run's (default 1800 s plus 30 s a run).
# Both tools run server on CPU 0 and client on CPU 1 (BENCH_NO_PIN=1: no).
# Exit status: 0 whatever the verdict (this is a measurement), 1 when a run
# still fails after its retries, 2 on usage errors, else softroce-run.sh's.
#
# The full-connect rate: connections over the time from the first
# rdma_create_id to the last connection ESTABLISHED, with QPs (the
# client's made after route resolution, before rdma_connect; the server's
# on each request, before rdma_accept).
#  - ours: summary.conn_per_s of the client's JSON, its connections
#    established over its connect phase, which runs from the first
#    rdma_create_id to the last ESTABLISHED.
#  - cmtime: connections (-c) over the sum of the "total ms" of its client's
#    connect-side steps: create id, bind addr (only with -b, so not here),
#    resolve addr, resolve route, create qp, connect. cmtime runs each step
#    for every connection before the next step, timing each step from its
#    first call to its last completion (connect: to the last ESTABLISHED),
#    back to back, so the sum is the same span as ours (less the few
#    printf()s between steps). Its disconnect and destroy steps are
#    teardown, left out (ours' teardown phase is left out alike).
# Like for like: cmtime issues every connection's call of a step at once,
# so ours runs with --concurrency equal to the connections (all in
# flight); both create an RC QP per connection on both sides (ours without
# --no-qp; cmtime with rdma_create_qp), take events with a blocking
# rdma_get_cm_event (ours --cm-mode block, --threads 0), retry a failed
# resolution cmtime's default 2 times (--retries / -r) with cmtime's
# default 2000 ms timeout (--cm-timeout-ms / -t). What differs: cmtime
# goes step by step for all connections, ours takes each connection on to
# its next step as its event arrives; ours does all on one thread, where
# cmtime's client takes events on a thread of its own while its main
# thread makes the calls, and its server hands requests and disconnects
# to worker threads; cmtime's -r is also its connections' transport retry
# count (ours 7: no matter without loss).
#
# The note's per-step figures are not alike either: cmtime (rdma-core 44)
# prints per step its total (first call to last completion), "us / conn"
# (that total over the connections: an amortized time, not a latency),
# and the least and most time one connection took. Ours has no step
# totals (its steps overlap); it has each connection's latency from the
# call to its event (ADDR_RESOLVED, ROUTE_RESOLVED, ESTABLISHED and, in the
# teardown, DISCONNECTED from rdma_disconnect), shown as p50, average, min
# and max, the last two comparable with cmtime's min and max.
#
# cmtime's server (v44) counts disconnects and should end after the
# client's; in the soft-RoCE guest it has not (its connection ids all
# destroyed, only its listener left, its main thread waiting in
# rdma_get_cm_event and its worker threads for work): once its client has
# ended it gets release_grace seconds, then is stopped (the run still
# counts, "released" in runs.tsv; the server measures nothing). cmtime's exit
# status ignores failed connections, so a run whose output names an error
# event or failure is a failed run (and retried).
set -euo pipefail

# shellcheck source=scripts/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"

ours_tool=cm_event_stress
tools=(ours theirs)
need_files+=("build/src/$ours_tool")
need_cmds[cmtime]="scripts/deps.sh installs rdmacm-utils"
need_cmds[rdma]="scripts/deps.sh installs iproute2"
# The settings both tools get: cmtime's defaults for retries and resolution
# timeout, given to both explicitly.
cm_retries=2
cm_timeout_ms=2000
# Ours: the deadline for every wait on the peer (its server waits this
# long for a client; none of it is measured).
peer_timeout=60
# Seconds cmtime's server gets to end after its client.
release_grace=3

# One case, CASE and ITERS both the connection count.
case_column=connections
make_specs() {
    bench_iters BENCH_CONNECTIONS 500 1
    specs=("$iters:$iters")
}
describe() { echo "$1 connections"; }

# conn_per_s: full-connect rate; connect_ms: the span it is over (from the
# first create to the last established); wall_ms: the client's whole run
# (setup and teardown included); teardown_per_s: connections over the
# disconnect step/phase; released: theirs only, 1 when its server was
# stopped after its client ended; steps: per-step figures as JSON.
tsv_columns=(conn_per_s connect_ms wall_ms teardown_per_s released steps)

reset_figures() {
    conn_per_s='' connect_ms='' teardown_per_s='' steps='' released=''
}

record() {
    local pair=$4 note=''
    fields=("$conn_per_s" "$connect_ms" "$wall_ms" "$teardown_per_s"
        "$released" "$steps")
    [ "$released" != 1 ] || note=', server stopped after the client ended'
    printf '%s: %d connections pair %d %-6s %9.2f conn/s (connect %.1f ms, client wall %.1f ms%s)\n' \
        "$prog" "$3" "$pair" "$1" "$conn_per_s" "$connect_ms" "$wall_ms" \
        "$note" >&2
}

# The connect span cannot be longer than the client's whole run.
plausible() {
    wall_ms=$(awk -v us="$wall_us" 'BEGIN { printf "%.3f", us / 1e3 }')
    if awk -v c="$connect_ms" -v w="$wall_ms" -v r="$conn_per_s" \
        'BEGIN { exit !(c > 1.01 * w || c <= 0 || r <= 0) }'; then
        echo "$prog: connect span $connect_ms ms is outside (0, client wall $wall_ms ms]" >&2
        return 1
    fi
}

# ours_fields JSON CONNS: from our client's JSON, "conn_per_s connect_ms
# teardown_per_s STEPS" on one line; nothing (and 1) unless every
# connection was established and disconnected without error.
ours_fields() {
    python3 - "$@" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
s = d.get("summary", {})
c = s.get("client", {})
bad = [k for k in ("failed", "rejected", "addr_error", "route_error",
                   "unreachable", "connect_error", "rejected_unexpected")
       if c.get(k)]
if ("error" in d or s.get("connections") != n or c.get("established") != n
        or c.get("disconnected") != n or bad or not s.get("conn_per_s")):
    sys.exit("%s: not every connection made it (error %r, connections %r,"
             " established %r, disconnected %r, %s)"
             % (sys.argv[1], d.get("error"), s.get("connections"),
                c.get("established"), c.get("disconnected"),
                ", ".join("%s %s" % (k, c[k]) for k in bad) or "no errors"))
step_of = {"RDMA_CM_EVENT_ADDR_RESOLVED": "resolve_addr",
           "RDMA_CM_EVENT_ROUTE_RESOLVED": "resolve_route",
           "RDMA_CM_EVENT_ESTABLISHED": "connect",
           "RDMA_CM_EVENT_DISCONNECTED": "disconnect"}
steps = {}
for r in d["results"]:
    if r.get("side") == "client" and r.get("event") in step_of:
        lat = r["lat_us"]
        steps[step_of[r["event"]]] = {
            "event": r["event"][len("RDMA_CM_EVENT_"):], "count": r["count"],
            "p50_us": lat["p50"], "avg_us": lat["avg"],
            "min_us": lat["min"], "max_us": lat["max"]}
print("%.4f %.3f %.4f %s" % (s["conn_per_s"], n / s["conn_per_s"] * 1e3,
                             s.get("teardown_per_s") or 0,
                             json.dumps(steps, separators=(",", ":"))))
EOF
}

# cmtime_fields LOG CONNS: from cmtime's client output, "conn_per_s
# connect_ms teardown_per_s STEPS" on one line; nothing (and 1) when a step
# is missing or the output names an error.
cmtime_fields() {
    python3 - "$@" <<'EOF'
import json, re, sys
n = int(sys.argv[2])
text = open(sys.argv[1]).read()
errors = [l for l in text.splitlines()
          if re.search(r"^event: |_ERROR|failure|failing|out of memory|"
                       r"Unhandled", l)]
if errors:
    sys.exit("%s: cmtime reported errors: %s" % (sys.argv[1], errors[0]))
# "%-13s: %11.2f%11.2f%11.2f%11.2f": step, total ms, max ms, min us,
# us / conn; a step without data overflows its min (999999999.00).
steps = {}
for line in text.splitlines():
    m = re.match(r"^(.{13}): (.{44})$", line)
    if not m:
        continue
    total_ms, max_ms, min_us, per_conn_us = (
        float(m.group(2)[i:i + 11]) for i in range(0, 44, 11))
    steps[m.group(1).strip().replace(" ", "_")] = {
        "total_ms": total_ms, "per_conn_us": per_conn_us,
        "min_us": min_us, "max_us": max_ms * 1e3}
connect_side = ["create_id", "bind_addr", "resolve_addr", "resolve_route",
                "create_qp", "connect"]
need = [k for k in connect_side if k != "bind_addr"] + ["disconnect",
                                                        "destroy"]
missing = [k for k in need if k not in steps]
if missing:
    sys.exit("%s: no figures for %s" % (sys.argv[1], ", ".join(missing)))
span_ms = sum(steps[k]["total_ms"] for k in connect_side if k in steps)
disc_ms = steps["disconnect"]["total_ms"]
print("%.4f %.3f %.4f %s" % (n / span_ms * 1e3, span_ms,
                             n / disc_ms * 1e3 if disc_ms > 0 else 0,
                             json.dumps(steps, separators=(",", ":"))))
EOF
}

run_ours() {
    local n=$2 log=$3 bin=$top/build/src/$ours_tool out
    reset_figures
    start_server "$log" "$ours_port" "$bin" -p "$ours_port" \
        --timeout "$peer_timeout" || return 1
    timed_client "$log" "$bin" -p "$ours_port" --timeout "$peer_timeout" \
        -c "$n" --concurrency "$n" --cm-mode block --threads 0 \
        --retries "$cm_retries" --cm-timeout-ms "$cm_timeout_ms" \
        --output json "$addr" || return 1
    finish_server || return 1
    out=$(ours_fields "$log.client" "$n") || return 1
    read -r conn_per_s connect_ms teardown_per_s steps <<<"$out"
    [ -n "$steps" ]
}

run_theirs() {
    local n=$2 log=$3 out
    local args=(-p "$theirs_port" -c "$n" -r "$cm_retries" -t "$cm_timeout_ms")
    reset_figures
    # cmtime's server: no -s; -c too, as its worker threads serve exactly
    # that many requests and disconnects.
    start_cm_server "$log" "$theirs_port" cmtime "${args[@]}" || return 1
    timed_client "$log" cmtime -s "$addr" "${args[@]}" || return 1
    finish_server_within "$log" "$release_grace" || return 1
    out=$(cmtime_fields "$log.client" "$n") || return 1
    read -r conn_per_s connect_ms teardown_per_s steps <<<"$out"
    [ -n "$steps" ]
}

# The table, medians, paired ratios, interval and verdict, and the
# per-step note to stdout; the same as JSON to $2.
report() {
    bench_python "$@" <<'EOF'
STEPS = [("create id", "create_id"), ("resolve addr", "resolve_addr"),
         ("resolve route", "resolve_route"), ("create qp", "create_qp"),
         ("connect", "connect"), ("disconnect", "disconnect"),
         ("destroy", "destroy")]

def cell(v, f="%10.1f", w=10):
    return f % v if v is not None else "%*s" % (w, "-")

def step_medians(rows, tool, fields):
    """{step: {field: median over runs}} from the steps column."""
    runs = [json.loads(r["steps"]) for r in rows
            if r["tool"] == tool and r["steps"]]
    out = {}
    for _, k in STEPS:
        got = [s[k] for s in runs if k in s]
        if got:
            out[k] = {f: med([g.get(f) for g in got]) for f in fields}
            if "event" in got[0]:
                out[k]["event"] = got[0]["event"]
    return out

def cm_case(case, mine):
    n = int(mine[0]["iters"])
    label = "%d connections" % n
    pad = " " * len(label)
    entry = run_entry(n, mine, ("conn_per_s", "connect_ms", "wall_ms",
                                "teardown_per_s"),
                      {"connections": n})
    del entry["bytes"], entry["iterations"]
    entry["theirs_server_stopped"] = int(sum(values(mine, "theirs",
                                                    "released")))
    o, t = by_pair(mine, "ours", "conn_per_s"), by_pair(mine, "theirs",
                                                       "conn_per_s")
    table(label, mine, [("ours conn/s", "ours", "conn_per_s", "%.2f", 1),
                        ("cmtime conn/s", "theirs", "conn_per_s", "%.2f", 1)])
    print("%s  %-13s %s" % (pad, "ratio", " ".join(
        cell(o[p] / t[p] if p in o and p in t and t[p] else None, "%9.3f", 9)
        for p in distinct(mine, "pair"))))
    print("%s  median ours %s  cmtime %s conn/s" % (
        pad, fmt(med(entry["ours_conn_per_s"])),
        fmt(med(entry["theirs_conn_per_s"]))))
    entry["ratio"] = compare(label, mine, "conn_per_s", False,
                             "full-connect rate", vs_name="cmtime")
    entry["verdict"] = entry["ratio"]["verdict"]
    if entry["ours_connect_ms"] and entry["theirs_connect_ms"]:
        print("%s  full connect span (median): ours %.1f ms  cmtime %.1f ms;"
              "  teardown: ours %.2f  cmtime %.2f conn/s"
              % (pad, med(entry["ours_connect_ms"]),
                 med(entry["theirs_connect_ms"]),
                 med(entry["ours_teardown_per_s"]),
                 med(entry["theirs_teardown_per_s"])))
    ours = step_medians(mine, "ours", ("p50_us", "avg_us", "min_us",
                                       "max_us"))
    theirs = step_medians(mine, "theirs", ("total_ms", "per_conn_us",
                                           "min_us", "max_us"))
    entry["steps"] = {"ours": ours, "theirs": theirs}
    print()
    print("Note: per-step figures, medians over runs (usec unless said)."
          " cmtime: step total (first call")
    print("to last completion), total / connections, one connection's min"
          " and max. Ours: each")
    print("connection's latency from the call to its event (no step"
          " totals: its steps overlap).")
    print("%-13s | %-43s | %-14s %s" % ("", "cmtime", "ours", ""))
    print("%-13s | %10s %10s %10s %10s | %-14s %10s %10s %10s %10s" % (
        "step", "total ms", "us/conn", "min", "max", "event", "p50", "avg",
        "min", "max"))
    for name, k in STEPS:
        tv, ov = theirs.get(k, {}), ours.get(k)
        print("%-13s | %s %s %s %s | %-14s %s %s %s %s" % (
            name, cell(tv.get("total_ms"), "%10.2f"),
            cell(tv.get("per_conn_us")), cell(tv.get("min_us")),
            cell(tv.get("max_us")), ov["event"] if ov else "-",
            *(cell(ov.get(f) if ov else None)
              for f in ("p50_us", "avg_us", "min_us", "max_us"))))
    # The connect-side span: cmtime's steps summed, ours' connect phase.
    om, tm = med(entry["ours_connect_ms"]), med(entry["theirs_connect_ms"])
    print("%-13s | %s %s %21s | %-14s %s us/conn (%s ms)" % (
        "full connect", cell(tm, "%10.2f"),
        cell(tm * 1e3 / n if tm else None), "", "connect phase",
        cell(om * 1e3 / n if om else None, "%.1f"), cell(om, "%.2f")))
    if entry["theirs_server_stopped"]:
        print("cmtime's server was stopped after its client ended in"
              " %d of %d runs" % (entry["theirs_server_stopped"],
                                  len(values(mine, "theirs", "released"))))
    return label, entry

summarize(sys.argv[1], sys.argv[2], "cm_event_stress vs cmtime (rdma-core), RDMA CM connections with"
          " QPs: full-connect rate in connections/s\n(first create to last"
          " ESTABLISHED; ours --concurrency = connections, cmtime all at"
          " once per step)", "connections", cm_case,
          {"benchmark": "cm_event_stress vs cmtime", "unit": "connections/s",
           "rate": "connections / (first rdma_create_id .. last ESTABLISHED)"},
          cases="cases")
EOF
}

bench_main "$@"
