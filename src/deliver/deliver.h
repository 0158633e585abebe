/*
 * deliver/: where results go once the gate has decided: GitHub (the sticky PR
 * comment, check runs), the Actions runtime files (outputs, step summary,
 * annotations, the event JSON), and W&B (publishing a summary back to a run).
 * Decides nothing: it sends what the gate and the reporters produced.
 */
#ifndef PG_DELIVER_H
#define PG_DELIVER_H

#include "../util/util.h"

#include <stdint.h>

/* ---- GitHub and the Actions runtime (github.c, actions.c) ---- */

/*
 * The hidden marker that ends every profgate report and identifies its series
 * (history's "<label slug>-<8 hex>") and verdict:
 *   <!-- profgate:v1 series=matmul-bench-1a2b3c4d verdict=fail -->
 * A sticky PR comment is found by "<!-- profgate:v1 series=<series> " and by
 * its author; the verdict lets `profgate comment` apply on-alert to a report
 * file alone.
 */
#define GITHUB_MARKER_PREFIX "<!-- profgate:v1 series="

struct github_marker {
	char series[128];
	char verdict[24];
};

/* Append the marker line ("<!-- ... -->\n") of a series and a verdict to out. */
void github_marker_append(const char *series, const char *verdict, struct pg_buf *out);
/* The last marker in a report; 0, or PG_ENOTFOUND with the message set. */
int github_marker_find(const char *md, size_t len, struct github_marker *out) PG_WUR;
/* 1 for the verdicts on-alert comments on: warn, fail, incomparable. */
int github_verdict_alerts(const char *verdict);

enum github_comment_mode {
	GITHUB_COMMENT_NEVER,
	GITHUB_COMMENT_ON_ALERT, /* create on an alert; once it exists, always update */
	GITHUB_COMMENT_ALWAYS,
};
/* "always", "on-alert" or "never"; 0, or PG_EUSAGE with the message set. */
int github_comment_mode_parse(const char *s, enum github_comment_mode *out) PG_WUR;

/* GitHub's limit is 65,536 characters; bytes never undercount characters
 * (in code points or UTF-16 units), so a body this many bytes long fits. */
#define GITHUB_COMMENT_MAX_BYTES 65000
/* The job summary's limit is 1 MiB per step. */
#define ACTIONS_SUMMARY_MAX_BYTES (1024 * 1024)

/*
 * Fit markdown md into max_bytes of out (appended): cut at a line end (or a
 * UTF-8 boundary within one long line), close an open code fence, and add a
 * note naming what was cut (the section the cut fell in, the headings left
 * out, lines and bytes) and where_full, a phrase saying where the full text
 * is ("the job summary"). The last marker line of md, if any, is kept at the
 * end. Short enough markdown is copied unchanged.
 */
void github_md_fit(const char *md, size_t len, size_t max_bytes, const char *where_full,
		   struct pg_buf *out);

/* One GitHub REST client: the base URL, the repository, the token. */
struct github {
	char *api;   /* GITHUB_API_URL without a trailing '/'; default https://api.github.com */
	char *repo;  /* "owner/name" */
	char *token; /* sent as "Authorization: Bearer"; redacted from every message */
	char *login; /* the token's own login once known (github_login) */
	int any_bot; /* an app's token whose login is unknown: any bot's comment is ours */
	uint32_t max_wait_s; /* per wait between retries; 0: the wrapper's default */
	long last_status;    /* the last answer's HTTP status (0: none arrived) */
};

/*
 * Set g up. api NULL: https://api.github.com. repo must be "owner/name" of
 * letters, digits, '-', '_' and '.'; the token must be non-empty. Copies
 * everything; github_release() in every case. 0, or PG_EUSAGE.
 */
int github_init(struct github *g, const char *api, const char *repo, const char *token) PG_WUR;
void github_release(struct github *g);

/*
 * The login comments by this token carry: PROFGATE_GITHUB_LOGIN when set,
 * else GET /user for a personal token. An app's installation token (the
 * Actions GITHUB_TOKEN or another app's) cannot read /user: then g->login is
 * "github-actions[bot]" and g->any_bot is set, so that a comment by any bot
 * account counts as ours. Cached in g->login. 0, or PG_EDELIVERY.
 */
int github_login(struct github *g) PG_WUR;

enum github_comment_action {
	GITHUB_COMMENT_SKIPPED, /* mode never, or on-alert without an alert or a comment */
	GITHUB_COMMENT_CREATED,
	GITHUB_COMMENT_UPDATED,
	GITHUB_COMMENT_UNCHANGED, /* it already said exactly this: no PATCH */
};

struct github_comment_result {
	enum github_comment_action action;
	int64_t id;
	char *url; /* html_url; NULL when skipped. free() it */
};

/*
 * The sticky comment of report md's series on issue or PR number pr: the
 * comments are listed through every page (Link rel="next"), the first one by
 * the token's login whose body holds the series' marker is updated in place
 * (PATCH), else one is created (POST) unless mode says not to. The body is md
 * fitted to GITHUB_COMMENT_MAX_BYTES, headed by an all-clear line when an
 * on-alert comment is updated with a verdict that is no alert, and followed
 * by run_url (NULL for none). When the verdict fails the gate (fail,
 * incomparable), mentions (NULL or "" for none; "@user @org/team", checked
 * by github_mentions_check) head the comment in an alert line. A 422 "too
 * long" is retried once at half the size. A POST answered 5xx, or whose
 * answer was lost, is not sent again before the comments are listed again
 * and ours is not among them. out is initialised here; free out->url. 0;
 * PG_EUSAGE when md has no marker or mentions are malformed; PG_EDELIVERY
 * with a one-line message naming the call and GitHub's reason.
 */
int github_comment_upsert(struct github *g, int64_t pr, const char *md, size_t len,
			  enum github_comment_mode mode, const char *mentions, const char *run_url,
			  struct github_comment_result *out) PG_WUR;

/* 0 when s (NULL or "" too) is @login or @org/team names separated by spaces
 * or commas; else PG_EUSAGE with the message set. */
int github_mentions_check(const char *s) PG_WUR;

/*
 * A completed check run named name on head_sha: the conclusion from verdict
 * (pass, improved: success; warn, inconclusive: neutral; fail, incomparable:
 * failure), title, and md fitted as its summary. Like a comment, it is not
 * POSTed again blindly after a 5xx or a lost answer: the commit's check runs
 * of that name are listed and one holding this POST's external_id (a random
 * nonce) is the one made. *url_out gets its html_url (malloc'd) or NULL. 0
 * or PG_EDELIVERY (g->last_status says 403 for a token that may not).
 */
int github_check_run(struct github *g, const char *name, const char *head_sha, const char *verdict,
		     const char *title, const char *md, size_t len, char **url_out) PG_WUR;

/* The head sha of pull request pr (GET /pulls/N), malloc'd in *out. 0 or
 * PG_EDELIVERY. */
int github_pull_head_sha(struct github *g, int64_t pr, char **out) PG_WUR;

/* ---- the Actions runtime (actions.c) ---- */

/* What GITHUB_EVENT_PATH says about a pull request. */
struct actions_event {
	int64_t pr;	  /* -1 when the event names none */
	char *head_sha;	  /* pull_request.head.sha (workflow_run: workflow_run.head_sha) */
	char *base_sha;	  /* pull_request.base.sha */
	char *head_repo;  /* full name; NULL when the head repository is gone */
	char *base_repo;  /* full name */
	int fork;	  /* a pull request whose head is another repository (or gone) */
	int workflow_run; /* a workflow_run event: pr from workflow_run.pull_requests */
};

/* Read and parse an event file. e is initialised here; release it in every
 * case. 0; PG_EIO or PG_EFORMAT with the message set. */
int actions_event_read(const char *path, struct actions_event *e) PG_WUR;
void actions_event_release(struct actions_event *e);

/* Workflow-command escaping (the runner's ActionCommand): data escapes '%',
 * '\r' and '\n'; a property value also ':' and ','. '%' first. */
void actions_escape_data(struct pg_buf *b, const char *s);
void actions_escape_property(struct pg_buf *b, const char *s);
/* 2 * n_bytes (at most 32) random hex digits and a NUL into out. */
void actions_random_hex(char *out, size_t n_bytes);
/* "::add-mask::<secret>\n", the secret escaped as data; nothing for NULL or "". */
void actions_add_mask(struct pg_buf *b, const char *secret);
/* "::stop-commands::<token>\n" with a fresh random token (copied to token,
 * at least 33 bytes): the runner runs no workflow command printed until
 * "::<token>::\n". For output that repeats names from a profile. */
void actions_stop_commands(struct pg_buf *b, char *token);

struct gate_result;
/*
 * The annotations for the gate's result, appended to out: an ::error per
 * failing metric and for an incomparable verdict, a ::warning per warning
 * metric, at most max each (the runner keeps 10 per step; the last line then
 * says how many more). Every name from a profile is escaped.
 */
void actions_annotations(const struct gate_result *r, uint32_t max, struct pg_buf *out);

/*
 * Append name=value to the $GITHUB_OUTPUT file at path; a value holding a
 * line break is written as name<<DELIM ... DELIM with a random delimiter
 * that is no line of the value. 0, or PG_EIO with the message set.
 */
int actions_output(const char *path, const char *name, const char *value) PG_WUR;

/*
 * Append markdown to the $GITHUB_STEP_SUMMARY file at path, fitted (as
 * github_md_fit) so that the file stays under ACTIONS_SUMMARY_MAX_BYTES. 0,
 * or PG_EIO with the message set.
 */
int actions_step_summary(const char *path, const char *md, size_t len) PG_WUR;

/* ---- end of GitHub and the Actions runtime ---- */

/*
 * (kept apart so that the two halves can grow independently)
 */

/* ---- W&B publish (wandb.c) ---- */

/*
 * Publishing a summary back to W&B (../shared/docs/integrations.md §1.7): the
 * summary (and a report) logged as a new version of an artifact of type
 * profile_summary (option C), and with a run given, the headline numbers
 * merged into that run's summary as "profgate/<key>" (option A). Without a
 * run, a run of job type profile-summary-publish is made to log it from, as
 * marin's publisher does. Sends the key to WANDB_BASE_URL only.
 */

/* A headline number, or a string when text is set. */
struct wandb_metric {
	const char *key; /* "step_median_us" */
	double value;
	const char *text;
};

struct wandb_publish_opts {
	const char *summary_path; /* logged as "summary.json" */
	const char *report_path;  /* logged as "report.md", or NULL */
	const char *run;	  /* a W&B run ref to log to and write the numbers into, or NULL */
	const char *project; /* "ENTITY/PROJECT" when no run; NULL: WANDB_ENTITY/WANDB_PROJECT */
	const char *name;    /* the artifact (collection) name */
	const char *const *aliases; /* wanted besides "latest" */
	uint32_t n_aliases;
	const struct wandb_metric *metrics; /* the artifact's metadata and the run's summary keys */
	uint32_t n_metrics;
};

struct wandb_publish_result {
	char *artifact;	       /* "entity/project/name:vN" */
	char *run_path;	       /* the run it was logged from */
	int created_run;       /* 1: a publish run was made for it */
	int deduplicated;      /* W&B already held these files as a version: none was added */
	uint32_t summary_keys; /* keys merged into the run's summary (0 without a run) */
	uint32_t uploads;      /* files PUT to storage (the manifest included) */
};

/*
 * Publish. Returns 0, or PG_EUSAGE (a bad ref, project, alias or no key),
 * PG_EIO (a file that cannot be read), PG_ENOTFOUND (no such run) or
 * PG_EDELIVERY / PG_EFORMAT (W&B refused or failed after retries) with the
 * message set. out is always initialised (release it).
 */
int wandb_publish(struct wandb_publish_result *out, const struct wandb_publish_opts *o) PG_WUR;
void wandb_publish_result_release(struct wandb_publish_result *r);

/* ---- end of W&B publish ---- */

#endif
