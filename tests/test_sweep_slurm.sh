#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# scripts/installed/cqperf-sweep --slurm with stand-ins for srun, scontrol and the
# tool, for what the real two-node cluster of tests/twonode/launchers.sh
# cannot show: an allocation of three nodes (only the first two are used),
# --slurm-args reaching both steps, a server step that dies during the
# sweep (the sweep stops at once, naming the node, instead of each client
# waiting out its timeout), and the refusals: outside an allocation, in
# one of a single node, with --start-server.  The real cluster covers the
# placement of the steps, the server's end and the empty queue.  No Slurm
# and no RDMA device needed.
#
# Run by automake's test harness with top_srcdir set (default: the
# directory above this script).  Exit 0 all passed, 1 one failed, 77 no
# python3.
set -u
here=$(cd "$(dirname "$0")" && pwd) || exit 99
: "${top_srcdir:=$here/..}"
top_srcdir=$(cd "$top_srcdir" && pwd) || exit 99
. "$top_srcdir/tests/checks.sh"
sweep=$top_srcdir/scripts/installed/cqperf-sweep

if ! command -v python3 >/dev/null 2>&1; then
	echo "SKIP: python3 is not installed (cqperf-sweep needs it)"
	exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cqperf-slurm.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/stub" "$tmp/bin"

# scontrol show hostnames LIST: two made-up nodes, or one for "solo".
cat >"$tmp/stub/scontrol" <<'EOF'
#!/bin/bash
[ "$1 $2" = "show hostnames" ] || exit 1
case $3 in solo) echo solo ;; *) printf 'nodeA\nnodeB\nnodeC\n' ;; esac
EOF
# srun: records the step's node and options, then runs the command here.
cat >"$tmp/stub/srun" <<'EOF'
#!/bin/bash
opts=()
while [ $# -gt 0 ]; do
	case $1 in
	--nodelist=*) node=${1#*=} ;;
	--*) opts+=("$1") ;;
	*) break ;;
	esac
	shift
done
echo "node=$node opts=${opts[*]} cmd=$*" >>"$SRUN_LOG"
CQP_NODE=$node exec "$@"
EOF
# The tool: a server waits to be ended, a client prints a document.
cat >"$tmp/bin/cq_poll_bw" <<'EOF'
#!/bin/bash
if [[ " $* " == *" --persistent "* ]]; then
	[ -z "${SERVER_DIES:-}" ] || { sleep "$SERVER_DIES"; echo "no device" >&2; exit 1; }
	echo $$ >"$SERVER_PID_FILE"
	trap 'echo ended >>"$SERVER_PID_FILE"; exit 0' TERM
	while :; do sleep 0.1; done
fi
[ -z "${CLIENT_HANGS:-}" ] || sleep "$CLIENT_HANGS"
host=${!#}
size=$(printf '%s\n' "$@" | sed -n 's/^--size=//p')
[ -n "$size" ] || size=65536
printf '{"schema": "cqperf/1", "tool": "cq_poll_bw", "role": "client", "params": {"host": "%s", "node": "%s"}, "results": [{"bytes": %s, "bw_avg_gbps": 1.5}]}\n' \
	"$host" "$CQP_NODE" "$size"
EOF
chmod +x "$tmp/stub/"* "$tmp/bin/cq_poll_bw"

export SRUN_LOG=$tmp/srun.log SERVER_PID_FILE=$tmp/server.pid
export PATH=$tmp/stub:$PATH
in_job() { SLURM_JOB_ID=42 SLURM_JOB_NODELIST=${NODES:-'node[A-C]'} "$@"; }

in_job "$sweep" --slurm --tool cq_poll_bw --bin-dir "$tmp/bin" \
	--out "$tmp/out" --grid size=64,4096 --server-wait 0.5 \
	--slurm-args "--overlap" --client-args "-n 10" >"$tmp/run.out" 2>&1
rc=$?
check "a sweep in a 3-node allocation succeeds (exit $rc)" test "$rc" -eq 0 ||
	sed 's/^/# /' "$tmp/run.out"
check "3 nodes: the server is one step on the first node" \
	test "$(grep -c 'node=nodeA .*--persistent' "$SRUN_LOG")" -eq 1
check "3 nodes: every client is a step on the second node" \
	test "$(grep -v -- --persistent "$SRUN_LOG" | grep -c '^node=nodeB ')" -eq 2
check "3 nodes: no step on the third node" eval '! grep -q nodeC "$SRUN_LOG"'
check "--slurm-args reach both steps" \
	test "$(grep -c 'opts=--nodes=1 --ntasks=1 --overlap' "$SRUN_LOG")" -eq 3
check "without --host, clients aim at the first node's name" \
	json_check "$tmp/out/cq_poll_bw-size_4096.json" \
	'd["params"]["host"] == "nodeA" and d["params"]["node"] == "nodeB"'

# The server step fails a second after its start (after --server-wait):
# the first client is stopped, no other runs, and the error names where.
t0=$(date +%s)
SERVER_DIES=1 CLIENT_HANGS=30 in_job "$sweep" --slurm --tool cq_poll_bw \
	--bin-dir "$tmp/bin" --out "$tmp/o6" --grid size=64,4096 \
	--server-wait 0.2 --timeout 60 >"$tmp/run.out" 2>&1
rc=$? secs=$(($(date +%s) - t0))
check "a server step that dies: exit 1 (got $rc)" test "$rc" -eq 1 ||
	sed 's/^/# /' "$tmp/run.out"
check "a server step that dies: the sweep stops within 10 s, not the client's 30 ($secs s)" \
	test "$secs" -lt 10
check "a server step that dies: the error names the node and the server's words" \
	grep -q 'error: server: the server as a step on nodeA exited with status 1: no device' \
	"$tmp/run.out" || sed 's/^/# /' "$tmp/run.out"
check "a server step that dies: one run tried, then none" \
	grep -qx '1 runs, 1 failed' "$tmp/run.out"

: >"$SRUN_LOG"
in_job "$sweep" --slurm --tool cq_poll_bw --bin-dir "$tmp/bin" \
	--out "$tmp/out2" --host 198.18.1.1 --server-wait 0.2 >"$tmp/run.out" 2>&1
check "--host wins over the node name" json_check "$tmp/out2/cq_poll_bw.json" \
	'd["params"]["host"] == "198.18.1.1"'

"$sweep" --slurm --tool cq_poll_bw --bin-dir "$tmp/bin" --out "$tmp/o3" \
	>"$tmp/run.out" 2>&1
rc=$?
check "outside an allocation: exit 2 (got $rc)" test "$rc" -eq 2
check "outside an allocation: says so" grep -q 'not inside a Slurm allocation' "$tmp/run.out"
NODES=solo in_job "$sweep" --slurm --tool cq_poll_bw --bin-dir "$tmp/bin" \
	--out "$tmp/o4" >"$tmp/run.out" 2>&1
rc=$?
check "one node: exit 2 (got $rc)" test "$rc" -eq 2
check "one node: says two are needed" grep -q 'has 1 node(s), two are needed' "$tmp/run.out"
in_job "$sweep" --slurm --start-server --tool cq_poll_bw --bin-dir "$tmp/bin" \
	--out "$tmp/o5" >"$tmp/run.out" 2>&1
rc=$?
check "--slurm with --start-server: exit 2 (got $rc)" test "$rc" -eq 2
"$sweep" --tool cq_poll_bw --host h --ssh-args "-p 2" --bin-dir "$tmp/bin" \
	--out "$tmp/o7" >"$tmp/run.out" 2>&1
rc=$?
check "--ssh-args without --server-ssh: exit 2 (got $rc)" test "$rc" -eq 2
check "--ssh-args without --server-ssh: says so" \
	grep -q -- '--ssh-args needs --server-ssh' "$tmp/run.out"

# --clients: a server step of --clients K on the first node per point, and
# one step of K tasks on the second, each task's document a file of its own.
in_job "$sweep" --tool ud_send_bw --slurm --bin-dir "$tmp/bin" \
	--clients 2,16 --out "$tmp/o8" --dry-run >"$tmp/run.out" 2>&1
rc=$?
check "--clients with --slurm plans (exit $rc)" test "$rc" -eq 0
check "--clients: a server step of --clients 16 on the first node" grep -q \
	"server: srun --nodes=1 --ntasks=1 --nodelist=nodeA .*/ud_send_bw -p 18600 --clients 16 " \
	"$tmp/run.out" || show "$tmp/run.out"
check "--clients: its 16 clients one step of 16 tasks on the second" grep -q \
	"srun --nodes=1 --ntasks=16 --overcommit --nodelist=nodeB --output=$tmp/o8/sweep/ud_send_bw-clients_16.client-%t.json .*/ud_send_bw -p 18600 --output json nodeA" \
	"$tmp/run.out" || show "$tmp/run.out"
"$sweep" --tool cm_event_stress --start-server --bin-dir "$tmp/bin" \
	--clients 2 --out "$tmp/o9" >"$tmp/run.out" 2>&1
rc=$?
check "--clients with a tool that serves one: exit 2 (got $rc)" test "$rc" -eq 2
check "...naming the tools that take groups" grep -q \
	"cm_event_stress serves one client (fan-in: cq_poll_bw, ud_send_bw)" \
	"$tmp/run.out"
echo "$CHECKS_PASSED passed, $CHECKS_FAILED failed"
[ "$CHECKS_FAILED" -eq 0 ]
