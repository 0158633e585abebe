#!/bin/sh
# The history for local use, against real git (a local bare repository): after one local gate
# (a manual record) `history trend` and `history baseline` say which kinds they used and how many
# records of other kinds they skipped; a series is named by its label or a unique prefix, an
# ambiguous prefix lists the candidates and an unknown name the nearest series; `gate --baseline
# history:...` reads with --history-from and appends nothing. Then the claim of docs/history.md
# "Trends" on how many records after a clean step change `history trend` needs: the numbers are
# read from the page and checked on generated series.
set -u
. "$(dirname "$0")/lib/tap.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
EX=$TOP/tests/data/examples

local_env

commits() {
	git -C "$T/r.git" rev-list --count profgate-history 2>/dev/null || echo 0
}

R=$T/r.git
git init -q --bare "$R"
pg summarize "$EX"/baseline.*.pt.trace.json.gz -o "$T/base.json"
pg gate -b "$T/base.json" -c "$EX"/candidate.*.pt.trace.json.gz --label nightly-bench --history "$R"
check "one local gate appends a manual record" eval '[ "$rc" -eq 1 ] && [ "$(commits)" -eq 1 ]'
series=$(git -C "$R" ls-tree --name-only profgate-history)
check "its series carries a hash: $series" eval 'expr "$series" : "nightly-bench-[0-9a-f]\{8\}$" >/dev/null'

# ---- kinds: used and skipped ----
pg history trend --repo "$R"
check "trend of manual records only: exit 0, no records in the trend" \
	eval '[ "$rc" -eq 0 ] && grep -q "^No records.$" "$T/out"'
one_line "... and says why and how to include them" 0 \
	"history trend: used no main or nightly records; skipped 1 manual record (--kind main,nightly,manual to include it)"
pg history trend --repo "$R" --kind manual,pr
one_line "trend --kind manual,pr says what it used" 0 "history trend: used 1 manual record"
check "... and the trend holds the series" has "$T/out" "$series"
pg history baseline --repo "$R" --series "$series"
one_line "baseline of manual records only: exit 3, the skipped record named" 3 \
	"no main or nightly records of series '$series' in profgate-history; skipped 1 manual record (--kind main,nightly,manual to include it)"

# ---- series by label, prefix; ambiguous; nearest ----
pg history trend --repo "$R" --series nightly-bench --kind manual
check "--series LABEL finds the series of that label" \
	eval '[ "$rc" -eq 0 ] && has "$T/out" "$series"'
pg history trend --repo "$R" --series nightly-be --kind manual --format json
check "--series PREFIX finds it, and the JSON names the series itself" \
	eval '[ "$rc" -eq 0 ] && grep -q "\"series\": *\"$series\"" "$T/out"'
pg history baseline --repo "$R" --series nightly-bench --kind manual -o "$T/hb.json"
check "history baseline --series LABEL" \
	eval '[ "$rc" -eq 0 ] && grep -q "^history baseline: median of 1 record of $series (manual)" "$T/out"'
pg gate -b "$T/base.json" -c "$EX"/candidate.*.pt.trace.json.gz --label nightly-probe --history "$R"
pg history trend --repo "$R" --series nightly --kind manual
one_line "an ambiguous prefix lists the candidates" 2 \
	"history trend: --series 'nightly' names 2 series: nightly-bench-"
check "... both of them" eval 'has "$T/err" "(label nightly-bench), nightly-probe-"'
pg history show --repo "$R" --series nightly-bnech
one_line "an unknown name lists the nearest series" 3 \
	"history show: no series 'nightly-bnech' on profgate-history; nearest: $series (label nightly-bench), nightly-probe-"
pg history show --repo "$R" --series nightly-probe
check "history show --series LABEL: the one record" \
	eval '[ "$rc" -eq 0 ] && [ "$(lines "$T/out")" -eq 2 ] && has "$T/out" nightly-probe-'

# ---- reading a history baseline never appends ----
n=$(commits)
pg gate -b 'history:*' -c "$EX"/candidate.*.pt.trace.json.gz --label nightly-bench --history-from "$R"
one_line "gate -b history:* --history-from: no main records, the manual one named" 3 \
	"skipped 1 manual record (a history baseline takes main and nightly records; gate --history --kind main records one)"
# gated against the other run: a gate of a run against its own bytes is refused and its record
# holds no numbers, which no window takes
pg gate -b "$EX"/candidate.*.pt.trace.json.gz -c "$T/base.json" --label nightly-bench --history "$R" --kind main
check "gate --history --kind main records a baseline run" [ "$(commits)" -eq $((n + 1)) ]
n=$(commits)
pg gate -b 'history:*' -c "$EX"/candidate.*.pt.trace.json.gz --label nightly-bench --history-from "$R"
check "gate -b history:* --history-from: a verdict against the main record" \
	eval '[ "$rc" -le 1 ] && grep -q "^  baseline: history:\*: median of 1 record of $series (main, nightly)" "$T/out"'
check "... and nothing appended" [ "$(commits)" -eq "$n" ]
check "... nor said to be" eval '! grep -q "history: appended" "$T/out"'
pg gate -b 'history:*' -c "$EX"/candidate.*.pt.trace.json.gz --label nightly-bench
one_line "gate -b history:* without a remote names both options" 2 \
	"give --history-from URL_OR_PATH (to read it only) or --history URL_OR_PATH (to append this run too)"
pg gate -b "$T/base.json" -c "$T/base.json" --history-branch x
one_line "--history-branch alone is refused" 2 "--history-branch goes with --history"

# ---- the trend claim of docs/history.md ----
# "a clean step change shows once A records after it exist when P to P2 records precede it (B
# after Q to R before; C after D to E before)": read them from the page.
claim=$(tr '\n' ' ' <"$TOP/docs/history.md" | sed 's/  */ /g' |
	sed -n 's/.*a clean step change shows once \([0-9]*\) records after it exist when \([0-9]*\) to \([0-9]*\) records precede it (\([0-9]*\) after \([0-9]*\) to \([0-9]*\) before; \([0-9]*\) after \([0-9]*\) to \([0-9]*\) before).*/\1 \2 \3 \4 \5 \6 \7 \8 \9/p')
check "docs/history.md states the trend claim: '$claim'" [ -n "$claim" ]
# shape B K NAME: a series NAME of B flat records then K records 5% slower, per-metric noise of
# 0.5% (fixed seed), kind nightly, made from the first record of the branch (a gate with metrics).
git -C "$R" show "profgate-history:$series/$(git -C "$R" ls-tree --name-only "profgate-history:$series")" |
	head -n 1 >"$T/tmpl.json"
git init -q "$T/w"
shape() {
	python3 - "$T/tmpl.json" "$T/w" "$@" <<'EOF'
import datetime, hashlib, json, os, random, sys
tmpl = json.loads(open(sys.argv[1]).read())
wt, b, k, name = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
rng = random.Random(name)
os.makedirs(os.path.join(wt, name))
t0 = datetime.datetime(2024, 5, 1)
for i in range(b + k):
    t = t0 + datetime.timedelta(hours=i)
    r = dict(tmpl, series=name, kind='nightly', time=t.strftime('%Y-%m-%dT%H:00:00Z'),
             record_id=hashlib.md5(('%s-%d' % (name, i)).encode()).hexdigest())
    step = 1.05 if i >= b else 1.0
    r['metrics'] = {m: round(v * step * (1 + rng.gauss(0, 0.005)), 3) if m.endswith('_us') or m.endswith('us_per_step') else v
                    for m, v in tmpl['metrics'].items()}
    with open(os.path.join(wt, name, t.strftime('%Y-%m') + '.jsonl'), 'a') as f:
        f.write(json.dumps(r, separators=(',', ':')) + '\n')
EOF
}
# needed BEFORE: the records after the step the claim gives for that many before
needed() {
	if [ "$1" -lt "$p" ]; then
		echo "$b"
	elif [ "$1" -le "$p2" ]; then
		echo "$a"
	else
		echo "$c"
	fi
}
if [ -n "$claim" ]; then
	set -- $claim
	a=$1 p=$2 p2=$3 b=$4 q=$5 r2=$6 c=$7 d=$8 e=$9
	for before in "$p" "$p2" "$q" "$r2" "$d" "$e"; do
		after=$(needed "$before")
		shape "$before" $((after - 1)) "claim-$before-short"
		shape "$before" "$after" "claim-$before-enough"
	done
	git init -q --bare "$T/claim.git"
	(cd "$T/w" && git checkout -q --orphan profgate-history && git add -A &&
		git -c user.name=t -c user.email=t@t commit -qm claim &&
		git push -q "$T/claim.git" profgate-history)
	pg history trend --repo "$T/claim.git" --format json
	for before in "$p" "$p2" "$q" "$r2" "$d" "$e"; do
		after=$(needed "$before")
		pycheck "a +5% step after $before records: reported at $after records after it, not at $((after - 1))" \
			'j = json.load(open(sys.argv[1])); cp = {s["series"]: [c["index"] for m in s["metrics"] if m["name"] == "step.median_us" for c in m["change_points"]] for s in j["series"]}' \
			"$T/out" "cp['claim-$before-enough'] != []" "cp['claim-$before-short'] == []"
	done
fi

done_testing
