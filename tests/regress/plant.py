#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""plant.py KIND IN_DIR OUT_DIR: a copy of the gate's measurement
(IN_DIR/measure.json) with a regression planted, into OUT_DIR; prints the
figure it was planted in.  plant.py sharpen BASELINE_DIR -: each recorded
interval of BASELINE_DIR/gate.json becomes its median.  KIND:
    rate    our message rate 15 % lower in every pair of the rate figure
            whose interval is narrowest (the one the gate resolves best);
            exit 77 when no rate figure's interval can tell 15 % from its
            tolerance in this measurement (a noisy spell: more pairs would)
    wakeup  one wakeup more a message on the server of every run of the
            first event-mode rate figure
Used by tests/regress/run.sh."""
import json
import os
import statistics
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)),
                             "..", "..", "scripts", "installed")]
from cqperfbench import judge_ratio  # noqa: E402

SLIP = 0.15


def rate_figure(m):
    best = None
    for name, f in m["figures"].items():
        ratios = [p["ours"] / p["theirs"] for p in f["pairs"]]
        if f["kind"] != "rate" or f["theirs"] != "perftest" or \
                len(ratios) < 7:
            continue
        med = statistics.median(ratios)
        hi = judge_ratio(ratios, 1.0, 0.0, False)[3]  # the gate's top
        # Planted, the interval's top is (1 - SLIP) * hi; it must lie
        # below the limit of the sharpened baseline, (1 - tol) * med.
        if (1 - SLIP) * hi < (1 - f["tol"]) * med and \
                (best is None or hi / med < best[1]):
            best = (name, hi / med)
    return best and best[0]


def main(kind, src, dst):
    if kind != "sharpen":
        with open(os.path.join(src, "measure.json")) as fh:
            m = json.load(fh)
    if kind == "rate":
        name = rate_figure(m)
        if not name:
            print("no rate figure's interval resolves 15 % here",
                  file=sys.stderr)
            return 77
        for p in m["figures"][name]["pairs"]:
            p["ours"] *= 1 - SLIP
    elif kind == "sharpen":
        # SRC is a baseline: each recorded interval becomes its median, as
        # a baseline recorded quietly over many pairs would be.
        path = os.path.join(src, "gate.json")
        with open(path) as fh:
            base = json.load(fh)
        for f in base["figures"].values():
            if "ratio" in f:
                f["ci95"] = [f["ratio"], f["ratio"]]
        with open(path, "w") as fh:
            json.dump(base, fh, indent=2)
        return 0
    elif kind == "wakeup":
        name = next(n for n, f in m["figures"].items()
                    if f["kind"] == "rate" and f["exact"] and
                    f["exact"][0].get("cq_mode") == "event")
        for x in m["figures"][name]["exact"]:
            x["server.wakeups_per_msg"] += 1
    else:
        print(__doc__, file=sys.stderr)
        return 2
    os.makedirs(dst, exist_ok=True)
    with open(os.path.join(dst, "measure.json"), "w") as fh:
        json.dump(m, fh)
    print(name)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
