/*
 * Reading a record as profgate writes it (record.c reads every other form).
 *
 * Parsing a record through cJSON's tree (a node, a key and a value copy per
 * member, strtod per number, then freeing it all) is most of a warm read of a
 * series. A record as history_record_write makes it has one form: compact, its
 * members in the writer's order, strings that need no unescaping in the
 * common case. record_canonical_parse reads that form directly into the record and
 * gives up (returns 0, the record released) at the first byte that differs
 * from it: a blank, another order, an escape, a history window, a value of
 * another type, a number outside JSON's grammar or not finite, a field of the
 * wrong form. The cJSON path then reads the line and says what is wrong, so
 * both paths accept the same lines and build the same record (test_history's
 * differential test holds them to it). Numbers: with at most 15 significant
 * digits, no exponent and at most 22 decimals, digits / 10^decimals is one
 * correctly rounded division of two exact doubles, which is strtod's result;
 * others go through strtod as cJSON's do.
 */
#include "record.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct scan {
	const char *p, *end;
};

static int lit(struct scan *s, const char *text, size_t n)
{
	if ((size_t)(s->end - s->p) < n || memcmp(s->p, text, n) != 0)
		return 0;
	s->p += n;
	return 1;
}

#define LIT(s, text) lit((s), (text), sizeof(text) - 1)

/* A string with no escapes (text_check has seen no control bytes and valid
 * UTF-8); *out owns a copy. */
static int scan_str(struct scan *s, char **out)
{
	const char *q;

	if (s->p >= s->end || *s->p != '"')
		return 0;
	q = memchr(s->p + 1, '"', (size_t)(s->end - s->p - 1));
	if (!q || memchr(s->p + 1, '\\', (size_t)(q - s->p - 1)))
		return 0;
	*out = pg_xstrndup(s->p + 1, (size_t)(q - s->p - 1));
	s->p = q + 1;
	return 1;
}

static int scan_str_or_null(struct scan *s, char **out)
{
	return LIT(s, "null") || scan_str(s, out);
}

static int digit(const char *p, const char *end)
{
	return p < end && *p >= '0' && *p <= '9';
}

/* A JSON number, as strtod reads its text. */
static int scan_num(struct scan *s, double *out)
{
	static const double pow10[] = {1e0,  1e1,  1e2,	 1e3,  1e4,  1e5,  1e6,	 1e7,
				       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
				       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
	const char *p = s->p;
	uint64_t m = 0;
	int sig = 0, frac = -1, exp = 0, neg = 0;

	if (p < s->end && *p == '-') {
		neg = 1;
		p++;
	}
	if (!digit(p, s->end))
		return 0;
	if (*p == '0' && digit(p + 1, s->end))
		return 0; /* no leading zeros in JSON */
	for (;; p++) {
		if (digit(p, s->end)) {
			if (m || *p != '0')
				sig++;
			m = m * 10 + (uint64_t)(*p - '0');
			if (sig > 15)
				return 0;
			if (frac >= 0)
				frac++;
		} else if (p < s->end && *p == '.' && frac < 0) {
			frac = 0;
			if (!digit(p + 1, s->end))
				return 0;
		} else {
			break;
		}
	}
	if (p < s->end && (*p == 'e' || *p == 'E'))
		exp = 1;
	if (exp || frac > 22)
		return 0; /* rare in a record: the cJSON path reads it */
	*out = frac > 0 ? (double)m / pow10[frac] : (double)m;
	if (neg)
		*out = -*out;
	s->p = p;
	return 1;
}

/* A whole number or null (null keeps *out). */
static int scan_int_or_null(struct scan *s, int64_t *out)
{
	double v;

	if (LIT(s, "null"))
		return 1;
	return scan_num(s, &v) && pg_whole(v, out);
}

/* A member name (no escapes) into *key, and its colon. */
static int scan_key(struct scan *s, char **key)
{
	if (!scan_str(s, key))
		return 0;
	if (LIT(s, ":"))
		return 1;
	free(*key);
	*key = NULL;
	return 0;
}

/* One identity value for key (which it then owns): a string, a number or null. */
static int scan_field(struct scan *s, struct history_record *r, char *key)
{
	char *text = NULL;
	double v;

	if (LIT(s, "null")) {
		record_put_field(r, key, NULL, HISTORY_NULL);
		return 1;
	}
	if (scan_str(s, &text)) {
		record_put_field(r, key, text, HISTORY_STRING);
		return 1;
	}
	if (scan_num(s, &v)) {
		record_put_field(r, key, record_number_text(v), HISTORY_NUMBER);
		return 1;
	}
	free(key);
	return 0;
}

/* {"labels":{...} flattened to labels.KEY, other members scalars}. */
static int scan_identity(struct scan *s, struct history_record *r)
{
	if (!LIT(s, "{"))
		return 0;
	if (LIT(s, "}"))
		return 1;
	do {
		char *key = NULL;
		if (!scan_key(s, &key))
			return 0;
		if (strcmp(key, "labels") == 0 && LIT(s, "{")) {
			free(key);
			if (LIT(s, "}"))
				continue;
			do {
				struct pg_buf k = PG_BUF_INIT;
				char *name = NULL;
				if (!scan_key(s, &name))
					return 0;
				pg_buf_addf(&k, "labels.%s", name);
				free(name);
				if (!scan_field(s, r, k.ptr))
					return 0;
			} while (LIT(s, ","));
			if (!LIT(s, "}"))
				return 0;
		} else if (!scan_field(s, r, key)) {
			return 0;
		}
	} while (LIT(s, ","));
	return LIT(s, "}");
}

static int scan_metrics(struct scan *s, struct history_record *r)
{
	if (!LIT(s, "{"))
		return 0;
	if (!LIT(s, "}")) {
		do {
			char *name = NULL;
			double v;
			if (!scan_key(s, &name))
				return 0;
			if (!scan_num(s, &v)) {
				free(name);
				return 0;
			}
			record_add_metric(r, name, v);
			free(name);
		} while (LIT(s, ","));
		if (!LIT(s, "}"))
			return 0;
	}
	record_sort_metrics(r);
	return 1;
}

static int canonical_fields(struct scan *s, struct history_record *r)
{
	int64_t ec = -1;

	if (!(LIT(s, "{\"schema\":\"" HISTORY_SCHEMA "\",\"record_id\":") &&
	      scan_str(s, &r->record_id) && LIT(s, ",\"time\":") && scan_str(s, &r->time) &&
	      LIT(s, ",\"series\":") && scan_str(s, &r->series) && LIT(s, ",\"label\":") &&
	      scan_str_or_null(s, &r->label) && LIT(s, ",\"kind\":") && scan_str(s, &r->kind) &&
	      LIT(s, ",\"verdict\":") && scan_str(s, &r->verdict) && LIT(s, ",\"exit_code\":") &&
	      scan_int_or_null(s, &ec) && LIT(s, ",\"repo\":") && scan_str_or_null(s, &r->repo) &&
	      LIT(s, ",\"sha\":") && scan_str_or_null(s, &r->sha) && LIT(s, ",\"ref\":") &&
	      scan_str_or_null(s, &r->ref) && LIT(s, ",\"pr\":") && scan_int_or_null(s, &r->pr) &&
	      LIT(s, ",\"run_id\":") && scan_str_or_null(s, &r->run_id) &&
	      LIT(s, ",\"run_attempt\":") && scan_int_or_null(s, &r->run_attempt) &&
	      LIT(s, ",\"identity\":") && scan_identity(s, r) && LIT(s, ",\"metrics\":") &&
	      scan_metrics(s, r) && LIT(s, ",\"baseline\":{\"kind\":") &&
	      scan_str_or_null(s, &r->baseline_kind) && LIT(s, ",\"path\":") &&
	      scan_str_or_null(s, &r->baseline_path) && LIT(s, ",\"sha256\":") &&
	      scan_str_or_null(s, &r->baseline_sha256) && LIT(s, ",\"summary_sha256\":") &&
	      scan_str_or_null(s, &r->baseline_summary_sha256) && LIT(s, "},\"summary_sha256\":") &&
	      scan_str_or_null(s, &r->summary_sha256) && LIT(s, ",\"thresholds\":") &&
	      scan_str_or_null(s, &r->thresholds) && LIT(s, ",\"profgate_version\":") &&
	      scan_str_or_null(s, &r->profgate_version) && LIT(s, "}") && s->p == s->end))
		return 0;
	r->exit_code = (int)ec;
	return 1;
}

/* 1: the line read into r (initialized); 0: not the writer's form, r released
 * and initialized again for the cJSON path. */
int record_canonical_parse(struct history_record *r, const char *line, size_t len)
{
	struct scan s = {line, line + len};

	if (canonical_fields(&s, r) && record_check_fields(r) == 0)
		return 1;
	history_record_release(r);
	history_record_init(r);
	return 0;
}
