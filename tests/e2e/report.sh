#!/bin/sh
# profgate report at scale: a synthetic JAX-style trace of 1,024 devices (made here) reports the
# spread over devices and the devices that waited most instead of a row per device; kernel names
# that share their first hundred bytes show the part that tells them apart, in the summary
# report (the TensorFlow XPlane of the corpus) and in the comparison report (two H100 Kineto
# traces of the corpus, whose attribution named two cutlass kernels alike).
. "$(dirname "$0")/lib/tap.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
CORPUS=${PG_CORPUS:-$TOP/../shared/corpus}

# The fixture, synthetic: device i (process "/device:GPU:<i>") has a "Steps" line of 6
# back-to-back steps of 20 ms and one kernel stream idle 1000 + i us a step (less the 1 us
# kernel that ends each step, so that the steps' work fills them); three planted devices idle
# more (gpu17 4000 us, gpu1000 2500 us and a step 1 ms longer, gpu600 3000 us). Its two
# kernels differ only past their first 120 bytes.
python3 - "$T/scale.trace.json" <<'PY'
import json, sys
n = 1024
head = ("void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<"
        "Eigen::TensorMap<Eigen::Tensor<")
tail = ", 1, 1, long>, 16, Eigen::MakePointer> const> const, Eigen::GpuDevice>, long>"
kernels = [head + "float" + tail, head + "bool" + tail]
idle = {17: 4000, 1000: 2500, 600: 3000}
ev = []
for d in range(n):
    pid = d + 1
    ev.append({"ph": "M", "pid": pid, "name": "process_name",
               "args": {"name": "/device:GPU:%d" % d}})
    ev.append({"ph": "M", "pid": pid, "tid": 1, "name": "thread_name", "args": {"name": "Steps"}})
    ev.append({"ph": "M", "pid": pid, "tid": 16, "name": "thread_name",
               "args": {"name": "Stream #16(Kernel)"}})
    step = 21000 if d == 1000 else 20000
    busy = 20000 - idle.get(d, 1000 + d)
    for s in range(6):
        t0 = s * step
        ev.append({"ph": "X", "pid": pid, "tid": 1, "ts": t0, "dur": step, "name": str(s + 1)})
        ev.append({"ph": "X", "pid": pid, "tid": 16, "ts": t0, "dur": busy // 2,
                   "name": kernels[0]})
        ev.append({"ph": "X", "pid": pid, "tid": 16, "ts": t0 + busy // 2,
                   "dur": busy - busy // 2, "name": kernels[1]})
        ev.append({"ph": "X", "pid": pid, "tid": 16, "ts": t0 + step - 1, "dur": 1,
                   "name": kernels[1]})
json.dump({"displayTimeUnit": "ns", "traceEvents": ev + [{}]}, open(sys.argv[1], "w"))
PY
pg summarize "$T/scale.trace.json" -o "$T/scale.json"
check "summarize the 1,024-device fixture" [ "$rc" -eq 0 ]
pg report "$T/scale.json" -o "$T/scale.md"
check "report the 1,024-device fixture" [ "$rc" -eq 0 ]

# The report's device section and top ops, read by a small parser: tables by their header.
cat >"$T/md.py" <<'PY'
import json, re, sys
md = open(sys.argv[1]).read()
def section(title):
    m = re.search(r"^## " + re.escape(title) + r".*?\n(.*?)(?=^## |\Z)", md, re.S | re.M)
    return m.group(1) if m else ""
def tables(text):
    out, cur = [], None
    for line in text.split("\n"):
        if line.startswith("|"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            if cur is None:
                cur = [cells]
                out.append(cur)
            elif not set(line) <= set("|-: "):
                cur.append(cells)
        else:
            cur = None
    return out
def first_cells(title):
    t = tables(section(title))
    return [r[0] for r in t[0][1:]] if t else []
dev = section("Where the time goes, per device")
dt = tables(dev)
PY
pycheck "1,024 devices: the spread over devices (min, median, p90, max of each column), not a row each" \
	"exec(open('$T/md.py').read())" "$T/scale.md" \
	"'1024 devices: the spread over the 1024 with work in the steady steps' in dev" \
	"len(dt) == 2" \
	"[r[0] for r in dt[0]] == ['over devices', 'min', 'median', 'p90', 'max']" \
	"dt[0][1][5] == '5.0%' and dt[0][4][5] == '20.0%'" \
	"dt[0][2][5] == '7.6%'" \
	"md.count('| \`gpu') == 8" \
	"len(md) < 5000"
pycheck "the devices that waited most: the summary's worst first, the slowest marked" \
	"exec(open('$T/md.py').read()); s = json.load(open('$T/scale.json'))" "$T/scale.md" \
	"'The 8 devices that waited most' in dev" \
	"s['breakdown']['worst_device'] == 'gpu17'" \
	"[r[0] for r in dt[1][1:4]] == ['\`gpu17\` (worst)', '\`gpu1000\` (slowest)', '\`gpu600\`']" \
	"s['steps']['slowest_device'] == 'gpu1000'" \
	"[r[0] for r in dt[1][4:]] == ['\`gpu%d\`' % i for i in range(1023, 1018, -1)]"
pycheck "kernels alike for 120 bytes show the type that tells them apart" \
	"exec(open('$T/md.py').read()); ops = first_cells('Top ops')" "$T/scale.md" \
	"len(ops) == 2 and len(set(ops)) == 2" \
	"any('Tensor<float, 1, 1, long>' in o for o in ops)" \
	"any('Tensor<bool, 1, 1, long>' in o for o in ops)" \
	"all(o.startswith('\`void Eigen::internal::EigenMetaKernel<…') for o in ops)"

TF=$CORPUS/tensorflow__profiler/plugins/profile/GPU-multi-worker/34.83.195.179_6003.xplane.pb
if [ ! -f "$TF" ]; then
	skip "corpus absent ($CORPUS)"
	done_testing
	exit $?
fi
pg summarize "$TF" -o "$T/tf.json"
pg report "$T/tf.json" -o "$T/tf.md"
check "the TensorFlow XPlane reports" [ "$rc" -eq 0 ]
pycheck "TensorFlow's 13 top ops (10 Eigen kernels) read apart, and its idle-before rows too" \
	"exec(open('$T/md.py').read()); ops = first_cells('Top ops'); gaps = first_cells('Idle before ops')" \
	"$T/tf.md" \
	"len(ops) == 13 and len(set(ops)) == 13" \
	"sum('EigenMetaKernel<…' in o for o in ops) == 10" \
	"len(gaps) == 10 and len(set(gaps)) == 10"

QWEN=$CORPUS/AMD-AGI__TraceLens/h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz
TSF=$CORPUS/AMD-AGI__TraceLens/h100_facebook_timesformer-base-finetuned-k400__1016002.json.gz
# two workloads apart (the gate refuses them by default): relaxed on purpose, to read their report
python3 -c "
import json, sys
t = json.load(open(sys.argv[1])); t['min_workload_overlap'] = 0
json.dump(t, open(sys.argv[2], 'w'))" "$TOP/thresholds/default.json" "$T/relaxed.json"
pg compare "$QWEN" "$TSF" -o "$T/cmp.json" --report "$T/cmp.md" --thresholds "$T/relaxed.json"
check "compare two H100 Kineto traces (workload check relaxed)" [ "$rc" -eq 0 ]
pycheck "the comparison's attribution and tables show kernels apart" \
	"exec(open('$T/md.py').read())" "$T/cmp.md" \
	"'Where the time went' in md" \
	"(lambda line: len(re.findall(r'\`[^\`]*\`', line)) == len(set(re.findall(r'\`[^\`]*\`', line))) > 3)([l for l in md.split(chr(10)) if l.startswith('Where the time went')][0])" \
	"all(len(set(r[2] for r in t[1:] if r[1] == 'op')) == sum(r[1] == 'op' for r in t[1:]) for t in tables(md) if t[0][:3] == ['', 'kind', 'name'] or t[0][:2] == ['kind', 'name'])"

done_testing
