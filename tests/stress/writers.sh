#!/bin/sh
# Concurrent history writers under load, with wall-clock limits (a `make stress` suite, never part
# of `make check`): N `history append` writers at once over smart HTTP (Apache in front of `git
# http-backend` on loopback, tests/e2e/lib/apache_git.sh), each with a fresh cache of its own as a
# CI runner has, and the default time budget. A writer that loses the race for the branch pushes
# its record to a ref of its own, which no other writer touches, so no writer waits for another;
# compactions fold those refs in.
#   64 writers: every record read exactly once, each writer done within 20 s;
#   128 writers: the same within 60 s;
#   64 writers with 3 `history compact` runs among them (a branch of 300 records whose closed
#   months move; each writer's first fetch is the whole uncompacted branch): nothing lost, each
#   writer within its budget, and after two more compactions every record stored once.
# Usage: sh tests/stress/writers.sh [BUILD] (default build). PG_STRESS_WRITERS="64 128" sets the
# writer counts of the plain runs.
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
local_env
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY PROFGATE_HISTORY_TIMEOUT_S

if ! command -v python3 >/dev/null 2>&1 || [ ! -x "$(git --exec-path)/git-http-backend" ]; then
	echo "1..0 # skip python3 or git http-backend missing"
	exit 0
fi
pg summarize "$EX"/baseline.*.pt.trace.json.gz -o "$T/base.json"
pg summarize "$EX"/candidate.*.pt.trace.json.gz -o "$T/cand.json"
pg gate -b "$T/base.json" -c "$T/cand.json" --label "stress" --json "$T/v.json"
[ "$rc" -eq 1 ] || { echo "Bail out! gate did not write the verdict (exit $rc)"; exit 1; }

TOKEN=stress-$$-token
# the remotes, made before the server starts (under root it makes them writable for its workers)
mkdir -p "$T/srv"
for n in ${PG_STRESS_WRITERS:-64 128}; do
	git init -q --bare "$T/srv/w$n.git"
done
# a branch of 300 records of 2021 (5 series), for the compactions among the writers
python3 "$TOP/tests/bench/history_gen.py" --repo "$T/srv/ck.git" --records 300 --series 5 >/dev/null
serve_apache_git

now() { date +%s.%N; }
# writers NAME N COMPACTIONS: N writers at once to $T/srv/NAME.git (run ids NAME-<i>), each with a
# fresh cache and the default budget, and COMPACTIONS `history compact` runs among them, one
# after another from a second after the writers started, each with a fresh cache. Each writer's
# seconds in $T/NAME/w<i>.s; the slowest in $slowest.
writers() {
	_d=$T/$1 _url=$GIT/$1.git
	mkdir -p "$_d"
	_pids=
	_i=1
	while [ "$_i" -le "$2" ]; do
		(_t0=$(now)
		env PROFGATE_CACHE_DIR="$_d/c$_i" PROFGATE_GIT_TOKEN=$TOKEN GITHUB_RUN_ID="$1-$_i" \
			timeout 150 "$PROFGATE" history append --repo "$_url" "$T/v.json" \
			>"$_d/w$_i.out" 2>"$_d/w$_i.err"
		echo $? >"$_d/w$_i.rc"
		awk -v a="$_t0" -v b="$(now)" 'BEGIN { printf "%.1f\n", b - a }' >"$_d/w$_i.s") &
		_pids="$_pids $!"
		_i=$((_i + 1))
	done
	_k=1
	while [ "$_k" -le "$3" ]; do
		sleep 1
		env PROFGATE_CACHE_DIR="$_d/k$_k" PROFGATE_GIT_TOKEN=$TOKEN timeout 150 "$PROFGATE" \
			history compact --repo "$_url" >"$_d/k$_k.out" 2>"$_d/k$_k.err"
		echo $? >"$_d/k$_k.rc"
		_k=$((_k + 1))
	done
	# shellcheck disable=SC2086 # a list of pids
	wait $_pids
	slowest=$(cat "$_d"/w*.s | sort -g | tail -n 1)
	diag "$1: $2 writers, load $(cut -d' ' -f1-3 /proc/loadavg); seconds per writer: median $(cat "$_d"/w*.s | sort -g | sed -n "$((($2 + 1) / 2))p"), at most $slowest; on their own refs: $(grep -l 'on its own ref' "$_d"/w*.out | wc -l)"
}
# read_once NAME N [EXTRA]: history show over HTTP (fresh cache) reads each of the N writers'
# records (and EXTRA others) exactly once.
read_once() {
	pge PROFGATE_CACHE_DIR="$T/$1/r$$" PROFGATE_GIT_TOKEN=$TOKEN "$PROFGATE" history show \
		--repo "$GIT/$1.git" --json
	pycheck "$1: every record read exactly once" \
		"r = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]" "$T/out" \
		"len(r) == $2 + ${3:-0} and len({x['record_id'] for x in r}) == len(r)" \
		"sorted(x['run_id'] for x in r if x['run_id'].startswith('$1-')) == sorted('$1-%d' % i for i in range(1, $2 + 1))"
}
# stored_once NAME N EXTRA: after two more compactions (one folds the record refs in, the next
# removes them), the branch and its series refs store each record once and no record ref is left.
stored_once() {
	for _c in 1 2; do
		pge PROFGATE_CACHE_DIR="$T/$1/f$$" PROFGATE_GIT_TOKEN=$TOKEN "$PROFGATE" history \
			compact --repo "$GIT/$1.git"
	done
	_g=$T/srv/$1.git
	for _r in profgate-history $(git -C "$_g" for-each-ref --format='%(refname)' refs/profgate/series/); do
		for _f in $(git -C "$_g" ls-tree -r --name-only "$_r" | grep '\.jsonl'); do
			case $_f in
			*.gz) git -C "$_g" cat-file blob "$_r:$_f" | gzip -dc ;;
			*) git -C "$_g" cat-file blob "$_r:$_f" ;;
			esac
		done
	done >"$T/$1.stored"
	pycheck "$1: after two more compactions each record stored once, no record ref left" \
		"r = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]; import subprocess; left = subprocess.check_output(['git', '-C', '$_g', 'for-each-ref', 'refs/profgate/records/'])" \
		"$T/$1.stored" "len(r) == $2 + $3 and len({x['record_id'] for x in r}) == len(r)" "left == b''"
}

for n in ${PG_STRESS_WRITERS:-64 128}; do
	limit=20
	[ "$n" -gt 64 ] && limit=60
	writers "w$n" "$n" 0
	check "w$n: $n writers with fresh caches: all exit 0, each done within $limit s (the slowest: $slowest s)" \
		eval '[ "$(cat "$T/w$n"/w*.rc | sort -u)" = 0 ] && awk -v s="$slowest" -v l="$limit" "BEGIN { exit !(s <= l) }"'
	check "w$n: no writer retried" eval '! grep -q "attempt [0-9]" "$T/w$n"/w*.err'
	read_once "w$n" "$n"
	stored_once "w$n" "$n" 0
done

# compactions among the writers, on a branch of 300 records of 2021 (5 series): the first
# compaction moves their closed months while the writers land
writers ck 64 3
check "ck: 64 writers and 3 compactions at once: all exit 0, each writer within its 60 s budget (the slowest: $slowest s)" \
	eval '[ "$(cat "$T"/ck/w*.rc "$T"/ck/k*.rc | sort -u)" = 0 ] && awk -v s="$slowest" "BEGIN { exit !(s <= 60) }"'
diag "ck compactions: $(cat "$T"/ck/k*.out | tr '\n' ' ')"
read_once ck 64 300
stored_once ck 64 300

done_testing
