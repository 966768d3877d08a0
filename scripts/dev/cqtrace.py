#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""cqtrace.py: a ping-pong's critical path, segment by segment, from the
traces qemu-plugins/libcqptrace.so writes (see qemu-plugins/cqtrace.c) on
both sides.

Usage:
    cqtrace.py [--json] NAME=CLIENT_TRACE,SERVER_TRACE...

Each exchange is found by time (both sides read one TSC: run them on one
machine): a client's doorbell write (W), the server's next poll that found
a receive (R), the server's next doorbell, the client's next receive.  Its
segments, medians over the exchanges, in usec:

    post    the client's doorbell system call (W to X); on rxe it carries
            the ping through the kernel into the server's CQ, then
            completes the send
    ping    client's W to the server's poll that saw the ping
    turn    that poll to the server's doorbell (its user space)
    pong    the server's W to the client's poll that saw the pong
    rtt     client's W to that poll: ping + turn + pong
    loop    the client's poll to its next W (its user space; perftest's
            latency includes it, ours does not)

One column per NAME; with two, a third gives the first over the second.
Exit: 0, 1 when a trace has no exchange, 2 on usage errors.
"""
import json
import os
import statistics
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.realpath(__file__)),
                             "..", "installed")]
from cqperflib import UsageError, arg_parser, usage_error  # noqa: E402

PROG = "cqtrace.py"
SEGMENTS = ("post", "ping", "turn", "pong", "rtt", "loop")


def load(path):
    """(ticks per usec, [(tsc, kind)]) of one trace file."""
    try:
        with open(path) as f:
            head = f.readline().split()
            if head[:3] != ["#", "cqtrace", "1"]:
                raise UsageError("%s: not a cqtrace file" % path)
            h = dict(zip(head[3::2], head[4::2]))
            rate = ((int(h["tsc1"]) - int(h["tsc0"])) /
                    max(1, int(h["ns1"]) - int(h["ns0"])) * 1000)
            evs = []
            for line in f:
                t, kind, _ = line.split()
                evs.append((int(t), kind))
    except OSError as e:
        raise UsageError("%s: %s" % (path, e.strerror))
    except (KeyError, ValueError):
        raise UsageError("%s: a line is not \"TSC KIND N\"" % path)
    return rate, evs


def after(times, t, i):
    """The index of the first of sorted times at or after index i that
    comes after t; len(times) when none."""
    while i < len(times) and times[i] <= t:
        i += 1
    return i


def exchanges(client, server):
    """Per exchange, its segments in ticks: a dict of lists."""
    cw = [t for t, k in client if k == "W"]
    cx = [t for t, k in client if k == "X"]
    cr = [t for t, k in client if k == "R"]
    sr = [t for t, k in server if k == "R"]
    sw = [t for t, k in server if k == "W"]
    out = {s: [] for s in SEGMENTS}
    i = j = k = m = 0
    for n, w in enumerate(cw):
        nxt = cw[n + 1] if n + 1 < len(cw) else float("inf")
        i = after(sr, w, i)
        j = after(sw, sr[i], j) if i < len(sr) else len(sw)
        k = after(cr, sw[j], k) if j < len(sw) else len(cr)
        m = after(cx, w, m)
        # A lost datagram or a retry: the exchange has no whole path.
        if k >= len(cr) or cr[k] > nxt or m >= len(cx):
            continue
        out["post"].append(cx[m] - w)
        out["ping"].append(sr[i] - w)
        out["turn"].append(sw[j] - sr[i])
        out["pong"].append(cr[k] - sw[j])
        out["rtt"].append(cr[k] - w)
        if nxt != float("inf"):
            out["loop"].append(nxt - cr[k])
    return out


def summary(client_path, server_path):
    """Medians in usec of one run's segments, and its exchange count."""
    rate, client = load(client_path)
    _, server = load(server_path)
    ex = exchanges(client, server)
    if not ex["rtt"]:
        return None
    res = {s: statistics.median(v) / rate for s, v in ex.items() if v}
    res["exchanges"] = len(ex["rtt"])
    return res


def main(argv):
    p = arg_parser(PROG, __doc__)
    p.add_argument("--json", action="store_true")
    p.add_argument("runs", nargs="+")
    a = p.parse_args(argv)
    runs = {}
    for r in a.runs:
        name, eq, files = r.partition("=")
        c, comma, s = files.partition(",")
        if not eq or not comma or not name:
            raise UsageError("%s: give NAME=CLIENT_TRACE,SERVER_TRACE" % r)
        runs[name] = summary(c, s)
        if runs[name] is None:
            print("%s: %s: no whole exchange in the traces" % (PROG, name),
                  file=sys.stderr)
            return 1
    if a.json:
        json.dump(runs, sys.stdout, indent=1, sort_keys=True)
        print()
        return 0
    names = list(runs)
    ratio = len(names) == 2
    print("%-10s" % "usec" + "".join("%12s" % n[:11] for n in names) +
          ("%12s" % "ratio" if ratio else ""))
    for s in SEGMENTS + ("exchanges",):
        vals = [runs[n].get(s) for n in names]
        cells = "".join("%12s" % ("-" if v is None else
                                  "%d" % v if s == "exchanges" else
                                  "%.2f" % v) for v in vals)
        if ratio and s != "exchanges" and None not in vals and vals[1]:
            cells += "%12.3f" % (vals[0] / vals[1])
        print("%-10s%s" % (s, cells))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except UsageError as e:
        usage_error(PROG, str(e))
