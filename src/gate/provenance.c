/*
 * Provenance: whether a baseline and a candidate may be compared at all. The
 * identity fields (summary/identity.c) must agree, or the comparison is
 * refused as incomparable with each differing field named; the same profile
 * bytes on both sides are refused too (a comparison of a run with itself says
 * nothing); and the workload fingerprint, the share of the baseline's op time
 * spent in ops the candidate also runs, tells another model from a changed
 * one when the labels do not.
 */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- provenance ---- */

/* A field's value as provenance shows it: "null" when absent. */
static char *identity_text(const struct summary *s, const char *field)
{
	const struct summary_id_field *f = summary_id_find(field);
	struct pg_buf b = PG_BUF_INIT;
	const char *v = NULL;

	if (f && summary_id_text(s, f, &b))
		return pg_buf_detach(&b, NULL);
	if (strncmp(field, "labels.", 7) == 0)
		v = summary_label_value(s, field + 7);
	pg_buf_release(&b);
	return pg_xstrdup(v ? v : "null");
}

static void add_diff(struct gate_result *r, const char *field, char *b, char *c)
{
	r->diff = pg_xrealloc(r->diff, (r->n_diff + 1) * sizeof(*r->diff));
	r->diff[r->n_diff++] = (struct gate_field_diff){pg_xstrdup(field), b, c};
}

/* Two summaries made from the same profile bytes: every file's sha256 alike. */
static int same_files(const struct summary *b, const struct summary *c)
{
	const char **x, **y;
	int same = 1;

	if (b->n_files == 0 || b->n_files != c->n_files)
		return 0;
	x = pg_xcalloc(b->n_files, sizeof(char *));
	y = pg_xcalloc(c->n_files, sizeof(char *));
	for (uint32_t i = 0; i < b->n_files; i++) {
		x[i] = b->files[i].sha256;
		y[i] = c->files[i].sha256;
		if (!x[i] || !y[i])
			same = 0;
	}
	if (same) {
		qsort(x, b->n_files, sizeof(char *), pg_cmp_str);
		qsort(y, c->n_files, sizeof(char *), pg_cmp_str);
		for (uint32_t i = 0; i < b->n_files && same; i++)
			same = strcmp(x[i], y[i]) == 0;
	}
	free(x);
	free(y);
	return same;
}

/*
 * The workload fingerprint: the share of the baseline's op self time (the ops
 * the gate judges, by canonical name, without the "(other ops)" row) spent in
 * ops the candidate also runs. A change of speed keeps it near 1, a new
 * kernel in the candidate does not lower it (that is a regression to judge),
 * and another model shares few kernels. NAN when a side has no op time.
 */
#define OTHER_OPS "(other ops)"

/* A side's op names, sorted for lookups (lists hold up to 5,001 ops). */
struct op_names {
	const char **v;
	uint32_t n;
};

static void op_names_init(struct op_names *x, const struct summary *s)
{
	const struct sum_op *o = summary_step_ops(s, &x->n);

	x->v = pg_xcalloc(x->n + 1, sizeof(char *));
	for (uint32_t i = 0; i < x->n; i++)
		x->v[i] = o[i].name;
	qsort(x->v, x->n, sizeof(char *), pg_cmp_str);
}

static int runs_op(const struct op_names *x, const char *name)
{
	return x->n && bsearch(&name, x->v, x->n, sizeof(char *), pg_cmp_str) != NULL;
}

static double op_time(const struct sum_op *ops, uint32_t n)
{
	double t = 0;

	for (uint32_t i = 0; i < n; i++)
		if (strcmp(ops[i].name, OTHER_OPS) != 0)
			t += ops[i].self_us_per_step;
	return t;
}

static double workload_overlap(const struct summary *b, const struct summary *c,
			       const struct op_names *cn)
{
	uint32_t nb, nc;
	const struct sum_op *ob = summary_step_ops(b, &nb), *oc = summary_step_ops(c, &nc);
	double tb = op_time(ob, nb), shared = 0;

	if (!(tb > 0) || !(op_time(oc, nc) > 0))
		return NAN;
	for (uint32_t i = 0; i < nb; i++)
		if (strcmp(ob[i].name, OTHER_OPS) != 0 && runs_op(cn, ob[i].name))
			shared += ob[i].self_us_per_step;
	return shared / tb;
}

/* A kernel name cut to 60 bytes (C++ signatures run to hundreds), never
 * inside a UTF-8 sequence. */
static void short_name(struct pg_buf *b, const char *name)
{
	size_t n = strlen(name), keep = 60;

	if (n <= keep + 3) {
		pg_buf_adds(b, name);
		return;
	}
	while (keep > 0 && ((unsigned char)name[keep] & 0xC0) == 0x80)
		keep--;
	pg_buf_add(b, name, keep);
	pg_buf_adds(b, "...");
}

/* The evidence: s's three largest ops the other side does not run, with their
 * share of s's op time, after its model. */
static char *only_here(const struct summary *s, const struct op_names *other)
{
	uint32_t n, shown = 0, pick[3];
	const struct sum_op *o = summary_step_ops(s, &n);
	double t = op_time(o, n);
	struct pg_buf b = PG_BUF_INIT;

	pg_buf_adds(&b, s->device_kind ? s->device_kind : "null");
	pg_buf_adds(&b, "; only here:");
	/* picked, not assumed sorted: a summary from history keeps its own order */
	while (shown < 3) {
		uint32_t best = UINT32_MAX;
		for (uint32_t i = 0; i < n; i++) {
			int taken = 0;
			for (uint32_t k = 0; k < shown; k++)
				taken |= pick[k] == i;
			if (taken || strcmp(o[i].name, OTHER_OPS) == 0 ||
			    (best != UINT32_MAX &&
			     o[i].self_us_per_step <= o[best].self_us_per_step) ||
			    runs_op(other, o[i].name))
				continue;
			best = i;
		}
		if (best == UINT32_MAX)
			break;
		pg_buf_adds(&b, shown ? ", " : " ");
		short_name(&b, o[best].name);
		pg_buf_addf(&b, " (%.1f%%)", 100 * o[best].self_us_per_step / t);
		pick[shown++] = best;
	}
	if (!shown)
		pg_buf_adds(&b, " none");
	return pg_buf_detach(&b, NULL);
}

static void check_workload(struct gate_result *r)
{
	double min = r->thresholds->min_workload_overlap;
	struct op_names bn, cn;

	op_names_init(&bn, r->baseline);
	op_names_init(&cn, r->candidate);
	r->workload_overlap = workload_overlap(r->baseline, r->candidate, &cn);
	if (min > 0 && !isnan(r->workload_overlap) && r->workload_overlap < min)
		add_diff(r, "workload", only_here(r->baseline, &cn), only_here(r->candidate, &bn));
	free(bn.v);
	free(cn.v);
}

/* A device_kind that names no model: only its kind ("gpu", "tpu", "other"). */
static int model_unknown(const char *kind)
{
	return strcmp(kind, "gpu") == 0 || strcmp(kind, "tpu") == 0 || strcmp(kind, "other") == 0;
}

/* The one line saying why: the fields that differ, both sides' models, and
 * for the workload the overlap and the ops only one side runs. */
static void refusal_line(struct gate_result *r)
{
	struct pg_buf b = PG_BUF_INIT;
	const char *kb = r->baseline->device_kind ? r->baseline->device_kind : "null";
	const char *kc = r->candidate->device_kind ? r->candidate->device_kind : "null";

	pg_buf_addf(&b, "%s%s vs %s%s: ", kb, model_unknown(kb) ? " (model unknown)" : "", kc,
		    model_unknown(kc) ? " (model unknown)" : "");
	for (uint32_t i = 0; i < r->n_diff; i++) {
		const struct gate_field_diff *d = &r->diff[i];
		pg_buf_adds(&b, i ? "; " : "");
		if (strcmp(d->field, "workload") == 0)
			pg_buf_addf(&b,
				    "different workloads: %.1f%% of the baseline's op time is in "
				    "ops the candidate runs (at least %.0f%% needed); baseline %s; "
				    "candidate %s",
				    100 * r->workload_overlap,
				    100 * r->thresholds->min_workload_overlap, d->baseline,
				    d->candidate);
		else
			pg_buf_addf(&b, "%s differs (%s vs %s)", d->field, d->baseline,
				    d->candidate);
	}
	r->refusal = pg_buf_detach(&b, NULL);
}

void gate_check_provenance(struct gate_result *r)
{
	const struct gate_inputs *in = &r->in;

	r->provenance = "comparable";
	if ((in->baseline_sha256 && in->candidate_sha256 &&
	     strcmp(in->baseline_sha256, in->candidate_sha256) == 0)) {
		r->provenance = "identical-inputs";
		add_diff(r, "input sha256", pg_xstrdup(in->baseline_sha256),
			 pg_xstrdup(in->candidate_sha256));
		return;
	}
	if (same_files(r->baseline, r->candidate)) {
		r->provenance = "identical-inputs";
		add_diff(r, "profile sha256", pg_xstrdup(r->baseline->files[0].sha256),
			 pg_xstrdup(r->candidate->files[0].sha256));
		return;
	}
	for (uint32_t i = 0; i < r->thresholds->n_identity; i++) {
		const char *f = r->thresholds->identity[i];
		char *b = identity_text(r->baseline, f), *c = identity_text(r->candidate, f);
		/* a side without steps is a capture problem, not another workload:
		 * its step metrics come out inconclusive instead */
		int no_steps = strcmp(f, "step_source") == 0 &&
			       (strcmp(b, "none") == 0 || strcmp(c, "none") == 0);
		if (!no_steps && strcmp(b, c) != 0) {
			add_diff(r, f, b, c);
			continue;
		}
		free(b);
		free(c);
	}
	check_workload(r);
	if (r->n_diff > 0) {
		r->provenance = "incomparable";
		refusal_line(r);
	}
}
