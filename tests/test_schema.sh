#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# doc/cqperf-1.schema.json against real documents (tests/schema/, written
# by the five binaries on soft-RoCE: server and client, size, mode,
# open-loop, strategy and CM event rows, threads, an error document) and
# against planted errors it must reject: a wrong type, a missing required
# key, an unknown key, a value outside its enum.  No RDMA device needed;
# exit 77 without python3-jsonschema.
set -u

here=$(cd "$(dirname "$0")" && pwd) || exit 99
: "${top_srcdir:=$here/..}"
top_srcdir=$(cd "$top_srcdir" && pwd) || exit 99
. "$top_srcdir/tests/checks.sh"
checker=$top_srcdir/tests/schema_check.py
schema=$top_srcdir/doc/cqperf-1.schema.json

if ! python3 -c 'import jsonschema' 2>/dev/null; then
	echo "SKIP: python3-jsonschema is not installed"
	exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cqperf-schema.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

check "every fixture document validates" \
	python3 "$checker" --schema "$schema" --quiet "$top_srcdir"/tests/schema/*.json

# plant NAME FIXTURE PATH-IN-OUTPUT PYTHON: the fixture changed by the
# statement (on d) must be rejected, the error naming PATH-IN-OUTPUT.
plant() {
	local name=$1 fixture=$top_srcdir/tests/schema/$2 where=$3 code=$4 out
	python3 - "$fixture" "$tmp/$name.json" "$code" <<'PY' || return 1
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
PY
	out=$(python3 "$checker" --schema "$schema" --quiet "$tmp/$name.json")
	local rc=$?
	check "planted $name is rejected" test "$rc" -eq 1 &&
		check "planted $name: the error names $where" grep -qF "$where" <<<"$out" ||
		echo "# $out"
}

plant wrong-type bw-server.json "results/0/bytes" 'd["results"][0]["bytes"] = "4096"'
plant missing-key lat_modes-client.json "(top): 'device'" 'del d["device"]'
plant missing-nested ud_bw-client.json "results/0/client" 'del d["results"][0]["client"]["completions"]'
plant unknown-key lat_rate-client.json "results/0" 'd["results"][0]["client"]["bogus_pct"] = 1.0'
plant bad-enum cm-client.json "role" 'd["role"] = "peer"'
plant string-figure ud_lat-server.json "results/0" 'd["results"][0]["lat_us"]["p50"] = "12.5"'
plant negative-count strat-client.json "strategy/0/bytes" 'd["strategy"][0]["bytes"] = -2'
plant thread-type bw-server.json "results/0" 'd["results"][0]["server"]["threads"][0]["cpu"] = "0"'
plant error-type err-client.json "error" 'd["error"] = 1'
plant server-mem bw-server.json "server_mem" 'del d["server_mem"]["per_client"]'

echo "$CHECKS_PASSED passed, $CHECKS_FAILED failed, 0 skipped"
[ "$CHECKS_FAILED" -eq 0 ]
