/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Log-bucketed (HDR-style) histogram of u64 values with bounded relative error.
 *
 * Values below 128 have their own bucket (exact). Above, each power of two is split into 64
 * equal buckets, so a bucket [lo, lo + w) has w <= lo / 64; a quantile is reported as the
 * bucket midpoint clamped to the exact min/max, so its relative error is at most 1/128 (0.79%).
 * Fixed size (3776 counters, ~30 KiB), no allocation; count, sum (128-bit), min and max are exact.
 */
#ifndef BIOTAPE_ANALYZE_HIST_H
#define BIOTAPE_ANALYZE_HIST_H

#include <stdint.h>

#define HIST_SUB_BITS 6
#define HIST_SUB (1u << HIST_SUB_BITS) /* buckets per power of two */
#define HIST_BUCKETS ((64 - HIST_SUB_BITS - 1) * HIST_SUB + 2 * HIST_SUB) /* 3776 */
#define HIST_REL_ERROR (1.0 / (2.0 * HIST_SUB)) /* worst-case relative error */

struct hist {
	uint64_t count;
	uint64_t min, max;	 /* valid when count > 0 */
	uint64_t sum_lo, sum_hi; /* exact 128-bit sum of the values */
	uint64_t b[HIST_BUCKETS];
};

/* Bucket index of a value (monotonic in v). */
static inline unsigned int hist_index(uint64_t v)
{
	if (v < 2 * HIST_SUB)
		return (unsigned int)v;
	unsigned int shift = 63 - (unsigned int)__builtin_clzll(v) - HIST_SUB_BITS;
	return shift * HIST_SUB + (unsigned int)(v >> shift);
}

/* Adds one value whose bucket index is known (one value into several histograms). */
static inline void hist_add_at(struct hist *h, uint64_t v, unsigned int idx)
{
	if (h->count == 0 || v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->count++;
	h->sum_lo += v;
	h->sum_hi += h->sum_lo < v; /* carry: integer adds, no u64 -> double per value */
	h->b[idx]++;
}

/* Adds one value. */
static inline void hist_add(struct hist *h, uint64_t v)
{
	hist_add_at(h, v, hist_index(v));
}

/* Smallest value mapping to bucket i, and the bucket's width. */
uint64_t hist_bucket_lo(unsigned int i);
uint64_t hist_bucket_width(unsigned int i);
/* Zeroes the histogram. */
void hist_init(struct hist *h);
/* Adds every value of src into dst. */
void hist_merge(struct hist *dst, const struct hist *src);
/* Value at quantile q in [0, 1] (rank ceil(q * count)); 0 when empty. Error <= HIST_REL_ERROR. */
uint64_t hist_quantile(const struct hist *h, double q);
/* Fraction of values <= v (bucket resolution); 0 when empty. */
double hist_cdf_at(const struct hist *h, uint64_t v);
/* Values added; 0 for NULL (a histogram not allocated: no values). */
static inline uint64_t hist_count(const struct hist *h)
{
	return h ? h->count : 0;
}

/* Mean, 0 when empty. */
double hist_mean(const struct hist *h);

#endif
