#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""policybench: the adaptive completion policy against the best fixed one,
at each rate of an open-loop sweep (scripts/bench/bench-policies.sh runs it).

One soft-RoCE guest (scripts/guest/softroce-run.sh), one persistent
cq_event_lat server (pinned apart from the client where there are two
CPUs).  First the closed-loop rate (ping-pong, poll); then ROUNDS rounds,
each of one client per arrival process (fixed, poisson, onoff) that runs
every rate (FRACS of the closed-loop rate) in every policy back to back
(--rates ... --compare-modes MODES -D SEC): within a round all policies
meet the same drift, and rounds give the intervals.

Per (arrival, rate), each round gives:
  p99 ratio   adaptive's p99 / the best fixed policy's p99;
  CPU excess  adaptive's server CPU - that of the fixed policy the
              strategy rule picks (the least server CPU with a p99
              within SLACK % of the best fixed one), in points;
  noise       each fixed policy's p99 / the best of the other fixed
              ones: what a policy no better and no worse than the rest
              scores against a best of several noisy p99s.
Reported: the median over rounds with the order statistics' interval of
each (at least 95 % from 6 rounds; the last line says what it covers)
(noise: the median over the fixed policies of their medians), and
whether the medians clear the bar (ratio <= 1.10, excess <= 2).

Usage: bench-policies.sh [--out DIR] [--timeout SEC] [--report DIR]
Environment: BENCH_ROUNDS (7), BENCH_SECS (1, each row's -D),
BENCH_FRACS (0.01,0.1,0.3,0.6,0.9), BENCH_ARRIVALS
(fixed,poisson,onoff:100,100).  Writes rounds/*.json, summary.json and
summary.txt to DIR (default build/bench-policies); --report DIR makes the
summary of a DIR's rounds again without running anything.
"""
import json
import os
import subprocess
import sys
import time

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                             "installed")]
import cqperfbench as cb  # noqa: E402

FIXED = ["poll", "event", "hybrid", "empty:64", "timer", "ski", "ski:rand"]
MODES = FIXED + ["adaptive"]
SLACK = 10.0
BAR_RATIO, BAR_EXCESS = 1.10, 2.0
PORT = 18750


def env_list(name, default):
    return [x for x in os.environ.get(name, default).split(",") if x]


def arrivals():
    # onoff takes a comma of its own: "onoff:100,100" is one item.
    items, out = env_list("BENCH_ARRIVALS", "fixed,poisson,onoff:100,100"), []
    for it in items:
        if out and out[-1].startswith("onoff:") and out[-1].count(",") == 0:
            out[-1] += "," + it
        else:
            out.append(it)
    return out


def tool(top):
    return os.path.join(top, "build", "src", "cq_event_lat")


def client(top, args, out):
    taskset, cpu = cb.pin(1)
    cmd = taskset + [tool(top), "-d", os.environ["CQPERF_RXE_DEV"],
                     "-p", str(PORT), "--timeout", "30", "--output", "json"] \
        + cpu + args + [os.environ["CQPERF_SERVER_ADDR"]]
    with open(out, "w") as f, open(out + ".err", "w") as e:
        rc = subprocess.call(cmd, stdout=f, stderr=e, timeout=1800)
    if rc:
        raise RuntimeError("%s exited %d (%s.err)" % (" ".join(cmd), rc, out))
    with open(out) as f:
        return json.load(f)


def inner(top, out):
    rounds = int(os.environ.get("BENCH_ROUNDS", "7"))
    secs = os.environ.get("BENCH_SECS", "1")
    fracs = [float(x) for x in env_list("BENCH_FRACS", "0.01,0.1,0.3,0.6,0.9")]
    os.makedirs(os.path.join(out, "rounds"), exist_ok=True)
    taskset, cpu = cb.pin(0)
    srv = subprocess.Popen(taskset + [tool(top), "-d",
                                      os.environ["CQPERF_RXE_DEV"], "-p",
                                      str(PORT), "--persistent", "--timeout",
                                      "30"] + cpu,
                           stdout=subprocess.DEVNULL,
                           stderr=open(os.path.join(out, "server.err"), "w"))
    try:
        time.sleep(1)
        d = client(top, ["--cq-mode", "poll", "-n", "3000"],
                   os.path.join(out, "closed.json"))
        r = d["results"][0]
        top_rate = r["iterations"] / r["client"]["seconds"]
        rates = sorted({max(20, int(top_rate * f)) for f in fracs})
        print("# closed loop %.0f/s; rates %s" % (top_rate, rates), flush=True)
        for k in range(rounds):
            for a in arrivals():
                name = "r%d-%s.json" % (k, a.replace(":", "_").replace(",", "_"))
                client(top, ["--rates", ",".join(map(str, rates)),
                             "--compare-modes", ",".join(MODES), "--arrival",
                             a, "-D", secs, "--warmup", "20"],
                       os.path.join(out, "rounds", name))
                print("# round %d %s done" % (k + 1, a), flush=True)
    finally:
        srv.terminate()
        srv.wait()


def server_row(rows, rate, mode):
    for r in rows:
        if r.get("offered_rate") == rate and r.get("label") == mode:
            return r
    return None


def noise(fixed):
    """{mode: its p99 / the best of the other fixed policies' p99}."""
    out = {}
    for m, r in fixed.items():
        others = [o["lat_us"]["p99"] for k, o in fixed.items() if k != m]
        if others:
            out[m] = r["lat_us"]["p99"] / min(others)
    return out


def round_figures(doc):
    """{(rate): (p99 ratio, cpu excess, pick, {mode: noise})} of one
    round's document."""
    rows = [r for r in doc["results"] if r.get("offered_rate")]
    out = {}
    for rate in sorted({r["offered_rate"] for r in rows}):
        fixed = {m: server_row(rows, rate, m) for m in FIXED}
        fixed = {m: r for m, r in fixed.items() if r and r["lat_us"]["p99"]}
        ad = server_row(rows, rate, "adaptive")
        if not fixed or not ad:
            continue
        best = min(r["lat_us"]["p99"] for r in fixed.values())
        ok = {m: r for m, r in fixed.items()
              if r["lat_us"]["p99"] <= best * (1 + SLACK / 100)}
        pick = min(ok, key=lambda m: ok[m]["server"]["cpu_pct"])
        out[rate] = (ad["lat_us"]["p99"] / best,
                     ad["server"]["cpu_pct"] - ok[pick]["server"]["cpu_pct"],
                     pick, noise(fixed))
    return out


def report(out):
    per, covers = {}, set()
    rdir = os.path.join(out, "rounds")
    for name in sorted(os.listdir(rdir)):
        if not name.endswith(".json"):
            continue
        arrival = name.split("-", 1)[1][:-5]
        with open(os.path.join(rdir, name)) as f:
            doc = json.load(f)
        for rate, figs in round_figures(doc).items():
            per.setdefault((arrival, rate), []).append(figs)
    lines, summary = [], []
    lines.append("%-14s %6s %22s %6s %24s %6s  %s" % (
        "arrival", "rate/s", "p99 ratio [CI]", "noise",
        "CPU excess pts [CI]", "clears", "fixed picks"))
    for (arrival, rate), figs in sorted(per.items()):
        ratios = [f[0] for f in figs]
        excess = [f[1] for f in figs]
        picks = sorted({f[2] for f in figs})
        rlo, rhi, cover = cb.median_interval(ratios)
        elo, ehi, _ = cb.median_interval(excess)
        covers.add(cover)
        rm, em = cb.med(ratios), cb.med(excess)
        modes = sorted({m for f in figs for m in f[3]})
        nz = cb.med([cb.med([f[3][m] for f in figs if m in f[3]])
                     for m in modes])
        clears = rm <= BAR_RATIO and em <= BAR_EXCESS
        lines.append("%-14s %6.0f %6.3f [%5.3f, %6.3f] %6.3f %6.1f [%6.1f, "
                     "%5.1f] %6s  %s" % (arrival, rate, rm, rlo, rhi, nz, em,
                                         elo, ehi, "yes" if clears else "no",
                                         ",".join(picks)))
        summary.append({"arrival": arrival, "rate": rate, "rounds": len(figs),
                        "p99_ratio": rm, "p99_ratio_ci": [rlo, rhi],
                        "fixed_noise_ratio": nz,
                        "cpu_excess": em, "cpu_excess_ci": [elo, ehi],
                        "picks": picks, "clears": clears})
    lines += ["intervals: order statistics of the rounds' figures, covering"
              " the median with %s" % " or ".join(
                  "%.1f %%" % (100 * c) for c in sorted(covers) if c)]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    sys.stdout.write(text)
    return 0


def main(argv):
    top = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    out, timeout = os.path.join(top, "build", "bench-policies"), "5400"
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--out" and args:
            out = args.pop(0)
        elif a == "--timeout" and args:
            timeout = args.pop(0)
        elif a == "--report" and args:
            return report(args.pop(0))
        elif a == "--inner":
            inner(top, os.environ.get("CQPERF_OUT", out))
            return 0
        else:
            sys.stderr.write(__doc__)
            return 2
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ)
    env["CQPERF_PASS_ENV"] = env.get("CQPERF_PASS_ENV", "") + \
        " BENCH_NO_PIN BENCH_ROUNDS BENCH_SECS BENCH_FRACS BENCH_ARRIVALS"
    rc = subprocess.call([os.path.join(top, "scripts", "guest", "softroce-run.sh"),
                          "--timeout", timeout, "--out", out, "--",
                          "python3", os.path.abspath(__file__), "--inner"],
                         env=env)
    return rc or report(out)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
