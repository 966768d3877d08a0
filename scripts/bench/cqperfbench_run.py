# SPDX-License-Identifier: BSD-2-Clause
"""cqperfbench_run: the harness of the side-by-side benchmarks
(scripts/bench/cqperf-bench, run as scripts/bench-*.sh).

Ours and its counterparts (perftest's, and for latency rdma-core's
minimal ping-pong as a floor) run in one soft-RoCE session, in
BENCH_PAIRS pairs: a pair is one run of each tool, the order rotating
from pair to pair so that drift in the noisy, TCG-emulated guest cancels.
A failed run is retried.  The report (cqperfbench.summarize) takes per
pair the ratio ours/theirs, their median, its interval from the order
statistics (cqperfbench.median_ci) and a verdict ahead, parity or behind.

A benchmark is a subclass of Bench (BwBench, LatBench): its cases from
the environment (specs), one run of each tool (run_ours, run_theirs,
run_pingpong: the figures, or RunFailed), the TSV columns (columns,
record) and the report; it may redefine plausible and describe.
Bench.main is the command line: the outer part checks the arguments and
hands the inner part (--inner PAIRS CASE:ITERS...) to soft-RoCE
(scripts/guest/softroce-run.sh), or makes the report of earlier runs again
(--report TSV).  Tested by tests/test_bench_harness.py.
"""
import inspect
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap

from cqperfbench import COLUMNS, MIN_PAIRS, PerftestError, perftest_value, \
    pin, pool, summarize, work_report
from cqperflib import UsageError, arg_parser, is_num, lookup
from cqperfproc import RUN_TIMEOUT, Processes, RunFailed, exit_text, \
    read_text, write_text

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))

# Ports: ours, perftest's default, and one for rdma-core's ping-pong
# (whose default is perftest's).
PORTS = {"ours": 18600, "theirs": 18515, "pingpong": 18700}
# Pairs of runs: at least MIN_PAIRS, so that the interval of the median of
# the paired ratios can exclude 1 at all.
PAIRS_DEFAULT = 7
PAIRS_MAX = 1000
ATTEMPTS = 3
# Seconds: the whole session, to which each run adds RUN_SHARE (slow
# under TCG); a run's own is cqperfproc's RUN_TIMEOUT.
SESSION_BASE = 1800
RUN_SHARE = 30
MODES = ("poll", "event")
# On UD, with its default rx depth, perftest posts one receive per
# iteration up to 16000 (UC_MAX_RX; "RX depth" in its server's header).
PERFTEST_UD_MAX_RX = 16000
# Inline: perftest's bandwidth tests use none by default, and on a device
# it does not recognise (rxe) it grants none even when -I asks for more
# ("Max inline data : 0[B]"; perftest_like checks it): ours uses none.
INLINE = 0
# What the guest hands on from the host's environment (the inner part
# reads its cases and tools from them).
PASS_ENV = "BENCH_NO_PIN BENCH_VERB"


# The settings of a benchmark: a flag each, whose default is its BENCH_*
# variable, so that CI and older scripts that set those work on.  Each
# benchmark lists those it takes (Bench.settings); --help shows them.
# name: (variable, metavar or None for a switch, what it sets)
SETTINGS = {
    "pairs": ("BENCH_PAIRS", "N",
              "pairs of runs, one run of each tool a pair, which goes "
              "first alternating (default 7, from 7 to 1000; BENCH_RUNS "
              "is its deprecated alias)"),
    "modes": ("BENCH_MODES", "MODES",
              'the completion modes measured: "poll", "event" or both '
              "(default both)"),
    "verb": ("BENCH_VERB", "VERB",
             "the verb of ours, against perftest's tool for it (default "
             "send); --report wants the run's"),
    "rates": ("BENCH_RATES", "RATES",
              "the offered rates in messages/s, blank-separated (default "
              '"1000 5000 20000")'),
    "connections": ("BENCH_CONNECTIONS", "N",
                    "connections a run (default 500)"),
    "work": ("BENCH_WORK", "0|1",
             "0: no work figure (each tool's client once more under "
             "callgrind after the pairs; default 1)"),
    "no-pin": ("BENCH_NO_PIN", None,
               "no pinning (default: both tools' servers on CPU 0, "
               "clients on CPU 1)"),
}


def settings_help(names):
    """The --help text of the settings names."""
    opts = [("--out DIR", "where summary.json, runs.tsv and logs/ go "
             "(default build/bench-NAME)"),
            ("--timeout SEC", "the whole session's (default 1800 s and 30 s "
             "a run)"),
            ("--report TSV", "no runs: the report of an earlier runs.tsv "
             "again (more than once: pooled, which wants --out)")]
    for n in names:
        var, meta, what = SETTINGS[n]
        opts.append(("--%s %s" % (n, meta) if meta else "--" + n,
                     "%s; %s" % (what, var)))
    out = ["", "Options (a setting's default is its environment variable):"]
    for flag, what in opts:
        out += textwrap.wrap(what, 79, initial_indent="  %-16s" % flag,
                             subsequent_indent=" " * 18)
    out += [""] + textwrap.wrap(
        "Exit status: 0 whatever the verdict (this is a measurement), 1 "
        "when a run still fails after its retries, 2 on usage errors, else "
        "softroce-run.sh's.", 79)
    return "\n".join(out) + "\n"


def rx_depth_for(iters):
    """The receive queue that matches perftest's on UD."""
    return min(iters, PERFTEST_UD_MAX_RX)


def words(*ws):
    """A command's arguments, numbers as text."""
    return [str(w) for w in ws]


def split_case(case):
    """(MODE, SIZE) of a MODE-SIZE case."""
    mode, _, size = case.rpartition("-")
    return mode, size


def event_flag(mode):
    """perftest's and the ping-pongs' flag for MODE event: -e."""
    return ["-e"] if mode == "event" else []


# ---- the cases, from the environment ----

def env_count(env, var, default, least):
    """env[var], else default, as a count of at least least."""
    text = env.get(var) or str(default)
    if not re.fullmatch("[0-9]+", text) or int(text) < least:
        raise UsageError("%s wants a count >= %d" % (var, least))
    return int(text)


def env_pairs(env, say):
    """BENCH_PAIRS, else its deprecated alias BENCH_RUNS, else the
    default: a count from MIN_PAIRS to PAIRS_MAX."""
    var, text = "BENCH_PAIRS", env.get("BENCH_PAIRS", "")
    if not text and env.get("BENCH_RUNS"):
        var, text = "BENCH_RUNS", env["BENCH_RUNS"]
        say("BENCH_RUNS is deprecated, use BENCH_PAIRS (pairs of runs)")
    text = text or str(PAIRS_DEFAULT)
    if not re.fullmatch("[0-9]{1,9}", text) or \
            not MIN_PAIRS <= int(text) <= PAIRS_MAX:
        raise UsageError("%s=%s: BENCH_PAIRS wants a count from %d to %d"
                         % (var, text, MIN_PAIRS, PAIRS_MAX))
    return int(text)


def env_modes(env):
    """BENCH_MODES' words (poll and/or event), else both."""
    modes = (env.get("BENCH_MODES") or "").split() or list(MODES)
    for mode in modes:
        if mode not in MODES:
            raise UsageError("BENCH_MODES wants poll and/or event, not '%s'"
                             % mode)
    return modes


def specs_by_size(env, least, sizes):
    """[(SIZE, ITERS)] for each (SIZE, default ITERS) of sizes, ITERS from
    BENCH_ITERS_SIZE when set, at least least."""
    return [(str(size), env_count(env, "BENCH_ITERS_%s" % size, iters,
                                  least))
            for size, iters in sizes]


def specs_by_mode_size(env, least, sizes):
    """specs_by_size's cases as MODE-SIZE, for each mode of env_modes."""
    return [("%s-%s" % (mode, size), iters) for mode in env_modes(env)
            for size, iters in specs_by_size(env, least, sizes)]


def spec_text(spec):
    return "%s:%d" % spec


def parse_spec(text):
    """(CASE, ITERS) of CASE:ITERS, as the inner part is given it."""
    case, _, iters = text.partition(":")
    if not case or not re.fullmatch("[0-9]+", iters):
        raise UsageError("--inner: '%s' is not CASE:ITERS" % text)
    return case, int(iters)


def pair_order(tools, pair):
    """The tools in the order they run in pair (from 1): with two, the
    first alternates; with three, each takes each place once in every
    three pairs.  Linear drift cancels over each such round."""
    n = len(tools)
    return [tools[(pair - 1 + k) % n] for k in range(n)]


def schedule(specs, pairs, tools):
    """(CASE, ITERS, PAIR, ORDER, TOOL) of every run, in order: each
    case's pairs in turn."""
    for case, iters in specs:
        for pair in range(1, pairs + 1):
            for order, tool in enumerate(pair_order(tools, pair), 1):
                yield case, iters, pair, order, tool


# ---- reading what the tools wrote ----

def deferred_work(proc="/proc"):
    """The kernel work the machine has deferred so far, whoever caused it:
    (its tasklet softirqs on every CPU, from PROC/softirqs; the CPU its
    ksoftirqd threads ran, in ns, from PROC/PID/schedstat), or None where
    /proc/softirqs has no TASKLET line.  rxe runs its CQ notifications
    (each wakeup of a sleeping receiver) and the work it defers as
    tasklets, which the kernel hands to ksoftirqd when they pile up."""
    tasklets = first_match(r"^ *TASKLET: *([0-9 ]+)$",
                           read_text(os.path.join(proc, "softirqs")))
    if tasklets is None:
        return None
    ns = 0
    for pid in os.listdir(proc):
        task = os.path.join(proc, pid)
        if not pid.isdigit() or not read_text(
                os.path.join(task, "comm")).startswith("ksoftirqd/"):
            continue
        run = read_text(os.path.join(task, "schedstat")).split()[:1]
        ns += int(run[0]) if run and run[0].isdigit() else 0
    return sum(int(x) for x in tasklets.split()), ns


def deferred_delta(before, after):
    """deferred_work over a run: {"tasklets": N, "ksoftirqd_ms": MS},
    the values None where either end had none."""
    if before is None or after is None:
        return {"tasklets": None, "ksoftirqd_ms": None}
    return {"tasklets": after[0] - before[0],
            "ksoftirqd_ms": "%.1f" % ((after[1] - before[1]) / 1e6)}


def first_match(pattern, text):
    """Group 1 of the first line of text that matches pattern, or None."""
    m = re.search(pattern, text, re.M)
    return m.group(1) if m else None


def tail(path, n=5):
    return read_text(path).splitlines()[-n:]


def our_result(log):
    """The first of "results" in our tool's JSON output, LOG.client."""
    path = log + ".client"
    try:
        with open(path) as f:
            return json.load(f)["results"][0]
    except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
        raise RunFailed("%s: no result in our JSON output (%s)"
                        % (path, e))


def number(r, path, log):
    """The number at key path ("lat_us.p50") of our result r."""
    present, v = lookup(r, path)
    if not present or not is_num(v):
        raise RunFailed("%s.client: no number %s in our result"
                        % (log, path))
    return v


def mib_s(r, log):
    """Our bw_avg_gbps (10^9 bit/s) in 2^20 byte/s, like perftest's."""
    return "%.4f" % (number(r, "bw_avg_gbps", log) * 1e9 / 8 / 2**20)


def perftest_column(log, size, header):
    """The value under header in the row of size of perftest's table in
    LOG.client."""
    try:
        return perftest_value(read_text(log + ".client"), header, size)
    except PerftestError as e:
        raise RunFailed("%s.client: %s" % (log, e))


# ---- the benchmark ----

class Place:
    """Where the inner part runs: what softroce-run.sh gives it."""
    ENV = ("CQPERF_RXE_DEV", "CQPERF_SERVER_ADDR", "CQPERF_RXE_GID_INDEX",
           "CQPERF_OUT")

    def __init__(self, env):
        missing = [v for v in self.ENV if not env.get(v)]
        if missing:
            raise UsageError("--inner wants %s (scripts/guest/softroce-run.sh sets"
                             " them)" % ", ".join(missing))
        self.dev, self.addr, self.gid, self.out = (env[v] for v in self.ENV)


class Bench:
    """One side-by-side benchmark: the pair loop, retries, servers,
    timing, plausibility, runs.tsv and the outer/inner split; subclasses
    give the cases, the runs, the columns and the report."""
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
        self.place = self.procs = None
        self.active_mtu = None
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
        logs = os.path.join(self.place.out, "logs")
        os.makedirs(logs, exist_ok=True)
        tsv = os.path.join(self.place.out, "runs.tsv")
        write_text(tsv, "\t".join((self.case_column,) + COLUMNS +
                                  tuple(self.columns)) + "\n")
        pins = [pin(cpu)[0] if self.pinned else [] for cpu in (0, 1)]
        self.procs = Processes(self.run_timeout, *pins)
        failed = False
        try:
            for case, iters, pair, order, tool in schedule(specs, pairs,
                                                           self.tools):
                attempts, fields = self.measure(tool, case, iters, pair,
                                                logs)
                failed = failed or fields is None
                self.append_row(tsv, (case, iters, pair, order, tool,
                                      attempts), fields or {})
            if self.work_wanted():
                self.work(specs, logs)
        finally:
            self.procs.stop()
        self.report(tsv, os.path.join(self.place.out, "summary.json"))
        return 1 if failed else 0

    def work(self, specs, logs):
        """Each tool's user-space instructions per message (callgrind's
        Ir, the client's process) in the cases of work_modes, into
        work.tsv: two runs of work_iters messages, whose difference
        leaves setup and teardown out.  A count of instructions, not a
        time: only the polls a wakeup takes move it, so a change in our
        own per-message work shows in one run."""
        cases = [c for c, _ in specs if split_case(c)[0] in self.work_modes]
        if not cases:
            return
        path = os.path.join(self.place.out, "work.tsv")
        write_text(path, "case\ttool\titers\tir\n")
        for case in cases:
            for tool in self.tools:
                for n in self.work_iters:
                    ir = self.callgrind(tool, case, n, logs)
                    with open(path, "a") as f:
                        f.write("%s\t%s\t%d\t%s\n" % (
                            case, tool, n, "" if ir is None else ir))

    def callgrind(self, tool, case, n, logs):
        """The Ir total of one run of tool's client under callgrind, or
        None (said) when the run or the count failed."""
        log = os.path.join(logs, "%s-%s-work%d" % (tool, case, n))
        out = log + ".callgrind"
        # valgrind's own lines apart from the tool's output.
        self.procs.client_wrap = ["valgrind", "--tool=callgrind",
                                  "--log-file=" + log + ".valgrind",
                                  "--callgrind-out-file=" + out]
        try:
            getattr(self, "run_" + tool)(case, n, log)
        except RunFailed as e:
            self.procs.stop_server()
            self.say("%s %s under callgrind failed: %s"
                     % (tool, self.describe(case), e))
            return None
        finally:
            self.procs.client_wrap = []
        ir = first_match(r"^(?:summary|totals): *([0-9]+)", read_text(out))
        if ir is None:
            self.say("%s %s: no Ir total in %s" % (tool, self.describe(case),
                                                   out))
        return ir

    def append_row(self, tsv, head, fields):
        """A run's line: a failed run has its columns empty."""
        cells = [str(v) for v in head] + [
            "" if fields.get(c) is None else str(fields[c])
            for c in self.columns]
        with open(tsv, "a") as f:
            f.write("\t".join(cells) + "\n")

    def measure(self, tool, case, iters, pair, logs):
        """One run with retries: (attempts, record's fields), the fields
        None when every attempt failed."""
        for attempt in range(1, ATTEMPTS + 1):
            log = os.path.join(logs, "%s-%s-pair%d-try%d"
                               % (tool, case, pair, attempt))
            before = self.rxe_retries()
            # Only where the TSV keeps it: a walk of /proc at each end.
            counted = "tasklets" in self.columns
            work = deferred_work(self.proc) if counted else None
            try:
                figs = getattr(self, "run_" + tool)(case, iters, log)
                self.plausible(tool, case, iters, figs)
            except RunFailed as e:
                self.procs.stop_server()
                # perftest's CPU-frequency estimate fails now and then
                # under TCG: what the retries are for.
                self.say("%s %s pair %d attempt %d failed: %s"
                         % (tool, self.describe(case), pair, attempt, e))
                self.say_logs(log)
                continue
            after = self.rxe_retries()
            figs["rxe_retries"] = (after - before if None not in
                                   (before, after) else None)
            if counted:
                figs.update(deferred_delta(work, deferred_work(self.proc)))
            return attempt, self.record(tool, case, iters, pair, figs)
        return ATTEMPTS, None

    def say_logs(self, log):
        """The last lines of a failed run's logs, as `tail -n 5` shows
        them."""
        for path in (log + ".client", log + ".server"):
            if os.path.exists(path):
                print("    ==> %s <==" % path, file=sys.stderr)
                for line in tail(path):
                    print("    " + line, file=sys.stderr)
        sys.stderr.flush()

    def rxe_retries(self):
        """rxe's count of RC retransmissions (completer_retry_err: its
        retry timer fired and the unacknowledged sends went again), or
        None where the device has none.  Under TCG rxe retransmits all
        through a stream, at a rate a second alike for both tools."""
        path = ("/sys/class/infiniband/%s/ports/1/hw_counters/"
                "completer_retry_err" % self.place.dev)
        try:
            return int(read_text(path))
        except ValueError:
            return None

    # ---- runs of the tools, for the hooks ----

    def ours_run(self, log, args, release=None):
        """One run of our tool on its port, the server adopting the
        client's settings (negotiated), the client given args: (timing,
        its first result).  release: (PATTERN, GRACE) for Processes.watch;
        ours must end by itself, so being stopped is a failure."""
        p, port, name = self.procs, self.ports["ours"], self.ours_tool
        cmd = [os.path.join(self.top, "build", "src", name), "-d",
               self.place.dev, "-x", self.place.gid, "-p", str(port)]
        p.serve(log, port, cmd, name)
        if release:
            p.watch(log, *release)
        figs = p.run_client(log, cmd + args + ["--output", "json",
                                               self.place.addr], name)
        if not release:
            p.finish_server()
        elif p.finish_released(log):
            raise RunFailed("%s's server had to be stopped after its client"
                            " ended" % name)
        return figs, our_result(log)

    def perftest_args(self):
        """perftest's device, GID index and port."""
        return words("-d", self.place.dev, "-x", self.place.gid, "-p",
                     self.ports["theirs"])

    def perftest_run(self, log, args, release=None):
        """One run of perftest's tool, server and client with args (which
        name its port), the client also given the server's address: its
        timing; with release (Processes.watch), "released" too."""
        p, name = self.procs, self.theirs_tool
        p.serve(log, self.ports["theirs"], [name] + args, name)
        if release:
            p.watch(log, *release)
        figs = p.run_client(log, [name] + args + [self.place.addr], name)
        if release:
            figs["released"] = int(p.finish_released(log))
        else:
            p.finish_server()
        return figs

    def perftest_like(self, log, iters=None):
        """Say so (the run still counts) where perftest's headers show
        other settings than ours: the inline size it granted and, given
        iters, its UD server's rx depth."""
        name = self.theirs_tool
        granted = first_match(r"^ *Max inline data *: *([0-9]*)",
                              read_text(log + ".client"))
        if granted != str(INLINE):
            self.say("%s used inline %s, ours %d: not like for like"
                     % (name, granted or "", INLINE))
        if iters is None:
            return
        depth = first_match(r"^ *RX depth *: *([0-9]*)",
                            read_text(log + ".server"))
        if depth != str(rx_depth_for(iters)):
            self.say("%s's server used rx depth %s, ours %d: not like for"
                     " like" % (name, depth or "", rx_depth_for(iters)))

    def perftest_mbps(self, size, log):
        """A perftest bandwidth client's average (MiB/s, as its --help
        says) in the row of size."""
        return perftest_column(log, size, "BW average[MB/sec]")

    def perftest_latency(self, size, log):
        """A perftest latency client's (t_typical, the median, and
        t_avg) in usec, in the row of size."""
        return (perftest_column(log, size, "t_typical[usec]"),
                perftest_column(log, size, "t_avg[usec]"))

    def pingpong_mtu(self):
        """The active MTU of port 1 of the device in bytes, which our
        tools and perftest use and ibv_rc_pingpong must be told (its
        default is 1024); asked once."""
        if self.active_mtu is None:
            cmd = ["ibv_devinfo", "-d", self.place.dev, "-i", "1"]
            try:
                got = subprocess.run(cmd, capture_output=True, text=True,
                                     timeout=60)
            except (OSError, subprocess.TimeoutExpired) as e:
                raise RunFailed("%s failed: %s" % (" ".join(cmd), e))
            if got.returncode != 0:
                raise RunFailed("%s exited %d" % (" ".join(cmd),
                                                  got.returncode))
            self.active_mtu = first_match(r"^\s*active_mtu:\s*([0-9]+)",
                                          got.stdout)
            if not self.active_mtu:
                raise RunFailed("no active_mtu for %s in ibv_devinfo's"
                                " output" % self.place.dev)
        return self.active_mtu

    def pingpong_run(self, log, iters, args):
        """One run of rdma-core's ping-pong (floor_tool) on its port with
        device, GID index and iters, server and client also given args
        (their flags must match, as nothing checks them): its timing,
        "avg" (one-way usec) and "p50" empty (it prints only an average).
        It prints "N iters in S seconds = X usec/iter", an iteration being
        the client's ping and the server's pong: X is a round trip, and
        the one-way average, like perftest's and ours, is X / 2."""
        p, name, port = self.procs, self.floor_tool, self.ports["pingpong"]
        cmd = [name, "-d", self.place.dev, "-g", self.place.gid, "-p",
               str(port), "-n", str(iters)] + args
        # Their flags, for the record: nothing else shows them.
        write_text(log + ".cmd", "%s [%s]\n" % (" ".join(cmd),
                                               self.place.addr))
        p.serve(log, port, cmd, name)
        figs = p.run_client(log, cmd + [self.place.addr], name)
        p.finish_server()
        m = re.search(r"^([0-9]*) iters in [0-9.]* seconds = ([0-9.]+)"
                      r" usec/iter$", read_text(log + ".client"), re.M)
        try:
            if not m or m.group(1) != str(iters):
                raise ValueError
            figs["avg"] = "%.3f" % (float(m.group(2)) / 2)
        except ValueError:
            raise RunFailed('%s printed no "%d iters in ... usec/iter"'
                            % (name, iters))
        figs["p50"] = ""
        return figs

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
        cmd = [os.path.join(self.here, "..", "guest", "softroce-run.sh"), "--timeout",
               timeout, "--out", out, "--",
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
