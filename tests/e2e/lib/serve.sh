# Sourced by end-to-end suites that start servers of their own on loopback.
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
