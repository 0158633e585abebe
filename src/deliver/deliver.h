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
