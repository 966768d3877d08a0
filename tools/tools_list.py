#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The tools, as src/base/tools.h's CQP_TOOL_LIST rows name them: the one
list the tests read (no test repeats it or counts it).

tools_list.py [--with CLASS]...: their names, one a line, in the list's
order; with --with, only the tools of every CLASS named (bw, lat, ud,
rdma, threads: CQP_TC_*)."""
import os
import re
import sys

HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                      "src", "base", "tools.h")
ROW = re.compile(r'X\(a,\s*(\w+),\s*"(\w+)",\s*([^,]+),', re.S)


def rows(path=HEADER):
    """[(name, set of classes)] in the list's order."""
    text = open(path).read()
    body = text[text.index("#define CQP_TOOL_LIST"):]
    body = body[:body.index("\n\n")].replace("\\\n", " ")
    return [(m.group(2), set(c.lower() for c in
                             re.findall(r"CQP_TC_(\w+)", m.group(3))))
            for m in ROW.finditer(body)]


def names(*classes):
    return [n for n, c in rows() if set(classes) <= c]


def main(argv):
    want = []
    while argv[:1] == ["--with"] and len(argv) >= 2:
        want.append(argv[1])
        argv = argv[2:]
    if argv:
        sys.stderr.write(__doc__)
        return 2
    for n in names(*want):
        print(n)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
