#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Bad command lines, for every binary: each must exit 2 (usage error)
# before any RDMA device is opened, print nothing on stdout, and say on
# stderr which option is wrong and, where the message gives one, the
# allowed range.  Needs no RDMA device.  Errors that only show once a
# device is open (--ib-port 2 on a one-port device, --gid-index past the
# GID table, --comp-vector past the device's vectors, --size above the
# device's maximum) are left to the integration tests.
#
# Usage: test_badargs.sh [BINDIR]; BINDIR holds the five binaries.  Under
# automake's harness (top_builddir set) it defaults to $top_builddir/src,
# else to build/src under the top of the tree.
# Prints "ok - ..." / "not ok - ..." a check and a last line
# "N passed, N failed, N skipped"; exit 0 all passed, 1 one failed,
# 99 a binary is missing.
set -u

here=$(cd "$(dirname "$0")" && pwd) || exit 99
if [ $# -ge 1 ]; then
	bindir=$1
elif [ -n "${top_builddir:-}" ]; then
	bindir=$top_builddir/src
else
	bindir=$here/../build/src
fi
# shellcheck source=tests/checks.sh
. "$here/checks.sh"

tools=$(cqp_tools | tr "\n" " ")
for t in $tools; do
	if [ ! -x "$bindir/$t" ]; then
		echo "ERROR: $bindir/$t is not built"
		exit 99
	fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cqperf-badargs.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
rows=0

# bad TOOL NAME RANGE ARGS...: TOOL given ARGS is a usage error whose
# message names NAME (e.g. "--size") and, unless RANGE is "", contains
# RANGE (e.g. "1..2G").  A line that parses by mistake would serve or
# connect: the timeout turns that into a failure, not a hang.
bad() {
	local tool=$1 name=$2 range=$3 rc what
	shift 3
	rows=$((rows + 1))
	# quoted, so that an empty argument shows as ''
	what=$tool$(printf ' %q' "$@")
	timeout -k 2 10 "$bindir/$tool" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	if [ "$rc" -eq 2 ] && [ ! -s "$tmp/out" ]; then
		ok "$what: exit 2"
	else
		not_ok "$what: exit $rc, wanted 2 and no output on stdout"
		show "$tmp/out" "$tmp/err"
	fi
	# Folded at 100 columns for a terminal: read as one text.
	tr -s ' \n' '  ' <"$tmp/err" >"$tmp/flat"
	if grep -qF -- "$name" "$tmp/flat"; then
		ok "$what: names $name"
	else
		not_ok "$what: stderr does not name $name"
		show "$tmp/err"
	fi
	# A command line's mistake points to --help; NOHINT=1: a mistake
	# found after parsing (a file that cannot be written), where --help
	# has nothing to add.
	if [ "$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' \
		"$tmp/err")" -le 100 ] && { [ -n "${NOHINT:-}" ] ||
		grep -qF -- "--help\` says" "$tmp/flat"; }; then
		ok "$what: within 100 columns${NOHINT:+ (no hint wanted)}"
	else
		not_ok "$what: a line over 100 columns, or no word of --help"
		show "$tmp/err"
	fi
	if [ -n "$range" ]; then
		if grep -qF -- "$range" "$tmp/flat"; then
			ok "$what: gives $range"
		else
			not_ok "$what: stderr does not give $range"
			show "$tmp/err"
		fi
	fi
}

# --- cq_poll_bw: sizes, numbers, words, conflicts ----------------------
bad cq_poll_bw --size 1..2G -s 12x
bad cq_poll_bw --size 1..2G -s 64k!
bad cq_poll_bw --size 1..2G -s 1.5
bad cq_poll_bw --size 1..2G -s 0
bad cq_poll_bw --size 1..2G -s 3G
bad cq_poll_bw --size 1..2G -s -5
bad cq_poll_bw --size 1..2G -s 99999999999999999999
bad cq_poll_bw --size 1..2G --size=
bad cq_poll_bw --size "" -s
bad cq_poll_bw --size "" --siz
bad cq_poll_bw --iters 1..1099511627776 -n 0
bad cq_poll_bw --iters "" -n 10k
bad cq_poll_bw --tx-depth 1..32768 -t 0x0x10
bad cq_poll_bw --tx-depth 1..32768 --tx-depth 32769
bad cq_poll_bw --poll-batch 1..4096 --poll-batch 0
bad cq_poll_bw --ack-batch 1..65536 --ack-batch 0x
bad cq_poll_bw --spin-us 0..10000000 --spin-us 10000001
bad cq_poll_bw --spin-us "twice" --spin-us 50,50
bad cq_poll_bw --spin-us 0..10000000 --spin-us 50,x
bad cq_poll_bw --qps 1..1024 -q 1025
bad cq_poll_bw --gid-index -1..255 -x -2
bad cq_poll_bw --gid-index -1..255 -x 256
bad cq_poll_bw --inline 0..4096 -I -1
bad cq_poll_bw --mtu "" -m 300
bad cq_poll_bw --mtu 256..4096 -m 8192
bad cq_poll_bw --cq-mode "poll, event, hybrid, mem, empty:N (N 1..1000000), timer, ski, ski:rand or adaptive" --cq-mode spin
bad cq_poll_bw --cq-mode "poll, event, hybrid, mem, empty:N (N 1..1000000), timer, ski, ski:rand or adaptive" --cq-mode ""
bad cq_poll_bw --cq-mod "USEC 0..65535" --cq-mod 8,70000
bad cq_poll_bw --cq-mod "" --cq-mod 8,
bad cq_poll_bw --all "" --all=1
bad cq_poll_bw --all "" -a -s 64
bad cq_poll_bw --duration "" -n 5 -D 5
bad cq_poll_bw --signal-every "" --signal-every 200 -t 100
bad cq_poll_bw --post-list "" -l 64 -t 32
bad cq_poll_bw --cq-depth "" --cq-depth 10 -t 64
bad cq_poll_bw --bogus "" --bogus
bad cq_poll_bw -Z "" -Z
bad ud_send_bw --warmup "" --warmup 5
bad cq_poll_bw host2 "" host1 host2
bad cq_poll_bw HOST "" ""

# --- cq_event_lat: the latency tool's own options ----------------------
bad cq_event_lat --project 1000..10000000000000 --project 100x
bad cq_event_lat --project 1000..10000000000000 --project 999
bad cq_event_lat --project 1000..10000000000000 --project 99999999999999999999t
bad cq_event_lat --idle-sec 1..3600 --idle-sec 0
bad cq_event_lat --rate 1..100000000 --rate 0
bad cq_event_lat --rate 1..100000000 --rate 2x
bad cq_event_lat --rate 1..100000000 --rate 101m
bad cq_event_lat --arrival 1..32768 --rate 1k --arrival burst:0
bad cq_event_lat --arrival "fixed, poisson, burst:N, onoff:ON_MS,OFF_MS or pareto:ALPHA" --rate 1k --arrival sometimes
bad cq_event_lat --arrival "fixed, poisson, burst:N" --rate 1k --arrival burst
bad cq_event_lat --arrival "fixed, poisson, burst:N" --rate 1k --arrival poisson:3
bad cq_event_lat --arrival "onoff:ON_MS,OFF_MS (each 1..60000)" --rate 100 --arrival onoff:5
bad cq_event_lat --arrival "1.1..10" --rate 100 --arrival pareto:0.5
# The completion policies (cqperf(7) POLICIES).
bad cq_poll_bw --cq-mode "N of empty:N must be 1..1000000" --cq-mode empty:0
bad cq_event_lat --compare-modes "N of empty:N must be 1..1000000" --compare-modes poll,empty:0
bad cq_event_lat --compare-modes "is not a completion mode" --compare-modes=poll,spin
bad cq_event_lat --p99-target "give --cq-mode adaptive" --p99-target 100
bad cq_poll_bw --p99-target "1..10000000" --cq-mode adaptive --p99-target 0
bad cq_poll_bw --poll-batch "1..4096 or auto" --poll-batch 0
bad cq_event_lat --rate "" --arrival poisson
bad cq_event_lat --rates "must increase" --rates 5k,1k
bad cq_event_lat --rates "1..100000000" --rates 1k,0
bad cq_event_lat --rates "1..100000000" --rates ""
bad cq_event_lat --rates "1..100000000" --rates 1k,,2k
bad cq_event_lat --rates "max must be the last" --rates max,1k
bad cq_event_lat --rates "1..100000000" --rates sometimes
bad cq_event_lat --rates "--all" --rates 1k,2k -a
bad cq_event_lat --rates "--rate" --rates 1k,2k --rate 1k
bad cq_event_lat --p99-slack 0..1000 --p99-slack 1001
bad cq_event_lat --cq-depth "tx-depth + rx-depth" --rate 1k --cq-depth 16
bad cq_event_lat --client-cq-mode "--rate or --rates" --client-cq-mode event
bad ud_send_lat --client-cq-mode "--rate or --rates" --client-cq-mode poll
bad cq_event_lat --client-cq-mode "poll, event, hybrid, mem, empty:N (N 1..1000000), timer, ski, ski:rand or adaptive" --rate 1k --client-cq-mode busy
bad cq_event_lat --warmup 0..1000000000 --warmup -1
NOHINT=1 bad cq_event_lat --samples "" --samples /nonexistent/dir/f 127.0.0.1
bad cq_event_lat --duration 1..86400 -D 0
bad cq_event_lat --cq-mode "poll, event, hybrid, mem, empty:N (N 1..1000000), timer, ski, ski:rand or adaptive" --cq-mode=busy
bad cq_event_lat --rtt "" --rtt=yes
bad cq_event_lat -q "" -q 2
bad cq_event_lat --size 1..2G -s 12x
# --verb: each line the issue names, and the verbs' own limits.
bad cq_poll_bw --verb "use --verb write-imm for events" --verb write --cq-mode event
bad cq_event_lat --verb "use --verb write-imm for events" --verb write --cq-mode hybrid
bad cq_poll_bw --verb "--size 8" --verb atomic -s 64
bad cq_event_lat --verb "without --all" --verb atomic -a
bad ud_send_bw --verb "allowed: send" --verb read
bad ud_send_lat --verb "allowed: send" --verb write-imm
bad cq_poll_bw --verb "send, write-imm, write, read or atomic" --verb swap
bad cq_event_lat --cq-mode "--verb write only" --cq-mode mem
bad cq_event_lat --cq-mode "--verb write only" --rate 1k --client-cq-mode mem
bad cq_poll_bw --size "a multiple of 8, from 8" --verb write -s 4
# The target's 8-byte load of the tail, aligned (SIGBUS on Armv8.0-8.3).
bad cq_poll_bw --size "a multiple of 8, from 8" --verb write -s 100
bad cq_event_lat --size "a multiple of 8, from 8" --verbs send,write -s 12
bad cq_event_lat --verbs "send is there twice" --verbs send,read,send
bad cq_event_lat --verbs "allowed: send, write-imm" --verbs send,cas
bad cq_poll_bw --verb "--verbs conflict" --verb read --verbs send,read
bad cq_poll_bw --verb "--size 8" --verbs send,atomic -s 64

# --- ud_send_bw: UD and multicast --------------------------------------
bad ud_send_bw --mcast "" --mcast 10.0.0.1
bad ud_send_bw --mcast 1..63 --mcast ""
bad ud_send_bw --mcast 1..63 --mcast "ff0e::$(printf '%070d' 1)"
bad ud_send_bw --mcast "" --mcast ff0e::1 --rdma-cm
bad ud_send_bw --qkey 0..2147483647 --qkey 0x80000000
bad ud_send_bw --qkey "" --qkey 5 --rdma-cm
bad ud_send_bw --cm-addr "" --cm-addr 10.0.0.2 1.2.3.4
bad cq_poll_bw --sl 0..15 --sl 16
bad ud_send_lat --tclass 0..255 --tclass 256
bad cq_event_lat --pkey-index 0..65535 --pkey-index 65536
bad ud_send_bw --post-list 1..64 -l 0
bad cq_poll_bw --post-list 1..64 -l 65 -t 128
bad ud_send_bw --retry-us "" --retry-us 5000
bad ud_send_bw --size 1..2G -s 2K!

# --- ud_send_lat -------------------------------------------------------
bad ud_send_lat --retry-us 1000..60000000 --retry-us 999
bad ud_send_lat --retry-us 1000..60000000 --retry-us 1e6
bad ud_send_lat --qps 1..1024 -q 0
bad ud_send_lat --mcast "" --mcast ff0e::1
bad ud_send_lat --iters 1..1099511627776 -n 1.5
bad ud_send_lat --srq "" --srq=no

# --- cm_event_stress ---------------------------------------------------
bad cm_event_stress --connections 1..1000000 -c 0
bad cm_event_stress --connections "" --connections
bad cm_event_stress --concurrency 1..65536 --concurrency 70000
bad cm_event_stress --rounds 1..100000 --rounds 0
bad cm_event_stress --msgs 0..4096 --msgs 4097
bad cm_event_stress --no-qp "" --msgs 1 --no-qp
bad cm_event_stress --reject-pct 0..100 --reject-pct 101
bad cm_event_stress --cm-mode "block, nonblock or batch" --cm-mode poll
bad cm_event_stress --cm-batch 1..4096 --cm-batch 0
bad cm_event_stress --threads 0..64 --threads 65
bad cm_event_stress --retries 0..100 --retries -1
bad cm_event_stress --cm-timeout-ms 10..600000 --cm-timeout-ms 9
bad cm_event_stress -s "" -s 64
bad cm_event_stress --cq-mode "" --cq-mode poll

# --- every binary: the shared options ----------------------------------
for t in $tools; do
	bad "$t" --port 1..65535 -p 0
	bad "$t" --port 1..65535 --port 65536
	bad "$t" --output "human, json or csv" --output xml
	bad "$t" --timeout 1..86400 --timeout 0
	bad "$t" --max-mem 1M..64G --max-mem 1K
	bad "$t" --cpu 0..4095 --cpu 4096
	bad "$t" --ib-dev 1..63 -d ""
done
# A CPU this machine lacks.
bad cm_event_stress "--cpu 4095" "has no CPU 4095" --cpu 4095
# --threads and its CPU list.
bad cq_poll_bw --threads 1..16 --threads 0
bad cq_poll_bw --threads 1..16 --threads 17
bad cq_event_lat --threads 1..16 --threads 0
bad ud_send_bw --threads 1..16 --threads 17
bad cq_event_lat --cpu "one per thread" --threads 3 --cpu 0,1
bad cq_poll_bw --cpu "one per thread" --threads 2 --cpu 0
bad cq_poll_bw --cpu "twice" --cpu 0,0
bad cq_poll_bw --cpu 0..4095 --cpu 1-0
bad cq_poll_bw --cpu 0..4095 --cpu 0,x
bad cq_poll_bw --threads "at most 1024" --threads 2 -q 600
bad cq_poll_bw --rate "split over the threads" --threads 4 --rate 3
bad cq_poll_bw --shared-channel "--threads 2 or more" --shared-channel --cq-mode event
bad cq_poll_bw --shared-channel "event or" --threads 2 --shared-channel
bad cq_poll_bw --shared-channel "conflict" --threads 2 --shared-channel --cq-mode event --channel-per-cq
bad cq_poll_bw --shared-channel "--nonblock conflict" --threads 2 --shared-channel --cq-mode event --nonblock
bad cq_event_lat --shared-channel "ping-pong" --shared-channel --cq-mode event
bad ud_send_lat --shared-channel "ping-pong" --shared-channel
bad ud_send_bw --shared-channel "--threads 2 or more" --shared-channel --cq-mode event
bad cq_poll_bw --comp-vector "-1..1023" --comp-vector -2
bad cq_poll_bw --comp-vector "whole number" --comp-vector most

# An unknown option near one of the tool's: the hint names it.
bad cq_poll_bw --sise "did you mean --size?" --sise 64
bad ud_send_bw --rx-dpeth "did you mean --rx-depth?" --rx-dpeth=64
bad cq_event_lat --compare-nodes "did you mean --compare-modes?" --compare-nodes
bad cq_poll_bw --zebra "unknown option '--zebra' (see --help)" --zebra

echo "# $rows bad command lines"
echo "$CHECKS_PASSED passed, $CHECKS_FAILED failed, 0 skipped"
[ "$CHECKS_FAILED" -eq 0 ]
