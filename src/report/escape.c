/*
 * Escaping for markdown that GitHub renders, and for the HTML and JavaScript of
 * the dashboard: profile text is untrusted (kernel names, scope paths, labels,
 * commit facts), and must not ping people, inject HTML or script, or break the
 * tables it sits in. Bytes that are not UTF-8 and the bidirectional
 * controls (which make text read in another order than it runs) become U+FFFD.
 * Where a name is cut is names.c's: these write the pieces a cut keeps, each
 * escaped the same way, with an ellipsis where bytes were left out.
 */
#include "report.h"

#include <string.h>

/* Copy the non-ASCII sequence at s[0..n) to b (U+FFFD for bytes that are not
 * UTF-8 and for bidirectional controls); returns the bytes consumed. */
static size_t put_utf8(struct pg_buf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t k = pg_utf8_seq(u, n);

	if (k == 0) {
		pg_buf_adds(b, PG_UTF8_REPLACEMENT);
		return 1;
	}
	uint32_t cp = k == 2   ? ((u[0] & 0x1fu) << 6) | (u[1] & 0x3f)
		      : k == 3 ? ((u[0] & 0x0fu) << 12) | ((u[1] & 0x3fu) << 6) | (u[2] & 0x3f)
			       : 0;
	if (cp == 0x61c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
	    (cp >= 0x2066 && cp <= 0x2069))
		pg_buf_adds(b, PG_UTF8_REPLACEMENT);
	else
		pg_buf_add(b, s, k);
	return k;
}

/* One piece of a name, s[from, to), as code-span text. */
static void code_range(struct pg_buf *b, const char *s, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '`')
			pg_buf_addc(b, '\'');
		else if (c == '|')
			pg_buf_add(b, "\\|", 2);
		else if (c < 0x20 || c == 0x7f)
			pg_buf_addc(b, ' ');
		else if (c >= 0x80)
			i += put_utf8(b, s + i, to - i) - 1;
		else
			pg_buf_addc(b, (char)c);
	}
}

/* One piece of a name, s[from, to), as markdown text. */
static void text_range(struct pg_buf *b, const char *s, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '<': pg_buf_adds(b, "&lt;"); break;
		case '>': pg_buf_adds(b, "&gt;"); break;
		case '&': pg_buf_adds(b, "&amp;"); break;
		case '|': pg_buf_adds(b, "\\|"); break;
		case '@':
		case '#':
			pg_buf_addc(b, (char)c);
			pg_buf_adds(b, "\xe2\x80\x8d"); /* zero-width joiner: no mention, no link */
			break;
		case '\\':
		case '`':
		case '*':
		case '_':
		case '[':
		case ']':
		case '~':
		case '!':
			pg_buf_addc(b, '\\');
			pg_buf_addc(b, (char)c);
			break;
		default:
			if (c >= 0x80)
				i += put_utf8(b, s + i, to - i) - 1;
			else
				pg_buf_addc(b, c < 0x20 || c == 0x7f ? ' ' : (char)c);
		}
	}
}

/* The code point of the UTF-8 sequence at s (k bytes, as pg_utf8_seq). */
static uint32_t code_point(const unsigned char *u, size_t k)
{
	if (k == 2)
		return ((u[0] & 0x1fu) << 6) | (u[1] & 0x3f);
	if (k == 3)
		return ((u[0] & 0x0fu) << 12) | ((u[1] & 0x3fu) << 6) | (u[2] & 0x3f);
	return ((u[0] & 0x07u) << 18) | ((u[1] & 0x3fu) << 12) | ((u[2] & 0x3fu) << 6) |
	       (u[3] & 0x3f);
}

void report_html(struct pg_buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '<': pg_buf_adds(b, "&lt;"); break;
		case '>': pg_buf_adds(b, "&gt;"); break;
		case '&': pg_buf_adds(b, "&amp;"); break;
		case '"': pg_buf_adds(b, "&quot;"); break;
		case '\'': pg_buf_adds(b, "&#39;"); break;
		default:
			if (c >= 0x80)
				i += put_utf8(b, s + i, n - i) - 1;
			else
				pg_buf_addc(b, c < 0x20 || c == 0x7f ? ' ' : (char)c);
		}
	}
}

void report_js_string(struct pg_buf *b, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = s ? strlen(s) : 0;

	pg_buf_addc(b, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = u[i];
		size_t k;
		if (c == '"' || c == '\\') {
			pg_buf_addc(b, '\\');
			pg_buf_addc(b, (char)c);
		} else if (c < 0x20 || c == 0x7f || c == '<' || c == '>' || c == '&' || c == '\'') {
			pg_buf_addf(b, "\\u%04x", c);
		} else if (c < 0x80) {
			pg_buf_addc(b, (char)c);
		} else if ((k = pg_utf8_seq(u + i, n - i)) == 0) {
			pg_buf_adds(b, "\\ufffd");
		} else {
			uint32_t cp = code_point(u + i, k);
			/* U+2028 and U+2029 end a line in older JavaScript; bidi controls reorder
			 * text */
			if (cp == 0x2028 || cp == 0x2029)
				pg_buf_addf(b, "\\u%04x", cp);
			else if (cp == 0x61c || cp == 0x200e || cp == 0x200f ||
				 (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069))
				pg_buf_adds(b, "\\ufffd");
			else
				pg_buf_add(b, s + i, k);
			i += k - 1;
		}
	}
	pg_buf_addc(b, '"');
}

/* One piece of a name, s[from, to), inside a Mermaid label. */
static void mermaid_range(struct pg_buf *b, const char *s, size_t from, size_t to)
{
	static const char keep[] = " ._-+:/()=,'";

	for (size_t i = from; i < to; i++) {
		unsigned char c = (unsigned char)s[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			 (c >= '0' && c <= '9') || c >= 0x80 || (c && strchr(keep, c));
		pg_buf_addc(b, ok ? (char)c : '_');
	}
}

typedef void (*range_fn)(struct pg_buf *b, const char *s, size_t from, size_t to);

/* What cut c shows of s, each piece through put, the cuts marked with gap. */
static void put_cut(struct pg_buf *b, const char *s, const struct report_cut *c, range_fn put,
		    const char *gap)
{
	size_t n = s ? strlen(s) : 0, end = c->len ? c->from + c->len : c->head;

	put(b, s ? s : "", 0, c->head < n ? c->head : n);
	if (c->len && end <= n) {
		pg_buf_adds(b, gap);
		put(b, s, c->from, end);
	}
	if (end < n)
		pg_buf_adds(b, gap);
}

/* The plain cut of one name: no list to tell it apart from. */
static struct report_cut one(const char *s, size_t max)
{
	struct report_cut c;
	report_cut_names(&s, 1, max, &c);
	return c;
}

void report_code_cut(struct pg_buf *b, const char *s, const struct report_cut *c)
{
	pg_buf_addc(b, '`');
	put_cut(b, s, c, code_range, "…");
	pg_buf_addc(b, '`');
}

void report_text_cut(struct pg_buf *b, const char *s, const struct report_cut *c)
{
	put_cut(b, s, c, text_range, "…");
}

void report_code(struct pg_buf *b, const char *s, size_t max)
{
	struct report_cut c = one(s, max);
	report_code_cut(b, s, &c);
}

void report_text(struct pg_buf *b, const char *s, size_t max)
{
	struct report_cut c = one(s, max);
	report_text_cut(b, s, &c);
}

void report_mermaid(struct pg_buf *b, const char *s, size_t max)
{
	struct report_cut c = one(s, max);
	put_cut(b, s, &c, mermaid_range, "...");
}

void report_time(struct pg_buf *b, double us)
{
	double a = us < 0 ? -us : us;

	if (a >= 1e6)
		pg_buf_addf(b, "%.3f s", us / 1e6);
	else if (a >= 1e3)
		pg_buf_addf(b, "%.2f ms", us / 1e3);
	else
		pg_buf_addf(b, "%.1f us", us);
}
