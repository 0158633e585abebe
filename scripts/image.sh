#!/bin/sh
# The Docker image's install and build steps, in one script that the Dockerfile runs and that
# `make check` runs on the host into a scratch prefix, so a broken step fails CI on machines
# without Docker. The package lists are scripts/packages.sh.
#
#   image.sh install-build      apt-get install the build packages (the build stage)
#   image.sh install-runtime    apt-get install the runtime packages (the final stage)
#   image.sh build DESTDIR      make, then install profgate and the shipped thresholds under
#                               DESTDIR/usr/local (BUILD and JOBS from the environment)
#   image.sh verify ROOT        the tree installed under ROOT works: the binary runs, the action
#                               finds the shipped thresholds beside it, no library is missing,
#                               and each library it links comes from a runtime package
#   image.sh check-packages     every package named in scripts/packages.sh exists in apt
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/packages.sh"

die() {
	echo "image.sh: $*" >&2
	exit 1
}

apt_install() {
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086 # a list of package names
	apt-get install -y -qq --no-install-recommends "$@"
	rm -rf /var/lib/apt/lists/*
}

build() {
	[ $# -eq 1 ] || die "usage: image.sh build DESTDIR"
	cd "$HERE/.."
	make -s -j"${JOBS:-$(nproc)}" BUILD="${BUILD:-build}" DEVELOPER=1
	make -s BUILD="${BUILD:-build}" DEVELOPER=1 install PREFIX=/usr/local DESTDIR="$1"
}

# The packages the binary's direct libraries come from, one per line: each NEEDED name, where
# ldd finds it, owned by which package (dpkg -S; /lib and /usr/lib are one with merged /usr).
lib_packages() {
	readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | while read -r so; do
		path=$(ldd "$1" | sed -n "s|^[[:space:]]*$so => \([^ ]*\) .*|\1|p" | head -n 1)
		case $path in
		/usr/*) alt=${path#/usr} ;;
		*) alt=/usr$path ;;
		esac
		{ dpkg -S "$path" || dpkg -S "$alt"; } 2>/dev/null | sed 's/[:,].*//' | head -n 1 |
			grep . || echo "unknown($so)"
	done | sort -u
}

verify() {
	[ $# -eq 1 ] || die "usage: image.sh verify ROOT"
	bin=$(cd "$1" && pwd)/usr/local/bin/profgate
	[ -x "$bin" ] || die "no executable $bin"
	for t in default strict nightly; do
		[ -s "$1/usr/local/share/profgate/thresholds/$t.json" ] || die "thresholds/$t.json not installed"
	done
	for f in bash-completion/completions/profgate zsh/site-functions/_profgate man/man1/profgate.1; do
		[ -s "$1/usr/local/share/$f" ] || die "share/$f not installed"
	done
	if command -v ldd >/dev/null 2>&1 && ldd "$bin" | grep -q 'not found'; then
		die "libraries missing: $(ldd "$bin" | grep 'not found' | tr -s ' \t\n' ' ')"
	fi
	"$bin" --version >/dev/null || die "$bin --version failed"
	"$bin" action --help | grep -q '^  fail_on ' || die "$bin action --help lists no fail_on"
	# the action finds a shipped set by name (then fails on the missing input: 3, not 2)
	scratch=$(mktemp -d)
	rc=0
	(cd "$scratch" && env -i INPUT_BASELINE=/nonexistent INPUT_CANDIDATE=/nonexistent \
		INPUT_THRESHOLDS=strict "$bin" action >/dev/null 2>&1) || rc=$?
	rm -rf "$scratch"
	[ "$rc" -eq 3 ] || die "the action did not find the shipped 'strict' thresholds (exit $rc)"
	if command -v readelf >/dev/null 2>&1 && command -v dpkg >/dev/null 2>&1; then
		for p in $(lib_packages "$bin"); do
			case " $PG_RUNTIME_PACKAGES libc6 " in
			*" $p "*) ;;
			*) die "profgate links a library of '$p', which scripts/packages.sh does not install at run time" ;;
			esac
		done
	fi
	echo "image: $bin verified"
}

check_packages() {
	command -v apt-cache >/dev/null 2>&1 || {
		echo "image: no apt-cache; package names not checked"
		return 0
	}
	# one call: apt-cache policy names every package it knows, at the start of a line
	# shellcheck disable=SC2086 # lists of package names
	known=$(apt-cache policy $PG_BUILD_PACKAGES $PG_TEST_PACKAGES $PG_RUNTIME_PACKAGES $PG_DIST_PACKAGES $PG_STRESS_PACKAGES 2>/dev/null |
		sed -n 's/^\([^ ].*\):$/\1/p')
	for p in $PG_BUILD_PACKAGES $PG_TEST_PACKAGES $PG_RUNTIME_PACKAGES $PG_DIST_PACKAGES $PG_STRESS_PACKAGES; do
		echo "$known" | grep -qx "$p" || die "no package '$p' in apt"
	done
	echo "image: every package of scripts/packages.sh exists"
}

case "${1:-}" in
install-build) apt_install $PG_BUILD_PACKAGES ;;
install-runtime) apt_install $PG_RUNTIME_PACKAGES ;;
build)
	shift
	build "$@"
	;;
verify)
	shift
	verify "$@"
	;;
check-packages) check_packages ;;
*) die "usage: image.sh install-build | install-runtime | build DESTDIR | verify ROOT | check-packages" ;;
esac
