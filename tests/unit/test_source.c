/*
 * Profile-directory discovery tests: folder trees laid out as JAX, TensorBoard
 * and Kineto leave them, checked for the capture chosen, the files read and the
 * notes that explain the choice.
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

#include "../../src/source/source.h"
#include "helpers.h"

#define root th_dir

static int setup(void **state)
{
	(void)state;
	return th_dir_make("source");
}

static int teardown(void **state)
{
	(void)state;
	return th_dir_remove();
}

/* Create root/<rel> with content, making folders on the way. */
static void put(const char *rel, const char *content)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(path, 0755);
			*p = '/';
		}
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static char *sub(const char *rel)
{
	static char path[1024];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	return path;
}

static int has_file(const struct source_set *s, const char *suffix)
{
	for (uint32_t i = 0; i < s->n_files; i++) {
		size_t n = strlen(s->files[i].path), m = strlen(suffix);
		if (n >= m && strcmp(s->files[i].path + n - m, suffix) == 0)
			return 1;
	}
	return 0;
}

static int note_has(const struct source_set *s, const char *text)
{
	for (uint32_t i = 0; i < s->n_notes; i++)
		if (strstr(s->notes[i], text))
			return 1;
	return 0;
}

static void test_newest_capture_xplane_wins(void **state)
{
	struct source_set s;
	const char *in[1];
	(void)state;

	put("a/plugins/profile/2024_01_01_00_00_00/h1.xplane.pb", "old");
	put("a/plugins/profile/2024_01_02_00_00_00/h1.xplane.pb", "new-h1");
	put("a/plugins/profile/2024_01_02_00_00_00/h1.trace.json.gz", "json");
	put("a/plugins/profile/2024_01_02_00_00_00/perfetto_trace.json.gz", "perfetto");
	in[0] = sub("a");
	assert_int_equal(source_resolve(&s, in, 1, NULL), 0);
	assert_int_equal(s.n_captures, 2);
	assert_int_equal(s.n_files, 1);
	assert_true(has_file(&s, "2024_01_02_00_00_00/h1.xplane.pb"));
	assert_true(note_has(&s, "holds the same events"));
	assert_true(note_has(&s, "2 captures; chose 'plugins/profile/2024_01_02_00_00_00'"));
	source_set_release(&s);

	/* --capture picks the older one */
	assert_int_equal(source_resolve(&s, in, 1, "plugins/profile/2024_01_01_00_00_00"), 0);
	assert_int_equal(s.n_files, 1);
	assert_true(has_file(&s, "2024_01_01_00_00_00/h1.xplane.pb"));
	source_set_release(&s);

	/* an unknown capture name is an error naming it */
	assert_int_equal(source_resolve(&s, in, 1, "nope"), PG_ENOTFOUND);
	assert_non_null(strstr(pg_error_last(), "nope"));
	source_set_release(&s);
}

static void test_adjacent_folders_one_window(void **state)
{
	struct source_set s;
	const char *in[1];
	(void)state;

	/* two hosts stamped 2 s apart are one capture; a host repeating is not */
	put("b/plugins/profile/2024_03_01_10_00_00/h1.xplane.pb", "h1");
	put("b/plugins/profile/2024_03_01_10_00_02/h2.xplane.pb", "h2");
	put("b/plugins/profile/2024_03_01_09_00_00/h1.xplane.pb", "h1-old");
	in[0] = sub("b");
	assert_int_equal(source_resolve(&s, in, 1, NULL), 0);
	assert_int_equal(s.n_captures, 2);
	assert_int_equal(s.n_files, 2);
	assert_true(has_file(&s, "2024_03_01_10_00_00/h1.xplane.pb"));
	assert_true(has_file(&s, "2024_03_01_10_00_02/h2.xplane.pb"));
	source_set_release(&s);
}

static void test_duplicates_read_once(void **state)
{
	struct source_set s;
	const char *in[1];
	(void)state;

	put("c/x.xplane.pb", "same bytes");
	put("c/y.xplane.pb", "same bytes");
	put("c/z.xplane.pb", "same bytez");
	in[0] = sub("c");
	assert_int_equal(source_resolve(&s, in, 1, NULL), 0);
	assert_int_equal(s.n_files, 3);
	assert_int_equal(s.files[0].duplicate_of, -1);
	assert_int_equal(s.files[1].duplicate_of, 0);
	assert_int_equal(s.files[2].duplicate_of, -1);
	assert_true(note_has(&s, "byte-identical"));
	source_set_release(&s);
}

static void test_kineto_timestamps(void **state)
{
	struct source_set s;
	const char *in[1];
	(void)state;

	/* ranks of one run a few ms apart (each names its rank); a later run of rank 0 is a
	 * new capture */
	put("k/rank0.1700000000000.pt.trace.json", "{\"distributedInfo\": {\"rank\": 0}}");
	put("k/rank1.1700000000004.pt.trace.json", "{\"distributedInfo\": {\"rank\": 1}}");
	put("k/rank0.1700000900000.pt.trace.json.gz", "r0-later");
	in[0] = sub("k");
	assert_int_equal(source_resolve(&s, in, 1, NULL), 0);
	assert_int_equal(s.n_captures, 2);
	assert_int_equal(s.n_files, 1);
	assert_true(has_file(&s, "rank0.1700000900000.pt.trace.json.gz"));
	source_set_release(&s);
	assert_int_equal(source_resolve(&s, in, 1, ".@1700000000000"), 0);
	assert_int_equal(s.n_files, 2);
	source_set_release(&s);

	/* two runs 5.6 s apart that name no rank: two captures, the newest read, named */
	put("r/host_11.1700000000000.pt.trace.json", "{\"traceEvents\": []}");
	put("r/host_22.1700000005600.pt.trace.json", "{\"traceEvents\": []}");
	in[0] = sub("r");
	assert_int_equal(source_resolve(&s, in, 1, NULL), 0);
	assert_int_equal(s.n_captures, 2);
	assert_int_equal(s.n_files, 1);
	assert_true(has_file(&s, "host_22.1700000005600.pt.trace.json"));
	assert_true(note_has(&s, "5.6 s apart but are not one job"));
	source_set_release(&s);
}

static void test_no_profiles_and_missing(void **state)
{
	struct source_set s;
	const char *in[1];
	(void)state;

	put("empty/readme.txt", "nothing here");
	in[0] = sub("empty");
	assert_int_equal(source_resolve(&s, in, 1, NULL), PG_ENOTFOUND);
	assert_non_null(strstr(pg_error_last(), "no profiles"));
	source_set_release(&s);
	in[0] = sub("does-not-exist");
	assert_int_equal(source_resolve(&s, in, 1, NULL), PG_EIO);
	assert_non_null(strstr(pg_error_last(), "does-not-exist"));
	source_set_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_newest_capture_xplane_wins),
	    cmocka_unit_test(test_adjacent_folders_one_window),
	    cmocka_unit_test(test_duplicates_read_once),
	    cmocka_unit_test(test_kineto_timestamps),
	    cmocka_unit_test(test_no_profiles_and_missing),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
