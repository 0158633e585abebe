#!/bin/sh
# The portable Linux tarball of a release (`make dist`, `make dist-check`, the release workflow):
# profgate with every shared library it needs except glibc's, so that it runs on any Linux with
# glibc at least as new as the build machine's, without the -dev packages, Docker or a compiler.
#
#   dist.sh build BIN OUTDIR VERSION   write OUTDIR/profgate-VERSION-linux-ARCH.tar.gz and its
#                                      .sha256; prints the tarball's path
#   dist.sh verify TARBALL             the tarball holds a working profgate: its checksum matches,
#                                      every library resolves inside it or to glibc, and in a root
#                                      that holds nothing but glibc's runtime files and the
#                                      unpacked tarball (chroot; root only) it gates make demo's
#                                      example profiles to the expected verdict
#
# The tree (one top folder, profgate-VERSION-linux-ARCH/): bin/profgate, lib/ with the bundled
# libraries (ISA-L's libisal among them, which verify requires), share/profgate/thresholds/ (the shipped sets, found beside the binary as the Docker
# image's are), share/doc/profgate/licenses/ (each bundled library's Debian copyright file).
# The binary finds lib/ through its RUNPATH $ORIGIN/../lib; each bundled library has RUNPATH
# $ORIGIN, because a RUNPATH serves only the object that carries it, not the libraries it loads.
# patchelf writes both (scripts/deps.sh dist installs it). ARCH is `uname -m` (x86_64, aarch64):
# the setup action maps the runner's architecture to the same names.
# The bytes are reproducible: sorted names, fixed mtime (SOURCE_DATE_EPOCH, else the commit's),
# owner 0, gzip without a name or time.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)

die() {
	echo "dist.sh: $*" >&2
	exit 1
}

# glibc's own libraries (the loader, libc, libm, libpthread, libdl, librt, libresolv...): never
# bundled, since they must match the loader of the machine that runs the binary.
is_glibc() {
	case $(basename "$1") in
	ld-linux*.so* | libc.so.* | libm.so.* | libmvec.so.* | libpthread.so.* | libdl.so.* | librt.so.* | \
		libresolv.so.* | libutil.so.* | libanl.so.* | libnsl.so.* | libnss_*.so.* | libBrokenLocale.so.* | \
		libthread_db.so.* | libmemusage.so | libpcprofile.so | libc_malloc_debug.so.* | linux-vdso.so.* | \
		linux-gate.so.*) return 0 ;;
	esac
	return 1
}

# The libraries ldd resolves for $1, one "name path" a line ("name not-found" when missing).
resolved() {
	ldd "$1" | awk '
	$2 == "=>" && $3 == "not" { print $1, "not-found"; next }
	$2 == "=>" && $3 ~ /^\// { print $1, $3; next }
	$1 ~ /^\// { n = split($1, p, "/"); print p[n], $1 }'
}

# The Debian package that owns a file (merged /usr: /lib and /usr/lib are one).
owner() {
	case $1 in
	/usr/*) alt=${1#/usr} ;;
	*) alt=/usr$1 ;;
	esac
	{ dpkg -S "$1" || dpkg -S "$alt"; } 2>/dev/null | sed 's/[:,].*//' | head -n 1
}

epoch() {
	if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
		echo "$SOURCE_DATE_EPOCH"
	else
		git -C "$TOP" log -1 --format=%ct 2>/dev/null || echo 0
	fi
}

build() {
	[ $# -eq 3 ] || die "usage: dist.sh build BIN OUTDIR VERSION"
	bin=$1 out=$2 version=$3
	[ -x "$bin" ] || die "$bin: no executable"
	command -v patchelf >/dev/null 2>&1 || die "patchelf is not installed (sh scripts/deps.sh dist)"
	command -v ldd >/dev/null 2>&1 || die "ldd is not installed"
	if readelf -d "$bin" | grep -q 'libasan\|libubsan'; then
		die "$bin is a sanitizer build; build the tarball from a normal build"
	fi
	arch=$(uname -m)
	name=profgate-$version-linux-$arch
	mkdir -p "$out"
	stage=$(mktemp -d "${TMPDIR:-/tmp}/pg-dist.XXXXXX")
	trap 'rm -rf "$stage"' EXIT
	tree=$stage/$name
	mkdir -p "$tree/bin" "$tree/lib" "$tree/share/profgate/thresholds" "$tree/share/doc/profgate/licenses"
	cp "$bin" "$tree/bin/profgate"
	strip --strip-debug "$tree/bin/profgate"
	cp "$TOP"/thresholds/*.json "$tree/share/profgate/thresholds/"
	resolved "$bin" >"$stage/libs"
	if grep -q ' not-found$' "$stage/libs"; then
		die "$bin: libraries not found: $(sed -n 's/ not-found$//p' "$stage/libs" | tr '\n' ' ')"
	fi
	while read -r so path; do
		is_glibc "$so" && continue
		cp -L "$path" "$tree/lib/$so"
		chmod 644 "$tree/lib/$so"
		strip --strip-debug "$tree/lib/$so"
		patchelf --set-rpath '$ORIGIN' "$tree/lib/$so"
		pkg=$(owner "$path")
		if [ -n "$pkg" ] && [ -f "/usr/share/doc/$pkg/copyright" ]; then
			cp "/usr/share/doc/$pkg/copyright" "$tree/share/doc/profgate/licenses/$pkg.copyright"
		else
			echo "$so: from $path; its package and licence are not known to dpkg" \
				>>"$tree/share/doc/profgate/licenses/UNKNOWN"
		fi
	done <"$stage/libs"
	patchelf --set-rpath '$ORIGIN/../lib' "$tree/bin/profgate"
	{
		echo "profgate $version for Linux $arch, built $(date -u -d "@$(epoch)" +%Y-%m-%d 2>/dev/null || echo '') from"
		echo "$(git -C "$TOP" rev-parse HEAD 2>/dev/null || echo 'an unknown commit')."
		echo "Needs glibc $(ldd --version | sed -n '1s/.* \([0-9][0-9.]*\)$/\1/p') or newer; every other library is in lib/."
		echo "Run bin/profgate (or put bin/ on PATH). The bundled libraries' licences: share/doc/profgate/licenses/."
	} >"$tree/README"
	tarball=$out/$name.tar.gz
	tar -C "$stage" --sort=name --mtime="@$(epoch)" --owner=0 --group=0 --numeric-owner \
		-cf - "$name" | gzip -n -9 >"$tarball.tmp"
	mv "$tarball.tmp" "$tarball"
	(cd "$out" && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
	echo "$tarball"
}

# Copy glibc's runtime files (the libc6 package's shared objects and the loader's links; no
# gconv modules, no locales) from this machine into $1.
glibc_root() {
	dpkg -L libc6 2>/dev/null | grep '\.so' | grep -v '/gconv/' | while read -r f; do
		[ -e "$f" ] && [ ! -d "$f" ] && echo "$f"
	done | sed 's|^/||' | tar -C / -cf - -T - | tar -C "$1" -xf -
	mkdir -p "$1/tmp" "$1/work"
}

verify() {
	[ $# -eq 1 ] || die "usage: dist.sh verify TARBALL"
	tarball=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
	[ -f "$tarball" ] || die "$1: no such file"
	echo "1..5"
	if (cd "$(dirname "$tarball")" && sha256sum -c --quiet "$(basename "$tarball").sha256") >/dev/null 2>&1; then
		echo "ok 1 - the tarball matches its .sha256"
	else
		echo "not ok 1 - the tarball does not match its .sha256"
		fail=1
	fi
	scratch=$(mktemp -d "${TMPDIR:-/tmp}/pg-distck.XXXXXX")
	trap 'rm -rf "$scratch"' EXIT
	name=$(basename "$tarball" .tar.gz)
	mkdir -p "$scratch/root/opt"
	tar -C "$scratch/root/opt" -xzf "$tarball"
	pg=$scratch/root/opt/$name/bin/profgate
	[ -x "$pg" ] || die "$tarball: no $name/bin/profgate"

	# every library resolves inside the tarball, or is glibc's
	bad=
	libdir=$(readlink -f "$scratch/root/opt/$name/lib")
	resolved "$pg" >"$scratch/libs"
	while read -r so path; do
		case $(readlink -f "$path" 2>/dev/null || echo "$path") in
		"$libdir/"*) ;;
		*) is_glibc "$so" || bad="$bad $so($path)" ;;
		esac
	done <"$scratch/libs"
	if [ -z "$bad" ] && [ "$(wc -l <"$scratch/libs")" -gt 5 ]; then
		echo "ok 2 - ldd: every library resolves inside the tarball or to glibc"
	else
		echo "not ok 2 - ldd: libraries outside the tarball:$bad"
		fail=1
	fi
	bad=
	for t in default strict nightly; do
		[ -s "$scratch/root/opt/$name/share/profgate/thresholds/$t.json" ] || bad="$bad $t.json"
	done
	# ISA-L inflates gzip profiles (a build without it falls back to zlib): the release carries it
	ls "$scratch/root/opt/$name/lib/"libisal.so.* >/dev/null 2>&1 || bad="$bad lib/libisal.so (ISA-L)"
	if [ -z "$bad" ] && [ -n "$(ls "$scratch/root/opt/$name/share/doc/profgate/licenses/")" ] &&
		[ ! -e "$scratch/root/opt/$name/share/doc/profgate/licenses/UNKNOWN" ]; then
		echo "ok 3 - the shipped thresholds, ISA-L and the bundled libraries' licences are in the tarball"
	else
		echo "not ok 3 - missing from the tarball:$bad (or a library of unknown licence)"
		fail=1
	fi

	# the clean root: glibc and the tarball, nothing else (no shell, no -dev package, no libcurl)
	chroot=$(command -v chroot || :) unshare=$(command -v unshare || :) sh=$(command -v sh)
	mount=$(command -v mount || :)
	if [ "$(id -u)" != 0 ] || [ -z "$chroot" ] || [ -z "$unshare" ] || [ -z "$mount" ] || ! command -v dpkg >/dev/null 2>&1; then
		echo "ok 4 # skip the clean-root run needs root, chroot, unshare, mount and dpkg (for glibc's file list)"
		echo "ok 5 # skip the same for TLS in the clean root"
		return "${fail:-0}"
	fi
	glibc_root "$scratch/root"
	ex=$TOP/tests/data/examples
	cp "$ex"/baseline.*.pt.trace.json.gz "$scratch/root/work/baseline.pt.trace.json.gz"
	cp "$ex"/candidate.*.pt.trace.json.gz "$scratch/root/work/candidate.pt.trace.json.gz"
	# a private mount namespace with /proc mounted in the root: the loader expands $ORIGIN from
	# /proc/self/exe, as on any real machine; the mount ends with the namespace
	mkdir -p "$scratch/root/proc"
	# $root_env: more VAR=VALUE words for the run (values without blanks)
	root_env=
	in_root() {
		# shellcheck disable=SC2086 # $root_env is a list of words
		env -i PATH="/opt/$name/bin" PROFGATE_CACHE_DIR=/tmp/cache HOME=/tmp NO_COLOR=1 $root_env \
			"$unshare" --mount --propagation private "$sh" -c \
			'm=$1 c=$2 && shift 2 && "$m" -t proc proc "$0/proc" && exec "$c" "$0" "$@"' "$scratch/root" "$mount" "$chroot" "$@"
	}
	if ! in_root "/opt/$name/bin/profgate" --version >/dev/null 2>"$scratch/log" &&
		grep -q 'unshare\|mount' "$scratch/log"; then
		echo "ok 4 # skip no private mount namespace here: $(head -n 1 "$scratch/log")"
		echo "ok 5 # skip the same for TLS in the clean root"
		return "${fail:-0}"
	fi
	hist=
	if command -v git >/dev/null 2>&1 && git init -q --bare "$scratch/root/work/history.git"; then
		hist="--history /work/history.git --history-required"
	fi
	rc=0
	{
		in_root "/opt/$name/bin/profgate" summarize /work/baseline.pt.trace.json.gz -o /work/b.json &&
			in_root "/opt/$name/bin/profgate" summarize /work/candidate.pt.trace.json.gz -o /work/c.json &&
			{
				# shellcheck disable=SC2086 # $hist is empty or two options
				in_root "/opt/$name/bin/profgate" gate --baseline /work/b.json --candidate /work/c.json \
					--thresholds "/opt/$name/share/profgate/thresholds/default.json" \
					--json /work/verdict.json --report /work/report.md $hist || rc=$?
			}
	} >"$scratch/log" 2>&1 || rc=$?
	verdict=$(sed -n 's/^  "verdict": "\(.*\)",$/\1/p' "$scratch/root/work/verdict.json" 2>/dev/null || :)
	others=$(find "$scratch/root" ! -type d -name '*.so*' ! -path "$scratch/root/opt/*" | while read -r f; do
		is_glibc "$f" || echo "$f"
	done)
	if [ "$rc" -eq 1 ] && [ "$verdict" = fail ] && [ -z "$others" ] &&
		grep -q 'matmul' "$scratch/root/work/report.md" &&
		{ [ -z "$hist" ] || git --git-dir="$scratch/root/work/history.git" rev-parse -q --verify profgate-history >/dev/null; }; then
		echo "ok 4 - in a root of glibc and the tarball only, make demo's gate says fail (exit 1) on the matmul regression${hist:+ and appends its history record}"
	else
		echo "not ok 4 - in the clean root: gate exit $rc, verdict '${verdict:-none}'${others:+, non-glibc libraries $others}"
		sed 's/^/# /' "$scratch/log"
		fail=1
	fi
	# TLS in the clean root: the bundled libcurl and libgit2 trust the CA bundle they find at
	# Fedora's path (no Debian bundle, no SSL_CERT_FILE); an HTTPS server on loopback with a
	# certificate for localhost that a CA made here signed; it answers 404 to everything
	if ! command -v openssl >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1 ||
		! (cd "$scratch" &&
			openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=profgate-test-ca &&
			openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj /CN=localhost &&
			printf 'subjectAltName=DNS:localhost\n' >ext &&
			openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 2 -extfile ext) \
			>"$scratch/openssl.log" 2>&1; then
		echo "ok 5 # skip TLS in the clean root needs openssl and python3 (a CA and an HTTPS server)"
		return "${fail:-0}"
	fi
	mkdir -p "$scratch/root/etc/pki/tls/certs" "$scratch/tls"
	cp "$scratch/ca.pem" "$scratch/root/etc/pki/tls/certs/ca-bundle.crt"
	echo "127.0.0.1 localhost" >"$scratch/root/etc/hosts"
	python3 "$TOP/tests/e2e/lib/tls_server.py" "$scratch/srv.pem" "$scratch/srv.key" "$scratch/tls" \
		"$scratch/tls/log" 2>/dev/null &
	server=$!
	i=0
	while [ ! -s "$scratch/tls/port" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	url=https://localhost:$(cat "$scratch/tls/port" 2>/dev/null)
	trc=0 hrc=0
	root_env="GITHUB_API_URL=$url GITHUB_TOKEN=tok PROFGATE_HTTP_ATTEMPTS=1"
	in_root "/opt/$name/bin/profgate" comment --report /work/report.md --pr 7 --repo o/r \
		>"$scratch/tls.log" 2>&1 || trc=$?
	root_env=
	in_root "/opt/$name/bin/profgate" history show --repo "$url/h.git" >>"$scratch/tls.log" 2>&1 || hrc=$?
	kill "$server" 2>/dev/null
	if [ "$trc" -eq 5 ] && [ "$hrc" -eq 3 ] && grep -q '^GET /user$' "$scratch/tls/log" &&
		grep -q '^GET /h.git/info/refs' "$scratch/tls/log" && ! grep -qi certificate "$scratch/tls.log"; then
		echo "ok 5 - in the clean root, TLS trusts the bundle at Fedora's path: comment and a history fetch reach an HTTPS server"
	else
		echo "not ok 5 - TLS in the clean root: comment exit $trc, history exit $hrc"
		sed 's/^/# /' "$scratch/tls.log" "$scratch/tls/log" 2>/dev/null
		fail=1
	fi
	return "${fail:-0}"
}

case "${1:-}" in
build)
	shift
	build "$@"
	;;
verify)
	shift
	verify "$@"
	;;
*) die "usage: dist.sh build BIN OUTDIR VERSION | verify TARBALL" ;;
esac
