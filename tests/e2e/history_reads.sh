#!/bin/sh
# History reads on a generated branch (tests/bench/history_gen.py: 600 records of 6 series, one
# commit per record, as `history append` makes them): `--series` and `--label` read only their
# series (a corrupt line in another series' shard is never even parsed; a hand-named folder is
# still read under --label), a local remote is read where it is (nothing copied into the cache),
# and over smart HTTP (tests/e2e/lib/git_http.py) a read-only cache fetches only what is new after
# another job appends, and one that is damaged is made anew.
set -u
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/serve.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
GEN=$TOP/tests/bench/history_gen.py
local_env

if ! command -v python3 >/dev/null 2>&1; then
	skip "history reads: python3 missing (the branch generator)"
	done_testing
	exit $?
fi
# count FILE: the records (lines holding a record_id) of FILE.
count() {
	grep -c '"record_id"' "$1"
}
# packs DIR: the pack files of the private repositories under cache DIR, one size per line.
packs() {
	find "$1"/repos -name 'pack-*.pack' -type f -exec wc -c {} + 2>/dev/null | awk '$2 != "total" { print $1 }'
}

python3 "$GEN" --repo "$T/h.git" --records 600 --series 6 >"$T/names"
S=$(cut -d' ' -f3 "$T/names")
OTHER=$(cut -d' ' -f1 "$T/names")
check "the generator: 600 commits, 6 series folders" \
	eval '[ "$(git --git-dir="$T/h.git" rev-list --count profgate-history)" = 600 ] && [ "$(git --git-dir="$T/h.git" ls-tree --name-only profgate-history | wc -l)" -eq 6 ]'

# ---- a local remote ----
pg history show --repo "$T/h.git" --series "$S" --json
check "show --series: the series' 100 records, none of another" \
	eval '[ "$rc" -eq 0 ] && [ "$(count "$T/out")" = 100 ] && [ "$(grep -c "\"series\":\"$S\"" "$T/out")" = 100 ]'
check "a local remote is read where it is: no private repository made" \
	eval '[ -z "$(ls -d "$T"/cache/repos/*.git 2>/dev/null)" ]'
cp "$T/out" "$T/series.jsonl"
pg history show --repo "$T/h.git" --label "bench 02" --json
check "show --label: the same records as --series" eval '[ "$rc" -eq 0 ] && cmp -s "$T/out" "$T/series.jsonl"'

# another series' shard gets a corrupt line; a hand-named folder gets a record of label "bench 02"
git clone -q "$T/h.git" "$T/w" 2>/dev/null
shard=$(cd "$T/w" && ls "$OTHER"/*.jsonl | head -n 1)
echo '{"schema": "profgate.history/1", "broken' >>"$T/w/$shard"
mkdir -p "$T/w/handmade"
sed -n 1p "$T/series.jsonl" | sed 's/"record_id":"[0-9a-f]*"/"record_id":"0123456789abcdef0123456789abcdef"/' \
	>"$T/w/handmade/2021-01.jsonl"
git -C "$T/w" add -A && git -C "$T/w" -c user.name=t -c user.email=t@example.com commit -qm "by hand" &&
	git -C "$T/w" push -q origin HEAD:profgate-history 2>/dev/null
pg history show --repo "$T/h.git" --label "bench 02" --json
check "show --label: other labels' series unread (no warning of their corrupt line), the hand-named folder read" \
	eval '[ "$rc" -eq 0 ] && [ ! -s "$T/err" ] && [ "$(count "$T/out")" = 101 ]'
pg history show --repo "$T/h.git" --json
check "plain show reads every series: 601 records and the corrupt line's warning" \
	eval '[ "$rc" -eq 0 ] && [ "$(count "$T/out")" = 601 ] && grep -q "^profgate: history: $shard:[0-9]*: .*line skipped" "$T/err"'
pg history trend --repo "$T/h.git" --series "$S" --format json
check "trend --series of the generated series: 100 records" \
	eval '[ "$rc" -eq 0 ] && python3 -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if len(j[\"series\"][0][\"records\"]) == 100 else 1)" "$T/out"'

# ---- smart HTTP: what a read-only cache fetches ----
if [ ! -x "$(git --exec-path)/git-http-backend" ]; then
	skip "smart HTTP reads: git http-backend missing"
	done_testing
	exit $?
fi
mkdir -p "$T/srv"
git clone -q --bare "$T/h.git" "$T/srv/h.git"
git -C "$T/srv/h.git" config http.receivepack true
TOKEN=tok-$$-reads
serve_git
URL=$GIT/h.git

pge PROFGATE_CACHE_DIR="$T/rc" PROFGATE_GIT_TOKEN=$TOKEN "$PROFGATE" history show --repo "$URL" --series "$S" --json
check "over http, a cold read: the series' 100 records" eval '[ "$rc" -eq 0 ] && [ "$(count "$T/out")" = 100 ]'
first=$(packs "$T/rc")
# another job appends a record of the series with a cache of its own
sed -n 1p "$T/series.jsonl" | sed -e 's/"record_id":"[0-9a-f]*"/"record_id":"fedcba9876543210fedcba9876543210"/' \
	-e 's/"time":"[^"]*"/"time":"2022-06-01T06:00:00Z"/' >"$T/new.json"
pge PROFGATE_CACHE_DIR="$T/wc" PROFGATE_GIT_TOKEN=$TOKEN "$PROFGATE" history append --repo "$URL" "$T/new.json"
check "another cache appends one record" eval '[ "$rc" -eq 0 ]'
pge PROFGATE_CACHE_DIR="$T/rc" PROFGATE_GIT_TOKEN=$TOKEN "$PROFGATE" history show --repo "$URL" --series "$S" --json
check "the read-only cache reads again: 101 records" eval '[ "$rc" -eq 0 ] && [ "$(count "$T/out")" = 101 ]'
packs "$T/rc" >"$T/packs"
check "... and fetched only what is new: one more pack, under 2% of the first ($first bytes)" \
	eval '[ "$(lines "$T/packs")" -eq 2 ] && [ "$(sort -n "$T/packs" | head -n 1)" -lt $((first / 50)) ]'
diag "packs of the read-only cache: $(tr '\n' ' ' <"$T/packs")"
REPO=$(ls -d "$T"/rc/repos/*.git)
(cd "$REPO" && find objects -type f | while read -r f; do head -c 20 "$f" >"$f.t" && mv -f "$f.t" "$f"; done)
pge PROFGATE_CACHE_DIR="$T/rc" PROFGATE_GIT_TOKEN=$TOKEN "$PROFGATE" history show --repo "$URL" --series "$S" --json
check "a damaged read cache over http: made anew, every record" \
	eval '[ "$rc" -eq 0 ] && [ "$(count "$T/out")" = 101 ] && grep -q "making it anew" "$T/err"'
# loose objects cut in the middle of their zlib stream (the appending cache's commit, trees and
# shard): libgit2 1.5 reads such an object forever (libgit2#7342); pge's `timeout 60` is the hang
# detector, the budget the bound: each is found before libgit2 reads it, the cache made anew
WREPO=$(ls -d "$T"/wc/repos/*.git)
(cd "$WREPO" && find objects -path 'objects/??/*' -type f -size +100c | while read -r f; do
	head -c "$(($(wc -c <"$f") / 2))" "$f" >"$f.t" && mv -f "$f.t" "$f"
done)
pge PROFGATE_CACHE_DIR="$T/wc" PROFGATE_GIT_TOKEN=$TOKEN PROFGATE_HISTORY_TIMEOUT_S=20 \
	"$PROFGATE" history show --repo "$URL" --series "$S" --json
check "a loose object truncated mid-stream in an http cache: show ends, made anew, every record" \
	eval '[ "$rc" -eq 0 ] && [ "$(count "$T/out")" = 101 ] && grep -q "is truncated); making it anew" "$T/err"'
sed -e 's/"record_id":"[0-9a-f]*"/"record_id":"fedcba9876543210fedcba9876543211"/' "$T/new.json" >"$T/new2.json"
pge PROFGATE_CACHE_DIR="$T/wc" PROFGATE_GIT_TOKEN=$TOKEN "$PROFGATE" history append --repo "$URL" "$T/new2.json"
(cd "$WREPO" && find objects -path 'objects/??/*' -type f -size +100c | while read -r f; do
	head -c "$(($(wc -c <"$f") / 2))" "$f" >"$f.t" && mv -f "$f.t" "$f"
done)
pge PROFGATE_CACHE_DIR="$T/wc" PROFGATE_GIT_TOKEN=$TOKEN PROFGATE_HISTORY_TIMEOUT_S=20 \
	"$PROFGATE" history append --repo "$URL" "$T/new.json"
check "... and append: ends, made anew, the record found landed (not doubled)" \
	eval '[ "$rc" -eq 0 ] && grep -q "is truncated); making it anew" "$T/err" && [ "$(git --git-dir="$T/srv/h.git" log --format=%B profgate-history | grep -c "^record: fedcba9876543210fedcba9876543210$")" -le 1 ]'

done_testing
