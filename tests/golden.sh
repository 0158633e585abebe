#!/bin/sh
# sh tests/golden.sh PROFGATE OUT_DIR: write everything profgate says about the corpus and the
# bundled examples into OUT_DIR, so that two builds can be compared byte for byte
# (`diff -r A B`). A restructuring that must not move any output runs it with the binary from
# before and the one from after:
#
#   sh tests/golden.sh /tmp/before/profgate /tmp/g-before
#   sh tests/golden.sh build/profgate /tmp/g-after && diff -r /tmp/g-before /tmp/g-after
#
# What it writes: for every profile of ../shared/corpus (when present) and tests/data/examples,
# its summary JSON and report; the merge of each multi-file capture; compare and gate of
# neighbouring summaries under each shipped thresholds file (verdict JSON, report, terminal
# lines, exit code); and a local history branch filled by those gates, with its show, trend
# and baseline outputs. History records carry a time and the host's paths: PROFGATE_TIME fixes
# the one, and the
# output and source folders are written as OUT and TOP; commit ids (which carry the clock)
# are masked. Exit 0 when every step ran.
set -u
if [ $# -ne 2 ]; then
	echo "usage: sh tests/golden.sh PROFGATE OUT_DIR" >&2
	exit 2
fi
PG=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
TOP=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$2" || exit 2
OUT=$(cd "$2" && pwd)
CORPUS=$TOP/../shared/corpus
PROFGATE_TIME=2026-01-02T03:04:05Z
PROFGATE_CACHE_DIR=$OUT/.cache
GITHUB_ACTIONS= GITHUB_EVENT_NAME= GITHUB_REPOSITORY= GITHUB_SHA= GITHUB_REF= GITHUB_RUN_ID=
export PROFGATE_TIME PROFGATE_CACHE_DIR GITHUB_ACTIONS GITHUB_EVENT_NAME GITHUB_REPOSITORY \
	GITHUB_SHA GITHUB_REF GITHUB_RUN_ID
cd "$OUT" || exit 2
rm -rf sum gate hist profiles profiles-tf profiles-dlrm demo .cache
mkdir -p sum gate hist profiles

# Profiles are linked under profiles/ so that the paths the summaries record are the same
# whichever folder the tree is in.
n=0
link() {
	n=$((n + 1))
	name=$(printf '%03d' "$n")-$(basename "$1")
	ln -s "$1" "profiles/$name"
}
for f in "$TOP"/tests/data/examples/*.json.gz; do link "$f"; done
if [ -d "$CORPUS" ]; then
	find "$CORPUS" -type f \( -name '*.json' -o -name '*.json.gz' -o -name '*.pb' \) \
		! -name manifest.json | LC_ALL=C sort >.list
	while read -r f; do link "$f"; done <.list
	rm -f .list
fi

# run NAME CMD...: the command's stdout, stderr and exit code under NAME.
run() {
	name=$1
	shift
	"$@" >"$name.out" 2>"$name.err"
	echo $? >"$name.rc"
}

for p in profiles/*; do
	b=$(basename "$p")
	run "sum/$b" "$PG" summarize "$p" -o "sum/$b.summary.json" -j 2
	[ -f "sum/$b.summary.json" ] && run "sum/$b.report" "$PG" report "sum/$b.summary.json" \
		-o "sum/$b.report.md"
done
if [ -d "$CORPUS" ]; then
	ln -s "$CORPUS/tensorflow__profiler/plugins/profile/GPU-multi-worker" profiles-tf
	ln -s "$CORPUS/facebookresearch__param/dlrm_kineto" profiles-dlrm
	run sum/tf-two-hosts "$PG" summarize profiles-tf -o sum/tf-two-hosts.summary.json
	run sum/dlrm-dir "$PG" summarize profiles-dlrm -o sum/dlrm-dir.summary.json
	set -- sum/*worker?_step_12*.summary.json
	[ -f "$1" ] && run sum/dlrm-merged "$PG" merge "$@" -o sum/dlrm-merged.summary.json
	run sum/tf-merged "$PG" merge sum/*_6003.xplane.pb.summary.json -o sum/tf-merged.summary.json
fi

git init -q --bare hist/h.git
prev=
i=0
for s in sum/*.summary.json; do
	if [ -n "$prev" ]; then
		i=$((i + 1))
		g=gate/$(printf '%03d' "$i")
		run "$g.compare" "$PG" compare "$prev" "$s" -o "$g.compare.json" --report "$g.compare.md"
		for th in default strict nightly; do
			run "$g.$th" "$PG" gate --baseline "$prev" --candidate "$s" \
				--thresholds "$TOP/thresholds/$th.json" --label "golden $i" \
				--json "$g.$th.json" --report "$g.$th.md"
		done
		run "$g.hist" "$PG" gate --baseline "$prev" --candidate "$s" --label "golden" \
			--history hist/h.git --kind nightly --json "$g.hist.json"
	fi
	prev=$s
done
# one series with a history: the bundled pair gated again and again under one label
b=$(ls sum/*baseline.rank-0*.summary.json) c=$(ls sum/*candidate.rank-0*.summary.json)
for k in 1 2 3 4 5 6; do
	PROFGATE_TIME=2026-01-0${k}T00:00:00Z run "hist/append$k" "$PG" gate --baseline "$b" \
		--candidate "$([ "$k" -gt 3 ] && echo "$c" || echo "$b")" --label series \
		--history hist/h.git --kind nightly --json "hist/append$k.json"
done
run hist/show "$PG" history show --repo hist/h.git
run hist/show-json "$PG" history show --repo hist/h.git --json
run hist/trend-md "$PG" history trend --repo hist/h.git --kind nightly --format md
run hist/trend-json "$PG" history trend --repo hist/h.git --kind nightly --format json
run hist/baseline "$PG" history baseline --repo hist/h.git --label series --kind nightly \
	-o hist/baseline.json
run hist/gate-window "$PG" gate --baseline 'history:*' --candidate "$c" --label series \
	--history hist/h.git --json hist/gate-window.json --report hist/gate-window.md
rm -rf hist/h.git .cache
# make demo's whole run, with this binary
mkdir -p demo/build && ln -sf "$PG" demo/build/profgate
(cd "$TOP" && sh tests/demo.sh "$OUT/demo/build") >demo/demo.out 2>demo/demo.err
echo $? >demo/demo.rc
rm -rf demo/build/demo/history.git demo/build/demo/cache demo/build/profgate
# what names the machine: the absolute folders, wherever they appear
grep -rlF -e "$OUT" -e "$TOP" . 2>/dev/null | while read -r f; do
	sed "s#$OUT#OUT#g; s#$TOP#TOP#g" "$f" >"$f.tmp" && mv "$f.tmp" "$f"
done
# commits carry the wall clock of the machine that made them
for f in gate/*.hist.out hist/*.out hist/*.err demo/demo.out; do
	sed -E 's/commit [0-9a-f]{7,40}/commit HASH/g' "$f" >"$f.tmp" && mv "$f.tmp" "$f"
done
exit 0
