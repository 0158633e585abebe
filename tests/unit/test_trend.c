/*
 * Trends: the change-point detector on hand-made series (a step found at its index with its
 * size, a flat noisy series with none and a calibrated false-alarm rate (permutation test and,
 * from 48 points, the tail approximation on tied values), two steps, short and
 * constant series, an outlier, ties, determinism, never a NaN), then history_trend_build on
 * records (Benjamini-Hochberg across metrics, the warn-limit magnitude, the nightly
 * consecutive-violation rule), the profgate.trend/1 JSON and the markdown with its Mermaid
 * charts and escaping.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/gate/gate.h"
#include "../../src/history/history.h"
#include "../../src/report/report.h"

/* ---- helpers ---- */

static uint64_t rng_state;

/* Uniform in [-1, 1), from a fixed-seed generator (the tests are deterministic). */
static double noise(void)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(rng_state >> 11) / 9007199254740992.0 * 2 - 1;
}

static uint32_t cps_of(const double *x, uint32_t n, double alpha, struct history_cp *out)
{
	struct history_cp_opts o = {3, alpha, 42};
	return history_change_points(x, n, &o, out);
}

static void assert_finite_cps(const struct history_cp *c, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		assert_true(isfinite(c[i].before));
		assert_true(isfinite(c[i].after));
		assert_true(isfinite(c[i].p_value) && c[i].p_value > 0 && c[i].p_value <= 1);
	}
}

/* ---- the detector ---- */

static void test_step_found(void **state)
{
	double x[24];
	struct history_cp cp[24];
	uint32_t n, at;
	(void)state;

	rng_state = 1;
	for (int i = 0; i < 24; i++)
		x[i] = (i < 14 ? 100 : 108) + noise(); /* +8%, noise +-1 */
	n = cps_of(x, 24, 0.01, cp);
	assert_int_equal(n, 1);
	assert_int_equal(cp[0].index, 14);
	assert_true(fabs(cp[0].before - 100) < 1);
	assert_true(fabs(cp[0].after - 108) < 1);
	assert_true(cp[0].p_value <= 0.01);
	assert_finite_cps(cp, n);
	assert_true(history_split_scan(x, 24, 3, &at) > 3);
	assert_int_equal(at, 14);
	/* the same input, the same answer */
	struct history_cp again[24];
	assert_int_equal(cps_of(x, 24, 0.01, again), 1);
	assert_int_equal(again[0].index, cp[0].index);
	assert_true(again[0].p_value == cp[0].p_value && again[0].before == cp[0].before &&
		    again[0].after == cp[0].after);
}

/* A planted +8 % step is reported at its first slower record, the record to bisect from,
 * wherever it falls in the series (early, middle, late) and with noise a quarter of the step:
 * the place comes from the values (the split near the rank statistic's whose segments deviate
 * least from their medians), not from where the rank statistic
 * peaks, which for a step early in the series is often a record before it (the sd of a rank sum
 * shrinks toward the ends faster than the sum does). */
static void test_step_at_first_slower_record(void **state)
{
	static const uint32_t steps[] = {6, 10, 15, 22};
	uint32_t found = 0, at_step = 0;
	(void)state;

	for (size_t k = 0; k < sizeof(steps) / sizeof(*steps); k++)
		for (uint64_t seed = 1; seed <= 50; seed++) {
			double x[30];
			struct history_cp cp[30];
			uint32_t n;
			rng_state = seed;
			for (uint32_t i = 0; i < 30; i++)
				x[i] = (i < steps[k] ? 100 : 108) + 2 * noise();
			n = cps_of(x, 30, 0.01, cp);
			found += n > 0;
			at_step += n == 1 && cp[0].index == steps[k];
		}
	assert_int_equal(found, 200);
	if (at_step < 198)
		fail_msg("%u of %u at the step", at_step, found);
}

static void test_flat_noisy(void **state)
{
	double x[40];
	struct history_cp cp[40];
	(void)state;

	rng_state = 7;
	for (int i = 0; i < 40; i++)
		x[i] = 100 + 5 * noise();
	assert_int_equal(cps_of(x, 40, 0.01, cp), 0);
	/* one wild run in a flat series is not a change: ranks, not values */
	x[20] = 1e6;
	assert_int_equal(cps_of(x, 40, 0.01, cp), 0);
}

/* Noise alone is called a change about alpha of the time, not more: the permutation test of
 * the best split accounts for the scan over every split point. */
static void test_false_alarm_rate(void **state)
{
	double x[30];
	uint32_t alarms = 0;
	(void)state;

	rng_state = 99;
	for (int s = 0; s < 200; s++) {
		for (int i = 0; i < 30; i++)
			x[i] = 50 + noise();
		alarms += history_split_p(x, 30, 3, 0.05, 1000 + s) <= 0.05;
	}
	/* 10 expected; a naive test at every split point would alarm on most series */
	assert_true(alarms >= 2 && alarms <= 22);
}

/* From 48 points the p-value is the tail of the scan's maximum, with the tie-corrected rank
 * sums: on tied noise (values rounded to 0.1 of a spread of 2) it still alarms about alpha of
 * the time, and a step in a long tied series is found where it is. */
static void test_long_tied(void **state)
{
	double x[240];
	struct history_cp cp[240];
	uint32_t alarms = 0, n;
	(void)state;

	rng_state = 123;
	for (int s = 0; s < 400; s++) {
		for (int i = 0; i < 120; i++)
			x[i] = round((50 + noise()) * 10) / 10;
		alarms += history_split_p(x, 120, 3, 0.05, 1) <= 0.05;
	}
	/* 20 expected at the level; the approximation errs on the safe side (about 16) */
	assert_true(alarms >= 6 && alarms <= 34);
	for (int i = 0; i < 240; i++)
		x[i] = round(((i < 180 ? 50 : 51.5) + noise()) * 10) / 10;
	n = cps_of(x, 240, 0.01, cp);
	assert_int_equal(n, 1);
	assert_true(cp[0].index >= 178 && cp[0].index <= 182);
	assert_finite_cps(cp, n);
	/* the same input, the same answer */
	assert_true(history_split_p(x, 240, 3, 0.01, 1) == history_split_p(x, 240, 3, 0.01, 2));
}

static void test_two_steps(void **state)
{
	double x[36];
	struct history_cp cp[36];
	uint32_t n;
	(void)state;

	rng_state = 3;
	for (int i = 0; i < 36; i++)
		x[i] = (i < 12 ? 100 : i < 24 ? 120 : 90) + noise();
	n = cps_of(x, 36, 0.01, cp);
	assert_int_equal(n, 2);
	assert_int_equal(cp[0].index, 12);
	assert_int_equal(cp[1].index, 24);
	/* each change point's segments run to its neighbours */
	assert_true(fabs(cp[0].before - 100) < 1 && fabs(cp[0].after - 120) < 1);
	assert_true(fabs(cp[1].before - 120) < 1 && fabs(cp[1].after - 90) < 1);
	assert_finite_cps(cp, n);
}

static void test_short_and_constant(void **state)
{
	double step6[] = {1, 1, 1, 9, 9, 9}, five[] = {1, 2, 30, 31, 32};
	double flat[20];
	struct history_cp cp[20];
	uint32_t at;
	(void)state;

	/* fewer than two segments of three: nothing to test */
	assert_int_equal(cps_of(five, 5, 0.5, cp), 0);
	assert_true(history_split_p(five, 5, 3, 0.5, 1) == 1);
	/* six points: even a perfect step is 2 of the 20 ways to split them, p = 0.1 */
	assert_int_equal(cps_of(step6, 6, 0.01, cp), 0);
	assert_true(fabs(history_split_p(step6, 6, 3, 0.2, 1) - 0.1) < 0.03);
	for (int i = 0; i < 20; i++)
		flat[i] = 42;
	assert_true(history_split_scan(flat, 20, 3, &at) == 0);
	assert_true(history_split_p(flat, 20, 3, 0.01, 1) == 1);
	assert_int_equal(cps_of(flat, 20, 0.01, cp), 0);
}

/* Ties (values rounded to a coarse unit) take the permutation of their own ranks. */
static void test_ties(void **state)
{
	double x[30];
	struct history_cp cp[30];
	uint32_t n;
	(void)state;

	rng_state = 5;
	for (int i = 0; i < 30; i++)
		x[i] = round((i < 15 ? 10 : 12) + noise());
	n = cps_of(x, 30, 0.01, cp);
	assert_int_equal(n, 1);
	assert_true(cp[0].index >= 14 && cp[0].index <= 16);
	assert_finite_cps(cp, n);
}

/* ---- trends of records ---- */

/* A record line: nightly unless kind says otherwise, metrics as JSON members. */
static void add_record(struct history_list *l, int day, const char *kind, const char *metrics)
{
	struct pg_buf b = PG_BUF_INIT;
	struct history_record r;

	pg_buf_addf(&b,
		    "{\"schema\": \"profgate.history/1\", \"record_id\": \"r%02d\", \"time\": "
		    "\"2024-05-%02dT00:00:00Z\", \"series\": \"bench-0000abcd\", \"label\": "
		    "\"bench\", \"kind\": \"%s\", \"verdict\": \"pass\", \"sha\": \"%040d\", "
		    "\"metrics\": {%s}}",
		    day, day, kind, day, metrics);
	if (history_record_parse(&r, b.ptr, b.len))
		fail_msg("record: %s", pg_error_last());
	history_list_move(l, &r);
	pg_buf_release(&b);
}

static const struct history_trend_metric *metric(const struct history_trend *t, const char *name)
{
	for (uint32_t i = 0; t->n && i < t->s[0].n_m; i++)
		if (strcmp(t->s[0].m[i].name, name) == 0)
			return &t->s[0].m[i];
	fail_msg("no metric %s", name);
	return NULL;
}

/* 24 nightly records: the step time steps up 8% at record 14; three flat metrics; an op whose
 * 1% move is significant but under its warn limit (10%). */
static void stepped_history(struct history_list *l)
{
	rng_state = 11;
	for (int d = 1; d <= 24; d++) {
		char m[512];
		double step = (d <= 14 ? 100000 : 108000) + 200 * noise();
		snprintf(m, sizeof(m),
			 "\"step.median_us\": %.3f, \"family.matmul.us_per_step\": %.3f, "
			 "\"op.gemm.us_per_step\": %.3f, \"breakdown.idle_share\": %.6f, "
			 "\"family.norm.us_per_step\": %.3f",
			 step, 40000 + 400 * noise(), (d <= 14 ? 20000 : 20200) + 5 * noise(),
			 0.1 + 0.002 * noise(), 9000 + 90 * noise());
		add_record(l, d, "nightly", m);
	}
}

static void test_trend_change_points(void **state)
{
	struct history_list l = {0};
	struct gate_thresholds th;
	struct history_trend t;
	struct history_trend_opts o = {NULL, NULL, &th, 0, 0, 0, 0};
	const struct history_trend_metric *m;
	(void)state;

	gate_thresholds_default(&th);
	stepped_history(&l);
	history_trend_build(&l, &o, &t);
	assert_int_equal(t.n, 1);
	assert_string_equal(t.s[0].series, "bench-0000abcd");
	assert_int_equal(t.s[0].n, 24);
	assert_int_equal(t.s[0].n_m, 5);
	assert_int_equal(t.s[0].n_tested, 5);
	m = metric(&t, "step.median_us");
	assert_string_equal(m->unit, "us");
	assert_int_equal(m->n_cp, 1);
	assert_int_equal(m->cp[0].index, 14); /* record 15 (day 15) is the first slower one */
	assert_true(fabs(m->cp[0].after / m->cp[0].before - 1.08) < 0.01);
	assert_true(history_cp_confidence(&t.s[0], &m->cp[0]) > 0.99);
	/* the gemm op moved 1%: a real change, but under its 10% warn limit */
	assert_int_equal(metric(&t, "op.gemm.us_per_step")->n_cp, 0);
	assert_int_equal(metric(&t, "family.matmul.us_per_step")->n_cp, 0);
	assert_int_equal(metric(&t, "family.norm.us_per_step")->n_cp, 0);
	assert_int_equal(metric(&t, "breakdown.idle_share")->n_cp, 0);
	/* a glob keeps one metric */
	history_trend_release(&t);
	o.metric = "step.*";
	history_trend_build(&l, &o, &t);
	assert_int_equal(t.s[0].n_m, 1);
	assert_int_equal(t.s[0].m[0].n_cp, 1);
	history_trend_release(&t);
	history_list_release(&l);
	gate_thresholds_release(&th);
}

/* The nightly rule: the step time 7% over its baseline (fail 5%, and beyond the gate's noise
 * model: 2 % a run, z = 3.2) in the last three nightly records is flagged (K = 2); one slow
 * night earlier is not; main records count for the baseline but neither make nor break a
 * run; 4% over is past the warn limit but within noise, and is no violation. */
static void test_nightly_rule(void **state)
{
	static const double v[] = {100, 101, 99, 100, 130, 100, 101, 100, 99, 107, 107, 107};
	static const double w[] = {100, 101, 99, 100, 130, 100, 101, 100, 99, 104, 104, 104};
	struct history_list l = {0};
	struct gate_thresholds th;
	struct history_trend t;
	struct history_trend_opts o = {NULL, NULL, &th, 5, 0, 0, 0};
	const struct history_trend_metric *m;
	(void)state;

	gate_thresholds_default(&th);
	for (int d = 1; d <= 12; d++) {
		char buf[64];
		snprintf(buf, sizeof(buf), "\"step.median_us\": %.1f", v[d - 1] * 1000);
		add_record(&l, d, d == 11 ? "main" : "nightly", buf);
	}
	history_trend_build(&l, &o, &t);
	m = metric(&t, "step.median_us");
	assert_int_equal(t.consecutive, 2);
	assert_int_equal(m->n_judged, 10); /* 11 nightly, the first has no baseline */
	assert_int_equal(m->n_runs, 1);	   /* the spike at day 5 is a run of one */
	assert_int_equal(m->runs[0].first, 9);
	assert_int_equal(m->runs[0].last, 11);
	assert_int_equal(m->runs[0].length, 2); /* day 11 is a main record */
	assert_true(m->runs[0].ongoing);
	assert_true(m->runs[0].reached_fail);
	assert_true(m->flagged);
	assert_int_equal(t.s[0].n_flagged, 1);
	history_trend_release(&t);
	history_list_release(&l);

	for (int d = 1; d <= 12; d++) {
		char buf[64];
		snprintf(buf, sizeof(buf), "\"step.median_us\": %.1f", w[d - 1] * 1000);
		add_record(&l, d, d == 11 ? "main" : "nightly", buf);
	}
	history_trend_build(&l, &o, &t);
	m = metric(&t, "step.median_us");
	assert_int_equal(m->n_runs, 0); /* +4 % is no violation, the spike a run of one */
	assert_false(m->flagged);
	history_trend_release(&t);
	history_list_release(&l);
	for (int d = 1; d <= 12; d++) {
		char buf[64];
		snprintf(buf, sizeof(buf), "\"step.median_us\": %.1f", v[d - 1] * 1000);
		add_record(&l, d, d == 11 ? "main" : "nightly", buf);
	}

	/* K = 3 from the thresholds file: a run of two is not flagged */
	th.consecutive_violations = 3;
	history_trend_build(&l, &o, &t);
	assert_int_equal(metric(&t, "step.median_us")->n_runs, 0);
	assert_false(metric(&t, "step.median_us")->flagged);
	history_trend_release(&t);
	history_list_release(&l);
	gate_thresholds_release(&th);
}

/* A run that ended is listed, not flagged; a violation stays out of later baselines, so a
 * lasting regression keeps violating instead of becoming the baseline. */
static void test_nightly_run_over(void **state)
{
	static const double v[] = {100, 100, 101, 99, 110, 111, 110, 112, 111, 100, 101};
	struct history_list l = {0};
	struct gate_thresholds th;
	struct history_trend t;
	struct history_trend_opts o = {NULL, NULL, &th, 3, 0, 0, 0};
	const struct history_trend_metric *m;
	(void)state;

	gate_thresholds_default(&th);
	for (int d = 1; d <= 11; d++) {
		char buf[64];
		snprintf(buf, sizeof(buf), "\"step.median_us\": %.1f", v[d - 1] * 1000);
		add_record(&l, d, "nightly", buf);
	}
	history_trend_build(&l, &o, &t);
	m = metric(&t, "step.median_us");
	assert_int_equal(m->n_runs, 1);
	assert_int_equal(m->runs[0].first, 4);
	assert_int_equal(m->runs[0].length, 5); /* with a window of 3 they would have crept in */
	assert_true(m->runs[0].reached_fail);
	assert_false(m->runs[0].ongoing);
	assert_false(m->flagged);
	history_trend_release(&t);
	history_list_release(&l);
	gate_thresholds_release(&th);
}

static void test_trend_json(void **state)
{
	struct history_list l = {0};
	struct gate_thresholds th;
	struct history_trend t;
	struct history_trend_opts o = {NULL, NULL, &th, 0, 0, 0, 0};
	struct history_filter f = {NULL, "bench", NULL, NULL, NULL, 0};
	struct pg_buf a = PG_BUF_INIT, b = PG_BUF_INIT;
	cJSON *root, *s, *m, *cp;
	(void)state;

	gate_thresholds_default(&th);
	stepped_history(&l);
	history_trend_build(&l, &o, &t);
	history_trend_write_json(&t, NULL, &f, &a);
	history_trend_write_json(&t, NULL, &f, &b);
	assert_string_equal(a.ptr, b.ptr);
	assert_null(strstr(a.ptr, "nan"));
	assert_null(strstr(a.ptr, "inf"));
	root = cJSON_Parse(a.ptr);
	assert_non_null(root);
	assert_string_equal(cJSON_GetObjectItem(root, "schema")->valuestring, "profgate.trend/1");
	assert_string_equal(
	    cJSON_GetObjectItem(cJSON_GetObjectItem(root, "history"), "label")->valuestring,
	    "bench");
	s = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "series"), 0);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(s, "records")), 24);
	m = cJSON_GetArrayItem(cJSON_GetObjectItem(s, "metrics"), 4);
	assert_string_equal(cJSON_GetObjectItem(m, "name")->valuestring, "step.median_us");
	assert_string_equal(cJSON_GetObjectItem(m, "unit")->valuestring, "us");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(m, "values")), 24);
	cp = cJSON_GetArrayItem(cJSON_GetObjectItem(m, "change_points"), 0);
	assert_int_equal(cJSON_GetObjectItem(cp, "index")->valueint, 14);
	assert_string_equal(cJSON_GetObjectItem(cp, "time")->valuestring, "2024-05-15T00:00:00Z");
	assert_string_equal(cJSON_GetObjectItem(cp, "direction")->valuestring, "regression");
	assert_true(fabs(cJSON_GetObjectItem(cp, "delta_share")->valuedouble - 0.08) < 0.01);
	assert_true(cJSON_GetObjectItem(cp, "confidence")->valuedouble > 0.99);
	cJSON_Delete(root);
	history_trend_release(&t);
	history_list_release(&l);
	pg_buf_release(&a);
	pg_buf_release(&b);
	gate_thresholds_release(&th);
}

static void test_trend_md(void **state)
{
	struct history_list l = {0};
	struct gate_thresholds th;
	struct history_trend t;
	struct history_trend_opts o = {NULL, NULL, &th, 0, 0, 0, 0};
	struct pg_buf b = PG_BUF_INIT, w = PG_BUF_INIT;
	char want[128];
	(void)state;

	gate_thresholds_default(&th);
	stepped_history(&l);
	/* an op name that would end a Mermaid label, open a code block or ping someone */
	for (int d = 25; d <= 31; d++)
		add_record(&l, d, "nightly",
			   d < 28 ? "\"op.a\\\"`#quot;@x%%y.us_per_step\": 1000"
				  : "\"op.a\\\"`#quot;@x%%y.us_per_step\": 5000");
	history_trend_build(&l, &o, &t);
	report_trend_md(&t, &b);
	assert_non_null(
	    strstr(b.ptr, "```mermaid\nxychart-beta\n    title \"step.median_us (ms)\""));
	assert_non_null(strstr(b.ptr, "    line ["));
	assert_non_null(strstr(b.ptr, "| `step.median_us` |"));
	const struct history_cp *c = &metric(&t, "step.median_us")->cp[0];
	snprintf(want, sizeof(want), "2024-05-15 `%.7s…`: ", t.s[0].r[14]->sha);
	report_time(&w, c->before);
	pg_buf_adds(&w, " → ");
	report_time(&w, c->after);
	pg_buf_addf(&w, " (%+.1f%%, confidence %.3f)", 100 * (c->after / c->before - 1),
		    history_cp_confidence(&t.s[0], c));
	assert_non_null(strstr(b.ptr, want));
	assert_non_null(strstr(b.ptr, w.ptr));
	assert_non_null(strstr(b.ptr, "**flagged**: 10 in a row from 2024-05-15, ongoing"));
	/* in the table a code span; in the chart only safe characters */
	assert_non_null(strstr(b.ptr, "`op.a\"'#quot;@x%%y.us_per_step`"));
	assert_non_null(strstr(b.ptr, "title \"op.a___quot__x__y.us_per_step (ms)\""));
	for (const char *p = strstr(b.ptr, "```mermaid"); p; p = strstr(p + 1, "```mermaid")) {
		const char *end = strstr(p + 10, "```");
		assert_non_null(end);
		for (const char *q = p + 10; q < end; q++)
			assert_true(*q != '`' && *q != '#' && *q != '%' && *q != '@');
	}
	history_trend_release(&t);
	history_list_release(&l);
	pg_buf_release(&b);
	pg_buf_release(&w);
	gate_thresholds_release(&th);
}

static void test_mermaid_escape(void **state)
{
	struct pg_buf b = PG_BUF_INIT;
	(void)state;

	report_mermaid(&b, "a\"b`c#35;d%%e\nf<g>h aten::mm (x, y) é", 200);
	assert_string_equal(b.ptr, "a_b_c_35_d__e_f_g_h aten::mm (x, y) é");
	pg_buf_reset(&b);
	report_mermaid(&b, "abcdef", 3);
	assert_string_equal(b.ptr, "abc...");
	pg_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_step_found),
	    cmocka_unit_test(test_step_at_first_slower_record),
	    cmocka_unit_test(test_flat_noisy),
	    cmocka_unit_test(test_false_alarm_rate),
	    cmocka_unit_test(test_long_tied),
	    cmocka_unit_test(test_two_steps),
	    cmocka_unit_test(test_short_and_constant),
	    cmocka_unit_test(test_ties),
	    cmocka_unit_test(test_trend_change_points),
	    cmocka_unit_test(test_nightly_rule),
	    cmocka_unit_test(test_nightly_run_over),
	    cmocka_unit_test(test_trend_json),
	    cmocka_unit_test(test_trend_md),
	    cmocka_unit_test(test_mermaid_escape),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
