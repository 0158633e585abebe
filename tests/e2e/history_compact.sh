#!/bin/sh
# history compact on a generated branch (tests/bench/history_gen.py): the months before the newest
# moved to one ref per series (refs/profgate/series/<branch>@/<series>, gzip'd shards), the branch
# folded into one root commit holding the newest month and the index, the old commits on an
# archive branch, every record read the same; a branch in the one-commit layout of every month
# converted the same way. Then compactions racing appenders (each with its own cache, their
# fetch-to-push windows widened), on a local remote and over smart HTTP
# (tests/e2e/lib/git_http.py): every appender succeeds and every record is on the branch or its
# series' ref exactly once. Over HTTP an update hook moves the branch while receive-pack runs the
# compaction's update: the lease refuses it, and the compaction starts again and keeps the record
# that landed. A fresh read of one series fetches the branch and that series' ref alone.
set -u
# test-tier: full
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/serve.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
GEN=$TOP/tests/bench/history_gen.py
local_env

if ! command -v python3 >/dev/null 2>&1; then
	skip "history compact: python3 missing (the branch generator)"
	done_testing
	exit $?
fi
# records PREFIX N: N record files $T/PREFIX-<i>.json of series bench-00, ids and times their own.
records() {
	python3 - "$T/template.jsonl" "$T/$1" "$2" <<'PY'
import hashlib, json, sys
line = open(sys.argv[1]).readline()
for i in range(int(sys.argv[3])):
    r = json.loads(line)
    r["record_id"] = hashlib.md5(("%s/%d" % (sys.argv[2], i)).encode()).hexdigest()
    r["time"] = "2023-%02d-%02dT%02d:00:00Z" % (1 + i % 12, 1 + i % 28, i % 24)
    open("%s-%d.json" % (sys.argv[2], i), "w").write(json.dumps(r))
PY
}
# ids FILE: the sorted record ids of the JSON lines in FILE.
ids() {
	sed -n 's/.*"record_id":"\([^"]*\)".*/\1/p' "$1" | LC_ALL=C sort
}
# stored GITDIR: every record line the branch and its series refs hold, as stored (no reader's
# dedup), gzip'd shards inflated.
stored() {
	for _r in refs/heads/profgate-history $(git --git-dir="$1" for-each-ref --format='%(refname)' \
		'refs/profgate/series/profgate-history@/'); do
		for _f in $(git --git-dir="$1" ls-tree -r --name-only "$_r" | grep '\.jsonl'); do
			case $_f in
			*.gz) git --git-dir="$1" cat-file blob "$_r:$_f" | gzip -dc ;;
			*) git --git-dir="$1" cat-file blob "$_r:$_f" ;;
			esac
		done
	done
}
SERIES=refs/profgate/series/profgate-history@
# race REMOTE APPENDERS EACH COMPACTIONS [ENV...]: that many appenders (each EACH records, in a row,
# with a cache of its own) and compactions at once; their exit codes in $T/race/*.rc.
race() {
	_url=$1 _a=$2 _e=$3 _c=$4
	shift 4
	rm -rf "$T/race"
	mkdir -p "$T/race"
	_pids=
	_i=0
	while [ $_i -lt "$_a" ]; do
		records "rec$_i" "$_e"
		(
			_k=0 _bad=0
			while [ $_k -lt "$_e" ]; do
				env "$@" PROFGATE_CACHE_DIR="$T/race/a$_i" PROFGATE_TEST_PUSH_DELAY_MS=80 \
					"$PROFGATE" history append --repo "$_url" "$T/rec$_i-$_k.json" \
					>>"$T/race/a$_i.out" 2>&1 || _bad=$((_bad + 1))
				_k=$((_k + 1))
			done
			echo $_bad >"$T/race/a$_i.rc"
		) &
		_pids="$_pids $!"
		_i=$((_i + 1))
	done
	(
		_k=0 _bad=0
		while [ $_k -lt "$_c" ]; do
			env "$@" PROFGATE_CACHE_DIR="$T/race/c" PROFGATE_TEST_PUSH_DELAY_MS=150 \
				"$PROFGATE" history compact --repo "$_url" >>"$T/race/c.out" 2>&1 ||
				_bad=$((_bad + 1))
			_k=$((_k + 1))
		done
		echo $_bad >"$T/race/c.rc"
	) &
	# shellcheck disable=SC2086
	wait $_pids $!
}
# all_landed TITLE REMOTE BASE N [ENV...]: the branch holds the BASE records and the N raced ones,
# each exactly once, and every appender and compaction exited 0.
all_landed() {
	_t=$1 _url=$2 _base=$3 _n=$4
	shift 4
	pge "$@" "$PROFGATE" history show --repo "$_url" --json
	ids "$T/out" >"$T/got"
	cat "$T"/rec*-*.json | ids /dev/stdin >"$T/want"
	if [ "$rc" -eq 0 ] && [ "$(wc -l <"$T/got")" -eq $((_base + _n)) ] &&
		[ -z "$(uniq -d "$T/got")" ] && [ -z "$(LC_ALL=C comm -23 "$T/want" "$T/got")" ] &&
		[ "$(cat "$T"/race/*.rc | sort -u)" = 0 ]; then
		ok "$_t"
	else
		not_ok "$_t: $(wc -l <"$T/got") records, $(uniq -d "$T/got" | wc -l) doubled, $(LC_ALL=C comm -23 "$T/want" "$T/got" | wc -l) missing, failures: $(cat "$T"/race/*.rc | tr '\n' ' ')"
		tail -n 3 "$T"/race/*.out | sed 's/^/# /' | head -n 30
	fi
}

python3 "$GEN" --repo "$T/k.git" --records 300 --series 5 >/dev/null
pg history show --repo "$T/k.git" --json
cp "$T/out" "$T/before.jsonl"
sed -n 1p "$T/before.jsonl" >"$T/template.jsonl"
pg history compact --repo "$T/k.git"
check "compact: 300 commits into one, the old history on an archive branch, 10 month shards of 5 series moved" \
	eval '[ "$rc" -eq 0 ] && grep -q "^history compact: profgate-history: 300 commits into one (commit [0-9a-f]*, 1 attempt); the old history is on profgate-history-archive/2021-" "$T/out" && grep -q "^history compact: 10 month shards of 5 series before 2021-03 moved to refs/profgate/series/profgate-history@/<series>$" "$T/out"'
arch=$(git --git-dir="$T/k.git" for-each-ref --format="%(refname)" refs/heads/profgate-history-archive/)
check "the branch is one root commit holding the newest month and the index; the archive keeps all 300 commits and the old tip's tree" \
	eval '[ "$(git --git-dir="$T/k.git" rev-list --count profgate-history)" = 1 ] && [ "$(git --git-dir="$T/k.git" rev-list --count "$arch")" = 300 ] && [ "$(git --git-dir="$T/k.git" ls-tree -r --name-only profgate-history | sed "s|.*/||" | sort | uniq -c | tr "\n" " " | tr -s " ")" = " 5 2021-03.jsonl 1 profgate-index " ] && git --git-dir="$T/k.git" cat-file blob profgate-history:profgate-index | grep -q "^open 2021-03$"'
check "each series' ref holds its closed months, gzip'd, in one commit" \
	eval '[ "$(git --git-dir="$T/k.git" for-each-ref "$SERIES/" | wc -l)" = 5 ] && for r in $(git --git-dir="$T/k.git" for-each-ref --format="%(refname)" "$SERIES/"); do [ "$(git --git-dir="$T/k.git" ls-tree -r --name-only "$r" | sed "s|.*/||" | tr "\n" " ")" = "2021-01.jsonl.gz 2021-02.jsonl.gz " ] && [ "$(git --git-dir="$T/k.git" rev-list --count "$r")" = 1 ] || exit 1; done'
stored "$T/k.git" | ids /dev/stdin >"$T/stored"
check "every record stored once, on the branch or its series' ref" \
	eval '[ "$(wc -l <"$T/stored")" = 300 ] && [ -z "$(uniq -d "$T/stored")" ] && ids "$T/before.jsonl" | cmp -s - "$T/stored"'
pg history show --repo "$T/k.git" --json
check "every record reads the same after the compaction" cmp -s "$T/out" "$T/before.jsonl"
git --git-dir="$T/k.git" branch -q old-layout "$arch"
ok_same=1
# same_both FILTER...: the compacted branch and the old layout give the same records, some
same_both() {
	PROFGATE_CACHE_DIR=$T/cache "$PROFGATE" history show --repo "$T/k.git" --json "$@" >"$T/a.jsonl" || ok_same=0
	PROFGATE_CACHE_DIR=$T/cache "$PROFGATE" history show --repo "$T/k.git" --branch old-layout --json "$@" >"$T/b.jsonl" || ok_same=0
	[ -s "$T/a.jsonl" ] && cmp -s "$T/a.jsonl" "$T/b.jsonl" || ok_same=0
}
same_both --series bench-03-0fe9839b
same_both --label "bench 01"
same_both --since 2021-02-10
same_both --series bench-00-2273a722 --since 2021-03-01
same_both --kind nightly --since 2021-01-20
check "--series, --label and --since read the same records from the compacted branch as from the old layout" \
	test $ok_same = 1
# a baseline reads the newest months first, and every month when they do not hold its window
ok_base=1
for n in 5 60 100; do
	PROFGATE_CACHE_DIR=$T/cache "$PROFGATE" history baseline --repo "$T/k.git" --series bench-01-86e2b1c9 -n $n >"$T/a.json" 2>"$T/a.err" || ok_base=0
	PROFGATE_CACHE_DIR=$T/cache "$PROFGATE" history baseline --repo "$T/k.git" --branch old-layout --series bench-01-86e2b1c9 -n $n >"$T/b.json" 2>"$T/b.err" || ok_base=0
	cmp -s "$T/a.json" "$T/b.json" && cmp -s "$T/a.err" "$T/b.err" || ok_base=0
done
grep -q "median of 60 records of bench-01-86e2b1c9 (main, nightly), 2021-01-01T06:00:01Z .. 2021-03-01T06:00:01Z; 60 of 100 asked for" "$T/a.err" || ok_base=0
check "history baseline -n 5, 60 and 100 (more than the series holds) of the compacted branch: as of the old layout" \
	test $ok_base = 1
# a branch in the one-commit layout of every month (a root commit holding all the shards) is
# converted by its next compaction: no archive (no history to keep), the months moved
git --git-dir="$T/k.git" update-ref refs/heads/one "$(GIT_AUTHOR_NAME=job GIT_AUTHOR_EMAIL=job@example.com \
	GIT_COMMITTER_NAME=job GIT_COMMITTER_EMAIL=job@example.com \
	git --git-dir="$T/k.git" commit-tree -m "one commit" "$arch^{tree}")"
pg history compact --repo "$T/k.git" --branch one
check "compact a one-commit branch of every month: made anew without an archive, its closed months moved" \
	eval '[ "$rc" -eq 0 ] && grep -q "^history compact: one: one commit already, made anew (commit [0-9a-f]*, 1 attempt)$" "$T/out" && grep -q "^history compact: 10 month shards of 5 series before 2021-03 moved to refs/profgate/series/one@/<series>$" "$T/out" && [ -z "$(git --git-dir="$T/k.git" for-each-ref refs/heads/one-archive/)" ]'
pg history show --repo "$T/k.git" --branch one --json
check "... and reads the same" cmp -s "$T/out" "$T/before.jsonl"
pg history compact --repo "$T/k.git"
check "compact again: one commit already, nothing pushed" \
	eval '[ "$rc" -eq 0 ] && grep -q "is one commit already" "$T/out"'
git init -q --bare "$T/empty.git"
pg history compact --repo "$T/empty.git"
check "compact a remote without the branch: exit 0, nothing to compact" \
	eval '[ "$rc" -eq 0 ] && grep -q "nothing to compact" "$T/out"'

# a record of a closed month: appended to the branch (new), not doubled (one its series' ref holds),
# and merged into the ref's month by the next compaction
sed -n 2p "$T/before.jsonl" >"$T/held.json"
sed -n 2p "$T/before.jsonl" | sed 's/"record_id":"[0-9a-f]*"/"record_id":"0000000000000000000000000000late1"/' >"$T/late.json"
pg history append --repo "$T/k.git" "$T/held.json"
check "an append of a record its series' ref holds (a closed month): not appended again" \
	eval '[ "$rc" -eq 0 ] && grep -q "already holds record" "$T/out" && [ "$(git --git-dir="$T/k.git" rev-list --count profgate-history)" = 1 ]'
pg history append --repo "$T/k.git" "$T/late.json"
m=$(sed -n 's/.*"time":"\(2021-0[12]\).*/\1/p' "$T/late.json")
s=$(sed -n 's/.*"series":"\([^"]*\)".*/\1/p' "$T/late.json")
check "an append of a new record of a closed month: on the branch, in its month's file" \
	eval '[ "$rc" -eq 0 ] && git --git-dir="$T/k.git" cat-file -e "profgate-history:$s/$m.jsonl"'
pg history compact --repo "$T/k.git"
stored "$T/k.git" | ids /dev/stdin >"$T/stored"
check "... moved into its series' ref by the next compaction: every record stored once" \
	eval '[ "$rc" -eq 0 ] && grep -q "^history compact: 1 month shard of 1 series before 2021-03 moved" "$T/out" && [ "$(wc -l <"$T/stored")" = 301 ] && [ -z "$(uniq -d "$T/stored")" ] && git --git-dir="$T/k.git" cat-file blob "$SERIES/$s:$s/$m.jsonl.gz" | gzip -dc | grep -q late1'
pg history show --repo "$T/k.git" --json
check "... and read once" eval '[ "$(grep -c "\"record_id\"" "$T/out")" = 301 ]'

race "$T/k.git" 6 3 4
all_landed "local remote: 4 compactions racing 6 appenders of 3 records each: all 319 records, once each" \
	"$T/k.git" 301 18 PROFGATE_CACHE_DIR="$T/cache"
pg history compact --repo "$T/k.git"
stored "$T/k.git" | ids /dev/stdin >"$T/stored"
check "... and after one more compaction each is stored once, on the branch or its series' ref" \
	eval '[ "$rc" -eq 0 ] && [ "$(wc -l <"$T/stored")" = 319 ] && [ -z "$(uniq -d "$T/stored")" ]' 
# Writers may have compacted the branch themselves, so a racing compaction can find one commit;
# each one that squashed names its archive, which must exist.
archived_all() {
	sed -n 's/.*the old history is on \([^ ]*\)$/\1/p' "$T/race/c.out" | while read -r a; do
		git --git-dir="$T/k.git" rev-parse -q --verify "refs/heads/$a" >/dev/null || echo "$a"
	done
}
check "... every compaction that squashed the branch archived the history before it" \
	eval '[ -z "$(archived_all)" ] && [ "$(git --git-dir="$T/k.git" for-each-ref refs/heads/profgate-history-archive/ | wc -l)" -ge 1 ]'
diag "compactions: $(grep -c "commits into one" "$T/race/c.out") compacted, $(grep -c "a record landed during the compaction" "$T/race/c.out") leases lost and retried"

# ---- smart HTTP ----
if [ ! -x "$(git --exec-path)/git-http-backend" ]; then
	skip "smart HTTP compaction: git http-backend missing"
	done_testing
	exit $?
fi
mkdir -p "$T/srv"
python3 "$GEN" --repo "$T/srv/h.git" --records 300 --series 5 >/dev/null
git -C "$T/srv/h.git" config http.receivepack true
TOKEN=tok-$$-compact
serve_git
URL=$GIT/h.git
export PROFGATE_GIT_TOKEN=$TOKEN

pge PROFGATE_CACHE_DIR="$T/cold1" "$PROFGATE" history show --repo "$URL" --json
before=$(du -sb "$T/cold1/repos" | cut -f1)
# an update hook that lands a record while receive-pack runs the compaction's update, once
sed -n 1p "$T/before.jsonl" | sed 's/"record_id":"[0-9a-f]*"/"record_id":"00000000000000000000000000raced1"/' >"$T/raced.jsonl"
cat >"$T/srv/h.git/hooks/update" <<EOF
#!/bin/sh
[ "\$1" = refs/heads/profgate-history ] || exit 0
[ -e raced ] && exit 0
touch raced
export GIT_INDEX_FILE=\$PWD/raced.index
git read-tree "\$2"
blob=\$(git hash-object -w "$T/raced.jsonl")
git update-index --add --cacheinfo "100644,\$blob,raced/2021-01.jsonl"
c=\$(echo "a record that raced" | GIT_AUTHOR_NAME=job GIT_AUTHOR_EMAIL=job@example.com \\
	GIT_COMMITTER_NAME=job GIT_COMMITTER_EMAIL=job@example.com git commit-tree "\$(git write-tree)" -p "\$2")
git update-ref "\$1" "\$c" "\$2"
EOF
chmod +x "$T/srv/h.git/hooks/update"
pge PROFGATE_CACHE_DIR="$T/hc" "$PROFGATE" history compact --repo "$URL"
check "over http, a record lands while receive-pack runs the compaction: refused, compacted again (2 attempts)" \
	eval '[ "$rc" -eq 0 ] && grep -q "301 commits into one (commit [0-9a-f]*, 2 attempts)" "$T/out" && grep -q "^profgate: history: compaction attempt 1 (.*refused the compaction" "$T/err"'
rm -f "$T/srv/h.git/hooks/update"
pge PROFGATE_CACHE_DIR="$T/hc" "$PROFGATE" history show --repo "$URL" --json
check "... the raced record is on the compacted branch, with the 300 before it" \
	eval '[ "$rc" -eq 0 ] && [ "$(grep -c "\"record_id\"" "$T/out")" = 301 ] && grep -q "raced1" "$T/out" && [ "$(git -C "$T/srv/h.git" rev-list --count profgate-history)" = 1 ]'
pge PROFGATE_CACHE_DIR="$T/cold2" "$PROFGATE" history show --repo "$URL" --json
after=$(du -sb "$T/cold2/repos" | cut -f1)
check "a fresh read after the compaction fetches under a fifth of what it did ($before bytes before)" \
	eval '[ "$rc" -eq 0 ] && [ "$after" -lt $((before / 5)) ]'
diag "fresh-cache read: $before bytes before the compaction, $after after"
# a fresh read of one series: the branch and that series' ref, nothing of the other series
S2=bench-02-20809e3e
pge PROFGATE_CACHE_DIR="$T/cold3" "$PROFGATE" history show --repo "$URL" --series "$S2" --json
c3=$(ls -d "$T"/cold3/repos/*.git)
want=$(git -C "$T/srv/h.git" rev-list --objects refs/heads/profgate-history "$SERIES/$S2" | wc -l)
got=$(git --git-dir="$c3" count-objects -v | awk '/^(count|in-pack):/ { n += $2 } END { print n }')
check "a fresh read of one series fetches the branch and that series' ref alone: $got objects, as many as they hold" \
	eval '[ "$rc" -eq 0 ] && [ "$(grep -c "\"series\":\"$S2\"" "$T/out")" = 60 ] && [ "$got" = "$want" ] && [ "$(git --git-dir="$c3" for-each-ref --format="%(refname)" refs/profgate/series/ refs/remotes/)" = "$(printf "%s\n%s" "$SERIES/$S2" refs/remotes/origin/profgate-history)" ]'
diag "fresh read of one series: $(du -sb "$c3" | cut -f1) bytes, of all: $after"
cp "$T/out" "$T/one.jsonl"
git --git-dir="$c3" update-ref --no-deref "$SERIES/$S2" 1111111111111111111111111111111111111111 2>/dev/null ||
	echo 1111111111111111111111111111111111111111 >"$c3/$SERIES/$S2"
pge PROFGATE_CACHE_DIR="$T/cold3" "$PROFGATE" history show --repo "$URL" --series "$S2" --json
check "a series ref of the cache naming an object it lacks: the cache made anew, the same records" \
	eval '[ "$rc" -eq 0 ] && cmp -s "$T/out" "$T/one.jsonl" && grep -q "is damaged (refs/profgate/series/profgate-history@/$S2 names an object it does not hold); making it anew" "$T/err"'

race "$URL" 4 2 3
all_landed "over http: 3 compactions racing 4 appenders of 2 records each: all 309 records, once each" \
	"$URL" 301 8 PROFGATE_CACHE_DIR="$T/hc"
pge PROFGATE_CACHE_DIR="$T/hc" "$PROFGATE" history compact --repo "$URL"
stored "$T/srv/h.git" | ids /dev/stdin >"$T/stored"
check "... and after one more compaction each is stored once, on the branch or its series' ref" \
	eval '[ "$rc" -eq 0 ] && [ "$(wc -l <"$T/stored")" = 309 ] && [ -z "$(uniq -d "$T/stored")" ]' 
diag "compactions: $(grep -c "commits into one" "$T/race/c.out") compacted, $(grep -c "a record landed during the compaction" "$T/race/c.out") leases lost and retried"

done_testing
