#!/bin/sh
# make bench: time `profgate inspect` against `gzip -dc FILE >/dev/null` on the same files, run
# alternately, and report median wall times, their ratio and profgate's peak RSS against the goals.
# Usage: sh tests/bench/run.sh [BUILD]. PG_CORPUS overrides the corpus folder.
set -eu

BUILD=$(cd "${1:-build}" && pwd)
top=$(git rev-parse --show-toplevel 2>/dev/null || (cd "$(dirname "$0")/../.." && pwd))
CORPUS=${PG_CORPUS:-$top/../shared/corpus}
SOURCE=facebookresearch__HolisticTraceAnalysis/nccl_data.json.gz
PG=$BUILD/profgate
GEN=$BUILD/tools/bench_gen
TIMER=$BUILD/tools/bench_time
OUT=$BUILD/bench
MIB=1048576

if [ ! -d "$CORPUS" ] || [ ! -f "$CORPUS/$SOURCE" ]; then
	echo "bench: skipped: no corpus at $CORPUS (set PG_CORPUS); the generated inputs need" \
		"$SOURCE from it as their source"
	exit 0
fi
CORPUS=$(cd "$CORPUS" && pwd)
for b in "$PG" "$GEN" "$TIMER"; do
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

gen kineto-1M kineto 1000000
gen kineto-5M kineto 5000000
gen jax-1M jax 1000000
gen jax-5M jax 5000000
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
