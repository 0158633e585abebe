#!/bin/sh
# The release's dry run short of GitHub (docs/releasing.md): scripts/release.sh on a copy of the
# repository checks the tag against the Makefile and the CHANGELOG, prints the notes, and makes the
# release commit's edits: action.yml then runs the published image (a pull, not a build) with the
# same inputs and outputs, setup/ installs that version and trusts SHA256SUMS; and the release
# workflow builds what docs/releasing.md says it does (both architectures, both artifacts).
set -u
# checks files and scripts, not the binary: the same under a sanitizer build
# test-sanitizers: no
. "$(dirname "$0")/lib/tap.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
if ! python3 -c 'import yaml' 2>/dev/null; then
	echo "1..0 # skip python3-yaml is not installed (apt-get install python3-yaml)"
	exit 0
fi
VERSION=$(sed -n 's/^VERSION := //p' "$TOP/Makefile")
R=$T/repo
mkdir -p "$R/scripts"
cp -r "$TOP/Makefile" "$TOP/CHANGELOG.md" "$TOP/action.yml" "$TOP/setup" "$R/"
cp "$TOP/scripts/release.sh" "$R/scripts/"
rel() {
	sh "$R/scripts/release.sh" "$@" >"$T/out" 2>"$T/err"
	rc=$?
}

rel check "$VERSION"
check "check: the Makefile's version $VERSION has its CHANGELOG entry" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || diag_file "$T/err"
rel check 9.9.9
check "check: a tag that is not the Makefile's version is refused, naming both" \
	eval '[ "$rc" -eq 1 ] && grep -q "the tag says 9.9.9, the Makefile.s VERSION $VERSION" "$T/err"'
rel check 1.0
check "check: a tag that is not X.Y.Z is refused" eval '[ "$rc" -eq 1 ] && grep -q "not a version X.Y.Z" "$T/err"'
sed -i "s/^## v$VERSION - /## v$VERSION (draft) - /" "$R/CHANGELOG.md"
rel check "$VERSION"
check "check: no CHANGELOG entry '## v$VERSION - YYYY-MM-DD': refused" \
	eval '[ "$rc" -eq 1 ] && grep -q "CHANGELOG.md has no entry" "$T/err"'
cp "$TOP/CHANGELOG.md" "$R/CHANGELOG.md"

rel notes "$VERSION"
check "notes: the entry's text, without its heading or the next entry's" \
	eval '[ "$rc" -eq 0 ] && [ -s "$T/out" ] && ! grep -q "^## " "$T/out" && grep -q "ghcr.io/profgate/profgate:$VERSION" "$T/out"'

# pin: the release commit's edits
printf '%064d  profgate-%s-linux-x86_64.tar.gz\n%064d  profgate-%s-linux-aarch64.tar.gz\n' 1 "$VERSION" 2 "$VERSION" >"$T/SUMS"
rel pin "$VERSION" ghcr.io/profgate/profgate "$T/SUMS"
check "pin: exit 0" [ "$rc" -eq 0 ]
diff "$TOP/action.yml" "$R/action.yml" >"$T/diff"
check "pin: action.yml's one change is runs.image: docker://ghcr.io/profgate/profgate:$VERSION" \
	eval '[ "$(grep -c "^[<>]" "$T/diff")" = 2 ] && grep -q "^<   image: Dockerfile$" "$T/diff" && grep -q "^>   image: docker://ghcr.io/profgate/profgate:$VERSION$" "$T/diff"'
pycheck "pin: the pinned action is a Docker action on the image, with main's inputs and outputs" \
	'import yaml; a = yaml.safe_load(open(sys.argv[1])); m = yaml.safe_load(open("'"$TOP/action.yml"'"))' \
	"$R/action.yml" \
	"a['runs'] == {'using': 'docker', 'image': 'docker://ghcr.io/profgate/profgate:$VERSION'}" \
	"a['inputs'] == m['inputs'] and a['outputs'] == m['outputs']"
LINT_DIR=${LINT_DIR:-$TOP/build/lint}
if command -v node >/dev/null 2>&1 && [ -f "$LINT_DIR/installed" ]; then
	NODE_PATH=$LINT_DIR/node_modules node "$TOP/scripts/lint.cjs" "$R" "$R/action.yml" "$R/setup/action.yml" >"$T/lint" 2>&1
	check "pin: the pinned action.yml and setup/action.yml pass the action schema" \
		grep -q "^lint: 0 workflows, 2 action files: clean$" "$T/lint"
else
	skip "the lint's checkers are not installed (make lint): the pinned action.yml is not schema-checked"
fi
check "pin: setup/ installs $VERSION and holds the two tarballs' checksums" \
	eval 'grep -qx "    default: \"$VERSION\"" "$R/setup/action.yml" && cmp -s "$T/SUMS" "$R/setup/SHA256SUMS"'
head -n 1 "$T/SUMS" >"$T/SUMS1"
cp "$TOP/action.yml" "$R/action.yml"
rel pin "$VERSION" ghcr.io/profgate/profgate "$T/SUMS1"
check "pin: checksums missing an architecture are refused, action.yml untouched" \
	eval '[ "$rc" -eq 1 ] && grep -q "no checksums of" "$T/err" && cmp -s "$TOP/action.yml" "$R/action.yml"'

# the workflow
pycheck "release.yml: on v*.*.* tags; image for amd64 and arm64 on GHCR; tarballs on both runners; publish after both" \
	'import yaml; w = yaml.safe_load(open(sys.argv[1])); j = w["jobs"]; steps = lambda n: j[n]["steps"]
img = [s for s in steps("image") if s.get("uses", "").startswith("docker/build-push-action")][0]["with"]
pub = "\n".join(s.get("run", "") for s in steps("publish"))' \
	"$TOP/.github/workflows/release.yml" \
	"w[True] == {'push': {'tags': ['v*.*.*']}}" \
	"img['platforms'] == 'linux/amd64,linux/arm64' and img['push'] is True" \
	"w['env']['IMAGE'] == 'ghcr.io/profgate/profgate'" \
	"sorted(x['runner'] for x in j['tarball']['strategy']['matrix']['include']) == ['ubuntu-24.04', 'ubuntu-24.04-arm']" \
	"any('dist-check' in s.get('run', '') for s in steps('tarball'))" \
	"sorted(j['publish']['needs']) == ['image', 'tarball', 'version']" \
	"'release.sh pin' in pub and 'git push -f origin' in pub and 'gh release create' in pub" \
	"j['image']['permissions']['packages'] == 'write' and j['publish']['permissions']['contents'] == 'write'"

done_testing
