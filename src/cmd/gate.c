/*
 * profgate gate: the pre-merge verdict. Loads a baseline and a candidate
 * (summaries, or profiles summarized on the fly), applies a thresholds file,
 * writes the verdict JSON and the markdown report, prints the verdict and
 * exits by it (DESIGN §5). cmd_gate_run() is shared with `compare`.
 */
#include "cmd.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../deliver/deliver.h"
#include "../gate/gate.h"
#include "../history/history.h"
#include "../report/report.h"
#include "../summary/summary.h"

static int write_out(const char *path, const struct pg_buf *b)
{
	if (strcmp(path, "-") == 0) {
		fwrite(b->ptr, 1, b->len, stdout);
		return 0;
	}
	return pg_write_file_atomic(path, b->ptr, b->len);
}

static void print_time(FILE *f, double us)
{
	double a = fabs(us);
	if (a >= 1e6)
		fprintf(f, "%.3f s", us / 1e6);
	else if (a >= 1e3)
		fprintf(f, "%.2f ms", us / 1e3);
	else
		fprintf(f, "%.1f us", us);
}

static int family_named(const struct gate_result *r, const char *family)
{
	for (uint32_t i = 0; family && i < r->n_attribution; i++)
		if (r->attribution[i].kind == GATE_ATTR_FAMILY &&
		    strcmp(r->attribution[i].name, family) == 0)
			return 1;
	return 0;
}

/* Names come from profiles and summaries: printed as one line each
 * (pg_line), so no name can start a line of its own in a CI log. */
static void print_metric(FILE *f, const struct gate_metric_result *m, struct pg_buf *tmp)
{
	const char *v = gate_verdict_name(m->verdict);
	struct pg_buf change = PG_BUF_INIT;

	/* the padding outside the codes, so columns line up with or without them */
	fprintf(f, "  %s%s%s%*s %s", term_sgr(f, term_verdict_style(v)), v, term_sgr(f, TERM_RESET),
		12 - (int)strlen(v), "", pg_line(tmp, m->name));
	/* the unit and digits of the report's change column (report/change.c) */
	report_metric_change(&change, m);
	if (strcmp(change.ptr, "—") != 0)
		fprintf(f, " %s", change.ptr);
	pg_buf_release(&change);
	if (m->note)
		fprintf(f, " (%s)", pg_line(tmp, m->note));
	fprintf(f, "\n");
}

/* Where the step's noise came from: "runs", "history" or "prior"; NULL untested. */
static const char *step_noise(const struct gate_result *r)
{
	for (uint32_t i = 0; i < r->n_metrics; i++)
		if (strcmp(r->metrics[i].name, "step.median_us") == 0)
			return r->metrics[i].tested ? r->metrics[i].noise_from : NULL;
	return NULL;
}

/* series and note: the candidate's series and the baseline's description
 * (for a window, what it holds, or why it holds nothing). */
static void print_verdict(const struct gate_result *r, const struct cmd_gate_job *job,
			  const char *series, const char *note)
{
	static const enum gate_verdict order[] = {GATE_FAIL, GATE_WARN, GATE_INCONCLUSIVE,
						  GATE_IMPROVED};
	FILE *f = stdout;
	uint32_t shown = 0;
	struct pg_buf a = PG_BUF_INIT, b = PG_BUF_INIT;

	fprintf(f, "profgate %s: %s%s%s", job->cmd,
		term_sgr(f, term_verdict_style(gate_verdict_name(r->verdict))),
		gate_verdict_name(r->verdict), term_sgr(f, TERM_RESET));
	if (job->label)
		fprintf(f, " (%s)", pg_line(&a, job->label));
	fprintf(f, "\n");
	if (r->verdict == GATE_INCOMPARABLE)
		goto out; /* the refusal goes to stderr (print_refusal) */
	if (r->verdict == GATE_RECORDED && r->in.recorded_why) {
		fprintf(f, "  window of %s filling: %s; nothing judged, its numbers are recorded\n",
			pg_line(&b, series), pg_line(&a, note));
		goto out;
	}
	if (r->verdict == GATE_RECORDED) {
		fprintf(f,
			"  first record of %s: nothing to compare against (%s); its numbers are "
			"recorded as the reference\n",
			pg_line(&b, series), pg_line(&a, note));
		goto out;
	}
	if (r->has_step) {
		fprintf(f, "  steady median step: ");
		print_time(f, r->step_baseline_us);
		fprintf(f, " -> ");
		print_time(f, r->step_candidate_us);
		if (isfinite(r->step_delta_share)) /* no share of a 0 us baseline */
			fprintf(f, " (%+.1f%%", 100 * r->step_delta_share);
		else
			fprintf(f, " (no relative change");
		if (r->has_interval)
			fprintf(f, ", %.0f%% interval %+.1f%% .. %+.1f%%", 100 * r->confidence,
				100 * r->interval_lo_share, 100 * r->interval_hi_share);
		if (r->step_tested)
			fprintf(f, ", p = %.3g", r->step_p_value);
		fprintf(f, "; %u vs %u run%s, %u vs %u %s", r->baseline_runs, r->candidate_runs,
			r->candidate_runs == 1 ? "" : "s", r->step_n_baseline, r->step_n_candidate,
			r->step_samples);
		if (step_noise(r))
			fprintf(f, "; noise: %s", step_noise(r));
		fprintf(f, ")\n");
	}
	/* the worst first, step metrics ahead of the rest within a verdict */
	for (size_t v = 0; v < PG_ARRAY_LEN(order); v++)
		for (int steps = 1; steps >= 0; steps--)
			for (uint32_t i = 0; i < r->n_metrics; i++) {
				const struct gate_metric_result *m = &r->metrics[i];
				if (m->verdict != order[v] || (m->kind == GATE_K_STEP) != steps)
					continue;
				if (shown++ == 12)
					continue;
				print_metric(f, m, &a);
			}
	if (shown > 12)
		fprintf(f, "  ... %u more (see the report)\n", shown - 12);
	if (r->noisy) {
		fprintf(f, "  too noisy to judge: runs spread %.1f%% between them",
			100 * r->noisy_between_share);
		if (isfinite(r->noisy_within_share))
			fprintf(f, " and %.1f%% inside a run", 100 * r->noisy_within_share);
		fprintf(f, " (robust sd); %s\n", r->noisy_advice);
	}
	if (r->has_step && r->n_attribution == 0)
		fprintf(f, "  where the time went: no part changed beyond noise\n");
	if (r->has_step && r->n_attribution > 0) {
		uint32_t n = 0;
		fprintf(f, "  where the time went:");
		for (uint32_t i = 0; i < r->n_attribution && n < 4; i++) {
			const struct gate_attribution *at = &r->attribution[i];
			if (at->kind == GATE_ATTR_OP && family_named(r, at->family))
				continue; /* inside its family's time */
			fprintf(f, "%s %s", n++ ? "," : "", at->delta_us_per_step >= 0 ? "+" : "-");
			print_time(f, fabs(at->delta_us_per_step));
			fprintf(f, " %s (z %.1f)", pg_line(&b, at->name), at->z);
		}
		fprintf(f, "; the rest %s", r->attribution_remainder_us >= 0 ? "+" : "-");
		print_time(f, fabs(r->attribution_remainder_us));
		fprintf(f, " within noise (per step)\n");
	}
	for (uint32_t i = 0; i < r->n_quality; i++)
		if (strcmp(r->quality[i].code, "one-run") == 0)
			fprintf(f, "  one run: %s\n", r->quality[i].message);
		else if (strcmp(r->quality[i].code, "slowed") == 0 ||
			 strcmp(r->quality[i].code, "disturbed") == 0)
			fprintf(f, "  %s: %s\n", r->quality[i].code, r->quality[i].message);
out:
	pg_buf_release(&a);
	pg_buf_release(&b);
}

/* A field's value in a refusal: quoted, or null. */
static const char *quoted(struct pg_buf *b, const char *v)
{
	struct pg_buf t = PG_BUF_INIT;

	pg_buf_reset(b);
	if (!v || strcmp(v, "null") == 0)
		pg_buf_adds(b, "null");
	else
		pg_buf_addf(b, "'%s'", pg_line(&t, v));
	pg_buf_release(&t);
	return b->ptr;
}

/* A refusal (exit 4) always goes to stderr, whatever stdout carries (the
 * JSON, the report or the verdict lines): one line with the reason, then each
 * identity field that differs in words. The workload's diff is in the
 * reason. */
static void print_refusal(const struct gate_result *r, const struct cmd_gate_job *job)
{
	struct pg_buf a = PG_BUF_INIT, b = PG_BUF_INIT, c = PG_BUF_INIT;

	fflush(stdout);
	fprintf(stderr, "profgate: %s: refused (incomparable): %s\n", job->cmd,
		strcmp(r->provenance, "identical-inputs") == 0
		    ? "the baseline and the candidate are the same bytes"
		    : pg_line(&a, r->refusal ? r->refusal : "the runs differ in identity"));
	for (uint32_t i = 0; i < r->n_diff; i++)
		if (strcmp(r->diff[i].field, "workload") != 0)
			fprintf(stderr, "  %s: baseline %s vs candidate %s\n",
				pg_line(&a, r->diff[i].field), quoted(&b, r->diff[i].baseline),
				quoted(&c, r->diff[i].candidate));
	pg_buf_release(&a);
	pg_buf_release(&b);
	pg_buf_release(&c);
}

static void record_env(const struct cmd_gate_job *job, struct history_env *env)
{
	if (job->history_env)
		*env = *job->history_env;
	else
		history_env_from_environ(env);
}

/* The kind of the record this run appends to the history its window is read
 * from, its ref in *ref; NULL when it appends none there. */
static const char *own_record(const struct cmd_gate_job *job, const char **ref)
{
	struct history_env env;

	record_env(job, &env);
	*ref = env.ref;
	if (!job->history || strcmp(cmd_gate_history_read(job), job->history) != 0)
		return NULL;
	return job->kind ? job->kind : history_kind_infer(&env);
}

/* gate --history: the verdict's record appended after the verdict is out.
 * Returns the delivery's exit code; the caller decides whether it counts. */
static int record_history(const struct cmd_gate_job *job, const struct gate_result *r)
{
	struct history_record rec;
	struct history_env env;
	int rc;

	record_env(job, &env);
	if (history_record_from_result(&rec, r, &env, job->kind)) {
		fprintf(stderr, "profgate: %s%s\n",
			job->history_required ? "" : "warning: ", pg_error_last());
		history_record_release(&rec);
		return PG_EXIT_USAGE;
	}
	rc = cmd_history_deliver(&rec, job->history, job->history_branch, job->history_pending,
				 job->quiet ? NULL : "  ", !job->history_required);
	history_record_release(&rec);
	return rc;
}

/* action: each side's summary JSON, as summarize writes it. */
static int write_summary(const char *path, const struct summary *s)
{
	struct pg_buf b = PG_BUF_INIT;
	int rc = 0;

	if (path) {
		summary_write_json(s, &b);
		rc = pg_write_file_atomic(path, b.ptr, b.len);
		pg_buf_release(&b);
	}
	return rc;
}

/* Every run of a side in dir as SIDE.run-NN.summary.json (NN from 01, so
 * that a sorted glob gives them in order). */
static int write_runs(const char *dir, const char *side, const struct summary *s, uint32_t n)
{
	int rc = 0;

	for (uint32_t i = 0; dir && i < n && rc == 0; i++) {
		char *path = pg_xasprintf("%s/%s.run-%02u.summary.json", dir, side, i + 1);
		rc = write_summary(path, &s[i]);
		free(path);
	}
	return rc;
}

static void outcome_of(const struct gate_result *r, struct cmd_gate_outcome *o)
{
	o->verdict = gate_verdict_name(r->verdict);
	o->n_fail = o->n_warn = 0;
	for (uint32_t i = 0; i < r->n_metrics; i++) {
		o->n_fail += r->metrics[i].verdict == GATE_FAIL;
		o->n_warn += r->metrics[i].verdict == GATE_WARN;
	}
}

/* The runs of one side, each loaded into s[i] (all initialised here); the
 * input files' sha256 into sha[i] ("" when unknown). */
static int load_side(const struct cmd_gate_job *job, const char *const *paths, uint32_t n,
		     struct summary *s, char (*sha)[65])
{
	int rc = PG_EXIT_OK;

	for (uint32_t i = 0; i < n; i++)
		summary_init(&s[i]);
	for (uint32_t i = 0; i < n && rc == PG_EXIT_OK; i++) {
		summary_release(&s[i]);
		rc = cmd_load_summary(paths[i], NULL, job->threads, &s[i], sha[i]);
	}
	return rc;
}

static void release_side(struct summary *s, uint32_t n)
{
	for (uint32_t i = 0; s && i < n; i++)
		summary_release(&s[i]);
	free(s);
}

/* A file given on both sides: the comparison is refused as identical inputs. */
static const char *shared_sha(char (*b)[65], uint32_t nb, char (*c)[65], uint32_t nc)
{
	for (uint32_t i = 0; i < nb; i++)
		for (uint32_t k = 0; k < nc; k++)
			if (b[i][0] && strcmp(b[i], c[k]) == 0)
				return b[i];
	return NULL;
}

int cmd_gate_run(const struct cmd_gate_job *job)
{
	const char *const *bp = job->n_baselines ? job->baselines : &job->baseline;
	const char *const *cp = job->n_candidates ? job->candidates : &job->candidate;
	uint32_t nb = job->n_baselines ? job->n_baselines : 1;
	uint32_t nc = job->n_candidates ? job->n_candidates : 1;
	struct summary *b = pg_xcalloc(nb + 1, sizeof(*b)), *c = pg_xcalloc(nc, sizeof(*c));
	struct summary *hruns = NULL, *nruns = NULL, window_b;
	uint32_t n_hruns = 0, n_nruns = 0;
	const struct summary **rb = NULL, **rc_runs = NULL;
	char(*sha_b)[65] = pg_xcalloc(nb, 65), (*sha_c)[65] = pg_xcalloc(nc, 65);
	const char **shb = pg_xcalloc(nb + 1, sizeof(char *)),
		   **shc = pg_xcalloc(nc + 1, sizeof(char *));
	struct gate_thresholds th;
	struct gate_result r;
	struct gate_inputs in;
	struct gate_side side_b, side_c, side_n;
	const struct summary **rn = NULL;
	struct pg_buf json = PG_BUF_INIT, md = PG_BUF_INIT, window = PG_BUF_INIT,
		      note = PG_BUF_INIT, series = PG_BUF_INIT;
	const char *same;
	const char **inputs = pg_xcalloc(nb + nc, sizeof(char *));
	const char *outputs[] = {job->json_out, job->report_out, job->baseline_summary_out,
				 job->candidate_summary_out};
	struct cmd_stdin sin = {0};
	int rc, filling = 0;

	summary_init(&window_b);
	if (cmd_load_thresholds(job->cmd, job->thresholds, &th)) {
		rc = cmd_error(PG_EXIT_USAGE);
		nb = nc = 0;
		goto out;
	}
	for (uint32_t i = 0; i < nb; i++)
		inputs[i] = bp[i];
	for (uint32_t i = 0; i < nc; i++)
		inputs[nb + i] = cp[i];
	/* before anything is read or written: no output overwrites an input */
	if (cmd_check_outputs(job->cmd, outputs, (int)PG_ARRAY_LEN(outputs), inputs, (int)(nb + nc),
			      NULL)) {
		rc = cmd_error(PG_EXIT_USAGE);
		nb = nc = 0;
		goto out;
	}
	if ((rc = cmd_stdin_take(job->cmd, inputs, (int)(nb + nc), &sin)) != 0) {
		rc = cmd_error(rc == PG_EUSAGE ? PG_EXIT_USAGE : PG_EXIT_INPUT);
		nb = nc = 0;
		goto out;
	}
	bp = inputs;
	cp = inputs + nb;
	if (job->baseline_history) {
		/* the window is the candidate's series: the candidate comes first */
		const char *ref, *kind = own_record(job, &ref);
		nb = 0;
		rc = load_side(job, cp, nc, c, sha_c);
		if (rc == PG_EXIT_OK)
			rc =
			    cmd_history_window_baseline(job, &th, &c[0], kind, ref, &window_b,
							&window, &note, &hruns, &n_hruns, &filling);
	} else {
		rc = load_side(job, bp, nb, b, sha_b);
		if (rc == PG_EXIT_OK)
			rc = load_side(job, cp, nc, c, sha_c);
		else
			nc = 0;
	}
	if (rc != PG_EXIT_OK)
		goto out;
	for (uint32_t i = 0; i < nb; i++)
		cmd_stdin_unname(&sin, &b[i]);
	for (uint32_t i = 0; i < nc; i++)
		cmd_stdin_unname(&sin, &c[i]);
	rb = pg_xcalloc(nb + n_hruns + 1, sizeof(*rb));
	rc_runs = pg_xcalloc(nc, sizeof(*rc_runs));
	for (uint32_t i = 0; i < nb; i++)
		rb[i] = &b[i];
	for (uint32_t i = 0; i < n_hruns; i++)
		rb[i] = &hruns[i];
	for (uint32_t i = 0; i < nc; i++)
		rc_runs[i] = &c[i];
	for (uint32_t i = 0; i < nb; i++)
		shb[i] = sha_b[i];
	for (uint32_t i = 0; i < nc; i++)
		shc[i] = sha_c[i];
	side_b = (struct gate_side){rb,
				    job->baseline_history ? n_hruns : nb,
				    job->baseline_history ? &window_b : NULL,
				    job->baseline_history,
				    job->baseline_history ? NULL : bp,
				    job->baseline_history ? NULL : shb};
	side_c = (struct gate_side){rc_runs, nc, NULL, 0, cp, shc};
	memset(&in, 0, sizeof(in));
	/* too few runs on both sides: the series' recent records give the noise */
	if (cmd_gate_history_read(job) && !job->baseline_history && nb < GATE_NOISE_MIN_RUNS &&
	    nc < GATE_NOISE_MIN_RUNS && cmd_history_noise_runs(job, &th, &c[0], &nruns, &n_nruns)) {
		rn = pg_xcalloc(n_nruns, sizeof(*rn));
		for (uint32_t i = 0; i < n_nruns; i++)
			rn[i] = &nruns[i];
		side_n = (struct gate_side){rn, n_nruns, NULL, 1, NULL, NULL};
		in.noise = &side_n;
	}
	in.baseline_path = job->baseline;
	in.candidate_path = job->candidate;
	in.baseline_history_json = job->baseline_history ? window.ptr : NULL;
	in.recorded_why = filling ? note.ptr : NULL;
	same = shared_sha(sha_b, nb, sha_c, nc);
	in.baseline_sha256 = same ? same : nb && sha_b[0][0] ? sha_b[0] : NULL;
	in.candidate_sha256 = same ? same : sha_c[0][0] ? sha_c[0] : NULL;
	in.label = job->label;
	in.thresholds_origin = job->thresholds && strcmp(job->thresholds, "default") != 0
				   ? job->thresholds
				   : "built-in default";
	in.version = PG_VERSION;
	if (write_summary(job->baseline_summary_out, job->baseline_history ? &window_b : &b[0]) ||
	    write_summary(job->candidate_summary_out, &c[0]) ||
	    write_runs(job->runs_out, "baseline", b, nb) ||
	    write_runs(job->runs_out, "candidate", c, nc)) {
		rc = cmd_error(PG_EXIT_INPUT);
		goto out;
	}
	gate_compare_runs(&side_b, &side_c, &th, &in, &r);
	gate_result_write_json(&r, &json);
	report_compare_md(&r, &md);
	/* the hidden marker naming the series: the PR comment's key (DESIGN §7) */
	history_series_of_summary(in.label, &c[0], &series);
	cmd_gate_recent_chart(job, series.ptr, &r, &md);
	github_marker_append(series.ptr, gate_verdict_name(r.verdict), &md);
	if (job->outcome)
		outcome_of(&r, job->outcome);
	if (job->on_result)
		job->on_result(&r, job->on_result_ctx);
	if (job->keep_md)
		pg_buf_add(job->keep_md, md.ptr, md.len);
	if (job->json_out && write_out(job->json_out, &json))
		rc = cmd_error(PG_EXIT_INPUT);
	else if (job->report_out && write_out(job->report_out, &md))
		rc = cmd_error(PG_EXIT_INPUT);
	if (rc == PG_EXIT_OK) {
		if (!job->quiet) {
			print_verdict(&r, job, series.ptr, note.ptr);
			if (job->baseline_history && r.verdict != GATE_RECORDED)
				printf("  baseline: %s: %s\n", job->baseline, note.ptr);
			if (job->report_out && strcmp(job->report_out, "-") != 0)
				printf("  report: %s\n", job->report_out);
			if (job->json_out && strcmp(job->json_out, "-") != 0)
				printf("  verdict JSON: %s\n", job->json_out);
		}
		if (r.verdict == GATE_INCOMPARABLE)
			print_refusal(&r, job);
		/* compare reports and fails nothing but a refusal */
		if (job->verdict_exit)
			rc = cmd_fail_on_exit(job->fail_on, gate_verdict_name(r.verdict));
		else
			rc = r.verdict == GATE_INCOMPARABLE ? PG_EXIT_INCOMPARABLE : PG_EXIT_OK;
		if (job->history) {
			/* a required delivery that failed outranks the verdict's code */
			int h = record_history(job, &r);
			if (h != PG_EXIT_OK && job->history_required)
				rc = h;
		}
	}
	gate_result_release(&r);
out:
	pg_buf_release(&json);
	pg_buf_release(&md);
	pg_buf_release(&window);
	pg_buf_release(&note);
	pg_buf_release(&series);
	release_side(b, nb);
	release_side(c, nc);
	release_side(hruns, n_hruns);
	release_side(nruns, n_nruns);
	free(rn);
	summary_release(&window_b);
	free(rb);
	free(rc_runs);
	free(sha_b);
	free(sha_c);
	free(shb);
	free(shc);
	gate_thresholds_release(&th);
	cmd_stdin_release(&sin);
	free(inputs);
	return rc;
}

/* The options that make the job are parsed straight into it. */
static struct cmd_gate_job gate_job;
static const char *opt_threads, *opt_comment, *opt_pr, *opt_repo;
static const char *opt_baselines[CMD_OPT_COLLECT_MAX + 1], *opt_candidates[CMD_OPT_COLLECT_MAX + 1];

static const struct cmd_opt gate_opts[] = {
    {"baseline", 'b', "B|history:BRANCH[:N]",
     "the baseline: a summary JSON, a profile file or directory, a W&B ref, or "
     "history:BRANCH[:N]; several runs of one setup: repeat it",
     NULL, opt_baselines, CMD_OPT_REQUIRED | CMD_OPT_REPEATS | CMD_OPT_COLLECT},
    {"candidate", 'c', "C", "the candidate, the same kinds of input; several runs: repeat it", NULL,
     opt_candidates, CMD_OPT_REQUIRED | CMD_OPT_REPEATS | CMD_OPT_COLLECT},
    {"thresholds", 't', "NAME|FILE",
     "a shipped set (default, strict, nightly) or a thresholds file (default: default)", NULL,
     &gate_job.thresholds, 0},
    {"fail-on", 0, "fail|warn|never",
     "what fails: fail (fail 1, incomparable 4), warn (also warn and inconclusive: 1), never "
     "(exit 0); default: fail",
     NULL, &gate_job.fail_on, 0},
    {"report", 'r', "FILE", "write the markdown report here ('-': standard output)", NULL,
     &gate_job.report_out, 0},
    {"json", 0, "FILE", "write the verdict JSON here ('-': standard output)", NULL,
     &gate_job.json_out, 0},
    {"label", 'l', "NAME", "a name for this comparison, shown in the report and the JSON", NULL,
     &gate_job.label, 0},
    {"threads", 'j', "N", "read profiles on N threads (default: the number of cores)", NULL,
     &opt_threads, 0},
    {"history", 0, "URL_OR_PATH",
     "append the result's record to the history on this remote (and read it as --history-from "
     "does when that is not given)",
     NULL, &gate_job.history, 0},
    {"history-branch", 0, "B", "the history branch (default: profgate-history)", NULL,
     &gate_job.history_branch, CMD_OPT_UNDER},
    {"history-required", 0, NULL, "exit 5 when the history push fails (default: a warning)",
     &gate_job.history_required, NULL, CMD_OPT_UNDER},
    {"kind", 0, "K", "the record's kind: pr, main, nightly or manual (default: from GITHUB_*)",
     NULL, &gate_job.kind, CMD_OPT_UNDER},
    {"dashboard-url", 0, "URL",
     "where the history's dashboard is published: the report's chart links the series' page", NULL,
     &gate_job.dashboard_url, CMD_OPT_UNDER},
    {"history-from", 0, "URL_OR_PATH",
     "read the history here without appending: a history: baseline, the series' noise", NULL,
     &gate_job.history_from, 0},
    {"comment", 0, "MODE", "post the report as the PR's sticky comment: always, on-alert, never",
     NULL, &opt_comment, 0},
    {"pr", 0, "N", "the pull request to comment on (default: from GITHUB_EVENT_PATH)", NULL,
     &opt_pr, CMD_OPT_UNDER},
    {"repo", 0, "OWNER/NAME", "the repository of the pull request (default: GITHUB_REPOSITORY)",
     NULL, &opt_repo, CMD_OPT_UNDER},
};

const struct cmd_spec cmd_gate_spec = {
    "gate", "",
    "Decide pass, warn or fail for a candidate against a baseline. Unlike runs and identical\n"
    "inputs are refused (exit 4, the reason on stderr). Exit 0: pass, improved, warn or\n"
    "inconclusive; 1: fail (--fail-on warn: also warn and inconclusive; never: always 0).\n"
    "history:BRANCH[:N] is the median of the last N (5) main/nightly records of the\n"
    "candidate's series from runs on BRANCH ('*': any), read from --history-from, else from\n"
    "--history; none: exit 3, unless this run's --history record would enter the window:\n"
    "then it is the first (verdict recorded, exit 0). Only --history appends a record.",
    gate_opts, (int)PG_ARRAY_LEN(gate_opts)};

/* The pull request --comment goes to: --pr, else the event's. 0 with a note
 * on stderr when there is none or it comes from a fork (its token is read-only). */
static int64_t comment_pr(void)
{
	const char *path = getenv("GITHUB_EVENT_PATH");
	struct actions_event e;
	int64_t pr = -1;

	if (opt_pr)
		return cmd_parse_pr(opt_pr);
	memset(&e, 0, sizeof(e));
	if (path && *path && actions_event_read(path, &e) == 0) {
		pr = e.pr;
		if (e.fork && !e.workflow_run) {
			fprintf(stderr,
				"profgate: gate: a pull request from a fork gets a read-only "
				"token: no comment (docs/action.md: the workflow_run split)\n");
			pr = 0;
		}
	}
	actions_event_release(&e);
	if (pr < 0)
		fprintf(stderr, "profgate: gate: --comment: no pull request in this event (give "
				"--pr N): no comment\n");
	return pr < 0 ? 0 : pr;
}

/* gate --comment: after the verdict. Returns the delivery's exit code. */
static int gate_comment(const struct pg_buf *md, int mode, int quiet)
{
	struct cmd_comment_job cj;
	char *url = NULL;
	int rc;

	memset(&cj, 0, sizeof(cj));
	cj.pr = comment_pr();
	if (cj.pr == 0 || mode == GITHUB_COMMENT_NEVER)
		return PG_EXIT_OK;
	cj.md = md->ptr;
	cj.md_len = md->len;
	cj.origin = "the report";
	cj.repo = opt_repo;
	cj.mode = mode;
	cj.indent = quiet ? NULL : "  ";
	rc = cmd_comment_deliver(&cj, &url);
	free(url);
	return rc;
}

int cmd_gate(int argc, char **argv)
{
	const char **pos = pg_xcalloc((size_t)argc + 1, sizeof(char *));
	struct cmd_gate_job *job = &gate_job;
	int n_pos, rc, stop;
	struct pg_buf md = PG_BUF_INIT;
	enum github_comment_mode mode = GITHUB_COMMENT_NEVER;

	*job = (struct cmd_gate_job){.cmd = "gate", .verdict_exit = 1};
	opt_threads = opt_comment = opt_pr = opt_repo = NULL;
	stop = cmd_parse_or_help(&cmd_gate_spec, argc, argv, pos, &n_pos, NULL, &rc);
	free(pos);
	if (stop)
		return cmd_finish(rc);
	while (opt_baselines[job->n_baselines])
		job->n_baselines++;
	while (opt_candidates[job->n_candidates])
		job->n_candidates++;
	job->baselines = opt_baselines;
	job->candidates = opt_candidates;
	job->baseline = opt_baselines[0];
	job->candidate = opt_candidates[0];
	if (n_pos > 0 || !job->baseline || !job->candidate) {
		pg_error_set(PG_EUSAGE, "gate: give --baseline B and --candidate C (see 'profgate "
					"gate --help')");
		return cmd_error(PG_EXIT_USAGE);
	}
	if (cmd_parse_threads("gate", opt_threads, &job->threads))
		return cmd_error(PG_EXIT_USAGE);
	if (job->fail_on && cmd_fail_on_check(job->fail_on)) {
		pg_error_set(PG_EUSAGE, "gate: --fail-on '%s': give fail, warn or never",
			     job->fail_on);
		return cmd_error(PG_EXIT_USAGE);
	}
	if (job->kind && !history_kind_valid(job->kind)) {
		pg_error_set(PG_EUSAGE, "gate: --kind '%s': give pr, main, nightly or manual",
			     job->kind);
		return cmd_error(PG_EXIT_USAGE);
	}
	if (job->history_branch && history_branch_check(job->history_branch))
		return cmd_error(PG_EXIT_USAGE);
	if (!job->history && (job->history_required || job->kind || job->dashboard_url)) {
		pg_error_set(PG_EUSAGE,
			     "gate: --history-required, --kind and --dashboard-url go with "
			     "--history URL_OR_PATH");
		return cmd_error(PG_EXIT_USAGE);
	}
	if (!cmd_gate_history_read(job) && job->history_branch) {
		pg_error_set(PG_EUSAGE, "gate: --history-branch goes with --history URL_OR_PATH or "
					"--history-from URL_OR_PATH");
		return cmd_error(PG_EXIT_USAGE);
	}
	if (job->dashboard_url && !report_url_ok(job->dashboard_url)) {
		pg_error_set(PG_EUSAGE,
			     "gate: --dashboard-url '%s': give an http(s) URL of plain characters "
			     "without a trailing slash",
			     job->dashboard_url);
		return cmd_error(PG_EXIT_USAGE);
	}
	if (opt_comment && github_comment_mode_parse(opt_comment, &mode)) {
		pg_error_set(PG_EUSAGE, "gate: --comment '%s': give always, on-alert or never",
			     opt_comment);
		return cmd_error(PG_EXIT_USAGE);
	}
	if (!opt_comment && (opt_pr || opt_repo)) {
		pg_error_set(PG_EUSAGE, "gate: --pr and --repo go with --comment MODE");
		return cmd_error(PG_EXIT_USAGE);
	}
	if (opt_pr && cmd_parse_pr(opt_pr) < 0) {
		pg_error_set(PG_EUSAGE, "gate: --pr '%s' is not a pull request number", opt_pr);
		return cmd_error(PG_EXIT_USAGE);
	}
	if (cmd_gate_baseline_runs(job, "gate: --baseline"))
		return cmd_error(PG_EXIT_USAGE);
	if (job->baseline_history && !cmd_gate_history_read(job)) {
		free(job->baseline_ref);
		pg_error_set(PG_EUSAGE,
			     "gate: --baseline %s reads the history: give --history-from "
			     "URL_OR_PATH (to read it only) or --history URL_OR_PATH (to append "
			     "this run too)",
			     job->baseline);
		return cmd_error(PG_EXIT_USAGE);
	}
	job->quiet = (job->json_out && strcmp(job->json_out, "-") == 0) ||
		     (job->report_out && strcmp(job->report_out, "-") == 0);
	if (opt_comment)
		job->keep_md = &md;
	rc = cmd_gate_run(job);
	free(job->baseline_ref);
	if (opt_comment && rc != PG_EXIT_USAGE && rc != PG_EXIT_INPUT) {
		/* a comment asked for and not delivered outranks the verdict's code */
		int c = gate_comment(&md, (int)mode, job->quiet);
		if (c != PG_EXIT_OK)
			rc = c;
	}
	pg_buf_release(&md);
	return cmd_finish(rc);
}
