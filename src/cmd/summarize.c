/*
 * profgate summarize: profiles (files or directories) to one summary JSON,
 * every device of every host or rank in it. Written through a temporary name,
 * so a failed run never leaves a partial file. Files of different device
 * models, frameworks or step markers are not one capture: they are refused
 * (exit 4, naming two files that differ) unless --allow-mixed says to join
 * them anyway.
 */
#include "cmd.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../analyze/analyze.h"
#include "../read/read.h"
#include "../source/source.h"
#include "../summary/summary.h"
#include "../trace/trace.h"

static const char *opt_out, *opt_warmup, *opt_capture, *opt_threads, *opt_label;
static const char *opt_tokens, *opt_samples, *opt_model_flops, *opt_peak, *opt_dtype;
static const char *labels[64];
static int n_labels;
static int opt_allow_mixed;

static const struct cmd_opt summarize_opts[] = {
    {"output", 'o', "FILE", "write the summary here ('-', the default: standard output)", NULL,
     &opt_out, 0},
    {"warmup", 0, "N", "exclude the first N captured steps (default: leading outliers)", NULL,
     &opt_warmup, 0},
    {"label", 'l', "KEY=VALUE", "a label recorded in the identity (repeatable)", NULL, &opt_label,
     CMD_OPT_REPEATS},
    {"allow-mixed", 0, NULL,
     "join files of different device models, frameworks or step markers into one summary",
     &opt_allow_mixed, NULL, 0},
    {"tokens-per-step", 0, "N",
     "tokens a step processes (all ranks): gives throughput.tokens_per_s", NULL, &opt_tokens, 0},
    {"samples-per-step", 0, "N",
     "samples a step processes (all ranks): gives throughput.samples_per_s", NULL, &opt_samples, 0},
    {"model-flops-per-step", 0, "F",
     "the model's FLOPs per step (all ranks): gives throughput.mfu against the devices' peak", NULL,
     &opt_model_flops, 0},
    {"peak-tflops", 0, "T", "the peak TFLOP/s of one device (default: the table's, by model)", NULL,
     &opt_peak, 0},
    {"peak-dtype", 0, "DTYPE",
     "the dtype of the table's peak: bf16 (default), fp16, fp8, tf32, fp32", NULL, &opt_dtype, 0},
    CMD_OPTS_READ(&opt_capture, &opt_threads),
};

const struct cmd_spec cmd_summarize_spec = {
    "summarize", "INPUT...",
    "Reduce profiles to one profgate.summary/1 JSON: steps, the time split per device,\n"
    "ops, families, collectives, gaps, regions, quality warnings and identity. An INPUT is a\n"
    "profile file or directory, a W&B run or artifact (wandb://ENTITY/PROJECT/RUN_ID), or\n"
    "'-' for standard input; many hosts or ranks become one summary with every device.\n"
    "profgate's own outputs in a directory are skipped; an output that is an input is refused.",
    summarize_opts, (int)PG_ARRAY_LEN(summarize_opts)};

/* --label repeats: collect every value from argv before the table parser keeps the last. */
static int collect_labels(int argc, char **argv)
{
	n_labels = 0;
	for (int i = 1; i < argc; i++) {
		const char *v = NULL;
		if ((strcmp(argv[i], "--label") == 0 || strcmp(argv[i], "-l") == 0) && i + 1 < argc)
			v = argv[++i];
		else if (strncmp(argv[i], "--label=", 8) == 0)
			v = argv[i] + 8;
		else if (strcmp(argv[i], "--") == 0)
			break;
		if (!v)
			continue;
		if (!strchr(v, '=') || v[0] == '=')
			return pg_error_set(PG_EUSAGE,
					    "summarize: --label takes KEY=VALUE, not '%s'", v);
		if (n_labels == (int)PG_ARRAY_LEN(labels))
			return pg_error_set(PG_EUSAGE, "summarize: at most %d labels",
					    (int)PG_ARRAY_LEN(labels));
		labels[n_labels++] = v;
	}
	return 0;
}

/* A positive number given to --name, or PG_EUSAGE with the message set. */
static int positive(const char *name, const char *v, double *out)
{
	char *end;
	double x;

	if (!v)
		return 0;
	x = strtod(v, &end);
	if (end == v || *end || !(x > 0) || x > 1e30)
		return pg_error_set(PG_EUSAGE, "summarize: --%s takes a positive number, not '%s'",
				    name, v);
	*out = x;
	return 0;
}

/* The options' declarations, checked before anything is read; < 0 when not given. */
static double want_tokens, want_samples, want_model_flops, want_peak;

static int check_declared(void)
{
	static const char *const dtypes[] = {"bf16", "fp16", "fp8", "tf32", "fp32"};
	int known = !opt_dtype;

	want_tokens = want_samples = want_model_flops = want_peak = -1;
	for (size_t i = 0; opt_dtype && i < PG_ARRAY_LEN(dtypes); i++)
		known |= strcmp(opt_dtype, dtypes[i]) == 0;
	if (!known)
		return pg_error_set(PG_EUSAGE,
				    "summarize: --peak-dtype takes bf16, fp16, fp8, tf32 or fp32, "
				    "not '%s'",
				    opt_dtype);
	if (positive("tokens-per-step", opt_tokens, &want_tokens) ||
	    positive("samples-per-step", opt_samples, &want_samples) ||
	    positive("model-flops-per-step", opt_model_flops, &want_model_flops) ||
	    positive("peak-tflops", opt_peak, &want_peak))
		return PG_EUSAGE;
	return 0;
}

/* The options' declarations into s->rate (over what a W&B run's config
 * declared: cmd_apply_origins), and the rates that follow. */
static void declare(struct summary *s)
{
	struct sum_rate *r = &s->rate;

	if (want_tokens > 0)
		r->tokens_per_step = want_tokens;
	if (want_samples > 0)
		r->samples_per_step = want_samples;
	if (want_model_flops > 0)
		r->model_flops_per_step = want_model_flops;
	if (want_peak > 0) {
		r->peak_tflops_per_device = want_peak;
		free(r->peak_source);
		r->peak_source = pg_xstrdup(SUMMARY_PEAK_GIVEN);
	}
	if (opt_dtype) {
		free(r->peak_dtype);
		r->peak_dtype = pg_xstrdup(opt_dtype);
	}
	summary_rates(s);
}

/* A --warmup that leaves no steady step would give a summary of zeros: the
 * input (the capture is shorter than asked for) is refused instead. */
static int check_warmup(const struct analyze_options *ao, const struct summary *s)
{
	uint32_t timed = 0;

	if (ao->warmup < 0 || s->n_steps == 0 || s->steady.count > 0)
		return PG_EXIT_OK;
	for (uint32_t i = 0; i < s->n_steps; i++)
		timed += s->steps[i].us >= 0;
	pg_error_set(PG_EFORMAT, "summarize: --warmup %d leaves no steady step: %s %s %u step%s%s",
		     ao->warmup, s->n_files == 1 ? s->files[0].path : "the inputs",
		     s->n_files == 1 ? "has" : "have", s->n_steps, s->n_steps == 1 ? "" : "s",
		     timed < s->n_steps ? " (some without device work)" : "");
	return cmd_error(PG_EXIT_INPUT);
}

/* What file i says about its capture, as text (NULL when it does not say):
 * 0 its device model (its first device's name, else its kind), 1 its
 * framework, 2 its strongest step marker. */
static const char *file_fact(const struct trace *t, const struct summary *s, uint32_t i, int what)
{
	if (what == 1)
		return t->files[i].framework;
	if (what == 2)
		return s->files[i].step_markers;
	for (uint32_t d = 0; d < s->n_devices; d++)
		if (s->devices[d].file == i)
			return s->devices[d].name ? s->devices[d].name : s->devices[d].kind;
	return NULL;
}

/* Files that are not one capture: the first two that differ in a fact. 0, or
 * PG_EUSAGE with the message set. A byte-identical repeat is read once and
 * says nothing of its own. */
static int check_one_capture(const struct trace *t, const struct summary *s)
{
	static const char *const facts[] = {"device model", "framework", "step markers"};

	for (int w = 0; w < (int)PG_ARRAY_LEN(facts); w++) {
		uint32_t first = UINT32_MAX;
		for (uint32_t i = 0; i < s->n_files && i < t->n_files; i++) {
			const char *v = file_fact(t, s, i, w);
			if (!v || t->files[i].duplicate_of != UINT32_MAX)
				continue;
			if (first == UINT32_MAX) {
				first = i;
				continue;
			}
			const char *v0 = file_fact(t, s, first, w);
			if (strcmp(v, v0) != 0)
				return pg_error_set(
				    PG_EUSAGE,
				    "summarize: '%s' (%s %s) and '%s' (%s %s) are not "
				    "one capture; --allow-mixed joins them anyway",
				    s->files[first].path, facts[w], v0, s->files[i].path, facts[w],
				    v);
		}
	}
	return 0;
}

int cmd_summarize(int argc, char **argv)
{
	const char **pos = pg_xcalloc((size_t)argc + 1, sizeof(char *));
	struct source_set src;
	struct trace t;
	struct summary s;
	struct analyze_options ao;
	struct pg_buf out = PG_BUF_INIT;
	struct cmd_stdin in = {0};
	int n_pos, rc = PG_EXIT_OK, threads = 0;

	opt_out = opt_warmup = opt_capture = opt_threads = opt_label = NULL;
	opt_tokens = opt_samples = opt_model_flops = opt_peak = opt_dtype = NULL;
	opt_allow_mixed = 0;
	memset(&src, 0, sizeof(src));
	if (cmd_parse_or_help(&cmd_summarize_spec, argc, argv, pos, &n_pos, collect_labels, &rc)) {
		free(pos);
		return cmd_finish(rc);
	}
	analyze_options_init(&ao);
	if (opt_warmup) {
		int64_t v;
		if (pg_parse_int(opt_warmup, 0, 1000000, &v)) {
			free(pos);
			pg_error_set(PG_EUSAGE,
				     "summarize: --warmup takes a number of steps, not '%s'",
				     opt_warmup);
			return cmd_error(PG_EXIT_USAGE);
		}
		ao.warmup = (int)v;
	}
	if (check_declared()) {
		free(pos);
		return cmd_error(PG_EXIT_USAGE);
	}
	if (n_pos == 0 || cmd_parse_threads("summarize", opt_threads, &threads)) {
		free(pos);
		if (n_pos == 0)
			pg_error_set(PG_EUSAGE,
				     "summarize: no input given (see 'profgate summarize --help')");
		return cmd_error(PG_EXIT_USAGE);
	}
	if (cmd_check_outputs("summarize", &opt_out, 1, pos, n_pos, opt_capture)) {
		free(pos);
		return cmd_error(PG_EXIT_USAGE);
	}
	if ((rc = cmd_stdin_take("summarize", pos, n_pos, &in)) != 0) {
		cmd_stdin_release(&in);
		free(pos);
		return cmd_error(rc == PG_EUSAGE ? PG_EXIT_USAGE : PG_EXIT_INPUT);
	}
	rc = cmd_read_inputs(&src, &t, pos, n_pos, opt_capture, threads, 1);
	if (rc == PG_EXIT_OK) {
		ao.version = PG_VERSION;
		ao.labels = labels;
		ao.n_labels = (uint32_t)n_labels;
		summary_init(&s);
		rc = cmd_summarize_trace(&t, &ao, &s);
		if (rc == PG_EXIT_OK)
			rc = check_warmup(&ao, &s);
		if (rc == PG_EXIT_OK && !opt_allow_mixed && check_one_capture(&t, &s))
			rc = cmd_error(PG_EXIT_INCOMPARABLE);
		if (rc == PG_EXIT_OK) {
			cmd_apply_origins(&src, &s);
			declare(&s);
			cmd_stdin_unname(&in, &s);
			summary_write_json(&s, &out);
		}
		summary_release(&s);
	}
	if (rc == PG_EXIT_OK)
		rc = cmd_write_output(opt_out, &out);
	pg_buf_release(&out);
	trace_release(&t);
	source_set_release(&src);
	cmd_stdin_release(&in);
	free(pos);
	return cmd_finish(rc);
}
