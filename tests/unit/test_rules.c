/*
 * The classification table, row by row: every row's own example must come out
 * with that row's category and family (so an earlier row never shadows a later
 * one unnoticed), plus the peers' known mistakes that must not recur.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "../../src/analyze/analyze.h"

static void test_every_row(void **state)
{
	(void)state;
	assert_true(analyze_rules_count() > 50);
	for (size_t i = 0; i < analyze_rules_count(); i++) {
		struct analyze_event_facts f;
		enum analyze_category want_c, got_c;
		enum analyze_family want_f, got_f;
		assert_int_equal(analyze_rule_example(i, &f, &want_c, &want_f), 0);
		analyze_classify(&f, &got_c, &got_f);
		if (got_c != want_c || got_f != want_f)
			fail_msg(
			    "row %zu (%s%s%s%s%s): got %s/%s, want %s/%s", i, f.name ? f.name : "",
			    f.cat ? f.cat : "", f.hlo_category ? f.hlo_category : "",
			    f.collective_name ? f.collective_name : "", f.hlo_op ? f.hlo_op : "",
			    analyze_category_name(got_c), analyze_family_name(got_f),
			    analyze_category_name(want_c), analyze_family_name(want_f));
	}
	assert_int_equal(analyze_rule_example(analyze_rules_count(), NULL, NULL, NULL), -1);
}

static void classify_name(const char *name, const char *cat, enum analyze_category *c,
			  enum analyze_family *f)
{
	struct analyze_event_facts x;
	memset(&x, 0, sizeof(x));
	x.name = name;
	x.name_len = strlen(name);
	x.cat = cat;
	analyze_classify(&x, c, f);
}

static void test_peer_mistakes(void **state)
{
	enum analyze_category c;
	enum analyze_family f;
	(void)state;

	/* HTA: ^hip made hipMemcpy communication */
	classify_name("hipMemcpyDtoDAsync", NULL, &c, &f);
	assert_int_equal(c, ANALYZE_CAT_MEMORY);
	/* marin: bare substrings "permute", "send", "blocked" were communication */
	classify_name("permute_kernel_blocked", "kernel", &c, &f);
	assert_int_equal(c, ANALYZE_CAT_COMPUTE);
	classify_name("sendBufferKernel", "kernel", &c, &f);
	assert_int_equal(c, ANALYZE_CAT_COMPUTE);
	/* xprof: rccl kernels missed */
	classify_name("rcclGenericKernel<1, false>", "kernel", &c, &f);
	assert_int_equal(c, ANALYZE_CAT_COMMUNICATION);
	/* a memcpy kernel category beats any name */
	classify_name("ncclKernel_looks_like_comm", "gpu_memcpy", &c, &f);
	assert_int_equal(c, ANALYZE_CAT_MEMORY);
	/* fusion.123 is a fusion, not "other", when nothing else is known */
	classify_name("fusion.123", NULL, &c, &f);
	assert_int_equal(f, ANALYZE_FAM_FUSION);
	/* but its hlo_category decides when present */
	struct analyze_event_facts x;
	memset(&x, 0, sizeof(x));
	x.name = "fusion.123";
	x.name_len = strlen(x.name);
	x.hlo_category = "convolution fusion";
	analyze_classify(&x, &c, &f);
	assert_int_equal(f, ANALYZE_FAM_CONV);
	/* hlo_op stacks: the last "::" part is the op */
	memset(&x, 0, sizeof(x));
	x.name = "some_kernel";
	x.name_len = strlen(x.name);
	x.hlo_op = "while.1::all-reduce-start.7";
	analyze_classify(&x, &c, &f);
	assert_int_equal(f, ANALYZE_FAM_ALL_REDUCE);
	/* "reduce-scatter" is not a reduction */
	memset(&x, 0, sizeof(x));
	x.name = "reduce-scatter.4";
	x.name_len = strlen(x.name);
	analyze_classify(&x, &c, &f);
	assert_int_equal(f, ANALYZE_FAM_REDUCE_SCATTER);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_row),
	    cmocka_unit_test(test_peer_mistakes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
