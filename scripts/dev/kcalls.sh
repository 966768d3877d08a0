#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Kernel function calls while a command runs, counted by ftrace's function
# tracer: every entry of the RDMA modules' functions (rdma_rxe, ib_uverbs,
# ib_core) and of the system calls, wakeups and softirqs a verbs program
# causes. A count, not a time: runs of two message counts give the calls a
# message, which TCG's speed cannot move (doc/benchmarks.md, issue 31).
#
# Usage: kcalls.sh [--out FILE] [--tracefs DIR] [--modules "M..."] [--funcs "F..."] -- CMD [ARGS...]
#        kcalls.sh --per-message N1 FILE1 N2 FILE2
#
# Writes "COUNT FUNCTION" lines, most called first, to FILE (default:
# stdout); CMD's own output is left alone. Traces the whole machine, so run
# nothing else meanwhile. Needs root and tracefs (mounted at DIR, default
# /sys/kernel/tracing, when it is not); leaves the tracer off and the filter
# empty. Exit: CMD's status; 1 when tracing could not be set up or its ring
# buffer overran (the counts would be short); 2 on usage errors.
# --per-message: from the counts of runs of N1 and N2 messages, each
# function's calls a message, (FILE2's - FILE1's) / (N2 - N1), and their
# total last; setup and teardown cancel.
set -uo pipefail

prog=${0##*/}
usage() { sed -n 's/^# \{0,1\}Usage: //p' "$0" >&2; exit 2; }

per_message() { # N1 FILE1 N2 FILE2
	[[ $1 =~ ^[0-9]+$ && $3 =~ ^[0-9]+$ && $3 -gt $1 ]] || {
		echo "$prog: --per-message wants N1 < N2, message counts" >&2
		exit 2
	}
	[ -r "$2" ] && [ -r "$4" ] || { echo "$prog: cannot read $2 or $4" >&2; exit 2; }
	# FILE1's counts negative, FILE2's positive, over N2 - N1; the
	# functions sorted, most called first, then the total of them all.
	awk -v n="$(($3 - $1))" 'FNR == 1 { k++ }
		{ c[$2] += (k == 1 ? -$1 : $1); t += (k == 1 ? -$1 : $1) }
		END {
			by = "sort -k1,1gr -k2"
			for (f in c) {
				d = sprintf("%.3f", c[f] / n)
				if (d != "0.000" && d != "-0.000") print d, f | by
			}
			close(by)
			printf "%.3f total\n", t / n
		}' "$2" "$4"
}

out=/dev/stdout
T=/sys/kernel/tracing
modules="rdma_rxe ib_uverbs ib_core"
funcs="ksys_write ksys_read __x64_sys_ioctl do_sys_poll do_epoll_wait"
funcs+=" try_to_wake_up schedule __do_softirq"
if [ "${1:-}" = --per-message ]; then
	[ $# -eq 5 ] || usage
	per_message "${@:2}"
	exit 0
fi
while [ $# -gt 0 ]; do
	case $1 in
	--out | --tracefs | --modules | --funcs)
		[ $# -ge 2 ] || usage
		case $1 in
		--out) out=$2 ;;
		--tracefs) T=$2 ;;
		--modules) modules=$2 ;;
		--funcs) funcs=$2 ;;
		esac
		shift 2
		;;
	--) shift; break ;;
	-h | --help) usage ;;
	*) echo "$prog: unknown option $1" >&2; usage ;;
	esac
done
[ $# -gt 0 ] || usage

fail() { echo "$prog: $*" >&2; exit 1; }
if [ ! -e "$T/current_tracer" ]; then
	mount -t tracefs nodev "$T" 2>/dev/null ||
		fail "no tracefs at $T (root, and a kernel with CONFIG_FUNCTION_TRACER)"
fi
grep -qw function "$T/available_tracers" 2>/dev/null ||
	fail "$T: the kernel has no function tracer"

reset() {
	echo 0 >"$T/tracing_on"
	echo nop >"$T/current_tracer"
	: >"$T/set_ftrace_filter"
}
trap reset EXIT
reset
for m in $modules; do
	echo ":mod:$m" >>"$T/set_ftrace_filter" 2>/dev/null ||
		echo "$prog: module $m not loaded: its functions are not counted" >&2
done
for f in $funcs; do
	echo "$f" >>"$T/set_ftrace_filter" 2>/dev/null ||
		echo "$prog: no traceable function $f in this kernel" >&2
done
# tracefs files show size 0; an empty filter reads "#### all functions enabled ####".
grep -q "^[^#]" "$T/set_ftrace_filter" || fail "nothing to trace"
# A function entry takes about 32 bytes of ring buffer a CPU.
echo "${KCALLS_BUFFER_KB:-49152}" >"$T/buffer_size_kb" ||
	fail "cannot size the ring buffer (${KCALLS_BUFFER_KB:-49152} KiB a CPU)"
: >"$T/trace"
echo function >"$T/current_tracer" || fail "cannot start the function tracer"
echo 1 >"$T/tracing_on"

"$@"
rc=$?

# Off before reading: switching tracers empties the buffer.
echo 0 >"$T/tracing_on"
lost=$(cat "$T"/per_cpu/cpu*/stats 2>/dev/null |
	awk '$1 == "overrun:" { n += $2 } END { print n + 0 }')
sed -n 's/.*: \([A-Za-z0-9_.]*\) <-.*/\1/p' "$T/trace" | sort | uniq -c |
	sort -k1,1nr -k2 | awk '{ print $1, $2 }' >"$out"
[ "$lost" = 0 ] || fail "the ring buffer overran ($lost entries lost): set KCALLS_BUFFER_KB higher"
exit "$rc"
