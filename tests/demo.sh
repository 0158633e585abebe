#!/bin/sh
# make demo: run profgate on the bundled example profiles (tests/data/examples).
set -e
BUILD=${1:-build}
PG="$BUILD/profgate"
cd "$(dirname "$0")/.."
for f in tests/data/examples/*.json.gz; do
	echo "== profgate inspect $f"
	"$PG" inspect "$f"
	echo
done
