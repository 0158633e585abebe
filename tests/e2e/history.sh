#!/bin/sh
# profgate history and gate --history end to end, against real git: local bare repositories as
# remotes (paths and file:// URLs) and smart HTTP through `git http-backend` behind a loopback
# server with token auth (tests/e2e/lib/git_http.py). A new branch starts as an orphan commit,
# appends are linear commits by the bot, the same record twice is one line, 16 jobs at once all
# land, a hook's rejection and a wrong token exit 5 with one line and the record kept, a corrupt
# line is reported by file and line and skipped, an unknown record version is refused. The first
# nightly gate against an empty history (or one of records without numbers) records the night
# (verdict recorded, exit 0) and the next nights are gated against it.
set -u
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/serve.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
EX=$TOP/tests/data/examples

# The run must not pick up a CI job's identity, a user's git config or a proxy for loopback.
local_env
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
GIT_AUTHOR_NAME=tester GIT_AUTHOR_EMAIL=tester@example.com
GIT_COMMITTER_NAME=tester GIT_COMMITTER_EMAIL=tester@example.com
export GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL

# shard REPO [BRANCH]: the text of the only shard on the branch.
shard() {
	git -C "$1" show "${2:-profgate-history}:$(git -C "$1" ls-tree -r --name-only "${2:-profgate-history}" | head -n 1)"
}
# series_shard REPO WORD: the text of the branch's shards of the series whose name starts with WORD.
series_shard() {
	for _f in $(git -C "$1" ls-tree -r --name-only profgate-history | grep "^$2-"); do
		git -C "$1" show "profgate-history:$_f"
	done
}
# jl TITLE FILE EXPR...: python expressions over r (the JSON lines of FILE, parsed) must hold.
jl() {
	_t=$1
	shift
	pycheck "$_t" 'r = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]' "$@"
}

# ---- a real verdict: the bundled pair, a known matmul regression ----
pg summarize "$EX"/baseline.*.pt.trace.json.gz -o "$T/base.json"
pg summarize "$EX"/candidate.*.pt.trace.json.gz -o "$T/cand.json"
pg gate -b "$T/base.json" -c "$T/cand.json" --label "matmul bench" --json "$T/v.json"
check "gate writes the verdict JSON (fail, exit 1)" [ "$rc" -eq 1 ]
cand_sha=$(sha256sum "$T/cand.json" | cut -d' ' -f1)
base_sha=$(sha256sum "$T/base.json" | cut -d' ' -f1)

# ---- append to a new branch of a bare repository given as a path ----
git init -q --bare "$T/r.git"
pge PROFGATE_TIME=2024-05-01T12:00:00Z "$PROFGATE" history append --repo "$T/r.git" "$T/v.json"
check "history append to a new branch: exit 0, says where it landed" \
	eval '[ "$rc" -eq 0 ] && [ ! -s "$T/err" ] && grep -q "^history: appended to matmul-bench-[0-9a-f]\{8\}/2024-05.jsonl on profgate-history" "$T/out"'
check "the branch is one orphan commit" \
	eval '[ "$(git -C "$T/r.git" rev-list --count profgate-history)" = 1 ] && [ "$(git -C "$T/r.git" rev-list --max-parents=0 profgate-history)" = "$(git -C "$T/r.git" rev-parse profgate-history)" ]'
git -C "$T/r.git" log -1 --format='%an <%ae>|%cn <%ce>|%s' profgate-history >"$T/log1"
check "committed by the bot, the message naming series, label and verdict" \
	grep -q '^profgate-bot <profgate-bot@users.noreply.github.com>|profgate-bot <profgate-bot@users.noreply.github.com>|history: matmul-bench-[0-9a-f]\{8\} (matmul bench): fail$' "$T/log1"
check "the layout is <series>/<YYYY-MM>.jsonl and nothing else" \
	eval '[ "$(git -C "$T/r.git" ls-tree -r --name-only profgate-history | sed "s/[0-9a-f]\{8\}/H/")" = "matmul-bench-H/2024-05.jsonl" ]'
shard "$T/r.git" >"$T/s1.jsonl"
jl "the record: schema, id, time, series, kind, verdict, version" "$T/s1.jsonl" \
	"len(r) == 1" "r[0]['schema'] == 'profgate.history/1'" \
	"len(r[0]['record_id']) == 32 and int(r[0]['record_id'], 16) >= 0" \
	"r[0]['time'] == '2024-05-01T12:00:00Z'" "r[0]['series'].startswith('matmul-bench-')" \
	"r[0]['label'] == 'matmul bench' and r[0]['kind'] == 'manual'" \
	"r[0]['verdict'] == 'fail' and r[0]['exit_code'] == 1" \
	"r[0]['profgate_version'] == '$(sed -n 's/^VERSION := *//p' "$TOP/Makefile")'" \
	"r[0]['thresholds'] == 'default'"
jl "the record: no CI fields outside CI, the candidate's identity" "$T/s1.jsonl" \
	"[r[0][k] for k in ('repo', 'sha', 'ref', 'pr', 'run_id', 'run_attempt')] == [None] * 6" \
	"r[0]['identity']['device_kind'] == 'Tesla V100-SXM2-32GB' and r[0]['identity']['device_count'] == 1"
jl "the record: judged and step metrics, baseline and summary digests" "$T/s1.jsonl" \
	"abs(r[0]['metrics']['step.median_us'] - 101540) < 100" \
	"'family.matmul.us_per_step' in r[0]['metrics'] and 'step.p90_us' in r[0]['metrics']" \
	"r[0]['summary_sha256'] == '$cand_sha'" \
	"r[0]['baseline'] == {'kind': 'file', 'path': '$T/base.json', 'sha256': '$base_sha', 'summary_sha256': '$base_sha'}"

# ---- the same record again: a no-op ----
pge PROFGATE_TIME=2024-05-01T12:00:00Z "$PROFGATE" history append --repo "$T/r.git" "$T/v.json"
check "the same record again: exit 0, 'already holds'" \
	eval '[ "$rc" -eq 0 ] && grep -q "already holds record" "$T/out"'
check "still one commit and one line" \
	eval '[ "$(git -C "$T/r.git" rev-list --count profgate-history)" = 1 ] && [ "$(shard "$T/r.git" | wc -l)" -eq 1 ]'

# ---- a second record from a PR run, through a file:// URL ----
printf '{"number": 42, "pull_request": {"number": 42}}\n' >"$T/event.json"
pge PROFGATE_TIME=2024-05-02T08:30:00Z GITHUB_RUN_ID=1001 GITHUB_RUN_ATTEMPT=2 \
	GITHUB_EVENT_NAME=pull_request GITHUB_EVENT_PATH="$T/event.json" GITHUB_REPOSITORY=o/r \
	GITHUB_SHA=0123456789abcdef0123456789abcdef01234567 GITHUB_REF=refs/pull/42/merge \
	"$PROFGATE" history append --repo "file://$T/r.git" "$T/v.json"
check "a PR run's record through file://: exit 0" [ "$rc" -eq 0 ]
check "two commits, linear, the first one the orphan" \
	eval '[ "$(git -C "$T/r.git" rev-list --count profgate-history)" = 2 ] && [ "$(git -C "$T/r.git" rev-list --merges --count profgate-history)" = 0 ] && [ "$(git -C "$T/r.git" rev-list --max-parents=0 profgate-history | wc -l)" -eq 1 ]'
shard "$T/r.git" >"$T/s2.jsonl"
jl "the PR record: kind pr, PR 42, run and attempt, repo, sha, ref; another id" "$T/s2.jsonl" \
	"len(r) == 2 and r[0] == json.loads(open('$T/s1.jsonl').readline())" \
	"r[1]['kind'] == 'pr' and r[1]['pr'] == 42 and r[1]['run_id'] == '1001' and r[1]['run_attempt'] == 2" \
	"r[1]['repo'] == 'o/r' and r[1]['sha'].startswith('0123456') and r[1]['ref'] == 'refs/pull/42/merge'" \
	"r[1]['record_id'] != r[0]['record_id'] and r[1]['series'] == r[0]['series']"

# ---- gate --history ----
pge PROFGATE_TIME=2024-05-03T00:00:00Z GITHUB_EVENT_NAME=schedule GITHUB_RUN_ID=1002 \
	"$PROFGATE" gate -b "$T/base.json" -c "$T/cand.json" --label "matmul bench" --history "$T/r.git"
check "gate --history: the verdict's exit code (1), the append on stdout" \
	eval '[ "$rc" -eq 1 ] && grep -q "^profgate gate: fail" "$T/out" && grep -q "^  history: appended to matmul-bench-" "$T/out"'
shard "$T/r.git" >"$T/s3.jsonl"
jl "gate --history's record: nightly, the same series and metrics as from the verdict file" "$T/s3.jsonl" \
	"len(r) == 3 and r[2]['kind'] == 'nightly' and r[2]['series'] == r[0]['series']" \
	"r[2]['metrics'] == r[0]['metrics'] and r[2]['summary_sha256'] == r[0]['summary_sha256']"
pg gate -b "$T/base.json" -c "$T/cand.json" --history "$T/nothing-here.git"
check "gate --history to a missing remote: a warning line, the verdict's exit code" \
	eval '[ "$rc" -eq 1 ] && [ "$(lines "$T/err")" -eq 1 ] && grep -q "^profgate: warning: history: " "$T/err"'
pg gate -b "$T/base.json" -c "$T/cand.json" --history-required
check "gate --history-required without --history: exit 2" [ "$rc" -eq 2 ]

# ---- history show ----
pg history show --repo "$T/r.git"
check "history show: a table of the three records, oldest first" \
	eval '[ "$rc" -eq 0 ] && [ "$(lines "$T/out")" -eq 4 ] && head -n 1 "$T/out" | grep -q "^time " && sed -n 2p "$T/out" | grep -q "^2024-05-01T12:00:00Z .* manual .* fail .* 101.54 ms" && sed -n 3p "$T/out" | grep -q "#42$"'
pg history show --repo "$T/r.git" --kind pr --json
jl "history show --kind pr --json: the PR record as stored" "$T/out" \
	"len(r) == 1 and r[0]['pr'] == 42"
check "--json prints the stored bytes" eval 'sed -n 2p "$T/s2.jsonl" | cmp -s - "$T/out"'
pg history show --repo "$T/r.git" --since 2024-05-02 --json
jl "history show --since 2024-05-02: two records" "$T/out" "len(r) == 2"
pg history show --repo "$T/r.git" --verdict pass --json
check "history show --verdict pass: none" eval '[ "$rc" -eq 0 ] && [ ! -s "$T/out" ]'
series=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["series"])' "$T/s1.jsonl")
pg history show --repo "$T/r.git" --series "$series" --label "matmul bench" --json
jl "history show --series --label: all three" "$T/out" "len(r) == 3"
pg history show --repo "$T/r.git" --since yesterday
check "history show --since yesterday: exit 2" [ "$rc" -eq 2 ]
pg history show --repo "$T/r.git" --branch nothing-yet
check "history show of a branch that does not exist: exit 0, a note, no records" \
	eval '[ "$rc" -eq 0 ] && [ ! -s "$T/out" ] && has "$T/err" "no branch"'

# ---- 16 jobs at once, each with its own cache (16 runners) ----
git init -q --bare "$T/c.git"
pids=
i=1
while [ $i -le 16 ]; do
	(env PROFGATE_CACHE_DIR="$T/cache16/$i" GITHUB_RUN_ID="run-$i" PROFGATE_TIME=2024-06-01T00:00:00Z \
		timeout 90 "$PROFGATE" history append --repo "$T/c.git" "$T/v.json" \
		>"$T/c16.$i.out" 2>"$T/c16.$i.err"
	echo $? >"$T/c16.$i.rc") &
	pids="$pids $!"
	i=$((i + 1))
done
# shellcheck disable=SC2086 # a list of pids
wait $pids
check "16 concurrent appends all exit 0" [ "$(cat "$T"/c16.*.rc | sort -u)" = 0 ]
# a writer whose push lost the race for the branch pushes its record to a ref of its own
# (refs/profgate/records/<branch>@/<series>/<record id>): no writer waits for another
pg history show --repo "$T/c.git" --json
jl "16 records read, none doubled, every line a valid record" "$T/out" \
	"len(r) == 16 and len({x['record_id'] for x in r}) == 16" \
	"sorted(x['run_id'] for x in r) == sorted('run-%d' % i for i in range(1, 17))" \
	"all(x['schema'] == 'profgate.history/1' for x in r)"
own=$(git -C "$T/c.git" for-each-ref refs/profgate/records/ | wc -l)
check "each record once on the branch or on its own ref; the branch linear, one root" \
	eval '[ "$(( $(git -C "$T/c.git" rev-list --count profgate-history) + own ))" = 16 ] && [ "$(git -C "$T/c.git" rev-list --merges --count profgate-history)" = 0 ] && [ "$(git -C "$T/c.git" rev-list --max-parents=0 profgate-history | wc -l)" -eq 1 ] && [ "$(shard "$T/c.git" | wc -l)" -eq "$((16 - own))" ]'
check "no writer retried: nothing on stderr" eval '! cat "$T"/c16.*.err | grep -q .'
pg history compact --repo "$T/c.git"
check "a compaction folds the record refs into the branch: 16 lines, each once" \
	eval '[ "$rc" -eq 0 ] && [ "$(shard "$T/c.git" | wc -l)" -eq 16 ] && [ "$(shard "$T/c.git" | sort -u | wc -l)" -eq 16 ] && grep -q "^history compact: $own records\{0,1\} folded in from their own refs$" "$T/out"'
pg history show --repo "$T/c.git" --json
check "... read once each while their refs stay" eval '[ "$(wc -l <"$T/out")" -eq 16 ]'
pg history compact --repo "$T/c.git"
check "the next compaction removes the refs the branch holds: none left, 16 lines still" \
	eval '[ "$rc" -eq 0 ] && [ -z "$(git -C "$T/c.git" for-each-ref refs/profgate/records/)" ] && [ "$(shard "$T/c.git" | sort -u | wc -l)" -eq 16 ]'
check "git fsck finds the repository sound" eval 'git -C "$T/c.git" fsck --no-dangling >/dev/null 2>&1'

# four jobs racing to create the branch: each push waits until all have fetched "no branch", so
# all but one must be refused (the orphan is created against the zero id under the ref's lock)
# and rebuild on the winner's commit
git init -q --bare "$T/o.git"
pids=
for i in 1 2 3 4; do
	(env PROFGATE_TEST_PUSH_DELAY_MS=400 PROFGATE_CACHE_DIR="$T/cacheo/$i" GITHUB_RUN_ID="orphan-$i" \
		timeout 90 "$PROFGATE" history append --repo "$T/o.git" "$T/v.json" >/dev/null 2>"$T/o.$i.err"
	echo $? >"$T/o.$i.rc") &
	pids="$pids $!"
done
# shellcheck disable=SC2086
wait $pids
check "four jobs creating the branch at once: all exit 0" [ "$(cat "$T"/o.*.rc | sort -u)" = 0 ]
pg history show --repo "$T/o.git" --json
check "all four records landed: one created the branch, the others on their own refs" \
	eval '[ "$(git -C "$T/o.git" rev-list --count profgate-history)" = 1 ] && [ "$(git -C "$T/o.git" for-each-ref refs/profgate/records/ | wc -l)" -eq 3 ] && [ "$(wc -l <"$T/out")" -eq 4 ]'
check "the losers were refused once, not retried" \
	eval '! grep -q "attempt [0-9]" "$T"/o.*.err'

# four jobs sharing one cache (one runner): they take turns on the private repository
pids=
i=1
while [ $i -le 4 ]; do
	(env GITHUB_RUN_ID="shared-$i" PROFGATE_TIME=2024-06-02T00:00:00Z timeout 90 "$PROFGATE" \
		history append --repo "file://$T/c.git" "$T/v.json" >/dev/null 2>&1
	echo $? >"$T/sh.$i.rc") &
	pids="$pids $!"
	i=$((i + 1))
done
# shellcheck disable=SC2086
wait $pids
check "four concurrent appends through one cache: all exit 0" [ "$(cat "$T"/sh.*.rc | sort -u)" = 0 ]
pg history show --repo "$T/c.git" --json
jl "20 records in all, none doubled" "$T/out" \
	"len(r) == 20 and len({x['record_id'] for x in r}) == 20"

# ---- tolerant reading ----
git clone -q --branch profgate-history "$T/r.git" "$T/wt" 2>/dev/null
f=$(cd "$T/wt" && ls */2024-05.jsonl)
printf '{"schema": "profgate.history/1", "record_id": "x", "time": "never"}\n' >>"$T/wt/$f"
printf 'not json at all\n' >>"$T/wt/$f"
(cd "$T/wt" && git commit -qam "a hand edit" && git push -q origin profgate-history 2>/dev/null)
pg history show --repo "$T/r.git"
cp "$T/err" "$T/corrupt.err"
check "a corrupt line: reported by file and line, skipped, exit 0" \
	eval '[ "$rc" -eq 0 ] && grep -q "^profgate: history: $f:4: .*; line skipped$" "$T/err" && grep -q "^profgate: history: $f:5: not a JSON object; line skipped$" "$T/err" && [ "$(lines "$T/err")" -eq 2 ]'
check "the good records are still shown" eval '[ "$(lines "$T/out")" -eq 4 ]'
pge PROFGATE_TIME=2024-05-04T00:00:00Z GITHUB_RUN_ID=1003 "$PROFGATE" history append --repo "$T/r.git" "$T/v.json"
check "an append after corrupt lines works" eval '[ "$rc" -eq 0 ] && [ "$(shard "$T/r.git" | wc -l)" -eq 6 ]'

printf '{"schema": "profgate.history/2", "record_id": "y"}\n' >"$T/newer.json"
mkdir -p "$T/wt/future-00000000"
cp "$T/newer.json" "$T/wt/future-00000000/2024-05.jsonl"
(cd "$T/wt" && git pull -q --rebase origin profgate-history 2>/dev/null; git checkout -q -b newer &&
	git add future-00000000 && git commit -qm newer && git push -q origin newer 2>/dev/null)
pg history show --repo "$T/r.git" --branch newer
check "a record of an unknown version: refused with file and line, exit 3" \
	eval '[ "$rc" -eq 3 ] && [ "$(lines "$T/err")" -eq 1 ] && has "$T/err" "future-00000000/2024-05.jsonl:1: record schema '"'"'profgate.history/2'"'"' is not one this profgate reads"'
pg history append --repo "$T/r.git" "$T/newer.json"
check "history append of an unknown record version: exit 3, one line" \
	eval '[ "$rc" -eq 3 ] && [ "$(lines "$T/err")" -eq 1 ] && has "$T/err" "profgate.history/2"'

# ---- usage and input errors ----
pg history append "$T/v.json"
check "append without --repo: exit 2" [ "$rc" -eq 2 ]
pg history append --repo git@github.com:o/r.git "$T/v.json"
check "an scp-like ssh remote: exit 2, one line" eval '[ "$rc" -eq 2 ] && [ "$(lines "$T/err")" -eq 1 ]'
git init -q "$T/worktree"
pg history append --repo "$T/worktree" "$T/v.json"
check "a remote with a work tree: exit 2, 'not a bare repository'" \
	eval '[ "$rc" -eq 2 ] && has "$T/err" "not a bare repository"'
printf 'hello\n' >"$T/junk.json"
pg history append --repo "$T/r.git" "$T/junk.json"
check "RECORD.json that is neither: exit 3, one line" eval '[ "$rc" -eq 3 ] && [ "$(lines "$T/err")" -eq 1 ]'
pg history append --repo "$T/r.git" --kind weekly "$T/v.json"
check "--kind weekly: exit 2" [ "$rc" -eq 2 ]
pge PROFGATE_TIME=tomorrow "$PROFGATE" history append --repo "$T/r.git" "$T/v.json"
check "PROFGATE_TIME that is not a time: exit 2" [ "$rc" -eq 2 ]
pg history frobnicate
check "history frobnicate: exit 2" [ "$rc" -eq 2 ]

# ---- smart HTTP with a token ----
if ! command -v python3 >/dev/null 2>&1 || [ ! -x "$(git --exec-path)/git-http-backend" ]; then
	skip "smart HTTP: python3 or git http-backend missing"
	done_testing
	exit $?
fi
mkdir -p "$T/srv"
git init -q --bare "$T/srv/h.git"
git -C "$T/srv/h.git" config http.receivepack true
TOKEN=tok-$$-secret
serve_git
URL=$GIT/h.git
export PROFGATE_CACHE_DIR=$T/cache-http

pge PROFGATE_GIT_TOKEN=$TOKEN PROFGATE_TIME=2024-07-01T00:00:00Z GITHUB_RUN_ID=h1 \
	"$PROFGATE" history append --repo "$URL" "$T/v.json"
check "https-style remote: append to a new branch with the token, exit 0" \
	eval '[ "$rc" -eq 0 ] && grep -q "^history: appended to " "$T/out"'
check "the token went as Basic auth after a 401, the push body chunked" \
	eval 'grep -q "^GET /h.git/info/refs?service=git-upload-pack auth=no" "$T/git/log" && grep -q "^POST /h.git/git-receive-pack auth=yes chunked=yes" "$T/git/log"'
pge GITHUB_TOKEN=$TOKEN PROFGATE_TIME=2024-07-02T00:00:00Z GITHUB_RUN_ID=h2 \
	"$PROFGATE" history append --repo "$URL" "$T/v.json"
check "append again (token from GITHUB_TOKEN): two linear commits on the server" \
	eval '[ "$rc" -eq 0 ] && [ "$(git -C "$T/srv/h.git" rev-list --count profgate-history)" = 2 ] && [ "$(shard "$T/srv/h.git" | wc -l)" -eq 2 ]'
tip=$(git -C "$T/srv/h.git" rev-parse profgate-history)
pge PROFGATE_GIT_TOKEN=wrong-token GITHUB_RUN_ID=h3 "$PROFGATE" history append --repo "$URL" "$T/v.json"
one_line "a wrong token" 5 "authentication rejected"
check "a wrong token: nothing written, no token in the output" \
	eval '[ "$(git -C "$T/srv/h.git" rev-parse profgate-history)" = "$tip" ] && ! grep -q "wrong-token\|$TOKEN" "$T/err" "$T/out"'
pge GITHUB_RUN_ID=h3 "$PROFGATE" history append --repo "$URL" "$T/v.json"
one_line "no token" 5 "set PROFGATE_GIT_TOKEN or GITHUB_TOKEN"
check "the token is never in a URL the server saw" eval '! grep -q "$TOKEN" "$T/git/log"'

# a pre-receive hook that rejects: one line, exit 5, the record kept for a retry
printf '#!/bin/sh\necho "history is frozen by policy" >&2\nexit 1\n' >"$T/srv/h.git/hooks/pre-receive"
chmod +x "$T/srv/h.git/hooks/pre-receive"
pge PROFGATE_GIT_TOKEN=$TOKEN GITHUB_RUN_ID=h4 PROFGATE_TIME=2024-07-04T00:00:00Z \
	"$PROFGATE" history append --repo "$URL" "$T/v.json"
one_line "a pre-receive hook that rejects" 5 "pre-receive hook declined (remote: history is frozen by policy)"
pending=$(sed -n "s/.*the record is kept in '\([^']*\)'.*/\1/p" "$T/err")
check "the rejected record is kept under the cache's pending folder" \
	eval 'case "$pending" in "$PROFGATE_CACHE_DIR"/pending/*.json) [ -s "$pending" ] ;; *) false ;; esac'
check "nothing half-written on the server" eval '[ "$(git -C "$T/srv/h.git" rev-parse profgate-history)" = "$tip" ]'
pge PROFGATE_GIT_TOKEN=$TOKEN GITHUB_RUN_ID=h5 PROFGATE_TIME=2024-07-05T00:00:00Z \
	"$PROFGATE" gate -b "$T/base.json" -c "$T/cand.json" --history "$URL"
check "gate --history against the rejecting hook: a warning, the verdict's exit code (1)" \
	eval '[ "$rc" -eq 1 ] && [ "$(lines "$T/err")" -eq 1 ] && grep -q "^profgate: warning: history: .*hook declined" "$T/err"'
pge PROFGATE_GIT_TOKEN=$TOKEN GITHUB_RUN_ID=h5 PROFGATE_TIME=2024-07-05T00:00:00Z \
	"$PROFGATE" gate -b "$T/base.json" -c "$T/cand.json" --history "$URL" --history-required
check "... with --history-required: exit 5" eval '[ "$rc" -eq 5 ] && grep -q "^profgate: history: .*hook declined" "$T/err"'
rm "$T/srv/h.git/hooks/pre-receive"
pge PROFGATE_GIT_TOKEN=$TOKEN "$PROFGATE" history append --repo "$URL" "$pending"
check "the kept record appended later: exit 0, the pending copy removed" \
	eval '[ "$rc" -eq 0 ] && [ ! -e "$pending" ] && series_shard "$T/srv/h.git" matmul | grep -q "2024-07-04T00:00:00Z"'
check "... and the records kept by the refused runs before (h3, the gate's h5) delivered by that next run, once each" \
	eval 'grep -q "^history: delivered 2 pending records to profgate-history$" "$T/out" && [ "$(series_shard "$T/srv/h.git" default | grep -c "\"run_id\":\"h5\"")" -eq 1 ] && [ "$(series_shard "$T/srv/h.git" matmul | grep -c "\"run_id\":\"h3\"")" -eq 1 ] && [ -z "$(find "$PROFGATE_CACHE_DIR/pending" -name "*.json")" ]'

# an update hook that moves the branch while receive-pack runs: the refusal comes only through
# the push callback's status; profgate fetches, rebuilds on the new tip and retries
cat >"$T/srv/h.git/hooks/update" <<'EOF'
#!/bin/sh
[ -e raced ] && exit 0
touch raced
c=$(echo "another job" | GIT_AUTHOR_NAME=job GIT_AUTHOR_EMAIL=job@example.com \
	GIT_COMMITTER_NAME=job GIT_COMMITTER_EMAIL=job@example.com git commit-tree "$2^{tree}" -p "$2")
git update-ref "$1" "$c" "$2"
EOF
chmod +x "$T/srv/h.git/hooks/update"
pge PROFGATE_GIT_TOKEN=$TOKEN GITHUB_RUN_ID=h6 PROFGATE_TIME=2024-07-06T00:00:00Z \
	"$PROFGATE" history append --repo "$URL" "$T/v.json"
check "a ref moved during receive-pack: the record pushed to its own ref instead, exit 0" \
	eval '[ "$rc" -eq 0 ] && grep -q "1 attempt; on its own ref until the next compaction" "$T/out" && [ "$(git -C "$T/srv/h.git" for-each-ref refs/profgate/records/ | wc -l)" -eq 1 ]'
rm "$T/srv/h.git/hooks/update"
pge PROFGATE_GIT_TOKEN=$TOKEN "$PROFGATE" history show --repo "$URL" --json --since 2024-07-06
jl "... read once over HTTP, with the branch" "$T/out" \
	"sorted(x['run_id'] for x in r if x['time'] < '2025') == ['h6']"
pge PROFGATE_GIT_TOKEN=$TOKEN "$PROFGATE" history compact --repo "$URL"
pge PROFGATE_GIT_TOKEN=$TOKEN "$PROFGATE" history compact --repo "$URL"
check "two compactions over HTTP fold it in and remove its ref; the other job's commit archived" \
	eval '[ "$rc" -eq 0 ] && [ -z "$(git -C "$T/srv/h.git" for-each-ref refs/profgate/records/)" ] && git -C "$T/srv/h.git" log --format=%s --all | grep -q "another job"'
pge PROFGATE_GIT_TOKEN=$TOKEN "$PROFGATE" history show --repo "$URL" --json --since 2024-07-06
jl "... and the record read once after it" "$T/out" \
	"sorted(x['run_id'] for x in r if x['time'] < '2025') == ['h6']"

# six jobs at once over HTTP, each its own runner (wait for them, not for the server, whose pid
# stays in $pids for serve.sh to kill on exit)
web=
i=1
while [ $i -le 6 ]; do
	(env PROFGATE_CACHE_DIR="$T/cache6/$i" PROFGATE_GIT_TOKEN=$TOKEN GITHUB_RUN_ID="web-$i" \
		PROFGATE_TIME=2024-08-01T00:00:00Z timeout 90 "$PROFGATE" history append --repo "$URL" \
		"$T/v.json" >/dev/null 2>"$T/w.$i.err"
	echo $? >"$T/w.$i.rc") &
	web="$web $!"
	i=$((i + 1))
done
# shellcheck disable=SC2086
wait $web
check "six concurrent appends over HTTP: all exit 0" [ "$(cat "$T"/w.*.rc | sort -u)" = 0 ]
pge PROFGATE_GIT_TOKEN=$TOKEN "$PROFGATE" history show --repo "$URL" --json --since 2024-08-01
jl "six records, none doubled; history linear" "$T/out" \
	"len([x for x in r if x['run_id'].startswith('web-')]) == 6 and len({x['record_id'] for x in r}) == len(r)" \
	"__import__('subprocess').check_output(['git', '-C', '$T/srv/h.git', 'rev-list', '--merges', '--count', 'profgate-history']).strip() == b'0'"
pge PROFGATE_GIT_TOKEN=$TOKEN "$PROFGATE" history show --repo "$URL" --json
jl "history show over HTTP: every record (h1, h2, h3 and h4 kept then appended, h5 kept by the gate, h6, six jobs)" "$T/out" "len(r) == 12"

# ---- the first night: a nightly gate against an empty history records tonight's numbers ----
# As examples/nightly.yml runs it (the scheduled run on main, `history:main:7`, the nightly
# thresholds, --fail-on warn), against a history remote that holds nothing yet. The thresholds
# are the nightly set whose step rules need no least number of samples (min_samples 0), so that
# the second night's window of one record is tested (the shipped sets need 5 records and are
# inconclusive before).
git init -q --bare "$T/srv/nightly.git"
git -C "$T/srv/nightly.git" config http.receivepack true
python3 - "$TOP/thresholds/nightly.json" "$T/night-th.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
for r in t["rules"]:
    if r.get("test"):
        r["min_samples"] = 0
json.dump(t, open(sys.argv[2], "w"))
PY
night() { # night N CANDIDATE [ARGS...]: tonight's scheduled gate on main
	_n=$1
	_c=$2
	shift 2
	pge PROFGATE_GIT_TOKEN=$TOKEN GITHUB_EVENT_NAME=schedule GITHUB_REF=refs/heads/main \
		GITHUB_REPOSITORY=acme/train GITHUB_SHA="$(printf '%040d' "$_n")" GITHUB_RUN_ID="night-$_n" \
		PROFGATE_TIME="2024-09-0${_n}T03:00:00Z" "$PROFGATE" gate -b history:main:7 -c "$_c" \
		--label nightly-bench -t "$T/night-th.json" --fail-on warn --history "$GIT/nightly.git" \
		--kind nightly --json "$T/night$_n.json" --report "$T/night$_n.md" "$@"
}
night 1 "$T/base.json"
check "first night, empty history: exit 0, recorded, one line saying why, nothing on stderr" \
	eval '[ "$rc" -eq 0 ] && [ ! -s "$T/err" ] && grep -q "^profgate gate: recorded (nightly-bench)$" "$T/out" &&
		grep -q "^  first record of nightly-bench-[0-9a-f]\{8\}: nothing to compare against (no main or nightly records of series .* yet: no branch profgate-history); its numbers are recorded as the reference$" "$T/out" &&
		grep -q "^  history: appended to nightly-bench-" "$T/out"'
check "... no per-metric line, no baseline line, no nan or inf in the terminal, report or JSON" \
	eval '! grep -qE "^  (pass|warn|fail|inconclusive|improved|recorded) |^  baseline:|steady median step" "$T/out" &&
		! grep -qiwE "nan|inf|-nan|infinity" "$T/out" "$T/night1.md" "$T/night1.json"'
pycheck "... the verdict JSON: recorded, exit code 0, every metric recorded, the empty window" \
	'v = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[1].replace("night1", "base")))' "$T/night1.json" \
	'v["verdict"] == "recorded" and v["exit_code"] == 0 and v["provenance"]["result"] == "no-baseline"' \
	'len(v["metrics"]) > 10 and all(m["verdict"] == "recorded" and m["baseline"] is None for m in v["metrics"])' \
	'v["counts"]["recorded"] == len(v["metrics"]) and v["counts"]["fail"] == v["counts"]["warn"] == 0' \
	'v["baseline"]["history"]["records"] == [] and v["baseline"]["runs"] == 0 and v["step"] is None' \
	'[m["candidate"] for m in v["metrics"] if m["name"] == "step.median_us"] == [round(s["steps"]["steady"]["median_us"], 3)]'
check "... the report says so, with no metric table" \
	eval 'grep -q "^## profgate: RECORDED — nightly-bench$" "$T/night1.md" &&
		grep -q "^\*\*First record of this series: nothing to compare against.\*\* The baseline .history:main:7. holds no record" "$T/night1.md" &&
		! grep -q "^| " "$T/night1.md"'
shard "$T/srv/nightly.git" >"$T/night-1.jsonl"
jl "... one record: verdict recorded, tonight's numbers, the empty window as its baseline" "$T/night-1.jsonl" \
	"len(r) == 1 and r[0]['verdict'] == 'recorded' and r[0]['exit_code'] == 0 and r[0]['kind'] == 'nightly'" \
	"r[0]['ref'] == 'refs/heads/main' and r[0]['baseline']['kind'] == 'history' and r[0]['baseline']['window']['records'] == []" \
	"r[0]['baseline']['summary_sha256'] is None" \
	"r[0]['metrics']['step.median_us'] == [m['candidate'] for m in json.load(open('$T/night1.json'))['metrics'] if m['name'] == 'step.median_us'][0]" \
	"set(r[0]['metrics']) >= {'step.median_us', 'step.p90_us', 'family.matmul.us_per_step'}"
git init -q --bare "$T/again.git"
pge GITHUB_EVENT_NAME=schedule GITHUB_REF=refs/heads/main GITHUB_REPOSITORY=acme/train \
	GITHUB_SHA="$(printf '%040d' 1)" GITHUB_RUN_ID=night-1 PROFGATE_TIME=2024-09-01T03:00:00Z \
	"$PROFGATE" history append --repo "$T/again.git" --kind nightly "$T/night1.json"
check "... history append of its verdict JSON writes the same record, byte for byte" \
	eval '[ "$rc" -eq 0 ] && [ "$(shard "$T/again.git")" = "$(cat "$T/night-1.jsonl")" ]'
night 2 "$T/base.json"
check "second night, the same profile: gated against the first night's record, pass (exit 0)" \
	eval '[ "$rc" -eq 0 ] && grep -q "^profgate gate: pass (nightly-bench)$" "$T/out" &&
		grep -q "^  baseline: history:main:7: median of 1 record of nightly-bench-" "$T/out"'
pycheck "... its window is the recorded record" \
	'v = json.load(open(sys.argv[1])); f = json.loads(open(sys.argv[1].replace("night2.json", "night-1.jsonl")).readline())' "$T/night2.json" \
	'[x["record_id"] for x in v["baseline"]["history"]["records"]] == [f["record_id"]]' \
	'v["step"]["delta_us"] == 0 and v["step"]["samples"]["baseline"] == 1'
night 3 "$T/cand.json"
check "third night, the matmul regression: exit 1 under --fail-on warn, the family named" \
	eval '[ "$rc" -eq 1 ] && grep -qE "^profgate gate: (warn|fail) \(nightly-bench\)$" "$T/out" &&
		grep -qE "^  (warn|fail) +family.matmul.us_per_step \+25" "$T/out"'
pge PROFGATE_GIT_TOKEN=$TOKEN "$PROFGATE" history show --repo "$GIT/nightly.git" --json
jl "... three records, the first one recorded, the rest judged" "$T/out" \
	"[x['verdict'] for x in r] == ['recorded', 'pass', [json.load(open('$T/night3.json'))['verdict']][0]]"

# a window whose records hold no numbers (an incomparable gate's: tonight's own profiles as the
# baseline) is as empty: the night is recorded, the records left out named
git init -q --bare "$T/bare.git"
pge GITHUB_EVENT_NAME=schedule GITHUB_REF=refs/heads/main GITHUB_RUN_ID=seed \
	PROFGATE_TIME=2024-09-01T03:00:00Z "$PROFGATE" gate -b "$T/base.json" -c "$T/base.json" \
	--label nightly-bench --history "$T/bare.git" --kind nightly
check "an incomparable gate (its own bytes as the baseline): exit 4, a record without numbers" \
	eval '[ "$rc" -eq 4 ] && [ "$(shard "$T/bare.git" | grep -c "\"verdict\":\"incomparable\"")" -eq 1 ]'
pge GITHUB_EVENT_NAME=schedule GITHUB_REF=refs/heads/main GITHUB_RUN_ID=night \
	PROFGATE_TIME=2024-09-02T03:00:00Z "$PROFGATE" gate -b history:main:7 -c "$T/base.json" \
	--label nightly-bench -t nightly --fail-on warn --history "$T/bare.git" --kind nightly \
	--json "$T/bare-v.json"
check "... the next night against only that record: recorded, exit 0, the number-less record named" \
	eval '[ "$rc" -eq 0 ] && grep -q "^profgate gate: recorded (nightly-bench)$" "$T/out" &&
		grep -q "with numbers (1 without, from incomparable gates, are never a baseline)" "$T/out"'
shard "$T/bare.git" >"$T/bare.jsonl"
jl "... its record carries tonight's numbers" "$T/bare.jsonl" \
	"[x['verdict'] for x in r] == ['incomparable', 'recorded'] and r[0]['metrics'] == {}" \
	"r[1]['metrics']['step.median_us'] > 0 and len(r[1]['metrics']) > 10"

# with the shipped nightly thresholds (min_samples 5) the window fills for four more nights:
# each is recorded, not judged (an inconclusive step would fail a --fail-on warn job every night
# of the first week); the night whose window holds five records is judged
bare_night() { # bare_night N CANDIDATE
	pge GITHUB_EVENT_NAME=schedule GITHUB_REF=refs/heads/main GITHUB_RUN_ID="night-$1" \
		PROFGATE_TIME="2024-09-0$1T03:00:00Z" "$PROFGATE" gate -b history:main:7 -c "$2" \
		--label nightly-bench -t nightly --fail-on warn --history "$T/bare.git" --kind nightly \
		--json "$T/bare-$1.json" --report "$T/bare-$1.md"
}
filled=ok
for n in 3 4 5 6; do
	bare_night "$n" "$T/base.json"
	[ "$rc" -eq 0 ] && grep -q "^profgate gate: recorded (nightly-bench)$" "$T/out" &&
		grep -q "^  window of nightly-bench-[0-9a-f]\{8\} filling: the window holds $((n - 2)) of the 5 records a verdict needs; nothing judged, its numbers are recorded$" "$T/out" || filled="night $n: rc $rc"
done
check "a window of 1 to 4 records (min_samples 5): recorded, exit 0 under --fail-on warn, the count said" \
	eval '[ "$filled" = ok ] || { echo "# $filled"; cat "$T/out"; false; }'
pycheck "... the verdict JSON says why, and the window's records are listed" \
	'v = json.load(open(sys.argv[1]))' "$T/bare-6.json" \
	'v["verdict"] == "recorded" and v["exit_code"] == 0 and v["provenance"]["result"] == "no-baseline"' \
	'v["provenance"]["reason"] == "the window holds 4 of the 5 records a verdict needs"' \
	'len(v["baseline"]["history"]["records"]) == 4 and v["baseline"]["runs"] == 0'
check "... the report says the window is filling, with no metric table" \
	eval 'grep -q "^\*\*The window is filling: nothing judged yet.\*\* The baseline .history:main:7.: the window holds 4 of the 5 records a verdict needs;" "$T/bare-6.md" &&
		! grep -q "^| " "$T/bare-6.md"'
bare_night 7 "$T/cand.json"
check "... the night whose window holds five records is judged: the regression fails --fail-on warn" \
	eval '[ "$rc" -eq 1 ] && grep -qE "^profgate gate: (warn|fail) \(nightly-bench\)$" "$T/out" &&
		grep -q "^  baseline: history:main:7: median of 5 records" "$T/out"'

# a run whose record would not enter the window starts nothing: exit 3 as before
git init -q --bare "$T/none.git"
pge GITHUB_REF=refs/pull/5/merge "$PROFGATE" gate -b history:main:7 -c "$T/base.json" \
	--label nightly-bench --history "$T/none.git" --kind pr
one_line "an empty window, a pr record (never a baseline)" 3 "no main or nightly records of series"
pge "$PROFGATE" gate -b history:main:7 -c "$T/base.json" --label nightly-bench \
	--history "$T/none.git" --kind nightly
one_line "an empty window, a nightly record from no branch (outside CI)" 3 "no main or nightly records"
pge GITHUB_REF=refs/heads/main "$PROFGATE" gate -b history:main:7 -c "$T/base.json" \
	--label nightly-bench --history-from "$T/none.git"
one_line "an empty window read with --history-from (nothing appended)" 3 "no main or nightly records"
check "... and nothing appended by any of them" \
	eval '! git -C "$T/none.git" rev-parse -q --verify profgate-history >/dev/null'

done_testing
