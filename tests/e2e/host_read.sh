#!/bin/sh
# Reading CPU-only PyTorch profiles (tests/data/host): the legacy autograd-profiler export is
# dialect pytorch-legacy with framework pytorch and host-thread tracks, its Kineto conversion
# is dialect kineto, both list 25 ProfilerStep markers; look-alike arrays stay generic; a
# legacy "CUDA functions" track is a GPU stream; a broken legacy array fails cleanly (exit 3,
# one line); tests/host/to_kineto.py reproduces the committed conversions byte for byte, and
# tests/host/train_cpu.py (when /usr/bin/python3 has torch) writes a trace read as legacy.
set -u
. "$(dirname "$0")/lib/tap.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
HOST=$TOP/tests/data/host
TORCH_PY=${PG_TORCH_PYTHON:-/usr/bin/python3}

# inspect_json FILE: `inspect --json FILE` into $T/i.json, exit code in $rc.
inspect_json() {
	pg inspect --json "$1"
	cp "$T/out" "$T/i.json"
}
FILE0='f = json.load(open(sys.argv[1]))["files"][0]'

for f in base-1 base-2 base-3 matmul25-1; do
	inspect_json "$HOST/legacy/$f.pt.trace.json.gz"
	pycheck "legacy/$f: dialect pytorch-legacy, framework pytorch, 25 ProfilerStep markers" \
		"$FILE0" "$T/i.json" "$rc == 0" \
		'f["dialect"] == "pytorch-legacy"' 'f["producer"]["framework"] == "pytorch"' \
		'[s["source"] for s in f["steps"]] == ["profiler-step"]' \
		'f["steps"][0]["markers"] == 25' \
		'[d["kind"] for d in f["devices"]] == ["cpu"]' \
		'[t["kind"] for t in f["tracks"]] == ["host-thread"]' \
		'f["tracks"][0]["pid"] == "CPU functions"'
done

for f in base-1 matmul25-1; do
	inspect_json "$HOST/kineto/$f.pt.trace.json.gz"
	pycheck "kineto/$f: dialect kineto, framework pytorch, 25 ProfilerStep markers" \
		"$FILE0" "$T/i.json" "$rc == 0" \
		'f["dialect"] == "kineto"' 'f["producer"]["framework"] == "pytorch"' \
		'f["producer"]["schema_version"] == 1' \
		'[s["source"] for s in f["steps"]] == ["profiler-step"]' \
		'f["steps"][0]["markers"] == 25' \
		'all(d["kind"] == "cpu" for d in f["devices"])' \
		'all(t["kind"] == "host-thread" for t in f["tracks"])'
	# the same run in both layouts: the same ops on the main thread
	pg inspect --json "$HOST/legacy/$f.pt.trace.json.gz"
	cp "$T/out" "$T/l.json"
	pycheck "kineto/$f holds the legacy file's events on its main thread" \
		'k = json.load(open(sys.argv[1]))["files"][0]; l = json.load(open(sys.argv[1].replace("i.json", "l.json")))["files"][0]' \
		"$T/i.json" 'k["tracks"][0]["events"] == l["tracks"][0]["events"]' \
		'k["tracks"][0]["span_us"] == l["tracks"][0]["span_us"]'
done

pg summarize "$HOST/legacy/base-1.pt.trace.json.gz" -o "$T/s.json"
pycheck "summarize of a legacy file records dialect pytorch-legacy and framework pytorch" \
	's = json.load(open(sys.argv[1]))' "$T/s.json" "$rc == 0" \
	's["source"]["files"][0]["dialect"] == "pytorch-legacy"' \
	's["identity"]["framework"] == "pytorch"'

# Look-alikes: the pid alone, or torch names alone, or a third pid, are not the legacy export.
ev() { # ev PID NAME TS: one legacy-shaped X event
	printf '{"name": "%s", "ph": "X", "ts": %s, "dur": 5, "tid": 1, "pid": %s, "args": {}}' \
		"$2" "$3" "$1"
}
generic_case() {
	printf '[%s]' "$2" >"$T/g.json"
	inspect_json "$T/g.json"
	pycheck "$1: dialect generic" "$FILE0" "$T/i.json" "$rc == 0" \
		'f["dialect"] == "generic"' 'f["producer"]["framework"] is None'
}
generic_case "pid CPU functions without a torch name" "$(ev '"CPU functions"' step 1)"
generic_case "aten:: names on another pid" "$(ev 7 aten::mm 1)"
generic_case "a third pid beside CPU functions" \
	"$(ev '"CPU functions"' aten::mm 1), $(ev '"GPU functions"' kernel 2)"
printf '{"traceEvents": [%s]}' "$(ev '"CPU functions"' aten::mm 1)" >"$T/o.json"
inspect_json "$T/o.json"
pycheck "an object with traceEvents on pid CPU functions: not legacy" "$FILE0" "$T/i.json" \
	"$rc == 0" 'f["dialect"] == "generic"'

# A legacy export with CUDA kernels (torch.autograd.profiler(use_cuda=True)): the kernel's
# track is a stream of GPU 0, the tid being the device index.
cat >"$T/cuda.json" <<'EOF'
[{"name": "ProfilerStep#1", "ph": "X", "ts": 5, "dur": 80, "tid": 1, "pid": "CPU functions", "args": {}}, {"name": "aten::mm", "ph": "X", "ts": 10, "dur": 50, "tid": 1, "pid": "CPU functions", "args": {}}, {"name": "aten::mm", "ph": "s", "ts": 10, "tid": 1, "pid": "CPU functions", "id": 0, "cat": "cpu_to_cuda", "args": {}}, {"name": "aten::mm", "ph": "f", "ts": 20, "tid": 0, "pid": "CUDA functions", "id": 0, "cat": "cpu_to_cuda", "args": {}}, {"name": "volta_sgemm_128x64_nn", "ph": "X", "ts": 20, "dur": 40, "tid": 0, "pid": "CUDA functions", "args": {}}]
EOF
inspect_json "$T/cuda.json"
pycheck "legacy with CUDA functions: a host thread and a stream of gpu0" "$FILE0" "$T/i.json" \
	"$rc == 0" 'f["dialect"] == "pytorch-legacy"' \
	'sorted((d["id"], d["kind"], d["index"]) for d in f["devices"]) == [("cpu", "cpu", 0), ("gpu0", "gpu", 0)]' \
	'sorted((t["device"], t["kind"]) for t in f["tracks"]) == [("cpu", "host-thread"), ("gpu0", "device-stream")]'

# Broken legacy arrays fail cleanly: one line, exit 3, nothing on stdout.
fails_cleanly() {
	pg inspect "$2"
	check "$1: exit 3, one stderr line naming the file, no stdout" sh -c \
		"[ $rc -eq 3 ] && [ \$(wc -l <'$T/err') -eq 1 ] && grep -qF '$2' '$T/err' && [ ! -s '$T/out' ]"
}
gzip -dc "$HOST/legacy/base-1.pt.trace.json.gz" | head -c 300000 >"$T/cut.json"
fails_cleanly "a legacy array cut mid-file" "$T/cut.json"
printf '[%s, {"name": "aten::mm", "ph": "X", "dur": 3, "tid": 1, "pid": "CPU functions", "args": {}}]' \
	"$(ev '"CPU functions"' aten::add 1)" >"$T/nots.json"
fails_cleanly "a legacy event without ts" "$T/nots.json"
printf '[%s, {"name": "aten::mm", "ph": "X", "ts": 2, "dur": 3, "tid": 1, "pid": "CPU functions", "args": {}},]' \
	"$(ev '"CPU functions"' aten::add 1)" >"$T/comma.json"
fails_cleanly "a legacy array with a trailing comma" "$T/comma.json"

# The converter is deterministic: it reproduces the committed Kineto fixtures.
for f in base-1 matmul25-1; do
	python3 "$TOP/tests/host/to_kineto.py" "$HOST/legacy/$f.pt.trace.json.gz" "$T/k.pt.trace.json.gz"
	check "to_kineto.py reproduces kineto/$f byte for byte" \
		cmp -s "$T/k.pt.trace.json.gz" "$HOST/kineto/$f.pt.trace.json.gz"
done
python3 "$TOP/tests/host/to_kineto.py" "$T/g.json" "$T/never.json" 2>"$T/err"
rc=$?
check "to_kineto.py refuses a file that is not a CPU-only legacy export" \
	sh -c "[ $rc -ne 0 ] && [ ! -e '$T/never.json' ] && grep -q 'to_kineto: ' '$T/err'"

# The workload itself, when torch is there (a few seconds).
if "$TORCH_PY" -c 'import torch' 2>/dev/null; then
	"$TORCH_PY" "$TOP/tests/host/train_cpu.py" --variant softmax --active 3 \
		--out "$T/run.pt.trace.json.gz" >"$T/run.log" 2>&1
	inspect_json "$T/run.pt.trace.json.gz"
	pycheck "train_cpu.py --active 3 writes a gzipped legacy trace with 3 markers" "$FILE0" \
		"$T/i.json" "$rc == 0" 'f["compression"] == "gzip"' \
		'f["dialect"] == "pytorch-legacy"' 'f["steps"][0]["markers"] == 3'
else
	skip "train_cpu.py: $TORCH_PY has no torch"
fi

done_testing
