#!/bin/sh
# The merge rows of `make bench` (alone: `make bench BENCH=merge`): `profgate merge` of 1,024
# per-rank summaries into one, the fan-out recipes' last step (docs/action.md "Fan-out"), against
# `cat` of the same files for reference; goal: under 2 s. Two captures of 1,024 ranks, made once
# from a bundled Kineto trace with its rank set to 0..1023 (world size 1,024), each rank
# summarized on its own, as an array task would:
#   small: tests/data/examples/kineto_trace_compare (2 steps, 5 kernels; ~9 KB summaries)
#   model: tests/data/examples/baseline.rank-0 (a real training step; ~140 KB summaries)
# The small capture's merge is checked against one `profgate summarize` of all 1,024 files (the
# same bytes) once, when its summaries are made; the model's traces (15 MB each) are written,
# summarized and deleted one at a time. Writes BUILD/bench/merge.md.
# Usage: sh tests/bench/merge.sh [BUILD]. PG_BENCH_MERGE_RUNS sets the runs (default 5).
set -eu

BUILD=$(cd "${1:-build}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
PG=$BUILD/profgate
TIMER=$BUILD/tools/bench_time
OUT=$BUILD/bench
EX=$top/tests/data/examples
RANKS=1024
RUNS=${PG_BENCH_MERGE_RUNS:-5}

for b in "$PG" "$TIMER"; do
	[ -x "$b" ] || { echo "bench: $b is missing (run 'make bench')" >&2; exit 1; }
done
mkdir -p "$OUT"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
cp "$PG" "$tmp/profgate"
PG=$tmp/profgate

median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# capture NAME TEMPLATE CHECK: OUT/merge-NAME/summaries/rank<i>.summary.json, made once while its
# stamp matches: each rank's trace written, summarized and (unless CHECK) deleted, one at a time;
# with CHECK the traces stay until the merge is compared with one summarize of them all.
capture() {
	d=$OUT/merge-$1
	stamp="$("$PG" --version) $(cksum <"$2" | cut -d' ' -f1) $RANKS ranks"
	if [ -f "$d.stamp" ] && [ "$(cat "$d.stamp")" = "$stamp" ]; then
		return 0
	fi
	rm -rf "$d" "$d.stamp"
	mkdir -p "$d/ranks" "$d/summaries"
	echo "bench: generating $d ($RANKS ranks of $(basename "$2"), each summarized)" >&2
	gzip -dc "$2" >"$d/template.json"
	i=0
	while [ $i -lt $RANKS ]; do
		echo $i
		i=$((i + 1))
	done | (cd "$d" && xargs -P "$(nproc)" -I{} sh -c '
		f=ranks/rank$(printf %04d "$1").pt.trace.json
		sed "/\"distributedInfo\"/s/\"rank\": *[0-9]*\(, *\"world_size\": *[0-9]*\)\{0,1\}/\"rank\": $1, \"world_size\": $2/" template.json >"$f" &&
			"$3" summarize "$f" -o "summaries/$(basename "$f").summary.json" &&
			{ [ "$4" = check ] || rm -f "$f"; }' sh {} "$RANKS" "$PG" "$3")
	if [ "$3" = check ]; then
		(cd "$d" && "$PG" summarize ranks -o "$tmp/all.json" && "$PG" merge summaries/*.summary.json -o "$tmp/merged.json")
		if ! cmp -s "$tmp/all.json" "$tmp/merged.json"; then
			echo "bench: $d: the merge of the per-rank summaries is not summarize's bytes for all ranks" >&2
			exit 1
		fi
	fi
	n=$(ls "$d/summaries" | wc -l)
	[ "$n" -eq $RANKS ] || { echo "bench: $d: $n summaries, not $RANKS" >&2; exit 1; }
	grep -q "\"world_size\": $RANKS," "$d/summaries/rank0001.pt.trace.json.summary.json" ||
		{ echo "bench: $d: the ranks do not say world size $RANKS" >&2; exit 1; }
	rm -rf "$d/ranks" "$d/template.json"
	echo "$stamp" >"$d.stamp"
}

capture small "$EX/kineto_trace_compare.pt.trace.json.gz" check
capture model "$EX/baseline.rank-0.pt.trace.json.gz" nocheck

{
	echo "| merge of per-rank summaries | summaries | MiB | runs | cat s | profgate merge s | merge CPU s | peak RSS MiB | under 2 s |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---|"
} >"$tmp/table"
for name in small model; do
	d=$OUT/merge-$name
	case $name in
	small) label="1,024 ranks of \`kineto_trace_compare\` (2 steps)" ;;
	*) label="1,024 ranks of \`baseline.rank-0\` (a real training step)" ;;
	esac
	: >"$tmp/runs"
	cat "$d"/summaries/*.summary.json >/dev/null
	i=0
	while [ $i -lt "$RUNS" ]; do
		c=$(cd "$d" && "$TIMER" sh -c 'cat summaries/*.summary.json')
		m=$(cd "$d" && "$TIMER" "$PG" merge summaries/*.summary.json -o "$tmp/merged.json")
		echo "$c $m" >>"$tmp/runs"
		i=$((i + 1))
	done
	mib=$(cat "$d"/summaries/*.summary.json | wc -c | awk '{ printf "%.1f", $1 / 1048576 }')
	awk -v l="$label" \
		-v n="$(ls "$d/summaries" | wc -l)" -v mib="$mib" -v runs="$RUNS" \
		-v c="$(awk '{ print $1 }' "$tmp/runs" | median)" -v m="$(awk '{ print $4 }' "$tmp/runs" | median)" \
		-v cpu="$(awk '{ print $6 }' "$tmp/runs" | median)" \
		-v rss="$(awk 'BEGIN { r = 0 } $5 > r { r = $5 } END { print r }' "$tmp/runs")" 'BEGIN {
		printf "| %s | %d | %s | %d | %.3f | %.3f | %.3f | %.0f | %s |\n",
			l, n, mib, runs, c, m, cpu, rss / 1024, m < 2 ? "yes" : "**no**" }' >>"$tmp/table"
	tail -n 1 "$tmp/table" >&2
done
{
	echo "Measured $(date -u +%Y-%m-%d) on $(nproc) cores" \
		"($(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)), $("$PG" --version | head -n 1)" \
		"at $(git -C "$top" describe --always --dirty 2>/dev/null || echo '?'); medians of $RUNS runs;" \
		"load average before: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo
	cat "$tmp/table"
} >"$OUT/merge.md"
cat "$OUT/merge.md"
echo "bench: table written to $OUT/merge.md" >&2
