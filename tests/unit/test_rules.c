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

/* A family's category, the one every list names: by family name, so a family
 * moved in the enum keeps its category. */
static void test_family_category(void **state)
{
	static const struct {
		const char *family, *category;
	} want[] = {
	    {"all-reduce", "communication"},
	    {"all-gather", "communication"},
	    {"reduce-scatter", "communication"},
	    {"all-to-all", "communication"},
	    {"collective-permute", "communication"},
	    {"send-recv", "communication"},
	    {"collective-other", "communication"},
	    {"memcpy", "memory"},
	    {"memset", "memory"},
	    {"matmul", "compute"},
	    {"fusion", "compute"},
	    {"other", "compute"},
	    {"elementwise", "compute"},
	    {"copy", "host"},
	    {"data-loading", "host"},
	    {"runtime", "host"},
	};
	int found = 0;
	(void)state;
	for (int f = 0; f < ANALYZE_FAM_COUNT; f++) {
		const char *name = analyze_family_name((enum analyze_family)f);
		const char *cat =
		    analyze_category_name(analyze_family_category((enum analyze_family)f));
		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
			if (strcmp(want[i].family, name) == 0) {
				assert_string_equal(cat, want[i].category);
				found++;
			}
	}
	assert_int_equal(found, (int)(sizeof(want) / sizeof(want[0])));
	/* and the classification answers with it */
	struct analyze_event_facts x;
	enum analyze_category c;
	enum analyze_family fam;
	memset(&x, 0, sizeof(x));
	x.name = "ncclDevKernel_Generic";
	x.name_len = strlen(x.name);
	x.collective_name = "allreduce";
	analyze_classify(&x, &c, &fam);
	assert_int_equal(fam, ANALYZE_FAM_ALL_REDUCE);
	assert_int_equal(c, ANALYZE_CAT_COMMUNICATION);
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

static void test_every_host_row(void **state)
{
	(void)state;
	size_t i = 0;
	const char *name, *cat;
	enum analyze_family want;

	for (; analyze_host_rule_example(i, &name, &cat, &want) == 0; i++) {
		enum analyze_family got = analyze_classify_host(name, strlen(name), cat);
		if (got != want)
			fail_msg("host row %zu (%s, cat %s): got %s, want %s", i, name,
				 cat ? cat : "none", analyze_family_name(got),
				 analyze_family_name(want));
	}
	assert_true(i > 40);
	assert_int_equal(analyze_host_rule_example(i, &name, &cat, &want), -1);
}

static enum analyze_family host(const char *name)
{
	return analyze_classify_host(name, strlen(name), NULL);
}

/* Names a broad early row could take from the row that is theirs. */
static void test_host_order(void **state)
{
	(void)state;
	/* aten::add's prefix row is elementwise; addmm is a matmul */
	assert_int_equal(host("aten::addmm"), ANALYZE_FAM_MATMUL);
	/* the backward rows are autograd; an op's own backward kernel is its op's family */
	assert_int_equal(host("aten::threshold_backward"), ANALYZE_FAM_ELEMENTWISE);
	assert_int_equal(host("aten::_log_softmax_backward_data"), ANALYZE_FAM_REDUCE);
	assert_int_equal(host("aten::gelu_backward"), ANALYZE_FAM_ELEMENTWISE);
	assert_int_equal(host("aten::nll_loss_backward"), ANALYZE_FAM_REDUCE);
	assert_int_equal(host("## backward ##"), ANALYZE_FAM_AUTOGRAD);
	assert_int_equal(host("autograd::engine::evaluate_function: AddmmBackward0"),
			 ANALYZE_FAM_AUTOGRAD);
	assert_int_equal(host("aten::empty"), ANALYZE_FAM_OTHER);
	assert_int_equal(host("aten::select"), ANALYZE_FAM_OTHER);
	/* names compared without case */
	assert_int_equal(host("ATEN::MM"), ANALYZE_FAM_MATMUL);
	/* a data-loader iterator beats the optimizer and op rows */
	assert_int_equal(host("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"),
			 ANALYZE_FAM_DATA_LOADING);
	/* the Kineto category decides runtime calls */
	assert_int_equal(analyze_classify_host("cudaLaunchKernel", 16, "cuda_runtime"),
			 ANALYZE_FAM_RUNTIME);
	/* a device copy's name on a host thread is a copy */
	assert_int_equal(host("Memcpy HtoD (Pageable -> Device)"), ANALYZE_FAM_COPY);
}

/*
 * Prefix rows must end where the op name ends: a longer op that merely starts
 * with a row's pattern is another op. aten::expand is a view (other, as
 * aten::view and aten::as_strided are), not aten::exp; aten::topk is a
 * selection, not aten::to; aten::maximum and aten::minimum are elementwise,
 * not the aten::max / aten::min reductions.
 */
static void test_host_prefix_is_the_op(void **state)
{
	static const struct {
		const char *name;
		enum analyze_family not_this;
	} cases[] = {
	    {"aten::expand", ANALYZE_FAM_ELEMENTWISE}, {"aten::expand_as", ANALYZE_FAM_ELEMENTWISE},
	    {"aten::topk", ANALYZE_FAM_COPY},	       {"aten::maximum", ANALYZE_FAM_REDUCE},
	    {"aten::minimum", ANALYZE_FAM_REDUCE},
	};
	char why[512] = "";
	size_t len = 0;
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum analyze_family got = host(cases[i].name);
		if (got == cases[i].not_this && len < sizeof(why))
			len += (size_t)snprintf(why + len, sizeof(why) - len, " %s -> %s;",
						cases[i].name, analyze_family_name(got));
	}
	if (len)
		fail_msg("taken by a shorter op's prefix row:%s", why);
	assert_int_equal(host("aten::view"), ANALYZE_FAM_OTHER);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_row),	  cmocka_unit_test(test_family_category),
	    cmocka_unit_test(test_peer_mistakes), cmocka_unit_test(test_every_host_row),
	    cmocka_unit_test(test_host_order),	  cmocka_unit_test(test_host_prefix_is_the_op),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
