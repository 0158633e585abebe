#!/usr/bin/env python3
"""history_gen: a profgate history branch of N records in a bare repository, for `make bench`.

50 series (labels "bench 00" .. "bench 49"), one nightly record per series per day from
2021-01-01, one commit per record, each commit rewriting the record's month shard
<series>/<YYYY-MM>.jsonl with the line appended: the layout, commit message and author that
`profgate history append` writes. The records are the template (tests/bench/history_record.jsonl,
a line a real `gate --history` run appended) with their own id, time, series, label, run and sha,
and every metric scaled by a small deterministic factor (a slow drift and day-to-day noise), its
text keeping the template's decimals. The commits are streamed into `git fast-import`, not made by
N appends, so that 18k records take seconds.

--pr-every K adds a PR record (kind "pr", its own run, sha and number, six hours after the night)
after every K-th nightly record of each series; they count in N. --change S:DAY:FACTOR (repeat it)
multiplies every metric of series S from its DAY-th night on by FACTOR, on top of the drift: a step
change that `history trend` should find at that record.

Usage: history_gen.py --repo DIR.git --records N [--template FILE] [--branch B] [--series K]
                      [--pr-every K] [--change S:DAY:FACTOR]...
"""
import argparse
import datetime
import hashlib
import json
import os
import re
import subprocess
import sys

BOT = b"profgate-bot <profgate-bot@users.noreply.github.com>"
T0 = datetime.datetime(2021, 1, 1, 6, 0, 0, tzinfo=datetime.timezone.utc)
NUM = re.compile(r'("(?:[^"\\]|\\.)*":)(-?[0-9]+(?:\.([0-9]+))?)')


def series_of(label):
    slug = re.sub(r"[^a-z0-9_]+", "-", label.lower()).strip("-")
    return "%s-%s" % (slug, hashlib.sha256(("label=%s\n" % label).encode()).hexdigest()[:8])


def object_end(text):
    """The index of the '}' that closes the object text is inside of: the first one outside a
    string (op names hold braces: "{lambda()#1}")."""
    quoted = escaped = False
    for i, ch in enumerate(text):
        if quoted:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                quoted = False
        elif ch == '"':
            quoted = True
        elif ch == "}":
            return i
    raise ValueError("history_gen: the template's metrics object does not end")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", required=True)
    ap.add_argument("--records", type=int, required=True)
    ap.add_argument("--template",
                    default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                         "history_record.jsonl"))
    ap.add_argument("--branch", default="profgate-history")
    ap.add_argument("--series", type=int, default=50)
    ap.add_argument("--pr-every", type=int, default=0)
    ap.add_argument("--change", action="append", default=[])
    a = ap.parse_args()
    changes = [tuple(float(x) if i == 2 else int(x) for i, x in enumerate(c.split(":")))
               for c in a.change]

    tpl = open(a.template).readline().rstrip("\n")
    rec = json.loads(tpl)
    head, rest = tpl.split('"metrics":{', 1)
    metrics, tail = rest[:object_end(rest)], rest[object_end(rest) + 1:]
    old = {k: rec[k] for k in ("record_id", "time", "series", "label", "sha", "run_id")}

    if not os.path.isdir(a.repo):
        subprocess.run(["git", "init", "-q", "--bare", a.repo], check=True)
    fi = subprocess.Popen(["git", "--git-dir", a.repo, "fast-import", "--quiet", "--force"],
                          stdin=subprocess.PIPE)
    out = fi.stdin
    shards = {}
    labels = ["bench %02d" % s for s in range(a.series)]
    names = [series_of(l) for l in labels]
    plan = []  # (day, series, pr): nights in order, each K-th followed by a PR record
    day = 0
    while len(plan) < a.records:
        for s in range(a.series):
            plan.append((day, s, False))
            if a.pr_every and day % a.pr_every == a.pr_every - 1:
                plan.append((day, s, True))
        day += 1
    del plan[a.records:]
    for day, s, pr in plan:
        when = T0 + datetime.timedelta(days=day, seconds=s, hours=6 if pr else 0)
        time = when.strftime("%Y-%m-%dT%H:%M:%SZ")
        key = "%d/%d%s" % (s, day, "/pr" if pr else "")
        rid = hashlib.sha256(key.encode()).hexdigest()[:32]
        sha = hashlib.sha1(key.encode()).hexdigest()
        run = "%s-%d-%d" % ("pr" if pr else "night", s, day)
        noise = (int(rid[:8], 16) / 0xFFFFFFFF - 0.5) * 0.02
        f = 1.0 + noise + 0.0001 * day * (s % 3 - 1)
        for cs, cday, factor in changes:
            if cs == s and day >= cday:
                f *= factor

        def scale(m):
            dec = len(m.group(3)) if m.group(3) else 0
            return m.group(1) + ("%.*f" % (dec, float(m.group(2)) * f))

        h = head
        for k, v in ((old["record_id"], rid), (old["time"], time), (old["series"], names[s]),
                     (old["sha"], sha), (old["run_id"], run)):
            h = h.replace('"%s"' % k, '"%s"' % v, 1)
        h = h.replace('"label":"%s"' % old["label"], '"label":%s' % json.dumps(labels[s]), 1)
        if pr:
            n = 100 + day
            h = h.replace('"kind":"nightly"', '"kind":"pr"', 1).replace('"pr":null', '"pr":%d' % n, 1)
            h = h.replace('"ref":"refs/heads/main"', '"ref":"refs/pull/%d/merge"' % n, 1)
        line = h + '"metrics":{' + NUM.sub(scale, metrics) + "}" + tail + "\n"
        path = "%s/%s.jsonl" % (names[s], time[:7])
        content = shards.get(path, b"") + line.encode()
        shards[path] = content
        if time[:7] != (when - datetime.timedelta(days=1)).strftime("%Y-%m"):
            for p in [p for p in shards if p.startswith(names[s] + "/") and p != path]:
                del shards[p]  # an older month is never rewritten: forget its bytes
        msg = ("history: %s (%s): %s\n\nrecord: %s\nkind: %s\ntime: %s\nsha: %s\nrun: %s\n" %
               (names[s], labels[s], rec["verdict"], rid, "pr" if pr else rec["kind"], time, sha,
                run)).encode()
        stamp = b"%d +0000" % int(when.timestamp())
        out.write(b"commit refs/heads/%s\n" % a.branch.encode())
        out.write(b"author " + BOT + b" " + stamp + b"\ncommitter " + BOT + b" " + stamp + b"\n")
        out.write(b"data %d\n%s\n" % (len(msg), msg))
        out.write(b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(content), content))
    out.close()
    if fi.wait() != 0:
        sys.exit("history_gen: git fast-import failed")
    subprocess.run(["git", "--git-dir", a.repo, "symbolic-ref", "HEAD",
                    "refs/heads/" + a.branch], check=True)
    print(" ".join(names))


if __name__ == "__main__":
    main()
