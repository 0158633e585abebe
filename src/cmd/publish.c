/*
 * profgate publish: put a summary (and its report) back into W&B as a
 * profile_summary artifact, and its headline numbers into the run's summary.
 */
#include "cmd.h"

#include <stdlib.h>
#include <string.h>

#include "../deliver/deliver.h"
#include "../source/source.h"
#include "../summary/summary.h"

#define MAX_ALIASES 16

static const char *opt_report, *opt_run, *opt_project, *opt_name, *opt_alias;
static const char *aliases[MAX_ALIASES];
static int n_aliases;

static const struct cmd_opt publish_opts[] = {
    {"report", 0, "FILE", "log this markdown report with the summary", NULL, &opt_report, 0},
    {"run", 0, "wandb://E/P/ID", "log to this run and write the numbers into its summary", NULL,
     &opt_run, 0},
    {"project", 0, "ENTITY/PROJECT", "without --run: where a publish run logs it", NULL,
     &opt_project, 0},
    {"name", 0, "NAME", "the artifact name (default: profile-summary-<run id>)", NULL, &opt_name,
     0},
    {"alias", 0, "ALIAS", "an alias besides latest (repeatable)", NULL, &opt_alias,
     CMD_OPT_REPEATS},
};

const struct cmd_spec cmd_publish_spec = {
    "publish", "SUMMARY",
    "Log a summary (and a report) to W&B as a new version of an artifact of type\n"
    "profile_summary with the aliases latest and --alias; with --run, from that run, and\n"
    "the headline numbers are merged into its summary as profgate/<key>. Needs\n"
    "WANDB_API_KEY; WANDB_BASE_URL for a self-hosted server.",
    publish_opts, (int)PG_ARRAY_LEN(publish_opts)};

/* --alias repeats: collect every value before the table parser keeps the last. */
static int collect_aliases(int argc, char **argv)
{
	n_aliases = 0;
	for (int i = 1; i < argc; i++) {
		const char *v = NULL;
		if (strcmp(argv[i], "--alias") == 0 && i + 1 < argc)
			v = argv[++i];
		else if (strncmp(argv[i], "--alias=", 8) == 0)
			v = argv[i] + 8;
		else if (strcmp(argv[i], "--") == 0)
			break;
		if (!v)
			continue;
		if (n_aliases == MAX_ALIASES)
			return pg_error_set(PG_EUSAGE, "publish: at most %d aliases", MAX_ALIASES);
		aliases[n_aliases++] = v;
	}
	return 0;
}

struct headline {
	struct wandb_metric m[20];
	uint32_t n;
	char sha[65], count[16];
};

static void num(struct headline *h, const char *key, double v)
{
	h->m[h->n++] = (struct wandb_metric){key, v, NULL};
}

static void text(struct headline *h, const char *key, const char *v)
{
	if (v)
		h->m[h->n++] = (struct wandb_metric){key, 0, v};
}

/* The numbers a run page shows: steady step, the time split, throughput. */
static void headline(struct headline *h, const struct summary *s)
{
	h->n = 0;
	text(h, "schema", SUMMARY_SCHEMA);
	text(h, "summary_sha256", h->sha);
	if (s->steady.count) {
		num(h, "step_median_us", s->steady.median_us);
		num(h, "step_p90_us", s->steady.p90_us);
		num(h, "step_mean_us", s->steady.mean_us);
	}
	num(h, "steady_steps", s->steady.count);
	if (s->mean.compute_share >= 0) { /* null: no device with a steady window */
		num(h, "compute_share", s->mean.compute_share);
		num(h, "exposed_comm_share", s->mean.exposed_comm_share);
		num(h, "exposed_memcpy_share", s->mean.exposed_memcpy_share);
		num(h, "idle_share", s->mean.idle_share);
	}
	if (s->has_flops)
		num(h, "tflops_per_device", s->tflops_per_device);
	text(h, "device_kind", s->device_kind);
	num(h, "device_count", s->device_count);
	text(h, "source_run", s->run.path);
	text(h, "source_artifact", s->run.artifact);
	text(h, "profgate_version", s->profgate_version);
}

/* profile-summary-<run id>: of --run, else of the run the summary came from. */
static char *default_name(const struct summary *s)
{
	struct wandb_ref ref;
	char name[200];
	const char *id = s->run.id;

	memset(&ref, 0, sizeof(ref));
	if (opt_run &&
	    wandb_ref_parse(&ref, opt_run, getenv("WANDB_ENTITY"), getenv("WANDB_PROJECT")) == 0)
		id = ref.name;
	pg_error_clear();
	snprintf(name, sizeof(name), "profile-summary%s%s", id ? "-" : "", id ? id : "");
	wandb_ref_release(&ref);
	return pg_xstrdup(name);
}

static void print_result(const struct wandb_publish_result *r)
{
	if (r->deduplicated)
		printf("publish: W&B already holds these files as %s; no new version\n",
		       r->artifact);
	else
		printf("publish: logged %s (%u upload%s) from run %s%s\n", r->artifact, r->uploads,
		       r->uploads == 1 ? "" : "s", r->run_path,
		       r->created_run ? " (made for it)" : "");
	if (r->summary_keys)
		printf("publish: wrote %u profgate/* keys into the summary of run %s\n",
		       r->summary_keys, r->run_path);
}

static int run_publish(const char *path)
{
	struct summary s;
	struct headline h;
	struct wandb_publish_result r;
	char *name = NULL;
	int rc;

	memset(&r, 0, sizeof(r));
	if (pg_sha256_file(path, h.sha) || summary_read_json(path, &s))
		return cmd_error(PG_EXIT_INPUT);
	headline(&h, &s);
	name = opt_name ? pg_xstrdup(opt_name) : default_name(&s);
	const struct wandb_publish_opts o = {
	    .summary_path = path,
	    .report_path = opt_report,
	    .run = opt_run,
	    .project = opt_project,
	    .name = name,
	    .aliases = aliases,
	    .n_aliases = (uint32_t)n_aliases,
	    .metrics = h.m,
	    .n_metrics = h.n,
	};
	rc = wandb_publish(&r, &o);
	if (rc == PG_EUSAGE)
		rc = cmd_error(PG_EXIT_USAGE);
	else if (rc == PG_EIO || rc == PG_ELIMIT)
		rc = cmd_error(PG_EXIT_INPUT);
	else if (rc)
		rc = cmd_error(PG_EXIT_DELIVERY);
	else
		print_result(&r);
	wandb_publish_result_release(&r);
	summary_release(&s);
	free(name);
	return rc;
}

int cmd_publish(int argc, char **argv)
{
	const char **pos = pg_xcalloc((size_t)argc + 1, sizeof(char *));
	int n_pos, rc = PG_EXIT_OK;

	opt_report = opt_run = opt_project = opt_name = opt_alias = NULL;
	if (cmd_parse_or_help(&cmd_publish_spec, argc, argv, pos, &n_pos, collect_aliases, &rc)) {
		free(pos);
		return cmd_finish(rc);
	}
	if (n_pos != 1) {
		pg_error_set(PG_EUSAGE,
			     "publish: give exactly one summary (see 'profgate publish --help')");
		rc = cmd_error(PG_EXIT_USAGE);
	} else {
		const char *inputs[2] = {pos[0], opt_report};
		struct cmd_stdin in = {0};
		rc = cmd_stdin_take("publish", inputs, opt_report ? 2 : 1, &in);
		if (rc)
			rc = cmd_error(rc == PG_EUSAGE ? PG_EXIT_USAGE : PG_EXIT_INPUT);
		else {
			opt_report = inputs[1];
			rc = run_publish(inputs[0]);
		}
		cmd_stdin_release(&in);
	}
	free(pos);
	return cmd_finish(rc);
}
