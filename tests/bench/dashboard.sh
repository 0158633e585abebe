#!/bin/sh
# The dashboard rows (`make bench BENCH=dashboard`, or alone): `history dashboard` of generated
# history branches (tests/bench/history_gen.py: 50 series of nightly records, a PR record after
# every 7th night of each, series 7 made 8% slower from its 200th night) of about 20,000 records
# (365 nights) and, with PG_BENCH_DASHBOARD_RECORDS="20850 100000", 100,000: the build's wall
# time, CPU time and peak RSS, and the site's size, beside `history trend --format json` of the
# same branch (the change points the site charts are that trend's); then in headless Chromium
# (tests/bench/dashboard_load.mjs, when chromium and playwright-core are there) the index and the
# page of series 7 from a served folder: load and draw times (the median of 3 fresh pages), and
# whether the injected change point is on its chart at its record with its commit, as the trend
# JSON says.
# Usage: sh tests/bench/dashboard.sh [BUILD]
set -eu

BUILD=$(cd "${1:-build}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
PG=$BUILD/profgate
GEN=$top/tests/bench/history_gen.py
OUT=$BUILD/bench/dashboard
SIZES=${PG_BENCH_DASHBOARD_RECORDS:-20850}
CHROMIUM=${PG_CHROMIUM:-/usr/bin/chromium}
MODULES=${PG_BROWSER_DIR:-$top/build/browser}/node_modules
mkdir -p "$OUT"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pg-dash-bench.XXXXXX")
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$tmp"' EXIT

browser=
if [ -x "$CHROMIUM" ] && command -v node >/dev/null 2>&1; then
	if [ ! -d "$MODULES/playwright-core" ] && command -v npm >/dev/null 2>&1; then
		mkdir -p "$(dirname "$MODULES")"
		(cd "$(dirname "$MODULES")" && npm install --no-audit --no-fund --silent --no-save \
			playwright-core@1.65.1 >/dev/null 2>&1) || :
	fi
	[ -d "$MODULES/playwright-core" ] && browser=1
fi
[ -n "$browser" ] || echo "dashboard bench: no chromium or playwright-core: no browser rows"

echo "records  series  build_s  cpu_s  rss_mb  site_mb  trend_s  index_ms  page_ms  points  change"
for n in $SIZES; do
	repo=$OUT/history-$n.git
	if [ ! -d "$repo" ]; then
		python3 "$GEN" --repo "$repo" --records "$n" --pr-every 7 --change 7:200:1.08 >/dev/null
	fi
	rm -rf "$tmp/site" "$tmp/cache"
	export PROFGATE_CACHE_DIR="$tmp/cache"
	/usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$PG" history dashboard --repo "$repo" \
		-o "$tmp/site" >/dev/null
	read -r wall user sys rss <"$tmp/time"
	size=$(du -sk "$tmp/site" | cut -f1)
	/usr/bin/time -f "%e" -o "$tmp/ttime" "$PG" history trend --repo "$repo" --format json \
		-o "$tmp/trend-all.json" >/dev/null
	s7=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["series"][7]["series"])' \
		"$tmp/trend-all.json")
	"$PG" history trend --repo "$repo" --series "$s7" --format json >"$tmp/trend.json"
	load="- - - -"
	if [ -n "$browser" ]; then
		python3 -c '
import functools, http.server, os, sys
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
h.func.log_message = lambda *a: None
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), h)
open(sys.argv[2] + ".tmp", "w").write(str(s.server_address[1])); os.rename(sys.argv[2] + ".tmp", sys.argv[2])
s.serve_forever()' "$tmp/site" "$tmp/port" &
		server=$!
		while [ ! -s "$tmp/port" ]; do sleep 0.1; done
		rm -rf "$tmp/profile"
		node "$top/tests/bench/dashboard_load.mjs" "$MODULES" "$CHROMIUM" "$tmp/profile" \
			"http://127.0.0.1:$(cat "$tmp/port")/" "$s7" "$tmp/trend.json" 3 200 >"$tmp/load"
		kill "$server" 2>/dev/null || :
		server=
		rm -f "$tmp/port"
		load="$(awk '$1 == "index" {i = $2} $1 == "series" {p = $2; n = $3} $1 == "change" {c = $2}
			END {print i, p, n, c}' "$tmp/load")"
		grep '^errors' "$tmp/load" || :
	fi
	awk -v n="$n" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" -v z="$size" \
		-v t="$(cat "$tmp/ttime")" -v l="$load" 'BEGIN {
		split(l, L, " ")
		printf "%7d  %6d  %7.2f  %5.1f  %6.0f  %7.1f  %7.2f  %8s  %7s  %6s  %s\n",
			n, 50, w, u + s, r / 1024, z / 1024, t, L[1], L[2], L[3], L[4] }'
done
