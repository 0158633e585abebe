#!/bin/sh
# tests/tools/slow_family, the regression injector behind the gate's tests: on a small fixture and
# on a real Kineto trace, slowing one family by P% moves that family's per-step time by P% and
# nothing else, steps grow by the time added, the warp keeps every other byte of every event, the
# output is deterministic, jitter seeds differ, and errors exit 2 (usage) or 3 (input), one line.
set -u
# test-tier: full
. "$(dirname "$0")/lib/tap.sh"

CORPUS=${PG_CORPUS:-$(git rev-parse --show-toplevel 2>/dev/null)/../shared/corpus}
IN=$CORPUS/facebookresearch__HolisticTraceAnalysis/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz
SF=$TOOLS/slow_family

if [ ! -x "$SF" ]; then
	skip "slow_family not built ($SF)"
	done_testing
	exit $?
fi

# sf ARGS...: run slow_family with stdout in $T/out, stderr in $T/err, code in $rc.
sf() {
	timeout 120 "$SF" "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
}
# fails CODE TEXT: the last run exited CODE, said TEXT (a grep pattern) in one line on stderr
# and nothing on stdout.
fails() {
	[ "$rc" -eq "$1" ] && [ "$(lines "$T/err")" -eq 1 ] && [ ! -s "$T/out" ] && grep -q -- "$2" "$T/err"
}

# ---- a hand-written Kineto trace as a top-level array: two steps, a gemm and an add each ----
cat >"$T/tiny.json" <<'JSON'
[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":1000,"dur":400},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1010,"dur":5,"args":{"correlation":1}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1020,"dur":5,"args":{"correlation":2}},
{"ph":"X","cat":"kernel","name":"ampere_sgemm_128x64_nn","pid":0,"tid":7,"ts":1100,"dur":100.5,"args":{"correlation":1,"warps per SM":2.650000}},
{"ph":"X","cat":"kernel","name":"vectorized_elementwise_kernel<4>","pid":0,"tid":7,"ts":1200.5,"dur":50,"args":{"correlation":2}},
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":1400,"dur":400},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1410,"dur":5,"args":{"correlation":3}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1420,"dur":5,"args":{"correlation":4}},
{"ph":"X","cat":"kernel","name":"ampere_sgemm_128x64_nn","pid":0,"tid":7,"ts":1500,"dur":100.5,"args":{"correlation":3}},
{"ph":"X","cat":"kernel","name":"vectorized_elementwise_kernel<4>","pid":0,"tid":7,"ts":1600.5,"dur":50,"args":{"correlation":4}},
{"ph":"i","s":"t","name":"Record Window End","pid":1,"tid":1,"ts":1900}
]
JSON

sf --family matmul --percent 50 -o "$T/tiny.out.json.gz" "$T/tiny.json"
check "tiny trace: exit 0 and the one-line report" \
	sh -c "[ $rc -eq 0 ] && [ \$(wc -l <'$T/out') -eq 1 ] && grep -qx '2 kernels of matmul slowed by 50% (+100.500 us total); 7 events shifted' '$T/out'"
check "tiny trace: an array input becomes an object with profgate_synthetic and traceEvents" \
	python3 - "$T/tiny.out.json.gz" <<'PY'
import gzip, json, sys
d = json.loads(gzip.open(sys.argv[1]).read())
assert d["profgate_synthetic"] == "slow_family --family matmul --percent 50 of tiny.json", d
ev = d["traceEvents"]
# gemm 100.5 -> 150.75 (3 decimals), the add after it starts 50.25 later, step 1 stretches
assert ev[3]["dur"] == 150.75 and ev[4]["ts"] == 1250.75, (ev[3], ev[4])
assert ev[0]["dur"] == 450.25 and ev[5]["ts"] == 1450.25 and ev[5]["dur"] == 450.25, ev[5]
assert ev[10]["ts"] == 2000.5, ev[10]
PY
check "tiny trace: numbers keep their text (2.650000 stays, 1000 stays an integer)" \
	sh -c "gzip -dc '$T/tiny.out.json.gz' | grep -q '\"warps per SM\":2.650000' && gzip -dc '$T/tiny.out.json.gz' | grep -q '\"ts\":1000,\"dur\":450.250'"
pg summarize "$T/tiny.json" -o "$T/tiny.a.json"
pg summarize "$T/tiny.out.json.gz" -o "$T/tiny.b.json"
check "tiny trace: profgate reads the output; matmul per step 100.5 -> 150.75 us, elementwise 50 us, steps 50.25 us longer" \
	python3 - "$T/tiny.a.json" "$T/tiny.b.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
fa = {f["family"]: f["us_per_step"] for f in a["families"]}
fb = {f["family"]: f["us_per_step"] for f in b["families"]}
assert fa["matmul"] == 100.5 and fb["matmul"] == 150.75, (fa, fb)
assert fa["elementwise"] == fb["elementwise"] == 50, (fa, fb)
sa, sb = a["steps"]["all"], b["steps"]["all"]
assert [s["step"] for s in sa] == [s["step"] for s in sb] == [1, 2], (sa, sb)
for x, y in zip(sa, sb):
    assert abs(y["us"] - x["us"] - 50.25) < 1e-9, (x, y)
PY

# ---- usage and input errors: exit 2 or 3, one line ----
sf --family matmull --percent 25 -o "$T/x.json.gz" "$T/tiny.json"
check "an unknown family exits 2 with one line naming the known ones" \
	fails 2 "unknown family 'matmull' (families: matmul, attention-fwd, attention-bwd, conv"
sf --family attention-bwd --percent 25 -o "$T/x.json.gz" "$T/tiny.json"
check "a family with no kernels in the file exits 2, naming the families present" \
	fails 2 "no kernels of family attention-bwd in .*tiny.json (families present: matmul, elementwise)$"
sf --family matmul --percent 25 -o "$T/x.json.gz" "$T/missing.json"
check "a missing input exits 3 with one line naming it" fails 3 "missing.json: cannot read"
printf '{"traceEvents": [' >"$T/cut.json"
sf --family matmul --percent 25 -o "$T/x.json.gz" "$T/cut.json"
check "input that is not JSON exits 3 with one line" fails 3 "cut.json: cannot read: not JSON"
sf --percent 25 -o "$T/x.json.gz" "$T/tiny.json"
check "--percent without --family exits 2 with one line" fails 2 "needs --family"
sf --family matmul -o "$T/x.json.gz" "$T/tiny.json"
check "nothing to do (no --percent, no --jitter) exits 2 with one line" fails 2 "nothing to do"
check "no failed run left an output file" sh -c "! ls '$T'/x.json.gz* >/dev/null 2>&1"

# ---- the real trace ----
if [ ! -f "$IN" ]; then
	skip "corpus absent ($IN)"
	done_testing
	exit $?
fi
# matmul: the largest named compute family there (85 gemm kernels, ~23.5 ms of a ~95.7 ms step)
FAM=matmul

sf --family "$FAM" --percent 25 -o "$T/slow.json.gz" "$IN"
cp "$T/out" "$T/slow.report"
check "$FAM +25%: exit 0 and the one-line report" \
	sh -c "[ $rc -eq 0 ] && [ \$(wc -l <'$T/out') -eq 1 ] && grep -Eqx '[0-9]+ kernels of $FAM slowed by 25% \(\+[0-9]+\.[0-9]{3} us total\); [0-9]+ events shifted' '$T/out'"
diag "$(cat "$T/slow.report")"

pg summarize "$IN" -o "$T/base.sum.json"
pg summarize "$T/slow.json.gz" -o "$T/slow.sum.json"
check "profgate summarizes the output" [ "$rc" -eq 0 ]
pg inspect --json "$IN"
mv "$T/out" "$T/base.inspect.json"
pg inspect --json "$T/slow.json.gz"
mv "$T/out" "$T/slow.inspect.json"

# The steps' growth: every step's device span grows by 25% of the FAM time that ends inside it
# (the warp inserts each extra at its kernel's end and everything after moves with it; this
# trace runs one stream and is GPU-bound, so nothing absorbs it). The median step's growth lies
# between the smallest and largest per-step growth; the 5 steps run the same kernels, measured
# 5833..5877 us against 0.25 x 23455 = 5864 us per step, so 3% is loose and still catches a warp
# that drops or doubles a step's extras.
check "$FAM +25%: us_per_step x1.25 (+-1%), counts and every other family unchanged (<1%), steady median +25% of the family's step time (+-3%)" \
	python3 - "$T/base.sum.json" "$T/slow.sum.json" "$T/base.inspect.json" "$T/slow.inspect.json" "$FAM" "$T/slow.report" <<'PY'
import json, re, sys
a, b, ia, ib = (json.load(open(p)) for p in sys.argv[1:5])
fam = sys.argv[5]
fa = {f["family"]: f for f in a["families"]}
fb = {f["family"]: f for f in b["families"]}
assert ia["files"][0]["events"] == ib["files"][0]["events"], (ia["files"][0]["events"], ib["files"][0]["events"])
assert set(fa) == set(fb), (set(fa), set(fb))
r = fb[fam]["us_per_step"] / fa[fam]["us_per_step"]
print("# %s us_per_step %.3f -> %.3f (x%.5f)" % (fam, fa[fam]["us_per_step"], fb[fam]["us_per_step"], r))
assert abs(r - 1.25) <= 0.01, r
for k in fa:
    assert fa[k]["count_total"] == fb[k]["count_total"], (k, fa[k]["count_total"], fb[k]["count_total"])
    if k != fam:
        rk = fb[k]["us_per_step"] / fa[k]["us_per_step"]
        assert abs(rk - 1) < 0.01, (k, rk)
assert len(a["steps"]["all"]) == len(b["steps"]["all"]) == 5
want = 0.25 * fa[fam]["us_per_step"]
got = b["steps"]["steady"]["median_us"] - a["steps"]["steady"]["median_us"]
print("# steady median %.3f -> %.3f: +%.3f us, expected +%.3f" % (a["steps"]["steady"]["median_us"], b["steps"]["steady"]["median_us"], got, want))
assert abs(got - want) <= 0.03 * want, (got, want)
# the report's total is 25% of the family's time over the capture (ns rounding per kernel)
total = float(re.search(r"\(\+([0-9.]+) us total\)", open(sys.argv[6]).read()).group(1))
assert abs(total - 0.25 * fa[fam]["us_total"]) < 0.001 * fa[fam]["count_total"] + 0.002, (total, fa[fam]["us_total"])
PY

# The warp on the trace itself, in exact decimals: the same events in the same order, only ts and
# dur changed, every other field and top-level key equal; shifts never negative and time order
# kept; the last event moved by the reported total.
check "$FAM +25%: only ts/dur change, no event moves back or out of order, the end moves by the reported total" \
	python3 - "$IN" "$T/slow.json.gz" "$T/slow.report" <<'PY'
import gzip, json, re, sys
from decimal import Decimal
a = json.loads(gzip.open(sys.argv[1]).read(), parse_float=Decimal)
b = json.loads(gzip.open(sys.argv[2]).read(), parse_float=Decimal)
assert b.pop("profgate_synthetic").startswith("slow_family --family matmul --percent 25 of rank-0.")
ea, eb = a.pop("traceEvents"), b.pop("traceEvents")
assert a == b
assert len(ea) == len(eb)
pts = []
for x, y in zip(ea, eb):
    assert {k: v for k, v in x.items() if k not in ("ts", "dur")} == {k: v for k, v in y.items() if k not in ("ts", "dur")}, x
    if "ts" in x:
        assert y["ts"] >= x["ts"], (x, y)
        pts.append((x["ts"], y["ts"]))
        if "dur" in x:
            assert y["dur"] >= x["dur"], (x, y)
            pts.append((x["ts"] + x["dur"], y["ts"] + y["dur"]))
pts.sort()
assert all(p[1] <= q[1] for p, q in zip(pts, pts[1:])), "time order broken"
total = Decimal(re.search(r"\(\+([0-9.]+) us total\)", open(sys.argv[3]).read()).group(1))
assert pts[-1][1] - pts[-1][0] == total, (pts[-1], total)
PY

sf --family "$FAM" --percent 25 -o "$T/slow2.json.gz" "$IN"
check "the same arguments twice give byte-identical output" cmp -s "$T/slow.json.gz" "$T/slow2.json.gz"

sf --jitter 0.02 --seed 1 -o "$T/j1.json.gz" "$IN"
r1=$rc
sf --jitter 0.02 --seed 2 -o "$T/j2.json.gz" "$IN"
r2=$rc
sf --jitter 0.02 --seed 1 -o "$T/j1b.json.gz" "$IN"
check "jitter: seeds 1 and 2 give different bytes, seed 1 twice the same" \
	sh -c "[ $r1 -eq 0 ] && [ $r2 -eq 0 ] && [ $rc -eq 0 ] && ! cmp -s '$T/j1.json.gz' '$T/j2.json.gz' && cmp -s '$T/j1.json.gz' '$T/j1b.json.gz'"
pg summarize "$T/j1.json.gz" -o "$T/j1.sum.json"
pg summarize "$T/j2.json.gz" -o "$T/j2.sum.json"
check "jitter: both summarize with the original's 5 steps; the steady median moves < 1% (noise, not a regression)" \
	python3 - "$T/base.sum.json" "$T/j1.sum.json" "$T/j2.sum.json" <<'PY'
import json, sys
a, j1, j2 = (json.load(open(p)) for p in sys.argv[1:4])
for j in (j1, j2):
    assert [s["step"] for s in j["steps"]["all"]] == [s["step"] for s in a["steps"]["all"]], j["steps"]["all"]
    m0, m1 = a["steps"]["steady"]["median_us"], j["steps"]["steady"]["median_us"]
    assert abs(m1 / m0 - 1) < 0.01, (m0, m1)
PY

sf --family attention-bwd --percent 25 -o "$T/x.json.gz" "$IN"
check "real trace: a family it has no kernels of exits 2 with one line, listing those present" \
	fails 2 "no kernels of family attention-bwd in .*(families present: matmul, conv, norm, elementwise, "
done_testing
