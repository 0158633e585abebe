/*
 * The runs of each side, named and judged as runs: every run's input,
 * digests, profiles and step values go into the verdict (gate_runs_name), and
 * a run a co-tenant burst hit is set aside as disturbed before the side's
 * median and noise are taken (docs/noise.md "Disturbed runs"). A burst only
 * ever slows a run, so a side's typical run is the median of its fastest
 * third; a run far above it, or whose mean step is far above its own median
 * (a burst hit part of it), is set aside, and a side left with fewer runs
 * than its fastest third is too few to judge. A run of a side of one or two
 * has no runs to be set aside against: a burst over one stretch of its steps
 * is found here (gate_run_burst_share) and widens its p90 step's noise in
 * compare.c. compare.c calls these before its test and after provenance.
 */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A run's steady step times in step order into *v (owned by the caller),
 * and where each is in s->steps into *at when at is not NULL; how many. */
static uint32_t steady_steps(const struct summary *s, double **v, uint32_t **at)
{
	uint32_t n = 0;

	*v = pg_xcalloc(s->n_steps + 1, sizeof(double));
	if (at)
		*at = pg_xcalloc(s->n_steps + 1, sizeof(uint32_t));
	for (uint32_t i = 0; i < s->n_steps; i++)
		if (s->steps[i].steady && s->steps[i].us >= 0) {
			if (at)
				(*at)[n] = i;
			(*v)[n++] = s->steps[i].us;
		}
	return n;
}

/* How far the mean of a run's steady steps is above their median (NAN for
 * fewer than 5 steps, as side_spread). */
double gate_run_excess_share(const struct summary *s)
{
	double *v, sum = 0, med, out = NAN;
	uint32_t n = steady_steps(s, &v, NULL);

	for (uint32_t i = 0; i < n; i++)
		sum += v[i];
	if (n >= 5) {
		med = gate_median(v, n);
		out = med > 0 ? sum / n / med - 1 : NAN;
	}
	free(v);
	return out;
}

/* Burst detection: a step is slow when it is more than GATE_SET_ASIDE_EXCESS
 * and GATE_BURST_SD robust sds above the run's median step; the slow steps
 * are one burst when there are two or more, they fill at least half of the
 * stretch of steps from the first to the last, and that stretch is at most
 * half of the run. A co-tenant's burst lasts seconds, many steps of a small
 * model one after another (base-08 of `make noise`'s seed 83000: 7 of its 25
 * steps in a row at 125-185 % of its median); a tail the code makes (a
 * checkpoint, a collection every N steps) comes back through the run and
 * is not one stretch. */
#define GATE_BURST_SD	     4.0
#define GATE_BURST_MIN_STEPS 10

double gate_run_burst_share(const struct summary *s, int64_t *first, int64_t *last)
{
	double *v, *spared, med, cut, all, rest, out = NAN;
	uint32_t *at, k = 0, lo = 0, hi = 0, m = 0;
	uint32_t n = steady_steps(s, &v, &at);

	if (n < GATE_BURST_MIN_STEPS)
		goto out;
	out = 0;
	med = gate_median(v, n);
	cut = fmax(med * (1 + GATE_SET_ASIDE_EXCESS), med + GATE_BURST_SD * gate_robust_sd(v, n));
	for (uint32_t i = 0; i < n; i++)
		if (v[i] > cut) {
			if (!k++)
				lo = i;
			hi = i;
		}
	if (k < 2 || 2 * k < hi - lo + 1 || 2 * (hi - lo + 1) > n)
		goto out;
	spared = pg_xcalloc(n, sizeof(double));
	for (uint32_t i = 0; i < n; i++)
		if (i < lo || i > hi)
			spared[m++] = v[i];
	all = gate_quantile(v, n, 0.9);
	rest = gate_quantile(spared, m, 0.9);
	free(spared);
	if (all > 0 && rest < all) {
		out = 1 - rest / all;
		*first = s->steps[at[lo]].step;
		*last = s->steps[at[hi]].step;
	}
out:
	free(v);
	free(at);
	return out;
}

/* A run of a side of GATE_NOISE_MIN_RUNS or more is set aside as disturbed
 * when its steady median step is more than GATE_SET_ASIDE_SD times the step's
 * between-run noise (the step.median_us rule's prior, 2 % shipped: 8 %), and
 * at least GATE_SET_ASIDE_MIN_SHARE, above the side's typical run: the median
 * of its fastest third (the fastest of 3 runs, the two fastest of 5). A
 * co-tenant burst only ever slows a run, and on a busy shared runner about a
 * quarter of the runs are hit, so two of three can be: the fastest third is
 * what the bursts most likely spared, and a side whose runs all moved alike
 * (a regression) keeps them all. The least share is 15 % because the
 * undisturbed runs of one build spread up to 13 % from fastest to slowest on
 * a quiet machine, and a history window may straddle a real step of the
 * series (a regression merged mid-window: +8 % in the trend tests), whose
 * records are not disturbed; the runs a burst hit in `make noise`'s busy mode
 * were 20 % to several times slower than the spared ones (docs/noise.md
 * "Disturbed runs").
 *
 * A burst that hit part of a run leaves its median step alone but not its
 * means (the families' and ops' us_per_step): a few of its steps are two to
 * four times as long, and its mean step is far above its median. In the busy
 * calibration the mean of a spared run's steps was within 1 % of their median
 * (at most 8 %), of a run a burst hit in part 30-75 % above. A run whose mean
 * step is more than GATE_SET_ASIDE_EXCESS above its median, and more than
 * GATE_DISTURBED_RATIO times as far as the side's typical run's, is set aside
 * too. */
#define GATE_SET_ASIDE_SD	 4.0
#define GATE_SET_ASIDE_MIN_SHARE 0.15

static double run_step_us(const struct summary *s)
{
	return s->steady.count > 0 ? s->steady.median_us : NAN;
}

/* The most a run's mean step may exceed its median before the run is set
 * aside: GATE_DISTURBED_RATIO times the side's typical excess (the median of
 * its runs'), and GATE_SET_ASIDE_EXCESS; NAN when fewer than
 * GATE_NOISE_MIN_RUNS runs have one. */
static double excess_limit(const struct gate_run *x, uint32_t n)
{
	double *v = pg_xcalloc(n + 1, sizeof(double)), typical;
	uint32_t k = 0;

	for (uint32_t i = 0; i < n; i++)
		if (isfinite(x[i].excess_share))
			v[k++] = x[i].excess_share;
	typical = k >= GATE_NOISE_MIN_RUNS ? gate_median(v, k) : NAN;
	free(v);
	return isfinite(typical) ? gate_excess_limit(typical) : NAN;
}

double gate_excess_limit(double typical)
{
	double lim = GATE_SET_ASIDE_EXCESS;

	if (isfinite(typical) && GATE_DISTURBED_RATIO * typical > lim)
		lim = GATE_DISTURBED_RATIO * typical;
	return lim;
}

/* The fastest third of a side, rounded up: the runs its typical run is the
 * median of, and the fewest a side may keep and still be judged. */
static uint32_t fastest_third(uint32_t n)
{
	return (n + 2) / 3;
}

/* The median of the fastest third of the finite values of v (NAN for fewer
 * than GATE_NOISE_MIN_RUNS of them). */
static double typical_step(const double *v, uint32_t n)
{
	double *x = pg_xcalloc(n + 1, sizeof(double)), m;
	uint32_t k = 0;

	for (uint32_t i = 0; i < n; i++)
		if (isfinite(v[i]))
			x[k++] = v[i];
	qsort(x, k, sizeof(double), pg_cmp_double);
	m = k >= GATE_NOISE_MIN_RUNS ? gate_median(x, fastest_third(k)) : NAN;
	free(x);
	return m;
}

/* The typical of the runs' median steps v (NAN: too few to tell) and, in
 * *lim, how far above it a run is set aside. */
static double step_rule(const struct gate_result *r, const double *v, uint32_t n, double *lim)
{
	const struct gate_rule *rule = gate_rule_for(r->thresholds, "step.median_us");
	double typical = typical_step(v, n);

	*lim = NAN;
	if (!(typical > 0))
		return NAN;
	*lim = GATE_SET_ASIDE_SD * gate_noise_prior_sd(rule, typical, typical) / typical;
	if (!(*lim > GATE_SET_ASIDE_MIN_SHARE))
		*lim = GATE_SET_ASIDE_MIN_SHARE;
	return typical;
}

/* Side k's runs into r->runs[k], each named and digested, the disturbed ones
 * marked. */
void gate_runs_name(struct gate_result *r, int k, const struct gate_side *g)
{
	double *v = pg_xcalloc(g->n_runs + 1, sizeof(double)), typical, lim, excess;

	r->n_runs[k] = g->n_runs;
	r->runs[k] = pg_xcalloc(g->n_runs + 1, sizeof(struct gate_run));
	for (uint32_t i = 0; i < g->n_runs; i++) {
		struct gate_run *x = &r->runs[k][i];
		const struct summary *s = g->runs[i];
		x->path = g->paths ? g->paths[i] : NULL;
		x->sha256 = g->sha256 && g->sha256[i] && g->sha256[i][0] ? g->sha256[i] : NULL;
		if (!g->history)
			gate_summary_sha256(s, x->summary_sha256);
		x->n_profiles = s->n_files;
		x->profile_path = pg_xcalloc(s->n_files + 1, sizeof(char *));
		x->profile_sha256 = pg_xcalloc(s->n_files + 1, sizeof(char *));
		for (uint32_t f = 0; f < s->n_files; f++) {
			x->profile_path[f] = s->files[f].path ? pg_xstrdup(s->files[f].path) : NULL;
			x->profile_sha256[f] =
			    s->files[f].sha256 ? pg_xstrdup(s->files[f].sha256) : NULL;
		}
		x->step_median_us = v[i] = run_step_us(s);
		x->step_p90_us = s->steady.count > 0 ? s->steady.p90_us : NAN;
		x->excess_share = g->history ? NAN : gate_run_excess_share(s);
		x->burst_share =
		    g->history ? NAN : gate_run_burst_share(s, &x->burst_first, &x->burst_last);
		x->fastest_us = s->host.fastest_us_per_step > 0 ? s->host.fastest_us_per_step : NAN;
		x->slowed_share = NAN;
		x->from_share = NAN;
	}
	typical = step_rule(r, v, g->n_runs, &lim);
	free(v);
	if (!(typical > 0))
		return;
	excess = excess_limit(r->runs[k], g->n_runs);
	r->set_aside_limit_share = lim;
	for (uint32_t i = 0; i < g->n_runs; i++) {
		struct gate_run *x = &r->runs[k][i];
		x->from_share = x->step_median_us / typical - 1;
		if (x->from_share > lim)
			x->why = pg_xasprintf(
			    "its median step %.3f ms is %.0f%% above the side's typical "
			    "run (%.3f ms), beyond the %.0f%% run-to-run noise allows",
			    x->step_median_us / 1e3, 100 * x->from_share, typical / 1e3, 100 * lim);
		else if (x->excess_share > excess)
			x->why =
			    pg_xasprintf("its mean step is %.0f%% above its median, beyond the "
					 "%.0f%% its side's runs allow: a burst slowed part of it",
					 100 * x->excess_share, 100 * excess);
		else
			continue;
		x->set_aside = 1;
		r->set_aside[k]++;
	}
}

/*
 * Slowed from outside. A run a co-tenant slowed from end to end has its steps
 * spread as usual and every part slowed alike: by its steps alone it is a
 * regression. Its ops are not: a co-tenant that shares the core preempts the
 * op it lands in, and seldom the same op in every step, so each op's fastest
 * instance is one it spared. A run's median step over its step with every op
 * at its fastest (step.fastest_us, analyze/host.c) was 1.04-1.25 in runs that
 * had the machine to themselves, and 1.47-2.3 times its typical in the runs
 * `make noise`'s busy co-tenant slowed from end to end, whatever the code: a
 * wider matmul makes its fastest instance as slow as the rest.
 *
 * So a run of a side of one or two (which has no runs to be set aside
 * against) whose median step over its fastest is more than GATE_SLOWED_MIN
 * above the runs' typical (the median of the less slowed half of every run
 * and record), and whose median step is more than GATE_SLOWED_STEP_MIN above
 * theirs (a run is slowed only when it is slower: an unusually fast instance
 * of every op lowers the fastest step of a run that was not), was slowed from
 * outside by that factor; its time metrics are judged divided by it
 * (compare.c side_init). Its fastest instances were not all spared (an op
 * longer than the co-tenant's time slice never runs whole), so the estimate
 * was within 10 % for 9 of the 16 slowed runs of the busy calibration, and
 * 30-48 % high for 6, where the co-tenant also loaded memory and slowed every
 * instance of the long ops: its step
 * is known to within GATE_SLOWED_SD per unit of the factor's log (7 % at 2
 * times), its parts and tail only to within the slowdown, and past a limit it
 * is inconclusive, never a warn or fail (compare.c apply_slowed).
 *
 * A wait the code added in most steps but not all (a data loader whose
 * prefetched batches ran out) leaves the fastest step where it was too. What
 * tells it from a co-tenant is the run's largest part: a co-tenant slows it
 * with the rest, so its share of the step holds, where a step that grew by g
 * beside it takes g/(1+g) off its share. A run whose largest part's share
 * fell by more than GATE_SLOWED_SHARE_FALL of that is not slowed from outside.
 */
static double slowdown(double step_us, double fastest_us)
{
	return fastest_us > 0 && step_us > 0 ? step_us / fastest_us : NAN;
}

/* The median of the lower half of the n values of v (sorted here): the runs'
 * typical, which the runs slowed from outside (a quarter of them on a busy
 * runner) do not move. NAN for fewer than 2. */
static double lower_typical(double *v, uint32_t n)
{
	if (n < 2)
		return NAN;
	qsort(v, n, sizeof(double), pg_cmp_double);
	return gate_median(v, (n + 1) / 2);
}

/* The family's share of s's mean steady step: both are means over the
 * steps, so a burst in a few steps moves them alike. NAN without steps. */
static double family_share(const struct summary *s, const char *name)
{
	const struct sum_family *f = gate_find_family(s, name);

	if (!(s->steady.count > 0 && s->steady.mean_us > 0))
		return NAN;
	return (f ? f->us_per_step : 0) / s->steady.mean_us;
}

/* The judged family that takes the most time, median over the runs of both
 * sides but run i of side k, and its median share of their mean steps in
 * *share; NULL when they have none. */
static const char *largest_part(const struct gate_side *const g[2], int k, uint32_t i,
				double *share)
{
	uint32_t n = g[0]->n_runs + g[1]->n_runs, m, c;
	double *v = pg_xcalloc(n + 1, sizeof(double)), best_us = 0;
	const char *best = NULL;

	for (int s = 0; s < 2; s++)
		for (uint32_t j = 0; j < g[s]->n_runs; j++) {
			const struct sum_family *f = summary_step_families(g[s]->runs[j], &m);
			for (uint32_t q = 0; q < m; q++) {
				c = 0;
				for (int t = 0; t < 2; t++)
					for (uint32_t u = 0; u < g[t]->n_runs; u++) {
						const struct sum_family *x =
						    gate_find_family(g[t]->runs[u], f[q].family);
						if (t != k || u != i)
							v[c++] = x ? x->us_per_step : 0;
					}
				double med = c ? gate_median(v, c) : 0;
				if (med > best_us ||
				    (med == best_us && best && strcmp(f[q].family, best) < 0)) {
					best_us = med;
					best = f[q].family;
				}
			}
		}
	c = 0;
	for (int t = 0; best_us > 0 && t < 2; t++)
		for (uint32_t u = 0; u < g[t]->n_runs; u++)
			if ((t != k || u != i) &&
			    isfinite(v[c] = family_share(g[t]->runs[u], best)))
				c++;
	*share = c ? gate_median(v, c) : NAN;
	free(v);
	return best_us > 0 ? best : NULL;
}

void gate_runs_slowed(struct gate_result *r, const struct gate_side *const g[2],
		      const struct gate_side *noise)
{
	static const char *const side[2] = {"baseline", "candidate"};
	uint32_t n = r->n_runs[0] + r->n_runs[1] + (noise ? noise->n_runs : 0), k = 0;
	double *over = pg_xcalloc(n + 1, sizeof(double)), *step = pg_xcalloc(n + 1, sizeof(double));
	double typical, typical_step;

	for (int s = 0; s < 2; s++)
		for (uint32_t i = 0; i < r->n_runs[s]; i++) {
			const struct gate_run *x = &r->runs[s][i];
			if (isfinite(over[k] = slowdown(x->step_median_us, x->fastest_us)))
				step[k++] = x->step_median_us;
		}
	for (uint32_t i = 0; noise && i < noise->n_runs; i++) {
		const struct summary *x = noise->runs[i];
		if (isfinite(over[k] = slowdown(run_step_us(x), x->host.fastest_us_per_step)))
			step[k++] = run_step_us(x);
	}
	typical = lower_typical(over, k);
	typical_step = lower_typical(step, k);
	if (!isfinite(typical))
		goto out;
	for (int s = 0; s < 2; s++) {
		struct pg_buf b = PG_BUF_INIT;
		uint32_t hit = 0;
		if (r->n_runs[s] >= GATE_NOISE_MIN_RUNS)
			continue;
		for (uint32_t i = 0; i < r->n_runs[s]; i++) {
			struct gate_run *x = &r->runs[s][i];
			double over_x = slowdown(x->step_median_us, x->fastest_us),
			       slow = over_x / typical - 1;
			if (!(slow > GATE_SLOWED_MIN) ||
			    !(x->step_median_us / typical_step - 1 > GATE_SLOWED_STEP_MIN))
				continue;
			double ref;
			const char *part = largest_part(g, s, i, &ref);
			if (part && ref > 0 &&
			    1 - family_share(g[s]->runs[i], part) / ref >
				GATE_SLOWED_SHARE_FALL * slow / (1 + slow))
				continue; /* the step grew beside its largest part: the code */
			x->slowed_share = slow;
			pg_buf_addf(
			    &b,
			    "%sthe %s run's median step %.3f ms is %.2f times its step with "
			    "every op at its fastest (%.3f ms), against %.2f typical of the "
			    "runs: slowed %.0f%% from outside (another job on the machine); "
			    "its times are judged divided by %.2f, to within %.0f%%",
			    hit++ ? "; " : "", side[s], x->step_median_us / 1e3, over_x,
			    x->fastest_us / 1e3, typical, 100 * slow, 1 + slow,
			    100 * GATE_SLOWED_SD * log1p(slow));
		}
		if (!hit)
			continue;
		r->quality = pg_xrealloc(r->quality, (r->n_quality + 1) * sizeof(*r->quality));
		r->quality[r->n_quality++] =
		    (struct gate_quality_hit){s, pg_xstrdup("slowed"), pg_buf_detach(&b, NULL),
					      gate_quality_action(r->thresholds, "slowed")};
	}
out:
	free(over);
	free(step);
}

double gate_run_scale(const struct gate_result *r, int k, uint32_t i)
{
	return i < r->n_runs[k] && isfinite(r->runs[k][i].slowed_share)
		   ? 1 / (1 + r->runs[k][i].slowed_share)
		   : 1;
}

/* Marks the run of side k (as given, g) whose summary the report shows. */
void gate_runs_mark_shown(struct gate_result *r, int k, const struct gate_side *g,
			  const struct summary *shown)
{
	for (uint32_t i = 0; i < g->n_runs; i++)
		r->runs[k][i].shown = g->runs[i] == shown;
}

/* The runs of side k not set aside, as a side of their own (kept: room for
 * n_runs). */
void gate_runs_kept(const struct gate_result *r, int k, const struct gate_side *g,
		    const struct summary **kept, struct gate_side *out)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < g->n_runs; i++)
		if (!r->runs[k][i].set_aside)
			kept[n++] = g->runs[i];
	*out = (struct gate_side){kept, n, g->rep, g->history, NULL, NULL};
}

/* The series' recent records the noise model falls back on, without the
 * disturbed ones (the same rule as a side's runs). */
const struct gate_side *gate_runs_keep_undisturbed(const struct gate_result *r,
						   const struct gate_side *g,
						   const struct summary **kept,
						   struct gate_side *out)
{
	double *v = pg_xcalloc(g->n_runs + 1, sizeof(double)), typical, lim;
	uint32_t n = 0;

	for (uint32_t i = 0; i < g->n_runs; i++)
		v[i] = run_step_us(g->runs[i]);
	typical = step_rule(r, v, g->n_runs, &lim);
	for (uint32_t i = 0; i < g->n_runs; i++)
		if (!(v[i] / typical - 1 > lim))
			kept[n++] = g->runs[i];
	free(v);
	*out = (struct gate_side){kept, n, g->rep, g->history, NULL, NULL};
	return out;
}

/* Too few runs left: fewer than the side's fastest third (one of 3 runs is
 * enough, as one run a side is; one of 5 is not: its two fastest disagreed by
 * more than a burst-free machine allows, and nothing says which was right).
 * The verdict is then inconclusive (overall), never a fail and never a
 * silent pass, and the quality note says which runs and why. */
int gate_runs_too_few(const struct gate_result *r, int k)
{
	uint32_t left = r->n_runs[k] - r->set_aside[k];

	return r->set_aside[k] && left < fastest_third(r->n_runs[k]);
}

void gate_runs_note_set_aside(struct gate_result *r)
{
	static const char *const side[2] = {"baseline", "candidate"};

	for (int k = 0; k < 2; k++) {
		struct pg_buf b = PG_BUF_INIT;
		uint32_t left = r->n_runs[k] - r->set_aside[k];
		int few = gate_runs_too_few(r, k);
		if (!r->set_aside[k])
			continue;
		pg_buf_addf(&b, "%u of the %u %s runs set aside as disturbed (median step",
			    r->set_aside[k], r->n_runs[k], side[k]);
		for (uint32_t i = 0, j = 0; i < r->n_runs[k]; i++) {
			const struct gate_run *x = &r->runs[k][i];
			if (!x->set_aside)
				continue;
			pg_buf_addf(&b, "%s %.3f ms (%+.0f%%", j++ ? "," : "",
				    x->step_median_us / 1e3, 100 * x->from_share);
			if (!(x->from_share > r->set_aside_limit_share))
				pg_buf_addf(&b, ", mean step %+.0f%% over its median",
					    100 * x->excess_share);
			pg_buf_adds(&b, ")");
		}
		pg_buf_addf(&b,
			    "; more than %.0f%% above the side's typical run, or a mean step "
			    "more than %.0f%% over its median); ",
			    100 * r->set_aside_limit_share, 100 * GATE_SET_ASIDE_EXCESS);
		if (few)
			pg_buf_addf(&b, "%u left, too few to judge: run them again", left);
		else
			pg_buf_addf(&b, "the %s rests on the other %u", side[k], left);
		r->quality = pg_xrealloc(r->quality, (r->n_quality + 1) * sizeof(*r->quality));
		r->quality[r->n_quality++] = (struct gate_quality_hit){
		    k, pg_xstrdup("runs-disturbed"), pg_buf_detach(&b, NULL),
		    few ? GATE_INCONCLUSIVE : GATE_IGNORE};
		if (few)
			r->too_few_runs = 1;
	}
}
