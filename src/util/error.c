/*
 * Error reporting: one message per thread, set where the problem is found and
 * read once by the command layer. Messages are short, lowercase, and name the
 * subject first (see README "Errors").
 */
#include "util.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char last_error[1024];

static pthread_mutex_t secrets_lock = PTHREAD_MUTEX_INITIALIZER;
static char *secrets[PG_MAX_SECRETS];
static size_t n_secrets;

void pg_secret_add(const char *s)
{
	if (!s || strlen(s) < 4)
		return;
	pthread_mutex_lock(&secrets_lock);
	size_t i = 0;
	while (i < n_secrets && strcmp(secrets[i], s) != 0)
		i++;
	if (i == n_secrets && n_secrets < PG_MAX_SECRETS)
		secrets[n_secrets++] = pg_xstrdup(s); /* kept for the process's life */
	pthread_mutex_unlock(&secrets_lock);
}

int pg_secret_in(const char *s)
{
	int hit = 0;

	pthread_mutex_lock(&secrets_lock);
	for (size_t i = 0; i < n_secrets && !hit; i++)
		hit = strstr(s, secrets[i]) != NULL;
	pthread_mutex_unlock(&secrets_lock);
	return hit;
}

void pg_secret_redact(char *s)
{
	pthread_mutex_lock(&secrets_lock);
	for (size_t i = 0; i < n_secrets; i++) {
		size_t n = strlen(secrets[i]);
		char *hit;

		while ((hit = strstr(s, secrets[i])) != NULL) {
			memcpy(hit, "***", 3);
			memmove(hit + 3, hit + n, strlen(hit + n) + 1);
		}
	}
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
	char raw[sizeof(last_error)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	pg_secret_redact(raw);
	/* one line whatever the text quoted in it holds */
	pg_sanitize_line(last_error, sizeof(last_error), raw);
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
