#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Hostile and broken clients against a --persistent server of every binary:
# random bytes, a wrong magic, huge announced lengths, a frame cut short, a
# valid session in one-byte writes, a client that never speaks and one that
# trickles, and parameter sets outside the command line's bounds or over
# --max-mem.  After each the server has logged one line naming what
# happened, and a real client run succeeds.
. "$(dirname "$0")/lib.sh"
require_device
prefer_sanitized

TMO=5 # the servers' --timeout: how long a silent client may hold one

# The attacks, from raw frames: "hostile.py ATTACK PORT [PARAMS]" prints
# what it saw and exits 0 when the server answered as it should.
PY=$WORK/hostile.py
cat >"$PY" <<'EOF'
import codecs, os, random, socket, struct, sys, time

MAGIC, HELLO, PARAMS, ACCEPT, REJECT, ERROR = 0x43515046, 1, 2, 3, 4, 8
attack, port = sys.argv[1], int(sys.argv[2])
host = os.environ.get("CQPERF_SERVER_ADDR", "198.18.0.1")
tmo = float(os.environ["TMO"])

def hdr(t, n, magic=MAGIC, ver=1):
    return struct.pack(">IHHI", magic, ver, t, n)

def frame(t, payload):
    return hdr(t, len(payload)) + payload

def recv_n(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise EOFError("closed after %d of %d bytes" % (len(b), n))
        b += c
    return b

def recv_frame(s):
    magic, ver, t, n = struct.unpack(">IHHI", recv_n(s, 12))
    assert magic == MAGIC and ver == 1, "bad frame from the server"
    return t, recv_n(s, n)

def until_closed(s, limit):
    """Seconds until the server closes on us (frames it sends are read
    and dropped); None when it is still open after limit seconds."""
    t0 = time.monotonic()
    s.settimeout(0.2)
    while time.monotonic() - t0 < limit:
        try:
            if not s.recv(4096):
                return time.monotonic() - t0
        except socket.timeout:
            pass
        except ConnectionResetError:
            return time.monotonic() - t0
    return None

def dribble(s, data, gap):
    for i in range(len(data)):
        s.send(data[i:i + 1])
        time.sleep(gap)

def secs(el):
    return "never (still open)" if el is None else "after %.2f s" % el

def done(ok, what):
    print(("" if ok else "FAILED: ") + what)
    sys.exit(0 if ok else 1)

s = socket.create_connection((host, port), timeout=10)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
t0 = time.monotonic()
rnd = random.Random(port)

if attack in ("random", "magic", "huge", "big", "trunc"):
    data = {
        # Anything but "C" first: not a magic by chance.
        "random": bytes([0x80]) + bytes(rnd.randrange(256) for _ in range(511)),
        "magic": hdr(HELLO, 0, magic=0x58515046),  # "XQPF"
        "huge": hdr(HELLO, 0xFFFFFFF0),
        "big": hdr(HELLO, 1 << 20),  # legal length, over a hello's buffer
        "trunc": hdr(HELLO, 64) + b"proto=1\ntool=",
    }[attack]
    s.sendall(data)
    if attack == "trunc":
        s.shutdown(socket.SHUT_WR)
    el = until_closed(s, tmo + 10)
    done(el is not None, "server closed %s" % secs(el))

if attack in ("silent", "trickle"):
    if attack == "trickle":
        # A HELLO that would take a minute: one byte every half second.
        s.settimeout(0.5)
        data = hdr(HELLO, 100) + b"x" * 100
        for i in range(len(data)):
            try:
                s.send(data[i:i + 1])
                if s.recv(4096) == b"":
                    break
            except socket.timeout:
                pass
            except (BrokenPipeError, ConnectionResetError):
                break
        el = time.monotonic() - t0
    else:
        el = until_closed(s, tmo + 20)
    ok = el is not None and tmo - 0.5 <= el <= tmo + 10
    done(ok, "server closed %s (its --timeout: %g s)" % (secs(el), tmo))

# Sessions: echo the server's HELLO (same tool and version), then PARAMS.
params = codecs.decode(sys.argv[3], "unicode_escape").encode("latin-1")
t, hello = recv_frame(s)
assert t == HELLO
if attack == "split":
    # Every byte of both frames in its own segment.
    dribble(s, frame(HELLO, hello) + frame(PARAMS, params), 0.003)
    t, body = recv_frame(s)
    if t != ACCEPT:
        done(False, "split session: answer type %d %r" % (t, body))
    # Accepted like any client; end it the way a failing client would.
    s.sendall(frame(ERROR, b"reason=hostile.sh: split session done\n"))
    done(until_closed(s, 30) is not None, "split session accepted")
s.sendall(frame(HELLO, hello) + frame(PARAMS, params))
t, body = recv_frame(s)
reason = body.decode("latin-1")
done(t == REJECT and all(0x20 <= ord(c) < 0x7f for c in reason.strip()),
     "answer type %d: %s" % (t, reason.strip()))
EOF

# A good run of each tool; sizes and counts kept small for TCG guests.
good_args() {
	case $1 in
	cq_poll_bw | ud_send_bw) echo "-d $DEV -s 1024 -n 100" ;;
	cq_event_lat | ud_send_lat) echo "-d $DEV -s 64 -n 100" ;;
	cm_event_stress) echo "-c 10" ;;
	esac
}
# Parameters that need more buffer memory than the servers' --max-mem 1M.
big_params() {
	case $1 in
	cq_poll_bw | cq_event_lat) printf '%s' 'size=2097152\n' ;;
	ud_send_bw | ud_send_lat) printf '%s' 'size=4096\nrx-depth=4096\n' ;;
	esac
}

good_client() { # good_client TOOL: a real run against $port succeeds
	local tool=$1 rc
	# shellcheck disable=SC2046  # the arguments are words
	timeout 120 "$CQPERF_BIN/$tool" -p "$port" --timeout 30 \
		$(good_args "$tool") "$ADDR" >"$WORK/good.out" 2>"$WORK/good.err"
	rc=$?
	check "$tool: a real client runs after it (got $rc)" test "$rc" -eq 0 ||
		show "$WORK/good.err" "$SERR"
}

# new_log_line NEEDLE: the server logged exactly one line since $mark,
# and it contains NEEDLE.  Waits a little: the line comes after the drop.
new_log_line() {
	local needle=$1 n
	for _ in $(seq 1 50); do
		n=$(($(wc -l <"$SERR") - mark))
		[ "$n" -ge 1 ] && break
		sleep 0.1
	done
	tail -n +$((mark + 1)) "$SERR" >"$WORK/new.err"
	n=$(wc -l <"$WORK/new.err")
	[ "$n" -eq 1 ] && grep -qF -- "$needle" "$WORK/new.err"
}

no_cntrl() { ! LC_ALL=C grep -q '[[:cntrl:]]' "$1"; }

# attack TOOL ATTACK NEEDLE [PARAMS]: run it, check the client's view,
# the server's log line, and a real client afterwards.
attack() {
	local tool=$1 what=$2 needle=$3 params=${4:-}
	mark=$(wc -l <"$SERR")
	TMO=$TMO CQPERF_SERVER_ADDR=$ADDR timeout 60 python3 "$PY" "$what" \
		"$port" "$params" >"$WORK/py.out" 2>&1
	rc=$?
	check "$tool, $what${params:+ $params}: $(head -c 150 "$WORK/py.out")" \
		test "$rc" -eq 0 || show "$WORK/py.out"
	check "$tool, $what: the server logged one line with '$needle'" \
		new_log_line "$needle" || show "$SERR"
	good_client "$tool"
}

for tool in cq_poll_bw cq_event_lat ud_send_bw ud_send_lat cm_event_stress; do
	start=$(date +%s)
	port=$(next_port)
	SERR=$WORK/$tool.server.err
	start_server "$tool" "$port" --persistent --timeout "$TMO" \
		--max-mem 1M || not_ok "$tool: server listens"
	good_client "$tool"

	attack "$tool" random "bad magic"
	attack "$tool" magic "bad magic 0x58515046"
	attack "$tool" huge "payload of 4294967280 bytes, over the limit"
	attack "$tool" big "larger than our 1024-byte buffer"
	attack "$tool" trunc "closed the connection (mid-frame after 25 of 76"

	# Nothing at all: dropped after --timeout while the next client
	# waits in the backlog, then served.
	mark=$(wc -l <"$SERR")
	TMO=$TMO CQPERF_SERVER_ADDR=$ADDR timeout 60 python3 "$PY" silent \
		"$port" >"$WORK/silent.out" 2>&1 &
	silent=$!
	sleep 1
	good_client "$tool"
	wait "$silent"
	rc=$?
	check "$tool, silent: $(cat "$WORK/silent.out")" test "$rc" -eq 0
	check "$tool, silent: the server logged one line about it" \
		new_log_line "within $TMO s (waiting for its HELLO)" || show "$SERR"
	# A byte now and then does not stretch the deadline.
	attack "$tool" trickle "within $TMO s (mid-frame after"

	# Out of bounds and unknown: refused with the reason.
	if [ "$tool" = cm_event_stress ]; then
		key=connections
		split='connections=10\n'
		attack "$tool" params "--connections" 'connections=0\n'
		attack "$tool" params "--concurrency" 'concurrency=99999999\n'
		# Its servers register one fixed small buffer: no --max-mem
		# case to make.
	else
		key=tx-depth
		split='size=1024\niters=100\n'
		attack "$tool" params "--size" 'size=0\n'
		attack "$tool" params "--tx-depth" 'tx-depth=99999999\n'
		attack "$tool" params "--max-mem of 1048576" "$(big_params "$tool")"
	fi
	attack "$tool" params "'bogus'" 'bogus=1\n'
	# Escape sequences in a value: refused, and not echoed raw.
	attack "$tool" params "'?[2J?]0;x?'" "$key=\\x1b[2J\\x1b]0;x\\x07\\n"
	check "$tool: no control bytes in the server's log" \
		no_cntrl "$SERR" || show "$SERR"
	# A valid session in one-byte writes is just a session.
	attack "$tool" split "hostile.sh: split session done" "$split"

	check "$tool: the server is still running" kill -0 "$SERVER_PID"
	stop_server
	echo "# $tool: $(($(date +%s) - start)) s"
done

finish
