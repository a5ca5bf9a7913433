#!/usr/bin/env python3
"""A DNS relay that writes down every message it carries.

    capture_relay.py LISTEN_ADDR UPSTREAM_ADDR UPSTREAM_PORT OUT_FILE

Listens on LISTEN_ADDR port 53 (UDP and TCP), forwards each message to the
upstream unchanged and the answer back unchanged, and appends one line per
message to OUT_FILE: "<udp|tcp> <query|response> <hex>".  Used by
make_captures.sh to record what real clients (dig, glibc, Python, Node's
c-ares) send and what a real server (dnsmasq) answers.  Stops on SIGTERM.
"""
import selectors
import signal
import socket
import struct
import sys
import threading

listen, up_addr, up_port, out_path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
lock = threading.Lock()


def note(transport, kind, data):
    with lock, open(out_path, "a") as f:
        f.write(f"{transport} {kind} {data.hex()}\n")


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def serve_tcp_client(conn):
    with conn:
        while True:
            head = recv_exact(conn, 2)
            if head is None:
                return
            query = recv_exact(conn, struct.unpack("!H", head)[0])
            if query is None:
                return
            note("tcp", "query", query)
            with socket.create_connection((up_addr, up_port), timeout=5) as up:
                up.sendall(head + query)
                rhead = recv_exact(up, 2)
                resp = recv_exact(up, struct.unpack("!H", rhead)[0])
            note("tcp", "response", resp)
            conn.sendall(rhead + resp)


udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
udp.bind((listen, 53))
tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
tcp.bind((listen, 53))
tcp.listen(16)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
sel = selectors.DefaultSelector()
sel.register(udp, selectors.EVENT_READ)
sel.register(tcp, selectors.EVENT_READ)
print("ready", flush=True)
while True:
    for key, _ in sel.select():
        if key.fileobj is tcp:
            conn, _ = tcp.accept()
            threading.Thread(target=serve_tcp_client, args=(conn,), daemon=True).start()
            continue
        query, client = udp.recvfrom(65535)
        note("udp", "query", query)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as up:
            up.settimeout(5)
            up.sendto(query, (up_addr, up_port))
            resp, _ = up.recvfrom(65535)
        note("udp", "response", resp)
        udp.sendto(resp, client)
