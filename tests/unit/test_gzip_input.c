/*
 * The gzip byte source (src/read/input.c), serial (threads 1) and pipelined (a worker inflating
 * ahead), against a reference made with zlib alone (gz_reference.h): the bytes it serves, how the
 * stream ends (clean, truncated) and the message of a corrupt one must be the reference's
 * exactly. ISA-L builds hand members they cannot finish to zlib; this file holds them to zlib's
 * words, so the same test passes unchanged on the zlib build (make ISAL=0). Every read also
 * hashes the file as it goes (rd_in_open_hashing), and its digest must be the whole file's
 * however the read ended: cut, corrupt, read again by zlib, or left after its first chunk.
 * tests/fuzz/fuzz_gzip.c holds the source to the same reference on files a fuzzer makes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "../../src/read/read.h"
#include "gz_reference.h"
#include "helpers.h"

static int setup(void **state)
{
	(void)state;
	return th_dir_make("test-gzin");
}

static int teardown(void **state)
{
	(void)state;
	return th_dir_remove();
}

/* What a read served, and the digest it took of the file. */
struct result {
	struct gzref_result z;
	char sha256[65]; /* the reader's digest of the file */
};
#define RESULT_INIT                                                                                \
	{                                                                                          \
		{PG_BUF_INIT, GZREF_CLEAN, ""}, ""                                                 \
	}

/* Trace-like JSON text of about n bytes: compressible, but not one repeated line. */
static void json_text(struct pg_buf *b, size_t n)
{
	uint32_t x = 12345;

	pg_buf_adds(b, "{\"traceEvents\":[");
	for (int i = 0; b->len < n; i++) {
		x = x * 1103515245u + 12345u;
		pg_buf_addf(b,
			    "{\"ph\":\"X\",\"name\":\"op_%u\",\"pid\":%u,\"tid\":%u,\"ts\":%d.%03u,"
			    "\"dur\":%u},\n",
			    (x >> 8) % 500, (x >> 4) % 8, (x >> 12) % 64, i * 7, x % 1000,
			    (x >> 16) % 900);
	}
	pg_buf_adds(b, "{}]}");
}

/* One gzip member of data[0, n), as gzip writes it (no name, no time). */
static void gz_member(struct pg_buf *out, const void *data, size_t n, int level)
{
	assert_int_equal(pg_buf_add_gzip(out, data, n, level), 0);
}

/* The byte source over the file, on `threads`, hashing it; with chunks > 0 the
 * reader stops after that many. */
static void served(const char *path, int threads, int chunks, struct result *r)
{
	struct rd_in in;
	int rc;

	assert_int_equal(rd_in_open_hashing(&in, path, threads, 1), 0);
	assert_true(rd_in_is_gzip(&in));
	while ((rc = rd_in_refill(&in)) > 0) {
		assert_int_equal(in.chunk_off, r->z.bytes.len);
		pg_buf_add(&r->z.bytes, in.p, (size_t)(in.end - in.p));
		if (--chunks == 0)
			break;
	}
	r->z.end = rc < 0 ? GZREF_ERROR : in.truncated ? GZREF_TRUNCATED : GZREF_CLEAN;
	if (rc < 0)
		snprintf(r->z.msg, sizeof(r->z.msg), "%s", pg_error_last());
	assert_int_equal(rd_in_sha256(&in, path, r->sha256), 1);
	rd_in_close(&in);
}

/* Write the file, then hold both sources to the reference; returns the reference's end. */
static enum gzref_end same_as_zlib(const char *name, const struct pg_buf *gz)
{
	char path[512];
	struct result want = RESULT_INIT;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", th_dir, name);
	assert_non_null(f = fopen(path, "wb"));
	assert_int_equal(fwrite(gz->ptr, 1, gz->len, f), gz->len);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(gzref_inflate((const unsigned char *)gz->ptr, gz->len, &want.z), 0);
	gzref_sha256(gz->ptr, gz->len, want.sha256);
	for (int threads = 1; threads <= 2; threads++) {
		struct result got = RESULT_INIT;
		served(path, threads, 0, &got);
		if (strcmp(got.sha256, want.sha256) != 0)
			fail_msg("%s, %d thread(s): hashed %s, the file's SHA-256 is %s", name,
				 threads, got.sha256, want.sha256);
		if (got.z.end != want.z.end || strcmp(got.z.msg, want.z.msg) != 0)
			fail_msg("%s, %d thread(s): ended %d '%s', zlib ends %d '%s'", name,
				 threads, got.z.end, got.z.msg, want.z.end, want.z.msg);
		if (got.z.bytes.len != want.z.bytes.len ||
		    memcmp(got.z.bytes.ptr, want.z.bytes.ptr, got.z.bytes.len) != 0)
			fail_msg(
			    "%s, %d thread(s): %zu bytes served, zlib makes %zu (or they differ)",
			    name, threads, got.z.bytes.len, want.z.bytes.len);
		pg_buf_release(&got.z.bytes);
	}
	pg_buf_release(&want.z.bytes);
	return want.z.end;
}

/* ---- tests ---- */

static struct pg_buf json, one; /* ~9 MiB of JSON (over the ring), and its gzip */

static int setup_data(void **state)
{
	pg_buf_init(&json);
	pg_buf_init(&one);
	json_text(&json, 9u << 20);
	gz_member(&one, json.ptr, json.len, 6);
	return setup(state);
}

static int teardown_data(void **state)
{
	pg_buf_release(&json);
	pg_buf_release(&one);
	return teardown(state);
}

static void whole_streams(void **state)
{
	struct pg_buf gz = PG_BUF_INIT;

	(void)state;
	assert_int_equal(same_as_zlib("one.gz", &one), GZREF_CLEAN);
	/* members as `cat a.gz b.gz c.gz` makes, zero padding between and after, a stored one */
	size_t third = json.len / 3;
	gz_member(&gz, json.ptr, third, 1);
	pg_buf_add(&gz, "\0\0\0\0", 4);
	gz_member(&gz, json.ptr + third, third, 0);
	gz_member(&gz, json.ptr + 2 * third, json.len - 2 * third, 9);
	pg_buf_add(&gz, "\0\0", 2);
	assert_int_equal(same_as_zlib("members.gz", &gz), GZREF_CLEAN);
	/* an empty member, then a small one */
	gz.len = 0;
	gz_member(&gz, "", 0, 6);
	gz_member(&gz, "{}", 2, 6);
	assert_int_equal(same_as_zlib("empty_first.gz", &gz), GZREF_CLEAN);
	pg_buf_release(&gz);
}

static void cut_streams_are_truncated(void **state)
{
	struct pg_buf gz = PG_BUF_INIT;
	size_t cuts[] = {one.len / 2, one.len - 8, one.len - 3, 20, 11};

	(void)state;
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		gz.len = 0;
		pg_buf_add(&gz, one.ptr, cuts[i]);
		assert_int_equal(same_as_zlib("cut.gz", &gz), GZREF_TRUNCATED);
	}
	/* a second member cut in its header, and a lone gzip magic after a whole member */
	gz.len = 0;
	pg_buf_add(&gz, one.ptr, one.len);
	pg_buf_add(&gz, one.ptr, 5);
	assert_int_equal(same_as_zlib("second_cut.gz", &gz), GZREF_TRUNCATED);
	gz.len = one.len + 2;
	memcpy(gz.ptr + one.len, "\x1f\x8b", 2);
	assert_int_equal(same_as_zlib("lone_magic.gz", &gz), GZREF_TRUNCATED);
	pg_buf_release(&gz);
}

static void corrupt_streams_say_what_zlib_says(void **state)
{
	struct pg_buf gz = PG_BUF_INIT;

	(void)state;
	/* the CRC-32 and the length in the trailer, after megabytes served */
	pg_buf_add(&gz, one.ptr, one.len);
	gz.ptr[one.len - 6] ^= 1;
	assert_int_equal(same_as_zlib("crc.gz", &gz), GZREF_ERROR);
	gz.ptr[one.len - 6] ^= 1;
	gz.ptr[one.len - 2] ^= 1;
	assert_int_equal(same_as_zlib("isize.gz", &gz), GZREF_ERROR);
	gz.ptr[one.len - 2] ^= 1;
	/* deflate data flipped at several places; the compression method */
	size_t at[] = {one.len / 2, one.len / 5, 30};
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		gz.ptr[at[i]] ^= 0x5a;
		assert_int_not_equal(same_as_zlib("flipped.gz", &gz), GZREF_CLEAN);
		gz.ptr[at[i]] ^= 0x5a;
	}
	gz.ptr[2] = 7;
	assert_int_equal(same_as_zlib("method.gz", &gz), GZREF_ERROR);
	gz.ptr[2] = 8;
	/* trailing garbage after a whole member; a zlib stream after one is read on */
	pg_buf_add(&gz, "garbage!", 8);
	assert_int_equal(same_as_zlib("garbage.gz", &gz), GZREF_ERROR);
	gz.len = one.len;
	uLongf zn = compressBound(3);
	pg_buf_grow(&gz, zn);
	assert_int_equal(compress((Bytef *)gz.ptr + gz.len, &zn, (const Bytef *)"abc", 3), Z_OK);
	gz.len += zn;
	assert_int_equal(same_as_zlib("then_zlib.gz", &gz), GZREF_CLEAN);
	pg_buf_release(&gz);
}

/* A reader that stops early (a parse error, a cap) still gets the whole file's digest. */
static void digest_of_a_read_left_early(void **state)
{
	char path[512], want[65];
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/early.gz", th_dir);
	assert_non_null(f = fopen(path, "wb"));
	assert_int_equal(fwrite(one.ptr, 1, one.len, f), one.len);
	assert_int_equal(fclose(f), 0);
	gzref_sha256(one.ptr, one.len, want);
	for (int threads = 1; threads <= 2; threads++) {
		struct result got = RESULT_INIT;
		served(path, threads, 1, &got);
		assert_true(got.z.bytes.len < json.len);
		assert_string_equal(got.sha256, want);
		pg_buf_release(&got.z.bytes);
	}
	/* a source that does not hash says so, and a plain file is no gzip source */
	struct rd_in in;
	char hex[65] = "";
	assert_int_equal(rd_in_open(&in, path, 2), 0);
	assert_int_equal(rd_in_sha256(&in, path, hex), 0);
	rd_in_close(&in);
	snprintf(path, sizeof(path), "%s/plain.json", th_dir);
	assert_non_null(f = fopen(path, "wb"));
	assert_int_equal(fwrite("{}", 1, 2, f), 2);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(rd_in_open_hashing(&in, path, 2, 1), 0);
	assert_int_equal(rd_in_sha256(&in, path, hex), 0);
	rd_in_close(&in);
	assert_string_equal(hex, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(whole_streams),
	    cmocka_unit_test(cut_streams_are_truncated),
	    cmocka_unit_test(corrupt_streams_say_what_zlib_says),
	    cmocka_unit_test(digest_of_a_read_left_early),
	};
	return cmocka_run_group_tests(tests, setup_data, teardown_data);
}
