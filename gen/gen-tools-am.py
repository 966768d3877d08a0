#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Writes tools.am, the automake fragment of every tool in
src/base/tools.h: its program, its sources (src/tools/TOOL.c and whatever
src/tools/TOOL/ holds, also as CQP_OWN_TOOL), its man page, and
CQP_COMMANDS.  autogen.sh runs
it before autoreconf, so a new row there is a new binary.

gen-tools-am.py [OUT]: to OUT (default: tools.am in the source tree)."""
import glob
import os
import sys

import tools_list

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def fragment():
    names = tools_list.names()
    out = ["# Generated from src/base/tools.h by gen/gen-tools-am.py "
           "(autogen.sh): do not edit.",
           "CQP_COMMANDS = " + " ".join(names),
           "CQP_TOOL_BINARIES = " + " ".join("src/" + n for n in names),
           "CQP_TOOL_PAGES = " + " ".join("man/%s.1" % n for n in names)]
    for n in names:
        own = sorted(os.path.relpath(p, TOP) for p in
                     glob.glob(os.path.join(TOP, "src/tools", n, "*.[ch]")))
        out.append("CQP_OWN_%s = %s" % (n, " ".join(own)))
        out.append("src_%s_SOURCES = src/tools/%s.c $(CQP_OWN_%s)" % (n, n, n))
    return "\n".join(out) + "\n"


def main(argv):
    path = argv[0] if argv else os.path.join(TOP, "tools.am")
    text = fragment()
    old = open(path).read() if os.path.exists(path) else None
    if old != text:  # untouched, make does not rerun automake
        with open(path, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
