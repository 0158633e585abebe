/*
 * Error reporting: one message per thread, set where the problem is found and
 * read once by the command layer. Messages are short, lowercase, and name the
 * subject first (see README "Errors").
 */
#include "util.h"

#include <stdlib.h>
#include <string.h>

static _Thread_local char last_error[1024];

int pg_error_set(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return code;
}

const char *pg_error_last(void)
{
	return last_error[0] ? last_error : "unknown error";
}

void pg_error_clear(void)
{
	last_error[0] = '\0';
}

static void oom(size_t n)
{
	fprintf(stderr, "profgate: out of memory allocating %zu bytes\n", n);
	exit(PG_EXIT_INPUT);
}

void *pg_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		oom(n);
	return p;
}

void *pg_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		oom(n * size);
	return p;
}

void *pg_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		oom(n);
	return q;
}

char *pg_xstrdup(const char *s)
{
	return pg_xstrndup(s, strlen(s));
}

char *pg_xstrndup(const char *s, size_t n)
{
	char *p = pg_xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}
