/*
 * A small JSON writer whose output is byte-for-byte deterministic: no locale,
 * integers printed exactly, doubles with a fixed number of decimals. All
 * profgate JSON goes through it.
 */
#include "util.h"

#include <math.h>
#include <string.h>

void pg_json_init(struct pg_json *j, struct pg_buf *out, int pretty)
{
	memset(j, 0, sizeof(*j));
	j->out = out;
	j->pretty = pretty;
}

static void indent(struct pg_json *j)
{
	if (!j->pretty)
		return;
	pg_buf_addc(j->out, '\n');
	for (int i = 0; i < j->depth; i++)
		pg_buf_add(j->out, "  ", 2);
}

/* Called before every value: commas and indentation, unless after a key. */
static void before_value(struct pg_json *j)
{
	if (j->after_key) {
		j->after_key = 0;
		return;
	}
	if (j->depth > 0) {
		if (j->need_comma[j->depth])
			pg_buf_addc(j->out, ',');
		indent(j);
		j->need_comma[j->depth] = 1;
	}
}

static void open(struct pg_json *j, char c)
{
	before_value(j);
	pg_buf_addc(j->out, c);
	if (j->depth < (int)PG_ARRAY_LEN(j->need_comma) - 1)
		j->depth++;
	j->need_comma[j->depth] = 0;
}

static void close_(struct pg_json *j, char c)
{
	int had = j->need_comma[j->depth];

	j->depth--;
	if (had)
		indent(j);
	pg_buf_addc(j->out, c);
	if (j->depth == 0 && j->pretty)
		pg_buf_addc(j->out, '\n');
}

void pg_json_obj_begin(struct pg_json *j)
{
	open(j, '{');
}
void pg_json_obj_end(struct pg_json *j)
{
	close_(j, '}');
}
void pg_json_arr_begin(struct pg_json *j)
{
	open(j, '[');
}
void pg_json_arr_end(struct pg_json *j)
{
	close_(j, ']');
}

void pg_json_key(struct pg_json *j, const char *key)
{
	before_value(j);
	pg_json_escape(j->out, key, strlen(key));
	pg_buf_add(j->out, j->pretty ? ": " : ":", j->pretty ? 2 : 1);
	j->after_key = 1;
}

void pg_json_escape(struct pg_buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";

	pg_buf_grow(b, n + 2);
	pg_buf_addc(b, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '"': pg_buf_add(b, "\\\"", 2); break;
		case '\\': pg_buf_add(b, "\\\\", 2); break;
		case '\n': pg_buf_add(b, "\\n", 2); break;
		case '\r': pg_buf_add(b, "\\r", 2); break;
		case '\t': pg_buf_add(b, "\\t", 2); break;
		default:
			if (c < 0x20 || c == 0x7f) {
				char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
				pg_buf_add(b, u, 6);
			} else if (c < 0x80) {
				pg_buf_addc(b, (char)c);
			} else {
				/* JSON text is UTF-8: bytes that are not become U+FFFD */
				size_t k = pg_utf8_seq((const unsigned char *)s + i, n - i);
				if (k == 0) {
					pg_buf_adds(b, PG_UTF8_REPLACEMENT);
				} else {
					pg_buf_add(b, s + i, k);
					i += k - 1;
				}
			}
		}
	}
	pg_buf_addc(b, '"');
}

void pg_json_str(struct pg_json *j, const char *s)
{
	if (!s) {
		pg_json_null(j);
		return;
	}
	pg_json_strn(j, s, strlen(s));
}

void pg_json_strn(struct pg_json *j, const char *s, size_t n)
{
	before_value(j);
	pg_json_escape(j->out, s, n);
}

void pg_json_int(struct pg_json *j, int64_t v)
{
	before_value(j);
	pg_buf_addf(j->out, "%lld", (long long)v);
}

void pg_json_uint(struct pg_json *j, uint64_t v)
{
	before_value(j);
	pg_buf_addf(j->out, "%llu", (unsigned long long)v);
}

/* "%.*f" of v with 0..9 decimals, byte for byte, without printf (whose exact
 * conversion of a double is most of the cost of a trend's or a summary's
 * JSON). v * 10^decimals is one correctly rounded product, within x * 2^-53 of
 * the exact one; unless a half-integer lies that close to it (a tie or near
 * one, where only the exact decimal expansion can decide), rounding it to the
 * nearest integer rounds the exact value the same way, as printf does. Returns
 * the length written to out (at least 32 bytes), or 0 when printf must decide:
 * the near-ties, and magnitudes whose scaled value reaches 2^52. The sign is
 * written only for a nonzero result (no "-0.000"). */
static size_t fixed_decimals(char *out, double v, int decimals)
{
	static const double scale[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
	static const uint64_t iscale[] = {1,	  10,	   100,	     1000,	10000,
					  100000, 1000000, 10000000, 100000000, 1000000000};
	double x, whole, frac;
	uint64_t q, ip, fp;
	char digits[24];
	size_t n = 0, k = 0;

	if (decimals < 0 || decimals > 9)
		return 0;
	x = fabs(v) * scale[decimals];
	if (!(x < 4503599627370496.0)) /* 2^52 */
		return 0;
	whole = floor(x);
	frac = x - whole; /* exact: the bits of x below its units */
	if (fabs(frac - 0.5) <= x * 0x1p-52 + 0x1p-60)
		return 0;
	q = (uint64_t)whole + (frac > 0.5);
	ip = q / iscale[decimals];
	fp = q % iscale[decimals];
	if (q != 0 && v < 0)
		out[n++] = '-';
	do {
		digits[k++] = (char)('0' + ip % 10);
		ip /= 10;
	} while (ip);
	while (k)
		out[n++] = digits[--k];
	if (decimals > 0) {
		out[n++] = '.';
		for (int i = decimals - 1; i >= 0; i--) {
			out[n + (size_t)i] = (char)('0' + fp % 10);
			fp /= 10;
		}
		n += (size_t)decimals;
	}
	return n;
}

void pg_json_double(struct pg_json *j, double v, int decimals)
{
	char fast[32];
	size_t n;

	before_value(j);
	if (!isfinite(v)) {
		pg_buf_adds(j->out, "null");
		return;
	}
	if ((n = fixed_decimals(fast, v, decimals))) {
		pg_buf_add(j->out, fast, n);
		return;
	}
	if (v == 0)
		v = 0; /* no "-0.000" */
	size_t at = j->out->len;
	pg_buf_addf(j->out, "%.*f", decimals, v);
	/* nor for a tiny negative that rounds to zero: it would read back as 0 and be
	 * written "0.000" the next time */
	char *t = j->out->ptr + at;
	if (t[0] == '-' && strspn(t + 1, "0.") == strlen(t + 1)) {
		memmove(t, t + 1, strlen(t + 1) + 1);
		j->out->len--;
	}
}

void pg_json_bool(struct pg_json *j, int v)
{
	before_value(j);
	pg_buf_adds(j->out, v ? "true" : "false");
}

void pg_json_null(struct pg_json *j)
{
	before_value(j);
	pg_buf_adds(j->out, "null");
}

void pg_json_kv_str(struct pg_json *j, const char *key, const char *s)
{
	pg_json_key(j, key);
	pg_json_str(j, s);
}

void pg_json_kv_int(struct pg_json *j, const char *key, int64_t v)
{
	pg_json_key(j, key);
	pg_json_int(j, v);
}

void pg_json_kv_uint(struct pg_json *j, const char *key, uint64_t v)
{
	pg_json_key(j, key);
	pg_json_uint(j, v);
}

void pg_json_raw(struct pg_json *j, const char *text)
{
	before_value(j);
	pg_buf_adds(j->out, text);
}
