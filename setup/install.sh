#!/bin/sh
# The setup action's one step (setup/action.yml): install a profgate release on a Linux runner
# and put it on PATH. It downloads profgate-VERSION-linux-ARCH.tar.gz from the release
# vVERSION of PG_REPOSITORY on PG_SERVER_URL, checks its SHA-256 before unpacking anything, and
# keeps the tree in the runner's tool cache (RUNNER_TOOL_CACHE/profgate/VERSION/ARCH, with the
# ARCH.complete marker the toolkit's tool-cache uses), so a self-hosted runner downloads each
# version once.
#
# The expected checksum comes from SHA256SUMS beside this script when it lists the tarball (the
# release workflow writes it into the release commit: pinning the action pins the bytes), else
# from the release's TARBALL.sha256. A mismatch, a failed download or a runner that is not Linux
# x86_64 or aarch64 stops the step with one line and installs nothing.
#
# Environment: PG_VERSION (X.Y.Z, a leading v is dropped), PG_REPOSITORY (OWNER/NAME),
# PG_SERVER_URL, and the runner's RUNNER_OS, RUNNER_ARCH, RUNNER_TOOL_CACHE, RUNNER_TEMP,
# GITHUB_PATH, GITHUB_OUTPUT.
set -eu

die() {
	echo "::error title=profgate setup::$*"
	exit 1
}

version=${PG_VERSION#v}
case $version in
[0-9]*.[0-9]*.[0-9]*) ;;
*) die "version '$PG_VERSION' is not X.Y.Z" ;;
esac
case ${RUNNER_OS:-Linux} in
Linux) ;;
*) die "profgate's release binaries are for Linux; this runner is ${RUNNER_OS}" ;;
esac
case ${RUNNER_ARCH:-$(uname -m)} in
X64 | x86_64) arch=x86_64 ;;
ARM64 | aarch64) arch=aarch64 ;;
*) die "no profgate release binary for the architecture ${RUNNER_ARCH:-$(uname -m)} (x86_64 and aarch64 are built)" ;;
esac
: "${RUNNER_TOOL_CACHE:?}" "${RUNNER_TEMP:?}" "${GITHUB_PATH:?}" "${GITHUB_OUTPUT:?}"

name=profgate-$version-linux-$arch
tarball=$name.tar.gz
url=${PG_SERVER_URL%/}/$PG_REPOSITORY/releases/download/v$version
dir=$RUNNER_TOOL_CACHE/profgate/$version/$arch
here=$(cd "$(dirname "$0")" && pwd)

fetch() {
	if command -v curl >/dev/null 2>&1; then
		curl -fsSL --retry 3 --retry-delay 2 --connect-timeout 20 -o "$2" "$1"
	else
		wget -q -t 3 -T 20 -O "$2" "$1"
	fi
}

sha256_of() {
	if command -v sha256sum >/dev/null 2>&1; then
		sha256sum "$1" | cut -d' ' -f1
	else
		shasum -a 256 "$1" | cut -d' ' -f1
	fi
}

# runs TREE: TREE/bin/profgate runs here and is the version asked for; sets $reported
runs() {
	reported=$("$1/bin/profgate" --version) || die "$tarball: its profgate does not run on this runner"
	case " $reported " in
	*" $version "*) ;;
	*) die "$tarball: its profgate reports '$reported', not version $version" ;;
	esac
}

install_release() {
	work=$(mktemp -d "$RUNNER_TEMP/profgate-setup.XXXXXX")
	fetch "$url/$tarball" "$work/$tarball" || die "could not download $url/$tarball"
	want=
	if [ -f "$here/SHA256SUMS" ]; then
		want=$(awk -v f="$tarball" '$2 == f || $2 == "*" f { print $1 }' "$here/SHA256SUMS")
	fi
	if [ -z "$want" ]; then
		fetch "$url/$tarball.sha256" "$work/$tarball.sha256" ||
			die "could not download $url/$tarball.sha256"
		want=$(awk -v f="$tarball" '$2 == f || $2 == "*" f { print $1 }' "$work/$tarball.sha256")
		[ -n "$want" ] || die "$url/$tarball.sha256 names no $tarball"
	fi
	got=$(sha256_of "$work/$tarball")
	[ "$got" = "$want" ] || die "$tarball: SHA-256 $got, expected $want; nothing installed"
	mkdir -p "$work/tree"
	tar -C "$work/tree" -xzf "$work/$tarball" || die "$tarball: cannot unpack"
	[ -x "$work/tree/$name/bin/profgate" ] || die "$tarball holds no $name/bin/profgate"
	runs "$work/tree/$name"
	# the cache entry appears whole or not at all: unpacked beside it, renamed, then marked
	mkdir -p "$(dirname "$dir")"
	rm -rf "$dir" "$dir.complete"
	mv "$work/tree/$name" "$dir"
	: >"$dir.complete"
	rm -rf "$work"
	echo "profgate $version ($arch) installed in $dir from $url"
}

if [ -f "$dir.complete" ] && [ -x "$dir/bin/profgate" ]; then
	echo "profgate $version ($arch) found in the tool cache: $dir"
else
	install_release
fi
runs "$dir"
echo "$dir/bin" >>"$GITHUB_PATH"
{
	echo "path=$dir/bin/profgate"
	echo "version=$reported"
} >>"$GITHUB_OUTPUT"
echo "$reported"
