#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Hostile clients for tests/integration/hostile.sh, from raw frames:
"hostile.py ATTACK PORT [PARAMS]" runs one attack on the server at
$CQPERF_SERVER_ADDR, prints what it saw and exits 0 when the server
answered as it should.  $TMO is the server's --timeout."""
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