/*
 * W&B's JSON dialect: JSON plus the bare values NaN, Infinity and -Infinity,
 * which W&B stores in a run's summary (a diverged loss, an infinite grad
 * norm) and its own clients read and write. cJSON refuses them, so one
 * scanner here checks the whole dialect and gives two views of a text: the
 * top-level object's members as raw byte spans (a writer that merges keys
 * copies every value it does not own byte for byte, NaN included), and a
 * strict copy for cJSON with each non-finite value read as null (a reader
 * that only looks up a few keys). A text that does not scan in full is an
 * error naming the byte and why; nothing is guessed.
 */
#include "source.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 512

struct scan {
	const char *s;
	size_t n, i;
	int depth;
	struct pg_buf *strict; /* the strict copy, when asked */
	size_t copied;	       /* bytes of s already in strict */
	const char *why;
};

static void ws(struct scan *k)
{
	while (k->i < k->n && strchr(" \t\r\n", k->s[k->i]) && k->s[k->i])
		k->i++;
}

static int fail(struct scan *k, const char *why)
{
	k->why = why;
	return -1;
}

static int lit(struct scan *k, const char *word)
{
	size_t n = strlen(word);

	if (k->n - k->i < n || memcmp(k->s + k->i, word, n) != 0)
		return fail(k, "an unknown value");
	k->i += n;
	return 0;
}

/* NaN, Infinity, -Infinity: in the strict copy, null. */
static int nonfinite(struct scan *k, const char *word)
{
	size_t at = k->i;

	if (lit(k, word))
		return -1;
	if (k->strict) {
		pg_buf_add(k->strict, k->s + k->copied, at - k->copied);
		pg_buf_adds(k->strict, "null");
		k->copied = k->i;
	}
	return 0;
}

static int digits(struct scan *k)
{
	size_t at = k->i;

	while (k->i < k->n && k->s[k->i] >= '0' && k->s[k->i] <= '9')
		k->i++;
	return k->i > at ? 0 : fail(k, "a number without digits");
}

static int number(struct scan *k)
{
	if (k->s[k->i] == '-') {
		if (k->i + 1 < k->n && k->s[k->i + 1] == 'I')
			return nonfinite(k, "-Infinity");
		k->i++;
	}
	if (k->i < k->n && k->s[k->i] == '0')
		k->i++;
	else if (digits(k))
		return -1;
	if (k->i < k->n && k->s[k->i] == '.') {
		k->i++;
		if (digits(k))
			return -1;
	}
	if (k->i < k->n && (k->s[k->i] == 'e' || k->s[k->i] == 'E')) {
		k->i++;
		if (k->i < k->n && (k->s[k->i] == '+' || k->s[k->i] == '-'))
			k->i++;
		if (digits(k))
			return -1;
	}
	return 0;
}

static int string(struct scan *k)
{
	k->i++; /* the opening quote */
	while (k->i < k->n) {
		unsigned char c = (unsigned char)k->s[k->i++];
		if (c == '"')
			return 0;
		if (c < 0x20)
			return fail(k, "a control character in a string");
		if (c != '\\')
			continue;
		if (k->i >= k->n)
			break;
		c = (unsigned char)k->s[k->i++];
		if (c == 'u') {
			for (int d = 0; d < 4; d++, k->i++)
				if (k->i >= k->n || !strchr("0123456789abcdefABCDEF", k->s[k->i]) ||
				    !k->s[k->i])
					return fail(k, "a bad \\u escape");
		} else if (!strchr("\"\\/bfnrt", c) || !c) {
			return fail(k, "a bad escape");
		}
	}
	return fail(k, "an unterminated string");
}

static int value(struct scan *k);

/* An object or an array: members (key ':' value) or values, split by ','. */
static int container(struct scan *k, char close)
{
	if (++k->depth > MAX_DEPTH)
		return fail(k, "nesting deeper than 512");
	k->i++;
	ws(k);
	if (k->i < k->n && k->s[k->i] == close) {
		k->i++;
		k->depth--;
		return 0;
	}
	for (;;) {
		ws(k);
		if (close == '}') {
			if (k->i >= k->n || k->s[k->i] != '"')
				return fail(k, "a key that is no string");
			if (string(k))
				return -1;
			ws(k);
			if (k->i >= k->n || k->s[k->i++] != ':')
				return fail(k, "no ':' after a key");
		}
		if (value(k))
			return -1;
		ws(k);
		if (k->i < k->n && k->s[k->i] == ',') {
			k->i++;
			continue;
		}
		if (k->i < k->n && k->s[k->i] == close) {
			k->i++;
			k->depth--;
			return 0;
		}
		return fail(k, close == '}' ? "no ',' or '}' after a member"
					    : "no ',' or ']' after a value");
	}
}

static int value(struct scan *k)
{
	ws(k);
	if (k->i >= k->n)
		return fail(k, "the text ends where a value is due");
	switch (k->s[k->i]) {
	case '{': return container(k, '}');
	case '[': return container(k, ']');
	case '"': return string(k);
	case 't': return lit(k, "true");
	case 'f': return lit(k, "false");
	case 'n': return lit(k, "null");
	case 'N': return nonfinite(k, "NaN");
	case 'I': return nonfinite(k, "Infinity");
	default:
		if (k->s[k->i] == '-' || (k->s[k->i] >= '0' && k->s[k->i] <= '9'))
			return number(k);
		return fail(k, "an unknown value");
	}
}

static int scan_error(const struct scan *k, const char *what)
{
	return pg_error_set(PG_EFORMAT, "%s is not JSON as W&B writes it (byte %zu: %s)", what,
			    k->i, k->why);
}

/* The whole text is one value and nothing after it. */
static int scan_all(struct scan *k, const char *what)
{
	if (value(k))
		return scan_error(k, what);
	ws(k);
	if (k->i != k->n) {
		k->why = "text after the value";
		return scan_error(k, what);
	}
	return 0;
}

int wandb_json_strict(const char *text, size_t len, const char *what, struct cJSON **out)
{
	struct pg_buf b = PG_BUF_INIT;
	struct scan k = {.s = text, .n = len, .strict = &b};
	int rc;

	*out = NULL;
	if ((rc = scan_all(&k, what)) == 0) {
		pg_buf_add(&b, text + k.copied, len - k.copied);
		*out = cJSON_ParseWithLength(b.ptr, b.len);
		if (!*out) /* the scanner and cJSON disagree: say so rather than guess */
			rc = pg_error_set(PG_EFORMAT, "%s: cJSON refused what the scanner took",
					  what);
	}
	pg_buf_release(&b);
	return rc;
}

void wandb_json_members_release(struct wandb_json_members *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].name);
	free(m->v);
	memset(m, 0, sizeof(*m));
}

/* The decoded name of a raw key ("..." with escapes), malloc'd. */
static char *key_name(const char *raw, size_t len)
{
	cJSON *s = cJSON_ParseWithLength(raw, len);
	char *name = cJSON_IsString(s) ? pg_xstrdup(s->valuestring) : NULL;

	cJSON_Delete(s);
	return name;
}

int wandb_json_members(const char *text, size_t len, const char *what,
		       struct wandb_json_members *out)
{
	struct scan k = {.s = text, .n = len};
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = scan_all(&k, what)) != 0)
		return rc;
	k.i = 0;
	ws(&k);
	if (text[k.i] != '{')
		return pg_error_set(PG_EFORMAT, "%s is no JSON object", what);
	k.i++;
	for (;;) {
		struct wandb_json_member m;
		ws(&k);
		if (text[k.i] == '}')
			break;
		m.key = text + k.i;
		(void)string(&k);
		m.key_len = (size_t)(text + k.i - m.key);
		ws(&k);
		k.i++; /* ':' */
		ws(&k);
		m.value = text + k.i;
		(void)value(&k);
		m.value_len = (size_t)(text + k.i - m.value);
		m.name = key_name(m.key, m.key_len);
		if (!m.name) { /* \u0000 in a key: cJSON cannot hold it */
			wandb_json_members_release(out);
			return pg_error_set(PG_EFORMAT, "%s has a key cJSON cannot read", what);
		}
		out->v = pg_xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
		out->v[out->n++] = m;
		ws(&k);
		if (text[k.i] == ',')
			k.i++;
	}
	return 0;
}
