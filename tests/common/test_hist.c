// SPDX-License-Identifier: GPL-2.0-only
/* The shared histogram (common/hist.h): its quantile rule, error bound, bucket layout and merge. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "hist_assert.h"

static struct hist *hist_new(void)
{
	struct hist *h = calloc(1, sizeof(*h));

	assert_non_null(h);
	return h;
}

/*
 * The rule, pinned: the rank chosen (1-based) for n values at q is ceil(q * n), at least 1.
 * Values 1..n (below 128: a bucket each) make the reported quantile the rank itself, in
 * whatever order they were added.
 */
static void test_rank_rule(void **state)
{
	static const uint64_t ns[] = {1, 2, 3, 10, 100};
	static const double qs[] = {0, 0.5, 0.99, 1};
	static const uint64_t want[5][4] = {
		{1, 1, 1, 1},	  /* n = 1 */
		{1, 1, 2, 2},	  /* n = 2: p50 is the lower of two */
		{1, 2, 3, 3},	  /* n = 3 */
		{1, 5, 10, 10},	  /* n = 10: 0.99 * 10 = 9.9 -> 10 */
		{1, 50, 99, 100}, /* n = 100: p99 is the 99th value, not the max */
	};
	struct hist *h = hist_new();

	for (unsigned int i = 0; i < 5; i++) {
		hist_init(h);
		for (uint64_t v = ns[i]; v >= 1; v--) /* descending: order does not matter */
			hist_add(h, v);
		for (unsigned int j = 0; j < 4; j++) {
			assert_int_equal(hist_rank(ns[i], qs[j]), want[i][j]);
			assert_int_equal(hist_quantile(h, qs[j]), want[i][j]);
		}
	}
	/* out of range and NaN: the ends */
	assert_int_equal(hist_rank(10, -1), 1);
	assert_int_equal(hist_rank(10, 2), 10);
	assert_int_equal(hist_rank(10, NAN), 1);
	assert_int_equal(hist_quantile(h, -1), 1);
	assert_int_equal(hist_quantile(h, 2), 100);
	/* q just above k/n moves to the next rank, q at k/n does not */
	assert_int_equal(hist_rank(1000, 0.999), 999);
	assert_int_equal(hist_rank(1000, 0.9991), 1000);
	/* the rank's bucket midpoint, clamped to [min, max]: 1000 twice is 1000, not a midpoint */
	hist_init(h);
	hist_add(h, 1000);
	hist_add(h, 1000);
	assert_int_equal(hist_quantile(h, 0.5), 1000);
	free(h);
}

static void test_bounds(void **state)
{
	struct hist *h = hist_new();

	assert_int_equal(hist_quantile(h, 0.5), 0); /* empty */
	assert_true(hist_cdf_at(h, 5) == 0);
	assert_true(hist_mean(h) == 0);
	for (uint64_t v = 1; v <= 100000; v++)
		hist_add(h, v * 37);
	assert_int_equal(h->count, 100000);
	assert_int_equal(h->min, 37);
	assert_int_equal(h->max, 3700000);
	static const double qs[] = {0.5, 0.9, 0.99, 0.999};

	for (int i = 0; i < 4; i++)
		assert_hist_close(hist_quantile(h, qs[i]), (uint64_t)ceil(qs[i] * 100000) * 37);
	assert_int_equal(hist_quantile(h, 1.0), 3700000);
	assert_int_equal(hist_quantile(h, 0), 37);
	assert_true(hist_mean(h) == 37.0 * 100001 / 2);
	/* exact below 128; bucket edges are monotonic and contiguous */
	for (unsigned int i = 0; i + 1 < HIST_BUCKETS; i++)
		assert_int_equal(hist_bucket_lo(i) + hist_bucket_width(i), hist_bucket_lo(i + 1));
	for (uint64_t v = 0; v < 5000; v++)
		assert_true(hist_bucket_lo(hist_index(v)) <= v &&
			    v < hist_bucket_lo(hist_index(v)) + hist_bucket_width(hist_index(v)));
	/* every value lands in its bucket's range over the whole u64 range, nothing clamped */
	for (uint64_t v = 1; v < UINT64_MAX / 3; v = v * 3 + 1) {
		unsigned int i = hist_index(v);

		assert_true(hist_bucket_lo(i) <= v && v - hist_bucket_lo(i) < hist_bucket_width(i));
		assert_true(hist_bucket_width(i) == 1 || hist_bucket_width(i) <= v / HIST_SUB);
	}
	assert_int_equal(hist_index(UINT64_MAX), HIST_BUCKETS - 1);
	/* a value past 2^42 ns (the old replay histogram's last bucket) is resolved, not clamped */
	hist_init(h);
	for (uint64_t k = 1; k <= 100; k++)
		hist_add(h, k << 43);
	assert_hist_close(hist_quantile(h, 0.5), 50ull << 43);
	free(h);
}

/* xorshift64*: values of every magnitude, some large enough to carry the 128-bit sum */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static uint64_t rnd_value(uint64_t *s)
{
	return rnd(s) >> (rnd(s) % 64);
}

static void assert_same_quantiles(const struct hist *a, const struct hist *b)
{
	for (double q = 0; q <= 1.0001; q += 0.001)
		assert_int_equal(hist_quantile(a, q), hist_quantile(b, q));
	assert_true(hist_mean(a) == hist_mean(b));
}

/* merge(A, B) is the histogram of the union: the same struct, so the same quantiles. */
static void test_merge(void **state)
{
	struct hist *a = hist_new(), *b = hist_new(), *u = hist_new(), *e = hist_new();
	uint64_t seed = 42;

	for (unsigned int round = 0; round < 20; round++) {
		unsigned int na = round == 0 ? 0 : (unsigned int)(rnd(&seed) % 5000);
		unsigned int nb = round == 1 ? 0 : (unsigned int)(rnd(&seed) % 5000);

		hist_init(a);
		hist_init(b);
		hist_init(u);
		for (unsigned int i = 0; i < na; i++) {
			uint64_t v = round == 2 ? 1000 + i : rnd_value(&seed);

			hist_add(a, v);
			hist_add(u, v);
		}
		for (unsigned int i = 0; i < nb; i++) {
			uint64_t v = round == 2 ? 1 + i % 7 : rnd_value(&seed);

			hist_add(b, v);
			hist_add(u, v);
		}
		hist_merge(a, b);
		assert_memory_equal(a, u, sizeof(*u));
		assert_same_quantiles(a, u);
		/* merging an empty one changes nothing, either way round */
		hist_merge(a, e);
		assert_memory_equal(a, u, sizeof(*u));
		hist_init(b);
		hist_merge(b, u);
		assert_memory_equal(b, u, sizeof(*u));
	}
	free(a);
	free(b);
	free(u);
	free(e);
}

/*
 * What an MPI_Reduce of plain uint64_t arrays does (hist.h "Merging"): an element-wise sum of
 * the HIST_SUM_WORDS words from &count, min and max reduced apart; the quantiles are the union's.
 */
static void test_reduce_words(void **state)
{
	enum { RANKS = 4 };
	struct hist *h[RANKS], *u = hist_new(), *r = hist_new();
	uint64_t seed = 7;

	for (unsigned int k = 0; k < RANKS; k++) {
		h[k] = hist_new();
		for (unsigned int i = 0; k != 2 && i < 3000; i++) { /* rank 2 has no values */
			uint64_t v = rnd(&seed) % (100000ull << k);

			hist_add(h[k], v);
			hist_add(u, v);
		}
	}
	r->min = UINT64_MAX;
	for (unsigned int k = 0; k < RANKS; k++) {
		const uint64_t *src = &h[k]->count;
		uint64_t *dst = &r->count;

		for (size_t w = 0; w < HIST_SUM_WORDS; w++) /* MPI_SUM */
			dst[w] += src[w];
		if (h[k]->count && h[k]->min < r->min) /* MPI_MIN over the non-empty ones */
			r->min = h[k]->min;
		if (h[k]->max > r->max) /* MPI_MAX */
			r->max = h[k]->max;
	}
	assert_int_equal(r->count, u->count);
	assert_memory_equal(r->b, u->b, sizeof(u->b));
	for (double q = 0; q <= 1.0001; q += 0.001)
		assert_int_equal(hist_quantile(r, q), hist_quantile(u, q));
	assert_int_equal(HIST_WORDS, 5 + HIST_BUCKETS);
	for (unsigned int k = 0; k < RANKS; k++)
		free(h[k]);
	free(u);
	free(r);
}

/*
 * A mixture's quantile (hist_mix_quantile): one histogram alone gives hist_quantile()'s value,
 * and two of as many values weighted alike the value of the two merged (at q off the ranks'
 * edges, where the rank rule's ceil() and the mixture's sum of fractions round alike); two
 * point masses at 10 and 100 weighted 0.9 / 0.1 give 10 up to q = 0.9 and 100 past it,
 * whatever their own counts; empty, NULL and zero-weight ones take no part.
 */
static void test_mix_quantile(void **state)
{
	(void)state;
	struct hist *a = hist_new(), *b = hist_new(), *m = hist_new(), *e = hist_new();
	uint64_t x = 88172645463325252ull;

	for (int i = 0; i < 10000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		hist_add(i % 2 ? a : b, (i % 2 ? 1000 : 50000) + x % 10000000);
	}
	hist_merge(m, a);
	hist_merge(m, b);
	const struct hist *one[1] = {a}, *ab[2] = {a, b};
	double w1[1] = {3.0}, w2[2] = {2.0, 2.0};

	for (int i = 0; i < 1000; i++) {
		double q = (i + 0.25) / 1000.0;

		assert_int_equal(hist_mix_quantile(one, w1, 1, q), hist_quantile(a, q));
		assert_int_equal(hist_mix_quantile(ab, w2, 2, q), hist_quantile(m, q));
	}
	hist_init(a);
	hist_init(b);
	for (int i = 0; i < 7; i++)
		hist_add(a, 10);
	for (int i = 0; i < 3000; i++)
		hist_add(b, 100);
	const struct hist *two[4] = {a, NULL, b, e};
	double w[4] = {0.9, 5, 0.1, 7};

	assert_int_equal(hist_mix_quantile(two, w, 4, 0.5), 10);
	assert_int_equal(hist_mix_quantile(two, w, 4, 0.9), 10);
	assert_int_equal(hist_mix_quantile(two, w, 4, 0.901), 100);
	assert_int_equal(hist_mix_quantile(two, w, 4, 0), 10);
	assert_int_equal(hist_mix_quantile(two, w, 4, 1), 100);
	w[0] = 0; /* only b left */
	assert_int_equal(hist_mix_quantile(two, w, 4, 0.5), 100);
	w[2] = 0; /* nothing left */
	assert_int_equal(hist_mix_quantile(two, w, 4, 0.5), 0);
	free(a);
	free(b);
	free(m);
	free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rank_rule),    cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_merge),	     cmocka_unit_test(test_reduce_words),
		cmocka_unit_test(test_mix_quantile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
