#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Unit tests of scripts/cqperf-regress's verdict over several tries (no
soft-RoCE): a figure counts only when every try found it regressed.
Prints "ok - ..." / "not ok - ..." per check and the summary line; exit 0
when all pass."""
import contextlib
import importlib.machinery
import importlib.util
import io
import os
import sys

TOP = os.environ.get("top_srcdir") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..")
sys.path[:0] = [os.path.join(TOP, "scripts"), os.path.join(TOP, "tests")]
from pycheck import check, finish  # noqa: E402

path = os.path.join(TOP, "scripts", "cqperf-regress")
loader = importlib.machinery.SourceFileLoader("cqperf_regress", path)
spec = importlib.util.spec_from_loader("cqperf_regress", loader)
regress = importlib.util.module_from_spec(spec)
loader.exec_module(regress)

A = ("cq_poll_bw-size_64-cq-mode_event.json", "64 B", "msg_rate_mpps")
B = ("cm_event_stress-cm-mode_nonblock.json", "summary", "conn_per_s")
C = ("ud_send_lat-size_64-cq-mode_poll.json", "64 B", "lat_us.p50")


def run(tries, results):
    """gate() over canned (exit status, regressed figures) per try: its
    status, the tries measured and what it said."""
    measured = []
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = regress.gate(tries, measured.append,
                          lambda n: results[n - 1])
    return rc, measured, err.getvalue()


rc, tries, _ = run(3, [(0, set())])
check("a clean first try passes at once", rc == 0 and tries == [1])

rc, tries, said = run(3, [(1, {A, B}), (1, {C}), (1, {A, B, C})])
check("regressions that do not repeat pass", rc == 0 and tries == [1, 2])
check("... and it says none regressed in every try",
      "no figure regressed in every try" in said)

rc, tries, said = run(3, [(1, {A, B}), (1, {B, C}), (0, set())])
check("a figure that stops regressing passes", rc == 0 and tries == [1, 2, 3])

rc, tries, said = run(3, [(1, {A, B}), (1, {B, C}), (1, {B})])
check("the same figure in every try fails", rc == 1 and tries == [1, 2, 3])
check("... and is named", B[0] in said and B[2] in said and A[0] not in said)
check("... after saying how many persist",
      "1 figure(s) regressed in every try so far" in said)

rc, tries, _ = run(2, [(1, {A}), (1, {A})])
check("--tries 2: two alike fail", rc == 1 and tries == [1, 2])

rc, tries, _ = run(1, [(1, {A})])
check("--tries 1: one regression fails", rc == 1 and tries == [1])

rc, tries, _ = run(3, [(1, {A}), (2, set())])
check("unusable input ends the gate with 2", rc == 2 and tries == [1, 2])

finish()
