#!/bin/sh
# Secrets: the whole action (tests/e2e/lib/run_action.py, as the runner starts the Docker action)
# with recognisable fake secrets — the github_token input and GITHUB_TOKEN, PROFGATE_GIT_TOKEN,
# the wandb_api_key input and WANDB_API_KEY, and wrong ones of each — through W&B refs served by
# the fake W&B, a history pushed over smart HTTP with the token, the sticky comment and a check
# run on the fake GitHub; and the failure paths: 401s, 5xx storms, a rejected push whose hook
# echoes the token, GitHub echoing it in an error, URLs and remotes that carry a token, plus the
# CLI (gate --history --comment, history append, publish). Then every byte profgate wrote is
# searched for each secret and its Basic-auth base64 forms: stdout, stderr, $GITHUB_OUTPUT, the
# step summary, the workspace (reports, verdict JSON, summaries), every object of the history
# remote and of the private repositories, the whole cache folder, what the fakes hold and the
# URLs they were asked for. The one allowed appearance is an `::add-mask::` line. Every process
# is watched (tests/e2e/lib/argv_spy.py): no secret in any command line, and profgate starts none.
set -u
# test-tier: full
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/github.sh"
. "$(dirname "$0")/lib/serve.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
LIB=$TOP/tests/e2e/lib
PROFGATE=$(cd "$(dirname "$PROFGATE")" && pwd)/$(basename "$PROFGATE")
EX=$TOP/tests/data/examples
if ! python3 -c 'import yaml' 2>/dev/null; then
	echo "1..0 # skip python3-yaml is not installed (apt-get install python3-yaml)"
	exit 0
fi

GH=ghs_S3CRETgh0a1b2c3d4e5f60718293
GT=pgt_S3CRETgit9f8e7d6c5b4a39281706
WK=wbk_S3CRETwandb00112233445566778899aabbccddeeff00
BAD_GH=ghs_S3CRETbadgh7a6b5c4d3e2f1a0b9c
BAD_GT=pgt_S3CRETbadgit1f2e3d4c5b6a7980
BAD_WK=wbk_S3CRETbadwandb99887766554433221100ffeeddccbb
SECRETS="$GH $GT $WK $BAD_GH $BAD_GT $BAD_WK"
HEAD=1111111111111111111111111111111111111111
PG_TEST_WANDB_KEY=$WK PG_TEST_TOKEN=$GH,$GT
GIT_AUTHOR_NAME=tester GIT_AUTHOR_EMAIL=tester@example.com
GIT_COMMITTER_NAME=tester GIT_COMMITTER_EMAIL=tester@example.com
unset WANDB_ENTITY WANDB_PROJECT WANDB_API_KEY WANDB_BASE_URL PROFGATE_HTTP_TIMEOUT_S \
	PROFGATE_HTTP_ATTEMPTS PROFGATE_HISTORY_TIMEOUT_S
export PG_TEST_WANDB_KEY PG_TEST_TOKEN GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME \
	GIT_COMMITTER_EMAIL
gh_ctl '{"tokens": {"'$GH'": {"login": "github-actions[bot]"}}}'

# ---- the servers ----
serve_begin "$gh_pid"
serve_wandb_runs
mkdir -p "$T/srv"
git init -q --bare "$T/srv/h.git"
git -C "$T/srv/h.git" config http.receivepack true
serve_git
# post URL JSON: a control request to a fake
post() {
	python3 -c 'import sys, urllib.request; urllib.request.urlopen(urllib.request.Request(sys.argv[1], data=sys.argv[2].encode(), method="POST"), timeout=10).read()' "$1" "$2"
}

# profgate under the spy: every command line of it and of its children into $T/argv.jsonl
cat >"$T/spy" <<EOF
#!/bin/sh
exec python3 "$LIB/argv_spy.py" "$T/argv.jsonl" "$PROFGATE" "\$@"
EOF
chmod +x "$T/spy"

# ---- the action ----
WS=$T/ws
mkdir -p "$WS" "$T/files"
cat >"$T/event.json" <<EOF
{"number": 11, "action": "synchronize", "pull_request": {"number": 11,
 "head": {"sha": "$HEAD", "ref": "x", "repo": {"full_name": "o/r", "fork": false}},
 "base": {"sha": "2222222222222222222222222222222222222222", "ref": "main", "repo": {"full_name": "o/r"}}},
 "repository": {"full_name": "o/r"}}
EOF
BASE_ENV=$(
	cat <<EOF
{"GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_REPOSITORY": "o/r", "GITHUB_EVENT_NAME": "pull_request",
 "GITHUB_EVENT_PATH": "$T/event.json", "GITHUB_SHA": "3333333333333333333333333333333333333333",
 "GITHUB_REF": "refs/pull/11/merge", "GITHUB_RUN_ID": "900", "GITHUB_RUN_ATTEMPT": "1",
 "GITHUB_SERVER_URL": "https://github.example", "GITHUB_API_URL": "$GH_URL", "GITHUB_WORKSPACE": "$WS",
 "GITHUB_OUTPUT": "$T/files/output", "GITHUB_STEP_SUMMARY": "$T/files/summary", "RUNNER_TEMP": "$T/files",
 "HOME": "$T/home", "PROFGATE_CACHE_DIR": "$T/cache", "WANDB_BASE_URL": "$WB",
 "GITHUB_TOKEN": "$GH", "PROFGATE_GIT_TOKEN": "$GT", "PROFGATE_HTTP_ATTEMPTS": "2",
 "PROFGATE_HTTP_TIMEOUT_S": "5", "PROFGATE_HISTORY_TIMEOUT_S": "5", "__github_token": "$GH"}
EOF
)
WITH='"baseline": "wandb://acme/llm/base1", "candidate": "wandb://acme/llm/cand1", "label": "secret bench", "comment": "always", "check_run": "true", "history": "'$GIT/h.git'", "history_required": "true", "wandb_api_key": "'$WK'"'
# act WITH_EXTRA [ENV_JSON...]: one step under the spy; everything it printed or wrote is kept
runs=0
act() {
	_with=$1
	shift
	runs=$((runs + 1))
	rm -f "$T/files/output" "$T/files/summary"
	timeout 120 python3 "$LIB/run_action.py" "$T/spy" "$TOP/action.yml" "$T/out" "$T/err" \
		"{$WITH$_with}" "$BASE_ENV" "$@"
	rc=$?
	cat "$T/out" "$T/err" >>"$T/everything"
	[ -n "${PG_DEBUG-}" ] && { echo "# run $runs: exit $rc"; sed 's/^/#   /' "$T/out" "$T/err" | cut -c1-300; }
	for f in output summary; do
		[ -f "$T/files/$f" ] && cat "$T/files/$f" >>"$T/everything"
	done
	:
}
# cli VAR=VALUE... ARGS...: profgate under the spy, its output kept
cli() {
	runs=$((runs + 1))
	timeout 120 env PROFGATE_HTTP_ATTEMPTS=2 PROFGATE_HTTP_TIMEOUT_S=5 PROFGATE_HISTORY_TIMEOUT_S=5 \
		"$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	cat "$T/out" "$T/err" >>"$T/everything"
}
# says CODE WORD: the exit code, and the error names WORD
says() {
	[ "$rc" -eq "$1" ] && grep -q -- "$2" "$T/err"
}
# expect TITLE SHELL: one test that passes when SHELL does; else the exit code and stderr
expect() {
	if eval "$2"; then
		ok "$1"
	else
		not_ok "$1"
		diag "exit $rc"
		cut -c1-300 "$T/err" | tail -n 4 | sed 's/^/#   /'
	fi
}

act ''
expect "W&B runs gated, the record pushed, the comment and the check run posted: exit 1 (fail)" \
	'[ "$rc" -eq 1 ] && grep -q "^verdict=fail$" "$T/files/output" && grep -q "^comment_url=https://github.example/o/r/pull/11#" "$T/files/output" && [ "$(git -C "$T/srv/h.git" rev-list --count profgate-history)" = 1 ]'
expect "the masks come first: the input token, the key, then the environment's" \
	'head -n 3 "$T/out" >"$T/masks"; printf "::add-mask::%s\n" "$GH" "$WK" "$GT" | cmp -s - "$T/masks"'
act ', "github_token": "'$BAD_GH'"' '{"__github_token": "'$BAD_GH'"}'
expect "a token GitHub and the git server refuse (401): exit 5" \
	'says 5 "the token was refused" && grep -q "authentication rejected" "$T/err"'
act ', "wandb_api_key": "'$BAD_WK'"'
expect "a W&B key the server refuses (401): exit 3" 'says 3 "refused the API key"'
post "$WB/_fault" '{"faults": [{"method": "POST", "path": "^/graphql$", "mode": "status", "status": 503, "times": 2}]}'
act ''
expect "a W&B 5xx storm: exit 3" 'says 3 "gave up after 2 attempts: HTTP 503"'
gh_ctl '{"faults": [{"method": "POST", "path": "/comments$", "status": 502, "times": 2, "body": {"message": "Bad Gateway"}},
 {"method": "POST", "path": "/check-runs$", "status": 502, "times": 2, "body": {"message": "Bad Gateway"}}]}'
post "$GIT/_fault" '{"faults": [{"method": "POST", "path": "/git-receive-pack$", "mode": "status", "status": 503, "times": 99}]}'
act ', "label": "secret bench 2"'
# a comment's or check run's POST answered 502 is looked for, not sent again blindly: the third
# POST lands
expect "a GitHub and a git 5xx storm: exit 5 (the push); the POSTs looked for after each 502" \
	'says 5 "status code: 503" && [ "$(grep -c "GitHub comment: HTTP 502 on the POST; listing the comments" "$T/err")" -eq 2 ] && [ "$(grep -c "GitHub check run: HTTP 502 on the POST; listing the commit" "$T/err")" -eq 2 ]'
post "$GIT/_fault" '{"reset": true}'
gh_ctl '{"faults": [{"method": "POST", "path": "/comments$", "status": 403, "times": 1, "body": {"message": "token '$GH' may not write here"}}]}'
cat >"$T/srv/h.git/hooks/pre-receive" <<EOF
#!/bin/sh
echo "push by $GH refused: history is frozen" >&2
exit 1
EOF
chmod +x "$T/srv/h.git/hooks/pre-receive"
act ', "label": "secret bench 3"'
expect "a rejected push and a GitHub 403, both echoing the token: exit 5, the token redacted" \
	'says 5 "pre-receive hook declined (remote: push by \*\*\* refused" && grep -q "HTTP 403 token \*\*\* may not write here" "$T/err"'
# the same in long messages: the tokens repeated across where a message is cut (1 KiB for an
# error, 256 bytes for a GitHub message), so one straddles each cut; redacted before either
# cut, not even a token's start is printed
TOKS="$GT $GT $GT $GT $GT $GT $GH $GH $GH"
cat >"$T/srv/h.git/hooks/pre-receive" <<EOF
#!/bin/sh
echo "$(printf '%0865d' 0) $TOKS" >&2
exit 1
EOF
chmod +x "$T/srv/h.git/hooks/pre-receive"
gh_ctl '{"faults": [{"method": "POST", "path": "/comments$", "status": 403, "times": 1, "body": {"message": "'"$(printf '%0200d' 0)"' '"$GH $GH $GH $GH $GH $GH"' may not write here"}}]}'
act ', "label": "secret bench 4"'
expect "a hook and GitHub echoing the token in long messages: exit 5, no part of a token shown" \
	'says 5 "pre-receive hook declined" && ! cat "$T/out" "$T/err" "$T/files/output" "$T/files/summary" 2>/dev/null | grep -v "^::add-mask::" | grep -q "S3CRET\|ghs_\|pgt_"'
rm "$T/srv/h.git/hooks/pre-receive"

# URLs and remotes that carry a secret: refused before anything is sent, the secret not shown
act ', "history": "http://x-access-token:'$GH'@127.0.0.1:'$GIT_PORT'/h.git"'
expect "a history URL with the token in it: exit 2, refused" 'says 2 "the remote URL holds credentials"'
act ', "history": "ssh://'$GH'@example.com/o/r.git"'
expect "an ssh remote with the token in it: exit 2" 'says 2 "give a path, a file:// URL or an https:// URL"'
act '' '{"GITHUB_API_URL": "http://x:'$GH'@127.0.0.1:'${GH_URL##*:}'"}'
expect "GITHUB_API_URL with the token in it: exit 2, refused" \
	'says 2 "GITHUB_API_URL holds credentials"'
act '' '{"GITHUB_API_URL": "ftp://'$GH'@example.com"}'
expect "GITHUB_API_URL not http, with the token: exit 2, the token not shown" \
	'says 2 "GITHUB_API_URL .ftp://\*\*\*@example.com. is not an http(s) URL"'
act '' '{"WANDB_BASE_URL": "http://api:'$WK'@127.0.0.1:'${WB##*:}'"}'
expect "WANDB_BASE_URL with the key in it: exit 2, refused" 'says 2 "WANDB_BASE_URL holds credentials"'
act '' '{"WANDB_BASE_URL": "ftp://'$WK'@example.com"}'
expect "WANDB_BASE_URL not http, with the key: exit 2, the key not shown" \
	'says 2 "WANDB_BASE_URL .ftp://\*\*\*@example.com. is not an http(s) URL"'

# ---- the CLI ----
cli GITHUB_API_URL="$GH_URL" GITHUB_REPOSITORY=o/r GITHUB_TOKEN=$GH PROFGATE_GIT_TOKEN=$GT \
	WANDB_BASE_URL="$WB" WANDB_API_KEY=$WK PROFGATE_CACHE_DIR="$T/cache" GITHUB_RUN_ID=901 \
	"$T/spy" gate -b wandb://acme/llm/base1 -c wandb://acme/llm/cand1 --label "cli bench" \
	--json "$WS/cli.json" --report "$WS/cli.md" --history "$GIT/h.git" --history-required \
	--comment always --pr 11
expect "CLI gate of two W&B runs, --history with PROFGATE_GIT_TOKEN, --comment: exit 1" \
	'[ "$rc" -eq 1 ] && grep -q "history: appended" "$T/out" && grep -q "comment: created" "$T/out"'
cli PROFGATE_GIT_TOKEN=$BAD_GT PROFGATE_CACHE_DIR="$T/cache" GITHUB_RUN_ID=902 "$T/spy" history \
	append --repo "$GIT/h.git" "$WS/cli.json"
expect "CLI history append with a refused token: exit 5, the record kept" \
	'says 5 "authentication rejected" && grep -q "the record is kept in" "$T/err"'
cli WANDB_BASE_URL="$WB" WANDB_API_KEY=$WK "$T/spy" publish "$WS/profgate/candidate.summary.json" \
	--report "$WS/profgate/report.md" --run wandb://acme/llm/cand1
expect "CLI publish with the key: exit 0" '[ "$rc" -eq 0 ]'
cli WANDB_BASE_URL="$WB" WANDB_API_KEY=$BAD_WK "$T/spy" publish "$WS/profgate/candidate.summary.json" \
	--run wandb://acme/llm/cand1
expect "CLI publish with a refused key: exit 5" 'says 5 "refused the API key"'

# ---- every byte, searched ----
python3 - "$T/forms" $SECRETS <<'EOF'
import base64, sys
out = open(sys.argv[1], "w")
for s in sys.argv[2:]:
    forms = {s}
    for pre in ("", "x-access-token:", "api:"):
        forms.add(base64.b64encode((pre + s).encode()).decode())
    for f in sorted(forms):
        out.write(f + "\n")
EOF
# dump_git DIR...: every object of every repository given, reachable or not
dump_git() {
	for r in "$@"; do
		[ -d "$r" ] || continue
		git -C "$r" log -p --all 2>/dev/null
		git -C "$r" cat-file --batch-all-objects --batch 2>/dev/null
		git -C "$r" reflog --all 2>/dev/null
	done
}
dump_git "$T/srv/h.git" >"$T/remote.dump"
dump_git "$T"/cache/repos/*.git >"$T/private.dump"
gh_dump "$T/github.json"
python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1] + "/_state").read().decode())' "$WB" >"$T/wandb.json"
# the URLs the fakes were asked for (their logs hold headers too, where a token belongs)
python3 -c 'import json, sys; [print(json.loads(l)["path"]) for l in open(sys.argv[1])]' "$T/gh/requests.jsonl" >"$T/urls"
cut -d' ' -f2 "$T/git/log" "$T/wandb/log" >>"$T/urls"
grep -v '^::add-mask::' "$T/everything" >"$T/printed"
# found WHAT FILE...: every file searched; the secrets' forms found, as diagnostics
searched() {
	_what=$1
	shift
	if grep -a -r -F -f "$T/forms" -- "$@" >"$T/hits" 2>/dev/null; then
		not_ok "no secret, nor its base64 forms, in $_what"
		cut -c1-200 "$T/hits" | head -n 5 | sed 's/^/#   /'
	else
		ok "no secret, nor its base64 forms, in $_what"
	fi
}
searched "stdout, stderr, outputs and step summaries of $runs runs, but the masks" "$T/printed"
searched "the workspace (reports, verdict JSON, summaries)" "$WS"
searched "the history remote: every commit, object and reflog" "$T/remote.dump"
searched "the cache folder" "$T/cache"
searched "the private repositories' objects" "$T/private.dump"
searched "the comments and check runs on the fake GitHub" "$T/github.json"
searched "the runs and artifacts on the fake W&B" "$T/wandb.json"
searched "the URLs the fakes were asked for" "$T/urls"
searched "the command line of profgate and any child" "$T/argv.jsonl"
check "the masks: one line per secret of the run, nothing else on them" \
	eval '! grep "^::add-mask::" "$T/everything" | grep -v -x -e "::add-mask::$GH" -e "::add-mask::$GT" -e "::add-mask::$WK" -e "::add-mask::$BAD_GH" -e "::add-mask::$BAD_WK" | grep -q .'
pycheck "the key went to /graphql only, the git tokens to git only, no W&B key to GitHub" \
	'g = [json.loads(l) for l in open(sys.argv[1])]
w = [l.split() for l in open("'"$T"'/wandb/log")]' "$T/gh/requests.jsonl" \
	"all(x[3] == 'auth=no' for x in w if x[1] != '/graphql')" \
	"not any(s in json.dumps(x['headers']) for x in g for s in ('$WK', '$BAD_WK', '$GT', '$BAD_GT'))"
pycheck "argv: profgate ran $runs times, as 'profgate action' or with no secret, and started no program" \
	'a = [json.loads(l) for l in open(sys.argv[1])]
pg = [x for x in a if x.get("self")]
argv_of = {x["pid"]: x["argv"] for x in pg}
# a child with its parent'"'"'s command line is a fork that ran no program (LeakSanitizer'"'"'s tracer)
kids = [x for x in a if x["ppid"] in argv_of and x["argv"] != argv_of[x["ppid"]]]' "$T/argv.jsonl" \
	"len(pg) == $runs and all(x['argv'][0] == '$PROFGATE' for x in pg)" \
	"sum(1 for x in pg if x['argv'][1:] == ['action']) == $runs - 4" \
	"kids == []"

done_testing
