#!/bin/sh
# Host profiles end to end (CPU-only PyTorch traces, tests/data/host): summarize gives basis
# profgate.host/1 with every step's time the span of its ProfilerStep#N event, read here from
# the trace itself, host ops and families (matmul first), the step thread's busy and idle time;
# gate of the matmul-25% run against the base runs fails and attributes matmul first (legacy
# and Kineto layouts, summaries and raw profiles, a history window of the three base runs);
# the corpus's real Kineto CPU-only trace (rank-34, 5 steps) against a copy with aten::mm made
# slower by tests/host/slow_op.py; a host-basis summary is incomparable with a device-basis
# one; merge sums the host view; report reads it; a GPU trace gets the host view beside its
# device view, shown and not judged; a data-loader wait the code added in most steps fails and
# is not taken for a slowdown from outside.
set -u
. "$(dirname "$0")/lib/tap.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
HOST=$TOP/tests/data/host
EX=$TOP/tests/data/examples
CORPUS=${PG_CORPUS:-$(git -C "$TOP" rev-parse --show-toplevel 2>/dev/null)/../shared/corpus}
RANK34=$CORPUS/facebookresearch__HolisticTraceAnalysis/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz

local_env


# The trace, read independently of profgate: ProfilerStep#N spans straight from the JSON.
cat >"$T/trace.py" <<'EOF'
import gzip, json, statistics

def trace_events(path):
    f = gzip.open(path, "rt") if path.endswith(".gz") else open(path)
    d = json.load(f)
    return d if isinstance(d, list) else d["traceEvents"]

def layout(path):
    """legacy: a bare array with integer us; kineto: an object with float us."""
    f = gzip.open(path, "rt") if path.endswith(".gz") else open(path)
    d = json.load(f)
    ev = d if isinstance(d, list) else d["traceEvents"]
    xs = [e for e in ev if isinstance(e, dict) and e.get("ph") == "X"]
    if isinstance(d, list) and all(isinstance(e["ts"], int) and isinstance(e["dur"], int) for e in xs):
        return "legacy"
    if isinstance(d, dict) and all(isinstance(e["ts"], float) for e in xs):
        return "kineto"
    return "?"

def step_events(path):
    return [e for e in trace_events(path) if isinstance(e, dict) and e.get("ph") == "X"
            and str(e.get("name", "")).startswith("ProfilerStep#")]

def spans(path):
    """{N: dur} of the ProfilerStep#N events."""
    return {int(e["name"].split("#")[1]): e["dur"] for e in step_events(path)}

def busy_union(path):
    """The step thread's busy time: the union of its events other than the markers, clipped
    to the markers' spans."""
    st = step_events(path)
    th = {(e["pid"], e["tid"]) for e in st}
    win = sorted((e["ts"], e["ts"] + e["dur"]) for e in st)
    iv = sorted((e["ts"], e["ts"] + e["dur"]) for e in trace_events(path)
                if isinstance(e, dict) and e.get("ph") == "X" and "dur" in e
                and (e.get("pid"), e.get("tid")) in th
                and not str(e.get("name", "")).startswith("ProfilerStep#"))
    runs = []
    for a, b in iv:
        if runs and a <= runs[-1][1]:
            runs[-1][1] = max(runs[-1][1], b)
        else:
            runs.append([a, b])
    return sum(max(0, min(b, w1) - max(a, w0)) for a, b in runs for w0, w1 in win)

def matmul_first(att):
    a = att[0] if att else {}
    return (a.get("kind"), a.get("name")) == ("family", "matmul") or \
        (a.get("kind"), a.get("family")) == ("op", "matmul")

def close(a, b, eps=0.0005):
    return a is not None and b is not None and abs(a - b) <= eps
EOF
# SUM_TRACE TRACE: pycheck setup with s (the summary in sys.argv[1]), st (its steps), h (host)
# and sp (TRACE's ProfilerStep#N spans).
sum_trace() {
	printf 's = json.load(open(sys.argv[1])); st = s["steps"]["all"]; h = s["host"]; exec(open("%s").read()); TR = "%s"; sp = spans(TR)' \
		"$T/trace.py" "$1"
}
# jf TITLE FILE EXPR...: python expressions over j (FILE parsed as one JSON document).
jf() {
	_t=$1
	shift
	pycheck "$_t" 'j = json.load(open(sys.argv[1])); exec(open("'"$T/trace.py"'").read())' "$@"
}
# gate_fails TITLE: the gate just run ($rc, $T/out, $T/v.json) failed on the matmul family:
# attribution[0] names matmul (the family, or one of its ops when that op is all it moved).
gate_fails() {
	jf "$1: exit 1, verdict fail, attribution[0] names matmul, family.matmul fails" "$T/v.json" \
		"$rc == 1" "open('$T/out').readline().startswith('profgate gate: fail')" \
		"j['verdict'] == 'fail' and j['exit_code'] == 1" \
		"j['provenance']['result'] == 'comparable'" \
		"matmul_first(j['attribution']) or print('attribution:', j['attribution'][:2])" \
		"{m['name']: m['verdict'] for m in j['metrics']}.get('family.matmul.us_per_step') == 'fail'"
}

# ---- summarize: every fixture, checked against its own trace ----
for f in legacy/base-1 legacy/base-2 legacy/base-3 legacy/matmul25-1 kineto/base-1 kineto/matmul25-1; do
	tr=$HOST/$f.pt.trace.json.gz
	dialect=pytorch-legacy
	case $f in kineto/*) dialect=kineto ;; esac
	pg summarize "$tr" -o "$T/s.json"
	setup=$(sum_trace "$tr")
	pycheck "$f: 25 steps, each host_us the span of its ProfilerStep#N in the trace, us == host_us" \
		"$setup" "$T/s.json" "$rc == 0" "layout(TR) == '${f%%/*}'" "len(sp) == 25" \
		"len(st) == 25 and s['identity']['steps_captured'] == 25" \
		"sorted(x['step'] for x in st) == sorted(sp)" \
		"all(close(x['host_us'], sp[x['step']]) for x in st)" \
		"all(x['us'] == x['host_us'] for x in st)" "all(x['device_us'] == [] for x in st)"
	pycheck "$f: basis profgate.host/1, device_kind cpu, framework pytorch, dialect $dialect, no no-steps warning" \
		"$setup" "$T/s.json" "s['identity']['basis'] == 'profgate.host/1'" \
		"s['identity']['device_kind'] == 'cpu' and s['identity']['device_count'] == 0" \
		"s['identity']['framework'] == 'pytorch'" \
		"s['identity']['step_source'] == 'profiler-step' and s['steps']['source'] == 'profiler-step'" \
		"[x['dialect'] for x in s['source']['files']] == ['$dialect']" \
		"'no-steps' not in [w['code'] for w in s['quality']['warnings']]"
	pycheck "$f: host.ops has aten::addmm and aten::mm in matmul; host.families has matmul first" \
		"$setup" "$T/s.json" \
		"{o['name']: o['family'] for o in h['ops']}.get('aten::addmm') == 'matmul'" \
		"{o['name']: o['family'] for o in h['ops']}.get('aten::mm') == 'matmul'" \
		"h['families'][0]['family'] == 'matmul'" \
		"[x['us_per_step'] for x in h['families']] == sorted((x['us_per_step'] for x in h['families']), reverse=True)" \
		"all(o['category'] == 'host' for o in h['ops'])"
	pycheck "$f: steady median step (and host.step_median_us) is the median of the steady steps' spans" \
		"$setup" "$T/s.json" "s['steps']['steady']['count'] == sum(x['steady'] for x in st) > 0" \
		"close(s['steps']['steady']['median_us'], statistics.median(sp[x['step']] for x in st if x['steady']))" \
		"close(h['step_median_us'], s['steps']['steady']['median_us'])"
	pycheck "$f: one step thread (role step); busy + idle == wall per step; wall is the steady spans" \
		"$setup" "$T/s.json" "h['window'] == 'steps' and h['step_threads'] == 1" \
		"[t['role'] for t in h['threads']].count('step') == 1" \
		"abs(h['busy_us_per_step'] + h['idle_us_per_step'] - h['wall_us_per_step']) <= 0.01" \
		"close(h['wall_us_total'], sum(sp[x['step']] for x in st if x['steady']), 0.01)" \
		"close(h['wall_us_per_step'], h['wall_us_total'] / s['steps']['steady']['count'], 0.01)" \
		"close(h['busy_share'], h['busy_us_total'] / h['wall_us_total'], 0.0001)" \
		"abs(h['busy_us_total'] - busy_union(TR)) <= 1e-4 * busy_union(TR)"
	# One host thread in these traces, so every op ran on the step thread: what the ops did
	# themselves (and Python frames) fits in the thread's busy time.
	pycheck "$f: the ops' self time on the step thread does not exceed its busy time" \
		"$setup" "$T/s.json" "len(h['threads']) == 1" \
		"sum(o['self_us_total'] for o in h['ops']) + h['python_us_total'] <= h['busy_us_total'] + 0.001 or print('ops self', sum(o['self_us_total'] for o in h['ops']), '+ python', h['python_us_total'], '> busy', h['busy_us_total'], 'us in total')"
	cp "$T/s.json" "$T/$(echo "$f" | tr / -).json"
done

# ---- gate: the matmul-25% run against the base run ----
for lay in legacy kineto; do
	pg gate --baseline "$HOST/$lay/base-1.pt.trace.json.gz" \
		--candidate "$HOST/$lay/matmul25-1.pt.trace.json.gz" --json "$T/v.json"
	gate_fails "$lay: gate of the raw profiles matmul25-1 vs base-1"
	pg gate --baseline "$T/$lay-base-1.json" --candidate "$T/$lay-matmul25-1.json" --json "$T/v.json"
	gate_fails "$lay: gate of the summaries matmul25-1 vs base-1"
	jf "$lay: the gate judges the host step and host ops (op.aten::mm.us_per_step)" "$T/v.json" \
		"j['step']['samples']['baseline'] == 25 and j['step']['samples']['candidate'] == 25" \
		"{m['name']: m['verdict'] for m in j['metrics']}.get('step.median_us') == 'fail'" \
		"{m['name']: m['verdict'] for m in j['metrics']}.get('op.aten::mm.us_per_step') in ('warn', 'fail')"
done

# ---- gate against a history window of the three base runs ----
git init -q --bare "$T/r.git"
for i in 1 2 3; do
	other=$((i % 3 + 1))
	pge PROFGATE_TIME=2024-05-0${i}T06:00:00Z "$PROFGATE" gate -b "$T/legacy-base-$other.json" \
		-c "$T/legacy-base-$i.json" --label host --history "$T/r.git" --kind nightly
	check "history: base-$i appended as a nightly record" grep -q '^  history: appended to host-' "$T/out"
done
pg history show --repo "$T/r.git" --json
pycheck "history: three nightly records of one host-basis series" \
	'r = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]' "$T/out" \
	"len(r) == 3 and len({x['series'] for x in r}) == 1" \
	"all(x['kind'] == 'nightly' and x['identity']['basis'] == 'profgate.host/1' for x in r)" \
	"'family.matmul.us_per_step' in r[0]['metrics']"
# Three records are three baseline samples, fewer than the default min_samples (5): a thresholds
# file that takes 3 lets the window fail the run.
python3 -c 'import json, sys; t = json.load(open(sys.argv[1])); t["min_samples"] = 3; json.dump(t, open(sys.argv[2], "w"))' \
	"$TOP/thresholds/default.json" "$T/min3.json"
pge PROFGATE_TIME=2024-05-04T06:00:00Z "$PROFGATE" gate -b 'history:*' \
	-c "$HOST/legacy/matmul25-1.pt.trace.json.gz" --label host --history "$T/r.git" \
	--thresholds "$T/min3.json" --json "$T/v.json"
jf "history:* of the three base runs (min_samples 3): matmul25-1 fails, matmul attributed first" \
	"$T/v.json" "$rc == 1" "j['verdict'] == 'fail'" \
	"len(j['baseline']['history']['records']) == 3" \
	"matmul_first(j['attribution'])" \
	"{m['name']: m['verdict'] for m in j['metrics']}.get('step.median_us') == 'fail'" \
	"{m['name']: m['verdict'] for m in j['metrics']}.get('family.matmul.us_per_step') in ('warn', 'fail')"
jf "history:* window: the matmul family's attribution names the ops that moved (aten::mm)" \
	"$T/v.json" "'aten::mm' in j['attribution'][0].get('ops', []) or print('attribution[0]:', j['attribution'][0])"
pge PROFGATE_TIME=2024-05-04T07:00:00Z "$PROFGATE" gate -b 'history:*' \
	-c "$HOST/legacy/matmul25-1.pt.trace.json.gz" --label host --history "$T/r.git" --json "$T/v.json"
jf "history:* with the default thresholds: not a pass (warn: 3 samples < 5), matmul first" \
	"$T/v.json" "$rc == 0" "j['verdict'] == 'warn'" \
	"matmul_first(j['attribution'])" \
	"{m['name']: m['verdict'] for m in j['metrics']}.get('step.median_us') == 'inconclusive'"

# ---- the corpus's real Kineto CPU-only trace ----
if [ -f "$RANK34" ]; then
	pg summarize "$RANK34" -o "$T/r34.json"
	pycheck "rank-34: 5 steps, host_us the ProfilerStep spans, basis host, no no-steps warning" \
		"$(sum_trace "$RANK34")" "$T/r34.json" "$rc == 0" "layout(TR) == 'kineto'" \
		"len(sp) == 5 and len(st) == 5" "sorted(x['step'] for x in st) == sorted(sp)" \
		"all(close(x['host_us'], sp[x['step']]) and x['us'] == x['host_us'] for x in st)" \
		"s['identity']['basis'] == 'profgate.host/1' and s['identity']['device_kind'] == 'cpu'" \
		"[x['dialect'] for x in s['source']['files']] == ['kineto']" \
		"'no-steps' not in [w['code'] for w in s['quality']['warnings']]" \
		"{o['name']: o['family'] for o in h['ops']}.get('aten::mm') == 'matmul'" \
		"[t['role'] for t in h['threads']].count('step') == 1" \
		"abs(h['busy_us_per_step'] + h['idle_us_per_step'] - h['wall_us_per_step']) <= 0.01"
	python3 "$TOP/tests/host/slow_op.py" "$RANK34" "$T/r34slow.pt.trace.json.gz" --op aten::mm \
		--factor 2 >"$T/slow.log" 2>&1
	check "slow_op.py stretches rank-34's aten::mm" grep -q '^slow_op: 80 events of aten::mm on 1 threads' "$T/slow.log"
	pg gate -b "$RANK34" -c "$T/r34slow.pt.trace.json.gz" --json "$T/v.json"
	gate_fails "rank-34 vs its copy with aten::mm 2x slower (+6% of the step)"
	jf "rank-34: op.aten::mm.us_per_step is +100%" "$T/v.json" \
		"[abs(m['delta_share'] - 1) < 0.001 for m in j['metrics'] if m['name'] == 'op.aten::mm.us_per_step'] == [True]"
else
	skip "rank-34: no corpus at $CORPUS (set PG_CORPUS to run it)"
fi

# ---- slow_op.py itself, on a legacy file: the arithmetic of the stretch ----
python3 "$TOP/tests/host/slow_op.py" "$HOST/legacy/base-1.pt.trace.json.gz" "$T/slow.pt.trace.json.gz" \
	--op aten::mm --factor 2 >"$T/slow.log" 2>&1
pycheck "slow_op.py --factor 2: aten::mm doubles, each ProfilerStep grows by the aten::mm time in it, others keep their length" \
	'exec(open("'"$T/trace.py"'").read()); a = trace_events("'"$HOST/legacy/base-1.pt.trace.json.gz"'"); b = trace_events(sys.argv[1])' \
	"$T/slow.pt.trace.json.gz" "layout(sys.argv[1]) == 'legacy' and len(a) == len(b)" \
	"[e['name'] for e in a] == [e['name'] for e in b]" \
	"all(y['dur'] == 2 * x['dur'] for x, y in zip(a, b) if x['name'] == 'aten::mm')" \
	"all(y['dur'] - x['dur'] == sum(m['dur'] for m in a if m['name'] == 'aten::mm' and x['ts'] <= m['ts'] < x['ts'] + x['dur']) for x, y in zip(a, b) if x['name'].startswith('ProfilerStep#'))" \
	"all(y['dur'] == x['dur'] for x, y in zip(a, b) if x['name'] in ('aten::gelu', 'aten::add_', 'aten::addmm'))" \
	"all(y['ts'] >= x['ts'] for x, y in zip(a, b))"
pg gate -b "$T/legacy-base-1.json" -c "$T/slow.pt.trace.json.gz" --json "$T/v.json"
gate_fails "legacy base-1 vs its copy with aten::mm 2x slower"

# ---- a host basis is never compared with a device basis ----
incomparable() {
	pg gate -b "$1" -c "$2" --json "$T/v.json"
	jf "gate $(basename "$1") vs $(basename "$2"): incomparable (exit 4), basis in the diff" "$T/v.json" \
		"$rc == 4" "j['verdict'] == 'incomparable' and j['exit_code'] == 4" \
		"j['provenance']['result'] == 'incomparable'" \
		"[sorted([d['baseline'], d['candidate']]) for d in j['provenance']['diff'] if d['field'] == 'basis'] == [['profgate.host/1', 'profgate.timeline/2']]"
}
incomparable "$T/legacy-base-1.json" "$EX/baseline.rank-0.pt.trace.json.gz"
incomparable "$EX/baseline.rank-0.pt.trace.json.gz" "$HOST/legacy/base-1.pt.trace.json.gz"

# ---- merge: two host summaries ----
pg merge "$T/legacy-base-1.json" "$T/legacy-base-2.json" -o "$T/m.json"
pycheck "merge of base-1 and base-2: step_threads 2, every host op's totals the sums" \
	'm = json.load(open(sys.argv[1])); a = json.load(open("'"$T/legacy-base-1.json"'")); b = json.load(open("'"$T/legacy-base-2.json"'")); ops = lambda s: {o["name"]: o for o in s["host"]["ops"]}' \
	"$T/m.json" "$rc == 0" "m['host']['step_threads'] == 2" \
	"set(ops(m)) == set(ops(a)) | set(ops(b))" \
	"all(abs(ops(m)[n][k] - ops(a).get(n, {}).get(k, 0) - ops(b).get(n, {}).get(k, 0)) < 0.01 for n in ops(m) for k in ('count_total', 'self_us_total', 'total_us_total'))" \
	"all(ops(m)[n]['family'] == (ops(a).get(n) or ops(b).get(n))['family'] for n in ops(m))" \
	"abs(m['host']['busy_us_total'] - a['host']['busy_us_total'] - b['host']['busy_us_total']) < 0.01" \
	"abs(m['host']['wall_us_total'] - a['host']['wall_us_total'] - b['host']['wall_us_total']) < 0.01"
pycheck "merge of host summaries: a step's time is its host time (us == host_us), the steady median is not 0" \
	'm = json.load(open(sys.argv[1]))' "$T/m.json" \
	"m['identity']['basis'] == 'profgate.host/1'" \
	"all(x['us'] == x['host_us'] for x in m['steps']['all']) or print('steps[0]:', m['steps']['all'][0])" \
	"m['steps']['steady']['median_us'] == m['host']['step_median_us'] > 0 or print('steady:', m['steps']['steady'], 'host.step_median_us:', m['host']['step_median_us'])"
pg summarize "$HOST/legacy/base-1.pt.trace.json.gz" "$HOST/legacy/base-2.pt.trace.json.gz" -o "$T/both.json"
pycheck "merge of host summaries: the host view as summarizing both files at once (window, per-step numbers)" \
	'm = json.load(open(sys.argv[1]))["host"]; w = json.load(open("'"$T/both.json"'"))["host"]' "$T/m.json" \
	"w['window'] == 'steps'" \
	"all([m[k] == w[k] or print('host.%s: merge %r, summarize of both %r' % (k, m[k], w[k])) for k in ('window', 'step_threads', 'step_median_us', 'wall_us_per_step', 'busy_us_per_step', 'idle_us_per_step', 'busy_share', 'python_us_per_step', 'launch_us_per_step')])"

# ---- report ----
pg report "$T/legacy-base-1.json"
check "report of a host summary: exit 0, steps found" \
	eval '[ "$rc" -eq 0 ] && ! grep -q "No steps found" "$T/out" && grep -q "median of 25 steady steps" "$T/out"'
check "report of a host summary: a host section with the top host op and family (aten::addmm, matmul)" \
	eval 'grep -q "aten::addmm" "$T/out" && grep -qi "matmul" "$T/out"'

# ---- a GPU trace: the host view beside the device view, shown and not judged ----
pg summarize "$EX/baseline.rank-0.pt.trace.json.gz" -o "$T/gpu.json"
pycheck "GPU example: basis profgate.timeline/2, host.window steps, one step thread" \
	's = json.load(open(sys.argv[1])); h = s["host"]' "$T/gpu.json" "$rc == 0" \
	"s['identity']['basis'] == 'profgate.timeline/2' and s['identity']['device_count'] == 1" \
	"h['window'] == 'steps' and h['step_threads'] == 1" \
	"[t['role'] for t in h['threads']].count('step') == 1" \
	"abs(h['busy_us_per_step'] + h['idle_us_per_step'] - h['wall_us_per_step']) <= 0.01" \
	"len(h['ops']) > 0 and len(s['ops']) > 0"
pg compare "$EX/baseline.rank-0.pt.trace.json.gz" "$EX/candidate.rank-0.matmul-slower.pt.trace.json.gz" \
	-o "$T/c.json"
jf "GPU compare: host.* metrics are shown, none judged (no limit or info, never warn/fail)" "$T/c.json" \
	"$rc == 0" "len([m for m in j['metrics'] if m['name'].startswith('host.')]) >= 5" \
	"any(abs(m['delta_share'] or 0) > 0.05 for m in j['metrics'] if m['name'].startswith('host.'))" \
	"all(m['limit'] is None or m['limit']['direction'] == 'info' for m in j['metrics'] if m['name'].startswith('host.'))" \
	"all(m['verdict'] not in ('warn', 'fail', 'improved') for m in j['metrics'] if m['name'].startswith('host.'))" \
	"not any(m['name'].startswith('op.aten::') for m in j['metrics'])"

# ---- a wait the code added in most steps is no slowdown from outside ----
# Generated here: twelve steps of a 0.2 ms data-loader wait, 5 ms of aten::mm and 1 ms of
# aten::add_; the candidate waits 3 ms in ten of them (its prefetched batches ran out). The
# step grows 42 % while its fastest stays, as a co-tenant's slowdown would have it, but the
# matmul, its largest part, did not slow with it: the gate fails it, naming data loading.
cat >"$T/dl.py" <<'EOF'
import json, sys
def mk(path, slow_steps, slow_us):
    ev, t = [], 0
    for i in range(12):
        dl = slow_us if i in slow_steps else 200
        dur = 100 + dl + 100 + 5000 + 100 + 1000 + 100
        ev.append({"name": "ProfilerStep#%d" % (i + 1), "ph": "X", "ts": t, "dur": dur, "pid": "CPU functions", "tid": 1, "args": {}})
        a = t + 100
        for name, d in (("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", dl), ("aten::mm", 5000), ("aten::add_", 1000)):
            ev.append({"name": name, "ph": "X", "ts": a, "dur": d, "pid": "CPU functions", "tid": 1, "args": {}})
            a += d + 100
        t += dur
    json.dump(ev, open(path, "w"))
mk(sys.argv[1], set(), 0)
mk(sys.argv[2], set(range(2, 12)), 3000)
EOF
python3 "$T/dl.py" "$T/dl-base.json" "$T/dl-cand.json"
pg gate --baseline "$T/dl-base.json" --candidate "$T/dl-cand.json" --json "$T/dl.verdict.json"
jf "a data-loader wait in 10 of 12 steps: a fail naming data loading, not slowed from outside" \
	"$T/dl.verdict.json" "$rc == 1" "j['verdict'] == 'fail'" \
	"not any(q['code'] == 'slowed' for s in ('baseline', 'candidate') for q in j['quality'][s])" \
	"any(m['name'] == 'family.data-loading.us_per_step' and m['verdict'] == 'fail' for m in j['metrics'])"

# ---- markers that give no step: said so, never "no step markers" ----
# tests/data/host/hand/unusable-markers.json: two ProfilerStep# markers and GPU kernels that no
# correlation links to them (written by hand)
pg summarize "$HOST/hand/unusable-markers.json" -o "$T/unusable.json"
pycheck "markers with no linked device work: steps-unusable says why, no false no-steps" \
	'd = json.load(open(sys.argv[1])); w = {x["code"]: x["message"] for x in d["quality"]["warnings"]}' \
	"$T/unusable.json" '"steps-unusable" in w' '"no-steps" not in w' \
	'"2 ProfilerStep# markers" in w["steps-unusable"]' 'd["steps"]["source"] == "none"' \
	'd["identity"]["basis"] == "profgate.timeline/2"'

done_testing
