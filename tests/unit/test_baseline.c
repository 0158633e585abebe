/*
 * Window baselines (src/history/baseline.c): which records a window takes (the last N of one
 * series, of the kinds and ref asked for, oldest first; a label naming two series refused;
 * none found; an identity change ends the window when the thresholds check that field), the
 * summary a window stands for (per-metric medians, one steady step per record, a metric held by
 * a minority left out, the breakdown, op families from the candidate, a short window warned),
 * that summary through the JSON writer and reader and the gate, and that a candidate's series
 * is the one its gate record files it under.
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
#include <unistd.h>

#include "../../src/gate/gate.h"
#include "../../src/history/history.h"
#include "../../src/summary/summary.h"

/* ---- records ---- */

struct rec_spec {
	int day;
	const char *kind, *series, *label, *ref, *version;
	double step_us;
	const char *extra; /* more metrics, or "" */
};

static void add(struct history_list *l, const struct rec_spec *s)
{
	struct pg_buf b = PG_BUF_INIT;
	struct history_record r;

	pg_buf_addf(
	    &b,
	    "{\"schema\": \"profgate.history/1\", \"record_id\": \"id%02d%s\", \"time\": "
	    "\"2024-05-%02dT06:00:00Z\", \"series\": \"%s\", \"label\": \"%s\", \"kind\": "
	    "\"%s\", \"verdict\": \"pass\", \"ref\": %s%s%s, \"summary_sha256\": \"s%02d\", "
	    "\"identity\": {\"device_kind\": \"H100\", \"device_count\": 2, \"host_count\": "
	    "1, \"world_size\": null, \"framework\": \"jax\", \"framework_version\": \"%s\", "
	    "\"step_source\": \"steps-line\", \"basis\": \"b\", \"steps_captured\": 10, "
	    "\"labels.model\": \"llama\"}, \"metrics\": {\"step.median_us\": %.3f, "
	    "\"step.p90_us\": %.3f%s}}",
	    s->day, s->series, s->day, s->series, s->label, s->kind, s->ref ? "\"" : "",
	    s->ref ? s->ref : "null", s->ref ? "\"" : "", s->day, s->version ? s->version : "0.4",
	    s->step_us, s->step_us * 1.1, s->extra);
	if (history_record_parse(&r, b.ptr, b.len))
		fail_msg("record: %s", pg_error_last());
	history_list_move(l, &r);
	pg_buf_release(&b);
}

static const char *main_ref = "refs/heads/main";

/* Series a: nightly days 1..8 on main, a PR record and a record on another branch between;
 * series b under the same label. Added out of time order. */
static void history_ab(struct history_list *l)
{
	for (int d = 8; d >= 1; d--) {
		struct rec_spec s = {d,	       "nightly", "bench-aaaaaaaa", "bench",
				     main_ref, NULL,	  1000.0 + d,	    ""};
		add(l, &s);
	}
	struct rec_spec pr = {9,    "pr", "bench-aaaaaaaa", "bench", "refs/pull/1/merge", NULL,
			      5000, ""};
	struct rec_spec dev = {10,   "main", "bench-aaaaaaaa", "bench", "refs/heads/dev", NULL,
			       7000, ""};
	struct rec_spec other = {3, "main", "bench-bbbbbbbb", "bench", main_ref, NULL, 9000, ""};
	add(l, &pr);
	add(l, &dev);
	add(l, &other);
}

static char *const all_fields[] = {"device_kind", "framework", "framework_version"};

static void test_window_select(void **state)
{
	struct history_list l = {0};
	struct history_window w;
	struct history_window_opts o = {"bench-aaaaaaaa", NULL, NULL, main_ref, 5, NULL, 0};
	(void)state;

	history_ab(&l);
	assert_int_equal(history_window_select(&l, &o, &w), 0);
	assert_int_equal(w.n, 5);
	assert_int_equal(w.requested, 5);
	for (uint32_t i = 0; i < 5; i++) /* days 4..8, oldest first */
		assert_int_equal(w.r[i]->time[9], '4' + (int)i);
	assert_string_equal(w.series, "bench-aaaaaaaa");
	assert_null(w.cut_field);
	history_window_release(&w);

	/* any ref: the main record on dev is the newest */
	o.ref = NULL;
	assert_int_equal(history_window_select(&l, &o, &w), 0);
	assert_string_equal(w.r[w.n - 1]->time, "2024-05-10T06:00:00Z");
	history_window_release(&w);

	/* more than there are: what there is */
	o.ref = main_ref;
	o.n = 20;
	assert_int_equal(history_window_select(&l, &o, &w), 0);
	assert_int_equal(w.n, 8);
	assert_int_equal(w.requested, 20);
	history_window_release(&w);

	/* kinds: pr only */
	static const char *const pr[] = {"pr", NULL};
	o.kinds = pr;
	o.ref = NULL;
	assert_int_equal(history_window_select(&l, &o, &w), 0);
	assert_int_equal(w.n, 1);
	assert_true(w.r[0]->metrics[0].value == 5000);
	history_window_release(&w);
	history_list_release(&l);
}

/* One record line as the store holds it; metrics "" for none (an incomparable gate's). */
static void add_raw(struct history_list *l, const char *id, const char *time, const char *verdict,
		    const char *metrics)
{
	struct pg_buf b = PG_BUF_INIT;
	struct history_record r;

	pg_buf_addf(&b,
		    "{\"schema\": \"profgate.history/1\", \"record_id\": \"%s\", \"time\": "
		    "\"%s\", \"series\": \"bench-aaaaaaaa\", \"label\": \"bench\", \"kind\": "
		    "\"nightly\", \"verdict\": \"%s\", \"ref\": null, \"identity\": "
		    "{\"device_kind\": \"H100\"}, \"metrics\": {%s}}",
		    id, time, verdict, metrics);
	if (history_record_parse(&r, b.ptr, b.len))
		fail_msg("record: %s", pg_error_last());
	history_list_move(l, &r);
	pg_buf_release(&b);
}

/* The seeding night of docs/action.md: an incomparable record without numbers never enters
 * a window; records of one second keep the order they were appended in (a record id is a
 * digest, no order). */
static void test_window_numbers_and_order(void **state)
{
	struct history_list l = {0};
	struct history_window w;
	struct history_window_opts o = {.label = "bench", .n = 7};
	(void)state;

	add_raw(&l, "ff01", "2024-05-01T06:00:00Z", "incomparable", "");
	add_raw(&l, "ff02", "2024-05-02T06:00:00Z", "pass", "\"step.median_us\": 100");
	add_raw(&l, "aa03", "2024-05-02T06:00:00Z", "pass", "\"step.median_us\": 200");
	assert_int_equal(history_window_select(&l, &o, &w), 0);
	assert_int_equal(w.n, 2);
	assert_true(w.r[0]->metrics[0].value == 100);
	assert_true(w.r[1]->metrics[0].value == 200); /* appended last: the newest */
	history_window_release(&w);
	history_list_release(&l);

	/* nothing but the seed: no window, as on the first night */
	add_raw(&l, "ff01", "2024-05-01T06:00:00Z", "incomparable", "");
	assert_int_equal(history_window_select(&l, &o, &w), PG_ENOTFOUND);
	assert_non_null(strstr(pg_error_last(), "no main or nightly records with numbers (1 "
						"without, from incomparable gates, are never a "
						"baseline) of label 'bench'"));
	history_window_release(&w);
	history_list_release(&l);
}

static void test_window_refusals(void **state)
{
	struct history_list l = {0};
	struct history_window w;
	struct history_window_opts o = {NULL, "bench", NULL, main_ref, 5, NULL, 0};
	(void)state;

	history_ab(&l);
	assert_int_equal(history_window_select(&l, &o, &w), PG_EUSAGE);
	assert_non_null(strstr(pg_error_last(), "label 'bench' names 2 series"));
	history_window_release(&w);
	o.label = "nothing";
	assert_int_equal(history_window_select(&l, &o, &w), PG_ENOTFOUND);
	assert_string_equal(pg_error_last(), "no main or nightly records of label 'nothing' from "
					     "runs on refs/heads/main");
	history_window_release(&w);
	o.label = NULL;
	o.series = "bench-aaaaaaaa";
	o.ref = "refs/heads/release";
	assert_int_equal(history_window_select(&l, &o, &w), PG_ENOTFOUND);
	history_window_release(&w);
	history_list_release(&l);
}

/* A framework upgrade at day 6: under thresholds that check framework_version the window
 * starts after it; otherwise it spans it. */
static void test_window_identity_cut(void **state)
{
	struct history_list l = {0};
	struct history_window w;
	struct history_window_opts o = {"s-1", NULL, NULL, NULL, 5, all_fields, 3};
	struct pg_buf json = PG_BUF_INIT;
	cJSON *j;
	(void)state;

	for (int d = 1; d <= 8; d++) {
		struct rec_spec s = {d, "main", "s-1", "x", NULL, d < 6 ? "0.4" : "0.5", 100, ""};
		add(&l, &s);
	}
	assert_int_equal(history_window_select(&l, &o, &w), 0);
	assert_int_equal(w.n, 3);
	assert_string_equal(w.cut_field, "framework_version");
	assert_string_equal(w.cut_older, "0.4");
	assert_string_equal(w.cut_newer, "0.5");
	assert_string_equal(w.cut_time, "2024-05-05T06:00:00Z");
	history_window_json(&w, NULL, &json);
	j = cJSON_Parse(json.ptr);
	assert_non_null(j);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "records")), 3);
	assert_int_equal(cJSON_GetObjectItem(j, "requested")->valueint, 5);
	assert_string_equal(cJSON_GetObjectItem(j, "branch")->valuestring, "profgate-history");
	assert_string_equal(
	    cJSON_GetObjectItem(cJSON_GetObjectItem(j, "cut"), "field")->valuestring,
	    "framework_version");
	cJSON_Delete(j);
	history_window_release(&w);
	o.n_identity = 2; /* device_kind and framework only */
	assert_int_equal(history_window_select(&l, &o, &w), 0);
	assert_int_equal(w.n, 5);
	assert_null(w.cut_field);
	history_window_release(&w);
	history_list_release(&l);
	pg_buf_release(&json);
}

/* ---- the summary a window stands for ---- */

static const char *bd(int day)
{
	static char b[512];
	snprintf(b, sizeof(b),
		 ", \"breakdown.compute_share\": 0.7, \"breakdown.exposed_comm_share\": %.3f, "
		 "\"breakdown.exposed_memcpy_share\": 0.05, \"breakdown.idle_share\": 0.15, "
		 "\"breakdown.comm_overlap_share\": 0.5, \"family.matmul.us_per_step\": %d, "
		 "\"op.gemm.us_per_step\": %d, \"collective.all-reduce.us_per_step\": 40, "
		 "\"throughput.tflops_per_device\": 300%s",
		 0.1 + 0.01 * day, 500 + day, 300 + 10 * day,
		 day == 2 ? ", \"op.rare.us_per_step\": 7" : "");
	return b;
}

/* Five records; step medians 1000, 1040, 990, 1010, 1500 (one slow run). */
static void window5(struct history_list *l, struct history_window *w)
{
	static const double steps[] = {1000, 1040, 990, 1010, 1500};
	struct history_window_opts o = {"s-1", NULL, NULL, NULL, 5, NULL, 0};

	for (int d = 1; d <= 5; d++) {
		struct rec_spec s = {d, "nightly", "s-1", "x", NULL, NULL, steps[d - 1], bd(d)};
		add(l, &s);
	}
	if (history_window_select(l, &o, w))
		fail_msg("%s", pg_error_last());
}

static const struct sum_op *op_named(const struct summary *s, const char *name)
{
	for (uint32_t i = 0; i < s->n_ops; i++)
		if (strcmp(s->ops[i].name, name) == 0)
			return &s->ops[i];
	return NULL;
}

static void test_baseline_summary(void **state)
{
	struct history_list l = {0};
	struct history_window w;
	struct summary s, like;
	(void)state;

	window5(&l, &w);
	summary_init(&like);
	like.ops = pg_xcalloc(1, sizeof(*like.ops));
	like.n_ops = 1;
	like.ops[0].name = pg_xstrdup("gemm");
	like.ops[0].family = pg_xstrdup("matmul");
	history_baseline_summary(&w, &like, &s);
	/* identity from the records */
	assert_string_equal(s.device_kind, "H100");
	assert_int_equal(s.device_count, 2);
	assert_int_equal(s.world_size, -1);
	assert_string_equal(s.framework_version, "0.4");
	assert_int_equal(s.n_labels, 1);
	assert_string_equal(s.labels[0], "model=llama");
	/* one steady step per record, its median, in time order; statistics of the medians */
	assert_int_equal(s.n_steps, 5);
	assert_int_equal(s.steady.count, 5);
	assert_true(s.steps[1].us == 1040 && s.steps[4].us == 1500 && s.steps[4].steady);
	assert_true(s.steady.median_us == 1010);
	assert_true(s.steady.min_us == 990);
	assert_true(s.steady.mad_us == 20);
	assert_true(fabs(s.steady.p90_us - 1111) < 1e-9); /* median of the p90s */
	/* families, ops, collectives, throughput: medians; a minority metric is left out */
	assert_int_equal(s.n_families, 1);
	assert_true(s.families[0].us_per_step == 503);
	assert_true(fabs(s.families[0].share - 503.0 / 1010) < 1e-12);
	assert_non_null(op_named(&s, "gemm"));
	assert_true(op_named(&s, "gemm")->self_us_per_step == 330);
	assert_string_equal(op_named(&s, "gemm")->family, "matmul"); /* from the candidate */
	assert_null(op_named(&s, "rare"));
	assert_int_equal(s.n_collectives, 1);
	assert_true(s.collectives[0].us_per_step == 40 && s.collectives[0].busbw_gbps < 0);
	assert_true(s.has_flops && s.tflops_per_device == 300);
	/* the breakdown: on every device (the device count's worth) */
	assert_int_equal(s.n_devices, 2);
	assert_true(fabs(s.mean.exposed_comm_share - 0.13) < 1e-12);
	assert_true(fabs(s.devices[1].steady.idle_us - 0.15 * 1010 * 5) < 1e-6);
	/* the records as inputs; a full window has no warning */
	assert_int_equal(s.n_files, 5);
	assert_string_equal(s.files[0].format, "profgate.history/1");
	assert_string_equal(s.files[0].sha256, "s01");
	assert_non_null(strstr(s.files[0].path, "s-1/2024-05.jsonl#id01"));
	assert_int_equal(s.n_warnings, 0);
	summary_release(&s);
	summary_release(&like);
	history_window_release(&w);
	history_list_release(&l);
}

static void test_baseline_short_and_bare(void **state)
{
	struct history_list l = {0};
	struct history_window w;
	struct history_window_opts o = {"s-1", NULL, NULL, NULL, 5, NULL, 0};
	struct summary s;
	(void)state;

	/* two records without breakdown metrics: no devices rather than zero shares */
	for (int d = 1; d <= 2; d++) {
		struct rec_spec r = {d, "main", "s-1", "x", NULL, NULL, 100.0 * d, ""};
		add(&l, &r);
	}
	assert_int_equal(history_window_select(&l, &o, &w), 0);
	history_baseline_summary(&w, NULL, &s);
	assert_int_equal(s.n_devices, 0);
	assert_int_equal(s.steady.count, 2);
	assert_true(s.steady.median_us == 150);
	assert_int_equal(s.n_warnings, 1);
	assert_string_equal(s.warnings[0].code, "history-window-short");
	assert_non_null(strstr(s.warnings[0].message, "2 of the 5 records"));
	summary_release(&s);
	history_window_release(&w);
	history_list_release(&l);
}

/* The gate against a history window, as `gate --baseline history:...` runs it: the window's
 * records are the baseline's runs, the synthesized summary the one the report shows. */
static void gate_compare_window(const struct history_window *w, const struct summary *rep,
				const struct summary *c, const struct gate_thresholds *th,
				const struct gate_inputs *in, struct gate_result *r)
{
	struct summary *runs = pg_xcalloc(w->n, sizeof(*runs));
	const struct summary **rb = pg_xcalloc(w->n, sizeof(*rb));
	const struct summary *rc[1] = {c};

	history_window_runs(w, c, runs);
	for (uint32_t i = 0; i < w->n; i++)
		rb[i] = &runs[i];
	gate_compare_runs(&(struct gate_side){rb, w->n, rep, 1, NULL, NULL},
			  &(struct gate_side){rc, 1, NULL, 0, NULL, NULL}, th, in, r);
	/* the result borrows rep and c only: the runs can go */
	for (uint32_t i = 0; i < w->n; i++)
		summary_release(&runs[i]);
	free(runs);
	free(rb);
}

static const struct gate_metric_result *metric_named(const struct gate_result *r, const char *name)
{
	for (uint32_t i = 0; i < r->n_metrics; i++)
		if (strcmp(r->metrics[i].name, name) == 0)
			return &r->metrics[i];
	fail_msg("no metric %s", name);
	return NULL;
}

/* Written and read back, the baseline gives the same catalogue; the gate compares a candidate
 * against it with the records as runs. */
static void test_baseline_round_trip_and_gate(void **state)
{
	struct history_list l = {0};
	struct history_window w;
	struct summary s, back, c;
	struct gate_catalogue a, b;
	struct gate_thresholds th;
	struct gate_inputs in = {"history:main", "c.json",   NULL, NULL,
				 NULL,		 "built-in", "0",  "{\"series\": \"s-1\"}",
				 NULL,		 NULL};
	struct gate_result r;
	struct pg_buf json = PG_BUF_INIT, v = PG_BUF_INIT;
	char path[] = "/tmp/pg-baseline-XXXXXX";
	int fd;
	(void)state;

	window5(&l, &w);
	history_baseline_summary(&w, NULL, &s);
	summary_write_json(&s, &json);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, json.ptr, json.len), (ssize_t)json.len);
	close(fd);
	assert_int_equal(summary_read_json(path, &back), 0);
	unlink(path);
	gate_catalogue_build(&s, &a);
	gate_catalogue_build(&back, &b);
	assert_int_equal(a.n, b.n);
	for (uint32_t i = 0; i < a.n; i++) {
		assert_string_equal(a.m[i].name, b.m[i].name);
		assert_true(fabs(a.m[i].value - b.m[i].value) <= 1e-3 + 1e-4 * fabs(a.m[i].value));
	}
	assert_non_null(gate_catalogue_find(&a, "step.skew_us") ? &a : NULL);
	assert_non_null(gate_catalogue_find(&a, "breakdown.exposed_comm_share"));

	/* the window's records as the baseline's runs, as the gate takes them: the slow run of
	 * 1500 us is 51 % above the typical run (995 us, the median of the two fastest),
	 * past the 15 % a disturbance must reach, and is set aside; the four left
	 * spread 1.4826 x MAD 10 us, under the prior (2 % of 1005 us), which is the noise;
	 * a candidate 3 % slower than the median is within it, 20 % slower fails */
	gate_thresholds_default(&th);
	history_baseline_summary(&w, NULL, &c);
	for (uint32_t i = 0; i < c.n_steps; i++)
		c.steps[i].us = 1039 + i;
	c.steady.median_us = 1041;
	free(c.files[0].sha256);
	c.files[0].sha256 = pg_xstrdup("other");
	gate_compare_window(&w, &s, &c, &th, &in, &r);
	assert_string_equal(r.provenance, "comparable");
	assert_int_equal(r.n_runs[0], 5);
	assert_int_equal(r.set_aside[0], 1);
	assert_true(r.runs[0][4].set_aside && !r.runs[0][0].set_aside);
	assert_non_null(strstr(r.runs[0][4].why, "1.500 ms"));
	assert_int_equal(r.baseline_runs, 4);
	assert_true(fabs(r.step_baseline_us - 1005) < 1e-9);
	assert_true(r.step_tested);
	assert_string_equal(metric_named(&r, "step.median_us")->noise_from, "prior");
	/* one run against the median of four: 1 + v(4), the median's variance */
	assert_true(fabs(metric_named(&r, "step.median_us")->noise_sd / (0.02 * 1005) -
			 sqrt(1 + gate_noise_median_var(4))) < 0.01);
	assert_int_equal(metric_named(&r, "step.median_us")->verdict, GATE_PASS);
	gate_result_release(&r);
	for (uint32_t i = 0; i < c.n_steps; i++)
		c.steps[i].us = 1212 + i;
	c.steady.median_us = 1214;
	gate_compare_window(&w, &s, &c, &th, &in, &r);
	assert_int_equal(r.verdict, GATE_FAIL);
	assert_true(r.step_p_value < 0.01);
	gate_result_write_json(&r, &v);
	assert_non_null(strstr(v.ptr, "\"history\": {\"series\": \"s-1\"}"));
	/* every run named, the one set aside with why */
	assert_non_null(strstr(v.ptr, "\"runs_set_aside\": 1"));
	assert_non_null(strstr(v.ptr, "\"set_aside\": true"));
	assert_non_null(strstr(v.ptr, "\"step_median_us\": 1500.000"));
	gate_result_release(&r);
	gate_thresholds_release(&th);
	gate_catalogue_release(&a);
	gate_catalogue_release(&b);
	summary_release(&s);
	summary_release(&back);
	summary_release(&c);
	history_window_release(&w);
	history_list_release(&l);
	pg_buf_release(&json);
	pg_buf_release(&v);
}

/* A baseline and a candidate from one window, the candidate with one label more. */
static void two_sides(struct history_list *l, struct history_window *w, struct summary *b,
		      struct summary *c, const char *label)
{
	window5(l, w);
	history_baseline_summary(w, NULL, b);
	history_baseline_summary(w, NULL, c);
	c->labels = pg_xrealloc(c->labels, 2 * sizeof(char *));
	c->labels[c->n_labels++] = pg_xstrdup(label);
}

static void two_sides_release(struct history_list *l, struct history_window *w, struct summary *b,
			      struct summary *c)
{
	summary_release(b);
	summary_release(c);
	history_window_release(w);
	history_list_release(l);
}

/* The series the gate's history window looks in is the one the gate's record is filed under. */
/* docs/noise.md "Disturbed runs": a record keeps its run's step spread (step.mad_us), so a
 * candidate's steps are judged against the spread of the series' runs, as against baseline
 * runs given whole: steps spreading 7 % beside records whose runs spread 4 % (MAD 26-30 us) are
 * a busy machine's ordinary runs, not a disturbed one; beside records that keep no spread,
 * against the quiet 2 %, they are disturbed. The window's summary holds the records' median
 * spread. */
static void test_baseline_run_spread(void **state)
{
	static const double steps[] = {1000, 1010, 990, 1005, 995};
	struct history_list l = {0}, bare = {0};
	struct history_window w, wb;
	struct history_window_opts o = {"s-1", NULL, NULL, NULL, 5, NULL, 0};
	struct summary s, c;
	struct gate_thresholds th;
	struct gate_inputs in = {"history:main", "c.json", NULL, NULL, NULL,
				 "built-in",	 "0",	   NULL, NULL, NULL};
	struct gate_result r;
	(void)state;

	for (int d = 1; d <= 5; d++) {
		char extra[64];
		struct rec_spec x = {d, "nightly", "s-1", "x", NULL, NULL, steps[d - 1], extra};
		snprintf(extra, sizeof(extra), ", \"step.mad_us\": %d", 25 + d);
		add(&l, &x);
		x.extra = "";
		add(&bare, &x);
	}
	if (history_window_select(&l, &o, &w) || history_window_select(&bare, &o, &wb))
		fail_msg("%s", pg_error_last());
	history_baseline_summary(&w, NULL, &s);
	assert_true(s.steady.mad_us == 28);
	gate_thresholds_default(&th);
	history_baseline_summary(&w, NULL, &c);
	c.n_steps = 0;
	free(c.steps);
	c.steps = pg_xcalloc(21, sizeof(*c.steps));
	for (uint32_t i = 0; i < 20; i++)
		c.steps[c.n_steps++] = (struct sum_step){.step = i,
							 .us = 1000 * (1 + 0.05 * ((i % 5) - 2.0)),
							 .host_us = -1,
							 .steady = 1,
							 .span_us = -1};
	free(c.files[0].sha256);
	c.files[0].sha256 = pg_xstrdup("other");
	gate_compare_window(&w, &s, &c, &th, &in, &r);
	assert_true(fabs(r.jitter_baseline - 1.4826 * 28 / 990) < 1e-9); /* the median run's */
	assert_true(r.jitter_candidate > 0.07);
	assert_false(r.disturbed);
	gate_result_release(&r);
	summary_release(&s);
	history_baseline_summary(&wb, NULL, &s);
	gate_compare_window(&wb, &s, &c, &th, &in, &r);
	assert_false(isfinite(r.jitter_baseline));
	assert_true(r.disturbed);
	gate_result_release(&r);
	gate_thresholds_release(&th);
	summary_release(&s);
	summary_release(&c);
	history_window_release(&w);
	history_window_release(&wb);
	history_list_release(&l);
	history_list_release(&bare);
}

static void test_series_of_summary(void **state)
{
	struct history_list l = {0};
	struct history_window w;
	struct summary b, c;
	struct gate_thresholds th;
	struct gate_inputs in = {"b.json",   "c.json", "1",  "2",  "matmul: bench",
				 "built-in", "0",      NULL, NULL, NULL};
	struct gate_result r;
	struct history_record rec;
	struct history_env env;
	struct pg_buf v = PG_BUF_INIT, series = PG_BUF_INIT;
	(void)state;

	two_sides(&l, &w, &b, &c, "batch=16");
	c.world_size = 16;
	gate_thresholds_default(&th);
	gate_compare(&b, &c, &th, &in, &r);
	gate_result_write_json(&r, &v);
	memset(&env, 0, sizeof(env));
	env.time = "2024-06-01T00:00:00Z";
	assert_int_equal(history_record_from_verdict(&rec, v.ptr, v.len, "v", &env, "main"), 0);
	history_series_of_summary("matmul: bench", &c, &series);
	assert_string_equal(series.ptr, rec.series);
	pg_buf_reset(&series);
	history_series_of_summary("matmul: bench", &b, &series);
	assert_string_not_equal(series.ptr, rec.series);
	history_record_release(&rec);
	gate_result_release(&r);
	gate_thresholds_release(&th);
	two_sides_release(&l, &w, &b, &c);
	pg_buf_release(&v);
	pg_buf_release(&series);
}

/* The record the gate builds from its result is the one `history append`
 * builds from the verdict JSON of that result, byte for byte: in CI and out
 * of it, with a history window as the baseline, and with a label that is not
 * UTF-8 (the JSON carries U+FFFD for it). */
static void test_record_from_result(void **state)
{
	struct history_list l = {0};
	struct history_window w;
	struct summary b, c;
	struct gate_thresholds th;
	struct gate_inputs in = {"b.json",     "c.json",   "1", NULL,
				 "bench \xff", "built-in", "0", "{\"branch\":\"h\",\"n\":5}",
				 NULL,	       NULL};
	struct gate_result r;
	struct history_env env;
	(void)state;

	two_sides(&l, &w, &b, &c, "batch=16\xc3");
	free(c.files[0].sha256);
	c.files[0].sha256 = pg_xstrdup("another capture");
	gate_thresholds_default(&th);
	gate_compare(&b, &c, &th, &in, &r);
	memset(&env, 0, sizeof(env));
	env.time = "2024-06-01T00:00:00Z";
	for (int ci = 0; ci < 2; ci++) {
		struct history_record x, y;
		struct pg_buf v = PG_BUF_INIT, lx = PG_BUF_INIT, ly = PG_BUF_INIT;
		struct pg_buf series = PG_BUF_INIT;
		env.run_id = ci ? "77" : NULL;
		env.repo = ci ? "o/r" : NULL;
		gate_result_write_json(&r, &v);
		assert_int_equal(history_record_from_verdict(&x, v.ptr, v.len, "v", &env, "main"),
				 0);
		assert_int_equal(history_record_from_result(&y, &r, &env, "main"), 0);
		history_record_write(&x, &lx);
		history_record_write(&y, &ly);
		assert_string_equal(lx.ptr, ly.ptr);
		assert_true(x.n_metrics > 0 && x.baseline_window);
		history_series_of_summary(in.label, &c, &series);
		assert_string_equal(series.ptr, y.series);
		history_record_release(&x);
		history_record_release(&y);
		pg_buf_release(&v);
		pg_buf_release(&lx);
		pg_buf_release(&ly);
		pg_buf_release(&series);
	}
	gate_result_release(&r);
	gate_thresholds_release(&th);
	two_sides_release(&l, &w, &b, &c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_window_select),
	    cmocka_unit_test(test_window_numbers_and_order),
	    cmocka_unit_test(test_window_refusals),
	    cmocka_unit_test(test_window_identity_cut),
	    cmocka_unit_test(test_baseline_summary),
	    cmocka_unit_test(test_baseline_short_and_bare),
	    cmocka_unit_test(test_baseline_round_trip_and_gate),
	    cmocka_unit_test(test_baseline_run_spread),
	    cmocka_unit_test(test_series_of_summary),
	    cmocka_unit_test(test_record_from_result),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
