#!/usr/bin/env python3
"""Answer cottonbox prompts from a program instead of the desktop app.

A minimal server for the GUI protocol, version 1 (docs/protocol.md), with
the standard library only.  It listens where cottonbox-gui would
($XDG_RUNTIME_DIR/cottonbox/gui.sock), so `cottonbox run --ask gui` (or the
default `--ask auto`) finds it, and it answers every ask by a simple policy:

  * allow once what matches an --allow glob (fnmatch on the event's path),
  * deny the whole process tree what matches a --deny-tree glob,
  * deny once everything else.

It prints one line per session, ask and answer.  With --once it exits when
the first session ends, which makes it handy in scripts and CI:

  python3 docs/examples/orchestrator.py --once --allow '*/build/*' &
  cottonbox run --ask gui -- make clean

Replace decide() with a call to your chat bot, ticket system or LLM judge.
Never run it where the supervised command could reach it: cottonbox hides
$XDG_RUNTIME_DIR/cottonbox from the sessions it supervises, so keep the
socket there.
"""

import argparse
import fnmatch
import json
import os
import selectors
import socket
import stat
import struct
import sys

PROTOCOL_VERSION = 1
MAX_LINE = 4 << 20


def socket_path():
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if not runtime.startswith("/"):
        sys.exit("orchestrator: XDG_RUNTIME_DIR is not set; cottonbox would not look for a GUI")
    return os.path.join(runtime, "cottonbox", "gui.sock")


def listen(path):
    directory = os.path.dirname(path)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    st = os.lstat(directory)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
        sys.exit(f"orchestrator: {directory} is not a directory of this user")
    os.chmod(directory, 0o700)
    if os.path.exists(path):
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(path)
            sys.exit(f"orchestrator: another GUI already listens on {path}")
        except OSError:
            os.unlink(path)  # left over by a GUI that died
        finally:
            probe.close()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    os.chmod(path, 0o600)
    server.listen(16)
    server.setblocking(False)
    return server


def peer_uid(conn):
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid


def send(conn, message):
    conn.sendall(json.dumps(message).encode() + b"\n")


def describe(ask):
    chain = " <- ".join(" ".join(link.get("argv") or [link.get("comm", "?")]) for link in ask.get("chain", []))
    rule = (ask.get("rule") or {}).get("id") or "(default)"
    return f'{ask["summary"]}: {ask["event"]["path"]} [rule {rule}] by {chain}'


def decide(ask, args):
    """Returns (decision, scope) for one ask.  This is the part to replace."""
    path = ask["event"]["path"]
    if any(fnmatch.fnmatch(path, g) for g in args.deny_tree):
        return "deny", "tree"
    if any(fnmatch.fnmatch(path, g) for g in args.allow):
        return "allow", "once"
    return "deny", "once"


class Connection:
    def __init__(self, sock):
        self.sock = sock
        self.buf = b""
        self.session = None

    def lines(self):
        data = self.sock.recv(65536)
        if not data:
            raise EOFError
        self.buf += data
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            yield line
        if len(self.buf) > MAX_LINE:  # a line this long is not ours to keep
            self.buf = b""


def handle(conn, line, args):
    """Returns True when the session ended."""
    try:
        msg = json.loads(line)
        kind = msg["type"]
    except (ValueError, KeyError, TypeError):
        print("orchestrator: skipped a malformed line", file=sys.stderr)
        return False
    if kind == "hello":
        conn.session = msg["session"]
        send(conn.sock, {"type": "welcome", "version": PROTOCOL_VERSION,
                         "server": "orchestrator.py", "name": args.name})
        if msg.get("version") != PROTOCOL_VERSION:
            print(f'orchestrator: the supervisor speaks version {msg.get("version")}', file=sys.stderr)
        print(f'session #{conn.session["id"]}: {" ".join(conn.session["argv"])} in {conn.session["cwd"]}', flush=True)
    elif kind == "ask":
        decision, scope = decide(msg, args)
        print(f'  ask {msg["ask_id"]}: {describe(msg)} -> {decision} {scope}', flush=True)
        send(conn.sock, {"type": "answer", "ask_id": msg["ask_id"], "decision": decision, "scope": scope})
    elif kind == "ask_update":
        print(f'  ask {msg["ask_id"]} now covers {msg["count"]} requests: {msg["summary"]}', flush=True)
    elif kind == "degraded":
        print(f'  degraded: {msg["reason"]}', flush=True)
    elif kind == "end":
        print(f'session #{msg["session"]} ended: exit {msg["exit_status"]}', flush=True)
        return True
    # event, process, exec, exit, approval, dropped, ask_cancel, and types
    # from later versions: nothing to do here.
    return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--allow", action="append", default=[], metavar="GLOB", help="allow once asks on matching paths")
    ap.add_argument("--deny-tree", action="append", default=[], metavar="GLOB",
                    help="deny the asking process tree for matching paths")
    ap.add_argument("--name", default="orchestrator", help="recorded as answered_by in the audit database")
    ap.add_argument("--socket", default=None, help="listen here instead of the default")
    ap.add_argument("--once", action="store_true", help="exit when the first session ends")
    args = ap.parse_args()

    path = args.socket or socket_path()
    server = listen(path)
    print(f"orchestrator: listening on {path}", flush=True)
    sel = selectors.DefaultSelector()
    sel.register(server, selectors.EVENT_READ, None)
    try:
        while True:
            for key, _ in sel.select():
                if key.data is None:
                    sock, _ = server.accept()
                    if peer_uid(sock) != os.getuid():
                        sock.close()  # another user: never answer for them
                        continue
                    sel.register(sock, selectors.EVENT_READ, Connection(sock))
                    continue
                conn = key.data
                try:
                    ended = any([handle(conn, line, args) for line in conn.lines()])
                except (EOFError, ConnectionError):
                    ended = True
                if ended:
                    sel.unregister(conn.sock)
                    conn.sock.close()
                    if args.once:
                        return
    finally:
        os.unlink(path)


if __name__ == "__main__":
    main()
