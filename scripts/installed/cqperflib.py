# SPDX-License-Identifier: BSD-2-Clause
"""What the cqperf Python tools (cqperf-sweep, -compare, -plot, -regress)
share: reading cqperf/1 documents, numbers, key paths, usage errors and
waiting for a server's port.

The tools find this module next to themselves (the source tree's
scripts/) or in the package's data folder ($(pkgdatadir), where `make
install` puts it and writes its path into each installed tool).  Tested
by tests/test_cqperflib.py.
"""
import argparse
import json
import math
import os
import sys
import time

DOC_SCHEMA = "cqperf/1"


class UsageError(Exception):
    """Bad command line or input: the tool says why and exits 2."""


def is_num(v):
    """A finite JSON number (not a boolean)."""
    return (isinstance(v, (int, float)) and not isinstance(v, bool)
            and math.isfinite(v))


def num(v):
    """v as a finite float (numbers and numeric text, as in a CSV cell),
    else None."""
    if isinstance(v, bool) or v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _reject_constant(c):
    raise ValueError("non-JSON constant " + c)


def load_json(path):
    """The JSON value in path, or raise ValueError saying why not.  NaN
    and Infinity are refused: cqperf never writes them."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise ValueError(e.strerror or str(e))
    try:
        return json.loads(raw.decode("utf-8"),
                          parse_constant=_reject_constant)
    except UnicodeDecodeError as e:
        raise ValueError("not UTF-8: %s" % e)
    except ValueError as e:
        raise ValueError("not JSON: %s" % e)


def check_doc(doc):
    """doc if it is a cqperf/1 document, else raise ValueError."""
    if not isinstance(doc, dict):
        raise ValueError("not a JSON object")
    schema = doc.get("schema")
    if schema != DOC_SCHEMA:
        raise ValueError("schema %s, expected %s"
                         % (json.dumps(schema), json.dumps(DOC_SCHEMA)))
    if not isinstance(doc.get("tool"), str):
        raise ValueError("no \"tool\"")
    if not isinstance(doc.get("results"), list):
        raise ValueError("no \"results\" array")
    return doc


def load_doc(path):
    """The cqperf/1 document at path, or raise ValueError saying why not."""
    return check_doc(load_json(path))


def folder_docs(folder, skipped=None):
    """[(name, doc)] of the cqperf/1 documents among folder's *.json files,
    by name; skipped(name, reason) hears of each other .json file."""
    out = []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if not name.endswith(".json") or not os.path.isfile(path):
            continue
        try:
            out.append((name, load_doc(path)))
        except ValueError as e:
            if skipped:
                skipped(name, str(e))
    return out


def flatten(obj, prefix="", out=None):
    """{"a.b": scalar} of a nested object; arrays are left out."""
    if out is None:
        out = {}
    for k, v in obj.items():
        key = prefix + str(k)
        if isinstance(v, dict):
            flatten(v, key + ".", out)
        elif not isinstance(v, list):
            out[key] = v
    return out


def lookup(obj, path):
    """(present, value) of a key path ("a.b" or ["a", "b"]) in obj."""
    if isinstance(path, str):
        path = path.split(".")
    for k in path:
        if not isinstance(obj, dict) or k not in obj:
            return False, None
        obj = obj[k]
    return True, obj


def usage_error(prog, msg):
    """The one usage-error message of every tool; exits 2."""
    sys.stderr.write("%s: error: %s\nTry '%s --help'.\n" % (prog, msg, prog))
    sys.exit(2)


def arg_parser(prog, doc, **kw):
    """An ArgumentParser whose -h/--help prints the tool's docstring and
    whose errors use usage_error."""
    p = argparse.ArgumentParser(prog=prog, add_help=False,
                                usage=argparse.SUPPRESS, **kw)
    p.add_argument("-h", "--help", action=_Help, nargs=0, doc=doc)
    p.error = lambda message: usage_error(prog, message)
    return p


class _Help(argparse.Action):
    def __init__(self, *a, doc="", **kw):
        super().__init__(*a, **kw)
        self.doc = doc

    def __call__(self, parser, namespace, values, option_string=None):
        sys.stdout.write(self.doc.lstrip())
        sys.exit(0)


def listening(port):
    """True when something on this host listens on TCP port (IPv4 or 6)."""
    for f in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(f) as fh:
                next(fh)
                for line in fh:
                    parts = line.split()
                    if len(parts) > 3 and parts[3] == "0A" and \
                            int(parts[1].rsplit(":", 1)[1], 16) == port:
                        return True
        except (OSError, ValueError, StopIteration):
            continue
    return False


def wait_listen(port, proc=None, seconds=15.0):
    """Wait until port listens: True, or False after seconds or once proc
    (the server's Popen, when given) has ended."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            return False
        if listening(port):
            return True
        time.sleep(0.1)
    return False
