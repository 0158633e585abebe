#!/bin/sh
# The history rows of `make bench` (alone: `make bench BENCH=history`): reads of a generated
# history branch (tests/bench/history_gen.py: 50 series, one record per series per day, one
# commit per record, as `history append` makes them) of 1,800 and 18,000 records, from a local
# bare repository and over smart HTTP (`git http-backend` on loopback, tests/e2e/lib/git_http.py).
# The http rows are repeated on a copy of the branch after `history compact` (its first
# compaction: the months before the newest moved to one ref per series; its time is reported).
# Cold (a fresh cache folder each run) and warm (the cache of the run before, nothing new on the
# branch) `history show --series S`, `history trend --series S` and `history baseline --series S`,
# side by side with the reference, a `git fetch` by the git CLI of what the read needs (the
# branch; after the compaction the branch and S's series ref) into a fresh bare repository (cold)
# and again with nothing new (warm): median wall times, the ratios, the bytes the read left in
# its cache (what it fetched) against the reference's, and the cold read's peak RSS. Then
# `history append` of one record of the series, cold and warm the same way, to a copy of each
# branch (an append is a fetch of the branch plus a push).
# Usage: sh tests/bench/history.sh [BUILD]. PG_BENCH_HISTORY_RECORDS sets the sizes (default
# "1800 18000"; "1800 18000 100000" adds 100,000 records, about 2.5 minutes to generate once);
# PG_BENCH_HISTORY_RUNS the runs per cell (default 3); PG_BENCH_HISTORY_UNCOMPACTED_MAX=N skips
# the rows of the uncompacted branch over http above N records (each a whole-branch fetch:
# 40 s a run at 100,000).
set -eu

BUILD=$(cd "${1:-build}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
PG=$BUILD/profgate
TIMER=$BUILD/tools/bench_time
OUT=$BUILD/bench
SIZES=${PG_BENCH_HISTORY_RECORDS:-1800 18000}
RUNS=${PG_BENCH_HISTORY_RUNS:-3}
UNCOMPACTED_MAX=${PG_BENCH_HISTORY_UNCOMPACTED_MAX:-}
BRANCH=profgate-history
TOKEN=bench-token-$$

for b in "$PG" "$TIMER"; do
	[ -x "$b" ] || { echo "bench: $b is missing (run 'make bench')" >&2; exit 1; }
done
if ! command -v python3 >/dev/null 2>&1 || [ ! -x "$(git --exec-path)/git-http-backend" ]; then
	echo "bench: history rows skipped: python3 or git http-backend missing"
	exit 0
fi
mkdir -p "$OUT"
load=$(cut -d' ' -f1-3 /proc/loadavg)
rev=$(git -C "$top" describe --always --dirty 2>/dev/null || echo '?')
tmp=$(mktemp -d)
srv_pid=
: >"$tmp/compactions" 2>/dev/null || true
cleanup() {
	[ -z "$srv_pid" ] || kill "$srv_pid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
cp "$PG" "$tmp/profgate"
PG=$tmp/profgate

median() {
	sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
bytes_of() {
	if [ -d "$1" ]; then du -sb "$1" | cut -f1; else echo 0; fi
}

# branch N: build/bench/history-N.git, made once and reused (tests/bench/history_branch.sh).
branch() {
	sh "$top/tests/bench/history_branch.sh" "$1" "$OUT"
}

# The server: every generated branch under build/bench, over smart HTTP with a token.
mkdir -p "$tmp/srv"
PG_TEST_TOKEN=$TOKEN python3 "$top/tests/e2e/lib/git_http.py" "$tmp/srv" "$tmp/port" \
	"$tmp/http.log" 2>"$tmp/srv.err" &
srv_pid=$!
i=0
while [ ! -s "$tmp/port" ] && [ $i -lt 200 ]; do
	sleep 0.05
	i=$((i + 1))
done
[ -s "$tmp/port" ] || { echo "bench: the git http server did not start" >&2; exit 1; }
AUTH="Authorization: Basic $(printf 'x-access-token:%s' "$TOKEN" | base64)"
export PROFGATE_GIT_TOKEN=$TOKEN

# git_ref MODE URL DIR [REF]: the reference, a git fetch of the branch (and REF) into DIR (cold: a
# fresh one).
git_ref() {
	if [ "$1" = cold ]; then
		rm -rf "$3"
		git init -q --bare "$3"
	fi
	"$TIMER" git -C "$3" -c http.extraHeader="$AUTH" fetch -q "$2" \
		"+refs/heads/$BRANCH:refs/heads/$BRANCH" ${4:+"+$4:$4"}
}
# pg_read MODE URL CACHE CMD ARGS...: one profgate read (cold: a fresh cache folder).
pg_read() {
	mode=$1 url=$2 cache=$3 cmd=$4
	shift 4
	[ "$mode" = cold ] && rm -rf "$cache"
	PROFGATE_CACHE_DIR=$cache "$TIMER" "$PG" history "$cmd" --repo "$url" "$@" 2>>"$tmp/pg.err"
}

# record WORDS: the record appended, $tmp/last.jsonl with an id made from WORDS.
record() {
	sed "s/\"record_id\":\"[0-9a-f]*\"/\"record_id\":\"bench-$(printf '%s' "$1" | cksum | cut -d" " -f1)-$$\"/" \
		"$tmp/last.jsonl"
}

{
	echo "| records | remote | command | cold s | cold MB fetched | cold peak RSS MB | warm s | git fetch cold s | git MB | git fetch warm s | cold / git | warm / git |"
	echo "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
} >"$tmp/table"
for n in $SIZES; do
	branch "$n"
	repo=$OUT/history-$n.git
	S=$(cut -d' ' -f8 "$repo.names")
	ln -sfn "$repo" "$tmp/srv/h$n.git"
	ln -sfn "$tmp/c$n.git" "$tmp/srv/c$n.git"
	# the same branch after `history compact`: one root commit, the old history archived
	rm -rf "$tmp/c$n.git"
	git clone -q --bare "$repo" "$tmp/c$n.git"
	ct=$(PROFGATE_CACHE_DIR=$tmp/compact "$TIMER" "$PG" history compact --repo "$tmp/c$n.git" 2>>"$tmp/pg.err")
	echo "- $n records: the first \`history compact\` (a local remote) took $(echo "$ct" | awk '{ printf "%.1f s, peak RSS %.0f MB", $1, $2 / 1024 }')" >>"$tmp/compactions"
	# copies the appends write to (hard links: nothing copied), one per branch
	for v in h c; do
		rm -rf "$tmp/a$v$n.git"
		git clone -q --bare "$([ $v = h ] && echo "$repo" || echo "$tmp/c$n.git")" "$tmp/a$v$n.git"
		git --git-dir="$tmp/a$v$n.git" config http.receivepack true
		ln -sfn "$tmp/a$v$n.git" "$tmp/srv/a$v$n.git"
	done
	# what is appended: the series' last record with an id of its own (its month's shard rewritten)
	"$PG" history show --repo "$repo" --series "$S" --json | tail -n 1 >"$tmp/last.jsonl"
	for remote in local http "http, compacted"; do
		sref=
		case $remote in
		local) url=$repo gurl=file://$repo aurl=$tmp/ah$n.git ;;
		http) url=http://127.0.0.1:$(cat "$tmp/port")/h$n.git gurl=$url aurl=${url%/*}/ah$n.git ;;
		*)
			url=http://127.0.0.1:$(cat "$tmp/port")/c$n.git gurl=$url aurl=${url%/*}/ac$n.git
			sref=refs/profgate/series/$BRANCH@/$S
			;;
		esac
		if [ "$remote" = http ] && [ -n "$UNCOMPACTED_MAX" ] && [ "$n" -gt "$UNCOMPACTED_MAX" ]; then
			echo "| $n | http | (skipped: PG_BENCH_HISTORY_UNCOMPACTED_MAX=$UNCOMPACTED_MAX) | | | | | | | | | |" >>"$tmp/table"
			continue
		fi
		: >"$tmp/ref"
		r=0
		while [ $r -lt "$RUNS" ]; do
			c=$(git_ref cold "$gurl" "$tmp/ref.git" "$sref")
			w=$(git_ref warm "$gurl" "$tmp/ref.git" "$sref")
			echo "$c $w $(bytes_of "$tmp/ref.git/objects")" >>"$tmp/ref"
			r=$((r + 1))
		done
		gc=$(awk '{ print $1 }' "$tmp/ref" | median)
		gw=$(awk '{ print $4 }' "$tmp/ref" | median)
		gb=$(awk '{ print $7 }' "$tmp/ref" | median)
		for cmd in show trend baseline append; do
			u=$url what="history $cmd --series S"
			case $cmd in
			show) args="--series $S --json" ;;
			trend) args="--series $S --format json" ;;
			baseline) args="--series $S" ;;
			append) u=$aurl what="history append" ;;
			esac
			: >"$tmp/pg"
			r=0
			while [ $r -lt "$RUNS" ]; do
				if [ $cmd = append ]; then
					record "$n $remote $r cold" >"$tmp/rec-cold.json"
					record "$n $remote $r warm" >"$tmp/rec-warm.json"
					cargs=$tmp/rec-cold.json wargs=$tmp/rec-warm.json
				else
					cargs=$args wargs=$args
				fi
				# shellcheck disable=SC2086
				c=$(pg_read cold "$u" "$tmp/cache" $cmd $cargs)
				b=$(bytes_of "$tmp/cache/repos")
				# shellcheck disable=SC2086
				w=$(pg_read warm "$u" "$tmp/cache" $cmd $wargs)
				echo "$c $w $b" >>"$tmp/pg"
				r=$((r + 1))
			done
			awk -v n="$n" -v remote="$remote" -v cmd="$what" \
				-v c="$(awk '{ print $1 }' "$tmp/pg" | median)" \
				-v m="$(awk '{ print $2 }' "$tmp/pg" | median)" \
				-v w="$(awk '{ print $4 }' "$tmp/pg" | median)" \
				-v b="$(awk '{ print $7 }' "$tmp/pg" | median)" \
				-v gc="$gc" -v gw="$gw" -v gb="$gb" 'BEGIN {
				printf "| %d | %s | `%s` | %.3f | %.1f | %.0f | %.3f | %.3f | %.1f | %.3f | %.2f | %.2f |\n",
					n, remote, cmd, c, b / 1e6, m / 1024, w, gc, gb / 1e6, gw, c / gc, w / gw }' >>"$tmp/table"
			tail -n 1 "$tmp/table" >&2
		done
	done
done
{
	echo "Measured $(date -u +%Y-%m-%d) on $(nproc) cores" \
		"($(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)), $("$PG" --version 2>/dev/null | head -n 1)" \
		"at $rev, $(git --version);" \
		"medians of $RUNS runs; load average before: $load, after: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo
	cat "$tmp/table"
	echo
	cat "$tmp/compactions"
} >"$OUT/history.md"
cat "$OUT/history.md"
echo "bench: table written to $OUT/history.md" >&2
