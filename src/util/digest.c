/*
 * MD5 (through libcrypto's EVP), base64 and hex: what W&B manifests speak
 * (a file's digest is base64 of its MD5) and what the caches are keyed by.
 */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int pg_md5_init(struct pg_md5 *m)
{
	m->ctx = EVP_MD_CTX_new();
	if (!m->ctx || EVP_DigestInit_ex(m->ctx, EVP_md5(), NULL) != 1) {
		EVP_MD_CTX_free(m->ctx);
		m->ctx = NULL;
		return pg_error_set(PG_EIO, "cannot hash: OpenSSL has no MD5");
	}
	return 0;
}

void pg_md5_update(struct pg_md5 *m, const void *p, size_t n)
{
	EVP_DigestUpdate(m->ctx, p, n);
}

void pg_md5_final(struct pg_md5 *m, unsigned char out[16])
{
	unsigned int n = 0;
	unsigned char md[EVP_MAX_MD_SIZE];

	if (EVP_DigestFinal_ex(m->ctx, md, &n) != 1 || n != 16)
		memset(md, 0, 16);
	memcpy(out, md, 16);
	EVP_MD_CTX_free(m->ctx);
	m->ctx = NULL;
}

int pg_md5(const void *p, size_t n, unsigned char out[16])
{
	struct pg_md5 m;

	if (pg_md5_init(&m))
		return PG_EIO;
	pg_md5_update(&m, p, n);
	pg_md5_final(&m, out);
	return 0;
}

int pg_md5_file(const char *path, unsigned char out[16], uint64_t *bytes)
{
	struct pg_md5 m;
	unsigned char *buf;
	uint64_t total = 0;
	int rc = 0, fd = open(path, O_RDONLY);

	if (fd < 0)
		return pg_error_set(PG_EIO, "cannot open '%s': %s", path, strerror(errno));
	if (pg_md5_init(&m)) {
		close(fd);
		return PG_EIO;
	}
	buf = pg_xmalloc(1 << 20);
	for (;;) {
		ssize_t r = read(fd, buf, 1 << 20);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = pg_error_set(PG_EIO, "cannot read '%s': %s", path, strerror(errno));
			break;
		}
		if (r == 0)
			break;
		pg_md5_update(&m, buf, (size_t)r);
		total += (uint64_t)r;
	}
	close(fd);
	free(buf);
	pg_md5_final(&m, out);
	if (bytes)
		*bytes = total;
	return rc;
}

void pg_base64_encode(struct pg_buf *out, const void *data, size_t n)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		pg_buf_addc(out, b64[(v >> 18) & 63]);
		pg_buf_addc(out, b64[(v >> 12) & 63]);
		pg_buf_addc(out, i + 1 < n ? b64[(v >> 6) & 63] : '=');
		pg_buf_addc(out, i + 2 < n ? b64[v & 63] : '=');
	}
}

static int b64_value(char c)
{
	const char *q = c ? strchr(b64, c) : NULL;
	return q ? (int)(q - b64) : -1;
}

int pg_base64_decode(const char *s, unsigned char *out, size_t cap, size_t *n_out)
{
	size_t len = strlen(s), n = 0;

	if (len % 4 != 0)
		return -1;
	for (size_t i = 0; i < len; i += 4) {
		int v[4], pad = 0;
		for (int k = 0; k < 4; k++) {
			char c = s[i + k];
			if (c == '=' && i + 4 == len && k >= 2) {
				v[k] = 0;
				pad++;
			} else if (pad || (v[k] = b64_value(c)) < 0) {
				return -1;
			}
		}
		uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 |
			     (uint32_t)v[3];
		for (int k = 0; k < 3 - pad; k++) {
			if (n == cap)
				return -1;
			out[n++] = (unsigned char)(w >> (16 - 8 * k));
		}
	}
	*n_out = n;
	return 0;
}

void pg_hex(char *out, const unsigned char *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hex[p[i] >> 4];
		out[2 * i + 1] = hex[p[i] & 15];
	}
	out[2 * n] = '\0';
}
