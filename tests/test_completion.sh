#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The bash completion script generated from the option table
# ($top_builddir/cqperf.bash, made by gen/gen-completion) must complete,
# for every binary, exactly the options its --help lists: each long and
# short option, none of another binary's, the words of every option whose
# --help range is a list of words ("--cq-mode poll", "--cq-mode=poll",
# also with "=" taken out of COMP_WORDBREAKS), devices for --ib-dev, and
# nothing in place of a value where a value is due.  The options come
# from the built binaries' --help ($top_builddir/src), cross-checked with
# `tests/test_options --list` (the table itself) when that is built.
#
# Completion is driven the way bash drives it: COMP_WORDS split at blanks
# and at "=" (bash makes "--opt=val" three words: --opt, =, val), and the
# function registered by `complete -F` for the binary's name called with
# the command, the word being completed and the word before.
#
# Run by automake's test harness with top_srcdir and top_builddir set;
# without them, both default to the directory above this script.
# CQP_COMPLETION names another script to test.  Exit: 0 all complete,
# 1 something wrong, 77 no bash (4 or later), 99 not built or --help
# unreadable.  Written for bash; the lines before the exec are plain sh.
# shellcheck shell=bash

if [ -z "${BASH_VERSION:-}" ]; then
	if ! command -v bash >/dev/null 2>&1; then
		echo "SKIP: bash is not installed"
		exit 77
	fi
	exec bash "$0" "$@"
fi
if [ "${BASH_VERSINFO[0]}" -lt 4 ]; then
	echo "SKIP: bash $BASH_VERSION is older than 4"
	exit 77
fi

here=$(cd "$(dirname "$0")" && pwd) || exit 99
: "${top_srcdir:=$here/..}"
: "${top_builddir:=$here/..}"
script=${CQP_COMPLETION:-$top_builddir/cqperf.bash}
lister=$top_builddir/tests/test_options
tools=$(python3 "$top_srcdir/gen/tools_list.py" | tr "\n" " ")

if [ ! -f "$script" ]; then
	echo "ERROR: $script is not built (make builds it)"
	exit 99
fi
set -f # words are split below, never globbed

# --- What each binary accepts, from its --help -------------------------
declare -A longs shorts shortof takes words
# longs[tool]: " ib-dev ib-port ... "; shorts[tool]: " d i ... ";
# shortof[tool long]: its short name; takes[tool long]: 1 if it takes a
# value; words[tool long]: the words of an enum.
# "--opt[=LIST]": an optional value, completed as options follow.
help_re='^  (-([A-Za-z0-9]), |    )--([a-z0-9][a-z0-9-]*)(=[^ ]+)?(\[=[^ ]+\])?( |$)'
enum_re='^[a-z0-9_:-]+((, [a-z0-9_:-]+)* or [a-z0-9_:-]+)?$'
# A mode's "empty:N (N 1..1000000)" is completed as its bare word.
param_re='^(.*)empty:N \(N [0-9]+\.\.[0-9]+\)(.*)$'
nenum=0
for tool in $tools; do
	bin=$top_builddir/src/$tool
	if [ ! -x "$bin" ]; then
		echo "ERROR: $bin is not built (make builds it)"
		exit 99
	fi
	text=$("$bin" --help) || {
		echo "ERROR: $bin --help failed"
		exit 99
	}
	# An option's help folds onto lines indented 31 columns: one line
	# again, as the blanks it folded at.
	text=$(printf '%s\n' "$text" | awk '
		substr($0, 1, 31) ~ /^ +$/ && substr($0, 32, 1) != " " {
			prev = prev " " substr($0, 32); next
		}
		{ if (NR > 1) print prev; prev = $0 }
		END { print prev }')
	longs[$tool]=" "
	shorts[$tool]=" "
	while IFS= read -r line; do
		[[ $line =~ $help_re ]] || continue
		opt=${BASH_REMATCH[3]}
		longs[$tool]+="$opt "
		if [ -n "${BASH_REMATCH[2]}" ]; then
			shorts[$tool]+="${BASH_REMATCH[2]} "
			shortof[$tool $opt]=${BASH_REMATCH[2]}
		fi
		[ -n "${BASH_REMATCH[4]}" ] || continue
		takes[$tool $opt]=1
		# "[poll, event, hybrid or mem; default poll]": an enum's words.
		[[ $line == *\]* ]] || continue
		range=${line##*[}
		range=${range%%;*}
		if [[ $range =~ $param_re ]]; then
			range="${BASH_REMATCH[1]}empty${BASH_REMATCH[2]}"
		fi
		if [[ $range =~ $enum_re ]]; then
			range=${range//,/}
			words[$tool $opt]=${range// or / }
			nenum=$((nenum + 1))
		fi
	done <<EOF
$text
EOF
	if [ "${longs[$tool]}" = " " ]; then
		echo "ERROR: no options found in $bin --help"
		exit 99
	fi
done
if [ "$nenum" -eq 0 ]; then
	echo "ERROR: no option with a list of words found in any --help"
	exit 99
fi

fails=0
checks=0
fail()
{
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# The table itself must agree with --help (so no option hides from both).
if [ -x "$lister" ]; then
	declare -A listed
	while read -r tool opt; do
		case " $tools " in
		*" $tool "*) ;;
		*)
			fail "tool $tool (test_options --list) is not tested here"
			continue
			;;
		esac
		listed[$tool]+="$opt "
		[[ ${longs[$tool]} == *" $opt "* ]] ||
			fail "$tool --$opt is in the table but not in --help"
	done <<EOF
$("$lister" --list)
EOF
	for tool in $tools; do
		for opt in ${longs[$tool]}; do
			[[ " ${listed[$tool]}" == *" $opt "* ]] ||
				fail "$tool --$opt is in --help but not the table"
		done
	done
fi

# --- Driving the completion ---------------------------------------------
# shellcheck disable=SC1090
. "$script" || {
	echo "ERROR: sourcing $script failed"
	exit 1
}
ibdir=$(mktemp -d) || exit 99
trap 'rm -rf "$ibdir"' EXIT
mkdir "$ibdir/mlx5_0" "$ibdir/rxe0" || exit 99
_cqperf_ibdir=$ibdir
breaks=$' \t\n"\'><=;|&(:' # bash's default COMP_WORDBREAKS
COMP_WORDBREAKS=$breaks

# complete LINE: what completing at the end of LINE offers, in $reply as
# " a b c " (sorted); bash's word splitting, readline's word as $2.
declare -A specs
complete_line()
{
	local line=$1 tool=${1%% *} spec func w word
	local -a cw=()

	# One `complete -p` per tool: a fork a line adds up over ~2000.
	[[ -v specs[$tool] ]] || specs[$tool]=$(complete -p "$tool" 2>/dev/null)
	spec=${specs[$tool]}
	func=${spec#*-F }
	func=${func%% *}
	if [[ $spec != *"-F "* || -z $func ]]; then
		reply=" "
		return 1
	fi
	for w in $line; do
		while [[ $COMP_WORDBREAKS == *=* && $w == *=* ]]; do
			[[ -n ${w%%=*} ]] && cw+=("${w%%=*}")
			cw+=("=")
			w=${w#*=}
		done
		[[ -n $w ]] && cw+=("$w")
	done
	[[ $line == *" " ]] && cw+=("")
	word=${line##* }
	[[ $COMP_WORDBREAKS == *=* ]] && word=${word##*=}
	COMP_WORDS=("${cw[@]}")
	COMP_CWORD=$((${#cw[@]} - 1))
	COMP_LINE=$line
	COMP_POINT=${#line}
	COMPREPLY=()
	"$func" "$tool" "$word" "${cw[COMP_CWORD - 1]}"
	# As offered: expect compares as sets, without a sort's forks.
	reply=" "
	[ ${#COMPREPLY[@]} -eq 0 ] || reply=" ${COMPREPLY[*]} "
}

# expect LINE WORDS...: completing LINE offers exactly WORDS.
expect()
{
	local line=$1 want w
	local -a got
	shift
	want=" $* "
	[ $# -eq 0 ] && want=" "
	checks=$((checks + 1))
	complete_line "$line"
	read -ra got <<<"$reply"
	# The same words, each once: as many, and each of them offered.
	if [ ${#got[@]} -eq $# ]; then
		for w in "$@"; do
			[[ $reply == *" $w "* ]] || break
		done
		[[ $# -eq 0 || $reply == *" $w "* ]] && return 0
	fi
	fail "'$line<TAB>'$(differ "$want" "$reply")"
}

# differ WANT GOT: " misses a b; offers x, which it should not".
differ()
{
	local w miss="" extra=""

	for w in $1; do
		[[ $2 == *" $w "* ]] || miss+=" $w"
	done
	for w in $2; do
		[[ $1 == *" $w "* ]] || extra+=" $w"
	done
	[ -n "$miss" ] && printf ' misses%s' "$miss"
	[ -n "$miss" ] && [ -n "$extra" ] && printf ';'
	[ -n "$extra" ] && printf ' offers%s, which it should not' "$extra"
	return 0
}

# offers LINE WORD: completing LINE offers WORD (among others).
offers()
{
	checks=$((checks + 1))
	complete_line "$1"
	[[ $reply == *" $2 "* ]] || fail "'$1<TAB>' does not offer $2"
}

for tool in $tools; do
	if [[ $(complete -p "$tool" 2>/dev/null) != *"-F "* ]]; then
		fail "no 'complete -F' for $tool in $script"
		continue
	fi
	# Every option of the tool, and nothing else.
	all=()
	for opt in ${longs[$tool]}; do
		all+=("--$opt")
	done
	for s in ${shorts[$tool]}; do
		all+=("-$s")
	done
	complete_line "$tool --"
	dashdash=$reply
	complete_line "$tool -"
	dash=$reply
	for opt in ${longs[$tool]}; do
		checks=$((checks + 1))
		[[ $dashdash == *" --$opt "* ]] ||
			fail "'$tool --<TAB>' does not offer --$opt"
	done
	for s in ${shorts[$tool]}; do
		checks=$((checks + 1))
		[[ $dash == *" -$s "* ]] ||
			fail "'$tool -<TAB>' does not offer -$s"
	done
	for w in $dash; do
		checks=$((checks + 1))
		if [[ $w == --* ]]; then
			[[ ${longs[$tool]} == *" ${w#--} "* ]] ||
				fail "'$tool -<TAB>' offers $w, which $tool lacks"
		else
			[[ ${shorts[$tool]} == *" ${w#-} "* ]] ||
				fail "'$tool -<TAB>' offers $w, which $tool lacks"
		fi
	done

	for opt in ${longs[$tool]}; do
		short=${shortof[$tool $opt]}
		offers "$tool --${opt:0:3}" "--$opt"
		if [ -z "${takes[$tool $opt]}" ]; then
			# A flag: options follow it, and --flag= has no values.
			expect "$tool --$opt -" "${all[@]}"
			expect "$tool --$opt="
			continue
		fi
		if [ -n "${words[$tool $opt]}" ]; then
			# shellcheck disable=SC2086
			set -- ${words[$tool $opt]}
			expect "$tool --$opt " "$@"
			expect "$tool --$opt=" "$@"
			[ -n "$short" ] && expect "$tool -$short " "$@"
			for w in "$@"; do
				offers "$tool --$opt ${w:0:1}" "$w"
				offers "$tool --$opt=${w:0:1}" "$w"
				# A word may begin another (write, write-imm).
				# shellcheck disable=SC2046
				expect "$tool --$opt=$w" $(printf '%s\n' "$@" | grep "^$w")
			done
			COMP_WORDBREAKS=${breaks//=/}
			expect "$tool --$opt=" "${@/#/--$opt=}"
			expect "$tool --$opt=$1" "--$opt=$1"
			COMP_WORDBREAKS=$breaks
		elif [ "$opt" = ib-dev ]; then
			expect "$tool --$opt " mlx5_0 rxe0
			expect "$tool --$opt=" mlx5_0 rxe0
			expect "$tool --$opt=r" rxe0
			[ -n "$short" ] && expect "$tool -$short m" mlx5_0
			COMP_WORDBREAKS=${breaks//=/}
			expect "$tool --$opt=m" "--$opt=mlx5_0"
			COMP_WORDBREAKS=$breaks
			_cqperf_ibdir=$ibdir/none
			expect "$tool --$opt "
			_cqperf_ibdir=$ibdir
		else
			# A value is due: no options in its place.
			expect "$tool --$opt -"
			expect "$tool --$opt="
			[ -n "$short" ] && expect "$tool -$short -"
		fi
	done
	# After a value, options again.
	for opt in ${longs[$tool]}; do
		if [ -n "${takes[$tool $opt]}" ]; then
			expect "$tool --$opt 1 -" "${all[@]}"
			expect "$tool --$opt=1 -" "${all[@]}"
			break
		fi
	done
done

if [ "$fails" -gt 0 ]; then
	echo "FAIL: $fails of $checks completion checks failed ($script)"
	exit 1
fi
echo "PASS: all $checks completion checks ($script)"
exit 0
