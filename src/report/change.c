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
	if (strcmp(u, "bytes") == 0)
		return REPORT_U_BYTES;
	return REPORT_U_NUMBER;
}

void report_bytes(struct pg_buf *b, double v)
{
	if (v >= 1e9)
		pg_buf_addf(b, "%.2f GB", v / 1e9);
	else if (v >= 1e6)
		pg_buf_addf(b, "%.1f MB", v / 1e6);
	else
		pg_buf_addf(b, "%.0f B", v);
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

void report_value(struct pg_buf *b, enum report_unit u, double v)
{
	if (!isfinite(v)) {
		pg_buf_adds(b, "—");
		return;
	}
	switch (u) {
	case REPORT_U_TIME: report_time(b, v); break;
	case REPORT_U_SHARE: pg_buf_addf(b, "%.1f%%", 100 * v); break;
	case REPORT_U_GBPS: pg_buf_addf(b, "%.2f GB/s", v); break;
	case REPORT_U_TFLOPS: pg_buf_addf(b, "%.2f TFLOP/s", v); break;
	case REPORT_U_BYTES: report_bytes(b, v); break;
	default: pg_buf_addf(b, "%.4g", v); break;
	}
}

void report_limit(struct pg_buf *b, const struct gate_limit *l, enum gate_direction dir,
		  enum report_unit u)
{
	char sign = dir == GATE_HIGHER_IS_BETTER ? '-' : '+';

	/* every digit the thresholds file gives: a limit is never rounded */
	if (l->has_relative)
		pg_buf_addf(b, "%c%.10g%%", sign, 100 * fabs(l->relative));
	if (l->has_relative && l->has_absolute)
		pg_buf_adds(b, " and ");
	if (l->has_absolute) {
		double a = fabs(l->absolute);
		if (u == REPORT_U_SHARE)
			pg_buf_addf(b, "%c%.10g pp", sign, 100 * a);
		else {
			pg_buf_addc(b, sign);
			report_value(b, u, a);
		}
	}
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

void report_change(struct pg_buf *b, const char *metric, double delta, double delta_share,
		   const struct gate_rule *rule, int with_time)
{
	enum report_unit u = report_metric_unit(metric);
	double x;

	if (u == REPORT_U_SHARE) {
		x = 100 * delta;
		report_signed_fixed(b, x, report_change_decimals(rule, x, 0), " pp");
		return;
	}
	if (!isfinite(delta_share)) {
		switch (u) {
		case REPORT_U_TIME: report_signed_time(b, delta); break;
		case REPORT_U_GBPS: report_signed_fixed(b, delta, 2, " GB/s"); break;
		case REPORT_U_TFLOPS: report_signed_fixed(b, delta, 2, " TFLOP/s"); break;
		case REPORT_U_BYTES: report_signed_fixed(b, delta / 1e6, 1, " MB"); break;
		default:
			if (isfinite(delta))
				pg_buf_addf(b, "%+.4g", delta);
			else
				pg_buf_adds(b, "—");
			break;
		}
		return;
	}
	x = 100 * delta_share;
	report_signed_fixed(b, x, report_change_decimals(rule, x, 1), "%");
	if (u == REPORT_U_TIME && with_time) {
		pg_buf_adds(b, " (");
		report_signed_time(b, delta);
		pg_buf_adds(b, ")");
	}
}

void report_metric_change(struct pg_buf *b, const struct gate_metric_result *m)
{
	if (!m->has_baseline || !m->has_candidate) {
		pg_buf_adds(b, "—");
		return;
	}
	report_change(b, m->name, m->delta, m->delta_share, m->rule, 1);
}
