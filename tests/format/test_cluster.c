// SPDX-License-Identifier: GPL-2.0-only
/* libbiotape: the cluster clock arithmetic (offset interpolation, drift, mapping to the
 * reference clock). */
#include "btape.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

static struct btape_cluster two(uint64_t t0, int64_t o0, uint64_t u0, uint64_t t1, int64_t o1,
				uint64_t u1)
{
	struct btape_cluster cl = {.nsync = 2};

	cl.sync[0] = (struct btape_clock_sync){t0, o0, u0};
	cl.sync[1] = (struct btape_clock_sync){t1, o1, u1};
	return cl;
}

static void test_no_sync(void **state)
{
	struct btape_cluster cl = {0};

	(void)state;
	assert_int_equal(btape_cluster_offset_at(&cl, 12345), 0);
	assert_int_equal(btape_cluster_to_reference(&cl, 12345), 12345);
	assert_int_equal(btape_cluster_uncertainty(&cl), 0);
	assert_true(btape_cluster_drift_ppm(&cl) == 0.0);
}

static void test_one_sync(void **state)
{
	struct btape_cluster cl = {.nsync = 1};

	(void)state;
	cl.sync[0] = (struct btape_clock_sync){1000, 3000000, 40};
	assert_int_equal(btape_cluster_offset_at(&cl, 0), 3000000);
	assert_int_equal(btape_cluster_offset_at(&cl, UINT64_MAX), 3000000);
	assert_int_equal(btape_cluster_to_reference(&cl, 10000000), 7000000);
	assert_int_equal(btape_cluster_uncertainty(&cl), 40);
	assert_true(btape_cluster_drift_ppm(&cl) == 0.0);
}

/* A clock 7 ms behind that gains 10 us over 10 s: 1 ppm, interpolated exactly, rounded. */
static void test_drift_interpolation(void **state)
{
	const uint64_t t0 = 5000000000ull, t1 = t0 + 10000000000ull;
	struct btape_cluster cl = two(t0, -7000000, 20, t1, -6990000, 35);

	(void)state;
	assert_int_equal(btape_cluster_offset_at(&cl, t0), -7000000);
	assert_int_equal(btape_cluster_offset_at(&cl, t1), -6990000);
	assert_int_equal(btape_cluster_offset_at(&cl, t0 + 5000000000ull), -6995000);
	assert_int_equal(btape_cluster_offset_at(&cl, t0 + 1), -7000000); /* 0.001 ns: rounds */
	assert_int_equal(btape_cluster_offset_at(&cl, t0 + 500000), -6999999); /* +0.5 ns */
	assert_int_equal(btape_cluster_offset_at(&cl, t0 + 499999), -7000000);
	/* outside the span the nearest measurement holds */
	assert_int_equal(btape_cluster_offset_at(&cl, 0), -7000000);
	assert_int_equal(btape_cluster_offset_at(&cl, t1 + 1000000000ull), -6990000);
	assert_int_equal(btape_cluster_to_reference(&cl, t0 + 5000000000ull),
			 t0 + 5000000000ull + 6995000);
	assert_int_equal(btape_cluster_uncertainty(&cl), 35);
	assert_float_equal(btape_cluster_drift_ppm(&cl), 1.0, 1e-9);
}

/* A falling offset, and spans and offsets large enough to overflow 64-bit products. */
static void test_large_values(void **state)
{
	const uint64_t t0 = 1ull << 62, span = 1ull << 61;
	struct btape_cluster cl = two(t0, INT64_MAX / 2, 0, t0 + span, -(INT64_MAX / 2), 0);

	(void)state;
	assert_int_equal(btape_cluster_offset_at(&cl, t0 + span / 2), 0);
	/* the change, -(2^61 - 0.5), is rounded half away from zero: 2^62 - 1 - 2^61 */
	assert_int_equal(btape_cluster_offset_at(&cl, t0 + span / 4), INT64_MAX / 4);
	assert_true(btape_cluster_drift_ppm(&cl) < 0);
	/* clamped, never wrapped */
	cl = two(0, INT64_MAX, 0, 0, INT64_MAX, 0);
	assert_int_equal(btape_cluster_to_reference(&cl, 5), 0);
	cl = two(0, INT64_MIN, 0, 0, INT64_MIN, 0);
	assert_int_equal(btape_cluster_to_reference(&cl, UINT64_MAX - 5), UINT64_MAX);
	/* two syncs at one instant: the first holds */
	cl = two(100, 5, 1, 100, 9, 2);
	assert_int_equal(btape_cluster_offset_at(&cl, 100), 5);
	assert_int_equal(btape_cluster_offset_at(&cl, 1000), 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_sync),
		cmocka_unit_test(test_one_sync),
		cmocka_unit_test(test_drift_interpolation),
		cmocka_unit_test(test_large_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
