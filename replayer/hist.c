// SPDX-License-Identifier: GPL-2.0-only
#include "hist.h"

#include <string.h>

#define SUB_COUNT (1u << RP_HIST_SUB_BITS)

void rp_hist_reset(struct rp_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

unsigned int rp_hist_index(uint64_t v)
{
	unsigned int msb, shift, idx;

	if (v < SUB_COUNT)
		return (unsigned int)v;
	msb = 63 - (unsigned int)__builtin_clzll(v); /* >= SUB_BITS */
	if (msb >= RP_HIST_MAX_BITS)
		return RP_HIST_BUCKETS - 1;
	shift = msb - RP_HIST_SUB_BITS + 1;
	/* group g = shift (1..), values [2^msb, 2^(msb+1)) split into SUB_COUNT/2 buckets */
	idx = (shift << (RP_HIST_SUB_BITS - 1)) + (unsigned int)(v >> shift);
	/* v >> shift is in [SUB_COUNT/2, SUB_COUNT) */
	return idx;
}

uint64_t rp_hist_bucket_low(unsigned int i)
{
	unsigned int half = SUB_COUNT / 2, shift, sub;

	if (i < SUB_COUNT)
		return i;
	/* i = shift*half + sub with sub in [half, 2*half) */
	shift = i / half - 1;
	sub = i - shift * half;
	return (uint64_t)sub << shift;
}

void rp_hist_add(struct rp_hist *h, uint64_t v)
{
	h->buckets[rp_hist_index(v)]++;
	h->count++;
	h->sum += v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

void rp_hist_merge(struct rp_hist *dst, const struct rp_hist *src)
{
	if (!src->count)
		return;
	for (unsigned int i = 0; i < RP_HIST_BUCKETS; i++)
		dst->buckets[i] += src->buckets[i];
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

uint64_t rp_hist_quantile(const struct rp_hist *h, double q)
{
	uint64_t rank, seen = 0, lo, hi, mid;

	if (!h->count)
		return 0;
	if (q <= 0)
		return h->min;
	if (q >= 1)
		return h->max;
	rank = (uint64_t)(q * (double)h->count);
	if (rank >= h->count)
		rank = h->count - 1;
	for (unsigned int i = 0; i < RP_HIST_BUCKETS; i++) {
		seen += h->buckets[i];
		if (seen > rank) {
			lo = rp_hist_bucket_low(i);
			hi = i + 1 < RP_HIST_BUCKETS ? rp_hist_bucket_low(i + 1) : h->max + 1;
			mid = lo + (hi - lo - 1) / 2;
			if (mid < h->min)
				mid = h->min;
			if (mid > h->max)
				mid = h->max;
			return mid;
		}
	}
	return h->max;
}
