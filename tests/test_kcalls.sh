#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# scripts/dev/kcalls.sh against a fake tracefs (a folder with its files): the
# filter it sets, the counts it makes of the trace's lines, the command's
# exit status passed on, the tracer left off, and a ring buffer that
# overran failing the count instead of printing short figures.
#
# Usage: test_kcalls.sh.  Exit 0 all passed, 1 one failed.
set -u

here=$(cd "$(dirname "$0")" && pwd) || exit 99
# shellcheck source=tests/checks.sh
. "$here/checks.sh"
kc=$here/../scripts/dev/kcalls.sh
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

fake() { # a fresh tracefs at $tmp/t, overrun $1 on cpu1
	rm -rf "$tmp/t"
	mkdir -p "$tmp/t/per_cpu/cpu0" "$tmp/t/per_cpu/cpu1"
	echo "blk function_graph function nop" >"$tmp/t/available_tracers"
	echo nop >"$tmp/t/current_tracer"
	for f in set_ftrace_filter buffer_size_kb tracing_on trace; do
		: >"$tmp/t/$f"
	done
	printf 'entries: 9\noverrun: 0\n' >"$tmp/t/per_cpu/cpu0/stats"
	printf 'entries: 9\noverrun: %s\n' "$1" >"$tmp/t/per_cpu/cpu1/stats"
}
# The command under count: the trace lines a kernel would write while it
# ran, and what it was seen as (tracer, switch) while running.
cat >"$tmp/cmd" <<'EOF'
#!/bin/bash
t=$1
cat "$t/current_tracer" "$t/tracing_on" >"$t/seen"
cp "$t/set_ftrace_filter" "$t/filter_seen"
for i in 1 2 3; do
	echo " ud_send_bw-90 [001] ..... 1.$i: rxe_post_send <-ib_uverbs_post_send"
	echo " ud_send_bw-90 [001] ..... 1.$i: ksys_write <-do_syscall_64"
done >>"$t/trace"
echo " ksoftirqd/1-17 [001] ..s.. 2.0: rxe_cq_post <-rxe_completer" >>"$t/trace"
exit "${2:-0}"
EOF
chmod +x "$tmp/cmd"

fake 0
"$kc" --tracefs "$tmp/t" --out "$tmp/counts" -- "$tmp/cmd" "$tmp/t" 3 2>"$tmp/err"
rc=$?
check "the command's exit status is passed on (3, got $rc)" test "$rc" -eq 3
check "counts, most called first" \
	diff <(printf '3 ksys_write\n3 rxe_post_send\n1 rxe_cq_post\n') "$tmp/counts" ||
	show "$tmp/counts"
check "the tracer ran while the command did" \
	diff <(printf 'function\n1\n') "$tmp/t/seen"
check "the filter: the modules, then the functions" \
	eval 'head -4 "$tmp/t/filter_seen" | tr "\n" " " |
	      grep -qx ":mod:rdma_rxe :mod:ib_uverbs :mod:ib_core ksys_write "'
check "left off: tracing_on 0, tracer nop, filter empty" \
	eval 'test "$(cat "$tmp/t/tracing_on" "$tmp/t/current_tracer")" = "0
nop" && ! test -s "$tmp/t/set_ftrace_filter"'

fake 0
"$kc" --tracefs "$tmp/t" --modules "" --funcs "schedule" -- "$tmp/cmd" "$tmp/t" \
	>"$tmp/out" 2>"$tmp/err"
check "--funcs and --modules replace the defaults; counts to stdout" \
	eval 'grep -qx "1 rxe_cq_post" "$tmp/out" && grep -qx schedule "$tmp/t/filter_seen"'

fake 7
"$kc" --tracefs "$tmp/t" --out "$tmp/counts" -- "$tmp/cmd" "$tmp/t" 2>"$tmp/err"
rc=$?
check "a ring buffer that overran: exit 1 and says how much was lost" \
	eval 'test "$rc" -eq 1 && grep -q "overran (7 entries lost)" "$tmp/err"' ||
	show "$tmp/err"

echo "nop" >"$tmp/t/available_tracers"
"$kc" --tracefs "$tmp/t" -- true 2>"$tmp/err"
rc=$?
check "no function tracer: exit 1, said" \
	eval 'test "$rc" -eq 1 && grep -q "no function tracer" "$tmp/err"'
"$kc" --tracefs "$tmp/t" 2>/dev/null
rc=$?
check "no command: usage, exit 2 (got $rc)" test "$rc" -eq 2
"$kc" --bogus -- true 2>"$tmp/err"
rc=$?
check "an unknown option is named, exit 2" \
	eval 'test "$rc" -eq 2 && grep -q "unknown option --bogus" "$tmp/err"'

# Calls a message: two runs' counts, setup (here 5 and 1 calls) cancelling.
printf '205 rxe_post_send\n7 ib_uverbs_open\n1 rxe_cq_post\n' >"$tmp/a"
printf '605 rxe_post_send\n7 ib_uverbs_open\n9 rxe_cq_post\n4 schedule\n' >"$tmp/b"
"$kc" --per-message 200 "$tmp/a" 600 "$tmp/b" >"$tmp/per" 2>&1
check "--per-message: each function's calls a message, most first, total last" \
	diff <(printf '1.000 rxe_post_send\n0.020 rxe_cq_post\n0.010 schedule\n1.030 total\n') \
	"$tmp/per" || show "$tmp/per"
"$kc" --per-message 600 "$tmp/a" 200 "$tmp/b" 2>"$tmp/err"
rc=$?
check "--per-message: N1 not below N2 is a usage error, exit 2" \
	eval 'test "$rc" -eq 2 && grep -q "N1 < N2" "$tmp/err"'

echo "$CHECKS_PASSED passed, $CHECKS_FAILED failed, $CHECKS_SKIPPED skipped"
[ "$CHECKS_FAILED" -eq 0 ]
