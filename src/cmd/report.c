/*
 * profgate report: a summary as markdown a person reads top to bottom. Takes
 * what summarize takes (a profile file or folder, a W&B ref, '-'), summarizing
 * it first, or a summary (profgate's or marin's).
 */
#include "cmd.h"

#include <stdlib.h>
#include <string.h>

#include "../report/report.h"
#include "../summary/summary.h"

static const char *opt_out, *opt_capture, *opt_threads;

static const struct cmd_opt report_opts[] = {
    {"output", 'o', "FILE", "write the report here ('-', the default: standard output)", NULL,
     &opt_out, 0},
    CMD_OPTS_READ(&opt_capture, &opt_threads),
};

const struct cmd_spec cmd_report_spec = {
    "report", "INPUT",
    "Render a summary as a markdown report: step time, where the time goes per device,\n"
    "families, ops, collectives, gaps, regions, what to try next and quality warnings. INPUT\n"
    "is a summary (from 'profgate summarize'), or anything summarize takes (a profile file\n"
    "or directory, a W&B ref), summarized first; '-' reads standard input. Text from\n"
    "profiles is escaped.",
    report_opts, (int)PG_ARRAY_LEN(report_opts)};

int cmd_report(int argc, char **argv)
{
	const char **pos = pg_xcalloc((size_t)argc + 1, sizeof(char *));
	struct summary s;
	struct pg_buf out = PG_BUF_INIT;
	struct cmd_stdin in = {0};
	char sha[65];
	int n_pos, rc = PG_EXIT_OK, threads = 0;

	opt_out = opt_capture = opt_threads = NULL;
	summary_init(&s);
	if (cmd_parse_or_help(&cmd_report_spec, argc, argv, pos, &n_pos, NULL, &rc))
		goto out;
	if (n_pos != 1) {
		pg_error_set(PG_EUSAGE,
			     "report: give exactly one input (see 'profgate report --help')");
		rc = cmd_error(PG_EXIT_USAGE);
		goto out;
	}
	if (cmd_parse_threads("report", opt_threads, &threads) ||
	    cmd_check_outputs("report", &opt_out, 1, pos, 1, opt_capture)) {
		rc = cmd_error(PG_EXIT_USAGE);
		goto out;
	}
	if ((rc = cmd_stdin_take("report", pos, 1, &in)) != 0) {
		rc = cmd_error(rc == PG_EUSAGE ? PG_EXIT_USAGE : PG_EXIT_INPUT);
		goto out;
	}
	if ((rc = cmd_load_summary(pos[0], opt_capture, threads, &s, sha)) != PG_EXIT_OK)
		goto out;
	cmd_stdin_unname(&in, &s);
	report_summary_md(&s, &out);
	rc = cmd_write_output(opt_out, &out);
out:
	summary_release(&s);
	pg_buf_release(&out);
	cmd_stdin_release(&in);
	free(pos);
	return cmd_finish(rc);
}
