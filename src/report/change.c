/*
 * A metric's change as people read it, the one way every printer shows it
 * (the comparison report's tables, the verdict lines of `gate` and `compare`
 * on the terminal): one unit per kind of metric, taken from the metric table
 * (summary/schema.c, summary_metric_unit), never guessed from a name.
 *
 * - shares (0..1 of the wall time): the change in percentage points, "+17.3 pp";
 * - times, bandwidths, throughputs: the change relative to the baseline,
 *   "+25.0%", times with the absolute change beside it, "(+5.86 ms)";
 * - a change from 0 (nothing relative to show): the absolute change.
 *
 * Digits: one decimal, unless the rounded number would sit on the other side
 * of one of the metric's printed limits than the exact change (0.2499997
 * printed "+25.0%" beside "fail +25%" while it does not reach it). Then more
 * decimals, until the printed number shows why (up to 6). The gate decides
 * on the exact change; the text never contradicts it (docs/gate.md, Units).
 */
#include "report.h"

#include <math.h>
#include <string.h>

#include "../gate/gate.h"

#define MAX_DECIMALS 6

enum report_unit report_metric_unit(const char *metric)
{
	const char *u = metric ? summary_metric_unit(metric) : "";

	if (strcmp(u, "us") == 0)
		return REPORT_U_TIME;
	if (strcmp(u, "share") == 0)
		return REPORT_U_SHARE;
	if (strcmp(u, "GB/s") == 0)
		return REPORT_U_GBPS;
	if (strcmp(u, "TFLOP/s") == 0)
		return REPORT_U_TFLOPS;
	return REPORT_U_NUMBER;
}

void report_signed_fixed(struct pg_buf *b, double v, int d, const char *suffix)
{
	double scale = pow(10, d);
	if (!isfinite(v)) {
		pg_buf_adds(b, "—");
		return;
	}
	if (round(fabs(v) * scale) == 0)
		v = 0;
	pg_buf_addf(b, "%+.*f%s", d, v, suffix);
}

void report_signed_time(struct pg_buf *b, double us)
{
	if (!isfinite(us)) {
		pg_buf_adds(b, "—");
		return;
	}
	if (fabs(us) < 0.05)
		us = 0;
	if (us >= 0)
		pg_buf_addc(b, '+');
	report_time(b, us);
}

/* Whether x reaches the limit lim (printed units, signed toward worse), with
 * the gate's tolerance (gate_limit_reaches) scaled to them. */
static int reaches(double x, double lim)
{
	return lim >= 0 ? x >= lim - 1e-10 : x <= lim + 1e-10;
}

/* A limit of l in printed units (x100: percent or pp), signed toward worse;
 * 0 with *has 0 when l gives none of that kind. */
static double limit_in(const struct gate_limit *l, enum gate_direction dir, int relative, int *has)
{
	double v = relative ? l->relative : l->absolute;
	*has = relative ? l->has_relative : l->has_absolute;
	return (dir == GATE_HIGHER_IS_BETTER ? -1 : 1) * 100 * fabs(v);
}

/* The decimals x (printed units) needs so that, rounded, it reaches each of
 * the rule's limits of its kind exactly when it does. */
int report_change_decimals(const struct gate_rule *rule, double x, int relative)
{
	int d = 1;

	if (!rule || rule->direction == GATE_INFO || !isfinite(x))
		return d;
	for (; d < MAX_DECIMALS; d++) {
		const struct gate_limit *ls[2] = {&rule->warn, &rule->fail};
		int ok = 1;
		double scale = pow(10, d), shown = round(x * scale) / scale;
		for (int i = 0; i < 2 && ok; i++) {
			int has;
			double lim = limit_in(ls[i], rule->direction, relative, &has);
			if (has && reaches(shown, lim) != reaches(x, lim))
				ok = 0;
		}
		if (ok)
			break;
	}
	return d;
}

void report_metric_change(struct pg_buf *b, const struct gate_metric_result *m)
{
	enum report_unit u = report_metric_unit(m->name);

	if (!m->has_baseline || !m->has_candidate) {
		pg_buf_adds(b, "—");
		return;
	}
	if (u == REPORT_U_SHARE) {
		double x = 100 * m->delta;
		report_signed_fixed(b, x, report_change_decimals(m->rule, x, 0), " pp");
		return;
	}
	if (!isfinite(m->delta_share)) {
		switch (u) {
		case REPORT_U_TIME: report_signed_time(b, m->delta); break;
		case REPORT_U_GBPS: report_signed_fixed(b, m->delta, 2, " GB/s"); break;
		case REPORT_U_TFLOPS: report_signed_fixed(b, m->delta, 2, " TFLOP/s"); break;
		default:
			if (isfinite(m->delta))
				pg_buf_addf(b, "%+.4g", m->delta);
			else
				pg_buf_adds(b, "—");
			break;
		}
		return;
	}
	double x = 100 * m->delta_share;
	report_signed_fixed(b, x, report_change_decimals(m->rule, x, 1), "%");
	if (u == REPORT_U_TIME) {
		pg_buf_adds(b, " (");
		report_signed_time(b, m->delta);
		pg_buf_adds(b, ")");
	}
}
