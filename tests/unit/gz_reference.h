/*
 * tests/unit/gz_reference.h: what the gzip byte source (src/read/input.c) must serve for a file,
 * made here with zlib alone, for tests/unit/test_gzip_input.c and tests/fuzz/fuzz_gzip.c: the
 * bytes, how the stream ends (clean, truncated) and the message of a corrupt one; and the file's
 * SHA-256 by the portable code (not the reader's OpenSSL), which the reader's digest must equal.
 * Members are followed and zero padding between them skipped, as the reader does; a member that
 * stops before its trailer is truncated; anything zlib rejects is corrupt at the compressed byte
 * where zlib stopped.
 */
#ifndef PG_TEST_GZ_REFERENCE_H
#define PG_TEST_GZ_REFERENCE_H

#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "../../src/util/util.h"

/* How a read ended. */
enum gzref_end { GZREF_CLEAN, GZREF_TRUNCATED, GZREF_ERROR };

/* What a read served: bytes (the caller's buffer, appended to), its end, the
 * message of an error. */
struct gzref_result {
	struct pg_buf bytes;
	enum gzref_end end;
	char msg[512];
};

/* zlib over the n bytes of a file into r (r->bytes appended to); -1 only
 * when zlib cannot start. */
static inline int gzref_inflate(const unsigned char *gz, size_t n, struct gzref_result *r)
{
	z_stream z;
	unsigned char out[65536];
	size_t at = 0;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 15 + 32) != Z_OK)
		return -1;
	r->end = GZREF_CLEAN;
	r->msg[0] = '\0';
	for (;;) {
		while (at < n && gz[at] == 0)
			at++;
		if (at == n)
			break;
		inflateReset(&z);
		z.next_in = (Bytef *)gz + at;
		z.avail_in = (uInt)(n - at);
		int zrc;
		do {
			z.next_out = out;
			z.avail_out = sizeof(out);
			zrc = inflate(&z, Z_NO_FLUSH);
			pg_buf_add(&r->bytes, out, sizeof(out) - z.avail_out);
		} while (zrc == Z_OK && (z.avail_in > 0 || z.avail_out == 0));
		at = n - z.avail_in;
		if (zrc == Z_STREAM_END)
			continue;
		if (zrc == Z_OK || zrc == Z_BUF_ERROR) {
			r->end = GZREF_TRUNCATED;
			break;
		}
		r->end = GZREF_ERROR;
		snprintf(r->msg, sizeof(r->msg), "corrupt gzip data at compressed byte %llu (%s)",
			 (unsigned long long)at, z.msg ? z.msg : "inflate error");
		break;
	}
	inflateEnd(&z);
	return 0;
}

/* The SHA-256 of n bytes as 64 hex digits. */
static inline void gzref_sha256(const void *data, size_t n, char hex[65])
{
	struct pg_sha256 sha;

	pg_sha256_init(&sha);
	pg_sha256_update(&sha, data, n);
	pg_sha256_hex(&sha, hex);
}

#endif
