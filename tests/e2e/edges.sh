#!/bin/sh
# Inputs at the edges, each a minimal fixture made here (synthetic, said so) that reproduces what
# real traces showed: an HLO proto given where a profile is due is refused naming what it is; a
# trace that names a GPU but holds no kernel records says the profiler recorded no device
# activity; a single cold-start launch call does not make a run host-bound; summarize of
# unrelated single-GPU captures says they are not one job; two runs written into one folder
# seconds apart are told apart; a history window whose records lack a group of metrics (op.*,
# memory.*) shows the candidate's metrics of it as unrecorded (never new, never judged) and
# records them.
. "$(dirname "$0")/lib/tap.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)

# ---- an HLO proto (XLA's compiled program): HloProto { hlo_module { name, entry, computation } }
python3 - "$T" <<'PY'
import sys
def ld(f, b):
    n, v = len(b), b""
    while True:
        x, n = n & 0x7F, n >> 7
        v += bytes([x | (0x80 if n else 0)])
        if not n:
            break
    return bytes([(f << 3) | 2]) + v + b
comp = ld(1, b"main.42") + ld(2, b"abc")
mod = ld(1, b"jit_train_step") + ld(2, b"main.42") + ld(3, comp)
open(sys.argv[1] + "/module.hlo_proto.pb", "wb").write(ld(1, mod))
open(sys.argv[1] + "/module.hlo.pb", "wb").write(mod)
open(sys.argv[1] + "/renamed.xplane.pb", "wb").write(ld(1, mod))
PY
for f in module.hlo_proto.pb module.hlo.pb renamed.xplane.pb; do
	pg summarize "$T/$f" -o "$T/never.json"
	check "an HLO proto ($f) is refused naming what it is: exit 3, no output" \
		sh -c "[ $rc -eq 3 ] && [ ! -e '$T/never.json' ] && grep -q 'an HLO module proto' '$T/err' && ! grep -q 'corrupt XPlane' '$T/err'"
done

# ---- Kineto captures made here (synthetic): gen.py KIND OUT
cat >"$T/gen.py" <<'PY'
import json, sys
kind, out = sys.argv[1:3]
ev, corr, ts = [], 0, 1000.0
def launch(dur, kernel_us=20.0):
    global corr, ts
    corr += 1
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
               "ts": ts, "dur": dur, "args": {"correlation": corr}})
    if kind != "no-kernels":
        ev.append({"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_nn", "pid": 0,
                   "tid": 7, "ts": ts + dur + 5, "dur": kernel_us,
                   "args": {"correlation": corr, "device": 0, "stream": 7}})
    ts += dur + 100
if kind == "cold-start":  # no step markers; the first launch takes 4.2 s (the driver loads)
    launch(4.2e6)
    for _ in range(78):
        launch(8)
elif kind == "host-bound":  # ten steps, each launching 20 kernels at 40 us a call
    for n in range(10):
        start = ts
        for _ in range(20):
            launch(40)
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % n, "pid": 1,
                   "tid": 1, "ts": start - 1, "dur": ts - start + 1})
else:  # a GPU named, CUPTI missing: only the runtime calls
    for _ in range(20):
        launch(8)
json.dump({"deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB"}],
           "traceEvents": ev}, open(out, "w"))
PY
for k in cold-start host-bound no-kernels; do python3 "$T/gen.py" $k "$T/$k.json"; done
pg summarize "$T/cold-start.json" -o "$T/cold.summary.json"
pycheck "one 4.2 s cold-start launch without step markers: no host-bound finding" \
	'd = json.load(open(sys.argv[1])); c = [x["id"] for x in d["candidates"]]' "$T/cold.summary.json" \
	'"host-bound" not in c' 'd["host"]["launch_us_total"] > 4e6'
pg summarize "$T/host-bound.json" -o "$T/hb.summary.json"
pycheck "... launches that outweigh the work step after step still are host-bound" \
	'd = json.load(open(sys.argv[1])); c = [x["id"] for x in d["candidates"]]' "$T/hb.summary.json" \
	'"host-bound" in c'
pg summarize "$T/no-kernels.json" -o "$T/nk.summary.json"
pycheck "a trace naming a GPU with no kernel records: the profiler recorded no device activity" \
	'd = json.load(open(sys.argv[1])); w = {x["code"]: x["message"] for x in d["quality"]["warnings"]}' \
	"$T/nk.summary.json" '"no-device-records" in w' \
	'"recorded no device activity" in w["no-device-records"] and "CUPTI" in w["no-device-records"]'
pg summarize "$T/host-bound.json" -o "$T/hb2.summary.json"
pycheck "... and one with kernels gets no such warning" \
	'd = json.load(open(sys.argv[1])); w = [x["code"] for x in d["quality"]["warnings"]]' \
	"$T/hb2.summary.json" '"no-device-records" not in w'

# ---- summarize A B of unrelated single-GPU captures
EX=$TOP/tests/data/examples
pg summarize "$EX/baseline.rank-0.pt.trace.json.gz" "$EX/candidate.rank-0.matmul-slower.pt.trace.json.gz" \
	-o "$T/ab.summary.json"
pycheck "two captures that both claim rank 0, read as one: not-one-job names them" \
	'd = json.load(open(sys.argv[1])); w = {x["code"]: x["message"] for x in d["quality"]["warnings"]}' \
	"$T/ab.summary.json" '"not-one-job" in w' '"both claim rank 0" in w["not-one-job"]' \
	'"baseline.rank-0" in w["not-one-job"] and "candidate.rank-0" in w["not-one-job"]'
{ cat "$T/host-bound.json"; echo; } >"$T/other-run.json" # the same run again: other bytes
pg summarize "$T/host-bound.json" "$T/other-run.json" -o "$T/rankless.summary.json"
pycheck "two rankless single-GPU captures (each GPU 0), read as one: not-one-job" \
	'd = json.load(open(sys.argv[1])); w = [x["code"] for x in d["quality"]["warnings"]]' \
	"$T/rankless.summary.json" '"not-one-job" in w'
pg summarize "$EX/baseline.rank-0.pt.trace.json.gz" -o "$T/one.summary.json"
pycheck "... one capture alone: no such warning" \
	'd = json.load(open(sys.argv[1])); w = [x["code"] for x in d["quality"]["warnings"]]' \
	"$T/one.summary.json" '"not-one-job" not in w'

# ---- two runs written into one folder 5.6 s apart (both rank 0): two captures, the newest read
mkdir -p "$T/two"
cp "$EX/baseline.rank-0.pt.trace.json.gz" "$T/two/host_111.1764230400000.pt.trace.json.gz"
cp "$EX/candidate.rank-0.matmul-slower.pt.trace.json.gz" "$T/two/host_222.1764230405600.pt.trace.json.gz"
pg inspect "$T/two"
check "two runs in one folder 5.6 s apart: two captures, the newest chosen, the split named" \
	sh -c "grep -q '^capture .@1764230400000: 1 files' '$T/out' &&
		grep -q '^capture .@1764230405600 (chosen): 1 files' '$T/out' &&
		grep -q 'written 5.6 s apart but are not one job (they name the same rank)' '$T/out'"
pg summarize "$T/two" -o "$T/two.summary.json"
pycheck "... summarize reads the newest run alone" 'd = json.load(open(sys.argv[1]))' \
	"$T/two.summary.json" '[f["path"].rsplit("/", 1)[1] for f in d["source"]["files"]] == ["host_222.1764230405600.pt.trace.json.gz"]' \
	'len(d["devices"]) == 1'
# ---- history: two nights recorded in one second keep the order they were appended in
pg summarize "$EX/baseline.rank-0.pt.trace.json.gz" -o "$T/n1.json"
pg summarize "$EX/candidate.rank-0.matmul-slower.pt.trace.json.gz" -o "$T/n2.json"
git init -q --bare "$T/h.git"
pge PROFGATE_TIME=2024-05-01T12:00:00Z GITHUB_EVENT_NAME=schedule "$PROFGATE" gate \
	-b "$T/n2.json" -c "$T/n1.json" --label same-second --history "$T/h.git"
pge PROFGATE_TIME=2024-05-01T12:00:00Z GITHUB_EVENT_NAME=schedule "$PROFGATE" gate \
	-b "$T/n1.json" -c "$T/n2.json" --label same-second --history "$T/h.git"
python3 -c 'import json, sys; print("%.2f ms" % (json.load(open(sys.argv[1]))["steps"]["steady"]["median_us"] / 1000))' \
	"$T/n1.json" >"$T/order.want"
python3 -c 'import json, sys; print("%.2f ms" % (json.load(open(sys.argv[1]))["steps"]["steady"]["median_us"] / 1000))' \
	"$T/n2.json" >>"$T/order.want"
pg history show --repo "$T/h.git"
grep 'nightly' "$T/out" | grep -oE '[0-9]+\.[0-9]+ ms' >"$T/order.got"
check "history show: records of one second in the order they were appended" \
	cmp -s "$T/order.want" "$T/order.got"
pg history baseline --repo "$T/h.git" --label same-second --records 1 -o "$T/h1.json"
pycheck "... and a window of one takes the one appended last" \
	'd = json.load(open(sys.argv[1])); c = json.load(open(sys.argv[1].replace("h1", "n2")))' "$T/h1.json" \
	'd["steps"]["steady"]["median_us"] == c["steps"]["steady"]["median_us"]'
# ---- history: metrics the records do not carry are not "new". Five nights recorded by an
# older profgate, whose records carry no op.* metric (the records here are this version's with
# them taken out), and a candidate that holds a memory peak none of the records knows of
git init -q --bare "$T/h3.git"
git init -q --bare "$T/old.git"
for night in 0 1 2 3 4; do
	pge "$PROFGATE" summarize "$EX/baseline.rank-0.pt.trace.json.gz" --warmup $night \
		-o "$T/night-$night.json"
	pge PROFGATE_TIME=2024-05-1${night}T12:00:00Z "$PROFGATE" gate -b "$T/n2.json" \
		-c "$T/night-$night.json" --label older --history "$T/h3.git" --kind nightly
done
for f in $(git -C "$T/h3.git" ls-tree -r --name-only profgate-history | grep 'jsonl$'); do
	git -C "$T/h3.git" show "profgate-history:$f"
done | python3 -c '
import json, sys
for i, line in enumerate(sys.stdin):
    r = json.loads(line)
    r["metrics"] = {k: v for k, v in r["metrics"].items() if not k.startswith("op.")}
    open("%s/old-%d.json" % (sys.argv[1], i), "w").write(json.dumps(r))
' "$T"
for f in "$T"/old-*.json; do
	pge "$PROFGATE" history append "$f" --repo "$T/old.git" -q
done
python3 -c 'import json, sys
s = json.load(open(sys.argv[1])); s["memory"]["peak_allocated_bytes"] = 2 ** 30
json.dump(s, open(sys.argv[2], "w"))' "$T/n1.json" "$T/mem.json"
git init -q --bare "$T/new.git"
pg gate -b 'history:*:5' --history-from "$T/old.git" -c "$T/mem.json" --label older \
	--fail-on warn --json "$T/older.json" --report "$T/older.md" --history "$T/new.git" --kind nightly
check "a window without op.* metrics, a candidate with a memory peak: --fail-on warn passes" \
	eval '[ "$rc" -eq 0 ]'
pycheck "... what the records do not carry is unrecorded: neither new nor judged from nothing" \
	'd = json.load(open(sys.argv[1])); v = {m["name"]: m["verdict"] for m in d["metrics"]}' "$T/older.json" \
	'v["memory.peak_allocated_bytes"] == "unrecorded"' \
	'all(x == "unrecorded" for n, x in v.items() if n.startswith("op."))' \
	'd["counts"]["new"] == 0 and d["counts"]["warn"] == 0 and d["counts"]["fail"] == 0' \
	'd["counts"]["unrecorded"] > 1' 'd["verdict"] == "pass"' \
	'not [a for a in d["attribution"] if a["kind"] == "op"]'
check "... the report says so, with no new-and-gone table" \
	sh -c "grep -q '| unrecorded |' '$T/older.md' && ! grep -q 'New and gone' '$T/older.md'"
git -C "$T/new.git" show "profgate-history:$(git -C "$T/new.git" ls-tree -r --name-only profgate-history | grep 'jsonl$')" >"$T/new.jsonl"
pycheck "... and tonight's record still carries them, so the window gains them" \
	'r = json.loads(open(sys.argv[1]).readline())' "$T/new.jsonl" \
	'r["metrics"]["memory.peak_allocated_bytes"] == 2 ** 30' \
	'any(n.startswith("op.") for n in r["metrics"])'
DLRM=$TOP/../shared/corpus/facebookresearch__param/dlrm_kineto
if [ -d "$DLRM" ]; then
	pg inspect "$DLRM"
	check "... the eight ranks of one job, 11 ms apart, stay one capture" \
		grep -q '^capture .@1694128201545 (chosen): 8 files' "$T/out"
else
	skip "the DLRM ranks (../shared/corpus absent)"
fi
done_testing
