/*
 * Shared command plumbing: option tables to parsing and --help, the error
 * line, and the stdout check at exit.
 */
#include "cmd.h"

#include "../analyze/analyze.h"
#include "../read/read.h"
#include "../source/source.h"
#include "../summary/summary.h"
#include "../trace/trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The usage line wraps before an item that would pass this column. */
#define CMD_USAGE_WIDTH 90

static void usage_opt(struct pg_buf *b, const struct cmd_opt *o)
{
	pg_buf_addf(b, "--%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
}

/* One item of the usage line into b: opts[*i] with its alternatives
 * (CMD_OPT_OR) and the options that go with it (CMD_OPT_UNDER); *i moves past
 * them. */
static void usage_item(const struct cmd_spec *spec, int *i, struct pg_buf *b)
{
	const struct cmd_opt *o = &spec->opts[*i];
	int j = *i + 1, required = o->flags & CMD_OPT_REQUIRED;
	int alternatives = j < spec->n_opts && (spec->opts[j].flags & CMD_OPT_OR);
	const char *open = !required ? "[" : alternatives ? "(" : "";
	const char *close = !required ? "]" : alternatives ? ")" : "";

	pg_buf_adds(b, open);
	usage_opt(b, o);
	for (; j < spec->n_opts && (spec->opts[j].flags & CMD_OPT_OR); j++) {
		pg_buf_adds(b, " | ");
		usage_opt(b, &spec->opts[j]);
	}
	for (; j < spec->n_opts && (spec->opts[j].flags & CMD_OPT_UNDER); j++) {
		pg_buf_adds(b, " [");
		usage_opt(b, &spec->opts[j]);
		pg_buf_addc(b, ']');
	}
	pg_buf_adds(b, close);
	if (o->flags & CMD_OPT_REPEATS)
		pg_buf_adds(b, "...");
	*i = j;
}

static void usage_line(const struct cmd_spec *spec, FILE *out)
{
	struct pg_buf item = PG_BUF_INIT;
	int col =
	    fprintf(out, "usage: profgate %s%s%s", spec->name, *spec->args ? " " : "", spec->args);

	for (int i = 0; i < spec->n_opts;) {
		pg_buf_reset(&item);
		usage_item(spec, &i, &item);
		if (col + 1 + (int)item.len > CMD_USAGE_WIDTH) {
			fputs("\n      ", out); /* under "profgate" */
			col = 6;
		}
		col += fprintf(out, " %s", item.ptr);
	}
	fputc('\n', out);
	pg_buf_release(&item);
}

void cmd_usage(const struct cmd_spec *spec, FILE *out)
{
	usage_line(spec, out);
	fprintf(out, "\n%s\n", spec->summary);
	if (spec->n_opts)
		fprintf(out, "\noptions:\n");
	for (int i = 0; i < spec->n_opts; i++) {
		const struct cmd_opt *o = &spec->opts[i];
		char left[64];
		if (o->short_name)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", o->short_name, o->name,
				 o->arg ? " " : "", o->arg ? o->arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", o->name, o->arg ? " " : "",
				 o->arg ? o->arg : "");
		/* a long left column gets the help on a line of its own */
		if (strlen(left) > 28)
			fprintf(out, "  %s\n  %-28s %s\n", left, "", o->help);
		else
			fprintf(out, "  %-28s %s\n", left, o->help);
	}
	fprintf(out, "  %-28s %s\n", "-q, --quiet", "no progress line on stderr");
	fprintf(out, "  %-28s %s\n", "-h, --help", "show this help");
}

static const struct cmd_opt *find_long(const struct cmd_spec *spec, const char *name, size_t n)
{
	for (int i = 0; i < spec->n_opts; i++)
		if (strlen(spec->opts[i].name) == n && strncmp(spec->opts[i].name, name, n) == 0)
			return &spec->opts[i];
	return NULL;
}

static const struct cmd_opt *find_short(const struct cmd_spec *spec, char c)
{
	for (int i = 0; i < spec->n_opts; i++)
		if (spec->opts[i].short_name == c)
			return &spec->opts[i];
	return NULL;
}

int cmd_parse(const struct cmd_spec *spec, int argc, char **argv, const char **pos, int *n_pos,
	      int *help)
{
	int only_pos = 0;

	*n_pos = 0;
	*help = 0;
	for (int i = 0; i < spec->n_opts; i++)
		if (spec->opts[i].flags & CMD_OPT_COLLECT)
			memset(spec->opts[i].value, 0, (CMD_OPT_COLLECT_MAX + 1) * sizeof(char *));
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const struct cmd_opt *o = NULL;
		const char *val = NULL;

		if (only_pos || a[0] != '-' || a[1] == '\0') {
			pos[(*n_pos)++] = a;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			only_pos = 1;
			continue;
		}
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			*help = 1;
			return 0;
		}
		if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
			term_set_quiet(1);
			continue;
		}
		if (a[1] == '-') {
			const char *eq = strchr(a + 2, '=');
			size_t n = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
			o = find_long(spec, a + 2, n);
			if (eq)
				val = eq + 1;
		} else if (a[2] == '\0') {
			o = find_short(spec, a[1]);
		}
		if (!o)
			return pg_error_set(PG_EUSAGE,
					    "%s: unknown option '%s' (see 'profgate %s --help')",
					    spec->name, a, spec->name);
		if (!o->arg) {
			if (val)
				return pg_error_set(PG_EUSAGE, "%s: option '--%s' takes no value",
						    spec->name, o->name);
			*o->flag = 1;
			continue;
		}
		if (!val) {
			if (i + 1 >= argc)
				return pg_error_set(PG_EUSAGE, "%s: option '--%s' needs %s",
						    spec->name, o->name, o->arg);
			val = argv[++i];
		}
		if (o->flags & CMD_OPT_COLLECT) {
			int k = 0;
			while (o->value[k])
				k++;
			if (k == CMD_OPT_COLLECT_MAX)
				return pg_error_set(PG_EUSAGE, "%s: '--%s' at most %d times",
						    spec->name, o->name, CMD_OPT_COLLECT_MAX);
			o->value[k] = val;
			continue;
		}
		*o->value = val;
	}
	return 0;
}

int cmd_parse_or_help(const struct cmd_spec *spec, int argc, char **argv, const char **pos,
		      int *n_pos, int (*check)(int argc, char **argv), int *exit_code)
{
	int help;

	if (cmd_parse(spec, argc, argv, pos, n_pos, &help) || (check && check(argc, argv))) {
		*exit_code = cmd_error(PG_EXIT_USAGE);
		return 1;
	}
	if (help) {
		cmd_usage(spec, stdout);
		*exit_code = PG_EXIT_OK;
		return 1;
	}
	return 0;
}

int cmd_error(int code)
{
	fprintf(stderr, "profgate: %s\n", pg_error_last());
	return code;
}

int cmd_finish(int code)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "profgate: cannot write to standard output: %s\n", strerror(errno));
		return code ? code : PG_EXIT_INPUT;
	}
	return code;
}

int cmd_write_output(const char *path, const struct pg_buf *b)
{
	if (!path || strcmp(path, "-") == 0) {
		fwrite(b->ptr, 1, b->len, stdout);
		return PG_EXIT_OK;
	}
	if (pg_write_file_atomic(path, b->ptr, b->len))
		return cmd_error(PG_EXIT_INPUT);
	return PG_EXIT_OK;
}

int cmd_parse_threads(const char *cmd, const char *text, int *out)
{
	int64_t v;

	if (!text) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		*out = n < 1 ? 1 : n > 16 ? 16 : (int)n;
		return 0;
	}
	if (pg_parse_int(text, 1, 64, &v))
		return pg_error_set(PG_EUSAGE, "%s: --threads takes a number from 1 to 64", cmd);
	*out = (int)v;
	return 0;
}

/* Read the files src resolved to into t on `threads` threads. */
static int read_resolved(const struct source_set *src, struct trace *t, int threads)
{
	char **errors = NULL;
	int rc = PG_EXIT_OK;
	const char **paths = pg_xcalloc(src->n_files + 1, sizeof(char *));
	int32_t *dups = pg_xcalloc(src->n_files + 1, sizeof(int32_t));

	for (uint32_t i = 0; i < src->n_files; i++) {
		paths[i] = src->files[i].path;
		dups[i] = src->files[i].duplicate_of;
	}
	struct trace_progress progress = {0};

	t->progress = &progress;
	term_progress_begin("reading", &progress, src->n_files, 0);
	if (read_paths(t, paths, dups, src->n_files, threads, &errors) > 0)
		rc = PG_EXIT_INPUT;
	term_progress_end();
	t->progress = NULL;
	for (uint32_t i = 0; i < src->n_files; i++)
		if (errors[i]) {
			fprintf(stderr, "profgate: %s\n", errors[i]);
			free(errors[i]);
		}
	free(errors);
	free(paths);
	free(dups);
	return rc;
}

void cmd_trace_for_summary(struct trace *t)
{
	t->want_sha256 = 1;
	t->host_markers_only = 1;
}

int cmd_summarize_trace(struct trace *t, const struct analyze_options *ao, struct summary *s)
{
	int rc;

	term_progress_begin("analysing", NULL, 0, t->n_events);
	analyze_summarize(t, ao, s);
	rc = trace_digests_wait(t);
	term_progress_end();
	if (rc)
		return cmd_error(PG_EXIT_INPUT);
	/* the summary lists the trace's files in order */
	for (uint32_t i = 0; i < s->n_files && i < t->n_files; i++) {
		free(s->files[i].sha256);
		s->files[i].sha256 = pg_xstrdup(t->files[i].sha256);
	}
	return PG_EXIT_OK;
}

int cmd_read_inputs(struct source_set *src, struct trace *t, const char *const *inputs, int n,
		    const char *capture, int threads, int for_summary)
{
	int rc;

	trace_init(t);
	if (for_summary)
		cmd_trace_for_summary(t);
	if ((rc = source_resolve(src, inputs, n, capture)) != 0)
		return cmd_error(pg_exit_code(rc));
	cmd_note_own_outputs(src);
	return read_resolved(src, t, threads);
}

static int same_opt(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

void cmd_apply_origins(const struct source_set *src, struct summary *s)
{
	const struct source_origin *o = src->n_origins ? &src->origins[0] : NULL;

	for (uint32_t i = 0; i < s->n_files; i++)
		for (uint32_t k = 0; k < src->n_origins; k++) {
			const struct source_origin *x = &src->origins[k];
			size_t n = strlen(x->dir);
			char *p = s->files[i].path;
			if (!x->display || strncmp(p, x->dir, n) != 0 || p[n] != '/')
				continue;
			s->files[i].path = pg_xasprintf("%s%s", x->display, p + n);
			free(p);
			break;
		}
	for (uint32_t k = 1; k < src->n_origins; k++)
		if (!same_opt(src->origins[k].run_path, o->run_path) ||
		    !same_opt(src->origins[k].artifact, o->artifact))
			o = NULL;
	if (o && !summary_has_run(&s->run)) {
		struct sum_run r = {o->run_path, o->run_id,	 o->run_name,	o->artifact,
				    o->git_sha,	 o->config_hash, o->device_kind};
		summary_run_copy(&s->run, &r);
		if (!s->device_kind && o->device_kind)
			s->device_kind = pg_xstrdup(o->device_kind);
	}
	/* what a run's config declares a step holds (summarize's options win) */
	for (uint32_t k = 0; k < src->n_origins; k++) {
		const struct source_origin *x = &src->origins[k];
		if (x->tokens_per_step > 0)
			s->rate.tokens_per_step = x->tokens_per_step;
		if (x->samples_per_step > 0)
			s->rate.samples_per_step = x->samples_per_step;
		if (x->model_flops_per_step > 0)
			s->rate.model_flops_per_step = x->model_flops_per_step;
	}
	summary_rates(s);
}

/* A summary (profgate's or marin's JSON) rather than a profile: a plain file
 * whose first 4 KiB name one of the two schemas. Profiles are gzip or start
 * with other keys. */
static int looks_like_summary(const char *path)
{
	char head[4097], what[64];
	size_t n;
	FILE *f;

	/* any schema of profgate's: the summary reader names it when it is not one */
	if (source_profgate_output(path, what, sizeof(what)))
		return strcmp(what, "report markdown") != 0;
	f = fopen(path, "rb");
	if (!f)
		return 0;
	n = fread(head, 1, sizeof(head) - 1, f);
	fclose(f);
	head[n] = 0;
	if (n >= 2 && (unsigned char)head[0] == 0x1f && (unsigned char)head[1] == 0x8b)
		return 0;
	return strstr(head, "\"" SUMMARY_SCHEMA "\"") != NULL ||
	       strstr(head, "\"profile_summary.v1\"") != NULL;
}

/* A side that is not a local summary file: profiles (files, folders, W&B
 * refs) summarized on the fly, or a W&B artifact holding one summary. */
static int load_source(const char *path, const char *capture, int threads, struct summary *s,
		       char sha[65])
{
	struct source_set src;
	struct trace t;
	struct analyze_options ao;
	const char *inputs[1] = {path};
	int rc;

	trace_init(&t);
	cmd_trace_for_summary(&t);
	if ((rc = source_resolve(&src, inputs, 1, capture)) != 0) {
		rc = cmd_error(pg_exit_code(rc));
		goto out;
	}
	cmd_note_own_outputs(&src);
	if (src.n_origins && src.n_files == 1 && looks_like_summary(src.files[0].path)) {
		summary_release(s);
		if (pg_sha256_file(src.files[0].path, sha) ||
		    summary_read_json(src.files[0].path, s)) {
			summary_init(s);
			rc = cmd_error(PG_EXIT_INPUT);
		}
		goto out;
	}
	if ((rc = read_resolved(&src, &t, threads)) == PG_EXIT_OK) {
		analyze_options_init(&ao);
		ao.version = PG_VERSION;
		rc = cmd_summarize_trace(&t, &ao, s);
		if (rc == PG_EXIT_OK)
			cmd_apply_origins(&src, s);
	}
out:
	trace_release(&t);
	source_set_release(&src);
	return rc;
}

int cmd_load_summary(const char *path, const char *capture, int threads, struct summary *s,
		     char sha[65])
{
	struct stat st;

	sha[0] = 0;
	summary_init(s);
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return load_source(path, capture, threads, s, sha);
	if (!looks_like_summary(path)) {
		/* a profile: the reader hashes it for source.files[] already */
		int rc = load_source(path, capture, threads, s, sha);
		if (rc == PG_EXIT_OK && s->n_files == 1 && s->files[0].sha256)
			snprintf(sha, 65, "%s", s->files[0].sha256);
		return rc;
	}
	if (pg_sha256_file(path, sha))
		return cmd_error(PG_EXIT_INPUT);
	summary_release(s);
	if (summary_read_json(path, s)) {
		summary_init(s);
		return cmd_error(PG_EXIT_INPUT);
	}
	return PG_EXIT_OK;
}
