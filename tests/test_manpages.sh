#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Every option a tool accepts must be documented: as --name (plain, or
# roff-escaped as \-\-name, inner hyphens escaped or not) in the tool's
# own page man/<tool>.1 or in the shared page man/cqperf.7.  Tools that
# have no page of their own yet are checked against cqperf.7 alone.
#
# Run by automake's test harness with top_srcdir and top_builddir set;
# without them, both default to the directory above this script.
# Exit: 0 all documented, 1 something missing, 77 test_options not built,
# 99 test_options failed to list the options.

here=$(cd "$(dirname "$0")" && pwd) || exit 99
: "${top_srcdir:=$here/..}"
: "${top_builddir:=$here/..}"

lister=$top_builddir/tests/test_options
shared=$top_srcdir/man/cqperf.7

if [ ! -x "$lister" ]; then
	echo "SKIP: $lister is not built (make check builds it)"
	exit 77
fi

pairs=$("$lister" --list) || {
	echo "ERROR: $lister --list failed"
	exit 99
}
if [ -z "$pairs" ]; then
	echo "ERROR: $lister --list printed no options"
	exit 99
fi
if [ ! -f "$shared" ]; then
	echo "ERROR: $shared is missing"
	exit 1
fi

# A hyphen in roff source is "-" or "\-".
dash='(\\-|-)'
missing=0
checked=0
old_ifs=$IFS
IFS='
'
for pair in $pairs; do
	IFS=$old_ifs
	# shellcheck disable=SC2086 # a pair is "tool option", split on purpose
	set -- $pair
	tool=$1
	opt=$2
	if [ -z "$tool" ] || [ -z "$opt" ]; then
		echo "ERROR: unexpected line from --list: '$pair'"
		exit 99
	fi
	# Regex of --opt: every hyphen in either spelling, and the name must
	# end there (so --cq-mod is not found inside --cq-mode).
	name=$(printf '%s\n' "$opt" | sed 's/-/(\\\\-|-)/g')
	re="$dash$dash$name(\$|[^A-Za-z0-9_\\\\-]|\\\\[^-]|\\\\\$)"
	page=$top_srcdir/man/$tool.1
	if [ -f "$page" ]; then
		set -- "$page" "$shared"
	else
		set -- "$shared"
	fi
	checked=$((checked + 1))
	if ! grep -E -q -e "$re" "$@"; then
		echo "MISSING: $tool --$opt is documented in none of: $*"
		missing=$((missing + 1))
	fi
	IFS='
'
done
IFS=$old_ifs

if [ "$missing" -gt 0 ]; then
	echo "FAIL: $missing of $checked tool options undocumented"
	exit 1
fi
echo "PASS: all $checked tool options documented"
exit 0
