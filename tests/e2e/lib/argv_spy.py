#!/usr/bin/env python3
"""Run a program and record the command line of it and of every process it starts, for the
secrets test: tokens must never be in argv, where `ps` and /proc show them to every user.

usage: argv_spy.py LOG PROGRAM ARGS...
The program's own command line is logged as it is started (a run of a few milliseconds may be
over before /proc shows it); then, while it runs, /proc is read every 2 ms: each process in its
tree (the program, its children, theirs) is logged once per distinct command line. A JSON line
each: {"pid", "ppid", "argv"}, and "self": true on the program's own line. A child whose command
line is its parent's is a fork that started no program (LeakSanitizer's tracer is one). Exits with the program's exit code; stdin, stdout and stderr are
the program's.
"""
import json
import os
import subprocess
import sys
import time


def tree(root):
    """{pid: ppid} of root and its descendants, from /proc/*/stat."""
    parent = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                stat = f.read()
        except OSError:
            continue
        parent[int(d)] = int(stat[stat.rindex(")") + 2:].split()[1])
    children = {}
    for c, pp in parent.items():
        children.setdefault(pp, []).append(c)
    found, stack = {root: parent.get(root, 0)}, [root]
    while stack:
        p = stack.pop()
        for c in children.get(p, ()):
            if c not in found:
                found[c] = p
                stack.append(c)
    return found


def main():
    log, argv = sys.argv[1], sys.argv[2:]
    child = subprocess.Popen(argv)
    seen = set()
    with open(log, "a") as out:
        out.write(json.dumps({"pid": child.pid, "ppid": os.getpid(), "argv": argv,
                              "self": True}) + "\n")
        out.flush()
        while True:
            done = child.poll() is not None
            for pid, ppid in tree(child.pid).items():
                try:
                    with open("/proc/%d/cmdline" % pid, "rb") as f:
                        raw = f.read()
                except OSError:
                    continue
                if not raw or (pid, raw) in seen or (pid == child.pid and
                                                      raw == b"\0".join(a.encode() for a in argv) + b"\0"):
                    continue
                seen.add((pid, raw))
                out.write(json.dumps({"pid": pid, "ppid": ppid,
                                      "argv": [a.decode("utf-8", "replace")
                                               for a in raw.rstrip(b"\0").split(b"\0")]}) + "\n")
            if done:
                break
            time.sleep(0.002)
    sys.exit(child.returncode)


if __name__ == "__main__":
    main()
