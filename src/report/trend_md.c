/*
 * The trend report: per series of the history, the metrics that changed (change
 * points with their size and confidence) or are flagged by the nightly rule,
 * and Mermaid xychart-beta charts, which GitHub renders in comments. It renders
 * a struct history_trend and decides nothing. Metric names are profile text
 * (op names): code spans in tables, report_mermaid() inside charts.
 * Deterministic; lists and charts are capped so a comment stays small.
 */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../gate/gate.h"
#include "../history/history.h"

#define SERIES_SHOWN   20
#define ROWS_SHOWN     30
#define CHARTS_SHOWN   4 /* per series */
#define CHART_POINTS   60
#define NAME_MAX_BYTES 80

#ifndef PG_VERSION
#define PG_VERSION "0.0.0-dev"
#endif

/* ---- numbers ---- */

/* A value in its unit for people: times as report_time, shares in percent. */
static void show_value(struct pg_buf *b, double v, const char *unit)
{
	if (!isfinite(v))
		pg_buf_adds(b, "—");
	else if (strcmp(unit, "us") == 0)
		report_time(b, v);
	else if (strcmp(unit, "share") == 0)
		pg_buf_addf(b, "%.2f%%", 100 * v);
	else
		pg_buf_addf(b, "%.3f%s%s", v, *unit ? " " : "", unit);
}

static void show_delta(struct pg_buf *b, const struct history_cp *c, const char *unit)
{
	if (strcmp(unit, "share") == 0)
		pg_buf_addf(b, "%+.2f pp", 100 * (c->after - c->before));
	else if (c->before != 0)
		pg_buf_addf(b, "%+.1f%%", 100 * (c->after - c->before) / fabs(c->before));
	else
		show_value(b, c->after - c->before, unit);
}

static double latest(const struct history_trend_metric *m, uint32_t n)
{
	for (uint32_t i = n; i > 0; i--)
		if (!isnan(m->value[i - 1]))
			return m->value[i - 1];
	return NAN;
}

/* ---- the table ---- */

static int shown(const struct history_trend_metric *m)
{
	return m->n_cp > 0 || m->n_runs > 0 || strcmp(m->name, "step.median_us") == 0;
}

static void cp_cell(struct pg_buf *b, const struct history_trend_series *s,
		    const struct history_trend_metric *m)
{
	if (m->n_cp == 0)
		pg_buf_adds(b, m->tested ? "none" : "too few records");
	for (uint32_t i = 0; i < m->n_cp && i < 3; i++) {
		const struct history_cp *c = &m->cp[i];
		pg_buf_addf(b, "%s%.10s", i ? "; " : "", s->r[c->index]->time);
		if (s->r[c->index]->sha) {
			pg_buf_adds(b, " ");
			report_code(b, s->r[c->index]->sha, 7);
		}
		pg_buf_adds(b, ": ");
		show_value(b, c->before, m->unit);
		pg_buf_adds(b, " → ");
		show_value(b, c->after, m->unit);
		pg_buf_adds(b, " (");
		show_delta(b, c, m->unit);
		pg_buf_addf(b, ", confidence %.3f)", history_cp_confidence(s, c));
	}
	if (m->n_cp > 3)
		pg_buf_addf(b, "; and %u more", m->n_cp - 3);
}

static void rule_cell(struct pg_buf *b, const struct history_trend_series *s,
		      const struct history_trend_metric *m)
{
	const struct history_trend_run *r;

	if (!m->rule || m->rule->direction == GATE_INFO) {
		pg_buf_adds(b, "not judged");
		return;
	}
	if (m->n_runs == 0) {
		pg_buf_addf(b, "ok (%u nightly judged)", m->n_judged);
		return;
	}
	r = &m->runs[m->n_runs - 1];
	pg_buf_addf(b, "%s%u in a row from %.10s%s, past the %s limit%s",
		    m->flagged ? "**flagged**: " : "", r->length, s->r[r->first]->time,
		    r->ongoing ? ", ongoing" : "", r->reached_fail ? "fail" : "warn",
		    m->flagged ? "" : " (over)");
	if (m->n_runs > 1)
		pg_buf_addf(b, "; %u earlier run%s", m->n_runs - 1, m->n_runs > 2 ? "s" : "");
}

static void table(struct pg_buf *b, const struct history_trend_series *s)
{
	uint32_t rows = 0, quiet = 0;

	for (uint32_t i = 0; i < s->n_m; i++) {
		const struct history_trend_metric *m = &s->m[i];
		if (!shown(m)) {
			quiet++;
			continue;
		}
		if (rows++ == ROWS_SHOWN)
			continue;
		if (rows == 1)
			pg_buf_adds(b, "| metric | latest | change points | nightly rule |\n"
				       "|---|---|---|---|\n");
		pg_buf_adds(b, "| ");
		report_code(b, m->name, NAME_MAX_BYTES);
		pg_buf_adds(b, " | ");
		show_value(b, latest(m, s->n), m->unit);
		pg_buf_adds(b, " | ");
		cp_cell(b, s, m);
		pg_buf_adds(b, " | ");
		rule_cell(b, s, m);
		pg_buf_adds(b, " |\n");
	}
	if (rows > ROWS_SHOWN)
		pg_buf_addf(b, "\n%u more metrics with a change point or a run (see the JSON).\n",
			    rows - ROWS_SHOWN);
	if (quiet)
		pg_buf_addf(b, "%s%u other metric%s: no change point, no run of violations.\n",
			    rows ? "\n" : "", quiet, quiet == 1 ? "" : "s");
	pg_buf_adds(b, "\n");
}

/* ---- charts ---- */

struct axis {
	double scale; /* value * scale is drawn */
	const char *unit;
	int decimals;
};

static struct axis axis_for(const struct history_trend_metric *m, uint32_t n)
{
	struct axis a = {1, m->unit, 3};
	double top = 0;

	for (uint32_t i = 0; i < n; i++)
		if (!isnan(m->value[i]) && fabs(m->value[i]) > top)
			top = fabs(m->value[i]);
	if (strcmp(m->unit, "us") == 0 && top >= 1e6)
		a = (struct axis){1e-6, "s", 3};
	else if (strcmp(m->unit, "us") == 0 && top >= 1e3)
		a = (struct axis){1e-3, "ms", 3};
	else if (strcmp(m->unit, "share") == 0)
		a = (struct axis){100, "%", 2};
	top *= a.scale;
	a.decimals = top >= 1000 ? 1 : top >= 10 ? 3 : 4;
	return a;
}

/* "MM-DD" of each point, with the time or a count where a day repeats, so
 * the categories are distinct. */
static void x_labels(struct pg_buf *b, const struct history_trend_series *s, const uint32_t *idx,
		     uint32_t n)
{
	pg_buf_adds(b, "    x-axis [");
	for (uint32_t i = 0; i < n; i++) {
		const char *t = s->r[idx[i]]->time, *prev = i ? s->r[idx[i - 1]]->time : NULL;
		const char *next = i + 1 < n ? s->r[idx[i + 1]]->time : NULL;
		int dup =
		    (prev && strncmp(prev, t, 10) == 0) || (next && strncmp(next, t, 10) == 0);
		pg_buf_addf(b, "%s\"%.5s", i ? ", " : "", t + 5);
		if (dup)
			pg_buf_addf(b, " %.5s", t + 11);
		if (dup && prev && strncmp(prev, t, 16) == 0)
			pg_buf_addf(b, " (%u)", i + 1);
		pg_buf_adds(b, "\"");
	}
	pg_buf_adds(b, "]\n");
}

static double segment_median(const struct history_trend_metric *m, uint32_t i)
{
	double v = NAN;

	for (uint32_t k = 0; k < m->n_cp; k++) {
		if (k == 0 && i < m->cp[0].index)
			v = m->cp[0].before;
		if (i >= m->cp[k].index)
			v = m->cp[k].after;
	}
	return v;
}

static void line(struct pg_buf *b, const struct history_trend_metric *m, const uint32_t *idx,
		 uint32_t n, const struct axis *a, int segments)
{
	pg_buf_adds(b, "    line [");
	for (uint32_t i = 0; i < n; i++) {
		double v = segments ? segment_median(m, idx[i]) : m->value[idx[i]];
		pg_buf_addf(b, "%s%.*f", i ? ", " : "", a->decimals, v * a->scale);
	}
	pg_buf_adds(b, "]\n");
}

static void chart(struct pg_buf *b, const struct history_trend_series *s,
		  const struct history_trend_metric *m)
{
	uint32_t *idx = pg_xcalloc(s->n + 1, sizeof(uint32_t)), n = 0;
	struct axis a = axis_for(m, s->n);

	for (uint32_t i = 0; i < s->n; i++)
		if (!isnan(m->value[i]))
			idx[n++] = i;
	if (n > CHART_POINTS) {
		memmove(idx, idx + n - CHART_POINTS, CHART_POINTS * sizeof(uint32_t));
		n = CHART_POINTS;
	}
	if (n >= 2) {
		pg_buf_adds(b, "```mermaid\nxychart-beta\n    title \"");
		report_mermaid(b, m->name, NAME_MAX_BYTES);
		pg_buf_addf(b, "%s%s%s\"\n", *a.unit ? " (" : "", a.unit, *a.unit ? ")" : "");
		x_labels(b, s, idx, n);
		pg_buf_adds(b, "    y-axis \"");
		report_mermaid(b, a.unit, 16);
		pg_buf_adds(b, "\"\n");
		line(b, m, idx, n, &a, 0);
		if (m->n_cp)
			line(b, m, idx, n, &a, 1);
		pg_buf_adds(b, "```\n\n");
	}
	free(idx);
}

/* step.median_us, then flagged metrics, then those with change points. */
static void charts(struct pg_buf *b, const struct history_trend_series *s)
{
	uint32_t drawn = 0, with_cp = 0;

	for (int pass = 0; pass < 3; pass++)
		for (uint32_t i = 0; i < s->n_m && drawn < CHARTS_SHOWN; i++) {
			const struct history_trend_metric *m = &s->m[i];
			int step = strcmp(m->name, "step.median_us") == 0;
			int want = pass == 0   ? step
				   : pass == 1 ? !step && m->flagged
					       : !step && !m->flagged && m->n_cp;
			if (!want)
				continue;
			chart(b, s, m);
			drawn++;
			with_cp += m->n_cp > 0;
		}
	if (with_cp)
		pg_buf_adds(b, "In a chart, the second line is the median of each segment between "
			       "change points.\n\n");
}

/* ---- a series ---- */

static void heading(struct pg_buf *b, const struct history_trend_series *s,
		    const struct history_trend *t)
{
	pg_buf_adds(b, "### ");
	if (s->label) {
		report_text(b, s->label, 100);
		pg_buf_adds(b, " · ");
	}
	report_code(b, s->series, 100);
	pg_buf_addf(b, "\n\n%u record%s (", s->n, s->n == 1 ? "" : "s");
	for (size_t i = 0; t->o.kinds[i]; i++)
		pg_buf_addf(b, "%s%s", i ? ", " : "", t->o.kinds[i]);
	pg_buf_addf(b,
		    ") from %.10s to %.10s; %u metric%s, %u with enough records for change "
		    "points.\n\n",
		    s->r[0]->time, s->r[s->n - 1]->time, s->n_m, s->n_m == 1 ? "" : "s",
		    s->n_tested);
}

static void flags(struct pg_buf *b, const struct history_trend_series *s, uint32_t k)
{
	uint32_t n = 0;

	if (!s->n_flagged)
		return;
	pg_buf_addf(
	    b, "**Flagged** (past the warn limit in %u or more nightly records in a row): ", k);
	for (uint32_t i = 0; i < s->n_m && n < 10; i++)
		if (s->m[i].flagged) {
			pg_buf_adds(b, n++ ? ", " : "");
			report_code(b, s->m[i].name, NAME_MAX_BYTES);
			pg_buf_addf(b, " (%u)", s->m[i].runs[s->m[i].n_runs - 1].length);
		}
	if (s->n_flagged > n)
		pg_buf_addf(b, " and %u more", s->n_flagged - n);
	pg_buf_adds(b, "\n\n");
}

void report_trend_md(const struct history_trend *t, struct pg_buf *out)
{
	pg_buf_adds(out, "## profgate trend\n\n");
	if (t->n == 0)
		pg_buf_adds(out, "No records.\n\n");
	for (uint32_t i = 0; i < t->n && i < SERIES_SHOWN; i++) {
		heading(out, &t->s[i], t);
		flags(out, &t->s[i], t->consecutive);
		table(out, &t->s[i]);
		charts(out, &t->s[i]);
	}
	if (t->n > SERIES_SHOWN)
		pg_buf_addf(out, "%u more series (see the JSON).\n\n", t->n - SERIES_SHOWN);
	pg_buf_addf(out,
		    "<sub>Change points: binary segmentation, the best rank-sum split tested over "
		    "every split (a permutation test under 48 records), metrics chosen at a "
		    "false-discovery rate of %g, reported past "
		    "the warn "
		    "limit. Nightly rule: %u in a row past the warn limit against the median of "
		    "up to %u earlier records (thresholds ",
		    t->o.alpha, t->consecutive, t->o.window);
	report_text(out, t->o.th && t->o.th->name ? t->o.th->name : "none", 60);
	pg_buf_addf(out, "). profgate %s</sub>\n", PG_VERSION);
}
