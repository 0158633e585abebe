/*
 * Replays inputs through a fuzz target without libFuzzer, so that the seeds
 * and every crash regression run in `make check` under gcc and ASan/UBSan.
 * Built once per target as BUILD/tests/test_fuzz_<name>; prints TAP.
 *
 *   test_fuzz_<name>            tests/fuzz/seeds/<name> and tests/fuzz/regressions/<name>
 *   test_fuzz_<name> PATH...    these files, or every file in these folders
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

#ifndef FUZZ_NAME
#error "build with -DFUZZ_NAME=\"<target>\""
#endif

struct list {
	char **v;
	size_t n, cap;
};

static void add(struct list *l, const char *path)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->v = pg_xrealloc(l->v, l->cap * sizeof(char *));
	}
	l->v[l->n++] = pg_xstrdup(path);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A file, or the regular files of a folder (not recursive); a missing path
 * adds nothing (a target without regressions yet). */
static void collect(struct list *l, const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *e;

	if (stat(path, &st) != 0)
		return;
	if (!S_ISDIR(st.st_mode)) {
		add(l, path);
		return;
	}
	if (!(d = opendir(path)))
		return;
	size_t first = l->n;
	while ((e = readdir(d))) {
		char full[4096];
		if (e->d_name[0] == '.')
			continue;
		snprintf(full, sizeof(full), "%s/%s", path, e->d_name);
		if (stat(full, &st) == 0 && S_ISREG(st.st_mode))
			add(l, full);
	}
	closedir(d);
	qsort(l->v + first, l->n - first, sizeof(char *), cmp_str);
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct pg_buf b = PG_BUF_INIT;
	char chunk[65536];
	size_t n;

	if (!f)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		pg_buf_add(&b, chunk, n);
	fclose(f);
	return (unsigned char *)pg_buf_detach(&b, len);
}

int main(int argc, char **argv)
{
	struct list l = {NULL, 0, 0};
	int failed = 0;

	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			collect(&l, argv[i]);
	} else {
		collect(&l, "tests/fuzz/seeds/" FUZZ_NAME);
		collect(&l, "tests/fuzz/regressions/" FUZZ_NAME);
	}
	/* the plan first: a crash leaves tests unreported, which run.sh counts */
	printf("1..%zu\n", l.n ? l.n : 1);
	fflush(stdout);
	if (l.n == 0)
		printf("ok 1 # skip no inputs for fuzz_%s\n", FUZZ_NAME);
	for (size_t i = 0; i < l.n; i++) {
		size_t len = 0;
		unsigned char *data = slurp(l.v[i], &len);
		if (!data) {
			printf("not ok %zu - %s: cannot read\n", i + 1, l.v[i]);
			failed = 1;
		} else {
			/* a copy of exactly len bytes: ASan sees any read past the end */
			unsigned char *exact = pg_xmalloc(len ? len : 1);
			memcpy(exact, data, len);
			LLVMFuzzerTestOneInput(exact, len);
			free(exact);
			printf("ok %zu - %s (%zu bytes)\n", i + 1, l.v[i], len);
		}
		fflush(stdout);
		free(data);
		free(l.v[i]);
	}
	free(l.v);
	return failed;
}
