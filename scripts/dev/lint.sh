#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The tree's habits, checked: C formatted as .clang-format says (clang-format
# --dry-run -Werror), every shell script clean under shellcheck
# (.shellcheckrc says which checks are off and why), Python clean under
# pyflakes.  One line per finding, naming file and line.
#   scripts/dev/lint.sh [FILE...]   (no FILE: every tracked file of the tree)
# Exit: 0 clean, 1 findings, 2 usage, 77 a linter is not installed.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1

for tool in clang-format shellcheck pyflakes3; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "lint: $tool is not installed (scripts/deps.sh installs it)" >&2
		exit 77
	}
done

if [ $# -gt 0 ]; then
	files=("$@")
elif git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	mapfile -t files < <(git ls-files)
else # a tarball: what would be tracked
	mapfile -t files < <(find . -path ./build\* -prune -o -type f -print | sed 's|^\./||')
fi

c=() sh=() py=()
for f in "${files[@]}"; do
	[ -f "$f" ] || continue
	case $f in
	*.c | *.h) c+=("$f") ;;
	*.sh | .ci/run) sh+=("$f") ;;
	*.py) py+=("$f") ;;
	*.*) ;; # data, docs, configuration
	*) # scripts without a suffix say what they are on their first line
		first=
		IFS= read -r first <"$f" 2>/dev/null
		case $first in
		'#!'*python*) py+=("$f") ;;
		'#!'*sh*) sh+=("$f") ;;
		esac
		;;
	esac
done

rc=0
if [ ${#c[@]} -gt 0 ]; then
	clang-format --dry-run -Werror --style="file:$top/.clang-format" "${c[@]}" || rc=1
fi
if [ ${#sh[@]} -gt 0 ]; then
	shellcheck -f gcc "${sh[@]}" || rc=1
fi
if [ ${#py[@]} -gt 0 ]; then
	pyflakes3 "${py[@]}" || rc=1
fi
echo "lint: ${#c[@]} C, ${#sh[@]} shell, ${#py[@]} Python files; $([ $rc -eq 0 ] && echo clean || echo findings)"
exit $rc
