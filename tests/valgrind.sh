#!/bin/sh
# sh tests/valgrind.sh BUILD [SUITE...]: end-to-end suites (default: all but bad_input, corpus and
# summarize, whose large inputs are too slow under memcheck) with every profgate run under
# valgrind memcheck: leaks (definite, indirect), uses of uninitialised memory (which ASan does
# not see), invalid accesses in the uninstrumented -O2 build. Each run reports to a log file of
# its own; a run with any error, or a failed test, fails. Not part of `make check` (memcheck is
# 20-50x slower); `make valgrind` runs it. docs/robustness.md "Sanitizers and valgrind".
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:?usage: sh tests/valgrind.sh BUILD [SUITE...]}" && pwd)
shift
suites=${*:-cli dirs gate history hostile slow_family}
cd "$ROOT" || exit 2
command -v valgrind >/dev/null 2>&1 || {
	echo "valgrind: not installed (apt-get install valgrind)" >&2
	exit 2
}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pg-vg.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'rm -rf "$tmp"; exit 130' INT TERM

# The wrapper the suites run as $PROFGATE: memcheck around the real binary, one log per run.
cat >"$tmp/profgate" <<EOF
#!/bin/sh
exec valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect \\
	--show-leak-kinds=definite,indirect --error-exitcode=99 \\
	--log-file="$tmp/logs/vg.%p.log" "$BUILD/profgate" "\$@"
EOF
chmod +x "$tmp/profgate"
mkdir -p "$tmp/logs"

failed=0
for s in $suites; do
	start=$(date +%s)
	PROFGATE=$tmp/profgate TOOLS=$BUILD/tools PG_BUILD=$BUILD sh "tests/e2e/$s.sh" >"$tmp/$s.tap" 2>&1
	rc=$?
	runs=$(find "$tmp/logs" -name 'vg.*.log' | wc -l | tr -d ' ')
	bad=$(find "$tmp/logs" -name 'vg.*.log' -size +0 | wc -l | tr -d ' ')
	pass=$(grep -c '^ok ' "$tmp/$s.tap")
	nok=$(grep -c '^not ok ' "$tmp/$s.tap")
	printf '%-10s %3d runs under memcheck, %d with errors; tests %d passed, %d failed  %ds\n' \
		"$s" "$runs" "$bad" "$pass" "$nok" "$(($(date +%s) - start))"
	if [ "$bad" -gt 0 ]; then
		failed=1
		find "$tmp/logs" -name 'vg.*.log' -size +0 | head -n 3 | while read -r f; do
			sed 's/^/    | /' "$f" | head -n 40
		done
	fi
	if [ "$nok" -gt 0 ] || [ "$rc" -ne 0 ]; then
		failed=1
		grep '^not ok' "$tmp/$s.tap" | head -n 5 | sed 's/^/    /'
		[ "$nok" -eq 0 ] && echo "    $s exited with status $rc"
	fi
	rm -f "$tmp"/logs/vg.*.log
done
exit "$failed"
