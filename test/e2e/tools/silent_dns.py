#!/usr/bin/env python3
"""A DNS server that never answers: binds UDP and TCP port 53 on the given
loopback address and swallows every query, so that getaddrinfo through it
blocks for resolv.conf's timeout. Prints "silent dns on ADDRESS" once bound.
Usage: silent_dns.py ADDRESS"""
import socket
import sys
import threading

address = sys.argv[1]
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
udp.bind((address, 53))
tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
tcp.bind((address, 53))
tcp.listen(16)
print(f"silent dns on {address}", flush=True)

held = []  # TCP connections are kept open, unanswered


def accept():
    while True:
        conn, _ = tcp.accept()
        held.append(conn)


threading.Thread(target=accept, daemon=True).start()
while True:
    udp.recvfrom(4096)
