#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Unit tests of scripts/installed/cqperfbench.py, what the benchmarks and the gate
share: perftest's output (as perftest 4.5 prints it), pinning, the paired
interval of a median, simulated under the null, and the gate's verdict
against a tolerance.  No device.  Prints
"ok - ..." / "not ok - ..." per check and the summary line."""
import contextlib
import io
import math
import os
import random
import subprocess
import sys
import tempfile

TOP = os.environ.get("top_srcdir") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..")
sys.path[:0] = [os.path.join(TOP, "scripts", d)
                for d in ("installed", "bench", "dev")] + [
    os.path.join(TOP, "tests")]
import cqperfbench as b  # noqa: E402
from pycheck import check, finish  # noqa: E402

# perftest 4.5's tables (ib_send_bw, ib_send_lat), spacing as printed.
BW = """\
---------------------------------------------------------------------------------------
 #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
 64         60000            9.52               9.26   		   0.151694
---------------------------------------------------------------------------------------
"""
LAT = """\
 #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    \
t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]
 64      6000          17.92          1064.56      24.53          \
27.84        19.41   		77.09   		470.35
"""

check("perftest: a word without a unit belongs to the next",
      b.perftest_headers(" #bytes BW peak[MB/sec] 99% percentile[usec]") ==
      ["#bytes", "BW peak[MB/sec]", "99% percentile[usec]"])
check("perftest: the message rate of the 64 B row",
      b.perftest_value(BW, "MsgRate[Mpps]", 64) == 0.151694)
check("perftest: the average bandwidth, found by name",
      b.perftest_value(BW, "BW average[MB/sec]", "64") == 9.26)
check("perftest: the typical latency and the 99.9th percentile",
      b.perftest_value(LAT, "t_typical[usec]", 64) == 24.53 and
      b.perftest_value(LAT, "99.9% percentile[usec]", 64) == 470.35)
for what, args in (("another size", (BW, "MsgRate[Mpps]", 4096)),
                   ("a column it does not print", (BW, "t_avg[usec]", 64)),
                   ("a table cut short", (BW.splitlines()[1] + "\n 64 6000\n",
                                          "MsgRate[Mpps]", 64))):
    try:
        b.perftest_value(*args)
        check("perftest: %s is an error" % what, False)
    except b.PerftestError as e:
        check("perftest: %s is an error that names it" % what,
              args[1] in str(e))

with tempfile.NamedTemporaryFile("w", suffix=".client") as f:
    f.write(LAT)
    f.flush()
    out = subprocess.run([sys.executable, b.__file__, "perftest", f.name,
                          "64", "t_typical[usec]", "t_avg[usec]"],
                         capture_output=True, text=True)
    check("the shell's perftest command prints the columns asked for",
          out.returncode == 0 and out.stdout.split() == ["24.53", "27.84"])
    out = subprocess.run([sys.executable, b.__file__, "perftest", f.name,
                          "128", "t_avg[usec]"], capture_output=True,
                         text=True)
    check("... and exits 1 when a row is missing", out.returncode == 1)

os.environ["BENCH_NO_PIN"] = "1"
check("BENCH_NO_PIN: no pinning", b.pin(0) == ([], []))
del os.environ["BENCH_NO_PIN"]
if (os.cpu_count() or 1) >= 2:
    check("pinning: taskset for the command, --cpu for ours",
          b.pin(1) == (["taskset", "-c", "1"], ["--cpu", "1"]))

# The interval of the median: order statistics, chosen by the binomial.
check("ranks: 7 pairs give [x(1), x(7)], 98.4 %",
      b.median_rank(7) == (1, 1 - 2 / 128) and
      b.median_ci([3, 1, 2, 7, 5, 4, 6]) == (1, 7))
check("ranks: 11 pairs give [x(2), x(10)], 98.8 %; 21 [x(6), x(16)]",
      b.median_rank(11) == (2, 1 - 2 * 12 / 2048) and
      b.median_rank(21)[0] == 6 and b.median_rank(21)[1] >= 0.95 and
      1 - 2 * b.sign_cdf(21, 6) < 0.95)
check("ranks: 5 pairs cannot give 95 %", b.median_rank(5) == (None, None))
try:
    b.median_ci([1, 2, 3, 4, 5])
    check("ranks: too few pairs is an error", False)
except ValueError as e:
    check("ranks: too few pairs is an error that says so", "5 ratios" in str(e))
check("ranks: fewer than asked, the widest with what it covers",
      b.median_interval([2, 1, 3, 4, 5]) == (1, 5, 1 - 2 / 32))
check("sign test: 7 of 7 above, p 2/128; ties left out; 4 of 7, p 1",
      b.sign_p([1.1] * 7) == 2 / 128 and b.sign_p([1.1] * 7 + [1.0]) ==
      2 / 128 and b.sign_p([0.9, 0.9, 0.9, 1.1, 1.1, 1.1, 1.1]) == 1.0)
r = [1.0, 1.02, 0.98, 1.01, 0.99, 1.03, 0.97]
cs = [{"p": 0.001, "verdict": "behind"}, {"p": 0.03, "verdict": "ahead"},
      {"p": 0.04, "verdict": "ahead"}, {"verdict": "none"}]
check("Holm: the first at 5 %/3, the second at 5 %/2 fails, so the rest",
      b.holm(cs) == 3 and [c.get("holm") for c in cs] ==
      ["behind", "parity", "parity", None])

# The gate's verdict: regressed only when the whole interval is beyond
# the limit; straddling it is undecided, not a regression.
v, m, lo, hi, limit = b.judge_ratio(r, 1.0, 0.10, False)
check("gate: ratios around the baseline are ok", v == "ok" and
      abs(limit - 0.9) < 1e-12)
check("gate: a 15 % lower rate regressed",
      b.judge_ratio([x * 0.85 for x in r], 1.0, 0.10, False)[0] ==
      "regressed")
check("gate: a 15 % higher latency regressed",
      b.judge_ratio([x * 1.15 for x in r], 1.0, 0.10, True)[0] ==
      "regressed")
check("gate: a 15 % lower latency is ok",
      b.judge_ratio([x * 0.85 for x in r], 1.0, 0.10, True)[0] == "ok")
wide = [0.7, 1.1, 0.8, 1.05, 0.75, 1.0, 0.85]
check("gate: an interval across the limit is undecided",
      b.judge_ratio(wide, 1.0, 0.10, False)[0] == "undecided")
check("gate: the baseline's ratio is the reference, not 1",
      b.judge_ratio(r, 1.3, 0.10, False)[0] == "regressed" and
      b.judge_ratio(r, 0.7, 0.10, True)[0] == "regressed")
# Pooled runs (pool's RUN.PAIR): each run's median under the pooled line,
# with its pairs where the runs differ in them.
pooled = (("1.1", 1, 2), ("1.2", 1, 2), ("2.1", 3, 3), ("2.2", 3, 3),
          ("2.3", 3, 3))
rows = []
for pair, ours, theirs in pooled:
    rows += [{"pair": pair, "tool": "ours", "mbps": str(ours)},
             {"pair": pair, "tool": "theirs", "mbps": str(theirs)}]
paired = [(pair, ours / theirs) for pair, ours, theirs in pooled]
check("run medians: one a run, with its pairs",
      b.run_medians(paired) ==
      [{"run": "1", "pairs": 2, "median": 0.5},
       {"run": "2", "pairs": 3, "median": 1.0}])
check("run medians: none for one run's pairs",
      b.run_medians(paired[:2]) == [])
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    b.compare("x", rows, "mbps", False, "bw")
check("run medians: printed with their pairs where those differ",
      "   each pooled run's median/pairs: 0.500/2 1.000/3\n" in buf.getvalue())
# Pooled runs' interval: runs drawn first, then their pairs.  Five
# runs of 7 pairs, one of them 10 % above the rest: the pairs alone say
# behind; the runs, whose medians disagree, cannot tell.
off = (-0.015, -0.01, -0.005, 0, 0.005, 0.01, 0.015)
runs = [[round(m + o, 3) for o in off] for m in (0.90, 0.92, 0.94, 0.95, 1.04)]
flat = [x for r in runs for x in r]
lo, hi = b.median_ci(flat)
rlo, rhi = b.runs_ci([[r] for r in runs])
check("runs interval: wider where the runs disagree (pairs %.3f-%.3f, runs"
      " %.3f-%.3f)" % (lo, hi, rlo, rhi), hi < 1 < rhi and rlo <= lo)
agree = [[round(m + o, 3) for o in off] for m in (0.95, 0.96, 0.94, 0.95, 0.96)]
check("runs interval: where they agree it stays behind",
      b.runs_ci([[r] for r in agree])[1] < 1)
check("runs interval: one run is the pairs' own interval",
      b.runs_ci([[runs[0]]]) == b.median_ci(runs[0]))
rows = []
for k, r in enumerate(runs, 1):
    for p, x in enumerate(r, 1):
        rows += [{"pair": "%d.%d" % (k, p), "tool": "ours", "mbps": str(x)},
                 {"pair": "%d.%d" % (k, p), "tool": "theirs", "mbps": "1"}]
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    c = b.compare("x", rows, "mbps", False, "bw")
check("runs interval: compare uses it, says so and keeps each pair's run",
      c["verdict"] == "parity" and c["ci95"] == [rlo, rhi] and
      c["interval"] == b.RANKS + b.RUNS and
      c["pair_runs"] == [str(k) for k in range(1, 6) for _ in off] and
      "(35 pairs, 5 runs)" in buf.getvalue())
two = [{"ratios": [0.9, 0.8, 1.1], "pair_runs": ["1", "2", "2"]},
       {"ratios": [0.7, 1.2], "pair_runs": ["2", "3"]}]
check("runs interval, all sizes: each run's pairs size by size",
      b.runs_by_case(two) == [[[0.9], []], [[0.8, 1.1], [0.7]], [[], [1.2]]]
      and b.runs_by_case([{"ratios": [1.0]}, two[0]]) ==
      [[[1.0], [0.9, 0.8, 1.1]]])

many = []
for run in range(1, 21):
    for pair in range(1, run % 3 + 2):
        many += [{"pair": "%d.%d" % (run, pair), "tool": "ours",
                  "mbps": "1"},
                 {"pair": "%d.%d" % (run, pair), "tool": "theirs",
                  "mbps": "3"}]
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    b.compare("poll     4096 B", many, "mbps", False, "bw")
lines = buf.getvalue().splitlines()[1:]
check("run medians: 20 runs folded within 100 columns, all of them shown",
      len(lines) > 1 and max(len(x) for x in lines) <= 100 and
      sum(x.count("0.333/") for x in lines) == 20)
# The null simulated, seeded: paired ratios whose median is 1, so every
# ahead or behind is false; each path that gives a verdict must do so in
# at most 5 % of reports, plus three standard errors of the simulation.
def lognormal(rng, n):
    return [math.exp(rng.gauss(0, 0.1)) for _ in range(n)]


def mixture(rng, n):
    """Two placements: half the pairs near 0.9, half near 1.1."""
    return [(0.9 if rng.random() < 0.5 else 1.1) * math.exp(rng.gauss(0, 0.01))
            for _ in range(n)]


def bound(trials):
    return 0.05 + 3 * math.sqrt(0.05 * 0.95 / trials)


def false_rate(trials, verdict):
    rng = random.Random(46)
    return sum(verdict(rng) != "parity" for _ in range(trials)) / trials


def bench_verdict(gen, pairs, runs=1):
    """A bench's case (compare) over pairs pooled from runs."""
    def one(rng):
        rows = []
        for run in range(1, runs + 1):
            for p, x in enumerate(gen(rng, pairs), 1):
                name = "%d.%d" % (run, p) if runs > 1 else str(p)
                rows += [{"pair": name, "tool": "ours", "mbps": repr(x)},
                         {"pair": name, "tool": "theirs", "mbps": "1"}]
        with contextlib.redirect_stdout(io.StringIO()):
            c = b.compare("x", rows, "mbps", False, "bw")
        del b.VERDICTS[:]
        return c["verdict"]
    return one


def sizes_verdict(gen, pairs, sizes):
    """The pooled line over sizes (pooled): every size at parity."""
    def one(rng):
        cs = [("poll %d B" % (64 << k), {
            "median": 1, "ratios": gen(rng, pairs), "what": "bw", "vs": "t",
            "lower_is_better": False}) for k in range(sizes)]
        return b.pooled(cs)[0][1]["verdict"]
    return one


RUNS_RESAMPLES = 200  # the pooled runs' bootstrap, cut for the test's time
for gname, gen in (("lognormal", lognormal), ("two placements", mixture)):
    for pairs in sorted({b.MIN_PAIRS, 11, 21}):
        rate = false_rate(2000, bench_verdict(gen, pairs))
        check("null, %s, %d pairs: a verdict in %.1f %% of reports (<= %.1f)"
              % (gname, pairs, 100 * rate, 100 * bound(2000)),
              rate <= bound(2000))
    rate = false_rate(2000, sizes_verdict(gen, b.MIN_PAIRS, 3))
    check("null, %s, 3 sizes pooled: a verdict in %.1f %% (<= %.1f)"
          % (gname, 100 * rate, 100 * bound(2000)), rate <= bound(2000))

    def pooled_runs(rng, gen=gen):
        runs = [[gen(rng, b.MIN_PAIRS)] for _ in range(3)]
        lo, hi = b.runs_ci(runs, resamples=RUNS_RESAMPLES,
                           seed=rng.randrange(1 << 30))
        return b.verdict_of(lo, hi, False)
    rate = false_rate(600, pooled_runs)
    check("null, %s, 3 runs of 7 pairs pooled: a verdict in %.1f %% (<= %.1f)"
          % (gname, 100 * rate, 100 * bound(600)), rate <= bound(600))

    def gate(rng, gen=gen):
        """The gate's looks at a figure sitting at its limit (0.9 of a
        baseline of 1, rate): how often it reads regressed."""
        xs = [0.9 * x for x in gen(rng, 11)]
        for n in b.gate_looks(b.MIN_PAIRS, 11, False):
            v = b.judge_ratio(xs[:n], 1.0, 0.10, False)[0]
            if v != "undecided":
                break
        return "regressed" if v == "regressed" else "parity"
    rate = false_rate(2000, gate)
    check("null, %s, the gate at 7 then 11 pairs: false alarms %.1f %% "
          "(<= 2.5 %% by design)" % (gname, 100 * rate), rate <= 0.025 +
          3 * math.sqrt(0.025 * 0.975 / 2000))
finish()
