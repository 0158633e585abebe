/*
 * The gate module against docs/gate.md and docs/noise.md: thresholds files
 * (the shipped sets, the built-in copy, every kind of refusal naming file and
 * key, priors inherited), rule matching by glob, the statistics and the noise
 * model (medians, robust sd, the normal tail, the p90 bootstrap, pooled
 * spread, the prior floor, the parts' shared level), and gate_compare on
 * summaries built here whose right verdicts follow from those rules, plus the
 * verdict JSON (valid, schema, deterministic bytes).
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
#include "../../src/report/report.h"
#include "../../src/summary/summary.h"
#include "helpers.h"

/* ---- helpers ---- */

/* |a - b| <= eps, in double (cmocka's float comparison is single precision). */
#define assert_close(a, b, eps) check_close((a), (b), (eps), #a, __FILE__, __LINE__)

static void check_close(double a, double b, double eps, const char *what, const char *file,
			int line)
{
	if (!(fabs(a - b) <= eps))
		fail_msg("%s:%d: %s = %.17g, expected %.17g (within %g)", file, line, what, a, b,
			 eps);
}

static void parse_file(const char *path, struct gate_thresholds *th)
{
	size_t len;
	char *text = th_read(path, &len);
	int rc = gate_thresholds_parse(text, len, path, th);

	if (rc != 0)
		fail_msg("%s: %s", path, pg_error_last());
	free(text);
}

static void parse_str(const char *json, struct gate_thresholds *th)
{
	int rc = gate_thresholds_parse(json, strlen(json), "t.json", th);

	if (rc != 0)
		fail_msg("t.json: %s", pg_error_last());
}

/* The text must be refused with PG_EUSAGE and a message naming the origin
 * and containing key (the key's path). */
#define expect_refused(json, key) check_refused((json), (key), __LINE__)

static void check_refused(const char *json, const char *key, int line)
{
	struct gate_thresholds th;
	int rc = gate_thresholds_parse(json, strlen(json), "bad.json", &th);
	const char *msg = pg_error_last();

	gate_thresholds_release(&th); /* first: a failure below must not also leak */
	if (rc != PG_EUSAGE)
		fail_msg("line %d: accepted or wrong code %d: %s", line, rc, json);
	if (!strstr(msg, "bad.json") || !strstr(msg, key))
		fail_msg("line %d: message \"%s\" should name bad.json and \"%s\"", line, msg, key);
}

#define SCHEMA "\"schema\": \"profgate.thresholds/1\""
#define RULE0                                                                                      \
	"{\"metric\": \"step.median_us\", \"direction\": \"lower\", \"fail\": {\"relative\": "     \
	"0.05}}"

static const struct gate_rule *rule_named(const struct gate_thresholds *th, const char *metric)
{
	for (uint32_t i = 0; i < th->n_rules; i++)
		if (strcmp(th->rules[i].metric, metric) == 0)
			return &th->rules[i];
	fail_msg("no rule %s", metric);
	return NULL;
}

static enum gate_verdict quality_of(const struct gate_thresholds *th, const char *code)
{
	for (uint32_t i = 0; i < th->n_quality; i++)
		if (strcmp(th->quality[i].code, code) == 0)
			return th->quality[i].action;
	fail_msg("no quality entry %s", code);
	return GATE_PASS;
}

static int has_identity(const struct gate_thresholds *th, const char *field)
{
	for (uint32_t i = 0; i < th->n_identity; i++)
		if (strcmp(th->identity[i], field) == 0)
			return 1;
	return 0;
}

/* ---- 1. thresholds files ---- */

/* docs/gate.md "Shipped sets": the numbers of the table, file by file. */
static void check_shipped(const struct gate_thresholds *th, double step_warn, double step_fail,
			  double p90_fail, double fam_warn, double fam_fail, double floor,
			  double share_warn, double share_fail, double significance,
			  uint32_t min_samples)
{
	static const char *const ids[] = {"device_kind", "device_count", "host_count", "world_size",
					  "framework",	 "step_source",	 "basis"};
	static const char *const lists[] = {"family.*.us_per_step", "op.*.us_per_step",
					    "collective.*.us_per_step"};
	static const char *const shares[] = {"breakdown.exposed_comm_share",
					     "breakdown.idle_share"};
	static const char *const truncation[] = {"event-cap", "ends-early", "steps-missing",
						 "ranks-missing"};
	const struct gate_rule *r;

	assert_true(fabs(th->significance - significance) < 1e-12);
	assert_int_equal(th->min_samples, min_samples);
	for (size_t i = 0; i < PG_ARRAY_LEN(ids); i++)
		assert_true(has_identity(th, ids[i]));
	for (size_t i = 0; i < PG_ARRAY_LEN(truncation); i++)
		assert_int_equal(quality_of(th, truncation[i]), GATE_INCONCLUSIVE);
	assert_int_equal(quality_of(th, "disturbed"), GATE_INCONCLUSIVE);
	/* the priors `make noise` measured (docs/noise.md), the same in every file */
	r = gate_rule_for(th, "step.median_us");
	assert_close(r->noise.relative, 0.02, 1e-12);
	r = gate_rule_for(th, "step.p90_us");
	assert_close(r->noise.relative, 0.15, 1e-12);
	for (size_t i = 0; i < 2; i++) {
		r = rule_named(th, lists[i]);
		/* an op moves more between runs than its family (a family's ops
		 * trade time: one matmul call site against another) */
		assert_close(r->noise.relative, i ? 0.06 : 0.03, 1e-12);
		assert_close(r->noise_step_share, 0.007, 1e-12);
		assert_close(r->min_step_share, 0.005, 1e-12);
	}

	r = gate_rule_for(th, "step.median_us");
	assert_non_null(r);
	assert_int_equal(r->direction, GATE_LOWER_IS_BETTER);
	assert_true(r->test);
	assert_true(r->warn.has_relative && r->fail.has_relative);
	assert_close(r->warn.relative, step_warn, 1e-12);
	assert_close(r->fail.relative, step_fail, 1e-12);
	r = gate_rule_for(th, "step.p90_us");
	assert_non_null(r);
	assert_true(r->test);
	assert_close(r->fail.relative, p90_fail, 1e-12);
	for (size_t i = 0; i < PG_ARRAY_LEN(lists); i++) {
		r = rule_named(th, lists[i]);
		assert_int_equal(r->direction, GATE_LOWER_IS_BETTER);
		assert_false(r->test);
		assert_close(r->warn.relative, fam_warn, 1e-12);
		assert_close(r->fail.relative, fam_fail, 1e-12);
		assert_close(r->floor_share, floor, 1e-12);
	}
	for (size_t i = 0; i < PG_ARRAY_LEN(shares); i++) {
		r = gate_rule_for(th, shares[i]);
		assert_non_null(r);
		assert_true(r->warn.has_absolute && r->fail.has_absolute);
		assert_false(r->warn.has_relative);
		assert_close(r->warn.absolute, share_warn, 1e-12);
		assert_close(r->fail.absolute, share_fail, 1e-12);
	}
	r = gate_rule_for(th, "throughput.tflops_per_device");
	assert_non_null(r);
	assert_int_equal(r->direction, GATE_HIGHER_IS_BETTER);
	assert_true(r->test);
	/* an op name with dots and colons still finds the op rule */
	r = gate_rule_for(th, "op.aten::mm.default.us_per_step");
	assert_non_null(r);
	assert_string_equal(r->metric, "op.*.us_per_step");
	/* the other step statistics are shown, not judged */
	r = gate_rule_for(th, "step.max_us");
	assert_non_null(r);
	assert_int_equal(r->direction, GATE_INFO);
}

static void test_thresholds_shipped(void **state)
{
	struct gate_thresholds th;
	(void)state;

	parse_file("thresholds/default.json", &th);
	assert_string_equal(th.name, "default");
	check_shipped(&th, 0.02, 0.05, 0.10, 0.10, 0.25, 0.01, 0.02, 0.05, 0.01, 5);
	{
		const struct gate_rule *t = gate_rule_for(&th, "throughput.tflops_per_device");
		assert_close(t->warn.relative, 0.02, 1e-12);
		assert_close(t->fail.relative, 0.05, 1e-12);
	}
	gate_thresholds_release(&th);

	parse_file("thresholds/strict.json", &th);
	assert_string_equal(th.name, "strict");
	check_shipped(&th, 0.01, 0.03, 0.06, 0.05, 0.15, 0.005, 0.01, 0.03, 0.01, 5);
	assert_true(has_identity(&th, "framework_version"));
	assert_int_equal(quality_of(&th, "*"), GATE_WARN); /* any quality warning warns */
	gate_thresholds_release(&th);

	parse_file("thresholds/nightly.json", &th);
	assert_string_equal(th.name, "nightly");
	check_shipped(&th, 0.03, 0.10, 0.15, 0.15, 0.40, 0.02, 0.03, 0.08, 0.01, 5);
	gate_thresholds_release(&th);
}

static void assert_limit_equal(const struct gate_limit *a, const struct gate_limit *b)
{
	assert_int_equal(a->has_relative, b->has_relative);
	assert_int_equal(a->has_absolute, b->has_absolute);
	if (a->has_relative)
		assert_true(a->relative == b->relative);
	if (a->has_absolute)
		assert_true(a->absolute == b->absolute);
}

static void test_thresholds_builtin_is_default_json(void **state)
{
	struct gate_thresholds d, f;
	(void)state;

	gate_thresholds_default(&d);
	parse_file("thresholds/default.json", &f);
	assert_string_equal(d.name, f.name);
	assert_string_equal(d.description, f.description);
	assert_true(d.significance == f.significance);
	assert_int_equal(d.min_samples, f.min_samples);
	assert_int_equal(d.n_identity, f.n_identity);
	for (uint32_t i = 0; i < d.n_identity; i++)
		assert_string_equal(d.identity[i], f.identity[i]);
	assert_int_equal(d.n_quality, f.n_quality);
	for (uint32_t i = 0; i < d.n_quality; i++) {
		assert_string_equal(d.quality[i].code, f.quality[i].code);
		assert_int_equal(d.quality[i].action, f.quality[i].action);
	}
	assert_int_equal(d.n_rules, f.n_rules);
	assert_true(d.n_rules >= 10);
	for (uint32_t i = 0; i < d.n_rules; i++) {
		const struct gate_rule *a = &d.rules[i], *b = &f.rules[i];
		assert_string_equal(a->metric, b->metric);
		assert_int_equal(a->direction, b->direction);
		assert_limit_equal(&a->warn, &b->warn);
		assert_limit_equal(&a->fail, &b->fail);
		assert_true(a->floor_share == b->floor_share);
		assert_limit_equal(&a->noise, &b->noise);
		assert_true(a->noise_step_share == b->noise_step_share);
		assert_true(a->min_step_share == b->min_step_share);
		assert_int_equal(a->test, b->test);
		assert_true(a->significance == b->significance);
		assert_int_equal(a->min_samples, b->min_samples);
		assert_int_equal(a->order, b->order);
		assert_int_equal(a->order, i);
	}
	gate_thresholds_release(&d);
	gate_thresholds_release(&f);
}

static void test_thresholds_minimal_and_labels(void **state)
{
	struct gate_thresholds th;
	const struct gate_rule *r;
	(void)state;

	/* defaults of the docs/gate.md table: significance 0.05, min_samples 5, no identity */
	parse_str("{" SCHEMA ", \"rules\": []}", &th);
	assert_true(fabs(th.significance - 0.05) < 1e-12);
	assert_int_equal(th.min_samples, 5);
	assert_int_equal(th.n_identity, 0);
	assert_int_equal(th.n_rules, 0);
	assert_null(gate_rule_for(&th, "step.median_us"));
	assert_true(fabs(th.min_workload_overlap - GATE_MIN_WORKLOAD_OVERLAP) < 1e-12);
	gate_thresholds_release(&th);
	parse_str("{" SCHEMA ", \"min_workload_overlap\": 0, \"rules\": []}", &th);
	assert_true(th.min_workload_overlap == 0);
	gate_thresholds_release(&th);

	parse_str("{" SCHEMA ", \"name\": \"team\", \"comment\": \"c\", \"significance\": 0.5,"
		  " \"min_samples\": 2, \"identity\": [\"device_kind\", \"labels.team\"],"
		  " \"quality\": {\"event-cap\": \"fail\", \"*\": \"ignore\"},"
		  " \"rules\": [{\"metric\": \"family.*.us_per_step\", \"direction\": \"lower\","
		  " \"warn\": {\"relative\": 0.1, \"absolute\": 5}, \"floor_share\": 0.02,"
		  " \"significance\": 0.01, \"min_samples\": 7, \"test\": false,"
		  " \"comment\": \"x\"}]}",
		  &th);
	assert_string_equal(th.name, "team");
	assert_int_equal(th.n_identity, 2);
	assert_string_equal(th.identity[1], "labels.team");
	assert_int_equal(th.min_samples, 2);
	assert_int_equal(th.n_quality, 2);
	assert_int_equal(quality_of(&th, "event-cap"), GATE_FAIL);
	assert_int_equal(quality_of(&th, "*"), GATE_IGNORE);
	assert_int_equal(th.n_rules, 1);
	r = &th.rules[0];
	assert_true(r->warn.has_relative && r->warn.has_absolute);
	assert_false(r->fail.has_relative || r->fail.has_absolute);
	assert_close(r->warn.absolute, 5, 0);
	assert_close(r->floor_share, 0.02, 1e-12);
	assert_close(r->significance, 0.01, 1e-12);
	assert_int_equal(r->min_samples, 7);
	gate_thresholds_release(&th);
}

static void test_thresholds_refused(void **state)
{
	static const char readme_example[] =
	    "{" SCHEMA ", \"rules\": [" RULE0 ", {\"metric\": \"x\", \"direction\": \"lower\", "
	    "\"warn\": {\"relativ\": 0.1}}]}";
	struct gate_thresholds th;
	int rc;
	(void)state;

	/* docs/gate.md's own example, word for word */
	rc = gate_thresholds_parse(readme_example, strlen(readme_example), "thresholds.json", &th);
	assert_int_equal(rc, PG_EUSAGE);
	assert_string_equal(pg_error_last(), "thresholds.json: rules[1].warn.relativ: unknown key");
	gate_thresholds_release(&th);

	expect_refused("{" SCHEMA ", \"rules\": [], \"rulez\": []}", "rulez");
	expect_refused("{" SCHEMA ", \"significance\": \"0.05\", \"rules\": []}", "significance");
	expect_refused("{" SCHEMA ", \"significance\": 0.6, \"rules\": []}", "significance");
	expect_refused("{" SCHEMA ", \"significance\": 0, \"rules\": []}", "significance");
	expect_refused("{" SCHEMA ", \"min_samples\": 1, \"rules\": []}", "min_samples");
	expect_refused("{" SCHEMA ", \"min_samples\": 2.5, \"rules\": []}", "min_samples");
	expect_refused("{\"rules\": []}", "schema");
	expect_refused("{\"schema\": \"profgate.thresholds/2\", \"rules\": []}", "schema");
	expect_refused("{" SCHEMA "}", "rules");
	expect_refused("{" SCHEMA ", \"rules\": [" RULE0 ", {\"metric\": \"a\", \"direction\": "
		       "\"down\", \"fail\": {\"relative\": 1}}]}",
		       "rules[1].direction");
	expect_refused("{" SCHEMA ", \"rules\": [{\"metric\": \"a\", \"direction\": \"lower\"}]}",
		       "rules[0]");
	expect_refused("{" SCHEMA ", \"rules\": [{\"metric\": \"a\", \"direction\": \"lower\", "
		       "\"warn\": {}}]}",
		       "rules[0].warn");
	expect_refused("{" SCHEMA ", \"rules\": [{\"metric\": \"a\", \"direction\": \"lower\", "
		       "\"fail\": {\"relative\": 0.1}, \"floor_share\": 2}]}",
		       "rules[0].floor_share");
	expect_refused("{" SCHEMA ", \"rules\": [{\"metric\": \"a\", \"direction\": \"lower\", "
		       "\"fail\": {\"relative\": 0.1}, \"test\": 1}]}",
		       "rules[0].test");
	expect_refused("{" SCHEMA ", \"identity\": [\"device_kind\", \"gpu_kind\"], \"rules\": []}",
		       "identity[1]");
	expect_refused("{" SCHEMA ", \"identity\": [\"labels.\"], \"rules\": []}", "identity[0]");
	expect_refused("{" SCHEMA ", \"quality\": {\"event-cap\": \"maybe\"}, \"rules\": []}",
		       "quality.event-cap");
	expect_refused("{" SCHEMA ", \"min_workload_overlap\": 1.5, \"rules\": []}",
		       "min_workload_overlap");
	expect_refused("{" SCHEMA ", \"min_workload_overlap\": \"0.5\", \"rules\": []}",
		       "min_workload_overlap");
	expect_refused("{" SCHEMA ", \"rules\": [", "");
	expect_refused("not json", "");
	expect_refused("[1, 2]", "");
}

/* docs/gate.md: errors name "the key's path"; a rule's comment is rules[N].comment. */
static void test_thresholds_rule_comment_path(void **state)
{
	(void)state;
	expect_refused("{" SCHEMA ", \"rules\": [" RULE0 ", {\"metric\": \"a\", \"direction\": "
		       "\"info\", \"comment\": 5}]}",
		       "rules[1].comment");
}

/* ---- 2. globs and rule choice ---- */

static void test_glob_and_rule_for(void **state)
{
	struct gate_thresholds th;
	const struct gate_rule *r;
	(void)state;

	assert_true(gate_glob_match("op.*.us_per_step", "op.a.b::c.us_per_step"));
	assert_true(gate_glob_match("op.*.us_per_step", "op..us_per_step"));
	assert_false(gate_glob_match("op.*.us_per_step", "op.a.us_per_step_x"));
	assert_true(gate_glob_match("step.p?0_us", "step.p90_us"));
	assert_false(gate_glob_match("step.p?0_us", "step.p0_us"));
	assert_false(gate_glob_match("step.p?0_us", "step.p900_us"));
	assert_true(gate_glob_match("*", ""));
	assert_true(gate_glob_match("*", "anything.at.all"));
	assert_true(gate_glob_match("a*b*c", "aXXbYYbZc"));
	assert_false(gate_glob_match("a*b*c", "aXXbYYbZ"));
	assert_true(gate_glob_match("step.median_us", "step.median_us"));
	assert_false(gate_glob_match("step.median_us", "step.median_usx"));

	parse_str("{" SCHEMA ", \"rules\": ["
		  "{\"metric\": \"*\", \"direction\": \"info\"},"
		  "{\"metric\": \"op.*\", \"direction\": \"info\"},"
		  "{\"metric\": \"op.*.us_per_step\", \"direction\": \"info\"},"
		  "{\"metric\": \"op.?emm.us_per_step\", \"direction\": \"info\"},"
		  "{\"metric\": \"op.gemm.*us_per_step\", \"direction\": \"info\"},"
		  "{\"metric\": \"op.gemm.us_per_step\", \"direction\": \"info\"},"
		  "{\"metric\": \"x.*\", \"direction\": \"info\"},"
		  "{\"metric\": \"*.y\", \"direction\": \"info\"},"
		  "{\"metric\": \"*.z\", \"direction\": \"info\"},"
		  "{\"metric\": \"w.*\", \"direction\": \"info\"}]}",
		  &th);
	/* exact beats every glob, even an earlier one with as many literal
	 * characters ("op.gemm.*us_per_step": 19, its '*' matching nothing) */
	assert_true(gate_glob_match("op.gemm.*us_per_step", "op.gemm.us_per_step"));
	r = gate_rule_for(&th, "op.gemm.us_per_step");
	assert_non_null(r);
	assert_int_equal(r->order, 5);
	assert_string_equal(r->metric, "op.gemm.us_per_step");
	/* then the most literal characters: "op.?emm..." (18) over "op.*..." (14) */
	r = gate_rule_for(&th, "op.hemm.us_per_step");
	assert_int_equal(r->order, 3);
	r = gate_rule_for(&th, "op.a.b::c.us_per_step");
	assert_int_equal(r->order, 2);
	r = gate_rule_for(&th, "op.a.b::c.count");
	assert_int_equal(r->order, 1);
	r = gate_rule_for(&th, "family.matmul.us_per_step");
	assert_int_equal(r->order, 0);
	/* ties: the earlier rule, whichever way round */
	r = gate_rule_for(&th, "x.y");
	assert_string_equal(r->metric, "x.*");
	r = gate_rule_for(&th, "w.z");
	assert_string_equal(r->metric, "*.z");
	gate_thresholds_release(&th);

	/* no match at all */
	parse_str("{" SCHEMA ", \"rules\": [{\"metric\": \"step.*\", \"direction\": \"info\"}]}",
		  &th);
	assert_null(gate_rule_for(&th, "family.matmul.us_per_step"));
	assert_non_null(gate_rule_for(&th, "step.median_us"));
	gate_thresholds_release(&th);
}

/* ---- 3. statistics ---- */

static void test_noise_stats(void **state)
{
	static const double a[] = {100, 102, 98, 101, 99, 103, 97, 100};
	static const double flat[] = {5, 5, 5, 5, 5};
	/* a run whose three slowest steps of 20 are far out: its p90 is far less
	 * certain than a run of evenly spread steps */
	double even[20], tail[20];
	double odd[] = {3, 1, 2}, ev[] = {4, 1, 3, 2};
	(void)state;

	assert_close(gate_median(odd, 3), 2, 0);
	assert_close(gate_median(ev, 4), 2.5, 0);
	assert_close(gate_median(a, 8), 100, 0);
	assert_true(isnan(gate_median(odd, 0)));
	assert_close(odd[0], 3, 0); /* the input is left as it was */
	/* |a - 100| = 0 2 2 1 1 3 3 0: MAD 1.5 */
	assert_close(gate_robust_sd(a, 8), 1.4826 * 1.5, 1e-12);
	assert_close(gate_robust_sd(flat, 5), 0, 0);
	assert_true(isnan(gate_robust_sd(a, 1)));

	/* the normal tail and its inverse */
	assert_close(gate_norm_upper(0), 0.5, 1e-15);
	assert_close(gate_norm_upper(1.6448536269514722), 0.05, 1e-12);
	assert_close(gate_norm_quantile_upper(0.01), 2.3263478740408408, 1e-9);
	assert_close(gate_norm_quantile_upper(0.5), 0, 1e-12);

	for (int i = 0; i < 20; i++) {
		even[i] = 100 + i * 0.5;
		tail[i] = i < 17 ? 100 + i * 0.5 : 150 + i;
	}
	double ve = gate_bootstrap_quantile_var(even, 20, 0.9, 200);
	double vt = gate_bootstrap_quantile_var(tail, 20, 0.9, 200);
	assert_true(ve > 0 && vt > 25 * ve);
	/* fixed seed: the same steps give the same variance */
	assert_close(gate_bootstrap_quantile_var(tail, 20, 0.9, 200), vt, 0);
	assert_close(gate_bootstrap_quantile_var(flat, 5, 0.9, 200), 0, 0);
	assert_close(gate_bootstrap_quantile_var(a, 1, 0.9, 200), 0, 0);
}

/* noise.c: pooled spread, the prior as a floor, the parts' shared level. */
static void test_noise_model(void **state)
{
	static const double b[] = {100, 104, 96, 101, 99}, c[] = {200, 208, 192};
	static const double two[] = {1, 50};
	const double *g[3] = {b, c, two};
	uint32_t n[3] = {5, 3, 2};
	struct gate_thresholds th;
	const struct gate_rule *step, *fam;
	const char *from;
	double sd;
	(void)state;

	/* deviations from each group's own median: 0 4 4 1 1 | 0 8 8; the group
	 * of two is left out: median 2.5 */
	assert_close(gate_noise_pooled_sd(g, n, 3), 1.4826 * 2.5, 1e-12);
	assert_true(isnan(gate_noise_pooled_sd(g + 2, n + 2, 1)));

	gate_thresholds_default(&th);
	step = gate_rule_for(&th, "step.median_us");
	fam = gate_rule_for(&th, "family.matmul.us_per_step");
	/* the step's prior: 2 % of the value */
	assert_close(gate_noise_prior_sd(step, 1000, 1000), 20, 1e-9);
	/* a family's: 3 % of it and 0.7 % of the step in quadrature */
	assert_close(gate_noise_prior_sd(fam, 400, 1000), hypot(12, 7), 1e-9);
	assert_close(gate_noise_prior_sd(NULL, 400, 1000), 0, 0);
	/* an estimate above the prior is used, one below it is not */
	sd = gate_noise_run_sd(step, 35, 1000, 1000, "runs", &from);
	assert_close(sd, 35, 0);
	assert_string_equal(from, "runs");
	sd = gate_noise_run_sd(step, 5, 1000, 1000, "history", &from);
	assert_close(sd, 20, 1e-9);
	assert_string_equal(from, "prior");
	sd = gate_noise_run_sd(step, NAN, 1000, 1000, "runs", &from);
	assert_string_equal(from, "prior");

	/* the file's level for the step; a part's shared by the parts judged */
	assert_close(gate_level(&th, step, "step.median_us", 10), 0.01, 1e-15);
	assert_close(gate_level(&th, fam, "family.matmul.us_per_step", 10), 0.001, 1e-15);
	assert_close(gate_level(&th, fam, "op.x.us_per_step", 1), 0.01, 1e-15);
	assert_true(gate_metric_is_part("collective.all-reduce.us_per_step"));
	assert_false(gate_metric_is_part("step.p90_us"));
	assert_false(gate_metric_is_part("breakdown.idle_share"));

	/* a judged rule without "noise" takes the built-in default's prior for
	 * its metric; one that gives its own keeps it; info rules get none */
	{
		static const char text[] =
		    "{\"schema\": \"profgate.thresholds/1\", \"rules\": ["
		    "{\"metric\": \"family.matmul.us_per_step\", \"direction\": \"lower\", "
		    "\"fail\": {\"relative\": 0.2}},"
		    "{\"metric\": \"step.median_us\", \"direction\": \"lower\", "
		    "\"fail\": {\"relative\": 0.05}, \"noise\": {\"relative\": 0.001}},"
		    "{\"metric\": \"region.*\", \"direction\": \"info\"}]}";
		struct gate_thresholds old;
		assert_int_equal(gate_thresholds_parse(text, sizeof(text) - 1, "old.json", &old),
				 0);
		assert_close(old.rules[0].noise.relative, 0.03, 1e-12);
		assert_close(old.rules[0].noise_step_share, 0.007, 1e-12);
		assert_close(old.rules[1].noise.relative, 0.001, 1e-12);
		assert_false(old.rules[2].noise.has_relative);
		gate_thresholds_release(&old);
	}

	/* a side's value is the median of its runs: one or two runs vary as
	 * their mean, three or more more than it (0.449 of one run's variance at
	 * 3, not 1/3), tending to pi / 2n */
	assert_close(gate_noise_median_var(1), 1, 0);
	assert_close(gate_noise_median_var(2), 0.5, 0);
	assert_close(gate_noise_median_var(3), 0.4487, 5e-4);
	assert_close(gate_noise_median_var(5), 0.2868, 5e-4);
	assert_true(gate_noise_median_var(4) < gate_noise_median_var(3) &&
		    gate_noise_median_var(4) > 0.25);
	assert_close(gate_noise_median_var(200), M_PI / 400, 1e-12);
	assert_close(gate_noise_median_var(0), 1, 0);

	assert_close(gate_z(2, 4), 0.5, 0);
	assert_true(isinf(gate_z(1, 0)) && gate_z(1, 0) > 0);
	assert_close(gate_z(0, 0), 0, 0);
	gate_thresholds_release(&th);
}

static void test_verdict_order(void **state)
{
	(void)state;
	assert_int_equal(gate_verdict_severity(GATE_PASS), gate_verdict_severity(GATE_NEW));
	assert_int_equal(gate_verdict_severity(GATE_PASS), gate_verdict_severity(GATE_GONE));
	assert_int_equal(gate_verdict_severity(GATE_PASS), gate_verdict_severity(GATE_RECORDED));
	assert_int_equal(gate_verdict_exit(GATE_RECORDED), 0);
	assert_true(gate_verdict_severity(GATE_PASS) < gate_verdict_severity(GATE_IMPROVED));
	assert_true(gate_verdict_severity(GATE_IMPROVED) <
		    gate_verdict_severity(GATE_INCONCLUSIVE));
	assert_true(gate_verdict_severity(GATE_INCONCLUSIVE) < gate_verdict_severity(GATE_WARN));
	assert_true(gate_verdict_severity(GATE_WARN) < gate_verdict_severity(GATE_FAIL));
	assert_true(gate_verdict_severity(GATE_FAIL) < gate_verdict_severity(GATE_INCOMPARABLE));
	assert_int_equal(gate_verdict_exit(GATE_PASS), 0);
	assert_int_equal(gate_verdict_exit(GATE_IMPROVED), 0);
	assert_int_equal(gate_verdict_exit(GATE_WARN), 0);
	assert_int_equal(gate_verdict_exit(GATE_INCONCLUSIVE), 0);
	assert_int_equal(gate_verdict_exit(GATE_FAIL), 1);
	assert_int_equal(gate_verdict_exit(GATE_INCOMPARABLE), 4);
	assert_string_equal(gate_verdict_name(GATE_INCONCLUSIVE), "inconclusive");
	assert_string_equal(gate_verdict_name(GATE_INCOMPARABLE), "incomparable");
}

/* ---- summaries built here ---- */

#define SHA_B "b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0"
#define SHA_C "c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1"

static const double base8[] = {1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007}; /* med 1003.5 */
static const double slow8[] = {1100, 1101, 1102, 1103, 1104, 1105, 1106, 1107}; /* +9.97% */

static int cmp_dbl(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

static void steady_stats(struct summary *s)
{
	double v[64], sum = 0;
	uint32_t n = 0;

	for (uint32_t i = 0; i < s->n_steps && n < 64; i++)
		if (s->steps[i].steady)
			v[n++] = s->steps[i].us;
	memset(&s->steady, 0, sizeof(s->steady));
	s->steady.count = n;
	if (n == 0)
		return;
	qsort(v, n, sizeof(double), cmp_dbl);
	for (uint32_t i = 0; i < n; i++)
		sum += v[i];
	s->steady.median_us = gate_median(v, n);
	s->steady.p90_us = v[(uint32_t)ceil(0.9 * n) - 1];
	s->steady.mean_us = sum / n;
	s->steady.min_us = v[0];
	s->steady.max_us = v[n - 1];
}

/* One device, n steady steps of the given times, one profile file. */
static void make_side(struct summary *s, const char *kind, const double *steps, uint32_t n,
		      const char *file, const char *sha)
{
	summary_init(s);
	s->device_kind = pg_xstrdup(kind);
	s->framework = pg_xstrdup("pytorch");
	s->step_source = pg_xstrdup("profiler-step");
	s->basis = pg_xstrdup("steps");
	s->device_count = 1;
	s->host_count = 1;
	s->world_size = -1;
	s->steps_captured = n;
	s->steps = pg_xcalloc(n + 1, sizeof(*s->steps));
	s->n_steps = n;
	for (uint32_t i = 0; i < n; i++) {
		s->steps[i].step = i;
		s->steps[i].us = steps[i];
		s->steps[i].host_us = -1;
		s->steps[i].steady = 1;
		/* a summary's invariant: one time per device per step (the verdict
		 * JSON digests the whole summary) */
		s->steps[i].device_us = pg_xcalloc(1, sizeof(double));
		s->steps[i].device_us[0] = steps[i];
	}
	steady_stats(s);
	s->n_devices = 1;
	s->devices = pg_xcalloc(1, sizeof(*s->devices));
	s->devices[0].id = pg_xstrdup("gpu0");
	s->devices[0].rank = -1;
	s->devices[0].steady.compute_us = 800.0 * n;
	s->devices[0].steady.exposed_comm_us = 50.0 * n;
	s->devices[0].steady.comm_us = 50.0 * n;
	s->devices[0].steady.idle_us = 100.0 * n;
	s->devices[0].steady.wall_us = 950.0 * n; /* the parts' sum: a steady window */
	s->mean.compute_share = 0.8;
	s->mean.exposed_comm_share = 0.05;
	s->mean.exposed_memcpy_share = 0;
	s->mean.idle_share = 0.1;
	s->mean.comm_overlap_share = 0;
	s->basis_devices = 1;
	s->basis_steady_steps = n;
	s->files = pg_xcalloc(1, sizeof(*s->files));
	s->n_files = 1;
	s->files[0].path = pg_xstrdup(file);
	s->files[0].sha256 = sha ? pg_xstrdup(sha) : NULL;
	s->files[0].rank = -1;
}

static void add_family(struct summary *s, const char *name, double us)
{
	struct sum_family *f;

	s->families = pg_xrealloc(s->families, (s->n_families + 1) * sizeof(*s->families));
	f = &s->families[s->n_families++];
	memset(f, 0, sizeof(*f));
	f->family = pg_xstrdup(name);
	f->us_per_step = us;
	f->share = s->steady.median_us > 0 ? us / s->steady.median_us : 0;
}

static void add_op(struct summary *s, const char *name, const char *family, double us)
{
	struct sum_op *o;

	s->ops = pg_xrealloc(s->ops, (s->n_ops + 1) * sizeof(*s->ops));
	o = &s->ops[s->n_ops++];
	memset(o, 0, sizeof(*o));
	o->name = pg_xstrdup(name);
	o->family = pg_xstrdup(family);
	o->self_us_per_step = us;
	o->total_us_per_step = us;
}

static void add_label(struct summary *s, const char *kv)
{
	s->labels = pg_xrealloc(s->labels, (s->n_labels + 1) * sizeof(char *));
	s->labels[s->n_labels++] = pg_xstrdup(kv);
}

/* matmul (gemm_a, gemm_b) and elementwise (add) */
static void add_lists(struct summary *s, double gemm_a, double gemm_b)
{
	add_family(s, "matmul", gemm_a + gemm_b);
	add_family(s, "elementwise", 300);
	add_op(s, "gemm_a", "matmul", gemm_a);
	add_op(s, "gemm_b", "matmul", gemm_b);
	add_op(s, "add", "elementwise", 300);
}

static const struct gate_inputs inputs = {
    "base.json", "cand.json", NULL, NULL, NULL, "built-in default", "0.1.0", NULL, NULL, NULL,
};

static const struct gate_metric_result *find_metric(const struct gate_result *r, const char *name)
{
	for (uint32_t i = 0; i < r->n_metrics; i++)
		if (strcmp(r->metrics[i].name, name) == 0)
			return &r->metrics[i];
	return NULL;
}

static const struct gate_metric_result *metric(const struct gate_result *r, const char *name)
{
	const struct gate_metric_result *m = find_metric(r, name);
	if (!m)
		fail_msg("no metric %s", name);
	return m;
}

#define assert_verdict(r, name, v) check_verdict((r), (name), (v), __LINE__)

static void check_verdict(const struct gate_result *r, const char *name, enum gate_verdict v,
			  int line)
{
	const struct gate_metric_result *m = metric(r, name);
	if (m->verdict != v)
		fail_msg("line %d: %s: %s, expected %s (note: %s)", line, name,
			 gate_verdict_name(m->verdict), gate_verdict_name(v),
			 m->note ? m->note : "none");
}

static void release_all(struct gate_result *r, struct summary *b, struct summary *c,
			struct gate_thresholds *th)
{
	gate_result_release(r);
	summary_release(b);
	summary_release(c);
	gate_thresholds_release(th);
}

/* ---- 4. compare ---- */

/* Attribution adds up when it lists an op rather than its family: matmul's
 * time moves inside the family (gemm_a +150, gemm_b -140, the family +10,
 * within noise), so the line lists the two ops, and the listed parts and the
 * rest sum to the step's change (+100). */
static void test_attribution_adds_up_ops(void **state)
{
	struct summary b, c;
	struct gate_thresholds th;
	struct gate_result r;
	double sum = 0;
	uint32_t ops = 0;
	(void)state;

	make_side(&b, "NVIDIA H100", base8, 8, "base.json", SHA_B);
	add_lists(&b, 250, 250);
	make_side(&c, "NVIDIA H100", slow8, 8, "cand.json", SHA_C);
	add_lists(&c, 400, 110);
	gate_thresholds_default(&th);
	gate_compare(&b, &c, &th, &inputs, &r);
	assert_close(r.step_delta_us, 100, 1e-9);
	for (uint32_t i = 0; i < r.n_attribution; i++) {
		assert_false(r.attribution[i].kind == GATE_ATTR_FAMILY &&
			     strcmp(r.attribution[i].name, "matmul") == 0);
		if (gate_attribution_nested(&r, i))
			continue;
		ops += r.attribution[i].kind == GATE_ATTR_OP;
		sum += r.attribution[i].delta_us_per_step;
	}
	assert_true(ops >= 1);
	assert_close(sum + r.attribution_remainder_us, r.step_delta_us, 1e-9);
	release_all(&r, &b, &c, &th);
}

/* (a) family +30%, candidate steps 10% slower, 8 steady steps each: fail. */
static void test_compare_fail(void **state)
{
	struct summary b, c;
	struct gate_thresholds th;
	struct gate_result r;
	const struct gate_metric_result *m;
	(void)state;

	make_side(&b, "NVIDIA H100", base8, 8, "base.json", SHA_B);
	add_lists(&b, 400, 100);
	make_side(&c, "NVIDIA H100", slow8, 8, "cand.json", SHA_C);
	add_lists(&c, 540, 110);
	gate_thresholds_default(&th);
	gate_compare(&b, &c, &th, &inputs, &r);

	assert_string_equal(r.provenance, "comparable");
	assert_int_equal(r.n_diff, 0);
	assert_int_equal(r.verdict, GATE_FAIL);
	assert_int_equal(gate_verdict_exit(r.verdict), 1);

	/* the headline: one run a side, so the noise is the rule's prior (2 % of
	 * a run's value) for each run, plus the spread of the steps inside them;
	 * one-sided toward slower */
	assert_true(r.has_step);
	assert_close(r.step_baseline_us, 1003.5, 1e-9);
	assert_close(r.step_candidate_us, 1103.5, 1e-9);
	assert_close(r.step_delta_us, 100, 1e-9);
	assert_close(r.step_delta_share, 100 / 1003.5, 1e-12);
	assert_true(r.step_tested);
	assert_string_equal(r.step_samples, "steps");
	assert_int_equal(r.step_n_baseline, 8);
	assert_int_equal(r.step_n_candidate, 8);
	m = metric(&r, "step.median_us");
	assert_string_equal(m->noise_from, "prior");
	assert_true(m->noise_sd >= sqrt(2) * 0.02 * 1003.5 - 1e-9);
	assert_true(m->noise_sd < sqrt(2) * 0.02 * 1003.5 * 1.01);
	assert_close(r.step_p_value, gate_norm_upper(100 / m->noise_sd), 1e-15);
	assert_true(r.step_p_value < 0.01);
	/* the interval at 1 - 2 alpha: its lower end is the one-sided test */
	assert_close(r.confidence, 0.98, 1e-12);
	assert_true(r.has_interval);
	assert_close(r.interval_lo_share,
		     (100 - gate_norm_quantile_upper(0.01) * m->noise_sd) / 1003.5, 1e-12);
	assert_close(r.interval_hi_share,
		     (100 + gate_norm_quantile_upper(0.01) * m->noise_sd) / 1003.5, 1e-12);
	assert_true(r.interval_lo_share > 0);

	assert_int_equal(m->verdict, GATE_FAIL);
	assert_true(m->tested);
	assert_close(m->p_value, r.step_p_value, 0);
	assert_int_equal(m->n_baseline, 8);
	assert_int_equal(m->n_candidate, 8);
	/* p90 (the slowest of 8 here): 1007 -> 1107 is +9.93%, past warn 5%, but
	 * a run's p90 moves 15 % between runs (the prior `make noise` measured):
	 * within noise */
	assert_verdict(&r, "step.p90_us", GATE_PASS);
	assert_non_null(strstr(metric(&r, "step.p90_us")->note, "within noise"));
	assert_verdict(&r, "step.mean_us", GATE_PASS); /* info */
	assert_int_equal(metric(&r, "step.mean_us")->rule->direction, GATE_INFO);

	m = metric(&r, "family.matmul.us_per_step");
	assert_int_equal(m->verdict, GATE_FAIL);
	assert_int_equal(m->kind, GATE_K_FAMILY);
	assert_string_equal(m->subject, "matmul");
	assert_close(m->delta, 150, 1e-9);
	assert_close(m->delta_share, 0.3, 1e-12);
	assert_string_equal(m->rule->metric, "family.*.us_per_step");
	assert_verdict(&r, "family.elementwise.us_per_step", GATE_PASS);
	assert_verdict(&r, "op.gemm_a.us_per_step", GATE_FAIL); /* +35% */
	/* +10 %, 10 us: past the warn limit, but within a part's noise */
	assert_verdict(&r, "op.gemm_b.us_per_step", GATE_PASS);
	assert_verdict(&r, "op.add.us_per_step", GATE_PASS);
	assert_verdict(&r, "breakdown.idle_share", GATE_PASS);
	/* catalogue order */
	for (uint32_t i = 1; i < r.n_metrics; i++)
		assert_true(strcmp(r.metrics[i - 1].name, r.metrics[i].name) < 0);

	/* attribution: the parts beyond their noise (the step moved beyond its
	 * own, so a part moving with it needs z of 1.645, one-sided 5 %; one
	 * moving against it the Bonferroni bound, at least 3), furthest first:
	 * matmul +150 (z 6.3), then gemm_a +140 (z 3.9); gemm_b's +10 and the
	 * idle time are within noise */
	assert_int_equal(r.n_attribution, 2);
	assert_close(r.attribution_z, gate_norm_quantile_upper(0.05), 1e-12);
	assert_true(r.attribution_z_against >= 3);
	assert_true(r.attribution[0].z > r.attribution[1].z && r.attribution[1].z >= 2);
	/* what the families leave of the step change: 100 - 150 */
	assert_close(r.attribution_remainder_us, -50, 1e-9);
	assert_int_equal(r.attribution[0].kind, GATE_ATTR_FAMILY);
	assert_string_equal(r.attribution[0].name, "matmul");
	assert_close(r.attribution[0].delta_us_per_step, 150, 1e-9);
	assert_non_null(r.attribution[0].detail);
	assert_non_null(strstr(r.attribution[0].detail, "gemm_a"));
	assert_int_equal(r.attribution[1].kind, GATE_ATTR_OP);
	assert_string_equal(r.attribution[1].name, "gemm_a");
	assert_close(r.attribution[1].delta_us_per_step, 140, 1e-9);
	/* breakdown per step, mean over devices */
	assert_close(r.bd_baseline_us[0], 800, 1e-9);
	assert_close(r.bd_candidate_us[3], 100, 1e-9);

	release_all(&r, &b, &c, &th);
}

/* (b) the same change with two steps a side: no fail. */
static void test_compare_two_steps(void **state)
{
	static const double b2[] = {1000, 1001}, c2[] = {1100, 1101};
	struct summary b, c;
	struct gate_thresholds th;
	struct gate_result r;
	const struct gate_metric_result *m;
	(void)state;

	make_side(&b, "NVIDIA H100", b2, 2, "base.json", SHA_B);
	add_lists(&b, 400, 100);
	make_side(&c, "NVIDIA H100", c2, 2, "cand.json", SHA_C);
	add_lists(&c, 540, 110);
	gate_thresholds_default(&th);
	gate_compare(&b, &c, &th, &inputs, &r);

	assert_true(r.has_step);
	assert_false(r.step_tested);
	assert_false(r.has_interval);
	m = metric(&r, "step.median_us");
	assert_int_equal(m->verdict, GATE_INCONCLUSIVE);
	assert_non_null(m->note);
	assert_verdict(&r, "step.p90_us", GATE_INCONCLUSIVE);
	m = metric(&r, "family.matmul.us_per_step");
	assert_int_equal(m->verdict, GATE_WARN);
	assert_non_null(m->note);
	assert_non_null(strstr(m->note, "steps"));
	assert_verdict(&r, "op.gemm_a.us_per_step", GATE_WARN);
	assert_int_not_equal(r.verdict, GATE_FAIL);
	assert_int_equal(r.verdict, GATE_WARN);
	assert_int_equal(gate_verdict_exit(r.verdict), 0);

	release_all(&r, &b, &c, &th);
}

/* docs/gate.md: "Any other metric past its fail limit is capped at warn when either
 * side has fewer than min_samples steps" — steps, not device-steps: "two ranks
 * of one job differ as much as a regression does". Two steps on four devices
 * give device-step samples for the step test, but the family stays capped. */
static void make_ranks(struct summary *s, const char *file, const char *sha, double matmul)
{
	static const double steps[] = {1003, 1007};

	make_side(s, "NVIDIA H100", steps, 2, file, sha);
	s->device_count = 4;
	free(s->devices[0].id);
	free(s->devices);
	s->n_devices = 4;
	s->devices = pg_xcalloc(4, sizeof(*s->devices));
	for (uint32_t d = 0; d < 4; d++) {
		s->devices[d].id = pg_xstrdup("gpu");
		s->devices[d].index = (int32_t)d;
		s->devices[d].rank = (int32_t)d;
		s->devices[d].steady.compute_us = 1600;
		s->devices[d].steady.idle_us = 200;
	}
	for (uint32_t i = 0; i < 2; i++) {
		free(s->steps[i].device_us); /* make_side's one device */
		s->steps[i].device_us = pg_xcalloc(4, sizeof(double));
		for (uint32_t d = 0; d < 4; d++)
			s->steps[i].device_us[d] = 1000 + 4 * i + d;
	}
	add_family(s, "matmul", matmul);
}

static void test_compare_device_steps_cap(void **state)
{
	struct summary b, c;
	struct gate_thresholds th;
	struct gate_result r;
	const struct gate_metric_result *m;
	enum gate_verdict fam, overall;
	(void)state;

	make_ranks(&b, "base.json", SHA_B, 500);
	make_ranks(&c, "cand.json", SHA_C, 650);
	gate_thresholds_default(&th);
	gate_compare(&b, &c, &th, &inputs, &r);

	/* the step test runs on device-steps (docs/gate.md) */
	assert_string_equal(r.step_samples, "device-steps");
	assert_int_equal(r.step_n_baseline, 8);
	assert_int_equal(r.step_n_candidate, 8);
	m = metric(&r, "step.median_us");
	assert_true(m->tested);
	assert_int_equal(m->verdict, GATE_PASS);
	/* and eight device-steps a side are enough samples for the family's +30%
	 * to fail (docs/gate.md: step samples are steps, or device-steps where chosen;
	 * checked after the release, so a failure here does not also leak) */
	fam = metric(&r, "family.matmul.us_per_step")->verdict;
	overall = r.verdict;
	release_all(&r, &b, &c, &th);
	if (fam != GATE_FAIL || overall != GATE_FAIL)
		fail_msg("two steps on four devices: family.matmul.us_per_step %s, overall %s; "
			 "eight device-steps a side reach min_samples",
			 gate_verdict_name(fam), gate_verdict_name(overall));
}

/* docs/gate.md: a rule's "min_samples" overrides the file's "for this rule"; the
 * warn cap of an untested metric follows the metric's own rule. Eight steps
 * meet the file's 5 but not the family rule's 10. */
static void test_compare_rule_min_samples(void **state)
{
	struct summary b, c;
	struct gate_thresholds th;
	struct gate_result r;
	enum gate_verdict fam, step;
	(void)state;

	make_side(&b, "NVIDIA H100", base8, 8, "base.json", SHA_B);
	add_family(&b, "matmul", 500);
	make_side(&c, "NVIDIA H100", base8, 8, "cand.json", SHA_C);
	add_family(&c, "matmul", 650);
	parse_str("{" SCHEMA ", \"min_samples\": 5, \"rules\": ["
		  "{\"metric\": \"step.median_us\", \"direction\": \"lower\", \"test\": true,"
		  " \"fail\": {\"relative\": 0.05}},"
		  "{\"metric\": \"family.*.us_per_step\", \"direction\": \"lower\","
		  " \"min_samples\": 10, \"fail\": {\"relative\": 0.25}}]}",
		  &th);
	gate_compare(&b, &c, &th, &inputs, &r);
	step = metric(&r, "step.median_us")->verdict;
	fam = metric(&r, "family.matmul.us_per_step")->verdict;
	release_all(&r, &b, &c, &th);
	assert_int_equal(step, GATE_PASS);
	if (fam != GATE_WARN)
		fail_msg(
		    "family rule min_samples 10, 8 steps a side: family.matmul.us_per_step %s, "
		    "expected warn",
		    gate_verdict_name(fam));
}

/* (c) unlike devices: refused with the diff, nothing compared. */
static void test_compare_incomparable(void **state)
{
	struct summary b, c;
	struct gate_thresholds th;
	struct gate_result r;
	(void)state;

	make_side(&b, "NVIDIA H100", base8, 8, "base.json", SHA_B);
	add_lists(&b, 400, 100);
	make_side(&c, "AMD Instinct MI300X", slow8, 8, "cand.json", SHA_C);
	add_lists(&c, 540, 110);
	gate_thresholds_default(&th);
	gate_compare(&b, &c, &th, &inputs, &r);

	assert_int_equal(r.verdict, GATE_INCOMPARABLE);
	assert_int_equal(gate_verdict_exit(r.verdict), 4);
	assert_string_equal(r.provenance, "incomparable");
	assert_int_equal(r.n_diff, 1);
	assert_string_equal(r.diff[0].field, "device_kind");
	assert_string_equal(r.diff[0].baseline, "NVIDIA H100");
	assert_string_equal(r.diff[0].candidate, "AMD Instinct MI300X");
	assert_int_equal(r.n_metrics, 0);
	assert_int_equal(r.n_attribution, 0);
	assert_false(r.has_step);
	release_all(&r, &b, &c, &th);

	/* labels.KEY as identity: a different value, and a missing one ("null") */
	make_side(&b, "NVIDIA H100", base8, 8, "base.json", SHA_B);
	add_label(&b, "team=infra");
	add_label(&b, "teamx=y");
	make_side(&c, "NVIDIA H100", base8, 8, "cand.json", SHA_C);
	add_label(&c, "team=research");
	parse_str("{" SCHEMA ", \"identity\": [\"labels.team\", \"labels.teamx\", "
		  "\"device_kind\"], \"rules\": []}",
		  &th);
	gate_compare(&b, &c, &th, &inputs, &r);
	assert_int_equal(r.verdict, GATE_INCOMPARABLE);
	assert_string_equal(r.provenance, "incomparable");
	assert_int_equal(r.n_diff, 2);
	assert_string_equal(r.diff[0].field, "labels.team");
	assert_string_equal(r.diff[0].baseline, "infra");
	assert_string_equal(r.diff[0].candidate, "research");
	assert_string_equal(r.diff[1].field, "labels.teamx");
	assert_string_equal(r.diff[1].baseline, "y");
	assert_string_equal(r.diff[1].candidate, "null");
	release_all(&r, &b, &c, &th);

	/* the same labels pass provenance */
	make_side(&b, "NVIDIA H100", base8, 8, "base.json", SHA_B);
	add_label(&b, "team=infra");
	add_lists(&b, 400, 100);
	make_side(&c, "NVIDIA H100", base8, 8, "cand.json", SHA_C);
	add_label(&c, "team=infra");
	add_lists(&c, 401, 100); /* see test_compare_nothing_moved */
	parse_str("{" SCHEMA ", \"identity\": [\"labels.team\"], \"rules\": []}", &th);
	gate_compare(&b, &c, &th, &inputs, &r);
	assert_string_equal(r.provenance, "comparable");
	assert_int_not_equal(r.verdict, GATE_INCOMPARABLE);
	release_all(&r, &b, &c, &th);
}

/* (d) and (e): identical inputs are refused, by profile sha256 or input sha256. */
/* The workload fingerprint: far-apart op sets are incomparable with the
 * evidence; a slower op, or a new one in the candidate, is a change to judge;
 * min_workload_overlap 0 turns the check off; an unknown model is named so. */
static void test_compare_workload(void **state)
{
	struct summary b, c;
	struct gate_thresholds th;
	struct gate_result r;
	(void)state;

	/* the same ops, one 35% slower: comparable, overlap 1 */
	make_side(&b, "gpu", base8, 8, "base.json", SHA_B);
	add_lists(&b, 400, 100);
	make_side(&c, "gpu", slow8, 8, "cand.json", SHA_C);
	add_lists(&c, 540, 110);
	gate_thresholds_default(&th);
	gate_compare(&b, &c, &th, &inputs, &r);
	assert_string_equal(r.provenance, "comparable");
	assert_true(fabs(r.workload_overlap - 1) < 1e-12);
	assert_null(r.refusal);
	release_all(&r, &b, &c, &th);

	/* a new kernel worth most of the candidate's time: still the same workload */
	make_side(&b, "gpu", base8, 8, "base.json", SHA_B);
	add_lists(&b, 400, 100);
	make_side(&c, "gpu", slow8, 8, "cand.json", SHA_C);
	add_lists(&c, 400, 100);
	add_op(&c, "new_kernel", "other", 5000);
	gate_thresholds_default(&th);
	gate_compare(&b, &c, &th, &inputs, &r);
	assert_string_equal(r.provenance, "comparable");
	release_all(&r, &b, &c, &th);

	/* another model: 300 of the baseline's 800 us in shared ops (37.5%) */
	make_side(&b, "gpu", base8, 8, "base.json", SHA_B);
	add_lists(&b, 400, 100);
	make_side(&c, "NVIDIA H100", base8, 8, "cand.json", SHA_C);
	add_op(&c, "softmax", "reduce", 700);
	add_op(&c, "add", "elementwise", 300);
	gate_thresholds_default(&th);
	gate_compare(&b, &c, &th, &inputs, &r);
	assert_int_equal(r.verdict, GATE_INCOMPARABLE);
	assert_int_equal(gate_verdict_exit(r.verdict), 4);
	assert_true(fabs(r.workload_overlap - 0.375) < 1e-9);
	assert_int_equal(r.n_diff, 2);
	assert_string_equal(r.diff[0].field, "device_kind");
	assert_string_equal(r.diff[1].field, "workload");
	assert_string_equal(r.diff[1].baseline, "gpu; only here: gemm_a (50.0%), gemm_b (12.5%)");
	assert_string_equal(r.diff[1].candidate, "NVIDIA H100; only here: softmax (70.0%)");
	assert_non_null(r.refusal);
	assert_non_null(strstr(r.refusal, "gpu (model unknown) vs NVIDIA H100: "));
	assert_non_null(strstr(r.refusal, "37.5% of the baseline's op time"));
	assert_null(strchr(r.refusal, '\n'));
	release_all(&r, &b, &c, &th);

	/* relaxed on purpose: compared */
	make_side(&b, "NVIDIA H100", base8, 8, "base.json", SHA_B);
	add_lists(&b, 400, 100);
	make_side(&c, "NVIDIA H100", base8, 8, "cand.json", SHA_C);
	add_op(&c, "softmax", "reduce", 700);
	add_op(&c, "add", "elementwise", 300);
	parse_str("{" SCHEMA ", \"min_workload_overlap\": 0, \"rules\": []}", &th);
	gate_compare(&b, &c, &th, &inputs, &r);
	assert_string_equal(r.provenance, "comparable");
	assert_true(fabs(r.workload_overlap - 0.375) < 1e-9);
	release_all(&r, &b, &c, &th);

	/* a side without op time is not fingerprinted */
	make_side(&b, "NVIDIA H100", base8, 8, "base.json", SHA_B);
	add_lists(&b, 400, 100);
	make_side(&c, "NVIDIA H100", base8, 8, "cand.json", SHA_C);
	gate_thresholds_default(&th);
	gate_compare(&b, &c, &th, &inputs, &r);
	assert_string_equal(r.provenance, "comparable");
	assert_true(isnan(r.workload_overlap));
	release_all(&r, &b, &c, &th);
}

static void test_compare_identical_inputs(void **state)
{
	struct summary b, c;
	struct gate_thresholds th;
	struct gate_result r;
	struct gate_inputs in = inputs;
	(void)state;

	make_side(&b, "NVIDIA H100", base8, 8, "run1/trace.json", SHA_B);
	add_lists(&b, 400, 100);
	make_side(&c, "NVIDIA H100", slow8, 8, "run2/trace.json", SHA_B);
	add_lists(&c, 540, 110);
	gate_thresholds_default(&th);
	gate_compare(&b, &c, &th, &inputs, &r);
	assert_string_equal(r.provenance, "identical-inputs");
	assert_int_equal(r.verdict, GATE_INCOMPARABLE);
	assert_int_equal(gate_verdict_exit(r.verdict), 4);
	assert_int_equal(r.n_metrics, 0);
	release_all(&r, &b, &c, &th);

	make_side(&b, "NVIDIA H100", base8, 8, "base.json", SHA_B);
	add_lists(&b, 400, 100);
	make_side(&c, "NVIDIA H100", slow8, 8, "cand.json", SHA_C);
	add_lists(&c, 540, 110);
	gate_thresholds_default(&th);
	in.baseline_sha256 = SHA_B;
	in.candidate_sha256 = SHA_B;
	gate_compare(&b, &c, &th, &in, &r);
	assert_string_equal(r.provenance, "identical-inputs");
	assert_int_equal(r.verdict, GATE_INCOMPARABLE);
	assert_int_equal(r.n_metrics, 0);
	gate_result_release(&r);

	/* different input bytes and different profiles: compared */
	in.candidate_sha256 = SHA_C;
	gate_compare(&b, &c, &th, &in, &r);
	assert_string_equal(r.provenance, "comparable");
	assert_true(r.n_metrics > 0);
	release_all(&r, &b, &c, &th);
}

/* (f) no steady steps anywhere: the step rows are inconclusive, never a pass. */
static void test_compare_no_steps(void **state)
{
	struct summary b, c;
	struct gate_thresholds th;
	struct gate_result r;
	const struct gate_metric_result *m;
	struct pg_buf out = PG_BUF_INIT;
	cJSON *root;
	(void)state;

	make_side(&b, "NVIDIA H100", NULL, 0, "base.json", SHA_B);
	add_lists(&b, 400, 100);
	make_side(&c, "NVIDIA H100", NULL, 0, "cand.json", SHA_C);
	add_lists(&c, 401, 100); /* +0.25%: see test_compare_nothing_moved */
	gate_thresholds_default(&th);
	gate_compare(&b, &c, &th, &inputs, &r);

	assert_false(r.has_step);
	assert_false(r.step_tested);
	m = metric(&r, "step.median_us");
	assert_int_equal(m->verdict, GATE_INCONCLUSIVE);
	assert_false(m->has_baseline);
	assert_false(m->has_candidate);
	assert_verdict(&r, "step.p90_us", GATE_INCONCLUSIVE);
	assert_verdict(&r, "family.matmul.us_per_step", GATE_PASS);
	assert_int_equal(r.verdict, GATE_INCONCLUSIVE);
	assert_int_equal(gate_verdict_exit(r.verdict), 0);

	gate_result_write_json(&r, &out);
	root = cJSON_ParseWithLength(out.ptr, out.len);
	assert_non_null(root);
	assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(root, "step")));
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(root, "verdict")->valuestring,
			    "inconclusive");
	cJSON_Delete(root);
	pg_buf_release(&out);
	release_all(&r, &b, &c, &th);
}

/* A null share (not defined) is no metric: a candidate without communication
 * has no comm overlap, one whose devices have no steady window no breakdown
 * at all. Under rules that would fail a drop to 0, they are gone, not judged. */
static void test_compare_null_shares(void **state)
{
	struct summary b, c;
	struct gate_thresholds th;
	struct gate_result r;
	(void)state;

	parse_str("{" SCHEMA ", \"rules\": [" RULE0 ", "
		  "{\"metric\": \"breakdown.comm_overlap_share\", \"direction\": \"higher\", "
		  "\"fail\": {\"absolute\": 0.05}}, "
		  "{\"metric\": \"breakdown.idle_share\", \"direction\": \"lower\", "
		  "\"fail\": {\"absolute\": 0.05}}]}",
		  &th);
	make_side(&b, "NVIDIA H100", base8, 8, "base.json", SHA_B);
	b.mean.comm_overlap_share = 0.6;
	make_side(&c, "NVIDIA H100", base8, 8, "cand.json", SHA_C);
	c.mean.comm_overlap_share = -1;
	gate_compare(&b, &c, &th, &inputs, &r);
	assert_verdict(&r, "breakdown.comm_overlap_share", GATE_GONE);
	assert_false(metric(&r, "breakdown.comm_overlap_share")->has_candidate);
	assert_verdict(&r, "breakdown.idle_share", GATE_PASS);
	assert_int_equal(r.verdict, GATE_PASS);
	gate_result_release(&r);

	/* both sides null: no row at all */
	b.mean.comm_overlap_share = -1;
	gate_compare(&b, &c, &th, &inputs, &r);
	assert_null(find_metric(&r, "breakdown.comm_overlap_share"));
	gate_result_release(&r);

	/* no device with a steady window in the candidate: every share is null */
	summary_view_undefined(&c.mean);
	gate_compare(&b, &c, &th, &inputs, &r);
	assert_verdict(&r, "breakdown.idle_share", GATE_GONE);
	assert_verdict(&r, "breakdown.compute_share", GATE_GONE);
	assert_int_equal(r.verdict, GATE_PASS);
	assert_int_equal(gate_verdict_exit(r.verdict), 0);
	release_all(&r, &b, &c, &th);
}

/* (g) an op at 0.49% of the step doubling stays out under default (floor 1%)
 * and counts; strict's 0.5% floor lets it in, where its change, 0.49% of the
 * step, is under min_step_share: a small op's jitter never fails a gate. */
static void tiny_sides(struct summary *b, struct summary *c)
{
	make_side(b, "NVIDIA H100", base8, 8, "base.json", SHA_B);
	add_family(b, "matmul", 804.9);
	add_op(b, "big", "matmul", 800);
	add_op(b, "tiny", "matmul", 4.9);
	make_side(c, "NVIDIA H100", base8, 8, "cand.json", SHA_C);
	add_family(c, "matmul", 809.8);
	add_op(c, "big", "matmul", 800);
	add_op(c, "tiny", "matmul", 9.8);
}

static void test_compare_floor(void **state)
{
	struct summary b, c;
	struct gate_thresholds th;
	struct gate_result r;
	(void)state;

	tiny_sides(&b, &c);
	gate_thresholds_default(&th);
	gate_compare(&b, &c, &th, &inputs, &r);
	assert_null(find_metric(&r, "op.tiny.us_per_step"));
	assert_int_equal(r.n_below_floor, 1);
	assert_verdict(&r, "op.big.us_per_step", GATE_PASS);
	assert_verdict(&r, "family.matmul.us_per_step", GATE_PASS);
	assert_verdict(&r, "step.median_us", GATE_PASS);
	assert_int_equal(r.verdict, GATE_PASS);
	release_all(&r, &b, &c, &th);

	tiny_sides(&b, &c);
	parse_file("thresholds/strict.json", &th);
	gate_compare(&b, &c, &th, &inputs, &r);
	assert_int_equal(r.n_below_floor, 0);
	assert_verdict(&r, "op.tiny.us_per_step", GATE_PASS);
	assert_non_null(strstr(metric(&r, "op.tiny.us_per_step")->note, "under 0.5%"));
	assert_int_equal(r.verdict, GATE_PASS);
	release_all(&r, &b, &c, &th);
}

/* (h) quality actions: inconclusive turns passing step metrics inconclusive but
 * leaves a fail standing; warn raises the overall verdict to warn. */
static void test_compare_quality(void **state)
{
	static const double near8[] = {1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008};
	struct summary b, c;
	struct gate_thresholds th;
	struct gate_result r;
	const struct gate_metric_result *m;
	(void)state;

	make_side(&b, "NVIDIA H100", base8, 8, "base.json", SHA_B);
	add_lists(&b, 400, 100);
	make_side(&c, "NVIDIA H100", near8, 8, "cand.json", SHA_C);
	add_lists(&c, 401, 100); /* +0.25%: see test_compare_nothing_moved */
	summary_add_warning(&c, "event-cap", "the event cap was hit at %d events", 1000000);
	gate_thresholds_default(&th);
	gate_compare(&b, &c, &th, &inputs, &r);
	assert_int_equal(r.n_quality, 1);
	assert_int_equal(r.quality[0].candidate, 1);
	assert_string_equal(r.quality[0].code, "event-cap");
	assert_int_equal(r.quality[0].action, GATE_INCONCLUSIVE);
	m = metric(&r, "step.median_us");
	assert_int_equal(m->verdict, GATE_INCONCLUSIVE);
	assert_non_null(m->note);
	assert_non_null(strstr(m->note, "event-cap"));
	assert_verdict(&r, "step.p90_us", GATE_INCONCLUSIVE);
	assert_verdict(&r, "family.matmul.us_per_step", GATE_PASS);
	assert_int_equal(r.verdict, GATE_INCONCLUSIVE);
	assert_int_equal(gate_verdict_exit(r.verdict), 0);
	gate_result_release(&r);
	summary_release(&c);

	/* a fail stands */
	make_side(&c, "NVIDIA H100", slow8, 8, "cand.json", SHA_C);
	add_lists(&c, 540, 110);
	summary_add_warning(&c, "event-cap", "the event cap was hit");
	gate_compare(&b, &c, &th, &inputs, &r);
	assert_verdict(&r, "step.median_us", GATE_FAIL);
	assert_int_equal(r.verdict, GATE_FAIL);
	gate_result_release(&r);
	summary_release(&c);

	/* "profiler-error": "warn" on the baseline: everything passes, overall warn;
	 * an unknown code falls to "*": "ignore" */
	make_side(&c, "NVIDIA H100", near8, 8, "cand.json", SHA_C);
	add_lists(&c, 401, 100); /* +0.25%: see test_compare_nothing_moved */
	summary_add_warning(&b, "profiler-error", "the profiler reported an error");
	summary_add_warning(&c, "something-else", "whatever");
	gate_compare(&b, &c, &th, &inputs, &r);
	assert_int_equal(r.n_quality, 2);
	assert_int_equal(r.quality[0].candidate, 0);
	assert_int_equal(r.quality[0].action, GATE_WARN);
	assert_int_equal(r.quality[1].action, GATE_IGNORE);
	assert_verdict(&r, "step.median_us", GATE_PASS);
	assert_int_equal(r.verdict, GATE_WARN);
	release_all(&r, &b, &c, &th);
}

/* docs/gate.md: past the fail limit without significance is a pass that says so; improved
 * needs significance; a part only one side has is new or gone, and a new one
 * is judged as a change from 0. */
static void test_compare_significance_improved_new_gone(void **state)
{
	static const double nb[] = {800, 1000, 1001, 1002, 1300};
	static const double nc[] = {790, 1060, 1061, 1062, 1310}; /* median +6% */
	static const double fast8[] = {900, 901, 902, 903, 904, 905, 906, 907};
	struct summary b, c;
	struct gate_thresholds th;
	struct gate_result r;
	const struct gate_metric_result *m;
	(void)state;

	make_side(&b, "NVIDIA H100", nb, 5, "base.json", SHA_B);
	add_family(&b, "matmul", 500);
	make_side(&c, "NVIDIA H100", nc, 5, "cand.json", SHA_C);
	add_family(&c, "matmul", 505);
	gate_thresholds_default(&th);
	gate_compare(&b, &c, &th, &inputs, &r);
	m = metric(&r, "step.median_us");
	assert_true(m->tested);
	/* one run a side: 2 % of 1001 us each, z = 60 / 28.3 = 2.1 */
	assert_close(m->p_value, gate_norm_upper(60 / m->noise_sd), 1e-15);
	assert_true(m->p_value > 0.01 && m->p_value < 0.05);
	/* past the fail limit, but within noise: a pass that says so */
	assert_int_equal(m->verdict, GATE_PASS);
	assert_non_null(strstr(m->note, "within noise"));
	assert_int_equal(r.verdict, GATE_PASS);
	release_all(&r, &b, &c, &th);

	/* the same the other way round: -5.7% without significance is no improvement */
	make_side(&b, "NVIDIA H100", nc, 5, "base.json", SHA_B);
	add_family(&b, "matmul", 505);
	make_side(&c, "NVIDIA H100", nb, 5, "cand.json", SHA_C);
	add_family(&c, "matmul", 500);
	gate_thresholds_default(&th);
	gate_compare(&b, &c, &th, &inputs, &r);
	m = metric(&r, "step.median_us");
	/* one-sided toward slower: a speed-up is no evidence of a regression */
	assert_close(m->p_value, gate_norm_upper(-60 / m->noise_sd), 1e-15);
	assert_true(m->p_value > 0.95);
	assert_int_equal(m->verdict, GATE_PASS);
	assert_int_equal(r.verdict, GATE_PASS);
	release_all(&r, &b, &c, &th);

	make_side(&b, "NVIDIA H100", base8, 8, "base.json", SHA_B);
	add_family(&b, "old", 100);
	add_family(&b, "matmul", 500);
	make_side(&c, "NVIDIA H100", fast8, 8, "cand.json", SHA_C);
	add_family(&c, "new", 10); /* 1.1 % of the step: within a part's noise */
	add_family(&c, "matmul", 500);
	gate_thresholds_default(&th);
	gate_compare(&b, &c, &th, &inputs, &r);
	m = metric(&r, "step.median_us");
	assert_int_equal(m->verdict, GATE_IMPROVED);
	assert_true(m->p_value > 0.99);
	m = metric(&r, "family.old.us_per_step");
	assert_int_equal(m->verdict, GATE_GONE);
	assert_false(m->has_candidate);
	assert_true(isnan(m->delta_share));
	m = metric(&r, "family.new.us_per_step");
	assert_int_equal(m->verdict, GATE_NEW);
	assert_false(m->has_baseline);
	assert_false(m->tested);
	assert_int_equal(r.verdict, GATE_IMPROVED);
	release_all(&r, &b, &c, &th);

	/* a new family worth 10 % of the step is a regression like any other */
	make_side(&b, "NVIDIA H100", base8, 8, "base.json", SHA_B);
	add_family(&b, "matmul", 500);
	make_side(&c, "NVIDIA H100", base8, 8, "cand.json", SHA_C);
	add_family(&c, "new", 100);
	add_family(&c, "matmul", 500);
	gate_thresholds_default(&th);
	gate_compare(&b, &c, &th, &inputs, &r);
	m = metric(&r, "family.new.us_per_step");
	assert_int_equal(m->verdict, GATE_FAIL);
	assert_true(m->tested && m->p_value < 0.001);
	assert_int_equal(r.verdict, GATE_FAIL);
	release_all(&r, &b, &c, &th);
}

/* docs/noise.md: a run is known no better than its own steps spread, and a
 * candidate whose steps spread far beyond the baseline's was disturbed: a
 * step that would pass is inconclusive and says so, a regression larger
 * than the disturbance still fails. */
static void test_compare_disturbed(void **state)
{
	/* robust spread 0.22 % in the baseline; about 7.6 % in the candidates */
	static const double wide[] = {930, 960, 990, 1030, 1050, 1070, 1110, 1140};
	static const double wide_slow[] = {1302, 1344, 1386, 1442, 1470, 1498, 1554, 1596};
	struct summary b, c;
	struct gate_thresholds th;
	struct gate_result r;
	const struct gate_metric_result *m;
	(void)state;

	make_side(&b, "NVIDIA H100", base8, 8, "base.json", SHA_B);
	make_side(&c, "NVIDIA H100", wide, 8, "cand.json", SHA_C);
	gate_thresholds_default(&th);
	gate_compare(&b, &c, &th, &inputs, &r);
	assert_true(r.disturbed);
	assert_true(r.jitter_candidate > 3 * 0.02);
	assert_int_equal(r.n_quality, 1);
	assert_string_equal(r.quality[0].code, "disturbed");
	assert_int_equal(r.quality[0].action, GATE_INCONCLUSIVE);
	m = metric(&r, "step.median_us");
	/* its own spread is the candidate's noise: far more than the 2 % prior */
	assert_true(m->noise_sd >= r.jitter_candidate * m->candidate);
	assert_int_equal(m->verdict, GATE_INCONCLUSIVE);
	assert_int_equal(r.verdict, GATE_INCONCLUSIVE);
	release_all(&r, &b, &c, &th);

	/* +40 %, beyond even that spread: a fail */
	make_side(&b, "NVIDIA H100", base8, 8, "base.json", SHA_B);
	make_side(&c, "NVIDIA H100", wide_slow, 8, "cand.json", SHA_C);
	gate_thresholds_default(&th);
	gate_compare(&b, &c, &th, &inputs, &r);
	assert_true(r.disturbed);
	assert_verdict(&r, "step.median_us", GATE_FAIL);
	assert_int_equal(r.verdict, GATE_FAIL);
	release_all(&r, &b, &c, &th);
}

/* docs/gate.md "Attribution": furthest beyond noise in the direction the step moved,
 * families before ops on ties. */
static void test_compare_attribution_order(void **state)
{
	static const double fast8[] = {900, 901, 902, 903, 904, 905, 906, 907};
	struct summary b, c;
	struct gate_thresholds th;
	struct gate_result r;
	(void)state;

	make_side(&b, "NVIDIA H100", base8, 8, "base.json", SHA_B);
	add_family(&b, "elementwise", 100);
	add_family(&b, "matmul", 500);
	add_op(&b, "add", "elementwise", 100);
	add_op(&b, "gemm", "matmul", 500);
	make_side(&c, "NVIDIA H100", fast8, 8, "cand.json", SHA_C);
	add_family(&c, "elementwise", 250); /* +150: larger, but against the step */
	add_family(&c, "matmul", 400);	    /* -100, and its one op the same */
	add_op(&c, "add", "elementwise", 250);
	add_op(&c, "gemm", "matmul", 400);
	gate_thresholds_default(&th);
	gate_compare(&b, &c, &th, &inputs, &r);
	assert_true(r.step_delta_us < 0);
	/* ranked by z in the step's direction */
	assert_int_equal(r.n_attribution, 4);
	assert_int_equal(r.attribution[0].kind, GATE_ATTR_FAMILY);
	assert_string_equal(r.attribution[0].name, "matmul");
	assert_close(r.attribution[0].delta_us_per_step, -100, 1e-9);
	assert_int_equal(r.attribution[1].kind, GATE_ATTR_OP);
	assert_string_equal(r.attribution[1].name, "gemm");
	assert_close(r.attribution[1].delta_us_per_step, -100, 1e-9);
	/* the +150 pair, against the step, comes last, the furthest last */
	assert_int_equal(r.attribution[2].kind, GATE_ATTR_OP);
	assert_close(r.attribution[2].delta_us_per_step, 150, 1e-9);
	assert_int_equal(r.attribution[3].kind, GATE_ATTR_FAMILY);
	assert_string_equal(r.attribution[3].name, "elementwise");
	assert_true(r.attribution[3].z > r.attribution[2].z);
	release_all(&r, &b, &c, &th);
}

/* A part whose own rule fails is listed even below the bound a part needs
 * when the step did not move (the two-sided Bonferroni bound, at least 3):
 * its rule's one-sided test found it beyond noise. A part moving against a
 * step that moved beyond noise needs that bound; one moving with it, 1.645. */
static void test_compare_attribution_flagged(void **state)
{
	struct summary b, c;
	struct gate_thresholds th;
	struct gate_result r;
	const struct gate_metric_result *m;
	double z;
	(void)state;

	make_side(&b, "NVIDIA H100", base8, 8, "base.json", SHA_B);
	add_family(&b, "reduce", 100);
	make_side(&c, "NVIDIA H100", base8, 8, "cand.json", SHA_C);
	/* +29 %: sd = sqrt(3^2 + 7.02^2) x sqrt(2) = 10.8 us, z = 2.7 */
	add_family(&c, "reduce", 129);
	gate_thresholds_default(&th);
	gate_compare(&b, &c, &th, &inputs, &r);
	m = metric(&r, "family.reduce.us_per_step");
	z = m->delta / m->noise_sd;
	assert_true(z > 2.33 && z < 3);
	assert_int_equal(m->verdict, GATE_FAIL);
	assert_true(r.attribution_z >= 3 && r.attribution_z_against == r.attribution_z);
	assert_int_equal(r.n_attribution, 1);
	assert_string_equal(r.attribution[0].name, "reduce");
	release_all(&r, &b, &c, &th);

	/* the step 10 % slower: matmul +30 us with it at z 1.8 is listed,
	 * elementwise -30 us against it at z -1.8 is not (sd = sqrt(9^2 +
	 * 7.72^2) x sqrt(2) = 16.8 us) */
	make_side(&b, "NVIDIA H100", base8, 8, "base.json", SHA_B);
	add_family(&b, "matmul", 300);
	add_family(&b, "elementwise", 300);
	make_side(&c, "NVIDIA H100", slow8, 8, "cand.json", SHA_C);
	add_family(&c, "matmul", 330);
	add_family(&c, "elementwise", 270);
	gate_thresholds_default(&th);
	gate_compare(&b, &c, &th, &inputs, &r);
	assert_close(r.attribution_z, gate_norm_quantile_upper(0.05), 1e-12);
	assert_true(r.attribution_z_against >= 3);
	m = metric(&r, "family.matmul.us_per_step");
	z = m->delta / m->noise_sd;
	assert_true(z > 1.645 && z < 2);
	assert_int_equal(r.n_attribution, 1);
	assert_string_equal(r.attribution[0].name, "matmul");
	release_all(&r, &b, &c, &th);
}

static int has_quality(const struct gate_result *r, const char *code)
{
	for (uint32_t i = 0; i < r->n_quality; i++)
		if (strcmp(r->quality[i].code, code) == 0)
			return 1;
	return 0;
}

/* A step that fails on one candidate run carries the note "one-run" (a note:
 * the verdict stands); on three candidate runs, or when the step passes, it
 * does not. */
/* Steps of a run: base8 times f. */
static void scaled_side(struct summary *s, double f, const char *file, const char *sha)
{
	double x[8];

	for (int i = 0; i < 8; i++)
		x[i] = base8[i] * f;
	make_side(s, "NVIDIA H100", x, 8, file, sha);
}

static void release_runs(struct summary *s, int n)
{
	for (int i = 0; i < n; i++)
		summary_release(&s[i]);
}

/* Disturbed runs, judged as runs: a candidate run 60 % slower than the side's other two is
 * set aside, named with why, and the verdict rests on the two (an A/A pass); two of three
 * disturbed are set aside too, and the verdict rests on the fastest (a burst only slows a
 * run); four of five disturbed beside a fastest run they all disagree with leave too few,
 * and the verdict is inconclusive, never a fail, with the spreads it had and the advice to
 * rerun. */
static void test_compare_disturbed_runs(void **state)
{
	static const double f_b[5] = {1.00, 1.01, 0.99, 1.02, 1.00};
	static const char *const paths[3] = {"c1.json", "c2.json", "c3.json"};
	static const double f_w[5] = {1.005, 1.40, 1.45, 1.50, 1.60};
	struct summary b[5], c[3], w[5];
	struct gate_thresholds th;
	struct gate_result r;
	const struct summary *rb[5], *rc[3] = {&c[0], &c[1], &c[2]}, *rw[5];
	struct pg_buf md = PG_BUF_INIT;
	(void)state;

	for (int i = 0; i < 5; i++) {
		scaled_side(&b[i], f_b[i], "b.json", SHA_B);
		rb[i] = &b[i];
	}
	scaled_side(&c[0], 1.005, "c1.json", SHA_C);
	scaled_side(&c[1], 1.60, "c2.json", SHA_C);
	scaled_side(&c[2], 0.995, "c3.json", SHA_C);
	gate_thresholds_default(&th);
	gate_compare_runs(&(struct gate_side){rb, 5, NULL, 0, NULL, NULL},
			  &(struct gate_side){rc, 3, NULL, 0, paths, NULL}, &th, &inputs, &r);
	assert_int_equal(r.n_runs[1], 3);
	assert_int_equal(r.set_aside[1], 1);
	assert_true(r.runs[1][1].set_aside && !r.runs[1][0].set_aside && !r.runs[1][2].set_aside);
	assert_string_equal(r.runs[1][1].path, "c2.json");
	assert_non_null(strstr(r.runs[1][1].why, "61% above"));
	assert_int_equal(r.candidate_runs, 2);
	assert_true(fabs(r.step_delta_share) < 0.01);
	assert_int_equal(r.verdict, GATE_PASS);
	assert_true(has_quality(&r, "runs-disturbed"));
	assert_false(r.noisy);
	gate_result_release(&r);

	summary_release(&c[2]);
	scaled_side(&c[2], 1.40, "c3.json", SHA_C);
	gate_compare_runs(&(struct gate_side){rb, 5, NULL, 0, NULL, NULL},
			  &(struct gate_side){rc, 3, NULL, 0, paths, NULL}, &th, &inputs, &r);
	assert_int_equal(r.set_aside[1], 2);
	assert_false(r.too_few_runs);
	assert_int_equal(r.candidate_runs, 1);
	assert_true(fabs(r.step_delta_share - 0.005) < 0.01);
	assert_int_equal(r.verdict, GATE_PASS);
	gate_result_release(&r);

	/* the same runs as a baseline of five with two more as slow: the two fastest (1.005,
	 * 1.40) disagree, every run but the fastest is past the limit, and one of five is too
	 * few */
	for (int i = 0; i < 5; i++) {
		scaled_side(&w[i], f_w[i], "w.json", SHA_C);
		rw[i] = &w[i];
	}
	gate_compare_runs(&(struct gate_side){rb, 5, NULL, 0, NULL, NULL},
			  &(struct gate_side){rw, 5, NULL, 0, NULL, NULL}, &th, &inputs, &r);
	assert_int_equal(r.set_aside[1], 4);
	assert_true(r.too_few_runs);
	assert_int_equal(r.verdict, GATE_INCONCLUSIVE);
	for (uint32_t i = 0; i < r.n_metrics; i++)
		assert_true(r.metrics[i].verdict != GATE_FAIL && r.metrics[i].verdict != GATE_WARN);
	assert_true(r.noisy && r.noisy_between_share > 0);
	assert_non_null(strstr(r.noisy_advice, "run them again"));
	report_compare_md(&r, &md);
	assert_non_null(strstr(md.ptr, "**Too noisy to judge**"));
	assert_non_null(strstr(md.ptr, "**set aside**"));
	pg_buf_release(&md);
	gate_result_release(&r);
	release_runs(b, 5);
	release_runs(c, 3);
	release_runs(w, 5);
	gate_thresholds_release(&th);
}

/* A burst that hit part of a run: two of its eight steps three times as long leave its median
 * step alone but lift its mean 50 % (and with it every family's and op's us_per_step); the run
 * is set aside, named with why, and the side rests on the other two; given alone, it makes
 * the verdict inconclusive. */
static void test_compare_partly_disturbed_run(void **state)
{
	static const double hit[8] = {1000, 1001, 3006, 1003, 1004, 3015, 1006, 1007};
	struct summary b[5], c[3];
	struct gate_thresholds th;
	struct gate_result r;
	struct pg_buf v = PG_BUF_INIT;
	const struct summary *rb[5], *rc[3] = {&c[0], &c[1], &c[2]};
	(void)state;

	for (int i = 0; i < 5; i++) {
		scaled_side(&b[i], 1 + 0.005 * i, "b.json", SHA_B);
		rb[i] = &b[i];
	}
	scaled_side(&c[0], 1.002, "c1.json", SHA_C);
	make_side(&c[1], "NVIDIA H100", hit, 8, "c2.json", SHA_C);
	scaled_side(&c[2], 0.998, "c3.json", SHA_C);
	gate_thresholds_default(&th);
	gate_compare_runs(&(struct gate_side){rb, 5, NULL, 0, NULL, NULL},
			  &(struct gate_side){rc, 3, NULL, 0, NULL, NULL}, &th, &inputs, &r);
	assert_int_equal(r.set_aside[1], 1);
	assert_true(r.runs[1][1].set_aside);
	assert_true(fabs(r.runs[1][1].excess_share - 0.5) < 0.01);
	assert_non_null(strstr(r.runs[1][1].why, "mean step is 50% above its median"));
	assert_int_equal(r.set_aside[0], 0);
	assert_int_equal(r.candidate_runs, 2);
	assert_int_equal(r.verdict, GATE_PASS);
	gate_result_write_json(&r, &v);
	assert_non_null(strstr(v.ptr, "\"step_mean_excess_share\": 0.497761"));
	pg_buf_release(&v);
	gate_result_release(&r);

	/* the same run as the only candidate: nothing to set it aside against, but its mean step
	 * 50 % over its median says a burst hit it: disturbed, inconclusive, never a pass or fail
	 */
	gate_compare_runs(&(struct gate_side){rb, 5, NULL, 0, NULL, NULL},
			  &(struct gate_side){&rc[1], 1, NULL, 0, NULL, NULL}, &th, &inputs, &r);
	assert_true(r.disturbed);
	assert_true(fabs(r.excess_candidate - 0.497761) < 1e-6);
	assert_true(has_quality(&r, "disturbed"));
	assert_int_equal(r.verdict, GATE_INCONCLUSIVE);
	gate_result_release(&r);
	release_runs(b, 5);
	release_runs(c, 3);
	gate_thresholds_release(&th);
}

/* docs/noise.md "A burst over part of a run": make noise's base-08 (seed 83000), identical
 * code whose steps 9-15 a co-tenant's burst slowed to 125-185 %: its p90 step moved +60 % and
 * failed against a window of five runs. Its p90 is known only to within how far that stretch
 * moved it (named in run_list): inconclusive (disturbed), never a fail. The same steps with
 * the slow ones spread through the run (a tail the code makes) are no burst, and their p90
 * step is judged as before, with no such allowance. */
static void test_compare_burst_p90(void **state)
{
	static const double hit[25] = {13142, 13970, 12597, 11960, 13790, 12676, 13279,
				       20139, 21118, 24455, 16583, 19064, 21858, 20957,
				       12677, 12444, 12367, 12488, 14150, 13783, 12615,
				       11899, 12721, 13248, 12466};
	static const int slow_at[7] = {1, 4, 8, 12, 16, 20, 24};
	double base[25], spread[25], burst_sd;
	struct summary b[5], c;
	const struct summary *rb[5], *rc[1] = {&c};
	struct gate_thresholds th;
	struct gate_result r;
	struct pg_buf v = PG_BUF_INIT;
	(void)state;

	for (int i = 0; i < 5; i++) {
		for (int j = 0; j < 25; j++)
			base[j] = (12000 + 100 * ((j * 7) % 11)) * (1 + 0.005 * i);
		make_side(&b[i], "NVIDIA H100", base, 25, "b.json", SHA_B);
		rb[i] = &b[i];
	}
	make_side(&c, "NVIDIA H100", hit, 25, "cand.json", SHA_C);
	gate_thresholds_default(&th);
	gate_compare_runs(&(struct gate_side){rb, 5, NULL, 0, NULL, NULL},
			  &(struct gate_side){rc, 1, NULL, 0, NULL, NULL}, &th, &inputs, &r);
	assert_true(r.runs[1][0].burst_share > 0.3);
	assert_int_equal(r.runs[1][0].burst_first, 7);
	assert_int_equal(r.runs[1][0].burst_last, 13);
	assert_true(r.runs[0][0].burst_share == 0);
	assert_true(r.disturbed);
	assert_non_null(strstr(r.quality[r.n_quality - 1].message,
			       "its steps 7-13 ran in one burst, which lifted its p90 step from "));
	assert_verdict(&r, "step.p90_us", GATE_INCONCLUSIVE);
	assert_int_equal(r.verdict, GATE_INCONCLUSIVE);
	burst_sd = metric(&r, "step.p90_us")->noise_sd;
	assert_true(burst_sd >= r.runs[1][0].burst_share * metric(&r, "step.p90_us")->candidate);
	gate_result_write_json(&r, &v);
	assert_non_null(
	    strstr(v.ptr, "\"burst_steps\": [\n          7,\n          13\n        ],"));
	pg_buf_release(&v);
	gate_result_release(&r);
	summary_release(&c);

	/* its seven slow steps (7-13) at every fourth step, the rest in order: not one stretch */
	for (int j = 0, k = 0, q = 0; j < 25; j++) {
		if (k < 7 && slow_at[k] == j) {
			spread[j] = hit[7 + k++];
			continue;
		}
		spread[j] = hit[q];
		q = q == 6 ? 14 : q + 1; /* the spared steps: 0-6, then 14-24 */
	}
	make_side(&c, "NVIDIA H100", spread, 25, "cand.json", SHA_C);
	gate_compare_runs(&(struct gate_side){rb, 5, NULL, 0, NULL, NULL},
			  &(struct gate_side){rc, 1, NULL, 0, NULL, NULL}, &th, &inputs, &r);
	assert_true(r.runs[1][0].burst_share == 0);
	assert_true(metric(&r, "step.p90_us")->noise_sd < burst_sd / 2);
	gate_result_release(&r);
	summary_release(&c);
	release_runs(b, 5);
	gate_thresholds_release(&th);
}

/* A run with its step with every op at its fastest: its steps (base8 times f) over it are
 * `over` (1.07 on a machine to itself). */
static void witnessed_side(struct summary *s, double f, double over, const char *file,
			   const char *sha)
{
	scaled_side(s, f, file, sha);
	s->host.fastest_us_per_step = s->steady.median_us / over;
}

/* Slowed from outside: one candidate run twice as slow whose ops at their fastest are as fast
 * as the baseline's is judged at its ops' speed (a pass, named with the factor); a regression
 * slows the ops' fastest alike and fails; a slowed run whose ops' speed still puts it past the
 * fail limit is inconclusive, never a fail; and with no witness nothing changes. */
static void test_compare_slowed_run(void **state)
{
	struct summary b[5], c;
	struct gate_thresholds th;
	struct gate_result r;
	struct pg_buf v = PG_BUF_INIT;
	const struct summary *rb[5], *rc[1] = {&c};
	(void)state;

	for (int i = 0; i < 5; i++) {
		witnessed_side(&b[i], 1 + 0.004 * i, 1.06 + 0.005 * i, "b.json", SHA_B);
		rb[i] = &b[i];
	}
	gate_thresholds_default(&th);

	/* twice as slow, the ops as fast: slowed 93 % against the runs' typical (the median of
	 * the less slowed half: 1.065), judged at +3 % */
	witnessed_side(&c, 2.0, 2.0 * 1.07 / 1.04, "c.json", SHA_C);
	gate_compare_runs(&(struct gate_side){rb, 5, NULL, 0, NULL, NULL},
			  &(struct gate_side){rc, 1, NULL, 0, NULL, NULL}, &th, &inputs, &r);
	assert_true(fabs(r.runs[1][0].slowed_share - (2.0 * 1.07 / 1.04 / 1.065 - 1)) < 1e-9);
	assert_true(has_quality(&r, "slowed"));
	assert_true(fabs(r.step_delta_share - 0.03) < 0.015);
	assert_int_equal(r.verdict, GATE_PASS);
	gate_result_write_json(&r, &v);
	assert_non_null(strstr(v.ptr, "\"slowed_share\": 0.932105"));
	pg_buf_release(&v);
	gate_result_release(&r);
	summary_release(&c);

	/* a regression: the step and the ops' fastest +25 % alike */
	witnessed_side(&c, 1.25, 1.07, "c.json", SHA_C);
	gate_compare_runs(&(struct gate_side){rb, 5, NULL, 0, NULL, NULL},
			  &(struct gate_side){rc, 1, NULL, 0, NULL, NULL}, &th, &inputs, &r);
	assert_false(has_quality(&r, "slowed"));
	assert_true(isnan(r.runs[1][0].slowed_share));
	assert_verdict(&r, "step.median_us", GATE_FAIL);
	gate_result_release(&r);
	summary_release(&c);

	/* slowed 2 times, and at its ops' speed still +40 %: inconclusive, not a fail */
	witnessed_side(&c, 2.8, 2.0 * 1.07, "c.json", SHA_C);
	gate_compare_runs(&(struct gate_side){rb, 5, NULL, 0, NULL, NULL},
			  &(struct gate_side){rc, 1, NULL, 0, NULL, NULL}, &th, &inputs, &r);
	assert_true(has_quality(&r, "slowed"));
	assert_verdict(&r, "step.median_us", GATE_INCONCLUSIVE);
	assert_non_null(strstr(metric(&r, "step.median_us")->note, "too uncertain to fail"));
	assert_int_equal(r.verdict, GATE_INCONCLUSIVE);
	gate_result_release(&r);
	summary_release(&c);

	/* no witness (a device's steps): twice as slow fails as before */
	scaled_side(&c, 2.0, "c.json", SHA_C);
	gate_compare_runs(&(struct gate_side){rb, 5, NULL, 0, NULL, NULL},
			  &(struct gate_side){rc, 1, NULL, 0, NULL, NULL}, &th, &inputs, &r);
	assert_false(has_quality(&r, "slowed"));
	assert_verdict(&r, "step.median_us", GATE_FAIL);
	gate_result_release(&r);
	summary_release(&c);
	release_runs(b, 5);
	gate_thresholds_release(&th);
}

/* A run twice as slow in its step over its ops' fastest is slowed from outside only when its
 * largest part slowed with it: a co-tenant slows every part alike, so matmul's share of the
 * step holds (judged at its ops' speed: a pass); a wait the code added beside the matmul (its
 * time as the baseline's, its share halved) is the code's, and fails. */
static void test_compare_slowed_needs_its_parts(void **state)
{
	struct summary b[5], c;
	struct gate_thresholds th;
	struct gate_result r;
	const struct summary *rb[5], *rc[1] = {&c};
	(void)state;

	for (int i = 0; i < 5; i++) {
		witnessed_side(&b[i], 1 + 0.004 * i, 1.06 + 0.005 * i, "b.json", SHA_B);
		add_family(&b[i], "matmul", 0.75 * b[i].steady.median_us);
		add_family(&b[i], "data-loading", 0.05 * b[i].steady.median_us);
		rb[i] = &b[i];
	}
	gate_thresholds_default(&th);

	witnessed_side(&c, 2.0, 2.0 * 1.07 / 1.04, "c.json", SHA_C);
	add_family(&c, "matmul", 0.75 * c.steady.median_us);
	add_family(&c, "data-loading", 0.05 * c.steady.median_us);
	gate_compare_runs(&(struct gate_side){rb, 5, NULL, 0, NULL, NULL},
			  &(struct gate_side){rc, 1, NULL, 0, NULL, NULL}, &th, &inputs, &r);
	assert_true(has_quality(&r, "slowed"));
	assert_int_equal(r.verdict, GATE_PASS);
	gate_result_release(&r);
	summary_release(&c);

	witnessed_side(&c, 2.0, 2.0 * 1.07 / 1.04, "c.json", SHA_C);
	add_family(&c, "matmul", 0.75 * b[2].steady.median_us);
	add_family(&c, "data-loading", c.steady.median_us - 0.70 * b[2].steady.median_us);
	gate_compare_runs(&(struct gate_side){rb, 5, NULL, 0, NULL, NULL},
			  &(struct gate_side){rc, 1, NULL, 0, NULL, NULL}, &th, &inputs, &r);
	assert_false(has_quality(&r, "slowed"));
	assert_true(isnan(r.runs[1][0].slowed_share));
	assert_verdict(&r, "step.median_us", GATE_FAIL);
	assert_int_equal(r.verdict, GATE_FAIL);
	gate_result_release(&r);
	summary_release(&c);
	release_runs(b, 5);
	gate_thresholds_release(&th);
}

static void test_compare_one_run_note(void **state)
{
	static const double slow8b[] = {1101, 1102, 1099, 1104, 1103, 1105, 1100, 1106};
	static const double slow8c[] = {1098, 1102, 1104, 1101, 1107, 1103, 1105, 1100};
	struct summary b, c[3];
	struct gate_thresholds th;
	struct gate_result r;
	const struct summary *rb[1] = {&b}, *rc[3] = {&c[0], &c[1], &c[2]};
	(void)state;

	make_side(&b, "NVIDIA H100", base8, 8, "base.json", SHA_B);
	make_side(&c[0], "NVIDIA H100", slow8, 8, "cand.json", SHA_C);
	make_side(&c[1], "NVIDIA H100", slow8b, 8, "cand2.json", SHA_C);
	make_side(&c[2], "NVIDIA H100", slow8c, 8, "cand3.json", SHA_C);
	gate_thresholds_default(&th);
	gate_compare(&b, &c[0], &th, &inputs, &r);
	assert_verdict(&r, "step.median_us", GATE_FAIL);
	assert_true(has_quality(&r, "one-run"));
	assert_int_equal(r.verdict, GATE_FAIL);
	gate_result_release(&r);
	gate_compare_runs(&(struct gate_side){rb, 1, NULL, 0, NULL, NULL},
			  &(struct gate_side){rc, 3, NULL, 0, NULL, NULL}, &th, &inputs, &r);
	assert_verdict(&r, "step.median_us", GATE_FAIL);
	assert_false(has_quality(&r, "one-run"));
	gate_result_release(&r);
	summary_release(&c[1]);
	make_side(&c[1], "NVIDIA H100", base8, 8, "same.json", SHA_C);
	gate_compare(&b, &c[1], &th, &inputs, &r);
	assert_verdict(&r, "step.median_us", GATE_PASS);
	assert_false(has_quality(&r, "one-run"));
	gate_result_release(&r);
	for (int i = 0; i < 3; i++)
		summary_release(&c[i]);
	summary_release(&b);
	gate_thresholds_release(&th);
}

/* A baseline of no runs (an empty history window) judges nothing: every
 * metric of the candidate is recorded with its value (the median over its
 * runs), the overall verdict is recorded (exit 0), and the verdict JSON
 * holds no number it would have had to invent. */
static void test_compare_no_baseline_runs(void **state)
{
	struct summary empty, c[2];
	struct gate_thresholds th;
	struct gate_result r;
	struct pg_buf json = PG_BUF_INIT;
	const struct summary *rc[2] = {&c[0], &c[1]};
	const struct gate_metric_result *m = NULL;
	(void)state;

	summary_init(&empty);
	make_side(&c[0], "NVIDIA H100", base8, 8, "cand.json", SHA_C);
	make_side(&c[1], "NVIDIA H100", slow8, 8, "cand2.json", SHA_C);
	add_lists(&c[0], 300, 200);
	gate_thresholds_default(&th);
	gate_compare_runs(&(struct gate_side){NULL, 0, &empty, 1, NULL, NULL},
			  &(struct gate_side){rc, 2, NULL, 0, NULL, NULL}, &th, &inputs, &r);
	assert_int_equal(r.verdict, GATE_RECORDED);
	assert_int_equal(gate_verdict_exit(r.verdict), 0);
	assert_string_equal(gate_verdict_name(r.verdict), "recorded");
	assert_string_equal(r.provenance, "no-baseline");
	assert_false(r.has_step);
	assert_int_equal(r.n_attribution, 0);
	assert_true(r.n_metrics > 5);
	for (uint32_t i = 0; i < r.n_metrics; i++) {
		assert_int_equal(r.metrics[i].verdict, GATE_RECORDED);
		assert_false(r.metrics[i].has_baseline);
		assert_true(r.metrics[i].has_candidate);
	}
	for (uint32_t i = 0; i < r.n_metrics; i++)
		if (strcmp(r.metrics[i].name, "step.median_us") == 0)
			m = &r.metrics[i];
	assert_non_null(m);
	assert_true(fabs(m->candidate - (1003.5 + 1103.5) / 2) < 1e-9);
	gate_result_write_json(&r, &json);
	assert_non_null(strstr(json.ptr, "\"verdict\": \"recorded\""));
	assert_non_null(strstr(json.ptr, "\"runs\": 0"));
	assert_null(strstr(json.ptr, ": nan"));
	assert_null(strstr(json.ptr, ": -nan"));
	assert_null(strstr(json.ptr, ": inf"));
	assert_null(strstr(json.ptr, ": -inf"));
	pg_buf_release(&json);
	summary_release(&c[1]);
	release_all(&r, &empty, &c[0], &th);
}

/* docs/gate.md: "op.<name>.us_per_step": ops of one name summed. */
static void test_catalogue(void **state)
{
	struct summary s;
	struct gate_catalogue cat;
	const struct gate_metric *m;
	(void)state;

	make_side(&s, "NVIDIA H100", base8, 8, "base.json", SHA_B);
	add_family(&s, "matmul", 500);
	add_op(&s, "aten::mm", "matmul", 300);
	add_op(&s, "aten::mm", "other", 50);
	gate_catalogue_build(&s, &cat);
	for (uint32_t i = 1; i < cat.n; i++)
		assert_true(strcmp(cat.m[i - 1].name, cat.m[i].name) < 0);
	m = gate_catalogue_find(&cat, "op.aten::mm.us_per_step");
	assert_non_null(m);
	assert_close(m->value, 350, 1e-9);
	assert_int_equal(m->kind, GATE_K_OP);
	m = gate_catalogue_find(&cat, "family.matmul.us_per_step");
	assert_non_null(m);
	assert_close(m->step_share, 500 / 1003.5, 1e-9);
	m = gate_catalogue_find(&cat, "step.median_us");
	assert_non_null(m);
	assert_close(m->value, 1003.5, 1e-9);
	assert_non_null(gate_catalogue_find(&cat, "breakdown.idle_share"));
	assert_null(gate_catalogue_find(&cat, "step.skew_us")); /* one device */
	assert_null(gate_catalogue_find(&cat, "throughput.tflops_per_device"));
	gate_catalogue_release(&cat);
	summary_release(&s);
}

/* Two runs where nothing moved (the same content, different bytes): a pass
 * with an empty attribution. Under UBSan this also checks that an empty
 * attribution is not handed to qsort as a null pointer. */
static void test_compare_nothing_moved(void **state)
{
	struct summary b, c;
	struct gate_thresholds th;
	struct gate_result r;
	struct pg_buf out = PG_BUF_INIT;
	cJSON *root;
	(void)state;

	make_side(&b, "NVIDIA H100", base8, 8, "base.json", SHA_B);
	add_lists(&b, 400, 100);
	make_side(&c, "NVIDIA H100", base8, 8, "cand.json", SHA_C);
	add_lists(&c, 400, 100);
	gate_thresholds_default(&th);
	gate_compare(&b, &c, &th, &inputs, &r);
	assert_string_equal(r.provenance, "comparable");
	assert_int_equal(r.n_attribution, 0);
	assert_verdict(&r, "step.median_us", GATE_PASS);
	assert_int_equal(r.verdict, GATE_PASS);
	gate_result_write_json(&r, &out);
	root = cJSON_ParseWithLength(out.ptr, out.len);
	assert_non_null(root);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "attribution")),
			 0);
	cJSON_Delete(root);
	pg_buf_release(&out);
	release_all(&r, &b, &c, &th);
}

/* (i) the verdict JSON: valid, the schema, docs/gate.md's keys, same bytes twice. */
static char *verdict_json(size_t *len)
{
	struct summary b, c;
	struct gate_thresholds th;
	struct gate_result r;
	struct pg_buf out = PG_BUF_INIT;
	struct gate_inputs in = inputs;

	in.baseline_sha256 = SHA_B;
	in.candidate_sha256 = SHA_C;
	in.label = "pr-42";
	make_side(&b, "NVIDIA H100", base8, 8, "base.json", SHA_B);
	add_lists(&b, 400, 100);
	make_side(&c, "NVIDIA H100", slow8, 8, "cand.json", SHA_C);
	add_lists(&c, 540, 110);
	add_family(&c, "new", 12); /* 1.1 % of the step: within a part's noise */
	summary_add_warning(&c, "event-cap", "cap \"hit\"\n");
	gate_thresholds_default(&th);
	gate_compare(&b, &c, &th, &in, &r);
	gate_result_write_json(&r, &out);
	release_all(&r, &b, &c, &th);
	return pg_buf_detach(&out, len);
}

static const cJSON *get(const cJSON *o, const char *k)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
	if (!x)
		fail_msg("no key %s", k);
	return x;
}

static void test_verdict_json(void **state)
{
	size_t n1, n2;
	char *j1 = verdict_json(&n1), *j2 = verdict_json(&n2);
	cJSON *root;
	const cJSON *x, *metrics, *found = NULL;
	(void)state;

	assert_int_equal(n1, n2);
	assert_memory_equal(j1, j2, n1);
	assert_non_null(strstr(j1, "\"schema\": \"profgate.verdict/1\""));

	root = cJSON_ParseWithLength(j1, n1);
	assert_non_null(root);
	assert_string_equal(get(root, "schema")->valuestring, "profgate.verdict/1");
	assert_string_equal(get(root, "profgate_version")->valuestring, "0.1.0");
	assert_string_equal(get(root, "label")->valuestring, "pr-42");
	assert_string_equal(get(root, "verdict")->valuestring, "fail");
	assert_int_equal(get(root, "exit_code")->valueint, 1);
	x = get(root, "thresholds");
	assert_string_equal(get(x, "origin")->valuestring, "built-in default");
	assert_string_equal(get(x, "name")->valuestring, "default");
	assert_close(get(x, "significance")->valuedouble, 0.01, 1e-9);
	assert_int_equal(get(x, "min_samples")->valueint, 5);
	x = get(root, "baseline");
	assert_string_equal(get(x, "path")->valuestring, "base.json");
	assert_string_equal(get(x, "sha256")->valuestring, SHA_B);
	assert_int_equal(cJSON_GetArraySize(get(x, "profiles")), 1);
	assert_string_equal(get(x, "device_kind")->valuestring, "NVIDIA H100");
	assert_int_equal(get(x, "runs")->valueint, 1);
	assert_true(cJSON_IsNumber(get(x, "step_jitter")));
	assert_int_equal(get(x, "steady_steps")->valueint, 8);
	/* what a history record files the run under, and the summary's digest */
	assert_int_equal(strlen(get(x, "summary_sha256")->valuestring), 64);
	assert_string_equal(get(get(x, "identity"), "device_kind")->valuestring, "NVIDIA H100");
	assert_true(cJSON_IsNumber(get(get(x, "identity"), "device_count")));
	assert_true(cJSON_IsObject(get(get(x, "identity"), "labels")));
	for (size_t i = 0; i < SUMMARY_ID_N; i++)
		assert_non_null(get(get(x, "identity"), summary_id_fields[i].name));
	x = get(root, "provenance");
	assert_string_equal(get(x, "result")->valuestring, "comparable");
	assert_int_equal(cJSON_GetArraySize(get(x, "checked")), 7);
	assert_int_equal(cJSON_GetArraySize(get(x, "diff")), 0);
	x = get(root, "step");
	assert_true(cJSON_IsObject(x));
	assert_close(get(x, "baseline_median_us")->valuedouble, 1003.5, 1e-9);
	assert_true(cJSON_IsNumber(get(x, "p_value")));
	assert_int_equal(cJSON_GetArraySize(get(x, "interval_share")), 2);
	assert_string_equal(get(get(x, "samples"), "basis")->valuestring, "steps");
	x = get(root, "counts");
	assert_true(get(x, "fail")->valueint >= 3);
	assert_int_equal(get(x, "new")->valueint, 1);
	assert_int_equal(get(x, "below_floor")->valueint, 0);
	metrics = get(root, "metrics");
	assert_true(cJSON_IsArray(metrics));
	for (const cJSON *m = metrics->child; m; m = m->next)
		if (strcmp(get(m, "name")->valuestring, "family.matmul.us_per_step") == 0)
			found = m;
	assert_non_null(found);
	assert_string_equal(get(found, "verdict")->valuestring, "fail");
	assert_close(get(found, "delta_share")->valuedouble, 0.3, 1e-6);
	assert_string_equal(get(found, "noise_from")->valuestring, "prior");
	assert_true(get(found, "noise_sd")->valuedouble > 0);
	assert_true(get(found, "p_value")->valuedouble < 0.002);
	assert_string_equal(get(get(found, "limit"), "rule")->valuestring, "family.*.us_per_step");
	assert_string_equal(get(get(found, "limit"), "direction")->valuestring, "lower");
	for (const cJSON *m = metrics->child; m; m = m->next)
		if (strcmp(get(m, "name")->valuestring, "family.new.us_per_step") == 0) {
			assert_true(cJSON_IsNull(get(m, "baseline")));
			assert_true(cJSON_IsNull(get(m, "delta_share")));
			assert_string_equal(get(m, "verdict")->valuestring, "new");
		}
	x = get(root, "attribution");
	assert_true(cJSON_GetArraySize(x) >= 2);
	assert_string_equal(get(x->child, "kind")->valuestring, "family");
	assert_string_equal(get(x->child, "name")->valuestring, "matmul");
	assert_true(get(x->child, "z")->valuedouble > 2);
	assert_close(get(root, "attribution_z")->valuedouble, 1.64, 0);
	assert_true(get(root, "attribution_z_against")->valuedouble >= 3);
	assert_true(cJSON_IsNumber(get(root, "attribution_remainder_us_per_step")));
	/* the ops of matmul that moved most, largest first */
	assert_true(cJSON_IsArray(get(x->child, "ops")));
	assert_int_equal(cJSON_GetArraySize(get(x->child, "ops")), 2);
	assert_string_equal(get(x->child, "ops")->child->valuestring, "gemm_a");
	assert_string_equal(get(x->child, "ops")->child->next->valuestring, "gemm_b");
	x = get(root, "breakdown_us_per_step");
	assert_close(get(get(x, "baseline"), "compute_us")->valuedouble, 800, 1e-9);
	assert_close(get(get(x, "candidate"), "idle_us")->valuedouble, 100, 1e-9);
	x = get(root, "quality");
	assert_int_equal(cJSON_GetArraySize(get(x, "baseline")), 0);
	/* the profile's own, then the gate's note that the step failed on one
	 * candidate run */
	assert_int_equal(cJSON_GetArraySize(get(x, "candidate")), 2);
	x = get(x, "candidate")->child;
	assert_string_equal(get(x, "code")->valuestring, "event-cap");
	assert_string_equal(get(x, "message")->valuestring, "cap \"hit\"\n");
	assert_string_equal(get(x, "effect")->valuestring, "inconclusive");
	x = x->next;
	assert_string_equal(get(x, "code")->valuestring, "one-run");
	assert_non_null(strstr(get(x, "message")->valuestring, "three --candidate runs"));
	assert_string_equal(get(x, "effect")->valuestring, "ignore");

	cJSON_Delete(root);
	free(j1);
	free(j2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_thresholds_shipped),
	    cmocka_unit_test(test_thresholds_builtin_is_default_json),
	    cmocka_unit_test(test_thresholds_minimal_and_labels),
	    cmocka_unit_test(test_thresholds_refused),
	    cmocka_unit_test(test_thresholds_rule_comment_path),
	    cmocka_unit_test(test_glob_and_rule_for),
	    cmocka_unit_test(test_noise_stats),
	    cmocka_unit_test(test_noise_model),
	    cmocka_unit_test(test_verdict_order),
	    cmocka_unit_test(test_catalogue),
	    cmocka_unit_test(test_compare_fail),
	    cmocka_unit_test(test_compare_disturbed_runs),
	    cmocka_unit_test(test_compare_partly_disturbed_run),
	    cmocka_unit_test(test_compare_burst_p90),
	    cmocka_unit_test(test_compare_slowed_run),
	    cmocka_unit_test(test_compare_slowed_needs_its_parts),
	    cmocka_unit_test(test_compare_no_baseline_runs),
	    cmocka_unit_test(test_attribution_adds_up_ops),
	    cmocka_unit_test(test_compare_two_steps),
	    cmocka_unit_test(test_compare_device_steps_cap),
	    cmocka_unit_test(test_compare_rule_min_samples),
	    cmocka_unit_test(test_compare_incomparable),
	    cmocka_unit_test(test_compare_workload),
	    cmocka_unit_test(test_compare_identical_inputs),
	    cmocka_unit_test(test_compare_no_steps),
	    cmocka_unit_test(test_compare_null_shares),
	    cmocka_unit_test(test_compare_floor),
	    cmocka_unit_test(test_compare_quality),
	    cmocka_unit_test(test_compare_significance_improved_new_gone),
	    cmocka_unit_test(test_compare_disturbed),
	    cmocka_unit_test(test_compare_attribution_order),
	    cmocka_unit_test(test_compare_attribution_flagged),
	    cmocka_unit_test(test_compare_one_run_note),
	    cmocka_unit_test(test_verdict_json),
	    cmocka_unit_test(test_compare_nothing_moved), /* last: UBSan stops the binary */
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
