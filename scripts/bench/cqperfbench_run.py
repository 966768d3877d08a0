# SPDX-License-Identifier: BSD-2-Clause
"""cqperfbench_run: a side-by-side benchmark and its command line
(scripts/bench/cqperf-bench, run as scripts/bench/bench-*.sh).

Ours and its counterparts (perftest's, and for latency rdma-core's
minimal ping-pong as a floor) run in one soft-RoCE session, in
BENCH_PAIRS pairs: a pair is one run of each tool, the order rotating
from pair to pair so that drift in the noisy, TCG-emulated guest cancels.
A failed run is retried.  The report (cqperfbench.summarize) takes per
pair the ratio ours/theirs, their median, its interval from the order
statistics (cqperfbench.median_ci) and a verdict ahead, parity or behind.

A benchmark is a subclass of Bench (BwBench, LatBench): its cases from
its settings (specs; cqperfbench_cases), one run of each tool (run_ours,
run_theirs, run_pingpong, through self.peers: cqperfbench_peers; the
figures, or RunFailed), the TSV columns (columns, record) and the
report; it may redefine plausible and describe.  cqperfbench_runner
runs the pairs.  Bench.main is the command line: the outer part checks
the arguments and hands the inner part (--inner PAIRS CASE:ITERS...) to
soft-RoCE (scripts/guest/softroce-run.sh), or makes the report of earlier
runs again (--report TSV).  Tested by tests/test_bench_harness.py.
"""
import inspect
import os
import re
import shutil
import signal
import subprocess
import sys

from cqperfbench import pin, pool, summarize, work_report
from cqperfbench_cases import SETTINGS, env_pairs, parse_spec, \
    settings_help, spec_text
from cqperfbench_peers import PORTS, Peers, Place
from cqperfbench_runner import Runner
from cqperflib import UsageError, arg_parser
from cqperfproc import RUN_TIMEOUT, Processes, RunFailed, exit_text

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))

# Seconds: the whole session, to which each run adds RUN_SHARE (slow
# under TCG); a run's own is cqperfproc's RUN_TIMEOUT.
SESSION_BASE = 1800
RUN_SHARE = 30
# What the guest hands on from the host's environment (the inner part
# reads its cases and tools from them).
PASS_ENV = "BENCH_NO_PIN BENCH_VERB"


# ---- the benchmark ----

class Bench:
    """One side-by-side benchmark: its tools, plausibility, report and
    the outer/inner split; subclasses give the cases, the runs, the
    columns and the report's cases."""
    # scripts/bench-NAME.sh, which is `cqperf-bench NAME`; the default
    # output folder build/bench-NAME.
    name = None
    # build/src/OURS; THEIRS, perftest's unless said (None: theirs is
    # ours too); the ping-pong FLOOR, as the third tool "pingpong".
    ours_tool = theirs_tool = floor_tool = None
    theirs_hint = "scripts/deps.sh installs perftest"
    # Commands needed besides those: name -> the hint when missing.
    more_cmds = {}
    # The TSV: the name of the first column (what a case is), and those
    # that record fills.
    case_column = "size"
    columns = ()
    run_timeout = RUN_TIMEOUT
    # Server and client each on a CPU of their own (cqperfbench.pin).
    pinned = True
    # The report: its first line, the summary's own items, and the name
    # of the summary's list of cases.
    title = ""
    meta = {}
    cases_key = "cases"
    # Modes whose cases also get the work figure (Bench.work): where a
    # client sleeps, or never polls its CQ empty, so that spinning does
    # not inflate it; () for none.
    work_modes = ()
    # The two message counts whose difference leaves setup out.
    work_iters = (300, 1300)
    # Its SETTINGS, as flags.
    settings = ("pairs", "no-pin")

    def __init__(self, env=None, top=TOP, here=HERE):
        self.env = os.environ if env is None else env
        self.top, self.here = top, here
        self.prog = "bench-%s.sh" % self.name
        self.ports = dict(PORTS)
        self.place = self.procs = self.peers = None
        # Where deferred_work reads the machine's counters.
        self.proc = "/proc"

    def say(self, msg):
        print("%s: %s" % (self.prog, msg), file=sys.stderr, flush=True)

    @property
    def tools(self):
        """The tools of a pair, in the order of the first."""
        return ("ours", "theirs") + (("pingpong",) if self.floor_tool
                                     else ())

    def needs(self):
        """(files under the tree that must be executable, {command: hint
        when missing})."""
        cmds = {}
        if self.theirs_tool:
            cmds[self.theirs_tool] = self.theirs_hint
        if self.floor_tool:
            for c in (self.floor_tool, "ibv_devinfo"):
                cmds[c] = "scripts/deps.sh installs ibverbs-utils"
        cmds.update(self.more_cmds)
        if self.work_wanted():
            cmds["valgrind"] = "scripts/deps.sh installs valgrind"
        return ["build/src/" + self.ours_tool], cmds

    def work_wanted(self):
        """Whether this run measures the work figure (BENCH_WORK=0:
        no)."""
        return bool(self.work_modes) and self.env.get("BENCH_WORK") != "0"

    # ---- hooks ----

    def specs(self):
        """[(CASE, ITERS)] from the environment; UsageError on bad
        values."""
        raise NotImplementedError

    def run_ours(self, case, iters, log):
        """One run of ours on case: its figures, or RunFailed."""
        raise NotImplementedError

    def run_theirs(self, case, iters, log):
        """One run of the tool ours is compared with."""
        raise NotImplementedError

    def run_pingpong(self, case, iters, log):
        """One run of the floor (floor_tool), where the bench has one."""
        raise NotImplementedError

    def describe(self, case):
        """CASE in words, for messages: SIZE or MODE-SIZE."""
        mode, _, size = case.rpartition("-")
        return "%s %s B" % (mode, size) if mode else "%s B" % case

    def plausible(self, tool, case, iters, figs):
        """Raise RunFailed unless the figures agree with the wall clock;
        may add the wall-clock figure to figs for the record."""

    def record(self, tool, case, iters, pair, figs):
        """{column: value} of a run that got its figures; its progress
        line to stderr."""
        raise NotImplementedError

    def case_report(self, case, mine):
        """(label, summary entry) of a case from its rows of runs.tsv,
        its part of the report printed (cqperfbench's bandwidth,
        latency...)."""
        raise NotImplementedError

    def report(self, tsv, out):
        """The report of the runs in tsv to stdout, the summary to out;
        with the work figure when work.tsv lies beside tsv."""
        summarize(tsv, out, self.title, self.case_column, self.case_report,
                  self.meta, cases=self.cases_key)
        work = os.path.join(os.path.dirname(tsv), "work.tsv")
        if os.path.exists(work):
            work_report(work, out, self.tools, self.work_iters)

    # ---- the inner part: on soft-RoCE ----

    def inner(self, pairs, specs):
        """Every run of every case, pairs pairs each, into runs.tsv, then
        the report; 1 when a run failed after its retries."""
        self.place = Place(self.env)
        pins = [pin(cpu)[0] if self.pinned else [] for cpu in (0, 1)]
        self.procs = Processes(self.run_timeout, *pins)
        self.peers = Peers(self.place, self.procs, self)
        runner = Runner(self)
        try:
            failed = runner.pairs(pairs, specs)
            if self.work_wanted():
                runner.work(specs)
        finally:
            self.procs.stop()
        self.report(runner.tsv, os.path.join(self.place.out,
                                             "summary.json"))
        return 1 if failed else 0

    def run(self, tool, case, iters, log):
        """One run of tool ("ours", "theirs" or "pingpong"): its figures,
        or RunFailed."""
        hooks = {"ours": self.run_ours, "theirs": self.run_theirs,
                 "pingpong": self.run_pingpong}
        return hooks[tool](case, iters, log)

    # ---- plausibility: perftest converts CPU cycles to time with a
    # sampled cycle rate that TCG sometimes gets badly wrong (it has
    # printed 0.00 MB/s): treat that as a failed run ----

    def plausible_bw(self, size, iters, figs):
        """The reported bandwidth figs["mbps"] cannot be below size *
        iters bytes over the client's whole wall time, which goes to
        figs["wall_mbps"]."""
        wall = "%.4f" % (int(size) * iters / (figs["wall_us"] / 1e6)
                         / 1048576)
        figs["wall_mbps"] = wall
        if float(figs["mbps"]) < 0.99 * float(wall):
            raise RunFailed("reported %s MB/s is below the wall-clock bound"
                            " %s" % (figs["mbps"], wall))

    def plausible_lat(self, iters, figs):
        """The one-way average figs["avg"] (and the p50, where the tool
        reports one) cannot be more than the client's whole run over iters
        exchanges, each `ways` ways (a READ's figure is the whole
        operation: 1); that bound goes to figs["wall_lat"]."""
        wall = "%.3f" % (figs["wall_us"] / iters / self.ways)
        figs["wall_lat"] = wall
        avg, p50 = float(figs["avg"]), figs.get("p50")
        if avg > 1.01 * float(wall) or avg <= 0 or \
                (p50 not in ("", None) and float(p50) <= 0):
            raise RunFailed(
                "reported average %s us%s is outside (0, wall-clock bound"
                " %s us]" % (figs["avg"], " (p50 %s us)" % p50
                             if p50 not in ("", None) else "", wall))

    # ---- the command line ----

    def main(self, argv):
        """The exit status of `bench-NAME.sh ARGS`: 0 whatever the
        verdict, 1 when a run failed after its retries (or something
        needed is missing), 2 on usage errors, else softroce-run.sh's."""
        try:
            if argv[:1] == ["--inner"]:
                return self.inner_main(argv[1:])
            a, given = self.parse(argv)
            # The flags' settings over the environment's: a bench made
            # with them (its cases and tools follow from its settings).
            bench = type(self)(dict(self.env, **given), self.top,
                               self.here) if given else self
            if a.report:
                return bench.report_again(a.report, a.out)
            return bench.outer(a.out, a.timeout)
        except UsageError as e:
            self.say(str(e))
            return 2
        except OSError as e:
            self.say("%s: %s" % (e.filename or "", e.strerror or e))
            return 1

    def help_text(self):
        """--help: the benchmark's docstring, then its options."""
        doc = inspect.cleandoc(self.__doc__ or "")
        return "Usage: %s [OPTIONS]\n\n%s\n%s" % (
            self.prog, doc, settings_help(self.settings))

    def parse(self, argv):
        """(the arguments, {BENCH_* variable: value} of the settings
        given as flags)."""
        p = arg_parser(self.prog, self.help_text())
        p.add_argument("--out")
        p.add_argument("--timeout")
        p.add_argument("--report", action="append", default=[])
        for n in self.settings:
            if SETTINGS[n][1]:
                p.add_argument("--" + n)
            else:
                p.add_argument("--" + n, action="store_true")
        a = p.parse_args(argv)
        given = {}
        for n in self.settings:
            v = getattr(a, n.replace("-", "_"))
            if v not in (None, False):
                given[SETTINGS[n][0]] = "1" if v is True else v
        return a, given

    def report_again(self, reports, out):
        """--report TSV: the report of an earlier run again, here and now
        (no soft-RoCE), summary.json into out, else beside TSV.  Given
        more than once: those runs' pairs pooled into one report
        (out/runs-pooled.tsv, pairs renamed RUN.PAIR), each run's median
        beside the pooled one; it wants out."""
        for tsv in reports:
            if not os.path.isfile(tsv):
                raise UsageError("--report: no file %s" % tsv)
        if len(reports) > 1 and not out:
            raise UsageError("--report given %d times: pooling them wants"
                             " --out DIR" % len(reports))
        out = out or os.path.dirname(reports[0]) or "."
        os.makedirs(out, exist_ok=True)
        tsv = reports[0]
        if len(reports) > 1:
            tsv = os.path.join(out, "runs-pooled.tsv")
            pool(reports, tsv)
        try:
            self.report(tsv, os.path.join(out, "summary.json"))
        except (ValueError, KeyError, IndexError) as e:
            raise UsageError("%s: not runs of %s (%s: %s)" % (
                tsv, self.prog, type(e).__name__, e))
        return 0

    def missing(self):
        """What the run needs and this machine lacks, in words, or None."""
        files, cmds = self.needs()
        path = self.env.get("PATH", os.defpath)
        for f in files:
            if not os.access(os.path.join(self.top, f), os.X_OK):
                return "%s missing (build first)" % f
        for c, hint in cmds.items():
            if not shutil.which(c, path=path):
                return "%s missing (%s)" % (c, hint)
        return None

    def outer(self, out, timeout):
        """Check the settings and hand the runs to soft-RoCE: the guest's
        exit status (softroce-run.sh's)."""
        pairs = env_pairs(self.env, self.say)
        specs = self.specs()
        # The whole session's deadline: every run may take a while.
        if timeout is None:
            timeout = str(SESSION_BASE + RUN_SHARE * len(specs) * pairs *
                          len(self.tools))
        if not re.fullmatch("[0-9]+", timeout):
            raise UsageError("--timeout wants seconds")
        lack = self.missing()
        if lack:
            self.say(lack)
            return 1
        # Without --out the results would vanish with the guest: a folder
        # of the host's (not under /tmp, which the guest hides).
        out = os.path.abspath(out or os.path.join(
            self.top, "build", "bench-" + self.name))
        os.makedirs(out, exist_ok=True)
        shutil.rmtree(os.path.join(out, "logs"), ignore_errors=True)
        rc = self.softroce(out, timeout, pairs, specs)
        self.say("results in %s (summary.json, runs.tsv, logs/)" % out)
        return rc

    def softroce(self, out, timeout, pairs, specs):
        """scripts/guest/softroce-run.sh running the inner part, from the tree
        (the guest runs commands in our cwd and hides /tmp)."""
        env = dict(self.env)
        # The guest starts from a clean environment.
        env["CQPERF_PASS_ENV"] = env.get("CQPERF_PASS_ENV", "") + \
            " " + PASS_ENV
        run = os.path.join(self.here, "..", "guest", "softroce-run.sh")
        cmd = [run, "--timeout", timeout, "--out", out, "--",
               os.path.join(self.here, "cqperf-bench"), self.name,
               "--inner", str(pairs)] + [spec_text(s) for s in specs]
        try:
            rc = subprocess.run(cmd, cwd=self.top, env=env).returncode
        except OSError as e:
            self.say("softroce-run.sh did not start: %s" % e.strerror)
            return 1
        except KeyboardInterrupt:
            return 130
        if rc != 0:
            # 1: a run failed (said above); 124: the deadline; 125: the
            # guest (softroce-run.sh says which).
            self.say("softroce-run.sh %s" % exit_text(rc, int(timeout)))
        return 128 - rc if rc < 0 else rc

    def inner_main(self, argv):
        """--inner PAIRS CASE:ITERS...: the runs (in the guest)."""
        if not argv or not re.fullmatch("[0-9]+", argv[0]) or \
                int(argv[0]) < 1:
            raise UsageError("--inner wants PAIRS CASE:ITERS...")
        specs = [parse_spec(s) for s in argv[1:]]
        # Never leave a server behind, a signal too (inner's finally).
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
        try:
            return self.inner(int(argv[0]), specs)
        except KeyboardInterrupt:
            return 130


class BwBench(Bench):
    """Bandwidth, with perftest's settings for ours to match: tx depth
    128 (its default) and a signaled send every 100 (-Q 100)."""
    tx_depth = 128
    signal_every = 100

    def plausible(self, tool, case, iters, figs):
        self.plausible_bw(case.rpartition("-")[2], iters, figs)


class LatBench(Bench):
    """Latency, with ib_send_lat's defaults for ours to match: tx depth 1
    ("TX depth : 1" in its header) and no warm-up (--perform_warm_up is
    for its BW tests only: every -n exchange is measured)."""
    tx_depth = 1
    warmup = 0
    # What one reported figure spans of an exchange: half (one-way).
    ways = 2

    def plausible(self, tool, case, iters, figs):
        self.plausible_lat(iters, figs)
