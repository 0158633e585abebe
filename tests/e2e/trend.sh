#!/bin/sh
# History baselines and trends end to end, against real git (local bare repositories): a history
# made by real `gate --history` runs (nightly, on main, the step time 8% slower from day 7; a PR
# record and another branch's record in between; a flat series under another label) and read by
# `history baseline` (the median of the last N main/nightly records as a summary), `gate
# --baseline history:main[:N]` (the window in the verdict JSON and the record; a short window
# says so) and `history trend` (markdown with Mermaid charts, profgate.trend/1 JSON: the change
# point at day 7 with its size and confidence, none in the flat series, the nightly rule), and
# bad inputs: unknown series, empty window, bad N, missing --history(-from), with one line and their
# exit codes.
set -u
# test-tier: full
. "$(dirname "$0")/lib/tap.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
EX=$TOP/tests/data/examples

local_env

# jf TITLE FILE EXPR...: python expressions over j (FILE parsed as one JSON document).
jf() {
	_t=$1
	shift
	pycheck "$_t" 'j = json.load(open(sys.argv[1]))' "$@"
}
# jl TITLE FILE EXPR...: over r, the JSON lines of FILE.
jl() {
	_t=$1
	shift
	pycheck "$_t" 'r = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]' "$@"
}
# scale IN OUT FACTOR [LABEL=VALUE]: a copy of summary IN with every time multiplied by FACTOR
# (shares unchanged), other profile digests, and an optional identity label.
scale() {
	python3 - "$@" <<'EOF'
import hashlib, json, sys
src, dst, f = sys.argv[1], sys.argv[2], float(sys.argv[3])
def timed(k):
    return k == 'us' or k == 'device_us' or k.endswith('_us') or 'us_per_step' in k or k.endswith('us_total')
def walk(o, key=None):
    if isinstance(o, dict):
        return {k: (v if k in ('source', 'identity') else walk(v, k)) for k, v in o.items()}
    if isinstance(o, list):
        return [walk(v, key) for v in o]
    if isinstance(o, (int, float)) and not isinstance(o, bool) and key and timed(key):
        return round(o * f, 3)
    return o
s = walk(json.load(open(src)))
for fl in s['source']['files']:
    fl['sha256'] = hashlib.sha256((fl['sha256'] + repr(f)).encode()).hexdigest()
if len(sys.argv) > 4:
    k, v = sys.argv[4].split('=', 1)
    s['identity']['labels'][k] = v
json.dump(s, open(dst, 'w'), indent=2)
EOF
}

pg summarize "$EX"/baseline.*.pt.trace.json.gz -o "$T/base.json"
check "summarize the bundled baseline" [ "$rc" -eq 0 ]
git init -q --bare "$T/r.git"

# ---- the history: 12 nightly runs on main, 8% slower from day 7 ----
fails=0
day=1
for f in 1.000 1.004 0.997 1.002 0.999 1.001 1.080 1.083 1.078 1.081 1.079 1.082; do
	scale "$T/base.json" "$T/c$day.json" "$f"
	pge PROFGATE_TIME="$(printf '2024-05-%02dT06:00:00Z' "$day")" GITHUB_EVENT_NAME=schedule GITHUB_REF=refs/heads/main \
		GITHUB_RUN_ID="night-$day" GITHUB_SHA="$(printf '%040d' "$day")" \
		"$PROFGATE" gate -b "$T/base.json" -c "$T/c$day.json" --label bench --history "$T/r.git"
	grep -q "history: appended to" "$T/out" || fails=$((fails + 1))
	day=$((day + 1))
done
check "12 nightly gate --history runs appended 12 records" [ "$fails" -eq 0 ]
scale "$T/base.json" "$T/pr.json" 1.5
pge PROFGATE_TIME=2024-05-12T09:00:00Z GITHUB_EVENT_NAME=pull_request GITHUB_REF=refs/pull/7/merge \
	GITHUB_RUN_ID=pr-7 "$PROFGATE" gate -b "$T/base.json" -c "$T/pr.json" --label bench --history "$T/r.git"
check "a PR run (50% slower) appended too (exit 1)" eval '[ "$rc" -eq 1 ] && grep -q "history: appended" "$T/out"'
pge PROFGATE_TIME=2024-05-12T10:00:00Z GITHUB_EVENT_NAME=push GITHUB_REF=refs/heads/dev \
	GITHUB_RUN_ID=dev-1 "$PROFGATE" gate -b "$T/base.json" -c "$T/pr.json" --label bench \
	--history "$T/r.git" --kind main
check "a main-kind run on another branch appended" eval '[ "$rc" -eq 1 ] && grep -q "history: appended" "$T/out"'
pg history show --repo "$T/r.git" --json
cp "$T/out" "$T/all.jsonl"
jl "the history holds 14 records of one series" "$T/all.jsonl" \
	"len(r) == 14 and len({x['series'] for x in r}) == 1" \
	"sum(x['kind'] == 'nightly' for x in r) == 12 and 'breakdown.idle_share' in r[0]['metrics']"
series=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["series"])' "$T/all.jsonl")

# ---- history baseline ----
pg history baseline --repo "$T/r.git" --label bench --ref main -n 5 -o "$T/bl.json"
check "history baseline -n 5 -o: exit 0, one line naming the window" \
	eval '[ "$rc" -eq 0 ] && [ "$(lines "$T/out")" -eq 1 ] && grep -q "^history baseline: median of 5 records of $series (main, nightly on refs/heads/main), 2024-05-08T06:00:00Z .. 2024-05-12T06:00:00Z; skipped 1 pr record (--kind main,nightly,pr to include it), written to " "$T/out"'
jf "the baseline is a summary: one steady step per record, the records' medians" "$T/bl.json" \
	"j['schema'] == 'profgate.summary/1' and j['steps']['source'] == 'history-window'" \
	"[s['us'] for s in j['steps']['all']] == [x['metrics']['step.median_us'] for x in [json.loads(l) for l in open('$T/all.jsonl')] if x['kind'] == 'nightly'][-5:]" \
	"j['steps']['steady']['median_us'] == sorted(s['us'] for s in j['steps']['all'])[2]" \
	"[f['path'].split('#')[1] for f in j['source']['files']] == [x['record_id'] for x in [json.loads(l) for l in open('$T/all.jsonl')] if x['kind'] == 'nightly'][-5:]" \
	"j['identity']['device_kind'] == 'Tesla V100-SXM2-32GB' and len(j['families']) > 0"
pg history baseline --repo "$T/r.git" --series "$series"
jf "history baseline to stdout: the summary on stdout" "$T/out" "j['steps']['steady']['count'] == 5"
check "... and its line on stderr; without --ref the dev run is the newest" \
	eval '[ "$(lines "$T/err")" -eq 1 ] && grep -q "^profgate: history baseline: median of 5 records .*2024-05-12T10:00:00Z; skipped 1 pr record (--kind main,nightly,pr to include it)$" "$T/err"'
pg history baseline --repo "$T/r.git" --series "$series" --ref main -n 20 -o "$T/short.json"
check "history baseline -n 20: 12 records, the window is short" \
	eval '[ "$rc" -eq 0 ] && grep -q "median of 12 records .*; 12 of 20 asked for: the window is short" "$T/out"'
jf "a short window's summary carries the warning" "$T/short.json" \
	"[w['code'] for w in j['quality']['warnings']] == ['history-window-short'] if isinstance(j['quality'], dict) else 'history-window-short' in json.dumps(j['quality'])"
pg gate -b "$T/bl.json" -c "$T/c12.json" --label bench --json "$T/vfile.json"
jf "gate --baseline FILE takes the baseline summary: 5 step samples" "$T/vfile.json" \
	"j['step']['samples']['baseline'] == 5 and j['provenance']['result'] == 'comparable'"

# ---- gate --baseline history:main ----
scale "$T/base.json" "$T/slow.json" 1.25
pge PROFGATE_TIME=2024-05-13T06:00:00Z GITHUB_EVENT_NAME=schedule GITHUB_REF=refs/heads/main GITHUB_RUN_ID=night-13 \
	"$PROFGATE" gate -b history:main -c "$T/slow.json" --label bench --history "$T/r.git" \
	--json "$T/v.json" --report "$T/v.md"
check "gate --baseline history:main, 16% slower than the window: fail (exit 1)" \
	eval '[ "$rc" -eq 1 ] && grep -q "^profgate gate: fail (bench)" "$T/out"'
check "stdout says what the baseline was" \
	grep -q "^  baseline: history:main: median of 5 records of $series (main, nightly on refs/heads/main), 2024-05-08T06:00:00Z .. 2024-05-12T06:00:00Z; skipped 1 pr record (a history baseline takes main and nightly records; gate --history --kind main records one)$" "$T/out"
jf "the verdict JSON: the window (ref, kinds, series, 5 records), 5 vs 5 step samples" "$T/v.json" \
	"j['baseline']['path'] == 'history:main' and j['baseline']['sha256'] is None" \
	"j['baseline']['history']['ref'] == 'refs/heads/main' and j['baseline']['history']['kinds'] == ['main', 'nightly']" \
	"j['baseline']['history']['series'] == '$series' and j['baseline']['history']['requested'] == 5" \
	"[x['record_id'] for x in j['baseline']['history']['records']] == [x['record_id'] for x in [json.loads(l) for l in open('$T/all.jsonl')] if x['kind'] == 'nightly'][-5:]" \
	"j['step']['samples']['baseline'] == 5 and j['step']['baseline_median_us'] == json.load(open('$T/bl.json'))['steps']['steady']['median_us']" \
	"abs(j['step']['delta_share'] - (1.25 / 1.080 - 1)) < 0.002"
check "the report names the baseline" grep -q '^- baseline: `history:main`; 5 steady steps' "$T/v.md"
pg history show --repo "$T/r.git" --json
tail -n 1 "$T/out" >"$T/last.jsonl"
jl "the record appended: baseline kind history with the window" "$T/last.jsonl" \
	"r[0]['baseline']['kind'] == 'history' and r[0]['baseline']['path'] == 'history:main'" \
	"r[0]['baseline']['window'] == json.load(open('$T/v.json'))['baseline']['history']"
pge GITHUB_REF=refs/heads/main "$PROFGATE" gate -b 'history:main:50' -c "$T/c12.json" --label bench \
	--history "$T/r.git" --json "$T/v50.json"
check "history:main:50: the window is short, and stdout says so" \
	eval 'grep -q "^  baseline: history:main:50: median of 13 records .*; 13 of 50 asked for: the window is short" "$T/out"'
jf "... and the verdict JSON: 13 records, the short-window warning" "$T/v50.json" \
	"len(j['baseline']['history']['records']) == 13 and j['baseline']['history']['requested'] == 50" \
	"[q['code'] for q in j['quality']['baseline']] == ['history-window-short', 'runs-disturbed']" \
	"[x['step_median_us'] > 1.15 * j['step']['baseline_median_us'] for x in j['baseline']['run_list'] if x['set_aside']] == [True]"
pg gate -b 'history:*:3' -c "$T/c12.json" --label bench --history "$T/r.git" --json "$T/vany.json"
jf "history:*: runs of any branch, the dev run included" "$T/vany.json" \
	"j['baseline']['history']['ref'] is None and j['baseline']['history']['records'][-1]['time'] == '2024-05-13T06:00:00Z'"

# ---- bad inputs ----
pg gate -b history:release -c "$T/c12.json" --label bench --history "$T/r.git"
one_line "an empty window" 3 "gate: --baseline history:release: no main or nightly records of series '$series' from runs on refs/heads/release in profgate-history"
pg gate -b history:main -c "$T/c12.json" --label nobody --history "$T/r.git"
one_line "a candidate whose series has no records" 3 "no main or nightly records of series 'nobody-"
pg gate -b history:main:0 -c "$T/c12.json" --history "$T/r.git"
one_line "history:main:0" 2 "N '0' is not a whole number from 1 to 100"
pg gate -b history: -c "$T/c12.json" --history "$T/r.git"
one_line "history: without a branch" 2 "give the branch whose runs make the baseline"
pg gate -b history:main -c "$T/c12.json"
one_line "history:main without --history" 2 "give --history-from URL_OR_PATH (to read it only) or --history URL_OR_PATH (to append this run too)"
pg gate -b history:main -b "$T/c12.json" -c "$T/c12.json" --history "$T/r.git"
one_line "history:main and a file as --baseline" 2 "gate: --baseline history:main is a set of runs itself: give it alone"
pg gate -b "$T/c12.json" -b 'history:*' -c "$T/c12.json"
one_line "a file and history:* as --baseline, no --history" 2 "gate: --baseline history:* is a set of runs itself: give it alone"
pg history baseline --repo "$T/r.git" --series nope-00000000
one_line "history baseline of an unknown series" 3 "history baseline: no series 'nope-00000000' on profgate-history; nearest: "
pg history baseline --repo "$T/r.git" --label bench -n 101
one_line "history baseline -n 101" 2 "N '101' is not a whole number from 1 to 100"
pg history baseline --repo "$T/r.git" --label bench --kind weekly
one_line "history baseline --kind weekly" 2 "--kind 'weekly'"
pg history baseline --repo "$T/r.git" --series "$series" --branch nothing-yet
one_line "history baseline of a branch that does not exist" 3 "the branch 'nothing-yet' does not exist"
pg history baseline --repo "$T/r.git"
one_line "history baseline without a series" 2 "give --repo URL_OR_PATH and --series S or --label L"

# ---- a flat series under another label, by history append of real verdicts ----
day=1
for f in 1.000 1.003 0.998 1.002 0.997 1.001 1.004 0.999 1.002 0.998 1.003 1.000; do
	scale "$T/base.json" "$T/f$day.json" "$f"
	pg gate -b "$T/base.json" -c "$T/f$day.json" --label flat --json "$T/fv.json"
	pge PROFGATE_TIME="$(printf '2024-05-%02dT07:00:00Z' "$day")" GITHUB_RUN_ID="flat-$day" \
		"$PROFGATE" history append --repo "$T/r.git" --kind nightly "$T/fv.json"
	[ "$rc" -eq 0 ] || fails=$((fails + 1))
	day=$((day + 1))
done
check "12 records of a flat series appended" [ "$fails" -eq 0 ]

# ---- history trend ----
pg history trend --repo "$T/r.git" --thresholds "$TOP/thresholds/nightly.json" --format json -o "$T/t.json"
check "history trend --format json -o: exit 0, one line" \
	eval '[ "$rc" -eq 0 ] && grep -q "^history trend: 2 series, 1 flagged metric, written to " "$T/out"'
jf "profgate.trend/1: two series, main/nightly records only" "$T/t.json" \
	"j['schema'] == 'profgate.trend/1' and [s['label'] for s in j['series']] == ['bench', 'flat']" \
	"len(j['series'][0]['records']) == 14 and all(r['kind'] in ('main', 'nightly') for r in j['series'][0]['records'])" \
	"j['nightly_rule'] == {'thresholds': 'nightly', 'consecutive_violations': 2, 'limit': 'warn', 'baseline_records': 5}"
jf "the step change at day 7: its index, size and confidence" "$T/t.json" \
	"[m for m in j['series'][0]['metrics'] if m['name'] == 'step.median_us'][0]['unit'] == 'us'" \
	"[(c['time'], c['direction']) for c in [m for m in j['series'][0]['metrics'] if m['name'] == 'step.median_us'][0]['change_points']] == [('2024-05-07T06:00:00Z', 'regression')]" \
	"abs([m for m in j['series'][0]['metrics'] if m['name'] == 'step.median_us'][0]['change_points'][0]['delta_share'] - 0.08) < 0.005" \
	"[m for m in j['series'][0]['metrics'] if m['name'] == 'step.median_us'][0]['change_points'][0]['confidence'] >= 0.99" \
	"[m for m in j['series'][0]['metrics'] if m['name'] == 'step.median_us'][0]['values'][6] == json.loads(open('$T/all.jsonl').readlines()[6])['metrics']['step.median_us']"
jf "the nightly rule flags the step time (7 nightly runs in a row, the main run between not counted); the flat series has no change point" "$T/t.json" \
	"j['series'][0]['flagged'] == ['step.median_us']" \
	"[m for m in j['series'][0]['metrics'] if m['name'] == 'step.median_us'][0]['nightly']['runs'] == [{'first': 6, 'last': 13, 'records': 7, 'level': 'fail', 'ongoing': True}]" \
	"all(m['change_points'] == [] for m in j['series'][1]['metrics']) and j['series'][1]['flagged'] == []" \
	"j['series'][1]['metrics_tested'] > 10"
pg history trend --repo "$T/r.git" --thresholds "$TOP/thresholds/nightly.json" --format json
check "the same trend twice: the same bytes" cmp -s "$T/out" "$T/t.json"
pg history trend --repo "$T/r.git" --label bench --metric 'step.*' --thresholds "$TOP/thresholds/nightly.json"
cp "$T/out" "$T/t.md"
check "history trend (markdown): exit 0, a Mermaid xychart-beta chart of the step time" \
	eval '[ "$rc" -eq 0 ] && grep -q "^xychart-beta$" "$T/t.md" && grep -q "^    title \"step.median_us (ms)\"$" "$T/t.md"'
pycheck "every Mermaid block is closed and holds an x-axis and a line per chart" \
	'F = chr(96) * 3; t = open(sys.argv[1]).read(); blocks = [b.split(F)[0] for b in t.split(F + "mermaid\n")[1:]]' \
	"$T/t.md" "len(blocks) >= 1" "t.count(F) == 2 * len(blocks)" \
	"all(b.count('x-axis [') == 1 and 'line [' in b for b in blocks)"
check "the markdown: the change point row and the flag" \
	eval 'grep -q "^| \`step.median_us\` | .* | 2024-05-07 \`0000000…\`: .* (+8\.[0-9]%, confidence 0\.99[0-9]) | \*\*flagged\*\*: 7 in a row from 2024-05-07, ongoing" "$T/t.md" && grep -q "^\*\*Flagged\*\*" "$T/t.md"'
check "--metric 'step.*': step metrics only" eval '! grep -q "family\." "$T/t.md"'
printf '{"schema": "profgate.thresholds/1", "consecutive_violations": 10, "rules": [{"metric": "step.median_us", "direction": "lower", "warn": {"relative": 0.03}}]}\n' >"$T/k10.json"
pg history trend --repo "$T/r.git" --thresholds "$T/k10.json" --format json --fail-on-flag
jf "consecutive_violations 10 from the thresholds: 6 in a row is not flagged" "$T/out" \
	"j['nightly_rule']['consecutive_violations'] == 10 and j['series'][0]['flagged'] == []"
check "--fail-on-flag without a flag: exit 0" [ "$rc" -eq 0 ]
pg history trend --repo "$T/r.git" --thresholds "$TOP/thresholds/nightly.json" --fail-on-flag -o "$T/t2.md"
check "--fail-on-flag with a flag: exit 1, the report still written" eval '[ "$rc" -eq 1 ] && [ -s "$T/t2.md" ]'
pg history trend --repo "$T/r.git" --since 2024-05-10 --label flat --format json
jf "--since keeps the later records" "$T/out" "len(j['series'][0]['records']) == 3"
pg history trend --repo "$T/r.git" --series nope-00000000
one_line "history trend of an unknown series" 3 "history trend: no series 'nope-00000000' on profgate-history; nearest: "
pg history trend --repo "$T/r.git" --format xml
one_line "history trend --format xml" 2 "--format 'xml'"
pg history trend --repo "$T/r.git" -n 0
one_line "history trend -n 0" 2 "-n '0'"
printf '{"schema": "profgate.thresholds/1", "consecutive_violations": 0, "rules": []}\n' >"$T/k0.json"
pg history trend --repo "$T/r.git" --thresholds "$T/k0.json"
one_line "consecutive_violations 0 in a thresholds file" 2 "consecutive_violations: must be a whole number from 1 to 100"
pg history trend --repo "$T/r.git" --branch nothing-yet
check "history trend of a branch that does not exist: exit 0, a note, no records" \
	eval '[ "$rc" -eq 0 ] && has "$T/err" "no branch" && grep -q "^No records.$" "$T/out"'

# the planted step (8 % slower from day 7) at its first slower record in every output: the trend's
# markdown, its JSON (above), and the chart a gate with a history adds to its report
pg history trend --repo "$T/r.git" --label bench
check "history trend (markdown): the step's change point at day 7, the first slower record" \
	eval 'grep "step.median_us" "$T/out" | grep -q "2024-05-07 .0000000"'
pge PROFGATE_TIME=2024-05-13T06:00:00Z "$PROFGATE" gate -b "$T/base.json" -c "$T/c12.json" --label bench \
	--history "$T/r.git" --kind pr --report "$T/chart.md"
check "the gate's chart: the step changed at the record of day 7, the first of the new level" \
	grep -q "The step changed at the record of 2024-05-07T06:00:00Z (the first of the new level, record 7 of" "$T/chart.md"

done_testing
