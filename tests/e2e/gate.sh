#!/bin/sh
# profgate compare and gate end to end: injected regressions (tests/tools/slow_family on the
# bundled baseline) fail, warn and pass as the default thresholds say, naming the slowed family
# first; A/A pairs do not fail; unlike runs and identical bytes are refused (exit 4); missing
# steps are inconclusive; a null share is never judged; bad thresholds files exit 2 naming the
# key; output is deterministic.
set -u
. "$(dirname "$0")/lib/tap.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
CORPUS=${PG_CORPUS:-$TOP/../shared/corpus}
EX=$TOP/tests/data/examples
BASE=$EX/baseline.rank-0.pt.trace.json.gz
CAND=$EX/candidate.rank-0.matmul-slower.pt.trace.json.gz
SF=$TOOLS/slow_family

# field FILE EXPR: a Python expression over the verdict JSON `d`, printed.
field() {
	python3 -c 'import json,os,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# ---- the bundled pair: a known 25% matmul regression ----
pg summarize "$BASE" -o "$T/base.json"
check "summarize the bundled baseline" [ "$rc" -eq 0 ]
pg summarize "$CAND" -o "$T/cand.json"
check "summarize the bundled candidate" [ "$rc" -eq 0 ]
pg gate --baseline "$T/base.json" --candidate "$T/cand.json" --json "$T/v1.json" --report "$T/r1.md"
check "gate on the bundled pair exits 1 (fail)" [ "$rc" -eq 1 ]
# one run a side: the step's +6.1% is within the default prior (2% a run, p 0.015 > 0.01), the
# matmul family's +25% is far beyond its noise
check "its verdict JSON says fail, the matmul family failing" \
	[ "$(field "$T/v1.json" '[d["verdict"]] + [m["verdict"] for m in d["metrics"] if m["name"] == "family.matmul.us_per_step"]')" = "['fail', 'fail']" ]
check "the attribution names matmul first" \
	[ "$(field "$T/v1.json" 'd["attribution"][0]["kind"] + " " + d["attribution"][0]["name"]')" = "family matmul" ]
check "the step change is significant with an interval that holds +6%" \
	[ "$(field "$T/v1.json" 'd["step"]["p_value"] < 0.05 and d["step"]["interval_share"][0] < 0.061 < d["step"]["interval_share"][1]')" = True ]
check "the report has the verdict, the step change and the family" \
	sh -c "grep -q '^## profgate: FAIL' '$T/r1.md' && grep -q '95.66 ms' '$T/r1.md' && grep -q 'matmul' '$T/r1.md'"
check "stdout names the verdict and the report" \
	sh -c "grep -q '^profgate gate: fail' '$T/out' && grep -q 'report: $T/r1.md' '$T/out'"
pg gate --baseline "$T/base.json" --candidate "$T/cand.json" --json "$T/v2.json" --report "$T/r2.md"
check "the same inputs give the same bytes (JSON and report)" \
	sh -c "cmp -s '$T/v1.json' '$T/v2.json' && cmp -s '$T/r1.md' '$T/r2.md'"

pg compare "$BASE" "$CAND" --json -
check "compare on raw profiles exits 0 for a regression" [ "$rc" -eq 0 ]
cp "$T/out" "$T/c.json"
check "compare on raw profiles decides as on their summaries" \
	python3 - "$T/c.json" "$T/v1.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a["verdict"] == "fail" and a["exit_code"] == 1
# summaries round shares to 4 decimals: same metrics and verdicts, values within rounding
assert [(m["name"], m["verdict"]) for m in a["metrics"]] == [(m["name"], m["verdict"]) for m in b["metrics"]]
for x, y in zip(a["metrics"], b["metrics"]):
    for k in ("baseline", "candidate"):
        if x[k] is not None:
            assert abs(x[k] - y[k]) <= 1e-4 + 1e-6 * abs(y[k]), (x, y)
assert [(x["kind"], x["name"]) for x in a["attribution"]] == [(x["kind"], x["name"]) for x in b["attribution"]]
assert a["provenance"]["result"] == b["provenance"]["result"] == "comparable"
PY

# ---- injected regressions of 25%, 10% and 1% from the bundled baseline ----
if [ -x "$SF" ]; then
	for p in 25 10 1; do
		timeout 120 "$SF" --family matmul --percent $p -o "$T/slow$p.json.gz" "$BASE" >/dev/null 2>&1 ||
			not_ok "slow_family --percent $p"
		pg gate -b "$BASE" -c "$T/slow$p.json.gz" --json "$T/s$p.json"
		eval "rc$p=$rc"
	done
	check "matmul 25% slower: fail, exit 1, matmul first" \
		[ "$rc25" -eq 1 ] && [ "$(field "$T/s25.json" 'd["verdict"] + " " + d["attribution"][0]["name"]')" = "fail matmul" ]
	# +10% of a family worth a quarter of the step, one run a side: within the noise the
	# default priors allow a run (z 1.7), so it passes and says so; several runs would tell
	check "matmul 10% slower, one run a side: pass, exit 0, nothing attributed" \
		[ "$rc10" -eq 0 ] && [ "$(field "$T/s10.json" 'd["verdict"] + " " + str(len(d["attribution"]))')" = "pass 0" ]
	check "matmul 10% slower: the family metric is past its warn limit, within noise" \
		[ "$(field "$T/s10.json" '[m["note"].split(" (")[0] for m in d["metrics"] if m["name"] == "family.matmul.us_per_step"]')" = "['past the warn limit, but within noise']" ]
	check "matmul 1% slower: pass, exit 0" \
		[ "$rc1" -eq 0 ] && [ "$(field "$T/s1.json" 'd["verdict"]')" = pass ]

	# A/A: the baseline against jittered re-captures of itself (each kernel ±2%)
	timeout 120 "$SF" --jitter 0.02 --seed 1 -o "$T/j1.json.gz" "$BASE" >/dev/null 2>&1
	timeout 120 "$SF" --jitter 0.02 --seed 2 -o "$T/j2.json.gz" "$BASE" >/dev/null 2>&1
	pg gate -b "$BASE" -c "$T/j1.json.gz" --json "$T/aa1.json"
	check "A/A: baseline against a jittered re-capture does not fail" \
		sh -c "[ $rc -eq 0 ] && [ \"\$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[\"verdict\"])' '$T/aa1.json')\" != fail ]"
	pg gate -b "$T/j1.json.gz" -c "$T/j2.json.gz" --json "$T/aa2.json"
	check "A/A: two jittered re-captures do not fail" [ "$rc" -eq 0 ]
else
	skip "slow_family not built: injected regressions"
fi

# ---- refusals ----
pg gate -b "$BASE" -c "$BASE" --json "$T/same.json" --report "$T/same.md"
check "the same file twice: exit 4, identical-inputs" \
	[ "$rc" -eq 4 ] && [ "$(field "$T/same.json" 'd["verdict"] + " " + d["provenance"]["result"]')" = "incomparable identical-inputs" ]
cp "$T/base.json" "$T/base-copy.json"
pg gate -b "$T/base.json" -c "$T/base-copy.json"
check "a summary and its copy: exit 4" [ "$rc" -eq 4 ]
pg compare "$T/base.json" "$T/base-copy.json" -o "$T/same2.json"
check "compare refuses identical inputs too (exit 4)" [ "$rc" -eq 4 ] && [ -s "$T/same2.json" ]

OWL=$CORPUS/AMD-AGI__TraceLens
if [ -f "$OWL/h100_google_owlv2-large-patch14-ensemble__1016001.json.gz" ]; then
	pg gate -b "$OWL/h100_google_owlv2-large-patch14-ensemble__1016001.json.gz" \
		-c "$OWL/mi300_google_owlv2-large-patch14-ensemble__1016001.json.gz" \
		--json "$T/owl.json" --report "$T/owl.md"
	check "owlv2 on H100 against MI300X: exit 4, incomparable" \
		[ "$rc" -eq 4 ] && [ "$(field "$T/owl.json" 'd["verdict"]')" = incomparable ]
	# the two share under 1% of their kernels' time (by name): the workload differs too
	check "the diff names device_kind with both values and the workload, in JSON and report" \
		sh -c "[ \"\$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print([x[\"field\"] for x in d[\"provenance\"][\"diff\"]])' '$T/owl.json')\" = \"['device_kind', 'workload']\" ] && grep -q 'H100' '$T/owl.md' && grep -q '^## profgate: INCOMPARABLE' '$T/owl.md'"
else
	skip "corpus absent: the owlv2 pair"
fi

# unlike workloads: ResNet-50 (a Kineto trace naming no GPU model) against TimeSformer on MI300X
# (remapped device ids, named from deviceProperties), and two models on one H100
RN=$CORPUS/pytorch__kineto/resnet50_num_workers_0_worker0.pt.trace.json.gz
if [ -f "$RN" ] && [ -f "$OWL/mi300_facebook_timesformer-base-finetuned-k400__1016002.json.gz" ]; then
	pg gate -b "$RN" -c "$OWL/mi300_facebook_timesformer-base-finetuned-k400__1016002.json.gz" \
		--json "$T/rn-tsf.json"
	check "ResNet-50 against TimeSformer on MI300X: exit 4, one reason line naming both models and the ops only each runs" \
		sh -c "[ $rc -eq 4 ] && [ \$(grep -c 'refused' '$T/err') -eq 1 ] && grep -q '^profgate: gate: refused (incomparable): gpu (model unknown) vs AMD Instinct MI300X VF: device_kind differs.*different workloads: 0.0% .*only here: void cudnn' '$T/err'"
	check "... the verdict JSON has the workload diff, the overlap and the reason" python3 -c "
import json
d=json.load(open('$T/rn-tsf.json'))['provenance']
assert [x['field'] for x in d['diff']]==['device_kind', 'workload'], d['diff']
assert d['workload_overlap_share']<0.01 and d['min_workload_overlap_share']==0.5, d
assert d['reason'].startswith('gpu (model unknown) vs AMD Instinct MI300X VF'), d['reason']
"
	TSF=$OWL/h100_facebook_timesformer-base-finetuned-k400__1016002.json.gz
	QWEN=$OWL/h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz
	pg gate -b "$TSF" -c "$QWEN" --json "$T/tsf-qwen.json"
	check "TimeSformer against Qwen1.5 on one H100: exit 4 on the workload alone" \
		sh -c "[ $rc -eq 4 ] && python3 -c \"
import json
d=json.load(open('$T/tsf-qwen.json'))['provenance']
assert [x['field'] for x in d['diff']]==['workload'] and 0.1<d['workload_overlap_share']<0.12, d
\""
	sed 's/"schema": "profgate.thresholds\/1",/"schema": "profgate.thresholds\/1", "min_workload_overlap": 0,/' \
		"$TOP/thresholds/default.json" >"$T/relaxed.json"
	pg gate -b "$TSF" -c "$QWEN" --thresholds "$T/relaxed.json" --json "$T/tsf-qwen2.json"
	check "... compared on purpose with min_workload_overlap 0 in the thresholds file" \
		sh -c "[ $rc -ne 4 ] && [ \"\$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[\"provenance\"][\"result\"])' '$T/tsf-qwen2.json')\" = comparable ]"
	pg gate -b "$RN" -c "$TSF"
	check "an unknown GPU model is never comparable with a known one: exit 4, both named" \
		sh -c "[ $rc -eq 4 ] && grep -q 'refused (incomparable): gpu (model unknown) vs NVIDIA H100 80GB HBM3' '$T/err'"
else
	skip "corpus absent: unlike workloads"
fi

DLRM=$CORPUS/facebookresearch__param/dlrm_kineto
if [ -d "$DLRM" ]; then
	pg gate -b "$DLRM/worker0_step_12.1694128201545.pt.trace.json" \
		-c "$DLRM/worker3_step_12.1694128201557.pt.trace.json" --json "$T/dlrm.json"
	check "A/A: two DLRM ranks do not fail (exit 0)" \
		[ "$rc" -eq 0 ] && [ "$(field "$T/dlrm.json" 'd["verdict"]')" != fail ]
	check "two DLRM ranks of one step each: step metrics inconclusive" \
		[ "$(field "$T/dlrm.json" '[m["verdict"] for m in d["metrics"] if m["name"] in ("step.median_us", "step.p90_us")]')" = "['inconclusive', 'inconclusive']" ]
else
	skip "corpus absent: the DLRM ranks"
fi

# ---- missing steps: two step-less traces are inconclusive, never a pass ----
nosteps() { # nosteps FILE GEMM_US: a Kineto trace with kernels and no ProfilerStep
	cat >"$1" <<JSON
{"traceEvents": [
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1000,"dur":50},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1010,"dur":5,"args":{"correlation":1}},
{"ph":"X","cat":"kernel","name":"ampere_sgemm_128x64_nn","pid":0,"tid":7,"ts":1100,"dur":$2,"args":{"correlation":1,"device":0}},
{"ph":"X","cat":"kernel","name":"vectorized_elementwise_kernel<4>","pid":0,"tid":7,"ts":2000,"dur":300,"args":{"device":0}}
], "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB"}]}
JSON
}
nosteps "$T/ns1.json" 500
nosteps "$T/ns2.json" 520
pg gate -b "$T/ns1.json" -c "$T/ns2.json" --json "$T/ns.json"
check "no steps on either side: exit 0" [ "$rc" -eq 0 ]
check "no steps: step metrics inconclusive and the verdict is not pass" \
	[ "$(field "$T/ns.json" '[d["verdict"] != "pass"] + [m["verdict"] for m in d["metrics"] if m["name"] in ("step.median_us", "step.p90_us")]')" = "[True, 'inconclusive', 'inconclusive']" ]

# the bundled baseline (V100, rank 0 of 1) against a capture of the same setup without steps:
# the baseline's kernels, one of each, as long as their time per step (the same workload)
python3 - "$T/base.json" "$T/v100-nosteps.json" <<'PY'
import json, sys
ops = json.load(open(sys.argv[1]))["ops"]
ev, ts = [], 1000
for o in ops:
    dur = max(1, round(o["self_us_per_step"]))
    ev.append({"ph": "X", "cat": "kernel", "name": o["examples"][0], "pid": 0, "tid": 7,
               "ts": ts, "dur": dur, "args": {"device": 0}})
    ts += dur + 10
json.dump({"distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},
           "deviceProperties": [{"id": 0, "name": "Tesla V100-SXM2-32GB"}],
           "traceEvents": ev}, open(sys.argv[2], "w"))
PY
pg gate -b "$T/base.json" -c "$T/v100-nosteps.json" --json "$T/ns-one.json"
check "steps on one side only: compared (exit 0), step metrics inconclusive, not a pass" \
	[ "$rc" -eq 0 ] && [ "$(field "$T/ns-one.json" '[d["provenance"]["result"], d["verdict"] != "pass"] + [m["verdict"] for m in d["metrics"] if m["name"] in ("step.median_us", "step.p90_us")]')" = "['comparable', True, 'inconclusive', 'inconclusive']" ]

# ---- thresholds files ----
for t in default strict; do
	pg gate -b "$T/base.json" -c "$T/cand.json" --thresholds "$TOP/thresholds/$t.json" --json "$T/t-$t.json"
	check "thresholds/$t.json: the 25% matmul regression (+6.1% step) fails" [ "$rc" -eq 1 ]
done
pg gate -b "$T/base.json" -c "$T/cand.json" --thresholds "$TOP/thresholds/nightly.json" --json "$T/t-nightly.json"
check "thresholds/nightly.json (fail at +10% step, +40% family): the same regression warns" \
	[ "$rc" -eq 0 ] && [ "$(field "$T/t-nightly.json" 'd["verdict"]')" = warn ]
check "the built-in default and thresholds/default.json decide alike" \
	python3 - "$T/v1.json" "$T/t-default.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a["metrics"] == b["metrics"] and a["verdict"] == b["verdict"]
PY
sed 's/"warn": {"relative": 0.1}/"warn": {"relativ": 0.1}/' "$TOP/thresholds/default.json" >"$T/bad.json"
pg gate -b "$T/base.json" -c "$T/cand.json" --thresholds "$T/bad.json" --json "$T/bad-out.json"
check "a misspelt key: exit 2, one line naming the file and the key, no output" \
	sh -c "[ $rc -eq 2 ] && [ \$(wc -l <'$T/err') -eq 1 ] && grep -q 'bad.json: rules\[6\].warn.relativ: unknown key' '$T/err' && [ ! -e '$T/bad-out.json' ]"
pg gate -b "$T/base.json" -c "$T/cand.json" --thresholds "$T/missing.json"
check "a missing thresholds file: exit 2" [ "$rc" -eq 2 ] && grep -q 'missing.json' "$T/err"
echo '{"schema": "profgate.thresholds/1", "rules": [' >"$T/trunc.json"
pg gate -b "$T/base.json" -c "$T/cand.json" --thresholds "$T/trunc.json"
check "a truncated thresholds file: exit 2" [ "$rc" -eq 2 ] && grep -q 'not valid JSON' "$T/err"

# ---- runs are the unit: several --baseline runs, and the history's records as noise ----
HL=$TOP/tests/data/host/legacy
for f in base-1 base-2 base-3 matmul25-1; do
	pg summarize "$HL/$f.pt.trace.json.gz" -o "$T/h-$f.json"
done
pg gate -b "$T/h-base-1.json" -b "$T/h-base-2.json" -b "$T/h-base-3.json" -c "$T/h-matmul25-1.json" \
	--json "$T/mr.json"
check "three baseline runs against a 25% wider matmul: fail, the noise from the runs, matmul first" \
	[ "$rc" -eq 1 ] && [ "$(field "$T/mr.json" 'd["baseline"]["runs"], d["candidate"]["runs"], [m["noise_from"] for m in d["metrics"] if m["name"] == "step.median_us"], d["attribution"][0]["name"]')" = "(3, 1, ['runs'], 'matmul')" ]
check "... the terminal says how many runs and where the noise came from" \
	grep -q '; 3 vs 1 run, 75 vs 25 steps; noise: runs)' "$T/out"
check "... the verdict names every run: path, sha256, profiles, step, set aside or not" \
	[ "$(field "$T/mr.json" '[(os.path.basename(x["path"]), len(x["sha256"]), len(x["summary_sha256"]), len(x["profiles"]), x["step_median_us"] > 0, x["set_aside"]) for x in d["baseline"]["run_list"] + d["candidate"]["run_list"]]')" = "[('h-base-1.json', 64, 64, 1, True, False), ('h-base-2.json', 64, 64, 1, True, False), ('h-base-3.json', 64, 64, 1, True, False), ('h-matmul25-1.json', 64, 64, 1, True, False)]" ]
check "... the baseline's path and sha256 name the run whose profiles it shows" \
	[ "$(field "$T/mr.json" '[x["sha256"] for x in d["baseline"]["run_list"] if x["profiles"] == d["baseline"]["profiles"]] == [d["baseline"]["sha256"]]')" = True ]
git init -q --bare "$T/runs.git"
pg gate -b "$T/h-base-1.json" -b "$T/h-base-2.json" -b "$T/h-base-3.json" -c "$T/h-matmul25-1.json" \
	--json "$T/mr2.json" --report "$T/mr2.md" --label runs --history "$T/runs.git" --kind pr
check "... the report lists the three baseline runs" \
	[ "$(grep -c '^  - run [123]: `.*h-base-[123].json`, sha256' "$T/mr2.md")" -eq 3 ]
git -C "$T/runs.git" show profgate-history:"$(git -C "$T/runs.git" ls-tree -r --name-only profgate-history | grep jsonl | head -1)" >"$T/runs-rec.jsonl"
check "... and the history record keeps every run of each side" \
	[ "$(field "$T/runs-rec.jsonl" '[os.path.basename(x["path"]) for x in d["runs"]["baseline"] + d["runs"]["candidate"]]')" = "['h-base-1.json', 'h-base-2.json', 'h-base-3.json', 'h-matmul25-1.json']" ]
git init -q --bare "$T/runs2.git"
pg history append "$T/mr2.json" --repo "$T/runs2.git" --kind pr
git -C "$T/runs2.git" show profgate-history:"$(git -C "$T/runs2.git" ls-tree -r --name-only profgate-history | grep jsonl | head -1)" >"$T/runs-rec2.jsonl"
check "... history append of the verdict keeps the same runs" \
	[ "$(field "$T/runs-rec2.jsonl" 'd["runs"]')" = "$(field "$T/runs-rec.jsonl" 'd["runs"]')" ]
pg gate -b "$T/h-base-1.json" -b "$T/h-base-2.json" -c "$T/h-base-3.json" --json "$T/mraa.json"
check "A/A with two baseline runs: not a fail, nothing attributed" \
	[ "$rc" -eq 0 ] && [ "$(field "$T/mraa.json" 'd["verdict"] != "fail" and d["attribution"] == []')" = True ]
# a thresholds file whose step prior is tiny, so the records' own spread shows
python3 - "$T/tiny.json" <<'PY'
import json, sys
th = {"schema": "profgate.thresholds/1", "name": "tiny-prior", "significance": 0.01,
      "rules": [{"metric": "step.median_us", "direction": "lower", "test": True,
                 "warn": {"relative": 0.02}, "fail": {"relative": 0.05},
                 "noise": {"relative": 0.0001}}]}
json.dump(th, open(sys.argv[1], "w"))
PY
git init -q --bare "$T/noise.git"
for f in base-1 base-2 base-3; do
	PROFGATE_TIME=2024-01-0${f#base-}T00:00:00Z pg gate -b "$T/h-matmul25-1.json" -c "$T/h-$f.json" \
		--label noise --history "$T/noise.git" --kind nightly --history-required
done
check "three nightly records appended" [ "$rc" -ne 5 ] && [ "$(git -C "$T/noise.git" rev-list --count profgate-history)" -eq 3 ]
pg gate -b "$T/h-base-1.json" -c "$T/h-base-2.json" --thresholds "$T/tiny.json" --label noise \
	--history "$T/noise.git" --kind pr --json "$T/hn.json"
check "one run a side with --history: the series' records give the step its noise" \
	[ "$(field "$T/hn.json" '[m["noise_from"] for m in d["metrics"] if m["name"] == "step.median_us"]')" = "['history']" ]
pg gate -b "$T/h-base-1.json" -c "$T/h-base-2.json" --thresholds "$T/tiny.json" --label noise \
	--json "$T/hn2.json"
check "... and without a history, the prior" \
	[ "$(field "$T/hn2.json" '[m["noise_from"] for m in d["metrics"] if m["name"] == "step.median_us"]')" = "['prior']" ]
pg gate -b "history:*" -b "$T/h-base-1.json" -c "$T/h-base-2.json" --history "$T/noise.git"
check "history:... beside another --baseline: exit 2" [ "$rc" -eq 2 ]

# ---- null shares: written null, read back null, never judged ----
# the bundled pair has no communication: comm_overlap_share is null on both sides; a baseline
# given an overlap beside that null candidate shows it gone, never a fail, under a rule that
# fails any drop
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["breakdown"]["mean"]["comm_overlap_share"] is None
d["breakdown"]["mean"]["comm_overlap_share"] = 0.5
json.dump(d, open(sys.argv[2], "w"), indent=2)
' "$T/base.json" "$T/base-ov.json"
cat >"$T/ov.json" <<'JSON'
{"schema": "profgate.thresholds/1", "rules": [
 {"metric": "breakdown.comm_overlap_share", "direction": "higher", "fail": {"absolute": 0.01}},
 {"metric": "step.*", "direction": "info"}]}
JSON
pg gate --baseline "$T/base-ov.json" --candidate "$T/cand.json" --thresholds "$T/ov.json" --json "$T/vov.json"
check "a null share in the candidate is gone, not judged: exit 0" \
	[ "$rc" -eq 0 -a "$(field "$T/vov.json" '[m["verdict"] for m in d["metrics"] if m["name"] == "breakdown.comm_overlap_share"]')" = "['gone']" ]
pg gate --baseline "$T/base.json" --candidate "$T/cand.json" --thresholds "$T/ov.json" --json "$T/vnn.json"
check "null on both sides: no row for it at all" \
	[ "$(field "$T/vnn.json" '[m["name"] for m in d["metrics"] if m["name"].startswith("breakdown.comm")]')" = "[]" ]

# ---- usage and input errors ----
pg gate -b "$T/base.json"
check "gate without --candidate: exit 2" [ "$rc" -eq 2 ]
pg gate -b "$T/base.json" -c "$T/nope.json"
check "gate with a missing candidate: exit 3, one line" [ "$rc" -eq 3 ] && [ "$(wc -l <"$T/err")" -eq 1 ]
pg gate -b "$T/base.json" -c "$T/cand.json" --json "$T/no/such/dir/v.json"
check "an unwritable --json: exit 3, no partial file" [ "$rc" -eq 3 ] && [ ! -e "$T/no/such/dir/v.json" ]
pg compare "$T/base.json"
check "compare with one input: exit 2" [ "$rc" -eq 2 ]

done_testing
