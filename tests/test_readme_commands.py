#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Every command the README shows in prose runs as written (issue 47: its
two-node sweep failed with "--out DIR is required").  Each indented
command line is taken as a shell would split it (a "node1$ " prompt and
a trailing comment dropped) and handed to its tool's own argument
parser: a C tool's by running it on this host, which has no RDMA device,
so that a command it parses ends at the device check (77), not as bad
usage (2); cqperf-sweep's parse_args inside a pretend Slurm allocation.
Commands that the test command itself runs (the quick start, the build,
the packages, the regression gate) are named in RUN_ELSEWHERE, so that
a new command cannot slip in untested.  The sample outputs' commands are
scripts/dev/readme-examples.sh's (tests/integration/readme.sh)."""
import os
import re
import shlex
import subprocess
import sys

TOP = os.environ.get("top_srcdir") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..")
BUILD = os.environ.get("top_builddir") or os.path.join(TOP, "build")
sys.path[:0] = [os.path.join(TOP, "scripts", d)
                for d in ("installed", "bench", "dev")] + [
    os.path.join(TOP, "tests"), os.path.join(TOP, "gen")]
from pycheck import check, finish, load_script  # noqa: E402
import tools_list  # noqa: E402

TOOLS = tuple(tools_list.names())
# Run by the test command itself, as written (scripts/test.sh).
RUN_ELSEWHERE = ("scripts/quickstart.sh", "scripts/test.sh",
                 "scripts/installed/cqperf-regress", "./autogen.sh", "make", "tar",
                 "rpmbuild")


def commands(text):
    """The README's indented command lines, split as a shell would."""
    out, pending = [], ""
    for line in text.splitlines():
        if not line.startswith("    ") and not pending:
            continue
        line = pending + line.strip()
        pending = ""
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        line = re.sub(r"^node\d+\$ ", "", line)
        try:
            argv = shlex.split(line, comments=True)
        except ValueError:
            continue
        if argv and (argv[0] in TOOLS or argv[0].startswith("scripts/")
                     or argv[0] in RUN_ELSEWHERE):
            out.append(argv)
    return out


def sweep_module():
    mod = load_script(os.path.join(TOP, "scripts", "installed", "cqperf-sweep"),
                      "cqperf_sweep")
    # Inside salloc -N 2, as the README says to run it.
    mod.slurm_nodes = lambda a: ["node1", "node2"]
    return mod


def main():
    with open(os.path.join(TOP, "README")) as f:
        cmds = commands(f.read())
    check("the README shows tool and sweep commands",
          any(a[0] in TOOLS for a in cmds)
          and any(a[0] == "scripts/installed/cqperf-sweep" for a in cmds))
    has_dev = bool(os.listdir("/sys/class/infiniband")) \
        if os.path.isdir("/sys/class/infiniband") else False
    sweep = None
    for argv in cmds:
        line = " ".join(shlex.quote(a) for a in argv)
        if argv[0] in TOOLS:
            if has_dev:
                print("# %s: not run, this host has an RDMA device" % line)
                continue
            # The host a client names is never reached: the device check
            # comes first.
            r = subprocess.run([os.path.join(BUILD, "src", argv[0])]
                               + argv[1:], capture_output=True, text=True,
                               timeout=20)
            check("%s: parsed (exit %d, 77: no device here)"
                  % (line, r.returncode), r.returncode == 77)
            if r.returncode != 77:
                print("# " + r.stderr.strip().replace("\n", "\n# "))
        elif argv[0] == "scripts/installed/cqperf-sweep":
            sweep = sweep or sweep_module()
            try:
                sweep.parse_args(argv[1:])
                ok = True
            except SystemExit as e:
                ok = e.code == 0
            check("%s: parsed" % line, ok)
        else:
            check("%s: run by the test command as written" % line,
                  argv[0] in RUN_ELSEWHERE)
    finish()


if __name__ == "__main__":
    main()
