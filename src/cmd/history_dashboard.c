/*
 * profgate history dashboard: read the history branch, build the trend of its
 * series over every metric (src/history/trend.c, the code of `history trend`)
 * and write it as a static site (src/report/dashboard.c) into a folder; the
 * series' trends are built on -j threads (the same bytes on any number). Each
 * file is replaced whole; files of series no longer read are left. Prints and
 * picks exit codes.
 */
#include "cmd.h"

#include <stdlib.h>
#include <string.h>

#include "../gate/gate.h"
#include "../history/history.h"
#include "../report/report.h"

#define DEFAULT_SERVER "https://github.com"

static const char *opt_repo, *opt_branch, *opt_label, *opt_kind, *opt_since, *opt_thresholds,
    *opt_n, *opt_server, *opt_out, *opt_threads;
static const char *opt_series[CMD_OPT_COLLECT_MAX + 1];

static const struct cmd_opt dash_opts[] = {
    {"repo", 0, "URL_OR_PATH", "the history remote: a bare repository path, file:// or https://",
     NULL, &opt_repo, CMD_OPT_REQUIRED},
    {"branch", 0, "B", "the history branch (default: profgate-history)", NULL, &opt_branch, 0},
    {"series", 0, "S", "only this series (repeat for more)", NULL, opt_series,
     CMD_OPT_REPEATS | CMD_OPT_COLLECT},
    {"label", 0, "L", "only series of this gate label", NULL, &opt_label, CMD_OPT_OR},
    {"kind", 0, "K,K", "the kinds of record charted (default: main,nightly)", NULL, &opt_kind, 0},
    {"since", 0, "ISO", "only records at or after this UTC date or time (2024-05-01)", NULL,
     &opt_since, 0},
    {"thresholds", 't', "NAME|FILE", "the limits and K of the nightly rule (default: built-in)",
     NULL, &opt_thresholds, 0},
    {"records", 'n', "N", "baseline records of the nightly rule, 1 to 100 (default: 5)", NULL,
     &opt_n, 0},
    {"server-url", 0, "URL",
     "links to commits, PRs and runs (default: $GITHUB_SERVER_URL, else https://github.com)", NULL,
     &opt_server, 0},
    {"output", 'o', "DIR", "write the site into this folder (made when missing)", NULL, &opt_out,
     CMD_OPT_REQUIRED},
    {"threads", 'j', "N", "build the series' trends on N threads (default: the number of cores)",
     NULL, &opt_threads, 0},
};

const struct cmd_spec cmd_history_dashboard_spec = {
    "history dashboard", "",
    "A static site of the history: an index of the series (latest step time, last change, a\n"
    "sparkline) and a page per series charting the step time, the breakdown shares, the top op\n"
    "families and any metric, with the change points of `history trend` and links to each\n"
    "record's commit, PR and run. Opens from file:// or any static host; no network.\n"
    "Exit 3 when --series or --label names no records.",
    dash_opts, (int)PG_ARRAY_LEN(dash_opts)};

static int dash_args(int argc, char **argv, int *help, uint32_t *n, int *threads,
		     const char **kinds, char **kinds_text)
{
	const char **pos = pg_xcalloc((size_t)argc + 1, sizeof(char *));
	int64_t v;
	int n_pos, rc;

	opt_repo = opt_branch = opt_label = opt_kind = opt_since = opt_thresholds = opt_n =
	    opt_server = opt_out = opt_threads = NULL;
	memset(opt_series, 0, sizeof(opt_series));
	rc = cmd_parse(&cmd_history_dashboard_spec, argc, argv, pos, &n_pos, help);
	free(pos);
	if (rc || *help)
		return rc;
	if (n_pos != 0 || !opt_repo || !opt_out)
		return pg_error_set(PG_EUSAGE,
				    "history dashboard: give --repo URL_OR_PATH and -o DIR "
				    "(see 'profgate history dashboard --help')");
	if (opt_series[0] && opt_label)
		return pg_error_set(PG_EUSAGE,
				    "history dashboard: give --series or --label, not both");
	if (!opt_server)
		opt_server = getenv("GITHUB_SERVER_URL");
	if (!opt_server || !*opt_server)
		opt_server = DEFAULT_SERVER;
	if (!report_url_ok(opt_server))
		return pg_error_set(PG_EUSAGE,
				    "history dashboard: --server-url '%s' is not an http(s) URL of "
				    "plain characters without a trailing slash",
				    opt_server);
	if (opt_since && history_filter_check_since(opt_since))
		return PG_EUSAGE;
	if (cmd_parse_threads("history dashboard", opt_threads, threads))
		return PG_EUSAGE;
	*n = HISTORY_WINDOW_DEFAULT;
	if (opt_n) {
		if (pg_parse_int(opt_n, 1, HISTORY_WINDOW_MAX, &v))
			return pg_error_set(
			    PG_EUSAGE,
			    "history dashboard: -n '%s' is not a whole number from 1 "
			    "to %d",
			    opt_n, HISTORY_WINDOW_MAX);
		*n = (uint32_t)v;
	}
	*kinds_text = pg_xstrdup(opt_kind ? opt_kind : "main,nightly");
	return cmd_history_kinds(*kinds_text, kinds);
}

static int series_wanted(const char *series)
{
	if (!opt_series[0])
		return 1;
	for (uint32_t i = 0; opt_series[i]; i++)
		if (strcmp(opt_series[i], series) == 0)
			return 1;
	return 0;
}

/* Read the records of the series asked for: one read per series named (the
 * store reads only that series' folder), else one read of them all. */
static int read_records(const struct history_store_opts *o, struct history_list *l, int *exists)
{
	struct history_filter f = {NULL, opt_label, NULL, NULL, opt_since, 0};
	uint32_t i = 0;
	int rc;

	do {
		f.series = opt_series[i];
		if ((rc = history_read(o, &f, l, exists)))
			return rc;
	} while (opt_series[i] && opt_series[++i]);
	return 0;
}

static int check_found(const struct history_trend *t, int exists)
{
	if (!exists)
		fprintf(stderr, "profgate: history: no branch '%s' at '%s' yet: no records\n",
			opt_branch ? opt_branch : HISTORY_DEFAULT_BRANCH, opt_repo);
	for (uint32_t i = 0; opt_series[i]; i++) {
		uint32_t k = 0;
		while (k < t->n && strcmp(t->s[k].series, opt_series[i]) != 0)
			k++;
		if (k == t->n) {
			pg_error_set(PG_ENOTFOUND,
				     "history dashboard: no %s records of series '%s'",
				     opt_kind ? opt_kind : "main or nightly", opt_series[i]);
			return cmd_error(PG_EXIT_INPUT);
		}
	}
	if (opt_label && t->n == 0) {
		pg_error_set(PG_ENOTFOUND, "history dashboard: no %s records of label '%s'",
			     opt_kind ? opt_kind : "main or nightly", opt_label);
		return cmd_error(PG_EXIT_INPUT);
	}
	return PG_EXIT_OK;
}

/* Every file of the site into opt_out, each replaced whole. */
static int write_site(const struct report_site *site)
{
	struct pg_buf p = PG_BUF_INIT;
	int rc = 0;

	for (uint32_t i = 0; i < site->n && !rc; i++) {
		const char *slash = strrchr(site->f[i].path, '/');
		pg_buf_reset(&p);
		pg_buf_addf(&p, "%s/%.*s", opt_out, slash ? (int)(slash - site->f[i].path) : 0,
			    site->f[i].path);
		rc = pg_mkdir_p(p.ptr, 0755);
		pg_buf_reset(&p);
		pg_buf_addf(&p, "%s/%s", opt_out, site->f[i].path);
		if (!rc)
			rc = pg_write_file_atomic(p.ptr, site->f[i].body.ptr, site->f[i].body.len);
	}
	pg_buf_release(&p);
	return rc ? cmd_error(PG_EXIT_INPUT) : PG_EXIT_OK;
}

int cmd_history_dashboard(int argc, char **argv)
{
	const char *kinds[CMD_HISTORY_KINDS + 1];
	char *kinds_text = NULL;
	struct gate_thresholds th;
	struct history_store_opts o;
	struct history_list l = {0}, keep = {0};
	struct history_trend t;
	struct history_trend_opts to;
	struct report_site site = {0};
	uint32_t n = HISTORY_WINDOW_DEFAULT, records = 0;
	int help = 0, exists = 0, threads = 1, rc;

	memset(&th, 0, sizeof(th));
	memset(&t, 0, sizeof(t));
	if (dash_args(argc, argv, &help, &n, &threads, kinds, &kinds_text) ||
	    cmd_load_thresholds("history dashboard", opt_thresholds, &th)) {
		rc = cmd_error(PG_EXIT_USAGE);
		goto out;
	}
	if (help) {
		cmd_usage(&cmd_history_dashboard_spec, stdout);
		rc = PG_EXIT_OK;
		goto out;
	}
	cmd_history_store_opts(&o, opt_repo, opt_branch);
	if ((rc = read_records(&o, &l, &exists))) {
		rc = cmd_error(pg_exit_code(rc));
		goto out;
	}
	for (uint32_t i = 0; i < l.n; i++)
		if (series_wanted(l.r[i].series))
			history_list_move(&keep, &l.r[i]);
	to = (struct history_trend_opts){NULL, kinds, &th, n, 0, 0, (uint32_t)threads};
	history_trend_build(&keep, &to, &t);
	if ((rc = check_found(&t, exists)) != PG_EXIT_OK)
		goto out;
	report_dashboard(&t, &(struct report_dashboard_opts){opt_branch, opt_server}, &site);
	if ((rc = write_site(&site)) == PG_EXIT_OK) {
		for (uint32_t i = 0; i < t.n; i++)
			records += t.s[i].n;
		printf("history dashboard: %u series, %u records, written to %s/index.html\n", t.n,
		       records, opt_out);
	}
out:
	report_site_release(&site);
	history_trend_release(&t);
	history_list_release(&keep);
	history_list_release(&l);
	gate_thresholds_release(&th);
	free(kinds_text);
	return rc;
}
