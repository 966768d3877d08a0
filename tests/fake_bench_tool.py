#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""A stand-in for every tool the benchmarks run (tests/test_bench_harness.py
links it under each name): ours (cq_poll_bw, ud_send_bw, cq_event_lat,
ud_send_lat, cm_event_stress), perftest's, rdma-core's ping-pongs and
cmtime, ibv_devinfo, `rdma resource show cm_id` and valgrind.  No device: server and
client meet over TCP on 127.0.0.1, the port from -p, and the client prints
what the real tool would, in its format.

A client is a run given FAKE_ADDR (the test's server address).  The
environment steers it, FAKE_STATE being a folder for its counts:
    FAKE_FAIL=TOOL:N  the first N clients of TOOL exit 1
    FAKE_ZERO=TOOL:N  the first N clients of TOOL report 0 MB/s
    FAKE_HANG=TOOL:N  the first N servers of TOOL never end by themselves,
                      and their clients wait for them (perftest's UD
                      server waiting for lost datagrams)
    FAKE_HANG_CLIENT=TOOL:N  the first N clients of TOOL never end
Every client appends "TOOL ARGS..." to FAKE_STATE/calls, every process its
pid to FAKE_STATE/pids."""
import json
import os
import socket
import subprocess
import sys
import time

TOOL = os.path.basename(sys.argv[0])
ARGS = sys.argv[1:]
STATE = os.environ.get("FAKE_STATE", ".")


def append(name, line):
    with open(os.path.join(STATE, name), "a") as f:
        f.write(line + "\n")


def arg(flag, default=None):
    return ARGS[ARGS.index(flag) + 1] if flag in ARGS else default


def first_times(var, role):
    """Whether this is one of the first N runs of TOOL named in var."""
    tool, _, n = os.environ.get(var, "").partition(":")
    if tool != TOOL:
        return False
    path = os.path.join(STATE, "%s-%s-%s" % (var, role, TOOL))
    seen = len(open(path).read()) if os.path.exists(path) else 0
    with open(path, "a") as f:
        f.write("x")
    return seen < int(n)


def serve(port):
    hang = first_times("FAKE_HANG", "server")
    with socket.create_server(("127.0.0.1", port)) as s:
        conn, _ = s.accept()
        while conn.recv(4096):
            pass
        if hang:
            time.sleep(3600)
        conn.close()


def client_output(size, iters):
    zero = first_times("FAKE_ZERO", "client")
    if TOOL in ("cq_poll_bw", "ud_send_bw"):
        return json.dumps({"results": [{
            "bw_avg_gbps": 0.0 if zero else 8.0, "loss_pct": 0.5,
            "achieved_rate": float(arg("--rate", "0")) * 1.0001,
            "server": {"cpu_pct": 50.0, "seconds": 0.02,
                       "completions": int(iters),
                       "foreign_completions": 3}}]},
            indent=2)
    if TOOL in ("cq_event_lat", "ud_send_lat"):
        return json.dumps({"results": [{
            "lat_us": {"p50": 10.5, "avg": 11.25},
            "client": {"cpu_pct": 40.0, "seconds": 0.01},
            "lost_exchanges": 2}]}, indent=2)
    if TOOL == "cm_event_stress":
        return cm_output(int(arg("-c")))
    if TOOL == "ib_send_bw":
        return (" Max inline data : 0[B]\n #bytes #iterations BW peak[MB/sec]"
                " BW average[MB/sec] MsgRate[Mpps]\n %s %s 900.00 %s %s\n"
                % (size, iters, "0.00" if zero else "800.00",
                   float(arg("--rate_limit", "5e5")) * 1.05 / 1e6))
    if TOOL == "ib_send_lat":
        return (" Max inline data : 0[B]\n #bytes #iterations t_min[usec]"
                " t_max[usec] t_typical[usec] t_avg[usec]\n"
                " %s %s 9.00 30.00 12.50 13.75\n" % (size, iters))
    if TOOL in ("ibv_rc_pingpong", "ibv_ud_pingpong"):
        return "%s iters in 0.01 seconds = 20.00 usec/iter\n" % iters
    if TOOL == "cmtime":
        return "".join("%-13s: %11.2f%11.2f%11.2f%11.2f\n" % (
            step, 2.0, 1.0, 3.0, 80.0) for step in (
                "create id", "resolve addr", "resolve route", "create qp",
                "connect", "disconnect", "destroy"))
    raise SystemExit("fake_bench_tool: no output for " + TOOL)


def cm_output(n):
    return json.dumps({"summary": {
        "connections": n, "conn_per_s": 2000.0, "teardown_per_s": 900.0,
        "client": {"established": n, "disconnected": n}},
        "results": [{"side": "client", "event": "RDMA_CM_EVENT_ESTABLISHED",
                     "count": n, "lat_us": {"p50": 9, "avg": 9, "min": 1,
                                            "max": 20}}]}, indent=2)


def client(port):
    append("calls", " ".join([TOOL] + ARGS))
    if first_times("FAKE_FAIL", "client"):
        print("fake failure")
        return 1
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(b"hello")
        if first_times("FAKE_HANG_CLIENT", "client"):
            time.sleep(3600)
        print(client_output(arg("-s", "0"), arg("-n", "0")), flush=True)
        s.shutdown(socket.SHUT_WR)
        # Like perftest's, the client waits for its server; cmtime's
        # does not.
        while TOOL != "cmtime" and s.recv(4096):
            pass
    return 0


def rdma_cm_ids():
    """`rdma resource show cm_id`: a listener for every listening TCP
    port (the fake servers)."""
    with open("/proc/net/tcp") as f:
        for line in list(f)[1:]:
            local, state = line.split()[1], line.split()[3]
            if state == "0A":
                print("link fake0/1 cm-idn 1 state LISTEN ps TCP pid 1 comm"
                      " cmtime src-addr 127.0.0.1:%d" %
                      int(local.rsplit(":", 1)[1], 16))
    return 0


def fake_valgrind():
    """valgrind --tool=callgrind --callgrind-out-file=F CMD...: CMD run,
    and in F an Ir total of 250000 plus, a message (-n), 1700 for ours,
    1600 for perftest's and 1500 for the ping-pong; 400 and 1100 for
    cq_poll_bw and ib_send_bw."""
    k = next(i for i, a in enumerate(ARGS) if not a.startswith("--"))
    cmd, opts = ARGS[k:], ARGS[:k]
    out = next(a.split("=", 1)[1] for a in opts
               if a.startswith("--callgrind-out-file="))
    rc = subprocess.call(cmd)
    tool = os.path.basename(cmd[0])
    per = {"cq_event_lat": 1700, "ib_send_lat": 1600, "cq_poll_bw": 400,
           "ib_send_bw": 1100}.get(tool, 1500)
    with open(out, "w") as f:
        f.write("events: Ir\nsummary: %d\n"
                % (250000 + per * int(cmd[cmd.index("-n") + 1])))
    return rc


def main():
    append("pids", str(os.getpid()))
    if TOOL == "valgrind":
        return fake_valgrind()
    if TOOL == "ibv_devinfo":
        print("hca_id: fake0\n\tport:\t1\n\t\t\tactive_mtu:\t\t4096 (5)")
        return 0
    if TOOL == "rdma":
        return rdma_cm_ids()
    port = int(arg("-p"))
    if os.environ.get("FAKE_ADDR") in ARGS:
        return client(port)
    serve(port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
