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

static int outside_code(const char *md, const char *needle);
static const char *after(const char *md, const char *needle);
static void assert_tables_intact(const char *md);

/* Kernel names that share their first hundred bytes, as TensorFlow's Eigen
 * kernels do: the type that tells them apart comes after the cut. */
#define EIGEN_HEAD                                                                                 \
	"void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<"      \
	"Eigen::TensorMap<Eigen::Tensor<"
#define EIGEN_TAIL                                                                                 \
	", 1, 1, long>, 16, Eigen::MakePointer> const> const, Eigen::GpuDevice>, long>("           \
	"Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<Eigen::half," \
	" "                                                                                        \
	"1, 1, long>, 16> const> const, Eigen::GpuDevice>, long)"

/* The code spans of names cut together, one string per name. */
static void cut_spans(const char *const *names, uint32_t n, size_t max, char **out)
{
	struct report_cut cuts[16];
	struct pg_buf b = PG_BUF_INIT;

	assert_true(n <= 16);
	report_cut_names(names, n, max, cuts);
	for (uint32_t i = 0; i < n; i++) {
		/* never more than max bytes of the name, on the name's own bytes */
		size_t len = strlen(names[i]);
		assert_true(cuts[i].head + cuts[i].len <= max || len <= max);
		assert_true(cuts[i].head <= len && cuts[i].from + cuts[i].len <= len);
		assert_true(cuts[i].len == 0 || cuts[i].from > cuts[i].head);
		pg_buf_reset(&b);
		report_code_cut(&b, names[i], &cuts[i]);
		out[i] = pg_xstrdup(b.ptr);
	}
	pg_buf_release(&b);
}

static void free_spans(char **spans, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		free(spans[i]);
}

/* Names that read the same when cut plainly show their head and the part
 * that tells them apart; names that differ early or fit are as before. */
static void test_cut_names(void **state)
{
	const char *eigen[] = {EIGEN_HEAD "float" EIGEN_TAIL, EIGEN_HEAD "bool" EIGEN_TAIL,
			       EIGEN_HEAD "bool const" EIGEN_TAIL,
			       EIGEN_HEAD "Eigen::half" EIGEN_TAIL, "MemcpyH2D"};
	const char *types[] = {"Tensor<float, 1", "Tensor<bool, 1", "Tensor<bool const, 1",
			       "Tensor<Eigen::half, 1"};
	char *a[5], *again[5];
	struct pg_buf b = PG_BUF_INIT;
	(void)state;

	/* today's plain cut reads the same on every Eigen row */
	report_code(&b, eigen[0], 100);
	assert_non_null(strstr(b.ptr, "…`"));
	assert_null(strstr(b.ptr, "float"));

	cut_spans(eigen, 5, 100, a);
	for (int i = 0; i < 4; i++) {
		/* the head, an ellipsis, then the type that tells the row apart */
		assert_int_equal(strncmp(a[i], "`void Eigen::internal::EigenMetaKernel<…", 41), 0);
		assert_non_null(strstr(a[i], types[i]));
		for (int j = 0; j < i; j++)
			assert_string_not_equal(a[i], a[j]);
	}
	assert_string_equal(a[4], "`MemcpyH2D`"); /* a name that fits is whole */
	/* deterministic */
	cut_spans(eigen, 5, 100, again);
	for (int i = 0; i < 5; i++)
		assert_string_equal(a[i], again[i]);
	free_spans(again, 5);
	/* alone, a name is cut plainly, as report_code() does */
	cut_spans(eigen, 1, 100, again);
	pg_buf_reset(&b);
	report_code(&b, eigen[0], 100);
	assert_string_equal(again[0], b.ptr);
	free_spans(again, 1);
	free_spans(a, 5);

	/* names that differ within the cut keep the plain cut; equal names are
	 * not told apart (nothing can) and are cut plainly too */
	const char *early[] = {"aten::mm_" EIGEN_HEAD, "aten::bmm_" EIGEN_HEAD,
			       "aten::bmm_" EIGEN_HEAD};
	cut_spans(early, 3, 60, a);
	for (int i = 0; i < 3; i++) {
		pg_buf_reset(&b);
		report_code(&b, early[i], 60);
		assert_string_equal(a[i], b.ptr);
	}
	free_spans(a, 3);

	/* a name that is the start of another: the longer shows where it goes on,
	 * the shorter ends without an ellipsis */
	const char *prefix[] = {EIGEN_HEAD "float" EIGEN_TAIL, EIGEN_HEAD "float"};
	cut_spans(prefix, 2, 100, a);
	assert_string_not_equal(a[0], a[1]);
	assert_string_equal(a[1] + strlen(a[1]) - 7, "<float`");
	assert_string_equal(a[0] + strlen(a[0]) - 4, "…`");
	free_spans(a, 2);

	/* names that differ only at their very end (a long common run of one
	 * word, as AMD's Cijk_ kernel names): the window shows the end */
	const char *tail[] = {"Cijk_" EIGEN_HEAD EIGEN_HEAD "_GRPM0p26_X",
			      "Cijk_" EIGEN_HEAD EIGEN_HEAD "_GRPM0p24_X"};
	cut_spans(tail, 2, 80, a);
	assert_non_null(strstr(a[0], "0p26_X`"));
	assert_non_null(strstr(a[1], "0p24_X`"));
	free_spans(a, 2);
	pg_buf_release(&b);
}

/* Whether s is valid UTF-8 throughout. */
static int utf8_valid(const char *s)
{
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		size_t k = pg_utf8_seq((const unsigned char *)s + i, n - i);
		if (k == 0)
			return 0;
		i += k;
	}
	return 1;
}

/* No cut splits a multi-byte character, whatever the width and wherever the
 * difference: the output has no U+FFFD (the input has none) and is UTF-8. */
static void test_cut_names_utf8(void **state)
{
	static const char *const chars[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
	(void)state;

	for (size_t c = 0; c < PG_ARRAY_LEN(chars); c++) {
		struct pg_buf x = PG_BUF_INIT, y = PG_BUF_INIT, z = PG_BUF_INIT;
		for (int i = 0; i < 70; i++) {
			pg_buf_adds(&x, chars[c]);
			pg_buf_adds(&y, chars[c]);
			pg_buf_adds(&z, chars[c]);
			if (i == 45) {
				pg_buf_adds(&x, "x");
				pg_buf_adds(&y, "y");
				pg_buf_adds(&z, chars[(c + 1) % PG_ARRAY_LEN(chars)]);
			}
		}
		const char *names[] = {x.ptr, y.ptr, z.ptr};
		for (size_t max = 20; max <= 130; max += 7) {
			char *a[3];
			cut_spans(names, 3, max, a);
			for (int i = 0; i < 3; i++) {
				assert_true(utf8_valid(a[i]));
				assert_null(strstr(a[i], PG_UTF8_REPLACEMENT));
			}
			/* once the window fits the differing character, the rows read apart */
			if (max >= 40) {
				assert_string_not_equal(a[0], a[1]);
				assert_string_not_equal(a[0], a[2]);
				assert_string_not_equal(a[1], a[2]);
			}
			free_spans(a, 3);
		}
		pg_buf_release(&x);
		pg_buf_release(&y);
		pg_buf_release(&z);
	}
}

/* The part shown after the ellipsis is escaped like the head: pipes,
 * backticks, mentions and HTML stay harmless in code and in text. */
static void test_cut_names_escaped(void **state)
{
	const char *names[] = {EIGEN_HEAD "@team|x`<b>" EIGEN_TAIL,
			       EIGEN_HEAD "@team|y`<b>" EIGEN_TAIL};
	struct report_cut cuts[2];
	struct pg_buf b = PG_BUF_INIT;
	(void)state;

	report_cut_names(names, 2, 100, cuts);
	assert_true(cuts[0].len > 0 && cuts[1].len > 0);
	report_code_cut(&b, names[0], &cuts[0]);
	assert_non_null(strstr(b.ptr, "…@team\\|x'<b>"));
	assert_int_equal(outside_code(b.ptr, "@team"), 0);
	assert_int_equal(b.ptr[strlen(b.ptr) - 1], '`');
	pg_buf_reset(&b);
	report_text_cut(&b, names[1], &cuts[1]);
	assert_non_null(strstr(b.ptr, "…@\xe2\x80\x8dteam\\|y\\`&lt;b&gt;"));
	assert_null(strstr(b.ptr, "<b>"));
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
/* A change prints in its metric's unit, with the digits that put it on the
 * side of each limit the exact value is on (report/change.c). */
static void test_change_units_and_digits(void **state)
{
	struct gate_rule rule;
	struct pg_buf b = PG_BUF_INIT;
	struct {
		const char *metric;
		double delta, delta_share;
		const char *want;
	} cases[] = {
	    /* both print +25.0% at one decimal; only the first reaches "fail +25%" */
	    {"op.gemm.us_per_step", 250.001, 0.250001, "+25.0% (+250.0 us)"},
	    {"op.gemm.us_per_step", 249.9997, 0.2499997, "+24.99997% (+250.0 us)"},
	    {"family.matmul.us_per_step", 5863.8, 0.2, "+20.0% (+5.86 ms)"},
	    /* a share: percentage points, never relative */
	    {"breakdown.exposed_comm_share", 0.173, 0.407, "+17.3 pp"},
	    {"breakdown.idle_share", -0.0199999, -0.5, "-2.0 pp"},
	    /* from 0: the absolute change */
	    {"op.new.us_per_step", 812, NAN, "+812.0 us"},
	};

	(void)state;
	memset(&rule, 0, sizeof(rule));
	rule.direction = GATE_LOWER_IS_BETTER;
	rule.warn.has_relative = 1;
	rule.warn.relative = 0.1;
	rule.fail.has_relative = 1;
	rule.fail.relative = 0.25;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pg_buf_reset(&b);
		report_change(&b, cases[i].metric, cases[i].delta, cases[i].delta_share,
			      strstr(cases[i].metric, "share") ? NULL : &rule, 1);
		assert_string_equal(b.ptr, cases[i].want);
	}
	/* a share's absolute limit of 2 pp: -1.99999 pp is not past -2 pp (higher is better) */
	memset(&rule, 0, sizeof(rule));
	rule.direction = GATE_HIGHER_IS_BETTER;
	rule.warn.has_absolute = 1;
	rule.warn.absolute = 0.02;
	pg_buf_reset(&b);
	report_change(&b, "breakdown.compute_share", -0.0199999, -0.1, &rule, 1);
	assert_string_equal(b.ptr, "-1.99999 pp");
	pg_buf_reset(&b);
	report_limit(&b, &rule.warn, rule.direction, report_metric_unit("breakdown.compute_share"));
	assert_string_equal(b.ptr, "-2 pp");
	pg_buf_release(&b);
}

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

/* A summary of n devices made by hand: device i ("gpu<i>") has a 20 ms wall
 * and idles 1000 + i us of it, so the later devices wait longer; the first
 * four have no work in the steady steps; device 10 spends 304 us of its wait
 * in exposed communication (1000 us of communication). */
static void devices_summary(struct summary *s, uint32_t n)
{
	char id[32];

	summary_init(s);
	s->profgate_version = pg_xstrdup("test");
	s->basis = pg_xstrdup(SUMMARY_BASIS_TIMELINE);
	s->device_count = n;
	s->n_devices = n;
	s->devices = pg_xcalloc(n, sizeof(*s->devices));
	for (uint32_t i = 0; i < n; i++) {
		struct sum_split *x = &s->devices[i].steady;
		snprintf(id, sizeof(id), "gpu%u", i);
		s->devices[i].id = pg_xstrdup(id);
		if (i < 4)
			continue;
		x->wall_us = 20000;
		x->idle_us = 1000 + i;
		if (i == 10) {
			x->comm_us = 1000;
			x->exposed_comm_us = 304;
			x->idle_us -= 304;
		}
		x->compute_us = x->wall_us - x->idle_us - x->exposed_comm_us;
	}
	snprintf(id, sizeof(id), "gpu%u", n - 1);
	s->worst_device = pg_xstrdup(id);
	s->slowest_device = pg_xstrdup("gpu5");
}

static int count_lines(const char *md, const char *prefix)
{
	int n = 0;
	size_t k = strlen(prefix);
	for (const char *p = md; p; p = strchr(p, '\n')) {
		p += *p == '\n';
		n += strncmp(p, prefix, k) == 0;
	}
	return n;
}

/* 1,024 devices: the spread of each column (min, median, p90, max over the
 * devices with work) and the eight that waited most, the summary's worst
 * first, then the slowest; no row per device. Up to 16 devices, a row each. */
static void test_devices_at_scale(void **state)
{
	struct summary s;
	struct pg_buf md = PG_BUF_INIT;
	(void)state;

	devices_summary(&s, 1024);
	report_summary_md(&s, &md);
	const char *p = after(md.ptr, "## Where the time goes, per device");
	assert_non_null(strstr(p, "1024 devices: the spread over the 1020 with work in the steady "
				  "steps (each column on its own, so a row is not one device); 4 "
				  "devices had no work in them.\n\n"));
	/* idle shares run from (1000 + 4 - 304 + 6) / 20000 on device 10 to 2023 / 20000 on
	 * device 1023; median and p90 interpolate between ranks as the step statistics do */
	assert_non_null(strstr(p, "| min | 20.00 ms | 89.9% | 0.0% | 0.0% | 3.5% | 69.6% |\n"
				  "| median | 20.00 ms | 92.4% | 0.0% | 0.0% | 7.6% | 69.6% |\n"
				  "| p90 | 20.00 ms | 94.5% | 0.0% | 0.0% | 9.6% | 69.6% |\n"
				  "| max | 20.00 ms | 95.0% | 1.5% | 0.0% | 10.1% | 69.6% |\n"));
	assert_non_null(strstr(p, "The 8 devices that waited most"));
	const char *w = after(p, "| device |");
	assert_non_null(
	    strstr(w, "|---|---:|---:|---:|---:|---:|---:|\n"
		      "| `gpu1023` (worst) | 20.00 ms | 89.9% | 0.0% | 0.0% | 10.1% | – |\n"
		      "| `gpu1022` | 20.00 ms | 89.9% |"));
	assert_non_null(strstr(w, "| `gpu1016` | "));
	assert_null(strstr(w, "`gpu1015`"));
	assert_non_null(strstr(w, "| `gpu5` (slowest) | 20.00 ms | 95.0% |"));
	/* nine device rows in all, however many devices */
	assert_int_equal(count_lines(md.ptr, "| `gpu"), 9);
	assert_true(md.len < 4000);
	assert_tables_intact(md.ptr);
	summary_release(&s);

	/* 16 devices: a row each, as before, the worst marked */
	pg_buf_reset(&md);
	devices_summary(&s, 16);
	report_summary_md(&s, &md);
	assert_int_equal(count_lines(md.ptr, "| `gpu"), 16);
	assert_non_null(strstr(md.ptr, "| `gpu15` (worst) |"));
	assert_null(strstr(md.ptr, "(slowest)"));
	assert_null(strstr(md.ptr, "| median |"));
	summary_release(&s);

	/* 17: the spread */
	pg_buf_reset(&md);
	devices_summary(&s, 17);
	report_summary_md(&s, &md);
	assert_int_equal(count_lines(md.ptr, "| `gpu"), 9);
	assert_non_null(strstr(md.ptr, "| median |"));
	summary_release(&s);
	pg_buf_release(&md);
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
		s.steps[i] = (struct sum_step){i, 100, -1, pg_xcalloc(2, sizeof(double)), 1, 100};
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
	r.attribution_z = 1.6448536;
	r.attribution_z_against = 3.29;
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
				  "noise (listed: z of at least 1.64 toward the step's change, "
				  "3.29 against it, or a rule's warn or fail).\n"));
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
	assert_non_null(
	    strstr(s, "### Breakdown per step (mean over the devices with steady work)\n"));
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

/* Kernels alike for their first 120 bytes, in every place a comparison names
 * ops: the metric table, the movers, new and gone (a gone kernel and its
 * replacement cut together), the attribution line and a family's detail. */
static void test_compare_names_alike(void **state)
{
	struct summary b, c;
	struct gate_thresholds th;
	struct gate_result r;
	struct pg_buf md = PG_BUF_INIT;
	(void)state;

#define K(t) EIGEN_HEAD t EIGEN_TAIL
	result_init(&r, &b, &c, &th);
	r.verdict = GATE_FAIL;
	r.has_step = 1;
	r.step_baseline_us = 41200;
	r.step_candidate_us = 44600;
	r.step_delta_us = 3400;
	r.step_delta_share = 3400.0 / 41200;
	struct gate_metric_result m[5];
	m[0] = metric("op." K("float") ".us_per_step", GATE_K_OP, K("float"), 8000, 11000, &rule_op,
		      GATE_FAIL);
	m[1] = metric("op." K("bool") ".us_per_step", GATE_K_OP, K("bool"), 8000, 10000, &rule_op,
		      GATE_FAIL);
	m[2] = metric("op." K("int8") ".us_per_step", GATE_K_OP, K("int8"), 0, 900, &rule_op,
		      GATE_NEW);
	m[2].has_baseline = 0;
	m[3] = metric("op." K("int16") ".us_per_step", GATE_K_OP, K("int16"), 700, 0, &rule_op,
		      GATE_GONE);
	m[3].has_candidate = 0;
	m[4] = metric("step.median_us", GATE_K_STEP, NULL, 41200, 44600, &rule_step, GATE_FAIL);
	r.metrics = m;
	r.n_metrics = 5;
	struct gate_attribution a[] = {
	    {GATE_ATTR_FAMILY, (char *)"elementwise", 2000, (char *)K("half") "\x1f" K("double"),
	     NULL, 9},
	    {GATE_ATTR_OP, (char *)K("float"), 3000, NULL, NULL, 9},
	    {GATE_ATTR_OP, (char *)K("bool"), 2000, NULL, NULL, 8},
	};
	r.attribution = a;
	r.n_attribution = 3;

	report_compare_md(&r, &md);
	const char *s = md.ptr;
	const char *line_end = strchr(after(s, "Where the time went"), '\n');
	static const char *const where[][2] = {
	    {"Where the time went", "Tensor<float, 1"}, {"Where the time went", "Tensor<bool, 1"},
	    {"Where the time went", "Tensor<half, 1"},	{"Where the time went", "Tensor<double, 1"},
	    {"| metric |", "Tensor<float, 1"},		{"| metric |", "Tensor<bool, 1"},
	    {"| metric |", "Tensor<int8, 1"},		{"| metric |", "Tensor<int16, 1"},
	    {"### Top regressed", "Tensor<float, 1"},	{"### Top regressed", "Tensor<bool, 1"},
	    {"### New and gone", "Tensor<int8, 1"},	{"### New and gone", "Tensor<int16, 1"},
	};
	for (size_t i = 0; i < PG_ARRAY_LEN(where); i++) {
		const char *p = strstr(after(s, where[i][0]), where[i][1]);
		assert_non_null(p);
		if (i < 4)
			assert_true(p < line_end); /* on the attribution line itself */
	}
	assert_tables_intact(s);
#undef K
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
	    cmocka_unit_test(test_cut_names),
	    cmocka_unit_test(test_cut_names_utf8),
	    cmocka_unit_test(test_cut_names_escaped),
	    cmocka_unit_test(test_change_units_and_digits),
	    cmocka_unit_test(test_round_trip_and_report),
	    cmocka_unit_test(test_shares_report),
	    cmocka_unit_test(test_host_section),
	    cmocka_unit_test(test_devices_at_scale),
	    cmocka_unit_test(test_compare_fail),
	    cmocka_unit_test(test_compare_incomparable),
	    cmocka_unit_test(test_compare_no_step),
	    cmocka_unit_test(test_compare_cap),
	    cmocka_unit_test(test_compare_hostile),
	    cmocka_unit_test(test_compare_names_alike),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
