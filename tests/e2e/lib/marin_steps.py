#!/usr/bin/env python3
"""Synthetic marin-style TPU captures (JAX trace JSON), made for profgate's tests, not recorded.

Each capture has one TPU (/device:TPU:0) with an "XLA Ops" line and a "Steps" line. The Steps
events lie apart from the device's ops, as in marin's track fixtures: every step's event is
STEP_US long, steps come every 200 us, the ops (fusion 40 us, all-reduce 20 us) sit inside only
the first eight of sixteen steps' events, and the last eight Steps events hold no device work at
all (the profiler ran on past the device's last op). Tiling the device's timeline would give the
first seven steps 200 us each whatever STEP_US is, the eighth its ops' 80 us, and the last eight
0 us (a steady median of 0); each step's own Steps event gives STEP_US, and the last eight no
time.

usage: marin_steps.py STEP_US OUT.trace.json
"""
import json
import sys

step_us, out = float(sys.argv[1]), sys.argv[2]
ev = [
    {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:TPU:0"}},
    {"ph": "M", "pid": 1, "tid": 1, "name": "thread_name", "args": {"name": "XLA Ops"}},
    {"ph": "M", "pid": 1, "tid": 2, "name": "thread_name", "args": {"name": "Steps"}},
]
for i in range(16):
    t0 = 1000.0 + 200.0 * i
    ev.append({"ph": "X", "pid": 1, "tid": 2, "name": str(i), "ts": t0, "dur": step_us})
    if i < 8:
        ev.append({"ph": "X", "pid": 1, "tid": 1, "name": "fusion.1", "ts": t0 + 10, "dur": 40,
                   "args": {"hlo_op": "fusion.1"}})
        ev.append({"ph": "X", "pid": 1, "tid": 1, "name": "all-reduce.2", "ts": t0 + 60,
                   "dur": 20, "args": {"hlo_op": "all-reduce.2"}})
json.dump({"displayTimeUnit": "ns", "traceEvents": ev}, open(out, "w"))
