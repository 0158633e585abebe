#!/bin/sh
# History faults a review found, against real git (local bare remotes): two gates of one CI run
# under one label are two records (and a re-append of either is a no-op); a ref lock left by a
# profgate killed at a local remote's ref update (strace injects the SIGKILL at the rename of the
# lock over the ref) is removed by the next writer, which lands within its budget, and a lock no
# profgate left is named in the error; `history compact` exits 5 when the remote cannot be
# reached; a local remote is read without a cache folder; the series name profgate-index (the
# compacted branch's index file) is refused. Every run is under `timeout 60` (pg, pge).
set -u
. "$(dirname "$0")/lib/tap.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
EX=$TOP/tests/data/examples
local_env
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
GIT_AUTHOR_NAME=tester GIT_AUTHOR_EMAIL=tester@example.com
GIT_COMMITTER_NAME=tester GIT_COMMITTER_EMAIL=tester@example.com
export GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL
BASE=$EX/baseline.rank-0.pt.trace.json.gz
CAND=$EX/candidate.rank-0.matmul-slower.pt.trace.json.gz
BR=profgate-history

# records REPO: the record lines on the branch and the series refs of REPO, one per line.
records() {
	pge PROFGATE_CACHE_DIR="$T/readcache" "$PROFGATE" history show --repo "$1" --json
	grep '"record_id"' "$T/out"
}

# ---- two gates of one run under one label (matrix jobs, a second step) ----
git init -q --bare "$T/ci.git"
CI="GITHUB_REPOSITORY=o/r GITHUB_RUN_ID=4242 GITHUB_RUN_ATTEMPT=1 GITHUB_EVENT_NAME=push"
# shellcheck disable=SC2086 # $CI is a list of assignments
pge $CI "$PROFGATE" gate -b "$BASE" -c "$CAND" --label bench --json "$T/v1.json" \
	--history "$T/ci.git" --history-required
rc1=$rc
# shellcheck disable=SC2086
pge $CI "$PROFGATE" gate -b "$CAND" -c "$BASE" --label bench --json "$T/v2.json" \
	--history "$T/ci.git" --history-required
rc2=$rc
records "$T/ci.git" >"$T/ci.jsonl"
pycheck "two gates of one run, one label and hardware: both records land, in one series" \
	'r = [json.loads(l) for l in open(sys.argv[1])]' "$T/ci.jsonl" \
	"$rc1 in (0, 1) and $rc2 in (0, 1)" "len(r) == 2" "r[0]['series'] == r[1]['series']" \
	"r[0]['run_id'] == r[1]['run_id'] == '4242'" "r[0]['record_id'] != r[1]['record_id']"
# shellcheck disable=SC2086
pge $CI "$PROFGATE" history append --repo "$T/ci.git" "$T/v1.json"
check "... the first gate's verdict appended again in the run: a no-op (the gate's own id)" \
	eval '[ "$rc" -eq 0 ] && grep -q "already holds record" "$T/out" && [ "$(records "$T/ci.git" | wc -l)" -eq 2 ]'

# ---- a ref lock left by a killed writer ----
git init -q --bare "$T/l.git"
pg gate -b "$BASE" -c "$CAND" --label locks --json "$T/v.json"
pge GITHUB_RUN_ID=l-1 "$PROFGATE" history append --repo "$T/l.git" "$T/v.json"
LOCK=$T/l.git/refs/heads/$BR.lock
if command -v strace >/dev/null 2>&1 && strace -o /dev/null true 2>/dev/null; then
	# kill: a SIGKILL at the rename of the branch's lock over the branch (the ref update)
	kill_at_update() {
		timeout 60 strace -f -o /dev/null -P "$LOCK" -e inject=rename:signal=KILL \
			env "$@" >"$T/out" 2>"$T/err" </dev/null
		rc=$?
	}
	kill_at_update GITHUB_RUN_ID=l-2 "$PROFGATE" history append --repo "$T/l.git" "$T/v.json"
	check "a writer killed at the branch's update leaves the lock" eval '[ -f "$LOCK" ]'
	pge GITHUB_RUN_ID=l-3 PROFGATE_HISTORY_TIMEOUT_S=30 "$PROFGATE" history append \
		--repo "$T/l.git" "$T/v.json"
	check "... the next append removes it (a profgate died holding it) and lands" \
		eval '[ "$rc" -eq 0 ] && [ ! -f "$LOCK" ] && grep -q "^profgate: history: removed '"'$LOCK'"', left by a profgate that died updating refs/heads/$BR$" "$T/err" && grep -q "(commit [0-9a-f]*, 1 attempt)" "$T/out"'
	pge PROFGATE_HISTORY_TIMEOUT_S=30 "$PROFGATE" history compact --repo "$T/l.git"
	check "... a compaction after it: exit 0" eval '[ "$rc" -eq 0 ]'
	pge GITHUB_RUN_ID=l-4 "$PROFGATE" history append --repo "$T/l.git" "$T/v.json"
	kill_at_update PROFGATE_HISTORY_TIMEOUT_S=30 "$PROFGATE" history compact --repo "$T/l.git"
	check "a compaction killed at the branch's update leaves the lock" eval '[ -f "$LOCK" ]'
	pge PROFGATE_HISTORY_TIMEOUT_S=30 "$PROFGATE" history compact --repo "$T/l.git"
	check "... the next compaction removes it and compacts" \
		eval '[ "$rc" -eq 0 ] && [ ! -f "$LOCK" ] && grep -q "^profgate: history: removed " "$T/err"'
	check "... git fsck holds, every record once (l-1, l-3, l-4)" \
		eval 'git --git-dir="$T/l.git" fsck --no-dangling >/dev/null 2>&1 && [ "$(records "$T/l.git" | wc -l)" -eq 3 ]'
else
	skip "a writer killed at the ref update: strace missing or not allowed to trace"
fi
# a lock no profgate left (a git process at work, or one killed): named, not removed
echo "$(git --git-dir="$T/l.git" rev-parse $BR)" >"$LOCK"
pge GITHUB_RUN_ID=l-5 PROFGATE_HISTORY_TIMEOUT_S=2 "$PROFGATE" history append --repo "$T/l.git" \
	"$T/v.json"
check "a ref lock no profgate left: the append lands on its own ref, the lock kept" \
	eval '[ "$rc" -eq 0 ] && cat "$T/out" "$T/err" | grep -q "on its own ref until the next compaction" && [ -f "$LOCK" ]'
pge PROFGATE_HISTORY_TIMEOUT_S=2 "$PROFGATE" history compact --repo "$T/l.git"
check "... a compaction: exit 5 naming the lock file, the lock kept" \
	eval '[ "$rc" -eq 5 ] && grep -q "'"'$LOCK'"' is held: a git process is updating refs/heads/$BR, or one died" "$T/err" && [ -f "$LOCK" ]'
rm -f "$LOCK"

# ---- compact's exit code when the remote cannot be reached ----
DEAD=http://127.0.0.1:$(python3 "$TOP/tests/e2e/lib/faults.py" port)/h.git
pge PROFGATE_HISTORY_TIMEOUT_S=2 PROFGATE_HTTP_TIMEOUT_S=1 "$PROFGATE" history compact --repo "$DEAD"
check "history compact, the remote unreachable: exit 5, as its help says" \
	eval '[ "$rc" -eq 5 ] && [ "$(grep -c "^profgate: " "$T/err")" -ge 1 ]'
pge "$PROFGATE" history compact --help
check "... its help says 5" eval 'tr "\\n" " " <"$T/out" | grep -q "Exit 5 when the *remote refused or could not be reached"'

# ---- a local remote is read without a cache ----
: >"$T/afile"
pge PROFGATE_CACHE_DIR="$T/afile/cache" "$PROFGATE" history show --repo "$T/l.git" --json
check "history show of a local remote, the cache folder impossible to create: every record" \
	eval '[ "$rc" -eq 0 ] && [ "$(grep -c "\"record_id\"" "$T/out")" -ge 3 ] && [ ! -s "$T/err" ]'

# ---- the reserved series name ----
records "$T/l.git" | head -n 1 |
	sed -e 's/"series":"[^"]*"/"series":"profgate-index"/' \
		-e 's/"record_id":"[0-9a-f]*"/"record_id":"0123456789abcdef0123456789abcdef"/' >"$T/idx.json"
pge PROFGATE_CACHE_DIR="$T/idxcache" "$PROFGATE" history append --repo "$T/l.git" "$T/idx.json"
check "a record of series profgate-index: refused, naming the reserved name" \
	eval '[ "$rc" -ne 0 ] && [ "$rc" -ne 5 ] && grep -q "series '"'profgate-index'"' is reserved" "$T/err"'
pge GITHUB_RUN_ID=l-6 "$PROFGATE" history append --repo "$T/l.git" "$T/v.json"
pge PROFGATE_HISTORY_TIMEOUT_S=30 "$PROFGATE" history compact --repo "$T/l.git"
check "... compaction still works after it" eval '[ "$rc" -eq 0 ]'

done_testing
