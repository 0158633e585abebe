/*
 * The Chrome JSON scanner's slow paths, off the per-byte loop of
 * chrome_json.c: error messages that say where (byte offset, and the event
 * once inside traceEvents) and what was expected, and string escapes.
 *
 * Escapes: \uXXXX is decoded to UTF-8, a surrogate pair to its one code
 * point; a lone surrogate (which UTF-8 cannot hold) becomes U+FFFD instead of
 * failing the file. With no output buffer the escape is only checked (the
 * value is being skipped).
 */
#include "chrome_json.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int cj_fail(struct cj *c, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->saw_trace_events || c->top_is_array)
		return pg_error_set(PG_EFORMAT, "cannot read '%s': %s at byte %llu (event %llu)",
				    c->path, msg, (unsigned long long)rd_in_offset(c->in),
				    (unsigned long long)c->index);
	return pg_error_set(PG_EFORMAT, "cannot read '%s': %s at byte %llu", c->path, msg,
			    (unsigned long long)rd_in_offset(c->in));
}

/* A source error (corrupt gzip, read error) already has a message. */
int cj_fail_src(struct cj *c)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "%s", pg_error_last());
	return pg_error_set(PG_EFORMAT, "cannot read '%s': %s (after event %llu)", c->path, msg,
			    (unsigned long long)c->index);
}

int cj_fail_eof(struct cj *c)
{
	if (c->in->truncated)
		return cj_fail(c, "unexpected end of input: the gzip stream is truncated");
	return cj_fail(c, "unexpected end of input: the JSON is truncated");
}

int cj_bad_char(struct cj *c, int ch, const char *expected)
{
	if (ch == CH_ERR)
		return cj_fail_src(c);
	if (ch == CH_EOF)
		return cj_fail_eof(c);
	if (ch == 'N' || ch == 'I' || ch == '-')
		return cj_fail(c, "invalid JSON value (NaN and Infinity are not JSON), expected %s",
			       expected);
	if (ch >= 0x20 && ch < 0x7f)
		return cj_fail(c, "unexpected '%c', expected %s", ch, expected);
	return cj_fail(c, "unexpected byte 0x%02x, expected %s", ch, expected);
}

/* ---- strings ---- */

static void put_utf8(struct pg_buf *b, uint32_t cp)
{
	char u[4];

	if (cp < 0x80) {
		pg_buf_addc(b, (char)cp);
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | (cp >> 6));
		u[1] = (char)(0x80 | (cp & 0x3f));
		pg_buf_add(b, u, 2);
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | (cp >> 12));
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		pg_buf_add(b, u, 3);
	} else {
		u[0] = (char)(0xf0 | (cp >> 18));
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		pg_buf_add(b, u, 4);
	}
}

static int read_hex4(struct cj *c, uint32_t *out)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++) {
		int ch = peekc(c);
		if (ch < 0)
			return ch == CH_ERR ? cj_fail_src(c) : cj_fail_eof(c);
		c->in->p++;
		v <<= 4;
		if (ch >= '0' && ch <= '9')
			v |= (uint32_t)(ch - '0');
		else if (ch >= 'a' && ch <= 'f')
			v |= (uint32_t)(ch - 'a' + 10);
		else if (ch >= 'A' && ch <= 'F')
			v |= (uint32_t)(ch - 'A' + 10);
		else
			return cj_fail(c, "bad \\u escape in a string");
	}
	*out = v;
	return 0;
}

/* The one-character escapes and what each stands for. */
static const char escaped[] = "\"\\/bfnrt", unescaped[] = "\"\\/\b\f\n\r\t";

int cj_read_escape(struct cj *c, struct pg_buf *out)
{
	int ch = peekc(c);
	uint32_t cp, lo;

	if (ch < 0)
		return ch == CH_ERR ? cj_fail_src(c) : cj_fail_eof(c);
	c->in->p++;
	const char *simple = ch ? strchr(escaped, ch) : NULL;
	if (simple) {
		if (out)
			pg_buf_addc(out, unescaped[simple - escaped]);
		return 0;
	}
	switch (ch) {
	case 'u':
		if (read_hex4(c, &cp))
			return PG_EFORMAT;
		if (cp >= 0xd800 && cp < 0xdc00 && peekc(c) == '\\') {
			c->in->p++;
			if (peekc(c) != 'u') { /* a lone high surrogate, then another escape */
				if (out)
					put_utf8(out, 0xfffd);
				return cj_read_escape(c, out);
			}
			c->in->p++;
			if (read_hex4(c, &lo))
				return PG_EFORMAT;
			if (lo >= 0xdc00 && lo < 0xe000) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			} else { /* a lone high surrogate, then another character */
				if (out)
					put_utf8(out, 0xfffd);
				cp = lo >= 0xd800 && lo < 0xe000 ? 0xfffd : lo;
			}
		} else if (cp >= 0xd800 && cp < 0xe000) {
			cp = 0xfffd;
		}
		if (out)
			put_utf8(out, cp);
		return 0;
	default:
		return cj_fail(c, "bad escape '\\%c' in a string",
			       ch >= 0x20 && ch < 0x7f ? ch : '?');
	}
}

/*
 * Read a string whose opening quote is next. With out == NULL the string is
 * skipped without copying, so an arbitrarily long unused string costs no
 * memory; a kept string is capped at RD_MAX_STRING_BYTES.
 */
