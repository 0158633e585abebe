#!/bin/sh
# sh tests/fuzz/run.sh FUZZ_BUILD [TARGET...]: run each libFuzzer target FUZZ_BUILD/bin/fuzz_<name>
# for FUZZ_SECONDS (default 60), one process at a time under nice, and write FUZZ_BUILD/report.md.
#
# Per target: the corpus grows in FUZZ_BUILD/corpus/<name>/ (kept between runs), seeded from
# tests/fuzz/seeds/<name>/, tests/fuzz/regressions/<name>/ and seeds cut from the real profiles
# of ../shared/corpus and tests/data (tests/fuzz/seeds.py; skipped when absent). Crashes, leaks,
# timeouts and out-of-memory inputs land in FUZZ_BUILD/artifacts/<name>/. Options come from
# tests/fuzz/fuzz_<name>.options (max_len, dict). Exit 1 when any target found something.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
FB=${1:?usage: sh tests/fuzz/run.sh FUZZ_BUILD [TARGET...]}
shift
cd "$ROOT" || exit 2
FB=$(cd "$FB" && pwd) || exit 2
SECS=${FUZZ_SECONDS:-60}
targets=$*
if [ -z "$targets" ]; then
	for b in "$FB"/bin/fuzz_*; do
		[ -x "$b" ] && targets="$targets ${b##*/fuzz_}"
	done
fi

# Seeds cut from the real corpus, made once per build folder.
CORPUS=${PG_CORPUS:-$ROOT/../shared/corpus}
if [ ! -f "$FB/seeds-corpus/.done" ]; then
	rm -rf "$FB/seeds-corpus"
	dirs=tests/data
	if [ -d "$CORPUS" ]; then
		dirs="$CORPUS $dirs"
	else
		echo "fuzz: $CORPUS absent: seeds from tests/data and tests/fuzz/seeds only"
	fi
	# shellcheck disable=SC2086 # a list of folders
	nice -n 10 python3 tests/fuzz/seeds.py corpus "$FB/seeds-corpus" $dirs &&
		touch "$FB/seeds-corpus/.done"
fi

opt() { # opt TARGET KEY: a value of tests/fuzz/fuzz_TARGET.options
	[ -f "tests/fuzz/fuzz_$1.options" ] &&
		sed -n "s/^$2=//p" "tests/fuzz/fuzz_$1.options" | tail -n 1
}
count() { # files in a folder
	if [ -d "$1" ]; then find "$1" -type f ! -name '.*' | wc -l | tr -d ' '; else echo 0; fi
}

mkdir -p "$FB/logs" "$FB/dict"
stamp=$(date -u +%Y-%m-%dT%H:%M:%SZ)
found=0
for t in $targets; do
	bin=$FB/bin/fuzz_$t
	if [ ! -x "$bin" ]; then
		echo "fuzz: no target $t ($bin)" >&2
		exit 2
	fi
	mkdir -p "$FB/corpus/$t" "$FB/artifacts/$t"
	max_len=$(opt "$t" max_len)
	dict=$FB/dict/$t.dict
	: >"$dict"
	for d in $(opt "$t" dict); do
		cat "tests/fuzz/dict/$d.dict" >>"$dict"
	done
	set -- -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$FB/artifacts/$t/"
	[ -n "$max_len" ] && set -- "$@" -max_len="$max_len"
	[ -s "$dict" ] && set -- "$@" -dict="$dict"
	set -- "$@" "$FB/corpus/$t"
	for s in tests/fuzz/seeds/$t tests/fuzz/regressions/$t $FB/seeds-corpus/$t; do
		[ -d "$s" ] && set -- "$@" "$s"
	done
	before=$(count "$FB/artifacts/$t")
	log=$FB/logs/$t.log
	start=$(date +%s)
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} nice -n 10 "$bin" "$@" >"$log" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
	crashes=$(($(count "$FB/artifacts/$t") - before))
	[ "$rc" -ne 0 ] && [ "$crashes" -eq 0 ] && crashes=1 # stopped without an artifact
	corpus=$(count "$FB/corpus/$t")
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$stamp" "$t" "$secs" "${execs:-0}" "$corpus" \
		"$crashes" >>"$FB/runs.tsv"
	echo "fuzz_$t: ${execs:-0} executions in $secs s (${rate:-0}/s), corpus $corpus, crashes $crashes"
	if [ "$crashes" -ne 0 ]; then
		found=1
		grep -E 'ERROR|runtime error|invariant|SUMMARY' "$log" | head -n 5 | sed 's/^/    | /'
		echo "    log: $log; inputs: $FB/artifacts/$t/"
		echo "    replay: make && build/tests/test_fuzz_$t $FB/artifacts/$t/<file>"
	fi
done

# The report: this run, and every run recorded in this build folder.
{
	echo "# profgate fuzzing report"
	echo
	echo "Run $stamp, FUZZ_SECONDS=$SECS per target, one libFuzzer process at a time."
	echo
	echo "| target | runs | seconds | executions | corpus | crashes |"
	echo "|---|---:|---:|---:|---:|---:|"
	awk -F '\t' -v s="$stamp" '$1 == s {
		printf "| fuzz_%s | 1 | %d | %d | %d | %d |\n", $2, $3, $4, $5, $6 }' "$FB/runs.tsv"
	echo
	echo "All runs in $FB (corpus: its size after the last run):"
	echo
	echo "| target | runs | seconds | executions | corpus | crashes |"
	echo "|---|---:|---:|---:|---:|---:|"
	awk -F '\t' '{ if (!($2 in n)) order[k++] = $2
		n[$2]++; s[$2] += $3; e[$2] += $4; c[$2] = $5; x[$2] += $6 }
		END { for (i = 0; i < k; i++) { t = order[i]
			printf "| fuzz_%s | %d | %d | %d | %d | %d |\n", t, n[t], s[t], e[t], c[t], x[t] } }' \
		"$FB/runs.tsv"
} >"$FB/report.md"
echo "fuzz: report in $FB/report.md"
exit "$found"
