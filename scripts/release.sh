#!/bin/sh
# The release workflow's file edits (.github/workflows/release.yml), in one script that the
# release suite (tests/e2e/release.sh) runs on a copy of the repository.
#
#   release.sh check VERSION          the tag's version is the Makefile's VERSION and CHANGELOG.md
#                                     has its entry ("## vVERSION - YYYY-MM-DD")
#   release.sh notes VERSION          print CHANGELOG.md's entry for VERSION (the release notes)
#   release.sh pin VERSION IMAGE SUMS the release commit's edits, in the working tree: action.yml
#                                     runs the published image (docker://IMAGE:VERSION) instead of
#                                     building the Dockerfile; setup/action.yml installs VERSION by
#                                     default and setup/SHA256SUMS holds the tarballs' checksums
#                                     (SUMS, `sha256sum` lines), which the setup action trusts over
#                                     the release's own .sha256 files
# main keeps `image: Dockerfile`, so a branch or a commit of main builds what it holds; a release
# tag is a pull of the image that release pushed.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)

die() {
	echo "release.sh: $*" >&2
	exit 1
}

semver() {
	case $1 in
	*[!0-9.]* | .* | *. | *..*) die "'$1' is not a version X.Y.Z" ;;
	*.*.*.*) die "'$1' is not a version X.Y.Z" ;;
	*.*.*) ;;
	*) die "'$1' is not a version X.Y.Z" ;;
	esac
}

check() {
	[ $# -eq 1 ] || die "usage: release.sh check VERSION"
	semver "$1"
	made=$(sed -n 's/^VERSION := //p' "$TOP/Makefile")
	[ "$made" = "$1" ] || die "the tag says $1, the Makefile's VERSION $made: bump the Makefile first"
	grep -q "^## v$1 - [0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]\$" "$TOP/CHANGELOG.md" ||
		die "CHANGELOG.md has no entry '## v$1 - YYYY-MM-DD'"
	echo "release: v$1 matches the Makefile and has a CHANGELOG entry"
}

notes() {
	[ $# -eq 1 ] || die "usage: release.sh notes VERSION"
	semver "$1"
	awk -v h="## v$1 " '
	index($0, h) == 1 { on = 1; next }
	on && /^## / { exit }
	on { print }' "$TOP/CHANGELOG.md" | sed -e '/./,$!d' >"${TMPDIR:-/tmp}/pg-notes.$$"
	[ -s "${TMPDIR:-/tmp}/pg-notes.$$" ] || {
		rm -f "${TMPDIR:-/tmp}/pg-notes.$$"
		die "CHANGELOG.md has no entry for v$1"
	}
	cat "${TMPDIR:-/tmp}/pg-notes.$$"
	rm -f "${TMPDIR:-/tmp}/pg-notes.$$"
}

pin() {
	[ $# -eq 3 ] || die "usage: release.sh pin VERSION IMAGE SUMS"
	semver "$1"
	version=$1 image=$2 sums=$3
	[ "$(grep -c '^  image: Dockerfile$' "$TOP/action.yml")" = 1 ] ||
		die "action.yml: no single 'image: Dockerfile' line under runs:"
	[ "$(grep -c '^    default: "[0-9.]*"$' "$TOP/setup/action.yml")" = 1 ] ||
		die "setup/action.yml: no single version default line"
	grep -q "  profgate-$version-linux-x86_64.tar.gz\$" "$sums" &&
		grep -q "  profgate-$version-linux-aarch64.tar.gz\$" "$sums" ||
		die "$sums: no checksums of profgate-$version-linux-{x86_64,aarch64}.tar.gz"
	sed "s|^  image: Dockerfile\$|  image: docker://$image:$version|" "$TOP/action.yml" >"$TOP/action.yml.tmp"
	mv "$TOP/action.yml.tmp" "$TOP/action.yml"
	sed "s|^    default: \"[0-9.]*\"\$|    default: \"$version\"|" "$TOP/setup/action.yml" >"$TOP/setup/action.yml.tmp"
	mv "$TOP/setup/action.yml.tmp" "$TOP/setup/action.yml"
	grep "  profgate-$version-linux-[a-z0-9_]*\.tar\.gz\$" "$sums" >"$TOP/setup/SHA256SUMS"
	echo "release: action.yml runs docker://$image:$version; setup installs $version, its checksums in setup/SHA256SUMS"
}

case "${1:-}" in
check | notes | pin)
	cmd=$1
	shift
	"$cmd" "$@"
	;;
*) die "usage: release.sh check VERSION | notes VERSION | pin VERSION IMAGE SUMS" ;;
esac
