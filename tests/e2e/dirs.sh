#!/bin/sh
# XPlane files and profile directories through the CLI: the corpus XPlanes with the
# manifest's counts and planes, the TensorFlow two-host plugin folder, the 8 DLRM
# ranks, and the bad inputs of directories and XPlane files.
. "$(dirname "$0")/lib/tap.sh"

CORPUS=${PG_CORPUS:-$(git rev-parse --show-toplevel 2>/dev/null)/../shared/corpus}

# ---- generated cases (no corpus needed) ----
mkdir -p "$T/empty" "$T/mixed/plugins/profile/2024_01_01_00_00_00" \
	"$T/mixed/plugins/profile/2024_02_01_00_00_00"
echo "notes" >"$T/empty/readme.txt"
pg inspect "$T/empty"
check "a directory with no profiles exits 3" [ "$rc" -eq 3 ]
check "... with one line naming the folder" sh -c "[ \$(wc -l <'$T/err') -eq 1 ] && grep -q 'no profiles in' '$T/err'"

printf 'riegeli' >"$T/h.xplane.riegeli"
pg inspect "$T/h.xplane.riegeli"
check "an .xplane.riegeli file exits 3 naming the format" sh -c "[ $rc -eq 3 ] && grep -q 'riegeli' '$T/err'"

printf '{"traceEvents":[{"ph":"X","name":"k","pid":1,"tid":1,"ts":1,"dur":1}]}' >"$T/json.xplane.pb"
pg inspect --json "$T/json.xplane.pb"
check "JSON named .xplane.pb is read as JSON with a 'misnamed' warning" \
	sh -c "[ $rc -eq 0 ] && grep -q '\"misnamed\"' '$T/out'"

if [ -f "$CORPUS/openxla__xprof/tpu_inference_2.xplane.pb" ]; then
	F="$CORPUS/openxla__xprof/tpu_inference_2.xplane.pb"
	head -c 400000 "$F" >"$T/mixed/plugins/profile/2024_01_01_00_00_00/cut.xplane.pb"
	pg inspect "$T/mixed/plugins/profile/2024_01_01_00_00_00/cut.xplane.pb"
	check "a truncated XPlane exits 3 with one line naming a byte" \
		sh -c "[ $rc -eq 3 ] && [ \$(wc -l <'$T/err') -eq 1 ] && grep -q 'byte' '$T/err'"
	cp "$F" "$T/mixed/plugins/profile/2024_02_01_00_00_00/tpu.xplane.pb"
	pg inspect --json "$T/mixed"
	check "a folder mixing two captures reads only the newest and says so" python3 -c "
import json,sys
d=json.load(open('$T/out'))
assert len(d['captures'])==2, d['captures']
ch=[c for c in d['captures'] if c['chosen']]
assert len(ch)==1 and ch[0]['name'].endswith('2024_02_01_00_00_00'), ch
assert len(d['files'])==1 and d['files'][0]['path'].endswith('tpu.xplane.pb')
assert any('2 captures' in n for n in d['notes']), d['notes']
"
	pg inspect --capture plugins/profile/2024_01_01_00_00_00 "$T/mixed"
	check "--capture picks the older capture (here: the truncated file, exit 3)" [ "$rc" -eq 3 ]
else
	skip "corpus absent: truncated XPlane"
	skip "corpus absent: mixed captures"
	skip "corpus absent: --capture"
fi

# ---- the corpus ----
if [ ! -f "$CORPUS/manifest.json" ]; then
	skip "corpus absent ($CORPUS): XPlane files and directories"
	done_testing
	exit $?
fi

python3 - "$CORPUS" >"$T/xplanes" <<'PY'
import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
for f in m["files"]:
    if f["format"].startswith("xplane"):
        print(f["file"], f["events"] if f["events"] is not None else -1, int(f["negative"]),
              json.dumps(f["notes"]).replace(" ", "\x01"))
PY
while read -r file events negative notes; do
	pg inspect --json "$CORPUS/$file"
	if [ "$negative" = 1 ]; then
		check "$file: refused, exit 3, one line" \
			sh -c "[ $rc -eq 3 ] && [ \$(wc -l <'$T/err') -eq 1 ] && grep -q 'corrupt XPlane' '$T/err'"
		continue
	fi
	check "$file: $events XEvents and the planes the manifest lists" python3 -c "
import json,re,sys
d=json.load(open('$T/out'))['files'][0]
assert d['format']=='xplane' and d['events']==$events, d['events']
notes=json.loads(sys.argv[1].replace('\x01',' '))
want=re.search(r'planes: (.*?); ', notes).group(1)
want=[(m.group(1), int(m.group(2))) for m in re.finditer(r'([^,()]+?)\((\d+)\)(?:, |$)', want)]
got=[(p['name'], p['events']) for p in d['planes']]
assert sorted(got)==sorted((n.strip(),c) for n,c in want), (got, want)
" "$notes"
done <"$T/xplanes"

TF="$CORPUS/tensorflow__profiler/plugins/profile/GPU-multi-worker"
pg inspect --json "$CORPUS/tensorflow__profiler"
check "TensorFlow multi-worker folder: one capture of two hosts, the identical file read once" python3 -c "
import json
d=json.load(open('$T/out'))
assert len(d['captures'])==1 and len(d['captures'][0]['files'])==2, d['captures']
assert d['read']['files']==2 and d['read']['hosts']==2 and d['read']['duplicates']==1, d['read']
assert any('byte-identical' in n for n in d['notes']), d['notes']
dup=[f for f in d['files'] if f['duplicate_of']]
assert len(dup)==1
"

DL="$CORPUS/facebookresearch__param/dlrm_kineto"
pg inspect --json -j 1 "$DL"
cp "$T/out" "$T/dlrm1"
check "DLRM folder: one capture of 8 ranks with 8 GPUs" python3 -c "
import json
d=json.load(open('$T/dlrm1'))
assert len(d['captures'])==1 and d['captures'][0]['chosen'], d['captures']
assert d['read']['files']==8 and d['read']['ranks']==8 and d['read']['devices']['gpu']==8, d['read']
assert sorted(f['distributed']['rank'] for f in d['files'])==list(range(8))
"
pg inspect --json -j 4 "$DL"
check "reading on 4 threads gives byte-identical output to 1 thread" cmp -s "$T/dlrm1" "$T/out"

done_testing
