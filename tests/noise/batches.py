#!/usr/bin/env python3
"""The targets table over several `make noise` batches, one block of rows per batch, as
docs/noise.md publishes it:

  python3 tests/noise/batches.py [--thresholds default] OUT...

OUT: a folder table.py wrote (table.json and pairs.jsonl): build/noise for the last batch, or a
batch's build/noise/runs/STAMP, where run.sh keeps a copy. Each batch's first cell says when its
runs were made, how many were disturbed and the load.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import table  # noqa: E402


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--thresholds", default="default")
    p.add_argument("out", nargs="+")
    a = p.parse_args(argv)
    head = None
    for d in a.out:
        if not os.path.exists(os.path.join(d, "pairs.jsonl")):
            print("batches: %s: no pairs.jsonl (not gated yet), left out" % d, file=sys.stderr)
            continue
        with open(os.path.join(d, "table.json")) as f:
            meta = json.load(f)
        with open(os.path.join(d, "pairs.jsonl")) as f:
            pairs = [json.loads(line) for line in f]
        modes = []
        for x in pairs:
            if x["mode"] not in modes:
                modes.append(x["mode"])
        runs = meta["runs"]
        seed = meta["settings"].split("seed=")[1].split()[0]
        t0 = min(r["start"] for r in runs)
        what = "%s, %s UTC: %d of %d runs disturbed, load %.1f–%.1f" % (
            seed, table.utc(t0, "%Y-%m-%d %H:%M"), sum(r["disturbed"] for r in runs), len(runs),
            min(r["load"] for r in runs), max(r["load"] for r in runs))
        rows = table.targets(pairs, a.thresholds, modes)
        if head is None:
            head = rows[:2]
            print("| batch " + head[0])
            print("|---" + head[1])
        for i, row in enumerate(rows[2:]):
            print("| %s %s" % (what if i == 0 else "", row))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
