#!/bin/sh
# sh tests/run.sh BUILD_DIR: run every cmocka unit binary (BUILD_DIR/tests/test_*) and every
# end-to-end script (tests/e2e/*.sh), count their TAP results and fail if anything failed.
set -u

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
	echo "usage: sh tests/run.sh BUILD_DIR" >&2
	exit 2
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "$1" && pwd)
cd "$ROOT" || exit 2

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pg-run.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'rm -rf "$tmp"; exit 130' INT TERM

# Sanitizer builds: UBSan must stop on the first report (its default is to print and go
# on, which would let a test pass), LeakSanitizer stays on. Ignored by normal builds.
# Reports also go to files (log_path): one from a profgate run whose exit code or stderr a
# test does not look at (a setup step, a background job) still fails the suite.
SAN=$tmp/sanitizer
mkdir -p "$SAN"
UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}:log_path=$SAN/ubsan
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}:log_path=$SAN/asan
CMOCKA_MESSAGE_OUTPUT=TAP
PROFGATE=$BUILD/profgate
TOOLS=$BUILD/tools
PG_BUILD=$BUILD
export UBSAN_OPTIONS ASAN_OPTIONS CMOCKA_MESSAGE_OUTPUT PROFGATE TOOLS PG_BUILD

SUITE_TIMEOUT=${PG_SUITE_TIMEOUT:-900}
if command -v timeout >/dev/null 2>&1; then
	limit="timeout $SUITE_TIMEOUT"
else
	limit=
fi

total_pass=0
total_fail=0
total_skip=0

# Count one suite's TAP lines: "ok", "not ok", either with "# SKIP"/"# skip" is a skip,
# and "1..N" is the plan. Prints "pass fail skip plan" (plan -1 when absent).
count_tap() {
	awk '
	BEGIN { pass = 0; fail = 0; skip = 0; plan = -1 }
	/^(not )?ok( |$)/ {
		if (tolower($0) ~ /^(not )?ok[^#]*# *skip/) skip++
		else if ($0 ~ /^ok/) pass++
		else fail++
		next
	}
	/^1\.\.[0-9]+/ { sub(/^1\.\./, ""); plan = $0 + 0 }
	END { print pass, fail, skip, plan }
	' "$1"
}

run_suite() {
	name=$1
	shift
	log=$tmp/$(echo "$name" | tr / _).log
	start=$(date +%s)
	# shellcheck disable=SC2086 # $limit is empty or "timeout N"
	$limit "$@" >"$log" 2>&1 </dev/null
	rc=$?
	secs=$(($(date +%s) - start))
	# shellcheck disable=SC2046 # four numbers, split on purpose
	set -- $(count_tap "$log")
	pass=$1 fail=$2 skip=$3 plan=$4
	note=
	seen=$((pass + fail + skip))
	if [ "$plan" -gt "$seen" ]; then
		# the suite stopped early (crash, sanitizer report): the missing tests failed
		fail=$((fail + plan - seen))
		note=" ($((plan - seen)) planned tests did not report)"
	fi
	if [ "$rc" -ne 0 ] && [ "$fail" -eq 0 ]; then
		fail=1
		note=" (exited with status $rc)"
	fi
	if [ "$seen" -eq 0 ] && [ "$fail" -eq 0 ] && [ "$rc" -eq 0 ] && grep -q '^1\.\.0 # skip' "$log"; then
		# a whole suite skipped, as TAP says it: counted, and its reason printed
		skip=1
		note=" ($(sed -n 's/^1\.\.0 # skip //p' "$log" | head -n 1))"
	elif [ "$seen" -eq 0 ] && [ "$fail" -eq 0 ]; then
		fail=1
		note=" (reported no results)"
	fi
	[ "$rc" -eq 124 ] && [ -n "$limit" ] && note="$note (timed out after ${SUITE_TIMEOUT}s)"
	reports=$(find "$SAN" -type f | wc -l)
	if [ "$reports" -gt 0 ]; then
		fail=$((fail + 1))
		note="$note (sanitizer reports from $reports processes)"
		for r in "$SAN"/*; do
			echo "--- $r"
			head -n 40 "$r"
		done >>"$log"
		rm -f "$SAN"/*
	fi
	printf '%-22s %4d passed, %d failed, %d skipped  %3ds%s\n' "$name" "$pass" "$fail" "$skip" \
		"$secs" "$note"
	if [ "$fail" -ne 0 ]; then
		# everything but the passing lines: failures, diagnostics, sanitizer reports
		grep -v '^ok ' "$log" | sed 's/^/    | /' | head -n 300
	elif [ "$skip" -ne 0 ]; then
		# the reasons, briefly
		grep -i '^\(not \)\{0,1\}ok[^#]*# *skip' "$log" | sed 's/^[^#]*# *[Ss][Kk][Ii][Pp] */    skipped: /' |
			head -n 3
		[ "$skip" -gt 3 ] && echo "    skipped: ... and $((skip - 3)) more"
	fi
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
	total_skip=$((total_skip + skip))
}

echo "tests in $BUILD"
for t in "$BUILD"/tests/test_*; do
	case $t in *.d | *.o) continue ;; esac
	if [ ! -f "$t" ] || [ ! -x "$t" ]; then continue; fi
	run_suite "unit/$(basename "$t")" "$t"
done
for s in tests/e2e/*.sh; do
	[ -f "$s" ] || continue
	run_suite "e2e/$(basename "$s" .sh)" sh "$s"
done

echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" -eq 0 ]
