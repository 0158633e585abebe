"""Shared by the fake servers that write their port to STATE_DIR/port (faults.py,
fake_github.py): a threading HTTP server on a free loopback port, the port file written
atomically (tmp, then rename) so a waiting suite never reads half of it."""
import http.server
import os


def serve_port_file(handler, state_dir):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    srv.daemon_threads = True
    tmp = os.path.join(state_dir, "port.tmp")
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, os.path.join(state_dir, "port"))
    srv.serve_forever()
