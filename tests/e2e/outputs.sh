#!/bin/sh
# Output paths that are not regular files: every output flag (summarize/merge/report/compare -o,
# compare/gate --report, gate --json, history baseline/trend -o) written to a character device,
# a symlink and a FIFO. A regular file is replaced through a temporary name; anything else is
# written through in place, so `-o /dev/null` as root never turns the device into a file. The
# device here is a private copy of /dev/null (mknod, as root), never the machine's own.
set -u
. "$(dirname "$0")/lib/tap.sh"

EX=$(cd "$(dirname "$0")/../.." && pwd)/tests/data/examples
B=$T/b.json C=$T/c.json
pg summarize "$EX/baseline.rank-0.pt.trace.json.gz" -o "$B"
pg summarize "$EX/candidate.rank-0.matmul-slower.pt.trace.json.gz" -o "$C"
check "setup: two summaries" [ -s "$B" ] && [ -s "$C" ]
git init -q --bare "$T/h.git"
PROFGATE_CACHE_DIR=$T/cache
export PROFGATE_CACHE_DIR
pg gate --baseline "$B" --candidate "$C" --label outputs --history "$T/h.git" --kind nightly
check "setup: one history record" [ "$rc" -eq 1 ]

# every_output DEST: run each command with its output at DEST; prints the commands that failed.
every_output() {
	_d=$1
	_failed=
	for _cmd in "summarize $EX/baseline.rank-0.pt.trace.json.gz -o $_d" "merge $B -o $_d" \
		"report $B -o $_d" "compare $B $C -o $_d" "compare $B $C --report $_d" \
		"gate --baseline $B --candidate $C --json $_d" \
		"gate --baseline $B --candidate $C --report $_d" \
		"history baseline --repo $T/h.git --label outputs --kind nightly -o $_d" \
		"history trend --repo $T/h.git --kind nightly -o $_d"; do
		# shellcheck disable=SC2086 # the command's words, split on purpose
		pg $_cmd
		case $rc in 0 | 1) ;; *) _failed="$_failed [$_cmd: exit $rc: $(head -c 200 "$T/err")]" ;; esac
	done
	echo "$_failed"
}

if [ "$(id -u)" = 0 ] && mknod "$T/null" c 1 3 2>/dev/null; then
	failed=$(every_output "$T/null")
	check "a device as every output: each command succeeds${failed:+:$failed}" [ -z "$failed" ]
	check "a device as every output: still a character device" [ -c "$T/null" ]
	check "a device as every output: no temporary file left beside it" \
		[ -z "$(find "$T" -maxdepth 1 -name 'null.tmp.*')" ]
else
	skip "a device as output: mknod needs root"
fi

pg summarize "$EX/baseline.rank-0.pt.trace.json.gz" -o "$T/plain.json"
echo old >"$T/target.json"
ln -s target.json "$T/link.json"
pg summarize "$EX/baseline.rank-0.pt.trace.json.gz" -o "$T/link.json"
check "a symlink as output: exit 0" [ "$rc" -eq 0 ]
check "a symlink as output: still a symlink" [ -L "$T/link.json" ]
check "a symlink as output: its target holds the summary" cmp -s "$T/target.json" "$T/plain.json"
ln -s missing.json "$T/dangling.json"
pg report "$B" -o "$T/dangling.json"
check "a dangling symlink as output: the link stays and its target is made" \
	[ "$rc" -eq 0 ] && [ -L "$T/dangling.json" ] && [ -s "$T/missing.json" ]

mkfifo "$T/pipe"
timeout 60 cat "$T/pipe" >"$T/from-pipe" &
reader=$!
pg summarize "$EX/baseline.rank-0.pt.trace.json.gz" -o "$T/pipe"
wait "$reader"
check "a FIFO as output: exit 0" [ "$rc" -eq 0 ]
check "a FIFO as output: still a FIFO" [ -p "$T/pipe" ]
check "a FIFO as output: the reader got the whole summary" cmp -s "$T/from-pipe" "$T/plain.json"

mkdir "$T/adir"
pg report "$B" -o "$T/adir"
check "a directory as output: exit 3, one line naming it" \
	[ "$rc" -eq 3 ] && [ "$(lines "$T/err")" -eq 1 ] && has "$T/err" "$T/adir"
check "a directory as output: still a directory" [ -d "$T/adir" ]

echo old >"$T/regular.json"
pg summarize "$EX/baseline.rank-0.pt.trace.json.gz" -o "$T/regular.json"
check "a regular file as output: replaced whole" cmp -s "$T/regular.json" "$T/plain.json"
check "a regular file as output: no temporary file left" \
	[ -z "$(find "$T" -maxdepth 1 -name 'regular.json.tmp.*')" ]

done_testing
