#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Unit tests of scripts/installed/cqperflib.py, the module the four Python tools
share: numbers, document loading, key paths, usage errors and the port
wait.  Prints "ok - ..." / "not ok - ..." per check and the summary line;
exit 0 when all pass."""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

TOP = os.environ.get("top_srcdir") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..")
sys.path[:0] = [os.path.join(TOP, "scripts", d)
                for d in ("installed", "bench", "dev")] + [
    os.path.join(TOP, "tests")]
import cqperflib as lib  # noqa: E402
from pycheck import check, finish  # noqa: E402


def raises(fn, *a):
    try:
        fn(*a)
    except ValueError as e:
        return str(e)
    return None


# Numbers: finite JSON numbers only; num() also takes CSV text.
check("is_num takes ints and floats", lib.is_num(3) and lib.is_num(2.5))
check("is_num refuses booleans, text, None, NaN and infinity",
      not any(lib.is_num(v) for v in (True, "3", None, float("nan"),
                                      float("inf"))))
check("num reads numeric text", lib.num("12.5") == 12.5)
check("num refuses booleans, NaN text and words",
      all(lib.num(v) is None for v in (False, "nan", "inf", "x", None)))

# Key paths.
doc = {"a": {"b": {"c": 1}, "l": [1, 2]}, "z": None}
check("lookup by dotted path", lib.lookup(doc, "a.b.c") == (True, 1))
check("lookup by list", lib.lookup(doc, ["a", "b"]) == (True, {"c": 1}))
check("lookup tells a null from a missing key",
      lib.lookup(doc, "z") == (True, None) and
      lib.lookup(doc, "a.x") == (False, None))
check("flatten joins keys and leaves arrays out",
      lib.flatten(doc) == {"a.b.c": 1, "z": None})

# Documents: strict loading.
tmp = tempfile.mkdtemp()


def write(name, text):
    p = os.path.join(tmp, name)
    with open(p, "w") as f:
        f.write(text)
    return p


good = {"schema": "cqperf/1", "tool": "cq_poll_bw", "results": []}
check("load_doc takes a cqperf/1 document",
      lib.load_doc(write("good.json", json.dumps(good)))["tool"]
      == "cq_poll_bw")
check("load_doc names the wrong schema",
      "expected \"cqperf/1\"" in (raises(lib.load_doc, write(
          "other.json", json.dumps(dict(good, schema="x/1")))) or ""))
check("load_doc refuses NaN, which cqperf never writes",
      "NaN" in (raises(lib.load_doc, write("nan.json", '{"a": NaN}')) or ""))
check("load_doc says a file is not JSON",
      "not JSON" in (raises(lib.load_doc, write("bad.json", "{")) or ""))
check("load_doc says a file is missing",
      raises(lib.load_doc, os.path.join(tmp, "none.json")) is not None)
check("load_doc wants a results array",
      "results" in (raises(lib.load_doc, write("nores.json", json.dumps(
          {"schema": "cqperf/1", "tool": "t"}))) or ""))
skipped = []
docs = lib.folder_docs(tmp, lambda n, why: skipped.append(n))
check("folder_docs returns the documents by name",
      [n for n, _ in docs] == ["good.json"])
check("folder_docs reports every other .json file",
      sorted(skipped) == ["bad.json", "nan.json", "nores.json",
                          "other.json"])

# Usage errors: one wording, exit 2, through argparse too.
code = ("import sys; sys.path.insert(0, %r); import cqperflib as l; "
        "p = l.arg_parser('t', 'the help\\n'); p.add_argument('--n', "
        "type=int); p.parse_args(sys.argv[1:])"
        % os.path.join(TOP, "scripts", "installed"))
r = subprocess.run([sys.executable, "-c", code, "--n", "x"],
                   capture_output=True, text=True)
check("a bad option value exits 2", r.returncode == 2)
check("the message says error and points at --help",
      r.stderr.startswith("t: error: argument --n") and
      "Try 't --help'." in r.stderr)
r = subprocess.run([sys.executable, "-c", code, "--help"],
                   capture_output=True, text=True)
check("--help prints the docstring and exits 0",
      r.returncode == 0 and r.stdout == "the help\n")

# The port wait: a real listening socket, then none.
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
port = s.getsockname()[1]
check("listening sees a listening port", lib.listening(port))
t0 = time.monotonic()
check("wait_listen returns at once for it", lib.wait_listen(port, None, 5))
check("... within a second", time.monotonic() - t0 < 1)
s.close()
check("wait_listen gives up after its time",
      not lib.wait_listen(port, None, 0.3))
proc = subprocess.Popen(["true"])
proc.wait()
t0 = time.monotonic()
check("wait_listen stops once the server has ended",
      not lib.wait_listen(port, proc, 10) and time.monotonic() - t0 < 1)

finish()
