#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Cost accounting (cqperf(7) CPU ACCOUNTING): every key in every traffic
# binary's JSON and CSV, the thread's split against its total, the
# process against /proc/PID/stat read from outside, the kernel's share of
# event mode against poll mode, the noisy flag with and without a CPU hog,
# and --clock's refusal without an invariant TSC.
. "$(dirname "$0")/lib.sh"
require_device

keys=(cpu_pct cpu_user_pct cpu_sys_pct proc_cpu_pct sys_busy_pct sys_irq_pct
	sys_softirq_pct sys_kthread_pct others_busy_pct noisy cpu_ns_per_msg
	softirq_ns_per_msg kernel_ns_per_msg sys_irqtime_measured
	sys_softirqs_per_s softirqs_per_msg)
pykeys="[$(printf '"%s",' "${keys[@]}")]"

# run TOOL NAME FMT ARGS...: one client run against a fresh server of TOOL
# (server pinned to CPU 0 and reporting it: --cpu), output in $WORK/NAME.FMT.
run() {
	local tool=$1 name=$2 fmt=$3 port
	shift 3
	port=$(next_port)
	start_server "$tool:$name" "$port" --timeout 20 --cpu 0 ||
		not_ok "$name: server listens"
	"$CQPERF_BIN/$tool" -d "$DEV" -p "$port" --timeout 20 --output "$fmt" \
		"$@" "$ADDR" >"$WORK/$name.$fmt" 2>"$WORK/$name.err"
	local rc=$?
	wait "$SERVER_PID"
	SERVER_PID=
	return $rc
}

for tool in cq_poll_bw cq_event_lat ud_send_bw ud_send_lat; do
	for mode in poll event; do
		name=$tool-$mode
		run "$tool" "$name" json --cq-mode "$mode" -n 300 -s 64
		check "$name: every accounting key on both sides" json_check \
			"$WORK/$name.json" 'all(k in r[s] for k in '"$pykeys"'
			 for s in ("client", "server")) and
			 "cpu_softirq_pct" in r["server"] and
			 "cpu_softirq_pct" not in r["client"] and
			 d["clock"]["source"] in ("tsc", "monotonic")' ||
			show "$WORK/$name.err"
		# The ratio of tick samples applied to the exact total: it
		# adds up to it, however short the run (300 messages here).
		check "$name: user + sys = cpu_pct, process >= thread" \
			json_check "$WORK/$name.json" 'all(
			 abs(r[s]["cpu_user_pct"] + r[s]["cpu_sys_pct"] - r[s]["cpu_pct"]) <= 0.01
			 and r[s]["proc_cpu_pct"] >= r[s]["cpu_pct"] - 0.01
			 for s in ("client", "server"))'
	done
	run "$tool" "$tool-csv" csv -n 300 -s 64
	check "$tool: every accounting key in the CSV header, both sides" \
		python3 -c 'import csv, sys
rows = list(csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#")))
need = [s + "_" + k for s in ("client", "server") for k in sys.argv[2].split()]
sys.exit(not rows or any(k not in rows[0] or rows[0][k] == "" for k in need))' \
		"$WORK/$tool-csv.csv" "${keys[*]}" || show "$WORK/$tool-csv.csv"
done

# cm_event_stress: one cost for the whole storm, each side's.
run cm_event_stress cm json -c 100
check "cm_event_stress: every accounting key, run-wide, on both sides" \
	json_check "$WORK/cm.json" 'all(k in d["cost"][s] for k in '"$pykeys"'
	 if not k.endswith("_per_msg") for s in ("client", "server")) and all(
	 abs(d["cost"][s]["cpu_user_pct"] + d["cost"][s]["cpu_sys_pct"] -
	 d["cost"][s]["cpu_pct"]) <= 2 for s in ("client", "server"))' ||
	show "$WORK/cm.err"
run cm_event_stress cm human -c 100
check "cm_event_stress: a CPU line per side under the table" grep -Eq \
	'^ CPU, server: thread [0-9.]+ % \(usr/sys [0-9.]+/[0-9.]+\), process [0-9.]+ %;$' \
	"$WORK/cm.human" && grep -q '^   machine: busy' "$WORK/cm.human" ||
	show "$WORK/cm.human"
fits "cm_event_stress" "$WORK/cm.human"
run cm_event_stress cm csv -c 100
check "cm_event_stress: the cost as CSV comment lines" grep -q \
	'^# cost.client: cpu_pct=[0-9.]* seconds=' "$WORK/cm.csv" || show "$WORK/cm.csv"

# From outside: the server's utime + stime in /proc/PID/stat, read 2 s
# apart well inside a steady -D 6 event-mode run (so setup, warm-up and
# teardown stay out), against the proc_cpu_pct it reports for the run.
ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$SERVER_PID/stat"; }
outside() { # sets $seen and $said
	local port t0 t1 s0 s1 client
	port=$(next_port)
	start_server cq_event_lat:outside "$port" --timeout 20 ||
		not_ok "outside: server listens"
	"$CQPERF_BIN/cq_event_lat" -d "$DEV" -p "$port" --timeout 20 --output json \
		--cq-mode event -D 6 -s 64 "$ADDR" >"$WORK/outside.json" 2>"$WORK/outside.err" &
	client=$!
	sleep 2
	t0=$(ticks) s0=$EPOCHREALTIME
	sleep 2
	t1=$(ticks) s1=$EPOCHREALTIME
	wait "$client"
	wait "$SERVER_PID"
	SERVER_PID=
	seen=$(awk -v a="$t0" -v b="$t1" -v hz="$(getconf CLK_TCK)" -v s0="$s0" -v s1="$s1" \
		'BEGIN { printf "%.1f", 100 * (b - a) / hz / (s1 - s0) }')
	said=$(json_get "$WORK/outside.json" '"%.1f" % r["server"]["proc_cpu_pct"]')
	echo "# server process CPU: /proc/PID/stat ${seen} %, proc_cpu_pct ${said} %"
}
agrees() { awk -v s="$seen" -v r="$said" 'BEGIN { exit !(r > 5 && s >= 0.9 * r && s <= 1.1 * r) }'; }
outside
check_timed "proc_cpu_pct agrees with /proc/PID/stat within 10 %" outside agrees

# Event mode asks the kernel for more per exchange than polling: the
# channel read, the re-arm and the switch.  On rxe softirq does the rest.
run cq_event_lat cmp json --compare-modes -n 1000 -s 64
# server MODE: the Python expression of that mode's server figures
server() { echo "[x for x in d[\"results\"] if x[\"label\"] == \"$1\"][0][\"server\"]"; }
sys_per() { json_get "$WORK/cmp.json" "'%.1f' % ($(server "$1")[\"cpu_sys_pct\"] * $(server "$1")[\"seconds\"] * 1e7 / 1000)"; }
echo "# server system time per exchange: poll $(sys_per poll) ns, event $(sys_per event) ns"
check "event mode: softirq time on the machine" json_check "$WORK/cmp.json" \
	"$(server event)"'["sys_softirq_pct"] > 0'
check "event mode: more system time per exchange than poll mode" awk \
	-v p="$(sys_per poll)" -v e="$(sys_per event)" 'BEGIN { exit !(e > p) }'

# Noise: the same event-mode run alone, then beside a CPU hog.
quiet() { run cq_event_lat quiet human --cq-mode event -D 3 -s 64; }
quiet
check_timed "alone: no side is noisy" quiet sh -c "! grep -q 'Warning:' '$WORK/quiet.human'" ||
	show "$WORK/quiet.human"
(while :; do :; done) &
hog=$!
run cq_event_lat hog human --cq-mode event -D 3 -s 64
run cq_event_lat hogjson json --cq-mode event -D 2 -s 64
kill "$hog"
wait "$hog" 2>/dev/null
check "beside a CPU hog: the warning names the side and its share" grep -Eq \
	'^ Warning: (client|server) machine: [0-9]+ % of a core busy with other processes; figures are suspect$' \
	"$WORK/hog.human" || show "$WORK/hog.human"
fits "cq_event_lat, a noisy side" "$WORK/hog.human"
check "beside a CPU hog: JSON says noisy, with the share" json_check \
	"$WORK/hogjson.json" 'any(r[s]["noisy"] is True and r[s]["others_busy_pct"] > 10
	 for s in ("client", "server"))' || show "$WORK/hogjson.json"
check "the short runs above were not flagged" json_check "$WORK/cq_event_lat-event.json" \
	'r["client"]["noisy"] is False and r["server"]["noisy"] is False'

# --clock: tsc needs an invariant TSC (a TCG guest has none).
if grep -m1 '^flags' /proc/cpuinfo | grep -qw constant_tsc &&
	grep -m1 '^flags' /proc/cpuinfo | grep -qw nonstop_tsc; then
	run cq_event_lat clock json --clock tsc -n 10
	check "--clock tsc with an invariant TSC reads it" json_check \
		"$WORK/clock.json" 'd["clock"]["source"] == "tsc" and d["clock"]["hz"] > 1e6'
else
	"$CQPERF_BIN/cq_event_lat" -d "$DEV" --clock tsc -p "$(next_port)" \
		>"$WORK/tsc.out" 2>"$WORK/tsc.err"
	check "--clock tsc without an invariant TSC: exit 2 naming --clock" \
		test $? -eq 2 -a ! -s "$WORK/tsc.out" && grep -q -- '--clock tsc' "$WORK/tsc.err" ||
		show "$WORK/tsc.err"
	run cq_event_lat auto json -n 10
	check "--clock auto there: monotonic" json_check "$WORK/auto.json" \
		'd["clock"]["source"] == "monotonic" and not d["clock"]["invariant_tsc"]'
fi
# The human cost rows a newcomer reads (issue 47), from -a with short
# steps: no share over a core, no -0.0; the machine's kernel figures
# once a row, on its own line (both sides share this guest), said to be
# the machine's; none below /proc/stat's tick shown as 0; the peer on
# this machine not counted as "other processes"; the units and dashes
# said under the table.
run cq_poll_bw all-human human -a -n 10 --warmup 2
check "-a: no share over 100 % in a cost row, no -0.0" eval \
	"awk '\$1 == \"client\" || \$1 == \"server\" {
		if (\$2 + 0 > 100) bad = 1
		if (\$3 ~ /^-0\\.0|\\/-0\\.0/) bad = 1
	} /-0\\.0/ { bad = 1 } END { exit bad }' '$WORK/all-human.human'" ||
	show "$WORK/all-human.human"
rows=$(grep -cE '^ [0-9]+ +[0-9]+ ' "$WORK/all-human.human")
check "-a: the machine's figures once a row ($rows rows), said to be the machine's" eval \
	"test \$(grep -cE '^     machine +([0-9]+|<1 tick|-) +([0-9]+|<1 tick|-)\$' '$WORK/all-human.human') -eq $rows -a $rows -gt 8 &&
	 grep -q '^ kern, sirq ns/msg: the machine.s (both sides ran on it), all CPUs; /proc/stat, ' '$WORK/all-human.human'" ||
	show "$WORK/all-human.human"
check "-a: no bare 0 in the machine's columns, a tick below /proc/stat's shown as such" eval \
	"! grep -qE '^     machine +(0 |[0-9]+ +0\$)' '$WORK/all-human.human' &&
	 { ! grep -q '<1 tick' '$WORK/all-human.human' ||
	   grep -q '^ <1 tick: none seen in the step by /proc/stat' '$WORK/all-human.human'; }" ||
	show "$WORK/all-human.human"
check "-a: the peer on this machine is not \"other processes\"" \
	sh -c "! grep -q 'busy with other processes' '$WORK/all-human.human'" ||
	show "$WORK/all-human.human"
check "-a: every dash and unit said under the table" eval \
	"grep -q '^ MB/sec: 2^20 bytes a second' '$WORK/all-human.human' &&
	 { ! grep -qE '^ [0-9]+ +[0-9]+ +- ' '$WORK/all-human.human' ||
	   grep -q 'BW peak needs a step of two 50 ms windows' '$WORK/all-human.human'; }" ||
	show "$WORK/all-human.human"
# Softirq's source, said: this guest's kernel samples irq time at the
# tick (no CONFIG_IRQ_TIME_ACCOUNTING, so no /proc/pressure/irq); and
# how often softirqs ran, exactly, against /proc/softirqs read from
# outside the run.
if [ -e /proc/pressure/irq ] ||
	grep -qx 'CONFIG_IRQ_TIME_ACCOUNTING=y' "/boot/config-$(uname -r)" 2>/dev/null; then
	measured=True note=measured
else
	measured=False note=tick-sampled
fi
check "-a: the note names the softirq source ($note)" grep -q \
	"^ kern, sirq ns/msg: the machine's (both sides ran on it), all CPUs; /proc/stat, $note\$" \
	"$WORK/all-human.human" || show "$WORK/all-human.human"
sirqs() { awk '/^ *(HI|NET_TX|NET_RX|TASKLET):/ { for (i = 2; i <= NF; i++) n += $i }
	END { print n }' /proc/softirqs; }
before=$(sirqs)
run cq_poll_bw all-sirq json -a -n 40 --warmup 2
after=$(sirqs)
check "-a: sys_irqtime_measured is $measured on both sides" json_check \
	"$WORK/all-sirq.json" "all(x[s]['sys_irqtime_measured'] is $measured
	 for x in d['results'] for s in ('client', 'server'))"
check "-a: the steps' softirqs within /proc/softirqs' count around the run" \
	json_check "$WORK/all-sirq.json" "0 < sum(x['client']['softirqs_per_msg'] *
	 x['iterations'] for x in d['results']) <= $after - $before"
finish
