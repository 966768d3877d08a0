#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Unit tests of scripts/dev/cqtrace.py on traces written by hand in the
format qemu-plugins/cqtrace.c writes: each exchange found by time, its segments,
a lost ping skipped, the TSC's rate from the header, usage errors.  No
device.  Prints "ok - ..." / "not ok - ..." per check and the summary."""
import json
import os
import subprocess
import sys
import tempfile

TOP = os.environ.get("top_srcdir") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..")
sys.path[:0] = [os.path.join(TOP, "scripts", d)
                for d in ("installed", "bench", "dev")] + [
    os.path.join(TOP, "tests")]
import cqtrace as t  # noqa: E402
from pycheck import check, finish  # noqa: E402

SCRIPT = os.path.join(TOP, "scripts", "dev", "cqtrace.py")
# 2000 ticks a usec.
HEAD = "# cqtrace 1 tsc0 1000 ns0 500 tsc1 2001000 ns1 1000500 events 0 dropped 0\n"


def write(path, events):
    with open(path, "w") as f:
        f.write(HEAD)
        for tsc, kind in sorted(events):
            f.write("%d %s 1\n" % (tsc, kind))


def run(*args):
    p = subprocess.run([sys.executable, SCRIPT] + list(args),
                       capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


with tempfile.TemporaryDirectory() as d:
    cl, sv = os.path.join(d, "c"), os.path.join(d, "s")
    client, server = [], []
    # Five exchanges 200 usec apart (in ticks): post 30, ping 17, turn 1
    # (plus n), pong 16, so rtt 34 + n; a send completion in between.
    for n in range(5):
        b = n * 400000
        client += [(b, "W"), (b + 60000, "X"), (b + 62000, "S"),
                   (b + 68000 + 2000 * n, "R")]
        server += [(b + 34000, "R"), (b + 36000 + 2000 * n, "W"),
                   (b + 90000, "X")]
    # A sixth ping that the server never saw: no whole exchange.
    client += [(2000000, "W"), (2060000, "X")]
    # The server's late look at a stray receive after everything.
    server += [(2500000, "R")]
    write(cl, client)
    write(sv, server)

    rate, evs = t.load(cl)
    check("the header's TSC rate: 2000 ticks a usec", abs(rate - 2000) < 1e-9)
    check("every event read", len(evs) == len(client))
    ex = t.exchanges(evs, t.load(sv)[1])
    check("five whole exchanges, the lost ping skipped",
          len(ex["rtt"]) == 5)
    check("segments by time: post, ping, turn, pong",
          ex["post"][0] == 60000 and ex["ping"][0] == 34000 and
          ex["turn"][2] == 6000 and ex["pong"][0] == 32000)
    check("rtt = ping + turn + pong, each exchange",
          all(r == p + u + q for r, p, u, q in
              zip(ex["rtt"], ex["ping"], ex["turn"], ex["pong"])))
    check("loop: from the pong's poll to the next post",
          ex["loop"] == [400000 - 68000 - 2000 * n for n in range(4)] +
          [2000000 - 1676000])

    s = t.summary(cl, sv)
    check("medians in usec: rtt 36, turn 3, post 30",
          s["rtt"] == 36 and s["turn"] == 3 and s["post"] == 30 and
          s["exchanges"] == 5)

    rc, out, err = run("--json", "a=%s,%s" % (cl, sv))
    doc = json.loads(out) if rc == 0 else {}
    check("--json: one object per run, exit 0",
          rc == 0 and doc.get("a", {}).get("ping") == 17)
    rc, out, err = run("ours=%s,%s" % (cl, sv), "theirs=%s,%s" % (cl, sv))
    lines = out.splitlines()
    check("two runs: a ratio column, 1.000 against itself",
          rc == 0 and lines[0].split()[-1] == "ratio" and
          lines[5].split() == ["rtt", "36.00", "36.00", "1.000"])

    write(os.path.join(d, "empty"), [(5, "W")])
    rc, out, err = run("x=%s,%s" % (os.path.join(d, "empty"), sv))
    check("no whole exchange: exit 1, said", rc == 1 and "no whole" in err)
    rc, out, err = run("x=%s" % cl)
    check("a run without its server's trace: exit 2 naming it",
          rc == 2 and "NAME=CLIENT_TRACE,SERVER_TRACE" in err)
    with open(os.path.join(d, "junk"), "w") as f:
        f.write("hello\n")
    rc, out, err = run("x=%s,%s" % (os.path.join(d, "junk"), sv))
    check("not a trace: exit 2", rc == 2 and "not a cqtrace file" in err)
finish()
