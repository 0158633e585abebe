#!/bin/sh
# Step time on the real corpus (docs/summary.md "steps"): a device's step times tile its
# timeline, so they never add up to more than its capture (every corpus file, every device),
# and its steady steps' add up to its steady wall; on HTA's pipelined rank0.json.gz the step
# time is the period at which steps follow each other (checked against an independent
# computation from the trace), the span stays as span_us; a trailing ProfilerStep the profiler
# stopped in is listed without a time and warned about; a --warmup that leaves no steady step
# is refused with exit 3.
. "$(dirname "$0")/lib/tap.sh"
# test-tier: full

TOP=$(cd "$(dirname "$0")/../.." && pwd)
CORPUS=${PG_CORPUS:-$TOP/../shared/corpus}
HTA=$CORPUS/facebookresearch__HolisticTraceAnalysis

if [ ! -f "$CORPUS/manifest.json" ]; then
	skip "corpus absent ($CORPUS)"
	done_testing
	exit $?
fi

# every valid corpus file, and the two multi-file captures
python3 - "$CORPUS" >"$T/valid" <<'PY'
import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
for f in m["files"]:
    if not f["negative"]:
        print(f["file"])
PY
echo facebookresearch__param/dlrm_kineto >>"$T/valid"
echo tensorflow__profiler >>"$T/valid"
n=0
bad=0
while read -r f; do
	n=$((n + 1))
	pg summarize "$CORPUS/$f" -o "$T/s.json"
	if [ "$rc" -ne 0 ]; then
		bad=$((bad + 1))
		diag "$f: exit $rc"
		continue
	fi
	if ! python3 - "$T/s.json" >"$T/why" 2>&1 <<'PY'; then
import json, sys
d = json.load(open(sys.argv[1]))
steps = d["steps"]["all"]
eps = 0.0005 * (len(steps) + 1)
for i, dev in enumerate(d["devices"]):
    t = [s["device_us"][i] for s in steps if s["device_us"][i] is not None]
    assert sum(t) <= dev["wall_us"] + eps, (dev["id"], sum(t), dev["wall_us"])
    if d["steps"]["source"] != "none":
        st = sum(s["device_us"][i] for s in steps if s["steady"] and s["device_us"][i] is not None)
        assert abs(st - dev["steady"]["wall_us"]) <= eps, (dev["id"], st, dev["steady"]["wall_us"])
for s in steps:
    dev = [v for v in s["device_us"] if v is not None]
    if dev:
        assert s["us"] == max(dev) and s["span_us"] is not None, s
    if s["us"] is None:
        assert not s["steady"] and s["span_us"] is None, s
PY
		bad=$((bad + 1))
		diag "$f:"
		diag_file "$T/why" 4
	fi
done <"$T/valid"
check "every corpus capture: a device's step times add up to at most its capture wall and its steady ones to its steady wall; us is the slowest device's ($n captures)" [ "$bad" -eq 0 ]

# HTA rank0.json.gz: five pipelined steps (each step's kernels start before the previous
# step's have ended). Computed here from the trace: kernels join their launch by correlation,
# a launch belongs to the ProfilerStep#N holding it; a step's span is its first kernel's start
# to its last's end, its time runs to the next step's first kernel, the last step's to the
# end of the steps' work.
pg summarize "$HTA/rank0.json.gz" -o "$T/rank0.json"
check "rank0.json.gz: step times and spans match an independent computation; tiles fill the steps' capture, spans overlap; the last step (the drain) is not steady and the steady median is the host's step within 2 %" \
	python3 - "$HTA/rank0.json.gz" "$T/rank0.json" <<'PY'
import gzip, json, re, sys
from decimal import Decimal
evs = json.loads(gzip.open(sys.argv[1]).read(), parse_float=Decimal)["traceEvents"]
d = json.load(open(sys.argv[2]))
def ns(x): return int((Decimal(str(x)) * 1000).to_integral_value())
marks, launch, kern = [], {}, []
for e in evs:
    if e.get("ph") != "X":
        continue
    m = re.fullmatch(r"ProfilerStep#(\d+)", str(e.get("name", "")))
    c = e.get("args", {}).get("correlation")
    if m:
        marks.append((int(m.group(1)), ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])))
    elif e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
        kern.append((c, ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])))
    elif c is not None:
        launch[c] = ns(e["ts"])
span = {}
for c, s, e in kern:
    t = launch.get(c)
    step = [k for k, a, b in marks if t is not None and a <= t < b]
    if step:
        lo, hi = span.get(step[0], (s, e))
        span[step[0]] = (min(lo, s), max(hi, e))
order = sorted(span, key=lambda k: span[k][0])
end = max(e for s, e in span.values())
tile = {k: (span[order[i + 1]][0] if i + 1 < len(order) else end) - span[k][0]
        for i, k in enumerate(order)}
got = {s["step"]: s for s in d["steps"]["all"]}
assert sorted(got) == sorted(span) == [550, 551, 552, 553, 554], sorted(got)
for k in span:
    assert abs(got[k]["span_us"] * 1000 - (span[k][1] - span[k][0])) < 1.5, (k, got[k])
    assert abs(got[k]["us"] * 1000 - tile[k]) < 1.5, (k, got[k], tile[k])
    assert got[k]["device_us"] == [got[k]["us"]]
wall = d["devices"][0]["wall_us"]
assert sum(s["us"] for s in got.values()) <= wall
assert sum(s["span_us"] for s in got.values()) > 1.5 * wall
# the last step holds the drain of the four before it: listed, not steady
last = max(span)
assert not got[last]["steady"] and all(got[k]["steady"] for k in span if k != last), got
assert "pipelined" in d["steps"]["warmup_reason"], d["steps"]["warmup_reason"]
period = sorted(tile[k] for k in span if k != last)
med = (period[1] + period[2]) / 2
assert abs(d["steps"]["steady"]["median_us"] * 1000 - med) < 1.5, (d["steps"]["steady"], med)
host = sorted(b - a for k, a, b in marks)[len(marks) // 2]
assert abs(med - host) < 0.02 * host, (med, host)
PY
pg report "$T/rank0.json"
check "rank0.json.gz: the report's headline is the step period (215.85 ms), not the span (375.13 ms)" \
	sh -c "[ $rc -eq 0 ] && grep -q '^\*\*Step time 215.85 ms\*\*' '$T/out'"

pg summarize "$HTA/trace_diff_test.json.gz" -o "$T/diff.json"
pycheck "trace_diff_test.json.gz: spans overlap (more than 1.2 x the capture), step times do not" \
	"d = json.load(open(sys.argv[1])); st = d['steps']['all']; w = d['devices'][0]['wall_us']" \
	"$T/diff.json" \
	"len(d['devices']) == 1 and len(st) > 1" \
	"sum(s['span_us'] for s in st) > 1.2 * w" \
	"sum(s['us'] for s in st) <= w"

# A trailing ProfilerStep with no device work: listed, not steady, warned about.
for f in facebookresearch__HolisticTraceAnalysis/trace_compare_test.json.gz \
	facebookresearch__HolisticTraceAnalysis/mi250_minitoy_train_ROCm6_2_kineto.json.gz; do
	pg summarize "$CORPUS/$f" -o "$T/cut.json"
	pycheck "$(basename "$f"): the last ProfilerStep (no device work) is listed without a time, not steady, and steps-cut names it" \
		"d = json.load(open(sys.argv[1])); st = d['steps']['all']; last = st[-1]; w = [x for x in d['quality']['warnings'] if x['code'] == 'steps-cut']" \
		"$T/cut.json" \
		"len(st) == 2 and d['identity']['steps_captured'] == 2" \
		"last['us'] is None and last['span_us'] is None and last['host_us'] > 0" \
		"last['device_us'] == [None] * len(d['devices']) and not last['steady']" \
		"st[0]['us'] is not None and st[0]['steady'] and d['steps']['steady']['count'] == 1" \
		"len(w) == 1 and str(last['step']) in w[0]['message'] and 'the last' in w[0]['message']" \
		"not [x for x in d['quality']['warnings'] if x['code'] == 'steps-missing']"
done

# --warmup that leaves no steady step: refused, one line, no file written
pg summarize --warmup 5 "$HTA/rank0.json.gz" -o "$T/none.json"
check "rank0.json.gz --warmup 5 (all 5 steps): exit 3, one line naming --warmup, no output" \
	sh -c "[ $rc -eq 3 ] && [ ! -e '$T/none.json' ] && [ \$(wc -l <'$T/err') -eq 1 ] && grep -q -- '--warmup 5 leaves no steady step' '$T/err'"
pg summarize --warmup 1 "$HTA/trace_compare_test.json.gz" -o "$T/none.json"
check "trace_compare_test.json.gz --warmup 1 (the other step is cut): exit 3, no output" \
	sh -c "[ $rc -eq 3 ] && [ ! -e '$T/none.json' ] && grep -q 'without device work' '$T/err'"
pg summarize --warmup 4 "$HTA/rank0.json.gz" -o "$T/one.json"
pycheck "rank0.json.gz --warmup 4: one steady step, the last (its time runs to the end of the work)" \
	"d = json.load(open(sys.argv[1])); st = d['steps']['all']" "$T/one.json" \
	"d['steps']['steady']['count'] == 1 and st[-1]['steady']" \
	"d['steps']['steady']['median_us'] == st[-1]['us'] == st[-1]['span_us']"
done_testing
