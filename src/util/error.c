/*
 * Error reporting: one message per thread, set where the problem is found and
 * read once by the command layer. Messages are short, lowercase, and name the
 * subject first (see docs/cli.md). Also the lines a module may write while
 * it works (pg_log, pg_progress), the secrets every message is cleaned of,
 * and the allocation that never returns NULL (out of memory exits
 * PG_EXIT_NOMEM).
 */
#include "util.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char last_error[1024];

static pthread_mutex_t secrets_lock = PTHREAD_MUTEX_INITIALIZER;
static char *registered[PG_MAX_SECRETS + 1]; /* NULL-terminated: one slot never used */
static size_t n_secrets;

void pg_secret_add(const char *s)
{
	if (!s || strlen(s) < 4)
		return;
	pthread_mutex_lock(&secrets_lock);
	size_t i = 0;
	while (i < n_secrets && strcmp(registered[i], s) != 0)
		i++;
	if (i == n_secrets && n_secrets < PG_MAX_SECRETS)
		registered[n_secrets++] = pg_xstrdup(s); /* kept for the process's life */
	pthread_mutex_unlock(&secrets_lock);
}

int pg_secret_in(const char *s)
{
	int hit = 0;

	pthread_mutex_lock(&secrets_lock);
	for (size_t i = 0; i < n_secrets && !hit; i++)
		hit = strstr(s, registered[i]) != NULL;
	pthread_mutex_unlock(&secrets_lock);
	return hit;
}

void pg_redact(char *s, const char *const *secrets)
{
	for (const char *const *p = secrets; p && *p; p++) {
		size_t n = strlen(*p);
		char *hit;

		/* a string this short would redact ordinary words */
		if (n < 4)
			continue;
		while ((hit = strstr(s, *p)) != NULL) {
			memcpy(hit, "***", 3);
			memmove(hit + 3, hit + n, strlen(hit + n) + 1);
		}
	}
}

void pg_secret_redact(char *s)
{
	pthread_mutex_lock(&secrets_lock);
	pg_redact(s, (const char *const *)registered);
	pthread_mutex_unlock(&secrets_lock);
}

/* The bidirectional controls (U+061C, U+200E, U+200F, U+202A..U+202E,
 * U+2066..U+2069) at s, as the code point, or 0: they reorder what a terminal
 * shows, so a name could make a message read as something else. */
static unsigned bidi_at(const unsigned char *s)
{
	if (s[0] == 0xd8 && s[1] == 0x9c)
		return 0x61c;
	if (s[0] != 0xe2 || (s[1] != 0x80 && s[1] != 0x81) || s[2] == 0)
		return 0;
	unsigned cp = 0x2000 | ((unsigned)(s[1] & 0x3f) << 6) | (s[2] & 0x3f);
	if (cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
	    (cp >= 0x2066 && cp <= 0x2069))
		return cp;
	return 0;
}

size_t pg_sanitize_line(char *dst, size_t cap, const char *src)
{
	size_t n = 0;

	for (const unsigned char *s = (const unsigned char *)src; *s && cap > 0; s++) {
		char esc[12];
		size_t k;
		unsigned cp;
		if (*s == '\n' || *s == '\r' || *s == '\t')
			k = (size_t)snprintf(esc, sizeof(esc), "\\%c",
					     *s == '\n'	  ? 'n'
					     : *s == '\r' ? 'r'
							  : 't');
		else if (*s < 0x20 || *s == 0x7f)
			k = (size_t)snprintf(esc, sizeof(esc), "\\x%02x", *s);
		else if ((cp = bidi_at(s)) != 0) {
			k = (size_t)snprintf(esc, sizeof(esc), "\\u%04x", cp);
			s += cp == 0x61c ? 1 : 2;
		} else {
			esc[0] = (char)*s;
			k = 1;
		}
		if (n + k >= cap)
			break;
		memcpy(dst + n, esc, k);
		n += k;
	}
	if (cap > 0)
		dst[n] = '\0';
	return n;
}

void pg_buf_add_line(struct pg_buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	pg_buf_grow(b, 4 * n); /* a byte becomes at most four: \xNN */
	b->len += pg_sanitize_line(b->ptr + b->len, b->cap - b->len, s ? s : "");
}

const char *pg_line(struct pg_buf *b, const char *s)
{
	pg_buf_reset(b);
	pg_buf_add_line(b, s);
	return b->ptr;
}

int pg_error_set(int code, const char *fmt, ...)
{
	char *raw;
	va_list ap;

	va_start(ap, fmt);
	raw = pg_xvasprintf(fmt, ap);
	va_end(ap);
	/* redacted whole, then cut to the message's size: a token cut in two
	 * would no longer be found */
	pg_secret_redact(raw);
	/* one line whatever the text quoted in it holds */
	pg_sanitize_line(last_error, sizeof(last_error), raw);
	free(raw);
	return code;
}

/* fmt's text as one redacted terminal line, between before and after. */
static void log_write(const char *before, const char *after, const char *fmt, va_list ap)
{
	char *raw = pg_xvasprintf(fmt, ap), *line;
	size_t cap = 4 * strlen(raw) + 1; /* a byte becomes at most four: \xNN */

	pg_secret_redact(raw);
	line = pg_xmalloc(cap);
	pg_sanitize_line(line, cap, raw);
	fprintf(stderr, "%s%s%s", before, line, after);
	free(line);
	free(raw);
}

void pg_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_write("", "\n", fmt, ap);
	va_end(ap);
}

/* -q/--quiet: no progress lines; 1 while a progress line is on screen. */
static int progress_quiet, progress_open;

void pg_progress_set_quiet(int quiet)
{
	progress_quiet = quiet;
}

void pg_progress(const char *fmt, ...)
{
	va_list ap;

	if (progress_quiet)
		return;
	va_start(ap, fmt);
	log_write("\r", "", fmt, ap);
	va_end(ap);
	progress_open = 1;
}

void pg_progress_end(void)
{
	if (progress_open)
		fputc('\n', stderr);
	progress_open = 0;
}

const char *pg_error_last(void)
{
	return last_error[0] ? last_error : "unknown error";
}

void pg_error_clear(void)
{
	last_error[0] = '\0';
}

void pg_oom(size_t n)
{
	if (n)
		fprintf(stderr, "profgate: out of memory allocating %zu bytes\n", n);
	else
		fprintf(stderr, "profgate: out of memory\n");
	exit(PG_EXIT_NOMEM);
}

int pg_exit_code(int err)
{
	if (err == PG_OK)
		return PG_EXIT_OK;
	if (err == PG_EUSAGE)
		return PG_EXIT_USAGE;
	return err == PG_ENOMEM ? PG_EXIT_NOMEM : PG_EXIT_INPUT;
}

void *pg_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		pg_oom(n);
	return p;
}

void *pg_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		pg_oom(n * size);
	return p;
}

void *pg_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		pg_oom(n);
	return q;
}

char *pg_xvasprintf(const char *fmt, va_list ap)
{
	va_list again;
	char *p;
	int n;

	va_copy(again, ap);
	n = vsnprintf(NULL, 0, fmt, ap);
	if (n < 0) /* only a bad format or a length past INT_MAX */
		pg_oom(0);
	p = pg_xmalloc((size_t)n + 1);
	vsnprintf(p, (size_t)n + 1, fmt, again);
	va_end(again);
	return p;
}

char *pg_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;

	va_start(ap, fmt);
	p = pg_xvasprintf(fmt, ap);
	va_end(ap);
	return p;
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
