#!/usr/bin/env python3
"""A smart-HTTP git remote for the history tests: `git http-backend` (CGI) behind a threaded
http.server on loopback, with GitHub's token auth (Basic x-access-token:TOKEN, 401 with
WWW-Authenticate until it is right). libgit2 sends receive-pack bodies chunked, so chunked request
bodies are decoded. Every request is logged (method, path, whether auth was sent) for the tests.

POST /_fault takes network faults for later requests ({"faults": [rule, ...]}, {"reset": true};
rules and modes: faults.py), e.g. a receive-pack that hangs after the fetch went well. One mode is
this server's own: "idle-close" answers the request as usual (no "Connection: close"), then closes
the connection, as a server does with a kept-alive connection whose client stays idle past its
keep-alive timeout (a push that builds its pack between the ref advertisement and its POST).

usage: git_http.py ROOT PORT_FILE LOG_FILE   (the token in PG_TEST_TOKEN; several: comma-separated)
Writes the port it bound to PORT_FILE once it is listening; runs until killed. PG_TEST_PORT binds
that port (a server started again where a killed one was); else any free one. PG_TEST_KEEPALIVE_S
closes a kept-alive connection idle that long, as Apache's KeepAliveTimeout does (default: never).
PG_TEST_STREAM=1 sends git's answer as it comes (chunked), as Apache sends a CGI's, instead of
whole once git ended (which the fault tests rely on: a server killed by a hook answers nothing).
"""
import base64
import http.server
import json
import os
import socket
import subprocess
import sys
import threading

import faults

ROOT, PORT_FILE, LOG_FILE = sys.argv[1:4]
WANT = {"Basic " + base64.b64encode(("x-access-token:" + t).encode()).decode()
        for t in os.environ["PG_TEST_TOKEN"].split(",")}
log_lock = threading.Lock()


def log(line):
    with log_lock, open(LOG_FILE, "a") as f:
        f.write(line + "\n")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = float(os.environ["PG_TEST_KEEPALIVE_S"]) if os.environ.get("PG_TEST_KEEPALIVE_S") else None

    def log_message(self, fmt, *args):
        pass

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def reply(self, status, headers, body):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.end_idle_close()

    def end_idle_close(self):
        """An idle-close answer's connection ends right after its last byte, not after the
        server's own bookkeeping: a client that sends its next request at once (a fetch) must
        find it closed, as it would after an idle spell, on a loaded machine too."""
        if self.idle_close:
            self.connection.shutdown(socket.SHUT_WR)

    def handle_git(self):
        self.idle_close = False
        body = self.read_body()
        auth = self.headers.get("Authorization")
        log("%s %s auth=%s chunked=%s" % (self.command, self.path, "yes" if auth else "no",
                                          "yes" if self.headers.get("Transfer-Encoding") else "no"))
        if self.path == "/_fault":
            faults.control(json.loads(body or b"{}"))
            self.reply(200, [], b"{}")
            return
        rule = faults.take(self.command, self.path)
        self.idle_close = bool(rule and rule.get("mode") == "idle-close")
        if self.idle_close:
            self.close_connection = True  # after this answer, silently
        elif rule:
            faults.inject(self, rule)
            return
        if auth not in WANT:
            self.reply(401, [("WWW-Authenticate", 'Basic realm="GitHub"')], b"")
            return
        path, _, query = self.path.partition("?")
        env = {
            "PATH": os.environ["PATH"], "HOME": ROOT, "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_PROJECT_ROOT": ROOT, "GIT_HTTP_EXPORT_ALL": "1", "PATH_INFO": path,
            "QUERY_STRING": query, "REQUEST_METHOD": self.command,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(body)),
            "REMOTE_USER": "x-access-token", "REMOTE_ADDR": "127.0.0.1",
        }
        for h, e in (("Content-Encoding", "HTTP_CONTENT_ENCODING"), ("Git-Protocol", "GIT_PROTOCOL")):
            if self.headers.get(h):
                env[e] = self.headers[h]
        if os.environ.get("PG_TEST_STREAM"):
            self.stream_git(body, env)
            return
        out = subprocess.run(["git", "http-backend"], input=body, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
        sep = out.find(b"\r\n\r\n")
        head, rest = (out[:sep], out[sep + 4:]) if sep >= 0 else out.split(b"\n\n", 1)
        status, headers = 200, []
        for line in head.decode("latin-1").splitlines():
            k, _, v = line.partition(":")
            if k.lower() == "status":
                status = int(v.split()[0])
            elif k:
                headers.append((k, v.strip()))
        self.reply(status, headers, rest)

    def stream_git(self, body, env):
        """git http-backend's answer sent as it comes (chunked), as Apache sends a CGI's: a
        pack the server takes long to build still shows progress, not a silent connection."""
        p = subprocess.Popen(["git", "http-backend"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, env=env)
        feed = threading.Thread(target=lambda: (p.stdin.write(body), p.stdin.close()), daemon=True)
        feed.start()
        status, headers = 200, []
        for line in iter(p.stdout.readline, b""):
            line = line.decode("latin-1").rstrip("\r\n")
            if not line:
                break
            k, _, v = line.partition(":")
            if k.lower() == "status":
                status = int(v.split()[0])
            elif k:
                headers.append((k, v.strip()))
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        while True:
            data = p.stdout.read1(65536)
            if not data:
                break
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.write(b"0\r\n\r\n")
        self.end_idle_close()
        p.wait()
        feed.join()

    do_GET = handle_git
    do_POST = handle_git


server = http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ.get("PG_TEST_PORT", "0"))),
                                         Handler)
with open(PORT_FILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(PORT_FILE + ".tmp", PORT_FILE)
server.serve_forever()
