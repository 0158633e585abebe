#!/bin/sh
# sh tests/zlib_fallback.sh BUILD ZLIB_BUILD: the zlib fallback in ZLIB_BUILD (what `make
# check-zlib` links, or a whole `make ISAL=0 BUILD=...`) against the default build in BUILD.
# The fallback's gzip and JSON reader unit tests pass, and tests/golden.sh writes byte for byte
# the same outputs with both binaries (every corpus profile when ../shared/corpus is there, and
# the bundled examples). TAP on stdout.
set -u
if [ $# -ne 2 ]; then
	echo "usage: sh tests/zlib_fallback.sh BUILD ZLIB_BUILD" >&2
	exit 2
fi
TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "$1" && pwd)
ZBUILD=$(cd "$2" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pg-zlib.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
echo "1..4"
fail=0

if ldd "$ZBUILD/profgate" | grep -q libisal; then
	echo "not ok 1 - $ZBUILD/profgate links ISA-L: not a zlib fallback build"
	fail=1
else
	echo "ok 1 - $ZBUILD/profgate is the zlib fallback (no ISA-L linked)"
fi
n=2
for t in test_gzip_input test_chrome_json; do
	if CMOCKA_MESSAGE_OUTPUT=TAP "$ZBUILD/tests/$t" >"$tmp/$t.log" 2>&1; then
		echo "ok $n - the zlib build passes $t"
	else
		echo "not ok $n - the zlib build fails $t"
		sed 's/^/# /' "$tmp/$t.log"
		fail=1
	fi
	n=$((n + 1))
done

sh "$TOP/tests/golden.sh" "$BUILD/profgate" "$tmp/default" >/dev/null 2>&1
sh "$TOP/tests/golden.sh" "$ZBUILD/profgate" "$tmp/zlib" >/dev/null 2>&1
if diff -r "$tmp/default" "$tmp/zlib" >"$tmp/diff" 2>&1; then
	echo "ok 4 - tests/golden.sh: every output is the same bytes from both builds ($(find "$tmp/zlib" -type f | wc -l | tr -d ' ') files)"
else
	echo "not ok 4 - tests/golden.sh: the builds' outputs differ"
	head -n 40 "$tmp/diff" | sed 's/^/# /'
	fail=1
fi
exit $fail
