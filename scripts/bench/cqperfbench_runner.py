# SPDX-License-Identifier: BSD-2-Clause
"""cqperfbench_runner: a benchmark's runs on soft-RoCE (scripts/bench).

Runner takes a bench's cases pair by pair in the rotating order
(cqperfbench_cases.schedule), retries a failed run, checks each run's
figures against the wall clock (the bench's plausible), adds what the
machine saw around it (rxe's retransmissions, the deferred kernel work)
and appends its line to runs.tsv; then, where the bench wants it, each
tool's user-space instructions per message under callgrind (work.tsv).
"""
import os
import sys

from cqperfbench import COLUMNS
from cqperfbench_cases import schedule, split_case
from cqperfbench_peers import first_match
from cqperfproc import RunFailed, read_text, write_text

ATTEMPTS = 3


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


def tail(path, n=5):
    return read_text(path).splitlines()[-n:]


class Runner:
    """The runs of bench (a Bench, its peers started) into bench.place's
    out folder: runs.tsv, logs/ and work.tsv."""

    def __init__(self, bench):
        self.bench = bench
        self.logs = os.path.join(bench.place.out, "logs")
        self.tsv = os.path.join(bench.place.out, "runs.tsv")

    def pairs(self, pairs, specs):
        """Every run of every case, pairs pairs each, into runs.tsv:
        whether a run failed after its retries."""
        b = self.bench
        os.makedirs(self.logs, exist_ok=True)
        write_text(self.tsv, "\t".join((b.case_column,) + COLUMNS +
                                       tuple(b.columns)) + "\n")
        failed = False
        for case, iters, pair, order, tool in schedule(specs, pairs,
                                                       b.tools):
            attempts, fields = self.measure(tool, case, iters, pair)
            failed = failed or fields is None
            self.append_row(self.tsv, (case, iters, pair, order, tool,
                                       attempts), fields or {})
        return failed

    def work(self, specs):
        """Each tool's user-space instructions per message (callgrind's
        Ir, the client's process) in the cases of work_modes, into
        work.tsv: two runs of work_iters messages, whose difference
        leaves setup and teardown out.  A count of instructions, not a
        time: only the polls a wakeup takes move it, so a change in our
        own per-message work shows in one run."""
        modes = self.bench.work_modes
        cases = [c for c, _ in specs if split_case(c)[0] in modes]
        if not cases:
            return
        path = os.path.join(self.bench.place.out, "work.tsv")
        write_text(path, "case\ttool\titers\tir\n")
        for case in cases:
            for tool in self.bench.tools:
                for n in self.bench.work_iters:
                    ir = self.callgrind(tool, case, n)
                    with open(path, "a") as f:
                        f.write("%s\t%s\t%d\t%s\n" % (
                            case, tool, n, "" if ir is None else ir))

    def callgrind(self, tool, case, n):
        """The Ir total of one run of tool's client under callgrind, or
        None (said) when the run or the count failed."""
        log = os.path.join(self.logs, "%s-%s-work%d" % (tool, case, n))
        out = log + ".callgrind"
        # valgrind's own lines apart from the tool's output.
        self.bench.procs.client_wrap = ["valgrind", "--tool=callgrind",
                                  "--log-file=" + log + ".valgrind",
                                  "--callgrind-out-file=" + out]
        try:
            self.bench.run(tool, case, n, log)
        except RunFailed as e:
            self.bench.procs.stop_server()
            self.bench.say("%s %s under callgrind failed: %s"
                     % (tool, self.bench.describe(case), e))
            return None
        finally:
            self.bench.procs.client_wrap = []
        ir = first_match(r"^(?:summary|totals): *([0-9]+)", read_text(out))
        if ir is None:
            self.bench.say("%s %s: no Ir total in %s" % (
                tool, self.bench.describe(case), out))
        return ir

    def append_row(self, tsv, head, fields):
        """A run's line: a failed run has its columns empty."""
        cells = [str(v) for v in head] + [
            "" if fields.get(c) is None else str(fields[c])
            for c in self.bench.columns]
        with open(tsv, "a") as f:
            f.write("\t".join(cells) + "\n")

    def measure(self, tool, case, iters, pair):
        """One run with retries: (attempts, record's fields), the fields
        None when every attempt failed."""
        for attempt in range(1, ATTEMPTS + 1):
            log = os.path.join(self.logs, "%s-%s-pair%d-try%d"
                               % (tool, case, pair, attempt))
            before = self.rxe_retries()
            # Only where the TSV keeps it: a walk of /proc at each end.
            counted = "tasklets" in self.bench.columns
            work = deferred_work(self.bench.proc) if counted else None
            try:
                figs = self.bench.run(tool, case, iters, log)
                self.bench.plausible(tool, case, iters, figs)
            except RunFailed as e:
                self.bench.procs.stop_server()
                # perftest's CPU-frequency estimate fails now and then
                # under TCG: what the retries are for.
                self.bench.say("%s %s pair %d attempt %d failed: %s"
                         % (tool, self.bench.describe(case), pair, attempt, e))
                self.say_logs(log)
                continue
            after = self.rxe_retries()
            figs["rxe_retries"] = (after - before if None not in
                                   (before, after) else None)
            if counted:
                figs.update(deferred_delta(work,
                                           deferred_work(self.bench.proc)))
            return attempt, self.bench.record(tool, case, iters, pair, figs)
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
                "completer_retry_err" % self.bench.place.dev)
        try:
            return int(read_text(path))
        except ValueError:
            return None
