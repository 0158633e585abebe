/*
 * profgate action: the entrypoint of the Docker container action. Masks every
 * secret before anything else is printed, reads the inputs as the runner
 * passes them (INPUT_<NAME>: upper-cased, hyphens kept; baseline and candidate
 * hold one run a line, as gate's repeated --baseline and --candidate), and
 * runs the whole job: summaries, gate, history, PR comment, check run, job
 * summary, annotations and outputs. Exits per fail_on; errors and failed
 * deliveries always fail the step.
 *
 * Fork pull requests get a read-only token and no secrets: no comment, check
 * run or history push is tried; the job summary, annotations and the exit
 * code still carry the verdict. The workflow_run half of the fork-safe split
 * passes pull_request_event (the event file the pull_request job saved); it
 * is trusted only when its head is the head of the run that triggered this
 * one, and the pull request's head is still that commit.
 */
#include "cmd.h"

#include "../deliver/deliver.h"
#include "../history/history.h"
#include "../report/report.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define ANNOTATIONS_MAX 10

extern char **environ;

struct input_def {
	const char *name;
	const char *def; /* the default action.yml declares; NULL: none (required) */
	const char *help;
};

/* The inputs, as action.yml declares them (a test compares the two). */
static const struct input_def input_defs[] = {
    {"baseline", NULL,
     "the baseline: a summary JSON, a profile file or a profile directory; several runs: one a "
     "line"},
    {"candidate", NULL, "the candidate: the same kinds of input; several runs: one a line"},
    {"thresholds", "default", "default, strict or nightly (the shipped sets), or a file"},
    {"label", "", "a name for this comparison; with the runs' identity it names the series"},
    {"output_dir", "profgate", "where the summaries, verdict JSON and report are written"},
    {"comment", "on-alert", "the PR comment: always, on-alert or never"},
    {"check_run", "false", "also a check run on the pull request's head commit"},
    {"fail_on", "fail", "what fails the step: fail, warn or never"},
    {"history", "", "append the result to the history branch of this git remote"},
    {"history_branch", "profgate-history", "the history branch"},
    {"history_required", "false", "a failed history push fails the step (else a warning)"},
    {"kind", "", "the history record's kind: pr, main, nightly, manual (default: the event)"},
    {"github_token", "${{ github.token }}", "the token for comments, check runs and history"},
    {"github_login", "",
     "the token's login, whose earlier comment is updated (empty: GET /user, or for an app's "
     "token any bot's)"},
    {"alert_mentions", "", "who the comment alerts on a failing verdict: @user or @org/team"},
    {"wandb_api_key", "", "a W&B API key for W&B inputs (passed as WANDB_API_KEY)"},
    {"pull_request_event", "",
     "workflow_run jobs: the event file the pull_request job saved (fork-safe split)"},
    {"dashboard", "", "write the history's dashboard into this folder (a Pages artifact)"},
    {"dashboard_url", "", "where the dashboard is published: the report links the series' page"},
};

/* The outputs, as action.yml declares them. */
static const struct input_def output_defs[] = {
    {"verdict", NULL, "pass, improved, warn, inconclusive, fail, incomparable or recorded; error"},
    {"exit_code", NULL, "the step's exit code"},
    {"regressions", NULL, "the number of metrics that warn or fail"},
    {"report_path", NULL, "the markdown report"},
    {"summary_path", NULL, "the candidate's summary JSON"},
    {"verdict_path", NULL, "the verdict JSON"},
    {"comment_url", NULL, "the PR comment, when one was posted or updated"},
    {"history_pending", NULL, "the folder of history records not pushed, when any (an artifact)"},
};

/* The inputs that hold runs, one a line, and their index in input_defs. */
enum { ACTION_BASELINE, ACTION_CANDIDATE, ACTION_RUN_INPUTS };

struct action {
	const char *in[PG_ARRAY_LEN(input_defs)];
	/* the runs of baseline and candidate: lines of a copy of the input,
	 * cut in place; NULL-terminated as gate's repeated options are */
	char *run_text[ACTION_RUN_INPUTS];
	glob_t globs[ACTION_RUN_INPUTS][CMD_OPT_COLLECT_MAX]; /* lines that were patterns */
	uint32_t n_globs[ACTION_RUN_INPUTS];
	const char *runs[ACTION_RUN_INPUTS][CMD_OPT_COLLECT_MAX + 1];
	uint32_t n_runs[ACTION_RUN_INPUTS];
	enum github_comment_mode mode;
	int check_run, history_required;
	char *thresholds;		/* a path, or NULL for the built-in default */
	struct actions_event ev, saved; /* the running event; pull_request_event */
	int64_t pr;
	const char *head_sha;
	int read_only;		       /* a pull_request from a fork: the token cannot write */
	char *paths[4];		       /* baseline summary, candidate summary, verdict, report */
	char *pending;		       /* <output_dir>/pending: history records whose push failed */
	struct pg_buf annotations, md; /* from the gate's result */
	struct cmd_gate_outcome outcome;
	char *comment_url;
	int delivery_failed;
	int config_failed; /* a delivery refused its configuration (exit 2) */
};

/* ---- inputs ---- */

static const char *input_env(const char *name)
{
	char key[64];
	size_t n = 0;
	const char *v;

	memcpy(key, "INPUT_", 6);
	for (n = 0; name[n] && n < sizeof(key) - 7; n++)
		key[6 + n] = (char)toupper((unsigned char)name[n]);
	key[6 + n] = 0;
	v = getenv(key);
	return v && *v ? v : NULL;
}

static const char *in(const struct action *a, const char *name)
{
	for (size_t i = 0; i < PG_ARRAY_LEN(input_defs); i++)
		if (strcmp(input_defs[i].name, name) == 0)
			return a->in[i];
	return NULL;
}

/* The value the runner would pass: set, else action.yml's default (run by
 * hand, nothing fills them in). The token's default is an expression. */
static void read_inputs(struct action *a)
{
	for (size_t i = 0; i < PG_ARRAY_LEN(input_defs); i++) {
		const char *v = input_env(input_defs[i].name), *d = input_defs[i].def;
		if (!v && d && *d && d[0] != '$')
			v = d;
		a->in[i] = v;
	}
	for (size_t i = 0; i < PG_ARRAY_LEN(input_defs); i++)
		if (!a->in[i] && strcmp(input_defs[i].name, "github_token") == 0)
			a->in[i] = cmd_github_token();
}

static int parse_bool(const char *name, const char *v, int *out)
{
	if (!v || strcasecmp(v, "false") == 0 || strcmp(v, "0") == 0 || strcasecmp(v, "no") == 0)
		*out = 0;
	else if (strcasecmp(v, "true") == 0 || strcmp(v, "1") == 0 || strcasecmp(v, "yes") == 0)
		*out = 1;
	else
		return pg_error_set(PG_EUSAGE, "action: input '%s' is '%s': give true or false",
				    name, v);
	return 0;
}

/* An INPUT_ name with a hyphen that is one of ours spelt with '-' would be
 * silently ignored (`fail-on: never`): refuse it. */
static int misspelt_inputs(void)
{
	for (char **e = environ; *e; e++) {
		const char *eq = strchr(*e, '=');
		char name[64];
		size_t n;

		if (strncmp(*e, "INPUT_", 6) != 0 || !eq || !memchr(*e, '-', (size_t)(eq - *e)))
			continue;
		n = (size_t)(eq - *e) - 6;
		if (n >= sizeof(name))
			continue;
		for (size_t i = 0; i < n; i++)
			name[i] =
			    (*e)[6 + i] == '-' ? '_' : (char)tolower((unsigned char)(*e)[6 + i]);
		name[n] = 0;
		for (size_t i = 0; i < PG_ARRAY_LEN(input_defs); i++)
			if (strcmp(input_defs[i].name, name) == 0)
				return pg_error_set(PG_EUSAGE,
						    "action: unknown input '%.*s': the "
						    "input is '%s'",
						    (int)n, *e + 6, name);
	}
	return 0;
}

static int add_run(struct action *a, int i, const char *path)
{
	if (a->n_runs[i] == CMD_OPT_COLLECT_MAX)
		return pg_error_set(PG_EUSAGE, "action: input '%s': at most %d runs (lines)",
				    input_defs[i].name, CMD_OPT_COLLECT_MAX);
	a->runs[i][a->n_runs[i]++] = path;
	return 0;
}

/* A line with a wildcard ('*', '?', '[') other than a history: spec is a
 * pattern: its files in sorted
 * order (as the run files the Action writes, SIDE.run-NN.summary.json, for
 * a second workflow to judge the same runs); one that matches none is an
 * error naming it. */
static int add_pattern(struct action *a, int i, const char *line)
{
	glob_t *g = &a->globs[i][a->n_globs[i]];
	int rc = 0;

	if (glob(line, 0, NULL, g) != 0) {
		globfree(g);
		return pg_error_set(PG_EUSAGE, "action: input '%s': %s matches no file",
				    input_defs[i].name, line);
	}
	a->n_globs[i]++;
	for (size_t k = 0; k < g->gl_pathc && rc == 0; k++)
		rc = add_run(a, i, g->gl_pathv[k]);
	return rc;
}

/* A run input holds one run a line, as a YAML block gives them: each line
 * trimmed, blank lines and '#' comments skipped. */
static int split_runs(struct action *a, int i)
{
	const char *name = input_defs[i].name;
	char *line = a->run_text[i] = pg_xstrdup(a->in[i]);

	while (line) {
		char *next = strchr(line, '\n'), *end;

		if (next)
			*next++ = 0;
		while (isspace((unsigned char)*line))
			line++;
		end = line + strlen(line);
		while (end > line && isspace((unsigned char)end[-1]))
			*--end = 0;
		if (*line && *line != '#') {
			int rc = strpbrk(line, "*?[") && strncmp(line, "history:", 8) != 0 &&
					 a->n_globs[i] < CMD_OPT_COLLECT_MAX
				     ? add_pattern(a, i, line)
				     : add_run(a, i, line);
			if (rc)
				return rc;
		}
		line = next;
	}
	if (a->n_runs[i] == 0)
		return pg_error_set(PG_EUSAGE,
				    "action: input '%s' names no run: give one a line (blank "
				    "lines and # comments are skipped)",
				    name);
	return 0;
}

static int validate(struct action *a)
{
	const char *fail_on = in(a, "fail_on"), *kind = in(a, "kind");

	for (int i = 0; i < ACTION_RUN_INPUTS; i++)
		if (!a->in[i])
			return pg_error_set(PG_EUSAGE, "action: input '%s' is required",
					    input_defs[i].name);
	for (int i = 0; i < ACTION_RUN_INPUTS; i++)
		if (split_runs(a, i))
			return PG_EUSAGE;
	if (misspelt_inputs() || github_comment_mode_parse(in(a, "comment"), &a->mode) ||
	    parse_bool("check_run", in(a, "check_run"), &a->check_run) ||
	    parse_bool("history_required", in(a, "history_required"), &a->history_required))
		return PG_EUSAGE;
	if (cmd_fail_on_check(fail_on))
		return pg_error_set(PG_EUSAGE,
				    "action: input 'fail_on' is '%s': give fail, warn "
				    "or never",
				    fail_on);
	if (github_mentions_check(in(a, "alert_mentions")))
		return pg_error_set(PG_EUSAGE, "action: input %s", pg_error_last());
	if (in(a, "dashboard") && !in(a, "history"))
		return pg_error_set(
		    PG_EUSAGE,
		    "action: input 'dashboard' charts the history: set the history input");
	if (in(a, "dashboard_url") && !report_url_ok(in(a, "dashboard_url")))
		return pg_error_set(PG_EUSAGE,
				    "action: input 'dashboard_url' is '%s': give an http(s) URL of "
				    "plain characters without a trailing slash",
				    in(a, "dashboard_url"));
	if (kind && !history_kind_valid(kind))
		return pg_error_set(PG_EUSAGE,
				    "action: input 'kind' is '%s': give pr, main, "
				    "nightly or manual",
				    kind);
	return cmd_resolve_thresholds("action", in(a, "thresholds"), &a->thresholds);
}

/* ---- secrets and the user ---- */

/* Every secret the job may hold, masked before anything is printed, once
 * each (the github_token input is usually GITHUB_TOKEN too). */
static void mask_secrets(const struct action *a)
{
	static const char *const envs[] = {"GITHUB_TOKEN", "PROFGATE_GITHUB_TOKEN",
					   "PROFGATE_GIT_TOKEN", "WANDB_API_KEY"};
	const char *v[2 + PG_ARRAY_LEN(envs)];
	struct pg_buf b = PG_BUF_INIT;

	v[0] = in(a, "github_token");
	v[1] = in(a, "wandb_api_key");
	for (size_t i = 0; i < PG_ARRAY_LEN(envs); i++)
		v[2 + i] = getenv(envs[i]);
	for (size_t i = 0; i < PG_ARRAY_LEN(v); i++) {
		size_t j = 0;

		while (j < i && !(v[i] && v[j] && strcmp(v[i], v[j]) == 0))
			j++;
		if (j == i)
			actions_add_mask(&b, v[i]);
	}
	fwrite(b.ptr, 1, b.len, stdout);
	fflush(stdout);
	pg_buf_release(&b);
}

/* The container runs as root, the workspace belongs to the runner's user
 * (uid 1001 on hosted runners): work as that user, so that what profgate
 * writes there is the user's to clean up. */
static void drop_root(void)
{
	const char *ws = getenv("GITHUB_WORKSPACE");
	struct stat st;

	if (geteuid() != 0 || !ws || !*ws || stat(ws, &st) != 0 || st.st_uid == 0)
		return;
	if (setgroups(0, NULL) != 0 || setgid(st.st_gid) != 0 || setuid(st.st_uid) != 0)
		printf("::warning title=profgate::could not run as uid %u (%s); running as root\n",
		       (unsigned)st.st_uid, strerror(errno));
}

/* The token for comments and history pushes, and the W&B key for the W&B
 * sources, where the rest of profgate looks for them. */
static void export_secrets(const struct action *a)
{
	const char *tok = in(a, "github_token"), *key = in(a, "wandb_api_key");

	if (tok)
		setenv("PROFGATE_GIT_TOKEN", tok, 1);
	if (key)
		setenv("WANDB_API_KEY", key, 1);
	if (in(a, "github_login"))
		setenv("PROFGATE_GITHUB_LOGIN", in(a, "github_login"), 1);
}

/* ---- the event ---- */

/* workflow_run: the pull_request job's saved event is trusted only for the
 * commit that triggered this run. */
static int read_saved_event(struct action *a, const char *path)
{
	const char *name = getenv("GITHUB_EVENT_NAME");

	if (!name || strcmp(name, "workflow_run") != 0)
		return pg_error_set(PG_EUSAGE,
				    "action: pull_request_event is for workflow_run jobs "
				    "(this is a %s event)",
				    name ? name : "non-Actions");
	if (actions_event_read(path, &a->saved))
		return PG_EUSAGE;
	if (a->saved.pr < 1 || !a->saved.head_sha)
		return pg_error_set(PG_EUSAGE, "action: '%s' is not a pull_request event", path);
	if (!a->ev.head_sha || strcmp(a->ev.head_sha, a->saved.head_sha) != 0)
		return pg_error_set(PG_EUSAGE,
				    "action: the saved event's head %.12s is not the "
				    "head %.12s of the run that triggered this one",
				    a->saved.head_sha, a->ev.head_sha ? a->ev.head_sha : "(none)");
	a->pr = a->saved.pr;
	a->head_sha = a->saved.head_sha;
	return 0;
}

static int read_event(struct action *a)
{
	const char *path = getenv("GITHUB_EVENT_PATH"), *name = getenv("GITHUB_EVENT_NAME");
	const char *actor = getenv("GITHUB_ACTOR");

	memset(&a->ev, 0, sizeof(a->ev));
	memset(&a->saved, 0, sizeof(a->saved));
	a->ev.pr = a->saved.pr = a->pr = -1;
	if (path && *path && actions_event_read(path, &a->ev))
		return PG_EUSAGE;
	if (in(a, "pull_request_event"))
		return read_saved_event(a, in(a, "pull_request_event"));
	a->pr = a->ev.pr;
	a->head_sha = a->ev.head_sha;
	/* pull_request runs from forks and Dependabot get a read-only token */
	a->read_only = name && strcmp(name, "pull_request") == 0 &&
		       (a->ev.fork || (actor && strcmp(actor, "dependabot[bot]") == 0));
	return 0;
}

/* ---- the gate ---- */

static void set_paths(struct action *a)
{
	static const char *const names[] = {"baseline.summary.json", "candidate.summary.json",
					    "verdict.json", "report.md"};
	const char *dir = in(a, "output_dir");

	for (size_t i = 0; i < PG_ARRAY_LEN(names); i++)
		a->paths[i] = pg_xasprintf("%s/%s", dir, names[i]);
	a->pending = pg_xasprintf("%s/pending", dir);
}

/* 1 when the pending folder holds a record (kept by this run or an earlier
 * one whose artifact was put back and could not be delivered either). */
static int has_pending(const struct action *a)
{
	DIR *d = a->pending ? opendir(a->pending) : NULL;
	struct dirent *e;
	int found = 0;

	while (d && !found && (e = readdir(d))) {
		size_t n = strlen(e->d_name);

		found = n > 5 && e->d_name[0] != '.' && strcmp(e->d_name + n - 5, ".json") == 0;
	}
	if (d)
		closedir(d);
	return found;
}

/* The record's CI facts: a pull request's head commit (GITHUB_SHA is the
 * test merge), and in a workflow_run job the saved pull_request event. */
static void record_env(const struct action *a, struct history_env *env)
{
	history_env_from_environ(env);
	if (a->head_sha && a->pr > 0)
		env->sha = a->head_sha;
	if (in(a, "pull_request_event")) {
		env->event_name = "pull_request";
		env->event_path = in(a, "pull_request_event");
	}
}

/* The gate's result as annotations, printed once the deliveries are done. */
static void keep_annotations(const struct gate_result *r, void *ctx)
{
	actions_annotations(r, ANNOTATIONS_MAX, ctx);
}

static int run_gate(struct action *a)
{
	struct cmd_gate_job job;
	struct history_env env;
	struct pg_buf stop = PG_BUF_INIT;
	char token[40];
	int rc;

	record_env(a, &env);
	memset(&job, 0, sizeof(job));
	job.cmd = "gate";
	job.baselines = a->runs[ACTION_BASELINE];
	job.n_baselines = a->n_runs[ACTION_BASELINE];
	job.baseline = job.baselines[0];
	job.candidates = a->runs[ACTION_CANDIDATE];
	job.n_candidates = a->n_runs[ACTION_CANDIDATE];
	job.candidate = job.candidates[0];
	job.thresholds = a->thresholds;
	job.label = in(a, "label");
	job.baseline_summary_out = a->paths[0];
	job.candidate_summary_out = a->paths[1];
	job.runs_out = in(a, "output_dir");
	job.json_out = a->paths[2];
	job.report_out = a->paths[3];
	cmd_parse_threads("action", NULL, &job.threads);
	job.verdict_exit = 1;
	job.on_result = keep_annotations;
	job.on_result_ctx = &a->annotations;
	job.keep_md = &a->md;
	job.outcome = &a->outcome;
	job.dashboard_url = in(a, "dashboard_url");
	if (in(a, "history") && !a->read_only) {
		job.history = in(a, "history");
		job.history_branch = in(a, "history_branch");
		job.history_required = a->history_required;
		job.history_pending = a->pending;
		job.kind = in(a, "kind");
		job.history_env = &env;
	}
	/* baseline: history:BRANCH[:N] reads the window from the history input,
	 * also from a fork (reading needs no write access; nothing is appended) */
	if (cmd_gate_baseline_runs(&job, "action: input 'baseline':"))
		return cmd_error(PG_EXIT_USAGE);
	if (job.baseline_history && !in(a, "history")) {
		free(job.baseline_ref);
		pg_error_set(PG_EUSAGE,
			     "action: baseline '%s' reads the history: set the history input",
			     job.baseline);
		return cmd_error(PG_EXIT_USAGE);
	}
	if (job.baseline_history && !job.history) {
		job.history_from = in(a, "history");
		job.history_branch = in(a, "history_branch");
	}
	printf("::group::profgate: summarize and gate%s\n",
	       job.history ? ", append to the history" : "");
	/* the verdict lines repeat op names from the profiles: no command in them runs */
	actions_stop_commands(&stop, token);
	fwrite(stop.ptr, 1, stop.len, stdout);
	fflush(stdout);
	rc = cmd_gate_run(&job);
	free(job.baseline_ref);
	printf("::%s::\n::endgroup::\n", token);
	fflush(stdout);
	pg_buf_release(&stop);
	if (rc == PG_EXIT_DELIVERY)
		a->delivery_failed = 1;
	if (in(a, "history") && a->read_only)
		printf(
		    "::notice title=profgate::a pull request from a fork gets a read-only token: "
		    "no history append (docs/action.md: the workflow_run split)\n");
	return rc;
}

/* ---- deliveries ---- */

/* The dashboard input: the history's site (history dashboard) written into
 * that folder once this run's record is on the branch, for
 * actions/upload-pages-artifact. A history that cannot be read is a failed
 * delivery. */
static void build_dashboard(struct action *a)
{
	const char *argv[10];
	int argc = 0, rc;

	if (!in(a, "dashboard"))
		return;
	argv[argc++] = "dashboard";
	argv[argc++] = "--repo";
	argv[argc++] = in(a, "history");
	argv[argc++] = "--branch";
	argv[argc++] = in(a, "history_branch");
	argv[argc++] = "--output";
	argv[argc++] = in(a, "dashboard");
	if (a->thresholds) {
		argv[argc++] = "--thresholds";
		argv[argc++] = a->thresholds;
	}
	argv[argc] = NULL;
	printf("::group::profgate: dashboard\n");
	fflush(stdout);
	rc = cmd_history_dashboard(argc, (char **)argv);
	fflush(stdout);
	printf("::endgroup::\n");
	if (rc == PG_EXIT_USAGE)
		a->config_failed = 1;
	else if (rc != PG_EXIT_OK)
		a->delivery_failed = 1;
}

/* workflow_run: the pull request must still be at the run's head, so a
 * forged event cannot aim the comment at another pull request. */
static int saved_pr_current(struct action *a, const char *token)
{
	struct github g;
	char *sha = NULL;
	int ok = 0;

	if (!in(a, "pull_request_event"))
		return 1;
	if (github_init(&g, getenv("GITHUB_API_URL"), getenv("GITHUB_REPOSITORY"), token) ||
	    github_pull_head_sha(&g, a->pr, &sha)) {
		fprintf(stderr, "profgate: %s\n", pg_error_last());
		a->delivery_failed = 1;
	} else if (strcmp(sha, a->head_sha) != 0) {
		printf("::warning title=profgate::pull request #%lld is now at %.12s, not %.12s: "
		       "no comment from this run\n",
		       (long long)a->pr, sha, a->head_sha);
	} else {
		ok = 1;
	}
	free(sha);
	github_release(&g);
	return ok;
}

static void post_comment(struct action *a)
{
	struct cmd_comment_job cj;

	if (a->mode == GITHUB_COMMENT_NEVER || a->pr < 1 || a->md.len == 0)
		return;
	if (a->read_only) {
		printf(
		    "::notice title=profgate::a pull request from a fork gets a read-only token: "
		    "no PR comment; the verdict is in the job summary (docs/action.md: the "
		    "workflow_run "
		    "split)\n");
		return;
	}
	printf("::group::profgate: PR comment\n");
	fflush(stdout);
	if (saved_pr_current(a, in(a, "github_token"))) {
		memset(&cj, 0, sizeof(cj));
		cj.md = a->md.ptr;
		cj.md_len = a->md.len;
		cj.origin = a->paths[3];
		cj.pr = a->pr;
		cj.token = in(a, "github_token");
		cj.mode = (int)a->mode;
		cj.indent = "";
		cj.mentions = in(a, "alert_mentions");
		switch (cmd_comment_deliver(&cj, &a->comment_url)) {
		case PG_EXIT_OK: break;
		case PG_EXIT_USAGE: a->config_failed = 1; break; /* GITHUB_API_URL, limits */
		default: a->delivery_failed = 1;
		}
	}
	fflush(stdout);
	printf("::endgroup::\n");
}

static void post_check_run(struct action *a, const char *verdict)
{
	struct github g;
	struct pg_buf name = PG_BUF_INIT, title = PG_BUF_INIT;
	const char *label = in(a, "label");
	char *url = NULL;

	if (!a->check_run || !a->head_sha || a->read_only || a->md.len == 0)
		return;
	pg_buf_addf(&name, "profgate%s%s%s", label ? " (" : "", label ? label : "",
		    label ? ")" : "");
	pg_buf_addf(&title, "%s: %s", name.ptr, verdict);
	if (github_init(&g, getenv("GITHUB_API_URL"), getenv("GITHUB_REPOSITORY"),
			in(a, "github_token")) ||
	    github_check_run(&g, name.ptr, a->head_sha, verdict, title.ptr, a->md.ptr, a->md.len,
			     &url)) {
		/* check runs are GitHub Apps' (GITHUB_TOKEN is one); a personal token
		 * gets 403: the verdict is in the annotations and the job summary */
		if (g.last_status == 403)
			printf(
			    "::notice title=profgate check run::no check run: this token may not "
			    "create one (HTTP 403; check runs need a GitHub App token such as "
			    "GITHUB_TOKEN with checks: write); the verdict is in the annotations "
			    "and the job summary\n");
		else {
			/* an optional extra: a warning, not a failed step */
			struct pg_buf w = PG_BUF_INIT;
			actions_escape_data(&w, pg_error_last());
			printf("::warning title=profgate check run::%s\n", w.ptr);
			pg_buf_release(&w);
		}
	} else {
		printf("check run: %s\n", url ? url : "created");
	}
	free(url);
	github_release(&g);
	pg_buf_release(&name);
	pg_buf_release(&title);
}

/* ---- outputs and the exit ---- */

static const char *verdict_of(const struct action *a)
{
	return a->outcome.verdict ? a->outcome.verdict : "error";
}

static int write_outputs(const struct action *a, const char *verdict, int code)
{
	const char *path = getenv("GITHUB_OUTPUT");
	char num[32], regs[32];
	const char *values[PG_ARRAY_LEN(output_defs)];

	if (!path || !*path)
		return 0;
	snprintf(num, sizeof(num), "%d", code);
	snprintf(regs, sizeof(regs), "%u", a->outcome.n_fail + a->outcome.n_warn);
	values[0] = verdict;
	values[1] = num;
	values[2] = regs;
	values[3] = a->md.len ? a->paths[3] : "";
	values[4] = a->md.len ? a->paths[1] : "";
	values[5] = a->outcome.verdict ? a->paths[2] : "";
	values[6] = a->comment_url ? a->comment_url : "";
	values[7] = has_pending(a) ? a->pending : "";
	for (size_t i = 0; i < PG_ARRAY_LEN(output_defs); i++)
		if (actions_output(path, output_defs[i].name, values[i]))
			return PG_EIO;
	return 0;
}

static int write_summary(const struct action *a)
{
	const char *path = getenv("GITHUB_STEP_SUMMARY");
	struct pg_buf md = PG_BUF_INIT;
	int rc;

	if (!path || !*path || a->md.len == 0)
		return 0;
	if (a->read_only && (a->mode != GITHUB_COMMENT_NEVER || in(a, "history")))
		pg_buf_adds(&md, "> This pull request comes from a fork, whose token is read-only: "
				 "profgate posted no comment and appended no history. The "
				 "docs/action.md's workflow_run split does both safely.\n\n");
	pg_buf_add(&md, a->md.ptr, a->md.len);
	rc = actions_step_summary(path, md.ptr, md.len);
	pg_buf_release(&md);
	return rc;
}

static void annotate(const struct action *a)
{
	if (a->annotations.len)
		fwrite(a->annotations.ptr, 1, a->annotations.len, stdout);
}

static void action_release(struct action *a)
{
	actions_event_release(&a->ev);
	actions_event_release(&a->saved);
	for (size_t i = 0; i < PG_ARRAY_LEN(a->paths); i++)
		free(a->paths[i]);
	free(a->pending);
	for (size_t i = 0; i < PG_ARRAY_LEN(a->run_text); i++) {
		free(a->run_text[i]);
		for (uint32_t k = 0; k < a->n_globs[i]; k++)
			globfree(&a->globs[i][k]);
	}
	free(a->thresholds);
	free(a->comment_url);
	pg_buf_release(&a->annotations);
	pg_buf_release(&a->md);
}

/* An error as the one stderr line and an error annotation. */
static int fail_step(int code)
{
	struct pg_buf b = PG_BUF_INIT;

	pg_buf_adds(&b, "::error title=profgate::");
	actions_escape_data(&b, pg_error_last());
	printf("%s\n", b.ptr);
	fflush(stdout);
	pg_buf_release(&b);
	return cmd_error(code);
}

static int finish(struct action *a, int gate_rc)
{
	const char *verdict = verdict_of(a);
	int code;

	if (gate_rc == PG_EXIT_USAGE || gate_rc == PG_EXIT_INPUT)
		code = gate_rc;
	else if (a->config_failed)
		code = PG_EXIT_USAGE;
	else if (a->delivery_failed)
		code = PG_EXIT_DELIVERY;
	else
		code = cmd_fail_on_exit(in(a, "fail_on"), verdict);
	annotate(a);
	if (write_summary(a) || write_outputs(a, verdict, code))
		code = fail_step(code ? code : PG_EXIT_INPUT);
	if (code == PG_EXIT_DELIVERY)
		printf("::error title=profgate::a delivery failed (see the log); the verdict "
		       "was %s\n",
		       verdict);
	printf("profgate action: %s, exit %d\n", verdict, code);
	return code;
}

/* ---- the command ---- */

static void action_usage(FILE *out)
{
	fprintf(out,
		"usage: profgate action\n\n"
		"The GitHub Action's entrypoint: reads its inputs from INPUT_<NAME>, runs the\n"
		"gate, the history append, the PR comment and the check run, writes the job\n"
		"summary, annotations and outputs, and exits per fail_on.\n\ninputs:\n");
	for (size_t i = 0; i < PG_ARRAY_LEN(input_defs); i++)
		fprintf(out, "  %-20s %s (default: %s)\n", input_defs[i].name, input_defs[i].help,
			!input_defs[i].def   ? "required"
			: *input_defs[i].def ? input_defs[i].def
					     : "''");
	fprintf(out, "\noutputs:\n");
	for (size_t i = 0; i < PG_ARRAY_LEN(output_defs); i++)
		fprintf(out, "  %-20s %s\n", output_defs[i].name, output_defs[i].help);
	fprintf(out, "  %-28s %s\n", "-h, --help", "show this help");
}

int cmd_action(int argc, char **argv)
{
	struct action a;
	int rc;

	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		action_usage(stdout);
		return cmd_finish(PG_EXIT_OK);
	}
	memset(&a, 0, sizeof(a));
	read_inputs(&a);
	mask_secrets(&a);
	if (argc > 1) {
		pg_error_set(PG_EUSAGE, "action: takes no arguments (inputs come from INPUT_*)");
		return cmd_finish(fail_step(PG_EXIT_USAGE));
	}
	drop_root();
	export_secrets(&a);
	if (validate(&a) || read_event(&a)) {
		rc = fail_step(PG_EXIT_USAGE);
		action_release(&a);
		return cmd_finish(rc);
	}
	if (pg_mkdir_p(in(&a, "output_dir"), 0777)) {
		pg_error_set(PG_EIO, "action: %s", pg_error_last());
		rc = fail_step(PG_EXIT_INPUT);
		action_release(&a);
		return cmd_finish(rc);
	}
	set_paths(&a);
	rc = run_gate(&a);
	if (rc != PG_EXIT_USAGE && rc != PG_EXIT_INPUT) {
		build_dashboard(&a);
		post_comment(&a);
		post_check_run(&a, verdict_of(&a));
	}
	rc = finish(&a, rc);
	action_release(&a);
	return cmd_finish(rc);
}
