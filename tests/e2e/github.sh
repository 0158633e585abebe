#!/bin/sh
# profgate comment and gate --comment against a fake GitHub REST API on loopback
# (tests/e2e/lib/fake_github.py): the sticky comment is found by its marker and its author
# through every page (Link rel="next", followed verbatim) and updated in place, a foreign comment
# holding the marker is never edited, on-alert creates only on an alert and turns an old alert
# into an all-clear, never sends nothing; long bodies are cut with a note (and halved on a 422);
# rate limits (403 with x-ratelimit-remaining 0, 429 with retry-after, a secondary limit) and a
# 502 are waited out; a read-only token's 403 exits 5 with one line while the verdict and report
# are still written; every request carries the headers GitHub wants, and no token is ever in a
# URL or in what profgate prints.
set -u
# test-tier: full
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/github.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
EX=$TOP/tests/data/examples
GHS=ghs_actions_1f2e3d4c5b6a79880
PAT=ghp_personal_9a8b7c6d5e4f3210
RO=ghs_readonly_0a1b2c3d4e5f6789
APP=ghs_otherapp_77665544332211aa

gh_ctl '{"tokens": {"'$GHS'": {"login": "github-actions[bot]"},
 "'$PAT'": {"login": "perf-bot", "user_api": true},
 "'$RO'": {"login": "github-actions[bot]", "write": false},
 "'$APP'": {"login": "perf-app[bot]"}},
 "seed_many": {"issue": 7, "n": 230, "login": "chatty"}}'

# pgh VAR=VALUE... ARGS...: profgate with the fake's URL and the repository set, and extra
# environment; everything it prints is kept for the final no-token check.
pgh() {
	timeout 60 env GITHUB_API_URL="$GH_URL" GITHUB_REPOSITORY=o/r "$@" >"$T/out" 2>"$T/err" \
		</dev/null
	rc=$?
	cat "$T/out" "$T/err" >>"$T/everything"
}

# ---- reports: the bundled pair (a known matmul regression), judged three ways ----
cat >"$T/info.json" <<'EOF'
{"schema": "profgate.thresholds/1", "name": "all-info", "significance": 0.05, "min_samples": 5,
 "identity": ["device_kind", "device_count", "host_count", "world_size", "framework", "step_source", "basis"],
 "rules": [{"metric": "*", "direction": "info"}]}
EOF
B=$EX/baseline.rank-0.pt.trace.json.gz
C=$EX/candidate.rank-0.matmul-slower.pt.trace.json.gz
pg gate -b "$B" -c "$C" --label "matmul bench" --report "$T/fail.md" --json "$T/fail.json"
check "gate: fail, the report ends with the series marker" \
	eval '[ "$rc" -eq 1 ] && tail -n 1 "$T/fail.md" | grep -q "^<!-- profgate:v1 series=matmul-bench-[0-9a-f]\{8\} verdict=fail -->$"'
pg gate -b "$B" -c "$C" --label "matmul bench" -t "$T/info.json" --report "$T/pass.md"
check "gate with every metric info: pass, the same series" \
	eval '[ "$rc" -eq 0 ] && [ "$(tail -n 1 "$T/pass.md" | sed "s/ verdict=.*//")" = "$(tail -n 1 "$T/fail.md" | sed "s/ verdict=.*//")" ] && tail -n 1 "$T/pass.md" | grep -q "verdict=pass"'
gh_ctl '{"seed": [{"issue": 7, "login": "mallory", "body": "pasted: '"$(tail -n 1 "$T/fail.md" | sed 's/"/\\"/g')"'"}]}'

# ---- create, then update in place, across three pages ----
gh_mark
pgh GITHUB_TOKEN=$GHS "$PROFGATE" comment --report "$T/fail.md" --pr 7
gh_since "$T/r1"
check "comment: created, exit 0, one line with its URL" \
	eval '[ "$rc" -eq 0 ] && [ ! -s "$T/err" ] && grep -q "^comment: created https://github.example/o/r/pull/7#issuecomment-[0-9]*$" "$T/out" && [ "$(lines "$T/out")" -eq 1 ]'
url1=$(sed -n 's/^comment: created //p' "$T/out")
dcheck "one comment by github-actions[bot]: the report and its marker" \
	"len(c(7, 'github-actions[bot]')) == 1" \
	"c(7, 'github-actions[bot]')[0]['body'].startswith('## profgate: FAIL')" \
	"'<!-- profgate:v1 series=matmul-bench-' in c(7, 'github-actions[bot]')[0]['body']" \
	"'actions/runs' not in c(7, 'github-actions[bot]')[0]['body']"
rcheck "the first run read /user (403: an Actions token), then every page, then POSTed" "$T/r1" \
	"[x['method'] + ' ' + x['path'].split('?')[0] for x in r] == ['GET /user', 'GET /repos/o/r/issues/7/comments', 'GET /repositories/4242/issues/7/comments', 'GET /repositories/4242/issues/7/comments', 'POST /repos/o/r/issues/7/comments']" \
	"r[1]['path'].endswith('per_page=100') and r[3]['path'].endswith('page=3')" \
	"[x['status'] for x in r] == [403, 200, 200, 200, 201]"
rcheck "every request: User-Agent profgate/, Accept, API version, Bearer token, no token in the URL" "$T/r1" \
	"all(x['headers'].get('user-agent', '').startswith('profgate/') for x in r)" \
	"all(x['headers'].get('accept') == 'application/vnd.github+json' for x in r)" \
	"all(x['headers'].get('x-github-api-version') == '2022-11-28' for x in r)" \
	"all(x['headers'].get('authorization') == 'Bearer $GHS' for x in r)" \
	"not any('$GHS' in x['path'] for x in r)" \
	"all(x['headers'].get('content-type') == 'application/json' for x in r if x['method'] == 'POST')" \
	"all(x['headers'].get('expect') is None for x in r)"

gh_mark
pgh GITHUB_TOKEN=$GHS "$PROFGATE" comment --report "$T/fail.md" --pr 7
gh_since "$T/r2"
check "second run, the same report: 'unchanged', the same URL" \
	eval '[ "$rc" -eq 0 ] && [ "$(cat "$T/out")" = "comment: unchanged $url1" ]'
rcheck "second run: no PATCH, no POST" "$T/r2" "all(x['method'] == 'GET' for x in r)"
gh_mark
pgh GITHUB_TOKEN=$GHS GITHUB_SERVER_URL=https://github.example GITHUB_RUN_ID=4712 \
	"$PROFGATE" comment --report "$T/fail.md" --pr 7
gh_since "$T/r2b"
check "third run, another workflow run: updated, the same comment" \
	eval '[ "$rc" -eq 0 ] && [ "$(cat "$T/out")" = "comment: updated $url1" ]'
rcheck "third run: PATCH on /issues/comments/<id>, no POST" "$T/r2b" \
	"[x['method'] for x in r].count('PATCH') == 1 and [x['method'] for x in r].count('POST') == 0" \
	"[x for x in r if x['method'] == 'PATCH'][0]['path'] == '/repos/o/r/issues/comments/' + '$url1'.split('-')[-1]"
dcheck "still one bot comment, edited once, linking the new run; the foreign comment holding the marker untouched" \
	"len(c(7, 'github-actions[bot]')) == 1 and c(7, 'github-actions[bot]')[0]['edits'] == 1" \
	"'actions/runs/4712' in c(7, 'github-actions[bot]')[0]['body']" \
	"len(c(7, 'mallory')) == 1 and c(7, 'mallory')[0]['edits'] == 0 and c(7, 'mallory')[0]['body'].startswith('pasted: ')"

# ---- on-alert and never ----
gh_mark
pgh GITHUB_TOKEN=$GHS "$PROFGATE" comment --report "$T/pass.md" --pr 8 --mode on-alert
gh_since "$T/r3"
check "on-alert, a pass, no comment yet: none created, exit 0, says why" \
	eval '[ "$rc" -eq 0 ] && grep -q "^comment: none (on-alert: the verdict pass is no alert" "$T/out"'
rcheck "on-alert pass: only reads" "$T/r3" "len(r) >= 1 and all(x['method'] == 'GET' for x in r)"
pgh GITHUB_TOKEN=$GHS "$PROFGATE" comment --report "$T/pass.md" --pr 7 --mode on-alert
dcheck "on-alert, a pass after a fail: the same comment becomes an all-clear" \
	"len(c(7, 'github-actions[bot]')) == 1 and c(7, 'github-actions[bot]')[0]['edits'] == 2" \
	"c(7, 'github-actions[bot]')[0]['body'].startswith('> **All clear:**')" \
	"'verdict=pass -->' in c(7, 'github-actions[bot]')[0]['body']" \
	"'## profgate: PASS' in c(7, 'github-actions[bot]')[0]['body']"
pgh GITHUB_TOKEN=$GHS "$PROFGATE" comment --report "$T/pass.md" --pr 7 --mode on-alert
dcheck "a pass after a pass: no all-clear line" \
	"not c(7, 'github-actions[bot]')[0]['body'].startswith('> **All clear:**')"
pgh GITHUB_TOKEN=$GHS "$PROFGATE" comment --report "$T/fail.md" --pr 8 --mode on-alert
dcheck "on-alert, a fail: created" "len(c(8)) == 1 and 'verdict=fail' in c(8)[0]['body']"
gh_mark
pgh GITHUB_TOKEN=$GHS "$PROFGATE" comment --report "$T/fail.md" --pr 8 --mode never
gh_since "$T/r4"
check "never: exit 0, 'none (mode never)', not one request" \
	eval '[ "$rc" -eq 0 ] && [ "$(cat "$T/out")" = "comment: none (mode never)" ] && [ ! -s "$T/r4" ]'

# ---- a personal token: its own login from /user ----
gh_mark
pgh GITHUB_TOKEN=$GHS PROFGATE_GITHUB_TOKEN=$PAT "$PROFGATE" comment --report "$T/fail.md" --pr 7
gh_since "$T/r5"
pgh GITHUB_TOKEN=$PAT "$PROFGATE" comment --report "$T/fail.md" --pr 7
rcheck "PROFGATE_GITHUB_TOKEN wins over GITHUB_TOKEN; /user answers 200" "$T/r5" \
	"all(x['headers']['authorization'] == 'Bearer $PAT' for x in r)" \
	"r[0]['path'] == '/user' and r[0]['status'] == 200"
check "... found again by its login the second time: unchanged" \
	eval '[ "$rc" -eq 0 ] && grep -q "^comment: unchanged https://github.example/o/r/pull/7#" "$T/out"'
dcheck "a personal token: its own comment (perf-bot), created once; the bot's untouched" \
	"len(c(7, 'perf-bot')) == 1 and c(7, 'perf-bot')[0]['edits'] == 0" \
	"c(7, 'github-actions[bot]')[0]['edits'] == 3"

# ---- GitHub Enterprise: GITHUB_API_URL with a path (and a trailing slash) ----
gh_mark
pgh GITHUB_TOKEN=$GHS GITHUB_API_URL="$GH_URL/api/v3/" "$PROFGATE" comment --report "$T/fail.md" --pr 20
gh_since "$T/r6"
rcheck "GITHUB_API_URL=.../api/v3/: every request under /api/v3/" "$T/r6" \
	"len(r) >= 3 and all(x['path'].startswith('/api/v3/') for x in r)" \
	"not any('//' in x['path'] for x in r)"

# ---- long bodies ----
python3 - "$T/fail.md" "$T/big.md" <<'EOF'
import sys
text = open(sys.argv[1], encoding="utf-8").read()
rows = "".join("| `op.kernel_\u00e9\u2192%05d.us_per_step` | 1.00 ms | 1.01 ms | +1.0%% | \u2014 | pass |\n" % i
               for i in range(6000))
i = text.index("\n\n", text.index("| metric |")) + 1
open(sys.argv[2], "w", encoding="utf-8").write(text[:i] + rows + text[i:])
EOF
pgh GITHUB_TOKEN=$GHS GITHUB_SERVER_URL=https://github.example GITHUB_RUN_ID=4711 \
	"$PROFGATE" comment --report "$T/big.md" --pr 9
dcheck "a 500 KB report: cut under the limit on a line, the note names the cut sections, the marker last" \
	"len(c(9)) == 1" \
	"len(c(9)[0]['body']) < 65536 and len(c(9)[0]['body'].encode()) <= 65000" \
	"'Cut to fit GitHub' in c(9)[0]['body'] and 'the rest of \"Metrics\"' in c(9)[0]['body']" \
	"'Breakdown per step (mean over the devices with steady work)\"' in c(9)[0]['body'] and 'left out; the full report is in the workflow run' in c(9)[0]['body']" \
	"c(9)[0]['body'].rstrip().endswith('verdict=fail -->')" \
	"'[workflow run](https://github.example/o/r/actions/runs/4711)' in c(9)[0]['body']" \
	"all(l.startswith('|') or not l.startswith('| \`op.kernel') for l in c(9)[0]['body'].split('\n'))" \
	"c(9)[0]['body'].count('| \`op.kernel_') < 6000"
gh_ctl '{"max_body_chars": 20000}'
gh_mark
pgh GITHUB_TOKEN=$GHS "$PROFGATE" comment --report "$T/big.md" --pr 10
gh_since "$T/r7"
rcheck "a server with a lower limit: 422, then halved and accepted" "$T/r7" \
	"[x['status'] for x in r if x['method'] == 'POST'] == [422, 422, 201]"
dcheck "the halved comment fits the server's limit and keeps its marker" \
	"len(c(10)) == 1 and len(c(10)[0]['body']) <= 20000 and 'verdict=fail -->' in c(10)[0]['body']"
gh_ctl '{"max_body_chars": 65536}'

# ---- rate limits and server errors, waited out ----
gh_ctl '{"faults": [
 {"method": "POST", "path": "/issues/11/comments$", "status": 403, "reset_in": 0,
  "headers": {"x-ratelimit-remaining": "0", "x-ratelimit-limit": "1000"},
  "body": {"message": "API rate limit exceeded for installation ID 1."}},
 {"method": "POST", "path": "/issues/11/comments$", "status": 429, "headers": {"retry-after": "1"},
  "body": {"message": "You have exceeded a secondary rate limit"}},
 {"method": "POST", "path": "/issues/11/comments$", "status": 502, "body": {"message": "Bad Gateway"}},
 {"method": "GET", "path": "/issues/11/comments$", "status": 403, "headers": {"retry-after": "1"},
  "body": {"message": "You have exceeded a secondary rate limit. Please retry your request again later."}}]}'
gh_mark
pgh GITHUB_TOKEN=$GHS "$PROFGATE" comment --report "$T/fail.md" --pr 11
gh_since "$T/r8"
# the waits asked for (retry-after 1, a limit reset now) are the ones taken: "retrying in 1.0 s"
check "rate limits and a 502 waited out: created, exit 0, a retry line for each limit, a look after the 502" \
	eval '[ "$rc" -eq 0 ] && grep -q "^comment: created " "$T/out" && [ "$(grep -c "retrying in" "$T/err")" -eq 3 ] && [ "$(grep -c "retrying in 1.0 s" "$T/err")" -ge 2 ] && [ "$(grep -c "HTTP 502 on the POST; listing the comments" "$T/err")" -eq 1 ]'
rcheck "the attempts: the list once limited, the POST limited, limited, 502; the list again (none made), then 201" "$T/r8" \
	"[x['status'] for x in r if x['method'] == 'POST'] == [403, 429, 502, 201]" \
	"[x['status'] for x in r if x['method'] == 'GET' and 'comments' in x['path']] == [403, 200, 200]"
dcheck "... one comment on #11" "len(c(11)) == 1"
gh_ctl '{"faults": [{"method": "GET", "path": "/issues/14/comments$", "delay": 1.5}]}'
pgh GITHUB_TOKEN=$GHS "$PROFGATE" comment --report "$T/fail.md" --pr 14
check "a slow answer (1.5 s): waited for, created" \
	eval '[ "$rc" -eq 0 ] && grep -q "^comment: created " "$T/out" && [ ! -s "$T/err" ]'

# ---- GitHub's secondary limit: a 429 without retry-after waits at least the minimum ----
# (60 s; PROFGATE_TEST_SECONDARY_LIMIT_S, test-only, sets 3 s here)
gh_ctl '{"faults": [{"method": "POST", "path": "/issues/30/comments$", "status": 429,
  "body": {"message": "You have exceeded a secondary rate limit and have been temporarily blocked from content creation."}}]}'
pgh GITHUB_TOKEN=$GHS PROFGATE_TEST_SECONDARY_LIMIT_S=3 "$PROFGATE" comment --report "$T/fail.md" --pr 30
check "a 429 without retry-after: waited the secondary limit's minimum (3 s here), then created" \
	eval '[ "$rc" -eq 0 ] && grep -q "^comment: created " "$T/out" && grep -q "attempt 1 of 5: HTTP 429: You have exceeded a secondary rate limit.*retrying in 3.0 s" "$T/err"'
gh_ctl '{"faults": [{"method": "POST", "path": "/issues/31/comments$", "status": 429, "times": 2,
  "body": {"message": "You have exceeded a secondary rate limit."}}]}'
pgh GITHUB_TOKEN=$GHS PROFGATE_TEST_SECONDARY_LIMIT_S=90 "$PROFGATE" comment --report "$T/fail.md" --pr 31
one_line "a secondary limit whose minimum wait is over the longest wait: given up at once" 5 \
	"GitHub's secondary rate limit wants at least 90 s, more than the 60 s profgate waits"
dcheck "... and nothing posted" "len(c(31)) == 0"
gh_ctl '{"reset_faults": true}'

# ---- a POST GitHub did, answered 502 or not at all: listed again, never posted twice ----
gh_ctl '{"faults": [{"method": "POST", "path": "/issues/32/comments$", "status": 502, "commit": true,
  "body": {"message": "Bad Gateway"}}]}'
gh_mark
pgh GITHUB_TOKEN=$GHS "$PROFGATE" comment --report "$T/fail.md" --pr 32
gh_since "$T/r32"
check "a comment created and answered 502: exit 0, 'created', one look line" \
	eval '[ "$rc" -eq 0 ] && grep -q "^comment: created https://github.example/o/r/pull/32#" "$T/out" && grep -q "HTTP 502 on the POST; listing the comments" "$T/err"'
rcheck "... one POST, then the list" "$T/r32" \
	"[x['method'] for x in r if x['method'] != 'GET' or 'comments' in x['path']] == ['GET', 'POST', 'GET']"
dcheck "... one comment on #32" "len(c(32)) == 1"
gh_ctl '{"faults": [{"method": "POST", "path": "/issues/33/comments$", "mode": "close", "commit": true}]}'
pgh GITHUB_TOKEN=$GHS "$PROFGATE" comment --report "$T/fail.md" --pr 33
check "a comment created and the connection closed before the answer: exit 0, 'created'" \
	eval '[ "$rc" -eq 0 ] && grep -q "^comment: created https://github.example/o/r/pull/33#" "$T/out" && grep -q "answer was lost" "$T/err"'
dcheck "... one comment on #33" "len(c(33)) == 1"
gh_ctl '{"faults": [{"method": "POST", "path": "/issues/34/comments$", "status": 503, "times": 5}]}'
pgh GITHUB_TOKEN=$GHS "$PROFGATE" comment --report "$T/fail.md" --pr 34
check "a POST answered 503 every time: three POSTs, a look after each but the last, then exit 5 with one error line" \
	eval '[ "$rc" -eq 5 ] && [ "$(grep -c "HTTP 503 on the POST; listing the comments" "$T/err")" -eq 2 ] && [ "$(lines "$T/err")" -eq 3 ] && tail -n 1 "$T/err" | grep -q "^profgate: GitHub: creating the comment: HTTP 503"'
dcheck "... nothing on #34" "len(c(34)) == 0"

# ---- another GitHub App's installation token: no /user, its earlier comment still found ----
gh_mark
pgh GITHUB_TOKEN=$APP "$PROFGATE" comment --report "$T/fail.md" --pr 7
pgh GITHUB_TOKEN=$APP GITHUB_SERVER_URL=https://github.example GITHUB_RUN_ID=4713 \
	"$PROFGATE" comment --report "$T/fail.md" --pr 35
pgh GITHUB_TOKEN=$APP GITHUB_SERVER_URL=https://github.example GITHUB_RUN_ID=4714 \
	"$PROFGATE" comment --report "$T/fail.md" --pr 35
gh_since "$T/r35"
check "an app's token (perf-app[bot]): its earlier comment on #35 found and updated" \
	eval '[ "$rc" -eq 0 ] && grep -q "^comment: updated https://github.example/o/r/pull/35#" "$T/out"'
dcheck "... one comment on #35, edited once; the foreign comment holding the marker on #7 untouched" \
	"len(c(35)) == 1 and c(35)[0]['edits'] == 1 and c(35)[0]['user']['login'] == 'perf-app[bot]'" \
	"c(7, 'mallory')[0]['edits'] == 0"
gh_mark
pgh GITHUB_TOKEN=$APP PROFGATE_GITHUB_LOGIN='perf-app[bot]' "$PROFGATE" comment --report "$T/fail.md" --pr 35
gh_since "$T/r36"
rcheck "PROFGATE_GITHUB_LOGIN names the login: no GET /user" "$T/r36" \
	"not any(x['path'] == '/user' for x in r)" "len(r) >= 1"

# ---- failures: one line, exit 5; the gate's own files still written ----
rm -f "$T/v12.json" "$T/r12.md"
gh_mark
pgh GITHUB_TOKEN=$RO "$PROFGATE" gate -b "$B" -c "$C" --label "matmul bench" --json "$T/v12.json" \
	--report "$T/r12.md" --comment always --pr 12
gh_since "$T/r9"
one_line "gate --comment with a read-only token (403, not retried)" 5 \
	"GitHub: creating the comment: HTTP 403 Resource not accessible by integration (the token may not write here"
check "... the verdict printed, the verdict JSON and the report written" \
	eval 'grep -q "^profgate gate: fail (matmul bench)" "$T/out" && [ -s "$T/v12.json" ] && grep -q "^## profgate: FAIL" "$T/r12.md"'
rcheck "... one POST, not retried" "$T/r9" "[x['method'] for x in r].count('POST') == 1"
pgh GITHUB_TOKEN=ghs_not_a_token_at_all "$PROFGATE" comment --report "$T/fail.md" --pr 7
one_line "an unknown token: 401" 5 "reading the token's user: HTTP 401 Bad credentials (the token was refused)"
gh_ctl '{"faults": [{"method": "GET", "path": "/issues/13/comments$", "status": 200, "body": [],
 "headers": {"Link": "<http://127.0.0.2:'$GH_PORT'/repositories/4242/issues/13/comments?page=2>; rel=\"next\""}}]}'
pgh GITHUB_TOKEN=$GHS "$PROFGATE" comment --report "$T/fail.md" --pr 13
one_line "a next page on another host: not followed" 5 "the next page of comments is on another host"
# ---- gate --comment: the pull request from the event; forks get no comment ----
cat >"$T/event.json" <<'EOF'
{"number": 16, "action": "opened", "pull_request": {"number": 16,
 "head": {"sha": "1111111111111111111111111111111111111111", "repo": {"full_name": "o/r"}},
 "base": {"sha": "2222222222222222222222222222222222222222", "repo": {"full_name": "o/r"}}}}
EOF
sed 's#"head": {"sha": "1111111111111111111111111111111111111111", "repo": {"full_name": "o/r"}}#"head": {"sha": "1111111111111111111111111111111111111111", "repo": {"full_name": "someone/r"}}#; s/16/17/g' \
	"$T/event.json" >"$T/fork.json"
pgh GITHUB_TOKEN=$GHS GITHUB_EVENT_NAME=pull_request GITHUB_EVENT_PATH="$T/event.json" \
	"$PROFGATE" gate -b "$B" -c "$C" --label "matmul bench" --comment on-alert
check "gate --comment on-alert: the PR from GITHUB_EVENT_PATH, exit 1 (the verdict)" \
	eval '[ "$rc" -eq 1 ] && grep -q "^  comment: created https://github.example/o/r/pull/16#" "$T/out"'
gh_mark
pgh GITHUB_TOKEN=$GHS GITHUB_EVENT_NAME=pull_request GITHUB_EVENT_PATH="$T/fork.json" \
	"$PROFGATE" gate -b "$B" -c "$C" --label "matmul bench" --comment always
gh_since "$T/r10"
check "gate --comment on a fork's pull request: no request, a note, exit 1 (the verdict)" \
	eval '[ "$rc" -eq 1 ] && [ ! -s "$T/r10" ] && grep -q "from a fork gets a read-only token: no comment" "$T/err"'

# ---- usage errors ----
pgh "$PROFGATE" comment --report "$T/fail.md" --pr 7
one_line "no token" 2 "no GitHub token (set GITHUB_TOKEN or PROFGATE_GITHUB_TOKEN)"
pgh GITHUB_TOKEN=$GHS "$PROFGATE" comment --report "$T/fail.md" --pr 7x
one_line "--pr 7x" 2 "not a pull request number"
pgh GITHUB_TOKEN=$GHS "$PROFGATE" comment --report "$T/fail.md"
one_line "no --pr and no event" 2 "no pull request"
pgh GITHUB_TOKEN=$GHS "$PROFGATE" comment --report "$T/fail.md" --pr 7 --repo 'o/r/../x'
one_line "--repo o/r/../x" 2 "is not owner/name"
pgh GITHUB_TOKEN=$GHS "$PROFGATE" comment --report "$T/fail.md" --pr 7 --mode sometimes
one_line "--mode sometimes" 2 "give always, on-alert or never"
echo "## a report by hand" >"$T/hand.md"
pgh GITHUB_TOKEN=$GHS "$PROFGATE" comment --report "$T/hand.md" --pr 7
one_line "a report without the marker" 2 "no profgate marker"
pgh GITHUB_TOKEN=$GHS "$PROFGATE" comment --report "$T/missing.md" --pr 7
one_line "a missing report" 3 "cannot read"
pgh GITHUB_TOKEN=$GHS "$PROFGATE" gate -b "$B" -c "$C" --pr 7
one_line "gate --pr without --comment" 2 "go with --comment"

# ---- secrets ----
check "no token in anything profgate printed" \
	eval '! grep -q -e "$GHS" -e "$PAT" -e "$RO" -e ghs_not_a_token "$T/everything"'
rcheck "no token in any request URL" "$T/gh/requests.jsonl" \
	"not any(t in x['path'] for x in r for t in ('$GHS', '$PAT', '$RO'))"

done_testing
