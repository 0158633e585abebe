#!/bin/sh
# sh tests/zlib_fallback.sh BUILD ZLIB_BUILD: the zlib fallback in ZLIB_BUILD (what `make
# check-zlib` links, or a whole `make ISAL=0 BUILD=...`) against the default build in BUILD.
# The fallback's gzip and JSON reader unit tests pass, so do the gzip fuzz target's seeds and
# regressions (tests/fuzz/fuzz_gzip.c), tests/golden.sh writes byte for byte the same outputs
# with both binaries (every corpus profile when ../shared/corpus is there, and the bundled
# examples), and so does inspect of corpus profiles with a bit flipped. TAP on stdout.
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
echo "1..6"
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
if "$ZBUILD/tests/test_fuzz_gzip" "$TOP/tests/fuzz/seeds/gzip" "$TOP/tests/fuzz/regressions/gzip" \
	>"$tmp/fuzz_gzip.log" 2>&1; then
	echo "ok $n - the zlib build passes the gzip fuzz target's seeds and regressions"
else
	echo "not ok $n - the zlib build fails the gzip fuzz target's seeds or regressions"
	grep -v '^ok ' "$tmp/fuzz_gzip.log" | sed 's/^/# /'
	fail=1
fi

sh "$TOP/tests/golden.sh" "$BUILD/profgate" "$tmp/default" >/dev/null 2>&1
sh "$TOP/tests/golden.sh" "$ZBUILD/profgate" "$tmp/zlib" >/dev/null 2>&1
if diff -r "$tmp/default" "$tmp/zlib" >"$tmp/diff" 2>&1; then
	echo "ok 5 - tests/golden.sh: every output is the same bytes from both builds ($(find "$tmp/zlib" -type f | wc -l | tr -d ' ') files)"
else
	echo "not ok 5 - tests/golden.sh: the builds' outputs differ"
	head -n 40 "$tmp/diff" | sed 's/^/# /'
	fail=1
fi

# Corrupt real files: each of the corpus's .json.gz profiles under 2 MiB with one bit flipped at
# a place drawn from a fixed seed, twice; inspect must give the same output, error and exit code
# from both builds (ISA-L hands a member it cannot finish to zlib).
CORPUS=${PG_CORPUS:-$TOP/../shared/corpus}
if [ ! -d "$CORPUS" ]; then
	echo "ok 6 # skip corrupt corpus files: $CORPUS absent"
elif python3 - "$CORPUS" "$BUILD/profgate" "$ZBUILD/profgate" "$tmp/flip.json.gz" \
	>"$tmp/flips" 2>&1 <<'PY'; then
import os, random, subprocess, sys
corpus, a, b, path = sys.argv[1:]
rng = random.Random(20261129)
files = sorted(os.path.join(d, f) for d, _, fs in os.walk(corpus) for f in fs
               if f.endswith(".json.gz") and os.path.getsize(os.path.join(d, f)) < 2 << 20)
n = bad = 0
for f in files:
    data = open(f, "rb").read()
    for _ in range(2):
        flipped = bytearray(data)
        at = rng.randrange(10, len(data))
        flipped[at] ^= 1 << rng.randrange(8)
        with open(path, "wb") as out:
            out.write(flipped)
        ra = subprocess.run([a, "inspect", path], capture_output=True)
        rb = subprocess.run([b, "inspect", path], capture_output=True)
        n += 1
        if (ra.returncode, ra.stdout, ra.stderr) != (rb.returncode, rb.stdout, rb.stderr):
            bad += 1
            print("%s, bit flipped at byte %d: exit %d against %d; %s against %s" % (
                f, at, ra.returncode, rb.returncode, ra.stderr[-160:], rb.stderr[-160:]))
print("%d %d %d" % (n, len(files), bad))
sys.exit(1 if bad or not n else 0)
PY
	echo "ok 6 - one bit flipped in real .json.gz profiles: the same output, error and exit code from both builds ($(tail -n 1 "$tmp/flips" | cut -d' ' -f1) copies of $(tail -n 1 "$tmp/flips" | cut -d' ' -f2) files)"
else
	echo "not ok 6 - one bit flipped in real .json.gz profiles: the builds differ"
	sed 's/^/# /' "$tmp/flips"
	fail=1
fi
exit $fail
