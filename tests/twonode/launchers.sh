#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cqperf-sweep's launchers for real, across two soft-RoCE nodes (the QEMU
# guests of scripts/guest/softroce-2node.sh, booted once for all of it):
#   --server-ssh  against a real sshd on the server node (a host key and a
#                 client key made for this run, on the private address
#                 only): a grid is swept, the remote server is stopped at
#                 the end and leaves no process behind; a bad
#                 --remote-bin-dir and a refused connection fail at once,
#                 naming the host;
#   --slurm       in a real two-node Slurm cluster (munged on both nodes
#                 with one key made for the run, slurmctld and slurmd on
#                 node 1, slurmd on node 2; configuration and state on the
#                 guests' tmpfs): "salloc -N 2 cqperf-sweep --slurm" for
#                 two binaries puts the server step on node 1 and the
#                 clients on node 2, ends the server step, and leaves the
#                 queue empty; "--clients 16" runs a server of 16 clients
#                 on node 1 and its 16 clients as one step on node 2.
# Which node a document came from is read from its GID, as tests/twonode/
# run.sh does.  tests/twonode/cluster.sh sets the daemons up.
# Prints "ok - ..." / "not ok - ..." per check and a last line
# "N passed, N failed, N skipped"; exits 1 on failure, 77 when there is no
# QEMU, guest kernel, sshd or Slurm to run.
#   tests/twonode/launchers.sh BIN_DIR
set -u
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
here=$(dirname "$self")
top=$(cd "$here/../.." && pwd)
# shellcheck source=tests/twonode/cluster.sh
. "$here/cluster.sh"
sweep=$top/scripts/installed/cqperf-sweep
ssh_port=18731
# tool, its port, its grid, its client options
slurm_tools=(cq_poll_bw ud_send_lat)
declare -A slurm_port=([cq_poll_bw]=18741 [ud_send_lat]=18742)
declare -A slurm_client=([cq_poll_bw]="-d rxe0 -n 200 --timeout 30"
	[ud_send_lat]="-d rxe0 -n 200 --timeout 30")
# shellcheck disable=SC2054  # the commas are cqperf-sweep's
grid=(--grid size=64,4096 --grid cq-mode=poll,event)
server_args="-d rxe0 --timeout 120 --output json"

# --- In the server guest (node 1): sshd and the Slurm controller, until
# the client node says it is done (over ssh), or IDLE seconds.
if [ "${1:-}" = --guest-server ]; then
	bin=$2 keys=$3 out=$CQPERF_OUT
	rc=0
	cluster_install "$keys" "$cluster_node1" &&
		cluster_sshd && cluster_munged "$cluster_addr1" && cluster_slurmctld &&
		cluster_slurmd "$cluster_node1" || rc=1
	echo "# node 1: daemons started (status $rc)"
	idle=${CQPERF_2NODE_IDLE:-400}
	for ((i = 0; i < idle * 2 && rc == 0; i++)); do
		[ -e "$cluster_run/done" ] && break
		sleep 0.5
	done
	[ -e "$cluster_run/done" ] || { echo "# node 1: no word from node 2"; rc=1; }
	# Every sweep is over: no server and no step may be left here.
	pgrep -a -f "$bin/[c]q_|[s]lurmstepd" >"$out/leftover.txt"
	cluster_stop
	sleep 0.5
	cp "$cluster_run"/*.log "$out/" 2>/dev/null
	exit "$rc"
fi

# --- In the client guest (node 2): the sweeps, then the word to node 1.
if [ "${1:-}" = --guest-client ]; then
	bin=$2 keys=$3 out=$CQPERF_OUT
	if ! { cluster_install "$keys" "$cluster_node2" &&
		cluster_munged "$cluster_addr2" && cluster_slurmd "$cluster_node2"; }; then
		echo "# node 2: the daemons did not start"
		cp "$cluster_run"/*.log "$out/" 2>/dev/null
		exit 1
	fi
	cfg=$cluster_run/ssh_config
	dest=root@$cluster_addr1
	remote() { ssh -F "$cfg" "$dest" "$@"; }
	for ((i = 0; i < 120; i++)); do
		remote true 2>/dev/null && break
		sleep 1
	done
	echo "# node 2: ssh to node 1 after $i s"
	# run_sweep NAME ARGS...: one sweep, its output and status in $out.
	run_sweep() {
		local name=$1
		shift
		timeout 300 "$sweep" --bin-dir "$bin" --host "$cluster_addr1" \
			--out "$out/$name" "$@" >"$out/$name.out" 2>&1
		echo $? >"$out/$name.rc"
		echo "# node 2: $name sweep exited $(cat "$out/$name.rc")"
	}
	ssh_sweep() {
		local name=$1
		shift
		run_sweep "$name" --tool cq_poll_bw --port "$ssh_port" \
			--server-ssh "$dest" --server-args "$server_args" \
			--client-args "-d rxe0 -n 200 --timeout 30" "$@"
	}
	ssh_sweep ssh --ssh-args "-F $cfg" "${grid[@]}"
	# The hang-up reaches the remote server a moment after the sweep.
	for ((i = 0; i < 20; i++)); do
		# [c]: the pattern must not match the remote shell's own line.
		left=$(remote "pgrep -a -f '$bin/[c]q_poll_bw'")
		[ -z "$left" ] && break
		sleep 0.5
	done
	printf '%s' "$left" >"$out/ssh-left.txt"
	ssh_sweep ssh-badbin --ssh-args "-F $cfg" --remote-bin-dir /nonexistent \
		--grid size=64
	# Nothing listens on that port of node 1: refused.
	ssh_sweep ssh-refused --ssh-args "-F $cfg -p 2222" --grid size=64

	cluster_wait_idle 120
	sinfo -N >"$out/sinfo.txt" 2>&1
	for t in "${slurm_tools[@]}"; do
		timeout 400 salloc -N 2 -t 10 -J "cqperf-$t" "$sweep" --slurm \
			--tool "$t" --bin-dir "$bin" --host "$cluster_addr1" \
			--port "${slurm_port[$t]}" --out "$out/slurm-$t" \
			--server-args "$server_args" \
			--client-args "${slurm_client[$t]}" "${grid[@]}" \
			>"$out/slurm-$t.out" 2>&1
		echo $? >"$out/slurm-$t.rc"
		echo "# node 2: salloc -N 2 cqperf-sweep --slurm --tool $t exited $(cat "$out/slurm-$t.rc")"
	done
	# Fan-in: one server step of --clients 16, one step of 16 clients.
	timeout 400 salloc -N 2 -t 10 -J cqperf-fanin "$sweep" --slurm \
		--tool ud_send_bw --bin-dir "$bin" --host "$cluster_addr1" \
		--port 18743 --out "$out/slurm-fanin" --server-args "$server_args" \
		--client-args "-d rxe0 -n 300 --timeout 60" --clients 16 \
		--grid size=64 >"$out/slurm-fanin.out" 2>&1
	echo $? >"$out/slurm-fanin.rc"
	echo "# node 2: the fan-in sweep exited $(cat "$out/slurm-fanin.rc")"
	for ((i = 0; i < 60; i++)); do
		queue=$(squeue -h 2>&1)
		[ -z "$queue" ] && break
		sleep 0.5
	done
	printf '%s' "$queue" >"$out/squeue.txt"
	remote "touch $cluster_run/done"
	cluster_stop
	sleep 0.5
	cp "$cluster_run"/*.log "$out/" 2>/dev/null
	exit 0
fi

# --- On the host.
# shellcheck source=tests/checks.sh
. "$top/tests/checks.sh"
# shellcheck source=tests/twonode/lib.sh
. "$top/tests/twonode/lib.sh"
twonode_preflight "${1:-}" cq_poll_bw ud_send_lat
for d in sshd munged slurmd slurmctld; do
	[ -x "/usr/sbin/$d" ] || twonode_skip "no /usr/sbin/$d (scripts/deps.sh installs it)"
done
for c in ssh ssh-keygen salloc srun squeue sinfo; do
	command -v "$c" >/dev/null || twonode_skip "no $c (scripts/deps.sh installs it)"
done
twonode_out launchers
# The keys and configuration for this run, where the guests see them
# (read-only): beside the binaries, not under /tmp (each guest has its own).
keys=$(mktemp -d "$(dirname "$bin")/twonode-cluster.XXXXXX") || exit 1
trap 'rm -rf "$keys" ${twonode_tmp:+"$twonode_tmp"}' EXIT
cluster_make "$keys" "${CQPERF_GUEST_SMP:-2}" || {
	not_ok "the run's keys and configuration are made"
	exit 1
}
twonode_boot "$self" "$bin" "$keys"
c=$out/client
s=$out/server

client_gid=$(own_gid "$cluster_addr2" ffff:c612:102)
server_gid=$(own_gid "$cluster_addr1" ffff:c612:101)
# server_docs LOG EXPR N: LOG (a server's output: one JSON document per
# client, maybe with CR LF from ssh -tt) holds N documents, and EXPR holds
# for each, as d.
server_docs() {
	python3 - "$@" <<-'EOF'
		import json, re, sys
		# srun's own lines ("forcing job termination" as the sweep ends
		# the step), and the server's stderr (srun forwards the two
		# streams apart), may land between a document's lines.
		text = "\n".join(
		    l for l in open(sys.argv[1], errors="replace").read()
		    .replace("\r", "").split("\n")
		    if not re.match(r"(srun:|slurmstepd|[a-z_]+: )", l))
		dec, docs, i = json.JSONDecoder(), [], text.find("{")
		while i >= 0:
		    try:
		        d, j = dec.raw_decode(text, i)
		        docs.append(d)
		        i = text.find("{", j)
		    except ValueError:
		        i = text.find("{", i + 1)
		ok = len(docs) == int(sys.argv[3]) and all(eval("(%s)" % sys.argv[2]) for d in docs)
		print("%d documents: %s" % (len(docs), ", ".join(
		    str(d.get("role")) for d in docs)))
		sys.exit(not ok)
	EOF
}
# sweep_ok NAME TOOL RUNS: a sweep's checks: it exited 0 with every run
# ok, each client document from node 2, each server document from node 1.
sweep_ok() {
	local name=$1 tool=$2 runs=$3 f n=0
	r=$(cat "$c/$name.rc" 2>/dev/null || echo none)
	check "$name: the sweep exits 0 (got $r)" test "$r" = 0 ||
		show "$c/$name.out" "$c/$name/sweep/server.log"
	check "$name: $runs runs, 0 failed" grep -qx "$runs runs, 0 failed" \
		"$c/$name.out" || show "$c/$name.out"
	for f in "$c/$name"/"$tool"-*.json; do
		[ -e "$f" ] || continue
		json_check "$f" "$client_gid and d[\"role\"] == \"client\"" &&
			n=$((n + 1))
	done
	check "$name: all $runs client documents came from node 2 ($n)" \
		test "$n" -eq "$runs"
	check "$name: the server's $runs documents came from node 1" \
		server_docs "$c/$name/sweep/server.log" \
		"$server_gid and d['role'] == 'server'" "$runs" ||
		show "$c/$name/sweep/server.log"
}

sweep_ok ssh cq_poll_bw 4
check "ssh: the manifest names the remote server" \
	json_check "$c/ssh/sweep/manifest.json" \
	'd["server"]["ssh"] == "root@'"$cluster_addr1"'" and
	 [e["event"] for e in d["server"]["events"]] == ["started", "stopped"]'
check "ssh: no server left on node 1 after the sweep ($(tr '\n' ' ' <"$c/ssh-left.txt" 2>/dev/null))" \
	test ! -s "$c/ssh-left.txt"
for name in ssh-badbin ssh-refused; do
	r=$(cat "$c/$name.rc" 2>/dev/null || echo none)
	check "$name: the sweep fails at once, not by its timeout (got $r)" \
		test "$r" = 1 || show "$c/$name.out"
done
check "ssh-badbin: the error names the host and the missing binary" \
	grep -q "server: the server on root@$cluster_addr1 over ssh exited with status 127: .*/nonexistent/cq_poll_bw" \
	"$c/ssh-badbin.out" || show "$c/ssh-badbin.out"
check "ssh-refused: the error names the host and the refusal" \
	grep -q "server: ssh to root@$cluster_addr1 failed (exit 255): .*Connection refused" \
	"$c/ssh-refused.out" || show "$c/ssh-refused.out"

for t in "${slurm_tools[@]}"; do
	sweep_ok "slurm-$t" "$t" 4
	check "slurm-$t: the server was a step on node 1, the clients on node 2" \
		json_check "$c/slurm-$t/sweep/manifest.json" \
		'd["server"]["slurm_nodes"] == ["'"$cluster_node1"'", "'"$cluster_node2"'"] and
		 "--nodelist='"$cluster_node1"'" in d["server"]["command"] and
		 all("--nodelist='"$cluster_node2"'" in r["command"] for r in d["runs"]) and
		 [e["event"] for e in d["server"]["events"]] == ["started", "stopped"]'
done
r=$(cat "$c/slurm-fanin.rc" 2>/dev/null || echo none)
check "slurm-fanin: --clients 16 across the two nodes: exit 0 (got $r)" \
	grep -qx "1 runs, 0 failed" "$c/slurm-fanin.out" || show "$c/slurm-fanin.out"
check "slurm-fanin: the point is the server's, from node 1, with its 16 clients on node 2" \
	json_check "$c/slurm-fanin/ud_send_bw-clients_16-size_64.json" \
	"$server_gid and d['role'] == 'server' and
	 d['results'][0]['client_count'] == 16 and
	 all(x['address'].startswith('$cluster_addr2:') for x in d['results'][0]['clients'])" ||
	show "$c/slurm-fanin/sweep/ud_send_bw-clients_16-size_64.server.err"
n=0
for f in "$c/slurm-fanin/sweep"/ud_send_bw-clients_16-size_64.client-*.json; do
	[ -e "$f" ] && json_check "$f" "$client_gid and d['role'] == 'client'" &&
		n=$((n + 1))
done
check "slurm-fanin: each of the 16 tasks wrote its own document on node 2 ($n)" \
	test "$n" -eq 16
check "slurm: the queue is empty at the end ($(tr '\n' ' ' <"$c/squeue.txt" 2>/dev/null))" \
	test -e "$c/squeue.txt" -a ! -s "$c/squeue.txt" || show "$c/slurmctld.log"
check "node 1: no server, no step left at the end ($(tr '\n' ' ' <"$s/leftover.txt" 2>/dev/null))" \
	test -e "$s/leftover.txt" -a ! -s "$s/leftover.txt"
check_documents "$out"
echo "$CHECKS_PASSED passed, $CHECKS_FAILED failed, 0 skipped"
[ "$CHECKS_FAILED" -eq 0 ]
