# SPDX-License-Identifier: BSD-2-Clause
"""cqperfbench_peers: the tools a benchmark runs side by side, each as
one server and one client (scripts/bench): ours (build/src), perftest's,
and rdma-core's ping-pong as a latency floor.  Peers knows their command
lines, ports and output: a run's timing and figures, or RunFailed.  Place
is where the inner part runs (what softroce-run.sh gives it).
"""
import json
import os
import re
import subprocess

from cqperfbench import PerftestError, perftest_value
from cqperfbench_cases import words
from cqperflib import UsageError, is_num, lookup
from cqperfproc import RunFailed, read_text, write_text

# Ports: ours, perftest's default, and one for rdma-core's ping-pong
# (whose default is perftest's).
PORTS = {"ours": 18600, "theirs": 18515, "pingpong": 18700}
# On UD, with its default rx depth, perftest posts one receive per
# iteration up to 16000 (UC_MAX_RX; "RX depth" in its server's header).
PERFTEST_UD_MAX_RX = 16000
# Inline: perftest's bandwidth tests use none by default, and on a device
# it does not recognise (rxe) it grants none even when -I asks for more
# ("Max inline data : 0[B]"; perftest_like checks it): ours uses none.
INLINE = 0


def rx_depth_for(iters):
    """The receive queue that matches perftest's on UD."""
    return min(iters, PERFTEST_UD_MAX_RX)


def first_match(pattern, text):
    """Group 1 of the first line of text that matches pattern, or None."""
    m = re.search(pattern, text, re.M)
    return m.group(1) if m else None


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


class Place:
    """Where the inner part runs: what softroce-run.sh gives it."""
    ENV = ("CQPERF_RXE_DEV", "CQPERF_SERVER_ADDR", "CQPERF_RXE_GID_INDEX",
           "CQPERF_OUT")

    def __init__(self, env):
        missing = [v for v in self.ENV if not env.get(v)]
        if missing:
            raise UsageError("--inner wants %s (scripts/guest/softroce-run.sh"
                             " sets them)" % ", ".join(missing))
        self.dev, self.addr, self.gid, self.out = (env[v] for v in self.ENV)


class Peers:
    """A benchmark's tools on soft-RoCE: ours_tool, theirs_tool (perftest's
    unless the bench says) and floor_tool (a ping-pong, or None), their
    servers and clients through procs (cqperfproc.Processes) on ports; say
    for what a run shows but does not fail on."""

    def __init__(self, place, procs, bench):
        self.place, self.procs = place, procs
        self.top, self.ports, self.say = bench.top, bench.ports, bench.say
        self.ours_tool = bench.ours_tool
        self.theirs_tool = bench.theirs_tool
        self.floor_tool = bench.floor_tool
        self.active_mtu = None

    def ours(self, log, args, release=None):
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

    def perftest(self, log, args, release=None):
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

    def pingpong(self, log, iters, args):
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
