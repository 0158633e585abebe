/*
 * What the commands that read the history (`history show`, `baseline`,
 * `trend`, `gate --baseline history:...`) share about naming what they read:
 *
 * - a series named as a user names it: its full name ("nightly-bench-3f9a0c1e"),
 *   its gate label ("nightly-bench") or a unique prefix of its name. The exact
 *   name is read the cheap way (one folder, src/history/store.c "Reading the
 *   branch"); only when it names nothing is the whole branch read to resolve
 *   it, and an ambiguous name lists its candidates, an unknown one the nearest
 *   series (edit distance to the name or the label, a prefix counting as close);
 * - the kinds a read used and the records of other kinds it skipped, so a trend
 *   of local (manual) records says why it is empty and how to include them.
 */
#include "cmd.h"

#include <stdlib.h>
#include <string.h>

#include "../history/history.h"

/* The series listed in a "not found" or ambiguous message. */
#define NEAREST_MAX 5

static const char *const kind_order[] = {"pr", "main", "nightly", "manual"};

/* ---- series names ---- */

struct series_name {
	const char *series, *label; /* borrowed from a record */
	size_t distance;
};

/* Levenshtein distance of a and b, at most 255 bytes of each counted. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t na = strnlen(a, 255), nb = strnlen(b, 255), row[256];

	for (size_t j = 0; j <= nb; j++)
		row[j] = j;
	for (size_t i = 1; i <= na; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= nb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[nb];
}

/* How far name is from a series: the nearest of its name, its label and
 * its name's first strlen(name) letters (a mistyped prefix). */
static size_t distance_to(const char *name, const struct series_name *s)
{
	size_t d = edit_distance(name, s->series);
	char *prefix = pg_xstrndup(s->series, strlen(name));
	size_t dp = edit_distance(name, prefix);

	free(prefix);
	if (dp < d)
		d = dp;
	if (s->label) {
		size_t dl = edit_distance(name, s->label);
		if (dl < d)
			d = dl;
	}
	return d;
}

static int cmp_nearest(const void *a, const void *b)
{
	const struct series_name *x = a, *y = b;

	if (x->distance != y->distance)
		return x->distance < y->distance ? -1 : 1;
	return strcmp(x->series, y->series);
}

/* The distinct series of l, in no particular order; *n of them. */
static struct series_name *series_of(const struct history_list *l, uint32_t *n)
{
	struct series_name *s = pg_xcalloc(l->n + 1, sizeof(*s));

	*n = 0;
	for (uint32_t i = 0; i < l->n; i++) {
		uint32_t j = 0;
		while (j < *n && strcmp(s[j].series, l->r[i].series) != 0)
			j++;
		if (j == *n)
			s[(*n)++] = (struct series_name){l->r[i].series, l->r[i].label, 0};
	}
	return s;
}

static void list_names(const struct series_name *s, uint32_t n, struct pg_buf *b)
{
	for (uint32_t i = 0; i < n && i < NEAREST_MAX; i++) {
		pg_buf_addf(b, "%s%s", i ? ", " : "", s[i].series);
		if (s[i].label)
			pg_buf_addf(b, " (label %s)", s[i].label);
	}
	if (n > NEAREST_MAX)
		pg_buf_addf(b, " and %u more", n - NEAREST_MAX);
}

/* The series name means among s: 0 with *at set, PG_EUSAGE (ambiguous) or
 * PG_ENOTFOUND with the message set. s is reordered. */
static int resolve(const char *what, const char *name, const char *branch, struct series_name *s,
		   uint32_t n, uint32_t *at)
{
	struct pg_buf names = PG_BUF_INIT;
	uint32_t hits = 0;
	int rc = 0;

	for (uint32_t pass = 0; pass < 3 && hits == 0; pass++) {
		for (uint32_t i = 0; i < n; i++) {
			int hit = pass == 0   ? strcmp(s[i].series, name) == 0
				  : pass == 1 ? s[i].label && strcmp(s[i].label, name) == 0
					      : strncmp(s[i].series, name, strlen(name)) == 0;
			if (hit) {
				struct series_name t = s[hits];
				s[hits] = s[i];
				s[i] = t;
				hits++;
			}
		}
	}
	if (hits == 1) {
		*at = 0;
		goto out;
	}
	if (hits > 1) {
		qsort(s, hits, sizeof(*s), cmp_nearest);
		list_names(s, hits, &names);
		rc = pg_error_set(PG_EUSAGE, "%s: --series '%s' names %u series: %s; give one",
				  what, name, hits, names.ptr);
		goto out;
	}
	for (uint32_t i = 0; i < n; i++)
		s[i].distance = distance_to(name, &s[i]);
	qsort(s, n, sizeof(*s), cmp_nearest);
	list_names(s, n, &names);
	rc = pg_error_set(PG_ENOTFOUND, "%s: no series '%s' on %s%s%s", what, name, branch,
			  n ? "; nearest: " : " (it holds no records)", names.ptr ? names.ptr : "");
out:
	pg_buf_release(&names);
	return rc;
}

int cmd_history_read(const char *what, const struct history_store_opts *o, struct history_filter *f,
		     struct history_list *l, int *exists, char **series_out)
{
	struct history_filter all = {0};
	struct history_list every = {0};
	struct series_name *s = NULL;
	uint32_t n = 0, at = 0;
	int rc;

	*series_out = NULL;
	rc = history_read(o, f, l, exists);
	if (rc || !f->series || l->n > 0 || !*exists)
		return rc;
	/* the name read nothing: read every series to see what it means */
	rc = history_read(o, &all, &every, exists);
	if (rc)
		goto out;
	s = series_of(&every, &n);
	rc = resolve(what, f->series, o->branch ? o->branch : HISTORY_DEFAULT_BRANCH, s, n, &at);
	if (rc)
		goto out;
	*series_out = pg_xstrdup(s[at].series);
	f->series = *series_out;
	for (uint32_t i = 0; i < every.n; i++)
		if (history_filter_match(f, &every.r[i]))
			history_list_move(l, &every.r[i]);
out:
	free(s);
	history_list_release(&every);
	return rc;
}

/* ---- kinds used and skipped ---- */

static int kind_in(const char *kind, const char *const *kinds)
{
	for (size_t i = 0; kinds[i]; i++)
		if (strcmp(kinds[i], kind) == 0)
			return 1;
	return 0;
}

static void count_phrase(struct pg_buf *b, int first, uint32_t n, const char *kind)
{
	pg_buf_addf(b, "%s%u %s record%s", first ? "" : ", ", n, kind, n == 1 ? "" : "s");
}

uint32_t cmd_history_kinds_note(const struct history_list *l, const char *series,
				const char *const *kinds, int with_used, const char *hint,
				struct pg_buf *out)
{
	uint32_t count[PG_ARRAY_LEN(kind_order)] = {0}, used = 0, skipped = 0;
	int first = 1;

	for (uint32_t i = 0; i < l->n; i++)
		for (size_t k = 0; k < PG_ARRAY_LEN(kind_order); k++)
			if ((!series || strcmp(series, l->r[i].series) == 0) &&
			    strcmp(l->r[i].kind, kind_order[k]) == 0)
				count[k]++;
	for (size_t k = 0; k < PG_ARRAY_LEN(kind_order); k++)
		*(kind_in(kind_order[k], kinds) ? &used : &skipped) += count[k];
	if (with_used) {
		pg_buf_adds(out, "used ");
		for (size_t k = 0; k < PG_ARRAY_LEN(kind_order); k++)
			if (kind_in(kind_order[k], kinds) && count[k]) {
				count_phrase(out, first, count[k], kind_order[k]);
				first = 0;
			}
		if (!used) {
			pg_buf_adds(out, "no ");
			for (size_t i = 0; kinds[i]; i++)
				pg_buf_addf(out, "%s%s",
					    i == 0	   ? ""
					    : kinds[i + 1] ? ", "
							   : " or ",
					    kinds[i]);
			pg_buf_adds(out, " records");
		}
	}
	if (!skipped)
		return 0;
	pg_buf_addf(out, "%sskipped ", with_used ? "; " : "");
	first = 1;
	for (size_t k = 0; k < PG_ARRAY_LEN(kind_order); k++)
		if (!kind_in(kind_order[k], kinds) && count[k]) {
			count_phrase(out, first, count[k], kind_order[k]);
			first = 0;
		}
	if (hint) {
		pg_buf_addf(out, " (%s)", hint);
		return skipped;
	}
	pg_buf_adds(out, " (--kind ");
	for (size_t i = 0; kinds[i]; i++)
		pg_buf_addf(out, "%s%s", i ? "," : "", kinds[i]);
	for (size_t k = 0; k < PG_ARRAY_LEN(kind_order); k++)
		if (!kind_in(kind_order[k], kinds) && count[k])
			pg_buf_addf(out, ",%s", kind_order[k]);
	pg_buf_addf(out, " to include %s)", skipped == 1 ? "it" : "them");
	return skipped;
}
