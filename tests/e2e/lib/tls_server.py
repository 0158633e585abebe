#!/usr/bin/env python3
"""An HTTPS server on a free loopback port that answers every request 404 {"message": "Not
Found"} and appends "METHOD PATH" to LOG: enough for a suite to tell whether profgate trusted the
server's certificate (the request arrives, profgate reports the 404) or not (nothing arrives,
profgate reports the certificate). Used by tests/e2e/tls.sh and scripts/dist.sh verify.

usage: tls_server.py CERT KEY STATE_DIR LOG   (the port goes to STATE_DIR/port)"""
import http.server
import os
import ssl
import sys

cert, key, state_dir, log = sys.argv[1:5]


class Handler(http.server.BaseHTTPRequestHandler):
    def answer(self):
        with open(log, "a") as f:
            f.write("%s %s\n" % (self.command, self.path))
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        body = b'{"message": "Not Found"}'
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PATCH = answer

    def log_message(self, *args):
        pass


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
srv.daemon_threads = True
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
tmp = os.path.join(state_dir, "port.tmp")
with open(tmp, "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(tmp, os.path.join(state_dir, "port"))
srv.serve_forever()
