/*
 * Compare a candidate against a baseline, each a set of runs: provenance
 * first (provenance.c: unlike runs and identical inputs are refused), then
 * every catalogue metric against its rule under the noise model of noise.c,
 * then the attribution of the step-time change (attribution.c) and the
 * overall verdict.
 *
 * How it works. A side's value of a metric is the median over its runs. Each
 * metric's change gets a standard deviation from the spread between runs
 * (both sides' runs, else the series' recent history records, never under the
 * rule's prior) plus, for the step metrics, the spread of the steps inside
 * the runs; the test is one-sided toward worse. Decisions (docs/noise.md,
 * docs/gate.md): a warn or fail needs every limit its level
 * gives, significance (families, ops and collectives share the file's level,
 * Bonferroni over the parts judged) and, where the rule says, a change of
 * min_step_share of the step; past a limit but within noise is a pass with a
 * note. Too few step samples make tested metrics inconclusive and cap every
 * other metric at warn; a quality action "inconclusive" (the gate's own
 * "disturbed" among them) turns passing step metrics inconclusive but never
 * hides a warn or fail. A run of a side of one or two that a co-tenant slowed
 * from end to end (runs.c) is judged at its ops' speed: its times scaled, its
 * noise widened, and its step never warns or fails on that estimate
 * (apply_slowed). Metrics are judged once all are known, since the parts'
 * shared level depends on how many there are.
 */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const verdict_names[] = {
    [GATE_PASS] = "pass",
    [GATE_IMPROVED] = "improved",
    [GATE_WARN] = "warn",
    [GATE_FAIL] = "fail",
    [GATE_INCONCLUSIVE] = "inconclusive",
    [GATE_NEW] = "new",
    [GATE_GONE] = "gone",
    [GATE_UNRECORDED] = "unrecorded",
    [GATE_RECORDED] = "recorded",
    [GATE_INCOMPARABLE] = "incomparable",
    [GATE_IGNORE] = "ignore",
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

/* ---- quality ---- */

enum gate_verdict gate_quality_action(const struct gate_thresholds *th, const char *code)
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
			    gate_quality_action(r->thresholds, w->code)};
		}
}

/* ---- the sides: runs, their steps and their metric values ---- */

struct samples {
	double *v;
	uint32_t n;
};

struct side {
	const struct summary *const *runs;
	uint32_t n;
	struct gate_catalogue *cat; /* per run */
	struct samples *x;	    /* per run: step samples on the chosen basis */
	uint32_t n_samples;	    /* over all runs */
	int history;		    /* the runs are history records */
	double within_var; /* variance of the side's median step from the steps inside its runs */
	double within_var_p90; /* the same for its p90 step (a bootstrap inside each run) */
	double jitter;	       /* median relative spread of a run's steps; NAN: no run has enough */
	double excess; /* median over its runs of gate_run_excess_share; NAN: no run has enough */
	double burst;  /* the most a burst over part of a run moved its p90 step (runs.c);
			* 0: none, or a side of GATE_NOISE_MIN_RUNS (its runs are judged) */
	double *scale; /* per run: the factor its time metrics are judged at (runs.c) */
	double slowed; /* the most a run of it was slowed from outside (runs.c); 0: none */
};

static void run_samples(const struct summary *s, int devices, struct samples *x)
{
	size_t cap = (size_t)s->n_steps * (devices && s->n_devices ? s->n_devices : 1) + 1;

	x->v = pg_xcalloc(cap, sizeof(double));
	x->n = 0;
	for (uint32_t i = 0; i < s->n_steps; i++) {
		if (!s->steps[i].steady)
			continue;
		if (!devices) {
			x->v[x->n++] = s->steps[i].us;
			continue;
		}
		for (uint32_t d = 0; s->steps[i].device_us && d < s->n_devices; d++)
			if (s->steps[i].device_us[d] >= 0)
				x->v[x->n++] = s->steps[i].device_us[d];
	}
}

static void side_samples(struct side *s, int devices)
{
	s->n_samples = 0;
	for (uint32_t i = 0; i < s->n; i++) {
		free(s->x[i].v);
		run_samples(s->runs[i], devices, &s->x[i]);
		for (uint32_t j = 0; j < s->x[i].n; j++)
			s->x[i].v[j] *= s->scale[i];
		s->n_samples += s->x[i].n;
	}
}

/* Step samples of both sides on one basis: steps where both have enough,
 * else per-device step times when those are enough (many devices, few
 * steps), else steps (and too few). */
static const char *choose_samples(uint32_t need, struct side *b, struct side *c)
{
	uint32_t nb, nc;

	side_samples(b, 0);
	side_samples(c, 0);
	if (b->n_samples >= need && c->n_samples >= need)
		return "steps";
	nb = b->n_samples;
	nc = c->n_samples;
	side_samples(b, 1);
	side_samples(c, 1);
	if (b->n_samples >= need && c->n_samples >= need &&
	    (b->n_samples > nb || c->n_samples > nc))
		return "device-steps";
	side_samples(b, 0);
	side_samples(c, 0);
	return "steps";
}

/* Resamples of one run's steps for the spread of its p90 step. */
#define P90_RESAMPLES 200

/* A history record's run: one step, its median, with the run's own steps'
 * spread kept as step.mad_us (history/baseline.c), as a robust sd relative to
 * its median; NAN for a record made before records kept it. */
static double history_record_jitter(const struct summary *r)
{
	const struct sum_stats *st = &r->steady;

	return st->mad_us > 0 && st->median_us > 0 ? GATE_MAD_SD * st->mad_us / st->median_us : NAN;
}

/* The spread inside runs: the variance of a run's median from its steps
 * (1.2533 sd / sqrt(n), the median's standard error under normal steps, with
 * a robust sd) and of its p90 (bootstrap: a few slow steps, common on a busy
 * machine, make it far less certain than a normal model says), averaged over
 * the side's runs for the median over runs; and
 * the median relative spread of a run's steps, the disturbance signal (a
 * history side's from its records, which keep no steps). */
static void side_spread(struct side *s)
{
	double *rel = pg_xcalloc(s->n + 1, sizeof(double));
	uint32_t k = 0;

	s->within_var = s->within_var_p90 = 0;
	for (uint32_t i = 0; i < s->n; i++) {
		const struct samples *x = &s->x[i];
		double sd = gate_robust_sd(x->v, x->n), med = gate_median(x->v, x->n);
		if (s->history) {
			if (isfinite(rel[k] = history_record_jitter(s->runs[i])))
				k++;
			continue;
		}
		if (x->n < 3 || !isfinite(sd))
			continue;
		s->within_var += 1.2533 * 1.2533 * sd * sd / x->n;
		s->within_var_p90 += gate_bootstrap_quantile_var(x->v, x->n, 0.9, P90_RESAMPLES);
		if (x->n >= 5 && med > 0)
			rel[k++] = sd / med;
	}
	s->within_var /= (double)s->n * s->n;
	s->within_var_p90 /= (double)s->n * s->n;
	s->jitter = k ? gate_median(rel, k) : NAN;
	k = 0;
	for (uint32_t i = 0; i < s->n; i++)
		if (!s->history && isfinite(rel[k] = gate_run_excess_share(s->runs[i])))
			k++;
	s->excess = k ? gate_median(rel, k) : NAN;
	free(rel);
}

/* Whether a metric's value is a speed: a run slowed from outside is judged
 * with its times divided by the factor and its rates multiplied. */
static int is_time(const struct gate_metric *m)
{
	return m->unit == SUM_U_US;
}

static int is_rate(const struct gate_metric *m)
{
	return m->name && strncmp(m->name, "throughput.", 11) == 0;
}

/* Side k's runs as judged: a run slowed from outside (runs.c) at its ops'
 * speed, its times and step samples scaled. Only a side of fewer than
 * GATE_NOISE_MIN_RUNS has such runs, and it sets none aside, so g's runs are
 * r->runs[k]'s; k < 0: no side of the result (the series' records). */
static void side_init(struct side *s, const struct gate_side *g, const struct gate_result *r, int k)
{
	memset(s, 0, sizeof(*s));
	s->runs = g->runs;
	s->n = g->n_runs;
	s->history = g->history;
	s->cat = pg_xcalloc(s->n, sizeof(*s->cat));
	s->x = pg_xcalloc(s->n, sizeof(*s->x));
	s->scale = pg_xcalloc(s->n + 1, sizeof(double));
	for (uint32_t i = 0; i < s->n; i++) {
		struct gate_catalogue *c = &s->cat[i];
		int own = k >= 0 && g->n_runs == r->n_runs[k];
		double f = own ? gate_run_scale(r, k, i) : 1;
		s->scale[i] = f;
		if (own && s->n < GATE_NOISE_MIN_RUNS && r->runs[k][i].burst_share > s->burst)
			s->burst = r->runs[k][i].burst_share;
		gate_catalogue_build(s->runs[i], c);
		if (f == 1)
			continue;
		if (r->runs[k][i].slowed_share > s->slowed)
			s->slowed = r->runs[k][i].slowed_share;
		for (uint32_t j = 0; j < c->n; j++)
			if (is_time(&c->m[j]))
				c->m[j].value *= f;
			else if (is_rate(&c->m[j]))
				c->m[j].value /= f;
	}
}

static void side_release(struct side *s)
{
	for (uint32_t i = 0; i < s->n; i++) {
		gate_catalogue_release(&s->cat[i]);
		free(s->x[i].v);
	}
	free(s->cat);
	free(s->x);
	free(s->scale);
}

/* A metric on one side: its value in each run that has it. */
struct side_metric {
	int present;	      /* more than half of the runs have it */
	struct gate_metric m; /* value and step share: medians over those runs */
	double *v;
	uint32_t n;
};

static void side_metric(const struct side *s, const char *name, struct side_metric *out)
{
	double *share = pg_xcalloc(s->n + 1, sizeof(double));
	uint32_t n_share = 0;

	memset(out, 0, sizeof(*out));
	out->v = pg_xcalloc(s->n + 1, sizeof(double));
	for (uint32_t i = 0; i < s->n; i++) {
		const struct gate_metric *x = gate_catalogue_find(&s->cat[i], name);
		if (!x)
			continue;
		if (out->n == 0)
			out->m = *x;
		out->v[out->n++] = x->value;
		if (x->step_share >= 0)
			share[n_share++] = x->step_share;
	}
	out->present = 2 * out->n > s->n;
	if (out->present) {
		out->m.value = gate_median(out->v, out->n);
		out->m.step_share = n_share ? gate_median(share, n_share) : -1;
	}
	free(share);
}

/* ---- one metric ---- */

struct test_ctx {
	const char *samples;
	uint32_t n_b, n_c;
	uint32_t runs_b, runs_c;
	uint32_t need;		   /* step samples a fail needs on each side */
	double step_us;		   /* the larger side's steady median step */
	double within_var;	   /* both sides' within-run variance of the median step */
	double within_var_p90;	   /* ... and of the p90 step */
	int baseline_history;	   /* the baseline's runs are history records */
	const struct side *noise;  /* recent records of the series; NULL: none */
	uint32_t m_parts;	   /* families, ops and collectives judged: they share alpha */
	int disturbed;		   /* the candidate run's steps spread far beyond the baseline's */
	double slowed_b, slowed_c; /* each side's side.slowed */
	double jitter_b, jitter_c; /* each side's relative step spread; NAN: unknown */
	double excess_c;	   /* the candidate's mean step over its median, less 1 */
	double burst_b, burst_c;   /* each side's side.burst */
	int quality_inconclusive;
	const char *quality_code;
};

/* The spread inside the runs of a step metric's value. */
static double within_var(const char *name, const struct test_ctx *t)
{
	if (strcmp(name, "step.median_us") == 0)
		return t->within_var;
	if (strcmp(name, "step.p90_us") == 0)
		return t->within_var_p90;
	return 0;
}

/* The larger of v and (share x value)^2; v when share is unknown. */
static double at_least(double v, double share, double value)
{
	double w = share * fabs(value);

	return isfinite(w) && w * w > v ? w * w : v;
}

/* A side whose runs disagree with each other this many times more than the
 * pooled spread (or the prior) says is noisy in its own right: its runs get
 * their own spread as their noise (a per-side variance, as Welch's test), not
 * one pooled away by the quieter side. In `make noise`'s busy mode a side of
 * three runs a burst spread 5-10 % beside a window spreading 1-3 %. */
#define GATE_OWN_NOISE_RATIO 2.0

/* The variance of one run's value on side s: sd squared, or the side's own
 * robust spread squared when it has GATE_NOISE_MIN_RUNS and that is
 * GATE_OWN_NOISE_RATIO times sd or more. */
static double own_var(const struct side_metric *s, double sd)
{
	double own = s->n >= GATE_NOISE_MIN_RUNS ? gate_robust_sd(s->v, s->n) : NAN;

	return isfinite(own) && own >= GATE_OWN_NOISE_RATIO * sd ? own * own : sd * sd;
}

/* The noise model of one metric (noise.c): the sd of one run's value from the
 * runs of both sides, else from the series' recent records, never under the
 * rule's prior; the delta's variance is that times the variance of the median
 * of each side's runs (gate_noise_median_var), plus, for
 * step metrics, the spread of the steps inside the runs. A side of fewer than
 * GATE_NOISE_MIN_RUNS runs shows no spread between runs, but its own steps
 * bound it: a run whose steps spread 4 % is known no better than to 4 % (in
 * `make noise`, the runs 4-7 % slower than their neighbours had steps spread
 * 3-4 %, the quiet ones 1-2 %), so its step metrics' sd is at least its step
 * spread. A disturbed candidate's parts are widened alike: a burst slows
 * every part of the run it hits. */
static void noise_model(struct gate_metric_result *m, const struct side_metric *b,
			const struct side_metric *c, const struct side_metric *h,
			const struct test_ctx *t)
{
	double ref = m->has_baseline && m->baseline != 0 ? m->baseline : m->candidate;
	const double *g[2] = {b->v, c->v};
	uint32_t n[2] = {b->n, c->n};
	double nb = b->n ? b->n : t->runs_b, nc = c->n ? c->n : t->runs_c;
	double est = gate_noise_pooled_sd(g, n, 2), sd, var_b, var_c;
	const char *from = t->baseline_history && c->n < GATE_NOISE_MIN_RUNS ? "history" : "runs";

	if (!isfinite(est) && h && h->n >= GATE_NOISE_MIN_RUNS) {
		const double *hv[1] = {h->v};
		est = gate_noise_pooled_sd(hv, &h->n, 1);
		from = "history";
	}
	sd = gate_noise_run_sd(m->rule, est, ref, t->step_us, from, &m->noise_from);
	var_b = own_var(b, sd);
	var_c = own_var(c, sd);
	if (m->kind == GATE_K_STEP && b->n < GATE_NOISE_MIN_RUNS && !(t->slowed_b > 0))
		var_b = at_least(var_b, t->jitter_b, m->baseline);
	if (m->kind == GATE_K_STEP && c->n < GATE_NOISE_MIN_RUNS && !(t->slowed_c > 0))
		var_c = at_least(var_c, t->jitter_c, m->candidate);
	/* a part's us_per_step is a mean over the steps, and the p90 step is the
	 * tail: both carry the slow steps of a burst that hit part of the run,
	 * which the steps' robust spread does not see */
	if (t->disturbed && (gate_metric_is_part(m->name) || strcmp(m->name, "step.p90_us") == 0))
		var_c = at_least(var_c, fmax(t->jitter_c, t->excess_c), m->candidate);
	/* a burst over one stretch of a run's steps sets its p90 step: that run's
	 * tail is known only to within how far the stretch moved it */
	if (strcmp(m->name, "step.p90_us") == 0) {
		var_b = at_least(var_b, t->burst_b, m->baseline);
		var_c = at_least(var_c, t->burst_c, m->candidate);
	}
	/* a run judged at its ops' speed: its step is known as well as that
	 * estimate, its parts and its tail (which the co-tenant did not slow
	 * alike: memory-bound ops more) only to within the slowdown */
	if ((t->slowed_b > 0 || t->slowed_c > 0) &&
	    ((b->n && (is_time(&b->m) || is_rate(&b->m))) ||
	     (c->n && (is_time(&c->m) || is_rate(&c->m))))) {
		if (gate_metric_is_part(m->name) || strcmp(m->name, "step.p90_us") == 0) {
			var_b = at_least(var_b, t->slowed_b, m->baseline);
			var_c = at_least(var_c, t->slowed_c, m->candidate);
		} else {
			m->slowed = 1;
			if (t->slowed_b > 0)
				var_b += pow(GATE_SLOWED_SD * log1p(t->slowed_b) * m->baseline, 2);
			if (t->slowed_c > 0)
				var_c += pow(GATE_SLOWED_SD * log1p(t->slowed_c) * m->candidate, 2);
		}
	}
	m->noise_sd = sqrt(var_b * gate_noise_median_var(nb) + var_c * gate_noise_median_var(nc) +
			   within_var(m->name, t));
}

static void judge(struct gate_metric_result *m, const struct gate_thresholds *th,
		  const struct test_ctx *t)
{
	const struct gate_rule *r = m->rule;
	double worse, worse_rel, alpha, z, p_faster;
	uint32_t need;
	int fail, warn;

	if (!r || r->direction == GATE_INFO) {
		m->verdict = GATE_PASS;
		return;
	}
	worse = r->direction == GATE_LOWER_IS_BETTER ? m->delta : -m->delta;
	worse_rel = m->baseline != 0 ? worse / fabs(m->baseline) : (worse > 0 ? INFINITY : 0);
	need = r->min_samples >= 0 ? (uint32_t)r->min_samples : th->min_samples;
	alpha = gate_level(th, r, m->name, t->m_parts);
	m->alpha = alpha;
	z = gate_z(worse, m->noise_sd);
	m->tested = 1;
	m->p_value = gate_norm_upper(z);
	p_faster = gate_norm_upper(-z);
	m->samples = t->samples;
	m->n_baseline = t->n_b;
	m->n_candidate = t->n_c;
	if (r->test && (t->n_b < need || t->n_c < need)) {
		m->tested = 0;
		m->verdict = GATE_INCONCLUSIVE;
		m->note = pg_xasprintf("too few steps: %u and %u, %u needed on each side", t->n_b,
				       t->n_c, need);
		return;
	}
	fail = gate_limit_reaches(&r->fail, worse, worse_rel);
	warn = fail || gate_limit_reaches(&r->warn, worse, worse_rel);
	m->verdict = GATE_PASS;
	if (warn && r->min_step_share >= 0 && fabs(m->delta) < r->min_step_share * t->step_us) {
		m->note = pg_xasprintf("past the %s limit, but %.2f%% of the step, under %g%%",
				       fail ? "fail" : "warn", 100 * fabs(m->delta) / t->step_us,
				       100 * r->min_step_share);
	} else if (warn && !(m->p_value < alpha)) {
		m->note = pg_xasprintf("past the %s limit, but within noise (p = %.3g)",
				       fail ? "fail" : "warn", m->p_value);
	} else if (fail && !r->test && (t->n_b < need || t->n_c < need)) {
		/* one or two steps show no noise level: a real difference
		 * and run-to-run jitter look alike */
		m->verdict = GATE_WARN;
		m->note = pg_xasprintf("past the fail limit, but a fail needs %u steps or "
				       "device-steps on each side (%u and %u)",
				       need, t->n_b, t->n_c);
	} else if (warn) {
		m->verdict = fail ? GATE_FAIL : GATE_WARN;
	} else if (gate_limit_reaches(&r->warn, -worse, -worse_rel) && p_faster < alpha) {
		m->verdict = GATE_IMPROVED;
	}
}

/* A run slowed from outside is judged at its ops' speed, an estimate within
 * 10 % mostly, but 30-48 % high for a third of the slowed runs of the busy
 * calibration (the co-tenant also loaded memory): good enough to pass a step
 * that stays within the limits, never to warn or fail on (docs/noise.md
 * "Slowed from outside"). A part or the p90 step carries the whole slowdown
 * as its noise, so what it says beyond that stands. */
static void apply_slowed(struct gate_metric_result *m, const struct test_ctx *t)
{
	if (!m->slowed || (m->verdict != GATE_WARN && m->verdict != GATE_FAIL))
		return;
	free(m->note);
	m->note = pg_xasprintf("past the %s limit at the ops' speed of a run slowed %.0f%% from "
			       "outside, too uncertain to %s on: run it again",
			       m->verdict == GATE_FAIL ? "fail" : "warn",
			       100 * fmax(t->slowed_b, t->slowed_c),
			       m->verdict == GATE_FAIL ? "fail" : "warn");
	m->verdict = GATE_INCONCLUSIVE;
}

static void apply_quality(struct gate_metric_result *m, const struct test_ctx *t)
{
	apply_slowed(m, t);
	if (!t->quality_inconclusive || m->kind != GATE_K_STEP || !m->rule ||
	    m->rule->direction == GATE_INFO)
		return;
	if (m->verdict == GATE_PASS || m->verdict == GATE_IMPROVED) {
		m->verdict = GATE_INCONCLUSIVE;
		free(m->note);
		m->note = pg_xasprintf("trace quality: %s", t->quality_code);
	}
}

/* A family or op only the candidate has is judged as a change from 0. */
static int judged_when_new(const struct gate_metric_result *m)
{
	return (m->kind == GATE_K_FAMILY || m->kind == GATE_K_OP) && m->rule &&
	       m->rule->direction == GATE_LOWER_IS_BETTER;
}

/* A step time the gate can take a relative change of. */
static int step_value_ok(double us)
{
	return isfinite(us) && us > 0;
}

/* A metric's row, with its noise model; one judged later (when every part is
 * known, for their shared level) is left GATE_IGNORE. */
static void add_metric(struct gate_result *r, const struct side_metric *sb,
		       const struct side_metric *sc, const struct side_metric *sh, const char *name,
		       const struct test_ctx *t, int unrecorded)
{
	const struct gate_rule *rule = gate_rule_for(r->thresholds, name);
	const struct gate_metric *mb = sb->present ? &sb->m : NULL,
				 *mc = sc->present ? &sc->m : NULL;
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
	m.noise_sd = NAN;
	if (mb && mc && m.kind == GATE_K_STEP && rule && rule->direction != GATE_INFO &&
	    !(step_value_ok(m.baseline) && step_value_ok(m.candidate))) {
		/* a 0 us (or unreadable) step has no relative change to judge */
		int bad_b = !step_value_ok(m.baseline);
		double v = bad_b ? m.baseline : m.candidate;
		m.verdict = GATE_INCONCLUSIVE;
		m.note = pg_xasprintf("the %s's step time is %s: no step time to compare",
				      bad_b ? "baseline" : "candidate",
				      !isfinite(v) ? "not a number"
				      : v == 0	   ? "0"
						   : "negative");
	} else if (!mb && unrecorded) {
		m.verdict = GATE_UNRECORDED;
	} else if ((mb && mc) || (mc && judged_when_new(&m))) {
		noise_model(&m, sb, sc, sh, t);
		m.verdict = GATE_IGNORE;
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
	m.noise_sd = NAN;
	m.verdict = GATE_INCONCLUSIVE;
	m.note = pg_xstrdup("no steady steps on either side");
	r->metrics = pg_xrealloc(r->metrics, (r->n_metrics + 1) * sizeof(*r->metrics));
	r->metrics[r->n_metrics++] = m;
}

/* Every metric name of any run of either side, sorted, each once. */
static const char **all_names(const struct side *b, const struct side *c, uint32_t *n)
{
	const struct side *s[2] = {b, c};
	size_t total = 0;
	const char **v;
	uint32_t k = 0, w = 0;

	for (int i = 0; i < 2; i++)
		for (uint32_t j = 0; j < s[i]->n; j++)
			total += s[i]->cat[j].n;
	v = pg_xcalloc(total + 1, sizeof(char *));
	for (int i = 0; i < 2; i++)
		for (uint32_t j = 0; j < s[i]->n; j++)
			for (uint32_t m = 0; m < s[i]->cat[j].n; m++)
				v[k++] = s[i]->cat[j].m[m].name;
	if (k > 1)
		qsort(v, k, sizeof(char *), pg_cmp_str);
	for (uint32_t i = 0; i < k; i++)
		if (w == 0 || strcmp(v[w - 1], v[i]) != 0)
			v[w++] = v[i];
	*n = w;
	return v;
}

/* Judge a row add_metric left pending. A family or op only the candidate
 * has is judged as a change from 0: past the limits it warns or fails like
 * any regression, else it is shown as new. */
static void judge_pending(struct gate_metric_result *m, const struct gate_thresholds *th,
			  const struct test_ctx *t)
{
	judge(m, th, t);
	if (m->has_baseline) {
		apply_quality(m, t);
		return;
	}
	if (m->verdict != GATE_FAIL && m->verdict != GATE_WARN) {
		m->verdict = GATE_NEW;
		m->tested = 0;
		free(m->note);
		m->note = NULL;
	}
}

/* Whether any run of the side carries a metric of the group. A group none
 * carries (a history record keeps no info-only metric; a summary or record of
 * an older profgate lacks a newer group) says nothing about the candidate's
 * values of it: they are not "new" (a change from nothing), only shown, and
 * still recorded. */
static int side_carries(const struct side *s, enum gate_kind kind)
{
	for (uint32_t i = 0; i < s->n; i++)
		for (uint32_t j = 0; j < s->cat[i].n; j++)
			if (s->cat[i].m[j].kind == kind)
				return 1;
	return 0;
}

static void compare_metrics(struct gate_result *r, const struct side *b, const struct side *c,
			    struct test_ctx *t)
{
	uint32_t n;
	const char **names = all_names(b, c, &n);

	for (uint32_t i = 0; i < n; i++) {
		struct side_metric sb, sc, sh = {0};
		side_metric(b, names[i], &sb);
		side_metric(c, names[i], &sc);
		if (t->noise)
			side_metric(t->noise, names[i], &sh);
		if (sb.present || sc.present)
			add_metric(r, &sb, &sc, &sh, names[i], t,
				   sc.present && sc.m.kind != GATE_K_STEP &&
				       !side_carries(b, sc.m.kind));
		free(sb.v);
		free(sc.v);
		free(sh.v);
	}
	free(names);
	t->m_parts = 0;
	for (uint32_t i = 0; i < r->n_metrics; i++)
		t->m_parts += r->metrics[i].verdict == GATE_IGNORE &&
			      gate_metric_is_part(r->metrics[i].name) && r->metrics[i].rule &&
			      r->metrics[i].rule->direction != GATE_INFO;
	for (uint32_t i = 0; i < r->n_metrics; i++)
		if (r->metrics[i].verdict == GATE_IGNORE)
			judge_pending(&r->metrics[i], r->thresholds, t);
	add_missing_step(r, "step.median_us");
	add_missing_step(r, "step.p90_us");
}

/* ---- the headline and the test ---- */

const struct gate_metric_result *gate_find_result(const struct gate_result *r, const char *name)
{
	for (uint32_t i = 0; i < r->n_metrics; i++)
		if (strcmp(r->metrics[i].name, name) == 0)
			return &r->metrics[i];
	return NULL;
}

static double side_step_us(const struct side *s)
{
	double *v = pg_xcalloc(s->n + 1, sizeof(double)), m;
	uint32_t k = 0;

	for (uint32_t i = 0; i < s->n; i++)
		if (s->runs[i]->steady.count > 0)
			v[k++] = s->runs[i]->steady.median_us * s->scale[i];
	m = k ? gate_median(v, k) : 0;
	free(v);
	return m;
}

/* A candidate whose steps spread this many times as wide as the baseline's
 * (relative robust sd of a run's steady steps; with no baseline steps to go
 * by, as wide as GATE_JITTER_QUIET) was disturbed while it ran: a co-tenant
 * burst, not the code (docs/noise.md: in `make noise`, the steps of
 * undisturbed runs spread 0.5-4 %, of runs hit by a burst 5-27 %, and a real
 * regression does not widen the spread). So was one whose mean step is more
 * than GATE_SET_ASIDE_EXCESS above its median and this many times the
 * baseline's excess: a burst that hit a few of its steps, which the robust
 * spread does not see but every part's us_per_step (a mean) carries. Its
 * parts are then known only to within that spread too (noise_model), so a
 * regression larger than the disturbance still fails, and the quality action
 * "disturbed" (shipped: inconclusive) says so instead of passing. */
#define GATE_JITTER_QUIET 0.02

/* "; its steps A-B ran in one burst, ..." for the candidate run of a side of
 * fewer than GATE_NOISE_MIN_RUNS whose p90 step a burst moved furthest (runs.c),
 * or "" (owned by the caller). */
static char *burst_text(const struct gate_result *r)
{
	const struct gate_run *x = NULL;

	for (uint32_t i = 0; r->n_runs[1] < GATE_NOISE_MIN_RUNS && i < r->n_runs[1]; i++)
		if (r->runs[1][i].burst_share > 0 &&
		    (!x || r->runs[1][i].burst_share > x->burst_share))
			x = &r->runs[1][i];
	if (!x)
		return pg_xstrdup("");
	return pg_xasprintf(
	    "; its steps %lld-%lld ran in one burst, which lifted its p90 step from "
	    "%.3f ms to %.3f ms",
	    (long long)x->burst_first, (long long)x->burst_last,
	    x->step_p90_us * (1 - x->burst_share) / 1e3, x->step_p90_us / 1e3);
}

static void check_disturbed(struct gate_result *r, struct test_ctx *t, double excess_b)
{
	double ref = isfinite(r->jitter_baseline) && r->jitter_baseline > GATE_JITTER_QUIET
			 ? r->jitter_baseline
			 : GATE_JITTER_QUIET;
	const char *advice = r->candidate_runs < GATE_NOISE_MIN_RUNS
				 ? "run it again, or give three --candidate runs"
				 : "run them again on a quieter machine";
	int spread =
	    isfinite(r->jitter_candidate) && r->jitter_candidate >= GATE_DISTURBED_RATIO * ref;
	enum gate_verdict a = GATE_INCONCLUSIVE;
	char *msg, *burst;

	/* a run slowed from outside is judged at its ops' speed (runs.c): its
	 * spread and its mean are the co-tenant's, and already accounted for */
	if (t->slowed_c > 0)
		return;
	if (!spread && !(r->excess_candidate > gate_excess_limit(excess_b)))
		return;
	burst = burst_text(r);
	if (spread)
		msg = pg_xasprintf("the candidate's steps spread %.1f%% (robust sd), %.0f times %s "
				   "%.1f%%: the machine was busy while it ran%s; %s",
				   100 * r->jitter_candidate, r->jitter_candidate / ref,
				   isfinite(r->jitter_baseline) &&
					   r->jitter_baseline > GATE_JITTER_QUIET
				       ? "the baseline runs' steps'"
				       : "the most a quiet run's steps spread,",
				   100 * ref, burst, advice);
	else
		msg =
		    pg_xasprintf("the candidate's mean step is %.0f%% above its median step: a "
				 "burst on the machine slowed some of its steps, and every part's "
				 "us_per_step (a mean over the steps) carries them%s; %s",
				 100 * r->excess_candidate, burst, advice);
	free(burst);
	r->disturbed = t->disturbed = 1;
	for (uint32_t i = 0; i < r->thresholds->n_quality; i++)
		if (strcmp(r->thresholds->quality[i].code, "disturbed") == 0)
			a = r->thresholds->quality[i].action;
	r->quality = pg_xrealloc(r->quality, (r->n_quality + 1) * sizeof(*r->quality));
	r->quality[r->n_quality++] = (struct gate_quality_hit){1, pg_xstrdup("disturbed"), msg, a};
}

static void prepare_test(struct gate_result *r, struct side *b, struct side *c, struct test_ctx *t)
{
	const struct gate_rule *rule = gate_rule_for(r->thresholds, "step.median_us");
	double sb, sc;

	t->need = rule && rule->min_samples >= 0 ? (uint32_t)rule->min_samples
						 : r->thresholds->min_samples;
	t->samples = choose_samples(t->need, b, c);
	/* a history record is one sample (its median step): the records set aside
	 * were read and count toward min_samples, they are only not trusted for
	 * the value and the noise */
	t->n_b = b->n_samples + (b->history ? r->set_aside[0] : 0);
	t->n_c = c->n_samples;
	t->runs_b = b->n;
	t->runs_c = c->n;
	side_spread(b);
	side_spread(c);
	t->within_var = b->within_var + c->within_var;
	t->within_var_p90 = b->within_var_p90 + c->within_var_p90;
	sb = side_step_us(b);
	sc = side_step_us(c);
	t->step_us = sb > sc ? sb : sc;
	r->jitter_baseline = t->jitter_b = b->jitter;
	r->jitter_candidate = t->jitter_c = c->jitter;
	r->excess_candidate = t->excess_c = c->excess;
	t->slowed_b = b->slowed;
	t->slowed_c = c->slowed;
	t->burst_b = b->burst;
	t->burst_c = c->burst;
	t->baseline_history = b->history;
	check_disturbed(r, t, b->excess);
	for (uint32_t i = 0; i < r->n_quality; i++)
		if (r->quality[i].action == GATE_INCONCLUSIVE) {
			t->quality_inconclusive = 1;
			t->quality_code = r->quality[i].code;
			break;
		}
}

/* The headline is the step.median_us metric: its values, and its test's
 * p-value (one-sided, toward slower) and interval: delta +- z sd over the
 * baseline at confidence 1 - 2 alpha, so its lower end is above 0 exactly
 * when the one-sided test at alpha says slower. */
static void headline(struct gate_result *r, const struct test_ctx *t)
{
	const struct gate_metric_result *m = gate_find_result(r, "step.median_us");
	const struct gate_rule *rule = m ? m->rule : NULL;
	double alpha =
	    rule && rule->significance >= 0 ? rule->significance : r->thresholds->significance;
	double q;

	r->confidence = 1 - 2 * alpha;
	r->step_samples = t->samples;
	r->step_n_baseline = t->n_b;
	r->step_n_candidate = t->n_c;
	r->has_step = m && m->has_baseline && m->has_candidate;
	if (!r->has_step)
		return;
	r->step_baseline_us = m->baseline;
	r->step_candidate_us = m->candidate;
	r->step_delta_us = m->delta;
	r->step_delta_share = m->baseline > 0 ? m->delta / m->baseline : NAN;
	if (!(t->n_b >= t->need && t->n_c >= t->need) || !isfinite(m->noise_sd))
		return;
	r->step_tested = 1;
	r->step_p_value = gate_norm_upper(gate_z(m->delta, m->noise_sd));
	if (m->baseline > 0) {
		q = gate_norm_quantile_upper(alpha);
		r->interval_lo_share = (m->delta - q * m->noise_sd) / m->baseline;
		r->interval_hi_share = (m->delta + q * m->noise_sd) / m->baseline;
		r->has_interval = 1;
	}
}

/* Whether noise decided the step's verdict, and the spreads it had: the
 * terminal and the report say the machine was too noisy to judge, with the
 * numbers the test used and advice that fits the runs given. */
static void check_noisy(struct gate_result *r, const struct test_ctx *t)
{
	const struct gate_metric_result *m = gate_find_result(r, "step.median_us");
	double base, per_run, jb, jc;
	int within_noise;

	if (!m || !m->has_baseline || !(m->baseline > 0) || !isfinite(m->noise_sd))
		return;
	within_noise = m->note && strstr(m->note, "within noise") != NULL;
	if (!within_noise && !r->too_few_runs && !(r->disturbed && m->verdict == GATE_INCONCLUSIVE))
		return;
	base = m->baseline;
	/* one run's sd back from the change's: sd^2 (v(nb) + v(nc)) + within */
	per_run = sqrt(fmax(0, m->noise_sd * m->noise_sd - t->within_var) /
		       (gate_noise_median_var(t->runs_b) + gate_noise_median_var(t->runs_c)));
	r->noisy = 1;
	r->noisy_between_share = per_run / base;
	/* the spread inside the runs the test used: a slowed run's is the
	 * co-tenant's, judged by its ops' speed instead */
	jb = t->slowed_b > 0 ? NAN : t->jitter_b;
	jc = t->slowed_c > 0 ? NAN : t->jitter_c;
	r->noisy_within_share = isfinite(jb) && isfinite(jc) ? fmax(jb, jc)
				: isfinite(jc)		     ? jc
							     : jb;
	if (r->too_few_runs)
		r->noisy_advice = pg_xstrdup("too few undisturbed runs: run them again");
	else if (r->candidate_runs < GATE_NOISE_MIN_RUNS)
		r->noisy_advice = pg_xstrdup("give three --candidate runs, or rerun on a quieter "
					     "machine");
	else
		r->noisy_advice = pg_xasprintf("%u candidate and %u baseline runs were not enough "
					       "here: rerun on a quieter (dedicated) runner",
					       r->candidate_runs, r->baseline_runs);
}

/* ---- the whole comparison ---- */

/* sha256 of the summary as `profgate summarize` writes it: the same for a
 * summary file given as input and for profiles summarized on the fly. */
void gate_summary_sha256(const struct summary *s, char hex[65])
{
	struct pg_buf b = PG_BUF_INIT;
	struct pg_sha256 sha;

	summary_write_json(s, &b);
	pg_sha256_init(&sha);
	pg_sha256_update(&sha, b.ptr, b.len);
	pg_sha256_hex(&sha, hex);
	pg_buf_release(&b);
}

/* A step that warns or fails on one candidate run gets a quality note
 * ("one-run"; shipped: ignore, a note that changes no verdict): in `make
 * noise` about one run in twenty to eighty was 5-7 % slower than its
 * neighbours with nothing in its steps or outside the trace to show it, which
 * no test of one run can tell from a regression of that size; the median of
 * three runs is not moved by one (docs/noise.md). */
static void check_one_run(struct gate_result *r)
{
	const struct gate_metric_result *m = gate_find_result(r, "step.median_us");

	if (r->candidate_runs != 1 || !m || (m->verdict != GATE_WARN && m->verdict != GATE_FAIL))
		return;
	r->quality = pg_xrealloc(r->quality, (r->n_quality + 1) * sizeof(*r->quality));
	r->quality[r->n_quality++] = (struct gate_quality_hit){
	    1, pg_xstrdup("one-run"),
	    pg_xstrdup("the step's verdict rests on one candidate run, and one run slowed by "
		       "something outside the trace looks the same: confirm it with three "
		       "--candidate runs"),
	    gate_quality_action(r->thresholds, "one-run")};
}

/* The most severe verdict of any metric or quality action; "improved" only
 * from the steady median step (a family that got faster beside a step that
 * did not is no improvement of the run). */
static void overall(struct gate_result *r)
{
	enum gate_verdict v = GATE_PASS;

	for (uint32_t i = 0; i < r->n_metrics; i++) {
		enum gate_verdict x = r->metrics[i].verdict;
		if (x == GATE_IMPROVED && strcmp(r->metrics[i].name, "step.median_us") != 0)
			continue;
		if (gate_verdict_severity(x) > gate_verdict_severity(v))
			v = x;
	}
	for (uint32_t i = 0; i < r->n_quality; i++) {
		enum gate_verdict a = r->quality[i].action;
		if ((a == GATE_WARN || a == GATE_FAIL) &&
		    gate_verdict_severity(a) > gate_verdict_severity(v))
			v = a;
	}
	/* too few undisturbed runs: no verdict but "run them again", on the
	 * metrics too (a fail or a pass there would be read as one) */
	if (r->too_few_runs && v != GATE_INCOMPARABLE) {
		v = GATE_INCONCLUSIVE;
		for (uint32_t i = 0; i < r->n_metrics; i++) {
			struct gate_metric_result *m = &r->metrics[i];
			enum gate_verdict x = m->verdict;
			if (!m->rule || m->rule->direction == GATE_INFO ||
			    (x != GATE_FAIL && x != GATE_WARN &&
			     !(m->kind == GATE_K_STEP && (x == GATE_PASS || x == GATE_IMPROVED))))
				continue;
			m->verdict = GATE_INCONCLUSIVE;
			free(m->note);
			m->note = pg_xstrdup("too few undisturbed runs to judge");
		}
	}
	r->verdict = v;
}

static int cmp_by_step(const void *x, const void *y)
{
	const struct summary *a = *(const struct summary *const *)x,
			     *b = *(const struct summary *const *)y;
	return (a->steady.median_us > b->steady.median_us) -
	       (a->steady.median_us < b->steady.median_us);
}

/* The run whose median step is the median of the side's (the lower of the
 * middle two). */
static const struct summary *representative(const struct gate_side *g)
{
	const struct summary **v, *rep;

	if (g->rep)
		return g->rep;
	if (g->n_runs < 3)
		return g->runs[0];
	v = pg_xcalloc(g->n_runs, sizeof(*v));
	memcpy(v, g->runs, g->n_runs * sizeof(*v));
	qsort(v, g->n_runs, sizeof(*v), cmp_by_step);
	rep = v[(g->n_runs - 1) / 2];
	free(v);
	return rep;
}

/* No baseline run: nothing is judged, nothing invented. Every metric of the
 * candidate (the median over its runs, as a comparison takes it, floors
 * applied to its own share) is a GATE_RECORDED row, so the history record
 * carries the numbers the next run is gated against. */
static void record_candidate(struct gate_result *r, const struct gate_side *gc)
{
	struct side b, c;
	struct test_ctx t;
	uint32_t n;
	const char **names;

	memset(&t, 0, sizeof(t));
	r->provenance = "no-baseline";
	/* the candidate's trace warnings are listed; with nothing judged they act on nothing */
	collect_quality(r);
	for (uint32_t i = 0; i < r->n_quality; i++)
		r->quality[i].action = GATE_IGNORE;
	side_init(&b, &(struct gate_side){NULL, 0, NULL, 1, NULL, NULL}, r, -1);
	side_init(&c, gc, r, -1);
	names = all_names(&b, &c, &n);
	for (uint32_t i = 0; i < n; i++) {
		struct side_metric sb, sc, sh = {0};
		side_metric(&b, names[i], &sb);
		side_metric(&c, names[i], &sc);
		if (sc.present)
			add_metric(r, &sb, &sc, &sh, names[i], &t, 1);
		free(sb.v);
		free(sc.v);
	}
	for (uint32_t i = 0; i < r->n_metrics; i++) {
		r->metrics[i].verdict = GATE_RECORDED;
		free(r->metrics[i].note);
		r->metrics[i].note = NULL;
	}
	free(names);
	side_release(&b);
	side_release(&c);
	r->baseline_summary_sha256[0] = '\0'; /* no summary stands for no run */
	r->verdict = GATE_RECORDED;
}

void gate_compare_runs(const struct gate_side *gb, const struct gate_side *gc,
		       const struct gate_thresholds *th, const struct gate_inputs *in,
		       struct gate_result *r)
{
	struct test_ctx t;
	struct side b, c, h;
	const struct summary **kb = pg_xcalloc(gb->n_runs + 1, sizeof(*kb)),
			     **kc = pg_xcalloc(gc->n_runs + 1, sizeof(*kc)),
			     **kn =
				 pg_xcalloc((in->noise ? in->noise->n_runs : 0) + 1, sizeof(*kn));
	struct gate_side sb, sc, sn;
	const struct gate_side *ob, *oc;

	memset(r, 0, sizeof(*r));
	memset(&t, 0, sizeof(t));
	r->in = *in;
	r->thresholds = th;
	r->set_aside_limit_share = NAN;
	gate_runs_name(r, 0, gb);
	gate_runs_name(r, 1, gc);
	gate_runs_kept(r, 0, gb, kb, &sb);
	gate_runs_kept(r, 1, gc, kc, &sc);
	/* a side with too few runs left is judged on all of them, and the
	 * verdict is inconclusive whatever they say (overall) */
	if (gate_runs_too_few(r, 0))
		sb = *gb;
	if (gate_runs_too_few(r, 1))
		sc = *gc;
	ob = gb;
	oc = gc;
	gb = &sb;
	gc = &sc;
	r->baseline = representative(gb);
	r->candidate = representative(gc);
	gate_runs_mark_shown(r, 0, ob, r->baseline);
	gate_runs_mark_shown(r, 1, oc, r->candidate);
	r->baseline_runs = gb->n_runs;
	r->candidate_runs = gc->n_runs;
	r->step_p_value = NAN;
	r->workload_overlap = NAN;
	r->interval_lo_share = r->interval_hi_share = NAN;
	r->jitter_baseline = r->jitter_candidate = r->excess_candidate = NAN;
	gate_summary_sha256(r->baseline, r->baseline_summary_sha256);
	gate_summary_sha256(r->candidate, r->candidate_summary_sha256);
	if (gb->n_runs == 0) {
		record_candidate(r, gc);
		goto out;
	}
	gate_check_provenance(r);
	collect_quality(r);
	if (strcmp(r->provenance, "comparable") != 0) {
		r->verdict = GATE_INCOMPARABLE;
		goto out;
	}
	gate_runs_note_set_aside(r);
	gate_runs_slowed(r, (const struct gate_side *const[2]){ob, oc}, in->noise);
	side_init(&b, gb, r, 0);
	side_init(&c, gc, r, 1);
	side_init(&h,
		  in->noise ? gate_runs_keep_undisturbed(r, in->noise, kn, &sn)
			    : &(struct gate_side){NULL, 0, NULL, 1, NULL, NULL},
		  r, -1);
	t.noise = h.n ? &h : NULL;
	prepare_test(r, &b, &c, &t);
	compare_metrics(r, &b, &c, &t);
	headline(r, &t);
	gate_attribute(r, &(struct gate_attr_ctx){t.step_us, t.runs_b, t.runs_c, t.m_parts});
	check_one_run(r);
	overall(r);
	check_noisy(r, &t);
	side_release(&b);
	side_release(&c);
	side_release(&h);
out:
	free(kb);
	free(kc);
	free(kn);
}

void gate_compare(const struct summary *b, const struct summary *c,
		  const struct gate_thresholds *th, const struct gate_inputs *in,
		  struct gate_result *r)
{
	const struct summary *rb[1] = {b}, *rc[1] = {c};
	const char *pb[1] = {in->baseline_path}, *pc[1] = {in->candidate_path};
	const char *hb[1] = {in->baseline_sha256}, *hc[1] = {in->candidate_sha256};
	struct gate_side sb = {rb, 1, NULL, 0, pb, hb}, sc = {rc, 1, NULL, 0, pc, hc};

	gate_compare_runs(&sb, &sc, th, in, r);
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
	for (int k = 0; k < 2; k++) {
		for (uint32_t i = 0; i < r->n_runs[k]; i++) {
			struct gate_run *x = &r->runs[k][i];
			for (uint32_t f = 0; f < x->n_profiles; f++) {
				free(x->profile_path[f]);
				free(x->profile_sha256[f]);
			}
			free(x->profile_path);
			free(x->profile_sha256);
			free(x->why);
		}
		free(r->runs[k]);
	}
	free(r->noisy_advice);
	free(r->diff);
	free(r->refusal);
	free(r->metrics);
	free(r->attribution);
	free(r->quality);
	memset(r, 0, sizeof(*r));
}
