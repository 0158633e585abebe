#!/usr/bin/env python3
"""Make one host op slower in a CPU trace, as if its kernels ran FACTOR times longer.

usage: slow_op.py IN OUT --op NAME [--factor F]

IN is a PyTorch CPU trace: the legacy autograd-profiler export (a bare JSON array, integer
microseconds) or a Kineto trace (an object with traceEvents, float microseconds), gzipped
when its name ends in .gz; OUT is written the same way (gzip without a timestamp, so the
bytes are reproducible).

On every thread that runs the op, time inside the op's events runs FACTOR times slower: a
monotone map of that thread's clock stretches each event of the op (and whatever it holds),
grows the events that enclose it (its callers, the ProfilerStep#N marker) by the added time
and shifts every later event of the thread by it. Other threads are left as they are.
Standard library only.
"""
import argparse
import bisect
import gzip
import json
import sys


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def save(doc, path):
    text = json.dumps(doc, separators=(", ", ": ")).encode("utf-8")
    if path.endswith(".gz"):
        with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
            f.write(text)
    else:
        with open(path, "wb") as f:
            f.write(text)


def thread_of(e):
    return (str(e.get("pid")), str(e.get("tid")))


def stretch_map(intervals, factor, integral):
    """The thread's new clock: t -> t plus the time added by the op intervals before t. With
    integral times each interval adds a whole number of microseconds, so the events after it
    shift by whole microseconds and keep their durations."""
    spans = []
    for s, e in sorted(intervals):
        if spans and s <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], e)
        else:
            spans.append([s, e])
    starts = [s for s, _ in spans]
    added = [0.0]  # added before span i
    extra = []
    for s, e in spans:
        x = (e - s) * (factor - 1)
        extra.append(round(x) if integral else x)
        added.append(added[-1] + extra[-1])

    def new_time(t):
        i = bisect.bisect_right(starts, t) - 1
        if i < 0:
            return t
        s, e = spans[i]
        inside = (min(t, e) - s) / (e - s) if e > s else 1
        return t + added[i] + inside * extra[i]

    return new_time, added[-1]


def main():
    ap = argparse.ArgumentParser(description="stretch every event of one op in a CPU trace")
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--op", required=True, help="the event name, e.g. aten::mm")
    ap.add_argument("--factor", type=float, default=1.25)
    a = ap.parse_args()
    if a.factor <= 0:
        sys.exit("slow_op: --factor must be positive")
    doc = load(a.src)
    if isinstance(doc, list):
        events, integral = doc, True
    elif isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list):
        events, integral = doc["traceEvents"], False
    else:
        sys.exit("slow_op: %s is neither a legacy array nor a Kineto trace" % a.src)

    ops = {}
    for e in events:
        if isinstance(e, dict) and e.get("name") == a.op and e.get("ph") == "X":
            ops.setdefault(thread_of(e), []).append((e["ts"], e["ts"] + e.get("dur", 0)))
    if not ops:
        sys.exit("slow_op: no complete event named %r in %s" % (a.op, a.src))
    maps = {}
    total = 0.0
    for th, iv in ops.items():
        maps[th], add = stretch_map(iv, a.factor, integral)
        total += add

    def out(t):
        return int(round(t)) if integral else round(t, 3)

    for e in events:
        if not isinstance(e, dict) or "ts" not in e:
            continue
        f = maps.get(thread_of(e))
        if f is None:
            continue
        s = e["ts"]
        if "dur" in e:
            end = out(f(s + e["dur"]))
            e["ts"] = out(f(s))
            e["dur"] = end - e["ts"]
        else:
            e["ts"] = out(f(s))
    save(doc, a.dst)
    n = sum(len(v) for v in ops.values())
    print("slow_op: %d events of %s on %d threads x%g: +%.3f us" % (n, a.op, len(ops), a.factor, total))


if __name__ == "__main__":
    main()
