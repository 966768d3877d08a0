# SPDX-License-Identifier: BSD-2-Clause
"""The Python unit tests' TAP-like output: "ok - ..." / "not ok - ..." per
check, then the summary line that scripts/test.sh counts."""
import importlib.machinery
import importlib.util
import sys

passed = failed = 0


def load_script(path, name):
    """A program without a .py suffix (scripts/installed/cqperf-regress), loaded as
    a module so that its functions can be tested."""
    loader = importlib.machinery.SourceFileLoader(name, path)
    mod = importlib.util.module_from_spec(
        importlib.util.spec_from_loader(name, loader))
    loader.exec_module(mod)
    return mod


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
