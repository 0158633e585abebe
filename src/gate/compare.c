/*
 * Compare a candidate summary against a baseline: provenance first (unlike
 * runs and identical inputs are refused), then every catalogue metric against
 * its rule, step metrics with a significance test on step samples, then the
 * attribution of the step-time change and the overall verdict.
 *
 * Decisions (README "Thresholds files"): a change must reach every limit a
 * level gives (relative and absolute); a tested metric past its fail limit
 * without significance is a warn; too few samples on either side make tested
 * metrics inconclusive, and cap every other metric at warn (one step shows no
 * noise level, so a difference between runs cannot be told from jitter); a
 * quality action "inconclusive" turns passing step
 * metrics inconclusive but never hides a warn or fail.
 */
#include "gate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const gate_breakdown_names[4] = {"compute", "exposed communication", "exposed memcpy",
					     "idle"};

static const char *const verdict_names[] = {
    [GATE_PASS] = "pass", [GATE_IMPROVED] = "improved",		[GATE_WARN] = "warn",
    [GATE_FAIL] = "fail", [GATE_INCONCLUSIVE] = "inconclusive", [GATE_NEW] = "new",
    [GATE_GONE] = "gone", [GATE_INCOMPARABLE] = "incomparable", [GATE_IGNORE] = "ignore",
};

const char *gate_verdict_name(enum gate_verdict v)
{
	return (unsigned)v < PG_ARRAY_LEN(verdict_names) ? verdict_names[v] : "?";
}

int gate_verdict_severity(enum gate_verdict v)
{
	switch (v) {
	case GATE_IMPROVED: return 1;
	case GATE_INCONCLUSIVE: return 2;
	case GATE_WARN: return 3;
	case GATE_FAIL: return 4;
	case GATE_INCOMPARABLE: return 5;
	default: return 0;
	}
}

int gate_verdict_exit(enum gate_verdict v)
{
	if (v == GATE_FAIL)
		return PG_EXIT_FAIL;
	if (v == GATE_INCOMPARABLE)
		return PG_EXIT_INCOMPARABLE;
	return PG_EXIT_OK;
}

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

static void check_provenance(struct gate_result *r)
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
	if (r->n_diff > 0)
		r->provenance = "incomparable";
}

/* ---- quality ---- */

static enum gate_verdict quality_action(const struct gate_thresholds *th, const char *code)
{
	enum gate_verdict star = GATE_IGNORE;

	for (uint32_t i = 0; i < th->n_quality; i++) {
		if (strcmp(th->quality[i].code, code) == 0)
			return th->quality[i].action;
		if (strcmp(th->quality[i].code, "*") == 0)
			star = th->quality[i].action;
	}
	return star;
}

static void collect_quality(struct gate_result *r)
{
	const struct summary *side[2] = {r->baseline, r->candidate};

	for (int k = 0; k < 2; k++)
		for (uint32_t i = 0; i < side[k]->n_warnings; i++) {
			const struct sum_warning *w = &side[k]->warnings[i];
			r->quality =
			    pg_xrealloc(r->quality, (r->n_quality + 1) * sizeof(*r->quality));
			r->quality[r->n_quality++] = (struct gate_quality_hit){
			    k, pg_xstrdup(w->code), pg_xstrdup(w->message ? w->message : ""),
			    quality_action(r->thresholds, w->code)};
		}
}

/* ---- samples ---- */

struct samples {
	double *v;
	uint32_t n;
};

static void steady_steps(const struct summary *s, struct samples *x)
{
	x->v = pg_xcalloc(s->n_steps + 1, sizeof(double));
	x->n = 0;
	for (uint32_t i = 0; i < s->n_steps; i++)
		if (s->steps[i].steady)
			x->v[x->n++] = s->steps[i].us;
}

static void device_steps(const struct summary *s, struct samples *x)
{
	size_t cap = (size_t)s->n_steps * (s->n_devices ? s->n_devices : 1) + 1;

	x->v = pg_xcalloc(cap, sizeof(double));
	x->n = 0;
	for (uint32_t i = 0; i < s->n_steps; i++) {
		if (!s->steps[i].steady || !s->steps[i].device_us)
			continue;
		for (uint32_t d = 0; d < s->n_devices; d++)
			if (s->steps[i].device_us[d] >= 0)
				x->v[x->n++] = s->steps[i].device_us[d];
	}
}

/* Step samples of both sides on one basis: steps where both have enough,
 * else per-device step times when those are enough (many devices, few
 * steps), else steps (and too few). */
static const char *choose_samples(const struct gate_result *r, uint32_t need, struct samples *b,
				  struct samples *c)
{
	struct samples db, dc;

	steady_steps(r->baseline, b);
	steady_steps(r->candidate, c);
	if (b->n >= need && c->n >= need)
		return "steps";
	device_steps(r->baseline, &db);
	device_steps(r->candidate, &dc);
	if (db.n >= need && dc.n >= need && (db.n > b->n || dc.n > c->n)) {
		free(b->v);
		free(c->v);
		*b = db;
		*c = dc;
		return "device-steps";
	}
	free(db.v);
	free(dc.v);
	return "steps";
}

/* ---- one metric ---- */

struct test_ctx {
	const char *samples;
	uint32_t n_b, n_c;
	uint32_t need; /* step samples a fail needs on each side */
	double p_slower, p_faster;
	int quality_inconclusive;
	const char *quality_code;
};

static int reaches(const struct gate_limit *l, double worse, double worse_rel)
{
	if (!l->has_relative && !l->has_absolute)
		return 0;
	if (l->has_relative && !(worse_rel >= l->relative - 1e-12))
		return 0;
	if (l->has_absolute && !(worse >= l->absolute - 1e-12))
		return 0;
	return 1;
}

static void judge(struct gate_metric_result *m, const struct gate_thresholds *th,
		  const struct test_ctx *t)
{
	const struct gate_rule *r = m->rule;
	double worse, worse_rel, alpha;
	uint32_t need;

	if (!r || r->direction == GATE_INFO) {
		m->verdict = GATE_PASS;
		return;
	}
	worse = r->direction == GATE_LOWER_IS_BETTER ? m->delta : -m->delta;
	worse_rel = m->baseline != 0 ? worse / fabs(m->baseline) : (worse > 0 ? INFINITY : 0);
	need = r->min_samples >= 0 ? (uint32_t)r->min_samples : th->min_samples;
	if (!r->test) {
		if (reaches(&r->fail, worse, worse_rel) && (t->n_b < need || t->n_c < need)) {
			/* one or two steps show no noise level: a real difference
			 * and run-to-run jitter look alike */
			m->verdict = GATE_WARN;
			m->note = pg_xasprintf("past the fail limit, but a fail needs %u steps or "
					       "device-steps on each side (%u and %u)",
					       need, t->n_b, t->n_c);
		} else if (reaches(&r->fail, worse, worse_rel))
			m->verdict = GATE_FAIL;
		else if (reaches(&r->warn, worse, worse_rel))
			m->verdict = GATE_WARN;
		else if (reaches(&r->warn, -worse, -worse_rel))
			m->verdict = GATE_IMPROVED;
		else
			m->verdict = GATE_PASS;
		return;
	}
	alpha = r->significance >= 0 ? r->significance : th->significance;
	m->tested = 1;
	m->samples = t->samples;
	m->n_baseline = t->n_b;
	m->n_candidate = t->n_c;
	if (t->n_b < need || t->n_c < need) {
		m->tested = 0;
		m->verdict = GATE_INCONCLUSIVE;
		m->note = pg_xasprintf("too few steps: %u and %u, %u needed on each side", t->n_b,
				       t->n_c, need);
		return;
	}
	m->p_value = worse >= 0 ? t->p_slower : t->p_faster;
	if (reaches(&r->fail, worse, worse_rel)) {
		m->verdict = t->p_slower < alpha ? GATE_FAIL : GATE_WARN;
		if (m->verdict == GATE_WARN)
			m->note =
			    pg_xasprintf("past the fail limit but not significant at %g", alpha);
	} else if (reaches(&r->warn, worse, worse_rel)) {
		m->verdict = GATE_WARN;
	} else if (reaches(&r->warn, -worse, -worse_rel) && t->p_faster < alpha) {
		m->verdict = GATE_IMPROVED;
	} else {
		m->verdict = GATE_PASS;
	}
}

static void apply_quality(struct gate_metric_result *m, const struct test_ctx *t)
{
	if (!t->quality_inconclusive || m->kind != GATE_K_STEP || !m->rule ||
	    m->rule->direction == GATE_INFO)
		return;
	if (m->verdict == GATE_PASS || m->verdict == GATE_IMPROVED) {
		m->verdict = GATE_INCONCLUSIVE;
		free(m->note);
		m->note = pg_xasprintf("trace quality: %s", t->quality_code);
	}
}

static void add_metric(struct gate_result *r, const struct gate_metric *mb,
		       const struct gate_metric *mc, const char *name, const struct test_ctx *t)
{
	const struct gate_rule *rule = gate_rule_for(r->thresholds, name);
	const struct gate_metric *any = mb ? mb : mc;
	struct gate_metric_result m;
	double share_b = mb ? mb->step_share : -1, share_c = mc ? mc->step_share : -1;

	memset(&m, 0, sizeof(m));
	m.step_share = share_b > share_c ? share_b : share_c;
	if (rule && rule->floor_share >= 0 && any->step_share >= 0 &&
	    m.step_share < rule->floor_share) {
		r->n_below_floor++;
		return;
	}
	m.name = pg_xstrdup(name);
	m.kind = any->kind;
	m.subject = any->subject ? pg_xstrdup(any->subject) : NULL;
	m.rule = rule;
	m.has_baseline = mb != NULL;
	m.has_candidate = mc != NULL;
	m.baseline = mb ? mb->value : 0;
	m.candidate = mc ? mc->value : 0;
	m.delta = m.candidate - m.baseline;
	m.delta_share = mb && mc && mb->value != 0 ? m.delta / fabs(mb->value) : NAN;
	m.p_value = NAN;
	if (mb && mc) {
		judge(&m, r->thresholds, t);
		apply_quality(&m, t);
	} else if (m.kind == GATE_K_STEP && rule && rule->direction != GATE_INFO) {
		m.verdict = GATE_INCONCLUSIVE;
		m.note = pg_xasprintf("no steady steps in the %s", mb ? "candidate" : "baseline");
	} else {
		m.verdict = mb ? GATE_GONE : GATE_NEW;
	}
	r->metrics = pg_xrealloc(r->metrics, (r->n_metrics + 1) * sizeof(*r->metrics));
	r->metrics[r->n_metrics++] = m;
}

/* A gated step metric missing on both sides still gets its row: no steps is
 * inconclusive, never a silent pass. */
static void add_missing_step(struct gate_result *r, const char *name)
{
	const struct gate_rule *rule = gate_rule_for(r->thresholds, name);
	struct gate_metric_result m;

	for (uint32_t i = 0; i < r->n_metrics; i++)
		if (strcmp(r->metrics[i].name, name) == 0)
			return;
	if (!rule || rule->direction == GATE_INFO)
		return;
	memset(&m, 0, sizeof(m));
	m.name = pg_xstrdup(name);
	m.kind = GATE_K_STEP;
	m.rule = rule;
	m.delta_share = NAN;
	m.p_value = NAN;
	m.verdict = GATE_INCONCLUSIVE;
	m.note = pg_xstrdup("no steady steps on either side");
	r->metrics = pg_xrealloc(r->metrics, (r->n_metrics + 1) * sizeof(*r->metrics));
	r->metrics[r->n_metrics++] = m;
}

static void compare_metrics(struct gate_result *r, const struct test_ctx *t)
{
	struct gate_catalogue cb, cc;
	uint32_t i = 0, j = 0;

	gate_catalogue_build(r->baseline, &cb);
	gate_catalogue_build(r->candidate, &cc);
	while (i < cb.n || j < cc.n) {
		int d = i == cb.n ? 1 : j == cc.n ? -1 : strcmp(cb.m[i].name, cc.m[j].name);
		if (d == 0) {
			add_metric(r, &cb.m[i], &cc.m[j], cb.m[i].name, t);
			i++;
			j++;
		} else if (d < 0) {
			add_metric(r, &cb.m[i], NULL, cb.m[i].name, t);
			i++;
		} else {
			add_metric(r, NULL, &cc.m[j], cc.m[j].name, t);
			j++;
		}
	}
	add_missing_step(r, "step.median_us");
	add_missing_step(r, "step.p90_us");
	gate_catalogue_release(&cb);
	gate_catalogue_release(&cc);
}

/* ---- the headline and the test ---- */

static void step_test(struct gate_result *r, struct test_ctx *t)
{
	const struct gate_rule *rule = gate_rule_for(r->thresholds, "step.median_us");
	uint32_t need = rule && rule->min_samples >= 0 ? (uint32_t)rule->min_samples
						       : r->thresholds->min_samples;
	double alpha =
	    rule && rule->significance >= 0 ? rule->significance : r->thresholds->significance;
	struct samples b, c;

	t->need = need;
	t->samples = choose_samples(r, need, &b, &c);
	t->n_b = b.n;
	t->n_c = c.n;
	t->p_slower = gate_mwu_p_greater(b.v, b.n, c.v, c.n);
	t->p_faster = gate_mwu_p_greater(c.v, c.n, b.v, b.n);
	r->has_step = r->baseline->steady.count > 0 && r->candidate->steady.count > 0;
	if (r->has_step) {
		r->step_baseline_us = r->baseline->steady.median_us;
		r->step_candidate_us = r->candidate->steady.median_us;
		r->step_delta_us = r->step_candidate_us - r->step_baseline_us;
		r->step_delta_share =
		    r->step_baseline_us > 0 ? r->step_delta_us / r->step_baseline_us : NAN;
	}
	r->step_samples = t->samples;
	r->step_n_baseline = b.n;
	r->step_n_candidate = c.n;
	r->confidence = 1 - alpha;
	if (r->has_step && b.n >= need && c.n >= need) {
		r->step_tested = 1;
		r->step_p_value = r->step_delta_us >= 0 ? t->p_slower : t->p_faster;
		gate_bootstrap_median_ratio(b.v, b.n, c.v, c.n, r->confidence, 2000,
					    &r->interval_lo_share, &r->interval_hi_share);
		r->has_interval = isfinite(r->interval_lo_share) && isfinite(r->interval_hi_share);
	}
	free(b.v);
	free(c.v);
	for (uint32_t i = 0; i < r->n_quality; i++)
		if (r->quality[i].action == GATE_INCONCLUSIVE) {
			t->quality_inconclusive = 1;
			t->quality_code = r->quality[i].code;
			break;
		}
}

/* ---- attribution ---- */

static void breakdown_us(const struct summary *s, double out[4])
{
	double steps = s->basis_steady_steps ? s->basis_steady_steps : 1;

	memset(out, 0, 4 * sizeof(double));
	for (uint32_t d = 0; d < s->n_devices; d++) {
		const struct sum_split *x = &s->devices[d].steady;
		out[0] += x->compute_us / steps / s->n_devices;
		out[1] += x->exposed_comm_us / steps / s->n_devices;
		out[2] += x->exposed_memcpy_us / steps / s->n_devices;
		out[3] += x->idle_us / steps / s->n_devices;
	}
}

static void add_attr(struct gate_result *r, enum gate_attr_kind kind, const char *name,
		     double delta, char *detail, const char *family)
{
	if (delta == 0 || !isfinite(delta)) {
		free(detail);
		return;
	}
	r->attribution =
	    pg_xrealloc(r->attribution, (r->n_attribution + 1) * sizeof(*r->attribution));
	r->attribution[r->n_attribution++] =
	    (struct gate_attribution){kind, pg_xstrdup(name), delta, detail, family};
}

static const struct sum_family *find_family(const struct summary *s, const char *name)
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
	for (uint32_t i = 0; i < nc; i++) {
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

/* Largest in the step's direction first, then families, ops, breakdown. */
static void sort_attribution(struct gate_result *r, int dir)
{
	struct attr_sort *s;

	if (r->n_attribution < 2)
		return;
	s = pg_xcalloc(r->n_attribution, sizeof(*s));
	for (uint32_t i = 0; i < r->n_attribution; i++)
		s[i] = (struct attr_sort){toward(dir, r->attribution[i].delta_us_per_step),
					  r->attribution[i]};
	qsort(s, r->n_attribution, sizeof(*s), cmp_attr);
	for (uint32_t i = 0; i < r->n_attribution; i++)
		r->attribution[i] = s[i].a;
	free(s);
}

#define ATTR_OPS 10
#define ATTR_MAX 20

static void attribute(struct gate_result *r)
{
	const struct summary *b = r->baseline, *c = r->candidate;
	int dir = !r->has_step || r->step_delta_us == 0 ? 0 : r->step_delta_us > 0 ? 1 : -1;
	struct op_delta *d;
	uint32_t n;

	breakdown_us(b, r->bd_baseline_us);
	breakdown_us(c, r->bd_candidate_us);
	d = op_deltas(b, c, dir, &n);
	if (n > 1)
		qsort(d, n, sizeof(*d), cmp_op_delta);
	uint32_t nbf, ncf;
	const struct sum_family *bf = summary_step_families(b, &nbf);
	const struct sum_family *cf = summary_step_families(c, &ncf);
	for (uint32_t i = 0; i < nbf; i++) {
		const struct sum_family *f = &bf[i], *x = find_family(c, f->family);
		add_attr(r, GATE_ATTR_FAMILY, f->family, (x ? x->us_per_step : 0) - f->us_per_step,
			 family_detail(d, n, f->family, dir), NULL);
	}
	for (uint32_t i = 0; i < ncf; i++) {
		const struct sum_family *f = &cf[i];
		if (!find_family(b, f->family))
			add_attr(r, GATE_ATTR_FAMILY, f->family, f->us_per_step,
				 family_detail(d, n, f->family, dir), NULL);
	}
	for (uint32_t i = 0; i < n && i < ATTR_OPS; i++)
		add_attr(r, GATE_ATTR_OP, d[i].name, d[i].delta, NULL, d[i].family);
	for (int k = 1; k < 4; k++)
		add_attr(r, GATE_ATTR_BREAKDOWN, gate_breakdown_names[k],
			 r->bd_candidate_us[k] - r->bd_baseline_us[k], NULL, NULL);
	free(d);
	sort_attribution(r, dir);
	while (r->n_attribution > ATTR_MAX) {
		struct gate_attribution *a = &r->attribution[--r->n_attribution];
		free(a->name);
		free(a->detail);
	}
}

/* ---- the whole comparison ---- */

/* sha256 of the summary as `profgate summarize` writes it: the same for a
 * summary file given as input and for profiles summarized on the fly. */
static void summary_sha256(const struct summary *s, char hex[65])
{
	struct pg_buf b = PG_BUF_INIT;
	struct pg_sha256 sha;

	summary_write_json(s, &b);
	pg_sha256_init(&sha);
	pg_sha256_update(&sha, b.ptr, b.len);
	pg_sha256_hex(&sha, hex);
	pg_buf_release(&b);
}

static void overall(struct gate_result *r)
{
	enum gate_verdict v = GATE_PASS;

	for (uint32_t i = 0; i < r->n_metrics; i++)
		if (gate_verdict_severity(r->metrics[i].verdict) > gate_verdict_severity(v))
			v = r->metrics[i].verdict;
	for (uint32_t i = 0; i < r->n_quality; i++) {
		enum gate_verdict a = r->quality[i].action;
		if ((a == GATE_WARN || a == GATE_FAIL) &&
		    gate_verdict_severity(a) > gate_verdict_severity(v))
			v = a;
	}
	r->verdict = v;
}

void gate_compare(const struct summary *b, const struct summary *c,
		  const struct gate_thresholds *th, const struct gate_inputs *in,
		  struct gate_result *r)
{
	struct test_ctx t;

	memset(r, 0, sizeof(*r));
	memset(&t, 0, sizeof(t));
	r->in = *in;
	r->baseline = b;
	r->candidate = c;
	r->thresholds = th;
	r->step_p_value = NAN;
	r->interval_lo_share = r->interval_hi_share = NAN;
	summary_sha256(b, r->baseline_summary_sha256);
	summary_sha256(c, r->candidate_summary_sha256);
	check_provenance(r);
	collect_quality(r);
	if (strcmp(r->provenance, "comparable") != 0) {
		r->verdict = GATE_INCOMPARABLE;
		return;
	}
	step_test(r, &t);
	compare_metrics(r, &t);
	attribute(r);
	overall(r);
}

void gate_result_release(struct gate_result *r)
{
	for (uint32_t i = 0; i < r->n_diff; i++) {
		free(r->diff[i].field);
		free(r->diff[i].baseline);
		free(r->diff[i].candidate);
	}
	for (uint32_t i = 0; i < r->n_metrics; i++) {
		free(r->metrics[i].name);
		free(r->metrics[i].subject);
		free(r->metrics[i].note);
	}
	for (uint32_t i = 0; i < r->n_attribution; i++) {
		free(r->attribution[i].name);
		free(r->attribution[i].detail);
	}
	for (uint32_t i = 0; i < r->n_quality; i++) {
		free(r->quality[i].code);
		free(r->quality[i].message);
	}
	free(r->diff);
	free(r->metrics);
	free(r->attribution);
	free(r->quality);
	memset(r, 0, sizeof(*r));
}
