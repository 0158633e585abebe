#!/bin/sh
# Install what a fresh Debian (bookworm) machine lacks to build and test profgate: the build and
# test packages of scripts/packages.sh. As root it runs apt-get; otherwise it names the packages
# to install.
# `sh scripts/deps.sh fuzz` adds what `make fuzz` needs (PG_FUZZ_PACKAGES), `sh scripts/deps.sh
# dist` what `make dist` needs (PG_DIST_PACKAGES), `sh scripts/deps.sh stress` what `make stress`
# needs (PG_STRESS_PACKAGES), `sh scripts/deps.sh noise` what `make noise` needs
# (PG_NOISE_PACKAGES).
set -e
. "$(dirname "$0")/packages.sh"
need=""
if command -v dpkg-query >/dev/null 2>&1; then
	for p in $PG_BUILD_PACKAGES $PG_TEST_PACKAGES; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q ' installed$' || need="$need $p"
	done
else
	# not Debian: probe what the build uses, and name the Debian packages
	pkg-config --exists libgit2 libcurl libcjson zlib libprotobuf-c libcrypto cmocka 2>/dev/null &&
		command -v protoc-c >/dev/null 2>&1 || need=" $PG_BUILD_PACKAGES $PG_TEST_PACKAGES"
fi
extra=
case ${1:-} in
fuzz) extra=$PG_FUZZ_PACKAGES ;;
dist) extra=$PG_DIST_PACKAGES ;;
stress) extra=$PG_STRESS_PACKAGES ;;
noise) extra=$PG_NOISE_PACKAGES ;;
esac
if [ -n "$extra" ] && command -v dpkg-query >/dev/null 2>&1; then
	for p in $extra; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q ' installed$' || need="$need $p"
	done
fi
[ -z "$need" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "deps: installing$need"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $need >/dev/null
	exit 0
fi
echo "profgate: missing build dependencies; install them with:" >&2
echo "  sudo apt-get install$need" >&2
exit 2
