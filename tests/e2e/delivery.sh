#!/bin/sh
# History delivery end to end, against `git http-backend` behind a loopback server
# (tests/e2e/lib/git_http.py) and local bare repositories: a record over the size limit every
# reader skips is refused at append with one line and nothing sent; permanent refusals (a hook
# that declines with several lines, a branch name that clashes with another branch either way)
# stop at once with the server's whole message; a server killed right after it accepted a push,
# and down past the budget, leaves every record pending as the exact record, and `history flush`
# delivers each exactly once (the one that landed unreported included), from the cache and from a
# folder such as the action's; a cold fetch of a large branch stops at the budget, and a local remote
# is read in place (no copy); a branch of the old layout that a writer cannot fetch in its budget
# gets the writer's record on its own ref and is then converted by that writer in the
# conversion's own budget; a kept-alive connection the server closed while idle is replaced before
# a request's first byte; concurrent writers over HTTP, each on its own runner, all land once
# on a linear branch, and the same with compactions among them (the
# closed months moved to the series refs, the old history kept on archive branches).
set -u
# test-tier: full
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/serve.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
EX=$TOP/tests/data/examples

local_env
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY PROFGATE_HISTORY_TIMEOUT_S
GIT_AUTHOR_NAME=tester GIT_AUTHOR_EMAIL=tester@example.com
GIT_COMMITTER_NAME=tester GIT_COMMITTER_EMAIL=tester@example.com
export GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL

# on_branch REPO RUN_ID: how many lines of the branch's shards hold that run.
on_branch() {
	for _f in $(git -C "$1" ls-tree -r --name-only profgate-history 2>/dev/null); do
		git -C "$1" show "profgate-history:$_f"
	done | grep -c "\"run_id\":\"$2\""
}
secs_since() {
	awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'
}

pg summarize "$EX"/baseline.*.pt.trace.json.gz -o "$T/base.json"
pg summarize "$EX"/candidate.*.pt.trace.json.gz -o "$T/cand.json"
pg gate -b "$T/base.json" -c "$T/cand.json" --label "delivery" --json "$T/v.json"
check "gate writes the verdict JSON (fail, exit 1)" [ "$rc" -eq 1 ]

# ---- one size limit: a record past it is refused at append, nothing sent, nothing kept ----
python3 - "$T/v.json" "$T/big.json" <<'EOF'
import copy, json, sys
v = json.load(open(sys.argv[1]))
m = v["metrics"][1]
for i in range(75000):
    x = copy.deepcopy(m)
    x["name"] = "op.kernel_%06d_%s.us_per_step" % (i, "x" * 40)
    v["metrics"].append(x)
json.dump(v, open(sys.argv[2], "w"))
EOF
git init -q --bare "$T/big.git"
pge GITHUB_RUN_ID=big "$PROFGATE" history append --repo "$T/big.git" "$T/big.json"
one_line "a 5 MB record" 3 "over the limit of 4194304 bytes (4 MiB) that every history reader skips: not appended"
check "... nothing on the branch, nothing kept as pending" \
	eval '! git -C "$T/big.git" rev-parse -q --verify profgate-history >/dev/null && [ -z "$(find "$PROFGATE_CACHE_DIR" -path "*pending*" -name "*.json" 2>/dev/null)" ]'

# ---- a branch name that clashes with another branch of a local remote ----
git init -q --bare "$T/l.git"
pge GITHUB_RUN_ID=l1 "$PROFGATE" history append --repo "$T/l.git" --branch h/one "$T/v.json"
pge PROFGATE_CACHE_DIR="$T/lc2" GITHUB_RUN_ID=l2 "$PROFGATE" history append --repo "$T/l.git" --branch h "$T/v.json"
one_line "a local remote, branch h beside h/one" 5 "refs/heads/h/one exists there; the branch's name clashes with another branch"

# ---- a branch of 120,000 objects (120 MB, no deltas): local remotes are read in place ----
bulk_branch "$T/srv-big/big.git"
pge PROFGATE_HISTORY_TIMEOUT_S=60 PROFGATE_CACHE_DIR="$T/bigc" GITHUB_RUN_ID=bulk "$PROFGATE" \
	history append --repo "$T/srv-big/big.git" "$T/v.json"
# read in place: nothing of the 120 MB is copied into the cache; that it fits a 1 s budget is
# tests/stress/budgets.sh's (a wall-clock bound, which a busy machine would fail here)
check "a cold append to a local remote of 120 MB: exit 0, nothing copied" \
	eval '[ "$rc" -eq 0 ] && [ "$(du -sk "$T/bigc" | cut -f1)" -lt 1024 ]'

# ---- smart HTTP ----
if ! command -v python3 >/dev/null 2>&1 || [ ! -x "$(git --exec-path)/git-http-backend" ]; then
	skip "smart HTTP: python3 or git http-backend missing"
	done_testing
	exit $?
fi
mkdir -p "$T/srv"
git init -q --bare "$T/srv/h.git"
git -C "$T/srv/h.git" config http.receivepack true
TOKEN=tok-$$-secret
# the server closes kept-alive connections after 2 s idle, as Apache does after its KeepAliveTimeout
PG_TEST_KEEPALIVE_S=2
export PG_TEST_KEEPALIVE_S
serve_git
PORT=$GIT_PORT
URL=http://127.0.0.1:$PORT/h.git
H=$T/srv/h.git

# the budget bounds a fetch, the work between socket reads included (the 120 MB branch, cold)
mv "$T/srv-big/big.git" "$T/srv/big.git"
pge PROFGATE_GIT_TOKEN=$TOKEN PROFGATE_HISTORY_TIMEOUT_S=1 PROFGATE_CACHE_DIR="$T/bigh" "$PROFGATE" \
	history show --repo "http://127.0.0.1:$PORT/big.git"
check "a cold fetch of 120 MB over HTTP with a 1 s budget: stopped at the budget" \
	eval '[ "$rc" -eq 3 ] && has "$T/err" "the time budget ran out"'

# a branch of the old layout (every month on it, 100 records of one series from 2021) that a
# writer cannot fetch in its budget (the server drips its first answer, as a long branch over a
# slow link): the record goes to its own ref within the budget, and the writer then converts the
# branch in the conversion's own budget (PROFGATE_HISTORY_MIGRATE_S). Without that, every writer
# would find the branch as long and none would compact it.
O=$T/srv/old.git
python3 "$TOP/tests/bench/history_gen.py" --repo "$O" --records 100 --series 1 >"$T/old.names"
old_series=$(cat "$T/old.names")
git_fault '{"reset": true, "faults": [{"method": "POST", "path": "old.git/git-upload-pack$", "mode": "drip", "interval": 0.5, "times": 1}]}'
pge PROFGATE_GIT_TOKEN=$TOKEN PROFGATE_HISTORY_TIMEOUT_S=8 PROFGATE_HISTORY_MIGRATE_S=50 \
	PROFGATE_CACHE_DIR="$T/oldc" GITHUB_RUN_ID=old "$PROFGATE" history append \
	--repo "$GIT/old.git" "$T/v.json"
git_fault '{"reset": true}'
check "a branch that does not fetch in the budget: exit 0, the record on its own ref" \
	eval '[ "$rc" -eq 0 ] && has "$T/out" "on its own ref" && [ "$(git -C "$O" for-each-ref refs/profgate/records/ | wc -l)" -eq 1 ]'
check "... then the branch converted in the conversion's budget" \
	eval 'has "$T/err" "converting it in up to 50 s (PROFGATE_HISTORY_MIGRATE_S)" && has "$T/err" "compacted profgate-history (a first conversion): 4 month shards of 1 series moved"'
check "... its closed months on the series ref, the branch one root commit holding none" \
	eval '[ "$(git -C "$O" ls-tree -r --name-only "refs/profgate/series/profgate-history@/$old_series" | grep -c "^$old_series/2021-0[1234].jsonl.gz$")" -eq 4 ] &&
	! git -C "$O" rev-parse -q --verify "profgate-history^" >/dev/null &&
	[ -z "$(git -C "$O" ls-tree -r --name-only profgate-history -- "$old_series")" ]'
pge PROFGATE_GIT_TOKEN=$TOKEN PROFGATE_CACHE_DIR="$T/oldr" "$PROFGATE" history show --repo "$GIT/old.git" --json
python3 -c 'import json, sys; r = [json.loads(l)["record_id"] for l in open(sys.argv[1])]; print(len(r), len(set(r)))' "$T/out" >"$T/ids"
check "... every record read once afterwards (the writer's too)" eval '[ "$rc" -eq 0 ] && [ "$(cat "$T/ids")" = "101 101" ]'
pge PROFGATE_HISTORY_MIGRATE_S=0 GITHUB_RUN_ID=m0 "$PROFGATE" history append --repo "$GIT/old.git" "$T/v.json"
one_line "PROFGATE_HISTORY_MIGRATE_S=0" 2 "PROFGATE_HISTORY_MIGRATE_S='0': give a whole number from 1 to 3600"

# a server that closes a kept-alive connection its client left idle (Apache after its
# KeepAliveTimeout), here right after each ref advertisement: the fetch's and the push's next
# request finds its connection closed before its first byte and goes on a new one, in the same
# attempt (libgit2 alone fails it with "unexpected EOF")
git init -q --bare "$T/srv/ic.git"
git_fault '{"reset": true, "faults": [{"method": "GET", "path": "ic.git/info/refs", "mode": "idle-close", "times": 4}]}'
pge PROFGATE_GIT_TOKEN=$TOKEN PROFGATE_CACHE_DIR="$T/ic" GITHUB_RUN_ID=idle "$PROFGATE" history append \
	--repo "$GIT/ic.git" "$T/v.json"
git_fault '{"reset": true}'
check "connections closed while idle after each ref advertisement: appended in 1 attempt, no retry" \
	eval '[ "$rc" -eq 0 ] && has "$T/out" "1 attempt" && ! grep -q "attempt [0-9]" "$T/err"'

# a hook that declines with a message of several lines: at once, the whole message on one line
cat >"$H/hooks/pre-receive" <<'EOF'
#!/bin/sh
echo "History is frozen by policy." >&2
echo "Ask the infra team to thaw it:" >&2
echo "	see https://example.com/policy" >&2
echo "B." >&2
exit 1
EOF
chmod +x "$H/hooks/pre-receive"
pge PROFGATE_GIT_TOKEN=$TOKEN GITHUB_RUN_ID=hook "$PROFGATE" history append --repo "$URL" "$T/v.json"
one_line "a hook that declines with four lines" 5 "pre-receive hook declined (remote: History is frozen by policy. / Ask the infra team to thaw it: / see https://example.com/policy / B.)"
check "... not retried: no retry line, one receive-pack" \
	eval '! grep -q "attempt [0-9]" "$T/err" && [ "$(grep -c "^POST /h.git/git-receive-pack" "$T/git/log")" = 1 ]'
rm "$H/hooks/pre-receive"

# a branch name that clashes with another branch, both ways: at once, the right cause
pge PROFGATE_GIT_TOKEN=$TOKEN PROFGATE_CACHE_DIR="$T/k1" GITHUB_RUN_ID=k1 "$PROFGATE" history append \
	--repo "$URL" --branch x/y "$T/v.json"
check "branch x/y over HTTP: exit 0" [ "$rc" -eq 0 ]
n_push=$(grep -c "^POST /h.git/git-receive-pack" "$T/git/log")
pge PROFGATE_GIT_TOKEN=$TOKEN PROFGATE_CACHE_DIR="$T/k2" GITHUB_RUN_ID=k2 "$PROFGATE" history append \
	--repo "$URL" --branch x "$T/v.json"
one_line "branch x when x/y exists, over HTTP" 5 "failed to update ref (remote: error: cannot lock ref 'refs/heads/x': 'refs/heads/x/y' exists; cannot create 'refs/heads/x'); the branch's name clashes with another branch of the remote"
check "... not retried: no retry line, one receive-pack" \
	eval '! grep -q "attempt [0-9]" "$T/err" && [ "$(grep -c "^POST /h.git/git-receive-pack" "$T/git/log")" = $((n_push + 1)) ]'
pge PROFGATE_GIT_TOKEN=$TOKEN PROFGATE_CACHE_DIR="$T/k3" GITHUB_RUN_ID=k3 "$PROFGATE" history append \
	--repo "$URL" --branch x/y/z "$T/v.json"
one_line "branch x/y/z when x/y exists, over HTTP" 5 "'refs/heads/x/y' exists; cannot create 'refs/heads/x/y/z'); the branch's name clashes"

# ---- a server killed right after it accepted a push, down past the budget ----
# The post-receive hook runs once the ref moved and before the answer leaves git http-backend
# (the server sends it when the CGI ends): killing the server there makes the push land unreported.
cat >"$H/hooks/post-receive" <<EOF
#!/bin/sh
[ -e "$T/killed" ] && exit 0
touch "$T/killed"
kill -9 \$(cat "$T/git/pid")
EOF
chmod +x "$H/hooks/post-receive"
pge PROFGATE_GIT_TOKEN=$TOKEN PROFGATE_HISTORY_TIMEOUT_S=4 PROFGATE_CACHE_DIR="$T/d1" \
	GITHUB_RUN_ID=died "$PROFGATE" history append --repo "$URL" "$T/v.json"
check "the push that landed as the server died: exit 5, reported as not delivered, kept" \
	eval '[ "$rc" -eq 5 ] && [ -e "$T/killed" ] && [ "$(on_branch "$H" died)" -eq 1 ] && [ -n "$(find "$T/d1/pending" -name "*.json")" ]'
kept=$(find "$T/d1/pending" -name "*.json" | head -n 1)
mkdir -p "$T/artifact"
cp "$kept" "$T/artifact/"
for j in 1 2 3; do
	pge PROFGATE_GIT_TOKEN=$TOKEN PROFGATE_HISTORY_TIMEOUT_S=2 PROFGATE_CACHE_DIR="$T/d2-$j" \
		GITHUB_RUN_ID="down-$j" "$PROFGATE" history append --repo "$URL" "$T/v.json"
	echo "$rc" >>"$T/down.rc"
done
check "three appends while the server is down: exit 5 each, each record kept" \
	eval '[ "$(sort -u "$T/down.rc")" = 5 ] && [ "$(find "$T"/d2-* -path "*pending*" -name "*.json" | wc -l)" -eq 3 ]'
pycheck "a kept record is the exact record: the same line the branch holds" \
	"import subprocess; kept = open(sys.argv[1]).read(); branch = subprocess.check_output(['git', '-C', '$H', 'log', '-p', 'profgate-history']).decode()" \
	"$kept" 'kept.endswith("\n") and kept.count("\n") == 1 and ("+" + kept.rstrip("\n")) in branch'
sleep 1
serve_git "$PORT"
check "the server is back on its port" [ "$GIT_PORT" = "$PORT" ]
pge PROFGATE_GIT_TOKEN=$TOKEN PROFGATE_CACHE_DIR="$T/d1" "$PROFGATE" history flush --repo "$URL"
check "history flush of the landed-but-unreported record: exit 0, found already there, not doubled" \
	eval '[ "$rc" -eq 0 ] && grep -q "^history: delivered 1 pending record to profgate-history (1 already there)$" "$T/out" && [ "$(on_branch "$H" died)" -eq 1 ] && [ -z "$(find "$T/d1/pending" -name "*.json")" ]'
pge PROFGATE_GIT_TOKEN=$TOKEN PROFGATE_CACHE_DIR="$T/d2-1" "$PROFGATE" history flush --repo "$URL"
check "history flush of a record kept while the server was down: delivered" \
	eval '[ "$rc" -eq 0 ] && grep -q "^history: delivered 1 pending record to profgate-history$" "$T/out" && [ "$(on_branch "$H" down-1)" -eq 1 ]'
# the next run finds what its cache keeps and delivers it after its own record
pge PROFGATE_GIT_TOKEN=$TOKEN PROFGATE_CACHE_DIR="$T/d2-2" GITHUB_RUN_ID=next "$PROFGATE" history \
	append --repo "$URL" "$T/v.json"
check "the next append delivers the record its cache kept" \
	eval '[ "$rc" -eq 0 ] && grep -q "^history: delivered 1 pending record to profgate-history$" "$T/out" && [ "$(on_branch "$H" down-2)" -eq 1 ] && [ "$(on_branch "$H" next)" -eq 1 ]'
pge PROFGATE_GIT_TOKEN=$TOKEN PROFGATE_CACHE_DIR="$T/d2-3" GITHUB_RUN_ID=gate-next "$PROFGATE" gate \
	-b "$T/base.json" -c "$T/cand.json" --label delivery --history "$URL"
check "... and so does the next gate --history" \
	eval '[ "$rc" -eq 1 ] && grep -q "^  history: delivered 1 pending record to profgate-history$" "$T/out" && [ "$(on_branch "$H" down-3)" -eq 1 ]'
# an artifact: a folder of kept records brought back to another runner
pge PROFGATE_GIT_TOKEN=$TOKEN PROFGATE_CACHE_DIR="$T/d9" "$PROFGATE" history flush "$T/artifact" --repo "$URL"
check "history flush DIR of a copy of an already delivered record: exit 0, not doubled, removed" \
	eval '[ "$rc" -eq 0 ] && has "$T/out" "(1 already there)" && [ "$(on_branch "$H" died)" -eq 1 ] && [ -z "$(ls "$T/artifact")" ]'
echo '{"schema": "not a record"}' >"$T/artifact/junk.json"
pge PROFGATE_GIT_TOKEN=$TOKEN PROFGATE_CACHE_DIR="$T/d9" "$PROFGATE" history flush "$T/artifact" --repo "$URL"
check "history flush DIR with a file that is not a record: exit 3, one line naming it, left in place" \
	eval '[ "$rc" -eq 3 ] && [ "$(lines "$T/err")" -eq 1 ] && has "$T/err" "artifact/junk.json" && [ -e "$T/artifact/junk.json" ]'
check "every record of the outage on the branch exactly once; history linear" \
	eval '[ "$(on_branch "$H" died)$(on_branch "$H" down-1)$(on_branch "$H" down-2)$(on_branch "$H" down-3)" = 1111 ] && [ "$(git -C "$H" rev-list --merges --count profgate-history)" = 0 ]'
rm "$H/hooks/post-receive"

# ---- concurrent writers over HTTP, each on its own runner (tests/stress/ times them) ----
# PG_DELIVERY_WRITERS sets how many (64 is the issue's figure; the suite keeps CI short).
N=${PG_DELIVERY_WRITERS:-24}
# writers NAME COMPACTIONS: N writers at once to $T/srv/NAME.git, each with a fresh cache of its
# own and the default budget, run ids NAME-<i>; and COMPACTIONS `history compact` runs among them,
# one after another from a second after the writers started, each with a fresh cache as a
# scheduled job has. Outputs in $T/NAME/; the seconds until every writer ended in $secs.
writers() {
	_d=$T/$1 _url=http://127.0.0.1:$PORT/$1.git
	mkdir -p "$_d"
	t0=$(date +%s.%N)
	_pids=
	_i=1
	while [ "$_i" -le "$N" ]; do
		(env PROFGATE_CACHE_DIR="$_d/c$_i" PROFGATE_GIT_TOKEN=$TOKEN GITHUB_RUN_ID="$1-$_i" \
			timeout 120 "$PROFGATE" history append --repo "$_url" "$T/v.json" \
			>"$_d/w$_i.out" 2>"$_d/w$_i.err"
		echo $? >"$_d/w$_i.rc") &
		_pids="$_pids $!"
		_i=$((_i + 1))
	done
	_k=1
	while [ "$_k" -le "$2" ]; do
		sleep 1
		env PROFGATE_CACHE_DIR="$_d/k$_k" PROFGATE_GIT_TOKEN=$TOKEN timeout 120 "$PROFGATE" \
			history compact --repo "$_url" >"$_d/k$_k.out" 2>"$_d/k$_k.err"
		echo $? >"$_d/k$_k.rc"
		_k=$((_k + 1))
	done
	# shellcheck disable=SC2086 # a list of pids
	wait $_pids
	secs=$(secs_since "$t0")
	sed -n 's/.*, \([0-9]*\) attempts\{0,1\})$/\1/p' "$_d"/w*.out | sort -n >"$_d/attempts"
	most=$(tail -n 1 "$_d/attempts")
	diag "$1: attempts per writer: median $(sed -n "$((($(wc -l <"$_d/attempts") + 1) / 2))p" "$_d/attempts"), at most $most"
}
# no_eof NAME: no retry of the writers or compactions NAME was a dead kept-alive connection.
no_eof() {
	if grep -q "unexpected EOF" "$T/$1"/*.err; then
		not_ok "$1: no retry was a dead kept-alive connection (unexpected EOF)"
		grep -h "unexpected EOF" "$T/$1"/*.err | head -n 3 | sed 's/^/# /'
	else
		ok "$1: no retry was a dead kept-alive connection (unexpected EOF)"
	fi
}
# shards REPO REF: every line of the shards of REF (gzip'd ones inflated).
shards() {
	for _f in $(git -C "$1" ls-tree -r --name-only "$2" | grep '\.jsonl'); do
		case $_f in
		*.gz) git -C "$1" cat-file blob "$2:$_f" | gzip -dc ;;
		*) git -C "$1" cat-file blob "$2:$_f" ;;
		esac
	done
}
git init -q --bare "$T/srv/cw.git"
git -C "$T/srv/cw.git" config http.receivepack true
writers cw 0
check "$N writers at once over HTTP: all exit 0 (at most ${most:-?} attempts each; ${secs} s)" \
	eval '[ "$(cat "$T"/cw/w*.rc | sort -u)" = 0 ]'
# a writer that lost the race for the branch pushed its record to a ref of its own: none retried
check "$N writers: none retried (a lost race goes to the record's own ref)" \
	eval '! grep -q "attempt [0-9]" "$T"/cw/w*.err && [ "$most" = 1 ]'
pge PROFGATE_CACHE_DIR="$T/cw/r" PROFGATE_GIT_TOKEN=$TOKEN "$PROFGATE" history show --repo \
	"http://127.0.0.1:$PORT/cw.git" --json
pycheck "the readers see the $N records, each once" \
	"r = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]" "$T/out" \
	"len(r) == $N and len({x['record_id'] for x in r}) == $N"
# the first compaction folds them in, the next removes the refs the branch then holds
for _c in 1 2; do
	pge PROFGATE_CACHE_DIR="$T/cw/r" PROFGATE_GIT_TOKEN=$TOKEN "$PROFGATE" history compact --repo \
		"http://127.0.0.1:$PORT/cw.git"
done
shards "$T/srv/cw.git" profgate-history >"$T/cw.jsonl"
pycheck "after two compactions the branch stores the $N records, each once, no record ref left, no merge" \
	"r = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]; import subprocess; git = ['git', '-C', '$T/srv/cw.git']" \
	"$T/cw.jsonl" "len(r) == $N and len({x['record_id'] for x in r}) == $N" \
	"subprocess.check_output(git + ['rev-list', '--merges', '--count', 'profgate-history', '--all']).strip() == b'0'" \
	"subprocess.check_output(git + ['for-each-ref', 'refs/profgate/records/']) == b''"
no_eof cw

# The same with compactions among them, on a branch of 300 records (5 series, history_gen.py):
# every record exactly once on the branch, every commit of the old history (the 300 and each
# writer's) on the branch or an archive branch exactly once, and no merge anywhere.
K=${PG_DELIVERY_COMPACTIONS:-3}
python3 "$TOP/tests/bench/history_gen.py" --repo "$T/srv/ck.git" --records 300 --series 5 >/dev/null
git -C "$T/srv/ck.git" config http.receivepack true
writers ck "$K"
check "$N writers and $K compactions at once over HTTP: all exit 0 (at most ${most:-?} attempts each; the writers ${secs} s)" \
	eval '[ "$(cat "$T"/ck/w*.rc "$T"/ck/k*.rc | sort -u)" = 0 ]'
# the readers' view: each record once (a compaction that lost its lease after moving a month leaves
# it on the branch and its series' ref until the next, which readers read once)
pge PROFGATE_CACHE_DIR="$T/ck/r" PROFGATE_GIT_TOKEN=$TOKEN "$PROFGATE" history show --repo \
	"http://127.0.0.1:$PORT/ck.git" --json
pycheck "the readers see the 300 and the $N records, each once" \
	"r = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]" "$T/out" \
	"len(r) == 300 + $N and len({x['record_id'] for x in r}) == 300 + $N"
# stored: after one more compaction, every line of the branch's shards and of the series refs' (the
# months before the newest, gzip'd)
for _c in 1 2; do
	pge PROFGATE_CACHE_DIR="$T/ck/r" PROFGATE_GIT_TOKEN=$TOKEN "$PROFGATE" history compact --repo \
		"http://127.0.0.1:$PORT/ck.git"
done
{
	shards "$T/srv/ck.git" profgate-history
	for _r in $(git -C "$T/srv/ck.git" for-each-ref --format='%(refname)' 'refs/profgate/series/profgate-history@/'); do
		shards "$T/srv/ck.git" "$_r"
	done
} >"$T/ck.jsonl"
git -C "$T/srv/ck.git" for-each-ref --format='%(refname)' refs/heads/profgate-history-archive/ >"$T/ck.archives"
# shellcheck disable=SC2046 # one ref a word
git -C "$T/srv/ck.git" log --format=%B profgate-history $(cat "$T/ck.archives") |
	sed -n 's/^run: //p' | LC_ALL=C sort >"$T/ck.runs"
# per archive: how many of the writers' records its tip holds (a compaction among the writers: some)
for _a in $(cat "$T/ck.archives"); do
	shards "$T/srv/ck.git" "$_a" | grep -c '"run_id":"ck-'
done >"$T/ck.held"
pycheck "the branch and its series refs store the 300 and the $N records, each once; the old history is on the archive branches, each commit once (the 300 and the writers that won the branch); no merge" \
	"r = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]; import subprocess; arch = open('$T/ck.archives').read().split(); runs = open('$T/ck.runs').read().split(); git = ['git', '-C', '$T/srv/ck.git', 'rev-list', '--merges', '--count', 'profgate-history'] + arch" \
	"$T/ck.jsonl" "len(r) == 300 + $N and len({x['record_id'] for x in r}) == 300 + $N" \
	"sorted(x['run_id'] for x in r if x['run_id'].startswith('ck-')) == sorted('ck-%d' % i for i in range(1, $N + 1))" \
	"300 < len(runs) <= 300 + $N and len(set(runs)) == len(runs)" \
	"subprocess.check_output(['git', '-C', '$T/srv/ck.git', 'for-each-ref', 'refs/profgate/records/']) == b''" \
	"subprocess.check_output(git).strip() == b'0'"
check "the compactions ran among the writers: $(wc -l <"$T/ck.archives") archive branches, writer records on them: $(tr '\n' ' ' <"$T/ck.held")" \
	eval 'awk -v n="$N" "\$1 > 0 && \$1 < n { m = 1 } END { exit !m }" "$T/ck.held"'
diag "compactions: $(cat "$T"/ck/k*.out | sed -n 's/^history compact: [^:]*: \(.*\); the .*/\1/p' | tr '\n' ';')"
no_eof ck

done_testing
