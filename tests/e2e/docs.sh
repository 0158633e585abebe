#!/bin/sh
# The documentation's examples and links. In README.md and docs/*.md a fenced block whose info
# string is exactly `sh run` is run: the blocks of one file in order, each with `sh -e`, in one
# fresh temporary folder of that file (the working directory), with `profgate` (the binary under
# test) first on PATH, EXAMPLES the bundled profiles (tests/data/examples), PROFGATE_CACHE_DIR
# and HOME inside the folder, NO_COLOR=1, no tokens, and GitHub, W&B and HTTP proxies pointed at
# a closed port, so no example reaches the network. A block must exit 0 (an expected failure is written
# `cmd || test $? -eq 4`); a failing one is reported with its file, line and output, and the
# blocks after it in that file are skipped (they build on it). A fence whose info string names
# `run` but is not exactly `sh run` is a typo that would silently not run: it fails.
# Then every relative link of those files must name a file or folder that exists, and a
# #fragment a heading of the target page (GitHub's anchor for it); the README links every page.
set -u
# test-tier: full
. "$(dirname "$0")/lib/tap.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
EXAMPLES=$ROOT/tests/data/examples
BLOCK_TIMEOUT=${PG_DOCS_BLOCK_TIMEOUT:-60}
case $PROFGATE in
/*) ;;
*) PROFGATE=$(pwd)/$PROFGATE ;;
esac

mkdir -p "$T/bin"
ln -s "$PROFGATE" "$T/bin/profgate"

cd "$ROOT" || exit 1
files="README.md $(ls docs/*.md)"

# blocks FILE: split FILE's `sh run` blocks into $T/blocks/<n>.sh, one line each of
# "<n> <line of the opening fence>" on stdout; a fence naming `run` otherwise is "bad <line> <info>".
blocks() {
	rm -rf "$T/blocks"
	mkdir -p "$T/blocks"
	awk -v dir="$T/blocks" '
	/^[ \t]*(```|~~~)/ {
		line = $0
		sub(/^[ \t]*/, "", line)
		fence = substr(line, 1, 3)
		info = substr(line, 4)
		if (!open) {
			open = fence
			if (info == "sh run") {
				n++
				out = dir "/" n ".sh"
				printf "" > out
				print n, NR
				next
			}
			if (info ~ /(^|[^a-z_-])run([^a-z_-]|$)/) print "bad", NR, info
			next
		}
		if (fence == open && info ~ /^[ \t]*$/) {
			if (out != "") close(out)
			open = ""
			out = ""
			next
		}
	}
	out != "" { print > out }
	' "$1"
}

total_blocks=0
for f in $files; do
	blocks "$f" >"$T/list"
	grep '^bad ' "$T/list" >"$T/bad"
	while read -r _ line info; do
		not_ok "$f:$line: fence info string '$info' names run but is not exactly 'sh run'"
	done <"$T/bad"
	grep -v '^bad ' "$T/list" >"$T/runs"
	[ -s "$T/runs" ] || continue
	work=$T/work/$(echo "$f" | tr / _)
	mkdir -p "$work/.home"
	failed=
	start=$(date +%s)
	while read -r n line; do
		total_blocks=$((total_blocks + 1))
		if [ -n "$failed" ]; then
			skip "$f:$line: the block at $f:$failed failed first"
			continue
		fi
		(
			cd "$work" || exit 1
			# outside CI: no runner's files (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, ...), event,
			# inputs or tokens, whatever environment make check runs in
			for v in $(env | sed -n 's/^\(\(GITHUB\|INPUT\|RUNNER\|WANDB\|PROFGATE\)_[A-Za-z0-9_]*\)=.*/\1/p'); do
				unset "$v"
			done
			unset XDG_CACHE_HOME CI
			PATH=$T/bin:$PATH EXAMPLES=$EXAMPLES PROFGATE_CACHE_DIR=$work/.cache HOME=$work/.home \
				GIT_CONFIG_NOSYSTEM=1 NO_COLOR=1 GITHUB_API_URL=http://127.0.0.1:9 \
				WANDB_BASE_URL=http://127.0.0.1:9 http_proxy=http://127.0.0.1:9 \
				https_proxy=http://127.0.0.1:9 ALL_PROXY=http://127.0.0.1:9 no_proxy= NO_PROXY= \
				timeout "$BLOCK_TIMEOUT" sh -e "$T/blocks/$n.sh"
		) >"$T/block.out" 2>&1 </dev/null
		brc=$?
		if [ "$brc" -eq 0 ]; then
			ok "$f:$line: sh run block"
		else
			failed=$line
			not_ok "$f:$line: sh run block exited $brc"
			diag "the block ($f from line $line):"
			diag_file "$T/blocks/$n.sh" 40
			diag "its output (last 30 lines):"
			tail -n 30 "$T/block.out" | sed 's/^/#   /'
		fi
	done <"$T/runs"
	diag "$f: $(wc -l <"$T/runs" | tr -d ' ') blocks in $(($(date +%s) - start)) s"
done
if [ "$total_blocks" -gt 0 ]; then
	ok "the docs hold $total_blocks runnable blocks"
else
	not_ok "no sh run block in README.md or docs/*.md"
fi

# ---- links ----
# Every [text](target) outside code blocks and code spans whose target is not a URL: the path
# (relative to the page) exists, and a #fragment is the GitHub anchor of a heading of the page
# it names (lower case, punctuation but - and _ dropped, spaces to -, repeats numbered -1, -2).
# shellcheck disable=SC2086 # $files: the pages, one word each
if python3 - "$ROOT" $files >"$T/links" 2>&1 <<'EOF'; then
import os, re, sys

root = sys.argv[1]


def prose_lines(path):
    fence = None
    for n, line in enumerate(open(os.path.join(root, path), encoding="utf-8"), 1):
        s = line.strip()
        m = re.match(r"(```|~~~)", s)
        if m:
            if fence is None:
                fence = m.group(1)
            elif s == fence:
                fence = None
            continue
        if fence is None:
            yield n, line


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


anchors_of = {}


def anchors(path):
    if path not in anchors_of:
        seen = {}
        out = set()
        for _, line in prose_lines(path):
            m = re.match(r"#{1,6} +(.*?) *#* *$", line)
            if not m:
                continue
            a = slug(m.group(1))
            if a in seen:
                seen[a] += 1
                a = "%s-%d" % (a, seen[a])
            else:
                seen[a] = 0
            out.add(a)
        anchors_of[path] = out
    return anchors_of[path]


bad = 0
count = 0
for page in sys.argv[2:]:
    for n, line in prose_lines(page):
        # code spans are not links, but a link's text may be one
        line = re.sub(r"(?<!\[)`[^`]*`(?!\])", "", line)
        for m in re.finditer(r"\]\(([^)\s]+)(?: \"[^\"]*\")?\)", line):
            target = m.group(1)
            if re.match(r"[a-z][a-z0-9+.-]*:", target):
                continue
            count += 1
            path, _, frag = target.partition("#")
            if path:
                full = os.path.normpath(os.path.join(os.path.dirname(page), path))
            else:
                full = page
            if not os.path.exists(os.path.join(root, full)):
                print("%s:%d: %s: no such file (%s)" % (page, n, target, full))
                bad = 1
                continue
            if frag and full.endswith(".md") and frag not in anchors(full):
                print("%s:%d: %s: %s has no heading with the anchor #%s" % (page, n, target, full, frag))
                bad = 1
linked = set()
for n, line in prose_lines("README.md"):
    linked.update(re.findall(r"\]\((docs/[^)#\s]+\.md)", line))
for page in sys.argv[2:]:
    if page.startswith("docs/") and page not in linked:
        print("README.md: no link to %s" % page)
        bad = 1
print("%d links" % count)
sys.exit(bad)
EOF
	ok "every relative link of README.md and docs/*.md names a file and heading that exist, the README links every docs page ($(tail -n 1 "$T/links"))"
else
	not_ok "broken links in README.md or docs/*.md"
	diag_file "$T/links" 40
fi

done_testing
