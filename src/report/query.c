/*
 * profgate query's answers: one topic of a summary (the top ops, the time
 * split and the collectives, the gaps, the regions, one op, what to try next)
 * as JSON a program reads or as a few lines a person reads.
 *
 * How it works: report_query_select() picks the records a query asks for
 * from the summary's lists (filters, an order, a cap), and both renderers
 * walk that one selection, so the JSON and the text never disagree. Every
 * number is the summary's own, written with the decimals the summary writes
 * it with (µs 3, shares 4, counts per step 3), so an answer's numbers equal
 * the summary file's; the only numbers not in the summary are named for what
 * they are (share_of_step: a time over steps.steady.median_us, 4 decimals).
 * Same summary and query, same bytes.
 */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const topic_names[REPORT_Q_COUNT] = {"ops",	   "breakdown", "gaps",
							"regions", "op",	"next"};

const char *report_query_topic_name(enum report_query_topic t)
{
	return (unsigned)t < REPORT_Q_COUNT ? topic_names[t] : "";
}

int report_query_topic_find(const char *name)
{
	for (int i = 0; i < REPORT_Q_COUNT; i++)
		if (strcmp(topic_names[i], name) == 0)
			return i;
	return -1;
}

void report_query_init(struct report_query *q)
{
	memset(q, 0, sizeof(*q));
	q->top = 10;
	q->depth = -1;
}

/* ---- selection ---- */

struct pick {
	const struct summary *s;
	const struct report_query *q;
	double step_us; /* the steady median step; < 0 when none */
	const struct sum_op *ops;
	uint32_t n_ops;
	const void **v; /* the topic's records, in answer order */
	uint32_t n, matched;
	const struct sum_op *op;		  /* op: the one asked about */
	const struct sum_family *fam;		  /* op: its family's record, or NULL */
	const char *dominant;			  /* breakdown: the largest part, or NULL */
	const struct sum_collective *worst, *low; /* breakdown: most time, lowest busbw */
};

/* Larger first, then by name: a total order, so the answer is the same on
 * every platform's qsort. */
static int by_self(const void *pa, const void *pb)
{
	const struct sum_op *a = *(const void *const *)pa, *b = *(const void *const *)pb;
	if (a->self_us_per_step != b->self_us_per_step)
		return a->self_us_per_step < b->self_us_per_step ? 1 : -1;
	return strcmp(a->name, b->name);
}

static int by_path(const void *pa, const void *pb)
{
	const struct sum_region *a = *(const void *const *)pa, *b = *(const void *const *)pb;
	return strcmp(a->path, b->path);
}

static int by_coll_time(const void *pa, const void *pb)
{
	const struct sum_collective *a = *(const void *const *)pa, *b = *(const void *const *)pb;
	if (a->us_per_step != b->us_per_step)
		return a->us_per_step < b->us_per_step ? 1 : -1;
	return strcmp(a->kind, b->kind);
}

static void sort_recs(const void **v, uint32_t n, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp);
}

static int str_is(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

static void pick_ops(struct pick *p)
{
	const struct report_query *q = p->q;

	for (uint32_t i = 0; i < p->n_ops; i++) {
		const struct sum_op *o = &p->ops[i];
		if ((q->family && !str_is(o->family, q->family)) ||
		    (q->category && !str_is(o->category, q->category)))
			continue;
		p->v[p->n++] = o;
	}
	sort_recs(p->v, p->n, by_self);
	p->matched = p->n;
	if (p->n > q->top)
		p->n = q->top;
}

static void pick_breakdown(struct pick *p)
{
	const struct summary *s = p->s;
	const struct sum_breakdown_view *m = &s->mean;
	const double part[] = {m->compute_share, m->exposed_comm_share, m->exposed_memcpy_share,
			       m->idle_share};
	static const char *const names[] = {"compute", "communication", "memory", "idle"};
	double best = -1;

	for (size_t k = 0; k < PG_ARRAY_LEN(part); k++)
		if (part[k] > best) {
			best = part[k];
			p->dominant = names[k];
		}
	if (best < 0)
		p->dominant = NULL;
	for (uint32_t i = 0; i < s->n_collectives; i++)
		p->v[p->n++] = &s->collectives[i];
	sort_recs(p->v, p->n, by_coll_time);
	p->matched = p->n;
	p->worst = p->n ? p->v[0] : NULL;
	for (uint32_t k = 0; k < p->n; k++) {
		const struct sum_collective *c = p->v[k];
		if (c->busbw_gbps >= 0 && (!p->low || c->busbw_gbps < p->low->busbw_gbps))
			p->low = c;
	}
	if (p->n > p->q->top)
		p->n = p->q->top;
}

/* The summary's gaps are largest first already; --before keeps the gaps
 * whose payload op or whose marker op is the one asked for. */
static void pick_gaps(struct pick *p)
{
	const struct summary *s = p->s;
	const char *before = p->q->before;

	for (uint32_t i = 0; i < s->n_gaps; i++)
		if (!before || str_is(s->gaps[i].op, before) || str_is(s->gaps[i].marker, before))
			p->v[p->n++] = &s->gaps[i];
	p->matched = p->n;
	if (p->n > p->q->top)
		p->n = p->q->top;
}

/* Regions in path order, so a scope's children follow it: the hierarchy. */
static void pick_regions(struct pick *p)
{
	const struct summary *s = p->s;

	for (uint32_t i = 0; i < s->n_regions; i++)
		if (p->q->depth < 0 || s->regions[i].depth <= (uint32_t)p->q->depth)
			p->v[p->n++] = &s->regions[i];
	sort_recs(p->v, p->n, by_path);
	p->matched = p->n;
}

/* The op by exact name, else the one op whose name holds it. 0, or
 * PG_EUSAGE (none, or several: up to five named) with the message set. */
static int find_op(struct pick *p)
{
	const char *want = p->q->op;
	struct pg_buf b = PG_BUF_INIT;
	uint32_t hits = 0, first = 0;

	for (uint32_t i = 0; i < p->n_ops; i++)
		if (strcmp(p->ops[i].name, want) == 0) {
			p->op = &p->ops[i];
			return 0;
		}
	for (uint32_t i = 0; i < p->n_ops; i++) {
		if (!strstr(p->ops[i].name, want))
			continue;
		if (hits == 0)
			first = i;
		if (hits < 5)
			pg_buf_addf(&b, "%s'%.80s'", hits ? ", " : "", p->ops[i].name);
		hits++;
	}
	if (hits == 1) {
		pg_buf_release(&b);
		p->op = &p->ops[first];
		return 0;
	}
	int rc = hits
		     ? pg_error_set(PG_EUSAGE, "query: %u ops have '%s' in their name: %s%s", hits,
				    want, b.ptr, hits > 5 ? ", ..." : "")
		     : pg_error_set(PG_EUSAGE,
				    "query: no op '%s' in the summary ('query ... ops' lists them)",
				    want);
	pg_buf_release(&b);
	return rc;
}

/* The op, then up to two ops either side of it by self time. */
static int pick_op(struct pick *p)
{
	const void **all;
	uint32_t n = 0, at = 0, n_fams;
	const struct sum_family *fams;

	if (find_op(p))
		return PG_EUSAGE;
	all = pg_xmalloc(((size_t)p->n_ops + 1) * sizeof(*all));
	for (uint32_t i = 0; i < p->n_ops; i++)
		all[n++] = &p->ops[i];
	sort_recs(all, n, by_self);
	while (at < n && all[at] != p->op)
		at++;
	p->matched = at + 1; /* its rank */
	for (uint32_t k = at >= 2 ? at - 2 : 0; k < n && k <= at + 2; k++)
		p->v[p->n++] = all[k];
	free(all);
	fams = summary_step_families(p->s, &n_fams);
	for (uint32_t i = 0; i < n_fams; i++)
		if (str_is(fams[i].family, p->op->family))
			p->fam = &fams[i];
	return 0;
}

static int select_answer(const struct summary *s, const struct report_query *q, struct pick *p)
{
	uint32_t cap;

	memset(p, 0, sizeof(*p));
	p->s = s;
	p->q = q;
	p->step_us = s->steady.count > 0 ? s->steady.median_us : -1;
	p->ops = summary_step_ops(s, &p->n_ops);
	cap = p->n_ops + s->n_gaps + s->n_regions + s->n_collectives + s->n_candidates + 1;
	p->v = pg_xmalloc((size_t)cap * sizeof(*p->v));
	switch (q->topic) {
	case REPORT_Q_OPS: pick_ops(p); break;
	case REPORT_Q_BREAKDOWN: pick_breakdown(p); break;
	case REPORT_Q_GAPS: pick_gaps(p); break;
	case REPORT_Q_REGIONS: pick_regions(p); break;
	case REPORT_Q_OP: return pick_op(p);
	case REPORT_Q_NEXT:
		for (uint32_t i = 0; i < s->n_candidates; i++)
			p->v[p->n++] = &s->candidates[i];
		p->matched = p->n;
		break;
	case REPORT_Q_COUNT: break;
	}
	return 0;
}

/* ---- JSON ---- */

/* As the summary writes them: µs to 3 decimals, null when negative where the
 * summary's field is optional. */
static void j_num(struct pg_json *j, const char *key, double v, int decimals, int opt)
{
	pg_json_key(j, key);
	if ((opt && v < 0) || !isfinite(v))
		pg_json_null(j);
	else
		pg_json_double(j, v, decimals);
}

static void j_str(struct pg_json *j, const char *key, const char *v)
{
	if (v)
		pg_json_kv_str(j, key, v);
	else {
		pg_json_key(j, key);
		pg_json_null(j);
	}
}

static void j_share_of_step(struct pg_json *j, const struct pick *p, double us)
{
	j_num(j, "share_of_step", p->step_us > 0 ? us / p->step_us : -1, 4, 1);
}

static void j_op(struct pg_json *j, const struct pick *p, const struct sum_op *o)
{
	pg_json_obj_begin(j);
	pg_json_kv_str(j, "name", o->name);
	j_str(j, "family", o->family);
	j_str(j, "category", o->category);
	j_num(j, "count_per_step", o->count_per_step, 3, 0);
	j_num(j, "self_us_per_step", o->self_us_per_step, 3, 0);
	j_num(j, "total_us_per_step", o->total_us_per_step, 3, 0);
	j_share_of_step(j, p, o->self_us_per_step);
	pg_json_obj_end(j);
}

static void j_gap(struct pg_json *j, const struct pick *p, const struct sum_gap *g)
{
	pg_json_obj_begin(j);
	pg_json_kv_str(j, "op", g->op);
	j_str(j, "marker", g->marker);
	j_num(j, "count_per_step", g->count_per_step, 3, 0);
	j_num(j, "us_per_step", g->us_per_step, 3, 0);
	j_num(j, "max_us", g->max_us, 3, 0);
	j_share_of_step(j, p, g->us_per_step);
	if (p->q->before)
		pg_json_kv_str(j, "matched", str_is(g->op, p->q->before) ? "op" : "marker");
	pg_json_obj_end(j);
}

static void j_view(struct pg_json *j, const char *key, const struct sum_breakdown_view *v)
{
	pg_json_key(j, key);
	pg_json_obj_begin(j);
	j_num(j, "compute_share", v->compute_share, 4, 1);
	j_num(j, "exposed_comm_share", v->exposed_comm_share, 4, 1);
	j_num(j, "exposed_memcpy_share", v->exposed_memcpy_share, 4, 1);
	j_num(j, "idle_share", v->idle_share, 4, 1);
	j_num(j, "comm_overlap_share", v->comm_overlap_share, 4, 1);
	pg_json_obj_end(j);
}

/* The step thread's split, as the summary's host view has it; null without
 * a step thread (no host markers, or no host events). */
static void j_host(struct pg_json *j, const struct sum_host *h)
{
	pg_json_key(j, "host");
	if (!h->window || strcmp(h->window, "steps") != 0) {
		pg_json_null(j);
		return;
	}
	pg_json_obj_begin(j);
	j_num(j, "wall_us_per_step", h->wall_us_per_step, 3, 1);
	j_num(j, "busy_us_per_step", h->busy_us_per_step, 3, 1);
	j_num(j, "idle_us_per_step", h->idle_us_per_step, 3, 1);
	j_num(j, "busy_share", h->busy_share, 4, 1);
	j_num(j, "python_us_per_step", h->python_us_per_step, 3, 1);
	j_num(j, "launch_us_per_step", h->launch_us_per_step, 3, 1);
	pg_json_obj_end(j);
}

static void j_collective(struct pg_json *j, const struct sum_collective *c)
{
	pg_json_obj_begin(j);
	pg_json_kv_str(j, "kind", c->kind);
	j_num(j, "count_per_step", c->count_per_step, 3, 0);
	j_num(j, "us_per_step", c->us_per_step, 3, 0);
	j_num(j, "bytes_per_step", c->bytes_per_step, 3, 1);
	j_num(j, "busbw_gbps", c->busbw_gbps, 3, 1);
	pg_json_obj_end(j);
}

static void j_answer(struct pg_json *j, const struct pick *p)
{
	const struct summary *s = p->s;

	switch (p->q->topic) {
	case REPORT_Q_OPS:
		j_str(j, "family", p->q->family);
		j_str(j, "category", p->q->category);
		pg_json_kv_uint(j, "matched", p->matched);
		pg_json_key(j, "ops");
		pg_json_arr_begin(j);
		for (uint32_t k = 0; k < p->n; k++)
			j_op(j, p, p->v[k]);
		pg_json_arr_end(j);
		break;
	case REPORT_Q_BREAKDOWN:
		j_str(j, "dominant", p->dominant);
		j_view(j, "mean", &s->mean);
		j_str(j, "worst_device", s->worst_device);
		j_view(j, "worst", &s->worst);
		j_str(j, "worst_collective", p->worst ? p->worst->kind : NULL);
		j_str(j, "lowest_busbw_collective", p->low ? p->low->kind : NULL);
		j_host(j, &s->host);
		pg_json_key(j, "collectives");
		pg_json_arr_begin(j);
		for (uint32_t k = 0; k < p->n; k++)
			j_collective(j, p->v[k]);
		pg_json_arr_end(j);
		break;
	case REPORT_Q_GAPS:
		j_str(j, "before", p->q->before);
		pg_json_kv_uint(j, "matched", p->matched);
		pg_json_key(j, "gaps");
		pg_json_arr_begin(j);
		for (uint32_t k = 0; k < p->n; k++)
			j_gap(j, p, p->v[k]);
		pg_json_arr_end(j);
		break;
	case REPORT_Q_REGIONS:
		pg_json_key(j, "depth");
		if (p->q->depth < 0)
			pg_json_null(j);
		else
			pg_json_int(j, p->q->depth);
		pg_json_key(j, "regions");
		pg_json_arr_begin(j);
		for (uint32_t k = 0; k < p->n; k++) {
			const struct sum_region *r = p->v[k];
			pg_json_obj_begin(j);
			pg_json_kv_str(j, "path", r->path);
			pg_json_kv_uint(j, "depth", r->depth);
			j_num(j, "count_per_step", r->count_per_step, 3, 0);
			j_num(j, "inclusive_us_per_step", r->inclusive_us_per_step, 3, 0);
			j_num(j, "exclusive_us_per_step", r->exclusive_us_per_step, 3, 0);
			j_share_of_step(j, p, r->inclusive_us_per_step);
			pg_json_obj_end(j);
		}
		pg_json_arr_end(j);
		break;
	case REPORT_Q_OP: {
		const struct sum_op *o = p->op;
		pg_json_key(j, "op");
		j_op(j, p, o);
		pg_json_kv_uint(j, "rank", p->matched);
		pg_json_key(j, "examples");
		pg_json_arr_begin(j);
		for (int k = 0; k < 3; k++)
			if (o->examples[k])
				pg_json_str(j, o->examples[k]);
		pg_json_arr_end(j);
		pg_json_key(j, "family");
		if (!p->fam) {
			pg_json_null(j);
		} else {
			pg_json_obj_begin(j);
			pg_json_kv_str(j, "family", p->fam->family);
			j_str(j, "category", p->fam->category);
			j_num(j, "count_per_step", p->fam->count_per_step, 3, 0);
			j_num(j, "us_per_step", p->fam->us_per_step, 3, 0);
			j_num(j, "share", p->fam->share, 4, 1);
			pg_json_obj_end(j);
		}
		pg_json_key(j, "around");
		pg_json_arr_begin(j);
		for (uint32_t k = 0; k < p->n; k++)
			if (p->v[k] != o)
				j_op(j, p, p->v[k]);
		pg_json_arr_end(j);
		pg_json_key(j, "gaps_before");
		pg_json_arr_begin(j);
		for (uint32_t i = 0; i < s->n_gaps; i++)
			if (str_is(s->gaps[i].op, o->name) || str_is(s->gaps[i].marker, o->name))
				j_gap(j, p, &s->gaps[i]);
		pg_json_arr_end(j);
		break;
	}
	case REPORT_Q_NEXT:
		pg_json_key(j, "candidates");
		pg_json_arr_begin(j);
		for (uint32_t k = 0; k < p->n; k++) {
			const struct sum_candidate *c = p->v[k];
			pg_json_obj_begin(j);
			pg_json_kv_str(j, "id", c->id);
			j_str(j, "title", c->title);
			j_str(j, "evidence", c->evidence);
			pg_json_obj_end(j);
		}
		pg_json_arr_end(j);
		break;
	case REPORT_Q_COUNT: break;
	}
}

int report_query_json(const struct summary *s, const struct report_query *q, struct pg_buf *out)
{
	struct pick p;
	struct pg_json j;
	int rc = select_answer(s, q, &p);

	if (rc == 0) {
		pg_json_init(&j, out, 1);
		pg_json_obj_begin(&j);
		pg_json_kv_str(&j, "schema", REPORT_QUERY_SCHEMA);
		pg_json_kv_str(&j, "topic", report_query_topic_name(q->topic));
		j_str(&j, "question", q->question);
		j_num(&j, "step_median_us", p.step_us, 3, 1);
		pg_json_key(&j, "answer");
		pg_json_obj_begin(&j);
		j_answer(&j, &p);
		pg_json_obj_end(&j);
		pg_json_obj_end(&j);
		pg_buf_addc(out, '\n');
	}
	free(p.v);
	return rc;
}

/* ---- text ---- */

/* A profile string on a terminal line: control characters as spaces, cut to
 * max bytes on a UTF-8 boundary with "...". */
static void plain(struct pg_buf *b, const char *s, size_t max)
{
	size_t n = s ? strlen(s) : 0, k = n;

	if (n > max) {
		k = max;
		while (k > 0 && ((unsigned char)s[k] & 0xc0) == 0x80)
			k--;
	}
	for (size_t i = 0; i < k; i++)
		pg_buf_addc(b, (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? ' ' : s[i]);
	if (k < n)
		pg_buf_adds(b, "...");
}

static void t_share(struct pg_buf *b, double share)
{
	if (share < 0 || !isfinite(share))
		pg_buf_adds(b, "n/a");
	else
		pg_buf_addf(b, "%.1f%%", 100 * share);
}

static void t_of_step(struct pg_buf *b, const struct pick *p, double us)
{
	if (p->step_us <= 0)
		return;
	pg_buf_adds(b, " (");
	t_share(b, us / p->step_us);
	pg_buf_adds(b, " of the step)");
}

static void t_op(struct pg_buf *b, const struct pick *p, const struct sum_op *o)
{
	report_time(b, o->self_us_per_step);
	pg_buf_adds(b, " per step");
	t_of_step(b, p, o->self_us_per_step);
	pg_buf_addf(b, ", %.1f calls, %s/%s: ", o->count_per_step, o->family ? o->family : "?",
		    o->category ? o->category : "?");
	plain(b, o->name, 120);
	pg_buf_addc(b, '\n');
}

static void t_gap(struct pg_buf *b, const struct pick *p, const struct sum_gap *g)
{
	report_time(b, g->us_per_step);
	pg_buf_adds(b, " per step");
	t_of_step(b, p, g->us_per_step);
	pg_buf_addf(b, ", %.1f per step, longest ", g->count_per_step);
	report_time(b, g->max_us);
	pg_buf_adds(b, ", before ");
	plain(b, g->op, 100);
	if (g->marker && strcmp(g->marker, g->op) != 0) {
		pg_buf_adds(b, " (marker ");
		plain(b, g->marker, 60);
		pg_buf_addc(b, ')');
	}
	pg_buf_addc(b, '\n');
}

/* The step thread's split, when there is a step thread: for a host profile
 * (no device) the only split there is, and beside a device's it tells a
 * host that keeps the devices waiting. */
static void t_host(struct pg_buf *b, const struct sum_host *h)
{
	if (!h->window || strcmp(h->window, "steps") != 0 || h->busy_share < 0)
		return;
	pg_buf_adds(b, "host step thread: busy ");
	report_time(b, h->busy_us_per_step);
	pg_buf_adds(b, " of its ");
	report_time(b, h->wall_us_per_step);
	pg_buf_adds(b, " wall per step (");
	t_share(b, h->busy_share);
	pg_buf_adds(b, "), idle ");
	report_time(b, h->idle_us_per_step);
	if (h->python_us_per_step > 0) {
		pg_buf_adds(b, "; Python frames ");
		report_time(b, h->python_us_per_step);
		pg_buf_adds(b, " per step");
	}
	if (h->launch_us_per_step > 0) {
		pg_buf_adds(b, "; launch calls ");
		report_time(b, h->launch_us_per_step);
		pg_buf_adds(b, " per step");
	}
	pg_buf_addc(b, '\n');
}

static void t_breakdown(struct pg_buf *b, const struct pick *p)
{
	const struct summary *s = p->s;
	const struct sum_breakdown_view *m = &s->mean;

	if (!p->dominant && summary_host_basis(s)) {
		pg_buf_adds(b, "no device work (a host profile): no device time split\n");
	} else if (!p->dominant) {
		pg_buf_adds(b, "no device has a steady window: no time split\n");
	} else {
		pg_buf_addf(b, "%s dominates: compute ", p->dominant);
		t_share(b, m->compute_share);
		pg_buf_adds(b, ", exposed communication ");
		t_share(b, m->exposed_comm_share);
		pg_buf_adds(b, ", exposed memory copies ");
		t_share(b, m->exposed_memcpy_share);
		pg_buf_adds(b, ", idle ");
		t_share(b, m->idle_share);
		pg_buf_adds(b, " (mean over the devices)\n");
	}
	t_host(b, &s->host);
	const struct sum_collective *c = p->worst;
	if (!c) {
		pg_buf_adds(b, "no collectives\n");
		return;
	}
	pg_buf_adds(b, "worst collective: ");
	plain(b, c->kind, 60);
	pg_buf_adds(b, ", ");
	report_time(b, c->us_per_step);
	pg_buf_adds(b, " per step");
	t_of_step(b, p, c->us_per_step);
	if (c->busbw_gbps >= 0)
		pg_buf_addf(b, ", bus bandwidth %.2f GB/s", c->busbw_gbps);
	pg_buf_addc(b, '\n');
	if (p->low && p->low != c) {
		pg_buf_adds(b, "lowest bus bandwidth: ");
		plain(b, p->low->kind, 60);
		pg_buf_addf(b, ", %.2f GB/s\n", p->low->busbw_gbps);
	}
}

static void t_op_context(struct pg_buf *b, const struct pick *p)
{
	const struct summary *s = p->s;
	const struct sum_op *o = p->op;

	plain(b, o->name, 200);
	pg_buf_addf(b, "\nrank %u of %u ops by self time: ", p->matched, p->n_ops);
	t_op(b, p, o);
	if (p->fam) {
		pg_buf_adds(b, "family ");
		plain(b, p->fam->family, 40);
		pg_buf_adds(b, ": ");
		report_time(b, p->fam->us_per_step);
		pg_buf_adds(b, " per step");
		t_of_step(b, p, p->fam->us_per_step);
		pg_buf_addc(b, '\n');
	}
	for (uint32_t k = 0; k < p->n; k++) {
		if (p->v[k] == o)
			continue;
		pg_buf_adds(b, "  around: ");
		t_op(b, p, p->v[k]);
	}
	for (uint32_t i = 0; i < s->n_gaps; i++)
		if (str_is(s->gaps[i].op, o->name) || str_is(s->gaps[i].marker, o->name)) {
			pg_buf_adds(b, "  gap: ");
			t_gap(b, p, &s->gaps[i]);
		}
}

int report_query_text(const struct summary *s, const struct report_query *q, struct pg_buf *out)
{
	struct pick p;
	int rc = select_answer(s, q, &p);

	if (rc)
		goto out;
	switch (q->topic) {
	case REPORT_Q_OPS:
		pg_buf_addf(out, "top %u of %u ops by self time per step", p.n, p.matched);
		if (q->family || q->category)
			pg_buf_addf(out, " (%s %s)", q->family ? "family" : "category",
				    q->family ? q->family : q->category);
		pg_buf_adds(out, ":\n");
		for (uint32_t k = 0; k < p.n; k++) {
			pg_buf_addf(out, "%2u. ", k + 1);
			t_op(out, &p, p.v[k]);
		}
		break;
	case REPORT_Q_BREAKDOWN: t_breakdown(out, &p); break;
	case REPORT_Q_GAPS:
		if (q->before) {
			pg_buf_addf(out, "%u gap%s before ", p.matched, p.matched == 1 ? "" : "s");
			plain(out, q->before, 100);
			pg_buf_adds(out, " (as the op, or as the marker op):\n");
		} else {
			pg_buf_addf(out, "%u gaps, largest first:\n", p.matched);
		}
		if (!p.matched && summary_host_basis(s))
			pg_buf_adds(out, "(a gap is idle device time; a host profile has none: the "
					 "step thread's idle time is in 'query breakdown')\n");
		for (uint32_t k = 0; k < p.n; k++)
			t_gap(out, &p, p.v[k]);
		break;
	case REPORT_Q_REGIONS:
		pg_buf_addf(out, "%u regions (inclusive time per step):\n", p.n);
		if (!s->n_regions && summary_host_basis(s))
			pg_buf_adds(out,
				    "(regions are the scopes of device records; a host profile "
				    "has none: 'query ops' lists the host's ops)\n");
		for (uint32_t k = 0; k < p.n; k++) {
			const struct sum_region *r = p.v[k];
			const char *leaf = strrchr(r->path, '/');
			for (uint32_t d = 1; d < r->depth; d++)
				pg_buf_adds(out, "  ");
			plain(out, leaf ? leaf + 1 : r->path, 80);
			pg_buf_adds(out, "  ");
			report_time(out, r->inclusive_us_per_step);
			t_of_step(out, &p, r->inclusive_us_per_step);
			pg_buf_addc(out, '\n');
		}
		break;
	case REPORT_Q_OP: t_op_context(out, &p); break;
	case REPORT_Q_NEXT:
		if (!p.n)
			pg_buf_adds(out, "nothing stands out: no candidate\n");
		for (uint32_t k = 0; k < p.n; k++) {
			const struct sum_candidate *c = p.v[k];
			pg_buf_addf(out, "%u. ", k + 1);
			plain(out, c->title ? c->title : c->id, 200);
			pg_buf_adds(out, "\n   ");
			plain(out, c->evidence ? c->evidence : "", 400);
			pg_buf_addc(out, '\n');
		}
		break;
	case REPORT_Q_COUNT: break;
	}
out:
	free(p.v);
	return rc;
}
