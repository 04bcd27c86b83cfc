/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Log-bucketed (HDR-style) histogram of u64 values with bounded relative error: the one the
 * analyzer (latency, queue depth, gaps) and the replayer (latency, issue error) both keep, so
 * that both name the same quantile for the same values.
 *
 * Values below 128 have their own bucket (exact). Above, each power of two is split into 64
 * equal buckets, so a bucket [lo, lo + w) has w <= lo / 64; a quantile is reported as the
 * bucket midpoint clamped to the exact min/max, so its relative error is at most 1/128 (0.79%).
 * The whole u64 range is covered (no clamping of large values).
 * Fixed size (3776 counters, ~30 KiB), no allocation; count, sum (128-bit), min and max are exact.
 * A zeroed struct (calloc, hist_init) is an empty histogram.
 *
 * Quantile rule (nearest rank): the value at quantile q of n values is the smallest v such that
 * at least ceil(q * n) of the values are <= v, i.e. the value of rank hist_rank(n, q) (1-based,
 * ceil(q * n) computed in double, at least 1); reported as the midpoint of the bucket holding it,
 * clamped to [min, max]. q <= 0 gives min and q >= 1 gives max, both exact.
 *
 * Merging: hist_merge(dst, src) makes dst the histogram of both sets of values, exactly (the same
 * struct, bit for bit, as adding the values of both into one). Across processes, a struct hist is
 * HIST_WORDS plain uint64_t with no padding, and count is followed by b[]: an element-wise sum of
 * the HIST_SUM_WORDS words from &h->count (MPI_Reduce(&h->count, &out->count, HIST_SUM_WORDS,
 * MPI_UINT64_T, MPI_SUM, ...)) gives the union's count and buckets, so its quantile ranks and
 * buckets; reduce max with MPI_MAX and min with MPI_MIN over the non-empty ones (an empty
 * histogram's min is 0: send UINT64_MAX for it). The 128-bit sum does not add word by word (the
 * carry): for an exact everything, reduce whole structs (MPI_Type_contiguous(HIST_WORDS,
 * MPI_UINT64_T)) with a user op (MPI_Op_create, commutative) that calls hist_merge per element.
 */
#ifndef BIOTAPE_HIST_H
#define BIOTAPE_HIST_H

#include <stddef.h>
#include <stdint.h>

#define HIST_SUB_BITS 6
#define HIST_SUB (1u << HIST_SUB_BITS) /* buckets per power of two */
#define HIST_BUCKETS ((64 - HIST_SUB_BITS - 1) * HIST_SUB + 2 * HIST_SUB) /* 3776 */
#define HIST_REL_ERROR (1.0 / (2.0 * HIST_SUB)) /* worst-case relative error */

struct hist {
	uint64_t min, max;	 /* valid when count > 0 (0 when empty) */
	uint64_t sum_lo, sum_hi; /* exact 128-bit sum of the values */
	uint64_t count;		 /* values added: the sum of b[]; b[] follows it */
	uint64_t b[HIST_BUCKETS];
};

#define HIST_WORDS (sizeof(struct hist) / sizeof(uint64_t))
#define HIST_SUM_WORDS (1 + HIST_BUCKETS) /* count, then b[]: they add element-wise */
_Static_assert(sizeof(struct hist) == (5 + HIST_BUCKETS) * sizeof(uint64_t), "hist: no padding");
_Static_assert(offsetof(struct hist, b) == offsetof(struct hist, count) + sizeof(uint64_t),
	       "hist: b[] follows count");

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
/* Zeroes the histogram (empty). */
void hist_init(struct hist *h);
/* Adds every value of src into dst (see "Merging" above). */
void hist_merge(struct hist *dst, const struct hist *src);
/* The 1-based rank the quantile rule picks among n > 0 values: ceil(q * n), within [1, n]. */
uint64_t hist_rank(uint64_t n, double q);
/* Value at quantile q in [0, 1] (the rule above); 0 when empty. Error <= HIST_REL_ERROR. */
uint64_t hist_quantile(const struct hist *h, double q);
/* Fraction of values <= v (bucket resolution); 0 when empty. */
double hist_cdf_at(const struct hist *h, uint64_t v);
/*
 * Value at quantile q of a mixture: each of the first 16 of the n histograms h[k] (NULL or
 * empty ones get no weight) taken as a distribution, weighted by w[k] >= 0 (normalised to sum
 * 1 over those used). The bucket's middle, as hist_quantile() gives; 0 when no weight is left.
 */
uint64_t hist_mix_quantile(const struct hist *const *h, const double *w, unsigned int n, double q);
/* Values added; 0 for NULL (a histogram not allocated: no values). */
static inline uint64_t hist_count(const struct hist *h)
{
	return h ? h->count : 0;
}

/* Mean, 0 when empty. */
double hist_mean(const struct hist *h);

#endif
