#!/bin/sh
# sh tests/fuzz/mkseeds.sh BUILD: regenerate the committed seeds, tests/fuzz/seeds/<target>/.
# The hand-made ones come from seeds.py; the summaries, verdicts and history lines are what
# BUILD/profgate writes for the hand-made traces and the bundled examples (tests/data/examples),
# so they follow the formats as they are. Run it after a format changes, and commit the result.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:?usage: sh tests/fuzz/mkseeds.sh BUILD}" && pwd)
PG=$BUILD/profgate
S=$ROOT/tests/fuzz/seeds
cd "$ROOT"
[ -x "$PG" ] || { echo "mkseeds: build $PG first (make)" >&2; exit 2; }
T=$(mktemp -d "${TMPDIR:-/tmp}/pg-seeds.XXXXXX")
trap 'rm -rf "$T"' EXIT

rm -rf "$S"
python3 tests/fuzz/seeds.py hand "$S"
mkdir -p "$S/summary" "$S/verdict"

# summaries: the hand-made traces and the examples (relative paths: the same bytes every time)
for f in "$S"/chrome_json/kineto.json "$S"/chrome_json/jax_export.json \
	"$S"/chrome_json/phases_array.json "$S"/xplane/gpu.xplane.pb "$S"/xplane/tpu.xplane.pb; do
	cp "$f" "$T/$(basename "$f")"
	(cd "$T" && "$PG" summarize --label model=seed -o "$(basename "$f").summary.json" "$(basename "$f")")
done
for f in tests/data/examples/*.json.gz; do
	"$PG" summarize -o "$T/$(basename "$f" .pt.trace.json.gz).summary.json" "$f"
done
cp "$T"/*.summary.json "$S/summary/"

cp thresholds/strict.json "$T/strict.json"
# verdicts: a regression, identical inputs, a refusal, the strict set
gate() {
	(cd "$T" && "$PG" gate -b "$1" -c "$2" --json "$3" $4 >/dev/null) || true
	cp "$T/$3" "$S/verdict/$3"
}
gate baseline.rank-0.summary.json candidate.rank-0.matmul-slower.summary.json fail.json \
	"--label seed-run"
gate kineto.json.summary.json kineto.json.summary.json identical.json ""
gate kineto.json.summary.json jax_export.json.summary.json incomparable.json ""
gate kineto_mi250_minitoy.summary.json kineto_trace_compare.summary.json strict.json \
	"--thresholds strict.json"

# history: the verdicts appended to a bare repository, the shards as the branch holds them
git init -q --bare "$T/h.git"
for v in fail incomparable strict; do
	PROFGATE_TIME=2024-05-01T12:00:00Z PROFGATE_CACHE_DIR=$T/cache GITHUB_RUN_ID=7 \
		GITHUB_REPOSITORY=o/r GITHUB_RUN_ATTEMPT=1 GITHUB_EVENT_NAME=schedule \
		"$PG" history append --repo "$T/h.git" "$S/verdict/$v.json" >/dev/null
done
git --git-dir="$T/h.git" ls-tree -r --name-only profgate-history | while read -r p; do
	git --git-dir="$T/h.git" show "profgate-history:$p" >"$S/history/real-$(echo "$p" | tr / _)"
done
find "$S" -type f | wc -l | sed 's/^/mkseeds: seeds: /'
