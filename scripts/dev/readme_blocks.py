#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The README's sample outputs: find them, replace them, and compare
their layout with what the binaries print now.

A sample is the lines between a marker line "<!-- sample NAME -->" and
"<!-- end NAME -->" (README, doc/*.md), kept verbatim: the script that
makes them (scripts/dev/readme-examples.sh) owns what the sample holds.

Layout is what stays when the figures change: the lines, each one's
indentation, its words and headers, and where a table's columns are
separated (two spaces or more) rather than words in prose.  Numbers
become "#"; a rule of dashes is a rule whatever its length (the table
is as wide as its widest cell); a line folded under its first word (the
human report folds prose at 100 columns) is joined again before it is
compared, since where it folds depends on the figures.  Words that are
data rather than layout (the mode a strategy line chose, a verdict) and
lines that only some runs print (a rate not reached) are given to
layout() by the caller.

Command line (for shell scripts):
    readme_blocks.py names FILE             the samples' names, a line each
    readme_blocks.py get FILE NAME          a sample's text
    readme_blocks.py put FILE NAME NEWFILE  replace a sample's text in FILE
    readme_blocks.py check FILE DIR [--drop NAME=RE]... [--word NAME=RE]...
                                            every sample of FILE against
                                            DIR/NAME.out, as compare does
    readme_blocks.py compare NAME FILE NEW [--drop RE]... [--word RE]...
                                            exit 1 with a diff when the
                                            layout of FILE's sample NAME
                                            and NEW's differ
"""
import difflib
import re
import sys

BEGIN = re.compile(r"^<!-- sample ([A-Za-z0-9_-]+) -->$")
END = re.compile(r"^<!-- end ([A-Za-z0-9_-]+) -->$")

# A number standing alone: not inside a word ("p99.9", "rxe0", "size_64"),
# with an SI prefix of a rate ("2.41k") taken with it; "-" alone is the
# report's "no figure".
NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)*(?:[kMG](?![A-Za-z]))?")
DASH = re.compile(r"(?<!\S)-(?!\S)")
RULE = re.compile(r"^\s*-{4,}[-\s]*$")


class Error(ValueError):
    pass


def blocks(text):
    """{name: (first, end)}: a sample's lines are lines[first:end] of
    text.split("\\n").  Unbalanced, nested or repeated markers raise
    Error, naming the line."""
    found = {}
    open_name = open_at = None
    for i, line in enumerate(text.split("\n")):
        b, e = BEGIN.match(line), END.match(line)
        if b:
            if open_name is not None:
                raise Error("line %d: sample %s starts inside sample %s"
                            % (i + 1, b.group(1), open_name))
            if b.group(1) in found:
                raise Error("line %d: sample %s again" % (i + 1, b.group(1)))
            open_name, open_at = b.group(1), i + 1
        elif e:
            if e.group(1) != open_name:
                raise Error("line %d: end of %s, but %s is open"
                            % (i + 1, e.group(1), open_name))
            found[open_name] = (open_at, i)
            open_name = None
        elif line.startswith("<!-- sample") or line.startswith("<!-- end"):
            raise Error("line %d: a marker that is not one: %r" % (i + 1, line))
    if open_name is not None:
        raise Error("sample %s has no end marker" % open_name)
    return found


def get(text, name):
    where = blocks(text)
    if name not in where:
        raise Error("no sample %s" % name)
    first, end = where[name]
    return "\n".join(text.split("\n")[first:end])


def put(text, name, body):
    """text with sample NAME's lines replaced by body (trailing newlines
    and trailing blanks of each line dropped)."""
    where = blocks(text)
    if name not in where:
        raise Error("no sample %s" % name)
    first, end = where[name]
    lines = text.split("\n")
    new = [ln.rstrip() for ln in body.rstrip("\n").split("\n")] if body.strip() else []
    return "\n".join(lines[:first] + new + lines[end:])


def _indent(line):
    return len(line) - len(line.lstrip(" "))


def unfold(lines):
    """Physical lines to logical ones: a line indented exactly two more
    than the line before (the report's fold: "under the first word")
    continues it.  Each item: (text, folded)."""
    out = []
    for line in lines:
        line = line.rstrip()
        if (out and line.strip() and out[-1][0].strip()
                and _indent(line) == _indent(out[-1][0]) + 2
                and not RULE.match(line)):
            out[-1] = (out[-1][0] + " " + line.strip(), True)
        else:
            out.append((line, False))
    return out


def mask(line, words=()):
    """line with its figures as "#" and each data word (regexes) as "%"."""
    if RULE.match(line):
        return " " * _indent(line) + "----"
    # A figure below its source's resolution prints as "<1 tick".
    line = line.replace("<1 tick", "0")
    line = NUMBER.sub("#", line)
    line = DASH.sub("#", line)
    for w in words:
        line = re.sub(r"\b(?:%s)\b" % w, "%", line)
    return line


def layout(text, drop=(), words=()):
    """A sample's layout: a line per logical line, its indentation, its
    masked words, and "  " where it had a column gap (one space between
    words when the line was folded: the gaps then depend on where)."""
    out = []
    for line, folded in unfold(text.split("\n")):
        body = line.strip()
        if any(re.search(d, body) for d in drop):
            continue
        m = mask(line, words)
        ind = _indent(m)
        if folded:
            rest = " ".join(m.split())
        else:
            rest = re.sub(r" {2,}", "  ", m.strip())
        out.append(" " * ind + rest)
    while out and not out[-1].strip():
        out.pop()
    return out


def compare(name, old, new, drop=(), words=()):
    """None when the layouts match, else a unified diff naming the
    sample (README's side first)."""
    a, b = layout(old, drop, words), layout(new, drop, words)
    if a == b:
        return None
    return "\n".join(difflib.unified_diff(
        a, b, "README sample %s (layout)" % name,
        "%s as the binaries print it now (layout)" % name, lineterm=""))


def check_all(path, outdir, opts, out=sys.stdout):
    """Every sample of the file at path against outdir/NAME.out, a line
    each ("sample NAME: same layout" or the diff, then "sample NAME:
    differs"); opts: --drop NAME=RE and --word NAME=RE.  1 when one
    differs."""
    drop, words = {}, {}
    while opts:
        if opts[0] not in ("--drop", "--word") or len(opts) < 2 \
                or "=" not in opts[1]:
            raise Error("check: want --drop NAME=RE or --word NAME=RE, not %s"
                        % " ".join(opts[:2]))
        name, rx = opts[1].split("=", 1)
        (drop if opts[0] == "--drop" else words).setdefault(name, []).append(rx)
        opts = opts[2:]
    text, failed = open(path).read(), 0
    for name in blocks(text):
        with open("%s/%s.out" % (outdir, name)) as f:
            diff = compare(name, get(text, name), f.read(),
                           drop.get(name, ()), words.get(name, ()))
        if diff:
            print(diff, file=out)
            print("sample %s: the README's layout differs from the binaries'"
                  % name, file=out)
            failed = 1
        else:
            print("sample %s: same layout" % name, file=out)
    return failed


def main(argv):
    if len(argv) >= 2 and argv[0] == "names":
        for name in blocks(open(argv[1]).read()):
            print(name)
        return 0
    if len(argv) == 3 and argv[0] == "get":
        print(get(open(argv[1]).read(), argv[2]))
        return 0
    if len(argv) == 4 and argv[0] == "put":
        text = put(open(argv[1]).read(), argv[2], open(argv[3]).read())
        with open(argv[1], "w") as f:
            f.write(text)
        return 0
    if len(argv) >= 3 and argv[0] == "check":
        return check_all(argv[1], argv[2], argv[3:])
    if len(argv) >= 4 and argv[0] == "compare":
        drop, words, rest = [], [], argv[4:]
        while rest:
            if rest[0] in ("--drop", "--word") and len(rest) >= 2:
                (drop if rest[0] == "--drop" else words).append(rest[1])
                rest = rest[2:]
            else:
                raise Error("compare: unknown argument %s" % rest[0])
        diff = compare(argv[1], get(open(argv[2]).read(), argv[1]),
                       open(argv[3]).read(), drop, words)
        if diff:
            print(diff)
            return 1
        return 0
    print(__doc__.split("Command line (for shell scripts):")[1].rstrip(),
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (Error, OSError) as e:
        print("readme_blocks.py: %s" % e, file=sys.stderr)
        sys.exit(2)
