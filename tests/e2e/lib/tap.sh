# tests/e2e/lib/tap.sh: sourced by the e2e scripts. TAP output for tests/run.sh, a temp dir,
# and running profgate with its exit code, stdout and stderr captured.
# Needs PROFGATE (the binary) and TOOLS (built test tools) in the environment.

: "${PROFGATE:?set PROFGATE to the profgate binary}"
: "${TOOLS:=}"
tap_n=0
tap_failed=0

ok() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $*"
}
not_ok() {
	tap_n=$((tap_n + 1))
	tap_failed=$((tap_failed + 1))
	echo "not ok $tap_n - $*"
}
skip() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n # skip $*"
}
# diag TEXT...: a diagnostic line; diag_file FILE: a file's first lines as diagnostics.
diag() {
	echo "# $*"
}
diag_file() {
	head -n "${2:-5}" "$1" | sed 's/^/#   /'
}
# check TITLE COMMAND...: one test that passes when the command succeeds.
check() {
	_t=$1
	shift
	if "$@"; then ok "$_t"; else not_ok "$_t"; fi
}
# pycheck TITLE SETUP FILE EXPR...: one test; SETUP is Python that reads FILE (sys.argv[1]) into
# the names the expressions use; every EXPR must be true, and the false ones are diagnostics.
pycheck() {
	_title=$1
	_setup=$2
	shift 2
	if python3 - "$_setup" "$@" >"$T/pywhy" 2>&1 <<'EOF'; then
import json, sys
exec(sys.argv.pop(1))
bad = 0
for e in sys.argv[2:]:
    try:
        good = eval(e)
    except Exception as x:
        good = False
        e += "  (%s: %s)" % (type(x).__name__, x)
    if not good:
        print("false: " + e)
        bad = 1
sys.exit(bad)
EOF
		ok "$_title"
	else
		not_ok "$_title"
		diag_file "$T/pywhy" 10
	fi
}
done_testing() {
	echo "1..$tap_n"
	[ "$tap_failed" -eq 0 ]
}

T=$(mktemp -d "${TMPDIR:-/tmp}/pg-e2e.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'rm -rf "$T"; exit 130' INT TERM

# pg ARGS...: run profgate (at most 60 s) with stdout in $T/out, stderr in $T/err, code in $rc.
pg() {
	timeout 60 "$PROFGATE" "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
}
# pg_rss ARGS...: like pg, and the peak RSS in KiB in $rss_kb (empty without the maxrss tool).
pg_rss() {
	rss_kb=
	if [ -x "$TOOLS/maxrss" ]; then
		rm -f "$T/rss"
		timeout 60 "$TOOLS/maxrss" -o "$T/rss" "$PROFGATE" "$@" >"$T/out" 2>"$T/err" </dev/null
		rc=$?
		[ -s "$T/rss" ] && rss_kb=$(cat "$T/rss")
	else
		pg "$@"
	fi
}
# local_env: the suite runs outside CI (no GitHub variables, tokens or fixed PROFGATE_TIME) with
# a HOME, git config and profgate cache of its own.
local_env() {
	unset GITHUB_REPOSITORY GITHUB_SHA GITHUB_REF GITHUB_RUN_ID GITHUB_RUN_ATTEMPT \
		GITHUB_EVENT_NAME GITHUB_EVENT_PATH GITHUB_TOKEN PROFGATE_GIT_TOKEN PROFGATE_TIME \
		XDG_CACHE_HOME
	HOME=$T/home GIT_CONFIG_NOSYSTEM=1 PROFGATE_CACHE_DIR=$T/cache
	export HOME GIT_CONFIG_NOSYSTEM PROFGATE_CACHE_DIR
	mkdir -p "$HOME"
}
# pge VAR=VALUE... PROGRAM ARGS...: like pg, with extra environment (profgate is $PROFGATE).
pge() {
	timeout 60 env "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
}
lines() {
	wc -l <"$1" | tr -d ' '
}
# has FILE TEXT: the file contains TEXT literally.
has() {
	grep -qF -- "$2" "$1"
}
# one_line TITLE CODE WORD: one test: the last run exited CODE with exactly one stderr line,
# "profgate: ..." naming WORD.
one_line() {
	if [ "$rc" -eq "$2" ] && [ "$(lines "$T/err")" -eq 1 ] && grep -q '^profgate: ' "$T/err" &&
		has "$T/err" "$3"; then
		ok "$1: exit $2, one line"
	else
		not_ok "$1: exit $rc, $(lines "$T/err") stderr lines"
		diag_file "$T/err" 5
	fi
}
