#!/bin/sh
# history dashboard end to end: a history made by real `history append` runs into a local bare
# repository (a series 12% slower from its 26th nightly record, with fail and warn verdicts and PR
# records beside, its first record a first night's `recorded`, judged against nothing; a series whose label, op name, repository, commit and run id are hostile; a
# series too short to test), written as a site by `history dashboard`, then checked: the data of
# each page is the bytes `history trend --series S --format json` writes, the change point is at
# the record where it was put, with its commit; hostile text appears only escaped; the same
# history gives the same bytes; bad options exit 2 with one line. Then, when Debian's chromium
# and npm are here, the site is opened in headless Chromium through playwright-core (installed
# on demand into build/browser) from file:// and from a folder served on loopback
# (tests/e2e/browser/dashboard.mjs): no console error, a point per record, the change points and
# fail marks where the history says (none on a recorded record, drawn neutral), the links right,
# nothing injected.
# PG_DASHBOARD_SCREENSHOT=FILE saves a screenshot of the first page there (docs/dashboard.png).
set -u
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/serve.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
local_env
serve_begin
SERVER=https://github.example.com

# ---- the history: records appended by profgate itself ----
git init -q --bare "$T/h.git"
cat >"$T/gen.py" <<'EOF'
import hashlib, json, os, re, sys, datetime
tpl, out, server = sys.argv[1], sys.argv[2], sys.argv[3]
base = json.loads(open(tpl).readline())
T0 = datetime.datetime(2024, 3, 1, 6, 0, 0)

def series_of(label):
    slug = re.sub(r"[^a-z0-9_]+", "-", label.lower()).strip("-")
    return "%s-%s" % (slug, hashlib.sha256(("label=%s\n" % label).encode()).hexdigest()[:8])

def noise(key):
    return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF - 0.5

HOSTILE_LABEL = ('<img src=x onerror="window.__pwned=1">\'"&</script>'
                 '<script>window.__pwned=2</script> @everyone \u202e')
HOSTILE_OP = 'op.<script>window.__pwned=3</script><img src=x onerror=window.__pwned=4>.us_per_step'
files, links, n = {}, {}, 0

def record(label, day, kind, factor, verdict, repo, sha, run, pr, extra=None):
    global n
    r = json.loads(json.dumps(base))
    r["label"], r["series"], r["kind"], r["verdict"] = label, series_of(label), kind, verdict
    r["exit_code"] = {"pass": 0, "warn": 0, "fail": 1, "recorded": 0}[verdict]
    when = T0 + datetime.timedelta(days=day, hours=12 if kind == "pr" else 0)
    r["time"] = when.strftime("%Y-%m-%dT%H:%M:%SZ")
    r["record_id"] = hashlib.sha256(("%s/%s/%d" % (label, kind, day)).encode()).hexdigest()[:32]
    r["repo"], r["sha"], r["run_id"], r["pr"] = repo, sha, run, pr
    r["ref"] = "refs/pull/%d/merge" % pr if pr else "refs/heads/main"
    for k, v in list(r["metrics"].items()):
        if k.endswith("_us") or k.endswith(".us_per_step"):
            r["metrics"][k] = round(v * factor * (1 + 0.004 * noise("%s/%s/%d" % (k, label, day))), 3)
    r["metrics"].update(extra or {})
    n += 1
    with open(os.path.join(out, "%03d.json" % n), "w") as f:
        json.dump(r, f)
    return r

def link(repo, sha, run, pr):
    ok = re.fullmatch(r"[A-Za-z0-9._-]+/[A-Za-z0-9._-]+", repo or "") is not None
    base = server + "/" + repo if ok else None
    return (base + "/commit/" + sha if base and re.fullmatch("[0-9a-f]{7,64}", sha or "") else None,
            base + "/pull/%d" % pr if base and pr else None,
            base + "/actions/runs/" + run if base and re.fullmatch("[0-9]+", run or "") else None)

def page(series):
    if re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,119}", series):
        return series
    return "series-" + hashlib.sha256(series.encode()).hexdigest()[:16]

def add(label, days, step, pr_every=0, hostile=False):
    s = series_of(label)
    files[s] = page(s)
    L = links.setdefault(s, {"commit": [], "pr": [], "run": []})
    for d in range(days):
        verdict = "recorded" if d == 0 else "fail" if d in (25, 26) and step else "warn" if d == 30 and step else "pass"
        factor = 1.12 if step and d >= 25 else 1.0
        if hostile:
            repo, sha, run = 'evil/"><script>window.__pwned=5</script>', "javascript:window.__pwned=6", "1 onclick=x"
        else:
            repo, sha, run = "acme/train", hashlib.sha1(("%s/%d" % (label, d)).encode()).hexdigest(), str(9000 + d)
        record(label, d, "nightly", factor, verdict, repo, sha, run, None,
               {HOSTILE_OP: 500.0 + d} if hostile else None)
        for k, v in zip(("commit", "pr", "run"), link(repo, sha, run, None)):
            L[k].append(v)
        if pr_every and d % pr_every == 3:
            record(label, d, "pr", factor, "pass", "acme/train",
                   hashlib.sha1(("pr %s/%d" % (label, d)).encode()).hexdigest(), str(7000 + d), 100 + d)

add("nightly resnet", 40, True, pr_every=10)
add(HOSTILE_LABEL, 12, False, hostile=True)
add("short run", 3, False)
json.dump({"files": files, "links": links, "step": series_of("nightly resnet"),
           "hostile": series_of(HOSTILE_LABEL), "short": series_of("short run")},
          open(os.path.join(out, "meta.json"), "w"))
EOF
mkdir -p "$T/rec"
python3 "$T/gen.py" "$TOP/tests/bench/history_record.jsonl" "$T/rec" "$SERVER"
appended=0
for f in "$T"/rec/[0-9]*.json; do
	pg history append "$f" --repo "$T/h.git"
	[ "$rc" -eq 0 ] && appended=$((appended + 1))
done
check "the history: 59 records appended" [ "$appended" -eq 59 ]
meta=$T/rec/meta.json
STEP=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["step"])' "$meta")
HOSTILE=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hostile"])' "$meta")

# ---- the site ----
pg history dashboard --repo "$T/h.git" -o "$T/site" --server-url "$SERVER"
if [ "$rc" -eq 0 ] && grep -q '^history dashboard: 3 series, 55 records, written to ' "$T/out"; then
	ok "dashboard: 3 series, 55 main/nightly records"
else
	not_ok "dashboard: exit $rc"
	diag_file "$T/err"
	diag_file "$T/out"
fi
check "dashboard: index, a page and a data script per series, the assets" \
	test -f "$T/site/index.html" -a -f "$T/site/s/$STEP.html" -a -f "$T/site/data/$STEP.js" \
	-a -f "$T/site/assets/uPlot.iife.min.js" -a -f "$T/site/assets/uPlot.min.css" \
	-a -f "$T/site/assets/uPlot.LICENSE" -a -f "$T/site/assets/dashboard.js"
pg history trend --repo "$T/h.git" --format json -o "$T/trend.json"
for s in "$STEP" "$HOSTILE"; do
	timeout 60 "$PROFGATE" history trend --repo "$T/h.git" --series "$s" --format json >"$T/t-$s.json"
done
pycheck "dashboard: each page's data is the trend of its series, byte for byte" '
import re
meta = json.load(open(sys.argv[1]))
T = sys.argv[1].rsplit("/rec/", 1)[0]
def data(s):
    text = open(T + "/site/data/" + meta["files"][s] + ".js").read()
    head = "profgateDashboard.series("
    body = text[text.index(head) + len(head):]
    trend, links = body[:body.rindex(",{")], body[body.rindex(",{") + 1:body.rindex(");")]
    return trend, json.loads(links)
step, step_links = data(meta["step"])
hostile, hostile_links = data(meta["hostile"])
want_step = open(T + "/t-" + meta["step"] + ".json").read()
want_hostile = open(T + "/t-" + meta["hostile"] + ".json").read()
cps = [c for m in json.loads(step)["series"][0]["metrics"] if m["name"] == "step.median_us"
       for c in m["change_points"]]
recs = json.loads(step)["series"][0]["records"]
' "$meta" \
	'step == want_step' 'hostile == want_hostile' \
	'[c["index"] for c in cps] == [25]' \
	'cps[0]["sha"] == recs[25]["sha"] and recs[25]["verdict"] == "fail"' \
	'0.10 < cps[0]["delta_share"] < 0.14' \
	'[step_links["server"] + "/" + r + "/commit/" + c if r and c else None for r, c in zip(step_links["repo"], step_links["commit"])] == meta["links"][meta["step"]]["commit"]' \
	'hostile_links["repo"] == [None] * 12 and hostile_links["commit"] == [None] * 12' \
	'hostile_links["run"] == [None] * 12'

# hostile text: escaped in the HTML, never raw
pycheck "dashboard: hostile names only escaped in the HTML" '
T = sys.argv[1].rsplit("/rec/", 1)[0]
meta = json.load(open(sys.argv[1]))
pages = [open(T + "/site/index.html").read()] + [open(T + "/site/s/" + f + ".html").read()
                                                  for f in meta["files"].values()]
html = "\n".join(pages)
' "$meta" \
	'"window.__pwned" not in html.replace("onerror=&quot;window.__pwned", "").replace("&lt;script&gt;window.__pwned", "")' \
	'"<img" not in html and "onerror=\"" not in html' \
	'html.count("<script") == 3 * 3' \
	'"&lt;img src=x onerror=&quot;window.__pwned=1&quot;&gt;&#39;&quot;&amp;&lt;/script&gt;" in html' \
	'"\u202e" not in html'

pg history dashboard --repo "$T/h.git" -o "$T/site2" --server-url "$SERVER"
check "dashboard: the same history gives the same bytes" diff -r "$T/site" "$T/site2"

pg history dashboard --repo "$T/h.git" -o "$T/site-pr" --kind pr,main,nightly
check "dashboard --kind pr,main,nightly: the PR records charted too" \
	grep -q '^history dashboard: 3 series, 59 records' "$T/out"

git init -q --bare "$T/empty.git"
pg history dashboard --repo "$T/empty.git" -o "$T/empty-site"
check "dashboard of a branch not there yet: an index saying so, exit 0, a note" \
	eval '[ "$rc" -eq 0 ] && grep -q "No records yet" "$T/empty-site/index.html" &&
		grep -q "no branch .profgate-history." "$T/err"'

# ---- bad options: one line, a documented exit code ----
one() {
	if [ "$rc" -eq "$2" ] && [ "$(lines "$T/err")" -eq 1 ] && grep -q '^profgate: ' "$T/err"; then
		ok "$1: exit $2, one line"
	else
		not_ok "$1: exit $rc"
		diag_file "$T/err"
	fi
}
pg history dashboard --repo "$T/h.git" -o "$T/x" --server-url 'javascript:alert(1)//'
one "dashboard --server-url javascript:" 2
pg history dashboard --repo "$T/h.git" -o "$T/x" --server-url 'https://a.example/"><b>'
one "dashboard --server-url with a quote" 2
pg history dashboard --repo "$T/h.git"
one "dashboard without -o" 2
pg history dashboard --repo "$T/h.git" -o "$T/x" --series nope-00000000
one "dashboard --series unknown" 3
check "dashboard: nothing written for a refused run" test ! -e "$T/x"
: >"$T/file"
pg history dashboard --repo "$T/h.git" -o "$T/file/site"
one "dashboard -o under a file" 3

# ---- the gate's chart of the series' recent records, and the action's dashboard input ----
EX=$TOP/tests/data/examples
BASE=$EX/baseline.rank-0.pt.trace.json.gz
CAND=$EX/candidate.rank-0.matmul-slower.pt.trace.json.gz
git init -q --bare "$T/g.git"
for day in 01 02 03; do
	GITHUB_RUN_ID=10$day PROFGATE_TIME=2024-05-${day}T03:00:00Z pg gate --baseline "$BASE" --candidate "$CAND" \
		--label "matmul bench" --history "$T/g.git" --kind nightly --report "$T/r$day.md"
done
check "gate --history: the first report has no chart (no records yet)" \
	eval '! grep -q xychart-beta "$T/r01.md"'
GITHUB_RUN_ID=1004 PROFGATE_TIME=2024-05-04T03:00:00Z pg gate --baseline "$BASE" --candidate "$CAND" \
	--label "matmul bench" --history "$T/g.git" --kind pr \
	--dashboard-url https://o.github.io/r --report "$T/r04.md"
pycheck "gate --history --dashboard-url: the chart of 3 records and this run, linked" '
import re
md = open(sys.argv[1]).read()
chart = md[md.index("```mermaid"):]
chart = chart[:chart.index("```\n", 10)]
lines = chart.split("\n")
xs = [l for l in lines if l.strip().startswith("x-axis")][0]
ys = [l for l in lines if l.strip().startswith("line")][0]
marker = md.index("<!--")
' "$T/r04.md" \
	'"xychart-beta" in chart and "matmul bench: step median" in chart' \
	'xs.strip() == "x-axis [\"05-01\", \"05-02\", \"05-03\", \"this run\"]"' \
	'len(json.loads(ys.strip()[len("line "):])) == 4' \
	're.search(r"\]\(https://o\.github\.io/r/s/matmul-bench-[0-9a-f]{8}\.html\)", md) is not None' \
	'md.index("```mermaid") < marker'
pg gate --baseline "$BASE" --candidate "$CAND" --history "$T/g.git" --dashboard-url 'javascript:x'
one "gate --dashboard-url javascript:" 2

if python3 -c 'import yaml' 2>/dev/null; then
	WS=$T/ws
	mkdir -p "$WS" "$T/files"
	echo '{}' >"$T/files/event.json"
	ENV=$(
		cat <<JSON
{"GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_REPOSITORY": "o/r", "GITHUB_EVENT_NAME": "schedule",
 "GITHUB_EVENT_PATH": "$T/files/event.json", "GITHUB_SHA": "4444444444444444444444444444444444444444",
 "GITHUB_REF": "refs/heads/main", "GITHUB_RUN_ID": "901", "GITHUB_RUN_ATTEMPT": "1",
 "GITHUB_SERVER_URL": "https://github.example", "GITHUB_WORKSPACE": "$WS",
 "GITHUB_OUTPUT": "$T/files/output", "GITHUB_STEP_SUMMARY": "$T/files/summary", "HOME": "$T/home",
 "PROFGATE_CACHE_DIR": "$T/cache", "PROFGATE_TIME": "2024-05-05T03:00:00Z", "__github_token": "t"}
JSON
	)
	WITH="{\"baseline\": \"$BASE\", \"candidate\": \"$CAND\", \"label\": \"matmul bench\",
	 \"history\": \"$T/g.git\", \"comment\": \"never\", \"fail_on\": \"never\", \"dashboard\": \"site\",
	 \"dashboard_url\": \"https://o.github.io/r\"}"
	timeout 120 python3 "$TOP/tests/e2e/lib/run_action.py" "$PROFGATE" "$TOP/action.yml" "$T/out" \
		"$T/err" "$WITH" "$ENV"
	rc=$?
	pycheck "action dashboard input: the site written after the append, the summary's chart linked" '
import os, glob
ws = sys.argv[1]
summary = open(os.path.dirname(ws) + "/files/summary").read()
out = open(os.path.dirname(ws) + "/out").read()
index = open(ws + "/site/index.html").read()
data = glob.glob(ws + "/site/data/matmul-bench-*.js")
' "$WS" \
		"os.path.exists(ws + \"/site/assets/uPlot.iife.min.js\")" \
		'len(data) == 1 and "\"records\"" in open(data[0]).read()' \
		'open(data[0]).read().count("\"time\": \"2024-05-05T03:00:00Z\"") == 1' \
		'"::group::profgate: dashboard" in out and "history dashboard: 1 series, 4 records" in out' \
		'"xychart-beta" in summary and "https://o.github.io/r/s/matmul-bench-" in summary'
	[ "$rc" -eq 0 ] || diag_file "$T/err"
	WITH2="{\"baseline\": \"$BASE\", \"candidate\": \"$CAND\", \"dashboard\": \"site\"}"
	timeout 60 python3 "$TOP/tests/e2e/lib/run_action.py" "$PROFGATE" "$TOP/action.yml" "$T/out" \
		"$T/err" "$WITH2" "$ENV"
	rc=$?
	check "action dashboard input without history: exit 2" [ "$rc" -eq 2 ]
else
	skip "action dashboard input: python3-yaml is not installed"
fi

# ---- in a real browser ----
CHROMIUM=${PG_CHROMIUM:-/usr/bin/chromium}
MODULES=${PG_BROWSER_DIR:-$TOP/build/browser}/node_modules
browser_skip=
if [ ! -x "$CHROMIUM" ]; then
	browser_skip="no chromium at $CHROMIUM (scripts/deps.sh installs Debian's chromium)"
elif ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	browser_skip="no node and npm to run playwright-core"
elif [ ! -d "$MODULES/playwright-core" ]; then
	mkdir -p "$(dirname "$MODULES")"
	if ! (cd "$(dirname "$MODULES")" && timeout 300 npm install --no-audit --no-fund --silent \
		--no-save playwright-core@1.65.1 >"$T/npm.log" 2>&1); then
		browser_skip="npm install playwright-core failed: $(tail -n 1 "$T/npm.log")"
	fi
fi
if [ -n "$browser_skip" ]; then
	skip "browser checks: $browser_skip"
	done_testing
	exit $?
fi

# a static server of the site on loopback
cat >"$T/serve.py" <<'EOF'
import functools, http.server, sys
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
h.func.log_message = lambda *a: None
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), h)
open(sys.argv[2] + ".tmp", "w").write(str(s.server_address[1]))
import os; os.rename(sys.argv[2] + ".tmp", sys.argv[2])
s.serve_forever()
EOF
serve site "$T/port" python3 "$T/serve.py" "$T/site" "$T/port"

browse() { # browse BASE_URL SCREENSHOT
	python3 - "$meta" "$1" "$T" "$CHROMIUM" "$MODULES" "$2" >"$T/checks.json" <<'EOF'
import json, sys
meta = json.load(open(sys.argv[1]))
print(json.dumps({"base": sys.argv[2], "trend": sys.argv[3] + "/trend.json",
                  "chromium": sys.argv[4], "modules": sys.argv[5], "profile": sys.argv[3] + "/profile",
                  "server": "https://github.example.com", "series": [meta["step"], meta["hostile"], meta["short"]],
                  "files": meta["files"], "links": meta["links"], "screenshot": sys.argv[6] or None}))
EOF
	rm -rf "$T/profile"
	TAP_START=$tap_n timeout 120 node "$TOP/tests/e2e/browser/dashboard.mjs" "$T/checks.json" \
		>"$T/browser.tap" 2>"$T/browser.err"
	brc=$?
	cat "$T/browser.tap"
	tap_n=$((tap_n + $(grep -c '^\(not \)\{0,1\}ok ' "$T/browser.tap")))
	tap_failed=$((tap_failed + $(grep -c '^not ok ' "$T/browser.tap")))
	check "browser run from $1: finished" [ "$brc" -eq 0 ]
	[ "$brc" -eq 0 ] || diag_file "$T/browser.err" 10
}
browse "file://$T/site/" "${PG_DASHBOARD_SCREENSHOT:-}"
browse "http://127.0.0.1:$(cat "$T/port")/" ""

done_testing
