/*
 * profgate history compact: move the closed months of each series to the
 * series' own ref and fold the branch into one root commit holding the open
 * month, the old commits kept on an archive branch, so that a fresh fetch
 * costs the open month and the series asked for rather than every version of
 * every shard (src/history/store.c, "The tip and its cost"). Safe while jobs
 * append: the branch moves with a lease, and appenders rebuild on the new tip.
 * Prints and picks exit codes.
 */
#include "cmd.h"

#include <stdlib.h>
#include <string.h>

#include "../history/history.h"

static const char *opt_repo, *opt_branch;

static const struct cmd_opt compact_opts[] = {
    {"repo", 0, "URL_OR_PATH", "the history remote: a bare repository path, file:// or https://",
     NULL, &opt_repo, CMD_OPT_REQUIRED},
    {"branch", 0, "B", "the history branch (default: profgate-history)", NULL, &opt_branch, 0},
};

const struct cmd_spec cmd_history_compact_spec = {
    "history compact", "",
    "Move the months before the newest one to one ref per series\n"
    "(refs/profgate/series/<branch>@/<series>) and fold the history branch into one root\n"
    "commit holding the newest month, the old commits kept on the branch\n"
    "<branch>-archive/<day>-<commit>. The branch moves only if no record landed meanwhile (else\n"
    "it compacts again), and the records on their own refs are folded in, so no record is\n"
    "lost. Writers compact by themselves when it is due; this runs it by hand. Exit 5 when the\n"
    "remote refused or could not be reached.",
    compact_opts, (int)PG_ARRAY_LEN(compact_opts)};

int cmd_history_compact(int argc, char **argv)
{
	const char **pos = pg_xcalloc((size_t)argc + 1, sizeof(char *));
	struct history_store_opts o;
	struct history_compact_result res;
	const char *b;
	int n_pos, rc;

	memset(&res, 0, sizeof(res));
	opt_repo = opt_branch = NULL;
	if (cmd_parse_or_help(&cmd_history_compact_spec, argc, argv, pos, &n_pos, NULL, &rc))
		goto out;
	if (n_pos != 0 || !opt_repo) {
		pg_error_set(PG_EUSAGE, "history compact: give --repo URL_OR_PATH (see 'profgate "
					"history compact --help')");
		rc = cmd_error(PG_EXIT_USAGE);
		goto out;
	}
	b = opt_branch ? opt_branch : HISTORY_DEFAULT_BRANCH;
	cmd_history_store_opts(&o, opt_repo, opt_branch);
	if ((rc = history_compact(&o, &res))) {
		/* as for an append: not done, whatever the cause (the remote, the
		 * network, the cache folder), is a delivery failure */
		rc = cmd_error(rc == PG_EUSAGE || rc == PG_ENOMEM ? pg_exit_code(rc)
								  : PG_EXIT_DELIVERY);
		goto out;
	}
	if (!res.exists)
		printf("history compact: no branch '%s' at '%s' yet: nothing to compact\n", b,
		       opt_repo);
	else if (!res.compacted)
		printf("history compact: %s is one commit already\n", b);
	else if (res.archive)
		printf("history compact: %s: %u commits into one (commit %.7s, %u attempt%s); the "
		       "old history is on %s\n",
		       b, res.commits, res.commit, res.attempts, res.attempts == 1 ? "" : "s",
		       res.archive);
	else
		printf("history compact: %s: one commit already, made anew (commit %.7s, %u "
		       "attempt%s)\n",
		       b, res.commit, res.attempts, res.attempts == 1 ? "" : "s");
	if (res.compacted && res.folded)
		printf("history compact: %u record%s folded in from their own refs\n", res.folded,
		       res.folded == 1 ? "" : "s");
	if (res.compacted && res.shards)
		printf("history compact: %u month shard%s of %u series before %s moved to "
		       "refs/profgate/series/%s@/<series>\n",
		       res.shards, res.shards == 1 ? "" : "s", res.series, res.open, b);
	rc = PG_EXIT_OK;
out:
	free(res.archive);
	free(pos);
	return rc;
}
