#!/bin/sh
# The nightly path on a long branch of the old layout, over Apache in front of `git http-backend`
# on loopback (a `make stress` suite, never part of `make check`): the generated branch
# (tests/bench/history_branch.sh: 50 series, one record per series per day, one commit per record
# as appends make them, never compacted) written to by `gate --history URL --kind nightly`, each
# run with a fresh cache as a CI runner has and the default budgets, and nothing run by hand.
#   - the branch ends converted (one root commit holding only the open month, a ref per series)
#     within PG_STRESS_NIGHTLY_RUNS runs (default 3), whether the first writer could fetch it in
#     its budget (it compacts) or not (its record goes to its own ref and it converts the branch
#     in PROFGATE_HISTORY_MIGRATE_S). Twice: on a copy written with the default budget, and on a
#     copy whose first run has a budget too short for that fetch (PG_STRESS_NIGHTLY_TIGHT_S,
#     default 4 s, as a slower runner or link would), so that the conversion is the writer's;
#   - the next nightly run, on the converted branch, delivers its record too;
#   - every record present exactly once afterwards: the generated ones and each nightly's;
#   - fresh-cache `history show --series S`, `history baseline --series S` and `history trend
#     --series S` over Apache exit 0 with S's records (3 runs each).
# Each run's time and peak RSS (/usr/bin/time) are printed, not asserted.
# Usage: sh tests/stress/nightly.sh [BUILD] (default build). PG_STRESS_NIGHTLY_RECORDS sets the
# branch sizes (default 18000; "100000" is the size of the goal in docs/performance.md: about 2.5
# minutes to generate once into BUILD/bench, and each first nightly run up to about 5 minutes, so
# under `make stress` give it PG_SUITE_TIMEOUT=3600, or run this script alone).
set -u
BUILD=$(cd "${1:-build}" && pwd)
TOP=$(cd "$(dirname "$0")/../.." && pwd)
PROFGATE=${PROFGATE:-$BUILD/profgate}
TOOLS=${TOOLS:-$BUILD/tools}
LIB=$TOP/tests/e2e/lib
export PROFGATE TOOLS
. "$LIB/tap.sh"
. "$LIB/serve.sh"

EX=$TOP/tests/data/examples
RUNS=${PG_STRESS_NIGHTLY_RUNS:-3}
local_env
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY PROFGATE_HISTORY_TIMEOUT_S \
	PROFGATE_HISTORY_MIGRATE_S

for t in python3 /usr/bin/time "$(git --exec-path)/git-http-backend"; do
	command -v "$t" >/dev/null 2>&1 || { echo "1..0 # skip $t missing"; exit 0; }
done
pg summarize "$EX"/baseline.*.pt.trace.json.gz -o "$T/base.json"
pg summarize "$EX"/candidate.*.pt.trace.json.gz -o "$T/cand.json"
[ "$rc" -eq 0 ] || { echo "Bail out! summarize failed (exit $rc)"; exit 1; }

TOKEN=nightly-$$-token
mkdir -p "$T/srv"
for n in ${PG_STRESS_NIGHTLY_RECORDS:-18000}; do
	sh "$TOP/tests/bench/history_branch.sh" "$n" "$BUILD/bench" >&2 ||
		{ echo "Bail out! the $n-record branch could not be generated"; exit 1; }
	cp -a "$BUILD/bench/history-$n.git" "$T/srv/n$n.git"
	cp -a "$BUILD/bench/history-$n.git" "$T/srv/t$n.git"
done
serve_apache_git

# timed FILE CMD...: CMD with its wall time and peak RSS ("SECONDS MAX_RSS_KB") in FILE, its output
# in $T/out and $T/err, its exit code in $rc.
timed() {
	_f=$1
	shift
	/usr/bin/time -o "$_f.time" -f "%e %M" "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	tail -n 1 "$_f.time" >"$_f" # after "Command exited with non-zero status N"
}
# converted REPO: one root commit whose month shards are all of its open month, and a ref per series.
converted() {
	! git -C "$1" rev-parse -q --verify profgate-history^ >/dev/null &&
		[ "$(git -C "$1" ls-tree -r --name-only profgate-history | grep '\.jsonl' | sed 's|.*/||' | sort -u | wc -l)" -eq 1 ] &&
		[ "$(git -C "$1" for-each-ref refs/profgate/series/ | wc -l)" -eq 50 ]
}

# nightly NAME [VAR=VALUE...]: the next run of the nightly path (k counts them) to the branch
# $T/srv/NAME.git, with a fresh cache, the default budgets and the environment given; its time,
# peak RSS and history lines printed.
nightly() {
	_n=$1
	shift
	k=$((k + 1))
	timed "$T/$_n.t$k" env PROFGATE_CACHE_DIR="$T/$_n/c$k" PROFGATE_GIT_TOKEN=$TOKEN \
		GITHUB_RUN_ID="nightly-$_n-$k" "$@" "$PROFGATE" gate -b "$T/base.json" -c "$T/cand.json" \
		--label "stress nightly" --history "$GIT/$_n.git" --kind nightly
	cp "$T/out" "$T/$_n.out$k"
	cp "$T/err" "$T/$_n.err$k"
	diag "$_n: nightly $k${1:+ ($*)}: exit $rc, $(cut -d' ' -f1 "$T/$_n.t$k") s, peak RSS $(($(cut -d' ' -f2 "$T/$_n.t$k") / 1024)) MB, load $(cut -d' ' -f1 /proc/loadavg); $(grep -h '^profgate: history' "$T/err" | tr '\n' ' ')"
	check "$_n: nightly $k delivered its record (the verdict's exit code)" \
		eval '[ "$rc" -le 1 ] && has "$T/out" "history: appended to stress-nightly-"'
}

# nights NAME N [VAR=VALUE...]: nightly runs on the branch of N records until it is converted
# (the first with the environment given), at most $RUNS, then one more; every record is then
# present exactly once.
nights() {
	_nm=$1 _cnt=$2
	shift 2
	_r=$T/srv/$_nm.git
	diag "$_nm: $_cnt records, $(du -sh "$_r" | cut -f1); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
	k=0
	nightly "$_nm" "$@"
	while [ "$k" -lt "$RUNS" ] && ! converted "$_r"; do
		nightly "$_nm"
	done
	check "$_nm: the branch converted after $k nightly runs (at most $RUNS), nothing run by hand" converted "$_r"
	nightly "$_nm" # the next night, on the converted branch

	# every record once: the generated ones and each nightly's (read in place, as readers merge
	# the branch, the series refs and the record refs)
	timeout 600 env PROFGATE_CACHE_DIR="$T/$_nm/all" "$PROFGATE" history show --repo "$_r" --json \
		>"$T/out" 2>"$T/err" </dev/null
	pycheck "$_nm: every record present exactly once ($_cnt generated, $k nightly)" \
		"r = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]" "$T/out" \
		"len(r) == $_cnt + $k and len({x['record_id'] for x in r}) == len(r)" \
		"sorted(x['run_id'] for x in r if x['run_id'].startswith('nightly-')) == sorted('nightly-$_nm-%d' % i for i in range(1, $k + 1))"
}

for n in ${PG_STRESS_NIGHTLY_RECORDS:-18000}; do
	nights "t$n" "$n" PROFGATE_HISTORY_TIMEOUT_S="${PG_STRESS_NIGHTLY_TIGHT_S:-4}"
	check "t$n: the first run, its budget too short for the fetch, converted the branch itself" \
		eval 'has "$T/t$n.err1" "did not fetch in" && has "$T/t$n.err1" "compacted profgate-history (a first conversion)"'
	rm -rf "$T/srv/t$n.git"
	nights "n$n" "$n"
	R=$T/srv/n$n.git
	URL=$GIT/n$n.git
	S=$(head -n 1 "$BUILD/bench/history-$n.git.names" | cut -d' ' -f1)

	per=$((n / 50))
	for i in 1 2 3; do
		for c in show baseline trend; do
			case $c in
			show) args="show --series $S --json" want="[ \"\$(wc -l <\"\$T/out\")\" -eq $per ]" ;;
			baseline) args="baseline --series $S" want='[ -s "$T/out" ]' ;;
			trend) args="trend --series $S --format json" want='has "$T/out" "\"series\""' ;;
			esac
			# shellcheck disable=SC2086 # the command's words
			timed "$T/n$n.$c$i" env PROFGATE_CACHE_DIR="$T/n$n/r$c$i" PROFGATE_GIT_TOKEN=$TOKEN \
				"$PROFGATE" history $args --repo "$URL"
			check "n$n: fresh-cache history $c of one series ($per records) over Apache, run $i" \
				eval "[ \"\$rc\" -eq 0 ] && $want"
		done
	done
	for c in show baseline trend; do
		diag "n$n: fresh-cache history $c --series S over Apache: $(cat "$T/n$n.${c}1" "$T/n$n.${c}2" "$T/n$n.${c}3" | awk '{ printf "%s%s s %d MB", (NR > 1 ? ", " : ""), $1, $2 / 1024 }')"
	done
	diag "n$n: load after: $(cut -d' ' -f1-3 /proc/loadavg)"
	rm -rf "$R"
done

done_testing
