#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Every binary in every place src/README's "Adding a tool" names.  The
list of binaries is Makefile.am's CQP_COMMANDS; for each one this checks
the build, the sources, the option table, the pages, the packages, the
schema, the Python tools and the tests that loop over all tools, and
names what is missing."""
import json
import os
import re
import sys

TOP = os.environ.get("top_srcdir") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..")
sys.path[:0] = [os.path.join(TOP, "tests")]
from pycheck import check, finish  # noqa: E402


def text(rel):
    with open(os.path.join(TOP, rel)) as f:
        return f.read()


def make_var(makefile, name):
    """The words of a Makefile.am variable, continuation lines joined."""
    m = re.search(r"^%s\s*=\s*((?:.*\\\n)*.*)$" % re.escape(name), makefile,
                  re.M)
    return m.group(1).replace("\\\n", " ").split() if m else []


def places(tool):
    """(place, present) for each place a tool must appear in."""
    mk = text("Makefile.am")
    schema = json.loads(text("doc/cqperf-1.schema.json"))
    tools_re = r'^tools="([^"]*)"'
    return [
        ("Makefile.am bin_PROGRAMS", "src/" + tool in make_var(mk, "bin_PROGRAMS")),
        ("Makefile.am src_%s_SOURCES" % tool,
         "src/tools/%s.c" % tool in make_var(mk, "src_%s_SOURCES" % tool)),
        ("src/tools/%s.c" % tool,
         os.path.exists(os.path.join(TOP, "src/tools/%s.c" % tool))),
        ("src/base/options.h CQP_TOOL_%s" % tool.upper(),
         "CQP_TOOL_%s =" % tool.upper() in text("src/base/options.h")),
        ("src/base/words.c tool name",
         'return "%s";' % tool in text("src/base/words.c")),
        ("man/%s.1" % tool, os.path.exists(os.path.join(TOP, "man/%s.1" % tool))),
        ("Makefile.am dist_man_MANS", "man/%s.1" % tool in make_var(mk, "dist_man_MANS")),
        ("man/cqperf.7 SEE ALSO", ".BR %s (1)" % tool in text("man/cqperf.7")),
        ("tools/doc2man.py SEE ALSO", '".BR %s (1)' % tool in text("tools/doc2man.py")),
        ("cqperf.spec.in binary", "%%{_bindir}/%s\n" % tool in text("cqperf.spec.in")),
        ("cqperf.spec.in page", "man1/%s.1" % tool in text("cqperf.spec.in")),
        ("debian/control description", tool in text("debian/control")),
        ("doc/cqperf-1.schema.json tool enum",
         tool in schema["properties"]["tool"]["enum"]),
        ("scripts/cqperf-sweep TOOLS", '"%s"' % tool in text("scripts/cqperf-sweep")),
        ("tests/test_badargs.sh tools",
         tool in re.search(tools_re, text("tests/test_badargs.sh"), re.M).group(1).split()),
        ("tests/test_completion.sh tools",
         tool in re.search(tools_re, text("tests/test_completion.sh"), re.M).group(1).split()),
    ] + ([(".gitignore", "/src/%s\n" % tool in text(".gitignore"))]
         # a release tarball has none
         if os.path.exists(os.path.join(TOP, ".gitignore")) else [])


def main():
    tools = make_var(text("Makefile.am"), "CQP_COMMANDS")
    check("Makefile.am's CQP_COMMANDS lists the five binaries", len(tools) == 5)
    readme = text("src/README")
    for tool in tools:
        missing = [p for p, ok in places(tool) if not ok]
        check("%s: in every place (%d)" % (tool, len(places(tool))), not missing)
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
          not any(ok for _, ok in places("no_such_tool")))
    finish()


if __name__ == "__main__":
    main()
