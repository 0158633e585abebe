/*
 * profgate: a performance regression gate and tracker for ML training
 * profiles. main() dispatches to one function per subcommand.
 */
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"

static const struct cmd_command commands[] = {
    {"inspect", cmd_inspect, "show what profile files hold: format, devices, tracks, steps",
     &cmd_inspect_spec, NULL},
    {"summarize", cmd_summarize, "reduce profiles to one summary JSON (profgate.summary/1)",
     &cmd_summarize_spec, NULL},
    {"merge", cmd_merge, "combine per-host or per-rank summaries into one", &cmd_merge_spec, NULL},
    {"report", cmd_report, "render a summary as a markdown report", &cmd_report_spec, NULL},
    {"query", cmd_query, "answer one question about a summary: top ops, split, gaps, next",
     &cmd_query_spec, NULL},
    {"compare", cmd_compare, "compare a candidate against a baseline: deltas, attribution",
     &cmd_compare_spec, NULL},
    {"gate", cmd_gate, "pass, warn or fail a candidate against a baseline by thresholds",
     &cmd_gate_spec, NULL},
    {"fetch", cmd_fetch, "download a W&B run's or artifact's profile into the cache or a folder",
     &cmd_fetch_spec, NULL},
    {"publish", cmd_publish, "log a summary to W&B as an artifact; its numbers into the run",
     &cmd_publish_spec, NULL},
    {"history", cmd_history, "gate results on a git branch: append, show, baseline, trend", NULL,
     cmd_history_commands},
    {"comment", cmd_comment, "post a gate report as the pull request's sticky comment",
     &cmd_comment_spec, NULL},
    {"action", cmd_action, "the GitHub Action's entrypoint: inputs from INPUT_*, the whole job",
     NULL, NULL},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: profgate <command> [options]\n"
		     "       profgate --version\n\n"
		     "commands:\n");
	for (size_t i = 0; i < PG_ARRAY_LEN(commands); i++)
		fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'profgate <command> --help' describes a command.\n");
}

/* The environment variables that hold secrets (docs/robustness.md "Secrets"); the
 * action's inputs arrive as INPUT_<NAME>. */
static const char *const secret_envs[] = {
    "GITHUB_TOKEN",  "PROFGATE_GITHUB_TOKEN", "PROFGATE_GIT_TOKEN",
    "WANDB_API_KEY", "INPUT_GITHUB_TOKEN",    "INPUT_WANDB_API_KEY",
};

int main(int argc, char **argv)
{
	/* A file that may not grow (a full quota, ulimit -f) is a write error
	 * each writer reports, not a signal that kills profgate mid-way. */
	signal(SIGXFSZ, SIG_IGN);
	/* An interrupted command leaves no spool or temporary file behind. */
	pg_cleanup_install();
	/* Every secret profgate may be handed, known before any message is made. */
	for (size_t i = 0; i < PG_ARRAY_LEN(secret_envs); i++)
		pg_secret_add(getenv(secret_envs[i]));
	if (argc < 2) {
		usage(stderr);
		return PG_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		if (argc > 2 && strcmp(argv[1], "help") == 0) {
			for (size_t i = 0; i < PG_ARRAY_LEN(commands); i++)
				if (strcmp(commands[i].name, argv[2]) == 0) {
					char *args[] = {argv[2], "--help", NULL};
					return commands[i].fn(2, args);
				}
		}
		usage(stdout);
		return cmd_finish(PG_EXIT_OK);
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		printf("profgate %s\n", PG_VERSION);
		return cmd_finish(PG_EXIT_OK);
	}
	for (size_t i = 0; i < PG_ARRAY_LEN(commands); i++)
		if (strcmp(commands[i].name, argv[1]) == 0)
			return commands[i].fn(argc - 1, argv + 1);
	/* hidden: generated from the tables above at `make install` */
	if (strcmp(argv[1], "completion") == 0)
		return cmd_completion(argc - 1, argv + 1, commands, PG_ARRAY_LEN(commands));
	if (strcmp(argv[1], "man") == 0)
		return cmd_man(argc - 1, argv + 1, commands, PG_ARRAY_LEN(commands));
	fprintf(stderr, "profgate: unknown command '%s' (see 'profgate --help')\n", argv[1]);
	return PG_EXIT_USAGE;
}
