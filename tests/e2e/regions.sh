#!/bin/sh
# Regions and xprof's tool tables through the CLI. Regions: marin's hierarchy tests
# (marin-community/marin tests/profiling/test_profile_summary.py) as JAX-style Chrome JSON, whose
# expectations profgate meets (exclusive time 100 on the pallas_call/shard_map leaf), op names
# joined with "=>", the name stat only under an XlaModule tf_op; on the corpus, every summary's
# exclusive times add up to its top-level regions. Tool tables (overview_page.json,
# kernel_stats.json, ... as marin writes them beside an .xplane.pb): refused alone with one line
# saying what they are, skipped with a note in a profile folder.
. "$(dirname "$0")/lib/tap.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
CORPUS=${PG_CORPUS:-$TOP/../shared/corpus}

# regions_ok SUMMARY: exclusive times add up to the depth-1 inclusive times (3-decimal totals);
# why not in $T/why
regions_ok() {
	python3 - "$1" >"$T/why" 2>&1 <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["regions"]
if len(r) < 500:
    excl = sum(x["exclusive_us_total"] for x in r)
    top = sum(x["inclusive_us_total"] for x in r if x["depth"] == 1)
    assert abs(excl - top) <= 0.001 * (len(r) + 1), (excl, top)
for x in r:
    assert x["depth"] == len(x["path"].split("/")), x["path"]
    assert "=>" not in x["path"], x["path"]
    for seg in x["path"].split("/"):
        assert seg not in ("pallas_call", "shard_map", "XlaModule", "jit", ""), x["path"]
PY
}

# ---- marin's hierarchy tests, as the JAX exporter writes a TPU op line ----
cat >"$T/blacklist.json" <<'JSON'
{"displayTimeUnit": "ns", "traceEvents": [
 {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:TPU:0"}},
 {"ph": "M", "pid": 1, "tid": 2, "name": "thread_name", "args": {"name": "XLA Ops"}},
 {"ph": "X", "pid": 1, "tid": 2, "name": "custom_kernel.1", "ts": 0, "dur": 100,
  "args": {"tf_op": "jit(_train_step)/shard_map/apply_rotary_embedding/pallas_call"}}]}
JSON
pg summarize "$T/blacklist.json" -o "$T/b.json"
pycheck "marin's blacklist test: pallas_call and shard_map dropped, the leaf keeps exclusive 100" \
	'd = json.load(open(sys.argv[1])); R = {x["path"]: x for x in d["regions"]}' "$T/b.json" \
	'sorted(R) == ["_train_step", "_train_step/apply_rotary_embedding"]' \
	'R["_train_step"]["inclusive_us_total"] == 100' \
	'R["_train_step"]["exclusive_us_total"] == 0' \
	'R["_train_step/apply_rotary_embedding"]["inclusive_us_total"] == 100' \
	'R["_train_step/apply_rotary_embedding"]["exclusive_us_total"] == 100'
check "... and its regions partition the time" regions_ok "$T/b.json"

cat >"$T/hier.json" <<'JSON'
{"displayTimeUnit": "ns", "traceEvents": [
 {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:TPU:0"}},
 {"ph": "M", "pid": 1, "tid": 2, "name": "thread_name", "args": {"name": "XLA Ops"}},
 {"ph": "X", "pid": 1, "tid": 2, "name": "train_step=>forward=>matmul", "ts": 0, "dur": 50},
 {"ph": "X", "pid": 1, "tid": 2,
  "name": "_linear_softmax_cross_entropy_loss_bwd_pallas_mosaic_tpu_combined.1", "ts": 100,
  "dur": 20, "args": {"tf_op": "jit(_train_step)/apply_rotary_embedding/linear_softmax_cross_entropy_loss_bwd"}},
 {"ph": "X", "pid": 1, "tid": 2, "name": "train_step=>backward=>all-reduce.1", "ts": 140, "dur": 10},
 {"ph": "X", "pid": 1, "tid": 2, "name": "fusion.3", "ts": 200, "dur": 30,
  "args": {"tf_op": "XlaModule:#hlo_module=jit_f,program_id=1#", "name": "jit(f)/dot_general"}},
 {"ph": "X", "pid": 1, "tid": 2, "name": "fusion.4", "ts": 300, "dur": 40,
  "args": {"name": "fabricated"}}]}
JSON
pg summarize "$T/hier.json" -o "$T/h.json"
pycheck "marin's gap test scopes: names joined with => split like /, tf_op paths, the name stat under XlaModule" \
	'd = json.load(open(sys.argv[1])); R = {x["path"]: x for x in d["regions"]}' "$T/h.json" \
	'R["train_step"]["inclusive_us_total"] == 60 and R["train_step"]["exclusive_us_total"] == 0' \
	'R["train_step/forward/matmul"]["exclusive_us_total"] == 50' \
	'"train_step/backward/all-reduce.1" in R' \
	'"_train_step/apply_rotary_embedding/linear_softmax_cross_entropy_loss_bwd" in R' \
	'R["f/dot_general"]["exclusive_us_total"] == 30' \
	'not any("fabricated" in p for p in R)'
check "... and its regions partition the time" regions_ok "$T/h.json"

# ---- the corpus: every summary's regions partition its time ----
if [ -f "$CORPUS/manifest.json" ]; then
	python3 - "$CORPUS" >"$T/valid" <<'PY'
import json, sys
for f in json.load(open(sys.argv[1] + "/manifest.json"))["files"]:
    if not f["negative"]:
        print(f["file"])
PY
	n=0 bad=0
	while read -r f; do
		n=$((n + 1))
		pg summarize "$CORPUS/$f" -o "$T/c.json"
		if [ "$rc" -ne 0 ] || ! regions_ok "$T/c.json"; then
			bad=$((bad + 1))
			diag "$f: exit $rc"
			diag_file "$T/why"
		fi
	done <"$T/valid"
	check "corpus: regions partition every summary's time, no plumbing segment ($n files)" [ "$bad" -eq 0 ]
	pg summarize "$CORPUS/AMD-AGI__TraceLens/934987a2fc2f.xplane.pb" -o "$T/te.json"
	# jit(loss_fn)/transpose(jvp(bsd,de->bse))/transpose: the last segment is a bare wrapper,
	# so those transposes are the exclusive time of loss_fn/bsd,de->bse
	pycheck "corpus XPlane: a scope whose last segment is dropped keeps its exclusive time" \
		'd = json.load(open(sys.argv[1])); R = {x["path"]: x for x in d["regions"]}' "$T/te.json" \
		'R["loss_fn/bsd,de->bse"]["exclusive_us_total"] > 1000' \
		'abs(R["loss_fn/bsd,de->bse"]["exclusive_us_total"] + R["loss_fn/bsd,de->bse/dot_general"]["inclusive_us_total"] - R["loss_fn/bsd,de->bse"]["inclusive_us_total"]) < 0.002'
else
	skip "corpus absent ($CORPUS)"
fi

# ---- xprof's tool tables ----
cat >"$T/overview_page.json" <<'JSON'
[{"cols": [{"id": "stepnum", "label": "stepnum", "type": "string"},
  {"id": "stepTimeMs", "label": "stepTimeMs", "type": "number"}],
  "rows": [{"c": [{"v": "1"}, {"v": 10.5}]}], "p": {"bottleneck": "compute"}},
 {"cols": [], "rows": [], "p": {"device_type": "TPU"}}]
JSON
cat >"$T/kernel_stats.json" <<'JSON'
{"cols": [{"id": "kernel_name", "label": "Kernel Name", "type": "string"},
  {"id": "total_duration_us", "label": "Total Duration (us)", "type": "number"}],
 "rows": [{"c": [{"v": "ampere_sgemm"}, {"v": 100.0}]}], "p": {}}
JSON
printf '{"deviceType": "TPU", "byCategory": {"name": "root"}}' >"$T/op_profile.json"
cp "$T/kernel_stats.json" "$T/stats-copy.json"
for f in overview_page.json kernel_stats.json op_profile.json stats-copy.json; do
	pg summarize "$T/$f" -o "$T/never.json"
	check "$f alone: exit 3, one line naming the file as an xprof tool table, no output" \
		sh -c "[ $rc -eq 3 ] && [ \$(wc -l <'$T/err') -eq 1 ] && grep -q \"'$T/$f': an xprof tool table\" '$T/err' && ! grep -q 'not a trace:' '$T/err' && [ ! -e '$T/never.json' ]"
done
pg inspect "$T/overview_page.json"
check "the message names the tool" sh -c "[ $rc -eq 3 ] && grep -q '(overview_page)' '$T/err'"

# beside a profile in one folder: skipped with a note, the profile read
mkdir -p "$T/prof" "$T/tables"
cp "$T/overview_page.json" "$T/kernel_stats.json" "$T/prof/"
cp "$T/overview_page.json" "$T/kernel_stats.json" "$T/tables/"
if [ -f "$CORPUS/AMD-AGI__TraceLens/jax08_gemm_tw003.xplane.pb" ]; then
	cp "$CORPUS/AMD-AGI__TraceLens/jax08_gemm_tw003.xplane.pb" "$T/prof/tw003.xplane.pb"
else
	cp "$T/hier.json" "$T/prof/host.trace.json"
fi
pg summarize "$T/prof" -o "$T/p.json"
pycheck "a folder with a profile and tool tables: exit 0, only the profile read" \
	'd = json.load(open(sys.argv[1]))' "$T/p.json" \
	'len(d["source"]["files"]) == 1' \
	'not d["source"]["files"][0]["path"].endswith("_page.json")'
pg inspect "$T/prof"
check "... and inspect notes each table skipped, saying what it is" \
	sh -c "[ $rc -eq 0 ] && [ \$(grep -c 'skipped .*: an xprof tool table' '$T/out') -eq 2 ]"
pg summarize "$T/tables" -o "$T/never.json"
check "a folder of tool tables only: exit 3, one line saying what they are, no output" \
	sh -c "[ $rc -eq 3 ] && [ \$(wc -l <'$T/err') -eq 1 ] && grep -q 'no profile profgate reads in .*an xprof tool table' '$T/err' && [ ! -e '$T/never.json' ]"

done_testing
