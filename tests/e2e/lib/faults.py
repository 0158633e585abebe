#!/usr/bin/env python3
"""Network faults for the end-to-end tests: what a fake server does instead of answering.

Imported by fake_github.py, fake_wandb.py and git_http.py (a rule matched by method and path
regex replaces the answer), and run on its own as a server where every request meets the fault
its first path segment names (GITHUB_API_URL=http://127.0.0.1:PORT/hang, WANDB_BASE_URL=.../s503,
a history remote .../reset/h.git).

Modes (a rule: {"mode", "method" (default any), "path" (regex, default any), "times" (default
unlimited), "status", "interval"}):
  hang     read the request, then say nothing until the client gives up (at most 120 s)
  close    read the request and close the connection without a word
  reset    200 with Content-Length 100000, 64 bytes of it, then a TCP reset (RST)
  drip     200 with Content-Length 100000, then one byte every `interval` s (default 1.5)
           (for git's smart HTTP paths both answer with git's content type and the start of a
           long pkt-line, so that the client reads on instead of refusing the headers)
  status   the HTTP status `status` (default 503) with a JSON body, every time (a 5xx storm)
  html     200 text/html: a proxy's or captive portal's page
  trunc    200 application/json, cut in the middle of an object
  types    200 application/json holding every expected field with the wrong type

usage: faults.py serve STATE_DIR     writes STATE_DIR/port once listening; logs every request
                                     to STATE_DIR/requests.jsonl (method, path, auth sent)
       faults.py port                prints a loopback port nothing listens on
"""
import http.server
import json
import os
import re
import socket
import struct
import sys
import threading
import time

from serving import serve_port_file

MAX_HOLD = 120.0
_lock = threading.Lock()
_rules = []

HTML = (b"<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n"
        b"<body><h1>Bad Gateway</h1><p>The proxy could not reach the server.</p></body></html>\n")
TRUNC = b'{"data": {"project": {"run": {"id": "UnVuOnYxOmJhc2UxOmxsbTphY21l", "name": "ba'
TYPES = json.dumps({
    "data": {"project": {"run": 7, "artifact": 7}, "artifact": 7, "upsertBucket": 7,
             "createArtifact": 7, "createRunFiles": 7},
    "login": 7, "id": "not-a-number", "html_url": 7, "body": 7, "message": 7,
    "head": 7, "user": 7}).encode()


def control(cfg):
    """Merge fault rules: {"reset": true} drops the old ones, "faults": [rule, ...] adds."""
    with _lock:
        if cfg.get("reset"):
            del _rules[:]
        _rules.extend(cfg.get("faults", []))


def take(method, path):
    """The first rule matching the request, its count taken; None when none does."""
    with _lock:
        for r in _rules:
            if r.get("times", -1) == 0:
                continue
            if r.get("method", method) != method or not re.search(r.get("path", ""), path):
                continue
            if r.get("times", -1) > 0:
                r["times"] -= 1
            return dict(r)
    return None


def _send_head(h, status, ctype, length):
    h.send_response(status)
    h.send_header("Content-Type", ctype)
    h.send_header("Content-Length", str(length))
    h.end_headers()
    h.wfile.flush()


def _hold(h):
    """Wait until the client closes the connection (or MAX_HOLD passes)."""
    conn = h.connection
    conn.settimeout(0.5)
    end = time.time() + MAX_HOLD
    while time.time() < end:
        try:
            if not conn.recv(65536):
                return
        except socket.timeout:
            continue
        except OSError:
            return


def _reset(h):
    conn = h.connection
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    os.close(conn.detach())  # linger 0: the close sends RST, not FIN


def _start(h):
    """The content type and first bytes of a 200 that will never be whole."""
    m = re.search(r"service=(git-[a-z-]+)", h.path)
    if m:
        return "application/x-%s-advertisement" % m.group(1), b"fff0# service="
    m = re.search(r"/(git-upload-pack|git-receive-pack)$", h.path.split("?")[0])
    if m:
        return "application/x-%s-result" % m.group(1), b"fff0\x01PACK"
    return "application/json", b'{"data": {"filler": "'


def inject(h, rule):
    """Do rule's fault on handler h (the request and its body already read)."""
    mode = rule["mode"]
    h.close_connection = True
    try:
        if mode == "hang":
            _hold(h)
        elif mode == "close":
            pass
        elif mode == "reset":
            ctype, start = _start(h)
            _send_head(h, 200, ctype, 100000)
            h.wfile.write(start + b"x" * (64 - len(start)))
            h.wfile.flush()
            _reset(h)
        elif mode == "drip":
            ctype, start = _start(h)
            _send_head(h, 200, ctype, 100000)
            h.wfile.write(start)
            end = time.time() + MAX_HOLD
            while time.time() < end:
                h.wfile.write(b"x")
                h.wfile.flush()
                time.sleep(float(rule.get("interval", 1.5)))
        elif mode == "status":
            body = json.dumps({"message": "Service Unavailable", "errors": ["Server down"]}).encode()
            _send_head(h, int(rule.get("status", 503)), "application/json", len(body))
            h.wfile.write(body)
        elif mode in ("html", "trunc", "types"):
            body = {"html": HTML, "trunc": TRUNC, "types": TYPES}[mode]
            _send_head(h, 200, "text/html" if mode == "html" else "application/json", len(body))
            h.wfile.write(body)
        else:
            raise ValueError("unknown fault mode " + mode)
    except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
        pass


class _Handler(http.server.BaseHTTPRequestHandler):
    """Every request: its fault from the first path segment ("s503": status 503)."""
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def handle_any(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                self.rfile.read(size + 2)
        else:
            n = int(self.headers.get("Content-Length") or 0)
            if n:
                self.rfile.read(n)
        with open(os.path.join(STATE_DIR, "requests.jsonl"), "a") as f:
            f.write(json.dumps({"method": self.command, "path": self.path,
                                "auth": bool(self.headers.get("Authorization"))}) + "\n")
        seg = self.path.lstrip("/").split("/")[0].split("?")[0]
        m = re.match(r"s(\d{3})$", seg)
        inject(self, {"mode": "status", "status": int(m.group(1))} if m else {"mode": seg})

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any


def main():
    global STATE_DIR
    if len(sys.argv) == 2 and sys.argv[1] == "port":
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        print(s.getsockname()[1])
        s.close()
    elif len(sys.argv) == 3 and sys.argv[1] == "serve":
        STATE_DIR = sys.argv[2]
        serve_port_file(_Handler, STATE_DIR)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
