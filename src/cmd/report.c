/*
 * profgate report: a summary as markdown a person reads top to bottom.
 */
#include "cmd.h"

#include <stdlib.h>
#include <string.h>

#include "../report/report.h"
#include "../summary/summary.h"

static const char *opt_out;

static const struct cmd_opt report_opts[] = {
    {"output", 'o', "FILE", "write the report here (default: standard output)", NULL, &opt_out, 0},
};

const struct cmd_spec cmd_report_spec = {
    "report", "SUMMARY",
    "Render a summary (from 'profgate summarize') as a markdown report: step time, where\n"
    "the time goes per device, families, ops, collectives, gaps, regions, what to try next\n"
    "and quality warnings. Text from profiles is escaped.",
    report_opts, (int)PG_ARRAY_LEN(report_opts)};

int cmd_report(int argc, char **argv)
{
	const char **pos = pg_xcalloc((size_t)argc + 1, sizeof(char *));
	struct summary s;
	struct pg_buf out = PG_BUF_INIT;
	int n_pos, rc = PG_EXIT_OK;

	opt_out = NULL;
	if (cmd_parse_or_help(&cmd_report_spec, argc, argv, pos, &n_pos, NULL, &rc)) {
		free(pos);
		return cmd_finish(rc);
	}
	if (n_pos != 1) {
		free(pos);
		pg_error_set(PG_EUSAGE,
			     "report: give exactly one summary (see 'profgate report --help')");
		return cmd_error(PG_EXIT_USAGE);
	}
	if (summary_read_json(pos[0], &s)) {
		free(pos);
		return cmd_error(PG_EXIT_INPUT);
	}
	report_summary_md(&s, &out);
	summary_release(&s);
	rc = cmd_write_output(opt_out, &out);
	pg_buf_release(&out);
	free(pos);
	return cmd_finish(rc);
}
