#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Unit tests of scripts/dev/readme_blocks.py, which finds the README's
sample outputs and compares their layout with a new run's: markers,
replacement, number masking, folded prose, dropped lines and data
words, and that the README itself parses.  Prints "ok - ..." /
"not ok - ..." per check and the summary line."""
import io
import os
import sys
import tempfile

TOP = os.environ.get("top_srcdir") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..")
sys.path[:0] = [os.path.join(TOP, "scripts", d)
                for d in ("installed", "bench", "dev")] + [
    os.path.join(TOP, "tests")]
import readme_blocks as rb  # noqa: E402
from pycheck import check, finish  # noqa: E402


def error_of(fn, *a):
    try:
        fn(*a)
    except rb.Error as e:
        return str(e)
    return None


DOC = """intro
<!-- sample one -->
 a  b
<!-- end one -->
text
<!-- sample two -->
<!-- end two -->
"""

# Markers.
check("two samples found, with their line ranges",
      rb.blocks(DOC) == {"one": (2, 3), "two": (6, 6)})
check("a sample's text", rb.get(DOC, "one") == " a  b")
check("an empty sample", rb.get(DOC, "two") == "")
new = rb.put(DOC, "two", "x   \ny\n\n")
check("put replaces only its sample, trailing blanks dropped",
      new == DOC.replace("<!-- sample two -->\n",
                         "<!-- sample two -->\nx\ny\n"))
check("put then get gives the body back", rb.get(new, "two") == "x\ny")
check("put keeps the file's last newline", new.endswith("-->\n"))
check("put of nothing empties it",
      rb.put(new, "two", "") == DOC)
check("no end marker is an error",
      "no end marker" in (error_of(rb.blocks, "<!-- sample a -->\nx\n") or ""))
check("a nested sample is an error, naming the line",
      "line 2" in (error_of(rb.blocks,
                            "<!-- sample a -->\n<!-- sample b -->\n") or ""))
check("a mismatched end is an error",
      "end of b" in (error_of(rb.blocks,
                              "<!-- sample a -->\n<!-- end b -->\n") or ""))
check("a repeated name is an error",
      "again" in (error_of(rb.blocks, "<!-- sample a -->\n<!-- end a -->\n"
                           "<!-- sample a -->\n<!-- end a -->\n") or ""))
check("a misspelt marker is an error",
      error_of(rb.blocks, "<!-- sample a b -->\n") is not None)
check("an unknown sample is an error", error_of(rb.get, DOC, "three"))

# Masking: figures go, words inside names and headers stay.
check("figures, rates, signs, percent and ratios masked",
      rb.mask(" 4096  63.73  2.41k  +13.3%  0.0/99.9  -  -25%") ==
      " #  #  #  #%  #/#  #  #%")
check("header words with digits kept",
      rb.mask(" p50  p99.9  t_min[usec]  rxe0  size_64.json") ==
      " p50  p99.9  t_min[usec]  rxe0  size_64.json")
check("a figure below its tick (<1 tick) is a figure",
      rb.mask("     machine  72783  <1 tick") ==
      rb.mask("     machine  72783  1234") == "     machine  #  #")
check("a rule is a rule at any length",
      rb.mask("-" * 80) == rb.mask("-" * 98) == "----")
check("data words masked", rb.mask(" at 200/s: hybrid, p99", ["poll|event|hybrid"])
      == " at #/s: %, p99")

TABLE = """\
--------------------------------------------------------------------------------
 #bytes  #iterations  BW peak[MB/sec]
 4096    2000         63.73
     cost    CPU%  usr/sys   compl/wake
     client  99.9  0.0/99.9  -
--------------------------------------------------------------------------------"""
WIDER = """\
-------------------------------------------------------------------------------------
 #bytes  #iterations  BW peak[MB/sec]
 65536   200000       1063.73
     cost    CPU%   usr/sys     compl/wake
     client  100.0  100.0/99.9  12.5
-------------------------------------------------------------------------------------"""
check("other figures and widths: the same layout",
      rb.compare("t", TABLE, WIDER) is None)
renamed = TABLE.replace("BW peak[MB/sec]", "BW max[MB/sec] ")
diff = rb.compare("quickstart", TABLE, renamed) or ""
check("a renamed header differs, the diff names the sample",
      "README sample quickstart" in diff and "BW max" in diff)
check("a column moved under the row differs",
      rb.compare("t", TABLE, TABLE.replace("     cost", "      cost")))
check("a line more differs",
      rb.compare("t", TABLE, TABLE + "\n extra line"))
check("a column gap that became a space differs",
      rb.compare("t", TABLE, TABLE.replace("4096    2000", "4096 2000")))
check("trailing blank lines do not count",
      rb.compare("t", TABLE, TABLE + "\n\n") is None)

# Folded prose: where it folds depends on the figures.
FOLD_A = """\
 Strategy: at each rate, the least server CPU:
  at 200/s: hybrid, p99 4543.2 us, server CPU 7.0 % (poll 15698.4 us, 99.9 %; event 10840.6 us, 14.9
    %)"""
FOLD_B = """\
 Strategy: at each rate, the least server CPU:
  at 200/s: event, p99 904.7 us, server CPU 4.5 % (poll 1370.0 us, 99.9 %; hybrid 1362.3 us, 5.7 %)"""
check("unfold joins a line indented two more than the one before",
      [t for t, f in rb.unfold(FOLD_A.split("\n"))][1].endswith("14.9 %)"))
check("a fold elsewhere and other modes: the same layout",
      rb.compare("t", FOLD_A, FOLD_B, words=["poll|event|hybrid"]) is None)
check("without the data words the modes differ",
      rb.compare("t", FOLD_A, FOLD_B) is not None)
check("a table's indented block is not a fold",
      len(rb.unfold(TABLE.split("\n"))) == 6)

# Lines only some runs print.
WITH = TABLE + "\n Rate not reached in poll: 24074/s offered, 13785/s achieved; the\n   window"
check("dropped lines (and their folds) do not count",
      rb.compare("t", TABLE, WITH, drop=["^Rate not reached"]) is None)
check("without --drop they count", rb.compare("t", TABLE, WITH) is not None)

# check: every sample of a file against a folder of new outputs.
with tempfile.TemporaryDirectory() as d:
    with open(os.path.join(d, "F"), "w") as f:
        f.write("<!-- sample t -->\n%s\n<!-- end t -->\n"
                "<!-- sample s -->\n%s\n<!-- end s -->\n" % (TABLE, FOLD_A))
    with open(os.path.join(d, "t.out"), "w") as f:
        f.write(WIDER + "\n")
    with open(os.path.join(d, "s.out"), "w") as f:
        f.write(FOLD_B + "\n")
    out = io.StringIO()
    rc = rb.check_all(os.path.join(d, "F"), d,
                      ["--word", "s=poll|event|hybrid"], out)
    check("check: both samples the same layout (data words per sample)",
          rc == 0 and out.getvalue() ==
          "sample t: same layout\nsample s: same layout\n")
    out = io.StringIO()
    rc = rb.check_all(os.path.join(d, "F"), d, [], out)
    check("check: without the sample's words, s differs and is named",
          rc == 1 and "sample s: the README's layout differs" in out.getvalue()
          and "sample t: same layout" in out.getvalue())
    check("check: a malformed option is an error",
          error_of(rb.check_all, os.path.join(d, "F"), d, ["--word", "x"]))

# The command line, as readme-examples.sh calls it.
check("main: usage error is 2", rb.main(["nonsense"]) == 2)

# The README itself: its samples parse, and the ones the script makes.
readme = open(os.path.join(TOP, "README")).read()
names = error_of(rb.blocks, readme) or list(rb.blocks(readme))
check("README's samples parse: %s" % names, isinstance(names, list) and names)
script = open(os.path.join(TOP, "scripts", "dev", "readme-examples.sh")).read()
check("readme-examples.sh makes every README sample",
      isinstance(names, list) and all("\t%s)" % n in script for n in names))
lines = readme.split("\n")
check("README: at most 200 lines (%d)" % (len(lines) - 1), len(lines) - 1 <= 200)
wide = [i + 1 for i, ln in enumerate(lines) if len(ln) > 100]
check("README: no line over 100 columns %s" % wide, not wide)

finish()
