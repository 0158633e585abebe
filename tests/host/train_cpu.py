#!/usr/bin/python3
"""A small real training run on the CPU, profiled with torch.profiler.

Run it with /usr/bin/python3 (Debian's python3-torch); the `python3` on PATH
may be another interpreter without torch:

    /usr/bin/python3 tests/host/train_cpu.py --out /tmp/base.pt.trace.json.gz
    /usr/bin/python3 tests/host/train_cpu.py --variant matmul25 --out /tmp/mm.pt.trace.json

It writes one trace per run. Debian's torch is built without Kineto, so the
trace is the legacy autograd-profiler export (a bare JSON array, pid
"CPU functions"); tests/host/to_kineto.py turns it into the layout a Kineto
build writes. A path ending in .gz is gzipped (mtime 0).

The model: Linear(512, 512) -> GELU -> Linear(512, 128) -> ReLU ->
Linear(128, 10), cross-entropy, SGD with momentum, batches of 32 from a
DataLoader over an in-memory TensorDataset. A step takes about 14 ms on one
thread of the 2-core CI machine, the matmul family (aten::addmm, aten::mm)
about 89 % of it and the first Linear, the dominant matmul, about three
quarters of that; a run takes about 1.5 s with Python's start. Variants, with
the change measured there (median per step over 5 to 13 runs of 25 steps,
against base; run-to-run noise is a few per cent):

  base      as above
  matmul10  the dominant matmul's inner dimension (the input width) 10 %
            wider: matmul family +8 %, step +8 %
  matmul25  ... 25 % wider: matmul family +22 %, step +21 %
  one       ... 1.6 % wider (8 columns): matmul +1.2 %, step +0.7 %
  step10    ... 14 % wider: sized so the step grows about 10 %
  step25    ... 36 % wider: sized so the step grows about 25 %
  softmax   a softmax over a fixed (768, 512) tensor each step: a new op
            (aten::softmax, about 0.5 ms), step +4 %
  copy      a fixed 8 MB tensor copied into a second buffer each step: one
            more aten::copy_ per step (about 0.6 ms), step +6 %

The widening lives in the data, generated once before the run, so the
matmul variants add no op per step: only the addmm/mm times grow. --threads
sets torch.set_num_threads (1 keeps runs stable on a shared machine).
It prints "witness_us B A": a fixed matmul's time just before and just after
the profiled steps, and "sampler_us P50 P90": how long a fixed unit of work
took in a second process on the other core while the steps ran (the median
and the 90th percentile), the machine's speed by clocks outside the trace
(tests/noise/run.sh uses them to tell runs a co-tenant slowed down). The
training runs on the first core, the sampler on the second.
"""
import argparse
import gzip
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import torch
import torch.profiler as prof

FEAT = 512
HIDDEN = 512
BATCH = 32
WIDEN = {"base": 0.0, "matmul10": 0.10, "matmul25": 0.25, "one": 0.016,
         "step10": 0.14, "step25": 0.36, "softmax": 0.0, "copy": 0.0}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="trace path (.pt.trace.json[.gz])")
    p.add_argument("--variant", default="base", choices=sorted(WIDEN))
    p.add_argument("--active", type=int, default=25, help="profiled steps")
    p.add_argument("--wait", type=int, default=1)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def witness_us():
    """The machine's speed right now: the median of 9 timings of one fixed
    256x256 matmul. The same for every variant, so a run whose witness is far
    above the others' ran on a busy machine, whatever its variant does."""
    m = torch.ones(256, 256)
    times = []
    for _ in range(9):
        t0 = time.perf_counter()
        torch.mm(m, m)
        times.append(time.perf_counter() - t0)
    return sorted(times)[4] * 1e6


# The sampling witness, a process of its own on the other core for the whole run: it times one
# fixed unit of pure-Python work after another and writes every time (us) to argv[1] when told
# to stop. A co-tenant that takes the machine during the profiled steps shows as slow units.
SAMPLER = r"""
import signal, sys, time
times, stop = [], []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
while not stop:
    t0 = time.perf_counter()
    s = 0
    for i in range(20000):
        s += i
    times.append(time.perf_counter() - t0)
open(sys.argv[1], "w").write(" ".join("%.1f" % (t * 1e6) for t in times))
"""


def start_sampler(path):
    """The sampler on the last core, this process on the others (when there are two)."""
    cores = sorted(os.sched_getaffinity(0))
    pin = (lambda: os.sched_setaffinity(0, {cores[-1]})) if len(cores) > 1 else None
    proc = subprocess.Popen([sys.executable, "-c", SAMPLER, path], preexec_fn=pin)
    if len(cores) > 1:
        os.sched_setaffinity(0, set(cores[:-1]))
    return proc


def stop_sampler(proc, path):
    """The sampler's unit times: their median and 90th percentile (us)."""
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    with open(path) as f:
        t = sorted(float(x) for x in f.read().split())
    os.unlink(path)
    if not t:
        return 0.0, 0.0
    return t[len(t) // 2], t[min(len(t) - 1, int(0.9 * len(t)))]


def main(argv):
    a = parse_args(argv)
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    feat = FEAT + int(round(FEAT * WIDEN[a.variant]))
    steps = a.wait + a.warmup + a.active

    x = torch.randn(steps * BATCH, feat)
    y = torch.randint(0, 10, (steps * BATCH,))
    loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(x, y), batch_size=BATCH, shuffle=True,
        generator=torch.Generator().manual_seed(a.seed))
    model = torch.nn.Sequential(
        torch.nn.Linear(feat, HIDDEN), torch.nn.GELU(),
        torch.nn.Linear(HIDDEN, 128), torch.nn.ReLU(),
        torch.nn.Linear(128, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    # fixed extra work of the softmax and copy variants, each about +3 % of a step
    scores = torch.randn(BATCH * 24, HIDDEN) if a.variant == "softmax" else None
    stage = torch.randn(8 * HIDDEN, HIDDEN) if a.variant == "copy" else None
    shadow = torch.empty_like(stage) if a.variant == "copy" else None

    out = a.out[:-3] if a.out.endswith(".gz") else a.out
    tmp = None
    if out != a.out:
        fd, tmp = tempfile.mkstemp(suffix=".pt.trace.json")
        os.close(fd)
        out = tmp
    before = witness_us()
    fd, samples = tempfile.mkstemp(suffix=".sampler")
    os.close(fd)
    sampler = start_sampler(samples)
    sched = prof.schedule(wait=a.wait, warmup=a.warmup, active=a.active)
    with prof.profile(activities=[prof.ProfilerActivity.CPU], schedule=sched,
                      on_trace_ready=lambda p: p.export_chrome_trace(out)) as p:
        for xb, yb in loader:
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            with torch.no_grad():
                if scores is not None:
                    torch.softmax(scores, dim=1)
                if stage is not None:
                    shadow.copy_(stage)
            p.step()
    p50, p90 = stop_sampler(sampler, samples)
    # on stdout for tests/noise/run.sh: the speed just before and after, and during
    print("witness_us %.1f %.1f" % (before, witness_us()))
    print("sampler_us %.1f %.1f" % (p50, p90))
    if tmp:
        with open(tmp, "rb") as src, open(a.out, "wb") as raw:
            with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz:
                shutil.copyfileobj(src, gz)
        os.unlink(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
