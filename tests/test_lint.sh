#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# scripts/dev/lint.sh finds what it is there to find: a badly formatted C
# file, a shell script shellcheck warns about, an unused Python import,
# each named with its line; and passes clean files.
# Exit: 0 pass, 1 fail, 77 a linter is not installed.
here=$(cd "$(dirname "$0")" && pwd) || exit 99
: "${top_srcdir:=$here/..}"
lint=$top_srcdir/scripts/dev/lint.sh
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
# The .shellcheckrc of the file's own folder (or above) is the one read.
cp "$top_srcdir/.shellcheckrc" "$tmp/"

fail=0
ok() { echo "ok - $1"; }
not_ok() {
	echo "not ok - $1"
	sed 's/^/# /' "$tmp/out"
	fail=1
}

printf 'int f(void)\n{\n\treturn 1;\n}\n' >"$tmp/good.c"
printf '#!/bin/sh\ncd /tmp || exit 1\necho "$1"\n' >"$tmp/good.sh"
printf 'import os\n\nprint(os.sep)\n' >"$tmp/good.py"
"$lint" "$tmp/good.c" "$tmp/good.sh" "$tmp/good.py" >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 77 ] && { echo "skip - $(cat "$tmp/out")"; exit 77; }
if [ $rc -eq 0 ]; then ok "clean files pass"; else not_ok "clean files pass (exit $rc)"; fi

printf 'int f(void) { return 1; }\n' >"$tmp/bad.c"
printf '#!/bin/sh\ncd /tmp\necho "$1"\n' >"$tmp/bad.sh"
printf 'import os\nimport sys\n\nprint(os.sep)\n' >"$tmp/bad.py"
for f in bad.c:1 bad.sh:2 bad.py:2; do
	"$lint" "$tmp/good.c" "$tmp/${f%:*}" >"$tmp/out" 2>&1
	rc=$?
	if [ $rc -eq 1 ] && grep -q "${f%:*}:${f#*:}:" "$tmp/out"; then
		ok "${f%:*}: exit 1, naming line ${f#*:}"
	else
		not_ok "${f%:*}: exit 1, naming line ${f#*:} (exit $rc)"
	fi
done
exit $fail
