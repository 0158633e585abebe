/*
 * util tests: pg_buf invariants, the JSON writer's exact bytes and escaping, the arena, errors,
 * pg_hash stability, pg_fmt_us, atomic file writes, the u64 map and sha256 test vectors; small
 * file reads under a cap, pg_xasprintf, the comparators, the natural merge sort, pg_parse_int,
 * redaction and the out-of-memory exit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/util/util.h"

/* ---- pg_buf ---- */

static void buf_starts_empty_and_static(void **state)
{
	struct pg_buf a = PG_BUF_INIT, b;

	(void)state;
	pg_buf_init(&b);
	assert_ptr_equal(a.ptr, pg_buf_empty);
	assert_ptr_equal(b.ptr, pg_buf_empty);
	assert_int_equal(a.len, 0);
	assert_int_equal(a.cap, 0);
	assert_int_equal(a.ptr[0], '\0');
	/* empty appends and resets allocate nothing and never write the shared empty string */
	pg_buf_add(&a, "x", 0);
	pg_buf_adds(&a, "");
	pg_buf_reset(&a);
	assert_ptr_equal(a.ptr, pg_buf_empty);
	assert_int_equal(a.cap, 0);
	assert_int_equal(pg_buf_empty[0], '\0');
	pg_buf_release(&a);
	assert_ptr_equal(a.ptr, pg_buf_empty);
}

static void buf_appends_stay_nul_terminated(void **state)
{
	struct pg_buf b = PG_BUF_INIT;

	(void)state;
	pg_buf_add(&b, "abc", 3);
	assert_int_equal(b.len, 3);
	assert_int_equal(b.ptr[3], '\0');
	assert_true(b.cap > b.len);
	pg_buf_addc(&b, 'd');
	pg_buf_adds(&b, "ef");
	pg_buf_addf(&b, "%d-%s", 42, "x");
	assert_string_equal(b.ptr, "abcdef42-x");
	assert_int_equal(b.len, 10);
	/* a formatted append longer than the current capacity */
	pg_buf_addf(&b, "%300s|", "");
	assert_int_equal(b.len, 311);
	assert_int_equal(b.ptr[310], '|');
	assert_int_equal(b.ptr[311], '\0');
	assert_int_equal(strlen(b.ptr), 311);
	/* bytes with an embedded NUL count by length, and the terminator follows them */
	pg_buf_add(&b, "a\0b", 3);
	assert_int_equal(b.len, 314);
	assert_memory_equal(b.ptr + 311, "a\0b", 3);
	assert_int_equal(b.ptr[314], '\0');
	/* grow reserves room for len + extra + the terminator and keeps the bytes */
	pg_buf_grow(&b, 5000);
	assert_true(b.cap >= b.len + 5000 + 1);
	assert_memory_equal(b.ptr, "abcdef42-x", 10);
	size_t cap = b.cap;
	pg_buf_reset(&b);
	assert_int_equal(b.len, 0);
	assert_int_equal(b.ptr[0], '\0');
	assert_int_equal(b.cap, cap);
	pg_buf_release(&b);
	assert_ptr_equal(b.ptr, pg_buf_empty);
	assert_int_equal(b.cap, 0);
}

static void buf_many_small_appends(void **state)
{
	struct pg_buf b = PG_BUF_INIT;

	(void)state;
	for (int i = 0; i < 100000; i++)
		pg_buf_addc(&b, (char)('a' + i % 26));
	assert_int_equal(b.len, 100000);
	assert_int_equal(b.ptr[100000], '\0');
	for (int i = 0; i < 100000; i += 997)
		assert_int_equal(b.ptr[i], 'a' + i % 26);
	pg_buf_release(&b);
}

static void buf_detach_hands_over_ownership(void **state)
{
	struct pg_buf b = PG_BUF_INIT;
	size_t n = 99;
	char *p;

	(void)state;
	/* an empty buffer still hands out a string the caller can free */
	p = pg_buf_detach(&b, &n);
	assert_non_null(p);
	assert_ptr_not_equal(p, pg_buf_empty);
	assert_int_equal(n, 0);
	assert_string_equal(p, "");
	free(p);
	pg_buf_adds(&b, "hello");
	p = pg_buf_detach(&b, &n);
	assert_string_equal(p, "hello");
	assert_int_equal(n, 5);
	assert_ptr_equal(b.ptr, pg_buf_empty);
	assert_int_equal(b.len, 0);
	assert_int_equal(b.cap, 0);
	/* the buffer is usable again and independent of the detached bytes */
	pg_buf_adds(&b, "again");
	assert_string_equal(p, "hello");
	assert_string_equal(b.ptr, "again");
	free(p);
	p = pg_buf_detach(&b, NULL);
	assert_string_equal(p, "again");
	free(p);
}

/* ---- JSON writer ---- */

static void write_sample(struct pg_json *j)
{
	pg_json_obj_begin(j);
	pg_json_key(j, "a");
	pg_json_int(j, -5);
	pg_json_key(j, "b");
	pg_json_arr_begin(j);
	pg_json_uint(j, UINT64_MAX);
	pg_json_bool(j, 1);
	pg_json_null(j);
	pg_json_double(j, 1.5, 3);
	pg_json_str(j, "x");
	pg_json_arr_end(j);
	pg_json_key(j, "c");
	pg_json_obj_begin(j);
	pg_json_obj_end(j);
	pg_json_key(j, "d");
	pg_json_arr_begin(j);
	pg_json_arr_end(j);
	pg_json_obj_end(j);
}

static void json_compact_exact(void **state)
{
	struct pg_buf out = PG_BUF_INIT;
	struct pg_json j;

	(void)state;
	pg_json_init(&j, &out, 0);
	write_sample(&j);
	assert_string_equal(out.ptr,
			    "{\"a\":-5,\"b\":[18446744073709551615,true,null,1.500,\"x\"],\"c\":{},"
			    "\"d\":[]}");
	pg_buf_release(&out);
}

static void json_pretty_exact(void **state)
{
	struct pg_buf out = PG_BUF_INIT;
	struct pg_json j;

	(void)state;
	pg_json_init(&j, &out, 1);
	write_sample(&j);
	assert_string_equal(out.ptr, "{\n"
				     "  \"a\": -5,\n"
				     "  \"b\": [\n"
				     "    18446744073709551615,\n"
				     "    true,\n"
				     "    null,\n"
				     "    1.500,\n"
				     "    \"x\"\n"
				     "  ],\n"
				     "  \"c\": {},\n"
				     "  \"d\": []\n"
				     "}\n");
	pg_buf_reset(&out);
	pg_json_init(&j, &out, 1);
	pg_json_arr_begin(&j);
	pg_json_int(&j, 1);
	pg_json_arr_end(&j);
	assert_string_equal(out.ptr, "[\n  1\n]\n");
	pg_buf_release(&out);
}

static void json_numbers(void **state)
{
	struct pg_buf out = PG_BUF_INIT;
	struct pg_json j;

	(void)state;
	pg_json_init(&j, &out, 0);
	pg_json_arr_begin(&j);
	pg_json_int(&j, INT64_MIN);
	pg_json_int(&j, INT64_MAX);
	pg_json_uint(&j, 0);
	pg_json_double(&j, -0.0, 3);  /* no "-0.000" */
	pg_json_double(&j, -1e-9, 3); /* nor when it rounds to zero */
	pg_json_double(&j, -4e-7, 0);
	pg_json_double(&j, NAN, 3); /* not JSON: null */
	pg_json_double(&j, INFINITY, 2);
	pg_json_double(&j, -12.3456, 2);
	pg_json_double(&j, 0.1, 3);
	pg_json_double(&j, 7.0, 0);
	pg_json_str(&j, NULL);
	pg_json_bool(&j, 0);
	pg_json_arr_end(&j);
	assert_string_equal(out.ptr, "[-9223372036854775808,9223372036854775807,0,0.000,0.000,0,"
				     "null,null,-12.35,0.100,7,null,false]");
	pg_buf_release(&out);
}

/* printf's %.*f, with a tiny negative that rounds to zero unsigned, as the
 * writer promises. */
static void printf_fixed(char *out, size_t cap, double v, int decimals)
{
	snprintf(out, cap, "%.*f", decimals, v == 0 ? 0.0 : v);
	if (out[0] == '-' && strspn(out + 1, "0.") == strlen(out + 1))
		memmove(out, out + 1, strlen(out));
}

/* The writer's doubles are printf's, byte for byte: ties and near-ties (which
 * printf decides from the exact binary value), every decimals 0..9, both
 * signs, values near the units of each scale, and magnitudes from 1e-12 to
 * 1e20 (past where the scaled value leaves a double's exact integers). */
static void json_doubles_match_printf(void **state)
{
	static const double fixed[] = {0.5,
				       1.5,
				       2.5,
				       0.125,
				       0.0005,
				       2.675,
				       1.0000005,
				       1.005,
				       0.045,
				       1e15 + 0.5,
				       4503599627370495.5,
				       9007199254740993.0,
				       123456.7895,
				       0.49999999999999994,
				       1e-300,
				       5e-324,
				       1e20,
				       8.5e-7};
	uint64_t seed = 0x6a736f6e64626cULL;
	char want[400], got[400];

	(void)state;
	for (int pass = 0; pass < 200000; pass++) {
		struct pg_buf out = PG_BUF_INIT;
		struct pg_json j;
		double v;
		int d = pass % 10;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		if (pass < (int)(sizeof(fixed) / sizeof(*fixed)) * 10)
			v = fixed[pass / 10];
		else if (pass % 3 == 0) /* k + 1/2 at some scale, and its neighbours */
			v = nextafter(((double)(seed >> 40) + 0.5) / pow(10, (seed >> 8) % 10),
				      (seed & 1) ? INFINITY : -INFINITY);
		else
			v = ldexp((double)(seed >> 11), (int)((seed >> 3) % 110) - 100);
		if (seed & 4)
			v = -v;
		pg_json_init(&j, &out, 0);
		pg_json_double(&j, v, d);
		printf_fixed(want, sizeof(want), v, d);
		snprintf(got, sizeof(got), "%s", out.ptr);
		if (strcmp(want, got) != 0)
			fail_msg("%.17g with %d decimals: printf '%s', writer '%s'", v, d, want,
				 got);
		pg_buf_release(&out);
	}
}

static void json_escapes_control_chars_and_quotes(void **state)
{
	struct pg_buf out = PG_BUF_INIT;
	struct pg_json j;
	/* every byte below 0x20 and 0x7f must be escaped; '/' and UTF-8 pass through */
	const char in[] = "q\"b\\s/n\nr\rt\tB\bF\f\x01\x1f\x7f\xc3\xa9";

	(void)state;
	pg_json_escape(&out, in, strlen(in));
	assert_string_equal(out.ptr,
			    "\"q\\\"b\\\\s/n\\nr\\rt\\tB\\u0008F\\u000c\\u0001\\u001f\\u007f"
			    "\xc3\xa9\"");
	pg_buf_reset(&out);
	/* strn writes exactly n bytes, an embedded NUL included */
	pg_json_init(&j, &out, 0);
	pg_json_obj_begin(&j);
	pg_json_key(&j, "k\"ey\n");
	pg_json_strn(&j, "a\0b", 3);
	pg_json_obj_end(&j);
	assert_string_equal(out.ptr, "{\"k\\\"ey\\n\":\"a\\u0000b\"}");
	pg_buf_reset(&out);
	/* every control byte, one by one */
	for (int c = 1; c < 0x20; c++) {
		char s[1] = {(char)c}, want[16];
		pg_buf_reset(&out);
		pg_json_escape(&out, s, 1);
		if (c == '\n')
			snprintf(want, sizeof(want), "\"\\n\"");
		else if (c == '\r')
			snprintf(want, sizeof(want), "\"\\r\"");
		else if (c == '\t')
			snprintf(want, sizeof(want), "\"\\t\"");
		else
			snprintf(want, sizeof(want), "\"\\u%04x\"", c);
		assert_string_equal(out.ptr, want);
	}
	pg_buf_release(&out);
}

/* Bytes that are not UTF-8 become U+FFFD; every well-formed sequence passes. */
static void json_output_is_utf8(void **state)
{
	struct pg_buf out = PG_BUF_INIT;
	/* a stray continuation, an overlong '/', a surrogate, past U+10FFFF, a cut sequence */
	const char in[] = "a\x80"
			  "b\xc0\xaf"
			  "c\xed\xa0\x80"
			  "d\xf4\x90\x80\x80"
			  "e\xe2\x82";
	const char ok[] = "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xe2\x80\xae";

	(void)state;
	pg_json_escape(&out, in, strlen(in));
	assert_string_equal(out.ptr, "\"a\xef\xbf\xbd"
				     "b\xef\xbf\xbd\xef\xbf\xbd"
				     "c\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
				     "d\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
				     "e\xef\xbf\xbd\xef\xbf\xbd\"");
	pg_buf_reset(&out);
	pg_json_escape(&out, ok, strlen(ok));
	assert_int_equal(out.len, strlen(ok) + 2);
	assert_memory_equal(out.ptr + 1, ok, strlen(ok));
	assert_int_equal(pg_utf8_seq((const unsigned char *)"\xf0\x9f\x98\x80", 4), 4);
	assert_int_equal(pg_utf8_seq((const unsigned char *)"\xf0\x9f\x98\x80", 3), 0);
	pg_buf_release(&out);
}

/* ---- arena ---- */

static void arena_allocations_are_aligned_and_distinct(void **state)
{
	struct pg_arena a;
	unsigned char *p[200];
	size_t sizes[200], total = 0;

	(void)state;
	pg_arena_init(&a, 256);
	for (int i = 0; i < 200; i++) {
		sizes[i] = (size_t)(1 + (i * 37) % 700); /* some larger than a block */
		p[i] = pg_arena_alloc(&a, sizes[i]);
		assert_non_null(p[i]);
		assert_int_equal((uintptr_t)p[i] % _Alignof(max_align_t), 0);
		memset(p[i], i, sizes[i]);
		total += sizes[i];
	}
	/* no allocation overlaps another: each still holds its own fill byte */
	for (int i = 0; i < 200; i++)
		for (size_t k = 0; k < sizes[i]; k++)
			assert_int_equal(p[i][k], (unsigned char)i);
	assert_true(a.total_bytes >= total);
	pg_arena_release(&a);
	assert_int_equal(a.total_bytes, 0);
	/* usable again after a release */
	pg_arena_init(&a, 0);
	assert_int_equal(a.block_size, 1 << 20);
	char *s = pg_arena_strndup(&a, "kernel_name_and_more", 6);
	assert_string_equal(s, "kernel");
	s = pg_arena_strndup(&a, "", 0);
	assert_string_equal(s, "");
	pg_arena_release(&a);
}

/* ---- errors ---- */

static void *set_error_in_thread(void *arg)
{
	(void)arg;
	pg_error_set(PG_EIO, "worker thread message");
	return (void *)(uintptr_t)(strcmp(pg_error_last(), "worker thread message") == 0);
}

static void errors_are_per_thread(void **state)
{
	pthread_t th;
	void *ret = NULL;
	char big[2000];

	(void)state;
	assert_int_equal(pg_error_set(PG_EFORMAT, "bad %s at byte %d", "thing", 7), PG_EFORMAT);
	assert_string_equal(pg_error_last(), "bad thing at byte 7");
	assert_int_equal(pthread_create(&th, NULL, set_error_in_thread, NULL), 0);
	assert_int_equal(pthread_join(th, &ret), 0);
	assert_true(ret != NULL);
	assert_string_equal(pg_error_last(), "bad thing at byte 7");
	pg_error_clear();
	assert_string_equal(pg_error_last(), "unknown error");
	/* a long message is cut, never overflows */
	memset(big, 'm', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	pg_error_set(PG_ELIMIT, "%s", big);
	assert_int_equal(strlen(pg_error_last()), 1023);
	char *d = pg_xstrndup("abcdef", 3);
	assert_string_equal(d, "abc");
	free(d);
	/* one line whatever a message quotes: control bytes and bidi controls escaped */
	pg_error_set(PG_EFORMAT, "key '%s'",
		     "a\nb\r\tc\x1b[2J\x7f\xe2\x80\xae"
		     "d\xd8\x9c\xc3\xa9");
	assert_string_equal(pg_error_last(),
			    "key 'a\\nb\\r\\tc\\x1b[2J\\x7f\\u202ed\\u061c\xc3\xa9'");
	struct pg_buf b = PG_BUF_INIT;
	assert_string_equal(pg_line(&b, "x\n::error::y"), "x\\n::error::y");
	pg_buf_add_line(&b, NULL);
	pg_buf_add_line(&b, "\x01");
	assert_string_equal(b.ptr, "x\\n::error::y\\x01");
	pg_buf_release(&b);
	/* an escape is never cut in half at the end of the buffer */
	char small[6];
	assert_int_equal(pg_sanitize_line(small, sizeof(small),
					  "ab\x01"
					  "cd"),
			 2);
	assert_string_equal(small, "ab");
}

/* ---- pg_hash ---- */

/*
 * The expected values come from an independent Python model of the documented algorithm
 * (8-byte little-endian words, multiply-mix, zero-padded tail), not from running this
 * code: they pin the hash so ids derived from it stay the same across builds and runs.
 */
static void hash_is_stable(void **state)
{
	static const struct {
		const char *s;
		uint64_t h;
	} known[] = {
	    {"", 0x7d8bdf20b7a7dbeaULL},
	    {"a", 0xa870468f0b4c67a1ULL},
	    {"kernel", 0xaddb01a5340f9a9fULL},
	    {"0123456789abcdef", 0x8f2a10291ed3671bULL},
	    {"ncclDevKernel_AllReduce_Sum_f32_RING_LL", 0x39e731c54523ca90ULL},
	};
	char buf[64];

	(void)state;
	for (size_t i = 0; i < PG_ARRAY_LEN(known); i++) {
		size_t n = strlen(known[i].s);
		assert_int_equal(pg_hash(known[i].s, n), known[i].h);
		/* the same bytes at an odd address hash the same */
		memcpy(buf + 1, known[i].s, n);
		assert_int_equal(pg_hash(buf + 1, n), known[i].h);
	}
	/* the length is part of the hash: a trailing NUL is not the same string */
	assert_int_not_equal(pg_hash("a\0", 2), pg_hash("a", 1));
	assert_int_not_equal(pg_hash("kernel1", 7), pg_hash("kernel2", 7));
}

/* ---- pg_fmt_us ---- */

static void fmt_us_exact(void **state)
{
	static const struct {
		int64_t ns;
		const char *s;
	} cases[] = {
	    {0, "0.000"},
	    {1, "0.001"},
	    {999, "0.999"},
	    {1000, "1.000"},
	    {12345, "12.345"},
	    {-1, "-0.001"},
	    {-1500, "-1.500"},
	    {1712195495505582988LL, "1712195495505582.988"},
	    {INT64_MAX, "9223372036854775.807"},
	    {INT64_MIN, "-9223372036854775.808"},
	};
	char out[32];

	(void)state;
	for (size_t i = 0; i < PG_ARRAY_LEN(cases); i++) {
		pg_fmt_us(out, sizeof(out), cases[i].ns);
		assert_string_equal(out, cases[i].s);
	}
	/* a short buffer is cut and still terminated */
	pg_fmt_us(out, 4, 12345);
	assert_string_equal(out, "12.");
}

/* ---- pg_write_file_atomic ---- */

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *p = pg_xmalloc(1 << 16);

	assert_non_null(f);
	*n = fread(p, 1, 1 << 16, f);
	fclose(f);
	return p;
}

static void write_file_atomic(void **state)
{
	char dir[] = "/tmp/pg-test-util-XXXXXX", path[64], bad[96];
	size_t n;
	char *got;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.json", dir);
	assert_int_equal(pg_write_file_atomic(path, "{\"a\": 1}\n", 9), 0);
	got = slurp(path, &n);
	assert_int_equal(n, 9);
	assert_memory_equal(got, "{\"a\": 1}\n", 9);
	free(got);
	/* replacing with shorter content leaves exactly the new bytes */
	assert_int_equal(pg_write_file_atomic(path, "{}", 2), 0);
	got = slurp(path, &n);
	assert_int_equal(n, 2);
	assert_memory_equal(got, "{}", 2);
	free(got);
	assert_int_equal(pg_write_file_atomic(path, "", 0), 0);
	got = slurp(path, &n);
	assert_int_equal(n, 0);
	free(got);
	/* no temporary file is left behind */
	assert_int_equal(count_entries(dir), 1);
	/* a directory that does not exist: PG_EIO, and the message names the path */
	snprintf(bad, sizeof(bad), "%s/missing/out.json", dir);
	pg_error_clear();
	assert_int_equal(pg_write_file_atomic(bad, "x", 1), PG_EIO);
	assert_non_null(strstr(pg_error_last(), bad));
	assert_int_equal(count_entries(dir), 1);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* ---- u64 map ---- */

static void u64map_put_get(void **state)
{
	struct pg_u64map m;

	(void)state;
	memset(&m, 0, sizeof(m));
	assert_int_equal(pg_u64map_get(&m, 1), UINT32_MAX);
	for (uint64_t k = 0; k < 5000; k++)
		pg_u64map_put(&m, k * 0x100000001ULL, (uint32_t)k);
	pg_u64map_put(&m, 7 * 0x100000001ULL, 70000); /* overwrite keeps one entry */
	assert_int_equal(m.n, 5000);
	for (uint64_t k = 0; k < 5000; k++)
		assert_int_equal(pg_u64map_get(&m, k * 0x100000001ULL), k == 7 ? 70000 : k);
	assert_int_equal(pg_u64map_get(&m, 3), UINT32_MAX);
	pg_u64map_release(&m);
	assert_int_equal(m.cap, 0);
}

/* ---- sha256: FIPS 180-2 test vectors ---- */

static void sha256_vectors(void **state)
{
	struct pg_sha256 s;
	char hex[65], dir[] = "/tmp/pg-test-sha-XXXXXX", path[64];
	static const char two_blocks[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";

	(void)state;
	pg_sha256_init(&s);
	pg_sha256_hex(&s, hex);
	assert_string_equal(hex,
			    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	pg_sha256_init(&s);
	pg_sha256_update(&s, "abc", 3);
	pg_sha256_hex(&s, hex);
	assert_string_equal(hex,
			    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	/* the same input in odd pieces */
	pg_sha256_init(&s);
	for (size_t i = 0; i < strlen(two_blocks); i += 5)
		pg_sha256_update(&s, two_blocks + i,
				 strlen(two_blocks) - i < 5 ? strlen(two_blocks) - i : 5);
	pg_sha256_hex(&s, hex);
	assert_string_equal(hex,
			    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/abc", dir);
	assert_int_equal(pg_write_file_atomic(path, "abc", 3), 0);
	assert_int_equal(pg_sha256_file(path, hex), 0);
	assert_string_equal(hex,
			    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	unlink(path);
	rmdir(dir);
	assert_int_equal(pg_sha256_file(path, hex), PG_EIO);
}

/* pg_sha256_file (OpenSSL) and the streaming code agree on a file's bytes. */
static void sha256_file_matches_streaming(void **state)
{
	char path[256], a[65], b[65];
	struct pg_sha256 s;
	unsigned char buf[3000];
	(void)state;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 7 + 3);
	snprintf(path, sizeof(path), "%s/pg-sha-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
		 (int)getpid());
	assert_int_equal(pg_write_file_atomic(path, buf, sizeof(buf)), 0);
	assert_int_equal(pg_sha256_file(path, a), 0);
	pg_sha256_init(&s);
	pg_sha256_update(&s, buf, 1000);
	pg_sha256_update(&s, buf + 1000, 2000);
	pg_sha256_hex(&s, b);
	assert_string_equal(a, b);
	unlink(path);
}

/* A registered secret never survives into a message, whatever quoted it;
 * short strings are not secrets (they would redact ordinary words). */
static void secrets_redacted_from_messages(void **state)
{
	(void)state;
	pg_secret_add("tok-1234567890abcdef");
	pg_secret_add("abc"); /* too short: ignored */
	pg_secret_add(NULL);
	pg_error_set(PG_EDELIVERY, "GitHub: HTTP 200, not JSON (text/tok-1234567890abcdef; x) abc");
	assert_string_equal(pg_error_last(), "GitHub: HTTP 200, not JSON (text/***; x) abc");
	pg_error_set(PG_EIO, "tok-1234567890abcdeftok-1234567890abcdef\n");
	assert_string_equal(pg_error_last(), "******\\n");
	char buf[64] = "a tok-1234567890abcdef b";
	pg_secret_redact(buf);
	assert_string_equal(buf, "a *** b");
}

/* A message longer than the 1 KiB kept is redacted before it is cut: a
 * token across the cut leaves no part of itself, wherever it starts. */
static void secrets_redacted_before_the_cut(void **state)
{
	const char *tok = "ghs_CUTTOKEN0123456789abcdefghijklmnopqrstu"; /* 43 characters */
	char pad[1100];
	(void)state;
	pg_secret_add(tok);
	for (size_t n = 960; n < 1040; n++) {
		memset(pad, 'x', n);
		pad[n] = 0;
		pg_error_set(PG_EDELIVERY, "%s%s tail", pad, tok);
		assert_null(strstr(pg_error_last(), "ghs_"));
		assert_null(strstr(pg_error_last(), "CUTTOKEN"));
	}
}

/* Doubles from JSON become integers only when they are whole and exact. */
static void whole_numbers(void **state)
{
	int64_t n = 0;

	(void)state;
	assert_true(pg_whole(7.0, &n) && n == 7);
	assert_true(pg_whole(-9007199254740992.0, &n) && n == -9007199254740992LL);
	assert_false(pg_whole(1.1111e118, &n));
	assert_false(pg_whole(9007199254740994.0, &n));
	assert_false(pg_whole(2.5, &n));
	assert_false(pg_whole(NAN, &n));
	assert_false(pg_whole(INFINITY, &n));
	assert_false(pg_whole(-INFINITY, &n));
}

static void tmp_path(char *out, size_t cap, const char *name)
{
	snprintf(out, cap, "%s/pg-%s-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", name,
		 (int)getpid());
}

/* A small file whole; more than the cap, a missing file or a folder refused
 * with a message naming it and errno saying why; out unchanged on failure. */
static void read_small_caps_and_errors(void **state)
{
	struct pg_buf b = PG_BUF_INIT;
	char path[256], msg[512];
	(void)state;

	tmp_path(path, sizeof(path), "small");
	assert_int_equal(pg_write_file_atomic(path, "0123456789", 10), 0);
	assert_int_equal(pg_read_small(path, 10, 0, &b), 0);
	assert_int_equal(b.len, 10);
	assert_string_equal(b.ptr, "0123456789");
	assert_int_equal(pg_read_small(path, 9, 0, &b), PG_ELIMIT);
	assert_int_equal(errno, 0);
	assert_int_equal(b.len, 10);
	assert_string_equal(b.ptr, "0123456789");
	snprintf(msg, sizeof(msg), "'%s' is larger than 9 bytes", path);
	assert_string_equal(pg_error_last(), msg);
	unlink(path);
	assert_int_equal(pg_read_small(path, 10, 0, &b), PG_EIO);
	assert_int_equal(errno, ENOENT);
	snprintf(msg, sizeof(msg), "cannot read '%s': %s", path, strerror(ENOENT));
	assert_string_equal(pg_error_last(), msg);
	assert_int_equal(pg_read_small("/", 10, 0, &b), PG_EIO);
	assert_int_equal(errno, EISDIR);
	assert_string_equal(pg_error_last(), "cannot read '/': is a directory");
	/* a device has no size to check first: the cap still holds while reading */
	pg_buf_reset(&b);
	assert_int_equal(pg_read_small("/dev/zero", 100000, 0, &b), PG_ELIMIT);
	assert_int_equal(b.len, 0);
	/* "-" is a file's name unless standard input is asked for */
	assert_int_equal(pg_read_small("-", 10, 0, &b), PG_EIO);
	pg_buf_release(&b);
}

static void xasprintf_is_not_cut(void **state)
{
	char *s, *long_s;
	(void)state;

	s = pg_xasprintf("%s-%d", "a", 42);
	assert_string_equal(s, "a-42");
	free(s);
	long_s = pg_xmalloc(10001);
	memset(long_s, 'x', 10000);
	long_s[10000] = '\0';
	s = pg_xasprintf("<%s>", long_s);
	assert_int_equal(strlen(s), 10002);
	free(s);
	free(long_s);
}

/* ---- PG_SORT_RUNS ---- */

/* An element: its key, and where it was before the sort (to check stability). */
struct sr_item {
	int key;
	uint32_t at;
};
#define SR_BEFORE(ctx, x, y) ((void)(ctx), (x).key < (y).key)
PG_SORT_RUNS(sort_items, struct sr_item, const void *, SR_BEFORE)

/* What PG_SORT_RUNS_AHEAD hands its look-ahead: each element at most once,
 * from the list as it was before the sort. */
struct sr_ahead {
	const struct sr_item *orig;
	uint32_t n, calls;
	uint8_t *seen;
};
static void sr_ahead(struct sr_ahead *a, struct sr_item x)
{
	assert_true(x.at < a->n);
	assert_int_equal(a->orig[x.at].key, x.key);
	assert_false(a->seen[x.at]);
	a->seen[x.at] = 1;
	a->calls++;
}
#define SR_BEFORE_AHEAD(ctx, x, y) ((void)(ctx), (x).key < (y).key)
PG_SORT_RUNS_AHEAD(sort_items_ahead, struct sr_item, struct sr_ahead *, SR_BEFORE_AHEAD, sr_ahead)

/* Sorted with the look-ahead, orig comes out as want, and every element
 * PG_SORT_AHEAD or more places into its run was looked at once. */
static void sr_check_ahead(const struct sr_item *orig, const struct sr_item *want, uint32_t n)
{
	struct sr_item *v = malloc((n + 1) * sizeof(*v));
	struct sr_ahead a = {orig, n, 0, calloc(n + 1, 1)};
	uint32_t expect = 0, len = 0, runs = 0;

	memcpy(v, orig, n * sizeof(*v));
	sort_items_ahead(v, n, &a);
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(v[i].at, want[i].at);
		len = i > 0 && orig[i].key < orig[i - 1].key ? 1 : len + 1;
		runs += len == 1;
		expect += len > PG_SORT_AHEAD;
	}
	/* a list that is one run is left as it is */
	assert_int_equal(a.calls, runs > 1 ? expect : 0);
	free(a.seen);
	free(v);
}

static int sr_cmp(const void *a, const void *b)
{
	const struct sr_item *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->at > y->at) - (x->at < y->at);
}

/* Lists made of rounds of sorted runs, some rounds reaching into the next and a late run
 * reaching back to the start, with ties: sorted the way a stable sort sorts them. */
static void sort_runs_is_a_stable_sort(void **state)
{
	enum { N = 4000 };
	struct sr_item *v = malloc(N * sizeof(*v)), *want = malloc(N * sizeof(*want));
	unsigned seed = 12345;

	(void)state;
	for (int trial = 0; trial < 200; trial++) {
		uint32_t n = 0;
		int round = 0, back = trial % 3 == 0;
		while (n < N) {
			int runs = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 4;
			int overlap = (int)(seed >> 8) % 3 == 0 ? 15 : 0;
			for (int r = 0; r < runs && n < N; r++) {
				int len =
				    1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 40;
				int at = round * 100 - overlap + (int)(seed >> 4) % 20;
				for (int i = 0; i < len && n < N; i++, n++) {
					at += (int)((seed = seed * 1103515245u + 12345u) >> 16) % 3;
					v[n] = (struct sr_item){at, n};
				}
			}
			round++;
			if (back && n > N / 2) {
				/* a run far back in time, past many rounds */
				for (int i = 0; i < 30 && n < N; i++, n++)
					v[n] = (struct sr_item){round * 20 + i * 2, n};
				back = 0;
			}
		}
		if (trial % 11 == 0)
			for (uint32_t i = 0; i < n; i++)
				v[i].key /= 50; /* many ties */
		memcpy(want, v, n * sizeof(*v));
		qsort(want, n, sizeof(*want), sr_cmp);
		sr_check_ahead(v, want, n);
		sort_items(v, n, NULL);
		for (uint32_t i = 0; i < n; i++) {
			assert_int_equal(v[i].key, want[i].key);
			assert_int_equal(v[i].at, want[i].at);
		}
	}
	/* one run, two elements, and a list that is all one descent */
	struct sr_item d[5] = {{5, 0}, {4, 1}, {3, 2}, {2, 3}, {1, 4}};
	sort_items(d, 5, NULL);
	for (int i = 0; i < 5; i++)
		assert_int_equal(d[i].key, i + 1);
	sort_items(d, 1, NULL);
	assert_int_equal(d[0].key, 1);
	free(v);
	free(want);
}

static void comparators_order(void **state)
{
	double d[] = {3.5, -1.0, 2.0, -1.0};
	int64_t i[] = {INT64_MAX, -5, INT64_MIN, 0};
	uint32_t u[] = {UINT32_MAX, 0, 7};
	const char *str[] = {"b", "a", "ab"};
	(void)state;

	qsort(d, 4, sizeof(d[0]), pg_cmp_double);
	assert_true(d[0] == -1.0 && d[1] == -1.0 && d[2] == 2.0 && d[3] == 3.5);
	qsort(i, 4, sizeof(i[0]), pg_cmp_i64);
	assert_true(i[0] == INT64_MIN && i[1] == -5 && i[2] == 0 && i[3] == INT64_MAX);
	qsort(u, 3, sizeof(u[0]), pg_cmp_u32);
	assert_true(u[0] == 0 && u[1] == 7 && u[2] == UINT32_MAX);
	qsort(str, 3, sizeof(str[0]), pg_cmp_str);
	assert_string_equal(str[0], "a");
	assert_string_equal(str[1], "ab");
	assert_string_equal(str[2], "b");
}

static void parse_int_is_strict(void **state)
{
	int64_t v = 99;
	(void)state;

	assert_int_equal(pg_parse_int("42", 1, 64, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(pg_parse_int("-7", -10, 10, &v), 0);
	assert_int_equal(v, -7);
	assert_int_equal(pg_parse_int("9223372036854775807", 0, INT64_MAX, &v), 0);
	assert_true(v == INT64_MAX);
	assert_int_equal(pg_parse_int("-9223372036854775808", INT64_MIN, 0, &v), 0);
	assert_true(v == INT64_MIN);
	v = 99;
	const char *bad[] = {"",
			     "-",
			     " 5",
			     "5 ",
			     "+5",
			     "5k",
			     "0x10",
			     "65",
			     "0",
			     "-1",
			     "9223372036854775808",
			     "99999999999999999999"};
	for (size_t k = 0; k < PG_ARRAY_LEN(bad); k++)
		assert_int_equal(pg_parse_int(bad[k], 1, 64, &v), -1);
	assert_int_equal(v, 99);
}

static void redact_a_list(void **state)
{
	const char *secrets[] = {"hunter22", "abc", "s3cr3t-key", NULL};
	char s[128] = "user hunter22 key s3cr3t-keys3cr3t-key abc";
	(void)state;

	pg_redact(s, secrets);
	assert_string_equal(s, "user *** key ****** abc");
	pg_redact(s, NULL);
	assert_string_equal(s, "user *** key ****** abc");
}

/* Out of memory is its own exit (71) with its own line, never "bad input" (3). */
static void out_of_memory_exits_71(void **state)
{
	int fds[2], status = 0;
	char got[256] = "";
	ssize_t n;
	pid_t pid;
	(void)state;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
#ifdef __SANITIZE_ADDRESS__
		/* AddressSanitizer reports a huge malloc before it fails, and the
		 * test runner counts every report: the exit itself is tested here */
		pg_oom(SIZE_MAX - 4096);
#else
		pg_xmalloc(SIZE_MAX - 4096);
#endif
		_exit(0);
	}
	close(fds[1]);
	n = read(fds[0], got, sizeof(got) - 1);
	close(fds[0]);
	got[n > 0 ? n : 0] = '\0';
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), PG_EXIT_NOMEM);
	assert_int_equal(PG_EXIT_NOMEM, 71);
	assert_non_null(strstr(got, "profgate: out of memory allocating "));
	assert_int_equal(pg_exit_code(PG_ENOMEM), 71);
	assert_int_equal(pg_exit_code(PG_EUSAGE), PG_EXIT_USAGE);
	assert_int_equal(pg_exit_code(PG_EFORMAT), PG_EXIT_INPUT);
	assert_int_equal(pg_exit_code(PG_EDELIVERY), PG_EXIT_INPUT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(buf_starts_empty_and_static),
	    cmocka_unit_test(buf_appends_stay_nul_terminated),
	    cmocka_unit_test(buf_many_small_appends),
	    cmocka_unit_test(buf_detach_hands_over_ownership),
	    cmocka_unit_test(json_compact_exact),
	    cmocka_unit_test(json_pretty_exact),
	    cmocka_unit_test(json_numbers),
	    cmocka_unit_test(json_doubles_match_printf),
	    cmocka_unit_test(json_escapes_control_chars_and_quotes),
	    cmocka_unit_test(json_output_is_utf8),
	    cmocka_unit_test(arena_allocations_are_aligned_and_distinct),
	    cmocka_unit_test(errors_are_per_thread),
	    cmocka_unit_test(hash_is_stable),
	    cmocka_unit_test(fmt_us_exact),
	    cmocka_unit_test(write_file_atomic),
	    cmocka_unit_test(u64map_put_get),
	    cmocka_unit_test(sha256_vectors),
	    cmocka_unit_test(sha256_file_matches_streaming),
	    cmocka_unit_test(secrets_redacted_from_messages),
	    cmocka_unit_test(secrets_redacted_before_the_cut),
	    cmocka_unit_test(whole_numbers),
	    cmocka_unit_test(read_small_caps_and_errors),
	    cmocka_unit_test(xasprintf_is_not_cut),
	    cmocka_unit_test(comparators_order),
	    cmocka_unit_test(sort_runs_is_a_stable_sort),
	    cmocka_unit_test(parse_int_is_strict),
	    cmocka_unit_test(redact_a_list),
	    cmocka_unit_test(out_of_memory_exits_71),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
