#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""qcount.py: guest instructions per exchange of ud_send_lat and perftest's
ib_send_lat -c UD (--tools: and rdma-core's ibv_ud_pingpong, "pingpong"),
kernel and user space apart, counted by the QEMU plugin
qemu-plugins/libqcount.so (see qemu-plugins/qcount.c) outside both tools and
outside the emulator's timing.

Usage:
    CQPERF_QEMU_PLUGIN=$PWD/build/qemu-plugins/libqcount.so \\
      scripts/guest/softroce-run.sh --out DIR -- scripts/dev/qcount.py run [OPTIONS]
    qcount.py report [--json] [--functions K] DIR

run (in the guest): each tool's ping-pong (64 B, poll mode, server on
CPU 0, client on CPU 1, no inline data, --rx-depth the shorter length
for both, as the bench runs them but for that depth) at two
lengths, a snapshot before and after each client; with --blocks, each
snapshot also dumps the blocks run, and /proc/kallsyms is saved.

report: per exchange, the difference between the two lengths' counts
over the difference in exchanges, which takes out setup and teardown:
the kernel's instructions and translated blocks run (about one per taken
branch) per vCPU.  They include timer ticks and the odd reseeding of the
kernel's random pool, noise that longer runs shrink.  User space is left
out of the table (--json has it): poll mode spins there, so its counts
grow with the time an exchange takes; the benches' callgrind figure is
the user-space work per message.  With blocks dumped, --functions K adds
the user-space work outside the spin (the instructions of the blocks that
run fewer than 4 times an exchange, and how many of them run at least
every other exchange) and lists
the K kernel functions whose instructions per exchange differ most
between the first two tools.  Two tools add a ratio column.
Exit: 0; 1 when a snapshot is missing or the plugin did not answer;
2 on usage errors.
"""
import bisect
import collections
import json
import os
import subprocess
import sys
import time

sys.path[:0] = [os.path.join(os.path.dirname(os.path.realpath(__file__)),
                             "..", "installed")]
from cqperflib import (UsageError, arg_parser, usage_error,  # noqa: E402
                       wait_listen)

PROG = "qcount.py"
FIELDS = ("insns_u", "insns_k", "blocks_u", "blocks_k", "tsc_u", "tsc_k")
KERNEL = 0xffff800000000000
TOOLS = ("ours", "perftest", "pingpong")
# A user block run fewer times an exchange is the exchange's own work.
SPIN_RUNS = 4


class Missing(Exception):
    pass


# ---- run (in the guest) ----

def mark(out, name, wait_s=10):
    """Asks the plugin for a snapshot and waits until it is taken."""
    path = os.path.join(out, "qmark-" + name)
    try:
        open(path, "w").close()
    except FileNotFoundError:
        pass  # over 9p: the plugin took it and removed it mid-create
    end = time.monotonic() + wait_s
    while os.path.exists(path):
        if time.monotonic() > end:
            raise Missing("no snapshot %s within %d s: is the plugin "
                          "loaded (CQPERF_QEMU_PLUGIN)?" % (name, wait_s))
        time.sleep(0.005)


def commands(tool, a, n, port):
    dev = ["-d", a.dev, "-x", str(a.gid)]
    if tool == "ours":
        s = [os.path.join(a.bin, "ud_send_lat")] + dev + ["-p", str(port)]
        c = s + ["-t", "1", "-r", str(a.depth), "-I", "0", "--warmup", "0",
                 "--cq-mode", "poll", "-s", "64", "-n", str(n)]
        return s, c
    if tool == "pingpong":
        s = ["ibv_ud_pingpong", "-d", a.dev, "-g", str(a.gid), "-p", str(port),
             "-s", "64", "-n", str(n), "-r", str(a.depth)]
        return s, list(s)
    s = ["ib_send_lat", "-c", "UD"] + dev + [
        "-p", str(port), "-s", "64", "-n", str(n), "-r", str(a.depth), "-F"]
    return s, list(s)


def run(a):
    out = os.environ.get("CQPERF_OUT")
    if not out or not os.path.isdir(out):
        raise UsageError("run: CQPERF_OUT is not a directory (run it "
                         "through scripts/guest/softroce-run.sh)")
    prefix = "tb-" if a.blocks else ""
    if a.blocks:
        with open("/proc/kallsyms") as f, \
                open(os.path.join(out, "kallsyms"), "w") as g:
            g.write(f.read())
    port = a.port
    for n in a.lengths:
        for tool in a.tools:
            port += 1
            s, c = commands(tool, a, n, port)
            with open(os.path.join(out, "%s-%d.log" % (tool, n)), "w") as log:
                srv = subprocess.Popen(["taskset", "-c", "0"] + s,
                                       stdout=log, stderr=log)
                # A server that never listens fails its client below.
                wait_listen(port, srv, 20)
                mark(out, "%sa-%s-%d" % (prefix, tool, n))
                rc = subprocess.call(["taskset", "-c", "1"] + c +
                                     [a.server], stdout=log, stderr=log)
                mark(out, "%sb-%s-%d" % (prefix, tool, n))
                try:
                    srv.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    srv.kill()
                    srv.wait()
            if rc != 0:
                print("%s: %s client at %d exchanges exited %d (see %s-%d.log)"
                      % (PROG, tool, n, rc, tool, n), file=sys.stderr)
                return 1
    return 0


# ---- report ----

def load_log(path):
    """{name: [[field per FIELDS] per vCPU]} from qcount.log."""
    snaps = {}
    try:
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) < 3 or p[1] != "vcpus":
                    raise ValueError
                v = int(p[2])
                nums = [int(x) for x in p[3:]]
                if len(nums) != v * len(FIELDS):
                    raise ValueError
                name = p[0][3:] if p[0].startswith("tb-") else p[0]
                snaps[name] = [nums[i * len(FIELDS):(i + 1) * len(FIELDS)]
                               for i in range(v)]
    except OSError as e:
        raise UsageError("%s: %s" % (path, e.strerror))
    except ValueError:
        raise UsageError("%s: a line is not \"NAME vcpus V COUNTS...\"" % path)
    return snaps


def windows(snaps):
    """{tool: {length: after - before, per vCPU and field}}."""
    out = collections.defaultdict(dict)
    for name in snaps:
        if not name.startswith("a-"):
            continue
        tool, _, n = name[2:].rpartition("-")
        b = snaps.get("b-" + name[2:])
        if b is None or not n.isdigit():
            raise Missing("snapshot b-%s is missing" % name[2:])
        a = snaps[name]
        out[tool][int(n)] = [[y - x for x, y in zip(ca, cb)]
                             for ca, cb in zip(a, b)]
    return out


def per_exchange(wins):
    """{tool: [{field: per exchange} per vCPU]} from each tool's shortest
    and longest runs."""
    res = {}
    for tool, by_n in wins.items():
        if len(by_n) < 2:
            raise Missing("%s: snapshots of two lengths are needed" % tool)
        lo, hi = min(by_n), max(by_n)
        res[tool] = [{f: (h[i] - l[i]) / (hi - lo)
                      for i, f in enumerate(FIELDS)}
                     for l, h in zip(by_n[lo], by_n[hi])]
    return res


def load_kallsyms(path):
    syms = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 3 and p[1] in "tTwW":
                syms.append((int(p[0], 16), p[2]))
    syms.sort()
    return [s for s, _ in syms], [n for _, n in syms]


def block_counts(path, lookup):
    """Instructions run: {(function, vcpu)} of the kernel's blocks and
    {(address, length, vcpu)} of user space's (summed over the blocks
    translated again at one address)."""
    kern, user = collections.Counter(), collections.Counter()
    with open(path) as f:
        for line in f:
            p = line.split()
            va, insns = int(p[0], 16), int(p[1])
            for cpu, runs in enumerate(p[2:]):
                if runs == "0":
                    continue
                if va >= KERNEL:
                    kern[(lookup(va), cpu)] += insns * int(runs)
                else:
                    user[(va, insns, cpu)] += insns * int(runs)
    return kern, user


def blocks(d, tools, lengths):
    """Per tool, per exchange: {(function, vcpu): kernel instructions} and
    {vcpu: (user instructions, distinct blocks)} of the user blocks that
    run fewer than SPIN_RUNS times an exchange, the exchange's own work
    (the spin loop's run hundreds of times)."""
    addrs, names = load_kallsyms(os.path.join(d, "kallsyms"))

    def lookup(va):
        i = bisect.bisect_right(addrs, va) - 1
        return names[i] if i >= 0 else "?"

    kern, work = {}, {}
    for tool in tools:
        lo, hi = min(lengths[tool]), max(lengths[tool])
        w = {}
        for n in (lo, hi):
            ka, ua = block_counts(
                os.path.join(d, "qtb-tb-a-%s-%d.txt" % (tool, n)), lookup)
            kb, ub = block_counts(
                os.path.join(d, "qtb-tb-b-%s-%d.txt" % (tool, n)), lookup)
            w[n] = ({x: kb[x] - ka.get(x, 0) for x in kb},
                    {x: ub[x] - ua.get(x, 0) for x in ub})
        diff = [{x: (w[hi][i].get(x, 0) - w[lo][i].get(x, 0)) / (hi - lo)
                 for x in set(w[lo][i]) | set(w[hi][i])} for i in (0, 1)]
        kern[tool] = diff[0]
        work[tool] = collections.defaultdict(lambda: [0.0, 0])
        for (va, insns, cpu), per in diff[1].items():
            if 0 < per < SPIN_RUNS * insns:
                work[tool][cpu][0] += per
                # Blocks of the exchange, not setup's stragglers.
                work[tool][cpu][1] += per >= insns / 2
    return kern, work


def functions(kern, tools, k):
    """The k kernel (function, vcpu) whose instructions per exchange
    differ most between the first two tools."""
    t0, t1 = tools[:2]
    keys = set(kern[t0]) | set(kern[t1])
    top = sorted(keys, key=lambda x: (-abs(kern[t0].get(x, 0) -
                                          kern[t1].get(x, 0)), x))[:k]
    return [{"function": fn, "vcpu": cpu, t0: kern[t0].get((fn, cpu), 0),
             t1: kern[t1].get((fn, cpu), 0)} for fn, cpu in top]


def rows(table, tools, ncpu, fields):
    """Per vCPU, a line per (field, label): each tool's figure, and the
    first over the second when there are two tools."""
    for cpu in range(ncpu):
        for f, label in fields:
            vals = [table[t][cpu][f] for t in tools]
            line = "%-22s" % ("vCPU%d %s" % (cpu, label))
            line += "".join("%12.0f" % v for v in vals)
            if len(tools) == 2 and vals[1]:
                line += "%12.3f" % (vals[0] / vals[1])
            print(line)


def report(a):
    snaps = load_log(os.path.join(a.dir, "qcount.log"))
    wins = windows(snaps)
    res = per_exchange(wins)
    tools = [t for t in TOOLS if t in res] + sorted(set(res) - set(TOOLS))
    ncpu = max(1 + max((i for i, c in enumerate(res[t])
                        if any(c.values())), default=0) for t in tools)
    fns = work = None
    if a.functions:
        if len(tools) < 2:
            raise UsageError("--functions: two tools' blocks are needed")
        kern, work = blocks(a.dir, tools, {t: wins[t] for t in tools})
        fns = functions(kern, tools, a.functions)
        work = {t: [{"insns": work[t][c][0], "blocks": work[t][c][1]}
                    for c in range(ncpu)] for t in tools}
    if a.json:
        json.dump({"per_exchange": {t: res[t][:ncpu] for t in tools},
                   "functions": fns, "user_work": work}, sys.stdout,
                  indent=1, sort_keys=True)
        print()
        return 0
    ratio = len(tools) == 2
    print("%-22s" % "per exchange" + "".join("%12s" % t[:11] for t in tools) +
          ("%12s" % "ratio" if ratio else ""))
    rows(res, tools, ncpu, (("insns_k", "kernel insns"),
                            ("blocks_k", "kernel blocks")))
    if work:
        rows(work, tools, ncpu, (("insns", "user work insns"),
                                 ("blocks", "user work blocks")))
    if fns:
        print("\nkernel functions, insns per exchange (most different "
              "first)")
        for r in fns:
            print("  vCPU%d %-36s %9.1f %9.1f" % (
                r["vcpu"], r["function"][:36], r[tools[0]], r[tools[1]]))
    return 0


def main(argv):
    p = arg_parser(PROG, __doc__)
    sub = p.add_subparsers(dest="cmd")
    r = sub.add_parser("run")
    r.add_argument("--bin", default="build/src")
    r.add_argument("--dev", default=os.environ.get("CQPERF_RXE_DEV", "rxe0"))
    r.add_argument("--gid", type=int,
                   default=int(os.environ.get("CQPERF_RXE_GID_INDEX", "1")))
    r.add_argument("--server", default=os.environ.get("CQPERF_SERVER_ADDR",
                                                      "198.18.0.1"))
    r.add_argument("--port", type=int, default=18750)
    r.add_argument("--lengths", default="2000,12000")
    r.add_argument("--tools", default="ours,perftest")
    r.add_argument("--blocks", action="store_true")
    q = sub.add_parser("report")
    q.add_argument("--json", action="store_true")
    q.add_argument("--functions", type=int, default=0)
    q.add_argument("dir")
    a = p.parse_args(argv)
    if a.cmd == "run":
        try:
            a.lengths = sorted({int(x) for x in a.lengths.split(",")})
        except ValueError:
            raise UsageError("--lengths: give two or more exchange counts, "
                             "like 2000,12000")
        if len(a.lengths) < 2 or a.lengths[0] < 1:
            raise UsageError("--lengths: give two or more exchange counts "
                             "(1 or more), like 2000,12000")
        a.tools = a.tools.split(",")
        if not set(a.tools) <= set(TOOLS):
            raise UsageError("--tools: a comma list of %s" % ", ".join(TOOLS))
        a.depth = min(a.lengths)
        return run(a)
    if a.cmd == "report":
        if a.functions < 0:
            raise UsageError("--functions: 0 or more")
        return report(a)
    raise UsageError("give run or report")


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except UsageError as e:
        usage_error(PROG, str(e))
    except Missing as e:
        print("%s: %s" % (PROG, e), file=sys.stderr)
        sys.exit(1)
