/*
 * Markdown safety and the summary round trip: hostile profile text cannot
 * mention, open HTML or break a table; a summary read back and written again
 * is byte-identical; the reader names the file and key it refuses. The
 * comparison report renders hand-made gate results: a fail with attribution
 * and interval, a refusal, a step that could not be compared, a capped table
 * and hostile names in every place a name can land.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/analyze/analyze.h"
#include "../../src/gate/gate.h"
#include "../../src/report/report.h"
#include "../../src/summary/summary.h"
#include "../../src/trace/trace.h"

static void test_code_span(void **state)
{
	struct pg_buf b = PG_BUF_INIT;
	(void)state;

	report_code(&b, "a|b`c\nd@team <script>", 100);
	assert_string_equal(b.ptr, "`a\\|b'c d@team <script>`");
	pg_buf_reset(&b);
	/* cut on a UTF-8 boundary: "é" is two bytes */
	report_code(&b, "ab\xc3\xa9z", 3);
	assert_string_equal(b.ptr, "`ab…`");
	/* bytes that are not UTF-8 and bidirectional controls become U+FFFD */
	pg_buf_reset(&b);
	report_code(&b,
		    "a\xff"
		    "b\xe2\x80\xae"
		    "c\xe2\x81\xa6"
		    "d\xc3\xa9",
		    100);
	assert_string_equal(b.ptr, "`a\xef\xbf\xbd"
				   "b\xef\xbf\xbd"
				   "c\xef\xbf\xbd"
				   "d\xc3\xa9`");
	pg_buf_reset(&b);
	report_text(&b, "x\xe2\x80\x8fy\xc0", 100);
	assert_string_equal(b.ptr, "x\xef\xbf\xbd"
				   "y\xef\xbf\xbd");
	pg_buf_release(&b);
}

static void test_text(void **state)
{
	struct pg_buf b = PG_BUF_INIT;
	(void)state;

	report_text(&b, "@octocat <img src=x> | *bold* #1 & [x](y)", 200);
	assert_null(strstr(b.ptr, "<img"));
	assert_null(strstr(b.ptr, "@o")); /* '@' is followed by a zero-width joiner */
	assert_null(strstr(b.ptr, "#1"));
	assert_non_null(strstr(b.ptr, "&lt;img"));
	assert_non_null(strstr(b.ptr, "\\|"));
	assert_non_null(strstr(b.ptr, "\\*bold\\*"));
	assert_non_null(strstr(b.ptr, "&amp;"));
	pg_buf_release(&b);
}

static void test_time(void **state)
{
	struct pg_buf b = PG_BUF_INIT;
	(void)state;

	report_time(&b, 812.04);
	pg_buf_adds(&b, ",");
	report_time(&b, 3412.0);
	pg_buf_adds(&b, ",");
	report_time(&b, 1205000.0);
	assert_string_equal(b.ptr, "812.0 us,3.41 ms,1.205 s");
	pg_buf_release(&b);
}

/* A small trace with a hostile kernel name, summarized, written, read, written. */
static void test_round_trip_and_report(void **state)
{
	struct trace t;
	struct summary s, r;
	struct analyze_options o;
	struct pg_buf a = PG_BUF_INIT, b2 = PG_BUF_INIT, md = PG_BUF_INIT;
	char path[256];
	(void)state;

	trace_init(&t);
	uint32_t f = trace_file_add(&t, "x.json");
	struct trace_device d = {TRACE_DEV_GPU, 0, -1, f, 0, 0, 0, 0};
	uint32_t dev = trace_device_add(&t, &d);
	struct trace_track tr;
	memset(&tr, 0, sizeof(tr));
	tr.device = dev;
	tr.kind = TRACE_TRACK_STREAM;
	uint32_t k = trace_track_add(&t, &tr);
	const char *names[] = {"@everyone <b>|boom|</b> `x`", "ncclKernel_AllReduce", "gemm"};
	for (int i = 0; i < 30; i++) {
		struct trace_event *e = trace_event_add(&t);
		e->ts_ns = i * 1000;
		e->dur_ns = 700;
		e->name = trace_intern_cstr(&t, names[i % 3]);
		e->track = k;
		e->cat = trace_cat_intern(&t, "kernel", 6);
		e->ph = 'X';
		trace_event_commit(&t, e);
	}
	analyze_options_init(&o);
	o.version = "test";
	summary_init(&s);
	analyze_summarize(&t, &o, &s);
	summary_write_json(&s, &a);
	snprintf(path, sizeof(path), "%s/pg-report-%d.json",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	assert_int_equal(pg_write_file_atomic(path, a.ptr, a.len), 0);
	assert_int_equal(summary_read_json(path, &r), 0);
	summary_write_json(&r, &b2);
	assert_int_equal(a.len, b2.len);
	assert_memory_equal(a.ptr, b2.ptr, a.len);

	report_summary_md(&r, &md);
	assert_non_null(strstr(md.ptr, "# profgate report"));
	/* the hostile name only ever appears as one whole code span (GitHub neither
	 * links mentions nor renders HTML inside code), with its pipes escaped */
	const char *span = "`@everyone <b>\\|boom\\|</b> 'x'`";
	int spans = 0, raw = 0;
	for (const char *p = md.ptr; (p = strstr(p, span)); p++)
		spans++;
	for (const char *p = md.ptr; (p = strstr(p, "@everyone")); p++)
		raw++;
	assert_true(spans > 0);
	assert_int_equal(spans, raw);
	/* no host threads, so no host view and no Host section */
	assert_null(r.host.window);
	assert_null(strstr(md.ptr, "## Host"));

	/* the reader refuses a wrong schema and a bad type, naming file and key */
	const char *bad1 = "{\"schema\": \"profile_summary.v2\"}";
	assert_int_equal(pg_write_file_atomic(path, bad1, strlen(bad1)), 0);
	struct summary z;
	assert_int_equal(summary_read_json(path, &z), PG_EUNSUPP);
	assert_non_null(strstr(pg_error_last(), "profile_summary.v2"));
	const char *bad2 = "{\"schema\": \"profgate.summary/1\", \"source\": {\"files\": []}, "
			   "\"identity\": {\"basis\": 7}}";
	assert_int_equal(pg_write_file_atomic(path, bad2, strlen(bad2)), 0);
	assert_int_equal(summary_read_json(path, &z), PG_EFORMAT);
	assert_non_null(strstr(pg_error_last(), "basis"));
	unlink(path);

	summary_release(&s);
	summary_release(&r);
	pg_buf_release(&a);
	pg_buf_release(&b2);
	pg_buf_release(&md);
	trace_release(&t);
}

/* A family record made by hand, with its exact total. */
static void add_fam(struct summary *s, const char *name, const char *cat, double us_total)
{
	s->families = pg_xrealloc(s->families, (s->n_families + 1) * sizeof(*s->families));
	s->families[s->n_families++] = (struct sum_family){.family = pg_xstrdup(name),
							   .category = pg_xstrdup(cat),
							   .count_total = 2,
							   .us_total = us_total};
}

/*
 * Two GPUs, two steady steps of 100 us: gpu0 works in both (compute 160 of
 * 200 us, its communication all under compute), gpu1 only outside them. The
 * time split is gpu0's alone and adds up to 100 %; gpu1's row says it had no
 * steady work; the families (80 us per step each, all-reduce beside matmul)
 * add up to 160 % of the step, and the report says so and why. Without
 * steps, family shares are null and shown as such. Through the JSON and back.
 */
static void test_shares_report(void **state)
{
	struct summary s, r;
	struct pg_buf js = PG_BUF_INIT, md = PG_BUF_INIT;
	(void)state;

	summary_init(&s);
	s.profgate_version = pg_xstrdup("test");
	s.basis = pg_xstrdup(SUMMARY_BASIS_TIMELINE);
	s.steps_source = pg_xstrdup("profiler-step");
	s.n_devices = 2;
	s.devices = pg_xcalloc(2, sizeof(*s.devices));
	for (int d = 0; d < 2; d++) {
		s.devices[d].kind = pg_xstrdup("gpu");
		s.devices[d].index = d;
		s.devices[d].rank = -1;
	}
	s.devices[0].steady = (struct sum_split){.wall_us = 200,
						 .busy_us = 160,
						 .idle_us = 40,
						 .compute_us = 160,
						 .comm_us = 80,
						 .kernel_sum_us = 240};
	s.devices[0].all = s.devices[0].steady;
	s.devices[1].all =
	    (struct sum_split){.wall_us = 30, .busy_us = 30, .compute_us = 30, .kernel_sum_us = 30};
	s.n_steps = 2;
	s.steps = pg_xcalloc(2, sizeof(*s.steps));
	for (int i = 0; i < 2; i++) {
		s.steps[i] = (struct sum_step){i, 100, -1, pg_xcalloc(2, sizeof(double)), 1};
		s.steps[i].device_us[0] = 100;
		s.steps[i].device_us[1] = -1;
	}
	s.basis_steady_steps = 2;
	add_fam(&s, "all-reduce", "communication", 160);
	add_fam(&s, "matmul", "compute", 160);
	summary_finalize(&s);
	assert_int_equal(s.basis_devices, 1);
	assert_true(s.mean.compute_share == 0.8 && s.mean.idle_share == 0.2);
	assert_true(s.mean.comm_overlap_share == 1);
	assert_true(s.families[0].share == 0.8 && s.families[1].share == 0.8);
	summary_write_json(&s, &js);
	assert_int_equal(summary_parse_json(js.ptr, js.len, "s.json", &r), 0);
	report_summary_md(&r, &md);
	assert_non_null(strstr(md.ptr, "(mean over the 1 of 2 devices with work in the steady "
				       "steps): compute 80.0%, exposed communication 0.0%, exposed "
				       "memory copies 0.0%, idle 20.0%."));
	assert_non_null(strstr(md.ptr, "| `gpu1` | no work in the steady steps |"));
	assert_non_null(strstr(md.ptr, "| `gpu0` (worst) | 200.0 us | 80.0% |"));
	assert_non_null(strstr(md.ptr, "The families add up to 160.0% of the step, not 100%"));
	assert_non_null(strstr(md.ptr, "each count their time"));
	summary_release(&r);
	pg_buf_release(&md);
	pg_buf_release(&js);

	/* no steady steps: no step time to take shares of */
	s.steps[0].steady = s.steps[1].steady = 0;
	summary_finalize(&s);
	assert_true(s.families[0].share < 0);
	summary_write_json(&s, &js);
	assert_non_null(strstr(js.ptr, "\"share\": null"));
	assert_int_equal(summary_parse_json(js.ptr, js.len, "s.json", &r), 0);
	report_summary_md(&r, &md);
	assert_non_null(strstr(md.ptr, "| all-reduce | communication | 80.0 us | – |"));
	assert_non_null(strstr(md.ptr, "the families have no share"));
	assert_null(strstr(md.ptr, "The families add up to"));
	summary_release(&r);
	summary_release(&s);
	pg_buf_release(&md);
	pg_buf_release(&js);
}

/* A host profile made by hand: one step thread, a data-loader thread with a
 * hostile name, a hostile op, and the host-bound finding. */
static void host_summary(struct summary *s)
{
	struct sum_host *h = &s->host;

	summary_init(s);
	s->profgate_version = pg_xstrdup("test");
	s->basis = pg_xstrdup(SUMMARY_BASIS_HOST);
	s->device_kind = pg_xstrdup("cpu");
	s->steps_source = pg_xstrdup("profiler-step");
	s->host_count = 1;
	s->steps_captured = 25;
	s->steady.count = 25;
	s->steady.median_us = 20500;
	s->steady.p90_us = 21000;
	h->window = pg_xstrdup("steps");
	h->step_threads = 1;
	h->step_median_us = 20500;
	h->wall_us_per_step = 20000;
	h->busy_us_per_step = 15000;
	h->idle_us_per_step = 5000;
	h->busy_share = 0.75;
	h->python_us_per_step = 1000;
	h->launch_us_per_step = 0;
	h->n_families = 2;
	h->families = pg_xcalloc(2, sizeof(*h->families));
	h->families[0] = (struct sum_family){.family = pg_xstrdup("matmul"),
					     .category = pg_xstrdup("host"),
					     .count_per_step = 11,
					     .us_per_step = 12000,
					     .share = 0.6};
	h->families[1] = (struct sum_family){.family = pg_xstrdup("data-loading"),
					     .category = pg_xstrdup("host"),
					     .count_per_step = 1,
					     .us_per_step = 2000,
					     .share = 0.1};
	h->n_ops = 2;
	h->ops = pg_xcalloc(2, sizeof(*h->ops));
	h->ops[0] = (struct sum_op){.name = pg_xstrdup("aten::mm"),
				    .family = pg_xstrdup("matmul"),
				    .category = pg_xstrdup("host"),
				    .count_per_step = 5,
				    .self_us_per_step = 12000,
				    .total_us_per_step = 12000};
	h->ops[1] = (struct sum_op){.name = pg_xstrdup("@everyone|op`"),
				    .family = pg_xstrdup("other"),
				    .category = pg_xstrdup("host"),
				    .count_per_step = 2,
				    .self_us_per_step = 3000,
				    .total_us_per_step = 3000};
	h->n_threads = 2;
	h->threads = pg_xcalloc(2, sizeof(*h->threads));
	h->threads[0] = (struct sum_thread){.name = pg_xstrdup("tid 1"),
					    .role = pg_xstrdup("step"),
					    .busy_us_per_step = 15000,
					    .count_per_step = 400};
	h->threads[1] = (struct sum_thread){.name = pg_xstrdup("worker <b>|1</b>"),
					    .role = pg_xstrdup("data-loader"),
					    .busy_us_per_step = 4000,
					    .count_per_step = 30};
	s->n_candidates = 1;
	s->candidates = pg_xcalloc(1, sizeof(*s->candidates));
	s->candidates[0] = (struct sum_candidate){pg_xstrdup("host-bound"),
						  pg_xstrdup("Launch less from the host"),
						  pg_xstrdup("launches cost @team 80%")};
}

/* The Host section carries the host view's numbers, escaped names and the
 * host-bound finding; a host profile is not "0 devices"; no host view, no
 * section. */
static void test_host_section(void **state)
{
	struct summary s;
	struct pg_buf md = PG_BUF_INIT;
	(void)state;

	host_summary(&s);
	report_summary_md(&s, &md);
	assert_non_null(strstr(md.ptr, "steps from `profiler-step`) in a host profile (CPU)"));
	assert_non_null(strstr(md.ptr, "| devices | none: a host profile (CPU) |"));
	assert_null(strstr(md.ptr, "0 devices"));
	assert_null(strstr(md.ptr, "0 × cpu"));
	assert_non_null(
	    strstr(md.ptr, "## Host\n\n**Host-bound**: launches cost @\xe2\x80\x8dteam 80%"));
	assert_non_null(strstr(md.ptr, "the median step marker spans 20.50 ms:"));
	assert_non_null(
	    strstr(md.ptr, "| 20.00 ms | 15.00 ms | 5.00 ms | 75.0% | 1.00 ms | 0.0 us |"));
	assert_non_null(strstr(md.ptr, "| matmul | 12.00 ms | 60.0% | 11.0 |\n"
				       "| data-loading | 2.00 ms | 10.0% | 1.0 |\n"));
	assert_non_null(strstr(md.ptr, "| host op (2 of 2) |"));
	assert_non_null(strstr(md.ptr, "| `aten::mm` | matmul | 12.00 ms | 60.0% | 5.0 |"));
	assert_non_null(strstr(md.ptr, "| `@everyone\\|op'` | other | 3.00 ms | 15.0% | 2.0 |"));
	assert_non_null(strstr(md.ptr, "can add past 100%"));
	assert_non_null(strstr(md.ptr, "Data loading: 2.00 ms per step (10.0% of the step thread); "
				       "1 data-loader thread busy 4.00 ms per step."));
	assert_non_null(strstr(md.ptr, "| `tid 1` | step | 15.00 ms | 400.0 |"));
	assert_non_null(strstr(md.ptr, "| `worker <b>\\|1</b>` | data-loader | 4.00 ms | 30.0 |"));
	assert_null(strstr(md.ptr, "@everyone|"));

	/* without step markers there is no wall: no share column, no note */
	free(s.host.window);
	s.host.window = pg_xstrdup("capture");
	s.host.wall_us_per_step = s.host.busy_us_per_step = s.host.idle_us_per_step = -1;
	s.host.busy_share = -1;
	pg_buf_reset(&md);
	report_summary_md(&s, &md);
	assert_non_null(strstr(md.ptr, "No host step markers"));
	assert_non_null(strstr(md.ptr, "| matmul | 12.00 ms | 11.0 |"));
	assert_non_null(strstr(md.ptr, "| `aten::mm` | matmul | 12.00 ms | 5.0 |"));
	assert_non_null(strstr(md.ptr, "Data loading: 2.00 ms per step; 1 data-loader thread"));
	assert_null(strstr(md.ptr, "share of step thread"));
	assert_null(strstr(md.ptr, "past 100%"));

	/* without a host view the section is gone, and only it */
	free(s.host.window);
	s.host.window = NULL;
	pg_buf_reset(&md);
	report_summary_md(&s, &md);
	assert_null(strstr(md.ptr, "## Host"));
	assert_null(strstr(md.ptr, "Data loading"));
	assert_non_null(strstr(md.ptr, "## What to try next"));
	summary_release(&s);
	pg_buf_release(&md);
}

/* ---- the comparison report ---- */

static struct gate_rule rule_step = {(char *)"step.median_us",
				     GATE_LOWER_IS_BETTER,
				     {0.02, 0, 1, 0},
				     {0.05, 0, 1, 0},
				     -1,
				     1,
				     -1,
				     -1,
				     0,
				     {0, 0, 0, 0},
				     0,
				     -1};
static struct gate_rule rule_share = {(char *)"breakdown.idle_share",
				      GATE_LOWER_IS_BETTER,
				      {0, 0.02, 0, 1},
				      {0, 0.05, 0, 1},
				      -1,
				      0,
				      -1,
				      -1,
				      1,
				      {0, 0, 0, 0},
				      0,
				      -1};
static struct gate_rule rule_op = {(char *)"op.*.us_per_step",
				   GATE_LOWER_IS_BETTER,
				   {0.1, 0, 1, 0},
				   {0.25, 0, 1, 0},
				   0.01,
				   0,
				   -1,
				   -1,
				   2,
				   {0, 0, 0, 0},
				   0,
				   -1};
static struct gate_rule rule_info = {(char *)"breakdown.*",
				     GATE_INFO,
				     {0, 0, 0, 0},
				     {0, 0, 0, 0},
				     -1,
				     0,
				     -1,
				     -1,
				     3,
				     {0, 0, 0, 0},
				     0,
				     -1};
static char *identity_fields[] = {(char *)"device_kind", (char *)"device_count"};

static struct gate_metric_result metric(const char *name, enum gate_kind kind, const char *subject,
					double b, double c, const struct gate_rule *rule,
					enum gate_verdict v)
{
	struct gate_metric_result m;

	memset(&m, 0, sizeof(m));
	m.name = (char *)name;
	m.kind = kind;
	m.subject = (char *)subject;
	m.has_baseline = m.has_candidate = 1;
	m.baseline = b;
	m.candidate = c;
	m.delta = c - b;
	m.delta_share = b != 0 ? (c - b) / b : NAN;
	m.step_share = -1;
	m.rule = rule;
	m.verdict = v;
	m.p_value = NAN;
	return m;
}

/* Two summaries and a comparable result with nothing in it yet. */
static void result_init(struct gate_result *r, struct summary *b, struct summary *c,
			struct gate_thresholds *th)
{
	summary_init(b);
	summary_init(c);
	b->device_count = c->device_count = 8;
	b->device_kind = c->device_kind = (char *)"NVIDIA H100";
	b->framework = c->framework = (char *)"jax";
	b->steady.count = c->steady.count = 12;
	b->steady.median_us = 41200;
	c->steady.median_us = 44600;
	b->steps_captured = c->steps_captured = 15;
	memset(th, 0, sizeof(*th));
	th->name = (char *)"default";
	th->identity = identity_fields;
	th->n_identity = 2;
	memset(r, 0, sizeof(*r));
	r->provenance = "comparable";
	r->baseline = b;
	r->candidate = c;
	r->thresholds = th;
	r->step_p_value = NAN;
	r->in.baseline_path = "base/summary.json";
	r->in.candidate_path = "cand/summary.json";
	r->in.thresholds_origin = "built-in default";
	r->in.version = "0.1.0";
}

/* Borrowed strings only: drop the pointers before summary_release(). */
static void summaries_release(struct summary *b, struct summary *c)
{
	b->device_kind = c->device_kind = NULL;
	b->framework = c->framework = NULL;
	summary_release(b);
	summary_release(c);
}

static const char *after(const char *md, const char *needle)
{
	const char *p = strstr(md, needle);
	return p ? p : md + strlen(md);
}

/* Every table: each row has as many unescaped '|' as its header. */
static void assert_tables_intact(const char *md)
{
	int header = -1, tables = 0;

	for (const char *line = md; *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		if (len && line[0] == '|') {
			int pipes = 0;
			for (size_t i = 0; i < len; i++)
				if (line[i] == '|' && (i == 0 || line[i - 1] != '\\'))
					pipes++;
			if (header < 0) {
				header = pipes;
				tables++;
			} else if (pipes != header) {
				fail_msg("table row with %d cells' pipes, header has %d: %.*s",
					 pipes, header, (int)len, line);
			}
		} else {
			header = -1;
		}
		line += len + (end ? 1 : 0);
	}
	assert_true(tables > 0);
}

/* Occurrences of needle outside inline code spans (GitHub neither links
 * mentions nor renders HTML inside code). An escaped backtick opens nothing. */
static int outside_code(const char *md, const char *needle)
{
	size_t k = strlen(needle);
	int in = 0, n = 0;

	for (const char *p = md; *p; p++) {
		if (*p == '\n')
			in = 0;
		else if (*p == '`' && (p == md || p[-1] != '\\'))
			in = !in;
		else if (!in && strncmp(p, needle, k) == 0)
			n++;
	}
	return n;
}

static void test_compare_fail(void **state)
{
	struct summary b, c;
	struct gate_thresholds th;
	struct gate_result r;
	struct pg_buf md = PG_BUF_INIT, again = PG_BUF_INIT;
	(void)state;

	result_init(&r, &b, &c, &th);
	r.verdict = GATE_FAIL;
	r.in.label = "resnet50 nightly";
	r.has_step = 1;
	r.step_baseline_us = 41200;
	r.step_candidate_us = 44600;
	r.step_delta_us = 3400;
	r.step_delta_share = 3400.0 / 41200;
	r.has_interval = 1;
	r.interval_lo_share = 0.069;
	r.interval_hi_share = 0.094;
	r.confidence = 0.95;
	r.step_tested = 1;
	r.step_p_value = 0.004;
	r.step_n_baseline = r.step_n_candidate = 12;
	r.step_samples = "steps";
	r.baseline_runs = 3;
	r.candidate_runs = 1;

	struct gate_metric_result m[10];
	m[0] = metric("breakdown.compute_share", GATE_K_BREAKDOWN, "compute", 0.8, 0.76, &rule_info,
		      GATE_PASS);
	m[1] = metric("breakdown.idle_share", GATE_K_BREAKDOWN, "idle", 0.05, 0.075, &rule_share,
		      GATE_WARN);
	m[2] = metric("family.attention.us_per_step", GATE_K_FAMILY, "attention", 20000, 26000,
		      &rule_op, GATE_FAIL);
	m[3] = metric("family.norm.us_per_step", GATE_K_FAMILY, "norm", 3000, 3010, &rule_op,
		      GATE_PASS);
	m[4] = metric("op.fusion.123.us_per_step", GATE_K_OP, "fusion.123", 8000, 9000, &rule_op,
		      GATE_WARN);
	m[5] =
	    metric("op.gemm.us_per_step", GATE_K_OP, "gemm", 6000, 5000, &rule_op, GATE_IMPROVED);
	m[6] =
	    metric("op.newkernel.us_per_step", GATE_K_OP, "newkernel", 0, 700, &rule_op, GATE_NEW);
	m[6].has_baseline = 0;
	m[6].delta_share = NAN;
	m[6].step_share = 700 / 44600.0;
	m[7] =
	    metric("op.oldkernel.us_per_step", GATE_K_OP, "oldkernel", 500, 0, &rule_op, GATE_GONE);
	m[7].has_candidate = 0;
	m[8] = metric("step.median_us", GATE_K_STEP, NULL, 41200, 44600, &rule_step, GATE_FAIL);
	m[8].tested = 1;
	m[8].p_value = 0.004;
	m[8].noise_from = "runs";
	m[9] = metric("step.p90_us", GATE_K_STEP, NULL, 43000, 43500, &rule_step, GATE_PASS);
	r.metrics = m;
	r.n_metrics = 10;
	r.n_below_floor = 7;

	struct gate_attribution a[] = {
	    {GATE_ATTR_FAMILY, (char *)"attention", 6000,
	     (char *)"fusion.123\x1f"
		     "fusion.7",
	     NULL, 9},
	    {GATE_ATTR_BREAKDOWN, (char *)"exposed communication", 1500, NULL, NULL, 9},
	    {GATE_ATTR_BREAKDOWN, (char *)"idle", 600, NULL, NULL, 9},
	    {GATE_ATTR_OP, (char *)"tiny", 10, NULL, NULL, 9},
	};
	r.attribution = a;
	r.n_attribution = 4;
	r.attribution_z = 2;
	r.attribution_remainder_us = 3400 - 6000 - 1500 - 600;
	struct gate_quality_hit q = {
	    1, (char *)"event-cap", (char *)"the trace stops at 1000000 events", GATE_INCONCLUSIVE};
	r.quality = &q;
	r.n_quality = 1;
	const double bb[4] = {33000, 4000, 200, 4000}, bc[4] = {34000, 5500, 200, 4900};
	memcpy(r.bd_baseline_us, bb, sizeof(bb));
	memcpy(r.bd_candidate_us, bc, sizeof(bc));

	report_compare_md(&r, &md);
	const char *s = md.ptr;
	assert_true(strncmp(s, "## profgate: FAIL — resnet50 nightly\n\n", 38) == 0);
	assert_non_null(strstr(s, "Steady median step: 41.20 ms → 44.60 ms (+3.40 ms, +8.3%, 95% "
				  "interval +6.9% to +9.4%, p = 0.004, 3 vs 1 run, 12 vs 12 steps; "
				  "noise from the spread between runs).\n"));
	assert_non_null(strstr(s, "Where the time went: +3.40 ms per step: +6.00 ms attention "
				  "(z 9.0; `fusion.123`, `fusion.7`), +1.50 ms exposed "
				  "communication (z 9.0), +600.0 us idle (z 9.0), +10.0 us `tiny` "
				  "(z 9.0); the other parts: -4.70 ms together, none beyond its "
				  "noise (listed: |z| of at least 2).\n"));
	assert_non_null(strstr(s, "Verdicts: 2 fail, 2 warn, 1 improved, 1 new, 1 gone, 3 pass; 7 "
				  "under the floor on both sides, not judged.\n"));
	assert_non_null(
	    strstr(s, "| metric | baseline | candidate | change | limit | verdict |\n"));
	assert_non_null(strstr(s, "| `step.median_us` | 41.20 ms | 44.60 ms | +8.3% (+3.40 ms) | "
				  "warn +2%, fail +5% | **fail** (p = 0.004) |\n"));
	assert_non_null(strstr(s, "| `breakdown.idle_share` | 5.0% | 7.5% | +2.5 pp | warn +2 pp, "
				  "fail +5 pp | **warn** |\n"));
	assert_non_null(strstr(s,
			       "| `breakdown.compute_share` | 80.0% | 76.0% | -4.0 pp | — (info) "
			       "| pass |\n"));
	assert_non_null(strstr(s, "| `op.newkernel.us_per_step` | — | 700.0 us | — | warn +10%, "
				  "fail +25% | new |\n"));
	/* most severe first, the passing step and breakdown rows last; other passes counted */
	const char *table = after(s, "| metric |");
	assert_true(strstr(table, "`step.median_us") < strstr(table, "`family.attention"));
	assert_true(strstr(table, "`family.attention") < strstr(table, "`breakdown.idle_share"));
	assert_true(strstr(table, "`breakdown.idle_share") < strstr(table, "`op.fusion.123"));
	assert_true(strstr(table, "`op.fusion.123") < strstr(table, "`op.gemm"));
	assert_true(strstr(table, "`op.gemm") < strstr(table, "`op.newkernel"));
	assert_true(strstr(table, "`op.oldkernel") < strstr(table, "`breakdown.compute_share"));
	assert_true(strstr(table, "`op.oldkernel") < strstr(table, "`step.p90_us"));
	assert_true(strstr(table, "`step.p90_us") < strstr(table, "`breakdown.compute_share"));
	assert_null(strstr(table, "`family.norm"));
	assert_non_null(strstr(s, "1 more metric passed.\n"));
	/* breakdown before and after */
	assert_non_null(strstr(s, "### Breakdown per step (mean over devices)\n"));
	assert_non_null(
	    strstr(s, "| exposed communication | 4.00 ms | 5.50 ms | +1.50 ms | 9.7% → 12.3% |\n"));
	assert_non_null(strstr(s, "| total | 41.20 ms | 44.60 ms | +3.40 ms | |\n"));
	/* movers: families then ops, largest first; new and gone apart */
	const char *reg = after(s, "### Top regressed"), *imp = after(s, "### Top improved");
	assert_true(reg < imp);
	assert_true(strstr(reg, "| family | attention | 20.00 ms | 26.00 ms | +30.0% (+6.00 ms)") <
		    strstr(reg, "| op | `fusion.123` |"));
	assert_true(strstr(reg, "| op | `fusion.123` |") < imp);
	assert_non_null(strstr(imp, "| op | `gemm` | 6.00 ms | 5.00 ms | -16.7% (-1.00 ms) | "
				    "improved |"));
	assert_true(strstr(s, "`norm`") == NULL &&
		    strstr(reg, "norm") == NULL); /* +10 us: too small */
	assert_non_null(strstr(s, "| new | op | `newkernel` | 700.0 us | 1.6% |\n"));
	assert_non_null(strstr(s, "| gone | op | `oldkernel` | 500.0 us | — |\n"));
	/* provenance and quality */
	assert_non_null(strstr(s, "Identity matched on `device_kind`, `device_count`.\n"));
	assert_non_null(strstr(s, "- baseline: `base/summary.json`; 12 steady steps of 15 "
				  "captured, 8 devices (NVIDIA H100), jax\n"));
	assert_non_null(strstr(s, "- thresholds: `default` from built-in default\n"));
	assert_non_null(strstr(s, "- candidate: `event-cap`: the trace stops at 1000000 events "
				  "(action: inconclusive)\n"));
	/* section order */
	assert_true(strstr(s, "Where the time went") < strstr(s, "### Metrics"));
	assert_true(strstr(s, "### Metrics") < strstr(s, "### Breakdown"));
	assert_true(strstr(s, "### Top improved") < strstr(s, "### New and gone"));
	assert_true(strstr(s, "### New and gone") < strstr(s, "### Provenance"));
	assert_true(strstr(s, "### Provenance") < strstr(s, "### Quality warnings"));
	for (const char *p = s; (p = strstr(p, "nan"));
	     p++) /* no NaN printed ("Provenance" is fine) */
		assert_true(p > s && p[-1] >= 'a' && p[-1] <= 'z');
	assert_tables_intact(s);
	/* deterministic */
	report_compare_md(&r, &again);
	assert_string_equal(md.ptr, again.ptr);

	summaries_release(&b, &c);
	pg_buf_release(&md);
	pg_buf_release(&again);
}

static void test_compare_incomparable(void **state)
{
	struct summary b, c;
	struct gate_thresholds th;
	struct gate_result r;
	struct pg_buf md = PG_BUF_INIT;
	(void)state;

	result_init(&r, &b, &c, &th);
	r.verdict = GATE_INCOMPARABLE;
	r.provenance = "incomparable";
	struct gate_field_diff d[] = {
	    {(char *)"device_kind", (char *)"NVIDIA H100", (char *)"NVIDIA A100"},
	    {(char *)"device_count", (char *)"8", (char *)"16"},
	};
	r.diff = d;
	r.n_diff = 2;

	report_compare_md(&r, &md);
	const char *s = md.ptr;
	assert_true(strncmp(s, "## profgate: INCOMPARABLE\n\n", 27) == 0);
	assert_non_null(strstr(s, "**Refused: the runs are not comparable.** 2 identity fields "
				  "differ: `device_kind` (`NVIDIA H100` vs `NVIDIA A100`), "
				  "`device_count` (`8` vs `16`). See Provenance below.\n"));
	assert_non_null(strstr(s, "### Metrics\n\nNo metrics were compared.\n"));
	assert_non_null(strstr(s, "| field | baseline | candidate |\n|---|---|---|\n"
				  "| `device_kind` | `NVIDIA H100` | `NVIDIA A100` |\n"
				  "| `device_count` | `8` | `16` |\n"));
	assert_null(strstr(s, "Steady median step"));
	assert_null(strstr(s, "Where the time went"));
	assert_null(strstr(s, "### Breakdown"));
	assert_null(strstr(s, "### Top"));
	assert_null(strstr(s, "Identity matched"));
	assert_null(strstr(s, "### Quality"));
	assert_tables_intact(s);

	/* identical inputs: said as such */
	r.provenance = "identical-inputs";
	r.in.baseline_sha256 = r.in.candidate_sha256 = "0123456789abcdef0123";
	r.n_diff = 0;
	pg_buf_reset(&md);
	report_compare_md(&r, &md);
	assert_non_null(strstr(md.ptr, "The baseline and candidate inputs are byte-identical "
				       "(sha256 `0123456789ab…`)"));
	assert_non_null(strstr(md.ptr, "The two inputs are byte-identical.\n"));
	/* ... naming what matched when the gate says (the profiles inside two summaries) */
	struct gate_field_diff same = {(char *)"profile sha256", (char *)"da79a9c430a45e58",
				       (char *)"da79a9c430a45e58"};
	r.diff = &same;
	r.n_diff = 1;
	pg_buf_reset(&md);
	report_compare_md(&r, &md);
	assert_non_null(strstr(md.ptr, "byte-identical (profile sha256 `da79a9c430a4…`): a run "
				       "compared with itself proves nothing.\n"));
	assert_tables_intact(md.ptr);

	summaries_release(&b, &c);
	pg_buf_release(&md);
}

static void test_compare_no_step(void **state)
{
	struct summary b, c;
	struct gate_thresholds th;
	struct gate_result r;
	struct pg_buf md = PG_BUF_INIT;
	(void)state;

	result_init(&r, &b, &c, &th);
	c.steady.count = 0;
	r.verdict = GATE_INCONCLUSIVE;
	r.has_step = 0;
	struct gate_metric_result m =
	    metric("step.median_us", GATE_K_STEP, NULL, 41200, 0, &rule_step, GATE_INCONCLUSIVE);
	m.has_candidate = 0;
	m.delta_share = NAN;
	m.note = (char *)"no steady steps in the candidate";
	r.metrics = &m;
	r.n_metrics = 1;
	struct gate_attribution a = {GATE_ATTR_FAMILY, (char *)"attention", 6000, NULL, NULL, 9};
	r.attribution = &a; /* never shown without a step change to explain */
	r.n_attribution = 1;

	report_compare_md(&r, &md);
	const char *s = md.ptr;
	assert_true(strncmp(s, "## profgate: INCONCLUSIVE\n\n", 27) == 0);
	assert_non_null(strstr(s, "**The step time could not be compared**: no steady steps in "
				  "the candidate.\n"));
	assert_non_null(strstr(s, "| `step.median_us` | 41.20 ms | — | — | warn +2%, fail +5% | "
				  "inconclusive (no steady steps in the candidate) |\n"));
	assert_null(strstr(s, "Steady median step:"));
	assert_null(strstr(s, "Where the time went"));
	assert_non_null(strstr(s, "- candidate: `cand/summary.json`; 0 steady steps of 15"));
	assert_tables_intact(s);

	/* steps on both sides but too few to test: the numbers, and the gate's reason */
	r.has_step = 1;
	r.step_baseline_us = 41200;
	r.step_candidate_us = 44600;
	r.step_delta_us = 3400;
	r.step_delta_share = 3400.0 / 41200;
	r.step_n_baseline = r.step_n_candidate = 3;
	m.has_candidate = 1;
	m.candidate = 44600;
	m.note = (char *)"too few steps: 3 and 3, 5 needed on each side";
	pg_buf_reset(&md);
	report_compare_md(&r, &md);
	assert_non_null(strstr(md.ptr, "Steady median step: 41.20 ms → 44.60 ms (+3.40 ms, +8.3%, "
				       "3 vs 3 steps). Step time verdict: inconclusive (too few "
				       "steps: 3 and 3, 5 needed on each side).\n"));
	assert_null(strstr(md.ptr, "interval"));

	summaries_release(&b, &c);
	pg_buf_release(&md);
}

/* More than 30 rows: the least severe go, the step rows stay, the cut is counted. */
static void test_compare_cap(void **state)
{
	struct summary b, c;
	struct gate_thresholds th;
	struct gate_result r;
	struct pg_buf md = PG_BUF_INIT;
	static char names[40][40], subjects[40][16];
	struct gate_metric_result m[42];
	(void)state;

	result_init(&r, &b, &c, &th);
	r.verdict = GATE_FAIL;
	r.has_step = 1;
	r.step_baseline_us = 41200;
	r.step_candidate_us = 41300;
	r.step_delta_us = 100;
	r.step_delta_share = 100.0 / 41200;
	for (int i = 0; i < 40; i++) {
		enum gate_verdict v = GATE_NEW;
		if (i < 2)
			v = GATE_FAIL;
		else if (i < 20)
			v = GATE_WARN;
		snprintf(names[i], sizeof(names[i]), "op.k%02d.us_per_step", i);
		snprintf(subjects[i], sizeof(subjects[i]), "k%02d", i);
		m[i] = metric(names[i], GATE_K_OP, subjects[i], 1000, 1200, &rule_op, v);
		if (v == GATE_NEW) {
			m[i].has_baseline = 0;
			m[i].delta_share = NAN;
		}
	}
	m[40] = metric("step.median_us", GATE_K_STEP, NULL, 41200, 41300, &rule_step, GATE_PASS);
	m[41] = metric("step.p90_us", GATE_K_STEP, NULL, 43000, 43100, &rule_step, GATE_PASS);
	r.metrics = m;
	r.n_metrics = 42;

	report_compare_md(&r, &md);
	const char *table = after(md.ptr, "| metric |");
	int rows = -2; /* header and delimiter */
	for (const char *p = table; *p == '|'; p = strchr(p, '\n') + 1)
		rows++;
	assert_int_equal(rows, 30);
	assert_non_null(strstr(table, "`op.k00.us_per_step`"));
	assert_non_null(strstr(table, "`op.k19.us_per_step`"));
	assert_non_null(strstr(table, "`op.k27.us_per_step`"));
	assert_null(strstr(table, "`op.k28.us_per_step`"));
	assert_non_null(strstr(table, "`step.median_us`"));
	assert_non_null(strstr(table, "`step.p90_us`"));
	assert_non_null(strstr(md.ptr, "\n12 more not shown (12 new).\n"));
	assert_non_null(strstr(md.ptr, "| new | op | `k20` | 1.20 ms | — |\n"));
	assert_non_null(strstr(md.ptr, "| new | | 5 more | | |\n")); /* new and gone: 15 shown */

	summaries_release(&b, &c);
	pg_buf_release(&md);
}

/* A hostile op name lands in the table, the attribution, a family's detail,
 * the movers, new and gone, provenance and quality: always escaped. */
static void test_compare_hostile(void **state)
{
	struct summary b, c;
	struct gate_thresholds th;
	struct gate_result r;
	struct pg_buf md = PG_BUF_INIT;
	(void)state;

#define EVIL "@user <b>x</b> | `tick`"
	result_init(&r, &b, &c, &th);
	r.verdict = GATE_FAIL;
	r.in.label = "@user <b>label</b> | x";
	r.in.candidate_path = "runs/" EVIL "/summary.json";
	r.in.thresholds_origin = "th/@user <b>.json";
	r.has_step = 1;
	r.step_baseline_us = 41200;
	r.step_candidate_us = 44600;
	r.step_delta_us = 3400;
	r.step_delta_share = 3400.0 / 41200;
	struct gate_metric_result m[4];
	m[0] = metric("op." EVIL ".us_per_step", GATE_K_OP, EVIL, 8000, 11000, &rule_op, GATE_FAIL);
	m[0].note = (char *)"grew in " EVIL;
	m[1] = metric("family." EVIL ".us_per_step", GATE_K_FAMILY, EVIL, 9000, 12000, &rule_op,
		      GATE_FAIL);
	m[2] = metric("op.new " EVIL ".us_per_step", GATE_K_OP, "new " EVIL, 0, 900, &rule_op,
		      GATE_NEW);
	m[2].has_baseline = 0;
	m[3] = metric("step.median_us", GATE_K_STEP, NULL, 41200, 44600, &rule_step, GATE_FAIL);
	r.metrics = m;
	r.n_metrics = 4;
	struct gate_attribution a[] = {
	    {GATE_ATTR_FAMILY, (char *)EVIL, 3000, (char *)"fusion.1\x1f" EVIL, NULL, 9},
	    {GATE_ATTR_OP, (char *)EVIL, 3000, NULL, NULL, 9},
	};
	r.attribution = a;
	r.n_attribution = 2;
	struct gate_field_diff d = {(char *)"labels.run", (char *)EVIL, (char *)"b|c"};
	r.diff = &d;
	r.n_diff = 1;
	struct gate_quality_hit q = {0, (char *)"x|" EVIL, (char *)"message " EVIL, GATE_WARN};
	r.quality = &q;
	r.n_quality = 1;

	report_compare_md(&r, &md);
	const char *s = md.ptr;
	/* the name shows, as code with the pipe escaped and the backtick replaced */
	const char *span = "`@user <b>x</b> \\| 'tick'`";
	assert_non_null(strstr(after(s, "Where the time went"), span));
	assert_non_null(
	    strstr(after(s, "| metric |"), "`op.@user <b>x</b> \\| 'tick'.us_per_step`"));
	assert_non_null(strstr(after(s, "### Top regressed"), span));
	assert_non_null(strstr(after(s, "### New and gone"), "`new @user <b>x</b> \\| 'tick'`"));
	assert_non_null(strstr(after(s, "### Provenance"), span));
	/* as text (family names, notes, messages, the label) it is escaped */
	assert_non_null(strstr(s, "&lt;b&gt;x&lt;/b&gt; \\| \\`tick\\`"));
	assert_non_null(strstr(s, "## profgate: FAIL — @\xe2\x80\x8duser &lt;b&gt;label&lt;/b&gt; "
				  "\\| x\n"));
	/* nowhere outside code: a mention, a tag, a raw backtick pair around it */
	assert_int_equal(outside_code(s, "@user"), 0);
	assert_int_equal(outside_code(s, "<b>"), 0);
	assert_int_equal(outside_code(s, "</b>"), 0);
	assert_int_equal(outside_code(s, "tick`"), 0);
	assert_tables_intact(s);
#undef EVIL

	summaries_release(&b, &c);
	pg_buf_release(&md);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_code_span),
	    cmocka_unit_test(test_text),
	    cmocka_unit_test(test_time),
	    cmocka_unit_test(test_round_trip_and_report),
	    cmocka_unit_test(test_shares_report),
	    cmocka_unit_test(test_host_section),
	    cmocka_unit_test(test_compare_fail),
	    cmocka_unit_test(test_compare_incomparable),
	    cmocka_unit_test(test_compare_no_step),
	    cmocka_unit_test(test_compare_cap),
	    cmocka_unit_test(test_compare_hostile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
