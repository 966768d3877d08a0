# SPDX-License-Identifier: BSD-2-Clause
"""The Python unit tests' TAP-like output: "ok - ..." / "not ok - ..." per
check, then the summary line that scripts/test.sh counts."""
import sys

passed = failed = 0


def check(what, cond):
    global passed, failed
    if cond:
        passed += 1
        print("ok - " + what)
    else:
        failed += 1
        print("not ok - " + what)


def finish():
    """Prints the summary line and exits: 0 when every check passed."""
    print("%d passed, %d failed, 0 skipped" % (passed, failed))
    sys.exit(1 if failed else 0)
