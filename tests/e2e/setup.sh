#!/bin/sh
# The setup action (setup/action.yml, setup/install.sh) as a runner runs it, against a loopback
# server that serves a `make dist` tarball the way a GitHub release does
# (/OWNER/NAME/releases/download/vX.Y.Z/ASSET): its step is read from setup/action.yml, its
# `${{ inputs.* }}` filled from the inputs' defaults and the test's `with:`, and run with the
# runner's variables (RUNNER_OS, RUNNER_ARCH, RUNNER_TOOL_CACHE, GITHUB_PATH, GITHUB_OUTPUT...).
# It installs into the tool cache and puts profgate on PATH, a second run downloads nothing, and
# a wrong checksum (from the release or from SHA256SUMS beside the script), a missing release, a
# foreign OS or architecture install nothing.
# The tarball: PG_DIST, else BUILD/dist's for this version and architecture (make dist), else one
# built here from $PROFGATE (scripts/dist.sh; needs patchelf and a build without sanitizers).
set -u
# installs the normal build's tarball whichever build runs it: the same under a sanitizer build
# test-sanitizers: no
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/serve.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
LIB=$TOP/tests/e2e/lib
if ! python3 -c 'import yaml' 2>/dev/null; then
	echo "1..0 # skip python3-yaml is not installed (apt-get install python3-yaml)"
	exit 0
fi
VERSION=$(sed -n 's/^VERSION := //p' "$TOP/Makefile")
ARCH=$(uname -m)
# the runner's name for it
case $ARCH in
x86_64) RUNNER_ARCH=X64 ;;
aarch64) RUNNER_ARCH=ARM64 ;;
*) RUNNER_ARCH=$ARCH ;;
esac
NAME=profgate-$VERSION-linux-$ARCH
tarball=${PG_DIST:-${PG_BUILD:-$TOP/build}/dist/$NAME.tar.gz}
# a sanitizer build (build/asan) serves the tarball of the normal build beside it (make check
# builds it first): the suite tests the action's install, not the binary's build
[ -f "$tarball" ] || [ -n "${PG_DIST:-}" ] || tarball=$TOP/build/dist/$NAME.tar.gz
if [ ! -f "$tarball" ]; then
	if ! command -v patchelf >/dev/null 2>&1 || readelf -d "$PROFGATE" | grep -q 'libasan\|libubsan'; then
		echo "1..0 # skip no $NAME.tar.gz (make dist), and none can be built here (patchelf, a build without sanitizers)"
		exit 0
	fi
	tarball=$(sh "$TOP/scripts/dist.sh" build "$PROFGATE" "$T/dist" "$VERSION") || exit 1
fi

# the release on the server: /acme/profgate/releases/download/vVERSION/{tarball,tarball.sha256}
REL=$T/www/acme/profgate/releases/download/v$VERSION
mkdir -p "$REL"
cp "$tarball" "$REL/$NAME.tar.gz"
(cd "$REL" && sha256sum "$NAME.tar.gz" >"$NAME.tar.gz.sha256")
serve_begin
serve files "$T/files/port" python3 "$LIB/files_server.py" "$T/www" "$T/files" "$T/files/log"
URL=http://127.0.0.1:$(cat "$T/files/port")

# The action's own copy (SHA256SUMS may be added beside the script by a test).
cp -r "$TOP/setup" "$T/action"

# run_setup CASE WITH_JSON [VAR=VALUE...]: the composite action's steps as the runner runs them,
# in $T/CASE/ (its tool cache shared by every case: $T/toolcache); $rc, $T/CASE/{out,path,output}.
run_setup() {
	_c=$1 _with=$2
	shift 2
	mkdir -p "$T/$_c/tmp" "$T/toolcache"
	: >"$T/$_c/path"
	: >"$T/$_c/output"
	env -i PATH=/usr/bin:/bin HOME="$T/$_c" RUNNER_OS=Linux RUNNER_ARCH="$RUNNER_ARCH" \
		RUNNER_TOOL_CACHE="$T/toolcache" RUNNER_TEMP="$T/$_c/tmp" GITHUB_PATH="$T/$_c/path" \
		GITHUB_OUTPUT="$T/$_c/output" GITHUB_ACTION_PATH="$T/action" "$@" \
		python3 - "$T/action/action.yml" "$_with" "$URL" >"$T/$_c/out" 2>&1 <<'EOF'
import json, os, re, subprocess, sys, yaml
a = yaml.safe_load(open(sys.argv[1]))
with_ = json.loads(sys.argv[2])
ctx = {"inputs": {k: with_.get(k, v.get("default", "")) for k, v in a["inputs"].items()},
       "github": {"server_url": sys.argv[3]}}
def ev(s):
    def one(m):
        scope, name = m.group(1).split(".")
        return ctx[scope][name]
    s = re.sub(r"\$\{\{\s*([a-z_]+\.[a-z_]+)\s*\}\}", one, s)
    return ev(s) if "${{" in s else s
ctx["inputs"] = {k: ev(v) for k, v in ctx["inputs"].items()}
assert a["runs"]["using"] == "composite"
for step in a["runs"]["steps"]:
    env = dict(os.environ)
    env.update({k: ev(v) for k, v in step.get("env", {}).items()})
    shell = {"sh": ["sh", "-e", "-c"], "bash": ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"]}[step["shell"]]
    rc = subprocess.call(shell + [ev(step["run"])], env=env)
    if rc:
        sys.exit(rc)
EOF
	rc=$?
}
downloads() {
	grep -c "^GET /acme/profgate/releases/download/v$VERSION/$NAME.tar.gz 200" "$T/files/log" 2>/dev/null
}
cache=$T/toolcache/profgate/$VERSION/$ARCH

pycheck "setup/action.yml: a composite action, one sh step running install.sh with the inputs" \
	'import yaml; a = yaml.safe_load(open(sys.argv[1])); s = a["runs"]["steps"]' "$TOP/setup/action.yml" \
	"a['runs']['using'] == 'composite' and len(s) == 1" \
	"s[0]['run'] == 'sh \"\$GITHUB_ACTION_PATH/install.sh\"' and s[0]['shell'] == 'sh'" \
	"sorted(s[0]['env']) == ['PG_REPOSITORY', 'PG_SERVER_URL', 'PG_VERSION']" \
	"a['inputs']['version']['default'] == '$VERSION'" \
	"set(a['outputs']) == {'path', 'version'}"

run_setup first '{"repository": "acme/profgate"}'
check "first run: exit 0, the tarball downloaded once, installed in the tool cache" \
	eval '[ "$rc" -eq 0 ] && [ "$(downloads)" = 1 ] && [ -x "$cache/bin/profgate" ] && [ -f "$cache.complete" ]'
[ "$rc" -eq 0 ] || diag_file "$T/first/out" 10
check "first run: its bin/ on GITHUB_PATH, outputs path and version" \
	eval '[ "$(cat "$T/first/path")" = "$cache/bin" ] && grep -qx "path=$cache/bin/profgate" "$T/first/output" && grep -qx "version=profgate $VERSION" "$T/first/output"'
check "the installed profgate runs from the cache with its bundled libraries: a gate on the examples fails on matmul" \
	eval 'LD_LIBRARY_PATH= "$cache/bin/profgate" gate -b "$TOP/tests/data/examples/baseline.rank-0.pt.trace.json.gz" -c "$TOP/tests/data/examples/candidate.rank-0.matmul-slower.pt.trace.json.gz" --report "$T/r.md" >/dev/null 2>&1; [ $? -eq 1 ] && grep -q matmul "$T/r.md"'

run_setup second '{"repository": "acme/profgate"}'
check "second run: found in the tool cache, nothing downloaded" \
	eval '[ "$rc" -eq 0 ] && [ "$(downloads)" = 1 ] && grep -q "found in the tool cache" "$T/second/out" && [ "$(cat "$T/second/path")" = "$cache/bin" ]'

# a release whose .sha256 does not match its tarball: nothing installed, one line naming both
rm -rf "$T/toolcache"
cp "$REL/$NAME.tar.gz.sha256" "$T/good.sha256"
echo "0000000000000000000000000000000000000000000000000000000000000000  $NAME.tar.gz" >"$REL/$NAME.tar.gz.sha256"
run_setup badsum '{"repository": "acme/profgate"}'
check "a tarball that does not match the release's .sha256: exit 1, an ::error, nothing installed or on PATH" \
	eval '[ "$rc" -eq 1 ] && grep -q "^::error title=profgate setup::$NAME.tar.gz: SHA-256 [0-9a-f]*, expected 0000" "$T/badsum/out" && [ ! -e "$cache" ] && [ ! -e "$cache.complete" ] && [ ! -s "$T/badsum/path" ]'
cp "$T/good.sha256" "$REL/$NAME.tar.gz.sha256"

# SHA256SUMS beside the script (a release commit's) wins over the release's .sha256
sed "s/^[0-9a-f]*/$(printf '%064d' 1)/" "$T/good.sha256" >"$T/action/SHA256SUMS"
run_setup pinned '{"repository": "acme/profgate"}'
check "SHA256SUMS beside the script is the expected checksum: a mismatch with it refuses the release's tarball" \
	eval '[ "$rc" -eq 1 ] && grep -q "expected 0000000000000000000000000000000000000000000000000000000000000001" "$T/pinned/out" && [ ! -e "$cache" ]'
cp "$T/good.sha256" "$T/action/SHA256SUMS"
run_setup pinnedok '{"repository": "acme/profgate"}'
check "SHA256SUMS naming the tarball's real checksum: installed" \
	eval '[ "$rc" -eq 0 ] && [ -x "$cache/bin/profgate" ]'
rm -f "$T/action/SHA256SUMS"

run_setup missing '{"repository": "acme/profgate", "version": "9.9.9"}'
check "a version with no release: exit 1, an ::error naming the URL, nothing installed" \
	eval '[ "$rc" -eq 1 ] && grep -q "^::error title=profgate setup::could not download $URL/acme/profgate/releases/download/v9.9.9/profgate-9.9.9-linux-$ARCH.tar.gz" "$T/missing/out" && [ ! -e "$T/toolcache/profgate/9.9.9" ]'
run_setup notxyz '{"repository": "acme/profgate", "version": "latest"}'
check "a version that is not X.Y.Z: exit 1 before any download" \
	eval '[ "$rc" -eq 1 ] && grep -q "version .latest. is not X.Y.Z" "$T/notxyz/out" && ! grep -q "/vlatest/" "$T/files/log"'
run_setup macos '{"repository": "acme/profgate"}' RUNNER_OS=macOS
check "a macOS runner: exit 1, the binaries are for Linux" \
	eval '[ "$rc" -eq 1 ] && grep -q "for Linux; this runner is macOS" "$T/macos/out"'
run_setup arm32 '{"repository": "acme/profgate"}' RUNNER_ARCH=ARM
check "an ARM (32-bit) runner: exit 1, x86_64 and aarch64 are built" \
	eval '[ "$rc" -eq 1 ] && grep -q "architecture ARM (x86_64 and aarch64 are built)" "$T/arm32/out"'

# a tarball that does not unpack to a runnable profgate of the asked version is refused too
mkdir -p "$T/liar/$NAME/bin" "$T/www/acme/liar/releases/download/v$VERSION"
printf '#!/bin/sh\necho profgate 0.0.1\n' >"$T/liar/$NAME/bin/profgate"
chmod +x "$T/liar/$NAME/bin/profgate"
tar -C "$T/liar" -czf "$T/www/acme/liar/releases/download/v$VERSION/$NAME.tar.gz" "$NAME"
(cd "$T/www/acme/liar/releases/download/v$VERSION" && sha256sum "$NAME.tar.gz" >"$NAME.tar.gz.sha256")
rm -rf "$T/toolcache"
run_setup liar '{"repository": "acme/liar"}'
check "a tarball whose profgate reports another version: exit 1, not cached, not put on PATH" \
	eval '[ "$rc" -eq 1 ] && grep -q "reports .profgate 0.0.1., not version $VERSION" "$T/liar/out" && [ ! -s "$T/liar/path" ] && [ ! -e "$cache" ]'

done_testing
