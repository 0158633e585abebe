# Sourced by end-to-end suites that start servers of their own on loopback.
# serve_begin [PID...]: servers started so far; every one is killed, and $T removed, on exit.
serve_begin() {
	pids="$*"
	trap 'kill $pids 2>/dev/null; rm -rf "$T"' EXIT
	trap 'kill $pids 2>/dev/null; rm -rf "$T"; exit 130' INT TERM
}

# serve NAME PORTFILE COMMAND...: start a server in the background (its pid added to $pids, its
# stderr in $T/NAME/stderr) and wait up to 10 s for the port it writes to PORTFILE; a server
# that never starts skips the whole suite with the reason.
serve() {
	_n=$1 _p=$2
	shift 2
	mkdir -p "$T/$_n"
	"$@" 2>"$T/$_n/stderr" &
	pids="$pids $!"
	_i=0
	while [ ! -s "$_p" ] && [ $_i -lt 100 ]; do
		sleep 0.1
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
