/*
 * The chart a gate with a history adds to its report (PR comment, job
 * summary, report.md): the step time of the candidate series' last main and
 * nightly records, this run last (report_recent_md), linked to the series'
 * dashboard page when job->dashboard_url is known, and the last change point of
 * those records where the trend would put it. The records are read
 * quietly: no history (a first run, an unreadable remote) is no chart, and the
 * append after the verdict reports a bad remote.
 */
#include "cmd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../gate/gate.h"
#include "../history/history.h"
#include "../report/report.h"

#define RECENT_RECORDS 20
#define CHART_CP_ALPHA 0.01
#define STEP_METRIC    "step.median_us"

static double metric_of(const struct history_record *r, const char *name)
{
	for (uint32_t i = 0; i < r->n_metrics; i++)
		if (strcmp(r->metrics[i].name, name) == 0)
			return r->metrics[i].value;
	return NAN;
}

static int by_time(const void *a, const void *b)
{
	const struct history_record *x = *(const struct history_record *const *)a;
	const struct history_record *y = *(const struct history_record *const *)b;
	int c = strcmp(x->time, y->time);

	return c ? c : (x > y) - (x < y); /* one second: the list's (append) order */
}

static double candidate_step(const struct gate_result *r)
{
	for (uint32_t i = 0; i < r->n_metrics; i++)
		if (strcmp(r->metrics[i].name, STEP_METRIC) == 0 && r->metrics[i].has_candidate)
			return r->metrics[i].candidate;
	return NAN;
}

void cmd_gate_recent_chart(const struct cmd_gate_job *job, const char *series,
			   const struct gate_result *r, struct pg_buf *md)
{
	struct history_store_opts o;
	/* the newest months that hold its recent records, with room for pr and manual ones */
	struct history_filter f = {series, NULL, NULL, NULL, NULL, 4 * RECENT_RECORDS};
	struct history_list l = {0};
	const struct history_record **rec = NULL;
	const char **time = NULL;
	double *value = NULL, cand = candidate_step(r);
	struct pg_buf url = PG_BUF_INIT;
	uint32_t n = 0, from, n_cp;
	/* the trend's test and place for the step's change points (history
	 * trend's defaults: segments of 3, level 0.01) */
	const struct history_cp_opts cp_opts = {0, CHART_CP_ALPHA, 0};
	struct history_cp cps[RECENT_RECORDS + 1];
	int exists;

	if (!job->history || !isfinite(cand))
		return;
	cmd_history_store_opts(&o, job->history, job->history_branch);
	if (history_read(&o, &f, &l, &exists) != 0 || l.n == 0)
		goto out;
	rec = pg_xcalloc(l.n, sizeof(*rec));
	for (uint32_t i = 0; i < l.n; i++)
		if ((strcmp(l.r[i].kind, "main") == 0 || strcmp(l.r[i].kind, "nightly") == 0) &&
		    isfinite(metric_of(&l.r[i], STEP_METRIC)))
			rec[n++] = &l.r[i];
	if (n == 0)
		goto out;
	qsort(rec, n, sizeof(*rec), by_time);
	from = n > RECENT_RECORDS ? n - RECENT_RECORDS : 0;
	time = pg_xcalloc(n - from, sizeof(*time));
	value = pg_xcalloc(n - from, sizeof(*value));
	for (uint32_t i = from; i < n; i++) {
		time[i - from] = rec[i]->time;
		value[i - from] = metric_of(rec[i], STEP_METRIC);
	}
	if (job->dashboard_url) {
		pg_buf_addf(&url, "%s/", job->dashboard_url);
		report_dashboard_page(series, &url);
	}
	n_cp = history_change_points(value, n - from, &cp_opts, cps);
	report_recent_md(&(struct report_recent){job->label, series, time, value, n - from, cand,
						 job->dashboard_url ? url.ptr : NULL,
						 n_cp ? cps[n_cp - 1].index : n - from,
						 n_cp ? cps[n_cp - 1].before : NAN,
						 n_cp ? cps[n_cp - 1].after : NAN},
			 md);
out:
	free(rec);
	free(time);
	free(value);
	pg_buf_release(&url);
	history_list_release(&l);
}
