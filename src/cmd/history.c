/*
 * profgate history: append a gate result to the JSONL history on a git
 * branch (`history append`, and `gate --history` through
 * cmd_history_deliver), and show what the branch holds (`history show`).
 * The record and the store are src/history; this file reads the token from
 * the environment, prints and picks exit codes.
 */
#include "cmd.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../history/history.h"
#include "../net/http.h"

#define RECORD_MAX_BYTES (64u << 20)

/* Retries and corrupt lines: one line each on stderr. */
static void log_line(void *payload, const char *msg)
{
	fprintf(stderr, "profgate: %s\n", msg);
}

/* The token for http(s) remotes; never taken from argv (it would show in ps
 * and in CI logs). */
static const char *token_from_env(void)
{
	const char *t = getenv("PROFGATE_GIT_TOKEN");

	if (!t || !*t)
		t = getenv("GITHUB_TOKEN");
	return t && *t ? t : NULL;
}

void cmd_history_store_opts(struct history_store_opts *o, const char *remote, const char *branch)
{
	memset(o, 0, sizeof(*o));
	o->remote = remote;
	o->branch = branch;
	o->token = token_from_env();
	o->log = log_line;
}

/* One line on stderr, the token redacted whatever put it there (a remote's
 * URL or path, a server's message). */
static void print_line(const char *token, const char *fmt, ...) PG_PRINTF(2, 3);
static void print_line(const char *token, const char *fmt, ...)
{
	const char *secrets[2] = {token, NULL};
	char line[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	pg_redact(line, secrets);
	fprintf(stderr, "profgate: %s\n", line);
}

/* The folder of a pending file's path (a copy to free()). */
static char *folder_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? pg_xstrndup(path, (size_t)(slash - path)) : pg_xstrdup(".");
}

/* " (N already there)": records whose earlier push landed unreported. */
static const char *already_note(uint32_t n)
{
	static char note[64];

	if (!n)
		return "";
	snprintf(note, sizeof(note), " (%u already there)", n);
	return note;
}

/* What the delivery of pending records did, after the record itself landed:
 * a line on stdout for the records delivered, a warning for those left. */
static void report_pending(const struct history_append_result *res,
			   const struct history_store_opts *o, const char *indent)
{
	const struct history_flush_result *p = &res->pending;
	const char *b = o->branch ? o->branch : HISTORY_DEFAULT_BRANCH;

	if (indent && p->delivered + p->already)
		printf("%shistory: delivered %u pending record%s to %s%s\n", indent,
		       p->delivered + p->already, p->delivered + p->already == 1 ? "" : "s", b,
		       already_note(p->already));
	if (p->left)
		print_line(o->token,
			   "warning: %s; %u pending record%s still kept (deliver: profgate "
			   "history flush --repo %s --branch %s)",
			   res->pending_why, p->left, p->left == 1 ? "" : "s", o->remote, b);
}

int cmd_history_deliver(const struct history_record *r, const char *remote, const char *branch,
			const char *pending_dir, const char *indent, int warn_only)
{
	struct history_store_opts o;
	struct history_append_result res;
	const char *b = branch ? branch : HISTORY_DEFAULT_BRANCH;
	const char *warn = warn_only ? "warning: " : "";
	char *pending, *folder, why[1536];
	int rc;

	cmd_history_store_opts(&o, remote, branch);
	o.pending_dir = pending_dir;
	rc = history_append(&o, r, &res);
	if (rc == 0) {
		if (indent && res.appended)
			printf("%shistory: appended to %s on %s (commit %.7s, %u attempt%s%s)\n",
			       indent, res.shard, b, res.commit, res.attempts,
			       res.attempts == 1 ? "" : "s",
			       res.own_ref ? "; on its own ref until the next compaction" : "");
		else if (indent)
			printf("%shistory: %s on %s already holds record %s\n", indent, res.shard,
			       b, r->record_id);
		report_pending(&res, &o, indent);
		free(res.shard);
		return PG_EXIT_OK;
	}
	free(res.shard);
	snprintf(why, sizeof(why), "%s", pg_error_last());
	if (rc == PG_EUSAGE || rc == PG_ELIMIT) {
		/* no later delivery could change these: nothing is kept */
		print_line(o.token, "%s%s", warn, why);
		return rc == PG_EUSAGE ? PG_EXIT_USAGE : PG_EXIT_INPUT;
	}
	/* Not delivered, whatever the cause (the remote, the network, the cache
	 * folder): the exact record is kept for `history flush` or the next run. */
	pending = history_pending_save(&o, r);
	if (pending) {
		folder = folder_of(pending);
		print_line(o.token,
			   "%s%s; the record is kept in '%s' (deliver it: profgate history flush "
			   "'%s' --repo %s --branch %s)",
			   warn, why, pending, folder, remote, b);
		free(folder);
	} else {
		print_line(o.token, "%s%s; the record could not be kept: %s", warn, why,
			   pg_error_last());
	}
	free(pending);
	return PG_EXIT_DELIVERY;
}

static int read_input(const char *path, struct pg_buf *out)
{
	int rc = pg_read_small(path, RECORD_MAX_BYTES, PG_READ_STDIN, out);

	if (rc == PG_ELIMIT)
		return pg_error_set(PG_ELIMIT,
				    "%s: larger than %u bytes; not a record or a verdict", path,
				    RECORD_MAX_BYTES);
	return rc;
}

/* ---- history append ---- */

static const char *opt_repo, *opt_branch, *opt_kind, *opt_series, *opt_label, *opt_verdict,
    *opt_since;
static int opt_json;

static const struct cmd_opt append_opts[] = {
    {"repo", 0, "URL_OR_PATH", "the history remote: a bare repository path, file:// or https://",
     NULL, &opt_repo, CMD_OPT_REQUIRED},
    {"branch", 0, "B", "the history branch (default: profgate-history)", NULL, &opt_branch, 0},
    {"kind", 0, "K", "pr, main, nightly or manual (default: from GITHUB_EVENT_NAME and GITHUB_REF)",
     NULL, &opt_kind, 0},
};

const struct cmd_spec cmd_history_append_spec = {
    "history append", "RECORD.json",
    "Append a record (profgate.history/1), or the record of a verdict JSON from 'gate --json',\n"
    "to <series>/<YYYY-MM>.jsonl on the history branch, and push it. The token for https\n"
    "remotes comes from PROFGATE_GIT_TOKEN or GITHUB_TOKEN. Appending a record twice is a\n"
    "no-op. Records kept by earlier failed pushes to this remote and branch are delivered\n"
    "after it. Exit 3 for a record over 4 MiB (nothing sent); exit 5 when the push fails\n"
    "(the exact record is kept: 'profgate history flush' delivers it).",
    append_opts, (int)PG_ARRAY_LEN(append_opts)};

static int history_append_cmd(int argc, char **argv)
{
	const char **pos = pg_xcalloc((size_t)argc + 1, sizeof(char *));
	struct pg_buf text = PG_BUF_INIT;
	struct history_record r;
	struct history_env env;
	int n_pos, rc;

	history_record_init(&r);
	opt_repo = opt_branch = opt_kind = NULL;
	if (cmd_parse_or_help(&cmd_history_append_spec, argc, argv, pos, &n_pos, NULL, &rc))
		goto out;
	if (n_pos != 1 || !opt_repo) {
		pg_error_set(PG_EUSAGE,
			     "history append: give --repo URL_OR_PATH and one RECORD.json "
			     "(see 'profgate history append --help')");
		rc = cmd_error(PG_EXIT_USAGE);
		goto out;
	}
	if (opt_branch && history_branch_check(opt_branch)) {
		rc = cmd_error(PG_EXIT_USAGE);
		goto out;
	}
	if (read_input(pos[0], &text)) {
		rc = cmd_error(PG_EXIT_INPUT);
		goto out;
	}
	history_env_from_environ(&env);
	rc = history_record_load(&r, text.ptr, text.len, pos[0], &env, opt_kind);
	if (rc) {
		rc = cmd_error(pg_exit_code(rc));
		goto out;
	}
	rc = cmd_history_deliver(&r, opt_repo, opt_branch, NULL, "", 0);
out:
	history_record_release(&r);
	pg_buf_release(&text);
	free(pos);
	return rc;
}

/* ---- history show ---- */

static const struct cmd_opt show_opts[] = {
    {"repo", 0, "URL_OR_PATH", "the history remote: a bare repository path, file:// or https://",
     NULL, &opt_repo, CMD_OPT_REQUIRED},
    {"branch", 0, "B", "the history branch (default: profgate-history)", NULL, &opt_branch, 0},
    {"series", 0, "S", "only this series: its name, its label or a unique prefix", NULL,
     &opt_series, 0},
    {"label", 0, "L", "only records with this gate label", NULL, &opt_label, 0},
    {"kind", 0, "K", "only this kind: pr, main, nightly or manual", NULL, &opt_kind, 0},
    {"verdict", 0, "V", "only this verdict", NULL, &opt_verdict, 0},
    {"since", 0, "ISO", "only records at or after this UTC date or time (2024-05-01)", NULL,
     &opt_since, 0},
    {"json", 0, NULL, "print the records as JSON lines, as stored", &opt_json, NULL, 0},
};

const struct cmd_spec cmd_history_show_spec = {
    "history show", "",
    "Show the records on the history branch, oldest first: a table, or JSON lines with --json.\n"
    "A corrupt line is reported with its file and line and skipped.",
    show_opts, (int)PG_ARRAY_LEN(show_opts)};

static int check_filters(void)
{
	if (opt_kind && !history_kind_valid(opt_kind))
		return pg_error_set(PG_EUSAGE,
				    "history show: --kind '%s': give pr, main, nightly or manual",
				    opt_kind);
	if (opt_verdict && !history_verdict_valid(opt_verdict))
		return pg_error_set(
		    PG_EUSAGE,
		    "history show: --verdict '%s': give pass, improved, warn, fail, "
		    "inconclusive, incomparable or recorded",
		    opt_verdict);
	if (opt_since && history_filter_check_since(opt_since))
		return PG_EUSAGE;
	return 0;
}

/* By time, then series; records of one second keep the order they were read
 * in, which is the order they were appended in (a record id is a digest:
 * no order at all). */
static int rec_before(const void *ctx, const struct history_record *x,
		      const struct history_record *y)
{
	int c = strcmp(x->time, y->time);

	(void)ctx;
	return c ? c < 0 : strcmp(x->series, y->series) < 0;
}

#define REC_BEFORE(ctx, x, y) rec_before(ctx, &(x), &(y))
PG_SORT_RUNS(sort_records, struct history_record, const void *, REC_BEFORE)

static void print_step(const struct history_record *r)
{
	char buf[32] = "-";

	for (uint32_t i = 0; i < r->n_metrics; i++)
		if (strcmp(r->metrics[i].name, "step.median_us") == 0) {
			double us = r->metrics[i].value;
			if (fabs(us) >= 1e6)
				snprintf(buf, sizeof(buf), "%.3f s", us / 1e6);
			else if (fabs(us) >= 1e3)
				snprintf(buf, sizeof(buf), "%.2f ms", us / 1e3);
			else
				snprintf(buf, sizeof(buf), "%.1f us", us);
		}
	printf("  %-12s", buf);
}

/* time, series, kind and verdict are checked when a record is read; the sha
 * is the CI's, printed as one line (pg_line). */
static void print_table(const struct history_list *l)
{
	struct pg_buf sha = PG_BUF_INIT;

	printf("%-20s  %-32s  %-7s  %-12s  %-12s  %-7s  %s\n", "time", "series", "kind", "verdict",
	       "step median", "sha", "pr");
	for (uint32_t i = 0; i < l->n; i++) {
		const struct history_record *r = &l->r[i];
		printf("%-20s  %-32s  %-7s  %-12s", r->time, r->series, r->kind, r->verdict);
		print_step(r);
		printf("  %-7.7s  ", r->sha ? pg_line(&sha, r->sha) : "-");
		if (r->pr >= 0)
			printf("#%lld\n", (long long)r->pr);
		else
			printf("-\n");
	}
	pg_buf_release(&sha);
}

static int history_show_cmd(int argc, char **argv)
{
	const char **pos = pg_xcalloc((size_t)argc + 1, sizeof(char *));
	struct history_store_opts o;
	struct history_filter f;
	struct history_list l = {0};
	char *series = NULL;
	int n_pos, exists, rc;

	opt_repo = opt_branch = opt_series = opt_label = opt_kind = opt_verdict = opt_since = NULL;
	opt_json = 0;
	if (cmd_parse_or_help(&cmd_history_show_spec, argc, argv, pos, &n_pos, NULL, &rc))
		goto out;
	if (n_pos != 0 || !opt_repo) {
		pg_error_set(PG_EUSAGE,
			     "history show: give --repo URL_OR_PATH (see 'profgate history "
			     "show --help')");
		rc = cmd_error(PG_EXIT_USAGE);
		goto out;
	}
	if (check_filters()) {
		rc = cmd_error(PG_EXIT_USAGE);
		goto out;
	}
	cmd_history_store_opts(&o, opt_repo, opt_branch);
	f = (struct history_filter){opt_series, opt_label, opt_kind, opt_verdict, opt_since, 0};
	rc = cmd_history_read("history show", &o, &f, &l, &exists, &series);
	if (rc) {
		rc = cmd_error(pg_exit_code(rc));
		goto out;
	}
	if (!exists)
		fprintf(stderr, "profgate: history: no branch '%s' at '%s' yet: no records\n",
			opt_branch ? opt_branch : HISTORY_DEFAULT_BRANCH, opt_repo);
	if (l.n > 1)
		sort_records(l.r, l.n, NULL);
	if (opt_json)
		for (uint32_t i = 0; i < l.n; i++)
			printf("%s\n", l.r[i].line);
	else if (exists)
		print_table(&l);
	rc = PG_EXIT_OK;
out:
	history_list_release(&l);
	free(series);
	free(pos);
	return rc;
}

/* ---- history flush ---- */

static const struct cmd_opt flush_opts[] = {
    {"repo", 0, "URL_OR_PATH", "the history remote: a bare repository path, file:// or https://",
     NULL, &opt_repo, CMD_OPT_REQUIRED},
    {"branch", 0, "B", "the history branch (default: profgate-history)", NULL, &opt_branch, 0},
};

const struct cmd_spec cmd_history_flush_spec = {
    "history flush", "[DIR]",
    "Deliver pending records (kept when a push failed) to the history branch: the *.json\n"
    "records of DIR (an action's <output_dir>/pending, say), or, without DIR, those this\n"
    "machine's cache keeps for this remote and branch. Each is the exact record, appended by\n"
    "its id: one already on the branch is not appended again. A delivered record's file is\n"
    "removed. Exit 5 when some could not be delivered (they stay), 3 when a file is not a\n"
    "record (it stays).",
    flush_opts, (int)PG_ARRAY_LEN(flush_opts)};

static int history_flush_cmd(int argc, char **argv)
{
	const char **pos = pg_xcalloc((size_t)argc + 1, sizeof(char *));
	struct history_store_opts o;
	struct history_flush_result res;
	const char *b;
	int n_pos, rc;

	opt_repo = opt_branch = NULL;
	if (cmd_parse_or_help(&cmd_history_flush_spec, argc, argv, pos, &n_pos, NULL, &rc))
		goto out;
	if (n_pos > 1 || !opt_repo) {
		pg_error_set(PG_EUSAGE,
			     "history flush: give --repo URL_OR_PATH and at most one DIR (see "
			     "'profgate history flush --help')");
		rc = cmd_error(PG_EXIT_USAGE);
		goto out;
	}
	if (opt_branch && history_branch_check(opt_branch)) {
		rc = cmd_error(PG_EXIT_USAGE);
		goto out;
	}
	b = opt_branch ? opt_branch : HISTORY_DEFAULT_BRANCH;
	cmd_history_store_opts(&o, opt_repo, opt_branch);
	rc = history_flush(&o, n_pos ? pos[0] : NULL, &res);
	if (res.delivered + res.already)
		printf("history: delivered %u pending record%s to %s%s\n",
		       res.delivered + res.already, res.delivered + res.already == 1 ? "" : "s", b,
		       already_note(res.already));
	else if (!rc && !res.bad)
		printf("history: no pending records%s%s%s\n", n_pos ? " in '" : "",
		       n_pos ? pos[0] : "", n_pos ? "'" : "");
	if (rc == PG_EUSAGE) {
		rc = cmd_error(PG_EXIT_USAGE);
	} else if (rc) {
		print_line(o.token, "%s; %u pending record%s still kept", pg_error_last(), res.left,
			   res.left == 1 ? "" : "s");
		rc = PG_EXIT_DELIVERY;
	} else {
		rc = res.bad ? PG_EXIT_INPUT : PG_EXIT_OK;
	}
out:
	free(pos);
	return rc;
}

/* ---- dispatch ---- */

const struct cmd_command cmd_history_commands[] = {
    {"append", history_append_cmd, "append a gate result to the history branch",
     &cmd_history_append_spec, NULL},
    {"show", history_show_cmd, "show the records of the history branch", &cmd_history_show_spec,
     NULL},
    {"flush", history_flush_cmd, "deliver pending records (kept when a push failed)",
     &cmd_history_flush_spec, NULL},
    {"baseline", cmd_history_baseline,
     "the median of the last N main/nightly records, as a summary", &cmd_history_baseline_spec,
     NULL},
    {"trend", cmd_history_trend, "metrics over time, change points, the nightly rule (md, JSON)",
     &cmd_history_trend_spec, NULL},
    {"compact", cmd_history_compact, "fold the branch into one commit, the old one archived",
     &cmd_history_compact_spec, NULL},
    {"dashboard", cmd_history_dashboard, "a static site charting every series (HTML)",
     &cmd_history_dashboard_spec, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: profgate history <subcommand> [options]\n\n"
		     "The JSONL history of gate results on a git branch.\n\nsubcommands:\n");
	for (const struct cmd_command *c = cmd_history_commands; c->name; c++)
		fprintf(out, "  %-9s %s\n", c->name, c->summary);
	fprintf(out, "\n'profgate history <subcommand> --help' describes one.\n");
}

int cmd_history(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return PG_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return cmd_finish(PG_EXIT_OK);
	}
	for (const struct cmd_command *c = cmd_history_commands; c->name; c++)
		if (strcmp(argv[1], c->name) == 0)
			return cmd_finish(c->fn(argc - 1, argv + 1));
	pg_error_set(PG_EUSAGE, "history: unknown subcommand '%s' (see 'profgate history --help')",
		     argv[1]);
	return cmd_error(PG_EXIT_USAGE);
}
