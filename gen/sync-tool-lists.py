#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Rewrites the committed lists of tools that cannot read
src/base/tools.h when they run (an installed script, the JSON schema, a
man page) from that header's rows: a new row is in each of them after
./autogen.sh, which runs this.

sync-tool-lists.py          rewrite what differs, naming each file
sync-tool-lists.py --check  change nothing; exit 1 naming what differs"""
import os
import re
import sys
import textwrap

import tools_list

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def py_tuple(name, items):
    """NAME = ("a", "b", ...) folded within 79 columns, as the scripts'
    style has it (one item keeps its comma: a tuple, not a string)."""
    head = name + " = ("
    body = ", ".join('"%s"' % i for i in items) + ("," if len(items) == 1
                                                    else "") + ")"
    return "\n".join(textwrap.wrap(body, 79, initial_indent=head,
                                   subsequent_indent=" " * len(head),
                                   break_long_words=False,
                                   break_on_hyphens=False))


def with_class(cls):
    return [n for n, c in tools_list.rows() if cls in c]


# (file, the region's pattern, its text from the rows); the pattern
# matches the whole region, so a rewrite touches nothing around it.
PLACES = [
    ("doc/cqperf-1.schema.json",
     r'"tool": \{"enum": \[[^\]]*\]\}',
     lambda: '"tool": {"enum": [%s]}' % ", ".join(
         '"%s"' % n for n in tools_list.names())),
    ("scripts/installed/cqperf-sweep",
     r'^TOOLS = \([^)]*\)',
     lambda: py_tuple("TOOLS", tools_list.names())),
    ("scripts/installed/cqperf-plot",
     r'^BW_TOOLS = \([^)]*\)',
     lambda: py_tuple("BW_TOOLS", with_class("bw"))),
    ("scripts/installed/cqperf-plot",
     r'^LAT_TOOLS = \([^)]*\)',
     lambda: py_tuple("LAT_TOOLS", with_class("lat"))),
    # The tools' pages first in SEE ALSO, by name.
    ("man/cqperf.7",
     r'(?<=\.SH SEE ALSO\n)(?:\.BR [a-z_]+ \(1\),\n)+',
     lambda: "".join(".BR %s (1),\n" % n
                     for n in sorted(tools_list.names()))),
]


def main(argv):
    check = argv == ["--check"]
    if argv and not check:
        sys.stderr.write(__doc__)
        return 2
    stale = []
    for rel, pattern, render in PLACES:
        path = os.path.join(TOP, rel)
        text = open(path).read()
        found = re.findall(pattern, text, re.M)
        if len(found) != 1:
            sys.stderr.write("sync-tool-lists: %s: %d regions match %s\n"
                             % (rel, len(found), pattern))
            return 1
        new = re.sub(pattern, lambda _: render(), text, flags=re.M)
        if new == text:
            continue
        stale.append(rel)
        if not check:
            with open(path, "w") as f:
                f.write(new)
    for rel in stale:
        print("%s: %s" % ("differs" if check else "rewrote", rel))
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
