# Sourced by end-to-end suites that start servers of their own on loopback.
# serve_begin [PID...]: servers started so far; every one is killed, and $T removed, on exit.
# (serve_git and serve_wandb_runs call it when no suite did.)
serve_begin() {
	pids="$*"
	serve_began=1
	trap 'kill $pids 2>/dev/null; rm -rf "$T"' EXIT
	trap 'kill $pids 2>/dev/null; rm -rf "$T"; exit 130' INT TERM
}

# serve NAME PORTFILE COMMAND...: start a server in the background (its pid added to $pids and
# in $T/NAME/pid, its stderr appended to $T/NAME/stderr) and wait up to 10 s for the port it
# writes to PORTFILE; a server that never starts skips the whole suite with the reason.
serve() {
	_n=$1 _p=$2
	shift 2
	mkdir -p "$T/$_n"
	rm -f "$_p"
	"$@" 2>>"$T/$_n/stderr" &
	pids="${pids-} $!"
	echo $! >"$T/$_n/pid"
	_i=0
	while [ ! -s "$_p" ] && [ $_i -lt 200 ]; do
		sleep 0.05
		_i=$((_i + 1))
	done
	if [ ! -s "$_p" ]; then
		echo "1..0 # skip the $_n server did not start: $(head -c 200 "$T/$_n/stderr")"
		exit 0
	fi
}

# serve_wandb_runs: the fake W&B with runs acme/llm/base1 and acme/llm/cand1, each logging one
# bundled example profile (the baseline, and the candidate with slower matmuls) as its
# artifact; its URL in $WB. Needs $EX (tests/data/examples) and $LIB.
serve_wandb_runs() {
	_pp=plugins/profile/2025_03_16_07_26_24/
	cat >"$T/spec.json" <<EOF
{"runs": {
 "acme/llm/base1": {"artifacts": [{"name": "run-base1-profiler", "files": {"${_pp}host0.pt.trace.json.gz": "$EX/baseline.rank-0.pt.trace.json.gz"}}]},
 "acme/llm/cand1": {"artifacts": [{"name": "run-cand1-profiler", "files": {"${_pp}host0.pt.trace.json.gz": "$EX/candidate.rank-0.matmul-slower.pt.trace.json.gz"}}]}}}
EOF
	serve wandb "$T/wandb/port" python3 "$LIB/fake_wandb.py" "$T/spec.json" "$T/wandb/port" "$T/wandb/log"
	WB=http://127.0.0.1:$(cat "$T/wandb/port")
}

# serve_git [PORT]: the smart-HTTP git remote (git_http.py: `git http-backend` with GitHub's
# token auth for $PG_TEST_TOKEN, or $TOKEN) over the bare repositories in $T/srv, on PORT when
# given (a server started again where a killed one was), else on any free port (the scripts in
# $LIB, default the suite's folder's lib/). Its URL in
# $GIT (http://127.0.0.1:PORT), its port in $GIT_PORT, its request log in $T/git/log, its pid
# in $T/git/pid. PG_TEST_KEEPALIVE_S in the environment reaches it.
serve_git() {
	[ -n "${serve_began-}" ] || serve_begin
	mkdir -p "$T/srv"
	serve git "$T/git/port" env PG_TEST_TOKEN="${PG_TEST_TOKEN:-${TOKEN-}}" PG_TEST_PORT="${1:-0}" \
		python3 "${LIB:-$(dirname "$0")/lib}/git_http.py" "$T/srv" "$T/git/port" "$T/git/log"
	GIT_PORT=$(cat "$T/git/port")
	GIT=http://127.0.0.1:$GIT_PORT
}

# serve_apache_git: Apache in front of `git http-backend` (apache_git.sh in $LIB, default the
# suite's folder's lib/) over the bare repositories in $T/srv, GitHub's token auth for $TOKEN; its
# URL in $GIT, its request log in $T/apache/access.log. Skips the suite when apache2 is missing
# (scripts/deps.sh stress installs it).
serve_apache_git() {
	[ -n "${serve_began-}" ] || serve_begin
	mkdir -p "$T/srv"
	sh "${LIB:-$(dirname "$0")/lib}/apache_git.sh" start "$T/apache" "$T/srv" "$TOKEN" 2>"$T/apache.err"
	case $? in
	0) ;;
	2)
		echo "1..0 # skip $(head -n 1 "$T/apache.err")"
		exit 0
		;;
	*)
		echo "Bail out! $(head -n 1 "$T/apache.err")"
		exit 1
		;;
	esac
	pids="${pids-} $(cat "$T/apache/httpd.pid")"
	GIT_PORT=$(cat "$T/apache/port")
	GIT=http://127.0.0.1:$GIT_PORT
}

# git_fault JSON: network faults for serve_git's next requests (git_http.py's POST /_fault).
git_fault() {
	python3 -c 'import sys, urllib.request; urllib.request.urlopen(urllib.request.Request(sys.argv[1] + "/_fault", data=sys.argv[2].encode(), method="POST"), timeout=10).read()' "$GIT" "$1"
}

# bulk_branch REPO: a new bare repository whose profgate-history branch is one commit of 120,000
# random 1 KB blobs (120 MB that no delta shrinks): a branch too big to fetch in a short budget.
bulk_branch() {
	git init -q --bare "$1"
	python3 - <<'EOF' | git -C "$1" fast-import --quiet
import os, sys
out, n = sys.stdout.buffer, 120000
for i in range(n):
    data = os.urandom(1000)
    out.write(b"blob\nmark :%d\ndata %d\n" % (i + 1, len(data)) + data + b"\n")
out.write(b"commit refs/heads/profgate-history\ncommitter t <t@e> 0 +0000\ndata 5\nbulk\n")
for i in range(n):
    out.write(b"M 100644 :%d bulk/f%06d.bin\n" % (i + 1, i))
out.write(b"\n")
EOF
}
