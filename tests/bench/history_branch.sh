#!/bin/sh
# sh tests/bench/history_branch.sh N OUT: the generated history branch of N records
# (history_gen.py: 50 series, one nightly record per series per day, one commit per record, as
# appends make them) as the bare repository OUT/history-N.git, made once and reused while its
# stamp (the generator, the template and N) matches; its series names, one a line, in
# OUT/history-N.git.names. `make bench` (tests/bench/history.sh) and `make stress`
# (tests/stress/nightly.sh) share it; callers that write to the branch work on a copy.
set -eu
[ $# -eq 2 ] || { echo "usage: sh tests/bench/history_branch.sh N OUT" >&2; exit 2; }
top=$(cd "$(dirname "$0")/../.." && pwd)
GEN=$top/tests/bench/history_gen.py
mkdir -p "$2"
d=$2/history-$1.git
stamp="history_gen $(cat "$GEN" "$top/tests/bench/history_record.jsonl" | cksum | cut -d' ' -f1) --records $1"
if [ -d "$d" ] && [ -f "$d.stamp" ] && [ "$(cat "$d.stamp")" = "$stamp" ]; then
	exit 0
fi
rm -rf "$d" "$d.stamp" "$d.names"
echo "history_branch: generating $d ($1 records, 50 series; synthetic)" >&2
t0=$(date +%s)
python3 "$GEN" --repo "$d" --records "$1" >"$d.names"
git --git-dir="$d" config http.receivepack true
echo "history_branch: generated in $(($(date +%s) - t0)) s, $(du -sh "$d" | cut -f1)" >&2
echo "$stamp" >"$d.stamp"
