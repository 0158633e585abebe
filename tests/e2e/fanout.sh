#!/bin/sh
# The fan-out recipes (docs/action.md "Fan-out"), run as written: examples/slurm/*.sbatch as the
# tasks of a 1,024-task array (each summarizes one rank of a generated 1,024-rank capture) and as
# an 8-task array (128 ranks each), then merge-gate.sbatch; submit.sh with a stand-in sbatch that
# runs what it is given; and the merge step of examples/fanout-matrix.yml on per-node summaries. Every route gives the bytes of one
# `profgate summarize` of all 1,024 files, and the gate judges the merged capture (1,024 devices)
# against the baseline's. The merge's speed is a `make bench` row, not a test here.
# The ranks: tests/data/examples/kineto_trace_compare (a small real Kineto trace), its rank set to
# 0..1023 of 1,024; the candidate's with elementwise kernels 40 % slower (one steady step
# a rank: a warn, past the fail limit with too few steps to fail) (tests/tools/slow_family).
set -u
# test-tier: full
. "$(dirname "$0")/lib/tap.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
EX=$TOP/tests/data/examples
SL=$TOP/examples/slurm
RANKS=1024
if ! python3 -c 'import yaml' 2>/dev/null; then
	echo "1..0 # skip python3-yaml is not installed (apt-get install python3-yaml)"
	exit 0
fi
if [ ! -x "$TOOLS/slow_family" ]; then
	echo "1..0 # skip no $TOOLS/slow_family (build the test tools)"
	exit 0
fi
# profgate on PATH, as the recipes expect
mkdir -p "$T/bin"
ln -s "$PROFGATE" "$T/bin/profgate"
PATH=$T/bin:$PATH
export PATH

# ranks SIDE TEMPLATE: $T/SIDE/rank0000..rank1023.pt.trace.json, rank i of RANKS
ranks() {
	mkdir -p "$T/$1"
	gzip -dc "$2" >"$T/$1.template.json" || return 1
	awk -v n="$RANKS" -v dir="$T/$1" -v tpl="$T/$1.template.json" 'BEGIN {
		while ((getline l < tpl) > 0) text = text l "\n"
		for (i = 0; i < n; i++) {
			t = text
			sub(/"distributedInfo": *\{ *"rank": *[0-9]+ *\}/, "\"distributedInfo\": {\"rank\": " i ", \"world_size\": " n "}", t)
			f = sprintf("%s/rank%04d.pt.trace.json", dir, i)
			printf "%s", t > f
			close(f)
		}
	}'
}
"$TOOLS/slow_family" --family elementwise --percent 40 -o "$T/cand.template.json.gz" \
	"$EX/kineto_trace_compare.pt.trace.json.gz" >"$T/err" 2>&1 || { diag_file "$T/err"; exit 1; }
ranks base "$EX/kineto_trace_compare.pt.trace.json.gz"
ranks cand "$T/cand.template.json.gz"
check "1,024 rank files per side, each naming its rank" \
	eval '[ "$(ls "$T/cand" | wc -l)" -eq $RANKS ] && grep -q "\"rank\": 1023, \"world_size\": 1024" "$T/cand/rank1023.pt.trace.json"'

# what the recipes must reproduce: one summarize of every file (paths as the recipes give them)
cd "$T" || exit 1
find cand -type f -name '*.pt.trace.json*' | LC_ALL=C sort >"$T/cand.files"
# shellcheck disable=SC2046 # one path a line, no blanks
pg summarize $(cat "$T/cand.files") -o "$T/all.summary.json"
check "summarize of the 1,024 candidate ranks at once: 1,024 devices" \
	eval '[ "$rc" -eq 0 ] && grep -q "\"device_count\": 1024," "$T/all.summary.json"'
pg summarize base -o "$T/base.summary.json"

# ---- the Slurm array, one rank per task ----
mkdir -p "$T/s1024"
cp "$T/cand.files" "$T/s1024/files"
i=0
while [ $i -lt $RANKS ]; do
	echo $i
	i=$((i + 1))
done | xargs -P 2 -I{} env SLURM_ARRAY_TASK_ID={} SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_COUNT=$RANKS \
	sh "$SL/summarize.sbatch" "$T/s1024" >"$T/s1024.log" 2>&1
check "summarize.sbatch as 1,024 array tasks: 1,024 per-rank summaries, one rank each" \
	eval '[ "$(ls "$T/s1024/summaries" | wc -l)" -eq $RANKS ] && grep -q "\"device_count\": 1," "$T/s1024/summaries/01023.summary.json" && grep -q "rank1023" "$T/s1024/summaries/01023.summary.json"'
sh "$SL/merge-gate.sbatch" "$T/s1024" "$T/base.summary.json" fanout >"$T/gate.log" 2>&1
grc=$?
check "merge-gate.sbatch: the merge of the 1,024 per-rank summaries is summarize's bytes for all ranks" \
	cmp -s "$T/s1024/candidate.summary.json" "$T/all.summary.json"
diff "$T/s1024/candidate.summary.json" "$T/all.summary.json" >"$T/diff" 2>&1 || diag_file "$T/diff" 12
pycheck "merge-gate.sbatch: the gate judges the 1,024 devices, flags the 40 % slower elementwise kernels, exits by its verdict" \
	'v = json.load(open(sys.argv[1])); grc = int("'"$grc"'"); m = {x["name"]: x["verdict"] for x in v["metrics"]}' \
	"$T/s1024/verdict.json" \
	"v['candidate']['device_count'] == 1024 and v['baseline']['device_count'] == 1024" \
	"m.get('family.elementwise.us_per_step') in ('warn', 'fail')" \
	"v['verdict'] in ('warn', 'fail') and grc == (1 if v['verdict'] == 'fail' else 0)"
grep -q 'elementwise' "$T/s1024/report.md" || diag_file "$T/gate.log"

# ---- the Slurm array, 8 tasks of 128 ranks ----
mkdir -p "$T/s8"
cp "$T/cand.files" "$T/s8/files"
for i in 0 1 2 3 4 5 6 7; do
	SLURM_ARRAY_TASK_ID=$((100 + i)) SLURM_ARRAY_TASK_MIN=100 SLURM_ARRAY_TASK_COUNT=8 \
		sh "$SL/summarize.sbatch" "$T/s8" >>"$T/s8.log" 2>&1
done
sh "$SL/merge-gate.sbatch" "$T/s8" "$T/base.summary.json" fanout >"$T/gate8.log" 2>&1
grc8=$?
check "8 array tasks of 128 ranks (ids from 100): the same merged bytes, the same exit" \
	eval '[ "$grc8" -eq "$grc" ] && [ "$(ls "$T/s8/summaries" | wc -l)" -eq 8 ] && cmp -s "$T/s8/candidate.summary.json" "$T/all.summary.json"'
SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_COUNT=2048 sh "$SL/summarize.sbatch" "$T/s8" >"$T/over.log" 2>&1
orc=$?
check "more tasks than files: a task with no slice writes nothing and succeeds" \
	eval '[ "$orc" -eq 0 ] && grep -q "no files" "$T/over.log"'
env -u SLURM_ARRAY_TASK_ID sh "$SL/summarize.sbatch" "$T/s8" >"$T/noarray.log" 2>&1
orc=$?
check "summarize.sbatch outside an array: refused, saying how to submit it" \
	eval '[ "$orc" -ne 0 ] && grep -q "sbatch --array" "$T/noarray.log"'

# ---- submit.sh, with a stand-in for sbatch that runs what it is given at once ----
# (--parsable prints the job id; --array=A-B runs the script as each task, in order;
# --dependency is accepted as the order already holds)
cat >"$T/bin/sbatch" <<'EOF'
#!/bin/sh
array=
while [ $# -gt 0 ]; do
	case $1 in
	--parsable | --dependency=*) shift ;;
	--array=*) array=${1#--array=}; shift ;;
	*) break ;;
	esac
done
n=$(($(cat "$SBATCH_IDS" 2>/dev/null || echo 0) + 1))
echo "$n" >"$SBATCH_IDS"
echo "$n $array $*" >>"$SBATCH_LOG"
if [ -n "$array" ]; then
	lo=${array%-*} hi=${array#*-} i=${array%-*}
	while [ "$i" -le "$hi" ]; do
		SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_MIN=$lo SLURM_ARRAY_TASK_COUNT=$((hi - lo + 1)) sh "$@" >>"$SBATCH_OUT" 2>&1 || exit 1
		i=$((i + 1))
	done
else
	sh "$@" >>"$SBATCH_OUT" 2>&1
	echo "exit $?" >>"$SBATCH_OUT"
fi
echo "$n"
EOF
chmod +x "$T/bin/sbatch"
SBATCH_IDS=$T/sb.ids SBATCH_LOG=$T/sb.log SBATCH_OUT=$T/sb.out \
	sh "$SL/submit.sh" cand "$T/sub" "$T/base.summary.json" 16 fanout >"$T/submit.out" 2>&1
src=$?
check "submit.sh: lists the 1,024 files sorted, submits a 16-task array then the merge-and-gate job" \
	eval '[ "$src" -eq 0 ] && [ "$(wc -l <"$T/sub/files")" -eq $RANKS ] && LC_ALL=C sort -c "$T/sub/files" && grep -q "^1 0-15 .*summarize.sbatch $T/sub$" "$T/sb.log" && grep -q "^2  .*merge-gate.sbatch $T/sub $T/base.summary.json fanout$" "$T/sb.log"'
check "submit.sh's pipeline: 16 summaries, merged into summarize's bytes, gated with the 1,024-task run's exit" \
	eval '[ "$(ls "$T/sub/summaries" | wc -l)" -eq 16 ] && cmp -s "$T/sub/candidate.summary.json" "$T/s1024/candidate.summary.json" && grep -qx "exit $grc" "$T/sb.out"'
[ "$src" -eq 0 ] || diag_file "$T/submit.out"

# ---- the Actions matrix: each node's job summarizes its ranks, one job merges ----
mkdir -p "$T/m/summaries"
for n in 00 01 02 03; do
	mkdir -p "$T/m/profiles/node-$n"
done
i=0
while [ $i -lt $RANKS ]; do
	cp "$T/cand/rank$(printf %04d $i).pt.trace.json" "$T/m/profiles/node-$(printf %02d $((i / 256)))/"
	i=$((i + 1))
done
python3 - "$TOP/examples/fanout-matrix.yml" >"$T/m/steps.sh" <<'EOF'
import sys, yaml
w = yaml.safe_load(open(sys.argv[1]))
summ = [s["run"] for s in w["jobs"]["capture"]["steps"] if "profgate summarize" in s.get("run", "")]
merge = [s["run"] for s in w["jobs"]["gate"]["steps"] if "profgate merge" in s.get("run", "")]
assert len(summ) == 1 and len(merge) == 1
nodes = w["jobs"]["capture"]["strategy"]["matrix"]["node"]
for n in nodes:
    print(summ[0].replace("${{ matrix.node }}", n))
for n in nodes:  # upload-artifact then download-artifact with merge-multiple: one folder
    print('mv "node-%s.summary.json" summaries/' % n)
print(merge[0])
EOF
(cd "$T/m" && sh -e steps.sh) >"$T/m.log" 2>&1
mrc=$?
(cd "$T/m" && find profiles -type f | LC_ALL=C sort >files && profgate summarize $(cat files) -o all.json) 2>>"$T/m.log"
check "examples/fanout-matrix.yml: 4 nodes' summarize steps, then its merge step, give one summarize's bytes" \
	eval '[ "$mrc" -eq 0 ] && [ "$(ls "$T/m/summaries" | wc -l)" -eq 4 ] && cmp -s "$T/m/candidate.summary.json" "$T/m/all.json" && grep -q "\"device_count\": 1024," "$T/m/candidate.summary.json"'
[ "$mrc" -eq 0 ] || diag_file "$T/m.log"

done_testing
