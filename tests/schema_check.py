#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Validate cqperf JSON documents against doc/cqperf-1.schema.json.

usage: schema_check.py [--schema FILE] [--quiet] FILE...

Each FILE holds one document (a report written with --output json), or
several one after another (a --persistent server's output).
Prints one line per invalid document with the first errors and their
paths; exits 0 when every document validates, 1 when one does not, 2 on
bad usage or an unreadable schema.
"""
import argparse
import json
import os
import sys

try:
    import jsonschema
except ImportError:  # pragma: no cover - the test command installs it
    sys.stderr.write("schema_check: python3-jsonschema is not installed\n")
    sys.exit(2)

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SCHEMA = os.path.join(HERE, "..", "doc", "cqperf-1.schema.json")


def load_validator(path):
    with open(path, encoding="utf-8") as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def problems(validator, path, limit=3):
    """The first `limit` problems of one file, as text; [] when valid."""
    try:
        docs = read_docs(path)
    except (OSError, ValueError) as e:
        return ["not a JSON document: %s" % e]
    out = []
    for i, doc in enumerate(docs):
        errs = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
        for err in errs:
            where = "/".join(str(p) for p in err.absolute_path) or "(top)"
            if len(docs) > 1:
                where = "document %d: %s" % (i + 1, where)
            out.append("%s: %s" % (where, err.message[:200]))
            if len(out) == limit:
                return out
    return out


def reject_constant(c):
    raise ValueError("%s is not JSON" % c)


def read_docs(path):
    """The JSON documents in path, one after another; ValueError when
    anything else is there."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    dec = json.JSONDecoder(parse_constant=reject_constant)
    docs, at = [], 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            break
        doc, at = dec.raw_decode(text, at)
        docs.append(doc)
    if not docs:
        raise ValueError("empty file")
    return docs


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--schema", default=DEFAULT_SCHEMA)
    ap.add_argument("--quiet", action="store_true",
                    help="print only invalid documents")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args(argv)
    try:
        validator = load_validator(args.schema)
    except (OSError, ValueError, jsonschema.SchemaError) as e:
        sys.stderr.write("schema_check: %s: %s\n" % (args.schema, e))
        return 2
    bad = 0
    for path in args.files:
        errs = problems(validator, path)
        if errs:
            bad += 1
            print("invalid %s: %s" % (path, "; ".join(errs)))
        elif not args.quiet:
            print("valid %s" % path)
    print("%d documents, %d invalid" % (len(args.files), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
