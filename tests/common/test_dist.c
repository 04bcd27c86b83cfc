// SPDX-License-Identifier: GPL-2.0-only
/* Distances between distributions (common/dist.h) on cases computed by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "dist.h"

static void test_tvd(void **state)
{
	const double a[] = {1, 1, 2}, b[] = {0, 2, 2}, z[] = {0, 0, 0};

	(void)state;
	/* shares .25 .25 .5 vs 0 .5 .5: (.25 + .25 + 0) / 2 */
	assert_float_equal(dist_tvd(a, b, 3), 0.25, 1e-12);
	assert_float_equal(dist_tvd(a, a, 3), 0, 1e-12);
	/* scale does not matter, disjoint supports are 1 apart */
	const double c[] = {10, 0}, d[] = {0, 3};

	assert_float_equal(dist_tvd(c, d, 2), 1, 1e-12);
	assert_true(isnan(dist_tvd(a, z, 3)));
}

static void test_ks_bins(void **state)
{
	const double a[] = {1, 1, 2}, b[] = {0, 2, 2};
	const double c[] = {1, 0, 0, 1}, d[] = {0, 0, 1, 1}, z[] = {0, 0, 0, 0};

	(void)state;
	/* F: .25 .5 1 vs 0 .5 1 */
	assert_float_equal(dist_ks_bins(a, b, 3), 0.25, 1e-12);
	/* F: .5 .5 .5 1 vs 0 0 .5 1 */
	assert_float_equal(dist_ks_bins(c, d, 4), 0.5, 1e-12);
	assert_true(isnan(dist_ks_bins(c, z, 4)));
}

static void test_ks_hist(void **state)
{
	struct hist a, b;

	(void)state;
	hist_init(&a);
	hist_init(&b);
	assert_true(isnan(dist_ks_hist(&a, &b)));
	for (uint64_t v = 1; v <= 4; v++) {
		hist_add(&a, v);
		hist_add(&b, v + 2);
	}
	/* {1,2,3,4} vs {3,4,5,6}: at 2, F_a = .5 and F_b = 0 */
	assert_float_equal(dist_ks_hist(&a, &b), 0.5, 1e-12);
	assert_float_equal(dist_ks_hist(&a, &a), 0, 1e-12);
}

static void test_pearson(void **state)
{
	const double x[] = {1, 2, 3, 4}, up[] = {2, 4, 6, 8}, down[] = {8, 6, 4, 2};
	const double x3[] = {1, 2, 3}, y3[] = {1, 3, 2}, flat[] = {5, 5, 5};

	(void)state;
	assert_float_equal(dist_pearson(x, up, 4), 1, 1e-12);
	assert_float_equal(dist_pearson(x, down, 4), -1, 1e-12);
	/* means 2, 2: sxy = 1, sxx = 2, syy = 2 */
	assert_float_equal(dist_pearson(x3, y3, 3), 0.5, 1e-12);
	assert_true(isnan(dist_pearson(x3, flat, 3)));
	assert_true(isnan(dist_pearson(x, up, 1)));
}

static void test_demerit(void **state)
{
	struct hist a, b;

	(void)state;
	hist_init(&a);
	hist_init(&b);
	for (int i = 0; i < 1000; i++) {
		hist_add(&a, 10);
		hist_add(&b, 13);
	}
	/* every quantile 3 apart */
	assert_float_equal(dist_demerit_hist(&a, &b), 3, 1e-12);
	hist_init(&a);
	hist_init(&b);
	for (int i = 0; i < 1000; i++) {
		hist_add(&a, i < 500 ? 10 : 20);
		hist_add(&b, 10);
	}
	/* half of the quantiles 10 apart: sqrt(0.5 * 100) */
	assert_float_equal(dist_demerit_hist(&a, &b), sqrt(50), 1e-9);
	hist_init(&b);
	assert_true(isnan(dist_demerit_hist(&a, &b)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tvd),	cmocka_unit_test(test_ks_bins),
		cmocka_unit_test(test_ks_hist), cmocka_unit_test(test_pearson),
		cmocka_unit_test(test_demerit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
