#!/bin/sh
# profgate summarize on the real corpus: every valid trace summarizes with the split
# invariant on every device; host step spans equal the files' ProfilerStep#N spans; the
# DLRM ranks, the TPU XPlane and the TensorFlow two-host folder give what issue C says;
# output is deterministic across runs and thread counts.
. "$(dirname "$0")/lib/tap.sh"
# test-tier: full

TOP=$(cd "$(dirname "$0")/../.." && pwd)
CORPUS=${PG_CORPUS:-$TOP/../shared/corpus}

pg summarize --help
check "summarize --help exits 0 with usage" sh -c "[ $rc -eq 0 ] && grep -q 'usage: profgate summarize' '$T/out'"
pg summarize
check "summarize with no input exits 2" [ "$rc" -eq 2 ]
pg summarize --warmup x "$T"
check "a bad --warmup exits 2" [ "$rc" -eq 2 ]
pg summarize --label nokey "$T"
check "a --label without '=' exits 2" [ "$rc" -eq 2 ]
printf 'garbage' >"$T/bad.json"
pg summarize "$T/bad.json" -o "$T/never.json"
check "unreadable input exits 3 and writes no output file" sh -c "[ $rc -eq 3 ] && [ ! -e '$T/never.json' ]"

pg report "$T/bad.json"
check "report of a file that is not a summary exits 3 with one line" \
	sh -c "[ $rc -eq 3 ] && [ \$(wc -l <'$T/err') -eq 1 ] && grep -q 'not JSON\|not a profgate summary\|not a profile' '$T/err'"
printf '{"schema": "profgate.summary/9"}' >"$T/future.json"
pg report "$T/future.json"
check "report refuses another schema, naming it" sh -c "[ $rc -eq 3 ] && grep -q 'profgate.summary/9' '$T/err'"

# marin's profile_summary.v1 is read as a summary, its basis recorded
cat >"$T/marin.json" <<'JSON'
{"schema_version": "profile_summary.v1", "source_path": "perfetto_trace.json.gz",
 "run_metadata": {"hardware_type": "TPU v5e", "num_devices": 8, "num_hosts": 2, "run_id": "abc"},
 "trace_overview": {"num_events_total": 18, "quality_warnings": ["<b>@team</b> look"]},
 "trace_provenance": {"trace_sha256": "aaaa"},
 "step_time": {"warmup_steps_ignored": 2, "steady_state_steps": {"count": 4, "mean": 135.0,
   "median": 135.0, "p90": 147.0, "min": 120.0, "max": 150.0}},
 "time_breakdown": {"duration_basis": "exclusive_duration_global_timeline", "total_duration": 310.0,
   "compute": {"share_of_total": 0.3871}, "communication": {"share_of_total": 0.1935}},
 "hot_ops": [{"name": "fusion.1", "canonical_name": "fusion", "category": "compute", "count": 4,
   "total_duration": 100.0, "exclusive_duration": 60.0}],
 "hierarchical_regions": [{"path": "train=>block", "depth": 2, "count": 1,
   "inclusive_duration": 60.0, "exclusive_duration": 60.0}]}
JSON
pg report "$T/marin.json"
check "marin's profile_summary.v1 is read: step time, basis recorded, its text escaped" \
	sh -c "[ $rc -eq 0 ] && grep -q 'Step time 135.0 us' '$T/out' && grep -q 'marin.profile_summary.v1/exclusive_duration_global_timeline' '$T/out' && grep -q 'train/block' '$T/out' && ! grep -q '<b>' '$T/out'"
pg merge "$T/marin.json" "$T/marin.json"
check "merge refuses marin summaries (no per-device data), exit 2" \
	sh -c "[ $rc -eq 2 ] && grep -q 'profile_summary.v1' '$T/err'"

# The trace of marin's basic profile_summary test, made here: on the TPU's XLA Ops line
# fusion.1 0..100 encloses all-reduce.1 20..60. The fusion's own 60 us (0..20, 60..100) are
# compute, not idle: over the capture 0..250, busy 100 + 60 + 30 + 20 = 210, compute 170, the
# all-reduce's 40 exposed (the fusion's own time stops where it starts).
python3 - "$T/marin-basic.json" <<'PY'
import json, sys
ev = [{"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:TPU:0"}},
      {"ph": "M", "pid": 1, "tid": 1, "name": "thread_name", "args": {"name": "Steps"}},
      {"ph": "M", "pid": 1, "tid": 2, "name": "thread_name", "args": {"name": "XLA Ops"}}]
for i, d in enumerate([100, 110, 120, 130, 140, 150]):
    ev.append({"ph": "X", "pid": 1, "tid": 1, "name": str(i), "ts": i * 1000, "dur": d})
for name, ts, dur in (("fusion.1", 0, 100), ("all-reduce.1", 20, 40), ("softmax", 120, 60),
                      ("dependency-wait", 190, 30), ("psum.1", 230, 20)):
    ev.append({"ph": "X", "pid": 1, "tid": 2, "name": name, "ts": ts, "dur": dur})
json.dump({"displayTimeUnit": "ns", "traceEvents": ev}, open(sys.argv[1], "w"))
PY
pg summarize "$T/marin-basic.json" -o "$T/marin-basic.summary.json"
check "a parent XLA op's own time is busy compute, not idle (marin's basic fixture)" \
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["devices"][0]
want = {"wall_us": 250, "busy_us": 210, "idle_us": 40, "compute_us": 170,
        "exposed_comm_us": 40, "comm_us": 40, "kernel_sum_us": 210}
assert {k: d[k] for k in want} == want, {k: d[k] for k in want}
' "$T/marin-basic.summary.json"

# source.files[].sha256 is each file's SHA-256, one file or many, a byte-identical copy too:
# a lone file's digest finishes beside the analysis, many files' beside each other's reading
EX=$TOP/tests/data/examples
mkdir -p "$T/ex"
cp "$EX"/*.pt.trace.json.gz "$T/ex/"
cp "$EX/baseline.rank-0.pt.trace.json.gz" "$T/ex/copy.rank-0.pt.trace.json.gz"
for input in "$T/ex/kineto_mi250_minitoy.pt.trace.json.gz" "$T/ex"; do
	pg summarize "$input" -o "$T/sha.json"
	check "summarize $(basename "$input"): every source file's sha256 is its SHA-256" \
		python3 -c '
import hashlib, json, sys
d = json.load(open(sys.argv[1]))
fs = d["source"]["files"]
assert fs, "no files"
for f in fs:
    assert f["sha256"] == hashlib.sha256(open(f["path"], "rb").read()).hexdigest(), f["path"]
' "$T/sha.json"
done

# two ranks of one GPU model, one with ProfilerStep# markers and one without: not one capture
rank() { # rank FILE N WITH_STEP
	step=
	[ "$3" = 1 ] && step='{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":900,"dur":2000},'
	cat >"$1" <<JSON
{"distributedInfo": {"backend": "nccl", "rank": $2, "world_size": 2},
 "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB"}],
 "traceEvents": [$step
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1000,"dur":50},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1010,"dur":5,"args":{"correlation":1}},
{"ph":"X","cat":"kernel","name":"ampere_sgemm_128x64_nn","pid":0,"tid":7,"ts":1100,"dur":500,"args":{"correlation":1,"device":0}}
]}
JSON
}
rank "$T/rank0.json" 0 1
rank "$T/rank1.json" 1 0
pg summarize "$T/rank0.json" "$T/rank1.json" -o "$T/ranks.json"
check "ranks whose step markers differ (ProfilerStep# and none): exit 4, naming both" \
	sh -c "[ $rc -eq 4 ] && grep -q 'rank0.json.*step markers profiler-step.*rank1.json.*step markers none' '$T/err'"
rank "$T/rank1.json" 1 1
pg summarize "$T/rank0.json" "$T/rank1.json" -o "$T/ranks.json"
check "... and with markers on both: one capture of two devices" \
	sh -c "[ $rc -eq 0 ] && python3 -c \"
import json
d=json.load(open('$T/ranks.json'))
assert d['identity']['device_count']==2 and d['identity']['device_kind']=='NVIDIA A100-SXM4-80GB', d['identity']
\""

if [ ! -f "$CORPUS/manifest.json" ]; then
	skip "corpus absent ($CORPUS)"
	done_testing
	exit $?
fi

python3 - "$CORPUS" >"$T/valid" <<'PY'
import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
for f in m["files"]:
    if not f["negative"]:
        print(f["file"])
PY
n=0
bad=0
bad_shares=0
while read -r f; do
	n=$((n + 1))
	pg summarize "$CORPUS/$f" -o "$T/s.json"
	if [ "$rc" -ne 0 ]; then
		bad=$((bad + 1))
		diag "$f: exit $rc"
		diag_file "$T/err"
		continue
	fi
	# every share the summary writes: what it is of, that the split adds up, null where undefined
	"$PROFGATE" report "$T/s.json" -o "$T/s.md"
	if ! python3 - "$T/s.json" "$T/s.md" >"$T/why" 2>&1 <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
md = open(sys.argv[2]).read()
R = 0.00031  # four shares rounded to 4 decimals
steady = [x for x in d["devices"] if x["steady"]["wall_us"] > 0]
assert d["per_step_basis"]["devices"] == len(steady), (d["per_step_basis"], len(steady))
def parts(v): return [v[k] for k in ("compute_share", "exposed_comm_share", "exposed_memcpy_share", "idle_share")]
bd = d["breakdown"]
for view in ("mean", "worst"):
    p = parts(bd[view])
    if not steady:
        assert p == [None] * 4 and bd[view]["comm_overlap_share"] is None, (view, bd[view])
        assert bd[view]["kernel_sum_minus_wall_us_per_step"] is None
        continue
    assert None not in p and all(0 <= x <= 1 for x in p), (view, p)
    assert abs(sum(p) - 1) <= R, (view, sum(p))
if steady:
    # the mean is over the devices with a steady window, of each device's shares
    for i, k in enumerate(("compute_us", "exposed_comm_us", "exposed_memcpy_us", "idle_us")):
        want = sum(x["steady"][k] / x["steady"]["wall_us"] for x in steady) / len(steady)
        assert abs(parts(bd["mean"])[i] - want) < 0.0002, (k, parts(bd["mean"])[i], want)
    comm = [x["steady"] for x in steady if x["steady"]["comm_us"] > 0]
    ov = bd["mean"]["comm_overlap_share"]
    if comm:
        want = sum((c["comm_us"] - c["exposed_comm_us"]) / c["comm_us"] for c in comm) / len(comm)
        assert ov is not None and abs(ov - want) < 0.0002, (ov, want)
    else:
        assert ov is None, ov
    assert bd["worst_device"] in [x["id"] for x in steady], bd["worst_device"]
    assert "0.0 us | 0.0% | 0.0% | 0.0% | 0.0%" not in md
    # the report's split is breakdown.mean: it adds up to 100 %
    m = re.search(r"Where the time goes \(mean over [^)]*\): compute ([0-9.]+)%, exposed communication ([0-9.]+)%, exposed memory copies ([0-9.]+)%, idle ([0-9.]+)%", md)
    assert m, "no time split line"
    assert abs(sum(float(x) for x in m.groups()) - 100) <= 0.21, m.group(0)
# family shares: of the steady median step, null without one; the report says why they do not add up
step = d["steps"]["steady"]["median_us"] if d["steps"]["steady"]["count"] else None
total = 0
for fam in d["families"]:
    if not step:
        assert fam["share"] is None, fam
        continue
    assert fam["share"] is not None and abs(fam["share"] - fam["us_per_step"] / step) <= 0.00005 + 1e-9, fam
    total += fam["share"]
if step and d["families"] and abs(total - 1) >= 0.0005:
    assert "The families add up to %.1f%% of the step, not 100%%" % (100 * total) in md, total
h = d["host"]
for fam in h["families"]:
    assert (fam["share"] is None) == (h["wall_us_per_step"] is None), fam
PY
	then
		bad_shares=$((bad_shares + 1))
		diag "$f (shares):"
		diag_file "$T/why" 8
	fi
	if ! python3 - "$T/s.json" "$CORPUS/$f" >"$T/why" 2>&1 <<'PY'
import gzip, hashlib, json, re, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "profgate.summary/1"
assert len(d["source"]["files"]) == 1
# the digest runs on beside the analysis and is filled in after it
assert d["source"]["files"][0]["sha256"] == hashlib.sha256(open(sys.argv[2], "rb").read()).hexdigest()
for dev in d["devices"]:
    for x in (dev, dev["steady"]):
        s = x["compute_us"] + x["exposed_comm_us"] + x["exposed_memcpy_us"] + x["idle_us"]
        assert abs(s - x["wall_us"]) < 0.002, (dev["id"], s, x["wall_us"])
        assert x["busy_us"] <= x["wall_us"] + 0.001
# the worst device's shares add up (a device's split does, above)
w = d["breakdown"].get("worst")
if w and any(v["id"] == d["breakdown"].get("worst_device") and v["steady"]["wall_us"] > 0 for v in d["devices"]):
    s = w["compute_share"] + w["exposed_comm_share"] + w["exposed_memcpy_share"] + w["idle_share"]
    assert abs(s - 1) < 0.0003, ("worst shares", s)
# every op is counted under the family and category it is listed with: the families are
# the sums of their ops, and collectives are communication families
fams = {f["family"]: f for f in d["families"]}
by_fam = {}
for o in d["ops"]:
    if o["name"] == "(other ops)":
        continue
    assert o["family"] in fams, (o["name"], o["family"])
    assert o["category"] == fams[o["family"]]["category"], (o["name"], o["category"])
    by_fam[o["family"]] = by_fam.get(o["family"], 0) + o["self_us_total"]
if not any(o["name"] == "(other ops)" for o in d["ops"]):
    for name, f in fams.items():
        assert abs(by_fam.get(name, 0) - f["us_total"]) < 0.001 * (1 + len(d["ops"])), (name, by_fam.get(name), f["us_total"])
for c in d["collectives"]:
    k = "collective-other" if c["kind"] == "other" else c["kind"]
    assert k not in fams or fams[k]["category"] == "communication", k
# host step spans equal the ProfilerStep#N events in the file
if d["steps"]["source"] == "profiler-step":
    p = sys.argv[2]
    raw = (gzip.open(p) if p.endswith(".gz") else open(p, "rb")).read()
    doc = json.loads(raw)
    evs = doc["traceEvents"] if isinstance(doc, dict) else doc
    want = {}
    for e in evs:
        n = e.get("name", "")
        if e.get("ph") == "X" and isinstance(n, str) and re.fullmatch(r"ProfilerStep#\d+", n):
            want[int(n[13:])] = max(want.get(int(n[13:]), 0), float(e["dur"]))
    for st in d["steps"]["all"]:
        assert st["step"] in want, st["step"]
        assert abs(st["host_us"] - want[st["step"]]) < 0.0015, (st["step"], st["host_us"], want[st["step"]])
        # the slowest device's step time; a host profile (no device work) steps by its
        # markers; a marker no device work was launched in is listed without a time
        dev = [v for v in st["device_us"] if v is not None]
        host = d["identity"]["basis"] == "profgate.host/1"
        if dev or host:
            assert st["us"] == (max(dev) if dev else st["host_us"]), (st["step"], st["us"])
        else:
            assert st["us"] is None and st["span_us"] is None and not st["steady"], st
            assert any(w["code"] == "steps-cut" for w in d["quality"]["warnings"]), st["step"]
PY
	then
		bad=$((bad + 1))
		diag "$f:"
		diag_file "$T/why" 8
	fi
done <"$T/valid"
check "every valid corpus file summarizes; split sums to wall on every device; host steps match ProfilerStep spans; every op's family and category are those its time is counted under ($n files)" [ "$bad" -eq 0 ]
check "every valid corpus file: breakdown mean and worst sum to 1, the mean is over the devices with a steady window, the report's split adds up to 100 %, family and host shares are null without a step and explained when they do not add up ($n files)" [ "$bad_shares" -eq 0 ]

# RCCL runs every collective as ncclDevKernel_Generic: the all-reduces (by their Collective
# name) are their own op, listed, counted and sized as all-reduce; the broadcasts stay
# collective-other
f=AMD-AGI__TraceLens/resnet_act_checkpoint.json.gz
pg summarize "$CORPUS/$f" -o "$T/rccl.json"
check "$f: ncclDevKernel_Generic's all-reduces are op, family and collective all-reduce alike" \
	python3 - "$T/rccl.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ops = {o["name"]: o for o in d["ops"] if o["name"].startswith("ncclDevKernel_Generic")}
ar = ops["ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>) [all-reduce]"]
other = ops["ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)"]
fam = {f["family"]: f for f in d["families"]}
coll = {c["kind"]: c for c in d["collectives"]}
assert (ar["family"], ar["category"]) == ("all-reduce", "communication"), ar
assert other["family"] == "collective-other", other
assert ar["self_us_total"] == fam["all-reduce"]["us_total"] == coll["all-reduce"]["us_total"]
assert other["self_us_total"] == fam["collective-other"]["us_total"] == coll["other"]["us_total"]
PY

# An independent implementation of the HTA/TraceLens definitions (formats.md §11.3, §12.2)
# on real traces: unions of the GPU's kernels, copies and sets over the whole capture.
# trace_diff_test has 6 kernels nested in another kernel of their stream (all compute): they
# count once and their parents' own time counts, as in HTA's union. event_sync_trace and the
# alexnet benchmark have cuda_sync waits (Stream Sync, Stream Wait Event) on the GPU's
# streams: not work, in HTA as here.
for f in facebookresearch__HolisticTraceAnalysis/nccl_data.json.gz \
	pytorch__kineto/worker0.1623143089861.pt.trace.json.gz \
	facebookresearch__HolisticTraceAnalysis/rank0.json.gz \
	facebookresearch__HolisticTraceAnalysis/trace_diff_test.json.gz \
	facebookresearch__HolisticTraceAnalysis/event_sync_trace.json.gz \
	facebookresearch__HolisticTraceAnalysis/benchmark_result_2869224_1695835535_trace.json.gz; do
	pg summarize "$CORPUS/$f" -o "$T/x.json"
	check "$f: wall, busy, idle, compute, exposed comm and memcpy match an independent union computation" \
		python3 - "$CORPUS/$f" "$T/x.json" <<'PY'
import gzip, json, sys
from decimal import Decimal
raw = gzip.open(sys.argv[1]).read()
evs = json.loads(raw, parse_float=Decimal)["traceEvents"]
dev = json.load(open(sys.argv[2]))["devices"]
assert len(dev) == 1, len(dev)
gpu = str(dev[0]["index"])
def ns(x): return int((Decimal(str(x)) * 1000).to_integral_value())
iv = {"comp": [], "comm": [], "mem": []}
for e in evs:
    if e.get("ph") != "X" or str(e.get("pid")) != gpu:
        continue
    cat = e.get("cat", "")
    if cat in ("gpu_memcpy", "gpu_memset", "Memcpy", "Memset"):
        k = "mem"
    elif cat in ("kernel", "Kernel"):
        n = e["name"].lower()
        k = "comm" if ("nccl" in n or "rccl" in n) else "comp"
    else:
        continue
    s = ns(e["ts"]); iv[k].append((s, s + ns(e["dur"])))
def union(v):
    v = sorted(v); out = []
    for a, b in v:
        if out and a <= out[-1][1]: out[-1][1] = max(out[-1][1], b)
        else: out.append([a, b])
    return out
def length(u): return sum(b - a for a, b in u)
def minus(u, w):
    # length of u not covered by w (both unions)
    tot = 0; j = 0
    for a, b in u:
        cur = a
        while j < len(w) and w[j][1] <= cur: j += 1
        k = j
        while k < len(w) and w[k][0] < b:
            if w[k][0] > cur: tot += w[k][0] - cur
            cur = max(cur, w[k][1]); k += 1
        if cur < b: tot += b - cur
    return tot
allv = iv["comp"] + iv["comm"] + iv["mem"]
wall = max(b for a, b in allv) - min(a for a, b in allv)
busy = length(union(allv)); comp = length(union(iv["comp"]))
ecomm = minus(union(iv["comm"]), union(iv["comp"]))
emem = minus(union(iv["mem"]), union(iv["comp"] + iv["comm"]))
got = dev[0]
for key, want in (("wall_us", wall), ("busy_us", busy), ("idle_us", wall - busy),
                  ("compute_us", comp), ("exposed_comm_us", ecomm), ("exposed_memcpy_us", emem)):
    assert abs(got[key] * 1000 - want) < 1.5, (key, got[key], want / 1000)
PY
done

pg summarize "$CORPUS/facebookresearch__param/dlrm_kineto" -j 1 -o "$T/dlrm1.json"
check "DLRM: 8 ranks give one summary with 8 devices, step time the slowest rank's" python3 -c "
import json
d=json.load(open('$T/dlrm1.json'))
assert d['identity']['device_count']==8 and len(d['devices'])==8, d['identity']
assert sorted(x['rank'] for x in d['devices'])==list(range(8))
st=d['steps']['all']; assert len(st)==1 and st[0]['step']==10
assert st[0]['us']==max(st[0]['device_us']) and min(st[0]['device_us'])>0
"
pg summarize "$CORPUS/facebookresearch__param/dlrm_kineto" -j 2 -o "$T/dlrm2.json"
check "threads change nothing: -j 1 and -j 2 give byte-identical summaries" cmp -s "$T/dlrm1.json" "$T/dlrm2.json"
pg summarize "$CORPUS/facebookresearch__param/dlrm_kineto" -j 2 -o "$T/dlrm3.json"
check "the same inputs twice give byte-identical summaries" cmp -s "$T/dlrm2.json" "$T/dlrm3.json"

# merge: per-rank summaries made separately combine into the summary of all ranks at once
mkdir -p "$T/ranks"
for f in "$CORPUS"/facebookresearch__param/dlrm_kineto/*.pt.trace.json; do
	"$PROFGATE" summarize "$f" -o "$T/ranks/$(basename "$f" .json).sum.json"
done
pg merge "$T"/ranks/*.sum.json -o "$T/merged.json"
check "merge of the 8 per-rank summaries equals summarize of the folder, byte for byte" \
	sh -c "[ $rc -eq 0 ] && cmp -s '$T/merged.json' '$T/dlrm1.json'"
pg merge "$T/ranks/worker0_step_12.1694128201545.pt.trace.sum.json" -o "$T/self.json"
check "merge of one summary is that summary" \
	cmp -s "$T/self.json" "$T/ranks/worker0_step_12.1694128201545.pt.trace.sum.json"

pg summarize "$CORPUS/openxla__xprof/tpu_inference_2.xplane.pb" -o "$T/tpu.json"
check "TPU XPlane: 4 TPU devices, steps from XLA Modules executions, all-reduce under collectives" python3 -c "
import json
d=json.load(open('$T/tpu.json'))
assert [x['kind'] for x in d['devices']]==['tpu']*4, [x['id'] for x in d['devices']]
assert d['steps']['source']=='module-period' and len(d['steps']['all'])==100
ar=[c for c in d['collectives'] if c['kind']=='all-reduce']
assert ar and ar[0]['capture_us_per_device']>0 and ar[0]['capture_count_per_device']==3, d['collectives']
"

pg report "$T/dlrm1.json" -o "$T/dlrm.md"
check "report of the DLRM summary: a markdown report naming the worst device" \
	sh -c "[ $rc -eq 0 ] && grep -q '^# profgate report' '$T/dlrm.md' && grep -q '(worst)' '$T/dlrm.md'"
pg report "$T/dlrm1.json"
check "report is deterministic (file and stdout identical)" cmp -s "$T/out" "$T/dlrm.md"

pg merge "$T/dlrm1.json" "$T/tpu.json"
check "merge refuses summaries that are not one capture (exit 2, one line)" \
	sh -c "[ $rc -eq 2 ] && [ \$(wc -l <'$T/err') -eq 1 ] && grep -q 'not one capture' '$T/err'"
pg merge "$T/dlrm1.json" "$T/bad.json"
check "merge of an unreadable summary exits 3" [ "$rc" -eq 3 ]

pg summarize "$CORPUS/tensorflow__profiler" -o "$T/tf.json"
check "TensorFlow multi-worker capture: steps from the Steps lines" python3 -c "
import json
d=json.load(open('$T/tf.json'))
assert d['steps']['source']=='steps-line' and len(d['steps']['all'])>=1, d['steps']['source']
assert d['identity']['framework']=='tensorflow' and d['identity']['host_count']==2
"
pg report "$T/tf.json" -o "$T/tf.md"
check "TensorFlow multi-worker capture: the time split is the mean of the 2 devices with a steady window (72 % / 28 %), not 48 % / 18 % with the third as zeros; no overlap without communication" python3 -c "
import json
d=json.load(open('$T/tf.json'))
m=d['breakdown']['mean']; md=open('$T/tf.md').read()
assert d['per_step_basis']['devices']==2, d['per_step_basis']
assert abs(m['compute_share']-0.7219)<0.0015 and abs(m['idle_share']-0.2761)<0.0015, m
assert abs(m['compute_share']+m['exposed_comm_share']+m['exposed_memcpy_share']+m['idle_share']-1)<=0.0003, m
assert m['comm_overlap_share'] is None, m
assert 'mean over the 2 of 3 devices with work in the steady steps' in md and 'no work in the steady steps' in md
assert 'compute 72.2%' in md and 'idle 27.6%' in md, md[:600]
"
pg summarize "$CORPUS/AMD-AGI__TraceLens/resnet_act_checkpoint.json.gz" -o "$T/resnet.json"
"$PROFGATE" report "$T/resnet.json" -o "$T/resnet.md"
check "resnet_act_checkpoint: family shares are of the step and add up to 120 % (all-reduce beside compute); the report says so and why" python3 -c "
import json
d=json.load(open('$T/resnet.json')); md=open('$T/resnet.md').read()
step=d['steps']['steady']['median_us']
tot=sum(f['share'] for f in d['families'])
assert 1.19<tot<1.21, tot
ar=[f for f in d['families'] if f['family']=='all-reduce'][0]
assert abs(ar['share']-ar['us_per_step']/step)<0.0001 and ar['share']>0.8, ar
assert 'The families add up to %.1f%% of the step, not 100%%' % (100*tot) in md
assert 'each count their time' in md
m=d['breakdown']['mean']
assert abs(m['compute_share']+m['exposed_comm_share']+m['exposed_memcpy_share']+m['idle_share']-1)<=0.0003, m
assert abs(m['comm_overlap_share']-0.2525)<0.0002, m
"
check "TensorFlow GPU planes name no model: their compute capability and cores do" python3 -c "
import json
d=json.load(open('$T/tf.json'))
k='GPU (compute capability 7.0, 80 cores)'
assert d['identity']['device_kind']==k, d['identity']['device_kind']
assert all(x['name']==k for x in d['devices']), [x['name'] for x in d['devices']]
"

# ---- device identity: Kineto device ids remapped (ROCm, HIP/CUDA_VISIBLE_DEVICES) ----
AMD=$CORPUS/AMD-AGI__TraceLens
for f in mi300_facebook_timesformer-base-finetuned-k400__1016002:"AMD Instinct MI300X VF" \
	xdit_sd_3.5_profile_trace_rank_0:"AMD Instinct MI300X"; do
	pg summarize "$AMD/${f%%:*}.json.gz" -o "$T/remap.json"
	check "${f%%:*}: events on device 2, one deviceProperties entry (id 0): device_kind ${f#*:}" \
		python3 -c "
import json, sys
d=json.load(open('$T/remap.json'))
assert d['identity']['device_kind']==sys.argv[1], d['identity']['device_kind']
assert [x['name'] for x in d['devices']]==[sys.argv[1]], d['devices']
" "${f#*:}"
done
pg summarize "$AMD/graph_capture_rank_0.1773709742341309550.pt.trace.json.gz" -o "$T/remap.json"
check "deviceProperties entries with empty names name nothing: device_kind stays gpu" \
	python3 -c "
import json
d=json.load(open('$T/remap.json'))
assert d['identity']['device_kind']=='gpu' and d['devices'][0]['name'] is None, d['identity']
"

# ---- unlike files are not one capture unless asked ----
OWLH=$AMD/h100_google_owlv2-large-patch14-ensemble__1016001.json.gz
OWLM=$AMD/mi300_google_owlv2-large-patch14-ensemble__1016001.json.gz
pg summarize "$OWLH" "$OWLM" -o "$T/mixed.json"
check "summarize of an H100 and an MI300X trace: exit 4, one line naming both files and models, no output" \
	sh -c "[ $rc -eq 4 ] && [ ! -e '$T/mixed.json' ] && [ \$(wc -l <'$T/err') -eq 1 ] && grep -q 'h100_google_owlv2.*NVIDIA H100 80GB HBM3.*mi300_google_owlv2.*AMD Instinct MI300X VF' '$T/err' && grep -q -- '--allow-mixed' '$T/err'"
pg summarize --allow-mixed "$OWLH" "$OWLM" -o "$T/mixed.json"
check "--allow-mixed joins them; device_kind names both models" \
	sh -c "[ $rc -eq 0 ] && python3 -c \"
import json
d=json.load(open('$T/mixed.json'))
assert d['identity']['device_kind']=='NVIDIA H100 80GB HBM3 + AMD Instinct MI300X VF', d['identity']
assert d['identity']['device_count']==2
\""
pg summarize "$OWLH" -o "$T/owlh.json"
pg summarize "$OWLM" -o "$T/owlm.json"
pg merge "$T/owlh.json" "$T/owlm.json" -o "$T/owl-merged.json"
check "merge of the two refuses them too (exit 2, naming device_kind)" \
	sh -c "[ $rc -eq 2 ] && [ ! -e '$T/owl-merged.json' ] && grep -q \"device_kind 'NVIDIA H100 80GB HBM3'.*'AMD Instinct MI300X VF'\" '$T/err'"
pg merge --allow-mixed "$T/owlh.json" "$T/owlm.json" -o "$T/owl-merged.json"
check "merge --allow-mixed joins them, device_kind as summarize --allow-mixed gives it" \
	sh -c "[ $rc -eq 0 ] && python3 -c \"
import json
a=json.load(open('$T/owl-merged.json'))['identity']; b=json.load(open('$T/mixed.json'))['identity']
assert a['device_kind']==b['device_kind'], (a, b)
\""
pg summarize "$AMD" -o "$T/mixed.json"
check "the AMD-AGI__TraceLens folder (two GPU models) is not one capture: exit 4" \
	sh -c "[ $rc -eq 4 ] && grep -q 'device model' '$T/err'"
pg summarize "$CORPUS/facebookresearch__HolisticTraceAnalysis/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz" \
	"$CORPUS/tensorflow__profiler/plugins/profile/GPU-multi-worker/34.83.195.179_6003.xplane.pb" -o "$T/mixed.json"
check "a PyTorch host trace and a TensorFlow capture: exit 4 on the framework" \
	sh -c "[ $rc -eq 4 ] && grep -q 'framework pytorch.*framework tensorflow' '$T/err'"
done_testing
