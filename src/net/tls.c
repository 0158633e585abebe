/*
 * Which CA bundle TLS trusts, for both libcurl (GitHub, W&B) and libgit2's TLS
 * stream (history remotes). Both libraries look where the build machine's
 * distribution keeps the bundle (Debian: /etc/ssl/certs/ca-certificates.crt),
 * so the portable release binary, which carries Debian's libraries, would
 * trust nothing on a distribution that keeps it elsewhere (Fedora, RHEL and
 * Rocky on HPC clusters; openSUSE). SSL_CERT_FILE, OpenSSL's variable for the
 * same thing, names the bundle; else the first readable file of the usual
 * places is used; else the libraries keep their own default.
 */
#include "http.h"

#include <stdlib.h>
#include <unistd.h>

const char *http_ca_bundle(void)
{
	static const char *const known[] = {
	    "/etc/ssl/certs/ca-certificates.crt",		 /* Debian, Ubuntu, Arch */
	    "/etc/pki/tls/certs/ca-bundle.crt",			 /* Fedora, RHEL, Rocky, Alma */
	    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", /* the same, by its source */
	    "/etc/ssl/ca-bundle.pem",				 /* openSUSE, SLES */
	    "/etc/ssl/cert.pem",				 /* Alpine, BSDs */
	};
	const char *env = getenv("SSL_CERT_FILE");

	if (env && *env)
		return env;
	for (size_t i = 0; i < PG_ARRAY_LEN(known); i++)
		if (access(known[i], R_OK) == 0)
			return known[i];
	return NULL;
}
