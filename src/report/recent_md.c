/*
 * The chart a gate report ends with when the gate has a history: a Mermaid
 * xychart-beta of the step time of the series' recent records with this run
 * as the last point, and a link to the series' page of the dashboard when
 * its address is known. GitHub renders it in PR comments and job summaries.
 * Renders what the command read; decides nothing. Record times are history
 * text: they reach the chart through report_mermaid().
 */
#include "report.h"

#include <math.h>
#include <string.h>

#define RECENT_LABEL_MAX 60

/* "MM-DD" of each time, with the hour where a day repeats and the position
 * where a minute does, so the categories are distinct; "this run" last. */
static void x_labels(struct pg_buf *b, const struct report_recent *c)
{
	pg_buf_adds(b, "    x-axis [");
	for (uint32_t i = 0; i < c->n; i++) {
		const char *t = c->time[i], *prev = i ? c->time[i - 1] : NULL;
		const char *next = i + 1 < c->n ? c->time[i + 1] : NULL;
		int dup =
		    (prev && strncmp(prev, t, 10) == 0) || (next && strncmp(next, t, 10) == 0);
		struct pg_buf l = PG_BUF_INIT;

		pg_buf_addf(&l, "%.5s", strlen(t) >= 10 ? t + 5 : t);
		if (dup && strlen(t) >= 16)
			pg_buf_addf(&l, " %.5s", t + 11);
		if (dup && prev && strncmp(prev, t, 16) == 0)
			pg_buf_addf(&l, " (%u)", i + 1);
		pg_buf_adds(b, i ? ", \"" : "\"");
		report_mermaid(b, l.ptr, 32);
		pg_buf_adds(b, "\"");
		pg_buf_release(&l);
	}
	pg_buf_addf(b, "%s\"this run\"]\n", c->n ? ", " : "");
}

void report_recent_md(const struct report_recent *c, struct pg_buf *out)
{
	double top = fabs(c->candidate), scale = 1;
	const char *unit = "us";
	int decimals;

	if (c->n == 0 || !isfinite(c->candidate))
		return;
	for (uint32_t i = 0; i < c->n; i++)
		top = fabs(c->value[i]) > top ? fabs(c->value[i]) : top;
	if (top >= 1e6) {
		scale = 1e-6;
		unit = "s";
	} else if (top >= 1e3) {
		scale = 1e-3;
		unit = "ms";
	}
	decimals = top * scale >= 1000 ? 1 : top * scale >= 10 ? 3 : 4;
	pg_buf_addf(out,
		    "### Step time: the last %u record%s and this run\n\n```mermaid\n"
		    "xychart-beta\n    title \"",
		    c->n, c->n == 1 ? "" : "s");
	report_mermaid(out, c->label && *c->label ? c->label : c->series, RECENT_LABEL_MAX);
	pg_buf_addf(out, ": step median (%s)\"\n", unit);
	x_labels(out, c);
	pg_buf_addf(out, "    y-axis \"%s\"\n    line [", unit);
	for (uint32_t i = 0; i < c->n; i++)
		pg_buf_addf(out, "%.*f, ", decimals, c->value[i] * scale);
	pg_buf_addf(out, "%.*f]\n```\n\n", decimals, c->candidate * scale);
	pg_buf_adds(out, "The series' main and nightly records, oldest first; this run last.");
	if (c->change_at < c->n) {
		pg_buf_adds(out, " The step changed at the record of ");
		report_text(out, c->time[c->change_at], 40);
		pg_buf_addf(out, " (the first of the new level, record %u of %u): %.*f → %.*f %s.",
			    c->change_at + 1, c->n, decimals, c->change_before * scale, decimals,
			    c->change_after * scale, unit);
	}
	if (c->page_url) {
		/* the address is checked (report_url_ok) and the page name is a safe file name */
		pg_buf_addf(out, " [The series on the dashboard](%s)", c->page_url);
	}
	pg_buf_adds(out, "\n\n");
}
