/*
 * pg_buf: growable bytes with the strbuf invariants (never NULL, always
 * NUL-terminated; the static empty string stands in until the first append).
 */
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

char pg_buf_empty[1];

void pg_buf_init(struct pg_buf *b)
{
	b->ptr = pg_buf_empty;
	b->len = b->cap = 0;
}

void pg_buf_grow(struct pg_buf *b, size_t extra)
{
	size_t want = b->len + extra + 1;

	if (want <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < want)
		cap *= 2;
	if (b->cap == 0) {
		b->ptr = pg_xmalloc(cap);
		b->ptr[0] = '\0';
	} else {
		b->ptr = pg_xrealloc(b->ptr, cap);
	}
	b->cap = cap;
}

void pg_buf_add(struct pg_buf *b, const void *p, size_t n)
{
	if (!n)
		return;
	pg_buf_grow(b, n);
	memcpy(b->ptr + b->len, p, n);
	b->len += n;
	b->ptr[b->len] = '\0';
}

void pg_buf_addc(struct pg_buf *b, char c)
{
	pg_buf_grow(b, 1);
	b->ptr[b->len++] = c;
	b->ptr[b->len] = '\0';
}

void pg_buf_adds(struct pg_buf *b, const char *s)
{
	pg_buf_add(b, s, strlen(s));
}

void pg_buf_addf(struct pg_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	pg_buf_grow(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->ptr + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

int pg_buf_add_gzip(struct pg_buf *b, const void *p, size_t n, int level)
{
	z_stream z;
	uLong bound;
	int zr;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	bound = deflateBound(&z, (uLong)n);
	pg_buf_grow(b, bound);
	z.next_in = (Bytef *)p;
	z.avail_in = (uInt)n;
	z.next_out = (Bytef *)b->ptr + b->len;
	z.avail_out = (uInt)bound;
	zr = deflate(&z, Z_FINISH);
	deflateEnd(&z);
	if (zr != Z_STREAM_END) {
		b->ptr[b->len] = '\0';
		return -1;
	}
	b->len += z.total_out;
	b->ptr[b->len] = '\0';
	return 0;
}

void pg_buf_reset(struct pg_buf *b)
{
	b->len = 0;
	if (b->cap)
		b->ptr[0] = '\0';
}

void pg_buf_release(struct pg_buf *b)
{
	if (b->cap)
		free(b->ptr);
	pg_buf_init(b);
}

char *pg_buf_detach(struct pg_buf *b, size_t *len_out)
{
	char *p = b->cap ? b->ptr : pg_xstrdup("");

	if (len_out)
		*len_out = b->len;
	pg_buf_init(b);
	return p;
}
