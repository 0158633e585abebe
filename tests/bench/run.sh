#!/bin/sh
# make bench: time `profgate inspect` against `gzip -dc FILE >/dev/null` on the same files, run
# alternately, and report median wall times, their ratio and profgate's peak RSS against the goals;
# then a synthetic XPlane of 15.4M events against `cat FILE`, a folder of 64 per-rank Kineto
# files read with -j 1 against -j 2, and inspect and summarize against gzip -dc and igzip -d -c
# on Kineto traces of 1M, 5M and 20M events and the largest corpus trace.
# Then the history rows (tests/bench/history.sh: reads of generated history branches) and the merge
# rows (tests/bench/merge.sh: 1,024 per-rank summaries merged into one).
# Usage: sh tests/bench/run.sh [BUILD]. PG_CORPUS overrides the corpus folder; PG_BENCH=history,
# PG_BENCH=merge or PG_BENCH=inflate (make bench BENCH=history, ...) runs those rows alone; PG_BENCH=dashboard
# the dashboard's (tests/bench/dashboard.sh), which `all` leaves out.
set -eu

BUILD=$(cd "${1:-build}" && pwd)
top=$(git rev-parse --show-toplevel 2>/dev/null || (cd "$(dirname "$0")/../.." && pwd))
case ${PG_BENCH:-all} in
all | inflate) ;;
history) exec sh "$top/tests/bench/history.sh" "$BUILD" ;;
merge) exec sh "$top/tests/bench/merge.sh" "$BUILD" ;;
dashboard) exec sh "$top/tests/bench/dashboard.sh" "$BUILD" ;;
*)
	echo "bench: PG_BENCH='$PG_BENCH': give all, inflate, history, merge or dashboard" >&2
	exit 2
	;;
esac
CORPUS=${PG_CORPUS:-$top/../shared/corpus}
SOURCE=facebookresearch__HolisticTraceAnalysis/nccl_data.json.gz
PG=$BUILD/profgate
GEN=$BUILD/tools/bench_gen
XGEN=$BUILD/tools/gen_xplane
XSOURCE=openxla__xprof/tpu_inference_2.xplane.pb
# The Python tool profgate replaces: 36.8 s and 2.36 GB for 15,382,975 XPlane events.
PY_EVENTS=15382975
PY_S=36.8
XEVENTS=15400000
# The rank folder: RANKS Kineto files of RANK_EVENTS entries, stamped RANK_T0 + rank ms.
RANKS=64
RANK_EVENTS=75000
RANK_T0=1732233600000
TIMER=$BUILD/tools/bench_time
OUT=$BUILD/bench
MIB=1048576

if [ ! -d "$CORPUS" ] || [ ! -f "$CORPUS/$SOURCE" ]; then
	echo "bench: skipped: no corpus at $CORPUS (set PG_CORPUS); the generated inputs need" \
		"$SOURCE from it as their source"
	sh "$top/tests/bench/history.sh" "$BUILD"
	exec sh "$top/tests/bench/merge.sh" "$BUILD"
fi
CORPUS=$(cd "$CORPUS" && pwd)
for b in "$PG" "$GEN" "$XGEN" "$TIMER"; do
	[ -x "$b" ] || { echo "bench: $b is missing (run 'make bench')" >&2; exit 1; }
done
mkdir -p "$OUT"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
# Time one fixed binary: others may rebuild build/ while the bench runs.
cp "$PG" "$tmp/profgate"
PG=$tmp/profgate

# CPU time all processes have used, in seconds (USER_HZ ticks of /proc/stat, idle excluded).
busy_s() {
	awk '/^cpu / { printf "%.2f\n", ($2 + $3 + $4 + $7 + $8 + $9) / 100 }' /proc/stat
}
now_s() {
	awk '{ print $1 }' /proc/uptime
}

events_of() {
	"$PG" inspect --json "$1" | sed -n 's/^ *"events": *\([0-9][0-9]*\),*$/\1/p' | head -n 1
}

# gen NAME STYLE N: build/bench/NAME.json.gz, made once and reused while its stamp matches.
gen() {
	f=$OUT/$1.json.gz
	stamp="bench_gen $(cksum <"$top/tests/tools/bench_gen.c" | cut -d' ' -f1) --style $2 --events $3 --source $SOURCE"
	if [ -f "$f" ] && [ -f "$OUT/$1.stamp" ] && [ "$(cat "$OUT/$1.stamp")" = "$stamp" ]; then
		return 0
	fi
	rm -f "$OUT/$1.stamp"
	echo "bench: generating $f ($3 events, $2 style; synthetic)" >&2
	"$GEN" --source "$CORPUS/$SOURCE" --events "$3" --style "$2" -o "$f"
	n=$(events_of "$f")
	if [ "$n" != "$3" ]; then
		echo "bench: $f: profgate inspect counts $n events, not $3" >&2
		exit 1
	fi
	echo "$stamp" >"$OUT/$1.stamp"
}

# The largest corpus .json.gz files by uncompressed size that profgate reads.
pick_corpus() {
	find "$CORPUS" -name '*.json.gz' -type f | while read -r f; do
		echo "$(gzip -l "$f" | awk 'NR == 2 { print $2 }') $f"
	done | sort -rn | while read -r size f; do
		"$PG" inspect "$f" >/dev/null 2>&1 && echo "$f"
	done | head -n 3
}

failed() {
	rc=$1
	shift
	if [ "$rc" -gt 128 ]; then
		echo "bench: '$*' was killed by signal $((rc - 128))" >&2
	else
		echo "bench: '$*' failed with exit code $rc" >&2
	fi
	exit 1
}

# pair MODE FILE RUNS: RUNS alternating runs of the reference and of profgate inspect FILE.
# MODE gz: the reference is gzip -dc FILE; MODE plain: profgate inspect FILE.gz.
pair() {
	: >"$tmp/runs"
	cat "$2" >/dev/null
	[ "$1" = plain ] && cat "$2.gz" >/dev/null
	w0="$(busy_s) $(now_s)"
	i=0
	while [ $i -lt "$3" ]; do
		if [ "$1" = gz ]; then
			ref=$("$TIMER" gzip -dc "$2") || failed $? gzip -dc "$2"
		else
			ref=$("$TIMER" "$PG" inspect "$2.gz") || failed $? profgate inspect "$2.gz"
		fi
		cand=$("$TIMER" "$PG" inspect "$2") || failed $? profgate inspect "$2"
		echo "$ref $cand" >>"$tmp/runs"
		i=$((i + 1))
	done
	# the window's busy CPU s and wall s, and the CPU s the runs used themselves
	awk -v w0="$w0" -v w1="$(busy_s) $(now_s)" '{ own += $3 + $6 } END {
		split(w0, a, " "); split(w1, b, " "); print b[1] - a[1], b[2] - a[2], own }' \
		"$tmp/runs" >>"$tmp/windows"
}

# alt RUNS K: RUNS rounds of the commands run_1 .. run_K (shell functions the caller defines, each
# printing one bench_time line), in that order each round. $tmp/runs gets one line per round: the
# K bench_time triples (wall s, peak RSS KiB, CPU s) side by side.
alt() {
	: >"$tmp/runs"
	w0="$(busy_s) $(now_s)"
	i=0
	while [ $i -lt "$1" ]; do
		line=
		k=1
		while [ $k -le "$2" ]; do
			r=$(run_$k) || failed $? "$(what_$k)"
			line="$line $r"
			k=$((k + 1))
		done
		echo "$line" >>"$tmp/runs"
		i=$((i + 1))
	done
	awk -v w0="$w0" -v w1="$(busy_s) $(now_s)" '{ for (c = 3; c <= NF; c += 3) own += $c } END {
		split(w0, a, " "); split(w1, b, " "); print b[1] - a[1], b[2] - a[2], own }' \
		"$tmp/runs" >>"$tmp/windows"
}

# col N: the median of column N of $tmp/runs.
col() {
	awk -v c="$1" '{ print $c }' "$tmp/runs" | median
}

median() {
	sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# row LABEL MODE FILE RUNS GOAL: one table row.
row() {
	pair "$2" "$3" "$4"
	ev=$(events_of "$3")
	# runs: ref wall, ref KiB, ref CPU, profgate wall, profgate KiB, profgate CPU
	ref=$(awk '{ print $1 }' "$tmp/runs" | median)
	cand=$(awk '{ print $4 }' "$tmp/runs" | median)
	cpu=$(awk '{ print $6 }' "$tmp/runs" | median)
	ratio=$(awk '{ print $4 / $1 }' "$tmp/runs" | median)
	rss=$(awk 'BEGIN { m = 0 } $5 > m { m = $5 } END { print m }' "$tmp/runs")
	awk -v l="$1" -v ev="$ev" -v n="$4" -v ref="$ref" -v cand="$cand" -v r="$ratio" \
		-v cpu="$cpu" -v rss="$rss" -v goal="$5" -v mib=$MIB 'BEGIN {
		budget = (40 * ev + 64 * mib) / mib; rmib = rss / 1024
		t = r <= goal ? "yes" : "**no**"; m = rmib <= budget ? "yes" : "**no**"
		printf "| %s | %d | %d | %.3f | %.3f | %.2f (≤ %.1f: %s) | %.3f | %.0f | %.0f (%s) |\n",
			l, ev, n, ref, cand, r, goal, t, cpu, rmib, budget, m }' >>"$tmp/table"
	tail -n 1 "$tmp/table" >&2
}

# gen_xplane_file NAME N: build/bench/NAME.xplane.pb from XSOURCE with at least N events, made
# once and reused while its stamp matches.
gen_xplane_file() {
	f=$OUT/$1.xplane.pb
	stamp="gen_xplane $(cksum <"$top/tests/tools/gen_xplane.c" | cut -d' ' -f1) --events $2 --source $XSOURCE $(cksum <"$CORPUS/$XSOURCE" | cut -d' ' -f1)"
	if [ -f "$f" ] && [ -f "$OUT/$1.stamp" ] && [ "$(cat "$OUT/$1.stamp")" = "$stamp" ]; then
		return 0
	fi
	rm -f "$OUT/$1.stamp" "$f"
	echo "bench: generating $f (at least $2 events from $XSOURCE; synthetic)" >&2
	"$XGEN" --source "$CORPUS/$XSOURCE" --events "$2" -o "$f.tmp" >&2 ||
		failed $? gen_xplane -o "$f.tmp"
	mv "$f.tmp" "$f"
	n=$(events_of "$f")
	if [ -z "$n" ] || [ "$n" -lt "$2" ]; then
		echo "bench: $f: profgate inspect counts ${n:-no} events, fewer than $2" >&2
		exit 1
	fi
	echo "$stamp" >"$OUT/$1.stamp"
}

# gen_ranks NAME: build/bench/NAME/ with RANKS Kineto files rank<i>.<RANK_T0 + i>.pt.trace.json.gz
# of RANK_EVENTS entries each: one bench_gen trace whose distributedInfo says rank i of RANKS.
gen_ranks() {
	d=$OUT/$1
	stamp="bench_gen $(cksum <"$top/tests/tools/bench_gen.c" | cut -d' ' -f1) --style kineto --events $RANK_EVENTS --source $SOURCE; $RANKS ranks from $RANK_T0"
	if [ -d "$d" ] && [ -f "$d.stamp" ] && [ "$(cat "$d.stamp")" = "$stamp" ]; then
		return 0
	fi
	rm -rf "$d.stamp" "$d" "$d.tmp"
	echo "bench: generating $d/ ($RANKS ranks of $RANK_EVENTS events, kineto style; synthetic)" >&2
	"$GEN" --source "$CORPUS/$SOURCE" --events "$RANK_EVENTS" --style kineto -o "$tmp/rank.json"
	mkdir "$d.tmp"
	i=0
	while [ $i -lt $RANKS ]; do
		sed "1s/\\(\"distributedInfo\":{[^}]*\"rank\":\\)[0-9]*,\\([^}]*\"world_size\":\\)[0-9]*/\\1$i,\\2$RANKS/" \
			"$tmp/rank.json" | gzip -6 >"$d.tmp/rank$i.$((RANK_T0 + i)).pt.trace.json.gz"
		i=$((i + 1))
	done
	rm -f "$tmp/rank.json"
	mv "$d.tmp" "$d"
	# one capture of RANKS files, RANKS distinct ranks, no duplicates, RANKS * RANK_EVENTS events
	"$PG" inspect --json "$d" >"$tmp/ranks.json" || failed $? profgate inspect --json "$d"
	got=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(len(d["captures"]), len(d["captures"][0]["files"]) if d["captures"] else 0, d["read"]["files"],
      d["read"]["ranks"], d["read"]["duplicates"], sum(f["events"] for f in d["files"]))' "$tmp/ranks.json")
	want="1 $RANKS $RANKS $RANKS 0 $((RANKS * RANK_EVENTS))"
	if [ "$got" != "$want" ]; then
		echo "bench: $d: profgate reads (captures, capture files, files, ranks, duplicates," \
			"events) $got, not $want" >&2
		exit 1
	fi
	echo "$stamp" >"$d.stamp"
}

# Against the inflaters alone: gzip -dc and igzip -d -c (ISA-L, what profgate inflates with) of
# the same file, then inspect and summarize, alternated; Kineto 1M, 5M and 20M show how time and
# memory grow with the trace, the largest corpus file is a real trace. Goals on the 5M file:
# inspect at most 0.2 and summarize at most 0.35 × gzip -dc, summarize's peak RSS at most 305 MiB
# (320 MB: issue 32's "no higher than today").
inflater_rows() {
	IGZIP=$(command -v igzip || :)
	{
		echo
		echo "| against the inflaters | events | runs | gzip -dc s | igzip -d -c s | inspect s | summarize s | inspect / gzip -dc | summarize / gzip -dc | summarize / igzip | inspect CPU s | summarize CPU s | inspect peak RSS MiB | summarize peak RSS MiB |"
		echo "|---|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---:|"
	} >>"$tmp/table"
	big=$(echo "$corpus_files" | head -n 1)
	for sf in "$OUT/kineto-1M.json.gz" "$OUT/kineto-5M.json.gz" "$OUT/kineto-20M.json.gz" $big; do
		[ -n "$IGZIP" ] || {
			echo "bench: igzip is not installed (Debian's isal): the inflater rows are skipped" >&2
			break
		}
		what_1() { echo gzip -dc "$sf"; }
		run_1() { "$TIMER" gzip -dc "$sf"; }
		what_2() { echo igzip -d -c "$sf"; }
		run_2() { "$TIMER" "$IGZIP" -d -c "$sf"; }
		what_3() { echo profgate inspect "$sf"; }
		run_3() { "$TIMER" "$PG" inspect "$sf"; }
		what_4() { echo profgate summarize "$sf"; }
		run_4() { "$TIMER" "$PG" summarize "$sf"; }
		cat "$sf" >/dev/null
		runs=5
		case "$sf" in *-20M.*) runs=3 ;; esac
		alt $runs 4
		# runs: gzip, igzip, inspect, summarize; each wall s, KiB, CPU s
		label="synthetic Kineto \`$(basename "$sf")\`"
		case "$sf" in "$CORPUS"/*) label="corpus \`$(basename "$sf")\`" ;; esac
		goal_i= goal_s= goal_m=
		case "$sf" in *-5M.*) goal_i=0.2 goal_s=0.35 goal_m=305 ;; esac
		awk -v l="$label" -v ev="$(events_of "$sf")" -v runs=$runs -v gz="$(col 1)" -v ig="$(col 4)" \
			-v ins="$(col 7)" -v sum="$(col 10)" -v ci="$(col 9)" -v cs="$(col 12)" \
			-v ri="$(awk '{ print $7 / $1 }' "$tmp/runs" | median)" \
			-v rs="$(awk '{ print $10 / $1 }' "$tmp/runs" | median)" \
			-v rsi="$(awk '{ print $10 / $4 }' "$tmp/runs" | median)" \
			-v mi="$(awk 'BEGIN { m = 0 } $8 > m { m = $8 } END { print m }' "$tmp/runs")" \
			-v ms="$(awk 'BEGIN { m = 0 } $11 > m { m = $11 } END { print m }' "$tmp/runs")" \
			-v gi="$goal_i" -v gs="$goal_s" -v gm="$goal_m" 'function goal(v, g) {
			return g == "" ? sprintf("%.2f", v) : sprintf("%.3f (≤ %s: %s)", v, g, v <= g + 0 ? "yes" : "**no**") }
		BEGIN {
			m = ms / 1024
			printf "| %s | %d | %d | %.3f | %.3f | %.3f | %.3f | %s | %s | %.2f | %.3f | %.3f | %.0f | %s |\n",
				l, ev, runs, gz, ig, ins, sum, goal(ri, gi), goal(rs, gs), rsi, ci, cs, mi / 1024,
				gm == "" ? sprintf("%.0f", m) : sprintf("%.0f (≤ %s: %s)", m, gm, m <= gm + 0 ? "yes" : "**no**") }' >>"$tmp/table"
		tail -n 1 "$tmp/table" >&2
	done
}

# Write the table to $OUT/inspect.md and print it.
write_table() {
	# Other processes' CPU use during the timed runs: all busy CPU time minus what the runs used.
	others=$(awk '{ busy += $1; wall += $2; own += $3 } END { printf "%.2f", (busy - own) / wall }' \
		"$tmp/windows")
	echo "bench: other processes used $others cores on average during the timed runs" >&2
	{
		echo "Measured $(date -u +%Y-%m-%d) on $(nproc) cores" \
			"($(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)), $("$PG" --version 2>/dev/null | head -n 1)" \
			"at $(git -C "$top" describe --always --dirty 2>/dev/null || echo '?'), $(gzip --version | head -n 1);" \
			"other processes used $others of the $(nproc) cores on average during the timed runs."
		echo
		cat "$tmp/table"
	} >"$OUT/inspect.md"
	cat "$OUT/inspect.md"
	echo "bench: table written to $OUT/inspect.md" >&2
}

gen kineto-1M kineto 1000000
gen kineto-5M kineto 5000000
gen kineto-20M kineto 20000000
if [ "${PG_BENCH:-all}" = inflate ]; then
	: >"$tmp/table"
	: >"$tmp/windows"
	corpus_files=$(pick_corpus)
	inflater_rows
	write_table
	exit 0
fi
gen jax-1M jax 1000000
gen jax-5M jax 5000000
if [ -f "$CORPUS/$XSOURCE" ]; then
	gen_xplane_file xplane-15.4M $XEVENTS
fi
gen_ranks ranks-$RANKS
if [ ! -f "$OUT/kineto-1M.json" ] || [ "$OUT/kineto-1M.json" -ot "$OUT/kineto-1M.json.gz" ]; then
	gzip -dc "$OUT/kineto-1M.json.gz" >"$OUT/kineto-1M.json.tmp"
	mv "$OUT/kineto-1M.json.tmp" "$OUT/kineto-1M.json"
fi

echo "| input | events | runs | gzip -dc s | profgate s | ratio | profgate CPU s | peak RSS MiB | RSS budget MiB (met) |" >"$tmp/table"
echo "|---|---:|---:|---:|---:|---|---:|---:|---:|" >>"$tmp/table"
corpus_files=$(pick_corpus)
: >"$tmp/windows"
for f in $corpus_files; do
	row "corpus \`$(basename "$f")\`" gz "$f" 5 1.3
done
row "synthetic Kineto 1M \`kineto-1M.json.gz\`" gz "$OUT/kineto-1M.json.gz" 5 1.3
row "synthetic Kineto 5M \`kineto-5M.json.gz\`" gz "$OUT/kineto-5M.json.gz" 3 1.3
row "synthetic JAX 1M \`jax-1M.json.gz\`" gz "$OUT/jax-1M.json.gz" 5 1.3
row "synthetic JAX 5M \`jax-5M.json.gz\`" gz "$OUT/jax-5M.json.gz" 3 1.3
{
	echo
	echo "| plain .json against its .json.gz | events | runs | profgate .json.gz s | profgate .json s | ratio | profgate CPU s | peak RSS MiB | RSS budget MiB (met) |"
	echo "|---|---:|---:|---:|---:|---|---:|---:|---:|"
} >>"$tmp/table"
row "synthetic Kineto 1M \`kineto-1M.json\`" plain "$OUT/kineto-1M.json" 5 1.0

# XPlane: cat FILE >/dev/null against profgate inspect FILE, against the Python tool's rate.
if [ -f "$CORPUS/$XSOURCE" ]; then
	xf=$OUT/xplane-15.4M.xplane.pb
	what_1() { echo cat "$xf"; }
	run_1() { "$TIMER" cat "$xf"; }
	what_2() { echo profgate inspect "$xf"; }
	run_2() { "$TIMER" "$PG" inspect "$xf"; }
	cat "$xf" >/dev/null
	alt 3 2
	ev=$(events_of "$xf")
	if [ -z "$ev" ] || [ "$ev" -lt "$XEVENTS" ]; then
		echo "bench: $xf: profgate inspect counts ${ev:-no} events, fewer than $XEVENTS" >&2
		exit 1
	fi
	# runs: cat wall, KiB, CPU, profgate wall, KiB, CPU
	rss=$(awk 'BEGIN { m = 0 } $5 > m { m = $5 } END { print m }' "$tmp/runs")
	{
		echo
		echo "| XPlane | MiB | events | runs | cat s | profgate s | profgate CPU s | events/s | × Python's $(awk -v e=$PY_EVENTS -v s=$PY_S 'BEGIN { printf "%.0f", e / s / 1000 }')k events/s (≥ 20×) | peak RSS MiB | RSS budget MiB (met) |"
		echo "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|"
	} >>"$tmp/table"
	awk -v l="synthetic \`$(basename "$xf")\` ($XSOURCE repeated)" -v size="$(wc -c <"$xf")" \
		-v ev="$ev" -v cat="$(col 1)" -v pg="$(col 4)" -v cpu="$(col 6)" -v rss="$rss" \
		-v pyev=$PY_EVENTS -v pys=$PY_S -v mib=$MIB 'BEGIN {
		rate = ev / pg; x = rate / (pyev / pys); rmib = rss / 1024
		budget = (size + 40 * ev + 64 * mib) / mib
		t = x >= 20 ? "yes" : "**no**"; m = rmib <= budget ? "yes" : "**no**"
		printf "| %s | %.0f | %d | 3 | %.3f | %.3f | %.3f | %.2fM | %.1f× (%s) | %.0f | %.0f (%s) |\n",
			l, size / mib, ev, cat, pg, cpu, rate / 1e6, x, t, rmib, budget, m }' >>"$tmp/table"
	tail -n 1 "$tmp/table" >&2
else
	echo "bench: XPlane row skipped: no $XSOURCE in $CORPUS" >&2
fi

# A folder of RANKS per-rank Kineto files, one capture: -j 1 against -j 2, gzip -dc for reference.
rd=$OUT/ranks-$RANKS
nfiles=$(find "$rd" -name '*.pt.trace.json.gz' -type f | wc -l)
what_1() { echo gzip -dc "$rd/*.pt.trace.json.gz"; }
run_1() { "$TIMER" gzip -dc "$rd"/*.pt.trace.json.gz; }
what_2() { echo profgate inspect -j 1 "$rd"; }
run_2() { "$TIMER" "$PG" inspect -j 1 "$rd"; }
what_3() { echo profgate inspect -j 2 "$rd"; }
run_3() { "$TIMER" "$PG" inspect -j 2 "$rd"; }
cat "$rd"/*.pt.trace.json.gz >/dev/null
alt 3 3
# runs: gzip wall, KiB, CPU, -j 1 wall, KiB, CPU, -j 2 wall, KiB, CPU
rss=$(awk 'BEGIN { m = 0 } $8 > m { m = $8 } END { print m }' "$tmp/runs")
{
	echo
	echo "| Kineto folder | files | events | runs | gzip -dc s | -j 1 s | -j 1 CPU s | -j 2 s | -j 2 CPU s | -j 2 CPU / wall | -j 1 / -j 2 | -j 2 peak RSS MiB | RSS budget MiB (met) | on both cores |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
} >>"$tmp/table"
awk -v l="synthetic \`$(basename "$rd")/rank<i>.<ms>.pt.trace.json.gz\`" -v n="$nfiles" \
	-v ev=$((RANKS * RANK_EVENTS)) -v gz="$(col 1)" -v w1="$(col 4)" -v c1="$(col 6)" \
	-v w2="$(col 7)" -v c2="$(col 9)" -v sp="$(awk '{ print $4 / $7 }' "$tmp/runs" | median)" \
	-v rss="$rss" -v mib=$MIB 'BEGIN {
	util = c2 / w2; rmib = rss / 1024; budget = (40 * ev + 64 * mib) / mib
	both = util >= 1.5 && sp >= 1.2 ? "yes" : "**no**"; m = rmib <= budget ? "yes" : "**no**"
	printf "| %s | %d | %d | 3 | %.3f | %.3f | %.3f | %.3f | %.3f | %.2f | %.2f | %.0f | %.0f (%s) | %s |\n",
		l, n, ev, gz, w1, c1, w2, c2, util, sp, rmib, budget, m, both }' >>"$tmp/table"
tail -n 1 "$tmp/table" >&2

inflater_rows

# summarize against inspect on the same files: the analysis must cost at most 15 % more.
{
	echo
	echo "| summarize vs inspect | events | runs | inspect s | summarize s | ratio | summarize CPU s | inspect peak RSS MiB | summarize peak RSS MiB |"
	echo "|---|---:|---:|---:|---:|---|---:|---:|---:|"
} >>"$tmp/table"
for sf in "$OUT/kineto-5M.json.gz" "$OUT/jax-5M.json.gz" "$OUT/xplane-15.4M.xplane.pb"; do
	[ -f "$sf" ] || continue
	what_1() { echo profgate inspect "$sf"; }
	run_1() { "$TIMER" "$PG" inspect "$sf"; }
	what_2() { echo profgate summarize "$sf"; }
	run_2() { "$TIMER" "$PG" summarize "$sf"; }
	cat "$sf" >/dev/null
	# the XPlane pair takes a second: more runs for its median
	runs=3
	case "$sf" in *.xplane.pb) runs=7 ;; esac
	alt $runs 2
	ev=$(events_of "$sf")
	size=0
	case "$sf" in *.xplane.pb) size=$(wc -c <"$sf") ;; esac
	rss1=$(awk 'BEGIN { m = 0 } $2 > m { m = $2 } END { print m }' "$tmp/runs")
	rss=$(awk 'BEGIN { m = 0 } $5 > m { m = $5 } END { print m }' "$tmp/runs")
	awk -v l="synthetic \`$(basename "$sf")\`" -v ev="$ev" -v a="$(col 1)" -v b="$(col 4)" \
		-v r="$(awk '{ print $4 / $1 }' "$tmp/runs" | median)" -v cpu="$(col 6)" -v rss="$rss" \
		-v rss1="$rss1" -v size="$size" -v runs="$runs" 'BEGIN {
		t = r <= 1.15 ? "yes" : "**no**"
		printf "| %s | %d | %d | %.3f | %.3f | %.2f (≤ 1.15: %s) | %.3f | %.0f | %.0f |\n",
			l, ev, runs, a, b, r, t, cpu, rss1 / 1024, rss / 1024 }' >>"$tmp/table"
	tail -n 1 "$tmp/table" >&2
done

write_table
sh "$top/tests/bench/history.sh" "$BUILD"
sh "$top/tests/bench/merge.sh" "$BUILD"
