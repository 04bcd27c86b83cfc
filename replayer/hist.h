/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A log-bucketed histogram of u64 values (ns): HDR-style, 2^RP_HIST_SUB_BITS linear sub-buckets
 * per power of two, so any reported quantile is within 1/128 (< 0.8%) of a recorded value.
 * Fixed size (no allocation); values above 2^RP_HIST_MAX_BITS are clamped into the last bucket
 * (max is still exact).
 */
#ifndef RP_HIST_H
#define RP_HIST_H

#include <stdint.h>

#define RP_HIST_SUB_BITS 7
#define RP_HIST_MAX_BITS 42 /* ~73 minutes in ns */
#define RP_HIST_BUCKETS ((RP_HIST_MAX_BITS - RP_HIST_SUB_BITS + 2) << (RP_HIST_SUB_BITS - 1))

struct rp_hist {
	uint64_t count;
	uint64_t sum;
	uint64_t min, max;
	uint64_t buckets[RP_HIST_BUCKETS];
};

/* Empties the histogram. */
void rp_hist_reset(struct rp_hist *h);
/* Records one value. */
void rp_hist_add(struct rp_hist *h, uint64_t v);
/* Adds every value of src into dst. */
void rp_hist_merge(struct rp_hist *dst, const struct rp_hist *src);
/* The value at quantile q in [0,1] (bucket midpoint, clamped to [min,max]); 0 when empty. */
uint64_t rp_hist_quantile(const struct rp_hist *h, double q);
/* Bucket index of v, and the lowest value of bucket i (exposed for tests). */
unsigned int rp_hist_index(uint64_t v);
uint64_t rp_hist_bucket_low(unsigned int i);

#endif
