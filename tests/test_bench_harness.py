#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Unit tests of the benchmark harness (scripts/bench/cqperfbench_*.py
and the benchmarks of scripts/bench/cqperf-bench) without a device: the cases and
pairs from the environment, the order of the runs in pairs, retries, the
runs.tsv round trip, the command line (usage errors exit 2; the hand-over
to softroce-run.sh, a stand-in here), and the inner part end to end with
stand-in tools (tests/fake_bench_tool.py) that meet over TCP on
127.0.0.1: servers, clients, the watcher of a server that does not end,
plausibility, a signal.  The reports' statistics are
tests/test_bench_stats.sh's.  Prints "ok - ..." / "not ok - ..." per check
and the summary line; exit 0 when all pass."""
import atexit
import contextlib
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

TOP = os.environ.get("top_srcdir") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..")
TOP = os.path.abspath(TOP)
sys.path[:0] = [os.path.join(TOP, "scripts", d)
                for d in ("installed", "bench", "dev")] + [
    os.path.join(TOP, "tests")]
import cqperfbench as cbs  # noqa: E402
import cqperfbench_cases as cases  # noqa: E402
import cqperfbench_runner as runner  # noqa: E402
from cqperflib import UsageError  # noqa: E402
from pycheck import check, finish, load_script  # noqa: E402

PROGRAM = os.path.join(TOP, "scripts", "bench", "cqperf-bench")
cb = load_script(PROGRAM, "cqperf_bench")

FAKE = os.path.join(TOP, "tests", "fake_bench_tool.py")
ADDR = "127.0.0.1"
TMP = tempfile.mkdtemp(prefix="cqperf-bench-harness.")
atexit.register(shutil.rmtree, TMP, ignore_errors=True)


def usage_error(fn):
    """The message of the UsageError fn raises, else None."""
    try:
        fn()
    except UsageError as e:
        return str(e)
    return None


def quiet(fn, *args):
    """(fn's value, what it wrote to stderr)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        value = fn(*args)
    return value, err.getvalue()


def main_of(bench, argv):
    """(exit status, stderr) of bench.main(argv), stdout swallowed."""
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(err):
        try:
            rc = bench.main(argv)
        except SystemExit as e:
            rc = e.code
    return rc, err.getvalue()


def read(path):
    with open(path) as f:
        return f.read()


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def fake_proc(root, tasklets, ksoftirqd_ns):
    """A /proc for deferred_work: TASKLET counts on two CPUs, a ksoftirqd
    and a kworker (whose CPU does not count)."""
    for pid, comm, ns in (("7", "ksoftirqd/0", ksoftirqd_ns),
                          ("8", "kworker/0:1-events", 999)):
        os.makedirs(os.path.join(root, pid), exist_ok=True)
        write(os.path.join(root, pid, "comm"), comm + "\n")
        write(os.path.join(root, pid, "schedstat"), "%d 5 9\n" % ns)
    write(os.path.join(root, "softirqs"),
          "                    CPU0       CPU1\n"
          "          HI:          0          0\n"
          "     TASKLET:  %9d          3\n"
          "    NET_TX:          0          0\n" % tasklets)


def tsv_rows(path):
    lines = read(path).splitlines()
    head = lines[0].split("\t")
    return head, [dict(zip(head, line.split("\t"))) for line in lines[1:]]


# ---- the machine's deferred kernel work ----

proc = os.path.join(TMP, "proc-unit")
fake_proc(proc, 40, 3000000)
check("deferred work: every CPU's tasklets, ksoftirqd's CPU only",
      runner.deferred_work(proc) == (43, 3000000))
write(os.path.join(proc, "softirqs"), "  CPU0\n  HI:  0\n")
check("deferred work: none without a TASKLET line",
      runner.deferred_work(proc) is None and
      runner.deferred_delta(None, (1, 2)) == {"tasklets": None,
                                          "ksoftirqd_ms": None})
check("deferred work over a run, in ms",
      runner.deferred_delta((5, 1000000), (9, 3500000)) ==
      {"tasklets": 4, "ksoftirqd_ms": "2.5"})


# ---- the cases and the pairs, from the environment ----

said = []
check("pairs: 7 by default", cases.env_pairs({}, said.append) == 7)
check("pairs: BENCH_PAIRS, leading zeros and all",
      cases.env_pairs({"BENCH_PAIRS": "12"}, said.append) == 12 and
      cases.env_pairs({"BENCH_PAIRS": "007"}, said.append) == 7)
check("pairs: BENCH_RUNS, deprecated, still counts",
      cases.env_pairs({"BENCH_RUNS": "9"}, said.append) == 9 and
      said == ["BENCH_RUNS is deprecated, use BENCH_PAIRS (pairs of runs)"])
for value in ("6", "0", "1001", "7x", "-7", "1234567890"):
    msg = usage_error(lambda: cases.env_pairs({"BENCH_PAIRS": value}, print))
    check("pairs: BENCH_PAIRS=%s is refused, naming the range" % value,
          msg == "BENCH_PAIRS=%s: BENCH_PAIRS wants a count from 7 to 1000"
          % value)
check("pairs: a bad BENCH_RUNS is named as such",
      usage_error(lambda: cases.env_pairs({"BENCH_RUNS": "3"}, said.append)) ==
      "BENCH_RUNS=3: BENCH_PAIRS wants a count from 7 to 1000")

check("modes: both by default, BENCH_MODES picks",
      cases.env_modes({}) == ["poll", "event"] and
      cases.env_modes({"BENCH_MODES": " event "}) == ["event"])
check("modes: another word is refused, naming it",
      usage_error(lambda: cases.env_modes({"BENCH_MODES": "event hybrid"})) ==
      "BENCH_MODES wants poll and/or event, not 'hybrid'")

check("cq_poll_bw: MODE-SIZE cases, each mode's sizes in turn",
      cb.CqPollBw({}).specs() == [
          ("poll-64", 50000), ("poll-4096", 20000), ("poll-65536", 2000),
          ("event-64", 50000), ("event-4096", 20000),
          ("event-65536", 2000)])
check("cq_poll_bw: BENCH_MODES and BENCH_ITERS_SIZE",
      cb.CqPollBw({"BENCH_MODES": "event", "BENCH_ITERS_4096": "3000"})
      .specs() == [("event-64", 50000), ("event-4096", 3000),
                   ("event-65536", 2000)])
check("cq_poll_bw: too few iterations are refused, naming the variable",
      usage_error(cb.CqPollBw({"BENCH_ITERS_64": "999"}).specs) ==
      "BENCH_ITERS_64 wants a count >= 1000")
check("ud_send_bw: its sizes",
      [c for c, _ in cb.UdSendBw({"BENCH_MODES": "poll"}).specs()] ==
      ["poll-64", "poll-1024", "poll-4096"])
check("cq_event_lat: iterations per mode (BENCH_ITERS_POLL/EVENT)",
      cb.CqEventLat({"BENCH_ITERS_EVENT": "200"}).specs() == [
          ("poll-64", 10000), ("poll-4096", 10000), ("event-64", 200),
          ("event-4096", 200)])
check("cq_event_lat: BENCH_ITERS_EVENT below 100 is refused",
      usage_error(cb.CqEventLat({"BENCH_ITERS_EVENT": "99"}).specs) ==
      "BENCH_ITERS_EVENT wants a count >= 100")
check("ud_send_lat: 64 B in each mode",
      cb.UdSendLat({}).specs() == [("poll-64", 10000), ("event-64", 10000)])
check("rate: BENCH_RATES, each run twice the rate's messages",
      cb.Rate({}).specs() == [("1000", 2000), ("5000", 10000),
                              ("20000", 40000)] and
      cb.Rate({"BENCH_RATES": "100 250"}).specs() == [("100", 200),
                                                      ("250", 500)])
check("rate: a rate that is not messages/s is refused",
      usage_error(cb.Rate({"BENCH_RATES": "100 0"}).specs) ==
      "BENCH_RATES wants messages/s, not '0'")
check("cm_event_stress: one case, the connections (BENCH_CONNECTIONS)",
      cb.CmEventStress({}).specs() == [("500", 500)] and
      cb.CmEventStress({"BENCH_CONNECTIONS": "20"}).specs() == [("20", 20)])
check("threads: shared and threads cases at 64 B and 4 KiB",
      cb.Threads({"BENCH_ITERS_64": "100"}).specs() == [
          ("shared-64", 100), ("shared-4096", 4000), ("threads-64", 100),
          ("threads-4096", 4000)])
check("the cases in words",
      cb.CqPollBw({}).describe("event-4096") == "event 4096 B" and
      cb.Rate({}).describe("1000") == "1000/s" and
      cb.CmEventStress({}).describe("500") == "500 connections")
check("--inner's CASE:ITERS",
      cases.parse_spec("poll-64:100") == ("poll-64", 100) and
      usage_error(lambda: cases.parse_spec("poll-64")) is not None and
      usage_error(lambda: cases.parse_spec(":5")) is not None)
check("the first column: what a case is",
      [b.case_column for b in cb.BENCHES.values()] ==
      ["case", "case", "case", "case", "connections", "rate", "case"])
check("runs.tsv's columns, as the bash harness wrote them", {
    n: b.columns for n, b in cb.BENCHES.items()} == {
    "cq_poll_bw": ("mbps", "wall_mbps", "rxe_retries", "cpu_s",
                   "tasklets", "ksoftirqd_ms"),
    "cq_event_lat": ("p50_us", "avg_us", "wall_us", "cpu_s", "tool_cpu_s"),
    "ud_send_bw": ("mbps", "wall_mbps", "loss_pct", "released", "cpu_s",
                   "tasklets", "ksoftirqd_ms"),
    "ud_send_lat": ("p50_us", "avg_us", "wall_us", "lost"),
    "cm_event_stress": ("conn_per_s", "connect_ms", "wall_ms",
                        "teardown_per_s", "released", "steps"),
    "rate": ("mbps", "wall_mbps", "achieved", "err_pct"),
    "threads": ("mbps", "wall_mbps", "us_per_msg", "foreign")})
check("the tools: a floor for the latency benches",
      cb.CqEventLat({}).tools == ("ours", "theirs", "pingpong") and
      cb.CqPollBw({}).tools == ("ours", "theirs"))
check("BENCH_VERB: each verb's perftest tool, no floor but SEND's",
      cb.CqPollBw({"BENCH_VERB": "read"}).theirs_tool == "ib_read_bw" and
      cb.CqPollBw({"BENCH_VERB": "write"}).theirs_tool == "ib_write_bw" and
      cb.CqEventLat({"BENCH_VERB": "atomic"}).theirs_tool ==
      "ib_atomic_lat" and
      cb.CqEventLat({"BENCH_VERB": "read"}).tools == ("ours", "theirs") and
      "ib_write_lat" in cb.CqEventLat({"BENCH_VERB": "write"}).title)
check("BENCH_VERB: the work figure for SEND's bandwidth only",
      cb.CqPollBw({}).work_wanted() and cb.UdSendBw({}).work_wanted() and
      not cb.CqPollBw({"BENCH_VERB": "write"}).work_wanted() and
      not cb.CqPollBw({"BENCH_VERB": "read"}).work_wanted() and
      not cb.CqPollBw({"BENCH_WORK": "0"}).work_wanted())
check("BENCH_VERB=write: poll cases only (ours polls memory)",
      [c for c, _ in cb.CqPollBw({"BENCH_VERB": "write"}).specs()] ==
      ["poll-64", "poll-4096", "poll-65536"] and
      usage_error(cb.CqPollBw({"BENCH_VERB": "write",
                               "BENCH_MODES": "event"}).specs) ==
      "BENCH_VERB=write has poll mode only (the target polls memory)")
check("BENCH_VERB=read: the wall-clock bound of a whole operation",
      cb.CqEventLat({"BENCH_VERB": "read"}).ways == 1 and
      cb.CqEventLat({"BENCH_VERB": "write"}).ways == 2 and
      cb.CqEventLat({}).ways == 2)
check("BENCH_VERB=atomic: 8 bytes",
      cb.CqEventLat({"BENCH_VERB": "atomic", "BENCH_MODES": "poll"}).specs()
      == [("poll-8", 10000)])
check("BENCH_VERB: a verb the bench has no perftest tool for is refused",
      usage_error(lambda: cb.CqPollBw({"BENCH_VERB": "atomic"})) ==
      "BENCH_VERB wants send or write or read, not 'atomic'")
check("BENCH_VERB: our flags",
      cb.verb_args("write", "poll") == ["--verb", "write", "--cq-mode",
                                        "mem"] and
      cb.verb_args("read", "event") == ["--verb", "read", "--cq-mode",
                                        "event"] and
      cb.verb_args("send", "poll") == ["--cq-mode", "poll"])

# ---- the order of the runs ----

# Pair by pair, as the bash harness ran them.
two = " ".join(",".join(cases.pair_order(("ours", "theirs"), p))
               for p in range(1, 9))
check("order, 2 tools: the first alternates, pair by pair",
      two == "ours,theirs theirs,ours " * 3 + "ours,theirs theirs,ours")
three = " ".join(",".join(cases.pair_order(("ours", "theirs", "pingpong"), p))
                 for p in range(1, 8))
check("order, 3 tools: the order rotates, pair by pair",
      three == "ours,theirs,pingpong theirs,pingpong,ours "
      "pingpong,ours,theirs ours,theirs,pingpong theirs,pingpong,ours "
      "pingpong,ours,theirs ours,theirs,pingpong")
check("schedule: each case's pairs in turn, the order column from 1",
      list(cases.schedule([("a", 1), ("b", 2)], 2, ("ours", "theirs"))) == [
          ("a", 1, 1, 1, "ours"), ("a", 1, 1, 2, "theirs"),
          ("a", 1, 2, 1, "theirs"), ("a", 1, 2, 2, "ours"),
          ("b", 2, 1, 1, "ours"), ("b", 2, 1, 2, "theirs"),
          ("b", 2, 2, 1, "theirs"), ("b", 2, 2, 2, "ours")])


# ---- the inner part with stand-in runs (no processes) ----

class StandIn(cb.CqPollBw):
    """cq_poll_bw's columns and report; runs that only count, failing as
    told: fail[(tool, case, pair)] attempts fail first.  Each run adds to
    the machine's deferred work in a /proc of its own: ours 32 tasklets
    and 2 ms of ksoftirqd, theirs twice that.  No work figure: its runs
    count pairs."""
    work_modes = ()

    def __init__(self, env, fail):
        super().__init__(env)
        self.fail, self.ran = fail, []
        self.proc = os.path.join(TMP, "proc")
        self.deferred = [0, 0]
        fake_proc(self.proc, 0, 0)

    def run(self, tool, case, iters, log):
        pair = int(log.rsplit("-pair", 1)[1].split("-")[0])
        self.ran.append((case, pair, tool))
        k = 1 if tool == "ours" else 2
        self.deferred = [self.deferred[0] + 32 * k,
                         self.deferred[1] + 2000000 * k]
        fake_proc(self.proc, *self.deferred)
        left = self.fail.get((tool, case, pair), 0)
        if left:
            self.fail[(tool, case, pair)] = left - 1
            raise cb.RunFailed("stand-in failure")
        # ours 10 % faster; a wall-clock time that makes it plausible.
        mbps = (33.0 if tool == "ours" else 30.0) + pair
        return {"mbps": "%.4f" % mbps, "wall_us": 1000000,
                "cpu_s": "%.3f" % (0.064 * k)}

    def run_ours(self, case, iters, log):
        return self.run("ours", case, iters, log)

    def run_theirs(self, case, iters, log):
        return self.run("theirs", case, iters, log)


def place(out):
    return {"CQPERF_RXE_DEV": "none", "CQPERF_SERVER_ADDR": ADDR,
            "CQPERF_RXE_GID_INDEX": "0", "CQPERF_OUT": out}


out = os.path.join(TMP, "standin")
bench = StandIn(place(out), {("theirs", "poll-64", 2): 1,
                             ("ours", "poll-4096", 3): 3})
with contextlib.redirect_stdout(io.StringIO()) as printed:
    rc, err = quiet(bench.inner, 8, [("poll-64", 64), ("poll-4096", 16)])
report_text = printed.getvalue()
head, rows = tsv_rows(os.path.join(out, "runs.tsv"))
check("stand-in: the TSV's columns", head == [
    "case", "iters", "pair", "order", "tool", "attempts", "mbps",
    "wall_mbps", "rxe_retries", "cpu_s", "tasklets", "ksoftirqd_ms"])
check("stand-in: 8 pairs of 2 cases, 32 lines", len(rows) == 32)
ran = [(c, p, t) for c, p, t in bench.ran]
first = [r for r in ran if r[0] == "poll-64"]
check("stand-in: ran in the pair order, retries in place",
      [t for _, _, t in first][:5] == ["ours", "theirs", "theirs", "theirs",
                                       "ours"])
check("stand-in: the order column agrees with the runs",
      all(r["tool"] == cases.pair_order(("ours", "theirs"), int(r["pair"]))[
          int(r["order"]) - 1] for r in rows))
retried = [r for r in rows if r["case"] == "poll-64" and r["pair"] == "2"
           and r["tool"] == "theirs"][0]
check("stand-in: a retried run counts its attempts and has its figures",
      retried["attempts"] == "2" and retried["mbps"] == "32.0000")
lost = [r for r in rows if r["case"] == "poll-4096" and r["pair"] == "3"
        and r["tool"] == "ours"][0]
check("stand-in: a run that failed 3 times has empty figures",
      lost["attempts"] == "3" and lost["mbps"] == lost["wall_mbps"] == "")
check("stand-in: exit 1 when a run failed after its retries", rc == 1)
check("stand-in: each failed attempt said, naming the run",
      "bench-cq_poll_bw.sh: theirs poll 64 B pair 2 attempt 1 failed:"
      " stand-in failure" in err and
      "ours poll 4096 B pair 3 attempt 3 failed" in err)
check("stand-in: the wall-clock figure and no rxe counter",
      rows[0]["wall_mbps"] == "%.4f" % (64 * 64 / 1.0 / 1048576) and
      rows[0]["rxe_retries"] == "")
check("stand-in: each record said",
      "bench-cq_poll_bw.sh: poll 64 B    pair 1 ours        34.00 MB/s"
      " (client wall clock: 0.00)" in err)
check("stand-in: each run's deferred kernel work from its /proc",
      (rows[0]["tool"], rows[0]["tasklets"], rows[0]["ksoftirqd_ms"]) ==
      ("ours", "32", "2.0") and
      (rows[1]["tool"], rows[1]["tasklets"], rows[1]["ksoftirqd_ms"]) ==
      ("theirs", "64", "4.0"))
check("stand-in: a run's deferred work counts its own attempt only",
      (retried["tasklets"], retried["ksoftirqd_ms"]) == ("64", "4.0"))
summary = json.loads(read(os.path.join(out, "summary.json")))
check("stand-in: the report of the TSV (7 complete pairs of 4096 B)",
      [c["ratio"]["pairs"] for c in summary["cases"]] == [8, 7] and
      summary["cases"][0]["verdict"] == "ahead")
first_case = summary["cases"][0]
check("stand-in: deferred work a message in the summary (64 messages)",
      first_case["ours_tasklets_per_msg"] == [0.5] * 8 and
      first_case["theirs_tasklets_per_msg"] == [1.0] * 8 and
      first_case["ours_ksoftirqd_us_per_msg"][0] == 2000 / 64)
check("stand-in: the sending side's work a message, medians of each tool",
      "a message: client CPU ours 1000.0  theirs 2000.0 us\n" in report_text
      and "a message, the kernel's deferred work: tasklets ours 0.500"
      "  theirs 1.000;\n" in report_text and
      "ksoftirqd CPU ours 31.2  theirs 62.5 us\n" in report_text and
      first_case["ours_client_us_per_msg"][0] == 1000.0)
again = os.path.join(TMP, "again")
rc2, err2 = main_of(cb.CqPollBw({}), ["--report",
                                      os.path.join(out, "runs.tsv"),
                                      "--out", again])
check("stand-in: --report of its TSV gives the same summary",
      rc2 == 0 and read(os.path.join(again, "summary.json")) ==
      read(os.path.join(out, "summary.json")))


# ---- the command line ----

try_help = "Try 'bench-cq_poll_bw.sh --help'.\n"
rc, err = main_of(cb.CqPollBw({}), ["--bogus"])
check("usage: an unknown argument exits 2, naming it",
      rc == 2 and err == "bench-cq_poll_bw.sh: error: unrecognized "
      "arguments: --bogus\n" + try_help)
for argv in (["--out"], ["--report"], ["--pairs"]):
    rc, err = main_of(cb.CqPollBw({}), argv)
    check("usage: %s without its value exits 2, naming it" % argv[0],
          rc == 2 and argv[0] in err and err.endswith(try_help))
rc, err = main_of(cb.Rate({}), ["--verb", "write"])
check("usage: a setting the benchmark does not take is refused",
      rc == 2 and "--verb" in err)
for argv in (["-h"], ["--help"]):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            rc = cb.CqPollBw({}).main(argv)
        except SystemExit as e:
            rc = e.code
    text = out.getvalue()
    check("usage: %s prints the class's docstring and its settings, "
          "exit 0" % argv[0],
          rc == 0 and text.startswith("Usage: bench-cq_poll_bw.sh [OPTIONS]\n\nSide-by-side "
                                      "bandwidth of cq_poll_bw") and
          "--pairs N" in text and "; BENCH_PAIRS" in text and
          "--verb VERB" in text and "--rates" not in text)
# A flag is its variable: over the environment's value, checked alike.
rc, err = main_of(cb.CqPollBw({"BENCH_PAIRS": "9"}), ["--pairs", "3"])
check("settings: --pairs 3 overrides BENCH_PAIRS=9 and is refused as it",
      rc == 2 and "BENCH_PAIRS=3" in err)
rc, err = main_of(cb.CqPollBw({}), ["--verb", "atomic"])
check("settings: --verb atomic is refused as BENCH_VERB=atomic is",
      rc == 2 and "BENCH_VERB wants" in err)
b = cb.CqPollBw({})
a, given = b.parse(["--modes", "poll", "--no-pin", "--work", "0"])
check("settings: the flags give their variables",
      given == {"BENCH_MODES": "poll", "BENCH_NO_PIN": "1",
                "BENCH_WORK": "0"})
check("usage: --timeout wants seconds",
      main_of(cb.CqPollBw({}), ["--timeout=1h", "--out", TMP]) ==
      (2, "bench-cq_poll_bw.sh: --timeout wants seconds\n"))
check("usage: --report of no file",
      main_of(cb.CqPollBw({}), ["--report", TMP + "/none.tsv"]) ==
      (2, "bench-cq_poll_bw.sh: --report: no file %s/none.tsv\n" % TMP))
check("usage: pooled reports want --out",
      main_of(cb.CqPollBw({}), ["--report", PROGRAM, "--report=" + PROGRAM])
      == (2, "bench-cq_poll_bw.sh: --report given 2 times: pooling them"
          " wants --out DIR\n"))
rc, err = main_of(cb.CqPollBw({}), ["--report", PROGRAM, "--out", TMP])
check("usage: --report of a file that is no runs.tsv exits 2",
      rc == 2 and "not a runs.tsv" in err)
rc, err = main_of(cb.CqPollBw({}), ["--inner", "7", "poll-64:100"])
check("usage: --inner without soft-RoCE's variables exits 2, naming them",
      rc == 2 and "CQPERF_RXE_DEV, CQPERF_SERVER_ADDR" in err)
check("usage: --inner wants pairs and cases",
      main_of(cb.CqPollBw(place(TMP)), ["--inner", "x"])[0] == 2 and
      main_of(cb.CqPollBw(place(TMP)), ["--inner", "7", "poll-64"])[0] == 2)
for argv, what in (([], "no benchmark"), (["bogus"], "an unknown one")):
    got = subprocess.run([sys.executable, PROGRAM] + argv,
                         capture_output=True, text=True)
    check("cqperf-bench: %s exits 2 naming the benchmarks" % what,
          got.returncode == 2 and "cq_poll_bw, cq_event_lat" in got.stderr)
got = subprocess.run([os.path.join(TOP, "scripts", "bench", "bench-rate.sh"),
                      "--bogus"], capture_output=True, text=True)
check("bench-rate.sh: the wrapper passes its arguments on",
      got.returncode == 2 and got.stderr ==
      "bench-rate.sh: error: unrecognized arguments: --bogus\n"
      "Try 'bench-rate.sh --help'.\n")


def fake_tree(name):
    """A tree with the stand-in tool as each of ours and a stand-in
    softroce-run.sh that notes how it was run and exits 3; the stand-in as
    each other command in a bin/ folder."""
    top = os.path.join(TMP, name)
    for d in ("build/src", "scripts/guest", "scripts/bench", "bin", "state"):
        os.makedirs(os.path.join(top, d), exist_ok=True)
    for tool in ("cq_poll_bw", "ud_send_bw", "cq_event_lat", "ud_send_lat",
                 "cm_event_stress"):
        os.symlink(FAKE, os.path.join(top, "build/src", tool))
    for tool in ("ib_send_bw", "ib_send_lat", "ibv_rc_pingpong",
                 "ibv_ud_pingpong", "ibv_devinfo", "cmtime", "rdma",
                 "valgrind"):
        os.symlink(FAKE, os.path.join(top, "bin", tool))
    run = os.path.join(top, "scripts", "guest", "softroce-run.sh")
    with open(run, "w") as f:
        f.write('#!/bin/sh\n{ pwd; echo "$CQPERF_PASS_ENV"; '
                'printf "%s\\n" "$@"; } >"$(dirname "$0")/ran"\nexit 3\n')
    os.chmod(run, 0o755)
    return top


top = fake_tree("outer")
env = {"PATH": os.path.join(top, "bin") + ":" + os.environ["PATH"],
       "BENCH_MODES": "poll", "CQPERF_PASS_ENV": "X"}
out = os.path.join(top, "results")
os.makedirs(os.path.join(out, "logs"))
bench = cb.CqPollBw(env, top, os.path.join(top, "scripts", "bench"))
rc, err = main_of(bench, ["--out", out])
ran = read(os.path.join(top, "scripts", "guest", "ran")).splitlines()
check("outer: softroce-run.sh's exit status", rc == 3)
check("outer: run from the tree, BENCH_NO_PIN and BENCH_VERB handed to"
      " the guest", ran[:2] == [top, "X BENCH_NO_PIN BENCH_VERB"])
check("outer: the inner part's command line, the deadline 1800 s + 30 s a"
      " run", ran[2:] == [
          "--timeout", str(1800 + 30 * 3 * 7 * 2), "--out", out, "--",
          os.path.join(top, "scripts", "bench", "cqperf-bench"), "cq_poll_bw",
          "--inner", "7", "poll-64:50000", "poll-4096:20000",
          "poll-65536:2000"])
check("outer: says how soft-RoCE ended and where the results are, an"
      " earlier run's logs gone",
      err == "bench-cq_poll_bw.sh: softroce-run.sh exited 3\n"
      "bench-cq_poll_bw.sh: results in %s (summary.json, runs.tsv,"
      " logs/)\n" % out and not os.path.exists(os.path.join(out, "logs")))
rc, err = main_of(cb.CqPollBw(env, top, os.path.join(top, "scripts", "bench")),
                  ["--timeout", "60", "--out", out])
check("outer: --timeout given", rc == 3 and read(os.path.join(
    top, "scripts", "guest", "ran")).splitlines()[3] == "60")
os.remove(os.path.join(top, "bin", "ib_send_bw"))
check("outer: a missing command exits 1, with where it comes from",
      main_of(cb.CqPollBw(dict(env, PATH=os.path.join(top, "bin")), top,
                          os.path.join(top, "scripts", "bench")),
              ["--out", out]) ==
      (1, "bench-cq_poll_bw.sh: ib_send_bw missing (scripts/deps.sh"
       " installs perftest)\n"))
check("outer: threads (ours against ours) needs no perftest",
      main_of(cb.Threads(env, top, os.path.join(top, "scripts", "bench")),
              ["--out", out])[0] == 3)
check("outer: a missing build exits 1",
      main_of(cb.CqEventLat(env, os.path.join(TMP, "none")),
              ["--out", out]) ==
      (1, "bench-cq_event_lat.sh: build/src/cq_event_lat missing (build"
       " first)\n"))


# ---- the inner part end to end, with stand-in tools ----

def free_ports():
    """Three TCP ports nothing listens on now."""
    socks = [socket.socket() for _ in range(3)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return dict(zip(("ours", "theirs", "pingpong"), ports))


def fake_bench(cls, name, fakes=None, **attrs):
    """An instance of cls over a fake tree, on free ports, the stand-ins
    steered by fakes (FAKE_...); (bench, the tree)."""
    top = fake_tree(name)
    os.environ.update({"PATH": os.path.join(top, "bin") + ":" +
                       os.environ["PATH"], "FAKE_STATE":
                       os.path.join(top, "state"), "FAKE_ADDR": ADDR,
                       "BENCH_NO_PIN": "1"})
    for k in ("FAKE_FAIL", "FAKE_ZERO", "FAKE_HANG", "FAKE_HANG_CLIENT"):
        os.environ.pop(k, None)
    os.environ.update(fakes or {})
    bench = cls(place(os.path.join(top, "out")), top)
    bench.ports = free_ports()
    for k, v in attrs.items():
        setattr(bench, k, v)
    return bench, top


def no_report(tsv, out):
    """For runs of fewer pairs than a report wants."""


def gone(pids, seconds=5):
    """Whether every process of pids has ended."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        alive = []
        for pid in pids:
            try:
                os.kill(pid, 0)
                alive.append(pid)
            except ProcessLookupError:
                pass
        if not alive:
            return True
        time.sleep(0.1)
    return False


def pids(top):
    return [int(p) for p in read(os.path.join(top, "state/pids")).split()]


# cq_poll_bw: ours' first client of pair 1 fails three times; theirs'
# first reports 0 MB/s (implausible), its retry counts.
bench, top = fake_bench(cb.CqPollBw, "e2e-bw", {
    "FAKE_FAIL": "cq_poll_bw:3", "FAKE_ZERO": "ib_send_bw:1"})
with contextlib.redirect_stdout(io.StringIO()) as report:
    rc, err = quiet(bench.inner, 7, [("poll-64", 1000)])
out = os.path.join(top, "out")
head, rows = tsv_rows(os.path.join(out, "runs.tsv"))
check("bw: 7 pairs, 14 runs, exit 1 for the run that failed 3 times",
      len(rows) == 14 and rc == 1)
check("bw: the failed run's line", [
    (r["attempts"], r["mbps"]) for r in rows if r["pair"] == "1" and
    r["tool"] == "ours"] == [("3", "")])
check("bw: a client's failure said with its log's last lines",
      "ours poll 64 B pair 1 attempt 1 failed: cq_poll_bw's client"
      " exited 1 (%s/logs/ours-poll-64-pair1-try1.client)" % out in err and
      "    fake failure" in err)
check("bw: an implausible figure is a failed attempt, retried",
      "theirs poll 64 B pair 1 attempt 1 failed: reported 0.0 MB/s is"
      " below the wall-clock bound" in err and
      [r["attempts"] for r in rows if r["pair"] == "1" and
       r["tool"] == "theirs"] == ["2"])
check("bw: figures from our JSON and perftest's table",
      rows[2]["tool"] == "theirs" and rows[2]["mbps"] == "800.0" and
      rows[3]["mbps"] == "%.4f" % (8.0 * 1e9 / 8 / 2**20))
calls = read(os.path.join(top, "state/calls")).splitlines()
check("bw: our client's command line", calls[0].split() == [
    "cq_poll_bw", "-d", "none", "-x", "0", "-p", str(bench.ports["ours"]),
    "-t", "128", "-r", "512", "--signal-every", "100", "-I", "0",
    "--cq-mode", "poll", "-s", "64", "-n", "1000", "--output", "json",
    ADDR])
check("bw: perftest's client's command line", calls[3].split() == [
    "ib_send_bw", "-d", "none", "-x", "0", "-p", str(bench.ports["theirs"]),
    "-s", "64", "-n", "1000", "-t", "128", "-r", "512", "-Q", "100", "-F",
    ADDR])
check("bw: the clients in the pair order", [c.split()[0] for c in calls][
    :17] == ["cq_poll_bw"] * 3 + ["ib_send_bw"] * 2 +
      ["ib_send_bw", "cq_poll_bw", "cq_poll_bw", "ib_send_bw"] * 3)
check("bw: then each client under callgrind at 1000 and 5000 messages",
      [(c.split()[0], c.split()[c.split().index("-n") + 1])
       for c in calls[17:]] == [("cq_poll_bw", "1000"), ("cq_poll_bw", "5000"),
                                ("ib_send_bw", "1000"), ("ib_send_bw", "5000")])
head, work_rows = tsv_rows(os.path.join(out, "work.tsv"))
check("bw: the work figure, poll mode, in work.tsv",
      [(r["case"], r["tool"], r["iters"], r["ir"]) for r in work_rows] == [
          ("poll-64", "ours", "1000", str(250000 + 400 * 1000)),
          ("poll-64", "ours", "5000", str(250000 + 400 * 5000)),
          ("poll-64", "theirs", "1000", str(250000 + 1100 * 1000)),
          ("poll-64", "theirs", "5000", str(250000 + 1100 * 5000))])
summary = os.path.join(out, "work-summary.json")
with open(summary, "w") as f:
    json.dump({"pairs": 7}, f)
with contextlib.redirect_stdout(io.StringIO()) as printed:
    cbs.work_report(os.path.join(out, "work.tsv"), summary, bench.tools,
                    bench.work_iters)
check("bw: the work figure per message in the report",
      "runs of 1000 and 5000 messages, the difference / 4000" in
      printed.getvalue() and "  poll-64      ours 400  theirs 1100  "
      "ours/theirs 0.364" in printed.getvalue())
check("bw: the report, 6 complete pairs: no verdict",
      "verdict poll 64 B: bandwidth ours/ib_send_bw: none (6 complete pairs"
      in report.getvalue() and
      os.path.exists(os.path.join(out, "summary.json")))
check("bw: every server and client ended", gone(pids(top)))

# ud_send_bw: perftest's first server does not end; the watcher stops it
# after the grace.
bench, top = fake_bench(cb.UdSendBw, "e2e-ud", {"FAKE_HANG": "ib_send_bw:1"},
                        release_grace=1, report=no_report)
rc, err = quiet(bench.inner, 1, [("event-64", 1000)])
head, rows = tsv_rows(os.path.join(top, "out", "runs.tsv"))
log = os.path.join(top, "out", "logs", "theirs-event-64-pair1-try1")
check("ud: the watcher stopped the waiting server; the run counts",
      rc == 0 and rows[1]["released"] == "1" and rows[1]["mbps"] == "800.0"
      and read(log + ".released") == "server still running 1 s after its"
      " client's figures: stopped\n")
check("ud: ours' loss, no release", rows[0]["loss_pct"] == "0.5000" and
      rows[0]["released"] == "")
check("ud: said", "theirs     800.00 MB/s (client wall clock: " in err and
      "server stopped waiting for lost datagrams)" in err and
      "ours       953.67 MB/s (client wall clock: " in err and
      ", loss 0.50%)" in err)
check("ud: perftest's UD command line, ours' rx depth", read(os.path.join(
    top, "state/calls")).splitlines()[1].split()[:3] == ["ib_send_bw", "-c",
                                                         "UD"] and
      " -r 1000 " in read(os.path.join(top, "state/calls")))
check("ud: perftest's headers checked",
      "ib_send_bw's server used rx depth , ours 1000: not like for like"
      in err)
check("ud: no work figure for an event-mode case",
      not os.path.exists(os.path.join(top, "out", "work.tsv")))
check("ud: every server and client ended", gone(pids(top)))

# cq_event_lat: three tools rotating, the ping-pong told the MTU.
bench, top = fake_bench(cb.CqEventLat, "e2e-lat", report=no_report)
rc, err = quiet(bench.inner, 3, [("event-64", 100)])
head, rows = tsv_rows(os.path.join(top, "out", "runs.tsv"))
check("lat: 3 pairs of 3 tools, rotating",
      rc == 0 and [r["tool"] for r in rows] == [
          "ours", "theirs", "pingpong", "theirs", "pingpong", "ours",
          "pingpong", "ours", "theirs"])
by = {r["tool"]: r for r in rows}
check("lat: each tool's figures", (by["ours"]["p50_us"],
                                   by["ours"]["avg_us"]) == ("10.5", "11.25")
      and (by["theirs"]["p50_us"], by["theirs"]["avg_us"]) ==
      ("12.5", "13.75") and (by["pingpong"]["p50_us"],
                             by["pingpong"]["avg_us"]) == ("", "10.000"))
check("lat: our CPU figure, ours only", by["ours"]["tool_cpu_s"] ==
      "0.004000" and by["theirs"]["tool_cpu_s"] == "" and
      by["pingpong"]["cpu_s"] != "")
head, rows = tsv_rows(os.path.join(top, "out", "work.tsv"))
check("lat: the work figure, event mode: each tool under callgrind at 300"
      " and 1300 messages", [(r["tool"], r["iters"], r["ir"]) for r in rows]
      == [("ours", "300", str(250000 + 1700 * 300)),
          ("ours", "1300", str(250000 + 1700 * 1300)),
          ("theirs", "300", str(250000 + 1600 * 300)),
          ("theirs", "1300", str(250000 + 1600 * 1300)),
          ("pingpong", "300", str(250000 + 1500 * 300)),
          ("pingpong", "1300", str(250000 + 1500 * 1300))])
summary = os.path.join(top, "out", "work-summary.json")
with open(summary, "w") as f:
    json.dump({"pairs": 3}, f)
with contextlib.redirect_stdout(io.StringIO()) as report:
    cbs.work_report(os.path.join(top, "out", "work.tsv"), summary,
                    bench.tools, bench.work_iters)
check("lat: the work figure per message, setup left out, in the report",
      "  event-64     ours 1700  theirs 1600  pingpong 1500  ours/theirs"
      " 1.062" in report.getvalue())
with open(summary) as f:
    work = json.load(f)["work"]
check("lat: ... and in the summary",
      work["cases"] == [{"case": "event-64", "ours": 1700.0,
                         "theirs": 1600.0, "pingpong": 1500.0,
                         "ratio": 1700 / 1600}] and work["iters"] == [300,
                                                                       1300])
cmd = read(os.path.join(top, "out", "logs", "pingpong-event-64-pair1-try1"
                        ".cmd"))
check("lat: the ping-pong's flags on record, with the port's MTU",
      cmd == "ibv_rc_pingpong -d none -g 0 -p %d -n 100 -s 64 -m 4096 -e"
      " [%s]\n" % (bench.ports["pingpong"], ADDR))
check("lat: said", "bench-cq_event_lat.sh: event   64 B pair 1 pingpong"
      "                 avg    10.00 us (wall clock bound" in err)

# cm_event_stress: cmtime listens on RDMA CM (rdma resource show, a
# stand-in) and its server does not end after its client.
bench, top = fake_bench(cb.CmEventStress, "e2e-cm",
                        {"FAKE_HANG": "cmtime:9"}, release_grace=1,
                        report=no_report)
rc, err = quiet(bench.inner, 1, [("10", 10)])
head, rows = tsv_rows(os.path.join(top, "out", "runs.tsv"))
check("cm: both tools' rates, cmtime's server stopped after the grace",
      rc == 0 and [(r["tool"], r["conn_per_s"], r["released"])
                   for r in rows] == [("ours", "2000.0000", ""),
                                      ("theirs", "1000.0000", "1")])
check("cm: cmtime's steps kept", json.loads(rows[1]["steps"])[
    "connect"]["total_ms"] == 2.0)
check("cm: said", "10 connections pair 1 theirs   1000.00 conn/s (connect"
      " 10.0 ms, client wall" in err and
      "server stopped after the client ended)" in err)
check("cm: every server and client ended", gone(pids(top)))

# ud_send_lat, rate and threads: their runs' command lines and figures
# (rate's wall-clock check left out: a stand-in run takes no 2 s).
bench, top = fake_bench(cb.UdSendLat, "e2e-udlat", report=no_report)
rc, err = quiet(bench.inner, 1, [("poll-64", 100)])
head, rows = tsv_rows(os.path.join(top, "out", "runs.tsv"))
check("ud_send_lat: ours' lost exchanges, the floor's average",
      rc == 0 and [(r["tool"], r["lost"], r["avg_us"]) for r in rows] == [
          ("ours", "2", "11.25"), ("theirs", "", "13.75"),
          ("pingpong", "", "10.000")] and
      "pair 1 ours     p50    10.50 us avg    11.25 us (wall clock bound"
      in err and ", 2 exchanges lost and retried)" in err)
calls = read(os.path.join(top, "state/calls")).splitlines()
check("ud_send_lat: perftest's UD and the ping-pong's command lines",
      calls[1].split()[:3] == ["ib_send_lat", "-c", "UD"] and
      calls[2].split()[0] == "ibv_ud_pingpong" and
      calls[2].split()[-5:] == ["-n", "100", "-s", "64", ADDR])
bench, top = fake_bench(cb.Rate, "e2e-rate", report=no_report,
                        plausible=lambda *a: None)
rc, err = quiet(bench.inner, 1, [("1000", 2000)])
head, rows = tsv_rows(os.path.join(top, "out", "runs.tsv"))
check("rate: each tool's achieved rate and its error",
      rc == 0 and [(r["tool"], r["achieved"], r["err_pct"])
                   for r in rows] == [("ours", "1000.1", "0.0100"),
                                      ("theirs", "1050.0", "5.0000")])
check("rate: --rate and perftest's software limiter",
      " --rate 1000" in read(os.path.join(top, "state/calls")) and
      "--rate_limit 1000 --rate_limit_type SW --rate_units p" in
      read(os.path.join(top, "state/calls")))
bench, top = fake_bench(cb.Threads, "e2e-threads", report=no_report)
rc, err = quiet(bench.inner, 1, [("shared-64", 1000), ("threads-64", 1000)])
head, rows = tsv_rows(os.path.join(top, "out", "runs.tsv"))
calls = [c.split() for c in read(os.path.join(top, "state/calls"))
         .splitlines()]
check("threads: both sides ours, configured per case",
      rc == 0 and [c[c.index("--threads") + 1:c.index("--output")]
                   for c in calls] == [["2", "--shared-channel"], ["2"],
                                       ["2"], ["1"]])
check("threads: the server's CPU per message and foreign completions",
      rows[0]["us_per_msg"] == "%.4f" % (0.5 * 0.02 * 1e6 / 1000) and
      rows[0]["foreign"] == "3")

# A signal in the middle of a run: exit 143, nothing left running.
bench, top = fake_bench(cb.CqPollBw, "e2e-term",
                        {"FAKE_HANG_CLIENT": "cq_poll_bw:1"})
timer = threading.Timer(1.5, os.kill, (os.getpid(), signal.SIGTERM))
timer.start()
try:
    quiet(bench.main, ["--inner", "7", "poll-64:1000"])
    code = None
except SystemExit as e:
    code = e.code
signal.signal(signal.SIGTERM, signal.SIG_DFL)
check("TERM: exit 143", code == 143)
check("TERM: server and client stopped", gone(pids(top)) and
      len(pids(top)) == 2)

finish()
