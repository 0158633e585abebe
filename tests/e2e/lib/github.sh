# tests/e2e/lib/github.sh: sourced after tap.sh by the GitHub tests. Starts the fake GitHub
# (fake_github.py) on loopback, and helpers to configure it and read what it saw.

FAKE_GH=$(cd "$(dirname "$0")" && pwd)/lib/fake_github.py
unset GITHUB_REPOSITORY GITHUB_SHA GITHUB_REF GITHUB_RUN_ID GITHUB_RUN_ATTEMPT GITHUB_EVENT_NAME \
	GITHUB_EVENT_PATH GITHUB_TOKEN PROFGATE_GITHUB_TOKEN PROFGATE_GIT_TOKEN PROFGATE_GITHUB_LOGIN \
	GITHUB_API_URL GITHUB_SERVER_URL GITHUB_OUTPUT GITHUB_STEP_SUMMARY GITHUB_WORKSPACE \
	GITHUB_ACTIONS GITHUB_ACTOR WANDB_API_KEY PROFGATE_TIME XDG_CACHE_HOME \
	http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
HOME=$T/home GIT_CONFIG_NOSYSTEM=1 PROFGATE_CACHE_DIR=$T/cache
export HOME GIT_CONFIG_NOSYSTEM PROFGATE_CACHE_DIR
mkdir -p "$HOME" "$T/gh"

gh_pid=
trap '[ -n "$gh_pid" ] && kill "$gh_pid" 2>/dev/null; rm -rf "$T"' EXIT
trap '[ -n "$gh_pid" ] && kill "$gh_pid" 2>/dev/null; rm -rf "$T"; exit 130' INT TERM

python3 "$FAKE_GH" serve "$T/gh" 2>"$T/gh/log" &
gh_pid=$!
i=0
while [ ! -s "$T/gh/port" ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
GH_PORT=$(cat "$T/gh/port" 2>/dev/null)
if [ -z "$GH_PORT" ]; then
	echo "1..0 # skip the fake GitHub did not start: $(head -c 200 "$T/gh/log")"
	exit 0
fi
GH_URL=http://127.0.0.1:$GH_PORT

# gh_ctl JSON: configure the fake (merged; {"reset": true} starts over).
gh_ctl() {
	python3 "$FAKE_GH" ctl "$GH_PORT" "$1" >/dev/null
}
# gh_dump FILE: the fake's state (comments by issue, check runs, statuses) into FILE.
gh_dump() {
	python3 "$FAKE_GH" dump "$GH_PORT" >"$1"
}
# gh_mark: remember how many requests the fake has seen; gh_since FILE: the requests after the
# mark (the API's, not the control calls), one JSON line each.
gh_mark() {
	gh_seen=$(cat "$T/gh/requests.jsonl" 2>/dev/null | wc -l | tr -d ' ')
}
gh_since() {
	tail -n +"$((gh_seen + 1))" "$T/gh/requests.jsonl" | grep -v '"path": "/_' >"$1" || :
}
# dcheck TITLE EXPR...: python expressions over d (the fake's state) and c(n) (the comments of
# issue n) must hold.
dcheck() {
	_t=$1
	shift
	gh_dump "$T/dump.json"
	pycheck "$_t" 'd = json.load(open(sys.argv[1]))
def c(n, login=None):
    return [x for x in d["comments"].get(str(n), []) if login is None or x["user"]["login"] == login]' \
		"$T/dump.json" "$@"
}
# rcheck TITLE FILE EXPR...: python expressions over r (the logged requests in FILE) must hold.
rcheck() {
	_t=$1
	_f=$2
	shift 2
	pycheck "$_t" 'r = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]' "$_f" "$@"
}
