#!/bin/sh
# The command line end to end: help, version, usage errors (exit 2, one line), inspect on small
# hand-written fixtures in text and --json, a bad file among good ones, unwritable stdout, the
# docs/cli.md command list, and byte-identical output across runs.
set -u
. "$(dirname "$0")/lib/tap.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)

# jcheck TITLE JSONFILE EXPR...: python expressions over d (the document) and f (its first
# file) that must all be true; the failing ones are printed as diagnostics.
jcheck() {
	_t=$1
	shift
	pycheck "$_t" 'try:
    d = json.load(open(sys.argv[1]))
except ValueError as x:
    sys.exit("not JSON: %s" % x)
f = d["files"][0] if d.get("files") else None' "$@"
}

# usage_error TITLE WORD ARGS...: exit 2, nothing on stdout, one stderr line naming WORD.
usage_error() {
	_title=$1 _word=$2
	shift 2
	pg "$@"
	if [ "$rc" -eq 2 ] && [ ! -s "$T/out" ] && [ "$(lines "$T/err")" -eq 1 ] &&
		grep -q '^profgate: ' "$T/err" && has "$T/err" "$_word"; then
		ok "$_title: exit 2, one line"
	else
		not_ok "$_title: exit $rc, $(lines "$T/err") stderr lines"
		diag_file "$T/err" 3
	fi
}

# ---- help and version ----
pg --help
check "--help: exit 0, usage on stdout listing inspect" \
	eval '[ "$rc" -eq 0 ] && [ ! -s "$T/err" ] && grep -q "^usage: profgate" "$T/out" &&
	grep -q "^  inspect " "$T/out"'
cp "$T/out" "$T/help"
pg -h
check "-h: the same as --help" eval '[ "$rc" -eq 0 ] && cmp -s "$T/out" "$T/help"'
pg inspect --help
check "inspect --help: exit 0, inspect usage with --json" \
	eval '[ "$rc" -eq 0 ] && [ ! -s "$T/err" ] && grep -q "^usage: profgate inspect" "$T/out" &&
	grep -q -- "--json" "$T/out"'
cp "$T/out" "$T/inspect_help"
pg help inspect
check "help inspect: the same as inspect --help" eval '[ "$rc" -eq 0 ] && cmp -s "$T/out" "$T/inspect_help"'
version=$(sed -n 's/^VERSION := *//p' "$ROOT/Makefile")
pg --version
check "--version: 'profgate $version' as the Makefile's VERSION" \
	eval '[ "$rc" -eq 0 ] && [ "$(cat "$T/out")" = "profgate $version" ] && [ ! -s "$T/err" ]'

# Every command in --help has a '## `profgate NAME' section in docs/cli.md, and back.
sed -n 's/^  \([a-z][a-z-]*\)  .*/\1/p' "$T/help" | sort >"$T/cmds_help"
# (a command with subcommands, like history, has one section per subcommand)
sed -n 's/^## `profgate \([a-z][a-z-]*\).*/\1/p' "$ROOT/docs/cli.md" | sort -u >"$T/cmds_readme"
if [ -s "$T/cmds_help" ] && cmp -s "$T/cmds_help" "$T/cmds_readme"; then
	ok "docs/cli.md documents exactly the commands --help lists ($(tr '\n' ' ' <"$T/cmds_help"))"
else
	not_ok "docs/cli.md and --help list different commands"
	diag "help: $(tr '\n' ' ' <"$T/cmds_help")  docs/cli.md: $(tr '\n' ' ' <"$T/cmds_readme")"
fi

# ---- every command's --help against its docs/cli.md heading ----
# A command's docs/cli.md heading is its usage line as --help prints it (unwrapped), so both name the
# same options; the option list of --help names them too, and each is accepted. A command with
# subcommands (history) is checked per subcommand.
# usage_of FILE: the usage line of a --help output, its continuation lines joined.
usage_of() {
	awk 'NR == 1 { sub(/^usage: /, ""); u = $0; next }
	     /^       / { sub(/^ +/, ""); u = u " " $0; next }
	     { exit }
	     END { print u }' "$1"
}
# help_opts FILE: the long options of a --help option list but the two every command takes
# (--help, --quiet: not in usage lines), one a line.
help_opts() {
	sed -n '/^options:$/,$s/^ *\(-[a-zA-Z], \)\{0,1\}\(--[a-z][a-z0-9-]*\).*/\2/p' "$1" |
		grep -vx -e --help -e --quiet | sort -u
}
# text_opts TEXT HELPFILE: the options TEXT names, a short one as its long name in HELPFILE.
text_opts() {
	printf '%s\n' "$1" | grep -oE '(^|[][ (|])--?[a-zA-Z][a-zA-Z0-9-]*' | sed 's/^[][ (|]//' |
		while read -r _o; do
			case $_o in
			--*) echo "$_o" ;;
			*)
				_l=$(sed -n "s/^  $_o, \(--[a-z][a-z0-9-]*\).*/\1/p" "$2")
				echo "${_l:-$_o}"
				;;
			esac
		done | sort -u
}
sed -n 's/^## `\(profgate [^`]*\)`$/\1/p' "$ROOT/docs/cli.md" >"$T/headings"
mkdir "$T/acc"
# check_help CMD...: the checks for one command or subcommand.
check_help() {
	_cmd=$*
	pg "$@" --help
	cp "$T/out" "$T/cmd_help"
	if [ "$rc" -ne 0 ] || ! grep -q "^usage: profgate $_cmd" "$T/cmd_help"; then
		not_ok "$_cmd --help: exit $rc, no usage line"
		return
	fi
	_usage=$(usage_of "$T/cmd_help")
	_heading=$(grep -e "^profgate $_cmd\$" -e "^profgate $_cmd " "$T/headings")
	if [ "$(printf '%s\n' "$_heading" | grep -c .)" -ne 1 ]; then
		not_ok "$_cmd: docs/cli.md has no one '## \`profgate $_cmd ...\`' heading"
		return
	fi
	help_opts "$T/cmd_help" >"$T/opts_help"
	text_opts "$_usage" "$T/cmd_help" >"$T/opts_usage"
	text_opts "$_heading" "$T/cmd_help" >"$T/opts_readme"
	_why=
	for _o in $(comm -23 "$T/opts_help" "$T/opts_readme"); do
		_why="$_why $_o is in '$_cmd --help' but not in its docs/cli.md heading;"
	done
	for _o in $(comm -13 "$T/opts_help" "$T/opts_readme"); do
		_why="$_why $_o is in the docs/cli.md heading but not in '$_cmd --help';"
	done
	for _o in $(comm -3 "$T/opts_help" "$T/opts_usage"); do
		_why="$_why $_o is not in both the usage line and the option list of '$_cmd --help';"
	done
	if [ -z "$_why" ]; then
		ok "$_cmd: --help and the docs/cli.md heading name the same options ($(grep -c . <"$T/opts_help"))"
	else
		not_ok "$_cmd: --help and the docs/cli.md heading name different options:$_why"
	fi
	if [ "$_usage" = "$_heading" ]; then
		ok "$_cmd: the docs/cli.md heading is the usage line"
	else
		not_ok "$_cmd: the docs/cli.md heading is not the usage line"
		diag "usage:  $_usage"
		diag "docs/cli.md: $_heading"
	fi
	_why=
	while read -r _o; do
		# a value no command takes quietly: every command stops at a usage or input error
		if grep -q "^ *\(-., \)\{0,1\}$_o [^ ]" "$T/cmd_help"; then
			pg "$@" "$_o=$T/acc/v"
		else
			pg "$@" "$_o"
		fi
		has "$T/err" "unknown option" && _why="$_why $_o"
	done <"$T/opts_help"
	if [ -z "$_why" ]; then
		ok "$_cmd: every option --help lists is accepted"
	else
		not_ok "$_cmd: options --help lists are refused as unknown:$_why"
	fi
}
for c in $(cat "$T/cmds_help"); do
	pg "$c" --help
	if grep -q '^subcommands:$' "$T/out"; then
		for s in $(sed -n '/^subcommands:$/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p' "$T/out"); do
			check_help "$c" "$s"
		done
	else
		check_help "$c"
	fi
done

# ---- usage errors ----
usage_error "unknown command" frobnicate frobnicate x.json
usage_error "unknown option" --frobnicate inspect --frobnicate x.json
usage_error "inspect without input" inspect inspect
usage_error "inspect --json=VALUE (a flag takes no value)" json inspect --json=yes x.json
pg
check "no arguments: exit 2, usage on stderr, nothing on stdout" \
	eval '[ "$rc" -eq 2 ] && [ ! -s "$T/out" ] && grep -q "^usage: profgate" "$T/err"'

# ---- fixtures ----
# Kineto: 13 entries (M 3, X 6, s 1, f 1, i 1, C 1). Kept: the 6 X, the flow pair and the
# instant = 9; the counter is only counted. GPU 0 holds the two kernels and the flow end (3),
# the python3 host thread the rest (6). ProfilerStep#5 and #6 are the step markers.
cat >"$T/kineto.json" <<'EOF'
{"schemaVersion": 1,
 "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85000000000}],
 "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8},
 "traceEvents": [
  {"ph": "M", "name": "process_name", "pid": 4242, "tid": 0, "args": {"name": "python3"}},
  {"ph": "M", "name": "process_labels", "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}},
  {"ph": "M", "name": "thread_name", "pid": 4242, "tid": 4242, "args": {"name": "thread 4242 (python3)"}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#5", "pid": 4242, "tid": 4242, "ts": 1000, "dur": 500},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 4242, "tid": 4242, "ts": 1010, "dur": 20, "args": {"External id": 1}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 4242, "tid": 4242, "ts": 1015, "dur": 5, "args": {"correlation": 77}},
  {"ph": "X", "cat": "kernel", "name": "sm90_gemm", "pid": 0, "tid": 7, "ts": 1030, "dur": 40, "args": {"correlation": 77, "stream": 7}},
  {"ph": "s", "cat": "ac2g", "id": 77, "name": "ac2g", "pid": 4242, "tid": 4242, "ts": 1015},
  {"ph": "f", "cat": "ac2g", "id": 77, "name": "ac2g", "pid": 0, "tid": 7, "ts": 1030, "bp": "e"},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#6", "pid": 4242, "tid": 4242, "ts": 1600, "dur": 500},
  {"ph": "X", "cat": "kernel", "name": "sm90_gemm", "pid": 0, "tid": 7, "ts": 1630, "dur": 40, "args": {"correlation": 78}},
  {"ph": "i", "s": "t", "name": "Iteration Start: PyTorch Profiler", "pid": 4242, "tid": 4242, "ts": 1000},
  {"ph": "C", "name": "memory", "pid": 4242, "ts": 1000, "args": {"bytes": 1}}
 ],
 "displayTimeUnit": "ms",
 "baseTimeNanoseconds": 1700000000000000000,
 "traceName": "kineto.json"}
EOF
# JAX export: /device:GPU:0 with a stream, XLA Ops, Steps (steps 0 and 1) and XLA Modules
# lines; /host:CPU with one thread. 14 entries plus the trailing {} = 15; only M and X.
cat >"$T/jax.trace.json" <<'EOF'
{"displayTimeUnit":"ns","metadata":{"highres-ticks":true},"traceEvents":[
{"ph":"M","pid":1,"name":"process_name","args":{"name":"/device:GPU:0"}},
{"ph":"M","pid":1,"name":"process_sort_index","args":{"sort_index":1}},
{"ph":"M","pid":1,"tid":7,"name":"thread_name","args":{"name":"Stream #7(Kernel)"}},
{"ph":"M","pid":1,"tid":1000,"name":"thread_name","args":{"name":"XLA Ops"}},
{"ph":"M","pid":1,"tid":1001,"name":"thread_name","args":{"name":"Steps"}},
{"ph":"M","pid":1,"tid":1002,"name":"thread_name","args":{"name":"XLA Modules"}},
{"ph":"M","pid":701,"name":"process_name","args":{"name":"/host:CPU"}},
{"ph":"M","pid":701,"tid":55,"name":"thread_name","args":{"name":"python3"}},
{"ph":"X","pid":1,"tid":7,"ts":10.5,"dur":2.25,"name":"fusion.1","args":{"correlation_id":"123","hlo_op":"fusion.1","hlo_module":"jit_step"}},
{"ph":"X","pid":1,"tid":1000,"ts":10.5,"dur":2.25,"name":"fusion.1","args":{"hlo_op":"fusion.1"}},
{"ph":"X","pid":1,"tid":1001,"ts":10,"dur":5,"name":"0"},
{"ph":"X","pid":1,"tid":1001,"ts":20,"dur":5,"name":"1"},
{"ph":"X","pid":1,"tid":1002,"ts":10,"dur":4,"name":"jit_step(123)"},
{"ph":"X","pid":701,"tid":55,"ts":1,"dur":30,"name":"PjitFunction(step)"},
{}]}
EOF
gzip -c "$T/jax.trace.json" >"$T/jax.trace.json.gz"
# Generic bare array: one B/E pair (a 10 us span) and an E without a begin.
printf '[{"ph":"B","name":"outer","pid":1,"tid":1,"ts":1},{"ph":"E","pid":1,"tid":1,"ts":11},\n{"ph":"E","pid":1,"tid":1,"ts":12}]\n' \
	>"$T/generic.json"

# ---- inspect, text ----
pg inspect "$T/kineto.json"
cp "$T/out" "$T/kineto.txt"
if [ "$rc" -eq 0 ] && [ ! -s "$T/err" ] &&
	[ "$(head -n 1 "$T/kineto.txt")" = "$T/kineto.json" ] &&
	has "$T/kineto.txt" "chrome-json, dialect kineto" &&
	has "$T/kineto.txt" "events     13 (C 1, M 3, X 6, f 1, i 1, s 1)" &&
	has "$T/kineto.txt" "rank 3 of 8 (nccl)" &&
	has "$T/kineto.txt" "displayTimeUnit ms (display only)" &&
	grep -q '^    gpu0 .* 3 events  NVIDIA H100 80GB HBM3$' "$T/kineto.txt" &&
	grep -q '^    cpu .*python3 .* 6 events$' "$T/kineto.txt" &&
	has "$T/kineto.txt" "profiler-step: 2 markers (steps 5..6)"; then
	ok "inspect kineto fixture (text): dialect, phase counts, rank, devices, steps"
else
	not_ok "inspect kineto fixture (text): exit $rc"
	diag_file "$T/kineto.txt" 30
	diag_file "$T/err" 3
fi

pg inspect "$T/jax.trace.json.gz"
if [ "$rc" -eq 0 ] && [ ! -s "$T/err" ] && has "$T/out" "chrome-json (gzip), dialect jax" &&
	has "$T/out" "events     15 (M 8, X 6)" &&
	grep -q '^    gpu0 .*/device:GPU:0 .* 5 events$' "$T/out" &&
	grep -q 'device-stream .*Stream #7(Kernel)' "$T/out" &&
	grep -q 'device-ops .*XLA Ops' "$T/out" && grep -q 'steps .*Steps .* 2 events' "$T/out" &&
	grep -q 'modules .*XLA Modules' "$T/out" && grep -q 'host-thread .*python3' "$T/out" &&
	has "$T/out" "steps-line: 2 markers (steps 0..1)" && has "$T/out" "modules: 1 markers"; then
	ok "inspect JAX fixture (gzip, text): dialect, devices, track kinds, step lines"
else
	not_ok "inspect JAX fixture (gzip, text): exit $rc"
	diag_file "$T/out" 30
	diag_file "$T/err" 3
fi

# ---- inspect --json ----
if command -v python3 >/dev/null 2>&1; then
	pg inspect --json "$T/kineto.json"
	cp "$T/out" "$T/kineto.out.json"
	check "inspect --json kineto fixture: exit 0, nothing on stderr" \
		eval '[ "$rc" -eq 0 ] && [ ! -s "$T/err" ]'
	check "inspect --json output is valid JSON" \
		python3 -c 'import json,sys; json.load(sys.stdin)' <"$T/kineto.out.json" 2>/dev/null
	jcheck "inspect --json kineto fixture: file facts" "$T/kineto.out.json" \
		"len(d['files']) == 1" \
		"f['path'] == sys.argv[1].replace('.out.json', '.json')" \
		"f['format'] == 'chrome-json' and f['compression'] == 'none'" \
		"f['dialect'] == 'kineto' and f['producer']['framework'] == 'pytorch'" \
		"f['events'] == 13 and f['events_kept'] == 9" \
		"f['phases'] == {'C': 1, 'M': 3, 'X': 6, 'f': 1, 'i': 1, 's': 1}" \
		"f['producer']['schema_version'] == 1" \
		"f['producer']['display_time_unit'] == 'ms'" \
		"f['producer']['base_time_ns'] == 1700000000000000000" \
		"f['producer']['device_kind'] == 'NVIDIA H100 80GB HBM3'" \
		"f['distributed'] == {'rank': 3, 'world_size': 8, 'backend': 'nccl'}" \
		"f['declared_devices'] == 1" \
		"f['warnings'] == []"
	jcheck "inspect --json kineto fixture: devices, tracks, steps" "$T/kineto.out.json" \
		"sorted((x['id'], x['kind'], x['events']) for x in f['devices']) == [('cpu', 'cpu', 6), ('gpu0', 'gpu', 3)]" \
		"[x['name'] for x in f['devices'] if x['id'] == 'gpu0'] == ['NVIDIA H100 80GB HBM3']" \
		"[x['label'] for x in f['devices'] if x['id'] == 'gpu0'] == ['GPU 0']" \
		"all(x['rank'] == 3 for x in f['devices'])" \
		"[(x['kind'], x['events'], x['first_us'], x['span_us']) for x in f['tracks'] if x['device'] == 'gpu0'] == [('device-stream', 3, 1030.0, 640.0)]" \
		"[(x['kind'], x['events'], x['first_us'], x['span_us']) for x in f['tracks'] if x['device'] == 'cpu'] == [('host-thread', 6, 1000.0, 1100.0)]" \
		"f['steps'] == [{'source': 'profiler-step', 'markers': 2, 'first_step': 5, 'last_step': 6}]"
	pg inspect --json "$T/jax.trace.json.gz"
	cp "$T/out" "$T/jax.out.json"
	jcheck "inspect --json JAX fixture: dialect, device kinds, track kinds, steps" "$T/jax.out.json" \
		"f['dialect'] == 'jax' and f['producer']['framework'] == 'jax'" \
		"f['compression'] == 'gzip' and f['events'] == 15 and f['phases'] == {'M': 8, 'X': 6}" \
		"f['producer']['display_time_unit'] == 'ns'" \
		"sorted((x['id'], x['label'], x['events']) for x in f['devices']) == [('cpu', '/host:CPU', 1), ('gpu0', '/device:GPU:0', 5)]" \
		"sorted((x['name'], x['kind']) for x in f['tracks']) == sorted([('Stream #7(Kernel)', 'device-stream'), ('XLA Ops', 'device-ops'), ('Steps', 'steps'), ('XLA Modules', 'modules'), ('python3', 'host-thread')])" \
		"[(x['first_us'], x['span_us']) for x in f['tracks'] if x['name'] == 'Stream #7(Kernel)'] == [(10.5, 2.25)]" \
		"{s['source']: (s['markers'], s['first_step'], s['last_step']) for s in f['steps']} == {'steps-line': (2, 0, 1), 'modules': (1, None, None)}"
	pg inspect --json "$T/generic.json"
	cp "$T/out" "$T/generic.out.json"
	jcheck "inspect --json generic bare array: B/E paired, unmatched E warned" "$T/generic.out.json" \
		"f['dialect'] == 'generic' and f['events'] == 3 and f['events_kept'] == 1" \
		"f['phases'] == {'B': 1, 'E': 2}" \
		"[(x['events'], x['span_us']) for x in f['tracks']] == [(1, 10.0)]" \
		"[w['code'] for w in f['warnings']] == ['unmatched-end']"
else
	skip "inspect --json checks: python3 not found"
fi

# ---- several inputs, one of them bad ----
printf '{"traceEvents": [' >"$T/cut.json"
pg inspect "$T/kineto.json" "$T/cut.json" "$T/generic.json"
if [ "$rc" -eq 3 ] && [ "$(lines "$T/err")" -eq 1 ] && has "$T/err" "$T/cut.json" &&
	grep -qx "$T/kineto.json" "$T/out" && grep -qx "$T/generic.json" "$T/out" &&
	! grep -qx "$T/cut.json" "$T/out"; then
	ok "a bad input among good ones: exit 3, one error line, the good files still reported"
else
	not_ok "a bad input among good ones: exit $rc"
	diag_file "$T/err" 3
fi

# ---- output that cannot be written ----
if [ -w /dev/full ]; then
	timeout 60 "$PROFGATE" inspect "$T/kineto.json" >/dev/full 2>"$T/err"
	rc=$?
	check "stdout unwritable (/dev/full): exit 3 with one error line" \
		eval '[ "$rc" -eq 3 ] && [ "$(lines "$T/err")" -eq 1 ] && grep -q "^profgate: " "$T/err"'
else
	skip "stdout unwritable: /dev/full not available"
fi

# ---- determinism: two runs, byte-identical output ----
set -- "$T/kineto.json" "$T/jax.trace.json.gz" "$T/generic.json"
for f in "$ROOT"/tests/data/examples/*.json.gz; do
	[ -f "$f" ] && set -- "$@" "$f"
done
same=1
for mode in text json; do
	flag=
	[ "$mode" = json ] && flag=--json
	# shellcheck disable=SC2086
	timeout 60 "$PROFGATE" inspect $flag "$@" >"$T/run1" 2>&1
	# shellcheck disable=SC2086
	timeout 60 "$PROFGATE" inspect $flag "$@" >"$T/run2" 2>&1
	cmp -s "$T/run1" "$T/run2" || same=0
	[ -s "$T/run1" ] || same=0
done
check "determinism: two runs over $# files are byte-identical (text and --json)" [ "$same" -eq 1 ]

done_testing
