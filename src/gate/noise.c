/*
 * noise: how far a metric moves between runs of one unchanged setup. Every
 * judgement profgate makes rests on it: the gate's test of each metric and
 * its attribution (compare.c), and the nightly trend rule (history/trend.c).
 *
 * A run is the unit of evidence. Steps inside one run share its machine, its
 * memory layout and its co-tenants, so they agree with each other far better
 * than with the steps of another run: measured with `make noise`, the run
 * medians of one script spread 1.5-3 % while the standard error of one run's
 * median from its own steps is about 0.5 %. The spread a regression must beat
 * is therefore the spread between runs, and it comes from, in order:
 *
 *   runs     a side with three or more runs (several --baseline or
 *            --candidate, or a history window, whose records are runs): the
 *            robust standard deviation (1.4826 x the median absolute
 *            deviation) of the deviations of every run from its own side's
 *            median, pooled over the sides that have three;
 *   history  the recent records of the candidate's series, when neither side
 *            has three runs and the gate was given a history;
 *   prior    the rule's "noise" in the thresholds file: the standard
 *            deviation of one run's value, as a share of the value, an
 *            absolute amount and a share of the step, added in quadrature.
 *
 * The prior is also a floor: a handful of runs that happen to agree say less
 * about the next run than the calibration does, and an estimate from five
 * runs is low as often as it is high.
 *
 * A side's value is the median over its runs, so that one disturbed run in a
 * window does not move it; the median of n runs varies more than their mean
 * (gate_noise_median_var), and the change's sd says so. Runs far slower than
 * their side's typical run are set aside as disturbed before any of this
 * (compare.c, name_runs), and a side whose runs disagree far more than the
 * pooled spread gets its own (compare.c, own_var).
 */
#include "gate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double gate_noise_prior_sd(const struct gate_rule *r, double ref, double step_us)
{
	double rel, abs, share;

	if (!r)
		return 0;
	rel = r->noise.has_relative ? r->noise.relative * fabs(ref) : 0;
	abs = r->noise.has_absolute ? r->noise.absolute : 0;
	share = step_us > 0 ? r->noise_step_share * step_us : 0;
	return sqrt(rel * rel + abs * abs + share * share);
}

double gate_noise_pooled_sd(const double *const *groups, const uint32_t *n, uint32_t k)
{
	size_t total = 0, w = 0;
	double small[32], *dev, sd;

	for (uint32_t g = 0; g < k; g++)
		if (n[g] >= GATE_NOISE_MIN_RUNS)
			total += n[g];
	if (total == 0)
		return NAN;
	/* a window's few runs: no allocation (a trend takes one per judged value) */
	dev = total <= sizeof(small) / sizeof(*small) ? small : pg_xcalloc(total, sizeof(double));
	for (uint32_t g = 0; g < k; g++) {
		double med;
		if (n[g] < GATE_NOISE_MIN_RUNS)
			continue;
		med = gate_median(groups[g], n[g]);
		for (uint32_t i = 0; i < n[g]; i++)
			dev[w++] = fabs(groups[g][i] - med);
	}
	sd = GATE_MAD_SD * gate_median(dev, (uint32_t)w);
	if (dev != small)
		free(dev);
	return sd;
}

double gate_noise_run_sd(const struct gate_rule *r, double est, double ref, double step_us,
			 const char *est_from, const char **from)
{
	double prior = gate_noise_prior_sd(r, ref, step_us);

	if (isfinite(est) && est > prior) {
		*from = est_from;
		return est;
	}
	*from = "prior";
	return prior;
}

/* n times the variance of the median of n standard normal values, n = 1..20
 * (Monte Carlo, 400,000 samples each; 1 and 2 exact): the median of an odd
 * count is one middle value, of an even count the mean of two, hence the
 * zigzag; it tends to pi / 2. */
static const double median_var_n[] = {1.000, 1.000, 1.346, 1.193, 1.434, 1.290, 1.473,
				      1.350, 1.496, 1.380, 1.510, 1.415, 1.520, 1.428,
				      1.527, 1.448, 1.536, 1.457, 1.542, 1.467};

double gate_noise_median_var(double n)
{
	uint32_t k = (uint32_t)n;

	if (!(n >= 1))
		return 1;
	if (k <= sizeof(median_var_n) / sizeof(median_var_n[0]))
		return median_var_n[k - 1] / k;
	return M_PI / 2 / n;
}

int gate_limit_reaches(const struct gate_limit *l, double worse, double worse_rel)
{
	if (!l->has_relative && !l->has_absolute)
		return 0;
	if (l->has_relative && !(worse_rel >= l->relative - 1e-12))
		return 0;
	return !l->has_absolute || worse >= l->absolute - 1e-12;
}

double gate_z(double worse, double sd)
{
	if (sd > 0)
		return worse / sd;
	return worse > 0 ? INFINITY : worse < 0 ? -INFINITY : 0;
}

int gate_metric_is_part(const char *metric)
{
	return strncmp(metric, "family.", 7) == 0 || strncmp(metric, "op.", 3) == 0 ||
	       strncmp(metric, "collective.", 11) == 0;
}

double gate_level(const struct gate_thresholds *th, const struct gate_rule *r, const char *metric,
		  uint32_t m_parts)
{
	double alpha = r && r->significance >= 0 ? r->significance : th->significance;

	/* the parts are many looks at one comparison: together they get the
	 * level once (Bonferroni), so a dozen jittery families do not make a
	 * false alarm in most A/A pairs */
	if (gate_metric_is_part(metric) && m_parts > 1)
		alpha /= m_parts;
	return alpha;
}
