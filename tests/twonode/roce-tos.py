#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Counts the RoCE v2 packets (IPv4, UDP port 4791) seen on an interface
until SIGTERM (or SECONDS), by IP TOS byte: one "TOS COUNT" line each.
"ready" goes to stderr once it listens.

    roce-tos.py SECONDS IFACE
"""
import collections
import signal
import socket
import sys
import time

stop = False


def on_term(_sig, _frame):
    global stop
    stop = True


def main():
    seconds, iface = float(sys.argv[1]), sys.argv[2]
    # ETH_P_ALL: a protocol-specific packet socket sees only what comes
    # in, not what we send.
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    s.bind((iface, 0))
    s.settimeout(0.2)
    signal.signal(signal.SIGTERM, on_term)
    print("ready", file=sys.stderr, flush=True)
    seen = collections.Counter()
    end = time.time() + seconds
    while not stop and time.time() < end:
        try:
            pkt = s.recv(256)
        except socket.timeout:
            continue
        if pkt[12:14] != b"\x08\x00":
            continue
        ip = pkt[14:]
        ihl = (ip[0] & 15) * 4
        if ip[0] >> 4 == 4 and ip[9] == 17 and \
                int.from_bytes(ip[ihl + 2:ihl + 4], "big") == 4791:
            seen[ip[1]] += 1
    for tos, n in sorted(seen.items()):
        print(tos, n)


if __name__ == "__main__":
    main()
