/*
 * profgate history baseline, and the window baseline of `gate --baseline
 * history:<branch>[:N]`: read the history branch, pick the window of one
 * series (src/history/baseline.c says what a window baseline is) and write it
 * as a summary JSON, or hand it to the gate. Prints and picks exit codes.
 */
#include "cmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../gate/gate.h"
#include "../history/history.h"
#include "../summary/summary.h"

/* ---- shared: N, kinds, the window's description ---- */

static int parse_n(const char *what, const char *text, uint32_t *n)
{
	int64_t v;

	if (pg_parse_int(text, 1, HISTORY_WINDOW_MAX, &v))
		return pg_error_set(PG_EUSAGE, "%s: N '%s' is not a whole number from 1 to %d",
				    what, text, HISTORY_WINDOW_MAX);
	*n = (uint32_t)v;
	return 0;
}

int cmd_history_spec(const char *spec, char **ref, uint32_t *n)
{
	const char *branch = spec + 8, *colon;
	size_t len;
	int rc;

	*ref = NULL;
	*n = HISTORY_WINDOW_DEFAULT;
	if (strncmp(spec, "history:", 8) != 0)
		return 0;
	colon = strchr(branch, ':'); /* a branch name holds no ':' */
	len = colon ? (size_t)(colon - branch) : strlen(branch);
	if (len == 0)
		return pg_error_set(PG_EUSAGE,
				    "gate: --baseline '%s': give the branch whose runs make the "
				    "baseline, as history:main or history:main:5 ('*' for any)",
				    spec);
	if (colon) {
		struct pg_buf what = PG_BUF_INIT;
		pg_buf_addf(&what, "gate: --baseline '%s'", spec);
		rc = parse_n(what.ptr, colon + 1, n);
		pg_buf_release(&what);
		if (rc)
			return rc;
	}
	if (len == 1 && branch[0] == '*')
		return 1;
	*ref = pg_xstrndup(branch, len);
	if (strncmp(*ref, "refs/", 5) != 0) {
		char *full = pg_xasprintf("refs/heads/%s", *ref);
		free(*ref);
		*ref = full;
	}
	return 1;
}

int cmd_gate_baseline_runs(struct cmd_gate_job *job, const char *what)
{
	const char *const *runs = job->n_baselines ? job->baselines : &job->baseline;
	uint32_t n = job->n_baselines ? job->n_baselines : 1;
	int rc = cmd_history_spec(runs[0], &job->baseline_ref, &job->baseline_n);

	if (rc < 0)
		return rc;
	for (uint32_t i = 0; n > 1 && i < n; i++)
		if (strncmp(runs[i], "history:", 8) == 0) {
			free(job->baseline_ref);
			job->baseline_ref = NULL;
			return pg_error_set(PG_EUSAGE,
					    "%s %s is a set of runs itself: give it alone, not "
					    "with other runs",
					    what, runs[i]);
		}
	job->baseline_history = rc == 1;
	return 0;
}

int cmd_history_kinds(char *text, const char **kinds)
{
	uint32_t n = 0;

	for (char *k = text, *comma; k; k = comma ? comma + 1 : NULL) {
		if ((comma = strchr(k, ',')))
			*comma = '\0';
		if (!history_kind_valid(k) || n == CMD_HISTORY_KINDS)
			return pg_error_set(PG_EUSAGE,
					    "--kind '%s': give pr, main, nightly or manual, "
					    "separated by commas",
					    k);
		kinds[n++] = k;
	}
	kinds[n] = NULL;
	return 0;
}

/* What a window baseline's records were; hint as cmd_history_kinds_note's
 * for the records of other kinds. */
static void describe(const struct history_window *w, const struct history_list *l, const char *hint,
		     struct pg_buf *b)
{
	struct pg_buf skipped = PG_BUF_INIT;

	pg_buf_addf(b, "median of %u record%s of %s (", w->n, w->n == 1 ? "" : "s", w->series);
	for (size_t i = 0; w->kinds[i]; i++)
		pg_buf_addf(b, "%s%s", i ? ", " : "", w->kinds[i]);
	pg_buf_addf(b, "%s%s), %s .. %s", w->ref ? " on " : "", w->ref ? w->ref : "", w->r[0]->time,
		    w->r[w->n - 1]->time);
	if (w->n < w->requested)
		pg_buf_addf(b, "; %u of %u asked for: the window is short", w->n, w->requested);
	if (w->cut_field)
		pg_buf_addf(b, " (%s changed from %s to %s after %s)", w->cut_field, w->cut_older,
			    w->cut_newer, w->cut_time);
	if (cmd_history_kinds_note(l, w->series, w->kinds, 0, hint, &skipped))
		pg_buf_addf(b, "; %s", skipped.ptr);
	pg_buf_release(&skipped);
}

/* The hint of gate --baseline history:...: its kinds are fixed. */
#define GATE_KINDS_HINT                                                                            \
	"a history baseline takes main and nightly records; gate --history --kind main records "   \
	"one"

/* Records the newest months must hold before a window is looked for in them:
 * a window is a few of the newest, and most records qualify. */
#define NEWEST_PER_WINDOW 4

/*
 * Read the series' newest months and select the window from them; when it
 * comes out short (fewer records than asked, not cut at an identity change)
 * or empty, read every month and select again. The window is the same as
 * from every record (history_filter.newest), at the cost of the months it
 * spans rather than the whole series. series_out non-NULL: f->series as a
 * user names it (cmd_history_read), f->series and wo->series then the name
 * it meant, *series_out that name when another (to free). Returns the read's
 * error (and sets *read_failed), or history_window_select()'s.
 */
static int read_newest(const char *what, const struct history_store_opts *o,
		       struct history_filter *f, struct history_window_opts *wo,
		       struct history_list *l, struct history_window *w, int *exists,
		       int *read_failed, char **series_out)
{
	struct history_filter some = *f;
	int rc;

	*read_failed = 1;
	some.newest = f->series ? wo->n * NEWEST_PER_WINDOW : 0;
	rc = series_out ? cmd_history_read(what, o, &some, l, exists, series_out)
			: history_read(o, &some, l, exists);
	if (rc)
		return rc;
	if (series_out && *series_out)
		f->series = wo->series = *series_out;
	*read_failed = 0;
	rc = history_window_select(l, wo, w);
	if (!some.newest || (rc == 0 && (w->n >= wo->n || w->cut_field)) ||
	    (rc && rc != PG_ENOTFOUND))
		return rc;
	history_window_release(w);
	history_list_release(l);
	*read_failed = 1;
	if ((rc = history_read(o, f, l, exists)))
		return rc;
	*read_failed = 0;
	return history_window_select(l, wo, w);
}

/* Read the branch and select the window; prints errors, returns an exit code.
 * series_out: as read_newest's. empty non-NULL: a history that holds no
 * record for the window (or no branch yet) is no error: PG_EXIT_OK with w->n
 * 0 and why in *empty. */
static int read_window(const char *what, const char *remote, const char *branch,
		       struct history_filter *f, struct history_window_opts *wo, const char *hint,
		       struct history_list *l, struct history_window *w, char **series_out,
		       struct pg_buf *empty)
{
	struct history_store_opts o;
	struct pg_buf skipped = PG_BUF_INIT;
	char why[1024];
	int exists, read_failed, rc;

	memset(w, 0, sizeof(*w));
	cmd_history_store_opts(&o, remote, branch);
	rc = read_newest(what, &o, f, wo, l, w, &exists, &read_failed, series_out);
	if (rc && read_failed)
		return cmd_error(pg_exit_code(rc));
	if (!rc)
		return PG_EXIT_OK;
	snprintf(why, sizeof(why), "%s", pg_error_last());
	if (rc == PG_ENOTFOUND)
		cmd_history_kinds_note(l, NULL, w->kinds, 0, hint, &skipped);
	if (rc == PG_ENOTFOUND && empty) {
		pg_buf_addf(empty, "%s %s %s", why, exists ? "in" : "yet: no branch",
			    branch ? branch : HISTORY_DEFAULT_BRANCH);
		w->series = wo->series;
		rc = 0;
	} else if (rc == PG_ENOTFOUND && !exists)
		pg_error_set(rc, "%s: %s: the branch '%s' does not exist at '%s' yet", what, why,
			     branch ? branch : HISTORY_DEFAULT_BRANCH, remote);
	else
		pg_error_set(rc, "%s: %s in %s%s%s", what, why,
			     branch ? branch : HISTORY_DEFAULT_BRANCH, skipped.len ? "; " : "",
			     skipped.len ? skipped.ptr : "");
	pg_buf_release(&skipped);
	return rc ? cmd_error(pg_exit_code(rc)) : PG_EXIT_OK;
}

/* ---- gate --baseline history:... ---- */

/* The window options and filter for ref's last n records of the
 * candidate's series (ref NULL: any); series holds the name they point to. */
static void series_opts(const struct cmd_gate_job *job, const struct gate_thresholds *th,
			const struct summary *cand, const char *ref, uint32_t n,
			struct pg_buf *series, struct history_window_opts *wo,
			struct history_filter *f)
{
	history_series_of_summary(job->label, cand, series);
	memset(wo, 0, sizeof(*wo));
	wo->series = series->ptr;
	wo->ref = ref;
	wo->n = n;
	wo->identity = th->identity;
	wo->n_identity = th->n_identity;
	memset(f, 0, sizeof(*f));
	f->series = series->ptr;
}

int cmd_history_noise_runs(const struct cmd_gate_job *job, const struct gate_thresholds *th,
			   const struct summary *cand, struct summary **runs, uint32_t *n_runs)
{
	struct pg_buf series = PG_BUF_INIT;
	struct history_store_opts o;
	struct history_list l = {0};
	struct history_window w;
	struct history_window_opts wo;
	struct history_filter f;
	int exists, read_failed;

	*runs = NULL;
	*n_runs = 0;
	memset(&w, 0, sizeof(w));
	series_opts(job, th, cand, NULL, CMD_NOISE_RECORDS, &series, &wo, &f);
	cmd_history_store_opts(&o, cmd_gate_history_read(job), job->history_branch);
	/* quietly: no history is no noise estimate, and the append reports a bad remote */
	if (read_newest("gate", &o, &f, &wo, &l, &w, &exists, &read_failed, NULL) == 0 &&
	    w.n >= GATE_NOISE_MIN_RUNS) {
		*runs = pg_xcalloc(w.n, sizeof(**runs));
		*n_runs = w.n;
		history_window_runs(&w, cand, *runs);
	}
	history_window_release(&w);
	history_list_release(&l);
	pg_buf_release(&series);
	return *n_runs > 0;
}

/* The records (one step sample each) the step's test needs on a side. */
static uint32_t step_min_samples(const struct gate_thresholds *th)
{
	const struct gate_rule *rule = gate_rule_for(th, "step.median_us");

	return rule && rule->min_samples >= 0 ? (uint32_t)rule->min_samples : th->min_samples;
}

int cmd_history_window_baseline(const struct cmd_gate_job *job, const struct gate_thresholds *th,
				const struct summary *cand, const char *kind, const char *ref,
				struct summary *b, struct pg_buf *window_json, struct pg_buf *note,
				struct summary **runs, uint32_t *n_runs, int *filling)
{
	struct pg_buf series = PG_BUF_INIT, what = PG_BUF_INIT;
	struct history_list l = {0};
	struct history_window w;
	struct history_window_opts wo;
	struct history_filter f;
	int rc, own;

	summary_init(b);
	*runs = NULL;
	*n_runs = 0;
	*filling = 0;
	series_opts(job, th, cand, job->baseline_ref, job->baseline_n, &series, &wo, &f);
	own = kind && history_window_takes(&wo, kind, ref);
	pg_buf_addf(&what, "gate: --baseline %s", job->baseline);
	/* a run whose own record enters the window starts it when it is empty */
	rc = read_window(what.ptr, cmd_gate_history_read(job), job->history_branch, &f, &wo,
			 GATE_KINDS_HINT, &l, &w, NULL, own ? note : NULL);
	if (rc == PG_EXIT_OK && w.n == 0) {
		history_window_json(&w, job->history_branch, window_json);
	} else if (rc == PG_EXIT_OK && own && w.n < step_min_samples(th)) {
		/* a window this run's record fills: judged once it holds min_samples */
		*filling = 1;
		history_window_json(&w, job->history_branch, window_json);
		pg_buf_addf(note, "the window holds %u of the %u records a verdict needs", w.n,
			    step_min_samples(th));
	} else if (rc == PG_EXIT_OK) {
		summary_release(b);
		history_baseline_summary(&w, cand, b);
		*runs = pg_xcalloc(w.n + 1, sizeof(**runs));
		*n_runs = w.n;
		history_window_runs(&w, cand, *runs);
		history_window_json(&w, job->history_branch, window_json);
		describe(&w, &l, GATE_KINDS_HINT, note);
	}
	history_window_release(&w);
	history_list_release(&l);
	pg_buf_release(&series);
	pg_buf_release(&what);
	return rc;
}

/* ---- profgate history baseline ---- */

static const char *opt_repo, *opt_branch, *opt_series, *opt_label, *opt_n, *opt_kind, *opt_ref,
    *opt_thresholds, *opt_out;

static const struct cmd_opt baseline_opts[] = {
    {"repo", 0, "URL_OR_PATH", "the history remote: a bare repository path, file:// or https://",
     NULL, &opt_repo, CMD_OPT_REQUIRED},
    {"branch", 0, "B", "the history branch (default: profgate-history)", NULL, &opt_branch, 0},
    {"series", 0, "S", "the series: its name, its label or a unique prefix", NULL, &opt_series,
     CMD_OPT_REQUIRED},
    {"label", 0, "L", "the gate label of the series (when it names one series)", NULL, &opt_label,
     CMD_OPT_OR},
    {"records", 'n', "N", "records in the window, 1 to 100 (default: 5)", NULL, &opt_n, 0},
    {"kind", 0, "K,K", "the kinds of record that count (default: main,nightly)", NULL, &opt_kind,
     0},
    {"ref", 0, "BRANCH", "only records of runs on this git branch (their GITHUB_REF)", NULL,
     &opt_ref, 0},
    {"thresholds", 't', "NAME|FILE",
     "a shipped set or a file whose identity fields the window must agree on (default: default)",
     NULL, &opt_thresholds, 0},
    {"output", 'o', "FILE", "write the baseline summary here (default: standard output)", NULL,
     &opt_out, 0},
};

const struct cmd_spec cmd_history_baseline_spec = {
    "history baseline", "",
    "Write the median of the last N main/nightly records of one series as a summary JSON that\n"
    "'gate --baseline' takes: per-metric medians, one steady step per record (its median). The\n"
    "window ends early at an identity change. Exit 3 when no record qualifies.",
    baseline_opts, (int)PG_ARRAY_LEN(baseline_opts)};

static int baseline_args(int argc, char **argv, int *help, uint32_t *n, const char **kinds,
			 char **ref, char **kinds_text)
{
	const char **pos = pg_xcalloc((size_t)argc + 1, sizeof(char *));
	int n_pos, rc;

	opt_repo = opt_branch = opt_series = opt_label = opt_n = opt_kind = opt_ref =
	    opt_thresholds = opt_out = NULL;
	rc = cmd_parse(&cmd_history_baseline_spec, argc, argv, pos, &n_pos, help);
	free(pos);
	if (rc || *help)
		return rc;
	if (n_pos != 0 || !opt_repo || (!opt_series == !opt_label))
		return pg_error_set(PG_EUSAGE, "history baseline: give --repo URL_OR_PATH and "
					       "--series S or --label L (see 'profgate history "
					       "baseline --help')");
	*n = HISTORY_WINDOW_DEFAULT;
	if (opt_n && parse_n("history baseline", opt_n, n))
		return PG_EUSAGE;
	*kinds_text = pg_xstrdup(opt_kind ? opt_kind : "main,nightly");
	if (cmd_history_kinds(*kinds_text, kinds))
		return PG_EUSAGE;
	if (opt_ref)
		*ref = pg_xasprintf("%s%s", strncmp(opt_ref, "refs/", 5) ? "refs/heads/" : "",
				    opt_ref);
	return 0;
}

static int write_baseline(const struct history_window *w, const struct history_list *l,
			  const struct summary *s)
{
	struct pg_buf json = PG_BUF_INIT, note = PG_BUF_INIT;
	int rc = PG_EXIT_OK;

	summary_write_json(s, &json);
	describe(w, l, NULL, &note);
	if (opt_out && strcmp(opt_out, "-") != 0) {
		if (pg_write_file_atomic(opt_out, json.ptr, json.len))
			rc = cmd_error(PG_EXIT_INPUT);
		else
			printf("history baseline: %s, written to %s\n", note.ptr, opt_out);
	} else {
		fwrite(json.ptr, 1, json.len, stdout);
		fprintf(stderr, "profgate: history baseline: %s\n", note.ptr);
	}
	pg_buf_release(&json);
	pg_buf_release(&note);
	return rc;
}

int cmd_history_baseline(int argc, char **argv)
{
	const char *kinds[CMD_HISTORY_KINDS + 1];
	char *ref = NULL, *kinds_text = NULL, *series = NULL;
	struct gate_thresholds th;
	struct history_list l = {0};
	struct history_window w;
	struct history_window_opts wo;
	struct history_filter f;
	struct summary s;
	uint32_t n = HISTORY_WINDOW_DEFAULT;
	int help = 0, rc;

	memset(&th, 0, sizeof(th));
	memset(&w, 0, sizeof(w));
	summary_init(&s);
	if (baseline_args(argc, argv, &help, &n, kinds, &ref, &kinds_text) ||
	    cmd_load_thresholds("history baseline", opt_thresholds, &th)) {
		rc = cmd_error(PG_EXIT_USAGE);
		goto out;
	}
	if (help) {
		cmd_usage(&cmd_history_baseline_spec, stdout);
		rc = PG_EXIT_OK;
		goto out;
	}
	wo = (struct history_window_opts){opt_series, opt_label,   kinds,	 ref,
					  n,	      th.identity, th.n_identity};
	f = (struct history_filter){opt_series, opt_label, NULL, NULL, NULL, 0};
	rc = read_window("history baseline", opt_repo, opt_branch, &f, &wo, NULL, &l, &w, &series,
			 NULL);
	if (rc == PG_EXIT_OK) {
		history_baseline_summary(&w, NULL, &s);
		rc = write_baseline(&w, &l, &s);
	}
out:
	summary_release(&s);
	history_window_release(&w);
	history_list_release(&l);
	gate_thresholds_release(&th);
	free(ref);
	free(kinds_text);
	free(series);
	return rc;
}
