#!/bin/sh
# profgate action end to end, run as the Actions runner runs the Docker action's entrypoint
# (tests/e2e/lib/run_action.py: INPUT_* from action.yml's defaults and the step's `with:`),
# against the fake GitHub and a local bare repository as the history remote: a same-repository
# pull request (gate, history, comment, check run on the head commit, job summary, annotations,
# outputs parsed back by the runner's rules), a rerun (updated in place, no second record),
# fail_on, the first nightly run against a history that holds nothing (recorded, exit 0 under
# fail_on warn), a fork's pull request (no comment, check run or push; the summary says why), the
# workflow_run half of the fork-safe split, input errors, escaped annotations for hostile op
# names, the secrets: masked first, never printed, never stored; and a CPU-only runner gating
# host profiles of a CPU PyTorch run.
set -u
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/github.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
EX=$TOP/tests/data/examples
RUN_ACTION=$TOP/tests/e2e/lib/run_action.py
if ! python3 -c 'import yaml' 2>/dev/null; then
	echo "1..0 # skip python3-yaml is not installed (apt-get install python3-yaml)"
	exit 0
fi
TOKEN=ghs_actionstoken_5e6f7a8b9c0d1e2f
WANDB=wandb_key_0123456789abcdef0123456789abcdef01234567
HEAD=1111111111111111111111111111111111111111
MERGE=3333333333333333333333333333333333333333
gh_ctl '{"tokens": {"'$TOKEN'": {"login": "github-actions[bot]"}}}'

WS=$T/ws
mkdir -p "$WS/profiles" "$T/files" "$T/cache"
cp "$EX/baseline.rank-0.pt.trace.json.gz" "$EX/candidate.rank-0.matmul-slower.pt.trace.json.gz" \
	"$WS/profiles/"
git init -q --bare "$T/history.git"
cat >"$T/event.json" <<EOF
{"number": 11, "action": "synchronize", "pull_request": {"number": 11,
 "head": {"sha": "$HEAD", "ref": "faster-attn", "repo": {"full_name": "o/r", "fork": false}},
 "base": {"sha": "2222222222222222222222222222222222222222", "ref": "main", "repo": {"full_name": "o/r"}}},
 "repository": {"full_name": "o/r"}}
EOF
sed 's#"full_name": "o/r", "fork": false#"full_name": "someone/r", "fork": true#; s/"number": 11/"number": 12/g' \
	"$T/event.json" >"$T/fork.json"
cat >"$WS/warn.json" <<'EOF'
{"schema": "profgate.thresholds/1", "name": "warn-only", "significance": 0.05, "min_samples": 5,
 "identity": ["device_kind", "device_count", "host_count", "world_size", "framework", "step_source", "basis"],
 "rules": [{"metric": "step.median_us", "direction": "lower", "test": true, "warn": {"relative": 0.02}, "fail": {"relative": 0.5}},
           {"metric": "*", "direction": "info"}]}
EOF

# The step's environment as the runner sets it for a pull_request event (paths as inside the
# container are host paths here).
BASE_ENV=$(
	cat <<EOF
{"GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_REPOSITORY": "o/r", "GITHUB_REPOSITORY_OWNER": "o",
 "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": "$T/event.json", "GITHUB_SHA": "$MERGE",
 "GITHUB_REF": "refs/pull/11/merge", "GITHUB_HEAD_REF": "faster-attn", "GITHUB_BASE_REF": "main",
 "GITHUB_RUN_ID": "777", "GITHUB_RUN_NUMBER": "5", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_JOB": "perf",
 "GITHUB_ACTOR": "octocat", "GITHUB_SERVER_URL": "https://github.example", "GITHUB_API_URL": "$GH_URL",
 "GITHUB_WORKSPACE": "$WS", "GITHUB_OUTPUT": "$T/files/output", "GITHUB_STEP_SUMMARY": "$T/files/summary",
 "RUNNER_TEMP": "$T/files", "HOME": "$T/home", "PROFGATE_CACHE_DIR": "$T/cache",
 "PROFGATE_TIME": "2024-05-01T12:00:00Z", "__github_token": "$TOKEN"}
EOF
)
WITH_BASE='"baseline": "profiles/baseline.rank-0.pt.trace.json.gz", "candidate": "profiles/candidate.rank-0.matmul-slower.pt.trace.json.gz", "label": "matmul bench"'

# act WITH_JSON [ENV_JSON...]: one step, with fresh output and summary files.
act() {
	_with=$1
	shift
	rm -f "$T/files/output" "$T/files/summary"
	timeout 90 python3 "$RUN_ACTION" "$PROFGATE" "$TOP/action.yml" "$T/out" "$T/err" "$_with" \
		"$BASE_ENV" "$@"
	rc=$?
	cat "$T/out" "$T/err" >>"$T/everything"
	[ -f "$T/files/output" ] && cat "$T/files/output" >>"$T/everything"
	[ -f "$T/files/summary" ] && cat "$T/files/summary" >>"$T/everything"
	:
}
# ocheck TITLE EXPR...: o (the outputs, read by the runner's rules), out (stdout lines), ws.
OUT_SETUP='import os
def runner_outputs(path):
    o, lines, i = {}, open(path, newline="").read().split("\n"), 0
    assert lines[-1] == "", "EOF marker missing new line"
    while i < len(lines) - 1:
        l = lines[i]
        if "<<" in l and ("=" not in l or l.index("<<") < l.index("=")):
            k, d = l.split("<<", 1)
            j = lines.index(d, i + 1)
            o[k] = "\n".join(lines[i + 1:j])
            i = j + 1
        else:
            k, v = l.split("=", 1)
            o[k] = v
            i += 1
    return o
o = runner_outputs(sys.argv[1]) if os.path.exists(sys.argv[1]) else {}
out = open(os.environ["T"] + "/out").read().split("\n")
def commands(lines):
    # the lines the runner takes as workflow commands: not between ::stop-commands::T and ::T::
    cmds, stop = [], None
    for l in lines:
        if stop:
            if l == "::%s::" % stop:
                stop = None
        elif l.startswith("::stop-commands::"):
            stop = l[len("::stop-commands::"):]
        elif l.startswith("::"):
            cmds.append(l)
    return cmds
cmds = commands(out)
ws = os.environ["WS"]
import yaml
declared = list(yaml.safe_load(open(os.environ["TOP"] + "/action.yml"))["outputs"])'
export T WS TOP
ocheck() {
	_t=$1
	shift
	pycheck "$_t" "$OUT_SETUP" "$T/files/output" "$@"
}

# ---- a same-repository pull request: the whole job ----
gh_mark
act "{$WITH_BASE, \"history\": \"$T/history.git\", \"check_run\": \"true\", \"wandb_api_key\": \"$WANDB\"}"
gh_since "$T/r1"
check "a failing PR: exit 1 (fail_on fail)" [ "$rc" -eq 1 ]
ocheck "the masks come first: both secrets, before any other line" \
	"out[0] == '::add-mask::$TOKEN' and out[1] == '::add-mask::$WANDB'" \
	"not any(l.startswith('::add-mask::') for l in out[2:])"
ocheck "outputs, read back by the runner's rules" \
	"o['verdict'] == 'fail' and o['exit_code'] == '1' and o['regressions'] == '1'" \
	"o['report_path'] == 'profgate/report.md' and open(os.path.join(ws, o['report_path'])).read().startswith('## profgate: FAIL')" \
	"json.load(open(os.path.join(ws, o['summary_path'])))['schema'] == 'profgate.summary/1'" \
	"json.load(open(os.path.join(ws, o['verdict_path'])))['verdict'] == 'fail'" \
	"o['comment_url'].startswith('https://github.example/o/r/pull/11#issuecomment-')" \
	"sorted(o) == sorted(declared)"
check "both summaries written, the baseline's too" \
	eval '[ -s "$WS/profgate/baseline.summary.json" ] && [ -s "$WS/profgate/candidate.summary.json" ]'
pycheck "the job summary: the report, under 1 MiB" 'm = open(sys.argv[1]).read()' "$T/files/summary" \
	"m.startswith('## profgate: FAIL') and len(m.encode()) < 1048576" \
	"'profgate:v1 series=matmul-bench-' in m"
# one run a side: the matmul family (+25%) fails; the step's +6.1% and each kernel's +25% are
# within the noise the default priors allow one run
ocheck "annotations: 1 error (the matmul family), no warning, titles escaped" \
	"len([l for l in out if l.startswith('::error title=profgate fail%3A ')]) == 1" \
	"len([l for l in out if l.startswith('::warning title=profgate warn%3A ')]) == 0" \
	"[l for l in out if l.startswith('::error ')][0].startswith('::error title=profgate fail%3A family.matmul.us_per_step::family.matmul.us_per_step: 23.46 ms -> 29.32 ms (+25.0%25); fail limit +25%25')"
ocheck "groups around the stages, balanced; the last line says the verdict and the exit" \
	"[l for l in cmds if l.startswith('::group::')] == ['::group::profgate: summarize and gate, append to the history', '::group::profgate: PR comment']" \
	"len([l for l in cmds if l == '::endgroup::']) == 2" \
	"len([l for l in out if l.startswith('::stop-commands::')]) == 1 and [len(l) for l in out if l.startswith('::stop-commands::')] == [17 + 32]" \
	"out[-2] == 'profgate action: fail, exit 1' and out[-1] == ''"
dcheck "the comment on #11 by github-actions[bot], linking the run" \
	"len(c(11)) == 1 and c(11)[0]['user']['login'] == 'github-actions[bot]'" \
	"'[workflow run](https://github.example/o/r/actions/runs/777)' in c(11)[0]['body']"
dcheck "the check run: on the head commit (not the merge), failure, named by the label" \
	"len(d['check_runs']) == 1" \
	"d['check_runs'][0]['head_sha'] == '$HEAD' and d['check_runs'][0]['conclusion'] == 'failure'" \
	"d['check_runs'][0]['name'] == 'profgate (matmul bench)' and d['check_runs'][0]['status'] == 'completed'" \
	"d['check_runs'][0]['output']['summary'].startswith('## profgate: FAIL')"
rcheck "every request: User-Agent, Accept, API version, the token as Bearer" "$T/r1" \
	"len(r) >= 4 and all(x['headers'].get('user-agent', '').startswith('profgate/') and x['headers'].get('authorization') == 'Bearer $TOKEN' and x['headers'].get('x-github-api-version') == '2022-11-28' for x in r)"
git -C "$T/history.git" show profgate-history:"$(git -C "$T/history.git" ls-tree -r --name-only profgate-history | head -n 1)" >"$T/shard1"
pycheck "the history record: kind pr, PR 11, the head commit, the run" \
	'r = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]' "$T/shard1" \
	"len(r) == 1 and r[0]['kind'] == 'pr' and r[0]['pr'] == 11" \
	"r[0]['sha'] == '$HEAD' and r[0]['run_id'] == '777' and r[0]['verdict'] == 'fail'"

# ---- the same run again: the comment updated in place, no second record ----
url1=$(sed -n 's/^comment_url=//p' "$T/files/output")
act "{$WITH_BASE, \"history\": \"$T/history.git\"}"
check "a rerun: exit 1, 'comment: unchanged' the same URL, in the outputs too" \
	eval '[ "$rc" -eq 1 ] && grep -q "^comment: unchanged $url1$" "$T/out" && grep -q "^comment_url=$url1$" "$T/files/output"'
check "... the record not appended twice" \
	eval '[ "$(git -C "$T/history.git" rev-list --count profgate-history)" = 1 ]'
dcheck "... still one comment on #11, not edited" "len(c(11)) == 1 and c(11)[0]['edits'] == 0"

# ---- a record an earlier run could not push, brought back into the output folder (an artifact) ----
mkdir -p "$WS/profgate/pending"
python3 - "$T/shard1" "$WS/profgate/pending/0123456789abcdef0123456789abcdef.json" <<'EOF'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
r["record_id"], r["run_id"] = "0123456789abcdef0123456789abcdef", "776"
open(sys.argv[2], "w").write(json.dumps(r, separators=(",", ":")) + "\n")
EOF
act "{$WITH_BASE, \"history\": \"$T/history.git\"}"
check "the next run delivers the record kept in its output folder: on the branch, the folder empty, no history_pending output" \
	eval '[ "$rc" -eq 1 ] && grep -q "history: delivered 1 pending record to profgate-history$" "$T/out" && [ "$(git -C "$T/history.git" rev-list --count profgate-history)" = 2 ] && [ -z "$(ls "$WS/profgate/pending")" ] && grep -q "^history_pending=$" "$T/files/output"'

# ---- fail_on ----
act "{$WITH_BASE, \"fail_on\": \"never\", \"comment\": \"never\"}"
ocheck "fail_on never: exit 0, the verdict still fail" "o['verdict'] == 'fail' and o['exit_code'] == '0'" \
	"'profgate action: fail, exit 0' in out"
check "... exit 0" [ "$rc" -eq 0 ]
act "{$WITH_BASE, \"thresholds\": \"warn.json\", \"comment\": \"never\"}"
check "a warn with fail_on fail: exit 0" eval '[ "$rc" -eq 0 ] && grep -q "^verdict=warn$" "$T/files/output"'
act "{$WITH_BASE, \"thresholds\": \"warn.json\", \"comment\": \"never\", \"fail_on\": \"warn\"}"
check "a warn with fail_on warn: exit 1" eval '[ "$rc" -eq 1 ] && grep -q "^exit_code=1$" "$T/files/output"'
act "{$WITH_BASE, \"thresholds\": \"strict\", \"comment\": \"never\"}"
check "thresholds: strict, the shipped set: found and applied" \
	eval '[ "$rc" -eq 1 ] && grep -q "\"name\": \"strict\"" "$WS/profgate/verdict.json"'

# ---- every run kept: the second workflow judges the same runs ----
act '{"baseline": "profiles/baseline.rank-0.pt.trace.json.gz", "candidate": "profiles/candidate.rank-0.matmul-slower.pt.trace.json.gz\nprofiles/baseline.rank-0.pt.trace.json.gz", "label": "matmul bench", "comment": "never", "fail_on": "never"}'
check "two candidate runs: each run's summary kept in the output folder" \
	eval '[ -s "$WS/profgate/candidate.run-01.summary.json" ] && [ -s "$WS/profgate/candidate.run-02.summary.json" ] && [ -s "$WS/profgate/baseline.run-01.summary.json" ]'
rm -rf "$WS/kept" && mkdir "$WS/kept" && cp "$WS"/profgate/*.run-*.summary.json "$WS/kept/"
cp "$WS/profgate/verdict.json" "$T/first-verdict.json"
act '{"baseline": "kept/baseline.run-*.summary.json", "candidate": "kept/candidate.run-*.summary.json", "label": "matmul bench", "comment": "never", "fail_on": "never"}'
check "... patterns of those files give the second run the same runs and the same step values" \
	python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); k=lambda d, s: [x["step_median_us"] for x in d[s]["run_list"]]; sys.exit(not (len(b["candidate"]["run_list"]) == 2 and k(a, "candidate") == k(b, "candidate") and k(a, "baseline") == k(b, "baseline") and a["step"] == b["step"]))' "$T/first-verdict.json" "$WS/profgate/verdict.json"
act '{"baseline": "kept/nothing-*.json", "candidate": "kept/candidate.run-*.summary.json", "comment": "never"}'
check "... a pattern that matches no file: exit 2, one line naming it" \
	eval '[ "$rc" -eq 2 ] && grep -q "kept/nothing-\*.json matches no file" "$T/err"'

# ---- baseline: history:BRANCH[:N], the window read from the history input ----
git init -q --bare "$T/hist2.git"
# a main record of the series made outside CI (no ref: history:* takes it), from the baseline
# profile, so that the window stands for the same numbers as the baseline file
env -u GITHUB_ACTIONS -u GITHUB_EVENT_PATH -u GITHUB_REF -u GITHUB_RUN_ID HOME="$T/home" \
	PROFGATE_CACHE_DIR="$T/cache" PROFGATE_TIME=2024-04-30T06:00:00Z timeout 60 "$PROFGATE" gate \
	-b "$WS/profiles/candidate.rank-0.matmul-slower.pt.trace.json.gz" \
	-c "$WS/profiles/baseline.rank-0.pt.trace.json.gz" --label "matmul bench" \
	--history "$T/hist2.git" --kind main >/dev/null 2>"$T/hb.err"
WITH_HIST='"baseline": "history:*", "candidate": "profiles/candidate.rank-0.matmul-slower.pt.trace.json.gz", "label": "matmul bench"'
act "{$WITH_HIST, \"history\": \"$T/hist2.git\", \"comment\": \"never\"}" \
	"{\"GITHUB_RUN_ID\": \"779\"}"
ocheck "baseline history:*: the window of the series is the baseline, the verdict is out" \
	"o['verdict'] in ('fail', 'warn', 'inconclusive')" \
	"any(l.startswith('  baseline: history:*: median of 1 record') for l in out)"
check "... and the run's own record appended after it" \
	[ "$(git -C "$T/hist2.git" rev-list --count profgate-history)" -eq 2 ]
act "{$WITH_HIST, \"comment\": \"never\"}"
check "baseline history:* without the history input: exit 2, one line naming the input" \
	eval '[ "$rc" -eq 2 ] && grep -q "^profgate: action: baseline .history:\*. reads the history: set the history input$" "$T/err"'

# ---- the first night: examples/nightly.yml's step against a history that holds nothing ----
git init -q --bare "$T/hist3.git"
printf '{"schedule": "0 3 * * *", "repository": {"full_name": "o/r", "default_branch": "main"}}\n' \
	>"$T/schedule.json"
NIGHT_ENV="{\"GITHUB_EVENT_NAME\": \"schedule\", \"GITHUB_EVENT_PATH\": \"$T/schedule.json\", \"GITHUB_REF\": \"refs/heads/main\", \"GITHUB_SHA\": \"6666666666666666666666666666666666666666\", \"GITHUB_HEAD_REF\": null, \"GITHUB_BASE_REF\": null, \"GITHUB_RUN_ID\": \"901\"}"
act "{\"baseline\": \"history:main:7\", \"candidate\": \"profiles/baseline.rank-0.pt.trace.json.gz\", \"label\": \"nightly bench\", \"thresholds\": \"nightly\", \"history\": \"$T/hist3.git\", \"kind\": \"nightly\", \"comment\": \"never\", \"fail_on\": \"warn\"}" \
	"$NIGHT_ENV"
ocheck "first night, empty history, fail_on warn: exit 0, verdict recorded, no regression" \
	"o['verdict'] == 'recorded' and o['exit_code'] == '0' and o['regressions'] == '0'" \
	"out[-2] == 'profgate action: recorded, exit 0'" \
	"not [c for c in cmds if c.startswith(('::error', '::warning'))]"
check "... the job summary says it is the first record, with no metric table" \
	eval 'grep -q "^## profgate: RECORDED — nightly bench$" "$T/files/summary" &&
		grep -q "First record of this series: nothing to compare against" "$T/files/summary" &&
		! grep -q "^| " "$T/files/summary"'
check "... and the night's record is on the history branch, verdict recorded" \
	eval 'git -C "$T/hist3.git" show "profgate-history:$(git -C "$T/hist3.git" ls-tree -r --name-only profgate-history | grep jsonl)" | grep -q "\"kind\":\"nightly\",\"verdict\":\"recorded\",\"exit_code\":0"'

# ---- a fork's pull request: read-only token, no deliveries ----
gh_mark
before=$(git -C "$T/history.git" rev-parse profgate-history)
act "{$WITH_BASE, \"history\": \"$T/history.git\", \"check_run\": \"true\", \"comment\": \"always\"}" \
	"{\"GITHUB_EVENT_PATH\": \"$T/fork.json\", \"GITHUB_REF\": \"refs/pull/12/merge\"}"
gh_since "$T/r2"
check "a fork's PR: exit 1 by the verdict; not one request to GitHub, no push" \
	eval '[ "$rc" -eq 1 ] && [ ! -s "$T/r2" ] && [ "$(git -C "$T/history.git" rev-parse profgate-history)" = "$before" ]'
ocheck "... notices say why; annotations, outputs and summary still there" \
	"len([l for l in out if l.startswith('::notice title=profgate::a pull request from a fork')]) == 2" \
	"len([l for l in out if l.startswith('::error title=profgate fail')]) == 1" \
	"o['verdict'] == 'fail' and o['comment_url'] == ''"
check "... the job summary opens with the fork note, then the report" \
	eval 'head -n 1 "$T/files/summary" | grep -q "^> This pull request comes from a fork, whose token is read-only" && grep -q "^## profgate: FAIL" "$T/files/summary"'

gh_mark
act "{$WITH_BASE, \"check_run\": \"true\", \"comment\": \"always\"}" '{"GITHUB_ACTOR": "dependabot[bot]"}'
gh_since "$T/r2d"
check "Dependabot's PR (read-only like a fork's): exit 1, not one request to GitHub" \
	eval '[ "$rc" -eq 1 ] && [ ! -s "$T/r2d" ] && grep -q "^::notice title=profgate::" "$T/out"'

# ---- the fork-safe split: the workflow_run half ----
cat >"$T/run.json" <<EOF
{"action": "completed", "workflow_run": {"id": 99, "event": "pull_request", "head_sha": "$HEAD",
 "pull_requests": [], "head_repository": {"full_name": "someone/r"}, "repository": {"full_name": "o/r"}},
 "repository": {"full_name": "o/r"}}
EOF
sed 's/"number": 12/"number": 21/g' "$T/fork.json" >"$WS/pr-event.json"
gh_ctl '{"pulls": {"21": {"head_sha": "'$HEAD'"}, "22": {"head_sha": "4444444444444444444444444444444444444444"}}}'
RUN_ENV="{\"GITHUB_EVENT_NAME\": \"workflow_run\", \"GITHUB_EVENT_PATH\": \"$T/run.json\", \"GITHUB_REF\": \"refs/heads/main\", \"GITHUB_SHA\": \"5555555555555555555555555555555555555555\", \"GITHUB_HEAD_REF\": null, \"GITHUB_BASE_REF\": null, \"GITHUB_RUN_ID\": \"778\"}"
act "{$WITH_BASE, \"history\": \"$T/history.git\", \"pull_request_event\": \"pr-event.json\"}" "$RUN_ENV"
check "workflow_run with the saved event: exit 1, comment created on #21" \
	eval '[ "$rc" -eq 1 ] && grep -q "^comment_url=https://github.example/o/r/pull/21#" "$T/files/output"'
git -C "$T/history.git" show profgate-history:"$(git -C "$T/history.git" ls-tree -r --name-only profgate-history | head -n 1)" >"$T/shard2"
pycheck "... the record: kind pr, PR 21, the PR's head, this run" \
	'r = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]' "$T/shard2" \
	"len(r) == 3 and r[2]['kind'] == 'pr' and r[2]['pr'] == 21 and r[2]['sha'] == '$HEAD' and r[2]['run_id'] == '778'"
sed 's/"number": 12/"number": 22/g' "$T/fork.json" >"$WS/pr-moved.json"
gh_mark
act "{$WITH_BASE, \"pull_request_event\": \"pr-moved.json\", \"comment\": \"always\"}" "$RUN_ENV"
gh_since "$T/r3"
check "... a PR whose head moved on since: a warning, no comment, exit by the verdict" \
	eval '[ "$rc" -eq 1 ] && grep -q "^::warning title=profgate::pull request #22 is now at 444444444444, not 111111111111" "$T/out" && ! grep -q "\"POST\"" "$T/r3"'
sed "s/$HEAD/6666666666666666666666666666666666666666/" "$WS/pr-event.json" >"$WS/pr-forged.json"
act "{$WITH_BASE, \"pull_request_event\": \"pr-forged.json\"}" "$RUN_ENV"
check "... a saved event for another commit: refused, exit 2" \
	eval '[ "$rc" -eq 2 ] && grep -q "^profgate: action: the saved event.s head 666666666666 is not the head 111111111111" "$T/err"'
act "{$WITH_BASE, \"pull_request_event\": \"pr-event.json\"}"
check "... pull_request_event on a pull_request event: exit 2" \
	eval '[ "$rc" -eq 2 ] && grep -q "pull_request_event is for workflow_run jobs" "$T/err"'

# ---- a check run GitHub made and answered 502: looked for by its external_id, not made twice ----
gh_ctl '{"faults": [{"method": "POST", "path": "/check-runs$", "status": 502, "commit": true, "body": {"message": "Bad Gateway"}}]}'
gh_dump "$T/before-cr.json"
act "{$WITH_BASE, \"check_run\": \"true\", \"comment\": \"never\"}"
check "a check run created and answered 502: exit 1 (the verdict), one look line, its URL printed" \
	eval '[ "$rc" -eq 1 ] && grep -q "GitHub check run: HTTP 502 on the POST; listing the commit" "$T/err" && grep -q "^check run: https://github.example/o/r/runs/" "$T/out"'
pycheck "... one check run more, with a random external_id" \
	'a, b = (json.load(open(p))["check_runs"] for p in (sys.argv[1], "'"$T"'/before-cr.json"))' \
	"$(gh_dump "$T/after-cr.json"; echo "$T/after-cr.json")" \
	"len(a) == len(b) + 1" "len(a[-1]['external_id']) == 32"

# ---- a personal token: alert mentions on a failing verdict; no check run (403), said once ----
PAT=ghp_actionpat_0f1e2d3c4b5a6978
gh_ctl '{"tokens": {"'$PAT'": {"login": "perf-bot", "user_api": true, "checks": false}}}'
sed 's/"number": 11/"number": 31/g' "$T/event.json" >"$T/event31.json"
gh_mark
act "{$WITH_BASE, \"check_run\": \"true\", \"comment\": \"always\", \"github_token\": \"$PAT\", \"alert_mentions\": \"@o/perf-team, @alice\"}" \
	"{\"GITHUB_EVENT_PATH\": \"$T/event31.json\", \"GITHUB_REF\": \"refs/pull/31/merge\"}"
gh_since "$T/r31"
check "a PAT that may not create check runs: exit 1 (the verdict), not 5" [ "$rc" -eq 1 ]
ocheck "... one notice says why there is no check run; annotations and summary carry the verdict" \
	"len([l for l in out if l.startswith('::notice title=profgate check run::no check run: this token may not create one (HTTP 403')]) == 1" \
	"not any(l.startswith('::warning title=profgate check run') for l in out)" \
	"len([l for l in out if l.startswith('::error title=profgate fail')]) == 1"
check "... the job summary still written" grep -q "^## profgate: FAIL" "$T/files/summary"
dcheck "the comment on #31 by perf-bot opens with the mentions; no check run stored" \
	"len(c(31)) == 1 and c(31)[0]['user']['login'] == 'perf-bot'" \
	"c(31)[0]['body'].startswith('> **Alert:** @o/perf-team, @alice: this run fails the performance gate.')" \
	"len(d['check_runs']) == len(json.load(open('$T/after-cr.json'))['check_runs'])"
act "{$WITH_BASE, \"comment\": \"always\", \"github_token\": \"$PAT\", \"alert_mentions\": \"@o/perf-team\", \"thresholds\": \"warn.json\", \"github_login\": \"perf-bot\"}" \
	"{\"GITHUB_EVENT_PATH\": \"$T/event31.json\", \"GITHUB_REF\": \"refs/pull/31/merge\"}"
gh_since "$T/r31b"
dcheck "a warn: the same comment updated, no mentions (they are for a failing verdict)" \
	"len(c(31)) == 1 and c(31)[0]['edits'] == 1 and '@o/perf-team' not in c(31)[0]['body']"
rcheck "github_login names the login: no GET /user" "$T/r31b" \
	"not any(x['path'] == '/user' for x in r[len([1 for l in open('$T/r31')]):])"
act "{$WITH_BASE, \"alert_mentions\": \"perf-team; rm -rf\"}"
check "alert_mentions that are no @names: exit 2, one line" \
	eval '[ "$rc" -eq 2 ] && grep -q "alert mentions .perf-team; rm -rf.: give @user or @org/team names" "$T/err"'

# ---- input errors: one line, an error annotation, the masks still first ----
act '{"candidate": "x.json"}'
ocheck "baseline missing: exit 2, masks first, an ::error, no outputs" \
	"out[0] == '::add-mask::$TOKEN'" \
	"'::error title=profgate::action: input %27baseline%27 is required' in out or '::error title=profgate::action: input \'baseline\' is required' in out" \
	"o == {}"
check "... exit 2, one stderr line" eval '[ "$rc" -eq 2 ] && [ "$(lines "$T/err")" -eq 1 ]'
act "{$WITH_BASE}" '{"__raw": {"INPUT_FAIL-ON": "never"}}'
check "INPUT_FAIL-ON (a hyphen): refused, exit 2" \
	eval '[ "$rc" -eq 2 ] && grep -q "unknown input .FAIL-ON.: the input is .fail_on." "$T/err"'
act "{$WITH_BASE, \"fail_on\": \"sometimes\"}"
check "fail_on sometimes: exit 2" eval '[ "$rc" -eq 2 ] && grep -q "give fail, warn or never" "$T/err"'
act "{$WITH_BASE, \"comment\": \"maybe\"}"
check "comment maybe: exit 2" eval '[ "$rc" -eq 2 ] && grep -q "give always, on-alert or never" "$T/err"'
act "{$WITH_BASE, \"thresholds\": \"lenient\"}"
check "thresholds lenient (neither a file nor a shipped set): exit 2" \
	eval '[ "$rc" -eq 2 ] && grep -q "not a shipped set" "$T/err"'
act '{"baseline": "profiles/missing.json", "candidate": "profiles/missing.json"}'
ocheck "an unreadable input: exit 3, verdict error in the outputs" \
	"o['verdict'] == 'error' and o['exit_code'] == '3' and o['report_path'] == ''"

# ---- hostile op names: annotations escaped ----
# the candidate's renamed kernel is made three times slower, so that it fails and is annotated
python3 - "$WS/profgate" <<'EOF'
import json, sys
for side in ("baseline", "candidate"):
    p = "%s/%s.summary.json" % (sys.argv[1], side)
    text = open(p).read().replace("volta_sgemm_64x64_nt", "evil,kern:el%%\\n::error::pwned")
    if side == "candidate":
        s = json.loads(text)
        for o in s["ops"]:
            if o["name"].startswith("evil,"):
                o["self_us_per_step"] *= 3
        text = json.dumps(s, indent=1)
    open(p.replace(".summary", ".evil"), "w").write(text)
EOF
act '{"baseline": "profgate/baseline.evil.json", "candidate": "profgate/candidate.evil.json", "comment": "never", "output_dir": "evil-out"}'
ocheck "an op name with a comma, a colon, percent signs, a newline and a command: escaped annotations, no command of its own" \
	"not any(l.startswith('::error::pwned') for l in out)" \
	"any(l.startswith('::error title=profgate fail%3A op.evil%2Ckern%3Ael%25%25%0A%3A%3Aerror%3A%3Apwned.us_per_step::op.evil,kern:el%25%25%0A::error::pwned.us_per_step: ') for l in out)"

# ---- secrets ----
git -C "$T/history.git" log -p --all >"$T/history.log"
gh_dump "$T/state.json"
check "no secret in anything printed, written, stored or sent but the masks" \
	eval '! grep -v "^::add-mask::" "$T/everything" | grep -q -e "$TOKEN" -e "$WANDB" && ! grep -rq -e "$TOKEN" -e "$WANDB" "$WS" "$T/history.log" "$T/state.json"'
rcheck "no secret in any URL" "$T/gh/requests.jsonl" \
	"not any('$TOKEN' in x['path'] or '$WANDB' in x['path'] for x in r)" \
	"not any('$WANDB' in json.dumps(x['headers']) for x in r)"

# ---- as the workspace's owner (the container runs as root; hosted runners' uid is 1001) ----
if [ "$(id -u)" = 0 ]; then
	chmod 755 "$T"
	mkdir -p "$T/ws1001/p" "$T/f1001"
	cp "$WS/profiles/"* "$T/ws1001/p/"
	chown -R 1001:1001 "$T/ws1001" "$T/f1001"
	act '{"baseline": "p/baseline.rank-0.pt.trace.json.gz", "candidate": "p/candidate.rank-0.matmul-slower.pt.trace.json.gz", "comment": "never"}' \
		"{\"GITHUB_WORKSPACE\": \"$T/ws1001\", \"GITHUB_OUTPUT\": \"$T/f1001/output\", \"GITHUB_STEP_SUMMARY\": \"$T/f1001/summary\", \"HOME\": \"$T/f1001\"}"
	check "run as root on a workspace of uid 1001: the files it writes are 1001's" \
		eval '[ "$rc" -eq 1 ] && [ "$(stat -c %u "$T/ws1001/profgate/report.md")" = 1001 ] && [ "$(stat -c %u "$T/ws1001/profgate")" = 1001 ] && grep -q "^verdict=fail$" "$T/f1001/output"'
else
	skip "not root: the drop to the workspace owner is not tested"
fi

# ---- a CPU-only runner: host profiles of a CPU PyTorch run (tests/data/host) ----
mkdir -p "$WS/cpu"
cp "$TOP/tests/data/host/legacy/base-1.pt.trace.json.gz" "$TOP/tests/data/host/legacy/matmul25-1.pt.trace.json.gz" "$WS/cpu/"
act '{"baseline": "cpu/base-1.pt.trace.json.gz", "candidate": "cpu/matmul25-1.pt.trace.json.gz", "label": "cpu bench", "comment": "never"}'
check "CPU-only profiles: the matmul made 25 % slower fails the job (exit 1)" [ "$rc" -eq 1 ]
ocheck "... verdict fail, the report names a host profile and matmul first" \
	"o['verdict'] == 'fail'" \
	"'host profile (CPU)' in open(os.path.join(ws, o['report_path'])).read()" \
	"json.load(open(os.path.join(ws, o['verdict_path'])))['attribution'][0]['name'] in ('matmul', 'aten::mm', 'aten::addmm')" \
	"json.load(open(os.path.join(ws, o['summary_path'])))['identity']['basis'] == 'profgate.host/1'"

# ---- several runs a side: one a line (the three base runs of tests/data/host) ----
cp "$TOP/tests/data/host/legacy/base-2.pt.trace.json.gz" "$TOP/tests/data/host/legacy/base-3.pt.trace.json.gz" "$WS/cpu/"
B1=cpu/base-1.pt.trace.json.gz B2=cpu/base-2.pt.trace.json.gz B3=cpu/base-3.pt.trace.json.gz
M1=cpu/matmul25-1.pt.trace.json.gz
VJ="json.load(open(os.path.join(ws, o['verdict_path'])))"
exit_is_output() { [ "$rc" -eq "$(sed -n 's/^exit_code=//p' "$T/files/output")" ]; }
act "{\"baseline\": \"$B1\\n$B2\\n$B3\", \"candidate\": \"$M1\", \"label\": \"cpu bench\", \"comment\": \"never\"}"
ocheck "a baseline of three lines: three baseline runs, one candidate run, a verdict" \
	"o['verdict'] in ('pass', 'improved', 'warn', 'inconclusive', 'fail')" \
	"$VJ['baseline']['runs'] == 3 and $VJ['candidate']['runs'] == 1" \
	"[x['path'] for x in $VJ['baseline']['run_list']] == ['$B1', '$B2', '$B3'] and $VJ['candidate']['path'] == '$M1'"
check "... the step exits as its exit_code output says" exit_is_output
act "{\"baseline\": \"$B1\", \"candidate\": \"$B2\\n$B3\", \"label\": \"cpu bench\", \"comment\": \"never\"}"
ocheck "a candidate of two lines: one baseline run, two candidate runs" \
	"o['verdict'] in ('pass', 'improved', 'warn', 'inconclusive', 'fail')" \
	"$VJ['baseline']['runs'] == 1 and $VJ['candidate']['runs'] == 2 and [x['path'] for x in $VJ['candidate']['run_list']] == ['$B2', '$B3']"
check "... the step exits as its exit_code output says" exit_is_output
# a YAML block as a workflow writes it: indentation, a comment, a blank line, CRLF, the final new
# line; the commented-out file does not exist, so reading it would exit 3
act "{\"baseline\": \"# the base runs\\n  $B1  \\n\\n\\t$B2\\r\\n  # cpu/missing.json\\n$B3\\n\", \"candidate\": \"  $M1\\n\", \"label\": \"cpu bench\", \"comment\": \"never\"}"
ocheck "blank lines, comment lines and the spaces around a line are skipped" \
	"o['verdict'] in ('pass', 'improved', 'warn', 'inconclusive', 'fail')" \
	"$VJ['baseline']['runs'] == 3 and [x['path'] for x in $VJ['baseline']['run_list']] == ['$B1', '$B2', '$B3'] and $VJ['candidate']['path'] == '$M1'"
check "... the step exits as its exit_code output says" exit_is_output
for hb in "history:*\\n$B1" "$B1\\nhistory:main"; do
	case $hb in history*) where=first ;; *) where=second ;; esac
	act "{\"baseline\": \"$hb\", \"candidate\": \"$M1\", \"history\": \"$T/hist2.git\", \"comment\": \"never\"}"
	check "a baseline of history: ($where line) and a file: exit 2, one line naming the input" \
		eval '[ "$rc" -eq 2 ] && [ "$(lines "$T/err")" -eq 1 ] && grep -q "^profgate: action: input .baseline.: history:[*a-z]* is a set of runs itself: give it alone" "$T/err"'
done
act "{\"baseline\": \"  \\n\\t\\n\", \"candidate\": \"$M1\"}"
check "a baseline of only white space: exit 2, one line naming the input" \
	eval '[ "$rc" -eq 2 ] && [ "$(lines "$T/err")" -eq 1 ] && grep -q "^profgate: action: input .baseline. names no run" "$T/err"'
act "{\"baseline\": \"$B1\", \"candidate\": \"# $M1\\n\"}"
ocheck "a candidate of only a comment: exit 2, an ::error naming the input, no outputs" \
	"any(l.startswith('::error title=profgate::action: input %27candidate%27 names no run') or l.startswith(\"::error title=profgate::action: input 'candidate' names no run\") for l in out)" \
	"o == {}"
check "... exit 2" [ "$rc" -eq 2 ]

done_testing
