#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The statistics of the side-by-side benchmarks (scripts/installed/cqperfbench.py,
# through each scripts/bench-*.sh --report TSV) against hand-made runs.tsv
# files: ours clearly faster is "ahead" with an interval above 1, clearly
# slower "behind" with one below 1, two noisy but equal tools "parity";
# the interval is the same for the same input; latency counts lower as
# better (against perftest and against the ping-pong floor); fewer than 7
# pairs is refused (BENCH_PAIRS, and a TSV with fewer pairs).  The
# harness itself (the order of the runs, retries, servers) is
# tests/test_bench_harness.py's. No RDMA device, no guest.
#
# Run by automake's test harness with top_srcdir set; without it, the
# directory above this script. Prints "ok - ..." / "not ok - ..." a check
# and a last line "N passed, N failed, N skipped"; exit 0 all passed,
# 1 one failed, 77 no python3 (the report needs it).
set -u

here=$(cd "$(dirname "$0")" && pwd) || exit 99
: "${top_srcdir:=$here/..}"
top_srcdir=$(cd "$top_srcdir" && pwd) || exit 99
scripts=$top_srcdir/scripts/bench
# shellcheck source=tests/checks.sh
. "$top_srcdir/tests/checks.sh"

if ! command -v python3 >/dev/null 2>&1; then
	echo "SKIP: python3 is not installed (the benchmark report needs it)"
	exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cqperf-bench-stats.XXXXXX") || exit 99
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp"' EXIT

# ---------------------------------------------------------------------------
# Hand-made runs.tsv files. A run of each tool a pair, the first
# alternating; an empty value ("-") is a failed run.

# bw_tsv FILE "OURS..." "THEIRS...": bench-cq_poll_bw.sh's, 4096 B, one
# MB/s figure a pair for each tool.
bw_tsv() {
	local f=$1 i n a b
	local -a o t
	read -r -a o <<<"$2"
	read -r -a t <<<"$3"
	n=${#o[@]}
	printf 'case\titers\tpair\torder\ttool\tattempts\tmbps\twall_mbps\n' >"$f"
	for ((i = 0; i < n; i++)); do
		a=$((i % 2 + 1)) b=$((2 - i % 2))
		printf 'poll-4096\t20000\t%d\t%d\tours\t1\t%s\t%s\n' $((i + 1)) "$a" \
			"${o[i]/-/}" "${o[i]/-/}" >>"$f"
		printf 'poll-4096\t20000\t%d\t%d\ttheirs\t1\t%s\t%s\n' $((i + 1)) "$b" \
			"${t[i]/-/}" "${t[i]/-/}" >>"$f"
	done
}

# lat_tsv FILE "OURS_P50..." "OURS_AVG..." "THEIRS_P50..." "THEIRS_AVG..."
# "PINGPONG_AVG...": bench-ud_send_lat.sh's, 64 B, one-way usec; the order
# rotating among the three tools.
lat_tsv() {
	local f=$1 i n k
	local -a op oa tp ta pa order
	read -r -a op <<<"$2"
	read -r -a oa <<<"$3"
	read -r -a tp <<<"$4"
	read -r -a ta <<<"$5"
	read -r -a pa <<<"$6"
	n=${#op[@]}
	printf 'case\titers\tpair\torder\ttool\tattempts\tp50_us\tavg_us\twall_us\tlost\n' >"$f"
	for ((i = 0; i < n; i++)); do
		k=$((i % 3))
		order=($(((3 - k) % 3 + 1)) $(((4 - k) % 3 + 1)) $(((5 - k) % 3 + 1)))
		{
			printf 'poll-64\t10000\t%d\t%d\tours\t1\t%s\t%s\t%s\t0\n' $((i + 1)) \
				"${order[0]}" "${op[i]}" "${oa[i]}" "${oa[i]}"
			printf 'poll-64\t10000\t%d\t%d\ttheirs\t1\t%s\t%s\t%s\t\n' $((i + 1)) \
				"${order[1]}" "${tp[i]}" "${ta[i]}" "${ta[i]}"
			printf 'poll-64\t10000\t%d\t%d\tpingpong\t1\t\t%s\t%s\t\n' $((i + 1)) \
				"${order[2]}" "${pa[i]}" "${pa[i]}"
		} >>"$f"
	done
}

# report NAME SCRIPT TSV...: SCRIPT --report TSV (each of them: pooled),
# summary.json into $tmp/NAME/; stdout in $tmp/NAME.out, stderr in
# $tmp/NAME.err, status in $rc.
rc=0
report() {
	local name=$1 script=$2 tsv
	local -a args=()
	shift 2
	for tsv; do args+=(--report "$tsv"); done
	rm -rf "${tmp:?}/$name"
	"$scripts/$script" "${args[@]}" --out "$tmp/$name" \
		>"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
}

# ran NAME: the last report ended with 0 and wrote its summary.
ran() {
	check "$1: report exits 0 and writes summary.json" \
		test "$rc" -eq 0 -a -s "$tmp/$1/summary.json" ||
		show "$tmp/$1.out" "$tmp/$1.err"
}

# says NAME REGEX: a line of the report's stdout matches REGEX.
says() {
	check "$1: prints /$2/" grep -Eq -e "$2" "$tmp/$1.out" ||
		show "$tmp/$1.out" "$tmp/$1.err"
}

# summary NAME WHAT PYTHON: the summary of report NAME (d; its first case
# c, first of "sizes" or "cases") satisfies PYTHON.
summary() {
	check "$1: $2" json_check "$tmp/$1/summary.json" \
		"(lambda c: $3)((d.get('sizes') or d.get('cases'))[0])"
}

# ---------------------------------------------------------------------------
# bench-threads.sh: two configurations of ours. --shared-channel 20 %
# slower and 30 % more server CPU a message than a channel per thread.
{
	printf 'case\titers\tpair\torder\ttool\tattempts\tmbps\twall_mbps\tus_per_msg\tforeign\n'
	for i in 1 2 3 4 5 6 7; do
		printf 'shared-4096\t3000\t%d\t%d\tours\t1\t%s\t%s\t%s\t2000\n' "$i" \
			$((i % 2 + 1)) "$((16 + i)).0" "$((16 + i)).0" "$((130 + 3 * i)).0"
		printf 'shared-4096\t3000\t%d\t%d\ttheirs\t1\t%s\t%s\t%s\t0\n' "$i" \
			$((2 - i % 2)) "$((20 + i)).0" "$((20 + i)).0" "$((100 + 2 * i)).0"
	done
} >"$tmp/threads.tsv"
report threads bench-threads.sh "$tmp/threads.tsv"
ran threads
summary threads 'bandwidth behind, server CPU per message behind' \
	'c["case"] == "shared" and c["ratio"]["verdict"] == "behind" and
	 c["cpu_ratio"]["verdict"] == "behind" and c["cpu_ratio"]["lower_is_better"]
	 and c["ours_foreign"][0] == 2000'
says threads '^verdict shared 4096 B: server CPU per message ours/a channel per thread: behind'

# ---------------------------------------------------------------------------
# Bandwidth, higher is better.

# Ours about 10 % faster in every pair, with a TCG-like spread between
# pairs (the pairs drift from 30 to 60 MB/s together).
bw_tsv "$tmp/ahead.tsv" "33.1 45.2 57.0 39.6 66.3 49.4 36.2" \
	"30.0 41.5 51.2 36.4 60.1 44.3 33.5"
report ahead bench-cq_poll_bw.sh "$tmp/ahead.tsv"
ran ahead
summary ahead 'verdict "ahead"' 'c["verdict"] == "ahead" and c["ratio"]["verdict"] == "ahead"'
summary ahead 'interval above 1, around the median' \
	'1 < c["ratio"]["ci95"][0] <= c["ratio"]["median"] <= c["ratio"]["ci95"][1]'
summary ahead 'median of the paired ratios' \
	'abs(c["ratio"]["median"] - 66.3 / 60.1) < 1e-9 and c["ratio"]["pairs"] == 7'
summary ahead 'the runs of each tool in pair order' \
	'c["ours_mbps"][:2] == [33.1, 45.2] and c["theirs_mbps"][-1] == 33.5'
json_check "$tmp/ahead/summary.json" \
	'd["pairs"] == 7 and d["interval"]["level"] == 0.95 and
	 d["interval"]["widened"] is None and
	 d["interval"]["multiplicity"].endswith("step-down over 1 verdicts")' &&
	ok "ahead: summary names the pairs and the interval" ||
	not_ok "ahead: summary names the pairs and the interval"
says ahead '^verdict +poll +4096 B: bandwidth ours/ib_send_bw: ahead \(median 1\.[0-9]+, CI \[1\.[0-9]+, 1\.[0-9]+\] \(98\.4 %\) excludes 1; higher is better\)'
says ahead '^    p 0\.0156; over this report.s 1 verdicts \(Holm, 5 %\): ahead$'
says ahead '^ +first +ours +theirs +ours '

check "ahead: no retransmission line without its column" \
	sh -c "! grep -q 'rxe retransmissions' '$tmp/ahead.out'"
# The same runs with rxe's retransmissions counted (the harness's measure):
# each tool's medians printed and kept.
awk -F '\t' -v OFS='\t' 'NR == 1 { print $0, "rxe_retries"; next }
	{ print $0, ($5 == "ours" ? 20 : 10) + $3 }' "$tmp/ahead.tsv" >"$tmp/retries.tsv"
report retries bench-cq_poll_bw.sh "$tmp/retries.tsv"
ran retries
says retries '^ +rxe retransmissions a run \(its retry timer fired\): median ours 24 +theirs 14$'
summary retries 'each run'"'"'s retransmissions, in pair order' \
	'c["ours_rxe_retries"][:2] == [21, 22] and c["theirs_rxe_retries"][-1] == 17'

# Ours about 15 % slower.
bw_tsv "$tmp/behind.tsv" "25.4 35.6 43.3 31.0 51.2 37.9 28.6" \
	"30.0 41.5 51.2 36.4 60.1 44.3 33.5"
report behind bench-cq_poll_bw.sh "$tmp/behind.tsv"
ran behind
summary behind 'verdict "behind"' 'c["verdict"] == "behind"'
summary behind 'interval below 1' 'c["ratio"]["ci95"][1] < 1'
says behind 'verdict +poll +4096 B: bandwidth ours/ib_send_bw: behind '

# The same tool twice, swinging up to 2x from run to run: parity.
bw_tsv "$tmp/noisy.tsv" "30.2 58.8 41.0 35.5 60.3 44.7 31.9" \
	"55.1 31.4 40.2 62.0 33.0 45.9 47.5"
report noisy bench-cq_poll_bw.sh "$tmp/noisy.tsv"
ran noisy
summary noisy 'verdict "parity"' 'c["verdict"] == "parity"'
summary noisy 'interval includes 1' 'c["ratio"]["ci95"][0] <= 1 <= c["ratio"]["ci95"][1]'
says noisy 'verdict +poll +4096 B: bandwidth ours/ib_send_bw: parity \(.*includes 1'

# ratio_tsv "SIZES" "R...": bench-cq_poll_bw.sh's runs to stdout, each
# size a pair per R, theirs 30 + 4 * pair MB/s, ours R times that.
ratio_tsv() {
	local size r i their ours
	printf 'case\titers\tpair\torder\ttool\tattempts\tmbps\twall_mbps\n'
	for size in $1; do
		i=0
		for r in $2; do
			i=$((i + 1))
			their=$((30 + 4 * i))
			ours=$(awk -v r="$r" -v t="$their" 'BEGIN { printf "%.3f", r * t }')
			printf 'poll-%s\t20000\t%d\t%d\tours\t1\t%s\t%s\n' "$size" "$i" \
				$((i % 2 + 1)) "$ours" "$ours"
			printf 'poll-%s\t20000\t%d\t%d\ttheirs\t1\t%s\t%s\n' "$size" "$i" \
				$((2 - i % 2)) "$their" "$their"
		done
	done
}

# Pooled over sizes: ours about 5 % slower at each of three sizes, too
# few pairs for any one size to tell (one pair of seven above 1: parity
# each), enough together to tell (3 of 21 above: behind, the sizes'
# ratios ranked together). One size: no pool.
ratio_tsv "64 1024 4096" "0.85 1.05 0.93 0.97 0.90 0.98 0.95" >"$tmp/pooled.tsv"
report pooled bench-cq_poll_bw.sh "$tmp/pooled.tsv"
ran pooled
check "pooled: each size alone is parity" json_check "$tmp/pooled/summary.json" \
	'[c["verdict"] for c in d.get("sizes") or d["cases"]] == ["parity"] * 3' ||
	show "$tmp/pooled.out"
check "pooled: all sizes together are behind, 21 pairs, median 0.95" \
	json_check "$tmp/pooled/summary.json" \
	'len(d["pooled"]) == 1 and d["pooled"][0]["verdict"] == "behind" and
	 d["pooled"][0]["pairs"] == 21 and d["pooled"][0]["sizes"] == 3 and
	 abs(d["pooled"][0]["median"] - 0.95) < 1e-6 and
	 d["pooled"][0]["ci95"][0] <= 0.95 <= d["pooled"][0]["ci95"][1] < 1' ||
	show "$tmp/pooled.out"
says pooled '^verdict poll \(all sizes\): bandwidth ours/ib_send_bw: behind \(median 0\.950, CI \[0\.[0-9]+, 0\.[0-9]+\] \(97\.3 %\) excludes 1'
check "pooled: one size gives no pool" json_check "$tmp/noisy/summary.json" \
	'd["pooled"] == []'

# Runs pooled (--report twice): two runs of 7 pairs, ours about 5 %
# slower, parity each (one pair of seven above 1); their 14 pairs
# together tell (2 above): behind.
ratio_tsv 4096 "0.85 1.05 0.93 0.97 0.90 0.98 0.95" >"$tmp/run1.tsv"
ratio_tsv 4096 "0.97 0.88 1.03 0.95 0.96 0.92 0.99" >"$tmp/run2.tsv"
report run2 bench-cq_poll_bw.sh "$tmp/run2.tsv"
ran run2
summary run2 'one run alone: parity' 'c["verdict"] == "parity"'
report runs bench-cq_poll_bw.sh "$tmp/run1.tsv" "$tmp/run2.tsv"
ran runs
summary runs 'two runs pooled: 14 pairs, behind' \
	'c["ratio"]["pairs"] == 14 and c["verdict"] == "behind" and
	 c["ratio"]["ci95"][1] < 1 and d["pairs"] == 14'
says runs '^poll +4096 B +pair +1\.1 +1\.2 .* 2\.7$'
summary runs "two runs pooled: each run's median kept" \
	'[(r["run"], r["pairs"], round(r["median"], 3))
	  for r in c["ratio"]["run_medians"]] == [("1", 7, 0.95), ("2", 7, 0.96)]'
says runs "^ +each pooled run's median \(7 pairs each\): 0\.950 0\.960$"
summary run2 "one run: no run medians" '"run_medians" not in c["ratio"]'
# A third run whose pairs all sit 8 % above the first two runs' medians:
# the interval draws runs first, then their pairs, and says so.
ratio_tsv 4096 "1.07 1.09 1.08 1.06 1.10 1.08 1.07" >"$tmp/run3.tsv"
report runs3 bench-cq_poll_bw.sh "$tmp/run1.tsv" "$tmp/run2.tsv" "$tmp/run3.tsv"
ran runs3
summary runs3 'three runs that disagree: parity, runs resampled, then pairs' \
	'c["verdict"] == "parity" and c["ratio"]["pairs"] == 21 and
	 c["ratio"]["interval"].endswith("runs resampled, then their pairs") and
	 c["ratio"]["ci95"][1] > 1'
says runs3 "ours/ib_send_bw: median 0\.980, CI \[0\.9[0-9]+, 1\.[0-9]+\] \(>= 97\.3 %\) \(21 pairs, 3 runs\)$"
says runs3 "^\(order statistics, at least 95 %, widened to a bootstrap of the runs\);"
check "runs: the pooled runs kept as runs-pooled.tsv" \
	test "$(grep -c '^poll-4096' "$tmp/runs/runs-pooled.tsv")" -eq 28
"$scripts/bench-cq_poll_bw.sh" --report "$tmp/run1.tsv" --report "$tmp/run2.tsv" \
	>"$tmp/runs-noout.out" 2>&1
check "runs: pooling without --out exits 2 naming --out" \
	test $? -eq 2 -a -n "$(grep -e '--out DIR' "$tmp/runs-noout.out")"
report runs-mixed bench-cq_poll_bw.sh "$tmp/run1.tsv" "$tmp/retries.tsv"
check "runs: runs with other columns exit 2 naming the file" \
	test "$rc" -eq 2 -a -n "$(grep -F "$tmp/retries.tsv: columns" "$tmp/runs-mixed.err")"

# Deterministic: the same TSV gives the same report, interval included,
# and so does a copy of it elsewhere.
cp "$tmp/noisy.tsv" "$tmp/noisy-copy.tsv"
cp "$tmp/noisy/summary.json" "$tmp/noisy-first.json"
cp "$tmp/noisy.out" "$tmp/noisy-first.out"
report noisy bench-cq_poll_bw.sh "$tmp/noisy-copy.tsv"
check "deterministic: same summary.json from the same runs" \
	cmp -s "$tmp/noisy-first.json" "$tmp/noisy/summary.json"
check "deterministic: same report from the same runs" \
	cmp -s "$tmp/noisy-first.out" "$tmp/noisy.out"
# With 7 pairs the interval's ends are order statistics of the ratios,
# alike for most draws; with 120 pairs of noise they depend on the draws
# (an unseeded bootstrap gives the same interval twice running about one
# time in six): four reports of the same runs must still agree.
python3 - "$tmp/many.tsv" <<'EOF' || exit 99
import sys
rows = ["case\titers\tpair\torder\ttool\tattempts\tmbps\twall_mbps"]
x = 12345
for p in range(120):
    for tool in ("ours", "theirs"):
        x = (1103515245 * x + 12345) % 2**31
        v = 30 + 30 * x / 2**31
        order = 1 + ((tool == "theirs") ^ (p % 2))
        rows.append("poll-4096\t20000\t%d\t%d\t%s\t1\t%.3f\t%.3f"
                    % (p + 1, order, tool, v, v))
open(sys.argv[1], "w").write("\n".join(rows) + "\n")
EOF
same=0
for i in 1 2 3 4; do
	report many bench-cq_poll_bw.sh "$tmp/many.tsv"
	cp "$tmp/many/summary.json" "$tmp/many-$i.json"
	if [ "$rc" -eq 0 ] && cmp -s "$tmp/many-1.json" "$tmp/many-$i.json"; then
		same=$((same + 1))
	fi
done
check "deterministic: 120 pairs, four reports, one interval" test "$same" -eq 4 ||
	show "$tmp/many.err"
# ... and not by ignoring the data: other runs, another interval.
ci_of() { json_get "$1" 'd["cases"][0]["ratio"]["ci95"]'; }
check "deterministic: another TSV gives another interval" \
	test "$(ci_of "$tmp/noisy/summary.json")" != "$(ci_of "$tmp/ahead/summary.json")"

# A failed run leaves its pair out: 6 complete pairs of 7 give no
# verdict.
bw_tsv "$tmp/failed.tsv" "33.1 45.2 - 39.6 66.3 49.4 36.2" \
	"30.0 41.5 51.2 36.4 60.1 44.3 33.5"
report failed bench-cq_poll_bw.sh "$tmp/failed.tsv"
ran failed
summary failed 'a failed run: verdict "none" from 6 complete pairs' \
	'c["verdict"] == "none" and c["ratio"]["pairs"] == 6 and c["ratio"]["ci95"] is None'
says failed 'verdict +poll +4096 B: bandwidth ours/ib_send_bw: none \(6 complete pairs, 7 wanted'

# ---------------------------------------------------------------------------
# Latency, lower is better: ours' p50 below perftest's in every pair is
# ahead; ours' average above the ping-pong's (the floor) behind.
lat_tsv "$tmp/lat.tsv" \
	"40.1 52.3 38.8 61.0 45.5 43.9 50.2" \
	"42.0 55.1 40.6 64.2 47.9 46.0 52.8" \
	"45.3 58.9 43.1 69.6 51.0 49.8 56.7" \
	"46.0 60.2 44.4 70.9 52.3 50.5 57.9" \
	"35.2 45.8 33.9 53.4 39.8 38.3 43.9"
report lat bench-ud_send_lat.sh "$tmp/lat.tsv"
ran lat
summary lat 'lower p50 than perftest: ahead, interval below 1' \
	'c["verdict"] == "ahead" and c["ratio"]["ci95"][1] < 1 and c["ratio"]["lower_is_better"]'
summary lat 'higher average than the floor: behind, interval above 1' \
	'c["floor"]["verdict"] == "behind" and c["floor"]["ci95"][0] > 1 and c["floor"]["vs"] == "ibv_ud_pingpong"'
summary lat 'the floor compares averages' \
	'c["floor"]["ours"] == "avg_us" and c["floor"]["vs_column"] == "avg_us" and abs(c["floor"]["median"] - 64.2 / 53.4) < 1e-9'
summary lat 'the ping-pong runs in the summary' \
	'c["pingpong_avg_us"][0] == 35.2 and "pingpong_p50_us" not in c'
says lat 'verdict poll +64 B: p50 ours/ib_send_lat -c UD: ahead \(.*lower is better\)'
says lat 'verdict poll +64 B: avg \(floor, avg vs avg\) ours/ibv_ud_pingpong: behind '

# The other way round: ours' p50 above perftest's is behind.
lat_tsv "$tmp/lat-slow.tsv" \
	"45.3 58.9 43.1 69.6 51.0 49.8 56.7" \
	"46.0 60.2 44.4 70.9 52.3 50.5 57.9" \
	"40.1 52.3 38.8 61.0 45.5 43.9 50.2" \
	"42.0 55.1 40.6 64.2 47.9 46.0 52.8" \
	"46.3 60.0 44.4 70.8 52.4 50.6 57.5"
report lat-slow bench-ud_send_lat.sh "$tmp/lat-slow.tsv"
ran lat-slow
summary lat-slow 'higher p50 than perftest: behind' \
	'c["verdict"] == "behind" and c["ratio"]["ci95"][0] > 1'
summary lat-slow 'average at the floor: parity' 'c["floor"]["verdict"] == "parity"'

# cq_event_lat's report (three tools, event mode's CPU comparisons) on its
# own columns: ours spends less CPU per exchange than ib_send_lat -e.
python3 - "$tmp/event.tsv" <<'EOF' || exit 99
import sys
rows = ["case\titers\tpair\torder\ttool\tattempts\tp50_us\tavg_us\twall_us\tcpu_s\ttool_cpu_s"]
for case in ("poll-64", "event-64"):
    for p in range(7):
        order = {t: (i - p) % 3 + 1 for i, t in
                 enumerate(("ours", "theirs", "pingpong"))}
        drift = 1 + 0.3 * (p % 3)
        for tool, p50, avg, cpu, tcpu in (
                ("ours", 50, 52, 0.40, "0.35"), ("theirs", 51, 53, 0.60, ""),
                ("pingpong", "", 40, 0.30, "")):
            rows.append("\t".join(str(v) for v in (
                case, 1000, p + 1, order[tool], tool, 1,
                p50 if p50 == "" else "%.2f" % (p50 * drift * (1 + 0.01 * (-1) ** p)),
                "%.2f" % (avg * drift), "%.2f" % (avg * drift * 1.1),
                "%.3f" % (cpu * drift),
                tcpu if tcpu == "" else "%.3f" % (float(tcpu) * drift))))
open(sys.argv[1], "w").write("\n".join(rows) + "\n")
EOF
report event bench-cq_event_lat.sh "$tmp/event.tsv"
ran event
json_check "$tmp/event/summary.json" '[c["mode"] for c in d["cases"]] == ["poll", "event"] and all(c["floor"]["verdict"] == "behind" for c in d["cases"])' &&
	ok "event: both modes, each behind its floor" ||
	not_ok "event: both modes, each behind its floor"
json_check "$tmp/event/summary.json" 'd["cases"][1]["cpu_per_exchange"]["ratio_process"]["verdict"] == "ahead" and abs(d["cases"][1]["cpu_per_exchange"]["median_ours_process_us"] - 520) < 1e-6' &&
	ok "event: less CPU per exchange than ib_send_lat -e is ahead" ||
	not_ok "event: less CPU per exchange than ib_send_lat -e is ahead"
says event 'verdict event +64 B: CPU/exchange process vs process ours/ib_send_lat -e: ahead'
says event 'verdict poll +64 B: p50 ours/ib_send_lat: (parity|ahead|behind) '

# ud_send_bw's and cm_event_stress's reports on their own columns.
python3 - "$tmp" <<'EOF' || exit 99
import sys
d = sys.argv[1]
ud = ["case\titers\tpair\torder\ttool\tattempts\tmbps\twall_mbps\tloss_pct\treleased"]
cm = ["connections\titers\tpair\torder\ttool\tattempts\tconn_per_s\tconnect_ms"
      "\twall_ms\tteardown_per_s\treleased\tsteps"]
steps = '{"connect":{"event":"ESTABLISHED","count":500,"p50_us":9,"avg_us":9,"min_us":1,"max_us":20}}'
for p in range(8):
    a, b = (1, 2) if p % 2 == 0 else (2, 1)
    s = 1 + 0.5 * (p % 4)
    ud.append("poll-64\t50000\t%d\t%d\tours\t1\t%.2f\t%.2f\t0.10\t" % (p + 1, a, 2 * s, 1.9 * s))
    ud.append("poll-64\t50000\t%d\t%d\ttheirs\t2\t%.2f\t%.2f\t\t1" % (p + 1, b, 2.4 * s, 2.3 * s))
    cm.append("500\t500\t%d\t%d\tours\t1\t%.1f\t%.1f\t%.1f\t900\t\t%s" % (p + 1, a, 1000 * s, 500 / s, 900 / s, steps))
    cm.append("500\t500\t%d\t%d\ttheirs\t1\t%.1f\t%.1f\t%.1f\t800\t1\t{}" % (p + 1, b, 1010 * s * (1 + 0.05 * (-1) ** p), 495 / s, 950 / s))
open(d + "/ud.tsv", "w").write("\n".join(ud) + "\n")
open(d + "/cm.tsv", "w").write("\n".join(cm) + "\n")
EOF
report ud bench-ud_send_bw.sh "$tmp/ud.tsv"
ran ud
summary ud '8 pairs, ours slower: behind, retries counted' \
	'c["verdict"] == "behind" and c["pairs"] == 8 and c["retries"] == 8 and c["theirs_server_stopped"] == 8'
report cm bench-cm_event_stress.sh "$tmp/cm.tsv"
ran cm
summary cm 'a rate within 5 % either way: parity' \
	'c["verdict"] == "parity" and c["ratio"]["vs"] == "cmtime"'
says cm 'verdict 500 connections: full-connect rate ours/cmtime: parity '

# ---------------------------------------------------------------------------
# Fewer than 7 pairs is refused.

# A TSV of 6 pairs: exit 2, and says why.
bw_tsv "$tmp/six.tsv" "33.1 45.2 57.0 39.6 66.3 49.4" \
	"30.0 41.5 51.2 36.4 60.1 44.3"
report six bench-cq_poll_bw.sh "$tmp/six.tsv"
check "6 pairs in a TSV: exit 2" test "$rc" -eq 2 || show "$tmp/six.out" "$tmp/six.err"
check "6 pairs in a TSV: says so" grep -q '6 pairs, at least 7 wanted' "$tmp/six.err" ||
	show "$tmp/six.err"
check "6 pairs in a TSV: no summary" test ! -e "$tmp/six/summary.json"
# Not a runs.tsv at all.
printf 'size\titers\trun\ttool\tattempts\tmbps\n4096\t10\t1\tours\t1\t3\n' >"$tmp/old.tsv"
report old bench-cq_poll_bw.sh "$tmp/old.tsv"
check "a TSV without pairs: exit 2" test "$rc" -eq 2 || show "$tmp/old.err"

# BENCH_PAIRS out of range or not a count: exit 2 before anything runs,
# naming BENCH_PAIRS and its range (no build, no guest needed for that).
pairs_refused() { # NAME ENV=VALUE SCRIPT
	local name=$1 setting=$2 script=$3 got
	env -u BENCH_PAIRS -u BENCH_RUNS "$setting" timeout 20 \
		"$scripts/$script" --out "$tmp/never" >"$tmp/pairs.out" 2>"$tmp/pairs.err"
	got=$?
	if [ "$got" -eq 2 ] && grep -q 'BENCH_PAIRS wants a count from 7 to 1000' "$tmp/pairs.err" &&
		[ ! -e "$tmp/never" ]; then
		ok "$name: exit 2, names BENCH_PAIRS and 7 to 1000"
	else
		not_ok "$name: exit $got, wanted 2 and a message naming BENCH_PAIRS and 7 to 1000"
		show "$tmp/pairs.out" "$tmp/pairs.err"
	fi
}
pairs_refused "BENCH_PAIRS=6" BENCH_PAIRS=6 bench-cq_poll_bw.sh
pairs_refused "BENCH_PAIRS=0" BENCH_PAIRS=0 bench-ud_send_bw.sh
pairs_refused "BENCH_PAIRS=1001" BENCH_PAIRS=1001 bench-cq_event_lat.sh
pairs_refused "BENCH_PAIRS=7x" BENCH_PAIRS=7x bench-ud_send_lat.sh
pairs_refused "BENCH_RUNS=3 (the deprecated alias)" BENCH_RUNS=3 bench-cm_event_stress.sh
check "BENCH_RUNS: says it is deprecated" grep -q 'BENCH_RUNS is deprecated, use BENCH_PAIRS' "$tmp/pairs.err"
for script in bench-cq_poll_bw.sh bench-ud_send_lat.sh bench-cq_event_lat.sh; do
	BENCH_MODES="event hybrid" timeout 20 "$scripts/$script" --out "$tmp/never" \
		>"$tmp/modes.out" 2>"$tmp/modes.err"
	check "$script BENCH_MODES=hybrid: exit 2 naming BENCH_MODES" sh -c \
		"test $? -eq 2 && grep -q \"BENCH_MODES wants poll and/or event, not 'hybrid'\" '$tmp/modes.err' && test ! -e '$tmp/never'" ||
		show "$tmp/modes.err"
done

echo "$CHECKS_PASSED passed, $CHECKS_FAILED failed, 0 skipped"
[ "$CHECKS_FAILED" -eq 0 ]
