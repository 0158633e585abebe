#!/bin/sh
# The shared corpus end to end: every JSON profile in manifest.json must inspect with the
# manifest's event count (and the ProfilerStep# / dist facts its notes state); negative samples
# must be refused with exit 3 and one line. Skipped when the corpus is absent.
set -u
. "$(dirname "$0")/lib/tap.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CORPUS=${PG_CORPUS:-$(git -C "$ROOT" rev-parse --show-toplevel 2>/dev/null)/../shared/corpus}

if [ ! -f "$CORPUS/manifest.json" ]; then
	skip "corpus: no manifest.json at $CORPUS (set PG_CORPUS to run it)"
	done_testing
	exit
fi
if ! command -v python3 >/dev/null 2>&1; then
	skip "corpus: python3 is needed to read manifest.json"
	done_testing
	exit
fi

# One row per file: index, path, format, negative (0/1).
python3 - "$CORPUS/manifest.json" >"$T/rows" <<'EOF'
import json, sys
for i, r in enumerate(json.load(open(sys.argv[1]))["files"]):
    print("\t".join([str(i), r["file"], r["format"], "1" if r.get("negative") else "0"]))
EOF
if [ ! -s "$T/rows" ]; then
	not_ok "corpus: manifest.json lists no files"
	done_testing
	exit
fi

# Run profgate on every JSON row: text mode for negative samples (nothing may reach stdout),
# --json for the others. Row I leaves its code, stdout and stderr in $T/res/I.{rc,out,err}.
mkdir "$T/res"
tab=$(printf '\t')
while IFS=$tab read -r i file format negative; do
	case $format in xplane*) continue ;; esac
	[ -f "$CORPUS/$file" ] || continue
	if [ "$negative" = 1 ]; then
		pg inspect "$CORPUS/$file"
	else
		pg inspect --json "$CORPUS/$file"
	fi
	echo "$rc" >"$T/res/$i.rc"
	mv "$T/out" "$T/res/$i.out"
	mv "$T/err" "$T/res/$i.err"
done <"$T/rows"

# Judge every row against the manifest in one python run, one line per row:
# "ok|not_ok|skip<TAB>title<TAB>details" (details joined with " | ").
# Positive rows: exit 0, no stderr, events and bytes as the manifest gives, and from the notes:
# "ProfilerStep#: N (a..b)" = the profiler-step markers and their step range, "no
# ProfilerStep#" = none, "dist: k=v, ..." = rank, world_size, backend of distributedInfo.
# Negative rows: exit 3, one stderr line "profgate: ..." naming the file, empty stdout.
python3 - "$CORPUS" "$T/res" >"$T/verdicts" <<'EOF'
import json, os, re, sys
corpus, res = sys.argv[1], sys.argv[2]
rows = json.load(open(os.path.join(corpus, "manifest.json")))["files"]

def read(i, ext):
    with open(os.path.join(res, "%d.%s" % (i, ext)), encoding="utf-8", errors="replace") as fh:
        return fh.read()

def judge(i, r):
    path = os.path.join(corpus, r["file"])
    if r["format"].startswith("xplane"):
        return "skip", "XPlane rows: tests/e2e/dirs.sh checks them", []
    if not os.path.exists(os.path.join(res, "%d.rc" % i)):
        return "not_ok", "listed in manifest.json but missing", []
    rc, out, err = int(read(i, "rc")), read(i, "out"), read(i, "err")
    if r.get("negative"):
        lines = err.splitlines()
        bad = []
        if rc != 3:
            bad.append("exit %d, want 3" % rc)
        if len(lines) != 1 or not lines[0].startswith("profgate: ") or path not in lines[0]:
            bad.append("want one stderr line 'profgate: ...' naming the file")
        if out:
            bad.append("stdout is not empty")
        if bad:
            return "not_ok", "negative sample not refused cleanly", bad + lines[:3]
        return "ok", "negative sample refused (exit 3, one line)", []
    if rc != 0 or err:
        return "not_ok", "inspect exit %d" % rc, err.splitlines()[:3]
    files = json.loads(out)["files"]
    if len(files) != 1:
        return "not_ok", "inspect reported %d files" % len(files), []
    f = files[0]
    bad = []

    def want(what, got, exp):
        if got != exp:
            bad.append("%s: got %r, manifest says %r" % (what, got, exp))

    want("events", f["events"], r["events"])
    want("bytes", f["bytes"], r["bytes"])
    want("format", f["format"], "chrome-json")
    if r["format"].startswith("kineto"):
        want("dialect", f["dialect"], "kineto")
    notes = r.get("notes") or ""
    steps = {s["source"]: s for s in f["steps"]}
    checked = []
    m = re.search(r"ProfilerStep#: (\d+) \((\d+)\.\.(\d+)\)", notes)
    if m:
        s = steps.get("profiler-step")
        got = (s["markers"], s["first_step"], s["last_step"]) if s else None
        want("ProfilerStep# (markers, first, last)", got, tuple(int(x) for x in m.groups()))
        checked.append("ProfilerStep#")
    elif "no ProfilerStep#" in notes:
        want("has ProfilerStep# markers", "profiler-step" in steps, False)
        checked.append("no ProfilerStep#")
    m = re.search(r"dist: ([^;]*)", notes)
    if m:
        for kv in m.group(1).split(", "):
            k, _, v = kv.partition("=")
            if k in ("rank", "world_size"):
                want("distributed." + k, f["distributed"][k], int(v))
            elif k == "backend":
                want("distributed.backend", f["distributed"]["backend"], v)
        checked.append("dist")
    if bad:
        return "not_ok", "differs from manifest.json", bad
    extra = " (%s checked)" % ", ".join(checked) if checked else ""
    return "ok", "%d events as the manifest says%s" % (f["events"], extra), []

for i, r in enumerate(rows):
    status, title, details = judge(i, r)
    print("\t".join([status, "%s: %s" % (r["file"], title), " | ".join(details)]))
EOF

while IFS=$tab read -r status title details; do
	case $status in
	ok) ok "$title" ;;
	skip) skip "$title" ;;
	*)
		not_ok "$title"
		if [ -n "$details" ]; then diag "$details"; fi
		;;
	esac
done <"$T/verdicts"
[ -s "$T/verdicts" ] || not_ok "corpus: the manifest check produced no verdicts"

done_testing
