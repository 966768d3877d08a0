#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The README's sample outputs and charts, made by running the commands
# they show on soft-RoCE.
#
# Usage: readme-examples.sh --update | --check | --charts
#
#   --update  run each sample's command and write its output into README,
#             between the sample's markers (<!-- sample NAME --> and
#             <!-- end NAME -->); run it on the host, README must be
#             writable
#   --check   run the same commands and compare the layout of each sample
#             with what the binaries print now (scripts/dev/readme_blocks.py:
#             figures masked, folds joined); exit 1 with a diff naming
#             each sample that differs.  tests/integration/readme.sh runs
#             it in the guest: a change of layout that forgets the README
#             fails
#   --charts  measure again the runs behind the charts in doc/ and draw
#             them (scripts/installed/cqperf-plot; matplotlib or gnuplot)
#
# In soft-RoCE already (CQPERF_RXE_DEV set, as scripts/guest/softroce-run.sh
# sets it) the commands run here; otherwise this script runs itself
# through softroce-run.sh and goes on with what came back.  The runs are
# short (-n of a few thousand at most): they show the layout, and the
# figures of an emulated NIC are slow anyway.  Binaries: build/src, or
# CQPERF_BIN.  Exit status: 0 done or same layout, 1 a layout differs or
# a run failed, 2 usage.
set -euo pipefail

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
bin=${CQPERF_BIN:-$top/build/src}
readme=$top/README
usage() { sed -n 's/^# \{0,1\}Usage: //p' "$0" >&2; exit 2; }

# sample NAME OUTFILE: run the command of sample NAME, its output in
# OUTFILE.  The README shows each command in the text just above the
# sample; keep the two the same.  Each case is a "<tab>NAME)" line
# (tests/test_readme_blocks.py checks that every README sample has one).
sample() {
	local name=$1 out=$2 port
	case $name in
	quickstart)
		# The quick start's own inner part, as scripts/quickstart.sh runs
		# it, in its first mode: the sample is that mode's part.
		"$top/scripts/quickstart.sh" --inner 4K 5000 poll >"$work/quickstart.all" ||
			return 1
		awk '/^### / { n++; p = 1 } /^$/ { p = 0 } n == 1 && p' \
			"$work/quickstart.all" >"$out"
		;;
	load)
		port=18611
		serve_start "$bin/cq_event_lat" "$port" "$work/load.server" -d "$dev" ||
			return 1
		"$bin/cq_event_lat" -d "$dev" -p "$port" -n 250 --rates 500 \
			--compare-modes poll,event "$addr" >"$out" || return 1
		serve_stop
		;;
	wakeup)
		port=18612
		serve_start "$bin/cq_event_lat" "$port" "$work/wakeup.server" -d "$dev" ||
			return 1
		"$bin/cq_event_lat" -d "$dev" -p "$port" -s 4K -n 1000 \
			--cq-mode event --project 100g "$addr" >"$out" || return 1
		serve_stop
		;;
	regress)
		# The gate's verdict on the measurement the committed baseline
		# was recorded from: no device needed, the same every time.  The
		# README shows the measured figures (not the exact-only ones).
		"$top/scripts/installed/cqperf-regress" --judge "$top/ci/baseline" \
			>"$work/regress.all" || return 1
		grep -v "exact only" "$work/regress.all" >"$out"
		;;
	fanin)
		# One server of --clients 8, eight clients at once; the sample
		# is the server's report from its table on.
		port=18613
		serve_start "$bin/ud_send_bw" "$port" "$work/fanin.server" -d "$dev" \
			--clients 8 --quiet || return 1
		local pids=() i
		for i in 1 2 3 4 5 6 7 8; do
			"$bin/ud_send_bw" -d "$dev" -p "$port" -n 2000 "$addr" \
				>/dev/null 2>&1 &
			pids+=($!)
		done
		wait "${pids[@]}" || { serve_stop; return 1; }
		serve_stop
		sed -n '/#bytes/,$p' "$work/fanin.server" >"$out"
		;;
	*)
		echo "$prog: README has a sample $name that this script does not make" >&2
		return 1
		;;
	esac
}

# The lines that only some runs print and the words that are data, per
# sample (readme_blocks.py check --drop NAME=RE, --word NAME=RE).
# The table's notes on "<1 tick" and on each kind of "-" come with the
# figures that print them.
notes='<1 tick:|-:|- on a whole line'
layout_opts=(
	--drop "load=^(Rate not reached|Late sends|Crossover:|Warning:|$notes)"
	--word 'load=poll|event|hybrid|client|server'
	--drop "wakeup=^(Crossover:|Warning:|$notes)"
	--word 'wakeup=poll|event|hybrid|client|server'
	--drop "quickstart=^(Warning:|$notes)"
	--word 'regress=ok|undecided|exact|only|REGRESSED'
	--drop "fanin=^(Warning:|$notes)"
)

# record DIR: every README sample's output in DIR/NAME.out.
record() {
	local dir=$1 name t0
	mkdir -p "$dir"
	for name in $(python3 "$here/readme_blocks.py" names "$readme"); do
		t0=$(date +%s%N)
		sample "$name" "$dir/$name.out" || {
			echo "$prog: sample $name: the run failed" >&2
			return 1
		}
		echo "$prog: sample $name ran in $((($(date +%s%N) - t0) / 1000000)) ms" >&2
	done
}

# charts DIR: the documents behind the charts in doc/, in DIR/load and
# DIR/sweep.
charts() {
	local dir=$1 port=18614
	mkdir -p "$dir/load"
	serve_start "$bin/cq_event_lat" "$port" "$work/charts.server" -d "$dev"
	"$bin/cq_event_lat" -d "$dev" -p "$port" -n 1000 \
		--rates 200,1k,5k,max --compare-modes --output json "$addr" \
		>"$dir/load/cq_event_lat-load.json"
	serve_stop
	"$top/scripts/installed/cqperf-sweep" --tool cq_poll_bw --start-server --host "$addr" \
		--port 18615 --out "$dir/sweep" --server-args "-d $dev" \
		--client-args "-d $dev -n 3000" --repeat 3 \
		--grid cq-mode=poll,event,hybrid --grid size=64,1024,4096,16384,65536 \
		>"$work/sweep.log"
}

mode=
case ${1:-} in
--update | --check | --charts) mode=${1#--} ;;
--inner) mode=inner ;;
-h | --help) usage ;;
*) usage ;;
esac

start=$(date +%s%N)
work=$(mktemp -d "${TMPDIR:-/tmp}/cqperf-readme.XXXXXX")
. "$top/scripts/guest/serve.sh"
trap 'serve_stop; rm -rf "$work"' EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

if [ -n "${CQPERF_RXE_DEV:-}" ]; then
	dev=$CQPERF_RXE_DEV addr=${CQPERF_SERVER_ADDR:?}
	if [ "$mode" = inner ]; then
		# softroce-run.sh's side of a host run: results into $CQPERF_OUT.
		case $2 in
		charts) charts "${CQPERF_OUT:?}/charts" ;;
		*) record "${CQPERF_OUT:?}/samples" ;;
		esac
		exit 0
	fi
	if [ "$mode" = charts ]; then
		charts "$work/charts"
	else
		record "$work/samples"
	fi
	got=$work
else
	[ "$mode" != inner ] || { echo "$prog: --inner runs on soft-RoCE" >&2; exit 2; }
	[ -x "$bin/cq_event_lat" ] || { echo "$prog: no binaries in $bin" >&2; exit 1; }
	what=samples
	[ "$mode" != charts ] || what=charts
	# The guest hides /tmp behind its own: the results come back in --out.
	"$top/scripts/guest/softroce-run.sh" --timeout 900 --out "$work/out" -- \
		"$here/$prog" --inner "$what"
	got=$work/out
fi

case $mode in
update)
	for name in $(python3 "$here/readme_blocks.py" names "$readme"); do
		python3 "$here/readme_blocks.py" put "$readme" "$name" \
			"$got/samples/$name.out"
		echo "$prog: README sample $name updated"
	done
	;;
check)
	t0=$(date +%s%N)
	rc=0
	python3 "$here/readme_blocks.py" check "$readme" "$got/samples" \
		"${layout_opts[@]}" | sed "s/^sample /$prog: sample /" || rc=1
	if [ "$rc" -ne 0 ]; then
		echo "$prog: the README's samples are out of date:" \
			"scripts/dev/readme-examples.sh --update writes them"
	fi
	echo "$prog: --check took $((($(date +%s%N) - t0) / 1000000)) ms here," \
		"after $(((t0 - start) / 1000000)) ms of runs"
	exit "$rc"
	;;
charts)
	"$top/scripts/installed/cqperf-plot" --out "$work/plots" "$got/charts/load" >/dev/null
	cp "$work/plots/cq_event_lat-load.png" "$top/doc/load-cq_event_lat.png"
	"$top/scripts/installed/cqperf-plot" --out "$work/plots" "$got/charts/sweep" >/dev/null
	cp "$work/plots/cq_poll_bw-bw.png" "$top/doc/sweep-cq_poll_bw-bw.png"
	echo "$prog: doc/load-cq_event_lat.png and doc/sweep-cq_poll_bw-bw.png drawn"
	;;
esac
