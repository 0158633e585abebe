#!/usr/bin/env python3
"""A fake Weights & Biases server for the W&B tests (../shared/docs/integrations.md §1, §6.1).

POST /graphql needs Authorization: Basic base64("api:" + PG_TEST_WANDB_KEY) (401 otherwise) and is
routed on operationName (else the `query|mutation Name(` in the text): RunInfo,
RunOutputArtifacts, ArtifactByName, ArtifactManifest, ArtifactCollectionMembershipFileURLs,
ArtifactFileURLs, and for publishing UpsertBucket, CreateArtifact, CreateArtifactManifest,
CreateArtifactFiles, CommitArtifact.
Like the real server's schema validation, a request is refused (400, a GraphQL error) when it
passes a variable its operation does not declare, leaves out a required one, uses one it does not
declare, or gives an input object (a variable or inline `input: {...}`) a field its input type
does not have (INPUT_FIELDS below, from W&B's schema as the official clients use it).
Artifact files are served from the signed URL and, with the key, from the artifactsV2 download
handler (GET /artifactsV2/<region>/<entity>/<project>/<collection>/<birth id>/<hex md5>/<name>,
and the older /artifactsV2/<region>/<entity>/<birth id>/<hex md5>). "old_server": true in SPEC
makes a server without the collection-membership file query and the newer download path.
Signed URLs point back here under /storage/...?sig=...; a request to them that carries an
Authorization header is refused with 403 (a key leaking to storage). PUT /storage/upload/...
stores uploads. GET /_state (no auth) dumps runs and artifacts for the tests to read back.

usage: fake_wandb.py SPEC.json PORT_FILE LOG_FILE
SPEC: {"runs": {"ENTITY/PROJECT/RUN_ID": {"displayName", "config" (unwrapped: the fake wraps
each key as {"desc": null, "value": v}), "summary", "commit", "fault", "extra_artifacts": N,
"artifacts": [{"name", "type", "aliases", "files": {"logical/path": "/local/file"}, "fault"}]}}}
Run faults (first RunInfo of that run): "429-once" (Retry-After: 1), "500-once", "errors" (200
with an errors array and null data), "errors-partial" (the run, with an error on its
summaryMetrics, which is null), "errors-denied" (a null run with an error naming it: a
permission error, not "not found"); "409-summary" (the first summary write answers 409, after
the summary was changed under it: the writer must read it again). Artifact faults: "truncate" (half the bytes, a consistent
Content-Length), "extra" (bytes past the manifest's size), "cut-once" (the connection drops
mid-body once), "corrupt" (a byte flipped), "expired-once" (the first file GET is 403),
"expired-always" (every signed file URL is 403: only the key's download handler serves it),
"slow" (each file GET takes 0.3 s; /_state's max_inflight says how many ran at once),
"dotdot", "absolute", "nul", "long", "huge", "many", "bigmanifest" (hostile or oversized
manifests; bigmanifest: over 64 MiB), "pending"
(never committed).
POST /_fault (no auth) takes network faults for later requests ({"faults": [rule, ...]},
{"reset": true}; rules and modes: faults.py), matched by method and path, e.g. a hanging
storage download or a reset upload.
Every request is logged as "METHOD PATH op=NAME auth=yes|no" to LOG_FILE.
"""
import base64
import hashlib
import http.server
import json
import os
import re
import sys
import threading
import time
import urllib.parse

import faults

SPEC, PORT_FILE, LOG_FILE = sys.argv[1:4]
KEY = os.environ["PG_TEST_WANDB_KEY"]
WANT = "Basic " + base64.b64encode(("api:" + KEY).encode()).decode()
lock = threading.RLock()

runs = {}  # "e/p/id" -> run dict
arts = []  # artifact dicts, by index = numeric id
blobs = {}  # b64 md5 -> bytes
uploads = {}  # token -> ("blob", md5) | ("manifest", art index)
once = set()  # faults already fired
OLD_SERVER = False
inflight = {"now": 0, "max": 0}  # file GETs being answered at once


def log(line):
    with lock, open(LOG_FILE, "a") as f:
        f.write(line + "\n")


def b64md5(data):
    return base64.b64encode(hashlib.md5(data).digest()).decode()


def storage_id(kind, *parts):
    return base64.b64encode((kind + ":v1:" + ":".join(parts)).encode()).decode()


def add_artifact(entity, project, run, name, typ, aliases, files, fault=None, state="COMMITTED"):
    same = [a for a in arts if a["entity"] == entity and a["project"] == project and a["name"] == name]
    a = {"idx": len(arts), "entity": entity, "project": project, "run": run, "name": name,
         "type": typ, "version": len(same), "aliases": list(aliases), "files": {}, "fault": fault,
         "state": state, "manifest": None, "digest": "", "metadata": None,
         "time": "2025-03-16T07:%02d:%02d" % (len(arts) // 60 % 60, len(arts) % 60)}
    a["id"] = base64.b64encode(("Artifact:%d" % a["idx"]).encode()).decode()
    for path, local in files.items():
        data = open(local, "rb").read()
        blobs[b64md5(data)] = data
        a["files"][path] = b64md5(data)
    arts.append(a)
    return a


def load_spec():
    global OLD_SERVER
    spec = json.load(open(SPEC))
    OLD_SERVER = bool(spec.get("old_server"))
    for path, r in spec.get("runs", {}).items():
        e, p, rid = path.split("/")
        runs[path] = {"entity": e, "project": p, "name": rid, "id": storage_id("Run", rid, p, e),
                      "displayName": r.get("displayName", rid), "config": r.get("config", {}),
                      "summary": r.get("summary", {}), "commit": r.get("commit"),
                      "fault": r.get("fault")}
        for i in range(r.get("extra_artifacts", 0)):
            add_artifact(e, p, rid, "dataset-%d" % i, "dataset", ["latest"], {})
        for a in r.get("artifacts", []):
            add_artifact(e, p, rid, a["name"], a.get("type", "jax_profile"),
                         a.get("aliases", ["latest"]), a.get("files", {}), a.get("fault"),
                         "PENDING" if a.get("fault") == "pending" else "COMMITTED")
        for a in arts:
            if a["run"] == rid and a["entity"] == e:
                a["aliases"].append("v%d" % a["version"])


def manifest_of(a):
    if a["manifest"] is not None:
        return a["manifest"]
    contents = {}
    for path, md5 in a["files"].items():
        contents[path] = {"digest": md5, "size": len(blobs[md5]), "birthArtifactID": a["id"]}
    fault = a["fault"]
    evil = {"digest": b64md5(b"x"), "size": 1}
    if fault == "dotdot":
        contents["plugins/../../escape.pt.trace.json"] = evil
    elif fault == "absolute":
        contents["/tmp/escape.pt.trace.json"] = evil
    elif fault == "nul":
        contents["plugins/a\u0000b.pt.trace.json"] = evil
    elif fault == "long":
        contents["plugins/" + "x" * 2000 + ".pt.trace.json"] = evil
    elif fault == "huge":
        contents["plugins/huge.xplane.pb"] = {"digest": b64md5(b"x"), "size": 10 ** 13}
    elif fault == "many":
        for i in range(10001):
            contents["plugins/f%05d.json" % i] = evil
    m = {"version": 1, "storagePolicy": "wandb-storage-policy-v1",
         "storagePolicyConfig": {"storageLayout": "V2"}, "contents": contents}
    if fault == "bigmanifest":
        m["padding"] = "x" * ((64 << 20) + 1)
    return json.dumps(m).encode()


# Input types' fields (W&B's schema, as wandb-core's and the Python client's mutations use them).
INPUT_FIELDS = {
    "CreateArtifactInput": {"entityName", "projectName", "runName", "artifactTypeName",
                            "artifactCollectionName", "artifactCollectionNames", "digest",
                            "digestAlgorithm", "description", "labels", "aliases", "metadata",
                            "clientID", "sequenceClientID", "enableDigestDeduplication",
                            "historyStep", "distributedID", "tags", "storageRegion",
                            "ttlDurationSeconds", "clientMutationId"},
    "ArtifactAliasInput": {"artifactCollectionName", "alias"},
    "TagInput": {"tagCategoryName", "tagName", "attributes"},
    "CreateArtifactManifestInput": {"artifactID", "baseArtifactID", "name", "digest",
                                    "entityName", "projectName", "runName", "type",
                                    "clientMutationId"},
    "CreateArtifactFilesInput": {"artifactFiles", "storageLayout", "clientMutationId"},
    "CreateArtifactFileSpecInput": {"artifactID", "name", "md5", "mimetype",
                                    "artifactManifestID", "uploadPartsInput"},
    "UpsertBucketInput": {"id", "name", "groupName", "modelName", "entityName", "description",
                          "displayName", "notes", "commit", "config", "host", "debug", "program",
                          "repo", "jobType", "state", "sweep", "tags", "summaryMetrics",
                          "clientMutationId"},
    "CommitArtifactInput": {"artifactID", "clientMutationId"},
}
NESTED = {("CreateArtifactInput", "aliases"): "ArtifactAliasInput",
          ("CreateArtifactInput", "tags"): "TagInput",
          ("CreateArtifactFilesInput", "artifactFiles"): "CreateArtifactFileSpecInput"}
MUTATION_INPUT = {"createArtifact": "CreateArtifactInput",
                  "createArtifactManifest": "CreateArtifactManifestInput",
                  "createArtifactFiles": "CreateArtifactFilesInput",
                  "upsertBucket": "UpsertBucketInput", "commitArtifact": "CommitArtifactInput"}


def check_input(typ, obj):
    """The first field of obj (nested too) typ does not have, as GraphQL's message says it."""
    if isinstance(obj, list):
        return next((m for m in (check_input(typ, x) for x in obj) if m), None)
    if not isinstance(obj, dict):
        return None
    for k, v in obj.items():
        if k not in INPUT_FIELDS[typ]:
            return 'Field "%s" is not defined by type "%s".' % (k, typ)
        sub = NESTED.get((typ, k))
        m = sub and check_input(sub, v)
        if m:
            return m
    return None


def validate(query, variables):
    """A validation error of the request, or None."""
    m = re.match(r"\s*(query|mutation)\s+(\w+)\s*(\((.*?)\))?\s*\{", query, re.S)
    if not m:
        return "Syntax Error: the operation has no name"
    head, body = m.group(4) or "", query[m.end():]
    declared = {}
    for name, typ, default in re.findall(r"\$(\w+)\s*:\s*([\w!\[\]]+)\s*(=)?", head):
        declared[name] = (typ, bool(default))
    for k in variables:
        if k not in declared:
            return 'Variable "$%s" is not defined by operation "%s".' % (k, m.group(2))
    for k, (typ, has_default) in declared.items():
        if typ.endswith("!") and not has_default and variables.get(k) is None:
            return 'Variable "$%s" of required type "%s" was not provided.' % (k, typ)
        base = typ.strip("![]")
        if base in INPUT_FIELDS and k in variables:
            msg = check_input(base, variables[k])
            if msg:
                return 'Variable "$%s" got invalid value: %s' % (k, msg)
    for used in re.findall(r"\$(\w+)", body):
        if used not in declared:
            return 'Variable "$%s" is not defined by operation "%s".' % (used, m.group(2))
    for field, typ in MUTATION_INPUT.items():
        for inline in re.finditer(field + r"\s*\(\s*input\s*:\s*\{(.*?)\}\s*\)", body, re.S):
            for name in re.findall(r"(\w+)\s*:", inline.group(1)):
                if name not in INPUT_FIELDS[typ]:
                    return 'Field "%s" is not defined by type "%s".' % (name, typ)
    return None


def wrap_config(cfg):
    return {k: {"desc": None, "value": v} for k, v in cfg.items()}


def node_of(a):
    return {"id": a["id"], "versionIndex": a["version"], "state": a["state"],
            "digest": a["digest"], "fileCount": len(a["files"]), "size": 0,
            "createdAt": a["time"], "updatedAt": a["time"],
            "artifactType": {"name": a["type"]},
            "artifactSequence": {"name": a["name"],
                                 "project": {"name": a["project"], "entityName": a["entity"]}},
            "aliases": [{"alias": x} for x in a["aliases"]]}


def find_run(e, p, name):
    return runs.get("%s/%s/%s" % (e, p, name))


def art_by_id(aid):
    for a in arts:
        if a["id"] == aid:
            return a
    return None


def page(items, v):
    start = int(v.get("cursor") or 0)
    n = int(v.get("perPage") or 50)
    chunk = items[start:start + n]
    more = start + n < len(items)
    return chunk, {"hasNextPage": more, "endCursor": str(start + n) if more else None}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def reply(self, status, obj=None, raw=None, headers=(), length=None):
        data = raw if raw is not None else json.dumps(obj).encode()
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data) if length is None else length))
        self.end_headers()
        self.wfile.write(data)

    def base(self):
        return "http://%s" % self.headers.get("Host")

    def url(self, kind, token):
        return "%s/storage/%s/%s?sig=s1gn3d-%s" % (self.base(), kind, token, token)

    # ---- GraphQL ----
    def do_POST(self):
        raw = self.body()
        try:
            req = json.loads(raw)
        except ValueError:
            req = {}
        op = req.get("operationName")
        if not op:
            m = re.search(r"(query|mutation)\s+(\w+)\(", req.get("query", ""))
            op = m.group(2) if m else "?"
        auth = self.headers.get("Authorization")
        log("POST %s op=%s auth=%s" % (self.path, op, "yes" if auth else "no"))
        if self.path == "/_fault":
            faults.control(json.loads(raw or b"{}"))
            return self.reply(200, {"ok": True})
        if self.fault():
            return
        if self.path != "/graphql":
            return self.reply(404, {"error": "not found"})
        if auth != WANT:
            return self.reply(401, {"errors": [{"message": "user is not logged in"}]})
        v = req.get("variables") or {}
        self.query_text = req.get("query", "")
        bad = validate(req.get("query", ""), v)
        if bad:
            log("invalid %s: %s" % (op, bad))
            return self.reply(400, {"errors": [{"message": bad, "extensions": {
                "code": "GRAPHQL_VALIDATION_FAILED"}}], "data": None})
        if op == "ArtifactCollectionMembershipFileURLs" and OLD_SERVER:
            return self.reply(400, {"errors": [{"message": 'Cannot query field "artifactCollection" on type "Project".',
                                                "extensions": {"code": "GRAPHQL_VALIDATION_FAILED"}}], "data": None})
        with lock:
            fn = getattr(self, "op_" + op, None)
            if not fn:
                return self.reply(400, {"errors": [{"message": "unknown operation " + op}]})
            return fn(v)

    def run_fault(self, run):
        f = run and run.get("fault")
        key = ("run", run and run["name"])
        if f == "errors-denied":
            self.reply(200, {"errors": [{"message": "permission denied: you may not read run " + run["name"],
                                         "path": ["project", "run"]}], "data": {"project": {"run": None}}})
            return True
        if not f or key in once or f not in ("429-once", "500-once", "errors"):
            return False
        once.add(key)
        if f == "429-once":
            self.reply(429, {"error": "rate limit exceeded"}, headers=[("Retry-After", "1")])
        elif f == "500-once":
            self.reply(500, {"errors": ["Server down"]})
        else:
            self.reply(200, {"errors": [{"message": "internal resolver error", "path": ["project"]}],
                             "data": None})
        return True

    def op_RunInfo(self, v):
        run = find_run(v["entity"], v["project"], v["name"])
        if self.run_fault(run):
            return
        proj_known = any(r["entity"] == v["entity"] and r["project"] == v["project"]
                         for r in runs.values())
        if not proj_known:
            return self.reply(200, {"data": {"project": None}})
        if not run:
            return self.reply(200, {"data": {"project": {"run": None}}})
        out = {"data": {"project": {"run": {
            "id": run["id"], "name": run["name"], "displayName": run["displayName"],
            "state": "finished", "config": json.dumps(wrap_config(run["config"])),
            "summaryMetrics": json.dumps(run["summary"]), "createdAt": "2025-03-16T07:20:11",
            "commit": run["commit"]}}}}
        if run.get("fault") == "errors-partial":
            out["data"]["project"]["run"]["summaryMetrics"] = None
            out["errors"] = [{"message": "summaryMetrics: the history store timed out",
                              "path": ["project", "run", "summaryMetrics"]}]
        # only the fields asked for, as a GraphQL server answers
        wanted = re.search(r"run\(name: \$\w+\)\s*\{([^}]*)\}", self.query_text)
        if wanted:
            fields = set(wanted.group(1).split())
            r = out["data"]["project"]["run"]
            out["data"]["project"]["run"] = {k: v for k, v in r.items() if k in fields}
        return self.reply(200, out)

    def op_RunOutputArtifacts(self, v):
        run = find_run(v["entity"], v["project"], v["run"])
        if not run:
            return self.reply(200, {"data": {"project": {"run": None}}})
        mine = [a for a in arts if a["run"] == run["name"] and a["entity"] == run["entity"]
                and a["project"] == run["project"]]
        chunk, info = page(mine, v)
        return self.reply(200, {"data": {"project": {"run": {"outputArtifacts": {
            "totalCount": len(mine), "pageInfo": info,
            "edges": [{"node": node_of(a)} for a in chunk]}}}}})

    def op_ArtifactByName(self, v):
        e, p = v["entityName"], v["projectName"]
        if not any(r["entity"] == e and r["project"] == p for r in runs.values()):
            return self.reply(200, {"data": {"project": None}})
        name, _, alias = v["name"].partition(":")
        alias = alias or "latest"
        hit = None
        for a in arts:
            if a["entity"] == e and a["project"] == p and a["name"] == name and \
                    (alias in a["aliases"] or alias == "v%d" % a["version"]):
                hit = a
        if not hit:
            return self.reply(200, {"data": {"project": {"artifact": None}}})
        n = node_of(hit)
        n["createdBy"] = {"__typename": "Run", "name": hit["run"],
                          "project": {"name": p, "entityName": e}} if hit["run"] else None
        return self.reply(200, {"data": {"project": {"artifact": n}}})

    def op_ArtifactManifest(self, v):
        a = art_by_id(v["artifact_id"])
        if not a:
            return self.reply(200, {"data": {"artifact": None}})
        return self.reply(200, {"data": {"artifact": {"currentManifest": {"file": {
            "directUrl": self.url("manifest", str(a["idx"]))}}}}})

    def files_of(self, a, v):
        names = sorted(a["files"])
        chunk, info = page(names, v)
        return {"pageInfo": info, "edges": [
            {"node": {"name": n, "directUrl": self.url("file", "%d/%d" % (a["idx"], names.index(n)))}}
            for n in chunk]}

    def op_ArtifactFileURLs(self, v):
        a = art_by_id(v["id"])
        if not a:
            return self.reply(200, {"data": {"artifact": None}})
        return self.reply(200, {"data": {"artifact": {"files": self.files_of(a, v)}}})

    def op_ArtifactCollectionMembershipFileURLs(self, v):
        e, p, name, alias = v["entityName"], v["projectName"], v["artifactName"], v["artifactVersionIndex"]
        if not any(r["entity"] == e and r["project"] == p for r in runs.values()):
            return self.reply(200, {"data": {"project": None}})
        same = [a for a in arts if a["entity"] == e and a["project"] == p and a["name"] == name]
        if not same:
            return self.reply(200, {"data": {"project": {"artifactCollection": None}}})
        hit = next((a for a in same if alias in a["aliases"] or alias == "v%d" % a["version"]), None)
        if not hit:
            return self.reply(200, {"data": {"project": {"artifactCollection": {"artifactMembership": None}}}})
        return self.reply(200, {"data": {"project": {"artifactCollection": {"artifactMembership": {
            "files": self.files_of(hit, v)}}}}})

    # ---- publishing ----
    def op_UpsertBucket(self, v):
        if v.get("id"):
            run = next((r for r in runs.values() if r["id"] == v["id"]), None)
            if not run:
                return self.reply(200, {"errors": [{"message": "run not found"}], "data": None})
            key = ("summary", run["name"])
            if run.get("fault") == "409-summary" and v.get("summaryMetrics") is not None and key not in once:
                once.add(key)
                run["summary"]["other/written_meanwhile"] = 42  # another writer got there first
                return self.reply(409, {"errors": [{"message": "conflict: the run was updated meanwhile"}]})
            if v.get("summaryMetrics") is not None:
                run["summary"] = json.loads(v["summaryMetrics"])
            return self.reply(200, {"data": {"upsertBucket": {"bucket": {"id": run["id"], "name": run["name"]}}}})
        e, p, name = v.get("entityName"), v.get("modelName"), v.get("name")
        if not (e and p and name):
            return self.reply(200, {"errors": [{"message": "bad upsertBucket input"}], "data": None})
        path = "%s/%s/%s" % (e, p, name)
        run = runs.setdefault(path, {"entity": e, "project": p, "name": name,
                                     "id": storage_id("Run", name, p, e), "displayName": name,
                                     "config": {}, "summary": {}, "commit": None, "fault": None,
                                     "jobType": v.get("jobType")})
        return self.reply(200, {"data": {"upsertBucket": {"bucket": {"id": run["id"], "name": run["name"]}}}})

    def op_CreateArtifact(self, v):
        i = v["input"]
        run = None
        if i.get("runName"):
            run = find_run(i["entityName"], i["projectName"], i["runName"])
            if not run:
                return self.reply(200, {"errors": [{"message": "run not found"}], "data": None})
        same = [a for a in arts if a["entity"] == i["entityName"] and
                a["project"] == i["projectName"] and a["name"] == i["artifactCollectionName"]]
        latest = same[-1] if same else None
        for a in same:
            if a["digest"] == i["digest"] and a["state"] == "COMMITTED":
                return self.reply(200, {"data": {"createArtifact": {"artifact": {
                    "id": a["id"], "state": "COMMITTED", "versionIndex": a["version"], "artifactSequence": {"latestArtifact": {"id": latest["id"]}}}}}})
        a = add_artifact(i["entityName"], i["projectName"], i.get("runName"),
                         i["artifactCollectionName"], i["artifactTypeName"], [], {}, state="PENDING")
        a["digest"] = i["digest"]
        a["metadata"] = i.get("metadata")
        a["want_aliases"] = [x["alias"] for x in i.get("aliases", [])]
        a["manifest"] = b""
        return self.reply(200, {"data": {"createArtifact": {"artifact": {
            "id": a["id"], "state": "PENDING", "versionIndex": a["version"],
            "artifactSequence": {"latestArtifact": {"id": latest["id"]} if latest else None}}}}})

    def op_CreateArtifactManifest(self, v):
        i = v.get("input") or v
        a = art_by_id(i["artifactID"])
        if not a:
            return self.reply(200, {"errors": [{"message": "no such artifact"}], "data": None})
        f = {"id": "file-manifest-%d" % a["idx"]}
        if i.get("includeUpload"):
            token = "m%d-%d" % (a["idx"], len(uploads))
            uploads[token] = ("manifest", a["idx"])
            f["uploadUrl"] = self.url("upload", token)
            f["uploadHeaders"] = ["Content-Type:application/json"]
        return self.reply(200, {"data": {"createArtifactManifest": {"artifactManifest": {
            "id": "manifest-%d" % a["idx"], "file": f}}}})

    def op_CreateArtifactFiles(self, v):
        edges = []
        for f in v["input"]["artifactFiles"]:
            a = art_by_id(f["artifactID"])
            url = None
            if f["md5"] not in blobs:
                token = "b%d" % len(uploads)
                uploads[token] = ("blob", f["md5"])
                url = self.url("upload", token)
            edges.append({"node": {"id": "f%d" % len(edges), "name": f["name"], "displayName": f["name"],
                                   "storagePath": "wandb_artifacts/" + f["md5"], "uploadUrl": url,
                                   "uploadHeaders": ["Content-MD5:" + f["md5"]],
                                   "artifact": {"id": a["id"]}}})
        return self.reply(200, {"data": {"createArtifactFiles": {"files": {"edges": edges}}}})

    def op_CommitArtifact(self, v):
        a = art_by_id(v["artifactID"])
        if not a or not a["manifest"]:
            return self.reply(200, {"errors": [{"message": "manifest not uploaded"}], "data": None})
        m = json.loads(a["manifest"])
        for path, entry in m["contents"].items():
            if entry["digest"] not in blobs:
                return self.reply(200, {"errors": [{"message": "file %s not uploaded" % path}], "data": None})
            a["files"][path] = entry["digest"]
        for other in arts:
            if other is not a and other["name"] == a["name"] and other["project"] == a["project"]:
                other["aliases"] = [x for x in other["aliases"] if x not in a["want_aliases"]]
        a["aliases"] = list(dict.fromkeys(a["want_aliases"] + ["latest", "v%d" % a["version"]]))
        for other in arts:
            if other is not a and other["name"] == a["name"] and other["project"] == a["project"]:
                other["aliases"] = [x for x in other["aliases"] if x != "latest"]
        a["state"] = "COMMITTED"
        return self.reply(200, {"data": {"commitArtifact": {"artifact": {"id": a["id"], "digest": a["digest"], "versionIndex": a["version"]}}}})

    # ---- storage ----
    def storage_auth_refused(self):
        if self.headers.get("Authorization"):
            self.reply(403, {"error": "Authorization header sent to a signed storage URL"})
            return True
        return False

    def fault(self):
        rule = faults.take(self.command, self.path.split("?")[0])
        if rule:
            faults.inject(self, rule)
        return rule is not None

    def download_handler(self, path, auth):
        """W&B's own file download, with the key: the artifact's file by birth artifact and MD5."""
        if auth != WANT:
            return self.reply(401, {"errors": [{"message": "user is not logged in"}]})
        parts = [urllib.parse.unquote(x) for x in path.split("/")[2:]]
        if len(parts) == 7 and not OLD_SERVER:
            region, entity, project, collection, birth, md5hex, name = parts
        elif len(parts) == 4:
            region, entity, birth, md5hex = parts
            project = collection = name = None
        else:
            return self.reply(404, {"error": "not found"})
        with lock:
            a = art_by_id(birth)
            for p, md5 in (a["files"].items() if a else []):
                if base64.b64decode(md5).hex() == md5hex and (name is None or p.rsplit("/", 1)[-1] == name) \
                        and (collection is None or (a["name"] == collection and a["project"] == project)):
                    return self.reply(200, raw=blobs[md5])
        return self.reply(404, {"error": "not found"})

    def do_PUT(self):
        data = self.body()
        auth = self.headers.get("Authorization")
        path = self.path.split("?")[0]
        log("PUT %s op=- auth=%s" % (path, "yes" if auth else "no"))
        if self.fault():
            return
        if self.storage_auth_refused():
            return
        token = path.rsplit("/", 1)[-1]
        with lock:
            what = uploads.get(token)
            if not what:
                return self.reply(404, {"error": "no such upload"})
            if what[0] == "blob":
                if b64md5(data) != what[1]:
                    return self.reply(400, {"error": "Content-MD5 mismatch"})
                blobs[what[1]] = data
            else:
                arts[what[1]]["manifest"] = data
        return self.reply(200, raw=b"")

    def do_GET(self):
        auth = self.headers.get("Authorization")
        path = self.path.split("?")[0]
        log("GET %s op=- auth=%s" % (path, "yes" if auth else "no"))
        if self.fault():
            return
        if path == "/_state":
            with lock:
                return self.reply(200, {"runs": runs, "max_inflight": inflight["max"], "artifacts": [
                    {k: v for k, v in a.items() if k != "manifest"} for a in arts]})
        if path.startswith("/artifactsV2/"):
            return self.download_handler(path, auth)
        if not path.startswith("/storage/"):
            return self.reply(404, {"error": "not found"})
        if self.storage_auth_refused():
            return
        parts = path.split("/")
        with lock:
            if parts[2] == "manifest":
                return self.reply(200, raw=manifest_of(arts[int(parts[3])]))
            if parts[2] != "file":
                return self.reply(404, {"error": "not found"})
            a = arts[int(parts[3])]
            names = sorted(a["files"])
            data = blobs[a["files"][names[int(parts[4])]]]
            fault = a["fault"]
            key = ("art", a["idx"])
            if fault == "expired-always":
                return self.reply(403, raw=b"<Error><Code>ExpiredToken</Code></Error>")
            if fault == "expired-once" and key not in once:
                once.add(key)
                return self.reply(403, raw=b"<Error><Code>ExpiredToken</Code></Error>")
            if fault == "cut-once" and key not in once:
                once.add(key)
                self.reply(200, raw=data[: len(data) // 2], length=len(data))
                self.close_connection = True
                return
        if fault == "slow":
            with lock:
                inflight["now"] += 1
                inflight["max"] = max(inflight["max"], inflight["now"])
            time.sleep(0.3)
            with lock:
                inflight["now"] -= 1
        if fault == "truncate":
            data = data[: len(data) // 2]
        elif fault == "corrupt":
            data = data[:-1] + bytes([data[-1] ^ 0xFF])
        elif fault == "extra":
            data = data + b"trailing bytes the manifest does not count"
        return self.reply(200, raw=data)


load_spec()
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
srv.daemon_threads = True
with open(PORT_FILE + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(PORT_FILE + ".tmp", PORT_FILE)
srv.serve_forever()
