/*
 * Digests through libcrypto's EVP: a file's SHA-256 (the provenance hash of
 * input files: identical bytes are detected and refused by digest, and
 * summaries record it) and MD5 (what W&B manifests speak: a file's digest is
 * base64 of its MD5); base64 and hex, what the caches are keyed by. Both file
 * hashes go one way, file_digest().
 */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* A fresh EVP context for md in *ctx; PG_EIO (message set, naming path when
 * there is one) when OpenSSL cannot give one. Every digest here starts so. */
static int evp_start(void **ctx, const EVP_MD *md, const char *md_name, const char *path)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();

	if (!c || EVP_DigestInit_ex(c, md, NULL) != 1) {
		EVP_MD_CTX_free(c);
		*ctx = NULL;
		return path ? pg_error_set(PG_EIO, "cannot hash '%s': OpenSSL has no %s", path,
					   md_name)
			    : pg_error_set(PG_EIO, "cannot hash: OpenSSL has no %s", md_name);
	}
	*ctx = c;
	return 0;
}

/* The digest of size bytes into out, and *ctx freed; -1 (out zeroed) when
 * OpenSSL gives none of that size. */
static int evp_finish(void **ctx, unsigned char *out, unsigned size)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	int ok = EVP_DigestFinal_ex(*ctx, md, &n) == 1 && n == size;

	if (ok)
		memcpy(out, md, size);
	else
		memset(out, 0, size);
	EVP_MD_CTX_free(*ctx);
	*ctx = NULL;
	return ok ? 0 : -1;
}

int pg_md5_init(struct pg_md5 *m)
{
	return evp_start(&m->ctx, EVP_md5(), "MD5", NULL);
}

void pg_md5_update(struct pg_md5 *m, const void *p, size_t n)
{
	EVP_DigestUpdate(m->ctx, p, n);
}

void pg_md5_final(struct pg_md5 *m, unsigned char out[16])
{
	(void)evp_finish(&m->ctx, out, 16);
}

int pg_sha256_evp_init(struct pg_sha256_evp *h, const char *path)
{
	return evp_start(&h->ctx, EVP_sha256(), "SHA-256", path);
}

void pg_sha256_evp_update(struct pg_sha256_evp *h, const void *p, size_t n)
{
	EVP_DigestUpdate(h->ctx, p, n);
}

void pg_sha256_evp_hex(struct pg_sha256_evp *h, char out[65])
{
	unsigned char md[32];

	(void)evp_finish(&h->ctx, md, sizeof(md));
	pg_hex(out, md, sizeof(md));
}

void pg_sha256_evp_free(struct pg_sha256_evp *h)
{
	EVP_MD_CTX_free(h->ctx);
	h->ctx = NULL;
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

/* OpenSSL's SHA-256 uses the CPU's SHA extensions (about 1.8 GB/s here,
 * several times the portable code of sha256.c): summarize hashes every input
 * beside the reader, and a 450 MB XPlane must not wait on it. A regular file
 * is hashed from a read-only mapping, which skips copying every byte out of
 * the page cache (12% of the hash's time); anything else (a pipe, a file that
 * cannot be mapped) is read in 1 MiB pieces. */
#define HASH_CHUNK (8u << 20) /* a multiple of any page size */

/* The bytes of a mappable regular file into ctx; -1 when it is not one. */
static int digest_mapped(int fd, EVP_MD_CTX *ctx, uint64_t *bytes)
{
	struct stat st;
	unsigned char *p;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > SIZE_MAX)
		return -1;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	madvise(p, (size_t)st.st_size, MADV_SEQUENTIAL);
	/* pages hashed are dropped from this mapping (the page cache keeps them),
	 * so the hash adds little to the process's peak RSS */
	for (size_t off = 0, n = (size_t)st.st_size; off < n; off += HASH_CHUNK) {
		size_t len = n - off < HASH_CHUNK ? n - off : HASH_CHUNK;
		EVP_DigestUpdate(ctx, p + off, len);
		if (len == HASH_CHUNK)
			madvise(p + off, len, MADV_DONTNEED);
	}
	munmap(p, (size_t)st.st_size);
	*bytes = (uint64_t)st.st_size;
	return 0;
}

static int digest_read(int fd, EVP_MD_CTX *ctx, const char *path, uint64_t *bytes)
{
	unsigned char *buf = pg_xmalloc(1 << 20);
	int rc = 0;

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
		EVP_DigestUpdate(ctx, buf, (size_t)r);
		*bytes += (uint64_t)r;
	}
	free(buf);
	return rc;
}

/* The md digest of path's bytes into out (size bytes) and its length; 0 or
 * PG_EIO with the message set. */
static int file_digest(const char *path, const EVP_MD *md, const char *md_name, unsigned char *out,
		       unsigned size, uint64_t *bytes)
{
	unsigned char got[EVP_MAX_MD_SIZE];
	void *ctx;
	int fd = open(path, O_RDONLY), rc = 0;

	*bytes = 0;
	if (fd < 0)
		return pg_error_set(PG_EIO, "cannot open '%s': %s", path, strerror(errno));
	if (evp_start(&ctx, md, md_name, path)) {
		close(fd);
		return PG_EIO;
	}
	if (digest_mapped(fd, ctx, bytes) != 0)
		rc = digest_read(fd, ctx, path, bytes);
	close(fd);
	if (evp_finish(&ctx, got, size) != 0 && !rc)
		rc = pg_error_set(PG_EIO, "cannot hash '%s'", path);
	if (!rc)
		memcpy(out, got, size);
	return rc;
}

int pg_sha256_file(const char *path, char out[65])
{
	unsigned char md[32];
	uint64_t bytes;
	int rc = file_digest(path, EVP_sha256(), "SHA-256", md, sizeof(md), &bytes);

	if (!rc)
		pg_hex(out, md, sizeof(md));
	return rc;
}

int pg_md5_file(const char *path, unsigned char out[16], uint64_t *bytes)
{
	uint64_t n;
	int rc = file_digest(path, EVP_md5(), "MD5", out, 16, &n);

	if (bytes)
		*bytes = n;
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
