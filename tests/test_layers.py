#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The layer map of src/README, enforced: every file under src/ sits in a
folder the map numbers, every include of ours is written with its folder,
and none reaches a layer numbered after the file's own.  A finding names
the file, the line and both layers."""
import os
import re
import sys
import tempfile

TOP = os.environ.get("top_srcdir") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..")
sys.path[:0] = [os.path.join(TOP, "tests")]
from pycheck import check as _check, finish  # noqa: E402

HEADING = re.compile(r"^(\d+)\. .*: src/([a-z_/]+)/$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def check(what, cond, detail=""):
    """A check whose failure also prints what it found."""
    _check(what, cond)
    if not cond and detail:
        print("\n".join("# " + d for d in detail.splitlines()))


def layer_map(readme):
    """{folder: number} from the numbered headings."""
    layers = {}
    for line in open(readme):
        m = HEADING.match(line.rstrip())
        if m:
            layers[m.group(2)] = int(m.group(1))
    return layers


def layer_of(rel, layers):
    """The layer folder of a path under src/ (the longest that holds it)."""
    best = None
    for folder in layers:
        if rel.startswith(folder + "/") and (
                best is None or len(folder) > len(best)):
            best = folder
    return best


def findings(src, layers):
    """Every violation under src/, one line each."""
    out = []
    for root, _, files in os.walk(src):
        for name in sorted(files):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, src)
            mine = layer_of(rel, layers)
            if mine is None:
                out.append("src/%s: in no folder of src/README's map" % rel)
                continue
            for n, line in enumerate(open(path), 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                inc = m.group(1)
                if not os.path.exists(os.path.join(src, inc)):
                    out.append("src/%s:%d: \"%s\" is not a path under src/ "
                               "(write includes with their folder)"
                               % (rel, n, inc))
                    continue
                theirs = layer_of(inc, layers)
                if theirs is None:
                    out.append("src/%s:%d: \"%s\" is in no layer" %
                               (rel, n, inc))
                elif layers[theirs] > layers[mine]:
                    out.append("src/%s:%d: layer %d (%s) includes \"%s\" of "
                               "layer %d (%s)" % (rel, n, layers[mine], mine,
                                                  inc, layers[theirs], theirs))
    return out


def main():
    src = os.path.join(TOP, "src")
    layers = layer_map(os.path.join(src, "README"))
    check("src/README numbers six layers, each a folder",
          sorted(layers.values()) == list(range(1, 7)), repr(layers))
    found = findings(src, layers)
    check("no include reaches a later layer; every include has its folder",
          not found, "\n".join(found))

    # The check itself: a planted include up the map is found and named.
    with tempfile.TemporaryDirectory() as tmp:
        for d in ("base", "engine"):
            os.makedirs(os.path.join(tmp, d))
        open(os.path.join(tmp, "engine", "bench.h"), "w").close()
        with open(os.path.join(tmp, "base", "kv.c"), "w") as f:
            f.write('#include <stdio.h>\n\n#include "engine/bench.h"\n'
                    '#include "kv.h"\n')
        got = findings(tmp, {"base": 1, "engine": 5})
        check("a planted include up the map is named with file, line and "
              "both layers",
              'src/base/kv.c:3: layer 1 (base) includes "engine/bench.h" '
              "of layer 5 (engine)" in got, "\n".join(got))
        check("a planted include without its folder is named",
              any(g.startswith("src/base/kv.c:4:") for g in got),
              "\n".join(got))
    finish()


if __name__ == "__main__":
    main()
