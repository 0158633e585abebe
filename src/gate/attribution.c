/*
 * Attribution: which parts of the step moved, so a verdict says where the
 * time went. The parts are the step's op families, its ops and the breakdown
 * parts that move with the whole step (exposed communication, memory copies,
 * idle). A part is listed when its change is beyond its own noise (its
 * metric's sd, else its rule's prior) in the step's direction, or when its
 * own rule warned or failed; "the rest" is the step's change less every
 * listed part, an op counted once when its family is listed too, so the
 * listed parts and the rest add up to the step's change.
 */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- attribution ---- */

/* The split per step, the mean over the devices with a steady window (as
 * breakdown.mean): a device without one has no step to split. */
static void breakdown_us(const struct summary *s, double out[SUM_N_PARTS])
{
	double steps = s->basis_steady_steps ? s->basis_steady_steps : 1;
	uint32_t n = 0;

	memset(out, 0, SUM_N_PARTS * sizeof(double));
	for (uint32_t d = 0; d < s->n_devices; d++) {
		const struct sum_split *x = &s->devices[d].steady;
		if (!summary_device_steady(&s->devices[d]))
			continue;
		n++;
		for (int k = 0; k < SUM_N_PARTS; k++)
			out[k] += summary_part_us(x, k) / steps;
	}
	for (int k = 0; n && k < SUM_N_PARTS; k++)
		out[k] /= n;
}

/* One part's change, for attribution. */
struct part_change {
	double delta, sd; /* the change per step and its sd */
	double min_us;	  /* the least change its rule counts: min_step_share of the step */
	int flagged;	  /* its metric warned or failed: beyond noise by its own test */
};

/* What a part needs to be listed (attribution_z): dir, the step's direction
 * when it moved beyond noise, else 0; z_with, the z a part moving that way
 * (or either way, dir 0) needs, z_against the z of one moving against it. */
struct attr_need {
	int dir;
	double z_with, z_against;
};

/* A part of the step change, listed when it is beyond its noise (its z, the
 * change over its sd, reaches what *need asks of its direction) or when its
 * own metric warned or failed, and at least its rule's least change. */
static void add_attr(struct gate_result *r, const struct attr_need *need, enum gate_attr_kind kind,
		     const char *name, const struct part_change *ch, char *detail,
		     const char *family)
{
	double z = gate_z(ch->delta, ch->sd);
	double z_need = need->dir && need->dir * z < 0 ? need->z_against : need->z_with;

	/* a part without a noise model (no rule judges it) cannot be beyond it */
	if (ch->delta == 0 || !isfinite(ch->delta) || !(ch->sd > 0) ||
	    !(ch->flagged || fabs(z) >= z_need) || fabs(ch->delta) < ch->min_us) {
		free(detail);
		return;
	}
	r->attribution =
	    pg_xrealloc(r->attribution, (r->n_attribution + 1) * sizeof(*r->attribution));
	r->attribution[r->n_attribution++] =
	    (struct gate_attribution){kind, pg_xstrdup(name), ch->delta, detail, family, z};
}

/* A family's or op's change. The change and sd are its metric's when judged
 * (the median over runs and its noise model), else the representatives'
 * difference with the rule's prior. */
static void part_change(const struct gate_result *r, const struct gate_attr_ctx *t,
			const char *kind, const char *name, double b, double c,
			struct part_change *out)
{
	char *metric = pg_xasprintf("%s.%s.us_per_step", kind, name);
	const struct gate_metric_result *m = gate_find_result(r, metric);
	const struct gate_rule *rule = gate_rule_for(r->thresholds, metric);

	memset(out, 0, sizeof(*out));
	if (m && isfinite(m->noise_sd)) {
		out->delta = m->delta;
		out->sd = m->noise_sd;
		out->flagged = m->verdict == GATE_WARN || m->verdict == GATE_FAIL;
	} else {
		out->delta = c - b;
		out->sd = gate_noise_prior_sd(rule, fmax(fabs(b), fabs(c)), t->step_us) *
			  sqrt(gate_noise_median_var(t->runs_b) + gate_noise_median_var(t->runs_c));
	}
	out->min_us = rule && rule->min_step_share > 0 ? rule->min_step_share * t->step_us : 0;
	free(metric);
}

const struct sum_family *gate_find_family(const struct summary *s, const char *name)
{
	uint32_t n;
	const struct sum_family *f = summary_step_families(s, &n);

	for (uint32_t i = 0; i < n; i++)
		if (strcmp(f[i].family, name) == 0)
			return &f[i];
	return NULL;
}

/* An op of no known family (a baseline made from history records, which keep
 * op times by name only) matches its name in any family. */
static const struct sum_op *find_op(const struct summary *s, const char *name, const char *family)
{
	uint32_t n;
	const struct sum_op *o = summary_step_ops(s, &n);

	for (uint32_t i = 0; i < n; i++)
		if (strcmp(o[i].name, name) == 0 &&
		    (!family || !o[i].family || strcmp(o[i].family, family) == 0))
			return &o[i];
	return NULL;
}

/* How far a change goes in the step's direction dir (1: slower, -1:
 * faster), or its size when the step did not move (0): what the causes of a
 * change are ranked by. */
static double toward(int dir, double delta)
{
	return dir ? dir * delta : fabs(delta);
}

struct op_delta {
	const char *name, *family;
	double delta;
	double key; /* toward(dir, delta) */
};

static int cmp_op_delta(const void *x, const void *y)
{
	const struct op_delta *a = x, *b = y;
	if (a->key != b->key)
		return a->key > b->key ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Every op's self-time change, each op once (name and family). */
static struct op_delta *op_deltas(const struct summary *b, const struct summary *c, int dir,
				  uint32_t *n)
{
	uint32_t nb, nc, k = 0;
	const struct sum_op *bo = summary_step_ops(b, &nb), *co = summary_step_ops(c, &nc);
	struct op_delta *d = pg_xcalloc((size_t)nb + nc + 1, sizeof(*d));

	for (uint32_t i = 0; i < nb; i++) {
		const struct sum_op *o = &bo[i];
		const struct sum_op *x = find_op(c, o->name, o->family);
		d[k++] = (struct op_delta){o->name, o->family,
					   (x ? x->self_us_per_step : 0) - o->self_us_per_step, 0};
	}
	/* a baseline that carries no op (a window of records without them) says
	 * nothing of the candidate's: none is new */
	for (uint32_t i = 0; nb && i < nc; i++) {
		const struct sum_op *o = &co[i];
		if (!find_op(b, o->name, o->family))
			d[k++] = (struct op_delta){o->name, o->family, o->self_us_per_step, 0};
	}
	for (uint32_t i = 0; i < k; i++)
		d[i].key = toward(dir, d[i].delta);
	*n = k;
	return d;
}

/* The ops of one family that moved most in the step's direction, as a
 * comma-separated list; NULL when none. */
static char *family_detail(const struct op_delta *d, uint32_t n, const char *family, int dir)
{
	struct pg_buf b = PG_BUF_INIT;
	int k = 0;

	for (uint32_t i = 0; i < n && k < 3; i++) {
		if (!d[i].family || strcmp(d[i].family, family) != 0 || d[i].delta == 0)
			continue;
		if ((dir > 0 && d[i].delta < 0) || (dir < 0 && d[i].delta > 0))
			continue;
		if (k++)
			pg_buf_addc(&b, GATE_DETAIL_SEP);
		pg_buf_adds(&b, d[i].name);
	}
	if (k == 0) {
		pg_buf_release(&b);
		return NULL;
	}
	return pg_buf_detach(&b, NULL);
}

static int attr_rank(enum gate_attr_kind k)
{
	return k == GATE_ATTR_FAMILY ? 0 : k == GATE_ATTR_OP ? 1 : 2;
}

/* An attribution with its rank key, so the sort needs nothing outside. */
struct attr_sort {
	double key;
	struct gate_attribution a;
};

static int cmp_attr(const void *x, const void *y)
{
	const struct attr_sort *p = x, *q = y;
	if (p->key != q->key)
		return p->key > q->key ? -1 : 1;
	if (attr_rank(p->a.kind) != attr_rank(q->a.kind))
		return attr_rank(p->a.kind) - attr_rank(q->a.kind);
	return strcmp(p->a.name, q->a.name);
}

/* Furthest beyond noise in the step's direction first, then families, ops,
 * breakdown. */
static void sort_attribution(struct gate_result *r, int dir)
{
	struct attr_sort *s;

	if (r->n_attribution < 2)
		return;
	s = pg_xcalloc(r->n_attribution, sizeof(*s));
	for (uint32_t i = 0; i < r->n_attribution; i++)
		s[i] = (struct attr_sort){toward(dir, r->attribution[i].z), r->attribution[i]};
	qsort(s, r->n_attribution, sizeof(*s), cmp_attr);
	for (uint32_t i = 0; i < r->n_attribution; i++)
		r->attribution[i] = s[i].a;
	free(s);
}

#define ATTR_MAX 20

/* The one-sided level at which the parts of a step that moved beyond noise
 * are listed: the step's change is already established, and the question is
 * which parts carry it. */
#define ATTR_WITH_STEP_LEVEL 0.05

/* The z a part needs. When the step did not move beyond noise: the two-sided
 * Bonferroni bound over the parts judged at the file's level, at least 3 (of
 * some twenty parts looked at, one is past z = 2 by chance about every other
 * time), either way. When it did: z past the one-sided 5 % quantile (1.645)
 * in the step's direction, and that bound against it. */
static void attribution_need(const struct gate_result *r, const struct gate_attr_ctx *t,
			     struct attr_need *need)
{
	const struct gate_metric_result *m = gate_find_result(r, "step.median_us");
	const struct gate_rule *rule = m ? m->rule : NULL;
	double alpha =
	    rule && rule->significance >= 0 ? rule->significance : r->thresholds->significance;
	double q = gate_norm_quantile_upper(r->thresholds->significance / 2 /
					    (t->m_parts > 1 ? t->m_parts : 1));
	double z;

	if (q < 3)
		q = 3;
	need->dir = 0;
	need->z_with = need->z_against = q;
	if (!r->step_tested || !m)
		return;
	z = gate_z(m->delta, m->noise_sd);
	if (!(gate_norm_upper(fabs(z)) < alpha))
		return;
	need->dir = z > 0 ? 1 : -1;
	need->z_with = gate_norm_quantile_upper(ATTR_WITH_STEP_LEVEL);
}

void gate_attribute(struct gate_result *r, const struct gate_attr_ctx *t)
{
	const struct summary *b = r->baseline, *c = r->candidate;
	const struct gate_metric_result *step = gate_find_result(r, "step.median_us");
	double step_sd = step ? step->noise_sd : NAN;
	struct part_change ch;
	struct attr_need need;
	struct op_delta *d;
	int dir;
	uint32_t n, nbf, ncf;
	const struct sum_family *bf = summary_step_families(b, &nbf);
	const struct sum_family *cf = summary_step_families(c, &ncf);

	attribution_need(r, t, &need);
	r->attribution_z = need.z_with;
	r->attribution_z_against = need.z_against;
	dir = need.dir;
	breakdown_us(b, r->bd_baseline_us);
	breakdown_us(c, r->bd_candidate_us);
	d = op_deltas(b, c, dir, &n);
	if (n > 1)
		qsort(d, n, sizeof(*d), cmp_op_delta);
	for (uint32_t i = 0; i < nbf; i++) {
		const struct sum_family *f = &bf[i], *x = gate_find_family(c, f->family);
		part_change(r, t, "family", f->family, f->us_per_step, x ? x->us_per_step : 0, &ch);
		add_attr(r, &need, GATE_ATTR_FAMILY, f->family, &ch,
			 family_detail(d, n, f->family, dir), NULL);
	}
	for (uint32_t i = 0; nbf && i < ncf; i++) {
		const struct sum_family *f = &cf[i];
		if (gate_find_family(b, f->family))
			continue;
		part_change(r, t, "family", f->family, 0, f->us_per_step, &ch);
		add_attr(r, &need, GATE_ATTR_FAMILY, f->family, &ch,
			 family_detail(d, n, f->family, dir), NULL);
	}
	for (uint32_t i = 0; i < n; i++) {
		part_change(r, t, "op", d[i].name, 0, d[i].delta, &ch);
		add_attr(r, &need, GATE_ATTR_OP, d[i].name, &ch, NULL, d[i].family);
	}
	/* exposed communication, memory copies and idle move with the whole step */
	for (int k = SUM_PART_EXPOSED_COMM; k < SUM_N_PARTS; k++) {
		struct part_change bd = {r->bd_candidate_us[k] - r->bd_baseline_us[k], step_sd, 0,
					 0};
		add_attr(r, &need, GATE_ATTR_BREAKDOWN, summary_parts[k].name, &bd, NULL, NULL);
	}
	free(d);
	sort_attribution(r, dir);
	while (r->n_attribution > ATTR_MAX) {
		struct gate_attribution *a = &r->attribution[--r->n_attribution];
		free(a->name);
		free(a->detail);
	}
	r->attribution_remainder_us = r->step_delta_us;
	for (uint32_t i = 0; i < r->n_attribution; i++)
		if (!gate_attribution_nested(r, i))
			r->attribution_remainder_us -= r->attribution[i].delta_us_per_step;
}

int gate_attribution_nested(const struct gate_result *r, uint32_t i)
{
	const struct gate_attribution *a = &r->attribution[i];

	if (a->kind != GATE_ATTR_OP || !a->family)
		return 0;
	for (uint32_t k = 0; k < r->n_attribution; k++)
		if (r->attribution[k].kind == GATE_ATTR_FAMILY &&
		    strcmp(r->attribution[k].name, a->family) == 0)
			return 1;
	return 0;
}
