// SPDX-License-Identifier: GPL-2.0-only
/* Arrival process of a phase (analyze/arrival.h): pauses, stalls and Poisson from known gaps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <cmocka.h>

#include "arrival.h"

#define US 1000ull
#define MS 1000000ull

static uint64_t rng = 88172645463325252ull;

static double unif(void) /* (0, 1] */
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)((rng >> 11) + 1) * 0x1p-53;
}

/*
 * What fio's bursty section gave on a loaded machine: 20 bursts of 800 I/Os at 10k IOPS
 * (in-burst gaps: a third back to back, 5 us, the rest about 146 us), pauses of 120 ms that
 * spread over two histogram buckets (120.1 and 123 ms) and, with stalls, stalls inside the
 * bursts after which fio catches up (back to back until on schedule, its rate being
 * cumulative), one in each burst: 16 of 5-12 ms, then 4 of 26-36 ms. Returns the active time (ns).
 */
static uint64_t bursty(struct hist *h, bool stalls)
{
	uint64_t t = 0;

	hist_init(h);
	for (int b = 0; b < 20; b++) {
		uint64_t behind = 0;

		for (int i = 0; i < 799; i++) {
			uint64_t g = unif() < 0.33 ? 5 * US : (uint64_t)(136 * US + 20 * US * unif());

			if (stalls && i == 400) { /* a stall, then catching up */
				g = b < 16 ? (uint64_t)(5 * MS + 7 * MS * unif())
					   : (uint64_t)(26 * MS + 10 * MS * unif());
				behind += g;
			} else if (behind > g) {
				behind -= g - 5 * US;
				g = 5 * US;
			}
			hist_add(h, g);
			t += g;
		}
		if (b < 19) {
			uint64_t g = b % 5 == 4 ? 123 * MS : 120100 * US;

			hist_add(h, g);
			t += g;
		}
	}
	return t;
}

/* The pauses are the 120 ms gaps, all of them, and nothing else: stalls stay in the bursts. */
static void test_pauses_not_stalls(void **st)
{
	struct hist h;
	struct an_arrival a;

	(void)st;
	for (int stalls = 0; stalls <= 1; stalls++) {
		uint64_t active = bursty(&h, stalls);

		an_arrival_fit(&a, &h, active);
		assert_int_equal(a.kind, AN_ARRIVAL_ONOFF);
		assert_int_equal(a.off_n, 19);
		assert_true(fabs(a.off_ns / 19 - 120.7 * MS) < 1.5 * MS);
		assert_int_equal(a.long_n, stalls ? 19 + 20 : 19);
		/* the bursts: (I/Os) / (pauses + 1) = 800, and their rate over the rest */
		double on = (double)active - a.off_ns, rate = 16000 / (on / 1e9);

		assert_true(rate > 9700 && rate < 10300);
	}
}

/*
 * A stall of 64 ms, 1.9x shorter than the 120 ms pauses (no clear split), is still a stall; a
 * pause with a stall beside it (178 ms) is a pause.
 */
static void test_long_stall(void **st)
{
	struct hist h;
	struct an_arrival a;
	uint64_t active = bursty(&h, true);

	(void)st;
	hist_add(&h, 64 * MS);
	hist_add(&h, 178 * MS);
	active += 64 * MS + 178 * MS;
	an_arrival_fit(&a, &h, active);
	assert_int_equal(a.kind, AN_ARRIVAL_ONOFF);
	assert_int_equal(a.off_n, 20);
	assert_true(a.off_ns / 20 > 121 * MS && a.off_ns / 20 < 124 * MS);
}

/* Gaps of a Poisson process: Poisson, no pauses. */
static void test_poisson(void **st)
{
	struct hist h;
	struct an_arrival a;
	uint64_t t = 0;

	(void)st;
	hist_init(&h);
	for (int i = 0; i < 20000; i++) {
		uint64_t g = (uint64_t)(-500.0 * US * log(unif()));

		hist_add(&h, g);
		t += g;
	}
	an_arrival_fit(&a, &h, t);
	assert_int_equal(a.kind, AN_ARRIVAL_POISSON);
	assert_true(a.poisson);
	assert_true(a.ks_exp < 0.02);
}

/* Evenly spaced gaps with a few long ones covering little: linear, not on/off nor Poisson. */
static void test_linear(void **st)
{
	struct hist h;
	struct an_arrival a;

	(void)st;
	hist_init(&h);
	for (int i = 0; i < 10000; i++)
		hist_add(&h, 100 * US);
	for (int i = 0; i < 5; i++)
		hist_add(&h, 20 * MS); /* 0.1 s of 1.1 s: under the on/off share */
	an_arrival_fit(&a, &h, 1100 * MS);
	assert_int_equal(a.kind, AN_ARRIVAL_LINEAR);
	assert_false(a.poisson);
	/* empty: linear, nothing found */
	hist_init(&h);
	an_arrival_fit(&a, &h, 0);
	assert_int_equal(a.kind, AN_ARRIVAL_LINEAR);
	assert_int_equal(a.off_n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pauses_not_stalls),
		cmocka_unit_test(test_long_stall),
		cmocka_unit_test(test_poisson),
		cmocka_unit_test(test_linear),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
