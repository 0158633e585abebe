#!/bin/sh
# Terminal conventions on real pseudo-terminals (python3's pty module): the verdict's colour
# appears on a terminal and never in a pipe, with NO_COLOR set (any non-empty value) or with
# TERM=dumb; the progress line appears on stderr when it is a terminal (after
# PROFGATE_PROGRESS_AFTER_MS, 0 here, so a short read shows it) and never with -q/--quiet, when
# stderr is not a terminal, nor in the output files.
set -u
. "$(dirname "$0")/lib/tap.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
EX=$TOP/tests/data/examples
B=$EX/baseline.rank-0.pt.trace.json.gz
C=$EX/candidate.rank-0.matmul-slower.pt.trace.json.gz

local_env
unset NO_COLOR
TERM=xterm
export TERM

# tty OUT ERR CMD...: run CMD with stdout on a terminal when OUT is "tty" (else a pipe), the same
# for stderr; what each got goes to $T/out and $T/err, the exit code to $rc.
tty() {
	python3 - "$@" <<'EOF'
import os, pty, select, subprocess, sys
want_out, want_err, cmd = sys.argv[1] == 'tty', sys.argv[2] == 'tty', sys.argv[3:]
got = {}
ends = {}
for name, want in (('out', want_out), ('err', want_err)):
    r, w = pty.openpty() if want else os.pipe()
    ends[name] = (r, w)
    got[name] = b''
p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=ends['out'][1], stderr=ends['err'][1])
for name in ends:
    os.close(ends[name][1])
open_fds = {ends[n][0]: n for n in ends}
while open_fds:
    ready, _, _ = select.select(list(open_fds), [], [], 60)
    if not ready:
        break
    for fd in ready:
        try:
            data = os.read(fd, 65536)
        except OSError:
            data = b''
        if not data:
            del open_fds[fd]
        else:
            got[open_fds[fd]] += data
rc = p.wait()
T = os.environ['T']
open(T + '/out', 'wb').write(got['out'])
open(T + '/err', 'wb').write(got['err'])
sys.exit(rc)
EOF
	rc=$?
}
export T
esc() {
	grep -q "$(printf '\033')" "$1"
}

# ---- colour ----
tty tty pipe "$PROFGATE" gate -b "$B" -c "$C"
check "gate on a terminal: exit 1, the verdict in red" \
	eval '[ "$rc" -eq 1 ] && grep -q "^profgate gate: $(printf "\033")\[1;31mfail$(printf "\033")\[0m" "$T/out"'
check "... and each failing metric's verdict too, its column kept" \
	eval 'grep -q "^  $(printf "\033")\[1;31mfail$(printf "\033")\[0m         family.matmul.us_per_step" "$T/out"'
tty pipe pipe "$PROFGATE" gate -b "$B" -c "$C"
check "gate into a pipe: no escape code" eval '[ "$rc" -eq 1 ] && ! esc "$T/out" && grep -q "^profgate gate: fail$" "$T/out"'
tty tty pipe env NO_COLOR=1 "$PROFGATE" gate -b "$B" -c "$C"
check "gate on a terminal with NO_COLOR=1: no escape code" eval '[ "$rc" -eq 1 ] && ! esc "$T/out"'
tty tty pipe env NO_COLOR=no "$PROFGATE" gate -b "$B" -c "$C"
check "NO_COLOR=no (any non-empty value): no escape code" eval '[ "$rc" -eq 1 ] && ! esc "$T/out"'
tty tty pipe env NO_COLOR= "$PROFGATE" gate -b "$B" -c "$C"
check "NO_COLOR empty: colour" eval '[ "$rc" -eq 1 ] && esc "$T/out"'
tty tty pipe env TERM=dumb "$PROFGATE" gate -b "$B" -c "$C"
check "TERM=dumb: no escape code" eval '[ "$rc" -eq 1 ] && ! esc "$T/out"'
tty tty tty "$PROFGATE" gate -b "$B" -c "$C" --json "$T/v.json" --report "$T/v.md"
check "the files written on a terminal hold no escape code" \
	eval '[ "$rc" -eq 1 ] && ! esc "$T/v.json" && ! esc "$T/v.md"'

# ---- progress ----
tty pipe tty env PROFGATE_PROGRESS_AFTER_MS=0 "$PROFGATE" summarize "$B" -o "$T/s.json"
check "summarize with stderr on a terminal: the reading and analysing phases on stderr" \
	eval '[ "$rc" -eq 0 ] && has "$T/err" "profgate: reading: " && has "$T/err" " of 1 file, " && has "$T/err" "profgate: analysing: 68.7k events, "'
check "... and the line wiped at the end (the last bytes are spaces and a carriage return)" \
	eval 'tail -c 2 "$T/err" | od -c | grep -q " \\\\r"'
check "... the summary holds none of it" eval '! grep -q "reading" "$T/s.json" && ! esc "$T/s.json"'
tty pipe tty env PROFGATE_PROGRESS_AFTER_MS=0 "$PROFGATE" summarize -q "$B" -o "$T/s.json"
check "summarize -q: no progress" eval '[ "$rc" -eq 0 ] && ! [ -s "$T/err" ]'
tty pipe tty env PROFGATE_PROGRESS_AFTER_MS=0 "$PROFGATE" gate --quiet -b "$B" -c "$C"
check "gate --quiet: no progress" eval '[ "$rc" -eq 1 ] && ! [ -s "$T/err" ]'
tty tty pipe env PROFGATE_PROGRESS_AFTER_MS=0 "$PROFGATE" summarize "$B" -o "$T/s.json"
check "stderr not a terminal: no progress" eval '[ "$rc" -eq 0 ] && ! [ -s "$T/err" ] && ! [ -s "$T/out" ]'
tty pipe tty "$PROFGATE" summarize "$B" -o "$T/s.json"
check "a read shorter than two seconds: no progress" eval '[ "$rc" -eq 0 ] && ! [ -s "$T/err" ]'
pg summarize --help
check "--help lists -q, --quiet" grep -q "^  -q, --quiet  *no progress line on stderr" "$T/out"

done_testing
