/*
 * Fuzz target: the gzip byte source (src/read/input.c), which inflates with ISA-L and hands a
 * member it cannot finish to zlib (or uses zlib alone: make ISAL=0). Whatever the file, the
 * source on one thread and with an inflater thread ahead must serve the bytes zlib alone makes
 * of it, end as zlib does (clean, truncated) or fail with zlib's message at zlib's offset
 * (tests/unit/gz_reference.h), and take the file's SHA-256 however the read ended.
 *
 * The input is the file when it starts with the gzip magic (libFuzzer mutates the seeds' real
 * members: headers with names, extra fields and header CRCs, trailers, padding, what follows).
 * Otherwise its first byte is a recipe for the rest, the payload: one member or two (split where
 * the second byte says), a deflate level, then zero padding, garbage or a zlib stream after, and
 * a cut or a flipped byte at a place the next bytes give; so deep deflate data is reached that
 * random bytes never make.
 */
#include "fuzz.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../src/read/read.h"
#include "../unit/gz_reference.h"

/* Recipe bits (the first byte of an input without the gzip magic). */
#define R_TWO	   0x01			  /* two members */
#define R_PAD	   0x02			  /* zero padding after the members */
#define R_GARBAGE  0x04			  /* garbage after them */
#define R_ZLIB	   0x08			  /* a zlib stream after them */
#define R_CUT	   0x10			  /* cut at a place */
#define R_FLIP	   0x20			  /* one byte flipped at a place */
#define R_LEVEL(b) ((((b) >> 6) & 3) * 3) /* 0, 3, 6 or 9 */

/* A place in the file from two bytes of the input. */
static size_t place(const uint8_t *p, size_t len)
{
	return len ? ((size_t)p[0] << 8 | p[1]) % len : 0;
}

/* The file a recipe makes (data[0] is the recipe, data[1..4] places, the rest the payload). */
static void cook(const uint8_t *data, size_t size, struct pg_buf *gz)
{
	uint8_t r = data[0];
	const uint8_t *pay = size > 5 ? data + 5 : data + size;
	size_t n = size > 5 ? size - 5 : 0,
	       split = r & R_TWO ? (size > 1 ? data[1] % (n + 1) : 0) : n;

	FUZZ_CHECK(pg_buf_add_gzip(gz, pay, split, R_LEVEL(r)) == 0, "deflate");
	if (r & R_TWO)
		FUZZ_CHECK(pg_buf_add_gzip(gz, pay + split, n - split, R_LEVEL(r)) == 0, "deflate");
	if (r & R_PAD)
		pg_buf_add(gz, "\0\0\0", 1 + (size > 2 ? data[2] % 3 : 0));
	if (r & R_GARBAGE)
		pg_buf_adds(gz, "garbage");
	if (r & R_ZLIB) {
		uLongf zn = compressBound((uLong)n);
		pg_buf_grow(gz, zn);
		FUZZ_CHECK(compress((Bytef *)gz->ptr + gz->len, &zn, pay, (uLong)n) == Z_OK,
			   "compress");
		gz->len += zn;
	}
	/* the magic stays, so the file is still read as gzip */
	if ((r & R_FLIP) && size > 4)
		gz->ptr[2 + place(data + 3, gz->len - 2)] ^= (char)(1u << (data[2] & 7));
	if ((r & R_CUT) && size > 2)
		gz->len = 2 + place(data + 1, gz->len - 2);
}

/* The source over path on `threads`, hashing; what it served into got, its digest into hex. */
static void serve(const char *path, int threads, struct gzref_result *got, char hex[65])
{
	struct rd_in in;
	int rc;

	FUZZ_CHECK(rd_in_open_hashing(&in, path, threads, 1) == 0, "open: %s", pg_error_last());
	FUZZ_CHECK(rd_in_is_gzip(&in), "not read as gzip");
	while ((rc = rd_in_refill(&in)) > 0) {
		FUZZ_CHECK(in.chunk_off == got->bytes.len, "chunk at %llu after %zu bytes",
			   (unsigned long long)in.chunk_off, got->bytes.len);
		pg_buf_add(&got->bytes, in.p, (size_t)(in.end - in.p));
	}
	got->end = rc < 0 ? GZREF_ERROR : in.truncated ? GZREF_TRUNCATED : GZREF_CLEAN;
	if (rc < 0) {
		fuzz_check_error_line();
		snprintf(got->msg, sizeof(got->msg), "%s", pg_error_last());
	}
	FUZZ_CHECK(rd_in_sha256(&in, path, hex) == 1, "no digest: %s", pg_error_last());
	rd_in_close(&in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pg_buf gz = PG_BUF_INIT;
	struct gzref_result want = {PG_BUF_INIT, GZREF_CLEAN, ""};
	char path[64], sha[65];
	int fd;

	if (size == 0)
		return 0;
	if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b)
		pg_buf_add(&gz, data, size);
	else
		cook(data, size, &gz);
	FUZZ_CHECK(gzref_inflate((const unsigned char *)gz.ptr, gz.len, &want) == 0, "inflateInit");
	gzref_sha256(gz.ptr, gz.len, sha);
	/* the file in memory, opened by path as profgate opens a profile */
	fd = memfd_create("fuzz.json.gz", 0);
	FUZZ_CHECK(fd >= 0, "memfd_create");
	FUZZ_CHECK(write(fd, gz.ptr, gz.len) == (ssize_t)gz.len, "write");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	for (int threads = 1; threads <= 2; threads++) {
		struct gzref_result got = {PG_BUF_INIT, GZREF_CLEAN, ""};
		char hex[65] = "";

		serve(path, threads, &got, hex);
		FUZZ_CHECK(got.end == want.end && strcmp(got.msg, want.msg) == 0,
			   "%d thread(s): ended %d '%s', zlib ends %d '%s'", threads, got.end,
			   got.msg, want.end, want.msg);
		FUZZ_CHECK(got.bytes.len == want.bytes.len &&
			       memcmp(got.bytes.ptr, want.bytes.ptr, got.bytes.len) == 0,
			   "%d thread(s): %zu bytes served, zlib makes %zu (or they differ)",
			   threads, got.bytes.len, want.bytes.len);
		FUZZ_CHECK(strcmp(hex, sha) == 0, "%d thread(s): hashed %s, the file's is %s",
			   threads, hex, sha);
		pg_buf_release(&got.bytes);
	}
	close(fd);
	pg_buf_release(&want.bytes);
	pg_buf_release(&gz);
	return 0;
}
