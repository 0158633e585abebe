/*
 * profgate comment: post a gate report as the pull request's sticky comment
 * (one per series, found by the report's marker, updated in place), and the
 * delivery `gate --comment` and `action` share. The token comes from the
 * environment, never from argv.
 */
#include "cmd.h"

#include "../deliver/deliver.h"
#include "../net/http.h"

#include <stdlib.h>
#include <string.h>

#define REPORT_MAX_BYTES (64u << 20)

const char *cmd_github_token(void)
{
	const char *t = getenv("PROFGATE_GITHUB_TOKEN");

	if (!t || !*t)
		t = getenv("GITHUB_TOKEN");
	return t && *t ? t : NULL;
}

int64_t cmd_parse_pr(const char *text)
{
	int64_t v;

	return text && pg_parse_int(text, 1, 999999999999999, &v) == 0 ? v : -1;
}

/* $GITHUB_SERVER_URL/$GITHUB_REPOSITORY/actions/runs/$GITHUB_RUN_ID, when
 * all three are set and plausible; else nothing. */
static void run_url(struct pg_buf *b)
{
	const char *server = getenv("GITHUB_SERVER_URL"), *repo = getenv("GITHUB_REPOSITORY");
	const char *run = getenv("GITHUB_RUN_ID");

	if (!server || !repo || !run || cmd_parse_pr(run) < 0 ||
	    (strncmp(server, "https://", 8) != 0 && strncmp(server, "http://", 7) != 0) ||
	    strpbrk(server, " ()<>\"") || strpbrk(repo, " ()<>\""))
		return;
	pg_buf_addf(b, "%s/%s/actions/runs/%s", server, repo, run);
}

static void say(const struct cmd_comment_job *job, const struct github_comment_result *res)
{
	struct github_marker m;

	if (!job->indent)
		return;
	if (res->action != GITHUB_COMMENT_SKIPPED) {
		printf("%scomment: %s %s\n", job->indent,
		       res->action == GITHUB_COMMENT_CREATED   ? "created"
		       : res->action == GITHUB_COMMENT_UPDATED ? "updated"
							       : "unchanged",
		       res->url ? res->url : "(no URL returned)");
		return;
	}
	if (job->mode == GITHUB_COMMENT_NEVER) {
		printf("%scomment: none (mode never)\n", job->indent);
		return;
	}
	if (github_marker_find(job->md, job->md_len, &m) == 0)
		printf("%scomment: none (on-alert: the verdict %s is no alert, and the pull "
		       "request has no comment of this series to update)\n",
		       job->indent, m.verdict);
}

int cmd_comment_deliver(const struct cmd_comment_job *job, char **url_out)
{
	struct github g;
	struct github_comment_result res;
	struct pg_buf url = PG_BUF_INIT;
	const char *repo = job->repo ? job->repo : getenv("GITHUB_REPOSITORY");
	struct http_env_limits lim;
	int rc = PG_EXIT_OK, err;

	*url_out = NULL;
	memset(&res, 0, sizeof(res));
	memset(&g, 0, sizeof(g));
	if (http_env_limits(&lim) || github_init(&g, getenv("GITHUB_API_URL"), repo,
						 job->token ? job->token : cmd_github_token())) {
		rc = cmd_error(PG_EXIT_USAGE);
		goto out;
	}
	run_url(&url);
	err = github_comment_upsert(&g, job->pr, job->md, job->md_len,
				    (enum github_comment_mode)job->mode, job->mentions,
				    url.len ? url.ptr : NULL, &res);
	if (err == PG_EUSAGE && github_mentions_check(job->mentions) == 0) {
		char *why = pg_xstrdup(pg_error_last());
		pg_error_set(PG_EUSAGE, "comment: %s: %s", job->origin, why);
		free(why);
		rc = cmd_error(PG_EXIT_USAGE);
	} else if (err == PG_EUSAGE) {
		char *why = pg_xstrdup(pg_error_last());
		pg_error_set(PG_EUSAGE, "comment: %s", why);
		free(why);
		rc = cmd_error(PG_EXIT_USAGE);
	} else if (err) {
		rc = cmd_error(PG_EXIT_DELIVERY);
	} else {
		say(job, &res);
		*url_out = res.url;
		res.url = NULL;
	}
out:
	free(res.url);
	pg_buf_release(&url);
	github_release(&g);
	return rc;
}

static int read_report(const char *path, struct pg_buf *out)
{
	int rc = pg_read_small(path, REPORT_MAX_BYTES, PG_READ_STDIN, out);

	return rc ? pg_error_set(rc, "comment: %s", pg_error_last()) : 0;
}

static const char *opt_report, *opt_pr, *opt_mode, *opt_repo;

static const struct cmd_opt comment_opts[] = {
    {"report", 'r', "FILE", "the markdown report gate --report wrote ('-': standard input)", NULL,
     &opt_report, CMD_OPT_REQUIRED},
    {"pr", 0, "N", "the pull request (default: from GITHUB_EVENT_PATH)", NULL, &opt_pr, 0},
    {"mode", 'm', "MODE", "always (default), on-alert or never", NULL, &opt_mode, 0},
    {"repo", 0, "OWNER/NAME", "the repository (default: GITHUB_REPOSITORY)", NULL, &opt_repo, 0},
};

const struct cmd_spec cmd_comment_spec = {
    "comment", "",
    "Post a gate report as the pull request's sticky comment: one per series, found by the\n"
    "report's hidden marker and the token's own login, updated in place. The token comes from\n"
    "PROFGATE_GITHUB_TOKEN or GITHUB_TOKEN; GITHUB_API_URL names the API (GitHub Enterprise).\n"
    "on-alert creates a comment only for warn, fail or incomparable, and then keeps it up to\n"
    "date, so a fixed regression gets its all-clear. Exit 0, 2 (usage), 3 (unreadable report)\n"
    "or 5 (GitHub refused or could not be reached after retries).",
    comment_opts, (int)PG_ARRAY_LEN(comment_opts)};

/* --pr, else the event's pull request. */
static int64_t event_pr(void)
{
	const char *path = getenv("GITHUB_EVENT_PATH");
	struct actions_event e;
	int64_t pr = -1;

	if (opt_pr)
		return cmd_parse_pr(opt_pr);
	if (!path || !*path)
		return -1;
	if (actions_event_read(path, &e) == 0)
		pr = e.pr;
	actions_event_release(&e);
	return pr;
}

int cmd_comment(int argc, char **argv)
{
	const char **pos = pg_xcalloc((size_t)argc + 1, sizeof(char *));
	struct cmd_comment_job job;
	struct pg_buf md = PG_BUF_INIT;
	enum github_comment_mode mode = GITHUB_COMMENT_ALWAYS;
	char *url = NULL;
	int n_pos, rc, stop;

	opt_report = opt_pr = opt_mode = opt_repo = NULL;
	stop = cmd_parse_or_help(&cmd_comment_spec, argc, argv, pos, &n_pos, NULL, &rc);
	free(pos);
	if (stop)
		return cmd_finish(rc);
	if (n_pos > 0 || !opt_report) {
		pg_error_set(PG_EUSAGE,
			     "comment: give --report FILE (see 'profgate comment --help')");
		return cmd_error(PG_EXIT_USAGE);
	}
	if (opt_mode && github_comment_mode_parse(opt_mode, &mode))
		return cmd_error(PG_EXIT_USAGE);
	memset(&job, 0, sizeof(job));
	job.pr = event_pr();
	if (job.pr < 0) {
		pg_error_set(PG_EUSAGE,
			     opt_pr ? "comment: --pr '%s' is not a pull request number"
				    : "comment: no pull request: give --pr N%s",
			     opt_pr ? opt_pr : "");
		return cmd_error(PG_EXIT_USAGE);
	}
	if (read_report(opt_report, &md)) {
		pg_buf_release(&md);
		return cmd_error(PG_EXIT_INPUT);
	}
	job.md = md.ptr;
	job.md_len = md.len;
	job.origin = opt_report;
	job.repo = opt_repo;
	job.mode = (int)mode;
	job.indent = "";
	rc = cmd_comment_deliver(&job, &url);
	free(url);
	pg_buf_release(&md);
	return cmd_finish(rc);
}
