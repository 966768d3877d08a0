#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Unit tests of scripts/dev/qcount.py's report on snapshots written by hand
in the format qemu-plugins/qcount.c writes: per-exchange counts from two lengths
(setup cancels), the kernel-function table from block dumps, the plugin
built, usage errors.  No guest.  Prints "ok - ..." / "not ok - ..." per
check and the summary."""
import json
import os
import subprocess
import sys
import tempfile

TOP = os.environ.get("top_srcdir") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..")
BUILD = os.environ.get("top_builddir") or os.path.join(TOP, "build")
sys.path[:0] = [os.path.join(TOP, "scripts", d)
                for d in ("installed", "bench", "dev")] + [
    os.path.join(TOP, "tests")]
import qcount as q  # noqa: E402
from pycheck import check, finish  # noqa: E402

SCRIPT = os.path.join(TOP, "scripts", "dev", "qcount.py")
K = 0xffffffff81000000
SETUP = [(500, 9000, 90, 800, 7, 3), (400, 7000, 80, 700, 5, 2)]


def snap(per, n, base=(0,) * 6):
    """Counts after n exchanges of per (a tuple of FIELDS per vCPU) on top
    of a setup cost and base."""
    return [[b + s + n * p for b, s, p in zip(base, st, pc)]
            for st, pc in zip(SETUP, per)]


def line(name, cpus):
    return "%s vcpus %d %s\n" % (name, len(cpus),
                                 " ".join(str(x) for c in cpus for x in c))


def run(*args):
    p = subprocess.run([sys.executable, SCRIPT] + list(args),
                       capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


OURS = [(300, 20000, 60, 5000, 2, 1), (350, 19000, 70, 4800, 3, 1)]
THEIRS = [(250, 19000, 50, 4900, 90, 1), (260, 20000, 52, 5000, 95, 1)]

with tempfile.TemporaryDirectory() as d:
    with open(os.path.join(d, "qcount.log"), "w") as f:
        base = (10 ** 6,) * 6
        for n in (1000, 5000):
            for tool, per in (("ours", OURS), ("perftest", THEIRS)):
                f.write(line("tb-a-%s-%d" % (tool, n), snap(per, 0, base)))
                f.write(line("tb-b-%s-%d" % (tool, n), snap(per, n, base)))
    res = q.per_exchange(q.windows(q.load_log(os.path.join(d, "qcount.log"))))
    check("per exchange: setup cancels between the two lengths",
          res["ours"][0]["insns_k"] == 20000 and
          res["perftest"][1]["blocks_k"] == 5000 and
          res["perftest"][0]["tsc_u"] == 90)
    check("the tb- prefix of a block dump's snapshot is not part of its name",
          set(res) == {"ours", "perftest"})

    rc, out, err = run("report", d)
    rows = {" ".join(r.split()[:3]): r.split()[3:] for r in out.splitlines()}
    check("the table: kernel insns per vCPU, a ratio column",
          rc == 0 and rows.get("vCPU0 kernel insns") == ["20000", "19000",
                                                         "1.053"] and
          rows.get("vCPU1 kernel blocks") == ["4800", "5000", "0.960"])
    check("user space stays out of the table (it spins)",
          "user" not in out)
    rc, out, err = run("report", "--json", d)
    doc = json.loads(out) if rc == 0 else {}
    check("--json: every field per vCPU, the user counts too",
          doc.get("per_exchange", {}).get("ours", [{}])[1].get("insns_u") ==
          350 and len(doc["per_exchange"]["ours"]) == 2)

    # Blocks: fn_a runs 10 insns per exchange in ours, 4 in perftest; fn_b
    # the same in both; a user block is left out.
    with open(os.path.join(d, "kallsyms"), "w") as f:
        f.write("%x T fn_a\n%x t fn_b\n%x D data\n" % (K, K + 0x100, K + 0x50))
    for tool, per_a in (("ours", 10), ("perftest", 4)):
        for n in (1000, 5000):
            for ab, runs in (("a", 7), ("b", 7 + n)):
                with open(os.path.join(d, "qtb-tb-%s-%s-%d.txt" %
                                       (ab, tool, n)), "w") as f:
                    f.write("%x 5 %d 0\n" % (K + 0x60, runs * per_a // 5))
                    f.write("%x 3 0 %d\n" % (K + 0x110, runs))
                    f.write("400000 9 %d 0\n" % runs)
    rc, out, err = run("report", "--functions", "2", d)
    fn = [r.split() for r in out.splitlines() if r.startswith("  vCPU")]
    check("--functions: the most different first, by kallsyms' text symbols",
          rc == 0 and fn[0] == ["vCPU0", "fn_a", "10.0", "4.0"] and
          fn[1] == ["vCPU1", "fn_b", "3.0", "3.0"])
    rows = {" ".join(r.split()[:4]): r.split()[4:] for r in out.splitlines()}
    check("--functions: user work outside the spin, a block run once an "
          "exchange",
          rows.get("vCPU0 user work insns") == ["9", "9", "1.000"] and
          rows.get("vCPU0 user work blocks") == ["1", "1", "1.000"])

    with open(os.path.join(d, "qcount.log"), "a") as f:
        f.write(line("a-lonely-1000", snap(OURS, 0)))
    rc, out, err = run("report", d)
    check("a window without its after-snapshot: exit 1, named",
          rc == 1 and "b-lonely-1000" in err)
    with open(os.path.join(d, "qcount.log"), "w") as f:
        f.write("garbage\n")
    rc, out, err = run("report", d)
    check("not a snapshot line: exit 2", rc == 2 and "not \"NAME vcpus" in err)
    rc, out, err = run("run", "--lengths", "100")
    check("run: one length is not enough, exit 2 naming --lengths",
          rc == 2 and "--lengths" in err)
    rc, out, err = run("run", "--tools", "ours,nccl")
    check("run: an unknown tool, exit 2 naming --tools",
          rc == 2 and "--tools" in err)

so = os.path.join(BUILD, "qemu-plugins", "libqcount.so")
if os.path.exists(so):
    syms = subprocess.run(["nm", "-D", "--defined-only", so],
                          capture_output=True, text=True).stdout.split()
    check("the plugin exports what QEMU looks up, and only that",
          {"qemu_plugin_install", "qemu_plugin_version"} <= set(syms) and
          not any(s.startswith("snapshot") or s == "translated"
                  for s in syms))
else:
    check("the plugin is built (%s)" % so, False)
finish()
