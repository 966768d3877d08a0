# SPDX-License-Identifier: BSD-2-Clause
"""cqperfbench: what the side-by-side benchmarks (scripts/bench/cqperf-bench,
run as scripts/bench-*.sh) and the regression gate (cqperf-regress)
share, one implementation each:

- pinning: server and client each on a CPU of their own (pin);
- perftest's output: the value under a named column in the row of a size
  (perftest_value), as perftest 4.5 and 6.x print it;
- the statistics of paired runs: the median of the paired ratios
  ours/theirs and its distribution-free interval (median_ci, the order
  statistics; runs_test widens it where pairs are pooled from runs), a
  verdict against 1 (verdict_of), Holm's step-down over a report's
  verdicts (holm), or against a tolerance (judge_ratio);
- the bench reports (summarize and its helpers), which the benchmarks'
  classes call (their harness is scripts/bench/cqperfbench_run.py).

Run as a program, it answers the shell:
    cqperfbench.py pin CPU                  "taskset -c CPU", or nothing
    cqperfbench.py perftest FILE SIZE COL...  each COL's value, one line
"""
import csv
import json
import math
import os
import random
import shutil
import statistics
import sys


# ---- pinning ----

def pin(cpu):
    """(taskset prefix, cqperf --cpu option) for one side when there are
    two CPUs or more, else nothing: unpinned, two spinning processes in a
    2-CPU TCG guest swing 64 B runs by up to 2x; pinned, runs agree within
    a few percent.  BENCH_NO_PIN=1: never."""
    if (os.cpu_count() or 1) < 2 or os.environ.get("BENCH_NO_PIN") or \
            not shutil.which("taskset"):
        return [], []
    return ["taskset", "-c", str(cpu)], ["--cpu", str(cpu)]


# ---- perftest's output ----

class PerftestError(ValueError):
    """perftest printed no row or column that was asked for."""


def perftest_headers(line):
    """perftest's column names in a header line: a word without a unit
    ("BW", "99%") belongs to the next one ("BW average[MB/sec]")."""
    out, pending = [], []
    for w in line.split():
        if w.startswith("#") or "[" in w:
            out.append(" ".join(pending + [w]))
            pending = []
        else:
            pending.append(w)
    return out


def perftest_value(text, header, size):
    """The value under HEADER (e.g. "MsgRate[Mpps]", "t_typical[usec]") in
    the row of SIZE bytes of perftest's result table in TEXT."""
    cols = None
    for line in text.splitlines():
        heads = perftest_headers(line)
        if header in heads:
            cols = heads
            continue
        f = line.split()
        if cols and f and f[0] == str(size) and len(f) == len(cols):
            try:
                return float(f[cols.index(header)])
            except ValueError:
                break
    raise PerftestError("no %s row of %s B in perftest's output"
                        % (header, size))


# ---- paired statistics ----


# At least this many pairs (BENCH_PAIRS' least): with fewer, the gate's
# interval (GATE_LEVEL) cannot be had: [x(1), x(6)] of 6 covers 96.9 %.
MIN_PAIRS = 7
# The interval of a median of paired ratios is the order statistics'
# (median_ci), at least LEVEL.  Pairs pooled from several runs widen it
# to a bootstrap that draws runs, then pairs: RESAMPLES resamples from a
# generator seeded with SEED (the same TSVs, the same interval).
RESAMPLES = 10000
SEED = 12
LEVEL = 0.95
RANKS = "order statistics of the paired ratios (sign test)"
RUNS = "; widened to runs resampled, then their pairs"
COLUMNS = ("iters", "pair", "order", "tool", "attempts")
# Verdicts, for the summary: (label, what, comparison), in order.
VERDICTS = []

def load(tsv):
    """The rows of runs.tsv; exit 2 unless it has the columns and pairs
    of one (at least MIN_PAIRS pairs)."""
    with open(tsv) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    missing = [c for c in COLUMNS if not rows or c not in rows[0]]
    if missing:
        sys.stderr.write("%s: no rows or no column %s: not a runs.tsv\n"
                         % (tsv, ", ".join(missing)))
        sys.exit(2)
    pairs = len(distinct(rows, "pair"))
    if pairs < MIN_PAIRS:
        sys.stderr.write("%s: %d pairs, at least %d wanted (BENCH_PAIRS)\n"
                         % (tsv, pairs, MIN_PAIRS))
        sys.exit(2)
    return rows

def pool(tsvs, out):
    """Several runs.tsv as one, to out: each pair renamed RUN.PAIR (RUN
    counting the files from 1), so that the pairs of all of them are
    resampled together; exit 2 unless they have the same columns."""
    fields, rows = None, []
    for k, tsv in enumerate(tsvs, 1):
        with open(tsv) as f:
            r = csv.DictReader(f, delimiter="\t")
            if fields is None:
                fields = r.fieldnames or []
            elif r.fieldnames != fields:
                sys.stderr.write("%s: columns %s, not %s as in %s: runs of"
                                 " another bench or release\n"
                                 % (tsv, ",".join(r.fieldnames or []),
                                    ",".join(fields), tsvs[0]))
                sys.exit(2)
            for row in r:
                row["pair"] = "%d.%s" % (k, row["pair"])
                rows.append(row)
    with open(out, "w") as f:
        w = csv.DictWriter(f, fields, delimiter="\t", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)

def distinct(rows, key):
    seen = []
    for r in rows:
        if r[key] not in seen:
            seen.append(r[key])
    return seen

def values(rows, tool, key):
    return [float(r[key]) for r in rows if r["tool"] == tool and r[key]]

def by_pair(rows, tool, key):
    return {r["pair"]: float(r[key]) for r in rows
            if r["tool"] == tool and r[key]}

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None

def fmt(v, f="%.2f"):
    return f % v if v is not None else "n/a"

def sign_cdf(n, k):
    """P(Bin(n, 1/2) <= k): how often k or fewer of n ratios fall below
    the median by chance."""
    return sum(math.comb(n, j) for j in range(k + 1)) / 2.0 ** n

def median_rank(n, level=LEVEL):
    """(k, coverage): the largest rank k whose interval [x(k), x(n+1-k)]
    of n sorted ratios covers their median with probability at least
    level, whatever their distribution, and that probability,
    1 - 2 P(Bin(n, 1/2) <= k-1); (None, None) when even [x(1), x(n)]
    falls short (fewer than 6 pairs at 95 %)."""
    best = (None, None)
    for k in range(1, n // 2 + 1):
        cover = 1 - 2 * sign_cdf(n, k - 1)
        if cover < level:
            break
        best = (k, cover)
    return best

def median_ci(ratios, level=LEVEL):
    """The distribution-free interval of the median of ratios: order
    statistics k and n+1-k (median_rank).  It needs only independent
    ratios, each as likely above its median as below, so it holds its
    level at 7 pairs where a percentile bootstrap holds 87.5 %.
    ValueError with too few ratios for level."""
    lo, hi, cover = median_interval(ratios, level)
    if cover is None or cover < level:
        raise ValueError("%d ratios: too few for a %g %% interval"
                         % (len(ratios), 100 * level))
    return lo, hi

def median_interval(xs, level=LEVEL):
    """(lo, hi, coverage): median_ci's interval where xs are enough for
    level, else the widest there is, [min, max], with the coverage it
    has (below level; None for no xs)."""
    xs = sorted(xs)
    if not xs:
        return None, None, None
    k, cover = median_rank(len(xs), level)
    if k is None:
        k, cover = 1, 1 - 2 * sign_cdf(len(xs), 0)
    return xs[k - 1], xs[len(xs) - k], cover

def sign_p(ratios, at=1.0):
    """The exact two-sided sign test that the median of ratios is at:
    the chance of a split of those above and below it at least as uneven
    as the one seen (ratios equal to at are left out).  median_ci
    excludes at exactly when this p is below 1 - its coverage."""
    below = sum(1 for x in ratios if x < at)
    above = sum(1 for x in ratios if x > at)
    n = below + above
    return min(1.0, 2 * sign_cdf(n, min(below, above))) if n else 1.0

def coverage_text(c):
    """How sure c's interval is: "(98.4 %)", "(>= 95.7 %)" where it was
    widened for pooled runs."""
    return "(%s%.1f %%)" % (">= " if RUNS in c.get("interval", "") else "",
                            100 * c["ci_coverage"])

def verdict_of(lo, hi, lower_better):
    """ahead or behind only when the interval [lo, hi] of ours/theirs
    excludes 1, else parity."""
    if lo > 1:
        return "behind" if lower_better else "ahead"
    if hi < 1:
        return "ahead" if lower_better else "behind"
    return "parity"

def compare(label, rows, key, lower_better, what, vs="theirs", vs_name=None,
            vs_key=None):
    """Pair by pair, ours key over vs vs_key (default key): the paired
    ratios, their median, its interval (runs_test) and the verdict,
    printed as one line under label and kept for summarize; returned as
    a dict. Verdict "none" with fewer than MIN_PAIRS complete pairs."""
    vs_key = vs_key or key
    o, t = by_pair(rows, "ours", key), by_pair(rows, vs, vs_key)
    paired = [(p, o[p] / t[p]) for p in distinct(rows, "pair")
              if p in o and p in t and t[p] > 0]
    ratios = [r for _, r in paired]
    c = {"what": what, "ours": key, "vs": vs_name or vs, "vs_column": vs_key,
         "lower_is_better": lower_better, "pairs": len(ratios),
         "ratios": ratios, "median": None, "ci95": None, "verdict": "none"}
    groups = run_groups(paired)
    c["interval"] = RANKS
    if len(groups) > 1:
        c.update(pair_runs=[run_of(p) for p, _ in paired],
                 interval=RANKS + RUNS)
    if len(ratios) >= MIN_PAIRS:
        lo, hi, pv, cover = runs_test([[g] for g in groups.values()]
                                      if groups else [[ratios]])
        c.update(median=statistics.median(ratios), ci95=[lo, hi], p=pv,
                 ci_coverage=cover, verdict=verdict_of(lo, hi, lower_better))
        text = "median %.3f, CI [%.3f, %.3f] %s" % (
            c["median"], lo, hi, coverage_text(c))
    else:
        text = "no verdict: %d complete pairs, %d wanted" % (len(ratios),
                                                            MIN_PAIRS)
    print("%s  %s ours/%s: %s (%d pairs%s)"
          % (" " * len(label), what, c["vs"], text, len(ratios),
             ", %d runs" % len(groups) if len(groups) > 1 else ""))
    runs = run_medians(paired)
    if runs:
        # Pairs of one run share its guest, which can move them all
        # alike: the runs disagreeing says what the interval cannot.
        c["run_medians"] = runs
        sizes = sorted({r["pairs"] for r in runs})
        meds = ["%.3f" % r["median"] if len(sizes) == 1 else
                "%.3f/%d" % (r["median"], r["pairs"]) for r in runs]
        head = "%s  each pooled run's median%s:" % (
            " " * len(label), " (%d pairs each)" % sizes[0]
            if len(sizes) == 1 else "/pairs")
        line = head
        for k, m in enumerate(meds):
            # A terminal's 100 columns: continue under the first median.
            if k and len(line) + 1 + len(m) > 100:
                print(line)
                line = " " * len(head)
            line += " " + m
        print(line)
    VERDICTS.append((label, c))
    return c

def run_of(pair):
    """The run of a pair pooled from runs (pool's RUN.PAIR), else None."""
    return pair.split(".", 1)[0] if "." in pair else None

def run_groups(paired):
    """paired's ratios by run, for pairs pooled from runs: {run: [ratios]}
    in order; {} for pairs of one run."""
    by_run = {}
    for p, r in paired:
        run = run_of(p)
        if run is not None:
            by_run.setdefault(run, []).append(r)
    return by_run if len(by_run) > 1 else {}

def run_medians(paired):
    """With pairs pooled from runs, each run's median of paired's (pair,
    ratio): [{run, pairs, median}]; [] for one run."""
    return [{"run": k, "pairs": len(v), "median": statistics.median(v)}
            for k, v in run_groups(paired).items()]

def verdict_line(label, c, family=0):
    """c's verdict in one line; with family (the report's count of
    verdicts), a second with the sign test's p and what Holm's step-down
    over them all leaves of it."""
    if c["median"] is None:
        detail = "%d complete pairs, %d wanted" % (c["pairs"], MIN_PAIRS)
    else:
        detail = "median %.3f, CI [%.3f, %.3f] %s %s 1" % (
            c["median"], c["ci95"][0], c["ci95"][1], coverage_text(c),
            "includes" if c["verdict"] == "parity" else "excludes")
    print("verdict %s: %s ours/%s: %s (%s; %s is better)"
          % (" ".join(label.split()), c["what"], c["vs"], c["verdict"],
             detail,
             "lower" if c["lower_is_better"] else "higher"))
    if family and "holm" in c:
        print("    p %.4f; over this report's %d verdicts (Holm, 5 %%): %s"
              % (c["p"], family, c["holm"]))

def table(label, mine, lines):
    """Per pair, in columns: which tool went first, then each of lines,
    (name, tool, column, format, scale); a run that failed is "-"."""
    pairs = distinct(mine, "pair")
    first = {r["pair"]: r["tool"] for r in mine if r["order"] == "1"}
    w = max([len(n) for n, *_ in lines] + [5])
    pad = " " * len(label)
    print("%s  %-*s %s" % (label, w, "pair", " ".join("%9s" % p
                                                      for p in pairs)))
    print("%s  %-*s %s" % (pad, w, "first", " ".join(
        "%9s" % first.get(p, "-")[:9] for p in pairs)))
    for name, tool, col, f, scale in lines:
        got = by_pair(mine, tool, col)
        print("%s  %-*s %s" % (pad, w, name, " ".join(
            "%9s" % (f % (got[p] * scale)) if p in got else "%9s" % "-"
            for p in pairs)))

def run_entry(size, mine, columns, head={}, tools=("ours", "theirs"),
              **extra):
    """The summary entry of a case: the items of head, bytes, iterations,
    pairs, the runs of each of tools for each of columns (TOOL_COL, in
    pair order), the items of extra, retries."""
    entry = dict(head, bytes=int(size), iterations=int(mine[0]["iters"]),
                 pairs=len(distinct(mine, "pair")))
    for col in columns:
        for tool in tools:
            got = values(mine, tool, col)
            if got or tool != "pingpong":
                entry[tool + "_" + col] = got
    entry.update(extra)
    entry["retries"] = sum(int(r["attempts"]) - 1 for r in mine)
    return entry

def counts(label, entry, mine, col, what):
    """A per-run count of both tools, where the TSV has column col (older
    ones do not): kept in entry as TOOL_COL, its medians printed under
    label as what."""
    if not mine or col not in mine[0]:
        return
    for tool in ("ours", "theirs"):
        entry[tool + "_" + col] = values(mine, tool, col)
    print("%s  %s: median ours %s  theirs %s" % (
        " " * len(label), what, fmt(med(entry["ours_" + col]), "%.0f"),
        fmt(med(entry["theirs_" + col]), "%.0f")))

def per_message(mine, tool, col, scale):
    """A column of tool's runs over each run's messages, times scale."""
    return [float(r[col]) * scale / int(r["iters"]) for r in mine
            if r["tool"] == tool and r.get(col)]

def sending_work(label, entry, mine):
    """The sending side's work a message in each tool's runs, where the TSV
    has the columns: the client's CPU (cpu_s) and the machine's deferred
    kernel work (tasklets, ksoftirqd_ms; see deferred_work), each a whole
    run's (setup too) over its measured messages.  Kept in entry as
    TOOL_client_us_per_msg, TOOL_tasklets_per_msg and
    TOOL_ksoftirqd_us_per_msg; their medians printed under label."""
    pad = " " * len(label)
    cols = (("cpu_s", "client_us_per_msg", 1e6, "%.1f"),
            ("tasklets", "tasklets_per_msg", 1, "%.3f"),
            ("ksoftirqd_ms", "ksoftirqd_us_per_msg", 1e3, "%.1f"))
    got = {}
    for col, key, scale, f in cols:
        if mine and col in mine[0]:
            for tool in ("ours", "theirs"):
                entry[tool + "_" + key] = per_message(mine, tool, col, scale)
            got[key] = "ours %s  theirs %s" % (
                fmt(med(entry["ours_" + key]), f),
                fmt(med(entry["theirs_" + key]), f))
    if "client_us_per_msg" in got:
        print("%s  a message: client CPU %s us" % (pad,
                                                   got["client_us_per_msg"]))
    if "tasklets_per_msg" in got:
        print("%s  a message, the kernel's deferred work: tasklets %s;"
              % (pad, got["tasklets_per_msg"]))
        print("%s    ksoftirqd CPU %s us" % (pad,
                                             got["ksoftirqd_us_per_msg"]))

def bandwidth(label, size, mine, name, **extra):
    """A bandwidth case (columns mbps and wall_mbps, higher is better)
    against name: the runs by pair, medians, paired ratios, interval and
    wall-clock check printed under label; its entry (run_entry, with the
    comparison under "ratio" and its verdict) returned."""
    entry = run_entry(size, mine, ("mbps", "wall_mbps"), **extra)
    pad = " " * len(label)
    table(label, mine, [("ours", "ours", "mbps", "%.2f", 1),
                        ("theirs", "theirs", "mbps", "%.2f", 1)])
    print("%s  median ours %s  theirs %s MB/s" % (
        pad, fmt(med(entry["ours_mbps"])), fmt(med(entry["theirs_mbps"]))))
    entry["ratio"] = compare(label, mine, "mbps", False, "bandwidth",
                             vs_name=name)
    entry["verdict"] = entry["ratio"]["verdict"]
    # Bytes over the whole run of each client, setup included: a check on
    # the clocks of the tools themselves, not the figure compared.
    print("%s  wall-clock check (setup included): ours %s  theirs %s"
          % (pad, fmt(med(entry["ours_wall_mbps"])),
             fmt(med(entry["theirs_wall_mbps"]))))
    return entry

def latency(label, size, mine, name, floor=None, head={}, **extra):
    """A latency case (columns p50_us, avg_us and wall_us, one-way usec;
    lower is better) against name, perftest (p50 against its t_typical),
    and, given floor, the name of the ping-pong, against that (our
    average against its average: all it prints): the runs by pair,
    medians, paired ratios, intervals and wall-clock bounds printed under
    label; its entry (run_entry, with the comparisons under "ratio" and
    "floor", and the verdict of the first) returned."""
    tools = ("ours", "theirs") + (("pingpong",) if floor else ())
    entry = run_entry(size, mine, ("p50_us", "avg_us", "wall_us"), head,
                      tools, **extra)
    pad = " " * len(label)
    lines = [("ours p50", "ours", "p50_us", "%.2f", 1),
             ("theirs p50", "theirs", "p50_us", "%.2f", 1),
             ("ours avg", "ours", "avg_us", "%.2f", 1),
             ("theirs avg", "theirs", "avg_us", "%.2f", 1)]
    if floor:
        lines.append(("pingpong avg", "pingpong", "avg_us", "%.2f", 1))
    table(label, mine, lines)
    m = lambda t, c: fmt(med(entry.get(t + "_" + c, [])))
    print("%s  median p50: ours %s  theirs %s;  avg: ours %s  theirs %s%s"
          % (pad, m("ours", "p50_us"), m("theirs", "p50_us"),
             m("ours", "avg_us"), m("theirs", "avg_us"),
             "  pingpong %s" % m("pingpong", "avg_us") if floor else ""))
    # The wall-clock bound: a check on the clocks of the tools.
    print("%s  wall-clock bound (setup included): ours %s  theirs %s%s"
          % (pad, m("ours", "wall_us"), m("theirs", "wall_us"),
             "  pingpong %s" % m("pingpong", "wall_us") if floor else ""))
    entry["ratio"] = compare(label, mine, "p50_us", True, "p50",
                             vs_name=name)
    entry["verdict"] = entry["ratio"]["verdict"]
    if floor:
        entry["floor"] = compare(label, mine, "avg_us", True,
                                 "avg (floor, avg vs avg)", "pingpong",
                                 floor)
    return entry

def runs_test(runs, resamples=RESAMPLES, seed=SEED, level=LEVEL):
    """(lo, hi, p, coverage) for the median of paired ratios, runs being
    [[ratios of a case] a case] a run: median_ci and sign_p of all the
    ratios together (sizes pooled: under parity each ratio is as likely
    above 1 as below, so the ranks hold their level) and coverage, that
    interval's.  Pairs pooled from several runs share each run's guest,
    which can move them all alike: then the interval is also widened to
    hold the percentile interval of a bootstrap that draws runs first,
    then each drawn run's pairs case by case, and p is the larger of the
    two tests' (so coverage is a floor)."""
    flat = [x for run in runs for case in run for x in case]
    lo, hi = median_ci(flat, level)
    p = sign_p(flat)
    if len(runs) > 1:
        rng = random.Random(seed)
        meds = []
        for _ in range(resamples):
            drawn = [runs[int(rng.random() * len(runs))] for _ in runs]
            meds.append(statistics.median(
                [s[int(rng.random() * len(s))] for run in drawn
                 for s in run for _ in s] or [1.0]))
        meds.sort()
        blo, bhi = percentile_interval(meds, level)
        lo, hi = min(lo, blo), max(hi, bhi)
        side = min(sum(1 for m in meds if m <= 1), sum(1 for m in meds
                                                       if m >= 1))
        p = max(p, min(1.0, 2.0 * side / len(meds)))
    return lo, hi, p, median_rank(len(flat), level)[1]

def runs_ci(runs, resamples=RESAMPLES, seed=SEED, level=LEVEL):
    """runs_test's interval alone."""
    return runs_test(runs, resamples, seed, level)[:2]

def percentile_interval(meds, level):
    """The LEVEL percentile interval of sorted resampled medians."""
    resamples = len(meds)
    alpha = (1 - level) / 2
    lo = meds[int(math.floor(alpha * resamples))]
    hi = meds[min(resamples, int(math.ceil((1 - alpha) * resamples))) - 1]
    return lo, hi

def holm(cases, level=1 - LEVEL):
    """Holm's step-down over a report's comparisons (dicts with "p" and
    "verdict"): each gets "holm", its verdict where its test still
    rejects after the correction for all of them, else "parity".  The
    chance that any parity case reads ahead or behind stays under level
    whatever the cases' dependence."""
    tested = sorted((c for c in cases if c.get("p") is not None),
                    key=lambda c: c["p"])
    m, going = len(tested), True
    for i, c in enumerate(tested):
        going = going and c["p"] <= level / (m - i)
        c["holm"] = c["verdict"] if going else "parity"
    return m

def pooled(verdicts):
    """Per mode (a label less its trailing size, "event 64 B" -> "event")
    and comparison, with two or more sizes that have verdicts: every
    ratio of every size together, their median and runs_test. A gap of a
    few percent that 7-11 pairs of one size leave at parity shows here."""
    groups = {}
    for label, c in verdicts:
        words = label.split()
        if c["median"] is None or len(words) < 3 or words[-1] != "B":
            continue
        k = (" ".join(words[:-2]), c["what"], c["vs"],
             c["lower_is_better"])
        groups.setdefault(k, []).append(c)
    out = []
    for (mode, what, vs, lower_better), cs in groups.items():
        if len(cs) < 2:
            continue
        strata = [c["ratios"] for c in cs]
        runs = runs_by_case(cs)
        lo, hi, pv, cover = runs_test(runs)
        out.append(("%s (all sizes)" % mode,
                    {"what": what, "vs": vs, "mode": mode,
                     "lower_is_better": lower_better,
                     "pairs": sum(len(s) for s in strata),
                     "sizes": len(strata),
                     "median": statistics.median(
                         [x for s in strata for x in s]),
                     "ci95": [lo, hi], "p": pv, "ci_coverage": cover,
                     "interval": RANKS + ", sizes pooled" +
                     (RUNS + " size by size" if len(runs) > 1 else ""),
                     "verdict": verdict_of(lo, hi, lower_better)}))
    return out

def runs_by_case(cs):
    """runs_ci's runs from comparisons cs (one a size): [[ratios of a
    size] a run]; one run when the pairs are not pooled from runs."""
    if not all("pair_runs" in c for c in cs):
        return [[c["ratios"] for c in cs]]
    ids = distinct([{"run": k} for c in cs for k in c["pair_runs"]], "run")
    return [[[x for x, k in zip(c["ratios"], c["pair_runs"]) if k == run]
             for c in cs] for run in ids]

def summarize(tsv, out, title, key, case, meta, cases="sizes"):
    """The whole report of the runs in tsv: title; for each value of
    column key, in order, case(value, its rows) -> (label, entry),
    printing its part; then every verdict (compare); the JSON, to out: the
    items of meta, the pairs, the bootstrap, and the entries under the
    name cases."""
    rows = load(tsv)
    # Only this report's verdicts: a process may make several.
    del VERDICTS[:]
    print(title)
    print("%d pairs, the order rotating; ratios ours/theirs pair by pair,"
          " their median and its interval" % len(distinct(rows, "pair")))
    runs = len({run_of(p) for p in distinct(rows, "pair")} - {None})
    print("(order statistics, at least 95 %%%s); verdict ahead or behind"
          " only when it excludes 1" % (
              ", widened to a bootstrap of the runs" if runs > 1 else ""))
    summary = [case(v, [r for r in rows if r[key] == v])
               for v in distinct(rows, key)]
    pools = pooled(VERDICTS)
    family = holm([c for _, c in VERDICTS + pools])
    print("Each verdict alone: a parity case reads ahead or behind in at"
          " most 5 % of reports;")
    print("over %d verdicts chance alone gives up to %.1f such, so each"
          " also says what Holm's" % (family, 0.05 * family))
    print("step-down over all of them keeps of it (cqperf(7), VERDICTS).")
    for label, c in VERDICTS + pools:
        verdict_line(label, c, family)
    json.dump(dict(meta, pairs=len(distinct(rows, "pair")),
                   interval={"level": LEVEL,
                             "statistic": "median of the paired ratios"
                                          " ours/theirs",
                             "interval": "order statistics (sign test)",
                             "widened": "percentile bootstrap, %d resamples"
                                        " of the runs, then their pairs,"
                                        " seed %d" % (RESAMPLES, SEED)
                                        if runs > 1 else None,
                             "multiplicity": "Holm's step-down over %d"
                                             " verdicts" % family},
                   pooled=[c for _, c in pools],
                   **{cases: [e for _, e in summary]}),
              open(out, "w"), indent=2)


def work_per_message(rows, tools, iters):
    """[{case, TOOL: instructions per message or None, ratio}] from
    work.tsv's rows (Bench.work): the Ir of the run of iters[1] messages
    less that of iters[0], over the difference of the counts."""
    lo, hi = iters
    out = []
    for case in distinct(rows, "case"):
        e = {"case": case}
        for tool in tools:
            ir = {r["iters"]: r["ir"] for r in rows
                  if r["case"] == case and r["tool"] == tool}
            a, b = ir.get(str(lo), ""), ir.get(str(hi), "")
            e[tool] = ((int(b) - int(a)) / (hi - lo) if a.isdigit() and
                       b.isdigit() else None)
        e["ratio"] = (e["ours"] / e["theirs"] if e.get("ours") and
                      e.get("theirs") else None)
        out.append(e)
    return out


def work_report(tsv, out, tools, iters):
    """The work figure of work.tsv: printed, and into the summary at out
    as "work"."""
    with open(tsv) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    entries = work_per_message(rows, tools, iters)
    print("user-space instructions per message (callgrind Ir of the client"
          " process; runs of %d and %d messages, the difference / %d):"
          % (iters[0], iters[1], iters[1] - iters[0]))
    for e in entries:
        print("  %-12s %s  ours/theirs %s" % (e["case"], "  ".join(
            "%s %s" % (t, fmt(e[t], "%.0f")) for t in tools),
            fmt(e["ratio"], "%.3f")))
    with open(out) as f:
        summary = json.load(f)
    summary["work"] = {"unit": "user-space instructions per message",
                       "source": "valgrind --tool=callgrind, client",
                       "iters": list(iters), "cases": entries}
    with open(out, "w") as f:
        json.dump(summary, f, indent=2)


# The gate looks at a figure twice at most (after --min-pairs and after
# --max-pairs): each look at GATE_LEVEL keeps its false alarms, for a
# figure sitting at its limit, under (1 - GATE_LEVEL) / 2 a look, 2.5 %
# for both (Bonferroni); the rank intervals' own coverage makes it 1.4 %
# at 7 and 11 pairs.
GATE_LEVEL = 0.975

def gate_looks(min_pairs, max_pairs, record):
    """The pair counts at which the gate judges a figure: --min-pairs,
    then --max-pairs while undecided; --record measures --max-pairs."""
    return (max_pairs,) if record else (min_pairs, max_pairs)

def judge_ratio(ratios, base, tol, lower_better, level=GATE_LEVEL):
    """The gate's verdict on paired ratios ours/theirs against BASE (the
    edge of the recorded ratio's interval), with tolerance TOL (0.10):
    "regressed" only when the whole median_ci at level lies beyond
    BASE * (1 - TOL) (rates) or BASE * (1 + TOL) (latencies), "ok" when
    the whole interval is on the good side, else "undecided" (not a
    regression: the pairs cannot tell).  Returns (verdict, median, lo,
    hi, limit)."""
    lo, hi = median_ci(ratios, level)
    m = statistics.median(ratios)
    if lower_better:
        limit = base * (1 + tol)
        v = "regressed" if lo > limit else "ok" if hi <= limit else \
            "undecided"
    else:
        limit = base * (1 - tol)
        v = "regressed" if hi < limit else "ok" if lo >= limit else \
            "undecided"
    return v, m, lo, hi, limit


def _main(argv):
    if len(argv) == 2 and argv[0] == "pin":
        print(" ".join(pin(int(argv[1]))[0]))
        return 0
    if len(argv) >= 4 and argv[0] == "perftest":
        with open(argv[1], errors="replace") as f:
            text = f.read()
        try:
            print(*(perftest_value(text, h, argv[2]) for h in argv[3:]))
        except PerftestError as e:
            print("%s: %s" % (argv[1], e), file=sys.stderr)
            return 1
        return 0
    print(__doc__.split("Run as a program")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
