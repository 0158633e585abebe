#!/bin/sh
# Which certificates TLS trusts (src/net/tls.c): SSL_CERT_FILE names the CA bundle for both
# libcurl (GitHub, W&B) and libgit2 (history remotes), as the portable release binary needs on a
# distribution that keeps its bundle elsewhere than Debian. Against an HTTPS server on loopback
# whose certificate a CA made here signed (tests/e2e/lib/tls_server.py answers 404 to everything):
# with SSL_CERT_FILE naming that CA, `comment` and `history show` reach the server and report its
# 404; without it, the system's bundle does not know the CA and nothing reaches the server.
# (scripts/dist.sh verify checks the other half in its clean root: a bundle found at Fedora's
# path, with no SSL_CERT_FILE.)
set -u
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/serve.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
EX=$TOP/tests/data/examples
if ! command -v openssl >/dev/null 2>&1 || ! python3 -c 'import ssl' 2>/dev/null; then
	echo "1..0 # skip openssl and python3's ssl module are needed to make and serve a certificate"
	exit 0
fi
# the CA, and the server's certificate for localhost signed by it
(
	cd "$T" &&
		openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=profgate-test-ca &&
		openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj /CN=localhost &&
		printf 'subjectAltName=DNS:localhost\n' >ext &&
		openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 2 -extfile ext
) >"$T/openssl.log" 2>&1 || {
	echo "1..0 # skip openssl could not make the certificates: $(tail -n 1 "$T/openssl.log")"
	exit 0
}
serve_begin
serve tls "$T/tls/port" python3 "$TOP/tests/e2e/lib/tls_server.py" "$T/srv.pem" "$T/srv.key" "$T/tls" "$T/tls/log"
URL=https://localhost:$(cat "$T/tls/port")
pg gate -b "$EX/baseline.rank-0.pt.trace.json.gz" -c "$EX/candidate.rank-0.matmul-slower.pt.trace.json.gz" \
	--report "$T/report.md"
: >"$T/tls/log"

# comment: libcurl
PROFGATE_HTTP_ATTEMPTS=1 SSL_CERT_FILE=$T/ca.pem GITHUB_API_URL=$URL GITHUB_TOKEN=tok \
	pg comment --report "$T/report.md" --pr 7 --repo o/r
check "SSL_CERT_FILE naming the CA: comment reaches the server over TLS and reports its 404 (exit 5)" \
	eval '[ "$rc" -eq 5 ] && grep -q "^GET /user$" "$T/tls/log" && grep -q "HTTP 404" "$T/err" && ! grep -qi "certificate" "$T/err"'
: >"$T/tls/log"
env -u SSL_CERT_FILE PROFGATE_HTTP_ATTEMPTS=1 GITHUB_API_URL=$URL GITHUB_TOKEN=tok \
	timeout 60 "$PROFGATE" comment --report "$T/report.md" --pr 7 --repo o/r >"$T/out" 2>"$T/err"
rc=$?
check "without it, the system's bundle: the certificate is refused, no request reaches the server" \
	eval '[ "$rc" -eq 5 ] && grep -qi "certificate" "$T/err" && [ ! -s "$T/tls/log" ]'

# history: libgit2's TLS stream
SSL_CERT_FILE=$T/ca.pem PROFGATE_CACHE_DIR=$T/c1 pg history show --repo "$URL/h.git"
check "SSL_CERT_FILE naming the CA: a history fetch reaches the server over TLS and reports its 404 (exit 3)" \
	eval '[ "$rc" -eq 3 ] && grep -q "^GET /h.git/info/refs?service=git-upload-pack$" "$T/tls/log" && grep -q "404" "$T/err"'
: >"$T/tls/log"
env -u SSL_CERT_FILE PROFGATE_CACHE_DIR="$T/c2" timeout 60 "$PROFGATE" history show --repo "$URL/h.git" \
	>"$T/out" 2>"$T/err"
rc=$?
check "without it: libgit2 refuses the certificate, no request reaches the server" \
	eval '[ "$rc" -eq 3 ] && grep -qi "certificate" "$T/err" && [ ! -s "$T/tls/log" ]'

done_testing
