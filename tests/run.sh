#!/bin/sh
# sh tests/run.sh [-j JOBS] [-t TIER] BUILD_DIR...: run the test suites of each build, several at
# once, count their TAP results and fail if anything failed.
#
# Suites: every cmocka unit binary (BUILD_DIR/tests/test_*) and every end-to-end script
# (tests/e2e/*.sh) for the tiers "check" (the default: all of them) and "quick" (the unit
# binaries and the scripts not marked `# test-tier: full`); every script of tests/stress/ for
# the tier "stress". A script marked `# test-sanitizers: no` runs no profgate (it checks files
# only) and is left out for a sanitizer build. The markers are comment lines of the script.
#
# JOBS suites run at once (-j, else PG_TEST_JOBS, else the number of processors); the suites of
# every build given share them, the ones marked `full` first (they take longest), a sanitizer
# build's first among them. Each suite runs with its own sanitizer folder; its result block is
# printed when it and every suite started before it have finished, so the output keeps the start
# order whatever the timing. The last line is "N passed, N failed, N skipped" (CI reads it).
# PG_TEST_SUITES="e2e/gate unit/test_gate" runs only the suites named.
set -u

usage() {
	echo "usage: sh tests/run.sh [-j JOBS] [-t check|quick|stress] BUILD_DIR..." >&2
	exit 2
}
jobs=${PG_TEST_JOBS:-}
tier=check
while getopts j:t: o; do
	case $o in
	j) jobs=$OPTARG ;;
	t) tier=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage
case $tier in check | quick | stress) ;; *) usage ;; esac
[ -n "$jobs" ] || jobs=$(nproc 2>/dev/null || echo 2)
case $jobs in '' | *[!0-9]* | 0) usage ;; esac
ROOT=$(cd "$(dirname "$0")/.." && pwd)
builds=
for b in "$@"; do
	[ -d "$b" ] || usage
	builds="$builds $(cd "$b" && pwd)"
done
cd "$ROOT" || exit 2

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pg-run.XXXXXX") || exit 2
# a stopped run stops its suites: each suite's command (timeout passes the signal on)
stop_all() {
	for p in "$tmp"/*/cmd.pid; do
		[ -f "$p" ] && kill -TERM "$(cat "$p")" 2>/dev/null
	done
}
trap 'rm -rf "$tmp"' EXIT
trap 'stop_all; rm -rf "$tmp"; exit 130' INT TERM

# Sanitizer builds: UBSan must stop on the first report (its default is to print and go
# on, which would let a test pass), LeakSanitizer stays on. Ignored by normal builds.
# Reports also go to files (log_path, a folder per suite): one from a profgate run whose exit
# code or stderr a test does not look at (a setup step, a background job) still fails the suite.
UBSAN_BASE=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
ASAN_BASE=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
CMOCKA_MESSAGE_OUTPUT=TAP
export CMOCKA_MESSAGE_OUTPUT

SUITE_TIMEOUT=${PG_SUITE_TIMEOUT:-900}
if command -v timeout >/dev/null 2>&1; then
	limit="timeout $SUITE_TIMEOUT"
else
	limit=
fi

# marked SCRIPT MARK VALUE: the script has the comment line "# MARK: VALUE".
marked() {
	grep -q "^# $2: $3\$" "$1"
}

# The list, one suite a line: "<name>|<build>|<command>"; the start order, which is also the
# printing order, is a second file.
list=$tmp/list
: >"$list"
for b in $builds; do
	label=
	[ "$(echo "$builds" | wc -w)" -gt 1 ] && label="$(basename "$b")/"
	san=0
	grep -q fsanitize "$b/CFLAGS" 2>/dev/null && san=1
	if [ "$tier" = stress ]; then
		for s in tests/stress/*.sh; do
			[ -f "$s" ] && echo "${label}stress/$(basename "$s" .sh)|$b|sh $s" >>"$list"
		done
		continue
	fi
	for t in "$b"/tests/test_*; do
		case $t in *.d | *.o) continue ;; esac
		[ -f "$t" ] && [ -x "$t" ] && echo "${label}unit/$(basename "$t")|$b|$t" >>"$list"
	done
	for s in tests/e2e/*.sh; do
		[ -f "$s" ] || continue
		[ "$tier" = quick ] && marked "$s" test-tier full && continue
		[ "$san" = 1 ] && marked "$s" test-sanitizers no && continue
		echo "${label}e2e/$(basename "$s" .sh)|$b|sh $s" >>"$list"
	done
done
# PG_TEST_SUITES="e2e/gate unit/test_gate ...": only those (without a build's label)
if [ -n "${PG_TEST_SUITES:-}" ]; then
	while IFS='|' read -r name rest; do
		base=$name
		case $name in */*/*) base=${name#*/} ;; esac
		case " $PG_TEST_SUITES " in *" $base "*) ;; *) continue ;; esac
		echo "$name|$rest"
	done <"$list" >"$list.only"
	mv "$list.only" "$list"
fi
n=$(wc -l <"$list")
# start order, longest first as far as the markers tell: the scripts marked full (a sanitizer
# build's before the others': they run two to three times longer), then the other scripts, then
# the unit binaries
awk -F'|' '{ print NR "|" $0 }' "$list" | while IFS='|' read -r i name b cmd; do
	w=4
	case $cmd in
	"sh "*) marked "${cmd#sh }" test-tier full && w=0 || w=2 ;;
	esac
	grep -q fsanitize "$b/CFLAGS" 2>/dev/null || w=$((w + 1))
	echo "$w $i"
done | sort -k1,1n -k2,2n | cut -d' ' -f2 >"$tmp/order"

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

# suite I NAME BUILD COMMAND...: run one suite (in the background of the caller); its result
# block in $tmp/I.out, "pass fail skip" in $tmp/I.count, then $tmp/I.done.
suite() {
	i=$1 name=$2 b=$3
	shift 3
	d=$tmp/$i
	mkdir -p "$d/sanitizer"
	log=$d/log
	start=$(date +%s)
	# shellcheck disable=SC2086 # $limit is empty or "timeout N"
	UBSAN_OPTIONS=$UBSAN_BASE:log_path=$d/sanitizer/ubsan \
		ASAN_OPTIONS=$ASAN_BASE:log_path=$d/sanitizer/asan \
		PROFGATE=$b/profgate TOOLS=$b/tools PG_BUILD=$b \
		$limit "$@" >"$log" 2>&1 </dev/null &
	echo $! >"$d/cmd.pid"
	wait $!
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
	reports=$(find "$d/sanitizer" -type f | wc -l)
	if [ "$reports" -gt 0 ]; then
		fail=$((fail + 1))
		note="$note (sanitizer reports from $reports processes)"
		for r in "$d"/sanitizer/*; do
			echo "--- $r"
			head -n 40 "$r"
		done >>"$log"
	fi
	{
		printf '%-22s %4d passed, %d failed, %d skipped  %3ds%s\n' "$name" "$pass" "$fail" \
			"$skip" "$secs" "$note"
		if [ "$fail" -ne 0 ]; then
			# everything but the passing lines: failures, diagnostics, sanitizer reports
			grep -v '^ok ' "$log" | sed 's/^/    | /' | head -n 300
		elif [ "$skip" -ne 0 ]; then
			# the reasons, briefly
			grep -i '^\(not \)\{0,1\}ok[^#]*# *skip' "$log" |
				sed 's/^[^#]*# *[Ss][Kk][Ii][Pp] */    skipped: /' | head -n 3
			[ "$skip" -gt 3 ] && echo "    skipped: ... and $((skip - 3)) more"
		fi
	} >"$tmp/$i.out"
	echo "$pass $fail $skip" >"$tmp/$i.count"
	rm -rf "$d"
	: >"$tmp/$i.done"
}

# start I: run suite I of the list in the background
start() {
	line=$(sed -n "${1}p" "$list")
	name=${line%%|*}
	rest=${line#*|}
	b=${rest%%|*}
	cmd=${rest#*|}
	# shellcheck disable=SC2086 # the command's words
	suite "$1" "$name" "$b" $cmd &
	echo $! >"$tmp/$1.pid"
}

echo "tests in$builds ($tier tier, $jobs at once)"
total_pass=0
total_fail=0
total_skip=0
next_print=1
running=0
started=0
while [ "$next_print" -le "$n" ]; do
	# start suites while there is room
	while [ "$running" -lt "$jobs" ] && [ "$started" -lt "$n" ]; do
		started=$((started + 1))
		start "$(sed -n "${started}p" "$tmp/order")"
		running=$((running + 1))
	done
	# count the finished ones
	done_now=0
	for f in "$tmp"/*.done; do
		[ -f "$f" ] || continue
		i=$(basename "$f" .done)
		wait "$(cat "$tmp/$i.pid")" 2>/dev/null
		rm -f "$f" "$tmp/$i.pid"
		: >"$tmp/$i.finished"
		running=$((running - 1))
		done_now=1
	done
	# print in the start order what has finished
	while [ "$next_print" -le "$n" ]; do
		i=$(sed -n "${next_print}p" "$tmp/order")
		[ -f "$tmp/$i.finished" ] || break
		cat "$tmp/$i.out"
		read -r pass fail skip <"$tmp/$i.count"
		total_pass=$((total_pass + pass))
		total_fail=$((total_fail + fail))
		total_skip=$((total_skip + skip))
		next_print=$((next_print + 1))
	done
	[ "$done_now" = 1 ] || sleep 0.2
done

echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" -eq 0 ]
