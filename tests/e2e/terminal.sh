#!/bin/sh
# Terminal conventions on real pseudo-terminals (python3's pty module): the verdict's colour
# appears on a terminal and never in a pipe, with NO_COLOR set (any non-empty value) or with
# TERM=dumb; the progress line appears on stderr when it is a terminal (after
# PROFGATE_PROGRESS_AFTER_MS, 0 here, so a short read shows it) and never with -q/--quiet, when
# stderr is not a terminal, nor in the output files. Then the generated shell completions and man
# page: bash completes commands, subcommands, options and option values in a real bash
# (COMP_WORDS, complete -p); zsh (when installed) parses the script and dispatches to
# _describe/_arguments with every option; `man -l` renders the page without warnings; every
# command --help lists and every option of its option list appears in all three.
set -u
# test-tier: full
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
# the analysis takes 45.4k of the file's 68.7k events: flow endpoints are counted, not kept
tty pipe tty env PROFGATE_PROGRESS_AFTER_MS=0 "$PROFGATE" summarize "$B" -o "$T/s.json"
check "summarize with stderr on a terminal: the reading and analysing phases on stderr" \
	eval '[ "$rc" -eq 0 ] && has "$T/err" "profgate: reading: " && has "$T/err" " of 1 file, " && has "$T/err" "profgate: analysing: 45.4k events, "'
check "... and the line wiped at the end (the last bytes are spaces and a carriage return)" \
	eval 'tail -c 2 "$T/err" | od -c | grep -q " \\\\r"'
check "... the summary holds none of it" eval '! grep -q "reading" "$T/s.json" && ! esc "$T/s.json"'
tty pipe tty env PROFGATE_PROGRESS_AFTER_MS=0 "$PROFGATE" summarize -q "$B" -o "$T/s.json"
check "summarize -q: no progress" eval '[ "$rc" -eq 0 ] && ! [ -s "$T/err" ]'
tty pipe tty env PROFGATE_PROGRESS_AFTER_MS=0 "$PROFGATE" gate --quiet -b "$B" -c "$C"
check "gate --quiet: no progress" eval '[ "$rc" -eq 1 ] && ! [ -s "$T/err" ]'
tty tty pipe env PROFGATE_PROGRESS_AFTER_MS=0 "$PROFGATE" summarize "$B" -o "$T/s.json"
check "stderr not a terminal: no progress" eval '[ "$rc" -eq 0 ] && ! [ -s "$T/err" ] && ! [ -s "$T/out" ]'
# the delay long enough that no machine, however busy, reads the example for that long
tty pipe tty env PROFGATE_PROGRESS_AFTER_MS=600000 "$PROFGATE" summarize "$B" -o "$T/s.json"
check "a read shorter than the delay: no progress" eval '[ "$rc" -eq 0 ] && ! [ -s "$T/err" ]'
pg summarize --help
check "--help lists -q, --quiet" grep -q "^  -q, --quiet  *no progress line on stderr" "$T/out"

# ---- completion and the man page ----
"$PROFGATE" completion bash >"$T/pg.bash" 2>"$T/err"
check "completion bash: a script" eval '[ -s "$T/pg.bash" ] && ! [ -s "$T/err" ]'
# bcomp WORDS...: what the bash completion offers for the command line WORDS (the last is being
# completed; "" for a new word).
bcomp() {
	bash --norc --noprofile -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _profgate
		printf "%s\n" "${COMPREPLY[@]}"' bcomp "$T/pg.bash" "$@"
}
check "bash: complete -p names the function" \
	eval 'bash --norc --noprofile -c ". \"$T/pg.bash\"; complete -p profgate" | grep -q "^complete -o filenames -F _profgate profgate$"'
check "bash: 'profgate ga' completes gate" eval '[ "$(bcomp profgate ga)" = gate ]'
check "bash: 'profgate history tr' completes trend" eval '[ "$(bcomp profgate history tr)" = trend ]'
check "bash: 'profgate gate --history-f' completes --history-from" \
	eval '[ "$(bcomp profgate gate --history-f)" = --history-from ]'
check "bash: 'profgate history trend --format ' offers md and json" \
	eval '[ "$(bcomp profgate history trend --format "" | tr "\n" " ")" = "md json " ]'
check "bash: 'profgate summarize -' offers -q and --quiet" \
	eval 'bcomp profgate summarize - | grep -qx -- -q && bcomp profgate summarize - | grep -qx -- --quiet'
"$PROFGATE" man >"$T/pg.1"
LC_ALL=C MANWIDTH=400 man --warnings -l "$T/pg.1" >"$T/man.txt" 2>"$T/man.err"
mrc=$?
if command -v man >/dev/null 2>&1; then
	check "man -l renders the page, no warnings" eval '[ "$mrc" -eq 0 ] && [ -s "$T/man.txt" ] && ! [ -s "$T/man.err" ]'
else
	skip "man is not installed (scripts/packages.sh lists man-db)"
fi
if command -v zsh >/dev/null 2>&1; then
	"$PROFGATE" completion zsh >"$T/_profgate"
	check "zsh parses _profgate" zsh -n "$T/_profgate"
	cat >"$T/z.zsh" <<'EOF'
_describe() { local a; for a in ${(P)${@[-1]}}; do print -r -- "describe ${a%%:*}"; done }
_arguments() { local a; for a in "$@"; do print -r -- "arg $a"; done }
source "$1" >/dev/null 2>&1
shift
words=("$@"); CURRENT=$#; _profgate
EOF
	check "zsh: 'profgate history tr' offers the subcommands" \
		eval 'zsh -f "$T/z.zsh" "$T/_profgate" profgate history tr | grep -qx "describe trend"'
	check "zsh: 'profgate history trend --for' offers --format md|json" \
		eval 'zsh -f "$T/z.zsh" "$T/_profgate" profgate history trend --for | grep -q "^arg --format=\[.*:(md json)$"'
else
	skip "zsh is not installed (scripts/packages.sh lists it)"
fi
# every command and every option of its --help option list, in all three
pg --help
cmds=$(sed -n 's/^  \([a-z][a-z-]*\)  .*/\1/p' "$T/out")
pg history --help
subs=$(sed -n 's/^  \([a-z][a-z-]*\)  .*/\1/p' "$T/out")
missing=
pairs=0
for c in $cmds; do
	case $c in history) set -- $(for s in $subs; do echo "history_$s"; done) ;; *) set -- "$c" ;; esac
	for cs in "$@"; do
		c2=$(echo "$cs" | tr _ ' ')
		pg $c2 --help
		cp "$T/out" "$T/h"
		usage=$(sed -n '1,/^$/p' "$T/h" | sed 's/^usage: //' | tr '\n' ' ' | sed 's/  */ /g; s/ $//')
		for o in $(sed -n '/^options:$/,$s/^ *\(-[a-zA-Z], \)\{0,1\}\(--[a-z][a-z0-9-]*\).*/\2/p' "$T/h"); do
			pairs=$((pairs + 1))
			esc=$(printf '%s' "${o#--}" | sed 's/-/\\-/g')
			case $o in
			--help | --quiet) grep -qF -- "\fB\-\-$esc\fR" "$T/pg.1" ;;
			*) grep -A2 -F -- ".SS \"profgate $(printf '%s' "$c2")" "$T/pg.1" >/dev/null &&
				grep -qF -- "\fB\-\-$esc\fR" "$T/pg.1" ;;
			esac || missing="$missing man:$c2:$o"
			grep -A1 "^	'$c2')" "$T/pg.bash" | grep -q -- " $o \| $o'\|'$o " || missing="$missing bash:$c2:$o"
			if [ -s "$T/_profgate" ]; then
				awk -v c="	'$c2')" '$0 == c {on = 1; next} on && /^\t;;/ {exit} on' "$T/_profgate" |
					grep -q -- "$o[=\[]\|,$o[=}]" || missing="$missing zsh:$c2:$o"
			fi
		done
		[ "$c2" = action ] && usage="profgate action"
		python3 -c 'import re, sys; t = re.sub(r"\s+", " ", open(sys.argv[1]).read()); sys.exit(sys.argv[2] not in t)' \
			"$T/man.txt" "$usage" || missing="$missing man:$c2"
	done
done
check "every command and option ($pairs of them) in the bash and zsh completions and the man page" \
	eval '[ -z "$missing" ] && [ "$pairs" -gt 80 ]'
[ -z "$missing" ] || diag "missing:$missing"

done_testing
