/*
 * tests/unit/helpers.h: the setup the unit tests share, included after cmocka.h (a failed step
 * fails the running test): a scratch folder per test binary under TMPDIR, made by the group's
 * setup and removed with everything in it by its teardown, paths in it, and whole files written
 * and read back. Tests run from the repository root, so fixtures are read by relative path.
 */
#ifndef PG_TEST_HELPERS_H
#define PG_TEST_HELPERS_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/util/util.h"

/* The scratch folder: th_dir_make fills it, th_dir_remove empties and removes it. */
static char th_dir[256];

/* A fresh folder TMPDIR/pg-<name>-XXXXXX in th_dir; 0, or -1 (for a cmocka group setup). */
static inline int th_dir_make(const char *name)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(th_dir, sizeof(th_dir), "%s/pg-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", name);
	return mkdtemp(th_dir) ? 0 : -1;
}

static inline int th_remove_entry(const char *path, const struct stat *st, int flag,
				  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Remove th_dir and everything in it; 0, or -1 (for a cmocka group teardown). */
static inline int th_dir_remove(void)
{
	return nftw(th_dir, th_remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}

/* th_dir/name, in one of 8 static buffers used in turn (a call's arguments may hold several). */
static inline const char *th_path(const char *name)
{
	static char paths[8][512];
	static int next;
	char *p = paths[next++ % 8];

	snprintf(p, sizeof(paths[0]), "%s/%s", th_dir, name);
	return p;
}

/* Write n bytes of data as the whole file at path. */
static inline void th_write(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		fail_msg("cannot write %s", path);
	assert_int_equal(fwrite(data, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

static inline void th_write_text(const char *path, const char *text)
{
	th_write(path, text, strlen(text));
}

/* The whole file at path, malloc'd and NUL-terminated; its length (without the NUL) in *len
 * when len is not NULL. */
static inline char *th_read(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct pg_buf b = PG_BUF_INIT;
	char chunk[4096];
	size_t n;

	if (!f)
		fail_msg("cannot open %s (tests run from the repository root)", path);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		pg_buf_add(&b, chunk, n);
	fclose(f);
	pg_buf_addc(&b, 0);
	if (len)
		*len = b.len - 1;
	return pg_buf_detach(&b, NULL);
}

#endif
