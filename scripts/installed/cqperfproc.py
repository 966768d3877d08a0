# SPDX-License-Identifier: BSD-2-Clause
"""The processes of one server/client run, for the benches
(cqperfbench_run.py) and the regression gate (cqperf-regress) alike:
each side started pinned and under timeout(1), its output in LOG.server
and LOG.client, a server that may not end by itself stopped after a
grace, and nothing left running whatever way the run ends.  Installed
beside cqperflib in the package's data folder."""
import os
import re
import subprocess
import threading
import time

from cqperflib import wait_listen

# Seconds, both slow under TCG: one server or client (its timeout(1)),
# and a server to start listening.
RUN_TIMEOUT = 180
LISTEN_TIMEOUT = 30


class RunFailed(Exception):
    """One run did not give its figures; the message says what failed."""


def read_text(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def exit_text(rc, timeout):
    """A process's exit status in words; timeout(1) ends with 124."""
    if rc == 124:
        return "ran over %d s" % timeout
    if rc < 0:
        return "was killed by signal %d" % -rc
    return "exited %d" % rc


class Processes:
    """The server and the client of one run, each under timeout(1) so
    that none outlives the harness by long, and the watcher of a server
    that may not end by itself.  stop() leaves nothing running."""

    def __init__(self, run_timeout, pin_server, pin_client):
        self.run_timeout = run_timeout
        self.pin_server, self.pin_client = pin_server, pin_client
        self.server = self.client = self.watcher = None
        self.server_name = ""
        # A command the client runs under (valgrind for Bench.work).
        self.client_wrap = []

    def spawn(self, argv, log, what, err_log=None):
        with open(log, "w") as out, \
                open(err_log or os.devnull, "w") as err:
            try:
                return subprocess.Popen(
                    argv, stdout=out,
                    stderr=err if err_log else subprocess.STDOUT)
            except OSError as e:
                raise RunFailed("%s did not start: %s" % (what, e.strerror))

    def start_server(self, log, cmd, name):
        """cmd in the background on the server's CPU, output to
        LOG.server."""
        self.server_name = name
        self.server = self.spawn(
            self.pin_server + ["timeout", str(self.run_timeout)] + cmd,
            log + ".server", "%s's server" % name)

    def not_listening(self, log, port, how):
        ended = self.server.poll() is not None
        return RunFailed("%s's server %s %s port %d (%s.server)" % (
            self.server_name,
            "ended without listening on" if ended else
            "did not listen within %d s on" % LISTEN_TIMEOUT, how, port,
            log))

    def serve(self, log, port, cmd, name):
        """start_server, then wait until it listens on TCP port."""
        self.start_server(log, cmd, name)
        if not wait_listen(port, self.server, LISTEN_TIMEOUT):
            raise self.not_listening(log, port, "TCP")

    def serve_cm(self, log, port, cmd, name):
        """start_server for a server that listens on RDMA CM port only
        (cmtime: no TCP socket to see)."""
        self.start_server(log, cmd, name)
        end = time.monotonic() + LISTEN_TIMEOUT
        while time.monotonic() < end and self.server.poll() is None:
            if cm_listening(port):
                return
            time.sleep(0.1)
        raise self.not_listening(log, port, "RDMA CM")

    def run_client(self, log, cmd, name, stderr_apart=False):
        """cmd on the client's CPU, output to LOG.client (stderr_apart:
        its stderr to LOG.client.err, for a reader of stdout alone): its
        wall-clock time (wall_us) and its user + system CPU (cpu_s),
        both with connection setup."""
        t0 = time.monotonic()
        self.client = self.spawn(
            ["timeout", str(self.run_timeout)] + self.pin_client +
            self.client_wrap + cmd,
            log + ".client", "%s's client" % name,
            log + ".client.err" if stderr_apart else None)
        # wait4: the CPU of this child and of what it waited for (the
        # tool under timeout and taskset), not of the server.
        _, status, usage = os.wait4(self.client.pid, 0)
        rc = self.client.returncode = os.waitstatus_to_exitcode(status)
        wall_us = max(1, int((time.monotonic() - t0) * 1e6))
        if rc != 0:
            raise RunFailed("%s's client %s (%s.client)"
                            % (name, exit_text(rc, self.run_timeout), log))
        return {"wall_us": wall_us,
                "cpu_s": "%.3f" % (usage.ru_utime + usage.ru_stime)}

    def finish_server(self):
        """Wait for the server, once its client is done with it; it must
        end well."""
        server, self.server = self.server, None
        rc = server.wait()
        if rc != 0:
            raise RunFailed("%s's server %s" % (
                self.server_name, exit_text(rc, self.run_timeout)))

    def watch(self, log, pattern, grace):
        """For a server that may never end by itself (perftest's UD
        bandwidth server waits for lost datagrams, its client for it):
        once LOG.client matches pattern, give the server grace seconds,
        then stop it and say so in LOG.released (finish_released).  The
        watcher wakes 5 times a second; under TCG that alone moved UD
        bandwidth by 10-20 % in event mode, so both tools of a bench get
        it alike."""
        remove(log + ".released")
        stop = threading.Event()
        thread = threading.Thread(target=watch_server, daemon=True, args=(
            self.server, log, re.compile(pattern, re.M), grace, stop))
        thread.start()
        self.watcher = (thread, stop)

    def stop_watcher(self):
        if self.watcher:
            thread, stop = self.watcher
            stop.set()
            thread.join()
            self.watcher = None

    def finish_released(self, log):
        """finish_server after watch: True when the watcher stopped the
        server (which then counts as ended well)."""
        # The client is done: the watcher has acted by now, or need not.
        self.stop_watcher()
        try:
            self.finish_server()
        except RunFailed:
            if not os.path.exists(log + ".released"):
                raise
        return os.path.exists(log + ".released")

    def finish_within(self, log, grace):
        """finish_server for a server that may not end once its client
        has: it gets grace seconds, then is stopped, which LOG.released
        says.  True when it was stopped."""
        remove(log + ".released")
        end = time.monotonic() + grace
        while self.server.poll() is None and time.monotonic() < end:
            time.sleep(0.1)
        if self.server.poll() is None:
            write_text(log + ".released", "server still running %d s after"
                       " its client ended: stopped\n" % grace)
            self.stop_server()
            return True
        self.finish_server()
        return False

    def stop_server(self):
        self.stop_watcher()
        if self.server:
            stop_process(self.server)
            self.server = None

    def stop(self):
        """Nothing left running, whatever way the run ends."""
        self.stop_server()
        if self.client and self.client.returncode is None:
            stop_process(self.client)
        self.client = None


def watch_server(server, log, pattern, grace, stop):
    """Processes.watch's thread."""
    while server.poll() is None and not stop.is_set():
        if pattern.search(read_text(log + ".client")):
            end = time.monotonic() + grace
            while time.monotonic() < end:
                if server.poll() is not None or stop.wait(0.1):
                    return
            write_text(log + ".released", "server still running %d s after"
                       " its client's figures: stopped\n" % grace)
            server.terminate()
            return
        stop.wait(0.2)


def cm_listening(port):
    """Whether `rdma resource show cm_id` (iproute2) lists a listener on
    RDMA CM port ("state LISTEN ... src-addr ADDR:PORT")."""
    try:
        out = subprocess.run(["rdma", "resource", "show", "cm_id"],
                             capture_output=True, text=True,
                             timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return re.search(r"state LISTEN .*src-addr [^ \n]*:%d( |$)" % port, out,
                     re.M) is not None


def stop_process(proc):
    """TERM (timeout(1) hands it on to the tool), then KILL."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def remove(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def write_text(path, text):
    with open(path, "w") as f:
        f.write(text)
