#!/bin/sh
# XPlane allocator events end to end: on every corpus XPlane whose host threads carry
# MemoryAllocation / MemoryDeallocation events, each device's peak allocated and reserved bytes
# in the summary equal the maxima of the raw bytes_allocated / bytes_reserved stats, dumped by
# tests/tools/xplane_mem_dump through the protobuf-c generated code (not profgate's reader), with
# the allocator mapped to a device as xprof's memory profile maps it. Skipped without the corpus.
set -u
. "$(dirname "$0")/lib/tap.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CORPUS=${PG_CORPUS:-$(git -C "$ROOT" rev-parse --show-toplevel 2>/dev/null)/../shared/corpus}

if [ ! -d "$CORPUS" ] || [ ! -x "$TOOLS/xplane_mem_dump" ] || ! command -v python3 >/dev/null 2>&1; then
	skip "memory_xplane: needs the corpus at $CORPUS, TOOLS/xplane_mem_dump and python3"
	done_testing
	exit
fi

n=0
PG_MEM_RAW=$T/raw
export PG_MEM_RAW
for f in $(cd "$CORPUS" && find . -name '*.xplane.pb' | LC_ALL=C sort); do
	"$TOOLS/xplane_mem_dump" "$CORPUS/$f" >"$T/raw" 2>/dev/null || continue
	[ -s "$T/raw" ] || continue
	n=$((n + 1))
	pg summarize "$CORPUS/$f" -o "$T/s.json"
	if [ "$rc" -ne 0 ]; then
		not_ok "memory_xplane: summarize $f (exit $rc)"
		diag_file "$T/err"
		continue
	fi
	pycheck "memory_xplane: $f: per-device peaks equal the raw allocator stats" '
import os, re
want = {}
for line in open(os.environ["PG_MEM_RAW"]):
    plane, alloc, a, r, peak = line.rstrip("\n").split("\t")
    m = re.fullmatch(r"GPU_(\d+)_bfc", alloc)
    dev = "xla:" + m.group(1) if m else ("xla:" + alloc if alloc.isdigit() else "cpu")
    w = want.setdefault(dev, [None, None, 0])
    for i, v in ((0, int(a)), (1, int(r))):
        if v >= 0 and (w[i] is None or v > w[i]):
            w[i] = v
    w[2] += 1
s = json.load(open(sys.argv[1]))
got = {d["device"]: [d["peak_allocated_bytes"], d["peak_reserved_bytes"], d["samples_total"]]
       for d in s["memory"]["devices"]}
acc = [w[0] for d, w in want.items() if d != "cpu" and w[0] is not None]
' "$T/s.json" \
		'got == want' \
		's["memory"]["peak_allocated_bytes"] == max(acc)'
done
if [ "$n" -eq 0 ]; then
	skip "memory_xplane: no corpus XPlane carries allocator events"
fi
done_testing
