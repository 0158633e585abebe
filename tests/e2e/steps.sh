#!/bin/sh
# Steps lines whose events lie apart from the device's ops (synthetic marin-style captures made
# by tests/e2e/lib/marin_steps.py, not recorded): a Steps event with no device work under it is a
# step without a time, never a 0 us steady step; a step's time is its own Steps event; the +22 %
# pair (135 -> 165 us per step) fails the gate; no output of any command prints nan or inf, and a
# 0 us steady median makes the step's verdict inconclusive with its reason.
. "$(dirname "$0")/lib/tap.sh"
# test-tier: full

TOP=$(cd "$(dirname "$0")/../.." && pwd)
GEN=$TOP/tests/e2e/lib/marin_steps.py

python3 "$GEN" 135 "$T/base.trace.json" && python3 "$GEN" 165 "$T/cand.trace.json"
pg summarize "$T/base.trace.json" -o "$T/base.json"
check "summarize the synthetic baseline: exit 0" [ "$rc" -eq 0 ]
pg summarize "$T/cand.trace.json" -o "$T/cand.json"
check "summarize the synthetic candidate: exit 0" [ "$rc" -eq 0 ]
pycheck "steps-line: no 0 us steady step; the eight steps without device work have no time" \
	'd = json.load(open(sys.argv[1])); st = d["steps"]["all"]; w = {x["code"]: x["message"] for x in d["quality"]["warnings"]}' \
	"$T/base.json" 'd["steps"]["source"] == "steps-line"' \
	'not [x for x in st if x["steady"] and not (x["us"] or 0) > 0]' \
	'[x["step"] for x in st if x["us"] is None] == list(range(8, 16))' \
	'not [x for x in st if x["us"] is None and x["steady"]]' \
	'all(x["device_us"] == [None] for x in st if x["step"] >= 8)' \
	'"steps-no-device-work" in w and "steps 8, 9, 10, 11, 12, 13, 14, 15" in w["steps-no-device-work"]' \
	'"steps-cut" not in w'
pycheck "a step's time is its own Steps event (135 us), not the 200 us tile to the next step" \
	'd = json.load(open(sys.argv[1]))' "$T/base.json" \
	'[x["us"] for x in d["steps"]["all"][:8]] == [135.0] * 8' \
	'd["steps"]["steady"]["median_us"] == 135.0'
pycheck "... the candidate's 165 us" 'd = json.load(open(sys.argv[1]))' "$T/cand.json" \
	'd["steps"]["steady"]["median_us"] == 165.0'
pg report "$T/base.json"
cp "$T/out" "$T/report.md"
check "the report names the steps without device work by their warning" \
	grep -q '8 without device work (`steps-no-device-work`)' "$T/out"
pg gate --baseline "$T/base.json" --candidate "$T/cand.json"
check "the +22 % pair (135 -> 165 us) fails the gate: exit 1, step.median_us +22.2%" \
	sh -c "[ $rc -eq 1 ] && grep -q '^profgate gate: fail' '$T/out' && grep -qE '^  fail +step.median_us \+22\.2%' '$T/out'"

# A hand-made summary whose steady median is 0 us: no relative change, never '+nan%'.
python3 - "$T/base.json" "$T/cand.json" "$T/zb.json" "$T/zc.json" <<'PY'
import json, sys
for src, dst in ((sys.argv[1], sys.argv[3]), (sys.argv[2], sys.argv[4])):
    d = json.load(open(src))
    d["steps"]["steady"]["median_us"] = 0
    json.dump(d, open(dst, "w"))
PY
pg gate --baseline "$T/zb.json" --candidate "$T/zc.json"
cp "$T/out" "$T/zgate.out"
check "a 0 us steady median: step.median_us inconclusive, with the reason" \
	sh -c "grep -q '(no relative change; ' '$T/out' &&
		grep -qE '^  inconclusive +step.median_us .*the baseline.s step time is 0: no step time to compare' '$T/out'"
pg compare "$T/zb.json" "$T/zc.json"
cp "$T/out" "$T/zcompare.out"
pg gate --baseline "$T/zb.json" --candidate "$T/zc.json" --json "$T/zgate.json" --report "$T/zgate.md"
pg gate --baseline "$T/base.json" --candidate "$T/cand.json" --report "$T/gate.md"

# every output above: no nan, no inf (a number printed from a 0 us division)
check "no output of summarize, report, gate or compare prints nan or inf" \
	sh -c "! grep -qiwE 'nan|[+-]?inf|infinity' '$T/base.json' '$T/cand.json' '$T/zgate.out' '$T/zcompare.out' '$T/zgate.json' '$T/zgate.md' '$T/gate.md' '$T/report.md'"
done_testing
