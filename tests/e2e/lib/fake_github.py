#!/usr/bin/env python3
"""A fake GitHub REST API on loopback for the comment and action tests (integrations.md §6.2).

It requires User-Agent (403 without), Accept: application/vnd.github+json and the API version
header (400 without), and Authorization "Bearer|token <t>" for a known token (401 otherwise).
Tokens: {"login", "user_api" (GET /user answers; an Actions token gets 403), "write" (else POST
and PATCH get 403 "Resource not accessible by integration"), "checks" (false: POST check-runs gets
403, as for a personal token)}. Comments are listed per_page
(default 30, max 100) and page, with a Link header (next, last, prev, first) of absolute URLs on
/repositories/<id>/... as GitHub writes them; POST 201, PATCH 200, bodies kept verbatim; a body
over max_body_chars characters gets 422. check-runs and statuses 201 (GET commits/SHA/check-runs lists them, check_name filters); GET
pulls/N from "pulls".
A path may start with /api/v3 (GitHub Enterprise). Faults are queued rules that answer instead
(status, headers, body; reset_in sets x-ratelimit-reset to now + N), delay the answer, or with
"mode" do a network fault of faults.py (hang, close, reset, drip, status, html, trunc, types).
A rule with "commit": true lets the request take effect first and then answers with the rule's
status or mode instead (GitHub creating a comment and its proxy answering 502, or the connection
dropping before the answer). A 429 or 403 rule without headers is a secondary rate limit: no
retry-after, no x-ratelimit-remaining, as GitHub sends it.
Every request is logged to STATE/requests.jsonl (method, path, headers, body size, status).

usage: fake_github.py serve STATE_DIR        writes STATE_DIR/port once listening
       fake_github.py ctl PORT JSON          merge configuration; {"reset": true} first
       fake_github.py dump PORT              the state as JSON: comments, check_runs, statuses
"""
import http.server
import json
import os
import re
import sys
import threading
import time
import urllib.parse
import urllib.request

import faults
from serving import serve_port_file

REPO_ID = 4242
lock = threading.Lock()
state = {}


def fresh():
    state.clear()
    state.update(tokens={}, comments={}, next_id=1000, faults=[], max_body_chars=65536,
                 check_runs=[], statuses=[], pulls={}, max_per_page=100)


fresh()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    # ---- plumbing ----
    def body_bytes(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def send(self, status, obj, headers=()):
        rule, self.after_commit = getattr(self, "after_commit", None), None
        if rule and status < 300:
            # the request took effect; the client hears the fault instead
            if rule.get("mode"):
                self.log_request_line("fault:" + rule["mode"])
                return faults.inject(self, rule)
            status, obj = rule["status"], rule.get("body", {"message": "fault"})
            headers = list(rule.get("headers", {}).items())
        body = b"" if obj is None else json.dumps(obj).encode()
        # logged before the answer goes out: once the client has it, a test may read the log
        self.log_request_line(status)
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_request_line(self, status):
        self.logged["status"] = status
        with open(os.path.join(STATE_DIR, "requests.jsonl"), "a") as f:
            f.write(json.dumps(self.logged) + "\n")

    def base(self):
        return "http://%s:%d" % self.server.server_address[:2]

    def handle_any(self):
        raw = self.body_bytes()
        self.logged = {"method": self.command, "path": self.path,
                       "headers": {k.lower(): v for k, v in self.headers.items()},
                       "body_bytes": len(raw)}
        path = urllib.parse.urlsplit(self.path).path
        if path == "/_ctl":
            return self.control(raw)
        if path == "/_dump":
            with lock:
                return self.send(200, {"comments": state["comments"],
                                       "check_runs": state["check_runs"],
                                       "statuses": state["statuses"]})
        if not self.headers.get("User-Agent"):
            return self.send(403, {"message": "Request forbidden by administrative rules. "
                                              "Please make sure your request has a User-Agent "
                                              "header"})
        if self.headers.get("Accept") != "application/vnd.github+json" or \
                self.headers.get("X-GitHub-Api-Version") != "2022-11-28":
            return self.send(400, {"message": "Accept or X-GitHub-Api-Version missing"})
        if self.fault(path):
            return
        auth = self.headers.get("Authorization", "")
        m = re.match(r"(?:Bearer|token) (\S+)$", auth)
        tok = state["tokens"].get(m.group(1)) if m else None
        if not tok:
            return self.send(401, {"message": "Bad credentials",
                                   "documentation_url": "https://docs.github.com/rest"})
        if path.startswith("/api/v3/"):
            path = path[7:]
        self.route(path, tok, raw)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = handle_any

    def control(self, raw):
        cfg = json.loads(raw or b"{}")
        with lock:
            if cfg.pop("reset", False):
                fresh()
            for c in cfg.pop("seed", []):
                self.add_comment(str(c["issue"]), c["login"], c["body"])
            many = cfg.pop("seed_many", None)
            if many:
                for i in range(many["n"]):
                    self.add_comment(str(many["issue"]), many["login"], "chatter %d" % i)
            if cfg.pop("reset_faults", False):
                state["faults"] = []
            for k in ("tokens", "pulls"):
                state[k].update(cfg.pop(k, {}))
            state["faults"].extend(cfg.pop("faults", []))
            state.update(cfg)
        self.send(200, {"ok": True})

    def fault(self, path):
        with lock:
            rule = None
            for f in state["faults"]:
                if f.get("times", 1) > 0 and f.get("method", self.command) == self.command and \
                        re.search(f.get("path", ""), path):
                    f["times"] = f.get("times", 1) - 1
                    rule = dict(f)
                    break
        if not rule:
            return False
        if rule.get("commit"):
            self.after_commit = rule
            return False
        if rule.get("mode"):
            self.log_request_line("fault:" + rule["mode"])
            faults.inject(self, rule)
            return True
        if rule.get("delay"):
            time.sleep(rule["delay"])
            if "status" not in rule:
                return False
        headers = list(rule.get("headers", {}).items())
        if "reset_in" in rule:
            headers.append(("x-ratelimit-reset", str(int(time.time() + rule["reset_in"]))))
        self.send(rule["status"], rule.get("body", {"message": "fault"}), headers)
        return True

    # ---- the API ----
    def add_comment(self, issue, login, body):
        cid = state["next_id"]
        state["next_id"] += 1
        c = {"id": cid, "body": body, "user": {"login": login,
                                               "type": "Bot" if login.endswith("[bot]") else "User"},
             "html_url": "https://github.example/o/r/pull/%s#issuecomment-%d" % (issue, cid),
             "issue": issue, "edits": 0}
        state["comments"].setdefault(issue, []).append(c)
        return c

    def find_comment(self, cid):
        for cs in state["comments"].values():
            for c in cs:
                if c["id"] == cid:
                    return c
        return None

    def route(self, path, tok, raw):
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        m = re.match(r"/(?:repos/[^/]+/[^/]+|repositories/\d+)(/.*)$", path)
        sub = m.group(1) if m else None
        if path == "/user":
            if tok.get("user_api"):
                return self.send(200, {"login": tok["login"], "id": 1, "type": "User"})
            return self.send(403, {"message": "Resource not accessible by integration",
                                   "documentation_url": "https://docs.github.com/rest"})
        if sub is None:
            return self.send(404, {"message": "Not Found"})
        write = self.command in ("POST", "PATCH", "PUT", "DELETE")
        if write and not tok.get("write", True):
            return self.send(403, {"message": "Resource not accessible by integration",
                                   "documentation_url": "https://docs.github.com/rest",
                                   "status": "403"})
        m = re.match(r"/issues/(\d+)/comments$", sub)
        if m and self.command == "GET":
            return self.list_comments(m.group(1), q)
        if m and self.command == "POST":
            return self.write_comment(None, m.group(1), tok, raw)
        m = re.match(r"/issues/comments/(\d+)$", sub)
        if m and self.command == "PATCH":
            return self.write_comment(int(m.group(1)), None, tok, raw)
        if sub == "/check-runs" and self.command == "POST":
            if not tok.get("checks", True):  # check runs are GitHub Apps' only
                return self.send(403, {"message": "Resource not accessible by personal access token",
                                       "documentation_url": "https://docs.github.com/rest/checks/runs",
                                       "status": "403"})
            with lock:
                run = json.loads(raw)
                run["id"] = len(state["check_runs"]) + 1
                run["html_url"] = "https://github.example/o/r/runs/%d" % run["id"]
                state["check_runs"].append(run)
            return self.send(201, run)
        m = re.match(r"/commits/(\w+)/check-runs$", sub)
        if m and self.command == "GET":
            name = q.get("check_name", [None])[0]
            with lock:
                runs = [r for r in state["check_runs"] if r.get("head_sha") == m.group(1) and
                        (name is None or r.get("name") == name)]
            return self.send(200, {"total_count": len(runs), "check_runs": runs})
        m = re.match(r"/statuses/(\w+)$", sub)
        if m and self.command == "POST":
            with lock:
                state["statuses"].append(json.loads(raw))
            return self.send(201, {"state": "ok"})
        m = re.match(r"/pulls/(\d+)$", sub)
        if m and self.command == "GET" and m.group(1) in state["pulls"]:
            p = state["pulls"][m.group(1)]
            return self.send(200, {"number": int(m.group(1)), "head": {"sha": p["head_sha"]}})
        return self.send(404, {"message": "Not Found"})

    def list_comments(self, issue, q):
        per = min(int(q.get("per_page", ["30"])[0]), 100, state["max_per_page"])
        page = int(q.get("page", ["1"])[0])
        with lock:
            cs = sorted(state["comments"].get(issue, []), key=lambda c: c["id"])
        last = max(1, (len(cs) + per - 1) // per)
        items = [{k: c[k] for k in ("id", "body", "user", "html_url")}
                 for c in cs[(page - 1) * per:page * per]]
        url = self.base() + "/repositories/%d/issues/%s/comments?per_page=%d&page=%%d" % (
            REPO_ID, issue, per)
        links = []
        if page > 1:
            links.append('<%s>; rel="prev"' % (url % (page - 1)))
        if page < last:
            links.append('<%s>; rel="next"' % (url % (page + 1)))
            links.append('<%s>; rel="last"' % (url % last))
        if page > 1:
            links.append('<%s>; rel="first"' % (url % 1))
        self.send(200, items, [("Link", ", ".join(links))] if links else [])

    def write_comment(self, cid, issue, tok, raw):
        body = json.loads(raw)["body"]
        if len(body) > state["max_body_chars"]:
            return self.send(422, {"message": "Validation Failed", "errors": [
                {"resource": "IssueComment", "code": "custom", "field": "body",
                 "message": "body is too long (maximum is %d characters)"
                            % state["max_body_chars"]}],
                "documentation_url": "https://docs.github.com/rest/issues/comments"})
        with lock:
            if cid is None:
                c = self.add_comment(issue, tok["login"], body)
                status = 201
            else:
                c = self.find_comment(cid)
                if not c:
                    return self.send(404, {"message": "Not Found"})
                c["body"] = body
                c["edits"] += 1
                status = 200
            out = {k: c[k] for k in ("id", "body", "user", "html_url")}
        self.send(status, out)


def main():
    global STATE_DIR
    if sys.argv[1] == "serve":
        STATE_DIR = sys.argv[2]
        serve_port_file(Handler, STATE_DIR)
    elif sys.argv[1] in ("ctl", "dump"):
        port = sys.argv[2]
        if sys.argv[1] == "ctl":
            req = urllib.request.Request("http://127.0.0.1:%s/_ctl" % port,
                                         data=sys.argv[3].encode(), method="POST")
        else:
            req = urllib.request.Request("http://127.0.0.1:%s/_dump" % port)
        with urllib.request.urlopen(req, timeout=10) as r:
            sys.stdout.write(r.read().decode() + "\n")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
