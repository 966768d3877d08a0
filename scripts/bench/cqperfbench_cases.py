# SPDX-License-Identifier: BSD-2-Clause
"""cqperfbench_cases: what a benchmark's runs are (scripts/bench).

A benchmark's settings are flags whose defaults are BENCH_* variables
(SETTINGS, settings_help); its cases are CASE:ITERS specs, a case SIZE or
MODE-SIZE, made from those settings (specs_by_size, specs_by_mode_size)
and handed to the inner part as text (spec_text, parse_spec); the pair
order rotates so that drift cancels (pair_order, schedule).  The runs
themselves are cqperfbench_runner's, the tools' command lines
cqperfbench_peers'.
"""
import re
import textwrap

from cqperfbench import MIN_PAIRS
from cqperflib import UsageError

# Pairs of runs: at least MIN_PAIRS, so that the interval of the median of
# the paired ratios can exclude 1 at all.
PAIRS_DEFAULT = 7
PAIRS_MAX = 1000
MODES = ("poll", "event")

# The settings of a benchmark: a flag each, whose default is its BENCH_*
# variable, so that CI and older scripts that set those work on.  Each
# benchmark lists those it takes (Bench.settings); --help shows them.
# name: (variable, metavar or None for a switch, what it sets)
SETTINGS = {
    "pairs": ("BENCH_PAIRS", "N",
              "pairs of runs, one run of each tool a pair, which goes "
              "first alternating (default 7, from 7 to 1000; BENCH_RUNS "
              "is its deprecated alias)"),
    "modes": ("BENCH_MODES", "MODES",
              'the completion modes measured: "poll", "event" or both '
              "(default both)"),
    "verb": ("BENCH_VERB", "VERB",
             "the verb of ours, against perftest's tool for it (default "
             "send); --report wants the run's"),
    "rates": ("BENCH_RATES", "RATES",
              "the offered rates in messages/s, blank-separated (default "
              '"1000 5000 20000")'),
    "connections": ("BENCH_CONNECTIONS", "N",
                    "connections a run (default 500)"),
    "work": ("BENCH_WORK", "0|1",
             "0: no work figure (each tool's client once more under "
             "callgrind after the pairs; default 1)"),
    "no-pin": ("BENCH_NO_PIN", None,
               "no pinning (default: both tools' servers on CPU 0, "
               "clients on CPU 1)"),
}



def settings_help(names):
    """The --help text of the settings names."""
    opts = [("--out DIR", "where summary.json, runs.tsv and logs/ go "
             "(default build/bench-NAME)"),
            ("--timeout SEC", "the whole session's (default 1800 s and 30 s "
             "a run)"),
            ("--report TSV", "no runs: the report of an earlier runs.tsv "
             "again (more than once: pooled, which wants --out)")]
    for n in names:
        var, meta, what = SETTINGS[n]
        opts.append(("--%s %s" % (n, meta) if meta else "--" + n,
                     "%s; %s" % (what, var)))
    out = ["", "Options (a setting's default is its environment variable):"]
    for flag, what in opts:
        out += textwrap.wrap(what, 79, initial_indent="  %-16s" % flag,
                             subsequent_indent=" " * 18)
    out += [""] + textwrap.wrap(
        "Exit status: 0 whatever the verdict (this is a measurement), 1 "
        "when a run still fails after its retries, 2 on usage errors, else "
        "softroce-run.sh's.", 79)
    return "\n".join(out) + "\n"



def words(*ws):
    """A command's arguments, numbers as text."""
    return [str(w) for w in ws]



def split_case(case):
    """(MODE, SIZE) of a MODE-SIZE case."""
    mode, _, size = case.rpartition("-")
    return mode, size



def event_flag(mode):
    """perftest's and the ping-pongs' flag for MODE event: -e."""
    return ["-e"] if mode == "event" else []



# ---- the cases, from the environment ----

def env_count(env, var, default, least):
    """env[var], else default, as a count of at least least."""
    text = env.get(var) or str(default)
    if not re.fullmatch("[0-9]+", text) or int(text) < least:
        raise UsageError("%s wants a count >= %d" % (var, least))
    return int(text)



def env_pairs(env, say):
    """BENCH_PAIRS, else its deprecated alias BENCH_RUNS, else the
    default: a count from MIN_PAIRS to PAIRS_MAX."""
    var, text = "BENCH_PAIRS", env.get("BENCH_PAIRS", "")
    if not text and env.get("BENCH_RUNS"):
        var, text = "BENCH_RUNS", env["BENCH_RUNS"]
        say("BENCH_RUNS is deprecated, use BENCH_PAIRS (pairs of runs)")
    text = text or str(PAIRS_DEFAULT)
    if not re.fullmatch("[0-9]{1,9}", text) or \
            not MIN_PAIRS <= int(text) <= PAIRS_MAX:
        raise UsageError("%s=%s: BENCH_PAIRS wants a count from %d to %d"
                         % (var, text, MIN_PAIRS, PAIRS_MAX))
    return int(text)



def env_modes(env):
    """BENCH_MODES' words (poll and/or event), else both."""
    modes = (env.get("BENCH_MODES") or "").split() or list(MODES)
    for mode in modes:
        if mode not in MODES:
            raise UsageError("BENCH_MODES wants poll and/or event, not '%s'"
                             % mode)
    return modes



def specs_by_size(env, least, sizes):
    """[(SIZE, ITERS)] for each (SIZE, default ITERS) of sizes, ITERS from
    BENCH_ITERS_SIZE when set, at least least."""
    return [(str(size), env_count(env, "BENCH_ITERS_%s" % size, iters,
                                  least))
            for size, iters in sizes]



def specs_by_mode_size(env, least, sizes):
    """specs_by_size's cases as MODE-SIZE, for each mode of env_modes."""
    return [("%s-%s" % (mode, size), iters) for mode in env_modes(env)
            for size, iters in specs_by_size(env, least, sizes)]



def spec_text(spec):
    return "%s:%d" % spec



def parse_spec(text):
    """(CASE, ITERS) of CASE:ITERS, as the inner part is given it."""
    case, _, iters = text.partition(":")
    if not case or not re.fullmatch("[0-9]+", iters):
        raise UsageError("--inner: '%s' is not CASE:ITERS" % text)
    return case, int(iters)



def pair_order(tools, pair):
    """The tools in the order they run in pair (from 1): with two, the
    first alternates; with three, each takes each place once in every
    three pairs.  Linear drift cancels over each such round."""
    n = len(tools)
    return [tools[(pair - 1 + k) % n] for k in range(n)]



def schedule(specs, pairs, tools):
    """(CASE, ITERS, PAIR, ORDER, TOOL) of every run, in order: each
    case's pairs in turn."""
    for case, iters in specs:
        for pair in range(1, pairs + 1):
            for order, tool in enumerate(pair_order(tools, pair), 1):
                yield case, iters, pair, order, tool
