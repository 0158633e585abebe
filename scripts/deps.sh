#!/bin/sh
# Install what a fresh Debian (bookworm) machine lacks to build and test
# profgate. As root it runs apt-get; otherwise it names the packages to install.
set -e
need=""
have_pkg() { pkg-config --exists "$1" 2>/dev/null; }
command -v pkg-config >/dev/null 2>&1 || need="$need pkg-config"
command -v cc >/dev/null 2>&1 || need="$need gcc"
command -v make >/dev/null 2>&1 || need="$need make"
have_pkg libgit2 || need="$need libgit2-dev"
have_pkg libcurl || need="$need libcurl4-openssl-dev"
have_pkg libcrypto || need="$need libssl-dev"
have_pkg libcjson || need="$need libcjson-dev"
have_pkg zlib || need="$need zlib1g-dev"
have_pkg libprotobuf-c || need="$need libprotobuf-c-dev"
command -v protoc-c >/dev/null 2>&1 || need="$need protobuf-c-compiler"
have_pkg cmocka || need="$need libcmocka-dev"
command -v git >/dev/null 2>&1 || need="$need git"
command -v gzip >/dev/null 2>&1 || need="$need gzip"
command -v python3 >/dev/null 2>&1 || need="$need python3"
command -v clang-format >/dev/null 2>&1 || need="$need clang-format"
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
