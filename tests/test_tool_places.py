#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Every tool in every place src/README's "Adding a tool" names.  The list
of tools is src/base/tools.h's rows (gen/tools_list.py); the build
(tools.am), the tests, doc2man and the packages read them, and
gen/sync-tool-lists.py writes the lists that cannot (the schema's enum,
cqperf-sweep's and cqperf-plot's tuples, cqperf(7)'s SEE ALSO).  What is
left to check is that those lists follow the rows, the places a person
writes (the main, the page, the integration test), and the checklist
itself."""
import glob
import json
import os
import re
import subprocess
import sys

TOP = os.environ.get("top_srcdir") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..")
sys.path[:0] = [os.path.join(TOP, "tests"), os.path.join(TOP, "gen")]
from pycheck import check, finish  # noqa: E402
import tools_list  # noqa: E402


def text(rel):
    with open(os.path.join(TOP, rel)) as f:
        return f.read()


def make_var(makefile, name):
    """The words of a Makefile.am variable, continuation lines joined."""
    m = re.search(r"^%s\s*=\s*((?:.*\\\n)*.*)$" % re.escape(name), makefile,
                  re.M)
    return m.group(1).replace("\\\n", " ").split() if m else []


def places(tool):
    """(place, present) for each place a person writes for a tool beyond
    its row in src/base/tools.h."""
    return [
        ("src/tools/%s.c" % tool,
         os.path.exists(os.path.join(TOP, "src/tools/%s.c" % tool))),
        ("man/%s.1" % tool, os.path.exists(os.path.join(TOP, "man/%s.1" % tool))),
        ("tests/integration/%s*.sh" % tool,
         bool(glob.glob(os.path.join(TOP, "tests/integration/%s*.sh" % tool)))),
    ]


def synced(tool):
    """(place, present) for each list sync-tool-lists.py writes."""
    schema = json.loads(text("doc/cqperf-1.schema.json"))
    return [
        ("man/cqperf.7 SEE ALSO", ".BR %s (1)" % tool in text("man/cqperf.7")),
        ("doc/cqperf-1.schema.json tool enum",
         tool in schema["properties"]["tool"]["enum"]),
        ("scripts/installed/cqperf-sweep TOOLS", '"%s"' % tool in text("scripts/installed/cqperf-sweep")),
    ]


def main():
    tools = tools_list.names()
    check("src/base/tools.h names tools (%d)" % len(tools), len(tools) > 0)
    # The rows as this parser reads them are the C table's.
    lister = os.path.join(os.environ.get("top_builddir") or
                          os.path.join(TOP, "build"), "tests", "test_options")
    if os.path.exists(lister):
        got = subprocess.run([lister, "--tools"], capture_output=True,
                             text=True).stdout.split()
        check("tools_list.py reads the rows the C table has", got == tools)
    # The build takes its programs, sources and pages from the rows.
    am = os.path.join(TOP, "tools.am")
    if os.path.exists(am):
        mk = open(am).read()
        check("tools.am: every tool's program and page, none other",
              make_var(mk, "CQP_COMMANDS") == tools and
              make_var(mk, "CQP_TOOL_BINARIES") == ["src/" + t for t in tools]
              and make_var(mk, "CQP_TOOL_PAGES") == ["man/%s.1" % t for t in tools])
    readme = text("src/README")
    sync = subprocess.run([sys.executable,
                           os.path.join(TOP, "gen", "sync-tool-lists.py"),
                           "--check"], capture_output=True, text=True)
    check("every list sync-tool-lists.py writes follows the rows",
          sync.returncode == 0)
    for line in (sync.stdout + sync.stderr).splitlines():
        print("# " + line)
    for tool in tools:
        missing = [p for p, ok in places(tool) + synced(tool) if not ok]
        check("%s: in every place (%d)" % (tool, len(places(tool)) +
                                          len(synced(tool))), not missing)
        for p in missing:
            print("# %s is missing from %s" % (tool, p))
    # The checklist names every place this test checks, and no fewer.
    unnamed = [p for p, _ in places("new_tool")
               if p.split()[0].replace("new_tool", "TOOL") not in readme]
    check("src/README's checklist names every place checked", not unnamed)
    for p in unnamed:
        print("# src/README does not name " + p.split()[0])
    # The check itself: a tool that is nowhere is missing from every place.
    check("a tool that is nowhere is found missing everywhere",
          not any(ok for _, ok in places("no_such_tool") +
                  synced("no_such_tool")))
    finish()


if __name__ == "__main__":
    main()
