#!/usr/bin/env python3
"""Convert a legacy autograd-profiler trace into the Kineto CPU-only layout.

    python3 tests/host/to_kineto.py IN.pt.trace.json[.gz] OUT.pt.trace.json[.gz]

A PyTorch built without Kineto (Debian's python3-torch 1.13) exports
torch.profiler traces as a bare JSON array of "X" events with pid
"CPU functions", integer microsecond ts/dur, small integer tids, no "cat" and
empty args. A build with Kineto writes the same run as the object below; this
script writes that object from the legacy events, so tests can feed both
layouts of one run to profgate. The layout follows a real Kineto CPU-only
trace (HolisticTraceAnalysis' rank-34...HEAD-small.pt.trace.json.gz): Kineto's
own line breaks, "schemaVersion": 1, an empty "deviceProperties", events with
"cat" cpu_op or user_annotation, int pid/tid, float µs ts/dur with three
decimals, args with "External id", then process_name / process_labels /
thread_name metadata, the "PyTorch Profiler (0)" span, "traceName",
"displayTimeUnit" and "baseTimeNanoseconds".

What cannot be recovered is made up, fixed so the output is deterministic:
the process id (--pid, also the main thread's tid; further threads get pid+1,
pid+2, ... in order of appearance), the clock (ts + --base-us) and the process
name ("python3"). Stdlib only; a path ending in .gz is read or written
gzipped (mtime 0).
"""
import argparse
import gzip
import json
import sys

# Names Kineto records as user_annotation (record_function scopes of the
# profiler, the DataLoader and the optimizer); every other op is a cpu_op.
ANNOTATION_PREFIXES = ("ProfilerStep#", "enumerate(DataLoader)#", "Optimizer.step#",
                       "Optimizer.zero_grad#")
PROCESS_NAME = "python3"
BASE_TIME_NS = 1700000000000000000


def open_text(path, mode):
    if path.endswith(".gz"):
        if "w" in mode:
            raw = open(path, "wb")
            return gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename=""), raw
        return gzip.open(path, "rt", encoding="utf-8"), None
    return open(path, mode, encoding="utf-8"), None


def load_legacy(path):
    f, _ = open_text(path, "r")
    with f:
        events = json.load(f)
    if not isinstance(events, list):
        raise ValueError("%s: not a legacy export (expected a bare JSON array)" % path)
    for i, e in enumerate(events):
        if not isinstance(e, dict) or e.get("ph") != "X" or e.get("pid") != "CPU functions":
            raise ValueError("%s: event %d is not a CPU-only legacy 'X' event" % (path, i))
    return events


def event_text(ph_cat, name, pid, tid, ts, dur, ext_id, idx):
    return ('  {\n    "ph": "X", "cat": "%s", "name": %s, "pid": %d, "tid": %d,\n'
            '    "ts": %.3f, "dur": %.3f,\n'
            '    "args": {\n      "External id": %d,"Record function id": 0, "Ev Idx": %d\n'
            '    }\n  }' % (ph_cat, json.dumps(name), pid, tid, ts, dur, ext_id, idx))


def meta_text(name, ts, pid, tid, key, value):
    return ('  {\n    "name": "%s", "ph": "M", "ts": %.3f, "pid": %s, "tid": %d,\n'
            '    "args": {\n      "%s": %s\n    }\n  }' % (name, ts, pid, tid, key,
                                                        json.dumps(value)))


def convert(events, pid, base_us):
    tids = {}
    for e in events:
        tids.setdefault(e["tid"], pid + len(tids))
    start = base_us + min((e["ts"] for e in events), default=0)
    end = base_us + max((e["ts"] + e["dur"] for e in events), default=0)
    out = []
    for i, e in enumerate(events):
        name = e["name"]
        cat = "user_annotation" if name.startswith(ANNOTATION_PREFIXES) else "cpu_op"
        out.append(event_text(cat, name, pid, tids[e["tid"]], base_us + e["ts"], e["dur"],
                              i + 1, i))
    out.append(meta_text("process_name", start, pid, 0, "name", PROCESS_NAME))
    out.append(meta_text("process_labels", start, pid, 0, "labels", "CPU"))
    out.append(meta_text("process_sort_index", start, pid, 0, "sort_index", pid))
    for tid in sorted(tids.values()):
        out.append(meta_text("thread_name", start, pid, tid, "name",
                             "thread %d (%s)" % (tid, PROCESS_NAME)))
        out.append(meta_text("thread_sort_index", start, pid, tid, "sort_index", tid))
    out.append('  {\n    "ph": "X", "cat": "Trace", "ts": %.3f, "dur": %.3f,\n'
               '    "pid": "Spans", "tid": "PyTorch Profiler",\n'
               '    "name": "PyTorch Profiler (0)",\n'
               '    "args": {\n      "Op count": 0\n    }\n  }' % (start, end - start))
    out.append('  {\n    "name": "process_sort_index", "ph": "M", "ts": %.3f,\n'
               '    "pid": "Spans", "tid": 0,\n'
               '    "args": {\n      "sort_index": 536870912\n    }\n  }' % start)
    out.append('  {\n    "name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g",\n'
               '    "pid": "Traces", "tid": "Trace PyTorch Profiler", "ts": %.3f\n  }' % start)
    out.append('  {\n    "name": "Record Window End", "ph": "i", "s": "g",\n'
               '    "pid": "", "tid": "", "ts": %.3f\n  }' % end)
    return ('\n{\n  "schemaVersion": 1,\n  "deviceProperties": [\n  ],\n'
            '  "traceEvents": [\n' + ",\n".join(out) + "\n  ],\n"
            '  "traceName": "/tmp/libkineto_activities_%d.json",\n'
            '  "displayTimeUnit": "ms",\n  "baseTimeNanoseconds": %d\n}\n'
            % (pid, BASE_TIME_NS))


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--pid", type=int, default=4242)
    p.add_argument("--base-us", type=float, default=5000000000.0,
                   help="added to every ts (Kineto's clock is not the legacy one)")
    a = p.parse_args(argv)
    try:
        events = load_legacy(a.input)
    except (OSError, ValueError) as e:
        print("to_kineto: %s" % e, file=sys.stderr)
        return 1
    text = convert(events, a.pid, a.base_us)
    f, raw = open_text(a.output, "w")
    with f:
        f.write(text.encode("utf-8") if raw else text)
    if raw:
        raw.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
