#!/bin/sh
# make demo: the whole local gate on the bundled example profiles (tests/data/examples): summarize
# a baseline and a candidate with a known regression (matmul kernels 25% slower, made by
# tests/tools/slow_family), gate the candidate, write the report, print its path and the verdict,
# and append the result to a history branch in a local bare repository ($BUILD/demo/history.git,
# cache in $BUILD/demo/cache), then show the branch and its trend. Running it again appends
# nothing: the same verdict is the same record.
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/.."
PG="$BUILD/profgate"
EX=tests/data/examples
OUT=$BUILD/demo
mkdir -p "$OUT" || exit 1

for side in baseline candidate; do
	in=$(ls "$EX"/$side.*.pt.trace.json.gz)
	echo "== profgate summarize $in -o $OUT/$side.summary.json"
	"$PG" summarize "$in" -o "$OUT/$side.summary.json" || exit $?
done
[ -d "$OUT/history.git" ] || git init -q --bare "$OUT/history.git" || exit 1
PROFGATE_CACHE_DIR=$OUT/cache
export PROFGATE_CACHE_DIR
echo
echo "== profgate gate --baseline $OUT/baseline.summary.json --candidate $OUT/candidate.summary.json --history $OUT/history.git"
"$PG" gate --baseline "$OUT/baseline.summary.json" --candidate "$OUT/candidate.summary.json" \
	--label "demo: matmul 25% slower" --report "$OUT/report.md" --json "$OUT/verdict.json" \
	--history "$OUT/history.git" --history-required
rc=$?
echo
echo "== profgate history show --repo $OUT/history.git"
"$PG" history show --repo "$OUT/history.git" || exit $?
echo
# the demo's record is a manual run: the trend takes that kind too (a CI trend would take the
# default, main and nightly runs)
echo "== profgate history trend --repo $OUT/history.git --kind main,nightly,manual"
"$PG" history trend --repo "$OUT/history.git" --kind main,nightly,manual || exit $?
echo
verdict=$(sed -n 's/^  "verdict": "\(.*\)",$/\1/p' "$OUT/verdict.json")
echo "report: $OUT/report.md"
echo "verdict: $verdict (profgate gate exited $rc)"
# The demo succeeds when the gate catches the known regression.
[ "$rc" -eq 1 ] && [ "$verdict" = fail ]
