#!/bin/sh
# W&B end to end, against a fake W&B on loopback (tests/e2e/lib/fake_wandb.py): fetch a run's
# jax_profile artifact and summarize it (the bundled Kineto pair, and corpus XPlane files when
# ../shared/corpus is there), gate two W&B runs, publish a summary and read it back, a rerun
# downloads nothing, and every fault (401, 429, 500, GraphQL errors, null run and project, no
# profile artifact, a cut, truncated or corrupt download, an expired URL, hostile or oversized
# manifests) gives its one line and documented exit code. The key never shows up anywhere.
set -u
# test-tier: full
. "$(dirname "$0")/lib/tap.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
CORPUS=${PG_CORPUS:-$TOP/../shared/corpus}
EX=$TOP/tests/data/examples
BASE=$EX/baseline.rank-0.pt.trace.json.gz
CAND=$EX/candidate.rank-0.matmul-slower.pt.trace.json.gz
KEY=pgtest-3f9c1e7a5b2d4c6e8f0a1b3c5d7e9f1a2b4c6d8e
PG_TEST_WANDB_KEY=$KEY

unset WANDB_ENTITY WANDB_PROJECT WANDB_API_KEY WANDB_BASE_URL XDG_CACHE_HOME \
	http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
HOME=$T/home PROFGATE_CACHE_DIR=$T/cache
export HOME PROFGATE_CACHE_DIR PG_TEST_WANDB_KEY
mkdir -p "$HOME"

srv_pid=
trap '[ -n "$srv_pid" ] && kill $srv_pid 2>/dev/null; rm -rf "$T"' EXIT
trap '[ -n "$srv_pid" ] && kill $srv_pid 2>/dev/null; rm -rf "$T"; exit 130' INT TERM

# ---- the fake's runs ----
XP=
for f in "$CORPUS/AMD-AGI__TraceLens/jax08_conv_tw003.xplane.pb" \
	"$CORPUS/openxla__xprof/tpu_inference_2.xplane.pb"; do
	[ -f "$f" ] && XP="$XP $f"
done
# Each fault run gets bytes of its own (the candidate plus k empty gzip members, which readers
# skip), so that no fault is hidden by the digest cache.
mkdir -p "$T/var"
k=0
for f in truncate corrupt extra cut-once expired-once expired-always; do
	k=$((k + 1))
	cp "$CAND" "$T/var/$f.pt.trace.json.gz"
	for _ in $(seq "$k"); do printf '' | gzip -n >>"$T/var/$f.pt.trace.json.gz"; done
done
# ten files of distinct bytes for the download pool
for k in 0 1 2 3 4 5 6 7 8 9; do
	cp "$CAND" "$T/var/many$k.pt.trace.json.gz"
	for _ in $(seq $((k + 10))); do printf '' | gzip -n >>"$T/var/many$k.pt.trace.json.gz"; done
done
mkdir -p "$T/logs/logdir1/profiler/plugins/profile/2025_03_16_07_26_24"
cp "$BASE" "$T/logs/logdir1/profiler/plugins/profile/2025_03_16_07_26_24/host0.pt.trace.json.gz"
python3 - "$T/spec.json" "$BASE" "$CAND" "$T/logs" "$T/var" $XP <<'PY'
import json, sys
out, base, cand, logs, var = sys.argv[1:6]
xp = sys.argv[6:]
P = "plugins/profile/2025_03_16_07_26_24/"
def art(name, files, **kw):
    return dict(name=name, files=files, **kw)
def run(arts, **kw):
    return dict(artifacts=arts, **kw)
b = {P + "host0.pt.trace.json.gz": base}
c = {P + "host0.pt.trace.json.gz": cand}
runs = {
  "acme/llm/base1": run([art("profiler", c, aliases=["old"]), art("run-base1-profiler", b)],
      displayName="llama-base", commit="0123abc",
      config={"trainer": {"log_dir": "gs://bucket/logs", "id": "base1"}, "git_commit": "feedbeef",
              "lr": 0.0003, "seed": 7, "name": "llama \u00e9"},
      summary={"throughput/device_kind": "Tesla V100-SXM2-32GB", "num_devices": 1},
      extra_artifacts=120),
  "acme/llm/cand1": run([art("run-cand1-profiler", c)], displayName="llama-cand",
      config={"trainer": {"trainer": {"log_dir": "logs"}}}),
  "acme/llm/logdir1": run([], config={"trainer": {"log_dir": logs, "id": "logdir1"}}),
  "acme/llm/noprof": run([art("config", {}, type="config")], config={"model": {"d": 1}}),
  "acme/llm/tokens1": run([art("run-tokens1-profiler", b)],
      config={"tokens_per_step": 4096, "samples_per_step": 8}),
  "acme/llm/tokens2": run([art("run-tokens2-profiler", c)], config={"tokens_per_step": 4096}),
  "acme/llm/pending": run([art("run-pending-profiler", b, fault="pending")]),
  "acme/llm/r429": run([art("run-r429-profiler", b)], fault="429-once"),
  "acme/llm/r500": run([art("run-r500-profiler", b)], fault="500-once"),
  "acme/llm/rerr": run([art("run-rerr-profiler", b)], fault="errors"),
  "acme/llm/partial": run([art("run-partial-profiler", b)], fault="errors-partial",
      summary={"loss": 1.5}),
  "acme/llm/denied": run([art("run-denied-profiler", b)], fault="errors-denied"),
  "acme/llm/conflict": run([art("run-conflict-profiler", b)], fault="409-summary",
      summary={"loss": 2.5}),
  # W&B's JSON dialect: a diverged loss, an infinite grad norm
  "acme/llm/nonfinite": run([art("run-nonfinite-profiler", b)],
      summary={"loss": float("nan"), "grad_norm": float("inf"), "lr_min": float("-inf"),
               "acc": 0.5, "hist": {"v": [1, float("nan")]}, "name": "NaN \"Infinity\"",
               "throughput/device_kind": "Tesla V100-SXM2-32GB"}),
  "acme/llm/refused": run([art("run-refused-profiler", b)], fault="commit-refused",
      summary={"loss": 3.5}),
  "acme/llm/cutsum": run([art("run-cutsum-profiler", b)], fault="summary-cut",
      summary={"loss": 4.5, "acc": 0.25}),
}
runs["acme/llm/tenfiles"] = run([art("run-tenfiles-profiler",
    {P + "host%d.pt.trace.json.gz" % k: "%s/many%d.pt.trace.json.gz" % (var, k) for k in range(10)},
    fault="slow")])
OWN = ("truncate", "corrupt", "extra", "cut-once", "expired-once", "expired-always")
for f in OWN + ("dotdot", "absolute", "nul", "long", "huge", "many", "bigmanifest"):
    mine = {P + "host0.pt.trace.json.gz": "%s/%s.pt.trace.json.gz" % (var, f)}
    runs["acme/llm/" + f] = run([art("run-%s-profiler" % f, mine if f in OWN else c, fault=f)])
if xp:
    runs["acme/tpu/xplane1"] = run([art("run-xplane1-profiler",
        {P + "host%d.xplane.pb" % i: x for i, x in enumerate(xp[:1])})])
json.dump({"runs": runs}, open(out, "w"))
PY

python3 "$TOP/tests/e2e/lib/fake_wandb.py" "$T/spec.json" "$T/port" "$T/log" 2>"$T/srv.err" &
srv_pid=$!
for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	[ -s "$T/port" ] && break
	sleep 0.25
done
if [ ! -s "$T/port" ]; then
	not_ok "the fake W&B server started"
	diag_file "$T/srv.err" 10
	done_testing
	exit 1
fi
URL=http://127.0.0.1:$(cat "$T/port")

# wb ARGS...: profgate with the W&B environment; every output is kept in $T/all for the key check.
wb() {
	timeout 60 env WANDB_BASE_URL="$URL" WANDB_API_KEY="${WB_KEY-$KEY}" "$PROFGATE" "$@" \
		>"$T/out" 2>"$T/err" </dev/null
	rc=$?
	cat "$T/out" "$T/err" >>"$T/all"
}
# count PATTERN: requests in the fake's log matching the extended regex.
count() {
	grep -cE "$1" "$T/log" || true
}
# fails TITLE CODE TEXT: exit CODE and a last stderr line "profgate: ..." naming TEXT; the only
# other stderr lines are stage lines ("wandb: ...") and retries.
fails() {
	last=$(tail -n 1 "$T/err")
	errs=$(grep -c '^profgate: ' "$T/err")
	retries=$(grep -c '^profgate: .*retrying in' "$T/err")
	case $last in
	"profgate: "*"$3"*)
		if [ "$rc" -eq "$2" ] && [ $((errs - retries)) -eq 1 ]; then
			ok "$1: exit $2, one line"
			return
		fi
		;;
	esac
	not_ok "$1: exit $rc (want $2), last line: $last"
	diag_file "$T/err" 6
}
# js FILE EXPR...: python expressions over d (the JSON of FILE) hold.
js() {
	_t=$1
	shift
	pycheck "$_t" 'd = json.load(open(sys.argv[1]))' "$@"
}

# ---- fetch a run's profile and summarize it ----
wb fetch wandb://acme/llm/base1
check "fetch a run: exit 0" [ "$rc" -eq 0 ]
check "fetch prints the artifact picked by alias latest and the run" \
	sh -c "head -n 1 '$T/out' | grep -qx 'wandb-artifact://acme/llm/run-base1-profiler:v0' &&
		grep -q '^  run: acme/llm/base1 (llama-base)' '$T/out' &&
		grep -q \"chosen by: alias 'latest'\" '$T/out'"
check "fetch lists the file, downloaded, and what summarize reads" \
	sh -c "grep -qE '^ +1152519  downloaded plugins/profile/2025_03_16_07_26_24/host0.pt.trace.json.gz' '$T/out' &&
		grep -q '^  profiles read: 1' '$T/out'"
check "the 121 other artifacts were paged through (2 pages)" [ "$(count 'op=RunOutputArtifacts')" -eq 2 ]
check "progress: a stage line on stderr" grep -q '^wandb: run acme/llm/base1: artifact acme/llm/run-base1-profiler:v0' "$T/err"
check "the key went only to /graphql; storage never saw an Authorization header" \
	sh -c "[ \"\$(grep -c 'auth=yes' '$T/log')\" -eq \"\$(grep -c '^POST /graphql' '$T/log')\" ] &&
		! grep -q '/storage/.*auth=yes' '$T/log'"

files_before=$(count '^GET /storage/')
wb summarize wandb://acme/llm/base1 -o "$T/wb-base.json"
check "summarize wandb://: exit 0, and the rerun downloaded nothing (no storage GET)" \
	[ "$rc" -eq 0 ] && [ "$(count '^GET /storage/')" -eq "$files_before" ]
check "the rerun says every file came from the cache" grep -q 'every file from the cache' "$T/err"
pg summarize "$BASE" -o "$T/local-base.json"
js "identity.run: path, id, name, artifact, git sha (config first), device kind" "$T/wb-base.json" \
	"d['identity']['run']['path'] == 'acme/llm/base1'" "d['identity']['run']['id'] == 'base1'" \
	"d['identity']['run']['name'] == 'llama-base'" \
	"d['identity']['run']['artifact'] == 'acme/llm/run-base1-profiler:v0'" \
	"d['identity']['run']['git_sha'] == 'feedbeef'" \
	"d['identity']['run']['device_kind'] == 'Tesla V100-SXM2-32GB'" \
	"d['source']['files'][0]['path'] == 'wandb-artifact://acme/llm/run-base1-profiler:v0/plugins/profile/2025_03_16_07_26_24/host0.pt.trace.json.gz'"
python3 - "$T/spec.json" >"$T/cfghash" <<'PY'
import hashlib, json, sys
cfg = json.load(open(sys.argv[1]))["runs"]["acme/llm/base1"]["config"]
print(hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()[:16])
PY
js "config_hash is marin's: sha256 of json.dumps(config, sort_keys=True), 16 hex" "$T/wb-base.json" \
	"d['identity']['run']['config_hash'] == open('$T/cfghash').read().strip()"
check "a local summary has no run block" sh -c "! grep -q '\"run\":' '$T/local-base.json'"
pycheck "the W&B summary is the local one but for file paths and identity.run" \
	'a, b = (json.load(open(p)) for p in (sys.argv[1], "'"$T/local-base.json"'"))' "$T/wb-base.json" \
	"a['identity'].pop('run') is not None" \
	"[f.pop('path') for f in a['source']['files']] and [f.pop('path') for f in b['source']['files']]" \
	"a == b"

# the corpus XPlane through W&B
if [ -n "$XP" ]; then
	wb summarize wandb://acme/tpu/xplane1 -o "$T/wb-xp.json"
	set -- $XP
	pg summarize "$1" -o "$T/local-xp.json"
	pycheck "a corpus XPlane fetched from W&B summarizes as the local file" \
		'a, b = (json.load(open(p)) for p in (sys.argv[1], "'"$T/local-xp.json"'"))' "$T/wb-xp.json" \
		"a['identity'].pop('run')['artifact'] == 'acme/tpu/run-xplane1-profiler:v0'" \
		"[f.pop('path') for f in a['source']['files']] and [f.pop('path') for f in b['source']['files']]" \
		"a == b" "a['source']['files'][0]['format'] == 'xplane'"
else
	skip "corpus XPlane through W&B: no corpus at $CORPUS"
fi

# ---- ref forms ----
wb summarize "$URL/acme/llm/runs/base1/overview?workspace=x" -o "$T/wb-url.json"
check "a run URL on the server's host works and gives the same summary" \
	sh -c "[ $rc -eq 0 ] && cmp -s '$T/wb-url.json' '$T/wb-base.json'"
timeout 60 env WANDB_BASE_URL="$URL" WANDB_API_KEY="$KEY" WANDB_ENTITY=acme WANDB_PROJECT=llm \
	"$PROFGATE" summarize wandb://base1 -o "$T/wb-short.json" >"$T/out" 2>"$T/err"
rc=$?
check "wandb://RUN_ID with WANDB_ENTITY and WANDB_PROJECT" \
	sh -c "[ $rc -eq 0 ] && cmp -s '$T/wb-short.json' '$T/wb-base.json'"
wb summarize wandb://acme/llm/base1:old -o "$T/wb-old.json"
js "wandb://E/P/RUN:ALIAS picks the artifact with that alias" "$T/wb-old.json" \
	"d['identity']['run']['artifact'] == 'acme/llm/profiler:v0'"
wb fetch wandb-artifact://acme/llm/run-cand1-profiler:latest -o "$T/cand-dir"
check "fetch an artifact ref into -o DIR" \
	sh -c "[ $rc -eq 0 ] && cmp -s '$T/cand-dir/plugins/profile/2025_03_16_07_26_24/host0.pt.trace.json.gz' '$CAND'"
wb summarize wandb://acme/llm/tokens1 -o "$T/wb-tokens.json"
js "the run's config tokens_per_step and samples_per_step give throughput's rates" "$T/wb-tokens.json" \
	"d['throughput']['tokens_per_step'] == 4096" "d['throughput']['samples_per_step'] == 8" \
	"abs(d['throughput']['tokens_per_s'] - 4096 / (d['steps']['steady']['median_us'] * 1e-6)) <= 1e-3"
wb summarize wandb://acme/llm/tokens1 --tokens-per-step 100 -o "$T/wb-tokens.json"
js "--tokens-per-step wins over the run's config" "$T/wb-tokens.json" \
	"d['throughput']['tokens_per_step'] == 100" "d['throughput']['samples_per_step'] == 8"
wb gate -b wandb://acme/llm/tokens1 -c wandb://acme/llm/tokens2 --json "$T/v-tokens.json"
js "a gate on W&B runs judges the configs' tokens_per_s too (higher is better: the slower run is worse)" "$T/v-tokens.json" \
	"[m['limit']['direction'] for m in d['metrics'] if m['name'] == 'throughput.tokens_per_s'] == ['higher']" \
	"[m['delta'] < 0 for m in d['metrics'] if m['name'] == 'throughput.tokens_per_s'] == [True]"
wb fetch wandb://acme/llm/logdir1
check "a run without an artifact: its trainer.log_dir/<id>/profiler, when here" \
	sh -c "[ $rc -eq 0 ] && grep -q \"folder: $T/logs/logdir1/profiler (the run's trainer.log_dir\" '$T/out'"
wb inspect wandb://acme/llm/cand1
check "inspect takes a W&B ref" sh -c "[ $rc -eq 0 ] && grep -q 'kineto' '$T/out'"

# ---- gate two W&B runs ----
wb gate -b wandb://acme/llm/base1 -c wandb://acme/llm/cand1 --json "$T/v.json" --report "$T/r.md"
check "gate two W&B runs: the matmul regression fails (exit 1)" [ "$rc" -eq 1 ]
js "the verdict names the W&B refs and the failing family" "$T/v.json" \
	"d['verdict'] == 'fail'" "d['baseline']['path'] == 'wandb://acme/llm/base1'" \
	"d['candidate']['path'] == 'wandb://acme/llm/cand1'" "d['attribution'][0]['name'] == 'matmul'"
wb gate -b wandb://acme/llm/base1 -c wandb://acme/llm/r500
check "the same bytes from two runs are refused as identical (exit 4)" [ "$rc" -eq 4 ]
check "  ... after one retry of the 500" sh -c "grep -q 'attempt 1 of 5: HTTP 500' '$T/err'"

# ---- publish and read back ----
pg report "$T/wb-base.json" -o "$T/base.md"
wb publish "$T/wb-base.json" --report "$T/base.md" --run wandb://acme/llm/base1 --alias nightly
check "publish to a run: exit 0, the artifact and the summary keys" \
	sh -c "[ $rc -eq 0 ] && grep -q '^publish: logged acme/llm/profile-summary-base1:v0 (3 uploads) from run acme/llm/base1$' '$T/out' &&
		grep -q '^publish: wrote [0-9]* profgate/\* keys into the summary of run acme/llm/base1' '$T/out'"
curl -s "$URL/_state" >"$T/state.json" 2>/dev/null || python3 -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('$URL/_state').read().decode())" >"$T/state.json"
js "the fake holds a committed profile_summary with latest and nightly, logged by the run" "$T/state.json" \
	"[(a['type'], a['state'], a['run'], sorted(a['aliases'])) for a in d['artifacts'] if a['name'] == 'profile-summary-base1'] == [('profile_summary', 'COMMITTED', 'base1', ['latest', 'nightly', 'v0'])]" \
	"[sorted(a['files']) for a in d['artifacts'] if a['name'] == 'profile-summary-base1'] == [['report.md', 'summary.json']]"
pycheck "the run summary kept its keys and got the headline numbers" \
	'd = json.load(open(sys.argv[1])); s = json.load(open("'"$T/wb-base.json"'")); r = d["runs"]["acme/llm/base1"]["summary"]' \
	"$T/state.json" "r['num_devices'] == 1" \
	"abs(r['profgate/step_median_us'] - s['steps']['steady']['median_us']) < 1e-6" \
	"r['profgate/steady_steps'] == s['steps']['steady']['count']" \
	"r['profgate/summary_artifact'] == 'acme/llm/profile-summary-base1:v0'"
wb fetch wandb-artifact://acme/llm/profile-summary-base1:nightly -o "$T/pub"
check "read it back: the artifact's summary.json and report.md are the bytes published" \
	sh -c "[ $rc -eq 0 ] && cmp -s '$T/pub/summary.json' '$T/wb-base.json' && cmp -s '$T/pub/report.md' '$T/base.md'"
wb gate -b wandb-artifact://acme/llm/profile-summary-base1:latest -c wandb://acme/llm/cand1
check "the published summary is a gate baseline (exit 1, the regression)" [ "$rc" -eq 1 ]
wb publish "$T/wb-base.json" --report "$T/base.md" --run wandb://acme/llm/base1 --alias nightly
check "publishing the same files again adds no version" \
	sh -c "[ $rc -eq 0 ] && grep -q 'already holds these files as acme/llm/profile-summary-base1:v0' '$T/out'"
wb publish "$T/wb-base.json" --project acme/llm --name pg-e2e
check "publish without a run makes a publish run (the summary's bytes are stored: 1 upload)" \
	sh -c "[ $rc -eq 0 ] && grep -q '^publish: logged acme/llm/pg-e2e:v0 (1 upload) from run acme/llm/[a-z0-9]\{8\} (made for it)$' '$T/out'"
WB_KEY=wrong wb publish "$T/wb-base.json" --run wandb://acme/llm/base1
fails "publish with a bad key" 5 "refused the API key"
wb publish "$T/nope.json" --run wandb://acme/llm/base1
fails "publish of a missing summary" 3 "nope.json"
wb publish "$T/wb-base.json" --run wandb://acme/llm/missing
fails "publish to a missing run" 5 "run 'acme/llm/missing' not found"

# ---- faults ----
WB_KEY=wrong wb summarize wandb://acme/llm/base1
fails "a bad key (401)" 3 "refused the API key (HTTP 401); check WANDB_API_KEY"
wb summarize wandb://acme/llm/missing
fails "a missing run (200 with null)" 3 "wandb: run 'acme/llm/missing' not found"
wb summarize wandb://acme/nowhere/base1
fails "a missing project" 3 "wandb: project 'acme/nowhere' not found"
wb summarize wandb://acme/llm/noprof
fails "a run with no profile artifact" 3 "has no jax_profile artifact (1 of other types) and its config has no trainer.log_dir"
wb summarize wandb://acme/llm/cand1
check "(cand1 has its artifact; its nested trainer.trainer.log_dir is only a fallback)" [ "$rc" -eq 0 ]
wb summarize wandb://acme/llm/pending
fails "a profile artifact never committed" 3 "none committed"
wb summarize wandb://acme/llm/rerr
fails "GraphQL errors with null data" 3 "internal resolver error"
wb summarize wandb://acme/llm/r429
check "429 with Retry-After 1: retried once, then fine" \
	sh -c "[ $rc -eq 0 ] && grep -q 'attempt 1 of 5: HTTP 429.*retrying in 1.0 s' '$T/err' && [ \$(grep -c 'op=RunInfo' '$T/log') -ge 2 ]"
n0=$(count '^GET /storage/file/')
wb summarize wandb://acme/llm/cut-once
check "a download cut mid-body is retried and then fine" \
	sh -c "[ $rc -eq 0 ] && [ $(count '^GET /storage/file/') -eq $((n0 + 2)) ] && grep -q 'attempt 1 of 5' '$T/err'"
n0=$(count '^GET /storage/file/') u0=$(count 'op=ArtifactCollectionMembershipFileURLs')
wb summarize wandb://acme/llm/expired-once
check "an expired signed URL (403): fresh URLs once, then fine" \
	sh -c "[ $rc -eq 0 ] && [ $(count '^GET /storage/file/') -eq $((n0 + 2)) ] && [ $(count 'op=ArtifactCollectionMembershipFileURLs') -eq $((u0 + 2)) ]"
wb summarize wandb://acme/llm/expired-always
check "every signed URL refused (403): the files from W&B's download handler, with the key" \
	sh -c "[ $rc -eq 0 ] && grep -q \"the signed URL failed (HTTP 403); downloading it from W&B with the key\" '$T/err' &&
		grep -qE '^GET /artifactsV2/default/acme/llm/run-expired-always-profiler/[^/]+/[0-9a-f]{32}/host0.pt.trace.json.gz op=- auth=yes$' '$T/log'"
check "... the key went to the base URL's handler only, never to a signed URL" \
	sh -c "! grep -q '^GET /storage/.*auth=yes' '$T/log'"

# ---- files side by side, on a bounded pool ----
wb fetch wandb://acme/llm/tenfiles -o "$T/ten"
python3 -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('$URL/_state').read().decode())" >"$T/state-ten.json"
check "ten files: fetched, every one as its bytes" \
	sh -c "[ $rc -eq 0 ] && for k in 0 1 2 3 4 5 6 7 8 9; do cmp -s '$T/ten/plugins/profile/2025_03_16_07_26_24/host'\$k.pt.trace.json.gz '$T/var/many'\$k.pt.trace.json.gz || exit 1; done"
js "... downloaded side by side, at most 8 at once" "$T/state-ten.json" \
	"2 <= d['max_inflight'] <= 8"

# ---- GraphQL errors beside data: reported; fatal when what is needed is missing ----
wb summarize wandb://acme/llm/partial -o "$T/partial.json"
check "an error on a field the fetch does not need (summaryMetrics): reported on its line, exit 0" \
	sh -c "[ $rc -eq 0 ] && grep -q '^wandb: RunInfo: W&B reported an error at project.run.summaryMetrics: summaryMetrics: the history store timed out$' '$T/err'"
wb publish "$T/wb-base.json" --run wandb://acme/llm/partial --name pg-partial
fails "publish into a run whose summary did not come: not written over" 5 \
	"the history store timed out; the run's summary is not written over"
python3 -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('$URL/_state').read().decode())" >"$T/state2.json"
js "... the run's summary untouched" "$T/state2.json" "d['runs']['acme/llm/partial']['summary'] == {'loss': 1.5}"
wb summarize wandb://acme/llm/denied
fails "a null run with an error naming it: the error, not 'not found'" 3 \
	"wandb: RunInfo: permission denied: you may not read run denied"

# ---- a 409 on the summary write: read again, merged again ----
wb publish "$T/wb-base.json" --run wandb://acme/llm/conflict --name pg-conflict
check "publish, the summary write answered 409: read again and written, exit 0" \
	sh -c "[ $rc -eq 0 ] && grep -q 'UpsertBucket: attempt 1 of 5: HTTP 409' '$T/err' && grep -q '^publish: wrote [0-9]* profgate/\\* keys' '$T/out'"
python3 -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('$URL/_state').read().decode())" >"$T/state3.json"
js "... the summary holds what was written meanwhile and the profgate keys" "$T/state3.json" \
	"d['runs']['acme/llm/conflict']['summary']['other/written_meanwhile'] == 42" \
	"d['runs']['acme/llm/conflict']['summary']['loss'] == 2.5" \
	"d['runs']['acme/llm/conflict']['summary']['profgate/summary_artifact'] == 'acme/llm/pg-conflict:v0'"

# ---- W&B's JSON dialect, refused commits, signed uploads ----
wb publish "$T/wb-base.json" --run wandb://acme/llm/nonfinite --name pg-nonfinite
check "publish into a summary holding NaN and Infinity: exit 0, the keys written" \
	sh -c "[ $rc -eq 0 ] && grep -q '^publish: wrote [0-9]* profgate/\\* keys into the summary of run acme/llm/nonfinite' '$T/out'"
python3 -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('$URL/_state').read().decode())" >"$T/state4.json"
js "... every key and value kept (NaN, Infinity, -Infinity, nested), beside the profgate keys" \
	"$T/state4.json" "(s := d['runs']['acme/llm/nonfinite']['summary']) is not None" \
	"s['loss'] != s['loss'] and s['grad_norm'] == float('inf') and s['lr_min'] == -float('inf')" \
	"s['acc'] == 0.5 and s['hist']['v'][0] == 1 and s['hist']['v'][1] != s['hist']['v'][1]" \
	"s['name'] == 'NaN \"Infinity\"'" \
	"s['profgate/summary_artifact'] == 'acme/llm/pg-nonfinite:v0'" \
	"len([k for k in s if not k.startswith('profgate/')]) == 7"
js "... CreateArtifact drew two client ids" "$T/state4.json" \
	"(a := [x for x in d['artifacts'] if x['name'] == 'pg-nonfinite'][0]) is not None" \
	"len(a['client_ids']) == 2 and all(a['client_ids']) and a['client_ids'][0] != a['client_ids'][1]"
wb summarize wandb://acme/llm/nonfinite -o "$T/nonfinite.json"
js "fetch reads a NaN summary's device kind (W&B's dialect, not a parse failure)" "$T/nonfinite.json" \
	"d['identity']['run']['device_kind'] == 'Tesla V100-SXM2-32GB'"
check "... and no uploads carried a Content-Type storage did not sign (no 403 on a PUT)" \
	sh -c "! grep -q 'refused the upload' '$T/all'"
wb publish "$T/wb-base.json" --run wandb://acme/llm/refused --name pg-refused
fails "W&B refuses commitArtifact (200, errors, null): exit 5, the server's message" 5 \
	"wandb: CommitArtifact: storage quota exceeded: the artifact was not committed"
python3 -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('$URL/_state').read().decode())" >"$T/state5.json"
js "... the run's summary untouched, the artifact not committed" "$T/state5.json" \
	"d['runs']['acme/llm/refused']['summary'] == {'loss': 3.5}" \
	"[x['state'] for x in d['artifacts'] if x['name'] == 'pg-refused'] == ['PENDING']"
wb publish "$T/wb-base.json" --run wandb://acme/llm/cutsum --name pg-cutsum
fails "a summary served cut short is not written back: exit 5, the reason" 5 \
	"the summary of run 'acme/llm/cutsum' is not JSON as W&B writes it (byte"
python3 -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('$URL/_state').read().decode())" >"$T/state6.json"
js "... the run's summary untouched" "$T/state6.json" \
	"d['runs']['acme/llm/cutsum']['summary'] == {'loss': 4.5, 'acc': 0.25}"

# ---- an older server: no collection-membership file query, no newer download path ----
python3 -c "import json,sys; d = json.load(open(sys.argv[1])); d['old_server'] = True; json.dump(d, open(sys.argv[2], 'w'))" \
	"$T/spec.json" "$T/spec-old.json"
python3 "$TOP/tests/e2e/lib/fake_wandb.py" "$T/spec-old.json" "$T/port-old" "$T/log-old" 2>"$T/srv-old.err" &
srv_pid="$srv_pid $!"
for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	[ -s "$T/port-old" ] && break
	sleep 0.25
done
timeout 60 env WANDB_BASE_URL="http://127.0.0.1:$(cat "$T/port-old")" WANDB_API_KEY="$KEY" \
	PROFGATE_CACHE_DIR="$T/cache-old" "$PROFGATE" summarize wandb://acme/llm/expired-always \
	-o "$T/old.json" >"$T/out" 2>"$T/err" </dev/null
rc=$?
cat "$T/out" "$T/err" >>"$T/all"
check "an older server: the file URLs by the artifact's id, the handler's older path; exit 0" \
	sh -c "[ $rc -eq 0 ] && grep -q 'op=ArtifactFileURLs' '$T/log-old' &&
		grep -qE '^GET /artifactsV2/default/acme/[^/]+/[0-9a-f]{32} op=- auth=yes$' '$T/log-old'"

wb summarize wandb://acme/llm/truncate
size=$(wc -c <"$T/var/truncate.pt.trace.json.gz" | tr -d ' ')
fails "a truncated download" 3 "is truncated: $((size / 2)) of $size bytes arrived"
wb summarize wandb://acme/llm/corrupt
fails "a download that does not match its digest" 3 "does not match its digest"
wb summarize wandb://acme/llm/extra
size=$(wc -c <"$T/var/extra.pt.trace.json.gz" | tr -d ' ')
fails "a download longer than the manifest says" 3 "is longer than the manifest's $size bytes"
check "  ... and nothing of it is left in the cache" \
	sh -c "! ls '$T/cache/wandb/blobs' | grep -q part"
wb summarize wandb://acme/llm/dotdot
fails "a manifest path with '..'" 3 "refused the manifest path 'plugins/../../escape.pt.trace.json': climbs out of the folder"
wb summarize wandb://acme/llm/absolute
fails "an absolute manifest path" 3 "refused the manifest path '/tmp/escape.pt.trace.json': absolute"
wb summarize wandb://acme/llm/nul
fails "a manifest path with a NUL" 3 "a path holds a NUL byte"
wb summarize wandb://acme/llm/long
fails "a manifest path too long" 3 "longer than 1024 bytes"
wb summarize wandb://acme/llm/huge
fails "a file over the size cap" 3 "over the cap of 16 GiB"
wb summarize wandb://acme/llm/many
fails "more files than the count cap" 3 "lists 10002 files, over the cap of 10000"
wb summarize wandb://acme/llm/bigmanifest
fails "a manifest over 64 MiB: refused, naming the manifest" 3 "the manifest of acme/llm/run-bigmanifest-profiler:v0 is over the cap of 64 MiB"
check "nothing escaped the download folders" sh -c "[ ! -e '$T/escape.pt.trace.json' ] && [ ! -e /tmp/escape.pt.trace.json ] && [ -z \"\$(find '$T/cache' -name 'escape*')\" ]"
wb summarize wandb://acme/llm/a/b/c
fails "a malformed ref is a usage error" 2 "is not a W&B ref"
wb summarize https://wandb.ai/acme/llm/runs/base1
fails "a run URL on another host than WANDB_BASE_URL" 2 "set WANDB_BASE_URL to that server"
wb summarize wandb://base1
fails "a short ref without WANDB_ENTITY" 2 "no entity"
wb fetch "$BASE"
fails "fetch of a local path" 2 "give one W&B run or artifact ref"

# ---- the key ----
B64=$(printf 'api:%s' "$KEY" | base64 -w0)
check "the key (and its Basic form) is nowhere in stdout, stderr or the cache" \
	sh -c "! grep -rqF -e '$KEY' -e '$B64' '$T/all' '$T/cache'"

done_testing
