/*
 * JSON numbers read exactly, the general path of the Chrome trace reader
 * (chrome_json.c keeps the fast path for the plain decimals of every event):
 * any number JSON allows, cut by a chunk's end or not, into a 19-digit
 * mantissa and a power of ten, and from there into integer ns (times in
 * microseconds) or an unsigned integer, with no double rounding. Errors name
 * what was wrong (cj_fail).
 */
#include "chrome_json.h"

#include <stdlib.h>
#include <string.h>

const unsigned char cj_numchar[256] = {
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
    ['8'] = 1, ['9'] = 1, ['-'] = 1, ['+'] = 1, ['.'] = 1, ['e'] = 1, ['E'] = 1,
};

/* One more digit of the mantissa while it holds fewer than 19 significant
 * digits (leading zeros do not count): 1 when kept, 0 when it is full. */
static inline int mant_digit(struct num *n, int *digits, char ch)
{
	if (*digits >= 19)
		return 0;
	n->mant = n->mant * 10 + (uint64_t)(ch - '0');
	if (n->mant)
		(*digits)++;
	return 1;
}

/* Parse n->text (n->len bytes) into sign, mantissa and exponent. */
static int parse_num_text(struct cj *c, struct num *n)
{
	int digits = 0, any = 0, frac = 0, e = 0, eneg = 0, edigits = 0;
	const char *s = n->text;

	n->neg = 0;
	n->mant = 0;
	n->exp10 = 0;
	n->is_int = 1;
	n->round_up = 0;
	if (*s == '-') {
		n->neg = 1;
		s++;
	}
	for (; *s >= '0' && *s <= '9'; s++) {
		any = 1;
		if (!mant_digit(n, &digits, *s))
			n->exp10++;
	}
	if (*s == '.') {
		n->is_int = 0;
		s++;
		for (; *s >= '0' && *s <= '9'; s++) {
			frac = 1;
			if (mant_digit(n, &digits, *s))
				n->exp10--;
			else if (digits++ == 19)
				n->round_up = *s >= '5';
		}
		if (!frac)
			return cj_fail(c, "malformed number '%s'", n->text);
	}
	if (*s == 'e' || *s == 'E') {
		n->is_int = 0;
		s++;
		if (*s == '-' || *s == '+')
			eneg = *s++ == '-';
		for (; *s >= '0' && *s <= '9'; s++) {
			edigits = 1;
			if (e < 100000)
				e = e * 10 + (*s - '0');
		}
		if (!edigits)
			return cj_fail(c, "malformed number '%s'", n->text);
		n->exp10 += eneg ? -e : e;
	}
	if (!any || *s)
		return cj_fail(c, "malformed number '%s'", n->text[0] ? n->text : "(empty)");
	return 0;
}

int cj_read_number(struct cj *c, struct num *n)
{
	const unsigned char *p = c->in->p, *end = c->in->end, *q = p;

	/* fast path: the whole number lies in this chunk */
	while (q < end && cj_numchar[*q])
		q++;
	if (q < end) {
		size_t len = (size_t)(q - p);
		if (len >= sizeof(n->text)) {
			/* where the byte-at-a-time path below stops too */
			c->in->p = p + sizeof(n->text) - 1;
			return cj_fail(c, "number longer than %d characters",
				       (int)sizeof(n->text) - 1);
		}
		memcpy(n->text, p, len);
		n->text[len] = '\0';
		n->len = (int)len;
		c->in->p = q;
		return parse_num_text(c, n);
	}
	n->len = 0;
	for (;;) {
		int ch = peekc(c);
		if (ch == CH_ERR)
			return cj_fail_src(c);
		if (ch < 0 || !cj_numchar[ch])
			break;
		if (n->len >= (int)sizeof(n->text) - 1)
			return cj_fail(c, "number longer than %d characters",
				       (int)sizeof(n->text) - 1);
		n->text[n->len++] = (char)ch;
		c->in->p++;
	}
	n->text[n->len] = '\0';
	return parse_num_text(c, n);
}

const uint64_t cj_pow10u[20] = {1ULL,
				10ULL,
				100ULL,
				1000ULL,
				10000ULL,
				100000ULL,
				1000000ULL,
				10000000ULL,
				100000000ULL,
				1000000000ULL,
				10000000000ULL,
				100000000000ULL,
				1000000000000ULL,
				10000000000000ULL,
				100000000000000ULL,
				1000000000000000ULL,
				10000000000000000ULL,
				100000000000000000ULL,
				1000000000000000000ULL,
				10000000000000000000ULL};

/* Microseconds (decimal) to integer ns, exact, rounding half up. */
int cj_num_us_to_ns(const struct num *n, int64_t *out)
{
	int e = n->exp10 + 3;
	uint64_t v;

	if (n->mant == 0) {
		*out = 0;
		return 0;
	}
	if (e >= 0) {
		if (e > 19 || n->mant > (uint64_t)INT64_MAX / cj_pow10u[e])
			return -1;
		v = n->mant * cj_pow10u[e];
		if (e == 0 && n->round_up) /* the dropped digit was the first below 1 ns */
			v++;
	} else if (e < -19) {
		v = 0;
	} else {
		uint64_t d = cj_pow10u[-e];
		v = n->mant / d + (n->mant % d >= (d + 1) / 2 ? 1 : 0);
	}
	if (v > (uint64_t)INT64_MAX)
		return -1;
	*out = n->neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

/* An exact unsigned integer, or -1. */
int cj_num_to_u64(const struct num *n, uint64_t *out)
{
	if (n->neg || n->exp10 < 0)
		return -1;
	if (n->exp10 > 0) {
		if (n->exp10 > 19 || n->mant > UINT64_MAX / cj_pow10u[n->exp10])
			return -1;
		*out = n->mant * cj_pow10u[n->exp10];
		return 0;
	}
	*out = n->mant;
	return 0;
}
