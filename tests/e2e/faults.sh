#!/bin/sh
# Faults, through the real CLI against loopback servers: for GitHub (gate --comment), W&B (fetch,
# storage downloads, publish) and git over HTTP (history append, gate --history, history show),
# a port where nothing listens, a connection reset mid-body, a slow drip, a server that accepts
# and never answers, a 5xx storm past the retry budget, and answers that are HTML, truncated JSON
# or JSON of the wrong types, at the start and in the middle of a conversation
# (tests/e2e/lib/faults.py). Each ends with one `profgate: ...` line saying which limit cut it (retry
# lines before it), the documented exit code, and the verdict JSON, report and history record kept.
# Then git: a push race with the git CLI, a cache folder that cannot be written, a full disk
# (ulimit -f 0), a damaged private repository (objects, refs, HEAD, config); and the action with
# every delivery hanging. The limits come from PROFGATE_HTTP_TIMEOUT_S, PROFGATE_HTTP_ATTEMPTS and
# PROFGATE_HISTORY_TIMEOUT_S, set low here; their defaults are in docs/robustness.md.
set -u
# test-tier: full
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/github.sh"
. "$(dirname "$0")/lib/serve.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
LIB=$TOP/tests/e2e/lib
EX=$TOP/tests/data/examples
GHS=ghs_faults_0123456789abcdef
KEY=pgfaults-0123456789abcdef0123456789abcdef01234567
GIT_TOKEN=gitfaults-token-9876543210
PG_TEST_WANDB_KEY=$KEY PG_TEST_TOKEN=$GIT_TOKEN
unset WANDB_ENTITY WANDB_PROJECT WANDB_API_KEY WANDB_BASE_URL PROFGATE_HTTP_TIMEOUT_S \
	PROFGATE_HTTP_ATTEMPTS PROFGATE_HISTORY_TIMEOUT_S
GIT_AUTHOR_NAME=tester GIT_AUTHOR_EMAIL=tester@example.com
GIT_COMMITTER_NAME=tester GIT_COMMITTER_EMAIL=tester@example.com
export PG_TEST_WANDB_KEY PG_TEST_TOKEN GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME \
	GIT_COMMITTER_EMAIL
gh_ctl '{"tokens": {"'$GHS'": {"login": "github-actions[bot]"}}}'

# The limits under test: an attempt of an HTTP request takes at most 2 s (connecting and stalls
# too), 2 attempts per request (1 where a fault costs the whole 2 s); a history append or read
# takes at most 3 s in all.
LIMITS="PROFGATE_HTTP_TIMEOUT_S=2 PROFGATE_HTTP_ATTEMPTS=2 PROFGATE_HISTORY_TIMEOUT_S=3"
ONE=PROFGATE_HTTP_ATTEMPTS=1
# Where the remote is well and the test is of what lands, not of a limit: a budget a loaded
# machine cannot run out of (delivering four records, a fetch and a push each, takes 0.9 s on
# the ASan build and longer beside other suites and a CPU load).
WELL=PROFGATE_HISTORY_TIMEOUT_S=60

# ---- the servers: a bare fault server, the fake W&B, a smart-HTTP git remote ----
serve_begin "$gh_pid"
serve fault "$T/fault/port" python3 "$LIB/faults.py" serve "$T/fault"
FAULT=http://127.0.0.1:$(cat "$T/fault/port")
DEAD=http://127.0.0.1:$(python3 "$LIB/faults.py" port)

serve_wandb_runs
# wb_fault JSON: network faults for the fake W&B's next requests.
wb_fault() {
	python3 -c 'import sys, urllib.request; urllib.request.urlopen(urllib.request.Request(sys.argv[1] + "/_fault", data=sys.argv[2].encode(), method="POST"), timeout=10).read()' "$WB" "$1"
}

mkdir -p "$T/srv"
git init -q --bare "$T/srv/h.git"
git -C "$T/srv/h.git" config http.receivepack true
serve_git

# ---- helpers (each group of tests below runs in its own work folder $W) ----
# run VAR=VALUE... PROGRAM ARGS...: with the limits and extra environment; exit code in $rc, wall
# time in $secs, output in $W/out and $W/err (kept in $W/everything).
run() {
	_t0=$(date +%s.%N)
	# shellcheck disable=SC2086 # $LIMITS is a list of assignments
	timeout 120 env $LIMITS "$@" >"$W/out" 2>"$W/err" </dev/null
	rc=$?
	secs=$(awk -v a="$_t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	cat "$W/out" "$W/err" >>"$W/everything"
}
# one_error CODE WORD: true when the exit code is CODE and stderr holds one error: a last line
# "profgate: ..." naming WORD, the other "profgate: " lines being retries or notes (a private
# repository made anew, a comment POST looked for). That each ended within its limits is what
# the words say ("gave up after 2 attempts", "timed out", "the time budget ran out"); the wall
# time is tests/stress/budgets.sh's.
one_error() {
	_last=$(tail -n 1 "$W/err")
	_errs=$(grep -c '^profgate: ' "$W/err")
	_notes=$(grep -c '^profgate: .*\(; retrying in [0-9.]* s$\|; making it anew$\| before posting again$\)' "$W/err")
	[ "$rc" -eq "$1" ] && [ $((_errs - _notes)) -eq 1 ] &&
		case $_last in "profgate: "*"$2"*) true ;; *) false ;; esac
}
# ends TITLE CODE WORD [TEST...]: one test: one_error, and every TEST (shell text) holds.
ends() {
	_t=$1 _c=$2 _w=$3
	shift 3
	_why=
	one_error "$_c" "$_w" || _why="exit $rc (want $_c) in ${secs}s, last line:"
	for _x in "$@"; do
		[ -n "$_why" ] && break
		eval "$_x" || _why="false: $_x"
	done
	if [ -z "$_why" ]; then
		ok "$_t: exit $_c in ${secs}s, one line"
	else
		not_ok "$_t: $_why"
		tail -n 2 "$W/err" | cut -c1-400 | sed 's/^/#   /'
	fi
}
# pending_of: the file the last error line says the record is kept in.
pending_of() {
	sed -n "s/.*the record is kept in '\([^']*\)'.*/\1/p" "$W/err" | tail -n 1
}
since() {
	awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'
}
# holds TITLE TEST: one test after a run: TEST (shell text) holds; when it does not, the run's
# exit code, wall time and last lines of output are diagnostics.
holds() {
	if eval "$2"; then
		ok "$1"
	else
		not_ok "$1"
		diag "exit $rc in ${secs}s; stdout, then stderr:"
		diag_file "$W/out" 4
		diag_file "$W/err" 4
	fi
}

# ---- the inputs: two summaries, a failing verdict ----
W=$T/main
mkdir -p "$W"
pg summarize "$EX/baseline.rank-0.pt.trace.json.gz" -o "$T/base.json"
pg summarize "$EX/candidate.rank-0.matmul-slower.pt.trace.json.gz" -o "$T/cand.json"
pg gate -b "$T/base.json" -c "$T/cand.json" --label faults --json "$T/v.json"
check "the inputs: a failing verdict (exit 1)" [ "$rc" -eq 1 ]

# ---- GitHub: gate --comment, the verdict and report still written ----
group_github() {
	# comment_at API PR [VAR=VALUE...]: gate --comment always on PR with GITHUB_API_URL=API
	comment_at() {
		_api=$1 _pr=$2
		shift 2
		rm -f "$W/v.json" "$W/r.md"
		run GITHUB_API_URL="$_api" GITHUB_TOKEN=$GHS GITHUB_REPOSITORY=o/r "$@" "$PROFGATE" gate \
			-b "$T/base.json" -c "$T/cand.json" --label faults --json "$W/v.json" \
			--report "$W/r.md" --comment always --pr "$_pr"
	}
	KEPT='[ -s "$W/v.json" ] && grep -q "^## profgate: FAIL" "$W/r.md" && grep -q "^profgate gate: fail" "$W/out"'
	comment_at "$DEAD" 7
	ends "GitHub, nothing listening" 5 "GitHub user: gave up after 2 attempts" "$KEPT"
	comment_at "$FAULT/reset" 7
	ends "GitHub, the connection reset mid-body" 5 "GitHub user: gave up after 2 attempts" "$KEPT"
	comment_at "$FAULT/drip" 7 $ONE
	ends "GitHub, a slow drip" 5 "GitHub user: gave up after 1 attempt" "$KEPT"
	comment_at "$FAULT/hang" 7 $ONE
	ends "GitHub, a server that never answers" 5 "timed out" "$KEPT"
	comment_at "$FAULT/close" 7
	ends "GitHub, a server that closes without a word" 5 "gave up after 2 attempts" "$KEPT"
	comment_at "$FAULT/s503" 7
	ends "GitHub, a 5xx storm" 5 "gave up after 2 attempts: HTTP 503" "$KEPT"
	comment_at "$FAULT/html" 7
	ends "GitHub, an HTML page for JSON" 5 "the answer is not JSON (text/html)" "$KEPT"
	comment_at "$FAULT/trunc" 7
	ends "GitHub, truncated JSON" 5 "the answer is not JSON" "$KEPT"
	comment_at "$FAULT/types" 7
	ends "GitHub, JSON of the wrong types" 5 "the answer holds no login" "$KEPT"

	# in the middle of a conversation: the fake GitHub answers, then faults on the listing or the
	# POST
	gh_ctl '{"faults": [
	 {"method": "GET", "path": "/issues/21/comments$", "mode": "hang", "times": 9},
	 {"method": "GET", "path": "/issues/22/comments$", "mode": "trunc", "times": 9},
	 {"method": "GET", "path": "/issues/23/comments$", "mode": "types", "times": 9},
	 {"method": "POST", "path": "/issues/24/comments$", "mode": "reset", "times": 9},
	 {"method": "POST", "path": "/issues/25/comments$", "mode": "html", "times": 9},
	 {"method": "POST", "path": "/issues/26/comments$", "mode": "types", "times": 9},
	 {"method": "POST", "path": "/issues/27/comments$", "mode": "drip", "times": 9}]}'
	comment_at "$GH_URL" 21 $ONE
	ends "GitHub, the comment listing hangs" 5 "GitHub comments: gave up after 1 attempt" "$KEPT"
	comment_at "$GH_URL" 22
	ends "GitHub, the comment listing cut short" 5 "not a JSON array" "$KEPT"
	comment_at "$GH_URL" 23
	ends "GitHub, the comment listing of the wrong type" 5 "not a JSON array" "$KEPT"
	comment_at "$GH_URL" 24
	# a POST whose answer is lost is not sent again blindly: the comments are listed first
	ends "GitHub, the POST reset mid-answer" 5 "creating the comment: GitHub comment: Recv failure: Connection reset by peer (3 POSTs, each answer lost; the comments hold none of them)" "$KEPT"
	comment_at "$GH_URL" 25
	ends "GitHub, an HTML page for the new comment" 5 "creating the comment: HTTP 200, but the answer is not JSON" "$KEPT"
	comment_at "$GH_URL" 26
	ends "GitHub, the new comment of the wrong types" 5 "creating the comment: HTTP 200, but the answer holds no comment id" "$KEPT"
	comment_at "$GH_URL" 27 $ONE
	ends "GitHub, the POST's answer drips" 5 "(3 POSTs, each answer lost; the comments hold none of them)" "$KEPT"
	run GITHUB_API_URL="$GH_URL" GITHUB_TOKEN=$GHS GITHUB_REPOSITORY=o/r PROFGATE_HTTP_TIMEOUT_S=soon \
		"$PROFGATE" comment --report "$W/r.md" --pr 7
	ends "PROFGATE_HTTP_TIMEOUT_S=soon" 2 "PROFGATE_HTTP_TIMEOUT_S='soon': give a whole number"

	# the action: the comment and the history push hang; the verdict, outputs and files are there
	if ! python3 -c 'import yaml' 2>/dev/null; then
		skip "the action under faults: python3-yaml is not installed"
		return
	fi
	WS=$W/ws
	mkdir -p "$WS" "$W/files"
	cp "$T/base.json" "$T/cand.json" "$WS/"
	printf '{"number": 31, "pull_request": {"number": 31, "head": {"sha": "%s", "repo": {"full_name": "o/r"}}, "base": {"repo": {"full_name": "o/r"}}}}\n' \
		1111111111111111111111111111111111111111 >"$W/event.json"
	_t0=$(date +%s.%N)
	# shellcheck disable=SC2086
	timeout 120 env $LIMITS python3 "$LIB/run_action.py" "$PROFGATE" "$TOP/action.yml" "$W/out" "$W/err" \
		"{\"baseline\": \"base.json\", \"candidate\": \"cand.json\", \"label\": \"faults\", \"comment\": \"always\", \"history\": \"$FAULT/hang/h.git\", \"history_required\": \"true\"}" \
		"{\"GITHUB_ACTIONS\": \"true\", \"GITHUB_REPOSITORY\": \"o/r\", \"GITHUB_EVENT_NAME\": \"pull_request\", \"GITHUB_EVENT_PATH\": \"$W/event.json\", \"GITHUB_RUN_ID\": \"31\", \"GITHUB_API_URL\": \"$FAULT/hang\", \"GITHUB_WORKSPACE\": \"$WS\", \"GITHUB_OUTPUT\": \"$W/files/output\", \"GITHUB_STEP_SUMMARY\": \"$W/files/summary\", \"HOME\": \"$T/home\", \"PROFGATE_CACHE_DIR\": \"$W/actcache\", \"PROFGATE_HTTP_ATTEMPTS\": \"1\", \"__github_token\": \"$GHS\"}"
	rc=$?
	secs=$(since "$_t0")
	if [ "$rc" -eq 5 ] &&
		grep -q '^verdict=fail$' "$W/files/output" && grep -q '^exit_code=5$' "$W/files/output" &&
		[ -s "$WS/profgate/verdict.json" ] && grep -q '^## profgate: FAIL' "$WS/profgate/report.md" &&
		grep -q '^## profgate: FAIL' "$W/files/summary" && [ -n "$(ls "$WS"/profgate/pending/*.json 2>/dev/null)" ] &&
		grep -q "^history_pending=profgate/pending$" "$W/files/output"; then
		ok "the action, history push and comment hanging: exit 5 in ${secs}s; outputs, summary, report, verdict, record kept in the output folder"
	else
		not_ok "the action, history push and comment hanging: exit $rc in ${secs}s"
		diag_file "$W/err" 6
		[ -f "$W/files/output" ] && diag_file "$W/files/output" 4
	fi
	check "... one error line for the history and one for the comment" \
		eval '[ "$(grep -c "^profgate: history: gave up" "$W/err")" = 1 ] && [ "$(grep -c "^profgate: GitHub.*gave up" "$W/err")" = 1 ]'
}

# ---- W&B: fetch (the API, storage, the manifest), publish (the API, the upload) ----
group_wandb() {
	n=0
	# wb_fetch BASE [RUN [VAR=VALUE...]]: fetch a run's profile, into a fresh cache
	wb_fetch() {
		_base=$1 _run=${2:-base1}
		shift
		[ $# -gt 0 ] && shift
		n=$((n + 1))
		run WANDB_BASE_URL="$_base" WANDB_API_KEY=$KEY PROFGATE_CACHE_DIR="$W/cache$n" "$@" \
			"$PROFGATE" fetch "wandb://acme/llm/$_run"
	}
	wb_fetch "$DEAD"
	ends "W&B fetch, nothing listening" 3 "wandb: RunInfo: gave up after 2 attempts"
	wb_fetch "$FAULT/reset"
	ends "W&B fetch, the connection reset" 3 "wandb: RunInfo: gave up after 2 attempts"
	wb_fetch "$FAULT/drip" base1 $ONE
	ends "W&B fetch, a slow drip" 3 "wandb: RunInfo: gave up after 1 attempt"
	wb_fetch "$FAULT/hang" base1 $ONE
	ends "W&B fetch, a server that never answers" 3 "timed out"
	wb_fetch "$FAULT/s503"
	ends "W&B fetch, a 5xx storm" 3 "gave up after 2 attempts: HTTP 503"
	wb_fetch "$FAULT/html"
	ends "W&B fetch, an HTML page" 3 "not JSON"
	wb_fetch "$FAULT/trunc"
	ends "W&B fetch, truncated JSON" 3 "not JSON"
	wb_fetch "$FAULT/types"
	ends "W&B fetch, JSON of the wrong types" 3 "RunInfo: the answer's data.project.run is a number, not an object"

	# the files and the manifest from storage; each rule is spent by one fetch's attempts, at the
	# signed URL and then at W&B's download handler (the fallback, with the key)
	wb_fault '{"faults": [
	 {"method": "GET", "path": "^/(storage/file|artifactsV2)/", "mode": "hang", "times": 2},
	 {"method": "GET", "path": "^/(storage/file|artifactsV2)/", "mode": "drip", "times": 2},
	 {"method": "GET", "path": "^/(storage/file|artifactsV2)/", "mode": "reset", "times": 4},
	 {"method": "GET", "path": "^/(storage/file|artifactsV2)/", "mode": "status", "status": 502, "times": 4}]}'
	wb_fetch "$WB" cand1 $ONE
	ends "W&B download, storage never answers" 3 "W&B storage: gave up after 1 attempt"
	wb_fetch "$WB" cand1 $ONE
	ends "W&B download, a slow drip" 3 "W&B storage: gave up after 1 attempt"
	wb_fetch "$WB" cand1
	ends "W&B download, reset mid-body" 3 "W&B storage: gave up after 2 attempts"
	wb_fetch "$WB" cand1
	ends "W&B download, a 502 storm" 3 "W&B storage: gave up after 2 attempts: HTTP 502"
	check "... nothing half-downloaded left in the caches" \
		eval '[ -z "$(find "$W"/cache* -path "*blobs*" -type f 2>/dev/null)" ]'
	wb_fault '{"faults": [{"method": "GET", "path": "^/storage/manifest/", "mode": "html", "times": 1}]}'
	wb_fetch "$WB" cand1
	ends "W&B manifest, an HTML page" 3 "manifest"
	wb_fetch "$WB" cand1
	check "W&B fetch after the faults: exit 0" [ "$rc" -eq 0 ]

	wb_publish() {
		_base=$1
		shift
		run WANDB_BASE_URL="$_base" WANDB_API_KEY=$KEY "$@" "$PROFGATE" publish "$T/cand.json" \
			--run wandb://acme/llm/base1
	}
	wb_publish "$DEAD"
	ends "W&B publish, nothing listening" 5 "gave up after 2 attempts"
	wb_publish "$FAULT/hang" $ONE
	ends "W&B publish, a server that never answers" 5 "timed out"
	wb_publish "$FAULT/s503"
	ends "W&B publish, a 5xx storm" 5 "gave up after 2 attempts: HTTP 503"
	wb_publish "$FAULT/html"
	ends "W&B publish, an HTML page" 5 "not JSON"
	wb_publish "$FAULT/types"
	ends "W&B publish, JSON of the wrong types" 5 "RunInfo: the answer's data.project.run is a number, not an object"
	wb_fault '{"faults": [
	 {"method": "PUT", "path": "^/storage/upload/", "mode": "hang", "times": 1},
	 {"method": "PUT", "path": "^/storage/upload/", "mode": "reset", "times": 2}]}'
	wb_publish "$WB" $ONE
	ends "W&B publish, the upload never answered" 5 "upload of summary.json: gave up after 1 attempt"
	wb_publish "$WB"
	ends "W&B publish, the upload reset" 5 "upload of summary.json: gave up after 2 attempts"
	wb_publish "$WB"
	check "W&B publish after the faults: exit 0" [ "$rc" -eq 0 ]
}

# ---- git over HTTP: history append, gate --history, history show; the record kept ----
group_git() {
	k=0
	# append_at URL [VAR=VALUE...]: history append of the verdict to URL, as run fault-<k>
	append_at() {
		_url=$1
		shift
		k=$((k + 1))
		run PROFGATE_GIT_TOKEN=$GIT_TOKEN GITHUB_RUN_ID="fault-$k" "$@" "$PROFGATE" history \
			append --repo "$_url" "$T/v.json"
	}
	KEEPS='p=$(pending_of) && [ -s "$p" ] && grep -q "\"run_id\":\"fault-$k\"" "$p"'
	append_at "$DEAD/h.git"
	ends "git, nothing listening" 5 "Connection refused; the record is kept in" "$KEEPS"
	append_at "$FAULT/reset/h.git"
	ends "git, the connection reset mid-answer" 5 "Connection reset by peer; the record is kept in" "$KEEPS"
	append_at "$FAULT/drip/h.git"
	ends "git, a slow drip (cut at the time budget)" 5 "the time budget ran out; the record is kept in" "$KEEPS"
	append_at "$FAULT/hang/h.git"
	ends "git, a server that never answers" 5 "timed out" "$KEEPS"
	append_at "$FAULT/close/h.git"
	ends "git, a server that closes without a word" 5 "the record is kept in" "$KEEPS"
	append_at "$FAULT/s503/h.git"
	ends "git, a 5xx storm" 5 "status code: 503; the record is kept in" "$KEEPS"
	append_at "$FAULT/html/h.git"
	ends "git, an HTML page" 5 "text/html'; the record is kept in" "$KEEPS"
	check "... no token in a URL the fault server saw" eval '! grep -q "$GIT_TOKEN" "$T/fault/requests.jsonl"'

	# in the middle of a fetch or a push that started well (the branch exists, so the fetch
	# needs upload-pack)
	append_at "$GIT/h.git" $WELL
	holds "a first record on the branch" '[ "$rc" -eq 0 ]'
	git_fault '{"faults": [
	 {"method": "POST", "path": "/git-receive-pack$", "mode": "hang", "times": 2},
	 {"method": "POST", "path": "/git-upload-pack$", "mode": "reset", "times": 99},
	 {"method": "GET", "path": "service=git-receive-pack", "mode": "drip", "times": 1}]}'
	append_at "$GIT/h.git"
	ends "git, receive-pack never answers (the push hangs)" 5 "the record is kept in" "$KEEPS"
	git_fault '{"reset": true, "faults": [{"method": "POST", "path": "/git-upload-pack$", "mode": "reset", "times": 99}]}'
	append_at "$GIT/h.git" PROFGATE_CACHE_DIR="$W/fresh" $WELL # nothing cached: the fetch needs a pack
	# the branch cannot be fetched, but the server takes pushes: the record goes to its own ref
	holds "git, upload-pack reset mid-pack: the record pushed to its own ref instead, exit 0" \
		'[ "$rc" -eq 0 ] && grep -q "on its own ref until the next compaction" "$W/out" && git -C "$T/srv/h.git" for-each-ref refs/profgate/records/ | grep -q .'
	git_fault '{"reset": true, "faults": [{"method": "GET", "path": "service=git-receive-pack", "mode": "drip", "times": 9}]}'
	append_at "$GIT/h.git"
	ends "git, the receive-pack advertisement drips" 5 "the time budget ran out; the record is kept in" "$KEEPS"
	git_fault '{"reset": true, "faults": [{"method": "POST", "path": "/git-receive-pack$", "mode": "hang", "times": 9}]}'
	rm -f "$W/hv.json" "$W/hr.md"
	run PROFGATE_GIT_TOKEN=$GIT_TOKEN GITHUB_RUN_ID=fault-gate "$PROFGATE" gate -b "$T/base.json" \
		-c "$T/cand.json" --label faults --json "$W/hv.json" --report "$W/hr.md" \
		--history "$GIT/h.git" --history-required
	ends "gate --history-required, the push hangs" 5 "the record is kept in" \
		'[ -s "$W/hv.json" ] && grep -q "^## profgate: FAIL" "$W/hr.md" && grep -q "^profgate gate: fail" "$W/out"' \
		'p=$(pending_of) && grep -q "\"run_id\":\"fault-gate\"" "$p"'
	gate_pending=$(pending_of)
	run PROFGATE_GIT_TOKEN=$GIT_TOKEN GITHUB_RUN_ID=fault-gate-2 "$PROFGATE" gate -b "$T/base.json" \
		-c "$T/cand.json" --label faults --history "$GIT/h.git"
	ends "gate --history, the push hangs: a warning, the verdict's exit code" 1 \
		"warning: history: " 'grep -q "^profgate gate: fail" "$W/out"'
	run PROFGATE_GIT_TOKEN=$GIT_TOKEN "$PROFGATE" history show --repo "$FAULT/hang/h.git"
	ends "history show, a server that never answers" 3 "timed out"
	git_fault '{"reset": true}'
	check "nothing reached the branch during the faults" \
		eval '[ "$(git -C "$T/srv/h.git" rev-list --count profgate-history)" = 1 ]'
	run PROFGATE_GIT_TOKEN=$GIT_TOKEN $WELL "$PROFGATE" history append --repo "$GIT/h.git" "$gate_pending"
	# the three other records kept for this remote (fault-9, fault-11, fault-gate-2) go with it
	holds "the kept record appended once the server is well: exit 0, its pending copy removed, the others kept for this remote delivered too" \
		'[ "$rc" -eq 0 ] && [ ! -e "$gate_pending" ] && grep -q "^history: delivered 3 pending records to profgate-history$" "$W/out" && [ "$(git -C "$T/srv/h.git" rev-list --count profgate-history)" = 5 ] && [ -z "$(find "$(dirname "$gate_pending")" -name "*.json")" ]'

	# a push race: another commit pushed with the git CLI between profgate's fetch and push
	# (PROFGATE_TEST_PUSH_DELAY_MS holds the push 1.5 s after the fetch)
	git clone -q --branch profgate-history "$T/srv/h.git" "$W/clone" 2>/dev/null
	adv='GET /h.git/info/refs?service=git-upload-pack auth=yes'
	seen=$(grep -cF "$adv" "$T/git/log")
	(
		i=0
		while [ "$(grep -cF "$adv" "$T/git/log")" -le "$seen" ] && [ $i -lt 200 ]; do
			sleep 0.05
			i=$((i + 1))
		done
		sleep 0.4
		echo "another job" >"$W/clone/other.txt"
		git -C "$W/clone" add other.txt && git -C "$W/clone" commit -qm "another job" &&
			git -C "$W/clone" push -q origin profgate-history 2>"$W/race.err"
	) &
	racer=$!
	run PROFGATE_GIT_TOKEN=$GIT_TOKEN GITHUB_RUN_ID=race PROFGATE_TEST_PUSH_DELAY_MS=1500 \
		$WELL "$PROFGATE" history append --repo "$GIT/h.git" "$T/v.json"
	wait $racer
	holds "a push race with the git CLI: refused as non-fast-forward, the record pushed to its own ref instead, exit 0" \
		'[ "$rc" -eq 0 ] && ! grep -q "attempt [0-9]" "$W/err" && grep -q "(commit [0-9a-f]*, 1 attempt; on its own ref until the next compaction)" "$W/out"'
	check "... the other commit on the branch, linear, the record once on its own ref" \
		eval '[ "$(git -C "$T/srv/h.git" log -1 --format=%s profgate-history)" = "another job" ] && [ "$(git -C "$T/srv/h.git" rev-list --merges --count profgate-history)" = 0 ] && [ "$(git -C "$T/srv/h.git" for-each-ref --format="%(refname)" refs/profgate/records/ | while read -r r; do git -C "$T/srv/h.git" show "$r:$(git -C "$T/srv/h.git" ls-tree -r --name-only "$r")"; done | grep -c "\"run_id\":\"race\"")" = 1 ]'
}

# ---- git: the cache folder unwritable or full, the private repository damaged ----
group_cache() {
	git init -q --bare "$W/local.git"
	: >"$W/afile"
	mkdir -p "$W/tmp"
	TMPDIR=$W/tmp
	export TMPDIR
	run PROFGATE_CACHE_DIR="$W/afile/cache" GITHUB_RUN_ID=cache-1 "$PROFGATE" history append \
		--repo "$W/local.git" "$T/v.json"
	ends "a cache folder under a regular file: one line naming it, the record kept in TMPDIR" 5 \
		"'$W/afile/cache/repos'" \
		'p=$(pending_of) && [ -s "$p" ] && case "$p" in "$W/tmp/profgate-pending-$(id -u)/"*/*.json) true ;; *) false ;; esac'
	run PROFGATE_CACHE_DIR="$W/cache2" $WELL "$PROFGATE" history append --repo "$W/local.git" "$(pending_of)"
	holds "... appended from there later: exit 0, the copy removed" \
		'[ "$rc" -eq 0 ] && [ -z "$(find "$W/tmp/profgate-pending-$(id -u)" -name "*.json")" ]'
	rm -f "$W/v.json"
	run PROFGATE_CACHE_DIR="$W/afile/cache" GITHUB_RUN_ID=cache-2 "$PROFGATE" gate \
		-b "$T/base.json" -c "$T/cand.json" --label faults --json "$W/v.json" \
		--history "$W/local.git" --history-required
	ends "gate --history-required, the cache unwritable" 5 "'$W/afile/cache/repos'" \
		'[ -s "$W/v.json" ] && [ -s "$(pending_of)" ]'
	rm -f "$(pending_of)"
	if [ "$(id -u)" != 0 ]; then
		mkdir -p "$W/ro"
		chmod 500 "$W/ro"
		run PROFGATE_CACHE_DIR="$W/ro/cache" GITHUB_RUN_ID=cache-3 "$PROFGATE" history append \
			--repo "$W/local.git" "$T/v.json"
		ends "a cache folder without write permission" 5 "'$W/ro/cache"
		rm -f "$(pending_of)"
	else
		skip "a cache folder without write permission: root writes anyway (the file case covers it)"
	fi
	# a full disk: no file may grow; stdout and stderr are pipes, SIGXFSZ must not kill profgate
	mkdir -p "$W/fulltmp"
	tip=$(git -C "$W/local.git" rev-parse profgate-history)
	_t0=$(date +%s.%N)
	# shellcheck disable=SC2086
	{ env $LIMITS PROFGATE_CACHE_DIR="$W/fullcache" GITHUB_RUN_ID=full TMPDIR="$W/fulltmp" \
		sh -c 'ulimit -f 0; exec "$@"' sh "$PROFGATE" history append --repo "$W/local.git" \
		"$T/v.json" </dev/null 2>&1
	echo $? >"$W/full.rc"; } | cat >"$W/err"
	rc=$(cat "$W/full.rc")
	secs=$(since "$_t0")
	ends "a full disk (ulimit -f 0): no crash, the record file is all there is" 5 \
		"File too large; the record could not be kept: "
	check "... nothing half-written on the branch" \
		eval '[ "$(git -C "$W/local.git" rev-parse profgate-history)" = "$tip" ]'
	run PROFGATE_CACHE_DIR="$W/fullcache" $WELL GITHUB_RUN_ID=full "$PROFGATE" history append \
		--repo "$W/local.git" "$T/v.json"
	holds "... the same cache with room again: the half-made repository made anew, exit 0" \
		'[ "$rc" -eq 0 ]'

	# a damaged private repository: made anew, the record lands
	m=0
	dmg() {
		m=$((m + 1))
		run PROFGATE_CACHE_DIR="$W/dmgcache" $WELL GITHUB_RUN_ID="dmg-$m" "$PROFGATE" history append \
			--repo "$W/dmg.git" "$T/v.json"
	}
	git init -q --bare "$W/dmg.git"
	dmg
	REPO=$(ls -d "$W"/dmgcache/repos/*.git 2>/dev/null)
	holds "a first append fills the private repository" '[ "$rc" -eq 0 ] && [ -d "$REPO" ]'
	damage() {
		(cd "$REPO" && eval "$2")
		dmg
		if [ "$rc" -eq 0 ] && git -C "$W/dmg.git" log -1 --format=%b profgate-history | grep -q "^run: dmg-$m$" &&
			! grep -v '^profgate: history: the private repository .* is damaged (.*); making it anew$' "$W/err" | grep -q .; then
			ok "a damaged private repository ($1): made anew, the record lands"
		else
			not_ok "a damaged private repository ($1): exit $rc"
			diag_file "$W/err" 4
		fi
	}
	damage "objects truncated" 'find objects -type f | while read -r f; do head -c 20 "$f" >"$f.t"; mv -f "$f.t" "$f"; done'
	damage "objects garbled" 'find objects -type f | while read -r f; do head -c "$(wc -c <"$f")" /dev/urandom >"$f.t"; mv -f "$f.t" "$f"; done'
	damage "objects gone" 'rm -rf objects/*'
	damage "refs garbled" 'find refs -type f | while read -r f; do echo "not a sha" >"$f"; done; [ ! -f packed-refs ] || echo garbage >packed-refs'
	damage "HEAD empty" ': >HEAD'
	damage "config garbled" 'printf "[core\n\tbare = = =\n\001\002" >config'
	damage "the repository a file" 'cd .. && rm -rf "$REPO" && echo junk >"$REPO"'
	run PROFGATE_CACHE_DIR="$W/dmgcache" $WELL "$PROFGATE" history show --repo "$W/dmg.git" --json
	holds "history show: every record once ($m)" \
		'[ "$rc" -eq 0 ] && [ "$(grep -c "\"record_id\"" "$W/out")" = "$m" ]'
	(cd "$REPO" && find objects -type f | while read -r f; do head -c 20 "$f" >"$f.t"; mv -f "$f.t" "$f"; done)
	run PROFGATE_CACHE_DIR="$W/dmgcache" $WELL "$PROFGATE" history show --repo "$W/dmg.git" --json
	# a local remote is read where it is: the damaged private repository is not even opened
	# (tests/e2e/history_reads.sh damages the cache of an http remote's reads)
	holds "history show of a local remote, its private repository damaged: every record" \
		'[ "$rc" -eq 0 ] && [ "$(grep -c "\"record_id\"" "$W/out")" = "$m" ] && [ ! -s "$W/err" ]'
}

# ---- the groups run side by side (they wait on timeouts, not on the CPU) ----
for g in github wandb git cache; do
	(
		W=$T/$g
		mkdir -p "$W"
		tap_n=0
		tap_failed=0
		"group_$g"
	) >"$T/$g.tap" 2>&1 &
	gpids="${gpids-} $!"
done
# shellcheck disable=SC2086 # a list of pids
wait $gpids
# one TAP stream: the groups' lines in order, numbered anew after the first test above
cat "$T/github.tap" "$T/wandb.tap" "$T/git.tap" "$T/cache.tap" >"$T/groups.tap"
while IFS= read -r line; do
	case $line in
	"ok "[0-9]*)
		tap_n=$((tap_n + 1))
		echo "ok $tap_n ${line#ok [0-9]* }"
		;;
	"not ok "[0-9]*)
		tap_n=$((tap_n + 1))
		tap_failed=$((tap_failed + 1))
		echo "not ok $tap_n ${line#not ok [0-9]* }"
		;;
	*) echo "$line" ;;
	esac
done <"$T/groups.tap"
check "no token or key in anything profgate printed" \
	eval '! cat "$T"/*/everything | grep -q -e "$GHS" -e "$KEY" -e "$GIT_TOKEN"'

done_testing
