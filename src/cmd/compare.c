/*
 * profgate compare: two profiles or summaries side by side, for an engineer
 * at a terminal. Prints the verdict lines `gate` prints; writes the verdict
 * JSON with --json (or its older spelling -o/--output) and the markdown with
 * --report. Unlike runs are refused (exit 4, the reason on stderr) but a
 * regression is reported, not failed: exit 0. `gate` is the command that
 * fails.
 */
#include "cmd.h"

#include <stdlib.h>
#include <string.h>

static const char *opt_json, *opt_out, *opt_thresholds, *opt_report, *opt_label, *opt_threads;
static const char *opt_baselines[CMD_OPT_COLLECT_MAX + 1], *opt_candidates[CMD_OPT_COLLECT_MAX + 1];

static const struct cmd_opt compare_opts[] = {
    {"json", 0, "FILE", "write the verdict JSON here ('-': standard output, instead of the lines)",
     NULL, &opt_json, 0},
    {"output", 'o', "FILE", "the same as --json (kept for scripts)", NULL, &opt_out, CMD_OPT_OR},
    {"thresholds", 't', "NAME|FILE",
     "a shipped set (default, strict, nightly) or a thresholds file (default: default)", NULL,
     &opt_thresholds, 0},
    {"report", 'r', "FILE", "also write the markdown report here", NULL, &opt_report, 0},
    {"label", 'l', "NAME", "a name for this comparison", NULL, &opt_label, 0},
    {"threads", 'j', "N", "read profiles on N threads (default: the number of cores)", NULL,
     &opt_threads, 0},
    {"baseline", 'b', "B", "a baseline run, instead of BASELINE; several runs: repeat it", NULL,
     opt_baselines, CMD_OPT_REPEATS | CMD_OPT_COLLECT},
    {"candidate", 'c', "C", "a candidate run, instead of CANDIDATE; several runs: repeat it", NULL,
     opt_candidates, CMD_OPT_REPEATS | CMD_OPT_COLLECT},
};

const struct cmd_spec cmd_compare_spec = {
    "compare", "BASELINE CANDIDATE",
    "Compare a candidate against a baseline (summaries, or profiles or W&B refs summarized\n"
    "on the fly, '-' for standard input) and print the verdict lines 'profgate gate' prints;\n"
    "--json writes every metric with its delta, limit and verdict, the attribution, provenance\n"
    "and quality warnings as profgate.verdict/1 JSON. Exit 4 when the runs are not comparable\n"
    "(the reason on stderr); a regression still exits 0 (use 'profgate gate' to fail on it).",
    compare_opts, (int)PG_ARRAY_LEN(compare_opts)};

int cmd_compare(int argc, char **argv)
{
	const char **pos = pg_xcalloc((size_t)argc + 1, sizeof(char *));
	struct cmd_gate_job job;
	int n_pos, threads = 0, rc;

	opt_json = opt_out = opt_thresholds = opt_report = opt_label = opt_threads = NULL;
	if (cmd_parse_or_help(&cmd_compare_spec, argc, argv, pos, &n_pos, NULL, &rc)) {
		free(pos);
		return cmd_finish(rc);
	}
	memset(&job, 0, sizeof(job));
	while (opt_baselines[job.n_baselines])
		job.n_baselines++;
	while (opt_candidates[job.n_candidates])
		job.n_candidates++;
	if (job.n_baselines || job.n_candidates) {
		pos[n_pos++] = opt_baselines[0];
		pos[n_pos++] = opt_candidates[0];
	}
	if (n_pos != 2 || (job.n_baselines && !job.n_candidates) ||
	    (!job.n_baselines && job.n_candidates)) {
		free(pos);
		pg_error_set(PG_EUSAGE, "compare: give BASELINE and CANDIDATE, or --baseline and "
					"--candidate runs (see 'profgate compare --help')");
		return cmd_error(PG_EXIT_USAGE);
	}
	if (cmd_parse_threads("compare", opt_threads, &threads)) {
		free(pos);
		return cmd_error(PG_EXIT_USAGE);
	}
	job.baselines = opt_baselines;
	job.candidates = opt_candidates;
	job.cmd = "compare";
	job.baseline = pos[0];
	job.candidate = pos[1];
	job.thresholds = opt_thresholds;
	job.label = opt_label;
	if (opt_json && opt_out) {
		free(pos);
		pg_error_set(PG_EUSAGE,
			     "compare: give --json or its older spelling --output, not both");
		return cmd_error(PG_EXIT_USAGE);
	}
	job.json_out = opt_json ? opt_json : opt_out;
	job.report_out = opt_report;
	job.threads = threads;
	job.verdict_exit = 0;
	job.quiet = (job.json_out && strcmp(job.json_out, "-") == 0) ||
		    (opt_report && strcmp(opt_report, "-") == 0);
	rc = cmd_gate_run(&job);
	free(pos);
	return cmd_finish(rc);
}
