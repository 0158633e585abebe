#!/bin/sh
# The time budgets, measured on the wall clock (make stress; make check's suites assert only what
# each run did, since a busy machine stretches any wall time): a cold append to a local remote of
# 120 MB within a 1 s history budget ends in under 2 s (the process's start included) and a cold
# fetch of it over HTTP stops at the budget in under 2.5 s; a refusal that is not retried (a
# declining hook) is over in under 5 s; a request to a server that never answers, with
# PROFGATE_HTTP_TIMEOUT_S=2 and one attempt, ends in under 10 s for GitHub, W&B and git alike;
# and PG_STRESS_WRITERS (default 24) history writers at once over HTTP, each with a fresh cache,
# all land within 60 s.
set -u
. "$(dirname "$0")/../e2e/lib/tap.sh"
. "$(dirname "$0")/../e2e/lib/serve.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
LIB=$TOP/tests/e2e/lib
EX=$TOP/tests/data/examples
if [ ! -x "$(git --exec-path)/git-http-backend" ]; then
	echo "1..0 # skip git http-backend is missing"
	exit 0
fi
local_env
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY PROFGATE_HISTORY_TIMEOUT_S \
	PROFGATE_HTTP_TIMEOUT_S PROFGATE_HTTP_ATTEMPTS WANDB_API_KEY WANDB_BASE_URL
GIT_AUTHOR_NAME=tester GIT_AUTHOR_EMAIL=tester@example.com
GIT_COMMITTER_NAME=tester GIT_COMMITTER_EMAIL=tester@example.com
TOKEN=tok-$$-stress
export GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL

# timed VAR=VALUE... PROGRAM ARGS...: like pge, the wall seconds in $secs
timed() {
	_t0=$(date +%s.%N)
	pge "$@"
	secs=$(awk -v a="$_t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
}
# under BOUND: $secs < BOUND
under() {
	awk -v s="$secs" -v b="$1" 'BEGIN { exit !(s < b) }'
}

pg summarize "$EX"/baseline.*.pt.trace.json.gz -o "$T/base.json"
pg summarize "$EX"/candidate.*.pt.trace.json.gz -o "$T/cand.json"
pg gate -b "$T/base.json" -c "$T/cand.json" --label stress --json "$T/v.json"
check "the verdict to append (fail, exit 1)" [ "$rc" -eq 1 ]

# ---- a branch of 120,000 objects (120 MB, no deltas) ----
mkdir -p "$T/srv"
bulk_branch "$T/srv/big.git"
timed PROFGATE_HISTORY_TIMEOUT_S=1 PROFGATE_CACHE_DIR="$T/bigc" GITHUB_RUN_ID=bulk "$PROFGATE" \
	history append --repo "$T/srv/big.git" "$T/v.json"
check "a cold append to a local remote of 120 MB, a 1 s budget: exit 0 in ${secs} s (< 2)" \
	eval '[ "$rc" -eq 0 ] && under 2'

serve_git
timed PROFGATE_GIT_TOKEN=$TOKEN PROFGATE_HISTORY_TIMEOUT_S=1 PROFGATE_CACHE_DIR="$T/bigh" \
	"$PROFGATE" history show --repo "$GIT/big.git"
check "a cold fetch of 120 MB over HTTP, a 1 s budget: stopped at the budget in ${secs} s (< 2.5)" \
	eval '[ "$rc" -eq 3 ] && has "$T/err" "the time budget ran out" && under 2.5'

# ---- a refusal is not retried ----
git init -q --bare "$T/srv/h.git"
git -C "$T/srv/h.git" config http.receivepack true
printf '#!/bin/sh\necho "History is frozen by policy." >&2\nexit 1\n' >"$T/srv/h.git/hooks/pre-receive"
chmod +x "$T/srv/h.git/hooks/pre-receive"
timed PROFGATE_GIT_TOKEN=$TOKEN GITHUB_RUN_ID=hook "$PROFGATE" history append --repo "$GIT/h.git" \
	"$T/v.json"
check "a declining hook: exit 5, over in ${secs} s (< 5)" eval '[ "$rc" -eq 5 ] && under 5'
rm "$T/srv/h.git/hooks/pre-receive"

# ---- a server that never answers, one attempt of at most 2 s ----
serve fault "$T/fault/port" python3 "$LIB/faults.py" serve "$T/fault"
FAULT=http://127.0.0.1:$(cat "$T/fault/port")
LIMITS="PROFGATE_HTTP_TIMEOUT_S=2 PROFGATE_HTTP_ATTEMPTS=1 PROFGATE_HISTORY_TIMEOUT_S=3"
# shellcheck disable=SC2086 # a list of assignments
timed $LIMITS GITHUB_API_URL="$FAULT/hang" GITHUB_TOKEN=ghs_stress GITHUB_REPOSITORY=o/r \
	"$PROFGATE" gate -b "$T/base.json" -c "$T/cand.json" --comment always --pr 7
check "GitHub never answers: exit 5 in ${secs} s (< 10)" eval '[ "$rc" -eq 5 ] && under 10'
# shellcheck disable=SC2086
timed $LIMITS WANDB_BASE_URL="$FAULT/hang" WANDB_API_KEY=stress-0123456789abcdef0123456789abcdef01234567 \
	PROFGATE_CACHE_DIR="$T/wc" "$PROFGATE" fetch wandb://acme/llm/base1
check "W&B never answers: exit 3 in ${secs} s (< 10)" eval '[ "$rc" -eq 3 ] && under 10'
# shellcheck disable=SC2086
timed $LIMITS PROFGATE_GIT_TOKEN=$TOKEN GITHUB_RUN_ID=hang "$PROFGATE" history append \
	--repo "$FAULT/hang/h.git" "$T/v.json"
check "a git remote that never answers: exit 5 in ${secs} s (< 10)" eval '[ "$rc" -eq 5 ] && under 10'

# ---- concurrent writers over HTTP, each with a fresh cache and the default budget ----
N=${PG_STRESS_WRITERS:-24}
git init -q --bare "$T/srv/cw.git"
git -C "$T/srv/cw.git" config http.receivepack true
t0=$(date +%s.%N)
i=1
wpids=
while [ "$i" -le "$N" ]; do
	(env PROFGATE_CACHE_DIR="$T/cw/c$i" PROFGATE_GIT_TOKEN=$TOKEN GITHUB_RUN_ID="cw-$i" \
		timeout 300 "$PROFGATE" history append --repo "$GIT/cw.git" "$T/v.json" \
		>/dev/null 2>"$T/cw.$i.err"
	echo $? >"$T/cw.$i.rc") &
	wpids="$wpids $!"
	i=$((i + 1))
done
# shellcheck disable=SC2086 # a list of pids
wait $wpids
secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
check "$N writers at once over HTTP: all exit 0 within 60 s (${secs} s)" \
	eval '[ "$(cat "$T"/cw.*.rc | sort -u)" = 0 ] && under 60'
pge PROFGATE_CACHE_DIR="$T/cw/r" PROFGATE_GIT_TOKEN=$TOKEN "$PROFGATE" history show --repo "$GIT/cw.git" --json
check "... the $N records on the branch, each once" \
	eval '[ "$rc" -eq 0 ] && [ "$(grep -o "\"run_id\":\"cw-[0-9]*\"" "$T/out" | sort -u | wc -l)" -eq "$N" ] && [ "$(grep -c "\"record_id\"" "$T/out")" -eq "$N" ]'

done_testing
