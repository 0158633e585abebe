/*
 * The read path of the history: which series folders a label filter can skip unread (profgate's
 * "<slug>-<8 hex>" names of other labels; hand-made names are always read), and the change-point
 * test's p-values on fixed series, with and without ties, of several lengths. Under 48 points the
 * permutation test's shuffles and scans are computed with cached constants and a division-free
 * remainder, and these figures (from the plain computation) pin them bit for bit; longer series
 * take the tail approximation of the scan's maximum, pinned to 1e-9 (libm's erfc and exp may
 * differ in the last bit between builds), and beside each is what a permutation test of the same
 * series gave (within its resolution).
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

#include "../../src/history/history.h"

static void test_series_may_hold(void **state)
{
	(void)state;
	assert_int_equal(history_series_may_hold("bench-8b7d9a7c", "bench"), 1);
	assert_int_equal(history_series_may_hold("bench-07-b61af86e", "bench 07"), 1);
	assert_int_equal(history_series_may_hold("bench-07-b61af86e", "Bench/07"), 1);
	assert_int_equal(history_series_may_hold("bench-07-b61af86e", "bench 08"), 0);
	assert_int_equal(history_series_may_hold("bench-8b7d9a7c", "bench 07"), 0);
	assert_int_equal(history_series_may_hold("bench-07-b61af86e", "bench"), 0);
	assert_int_equal(history_series_may_hold("default-0123abcd", NULL), 1);
	assert_int_equal(history_series_may_hold("default-0123abcd", ""), 1);
	assert_int_equal(history_series_may_hold("default-0123abcd", "x"), 0);
	/* not profgate's form: read, whatever the label */
	assert_int_equal(history_series_may_hold("nightly-runs", "bench"), 1);
	assert_int_equal(history_series_may_hold("bench-8B7D9A7C", "other"), 1);
	assert_int_equal(history_series_may_hold("bench-8b7d9a7", "other"), 1);
	assert_int_equal(history_series_may_hold("-8b7d9a7c", "other"), 1);
}

/* x[i] of a step at n/2 of size step plus a fixed pseudo-random noise, rounded to q. */
static void series(double *x, uint32_t n, double step, double q)
{
	uint64_t s = 12345;

	for (uint32_t i = 0; i < n; i++) {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		x[i] = 100 + (i >= n / 2 ? step : 0) + (double)(s >> 11) / 9007199254740992.0 * 4;
		if (q > 0)
			x[i] = round(x[i] / q) * q;
	}
}

static void test_split_p_exact(void **state)
{
	static const struct {
		uint32_t n;
		double step, q, alpha;
		uint64_t seed;
		double p;
	} cases[] = {
	    {40, 0, 0, 0.05, 7, 0x1.60dd67c8a60ddp-2},	 /* no change, no ties */
	    {40, 1.6, 0, 0.05, 7, 0x1.ba5e353f7ced9p-6}, /* a change, no ties */
	    {40, 1, 1, 0.05, 9, 0x1.f15f15f15f15fp-2},	 /* ties: stops early */
	    /* ties; 4,999 shuffles gave 0.0214 */
	    {157, 0.5, 0.5, 0.002, 3, 0x1.30773674c1f5ap-6},
	    /* long; none of 999 shuffles reached it (p <= 0.001) */
	    {1000, 0.1, 0, 0.01, 11, 0x1.fde2ae6d014f6p-12},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double *x = calloc(cases[i].n, sizeof(double));
		double p;

		series(x, cases[i].n, cases[i].step, cases[i].q);
		p = history_split_p(x, cases[i].n, 3, cases[i].alpha, cases[i].seed);
		if (cases[i].n < 48)
			assert_true(p == cases[i].p);
		else
			assert_true(fabs(p - cases[i].p) <= 1e-9 * cases[i].p);
		free(x);
	}
}

/* Three steps, some values tied: segmentation tests parts of many lengths. The permutation
 * test of 999 shuffles gave 0.001 (none reached), 0.001 and 0.007. */
static void test_change_points_exact(void **state)
{
	static const struct history_cp want[] = {
	    {70, 0x1.978p+6, 0x1.9fp+6, 0x1.a1401f3432b54p-39},
	    {190, 0x1.9fp+6, 0x1.93p+6, 0x1.7e1d4e76a75b6p-48},
	    {257, 0x1.93p+6, 0x1.97ccccccccccdp+6, 0x1.93dfa148571edp-8},
	};
	struct history_cp out[300];
	struct history_cp_opts o = {3, 0.05, 42};
	double x[300];
	uint32_t n;
	(void)state;

	series(x, 300, 0, 0.25);
	for (uint32_t i = 0; i < 300; i++)
		x[i] += i >= 70 ? 1.5 : 0, x[i] += i >= 190 ? -2.5 : 0, x[i] += i >= 260 ? 0.7 : 0;
	n = history_change_points(x, 300, &o, out);
	assert_int_equal(n, 3);
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(out[i].index, want[i].index);
		assert_true(fabs(out[i].p_value - want[i].p_value) <= 1e-9 * want[i].p_value);
		assert_true(out[i].before == want[i].before && out[i].after == want[i].after);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_series_may_hold),
	    cmocka_unit_test(test_split_p_exact),
	    cmocka_unit_test(test_change_points_exact),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
