/*
 * profgate merge: summaries of the hosts or ranks of one capture, made where
 * the profiles are (a Slurm array, a CI matrix), combined into one — the same
 * result as summarizing all files at once.
 */
#include "cmd.h"

#include <stdlib.h>
#include <string.h>

#include "../summary/summary.h"

static const char *opt_out;
static int opt_allow_mixed;

static const struct cmd_opt merge_opts[] = {
    {"output", 'o', "FILE", "write the merged summary here ('-', the default: standard output)",
     NULL, &opt_out, 0},
    {"allow-mixed", 0, NULL, "join summaries of different device models or frameworks",
     &opt_allow_mixed, NULL, 0},
};

const struct cmd_spec cmd_merge_spec = {
    "merge", "SUMMARY...",
    "Combine summaries of the hosts or ranks of one capture (from 'profgate summarize') into\n"
    "one summary with every device: steps joined by number, totals added, statistics\n"
    "recomputed. Give them in the order summarize would read the files (by path); '-' reads\n"
    "one from standard input.",
    merge_opts, (int)PG_ARRAY_LEN(merge_opts)};

int cmd_merge(int argc, char **argv)
{
	const char **pos = pg_xcalloc((size_t)argc + 1, sizeof(char *));
	struct summary *in = NULL, out;
	struct pg_buf buf = PG_BUF_INIT;
	struct cmd_stdin sin = {0};
	int n_pos, rc = PG_EXIT_OK, n_read = 0;

	opt_out = NULL;
	opt_allow_mixed = 0;
	if (cmd_parse_or_help(&cmd_merge_spec, argc, argv, pos, &n_pos, NULL, &rc)) {
		free(pos);
		return cmd_finish(rc);
	}
	if (n_pos == 0) {
		free(pos);
		pg_error_set(PG_EUSAGE, "merge: no summaries given (see 'profgate merge --help')");
		return cmd_error(PG_EXIT_USAGE);
	}
	if (cmd_check_outputs("merge", &opt_out, 1, pos, n_pos, NULL)) {
		free(pos);
		return cmd_error(PG_EXIT_USAGE);
	}
	if ((rc = cmd_stdin_take("merge", pos, n_pos, &sin)) != 0) {
		rc = cmd_error(rc == PG_EUSAGE ? PG_EXIT_USAGE : PG_EXIT_INPUT);
		goto out;
	}
	in = pg_xcalloc((size_t)n_pos, sizeof(*in));
	for (; n_read < n_pos; n_read++)
		if (summary_read_json(pos[n_read], &in[n_read])) {
			rc = cmd_error(PG_EXIT_INPUT);
			goto out;
		}
	if (summary_merge_named(&out, in, (uint32_t)n_pos, pos, opt_allow_mixed)) {
		rc = cmd_error(PG_EXIT_USAGE);
		summary_release(&out);
		goto out;
	}
	cmd_stdin_unname(&sin, &out);
	summary_write_json(&out, &buf);
	summary_release(&out);
	rc = cmd_write_output(opt_out, &buf);
out:
	for (int i = 0; i < n_read; i++)
		summary_release(&in[i]);
	free(in);
	pg_buf_release(&buf);
	cmd_stdin_release(&sin);
	free(pos);
	return cmd_finish(rc);
}
