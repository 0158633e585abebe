#!/bin/sh
# profgate query, and the summary's memory and throughput numbers:
# - the six questions of the issue (and the topics) answer on the bundled example and on a
#   summary of every corpus profile, deterministically, with the summary's own numbers (a
#   python check compares each answer's numbers with the summary file's);
# - memory.devices[] peaks equal the maximum of `Total Allocated` / `Total Reserved` per device,
#   computed here from the raw events of every corpus trace with `[memory]` events; a trace
#   without them has null, never 0; a candidate whose allocations are 1.3 x fails the gate on
#   memory.peak_allocated_bytes, the same trace re-serialized passes it;
# - tokens_per_s = N / steady median step; MFU = FLOPs per step / (step s x peak x devices), with
#   the peak from --peak-tflops or the device table; the gate judges them (higher is better).
# The corpus parts skip cleanly without ../shared/corpus.
. "$(dirname "$0")/lib/tap.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
CORPUS=${PG_CORPUS:-$TOP/../shared/corpus}
EX=$TOP/tests/data/examples
BASE=$EX/baseline.rank-0.pt.trace.json.gz
CAND=$EX/candidate.rank-0.matmul-slower.pt.trace.json.gz

# The six questions, as the issue asks them; the topic each must map to.
QUESTIONS='What are the top 10 ops by exclusive time?|ops
Is comm or compute dominating? Which collective is worst?|breakdown
gap before OP|gaps
show hierarchical regions|regions
show context for op OP|op
What should we try next?|next'

# The checker: every answer's numbers against the summary's. argv: summary, then answer files.
cat >"$T/same.py" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
host = s["identity"]["basis"] == "profgate.host/1"
ops = {o["name"]: o for o in (s["host"]["ops"] if host else s["ops"])}
fams = {f["family"]: f for f in (s["host"]["families"] if host else s["families"])}
gaps = {g["op"]: g for g in s["gaps"]}
regions = {r["path"]: r for r in s["regions"]}
colls = {c["kind"]: c for c in s["collectives"]}
cands = [c["id"] for c in s["candidates"]]
bad = []

def same(what, rec, ref, keys):
    for k in keys:
        if rec[k] != ref[k]:
            bad.append("%s %s: %r, summary %r" % (what, k, rec[k], ref[k]))

def share(what, rec, us):
    step = s["steps"]["steady"]["median_us"]
    want = None if not step else round(us / step, 4)
    if rec["share_of_step"] is not None and want is not None and abs(rec["share_of_step"] - want) > 1e-4:
        bad.append("%s share_of_step %r, want %r" % (what, rec["share_of_step"], want))

OPK = ["family", "category", "count_per_step", "self_us_per_step", "total_us_per_step"]
GAPK = ["marker", "count_per_step", "us_per_step", "max_us"]
for path in sys.argv[2:]:
    a = json.load(open(path))
    if a["step_median_us"] != s["steps"]["steady"]["median_us"]:
        bad.append("%s: step_median_us %r" % (path, a["step_median_us"]))
    t, x = a["topic"], a["answer"]
    if t == "ops":
        selfs = [o["self_us_per_step"] for o in x["ops"]]
        if selfs != sorted(selfs, reverse=True):
            bad.append("ops: not largest first")
        for o in x["ops"]:
            same("op", o, ops[o["name"]], OPK)
            share("op", o, o["self_us_per_step"])
    elif t == "breakdown":
        for v in ("mean", "worst"):
            same("breakdown." + v, x[v], s["breakdown"][v], list(x[v]))
        for c in x["collectives"]:
            same("collective", c, colls[c["kind"]], ["count_per_step", "us_per_step", "bytes_per_step", "busbw_gbps"])
        h = s["host"]
        if h["window"] != "steps":
            if x["host"] is not None:
                bad.append("breakdown.host %r without a step thread" % (x["host"],))
        else:
            same("breakdown.host", x["host"], h, list(x["host"]))
            if sorted(x["host"]) != sorted(["wall_us_per_step", "busy_us_per_step", "idle_us_per_step", "busy_share", "python_us_per_step", "launch_us_per_step"]):
                bad.append("breakdown.host keys %r" % sorted(x["host"]))
        worst = max(s["collectives"], key=lambda c: (c["us_per_step"], [-ord(ch) for ch in c["kind"]]), default=None)
        if (worst and worst["kind"]) != x["worst_collective"]:
            bad.append("worst_collective %r, want %r" % (x["worst_collective"], worst and worst["kind"]))
    elif t == "gaps":
        for g in x["gaps"]:
            same("gap", g, gaps[g["op"]], GAPK)
            if x["before"] and x["before"] not in (g["op"], g["marker"]):
                bad.append("gap %r is not before %r" % (g["op"], x["before"]))
    elif t == "regions":
        for r in x["regions"]:
            same("region", r, regions[r["path"]], ["depth", "count_per_step", "inclusive_us_per_step", "exclusive_us_per_step"])
        paths = [r["path"] for r in x["regions"]]
        if paths != sorted(paths):
            bad.append("regions: not in path order")
    elif t == "op":
        same("op", x["op"], ops[x["op"]["name"]], OPK)
        for o in x["around"]:
            same("around", o, ops[o["name"]], OPK)
        if x["family"]:
            same("family", x["family"], fams[x["family"]["family"]], ["category", "count_per_step", "us_per_step", "share"])
        for g in x["gaps_before"]:
            same("gap", g, gaps[g["op"]], GAPK)
    elif t == "next":
        if [c["id"] for c in x["candidates"]] != cands:
            bad.append("next: candidates %r, summary %r" % ([c["id"] for c in x["candidates"]], cands))
for b in bad[:10]:
    print(b)
sys.exit(1 if bad else 0)
PY

# ask SUMMARY NAME: the six questions (OP the largest op, and the op of the largest gap) as
# JSON into $T/NAME.q<i>.json, twice each; prints what went wrong, nothing when all is well.
ask() {
	_s=$1
	_n=$2
	_op=$(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
ops = s["host"]["ops"] if s["identity"]["basis"] == "profgate.host/1" else s["ops"]
print(max(ops, key=lambda o: (o["self_us_per_step"], o["name"]))["name"] if ops else "")' "$_s")
	_gap=$(python3 -c '
import json, sys
g = json.load(open(sys.argv[1]))["gaps"]
print(g[0]["op"] if g else "nothing")' "$_s")
	_i=0
	echo "$QUESTIONS" | while IFS='|' read -r _q _topic; do
		_i=$((_i + 1))
		case $_topic in
		op) [ -n "$_op" ] || continue; _q="show context for op '$_op'" ;;
		gaps) _q="gap before '$_gap'" ;;
		esac
		for _k in 1 2; do
			"$PROFGATE" query "$_s" --question "$_q" --json >"$T/$_n.q$_i.$_k.json" 2>"$T/$_n.err"
			_rc=$?
			if [ "$_rc" -ne 0 ]; then
				echo "'$_q': exit $_rc: $(head -c 300 "$T/$_n.err")"
				continue 2
			fi
		done
		cmp -s "$T/$_n.q$_i.1.json" "$T/$_n.q$_i.2.json" || echo "'$_q': two runs differ"
		python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))
sys.exit(0 if a["topic"] == sys.argv[2] and a["question"] == sys.argv[3] else 1)' \
			"$T/$_n.q$_i.1.json" "$_topic" "$_q" || echo "'$_q': not answered as $_topic"
		python3 "$T/same.py" "$_s" "$T/$_n.q$_i.1.json" || echo "'$_q': numbers differ"
	done
}

# ---- the bundled example ----

pg summarize "$BASE" -o "$T/b.json"
check "summarize the bundled baseline" [ "$rc" -eq 0 ]
ask "$T/b.json" b >"$T/why"
if [ -s "$T/why" ]; then
	not_ok "the six questions on the bundled example: answered, deterministic, the summary's numbers"
	diag_file "$T/why" 10
else
	ok "the six questions on the bundled example: answered, deterministic, the summary's numbers"
fi

for topic in ops breakdown gaps regions next; do
	pg query "$T/b.json" "$topic" --json
	cp "$T/out" "$T/t.$topic.json"
	pg query "$T/b.json" "$topic"
	if [ "$rc" -eq 0 ] && [ -s "$T/out" ] && python3 "$T/same.py" "$T/b.json" "$T/t.$topic.json"; then
		ok "query $topic: text and JSON with the summary's numbers"
	else
		not_ok "query $topic: text and JSON with the summary's numbers"
		diag_file "$T/err"
	fi
done

# A host profile (a CPU run: no device work): the step thread's split is its breakdown, and
# gaps and regions, which are the devices', say why they are empty.
HOSTP=$TOP/tests/data/host/legacy/base-1.pt.trace.json.gz
pg summarize "$HOSTP" -o "$T/h.json"
ask "$T/h.json" h >"$T/why"
if [ "$rc" -eq 0 ] && [ ! -s "$T/why" ]; then
	ok "the six questions on a host profile: answered, deterministic, the summary's numbers"
else
	not_ok "the six questions on a host profile: answered, deterministic, the summary's numbers"
	diag_file "$T/why" 10
fi
pg query "$T/h.json" breakdown
cp "$T/out" "$T/h.breakdown.txt"
pg query "$T/h.json" breakdown --json
pycheck "breakdown of a host profile: the step thread's busy and idle time, the summary's numbers" \
	"a = json.load(open('$T/out'))['answer']; h = json.load(open('$T/h.json'))['host']; t = open('$T/h.breakdown.txt').read()" \
	"a['dominant'] is None and a['host']['busy_share'] == h['busy_share'] > 0" \
	"a['host']['idle_us_per_step'] == h['idle_us_per_step']" \
	"t.startswith('no device work (a host profile)')" \
	"'host step thread: busy ' in t and ' (%.1f%%), idle ' % (100 * h['busy_share']) in t"
pg query "$T/h.json" gaps
check "gaps of a host profile: none, and why" sh -c '[ '"$rc"' -eq 0 ] && grep -q "^0 gaps" "$1" && grep -q "a host profile has none" "$1"' _ "$T/out"
pg query "$T/h.json" regions
check "regions of a host profile: none, and why" sh -c '[ '"$rc"' -eq 0 ] && grep -q "^0 regions" "$1" && grep -q "a host profile has none" "$1"' _ "$T/out"
# A host profile made here: six 10 ms steps, each 5 ms of aten::mm and 1 ms of aten::add_ with
# 4 ms between and after them. What to try next: the step thread's waits (the host's ops are
# every thread's, so none is the step's dominant op).
python3 -c '
import json, sys
ev = []
for i in range(6):
    t = i * 10000
    ev.append({"name": "ProfilerStep#%d" % (i + 1), "ph": "X", "ts": t, "dur": 10000, "pid": "CPU functions", "tid": 1, "args": {}})
    ev.append({"name": "aten::mm", "ph": "X", "ts": t + 100, "dur": 5000, "pid": "CPU functions", "tid": 1, "args": {}})
    ev.append({"name": "aten::add_", "ph": "X", "ts": t + 5200, "dur": 1000, "pid": "CPU functions", "tid": 1, "args": {}})
json.dump(ev, open(sys.argv[1], "w"))' "$T/idle.json"
pg summarize "$T/idle.json" -o "$T/idle.sum.json"
pycheck "a host profile's candidates: a step thread idle 40 % of its wall" \
	"s = json.load(open('$T/idle.sum.json')); c = {x['id']: x for x in s['candidates']}; h = s['host']" \
	"s['identity']['basis'] == 'profgate.host/1' and h['busy_share'] == 0.6" \
	"sorted(c) == ['host-idle']" \
	"'idle 40.0% of its 10000.000 us wall per step (4000.000 us between its ops)' in c['host-idle']['evidence']"
pycheck "the host fixture's CPU training run: its step thread is not idle, no candidate" \
	"s = json.load(open('$T/h.json')); c = [x['id'] for x in s['candidates']]" \
	"c == [] and 1 - s['host']['busy_share'] < 0.15"
pg query "$T/b.json" breakdown
check "a device profile's breakdown names its host step thread too" sh -c 'grep -q "^compute dominates" "$1" && grep -q "^host step thread: busy " "$1"' _ "$T/out"

pg query "$T/b.json" ops --family norm --top 3 --json
pycheck "ops --family norm --top 3: three norm ops, the largest" "a = json.load(open('$T/out'))['answer']" \
	"len(a['ops']) == 3" "all(o['family'] == 'norm' for o in a['ops'])" "a['matched'] >= 3"

pg query "$BASE" ops --top 2
cp "$T/out" "$T/from-profile.txt"
pg query "$T/b.json" ops --top 2
check "a profile is summarized first: the same answer as from its summary" cmp -s "$T/out" "$T/from-profile.txt"

pg query "$T/b.json" --question "how are you?"
check "a question no row maps: exit 2, the topics listed" \
	sh -c '[ '"$rc"' -eq 2 ] && grep -q "ops.*breakdown.*gaps.*regions.*op NAME.*next" "$1" && [ ! -s "$2" ]' _ "$T/err" "$T/out"
pg query "$T/b.json" bogus
check "an unknown topic: exit 2" [ "$rc" -eq 2 ]
pg query "$T/b.json" op bn_bw_1C11_kernel_new
check "a part of two ops' names: exit 2, both named" \
	sh -c '[ '"$rc"' -eq 2 ] && [ "$(grep -o "bn_bw_1C11_kernel_new" "$1" | wc -l)" -ge 3 ]' _ "$T/err"
pg query "$T/b.json" op no-such-op-anywhere
check "an op no name holds: exit 2" [ "$rc" -eq 2 ]
pg query "$T/b.json" gaps --before "Memcpy DtoD (Device -> Device)" --json
pycheck "gaps --before OP: the gaps whose op or marker is OP" "a = json.load(open('$T/out'))['answer']" \
	"len(a['gaps']) >= 1" "all('Memcpy DtoD (Device -> Device)' in (g['op'], g['marker']) for g in a['gaps'])" \
	"all(g['matched'] in ('op', 'marker') for g in a['gaps'])"

# ---- throughput ----

pg summarize "$BASE" --tokens-per-step 4096 --samples-per-step 8 --model-flops-per-step 2.5e14 \
	--peak-tflops 100 -o "$T/tp.json"
pycheck "tokens_per_s = N / steady median step; MFU = F / (step s x peak x devices)" \
	"s = json.load(open('$T/tp.json')); t = s['throughput']; st = s['steps']['steady']['median_us'] * 1e-6
dev = s['identity']['world_size'] if (s['identity']['world_size'] or 0) > s['identity']['device_count'] else s['identity']['device_count']" \
	"t['tokens_per_step'] == 4096 and t['samples_per_step'] == 8" \
	"abs(t['tokens_per_s'] - 4096 / st) <= 1e-3" "abs(t['samples_per_s'] - 8 / st) <= 1e-3" \
	"t['devices'] == dev" "abs(t['mfu'] - 2.5e14 / (st * 100e12 * dev)) <= 1e-4" \
	"t['peak_source'] == '--peak-tflops' and t['peak_tflops_per_device'] == 100"
pg summarize "$BASE" --model-flops-per-step 2.5e14 --peak-dtype fp16 -o "$T/tp16.json"
pycheck "the peak from the device table (V100 fp16: 125 TFLOP/s)" \
	"s = json.load(open('$T/tp16.json')); t = s['throughput']; st = s['steps']['steady']['median_us'] * 1e-6" \
	"'V100' in s['identity']['device_kind']" "t['peak_tflops_per_device'] == 125" \
	"t['peak_source'].startswith('V100 fp16 dense')" "abs(t['mfu'] - 2.5e14 / (st * 125e12)) <= 1e-4"
pycheck "without declarations: no rates, null (V100 has no bf16 peak)" \
	"t = json.load(open('$T/b.json'))['throughput']" \
	"t['tokens_per_s'] is None and t['mfu'] is None and t['peak_tflops_per_device'] is None"
pg summarize "$BASE" --tokens-per-step 0
check "--tokens-per-step 0: refused, exit 2" [ "$rc" -eq 2 ]
pg summarize "$CAND" --tokens-per-step 4096 -o "$T/tpc.json"
pg gate --baseline "$T/tp.json" --candidate "$T/tpc.json" --json "$T/v.json"
pycheck "the gate judges tokens_per_s, higher is better: the slower candidate is worse" \
	"m = {x['name']: x for x in json.load(open('$T/v.json'))['metrics']}" \
	"m['throughput.tokens_per_s']['limit']['direction'] == 'higher'" \
	"m['throughput.tokens_per_s']['delta'] < 0" "m['throughput.tokens_per_s']['verdict'] != 'improved'"

# ---- memory ----

pycheck "a trace without memory events: memory null, never 0" \
	"m = json.load(open('$T/b.json'))['memory']" \
	"m['peak_allocated_bytes'] is None and m['peak_reserved_bytes'] is None and m['devices'] == []"

if [ ! -d "$CORPUS" ]; then
	skip "corpus: no ../shared/corpus (set PG_CORPUS): memory peaks and the questions on it"
	done_testing
	exit
fi

# Every corpus trace with [memory] events: the peaks computed here from the raw events (events
# with no total, an older Kineto's, make none: such a trace has null, never 0).
python3 - "$CORPUS" "$T/mem" <<'PY'
import gzip, json, os, sys
corpus, out = sys.argv[1], sys.argv[2]
os.makedirs(out)
names = {0: "cpu", 1: "cuda", 6: "hip", 9: "xla", 12: "xpu", 13: "mps", 19: "mtia"}
for dirpath, _, files in sorted(os.walk(corpus)):
    for f in sorted(files):
        path = os.path.join(dirpath, f)
        if not (f.endswith(".json") or f.endswith(".json.gz")):
            continue
        raw = (gzip.open if f.endswith(".gz") else open)(path, "rb").read()
        if b"[memory]" not in raw:
            continue
        try:
            d = json.loads(raw)
        except ValueError:
            continue
        ev = d["traceEvents"] if isinstance(d, dict) else d
        peaks = {}
        for e in ev:
            if e.get("name") != "[memory]" or e.get("ph") not in ("i", "I"):
                continue
            a = e.get("args", {})
            if "Total Allocated" not in a and "Total Reserved" not in a:
                continue  # an older Kineto's "Bytes" alone: a change, no total
            t, i = a.get("Device Type", -1), a.get("Device Id", -1)
            key = "cpu" if t == 0 else ("%s:%d" % (names.get(t, "type%d" % t), i) if i >= 0 else names.get(t, "type%d" % t))
            p = peaks.setdefault(key, [-1, -1])
            p[0] = max(p[0], a.get("Total Allocated", -1))
            p[1] = max(p[1], a.get("Total Reserved", -1))
        name = os.path.relpath(path, corpus).replace("/", "_")
        json.dump({"path": path, "peaks": peaks}, open(os.path.join(out, name + ".want"), "w"))
PY
n_mem=0
for want in "$T"/mem/*.want; do
	[ -f "$want" ] || continue
	n_mem=$((n_mem + 1))
	path=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["path"])' "$want")
	pg summarize "$path" -o "$T/m.json"
	pycheck "memory peaks per device = max Total Allocated / Reserved: ${path#"$CORPUS"/}" \
		"w = json.load(open('$want'))['peaks']; m = json.load(open('$T/m.json'))['memory']
got = {d['device']: [d['peak_allocated_bytes'], d['peak_reserved_bytes']] for d in m['devices']}
acc = [v[0] for k, v in w.items() if k != 'cpu']" \
		"got == {k: [None if v[0] < 0 else v[0], None if v[1] < 0 else v[1]] for k, v in w.items()}" \
		"m['peak_allocated_bytes'] == (max(acc) if acc else None)"
done
if [ "$n_mem" -eq 0 ]; then
	not_ok "the corpus holds traces with [memory] events"
fi

# The 1.3 x candidate and the re-serialized one, from the TraceLens H100 Qwen trace.
QWEN=$CORPUS/AMD-AGI__TraceLens/h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz
if [ -f "$QWEN" ]; then
	python3 - "$QWEN" "$T/same.trace.json" "$T/scaled.trace.json" <<'PY'
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1]))
json.dump(d, open(sys.argv[2], "w"))
for e in d["traceEvents"]:
    if e.get("name") == "[memory]":
        e["args"]["Total Allocated"] = int(e["args"]["Total Allocated"] * 1.3)
json.dump(d, open(sys.argv[3], "w"))
PY
	pg gate --baseline "$QWEN" --candidate "$T/scaled.trace.json" --json "$T/vm.json"
	pycheck "allocations x 1.3: the gate fails on memory.peak_allocated_bytes" \
		"v = json.load(open('$T/vm.json')); m = {x['name']: x for x in v['metrics']}" \
		"v['verdict'] == 'fail'" "m['memory.peak_allocated_bytes']['verdict'] == 'fail'" \
		"m['memory.peak_allocated_bytes']['baseline'] == 2088508416" \
		"abs(m['memory.peak_allocated_bytes']['delta_share'] - 0.3) < 1e-3"
	pg gate --baseline "$QWEN" --candidate "$T/same.trace.json" --json "$T/vs.json"
	pycheck "the same trace re-serialized: memory passes" \
		"m = {x['name']: x for x in json.load(open('$T/vs.json'))['metrics']}" \
		"m['memory.peak_allocated_bytes']['verdict'] == 'pass'" \
		"m['memory.peak_allocated_bytes']['delta'] == 0"
else
	skip "the TraceLens H100 Qwen trace is not in the corpus"
fi

# The six questions on a summary of every corpus profile.
python3 -c '
import json, sys
for r in json.load(open(sys.argv[1] + "/manifest.json"))["files"]:
    if not r.get("negative"):
        print(r["file"])' "$CORPUS" >"$T/corpus.list"
: >"$T/why"
n=0
while read -r f; do
	[ -f "$CORPUS/$f" ] || continue
	n=$((n + 1))
	if ! "$PROFGATE" summarize -q "$CORPUS/$f" -o "$T/c.json" 2>"$T/c.err"; then
		continue # a profile summarize refuses is summarize's tests' business
	fi
	ask "$T/c.json" "c$n" | sed "s|^|$f: |" >>"$T/why"
done <"$T/corpus.list"
if [ -s "$T/why" ]; then
	not_ok "the six questions on every corpus summary ($n): answered, deterministic, the summary's numbers"
	diag_file "$T/why" 20
else
	ok "the six questions on every corpus summary ($n): answered, deterministic, the summary's numbers"
fi

done_testing
