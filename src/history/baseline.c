/*
 * Baselines from history: the window of the last N main/nightly records of
 * one series (`history baseline`, `gate --baseline history:<branch>[:N]`),
 * and the summary that window stands for, which the gate compares against
 * like any baseline file.
 *
 * What a window baseline is, and why. A record keeps the candidate's metric
 * values (record.c), not its summary, so the baseline is synthesized: every
 * metric is the median over the window's records (robust: one slow or fast
 * run does not move it), and the steady steps are the records' steady
 * medians, one per record. The gate takes the records one by one as its
 * baseline runs (history_window_runs), so the spread between runs is the
 * noise a regression must stand out from (a single baseline run shows only
 * the jitter inside a run); the synthesized summary is the one its report
 * shows. With fewer records than the thresholds' min_samples the step test
 * is inconclusive, never a silent pass. The identity is the records': a window
 * never mixes identities (walking back from the newest record, it ends at the
 * first record that differs in a field the thresholds check), so a framework
 * upgrade under strict thresholds starts a new, short window instead of
 * comparing across versions. A window of no usable record stands for no run:
 * a gate whose own record would enter it (history_window_takes) records the
 * run as the series' first instead of judging it against anything.
 */
#include "history.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../summary/summary.h"

#ifndef PG_VERSION
#define PG_VERSION "0.0.0-dev"
#endif

static const char *const default_kinds[] = {"main", "nightly", NULL};

/* ---- choosing the window ---- */

static int kind_in(const char *kind, const char *const *kinds)
{
	for (; *kinds; kinds++)
		if (strcmp(kind, *kinds) == 0)
			return 1;
	return 0;
}

/* A record without a number (an incomparable gate's) stands for no run: it
 * never enters a window, where its metrics would read as missing. */
static int has_numbers(const struct history_record *r)
{
	for (uint32_t i = 0; i < r->n_metrics; i++)
		if (isfinite(r->metrics[i].value))
			return 1;
	return 0;
}

/* A record of kind from a run on ref, for windows of kinds and wref (NULL: any). */
static int takes(const char *const *kinds, const char *wref, const char *kind, const char *ref)
{
	return kind && kind_in(kind, kinds) && (!wref || (ref && strcmp(wref, ref) == 0));
}

int history_window_takes(const struct history_window_opts *o, const char *kind, const char *ref)
{
	return takes(o->kinds ? o->kinds : default_kinds, o->ref, kind, ref);
}

/* A record of the window's series, kinds and ref (numbers or not). */
static int of_window(const struct history_record *r, const struct history_window_opts *o,
		     const char *const *kinds)
{
	if (o->series && strcmp(o->series, r->series) != 0)
		return 0;
	if (!o->series && (!r->label || strcmp(o->label, r->label) != 0))
		return 0;
	return takes(kinds, o->ref, r->kind, r->ref);
}

static int eligible(const struct history_record *r, const struct history_window_opts *o,
		    const char *const *kinds)
{
	return of_window(r, o, kinds) && has_numbers(r);
}

static int cmp_rec_time(const void *a, const void *b)
{
	const struct history_record *x = *(const struct history_record *const *)a;
	const struct history_record *y = *(const struct history_record *const *)b;
	int c = strcmp(x->time, y->time);

	/* records of one second keep the list's order, which is the order they
	 * were appended in (a record id is a digest: no order at all) */
	return c ? c : (x > y) - (x < y);
}

static const struct history_field *field_of(const struct history_record *r, const char *key)
{
	for (uint32_t i = 0; i < r->n_identity; i++)
		if (strcmp(r->identity[i].key, key) == 0)
			return &r->identity[i];
	return NULL;
}

static const char *field_text(const struct history_record *r, const char *key)
{
	const struct history_field *f = field_of(r, key);
	return f && f->text ? f->text : "null";
}

/* The first field of o->identity on which a and b differ, or NULL. */
static const char *identity_differs(const struct history_window_opts *o,
				    const struct history_record *a, const struct history_record *b)
{
	for (uint32_t i = 0; i < o->n_identity; i++) {
		const struct history_field *x = field_of(a, o->identity[i]);
		const struct history_field *y = field_of(b, o->identity[i]);
		int tx = x ? (int)x->type : HISTORY_NULL, ty = y ? (int)y->type : HISTORY_NULL;
		if (tx != ty ||
		    strcmp(field_text(a, o->identity[i]), field_text(b, o->identity[i])))
			return o->identity[i];
	}
	return NULL;
}

static void kinds_text(const char *const *kinds, struct pg_buf *b)
{
	for (size_t i = 0; kinds[i]; i++)
		pg_buf_addf(b, "%s%s", i == 0 ? "" : kinds[i + 1] ? ", " : " or ", kinds[i]);
}

/* No window: the kinds asked for, and the records of them left out for
 * holding no numbers (n_bare), named so an empty window is not a mystery. */
static int not_found(const struct history_window_opts *o, const char *const *kinds, uint32_t n_bare)
{
	struct pg_buf k = PG_BUF_INIT, bare = PG_BUF_INIT;
	int rc;

	kinds_text(kinds, &k);
	if (n_bare)
		pg_buf_addf(&bare,
			    " with numbers (%u without, from incomparable gates, are never a "
			    "baseline)",
			    n_bare);
	rc = pg_error_set(PG_ENOTFOUND, "no %s records%s of %s '%s'%s%s", k.ptr,
			  bare.len ? bare.ptr : "", o->series ? "series" : "label",
			  o->series ? o->series : o->label, o->ref ? " from runs on " : "",
			  o->ref ? o->ref : "");
	pg_buf_release(&bare);
	pg_buf_release(&k);
	return rc;
}

/* With a label only: the eligible records must be of one series. */
static int one_series(const struct history_window_opts *o, const struct history_record **e,
		      uint32_t n)
{
	struct pg_buf names = PG_BUF_INIT;
	uint32_t distinct = 0;
	int rc = 0;

	for (uint32_t i = 0; i < n; i++) {
		int seen = 0;
		for (uint32_t j = 0; j < i && !seen; j++)
			seen = strcmp(e[j]->series, e[i]->series) == 0;
		if (seen)
			continue;
		pg_buf_addf(&names, "%s%s", distinct++ ? ", " : "", e[i]->series);
	}
	if (distinct > 1)
		rc = pg_error_set(PG_EUSAGE, "label '%s' names %u series (%s): give the series",
				  o->label, distinct, names.ptr);
	pg_buf_release(&names);
	return rc;
}

/* Newest first, back to n records or to an identity change. */
static void take_window(const struct history_window_opts *o, const struct history_record **e,
			uint32_t n_e, struct history_window *w)
{
	const struct history_record *newest = e[n_e - 1];
	uint32_t first = n_e - 1;

	while (first > 0 && n_e - first < o->n) {
		const char *f = identity_differs(o, e[first - 1], newest);
		if (f) {
			w->cut_field = f;
			w->cut_time = e[first - 1]->time;
			w->cut_older = pg_xstrdup(field_text(e[first - 1], f));
			w->cut_newer = pg_xstrdup(field_text(newest, f));
			break;
		}
		first--;
	}
	w->n = n_e - first;
	w->r = pg_xcalloc(w->n, sizeof(*w->r));
	memcpy(w->r, e + first, w->n * sizeof(*w->r));
	w->series = newest->series;
	w->label = newest->label;
}

int history_window_select(const struct history_list *l, const struct history_window_opts *o,
			  struct history_window *w)
{
	const char *const *kinds = o->kinds ? o->kinds : default_kinds;
	const struct history_record **e = pg_xcalloc(l->n + 1, sizeof(*e));
	uint32_t n_e = 0;
	int rc = 0;

	memset(w, 0, sizeof(*w));
	w->requested = o->n;
	w->kinds = kinds;
	w->ref = o->ref;
	if (!o->series && !o->label) {
		rc = pg_error_set(PG_EUSAGE, "a window needs a series or a label");
		goto out;
	}
	uint32_t n_bare = 0;
	for (uint32_t i = 0; i < l->n; i++)
		if (eligible(&l->r[i], o, kinds))
			e[n_e++] = &l->r[i];
		else
			n_bare += of_window(&l->r[i], o, kinds);
	if (n_e == 0) {
		rc = not_found(o, kinds, n_bare);
		goto out;
	}
	if (!o->series && (rc = one_series(o, e, n_e)))
		goto out;
	qsort(e, n_e, sizeof(*e), cmp_rec_time);
	take_window(o, e, n_e, w);
out:
	free(e);
	return rc;
}

void history_window_release(struct history_window *w)
{
	free(w->r);
	free(w->cut_older);
	free(w->cut_newer);
	memset(w, 0, sizeof(*w));
}

void history_window_json(const struct history_window *w, const char *branch, struct pg_buf *out)
{
	struct pg_json j;

	pg_json_init(&j, out, 0);
	pg_json_obj_begin(&j);
	pg_json_key(&j, "branch");
	pg_json_str(&j, branch ? branch : HISTORY_DEFAULT_BRANCH);
	pg_json_key(&j, "ref");
	pg_json_str(&j, w->ref);
	pg_json_key(&j, "kinds");
	pg_json_arr_begin(&j);
	for (size_t i = 0; w->kinds && w->kinds[i]; i++)
		pg_json_str(&j, w->kinds[i]);
	pg_json_arr_end(&j);
	pg_json_key(&j, "series");
	pg_json_str(&j, w->series);
	pg_json_key(&j, "requested");
	pg_json_uint(&j, w->requested);
	pg_json_key(&j, "records");
	pg_json_arr_begin(&j);
	for (uint32_t i = 0; i < w->n; i++) {
		pg_json_obj_begin(&j);
		pg_json_key(&j, "record_id");
		pg_json_str(&j, w->r[i]->record_id);
		pg_json_key(&j, "time");
		pg_json_str(&j, w->r[i]->time);
		pg_json_key(&j, "sha");
		pg_json_str(&j, w->r[i]->sha);
		pg_json_obj_end(&j);
	}
	pg_json_arr_end(&j);
	pg_json_key(&j, "cut");
	if (w->cut_field) {
		pg_json_obj_begin(&j);
		pg_json_key(&j, "field");
		pg_json_str(&j, w->cut_field);
		pg_json_key(&j, "older");
		pg_json_str(&j, w->cut_older);
		pg_json_key(&j, "newer");
		pg_json_str(&j, w->cut_newer);
		pg_json_key(&j, "older_time");
		pg_json_str(&j, w->cut_time);
		pg_json_obj_end(&j);
	} else {
		pg_json_null(&j);
	}
	pg_json_obj_end(&j);
}

/* ---- per-metric medians over the window ---- */

struct mval {
	const char *name; /* borrowed from a record */
	double value;
};

struct medians {
	struct mval *v; /* every (metric, value) of the window, by name */
	uint32_t n;
	uint32_t records; /* records in the window */
};

static int cmp_mval(const void *a, const void *b)
{
	const struct mval *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->value > y->value) - (x->value < y->value);
}

static void medians_build(struct medians *m, const struct history_window *w)
{
	size_t total = 0;

	for (uint32_t i = 0; i < w->n; i++)
		total += w->r[i]->n_metrics;
	m->v = pg_xcalloc(total + 1, sizeof(*m->v));
	m->n = 0;
	m->records = w->n;
	for (uint32_t i = 0; i < w->n; i++)
		for (uint32_t k = 0; k < w->r[i]->n_metrics; k++)
			if (isfinite(w->r[i]->metrics[k].value))
				m->v[m->n++] = (struct mval){w->r[i]->metrics[k].name,
							     w->r[i]->metrics[k].value};
	if (m->n > 1)
		qsort(m->v, m->n, sizeof(*m->v), cmp_mval);
}

/* The values of one metric: sorted, from *at; returns how many. */
static uint32_t group(const struct medians *m, uint32_t at)
{
	uint32_t k = at;

	while (k < m->n && strcmp(m->v[k].name, m->v[at].name) == 0)
		k++;
	return k - at;
}

static double median_of_group(const struct mval *v, uint32_t n)
{
	return n % 2 ? v[n / 2].value : (v[n / 2 - 1].value + v[n / 2].value) / 2;
}

/* The median of a metric held by more than half of the records; NAN when
 * fewer hold it (a metric that crossed a floor now and then is left out). */
static double median_named(const struct medians *m, const char *name)
{
	uint32_t lo = 0, hi = m->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (strcmp(m->v[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == m->n || strcmp(m->v[lo].name, name) != 0)
		return NAN;
	uint32_t n = group(m, lo);
	return 2 * n > m->records ? median_of_group(m->v + lo, n) : NAN;
}

/* ---- the synthesized summary ---- */

static char *dup_or_null(const char *s)
{
	return s ? pg_xstrdup(s) : NULL;
}

static const char *str_field(const struct history_record *r, const char *key)
{
	const struct history_field *f = field_of(r, key);
	return f && f->type == HISTORY_STRING ? f->text : NULL;
}

static double num_field(const struct history_record *r, const char *key, double def)
{
	const struct history_field *f = field_of(r, key);
	return f && f->type == HISTORY_NUMBER ? strtod(f->text, NULL) : def;
}

/* The identity fields by the table of summary.h, each taken when the record
 * holds it with the field's type; labels from labels.KEY. */
static void identity_from(struct summary *s, const struct history_record *r)
{
	for (size_t i = 0; i < SUMMARY_ID_N; i++) {
		const struct summary_id_field *f = &summary_id_fields[i];
		if (f->type == SUMMARY_ID_STRING)
			summary_id_set_str(s, f, str_field(r, f->name));
		else
			summary_id_set_num(
			    s, f, num_field(r, f->name, f->type == SUMMARY_ID_INT ? -1 : 0));
	}
	s->labels = pg_xcalloc(r->n_identity + 1, sizeof(char *));
	for (uint32_t i = 0; i < r->n_identity; i++) {
		const struct history_field *f = &r->identity[i];
		if (strncmp(f->key, "labels.", 7) == 0)
			s->labels[s->n_labels++] =
			    pg_xasprintf("%s=%s", f->key + 7, f->text ? f->text : "");
	}
}

/* One input "file" per record: where it is on the branch and the digest of
 * the summary it was made from. */
static void files_from(struct summary *s, const struct history_window *w)
{
	s->files = pg_xcalloc(w->n + 1, sizeof(*s->files));
	for (uint32_t i = 0; i < w->n; i++) {
		struct pg_buf path = PG_BUF_INIT;
		history_record_shard(w->r[i], &path);
		pg_buf_addf(&path, "#%s", w->r[i]->record_id);
		s->files[i].path = pg_buf_detach(&path, NULL);
		s->files[i].sha256 = dup_or_null(w->r[i]->summary_sha256);
		s->files[i].format = pg_xstrdup(HISTORY_SCHEMA);
		s->files[i].rank = -1;
	}
	s->n_files = w->n;
}

static double sorted_median(const double *v, uint32_t n)
{
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Steady statistics of the records' medians: the spread between runs. */
static void spread(const double *v, uint32_t n, double med, double *mad)
{
	double *d = pg_xcalloc(n + 1, sizeof(double));

	for (uint32_t i = 0; i < n; i++)
		d[i] = fabs(v[i] - med);
	qsort(d, n, sizeof(double), pg_cmp_double);
	*mad = sorted_median(d, n);
	free(d);
}

static double or_else(double v, double fallback)
{
	return isfinite(v) ? v : fallback;
}

/* One steady step per record holding step.median_us, when most do. */
static void steps_from(struct summary *s, const struct history_window *w, const struct medians *m)
{
	double *v = pg_xcalloc(w->n + 1, sizeof(double));
	uint32_t n = 0;

	if (!isfinite(median_named(m, "step.median_us"))) {
		free(v);
		return;
	}
	for (uint32_t i = 0; i < w->n; i++)
		for (uint32_t k = 0; k < w->r[i]->n_metrics; k++)
			if (strcmp(w->r[i]->metrics[k].name, "step.median_us") == 0 &&
			    isfinite(w->r[i]->metrics[k].value))
				v[n++] = w->r[i]->metrics[k].value;
	s->steps = pg_xcalloc(n + 1, sizeof(*s->steps));
	for (uint32_t i = 0; i < n; i++)
		s->steps[i] = (struct sum_step){
		    .step = (int64_t)i, .us = v[i], .host_us = -1, .steady = 1, .span_us = -1};
	s->n_steps = n;
	qsort(v, n, sizeof(double), pg_cmp_double);
	s->steady.count = n;
	s->steady.median_us = sorted_median(v, n);
	s->steady.min_us = v[0];
	/* a run's own steps' spread, the median over the records that keep it
	 * (the gate's reference for a candidate's spread); else the spread
	 * between the records' medians */
	spread(v, n, s->steady.median_us, &s->steady.mad_us);
	s->steady.mad_us = or_else(median_named(m, "step.mad_us"), s->steady.mad_us);
	s->steady.mean_us = or_else(median_named(m, "step.mean_us"), s->steady.median_us);
	s->steady.p90_us = or_else(median_named(m, "step.p90_us"), s->steady.median_us);
	s->steady.max_us = or_else(median_named(m, "step.max_us"), v[n - 1]);
	s->skew_us = or_else(median_named(m, "step.skew_us"), 0);
	/* the gate's witness of a record slowed from outside (gate/runs.c) */
	s->host.fastest_us_per_step = or_else(median_named(m, "step.fastest_us"), -1);
	free(v);
}

static const char *const share_names[] = {
    "breakdown.compute_share", "breakdown.exposed_comm_share", "breakdown.exposed_memcpy_share",
    "breakdown.idle_share",    "breakdown.comm_overlap_share",
};

/* The device count's worth of identical devices holding the median breakdown,
 * when the records hold the breakdown: the gate reads shares from the mean
 * view and per-step times from the devices. */
static void devices_from(struct summary *s, const struct medians *m)
{
	double sh[PG_ARRAY_LEN(share_names)];
	uint32_t n_dev = s->device_count < 1 ? 1 : s->device_count > 1024 ? 1024 : s->device_count;
	double steps = s->steady.count ? s->steady.count : 1;
	struct sum_split x;

	for (size_t i = 0; i < PG_ARRAY_LEN(sh); i++)
		sh[i] = median_named(m, share_names[i]);
	for (size_t i = 0; i < 4; i++)
		if (!isfinite(sh[i]))
			return; /* no breakdown: no breakdown metrics, rather than zeros */
	/* no communication in the window: the overlap stays undefined */
	s->mean = (struct sum_breakdown_view){sh[0], sh[1], sh[2], sh[3], or_else(sh[4], -1), 0};
	s->worst = s->mean;
	memset(&x, 0, sizeof(x));
	x.wall_us = s->steady.median_us * steps;
	x.compute_us = sh[0] * x.wall_us;
	x.exposed_comm_us = sh[1] * x.wall_us;
	x.exposed_memcpy_us = sh[2] * x.wall_us;
	x.idle_us = sh[3] * x.wall_us;
	x.busy_us = x.wall_us - x.idle_us;
	s->devices = pg_xcalloc(n_dev, sizeof(*s->devices));
	for (uint32_t d = 0; d < n_dev; d++) {
		struct pg_buf id = PG_BUF_INIT;
		pg_buf_addf(&id, "history/%u", d);
		s->devices[d] =
		    (struct sum_device){pg_buf_detach(&id, NULL),
					pg_xstrdup(s->device_kind ? s->device_kind : "unknown"),
					pg_xstrdup("median of the window"),
					NULL,
					(int32_t)d,
					-1,
					0,
					x,
					x};
	}
	s->n_devices = n_dev;
	for (uint32_t i = 0; i < s->n_steps; i++) {
		s->steps[i].device_us = pg_xcalloc(n_dev, sizeof(double));
		for (uint32_t d = 0; d < n_dev; d++)
			s->steps[i].device_us[d] = -1; /* per-device times are not kept */
	}
}

/* The record of list lf keyed name: found, or added at the reader's
 * defaults with the strings the merge would take first from like's record
 * of that name (a family's category). name is taken over. */
static char *list_record(struct summary *s, const struct sum_field *lf, char *name,
			 const struct summary *like)
{
	const struct sum_shape *sh = lf->sub;
	const struct sum_field *key = summary_shape_key(sh);
	char **v = (char **)(void *)((char *)s + lf->off);
	uint32_t *n = (uint32_t *)(void *)((char *)s + lf->n_off);
	char *rec;

	for (uint32_t i = 0; i < *n; i++) {
		rec = *v + (size_t)i * sh->size;
		if (strcmp(*(char **)(void *)(rec + key->off), name) == 0) {
			free(name);
			return rec;
		}
	}
	*v = pg_xrealloc(*v, (*n + 1) * sh->size);
	rec = *v + (size_t)(*n)++ * sh->size;
	summary_record_init(sh, rec);
	*(char **)(void *)(rec + key->off) = name;
	const char *lv = like ? *(char *const *)(const void *)((const char *)like + lf->off) : NULL;
	uint32_t ln = like ? *(const uint32_t *)(const void *)((const char *)like + lf->n_off) : 0;
	/* a host profile's families and ops are its host lists */
	if (like && ln == 0 && strcmp(lf->key, "families") == 0)
		lv = (const char *)summary_step_families(like, &ln);
	else if (like && ln == 0 && strcmp(lf->key, "ops") == 0)
		lv = (const char *)summary_step_ops(like, &ln);
	for (uint32_t i = 0; i < ln; i++, lv += sh->size) {
		if (strcmp(*(char *const *)(const void *)(lv + key->off), name) != 0)
			continue;
		for (uint32_t k = 0; k < sh->n; k++)
			if (sh->f[k].merge == SUM_M_FIRST && sh->f[k].type == SUM_STR) {
				const char *x = *(char *const *)(const void *)(lv + sh->f[k].off);
				*(char **)(void *)(rec + sh->f[k].off) = dup_or_null(x);
			}
		break;
	}
	return rec;
}

/* What a window keeps of families and ops is the time per step: their share
 * and totals follow from it, and an op's total time is taken as its self
 * time. */
static void derive_lists(struct summary *s)
{
	double steps = s->steady.count ? s->steady.count : 1;

	for (uint32_t i = 0; i < s->n_families; i++) {
		struct sum_family *f = &s->families[i];
		f->share = s->steady.median_us > 0 ? f->us_per_step / s->steady.median_us : -1;
		f->us_total = f->us_per_step * steps;
	}
	for (uint32_t i = 0; i < s->n_ops; i++) {
		struct sum_op *o = &s->ops[i];
		o->total_us_per_step = o->self_us_per_step;
		o->self_us_total = o->total_us_total = o->self_us_per_step * steps;
	}
}

/* The list records and throughput, from the metrics the schema marks as
 * rebuilt from a window (SUM_WINDOW). */
static void lists_from(struct summary *s, const struct medians *m, const struct summary *like)
{
	for (uint32_t at = 0; at < m->n;) {
		uint32_t n = group(m, at);
		const struct sum_field *lf, *f;
		double med = median_of_group(m->v + at, n);
		char *subject;
		size_t off;

		f = summary_metric_field(m->v[at].name, &lf, &subject, &off);
		at += n;
		if (!f || !(f->flags & SUM_WINDOW) || 2 * n <= m->records) {
			free(subject);
			continue;
		}
		char *rec = lf ? list_record(s, lf, subject, like) : (char *)s;
		*(double *)(void *)(rec + off) = med;
		if (f->when == SUM_WHEN_FLOPS)
			s->has_flops = 1; /* the metric exists only then */
	}
	derive_lists(s);
}

static void window_warning(struct summary *s, const struct history_window *w)
{
	if (w->n >= w->requested)
		return;
	if (w->cut_field)
		summary_add_warning(s, "history-window-short",
				    "the baseline window holds %u of the %u records asked for: "
				    "%s changed from %s to %s after %s",
				    w->n, w->requested, w->cut_field, w->cut_older, w->cut_newer,
				    w->cut_time);
	else
		summary_add_warning(s, "history-window-short",
				    "the baseline window holds %u of the %u records asked for",
				    w->n, w->requested);
}

void history_baseline_summary(const struct history_window *w, const struct summary *like,
			      struct summary *out)
{
	struct medians m;

	summary_init(out);
	if (w->n == 0)
		return;
	medians_build(&m, w);
	out->profgate_version = pg_xstrdup(PG_VERSION);
	identity_from(out, w->r[w->n - 1]);
	files_from(out, w);
	out->steps_source = pg_xstrdup("history-window");
	out->warmup_requested = -1;
	out->tflops_per_device = -1;
	steps_from(out, w, &m);
	devices_from(out, &m);
	lists_from(out, &m, like);
	out->basis_devices = out->n_devices ? out->n_devices : 1;
	out->basis_steady_steps = out->steady.count;
	window_warning(out, w);
	free(m.v);
}

void history_window_runs(const struct history_window *w, const struct summary *like,
			 struct summary *runs)
{
	for (uint32_t i = 0; i < w->n; i++) {
		struct history_window one = *w;
		one.r = &w->r[i];
		one.n = one.requested = 1;
		one.cut_field = NULL;
		history_baseline_summary(&one, like, &runs[i]);
	}
}
