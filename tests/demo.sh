#!/bin/sh
# make demo: the whole local gate on the bundled example profiles (tests/data/examples): summarize
# a baseline and a candidate with a known regression (matmul kernels 25% slower, made by
# tests/tools/slow_family), gate the candidate, write the report, print its path and the verdict.
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
echo
echo "== profgate gate --baseline $OUT/baseline.summary.json --candidate $OUT/candidate.summary.json"
"$PG" gate --baseline "$OUT/baseline.summary.json" --candidate "$OUT/candidate.summary.json" \
	--label "demo: matmul 25% slower" --report "$OUT/report.md" --json "$OUT/verdict.json"
rc=$?
echo
verdict=$(sed -n 's/^  "verdict": "\(.*\)",$/\1/p' "$OUT/verdict.json")
echo "report: $OUT/report.md"
echo "verdict: $verdict (profgate gate exited $rc)"
# The demo succeeds when the gate catches the known regression.
[ "$rc" -eq 1 ] && [ "$verdict" = fail ]
