/*
 * profgate history trend: read the history branch, build the trend of its
 * series (src/history/trend.c: values over time, change points, the nightly
 * rule) and write it as markdown with Mermaid charts or as profgate.trend/1
 * JSON. Prints and picks exit codes.
 */
#include "cmd.h"

#include <stdlib.h>
#include <string.h>

#include "../gate/gate.h"
#include "../history/history.h"
#include "../report/report.h"

static const char *opt_repo, *opt_branch, *opt_series, *opt_label, *opt_kind, *opt_metric,
    *opt_since, *opt_thresholds, *opt_n, *opt_format, *opt_out;
static int opt_fail_on_flag;

static const struct cmd_opt trend_opts[] = {
    {"repo", 0, "URL_OR_PATH", "the history remote: a bare repository path, file:// or https://",
     NULL, &opt_repo, CMD_OPT_REQUIRED},
    {"branch", 0, "B", "the history branch (default: profgate-history)", NULL, &opt_branch, 0},
    {"series", 0, "S", "only this series: its name, its label or a unique prefix", NULL,
     &opt_series, 0},
    {"label", 0, "L", "only series of this gate label", NULL, &opt_label, CMD_OPT_OR},
    {"kind", 0, "K,K", "the kinds of record in the trend (default: main,nightly)", NULL, &opt_kind,
     0},
    {"metric", 0, "GLOB", "only metrics matching this glob (e.g. 'step.*')", NULL, &opt_metric, 0},
    {"since", 0, "ISO", "only records at or after this UTC date or time (2024-05-01)", NULL,
     &opt_since, 0},
    {"thresholds", 't', "NAME|FILE",
     "the limits and K of the nightly rule: a shipped set or a file (default: default)", NULL,
     &opt_thresholds, 0},
    {"records", 'n', "N", "baseline records of the nightly rule, 1 to 100 (default: 5)", NULL,
     &opt_n, 0},
    {"format", 0, "md|json", "markdown with Mermaid charts (default), or profgate.trend/1 JSON",
     NULL, &opt_format, 0},
    {"output", 'o', "FILE", "write it here (default: standard output)", NULL, &opt_out, 0},
    {"fail-on-flag", 0, NULL, "exit 1 when a metric is flagged by the nightly rule",
     &opt_fail_on_flag, NULL, 0},
};

const struct cmd_spec cmd_history_trend_spec = {
    "history trend", "",
    "Per series and metric: the values over time, change points with their size and\n"
    "confidence, and the nightly rule (a metric past its warn limit in K nightly records in a\n"
    "row is flagged; K is the thresholds' consecutive_violations). Markdown with Mermaid\n"
    "charts, or JSON. Exit 3 when --series or --label names no records.",
    trend_opts, (int)PG_ARRAY_LEN(trend_opts)};

static int trend_args(int argc, char **argv, int *help, uint32_t *n, const char **kinds,
		      char **kinds_text)
{
	const char **pos = pg_xcalloc((size_t)argc + 1, sizeof(char *));
	int64_t v;
	int n_pos, rc;

	opt_repo = opt_branch = opt_series = opt_label = opt_kind = opt_metric = opt_since =
	    opt_thresholds = opt_n = opt_format = opt_out = NULL;
	opt_fail_on_flag = 0;
	rc = cmd_parse(&cmd_history_trend_spec, argc, argv, pos, &n_pos, help);
	free(pos);
	if (rc || *help)
		return rc;
	if (n_pos != 0 || !opt_repo)
		return pg_error_set(PG_EUSAGE, "history trend: give --repo URL_OR_PATH (see "
					       "'profgate history trend --help')");
	if (opt_series && opt_label)
		return pg_error_set(PG_EUSAGE, "history trend: give --series or --label, not both");
	if (opt_format && strcmp(opt_format, "md") != 0 && strcmp(opt_format, "json") != 0)
		return pg_error_set(PG_EUSAGE, "history trend: --format '%s': give md or json",
				    opt_format);
	if (opt_since && history_filter_check_since(opt_since))
		return PG_EUSAGE;
	*n = HISTORY_WINDOW_DEFAULT;
	if (opt_n) {
		if (pg_parse_int(opt_n, 1, HISTORY_WINDOW_MAX, &v))
			return pg_error_set(PG_EUSAGE,
					    "history trend: -n '%s' is not a whole number from 1 "
					    "to %d",
					    opt_n, HISTORY_WINDOW_MAX);
		*n = (uint32_t)v;
	}
	*kinds_text = pg_xstrdup(opt_kind ? opt_kind : "main,nightly");
	return cmd_history_kinds(*kinds_text, kinds);
}

/* The records of the kinds asked for: none for a series or label named is an
 * unknown series (exit 3); none at all is an empty trend. Either way a line
 * on stderr says which kinds were used and how many records of others were
 * skipped. */
static int check_found(const struct history_trend *t, const struct history_list *l,
		       const char *const *kinds, int exists)
{
	const char *what = opt_series ? "series" : "label";
	struct pg_buf note = PG_BUF_INIT;
	int rc = PG_EXIT_OK;

	if (t->n > 0 || (!opt_series && !opt_label)) {
		cmd_history_kinds_note(l, NULL, kinds, 1, NULL, &note);
		if (!exists)
			fprintf(stderr,
				"profgate: history: no branch '%s' at '%s' yet: no records\n",
				opt_branch ? opt_branch : HISTORY_DEFAULT_BRANCH, opt_repo);
		else if (l->n)
			fprintf(stderr, "profgate: history trend: %s\n", note.ptr);
		goto out;
	}
	cmd_history_kinds_note(l, NULL, kinds, 0, NULL, &note);
	pg_error_set(PG_ENOTFOUND, "history trend: no %s records of %s '%s'%s%s%s%s",
		     opt_kind ? opt_kind : "main or nightly", what,
		     opt_series ? opt_series : opt_label, opt_since ? " since " : "",
		     opt_since ? opt_since : "", note.len ? "; " : "", note.len ? note.ptr : "");
	rc = cmd_error(PG_EXIT_INPUT);
out:
	pg_buf_release(&note);
	return rc;
}

static int write_trend(const struct history_trend *t, const struct history_filter *f)
{
	struct pg_buf b = PG_BUF_INIT;
	int rc = PG_EXIT_OK;
	uint32_t flagged = 0;

	if (opt_format && strcmp(opt_format, "json") == 0)
		history_trend_write_json(t, opt_branch, f, &b);
	else
		report_trend_md(t, &b);
	for (uint32_t i = 0; i < t->n; i++)
		flagged += t->s[i].n_flagged;
	if (opt_out && strcmp(opt_out, "-") != 0) {
		if (pg_write_file_atomic(opt_out, b.ptr, b.len))
			rc = cmd_error(PG_EXIT_INPUT);
		else
			printf("history trend: %u series, %u flagged metric%s, written to %s\n",
			       t->n, flagged, flagged == 1 ? "" : "s", opt_out);
	} else {
		fwrite(b.ptr, 1, b.len, stdout);
	}
	pg_buf_release(&b);
	if (rc == PG_EXIT_OK && opt_fail_on_flag && flagged)
		rc = PG_EXIT_FAIL;
	return rc;
}

int cmd_history_trend(int argc, char **argv)
{
	const char *kinds[CMD_HISTORY_KINDS + 1];
	char *kinds_text = NULL, *series = NULL;
	struct gate_thresholds th;
	struct history_store_opts o;
	struct history_filter f;
	struct history_list l = {0};
	struct history_trend t;
	struct history_trend_opts to;
	uint32_t n = HISTORY_WINDOW_DEFAULT;
	int help = 0, exists = 0, threads = 1, rc;

	memset(&th, 0, sizeof(th));
	memset(&t, 0, sizeof(t));
	if (trend_args(argc, argv, &help, &n, kinds, &kinds_text) ||
	    cmd_load_thresholds("history trend", opt_thresholds, &th)) {
		rc = cmd_error(PG_EXIT_USAGE);
		goto out;
	}
	if (help) {
		cmd_usage(&cmd_history_trend_spec, stdout);
		rc = PG_EXIT_OK;
		goto out;
	}
	cmd_history_store_opts(&o, opt_repo, opt_branch);
	f = (struct history_filter){opt_series, opt_label, NULL, NULL, opt_since, 0};
	if ((rc = cmd_history_read("history trend", &o, &f, &l, &exists, &series))) {
		rc = cmd_error(pg_exit_code(rc));
		goto out;
	}
	if (series)
		opt_series = series;
	/* the series on every core: the same output as on one */
	cmd_parse_threads("history trend", NULL, &threads);
	to = (struct history_trend_opts){opt_metric, kinds, &th, n, 0, 0, (uint32_t)threads};
	history_trend_build(&l, &to, &t);
	rc = check_found(&t, &l, kinds, exists);
	if (rc == PG_EXIT_OK)
		rc = write_trend(&t, &f);
out:
	history_trend_release(&t);
	history_list_release(&l);
	gate_thresholds_release(&th);
	free(kinds_text);
	free(series);
	return rc;
}
