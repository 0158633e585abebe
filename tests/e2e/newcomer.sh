#!/bin/sh
# A newcomer's first hour at the terminal, on the two real Kineto traces of tests/data/examples
# (matmul 25 % slower) and the MI250 one:
#  1. '-' is standard input and output; an output that would overwrite an input (by device and
#     inode: the same file, a symlink to it, a profile of an input folder), or two outputs in
#     one place, are refused, exit 2, with nothing written; a signal leaves no spool behind; profgate's own outputs in a folder are skipped with a note, so
#     `summarize prof -o prof/summary.json` runs twice;
#  2. report takes a profile; compare prints the verdict lines (exit 0 on a fail) and writes JSON
#     with --json; a refusal (exit 4) goes to stderr with the differing fields in words;
#  3. thresholds by name in every command; gate --fail-on as the Action's fail_on;
#  4. one unit per metric kind (pp for shares, % for times) on the terminal as in the report, and
#     a change printed with the digits that show why it does or does not reach its limit.
set -u
. "$(dirname "$0")/lib/tap.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
EX=$TOP/tests/data/examples
BASE=$EX/baseline.rank-0.pt.trace.json.gz
CAND=$EX/candidate.rank-0.matmul-slower.pt.trace.json.gz
MI250=$EX/kineto_mi250_minitoy.pt.trace.json.gz
cd "$T" || exit 1

# ---- 1. standard input and output, overwrites, profgate's own outputs ----

cp "$BASE" t.json.gz
pg summarize t.json.gz -o t.json.gz
check "summarize t.json.gz -o t.json.gz: exit 2, one line, the profile intact" \
	eval '[ "$rc" -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "is the input" "$T/err" && cmp -s t.json.gz "$BASE"'
ln -s t.json.gz alias.json.gz
pg summarize alias.json.gz -o t.json.gz
check "... through a symlink (the same inode): refused too" \
	eval '[ "$rc" -eq 2 ] && cmp -s t.json.gz "$BASE"'

mkdir prof
cp "$BASE" prof/run.json.gz
pg summarize prof -o prof/summary.json
check "summarize prof -o prof/summary.json: exit 0" [ "$rc" -eq 0 ]
cp prof/summary.json first.json
pg summarize prof -o prof/summary.json
check "... a second time: exit 0, the same summary, a note that its own output was skipped" \
	eval '[ "$rc" -eq 0 ] && cmp -s prof/summary.json first.json && grep -q "note: skipped prof/summary.json: profgate.s own output (profgate.summary/1)" "$T/err"'
pg compare prof/summary.json prof/summary.json --json prof/verdict.json --report prof/report.json
cp prof/summary.json prof/renamed.json.gz
pg summarize prof -o prof/summary.json
check "... verdict JSON, a report and a summary under a profile's name are skipped by content" \
	eval '[ "$rc" -eq 0 ] && cmp -s prof/summary.json first.json && [ "$(grep -c "own output" "$T/err")" -eq 4 ]'
pg summarize prof -o prof/run.json.gz
check "-o onto a profile the input folder reads: exit 2 before anything is written" \
	eval '[ "$rc" -eq 2 ] && grep -q "a profile read from the input folder" "$T/err" && cmp -s prof/run.json.gz "$BASE"'
pg gate -b prof/summary.json -c "$CAND" --json prof/summary.json
check "gate --json onto its baseline: exit 2, the baseline intact" \
	eval '[ "$rc" -eq 2 ] && cmp -s prof/summary.json first.json'
pg gate -b "$BASE" -c "$CAND" --json two.out --report ./two.out
check "gate --json X --report ./X (one place): exit 2, one line naming both, nothing written" \
	eval '[ "$rc" -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "two outputs are .two.out. and .\./two.out." "$T/err" && [ ! -e two.out ]'

"$PROFGATE" summarize - <"$BASE" >stdin.json 2>"$T/err"
check "summarize - reads standard input and names the file '-'" \
	eval '[ $? -eq 0 ] && grep -q "\"path\": \"-\"" stdin.json'
"$PROFGATE" summarize "$BASE" | "$PROFGATE" report - >piped.md 2>"$T/err"
check "summarize X | report -: the report" eval '[ $? -eq 0 ] && grep -q "^# profgate report" piped.md'
"$PROFGATE" compare "$BASE" - --json - <"$CAND" >stdin-v.json 2>"$T/err"
check "compare BASE - reads the candidate from standard input" \
	eval '[ $? -eq 0 ] && grep -q "\"verdict\": \"fail\"" stdin-v.json'
XP=${PG_CORPUS:-$TOP/../shared/corpus}/AMD-AGI__TraceLens/jax08_attention_tw003.xplane.pb
if [ -f "$XP" ]; then
	"$PROFGATE" summarize - <"$XP" >xp-stdin.json 2>"$T/err"
	"$PROFGATE" summarize "$XP" >xp-file.json 2>>"$T/err"
	check "an XPlane on standard input: the summary of the file, but for its path" \
		eval '[ "$(grep -v "\"path\": " xp-stdin.json)" = "$(grep -v "\"path\": " xp-file.json)" ] && [ -s xp-file.json ]'
else
	skip "corpus absent: an XPlane on standard input"
fi
"$PROFGATE" inspect - <"$BASE" >inspect.txt 2>"$T/err"
check "inspect - reads standard input, the file named '-'" \
	eval '[ $? -eq 0 ] && head -1 inspect.txt | grep -qx -- - && grep -q "dialect kineto" inspect.txt'
pg compare - - --json -
check "'-' twice: exit 2" [ "$rc" -eq 2 ]

# a command ended by a signal while it reads standard input leaves no spool behind
mkdir spool-tmp
mkfifo spool-fifo
(TMPDIR=$T/spool-tmp exec "$PROFGATE" summarize - <spool-fifo >/dev/null 2>/dev/null) &
spool_pid=$!
exec 3>spool-fifo
# more than the first 64 KiB chunk, so the spool file exists beside its folder
gzip -dc "$BASE" | head -c 100000 >&3
for _ in 1 2 3 4 5 6 7 8 9 10; do
	[ -e "$(ls -d spool-tmp/profgate-*/standard-input 2>/dev/null | head -1)" ] && break
	sleep 0.2
done
spooled=$(ls spool-tmp/profgate-*/standard-input 2>/dev/null | wc -l)
kill -TERM "$spool_pid"
wait "$spool_pid"
spool_rc=$?
exec 3>&-
check "summarize - ended by SIGTERM mid-read: exit 143, its spool (file and folder) removed" \
	eval '[ "$spooled" -eq 1 ] && [ "$spool_rc" -eq 143 ] && [ -z "$(ls -A spool-tmp)" ]'

# ---- 2. report on a profile; compare for a person; refusals on stderr ----

pg summarize "$BASE" -o base.json
pg report base.json -o from-summary.md
pg report "$BASE" -o from-profile.md
# the same report but for shares the summary JSON rounds to four decimals
check "report of a profile: the report of its summary (summarized first)" \
	eval '[ "$rc" -eq 0 ] && [ "$(head -20 from-profile.md)" = "$(head -20 from-summary.md)" ] && grep -q "baseline.rank-0.pt.trace.json.gz" from-profile.md'

pg compare "$BASE" "$CAND"
check "compare prints the verdict lines, not JSON, and exits 0 on a fail" \
	eval '[ "$rc" -eq 0 ] && head -1 "$T/out" | grep -q "^profgate compare: fail" && grep -q "^  fail  *family.matmul.us_per_step" "$T/out" && ! grep -q "profgate.verdict/1" "$T/out"'
pg compare "$BASE" "$CAND" --json v.json
check "compare --json FILE writes the verdict JSON and says where" \
	eval '[ "$rc" -eq 0 ] && grep -q "\"schema\": \"profgate.verdict/1\"" v.json && grep -q "verdict JSON: v.json" "$T/out"'
pg compare "$BASE" "$CAND" -o v-old.json
check "compare -o FILE (the older spelling) writes the same JSON" eval '[ "$rc" -eq 0 ] && cmp -s v.json v-old.json'

for cmd in compare gate; do
	if [ $cmd = compare ]; then pg compare "$BASE" "$MI250" --json -; else pg gate -b "$BASE" -c "$MI250" --json -; fi
	check "$cmd refuses V100 vs MI250 (exit 4) with the JSON on stdout: stderr says why, each field in words" \
		eval '[ "$rc" -eq 4 ] && [ "$(grep -c "refused" "$T/err")" -eq 1 ] && grep -q "^profgate: $cmd: refused (incomparable): " "$T/err" && grep -q "^  device_kind: baseline .Tesla V100-SXM2-32GB. vs candidate .AMD Radeon Graphics.$" "$T/err"'
done

# ---- 3. thresholds by name; --fail-on ----

pg gate -b base.json -c "$CAND" -t strict --json strict.json
check "gate -t strict: the shipped set by name" \
	eval '[ "$rc" -eq 1 ] && grep -q "\"name\": \"strict\"" strict.json'
pg compare base.json "$CAND" -t nightly --json nightly.json
check "compare -t nightly: the shipped set (matmul +25% is a warn there)" \
	eval '[ "$rc" -eq 0 ] && grep -q "\"verdict\": \"warn\"" nightly.json'
pg gate -b base.json -c "$CAND" -t lenient
check "an unknown name: exit 2, the known names listed" \
	eval '[ "$rc" -eq 2 ] && grep -q "known: default, nightly, strict" "$T/err"'
git init -q --bare h.git
pg history trend --repo h.git -t nightly
check "history trend -t nightly: accepted (exit 0, an empty history)" [ "$rc" -eq 0 ]
pg history baseline --repo h.git --label x -t nosuch
check "history baseline -t nosuch: exit 2 naming the known sets" \
	eval '[ "$rc" -eq 2 ] && grep -q "known: default" "$T/err"'

pg gate -b base.json -c "$CAND" -t nightly
check "gate on a warn: exit 0 by default" [ "$rc" -eq 0 ]
pg gate -b base.json -c "$CAND" -t nightly --fail-on warn
check "gate --fail-on warn on a warn: exit 1" [ "$rc" -eq 1 ]
pg gate -b base.json -c "$CAND" --fail-on never
check "gate --fail-on never on a fail: exit 0, the verdict still printed" \
	eval '[ "$rc" -eq 0 ] && grep -q "^profgate gate: fail" "$T/out"'
pg gate -b base.json -c "$CAND" --fail-on sometimes
check "gate --fail-on sometimes: exit 2" [ "$rc" -eq 2 ]

# ---- 4. units and digits ----

# compute_share judged with a tiny noise prior, so that its +0.14 pp warns and is printed; the
# family limit put between the exact matmul change (0.250001 to six decimals) and its
# one-decimal print
python3 - "$TOP/thresholds/default.json" units.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["rules"].insert(0, {"metric": "breakdown.compute_share", "direction": "lower",
                      "warn": {"absolute": 0.001}, "noise": {"absolute": 1e-9}})
for r in d["rules"]:
    if r["metric"] == "family.*.us_per_step":
        r["fail"] = {"relative": 0.2500003}
json.dump(d, open(sys.argv[2], "w"))
PY
pg gate -b base.json -c "$CAND" -t units.json --report units.md --json units-v.json
check "a share on the terminal in percentage points, as in the report" \
	eval 'grep -q "^  warn  *breakdown.compute_share +0.1 pp" "$T/out" && grep -q "breakdown.compute_share. | .* | +0.1 pp |" units.md'
pycheck "a change just past its limit is printed with the digits that show it (terminal and report)" '
import re
verdict = {m["name"]: m["verdict"] for m in json.load(open("units-v.json"))["metrics"]}
line = [l for l in open(sys.argv[1]) if "family.matmul.us_per_step" in l][0]
shown = float(re.search(r"family.matmul.us_per_step ([+-][0-9.]+)%", line).group(1))
row = [l for l in open("units.md") if "`family.matmul.us_per_step`" in l and "fail +" in l][0]
cell = float(re.search(r"\| ([+-][0-9.]+)% \(", row).group(1))
limit = float(re.search(r"fail \+([0-9.]+)%", row).group(1))
' "$T/out" 'verdict["family.matmul.us_per_step"] == "fail"' 'limit == 25.00003' \
	'shown >= limit' 'cell >= limit'

done_testing
