#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The tools, as src/base/tools.h's CQP_TOOL_LIST rows name them: the one
list the tests read (no test repeats it or counts it).

tools_list.py: their names, one a line, in the list's order."""
import os
import re
import sys

HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                      "src", "base", "tools.h")
ROW = re.compile(r'X\(a,\s*\w+,\s*"(\w+)",\s*([^,]+),')


def rows():
    """(name, classes) a tool, in the list's order; classes a set of the
    CQP_TC_ words without their prefix, lower case ("bw", "ud"...)."""
    text = open(HEADER).read()
    body = text[text.index("#define CQP_TOOL_LIST"):]
    body = body[:body.index("\n\n")]
    return [(n, {c.lower() for c in re.findall(r"CQP_TC_(\w+)", cls)})
            for n, cls in ROW.findall(body)]


def names():
    """The tools' names, in the list's order."""
    return [n for n, _ in rows()]


def main(argv):
    if argv:
        sys.stderr.write(__doc__)
        return 2
    for n in names():
        print(n)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
