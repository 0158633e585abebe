#!/bin/sh
# Hostile text end to end (issue 9 item 4): kernel names, thread and device names, labels, file
# names and branch names chosen to ping (@everyone), inject HTML (<script>), break tables (|),
# open code spans and links (`, ](javascript:)), add lines (\n, \r, "# heading"), hide bytes
# (NUL, ESC, invalid UTF-8), reorder text (U+202E) and climb paths (../../etc), through the real
# CLI: summarize, report, gate, inspect, history append to a local bare repository. Markdown
# must render them inert, JSON must stay valid UTF-8, terminal output one line per item, series
# folders and refs safe; names and records that cannot be made safe are refused with one line
# and a documented exit code.
set -u
. "$(dirname "$0")/lib/tap.sh"

local_env
PROFGATE_TIME=2024-05-01T12:00:00Z
export PROFGATE_TIME

# ---- the traces: every hostile name as a kernel, a thread, a device; the candidate slower ----
cat >"$T/gen.py" <<'EOF'
import json, sys
out, slower = sys.argv[1], len(sys.argv) > 2
names = ["@everyone please look", "<script>alert(1)</script>", "<img src=x onerror=alert(1)>",
         "a|b|c", "tick`s ``` x", "[click](javascript:alert(1))", "line1\nline2\r\n# heading",
         "../../etc/passwd", "nul\u0000after", "esc\u001b[2Jclear", "rtl\u202eevil\u202c",
         "-branch", "refs/heads/x/../y", "#123 @org/team", "&amp; &lt;", "_*~!\\", "::error::x",
         "BIGNAME" + "x" * 100000, "BAD-UTF8"]
ev = [{"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "python3"}},
      {"ph": "M", "name": "thread_name", "pid": 0, "tid": 1,
       "args": {"name": "thread\n::error::x\u001b[31m"}}]
ts, corr = 1000, 1
for step in range(1, 8):
    start = ts
    for n in names:
        d = 100 + (300 if slower and n[:1] in "@<[elrt" else 0)
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 0,
                   "tid": 1, "ts": ts + 1, "dur": 2, "args": {"correlation": corr}})
        ev.append({"ph": "X", "cat": "kernel", "name": n, "pid": 1, "tid": 7, "ts": ts + 5,
                   "dur": d, "args": {"device": 0, "stream": 7, "correlation": corr}})
        ts += d + 20
        corr += 1
    ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % step, "pid": 0,
               "tid": 1, "ts": start, "dur": ts - start})
    ev.append({"ph": "X", "cat": "user_annotation", "name": "region @here <b>|`x`", "pid": 0,
               "tid": 1, "ts": start + 1, "dur": ts - start - 2})
    ts += 10
doc = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "GPU <b>@everyone</b>|\u202e"}],
       "distributedInfo": {"rank": 0, "world_size": 1, "backend": "nccl\n::warning::x"},
       "traceEvents": ev}
data = json.dumps(doc).encode().replace(b"BAD-UTF8", b"bad\xff\xfe\xc3utf8")
open(out, "wb").write(data)
EOF
python3 "$T/gen.py" "$T/base.pt.trace.json"
python3 "$T/gen.py" "$T/cand.pt.trace.json" slower

# ---- checkers ----
cat >"$T/check.py" <<'EOF'
import json, re, sys
BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
CTRL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")

def md(path):
    """Markdown that GitHub renders inert: UTF-8, no control or bidi characters; outside code
    spans no HTML but <sub>, no @mention, no #issue link, no unescaped [ (links), no stray
    headings; every table row has as many unescaped pipes as its header."""
    bad = []
    text = open(path, "rb").read().decode("utf-8")  # strict: raises on bytes that are not
    if CTRL.search(text.replace("\r\n", "\n")) or "\r" in text:
        bad.append("control character")
    if BIDI.search(text):
        bad.append("bidirectional control")
    header = None
    for i, line in enumerate(text.split("\n"), 1):
        if line.startswith("|"):
            pipes = len(re.findall(r"(?<!\\)\|", line))
            if header is None:
                header = pipes
            elif pipes != header:
                bad.append("line %d: %d cells, header %d: %s" % (i, pipes, header, line[:80]))
        else:
            header = None
        prose = re.sub(r"`[^`]*`", "", line)
        prose = prose.replace("<sub>", "").replace("</sub>", "")
        # profgate's own series marker (the sticky comment's key): a comment of slug characters
        prose = re.sub(r"^<!-- profgate:v1 series=[a-z0-9-]+ verdict=[a-z]+ -->$", "", prose)
        if re.search(r"<[A-Za-z/!?]", prose):
            bad.append("line %d: HTML: %s" % (i, line[:80]))
        if re.search(r"@[A-Za-z0-9]", prose):
            bad.append("line %d: mention: %s" % (i, line[:80]))
        if re.search(r"#[0-9]", prose):
            bad.append("line %d: issue link: %s" % (i, line[:80]))
        if re.search(r"(?<!\\)\[", prose):
            bad.append("line %d: link: %s" % (i, line[:80]))
        if line.startswith("#") and not re.match(r"#{1,3} (profgate|[A-Z])", line):
            bad.append("line %d: heading: %s" % (i, line[:80]))
        if len(line) > 2000:
            bad.append("line %d: %d characters" % (i, len(line)))
    return bad

def term(path):
    """Terminal output: no control or bidi characters, every line ours ("profgate ...",
    indented, or starting with one of the arguments after the file)."""
    bad = []
    text = open(path, "rb").read().decode("utf-8", "replace")
    if CTRL.search(text) or "\r" in text:
        bad.append("control character")
    if BIDI.search(text):
        bad.append("bidirectional control")
    starts = tuple(["profgate", " "] + sys.argv[3:])
    for line in text.splitlines():
        if line and not line.startswith(starts):
            bad.append("foreign line: %s" % line[:80])
    return bad

def js(path):
    """JSON: strict UTF-8 and JSON."""
    json.loads(open(path, "rb").read().decode("utf-8"))
    return []

bad = {"md": md, "term": term, "json": js}[sys.argv[1]](sys.argv[2])
for b in bad[:10]:
    print(b)
sys.exit(1 if bad else 0)
EOF
# safe KIND FILE TITLE [PREFIX...]: the checker passes (PREFIX: other allowed line starts).
safe() {
	_k=$1 _f=$2 _t=$3
	shift 3
	if python3 "$T/check.py" "$_k" "$_f" "$@" >"$T/why" 2>&1; then
		ok "$_t"
	else
		not_ok "$_t"
		diag_file "$T/why" 10
	fi
}
# refused TITLE CODE WORD: exit CODE, one stderr line naming WORD, stdout empty.
refused() {
	if [ "$rc" -eq "$2" ] && [ "$(lines "$T/err")" -eq 1 ] && grep -q '^profgate: ' "$T/err" &&
		has "$T/err" "$3" && [ ! -s "$T/out" ]; then
		ok "$1: exit $2, one line"
	else
		not_ok "$1: exit $rc (want $2), $(lines "$T/err") stderr lines"
		diag_file "$T/err" 3
	fi
}

# ---- summarize, report ----
cd "$T" || exit 1
pg summarize base.pt.trace.json --label 'model=<b>@everyone</b>|`x`' --label "$(printf 'k\033=v\nw')" \
	-o base.json
check "summarize the hostile baseline: exit 0, nothing on stderr" [ "$rc" -eq 0 ] && [ ! -s "$T/err" ]
pg summarize cand.pt.trace.json --label 'model=<b>@everyone</b>|`x`' --label "$(printf 'k\033=v\nw')" \
	-o cand.json
safe json base.json "the summary is valid UTF-8 JSON"
pycheck "the summary keeps the names (escaped, not dropped); bad bytes become U+FFFD" \
	's = json.load(open(sys.argv[1], encoding="utf-8")); n = [o["name"] for o in s["ops"]]' \
	base.json \
	'"<script>alert(1)</script>" in n' '"line1\nline2\r\n# heading" in n' \
	'"rtl\u202eevil\u202c" in n' '"bad\ufffd\ufffd\ufffdutf8" in n' \
	'any(x.startswith("BIGNAME") and len(x) == 100007 for x in n)' \
	'"model=<b>@everyone</b>|`x`" in [k + "=" + v for k, v in s["identity"]["labels"].items()]'
pg report base.json -o base.md
check "report: exit 0" [ "$rc" -eq 0 ]
safe md base.md "report: no mention, HTML, link, heading, table break, control or bidi character"
check "report: names are there as code" has base.md '`<script>alert(1)</script>`'
check "report: a pipe in a name is escaped" has base.md '`a\|b\|c`'
check "report: a newline in a name is a space" has base.md '`line1 line2  # heading`'
check "report: a 100 kB name is cut" eval '[ "$(wc -L <base.md)" -lt 2000 ]'

# ---- gate: verdict JSON, report, terminal ----
pg gate -b base.json -c cand.json --label "$(printf '@everyone <script>|`../x\n::error::y\033[2J\342\200\256')" \
	--report g.md --json v.json
check "gate on hostile names: a verdict (exit 0 or 1)" [ "$rc" -le 1 ]
cp "$T/out" gate.out
safe json v.json "verdict JSON is valid UTF-8 JSON"
safe md g.md "comparison report: inert"
safe term gate.out "gate's terminal output: one line per item, no control or bidi characters"
pycheck "gate's terminal output names the regressed kernels, escaped" \
	't = open(sys.argv[1], encoding="utf-8", errors="replace").read()' gate.out \
	'"esc\\x1b[2Jclear" in t' '"line1\\nline2\\r\\n# heading" in t' '"rtl\\u202eevil\\u202c" in t' \
	'"(@everyone <script>|`../x\\n::error::y\\x1b[2J\\u202e)" in t'

# ---- inspect: the same trace as text ----
pg inspect base.pt.trace.json
cp "$T/out" inspect.out
safe term inspect.out "inspect: thread, device and backend names stay on their line" \
	base.pt.trace.json
pg inspect --json base.pt.trace.json
cp "$T/out" inspect.json
safe json inspect.json "inspect --json is valid UTF-8 JSON"

# ---- a file name that is hostile itself ----
hf=$(printf 'a|b`c@everyone<x>\nz.pt.trace.json')
cp base.pt.trace.json "$hf"
pg summarize "$hf" -o hf.json
check "summarize a file named with a pipe, backtick, @, <, newline: exit 0" [ "$rc" -eq 0 ]
pg report hf.json -o hf.md
safe md hf.md "its report is inert"
pg inspect "$hf"
cp "$T/out" hf.out
safe term hf.out "inspect prints its name on one line" "a|b"

# ---- history: series folder, commit, refs ----
git init -q --bare r.git
pg gate -b base.json -c cand.json --label "../../etc/$(printf 'x\ny')" --json v2.json
pg history append --repo r.git v2.json
check "history append of a hostile label: exit 0" [ "$rc" -eq 0 ]
pg history append --repo r.git v.json
git -C r.git ls-tree -r --name-only profgate-history >tree
check "series folders are slugs: <[a-z0-9_-]>-<8 hex>/<YYYY-MM>.jsonl, nothing else" \
	eval '! grep -vq "^[a-z0-9_][a-z0-9_-]*-[0-9a-f]\{8\}/[0-9]\{4\}-[0-9]\{2\}\.jsonl$" tree && [ "$(lines tree)" -eq 2 ]'
check "no path climbs out (..) and nothing lands outside the branch's tree" \
	eval '! grep -q "\.\." tree && [ ! -e etc ] && [ ! -e "$T/etc" ]'
git -C r.git for-each-ref --format='%(refname)' >refs
check "the only ref is refs/heads/profgate-history" eval '[ "$(cat refs)" = refs/heads/profgate-history ]'
git -C r.git log --format='%s' profgate-history >subjects
check "commit subjects are one line each, without control characters" \
	eval '[ "$(lines subjects)" -eq 2 ] && ! grep -q "$(printf "\033")" subjects && ! grep -q "^::" subjects'
pg history show --repo r.git
cp "$T/out" show.out
safe term show.out "history show: one line per record" "time " 2024-05-01T
pg history show --repo r.git --json
cp "$T/out" show.jsonl
pycheck "history show --json: valid JSON lines keeping the label" \
	'r = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]' show.jsonl \
	'len(r) == 2' '"../../etc/x\ny" in [x["label"] for x in r]'

# ---- branch names that are not branches, or could be read as options or other refs ----
for b in '-branch' 'refs/heads/x/../y' 'refs/heads/main' 'HEAD' '@' 'a b' 'x..y' 'x.lock' \
	"$(printf 'a\nb')" "$(printf 'rtl\342\200\256x')" '.hidden' 'x:y' 'a@{1}'; do
	pg history append --repo r.git --branch "$b" v.json
	refused "history append --branch '$(printf '%s' "$b" | tr '\n' ' ')'" 2 "branch"
	pg gate -b base.json -c cand.json --history r.git --history-branch "$b"
	refused "gate --history-branch '$(printf '%s' "$b" | tr '\n' ' ')' (before any work)" 2 "branch"
done
git -C r.git for-each-ref --format='%(refname)' >refs
check "no refused branch name made a ref" eval '[ "$(cat refs)" = refs/heads/profgate-history ]'

# ---- records that are not profgate's ----
shard=$(head -n 1 tree)
git -C r.git show "profgate-history:$shard" | head -n 1 >rec.json
python3 - rec.json <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
def put(name, **kw):
    x = dict(r, **kw)
    open(name, "w").write(json.dumps(x))
put("rec-series.json", series="../../etc", record_id="a" * 32)
put("rec-dash.json", series="-x-1a2b3c4d", record_id="b" * 32)
put("rec-id.json", record_id="../x")
put("rec-verdict.json", verdict="fail\nSigned-off-by: x", record_id="c" * 32)
put("rec-kind.json", kind="<b>", record_id="d" * 32)
open("rec-ctrl.json", "wb").write(json.dumps(dict(r, label="x")).replace('"x"', '"x\x1b[2J"', 1).encode())
open("rec-utf8.json", "wb").write(json.dumps(dict(r, label="x")).replace('"x"', '"x\udcff"', 1)
                                  .encode("utf-8", "surrogateescape"))
EOF
for f in series dash id verdict kind ctrl utf8; do
	pg history append --repo r.git "rec-$f.json"
	refused "history append of a record with a hostile $f" 3 "rec-$f.json"
done
git -C r.git ls-tree -r --name-only profgate-history >tree2
check "none of them landed" cmp -s tree tree2

done_testing
