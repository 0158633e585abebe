/*
 * cmd: one file per subcommand, each exporting `int cmd_<name>(int argc, char
 * **argv)` that parses its options, calls one module function, prints, and
 * returns an exit code (enum pg_exit). Modules never print.
 *
 * Adding a command:
 *   1. write src/cmd/<name>.c with its option table and cmd_<name>();
 *   2. add it to the table in src/main.c (name, function, one-line summary);
 *   3. document it in docs/cli.md, headed ("## ") by its usage line (that of
 *      `profgate <name> --help`, on one line): tests/e2e/cli.sh compares them.
 */
#ifndef PG_CMD_H
#define PG_CMD_H

#include "../util/util.h"

#ifndef PG_VERSION
#define PG_VERSION "0.0.0-dev"
#endif

/*
 * An option table is the one place an option is declared: cmd_parse accepts
 * what it lists and cmd_usage writes both the usage line and the option list
 * from it, so --help shows exactly what is accepted. The usage line names
 * every option by its long name; the flags say what it shows beyond
 * "[--name ARG]". They do not change parsing (the command checks what it
 * requires).
 */
enum cmd_opt_flags {
	CMD_OPT_REQUIRED = 1, /* "--name ARG", not "[--name ARG]" */
	CMD_OPT_REPEATS = 2,  /* "[--name ARG]...": may be given more than once */
	CMD_OPT_OR = 4,	      /* an alternative to the option before: "[--a A | --b B]";
				 a required first option gives "(--a A | --b B)" */
	CMD_OPT_UNDER = 8,    /* only with the nearest option before without this flag:
				 "[--a A [--b B]]" */
	CMD_OPT_COLLECT = 16, /* value points to CMD_OPT_COLLECT_MAX + 1 pointers: every value
				 given, in order, then NULL (give CMD_OPT_REPEATS too) */
};
#define CMD_OPT_COLLECT_MAX 64

struct cmd_opt {
	const char *name; /* long name without dashes */
	char short_name;  /* 0 for none */
	const char *arg;  /* NULL for a flag, else the placeholder shown in help */
	const char *help;
	int *flag;	    /* set to 1 when given (flags) */
	const char **value; /* set to the argument (options with an argument) */
	unsigned flags;	    /* enum cmd_opt_flags */
};

/* --capture NAME and -j/--threads N of a command that reads profile files and
 * directories (cmd_read_inputs), into the two strings given. */
/* clang-format off */
#define CMD_OPTS_READ(capture, threads)                                                            \
	{"capture", 0, "NAME", "in a profile directory, read this capture, not the newest", NULL,  \
	 capture, 0},                                                                              \
	{"threads", 'j', "N", "read files on N threads (default: the number of cores)", NULL,      \
	 threads, 0}
/* clang-format on */

struct cmd_spec {
	const char *name;
	const char *args;    /* the positional arguments: "INPUT...", "" for none */
	const char *summary; /* a paragraph */
	const struct cmd_opt *opts;
	int n_opts;
};

/*
 * Parse argv against spec. Non-option arguments are collected into pos (an
 * array of argc pointers, owned by the caller). Handles --help / -h by
 * printing usage and setting *help. Returns 0 or PG_EUSAGE with the message
 * set.
 */
int cmd_parse(const struct cmd_spec *spec, int argc, char **argv, const char **pos, int *n_pos,
	      int *help);
/* The start of every command: cmd_parse, then check (NULL: none; the options
 * a command collects itself from argv, 0 or PG_EUSAGE with the message set),
 * then --help. Returns 1 when the command is done, with *exit_code set: 2
 * with the error line written, or 0 with the usage on stdout (the caller's
 * cmd_finish checks that it got there); 0 to go on. */
int cmd_parse_or_help(const struct cmd_spec *spec, int argc, char **argv, const char **pos,
		      int *n_pos, int (*check)(int argc, char **argv), int *exit_code);
/* The usage line ("usage: profgate NAME ARGS [--opt ARG]...", wrapped), the
 * summary and the option list. */
void cmd_usage(const struct cmd_spec *spec, FILE *out);
/* Print "profgate: <msg>" for the last error and return code. */
int cmd_error(int code);
/* Flush stdout and check it; a failed write turns success into an error. */
int cmd_finish(int code);
/* A command's output: to the file path (replaced whole), or to standard output
 * for NULL or "-". PG_EXIT_OK, or PG_EXIT_INPUT with the error line written. */
int cmd_write_output(const char *path, const struct pg_buf *b);

/* ---- the terminal (term.c): colour and progress ---- */
enum term_style { TERM_RESET, TERM_BAD, TERM_WARN, TERM_GOOD, TERM_DIM, TERM_BOLD };
/* 1 when f gets colour: a terminal, NO_COLOR unset or empty, TERM not dumb. */
int term_color(FILE *f);
/* The SGR code of s for f, "" when f gets no colour. */
const char *term_sgr(FILE *f, enum term_style s);
/* A verdict's style: fail red, warn and inconclusive yellow, the rest green. */
enum term_style term_verdict_style(const char *verdict);
/* -q/--quiet (every command, cmd_parse): no progress line. */
void term_set_quiet(int q);
/* A phase of work that may take a while: after about two seconds a progress
 * line on stderr (a terminal only) names it with the files and events of p
 * (NULL: events alone), until term_progress_end() wipes it. One at a time. */
struct trace_progress;
void term_progress_begin(const char *phase, const struct trace_progress *p, uint32_t n_files,
			 uint64_t events);
void term_progress_end(void);

struct summary;
/* ---- inputs and outputs (io.c) ---- */

/* Standard input given as "-", kept in a temporary file while the command
 * runs. */
struct cmd_stdin {
	char *path;		 /* the spool; NULL when no input is "-" */
	int slot_file, slot_dir; /* their pg_cleanup slots */
};
/* The one "-" among inputs (at most one: else PG_EUSAGE) replaced by the
 * spool of standard input. 0, or PG_EUSAGE / PG_EIO with the message set;
 * cmd_stdin_release in either case. */
int cmd_stdin_take(const char *cmd, const char **inputs, int n, struct cmd_stdin *in);
/* A summary made of the spool names its file "-". */
void cmd_stdin_unname(const struct cmd_stdin *in, struct summary *s);
struct trace;
/* A trace read of the spool (inspect) names its file "-". */
void cmd_stdin_unname_trace(const struct cmd_stdin *in, struct trace *t);
void cmd_stdin_release(struct cmd_stdin *in);
/*
 * Before anything is read or written: 0 when no two outputs are one place
 * (their folders resolved; "-" twice is standard output twice) and no output
 * (NULL and "-" are none) is an input file (same device and inode) or a file
 * a folder input would read (resolved with capture); else PG_EUSAGE with the
 * one-line message set, which names the outputs or the output and the input.
 */
int cmd_check_outputs(const char *cmd, const char *const *outputs, int n_out,
		      const char *const *inputs, int n_in, const char *capture);
struct source_set;
/* One stderr note per profgate output a folder held and the read left out. */
void cmd_note_own_outputs(const struct source_set *src);

/* -j/--threads: NULL gives the number of cores. 0, or PG_EUSAGE with the message set. */
int cmd_parse_threads(const char *cmd, const char *text, int *out);

struct source_set;
struct trace;
struct summary;
struct analyze_options;
/*
 * Resolve inputs (files, profile directories) and read them on `threads`
 * threads into t. src and t are always initialised here and the caller
 * releases both. Every unreadable file gets its one line on stderr; returns
 * PG_EXIT_OK or PG_EXIT_INPUT. for_summary: the trace is read to be
 * summarized (cmd_trace_for_summary), not listed whole.
 */
int cmd_read_inputs(struct source_set *src, struct trace *t, const char *const *inputs, int n,
		    const char *capture, int threads, int for_summary);
/* A trace read to be summarized: every file hashed for source.files[].sha256,
 * and host-thread events decoded only where they may be step markers. */
void cmd_trace_for_summary(struct trace *t);
/* Summarize such a trace into s (initialised by the caller): the analysis
 * overlaps the digests still running, which then fill source.files[].sha256.
 * Returns PG_EXIT_OK, or PG_EXIT_INPUT with the error printed. */
int cmd_summarize_trace(struct trace *t, const struct analyze_options *ao, struct summary *s);

/*
 * What W&B inputs add to a summary made from them: file paths shown as
 * "wandb-artifact://entity/project/name:vN/<path>" instead of the cache's
 * folder, and identity.run (and the device kind when the trace names none)
 * when every W&B input names the same run; the step's tokens, samples and
 * model FLOPs a run's config declares, and the rates that follow.
 */
void cmd_apply_origins(const struct source_set *src, struct summary *s);

/*
 * One side of a comparison: a summary JSON (profgate's or marin's) is read, a
 * profile file or directory or W&B ref is read and summarized on the fly (a
 * W&B artifact that holds one summary is read as one). s is always
 * initialised (summary_release it); sha gets the sha256 of a regular file's
 * bytes, or "" for a directory. Errors are printed; returns an exit code.
 */
int cmd_load_summary(const char *path, const char *capture, int threads, struct summary *s,
		     char sha[65]);

struct history_env;
/* What a gate run decided, for the steps after it (`action`): filled once
 * the verdict is out, else left as it was. */
struct gate_result;
struct cmd_gate_outcome {
	const char *verdict;	 /* its name; NULL: the run stopped before a verdict */
	uint32_t n_fail, n_warn; /* metrics that failed, warned */
};
/* What compare and gate share: load both sides and the thresholds, compare,
 * write the verdict JSON and the report, print the verdict. */
struct cmd_gate_job {
	const char *cmd; /* "compare" or "gate", for messages */
	const char *baseline, *candidate, *thresholds, *label;
	/* several runs a side (gate --baseline B1 --baseline B2 ...): every one,
	 * baseline and candidate being the first; NULL: the one given */
	const char *const *baselines, *const *candidates;
	uint32_t n_baselines, n_candidates;
	const char *json_out;	/* NULL: none; "-": standard output */
	const char *report_out; /* NULL: none; "-": standard output */
	int threads;
	int verdict_exit;    /* 1: exit by the verdict (gate); 0: only 4 for incomparable */
	const char *fail_on; /* with verdict_exit: cmd_fail_on_exit's; NULL: "fail" */
	int quiet;	     /* no verdict lines on stdout (the JSON goes there) */
	/* gate --history: append the result's record after the verdict */
	const char *history, *history_branch; /* remote, branch (NULL: the default) */
	const char *kind;		      /* the record's kind; NULL: from the environment */
	int history_required;		      /* a failed push exits 5, else only warns */
	const char *history_pending;	      /* where a record not pushed is kept; NULL: cache */
	/* --baseline history:<branch>[:N]: the window baseline read from history */
	int baseline_history;
	char *baseline_ref; /* "refs/heads/<branch>"; NULL for "*" (any) */
	uint32_t baseline_n;
	/* where the history is read (a window baseline, the noise runs) without
	 * appending; NULL: history's remote */
	const char *history_from;
	const struct history_env *history_env; /* the record's CI facts; NULL: from GITHUB_* */
	/* where the history's dashboard is published: the report's chart of the
	 * series' recent records links its page there; NULL: no link */
	const char *dashboard_url;
	/* for `action`: both sides' summaries written here (NULL: not), a copy
	 * of the report kept (NULL: not), and on_result called with the result
	 * before it is released (NULL: not); with runs_out, every run given as
	 * a file besides, as runs_out/baseline.run-NN.summary.json and
	 * candidate.run-NN... (NN from 01), so a second workflow judges the same
	 * runs */
	const char *baseline_summary_out, *candidate_summary_out, *runs_out;
	struct pg_buf *keep_md;
	void (*on_result)(const struct gate_result *r, void *ctx);
	void *on_result_ctx;
	struct cmd_gate_outcome *outcome; /* NULL: not wanted */
};
int cmd_gate_run(const struct cmd_gate_job *job);
/* The remote job reads its history from: history_from, else history; NULL: none. */
static inline const char *cmd_gate_history_read(const struct cmd_gate_job *job)
{
	return job->history_from ? job->history_from : job->history;
}

/* The report's chart of the series' recent records and this run, with the
 * link to the series' dashboard page (gate_chart.c): added to md when job has
 * a history holding main or nightly records of series, else nothing. */
void cmd_gate_recent_chart(const struct cmd_gate_job *job, const char *series,
			   const struct gate_result *r, struct pg_buf *md);

struct history_record;
/*
 * Append r to the history branch (NULL: the default) of remote with the token
 * from PROFGATE_GIT_TOKEN or GITHUB_TOKEN; retries go to stderr. On success a
 * line on stdout says where it landed (after indent; none when indent is
 * NULL), and the pending records found are delivered too. A failed push
 * keeps the exact record in pending_dir (NULL: the cache's pending folder)
 * and prints one line saying so, as a warning when warn_only. Returns
 * PG_EXIT_OK, PG_EXIT_DELIVERY, PG_EXIT_USAGE or PG_EXIT_INPUT (a record over
 * the size limit: nothing sent, nothing kept).
 */
int cmd_history_deliver(const struct history_record *r, const char *remote, const char *branch,
			const char *pending_dir, const char *indent, int warn_only);

struct history_store_opts;
/* Store options for remote and branch (NULL: the default) with the token from
 * the environment; retries and corrupt lines go to stderr. */
void cmd_history_store_opts(struct history_store_opts *o, const char *remote, const char *branch);

struct gate_thresholds;
/* ---- thresholds and fail-on (thresholds.c) ---- */
/* A --thresholds value: NULL or "default" gives *path NULL (the built-in
 * set); a shipped set's name (strict, nightly: thresholds/ as installed) its
 * file; a path itself. 0, or PG_EUSAGE with a message listing the known
 * names. *path is malloc'd. */
int cmd_resolve_thresholds(const char *cmd, const char *value, char **path);
/* The thresholds a --thresholds value names (cmd_resolve_thresholds). th is
 * always initialised (release it); 0 or PG_EUSAGE with the message set. */
int cmd_load_thresholds(const char *cmd, const char *value, struct gate_thresholds *th);
/* fail_on (gate --fail-on, the Action's fail_on): "fail", "warn" or "never";
 * 0 when it is one, else -1. */
int cmd_fail_on_check(const char *fail_on);
/* The exit for a verdict (its name) under fail_on (NULL: "fail"): fail 1 and
 * incomparable 4; with "warn" also warn and inconclusive 1; "never" 0. */
int cmd_fail_on_exit(const char *fail_on, const char *verdict);

/* "history:<branch>[:N]" (gate --baseline): 1 when spec is one, with *ref
 * ("refs/heads/<branch>", to free; NULL for "*") and *n set; 0 when it is
 * not; PG_EUSAGE (negative) with the message set when it is malformed. */
int cmd_history_spec(const char *spec, char **ref, uint32_t *n);
/* The baseline runs of job (baselines, else baseline alone): sets
 * baseline_history, and baseline_ref and baseline_n from cmd_history_spec. A
 * history window is a set of runs itself, so it must be the only baseline.
 * what names the baseline in messages ("gate: --baseline"). 0, or PG_EUSAGE
 * (negative) with the message set and nothing to free. */
int cmd_gate_baseline_runs(struct cmd_gate_job *job, const char *what);
/*
 * The window baseline of gate --baseline history:...: reads the history of
 * job, picks the window of the candidate's series (label and identity of
 * cand) and synthesizes the baseline summary into b (always initialised),
 * the window's JSON into window_json and a line describing it into note,
 * and each record as a run of its own into *runs (*n_runs of them, to
 * summary_release and free). kind and ref: the record this run appends to
 * that history (NULL kind: none); when it would enter the window, an empty
 * window is no error: PG_EXIT_OK with *n_runs 0, b empty, the empty window's
 * JSON and why it is empty in note; so is a window of fewer records than the
 * step's min_samples (it is filling: nothing can be judged yet), with *filling
 * set, the window's JSON and why in note.
 * Errors are printed; returns an exit code (3 for an empty window or an
 * unreadable history).
 */
int cmd_history_window_baseline(const struct cmd_gate_job *job, const struct gate_thresholds *th,
				const struct summary *cand, const char *kind, const char *ref,
				struct summary *b, struct pg_buf *window_json, struct pg_buf *note,
				struct summary **runs, uint32_t *n_runs, int *filling);
/* "main,nightly" into kinds (room for CMD_HISTORY_KINDS + 1; NULL-terminated,
 * pointing into text, which is cut at the commas). 0 or PG_EUSAGE. */
#define CMD_HISTORY_KINDS 4
/* The records of the candidate's series that give the gate its noise when
 * neither side has GATE_NOISE_MIN_RUNS runs. */
#define CMD_NOISE_RECORDS 10
/*
 * The candidate series' last CMD_NOISE_RECORDS records in the gate's history,
 * as runs for the noise model: 1 with *runs (n_runs summaries, the caller's
 * to release) when there are at least GATE_NOISE_MIN_RUNS, else 0 and
 * nothing (no history yet, or unreadable: the noise falls back to the
 * prior, and the append after the verdict reports a broken remote).
 */
int cmd_history_noise_runs(const struct cmd_gate_job *job, const struct gate_thresholds *th,
			   const struct summary *cand, struct summary **runs, uint32_t *n_runs);
int cmd_history_kinds(char *text, const char **kinds);
struct history_filter;
struct history_list;
/*
 * history_read() of f for a command (what names it in messages), with
 * f->series as a user names it (src/cmd/history_read.c): a series' name, its
 * gate label or a unique prefix of its name. When the name is not a series'
 * name, f->series is set to the one it means (*series_out, to free; NULL
 * otherwise). 0, a read's error, PG_EUSAGE for a name that means several
 * series, PG_ENOTFOUND for one that means none (the message lists the
 * nearest).
 */
int cmd_history_read(const char *what, const struct history_store_opts *o, struct history_filter *f,
		     struct history_list *l, int *exists, char **series_out);
/*
 * The kinds a read used and skipped, of l's records (of series; NULL: all):
 * with_used, "used 4 nightly records, 1 main record" (or "used no main or
 * nightly records"); then, when records of other kinds exist, "; skipped 3
 * manual records (HINT)", HINT being hint or, for NULL, "--kind K,K to include
 * them". Returns the records skipped.
 */
uint32_t cmd_history_kinds_note(const struct history_list *l, const char *series,
				const char *const *kinds, int with_used, const char *hint,
				struct pg_buf *out);
int cmd_history_baseline(int argc, char **argv);
int cmd_history_trend(int argc, char **argv);
int cmd_history_compact(int argc, char **argv);
int cmd_history_dashboard(int argc, char **argv);
/* The GitHub token of the environment: PROFGATE_GITHUB_TOKEN, else
 * GITHUB_TOKEN; NULL when neither is set. */
const char *cmd_github_token(void);

/* What `comment`, `gate --comment` and `action` share: post or update the
 * sticky comment of a report (which ends with its marker). */
struct cmd_comment_job {
	const char *md; /* the report */
	size_t md_len;
	const char *origin; /* names the report in messages */
	int64_t pr;
	const char *repo;     /* NULL: GITHUB_REPOSITORY */
	const char *token;    /* NULL: cmd_github_token() */
	int mode;	      /* enum github_comment_mode */
	const char *indent;   /* the stdout line's prefix; NULL: no line */
	const char *mentions; /* "@user @org/team" to alert on a failing verdict, or NULL */
};
/*
 * Post or update the comment; *url_out gets its URL (malloc'd) or NULL. A
 * failure prints its one line. Returns PG_EXIT_OK, PG_EXIT_USAGE (no token,
 * a bad repository, a report without a marker) or PG_EXIT_DELIVERY.
 */
int cmd_comment_deliver(const struct cmd_comment_job *job, char **url_out);
/* A pull request number from text: 1 and up; -1 when it is not one. */
int64_t cmd_parse_pr(const char *text);

/*
 * A command of the table main() dispatches on (src/main.c), and a subcommand
 * of `history`: its name, function, one-line summary and option table (NULL
 * for one that parses its own: `action`, and `history` itself, whose sub
 * lists its subcommands, up to an entry with a NULL name). The completion
 * scripts and the man page are generated from these tables (complete.c).
 */
struct cmd_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	const struct cmd_spec *spec;
	const struct cmd_command *sub;
};
extern const struct cmd_command cmd_history_commands[];
/* `profgate completion bash|zsh` and `profgate man` (hidden commands): the
 * script or the page for the n commands of table, on stdout. */
int cmd_completion(int argc, char **argv, const struct cmd_command *table, size_t n);
int cmd_man(int argc, char **argv, const struct cmd_command *table, size_t n);

extern const struct cmd_spec cmd_inspect_spec, cmd_summarize_spec, cmd_merge_spec, cmd_report_spec,
    cmd_compare_spec, cmd_gate_spec, cmd_fetch_spec, cmd_publish_spec, cmd_comment_spec,
    cmd_history_append_spec, cmd_history_show_spec, cmd_history_flush_spec,
    cmd_history_baseline_spec, cmd_history_trend_spec, cmd_history_compact_spec,
    cmd_history_dashboard_spec, cmd_query_spec;

int cmd_inspect(int argc, char **argv);
int cmd_summarize(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_gate(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_fetch(int argc, char **argv);
int cmd_publish(int argc, char **argv);
int cmd_comment(int argc, char **argv);
int cmd_action(int argc, char **argv);

#endif
