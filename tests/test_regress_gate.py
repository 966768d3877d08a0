#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Unit tests of scripts/installed/cqperf-regress without soft-RoCE: the plan's
syntax, the verdict over paired ratios and exact figures (judge) on
hand-made measurements, and recording a baseline from one.  Prints
"ok - ..." / "not ok - ..." per check and the summary line; exit 0 when
all pass."""
import copy
import io
import os
import sys
import tempfile

TOP = os.environ.get("top_srcdir") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..")
sys.path[:0] = [os.path.join(TOP, "scripts", d)
                for d in ("installed", "bench", "dev")] + [
    os.path.join(TOP, "tests")]
from pycheck import check, finish, load_script  # noqa: E402

g = load_script(os.path.join(TOP, "scripts", "installed", "cqperf-regress"),
                "cqperf_regress")


def plan_error(text):
    with tempfile.NamedTemporaryFile("w", suffix=".plan") as f:
        f.write(text)
        f.flush()
        try:
            g.read_plan(f.name)
        except ValueError as e:
            return str(e)
    return None


figs = g.read_plan(os.path.join(TOP, "ci", "baseline", "plan"))
check("the committed plan reads", len(figs) >= 5)
check("... and has rate and latency figures with perftest counterparts",
      {f.kind for f in figs if f.theirs} == {"rate", "lat"})
check("a line names its error: KIND",
      "KIND speed" in (plan_error("x speed 10% cq_poll_bw\n") or ""))
check("... TOL", "TOL 10" in (plan_error("x rate 10 cq_poll_bw\n") or ""))
check("... an option the gate sets",
      "-p is the gate's" in (plan_error("x rate 10% cq_poll_bw -p 1\n")
                             or ""))
check("... a counterpart for conn, which perftest has not",
      "no perftest counterpart" in (plan_error(
          "x conn 10% cm_event_stress -- ib_send_bw\n") or ""))
check("... a figure twice", "twice" in (plan_error(
    "x rate 10% cq_poll_bw\nx rate 10% cq_poll_bw\n") or ""))
check("... and the line", ":2:" in (plan_error(
    "# c\nx rate 10%\n") or ""))

# Seven pairs within 1.5 %: at 7 pairs the gate's interval is their whole
# range (the order statistics, cqperf(7) VERDICTS), so a 15 % slip lies
# beyond a 10 % tolerance only where the pairs agree this well.
RATIOS = [1.0, 1.01, 0.99, 1.005, 0.995, 1.015, 0.985]


def run_exact(cq_mode, sw, cw, comp=1.0):
    return {"client.completions_per_msg": comp, "client.wakeups_per_msg": cw,
            "server.completions_per_msg": comp, "server.wakeups_per_msg": sw,
            "cq_mode": cq_mode}


def fig(kind, tool, ratios, exact, theirs="perftest"):
    return {"kind": kind, "tol": 0.10, "theirs": theirs,
            "ours_cmd": tool + " -s 64", "theirs_cmd": "ib_send_bw",
            "pairs": [{"ours": r * 2.0, "theirs": 2.0, "first": "ours"}
                      for r in ratios], "exact": exact}


MEASURE = {"schema": g.MEASURE_SCHEMA, "against_bin": None, "figures": {
    "bw-poll": fig("rate", "cq_poll_bw", RATIOS,
                   [run_exact("poll", 0, 0)] * 7),
    "bw-event": fig("rate", "cq_poll_bw", RATIOS,
                    [run_exact("event", 0.7, 0)] * 7),
    "lat-poll": fig("lat", "cq_event_lat", RATIOS,
                    [run_exact("poll", 0, 0, 2.0)] * 7),
    "udbw-event": fig("rate", "ud_send_bw", [], [run_exact("event", 0.7, 0)],
                      theirs=None),
}}
with tempfile.TemporaryDirectory() as d:
    class A:
        baseline = d
    g.record(A, MEASURE)
    BASE = g.load_baseline(d)
check("record: the median ratio of each figure with a counterpart",
      BASE["figures"]["bw-poll"]["ratio"] == 1.0 and
      "ratio" not in BASE["figures"]["udbw-event"])
check("record: the exact figures every run agreed on",
      BASE["figures"]["lat-poll"]["exact"]["client.completions_per_msg"] ==
      2.0)


def verdict(edit):
    m = copy.deepcopy(MEASURE)
    edit(m["figures"])
    out = io.StringIO()
    rc, names = g.judge(m, BASE, out)
    return rc, names, out.getvalue()


rc, names, text = verdict(lambda f: None)
check("the measurement it was recorded from passes", rc == 0 and not names)
check("... and the table fits 100 columns",
      max(len(x) for x in text.splitlines()) <= 100)


def scale(name, k):
    def edit(f):
        for p in f[name]["pairs"]:
            p["ours"] *= k
    return edit


rc, names, _ = verdict(scale("bw-poll", 0.85))
check("a rate 15 % lower fails, and is named", rc == 1 and
      names == ["bw-poll"])
rc, names, _ = verdict(scale("bw-poll", 0.95))
check("a rate 5 % lower (within 10 %) passes", rc == 0)
rc, names, _ = verdict(scale("lat-poll", 1.15))
check("a latency 15 % higher fails", rc == 1 and names == ["lat-poll"])
rc, names, _ = verdict(scale("lat-poll", 0.85))
check("a latency 15 % lower passes", rc == 0)


def wake(name, side, plus, run=0):
    def edit(f):
        f[name]["exact"] = [dict(x) for x in f[name]["exact"]]
        f[name]["exact"][run][side + ".wakeups_per_msg"] += plus
    return edit


rc, names, text = verdict(wake("bw-event", "server", 1))
check("one wakeup more a message fails, in one run of seven",
      rc == 1 and names == ["bw-event"])
check("... saying which run, side and figure",
      "bw-event run 1: server woke 1.700 times a message" in text)
rc, names, _ = verdict(wake("udbw-event", "server", 1))
check("... also for a figure gated on exact figures only",
      rc == 1 and names == ["udbw-event"])
rc, names, text = verdict(wake("bw-poll", "client", 0.001, run=3))
check("a wakeup in poll mode fails", rc == 1 and "poll mode" in text)


def comp(name, side, v):
    def edit(f):
        f[name]["exact"] = [dict(x) for x in f[name]["exact"]]
        f[name]["exact"][0][side + ".completions_per_msg"] = v
    return edit


rc, names, text = verdict(comp("lat-poll", "server", 3.0))
check("completions per message unlike the baseline's fail",
      rc == 1 and "server.completions_per_msg 3.0, baseline 2.0" in text)
rc, names, _ = verdict(comp("udbw-event", "server", 0.99))
check("... but not a UD receiver's, which may lose a datagram", rc == 0)
rc, names, _ = verdict(lambda f: f.update(extra=f["bw-poll"]))
check("a figure missing from the baseline fails", rc == 1 and
      names == ["extra"])
rc, names, text = verdict(lambda f: f["bw-poll"].update(pairs=[
    {"ours": x, "theirs": 1.0, "first": "ours"}
    for x in (0.7, 1.1, 0.8, 1.05, 0.75, 1.0, 0.85)]))
check("an interval across the limit passes, undecided",
      rc == 0 and "ok (undecided)" in text)

noisy = copy.deepcopy(BASE)
noisy["figures"]["bw-poll"].update(ratio=1.15, ci95=[0.99, 1.45])
rc, _ = g.judge(MEASURE, noisy, io.StringIO())
check("the limit is the baseline's interval less the tolerance: a noisy "
      "recording is lenient", rc == 0)
noisy["figures"]["bw-poll"].update(ratio=1.15, ci95=[1.14, 1.16])
rc, names = g.judge(MEASURE, noisy, io.StringIO())
check("... and a sharp one is not", rc == 1 and names == ["bw-poll"])

m = copy.deepcopy(MEASURE)
m["against_bin"] = "/x"
m["figures"]["bw-poll"]["theirs"] = "base"
rc, _, text = verdict(lambda f: f["bw-poll"].update(theirs="base"))
check("against a baseline build the reference ratio is 1",
      rc == 0 and "1.000" in text)
finish()
