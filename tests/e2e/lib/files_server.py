#!/usr/bin/env python3
"""A static file server on a free loopback port, for the setup action's suite (tests/e2e/setup.sh):
GET /PATH answers the file ROOT/PATH (404 when absent) and appends "GET /PATH STATUS" to LOG, so a
suite can tell a download from a cache hit.

usage: files_server.py ROOT STATE_DIR LOG   (the port goes to STATE_DIR/port)"""
import http.server
import os
import sys

from serving import serve_port_file

root, state_dir, log = sys.argv[1:4]


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        path = os.path.normpath(os.path.join(root, self.path.lstrip("/")))
        status = 200 if path.startswith(root) and os.path.isfile(path) else 404
        with open(log, "a") as f:
            f.write("GET %s %d\n" % (self.path, status))
        if status != 200:
            self.send_error(404)
            return
        with open(path, "rb") as f:
            body = f.read()
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


root = os.path.abspath(root)
serve_port_file(Handler, state_dir)
