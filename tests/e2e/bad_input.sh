#!/bin/sh
# Bad input end to end: every kind of unreadable profile the issue lists, generated here, must
# give exit 3 and one stderr line naming the file and where (byte/event) or why, with no
# stdout, within 60 s and in bounded memory (peak RSS under 200 MB, measured by tools/maxrss).
set -u
. "$(dirname "$0")/lib/tap.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RSS_LIMIT_KB=${PG_RSS_LIMIT_KB:-204800}

# rejected TITLE FILE WHY [WHERE]: inspect FILE must fail cleanly; the stderr line must contain
# the file name, WHY (an extended regex: what went wrong, as a user would look for it) and, for
# content errors, "byte" or "event" (WHERE=any skips that: missing files and directories have
# no offset).
rejected() {
	_title=$1 _file=$2 _why=$3 _where=${4:-offset}
	pg_rss inspect "$_file"
	_bad=
	[ "$rc" -eq 3 ] || _bad="$_bad exit=$rc (want 3)"
	[ "$(lines "$T/err")" -eq 1 ] || _bad="$_bad stderr has $(lines "$T/err") lines (want 1)"
	head -n 1 "$T/err" | grep -q '^profgate: ' || _bad="$_bad stderr does not start 'profgate: '"
	has "$T/err" "$_file" || _bad="$_bad stderr does not name the file"
	grep -qE -- "$_why" "$T/err" || _bad="$_bad stderr does not say '$_why'"
	if [ "$_where" = offset ] && ! grep -q 'byte\|event' "$T/err"; then
		_bad="$_bad stderr gives no byte offset or event index"
	fi
	[ -s "$T/out" ] && _bad="$_bad stdout is not empty"
	if [ -n "$rss_kb" ] && [ "$rss_kb" -ge "$RSS_LIMIT_KB" ]; then
		_bad="$_bad peak RSS ${rss_kb} KiB (limit $RSS_LIMIT_KB KiB)"
	fi
	if [ -z "$_bad" ]; then
		ok "$_title: exit 3, one line${rss_kb:+, peak RSS ${rss_kb} KiB}"
	else
		not_ok "$_title:$_bad"
		diag_file "$T/err" 3
	fi
}

# gen_events N: a valid trace with N complete events, one per line.
gen_events() {
	awk -v n="$1" 'BEGIN {
		printf "{\"traceEvents\":[\n"
		for (i = 0; i < n; i++)
			printf "{\"ph\":\"X\",\"name\":\"kernel_%d\",\"pid\":1,\"tid\":7,\"ts\":%d.5,\"dur\":3},\n", i, 1000 + 10 * i
		printf "{}]}\n"
	}'
}

# gen_1g_gz OUT PREFIX SUFFIX: gzip of PREFIX, 1 GiB of 'a', SUFFIX, without compressing 1 GiB:
# after a full flush deflate starts afresh, so every 1 MiB block of 'a' compresses to the same
# bytes; the block is repeated and the gzip trailer (CRC-32, size) computed over the whole.
gen_1g_gz() {
	python3 - "$@" <<'EOF'
import struct, sys, zlib
out, prefix, suffix = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode()
chunk, n = b"a" * (1 << 20), 1024
c = zlib.compressobj(1, zlib.DEFLATED, -15)
head = c.compress(prefix) + c.flush(zlib.Z_FULL_FLUSH)
blk = c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH)
if c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH) != blk:
    sys.exit("deflate blocks differ after a full flush")
crc = zlib.crc32(prefix)
for _ in range(n):
    crc = zlib.crc32(chunk, crc)
crc = zlib.crc32(suffix, crc)
size = len(prefix) + n * len(chunk) + len(suffix)
with open(out, "wb") as f:
    f.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff")
    f.write(head)
    for _ in range(n):
        f.write(blk)
    f.write(c.compress(suffix) + c.flush())
    f.write(struct.pack("<II", crc & 0xFFFFFFFF, size & 0xFFFFFFFF))
EOF
}

# ---- truncated gzip, truncated JSON ----
gen_events 3000 >"$T/full.json"
gzip -c "$T/full.json" >"$T/full.json.gz"
size=$(wc -c <"$T/full.json.gz" | tr -d ' ')
head -c $((size / 2)) "$T/full.json.gz" >"$T/cut.json.gz"
rejected "truncated gzip (cut in the middle)" "$T/cut.json.gz" truncated
head -c 50000 "$T/full.json" >"$T/cut.json"
rejected "truncated JSON (plain)" "$T/cut.json" truncated
# the same JSON cut inside the gzip'd content but with a valid gzip trailer
head -c 50000 "$T/full.json" | gzip -c >"$T/cutjson.json.gz"
rejected "truncated JSON inside a complete gzip" "$T/cutjson.json.gz" truncated

# ---- valid JSON that is not a trace ----
printf '{"rocprofiler-sdk-tool": [{"metadata": {"pid": 908}, "buffer_records": {"kernel_dispatch": []}}]}\n' \
	>"$T/rocprof.json"
rejected "valid JSON, not a trace (rocprofiler-sdk layout)" "$T/rocprof.json" "not a trace"
printf '[1, 2, 3]\n' >"$T/numbers.json"
rejected "valid JSON array of numbers" "$T/numbers.json" "event"
CORPUS=${PG_CORPUS:-$(git -C "$ROOT" rev-parse --show-toplevel 2>/dev/null)/../shared/corpus}
if [ -f "$CORPUS/AMD-AGI__TraceLens/908_results.json.gz" ]; then
	rejected "corpus 908_results.json.gz (rocprofiler-sdk, 37 MB)" \
		"$CORPUS/AMD-AGI__TraceLens/908_results.json.gz" "not a trace"
else
	skip "corpus 908_results.json.gz: corpus not found at $CORPUS"
fi

# ---- binary garbage, empty files ----
{
	printf '\177ELF\002\001\001\000'
	head -c 8192 /dev/urandom
} >"$T/garbage.bin"
rejected "binary garbage" "$T/garbage.bin" "byte"
head -c 8192 /dev/urandom | gzip -c >"$T/garbage.json.gz"
rejected "binary garbage inside valid gzip" "$T/garbage.json.gz" "byte"
head -c 8192 /dev/urandom >"$T/random.gz"
printf '\037\213\010\000' | dd of="$T/random.gz" conv=notrunc 2>/dev/null
# (random deflate data may inflate to some bytes before failing: a JSON or a gzip error)
rejected "gzip magic followed by garbage" "$T/random.gz" "byte"
: >"$T/empty.json"
rejected "empty file" "$T/empty.json" "empty"
gzip -c </dev/null >"$T/empty.json.gz"
rejected "empty gzip stream" "$T/empty.json.gz" "empty"
printf ' \n\t \n' >"$T/blank.json"
rejected "whitespace only" "$T/blank.json" "empty"

# ---- a 1 GB single JSON string ----
if command -v python3 >/dev/null 2>&1; then
	gen_1g_gz "$T/big_name.json.gz" '{"traceEvents":[{"ph":"X","name":"' '","ts":1,"dur":1}]}'
	rejected "1 GB string as an event name" "$T/big_name.json.gz" "string"
	rm -f "$T/big_name.json.gz"
	gen_1g_gz "$T/big_top.json.gz" '"' '"'
	rejected "1 GB string as the whole document" "$T/big_top.json.gz" "string"
	rm -f "$T/big_top.json.gz"
	gen_1g_gz "$T/big_props.json.gz" '{"deviceProperties":[{"id":0,"name":"' '"}],"traceEvents":[]}'
	rejected "1 GB string in deviceProperties" "$T/big_props.json.gz" "string"
	rm -f "$T/big_props.json.gz"
	# not bad input, but the same bound: a huge string in a field profgate skips is read
	# through without being kept
	gen_1g_gz "$T/big_skip.json.gz" \
		'{"traceEvents":[{"ph":"X","name":"k","pid":1,"tid":1,"ts":1,"dur":2,"args":{"blob":"' \
		'"}}]}'
	pg_rss inspect --json "$T/big_skip.json.gz"
	if [ "$rc" -eq 0 ] && [ ! -s "$T/err" ] && has "$T/out" '"events": 1,' &&
		{ [ -z "$rss_kb" ] || [ "$rss_kb" -lt "$RSS_LIMIT_KB" ]; }; then
		ok "1 GB string in a skipped field: read, exit 0${rss_kb:+, peak RSS ${rss_kb} KiB}"
	else
		not_ok "1 GB string in a skipped field: exit $rc, RSS ${rss_kb:-?} KiB"
		diag_file "$T/err" 3
	fi
	rm -f "$T/big_skip.json.gz"
else
	skip "1 GB string cases: python3 not found"
fi

# ---- nesting 100,000 deep ----
deep_arrays() {
	head -c 100000 /dev/zero | tr '\0' '['
	head -c 100000 /dev/zero | tr '\0' ']'
}
deep_arrays >"$T/deep_top.json"
rejected "arrays nested 100,000 deep (top level)" "$T/deep_top.json" "byte"
{
	printf '{"traceEvents":[{"ph":"X","name":"a","ts":1,"dur":1,"args":{"shape":'
	deep_arrays
	printf '}}]}'
} >"$T/deep_args.json"
rejected "arrays nested 100,000 deep (in args)" "$T/deep_args.json" "nested"
{
	printf '{"traceEvents":[{"ph":"X","name":"a","ts":1,"dur":1,"args":{"name":'
	deep_arrays
	printf '}}]}'
} >"$T/deep_kept.json"
rejected "arrays nested 100,000 deep (in a kept arg)" "$T/deep_kept.json" "nested"
{
	printf '{"metadata":'
	yes '{"a":' | head -n 100000 | tr -d '\n'
	printf '1'
	head -c 100000 /dev/zero | tr '\0' '}'
	printf ',"traceEvents":[]}'
} >"$T/deep_objects.json"
rejected "objects nested 100,000 deep (top-level block)" "$T/deep_objects.json" "nested"
deep_arrays | gzip -c >"$T/deep_top.json.gz"
rejected "arrays nested 100,000 deep (gzip)" "$T/deep_top.json.gz" "byte"

# ---- NaN, negative durations ----
printf '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":NaN,"dur":1}]}' >"$T/nan_ts.json"
rejected "NaN ts" "$T/nan_ts.json" "NaN"
printf '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":5,"dur":NaN}]}' >"$T/nan_dur.json"
rejected "NaN dur" "$T/nan_dur.json" "NaN"
printf '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":5,"dur":"NaN"}]}' >"$T/nan_str.json"
rejected "NaN dur as a string" "$T/nan_str.json" "dur"
printf '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":5,"dur":Infinity}]}' >"$T/inf.json"
rejected "Infinity dur" "$T/inf.json" "Infinity"
printf '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":5,"dur":-3}]}' >"$T/neg.json"
rejected "negative dur" "$T/neg.json" "negative"
printf '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":5,"dur":"-3.5"}]}' >"$T/neg_str.json"
rejected "negative dur as a string" "$T/neg_str.json" "negative"
printf '[{"ph":"B","name":"a","pid":1,"tid":1,"ts":9},{"ph":"E","pid":1,"tid":1,"ts":4}]' >"$T/neg_be.json"
rejected "E before its B (negative duration)" "$T/neg_be.json" "negative"

# ---- missing file, directory ----
rejected "missing file" "$T/no-such-profile.json.gz" "No such file" any
mkdir "$T/adir.json"
# a directory is either refused as such or searched for profiles and found to hold none
rejected "a directory" "$T/adir.json" "directory|no profiles" any

# ---- a named pipe, a device: read more than once, so refused (a FIFO would block open()) ----
mkfifo "$T/fifo.pt.trace.json"
rejected "a named pipe with no writer" "$T/fifo.pt.trace.json" "not a regular file" any
pg summarize "$T/fifo.pt.trace.json" -o "$T/fifo.json"
check "summarize a named pipe: exit 3" [ "$rc" -eq 3 ]
check "summarize a named pipe: no output file" [ ! -e "$T/fifo.json" ]
rejected "a character device" /dev/null "not a regular file" any

# ---- --json mode: the error line, and valid JSON (no partial document) on stdout ----
pg inspect --json "$T/cut.json.gz"
if [ "$rc" -eq 3 ] && [ "$(lines "$T/err")" -eq 1 ] &&
	python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(d["files"] != [])' <"$T/out"; then
	ok "bad input with --json: exit 3, one stderr line, stdout {\"files\": []}"
else
	not_ok "bad input with --json: exit $rc"
	diag_file "$T/out" 3
fi

done_testing
