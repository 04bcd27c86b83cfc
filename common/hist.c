// SPDX-License-Identifier: GPL-2.0-only
/* Log-bucketed histogram (see hist.h for the error bound and the quantile rule). */
#include "hist.h"

#include <math.h>
#include <string.h>

uint64_t hist_bucket_lo(unsigned int i)
{
	if (i < 2 * HIST_SUB)
		return i;
	unsigned int shift = i / HIST_SUB - 1;
	uint64_t mant = i - shift * HIST_SUB; /* in [HIST_SUB, 2 * HIST_SUB) */

	return mant << shift;
}

uint64_t hist_bucket_width(unsigned int i)
{
	if (i < 2 * HIST_SUB)
		return 1;
	return 1ull << (i / HIST_SUB - 1);
}

void hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
}

void hist_merge(struct hist *dst, const struct hist *src)
{
	if (!src->count)
		return;
	if (!dst->count || src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	dst->count += src->count;
	dst->sum_lo += src->sum_lo;
	dst->sum_hi += src->sum_hi + (dst->sum_lo < src->sum_lo);
	for (unsigned int i = 0; i < HIST_BUCKETS; i++)
		dst->b[i] += src->b[i];
}

uint64_t hist_rank(uint64_t n, double q)
{
	if (!(q > 0)) /* and NaN */
		return 1;
	if (q >= 1)
		return n;
	uint64_t rank = (uint64_t)ceil(q * (double)n);

	if (rank < 1)
		rank = 1;
	return rank < n ? rank : n;
}

uint64_t hist_quantile(const struct hist *h, double q)
{
	if (!h->count)
		return 0;
	if (!(q > 0))
		return h->min;
	if (q >= 1)
		return h->max;
	uint64_t rank = hist_rank(h->count, q), seen = 0;

	for (unsigned int i = 0; i < HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= rank) {
			uint64_t lo = hist_bucket_lo(i), w = hist_bucket_width(i);
			uint64_t v = lo + (w - 1) / 2;

			if (v < h->min)
				v = h->min;
			if (v > h->max)
				v = h->max;
			return v;
		}
	}
	return h->max;
}

double hist_cdf_at(const struct hist *h, uint64_t v)
{
	if (!h->count)
		return 0;
	unsigned int top = hist_index(v);
	uint64_t seen = 0;

	for (unsigned int i = 0; i <= top && i < HIST_BUCKETS; i++)
		seen += h->b[i];
	return (double)seen / (double)h->count;
}

uint64_t hist_mix_quantile(const struct hist *const *h, const double *w, unsigned int n, double q)
{
	double wsum = 0;
	uint64_t lo_min = UINT64_MAX, hi_max = 0, cum[16] = {0};

	if (n > sizeof(cum) / sizeof(cum[0]))
		n = sizeof(cum) / sizeof(cum[0]); /* the header's limit: the rest take no part */
	for (unsigned int k = 0; k < n; k++)
		if (hist_count(h[k]) && w[k] > 0) {
			wsum += w[k];
			lo_min = h[k]->min < lo_min ? h[k]->min : lo_min;
			hi_max = h[k]->max > hi_max ? h[k]->max : hi_max;
		}
	if (!(wsum > 0))
		return 0;
	if (!(q > 0))
		return lo_min;
	if (q >= 1)
		return hi_max;
	for (unsigned int i = 0; i < HIST_BUCKETS; i++) {
		double seen = 0; /* from the exact counts at each bucket: no rounding builds up */

		for (unsigned int k = 0; k < n; k++)
			if (hist_count(h[k]) && w[k] > 0) {
				cum[k] += h[k]->b[i];
				seen += w[k] / wsum * ((double)cum[k] / (double)h[k]->count);
			}
		if (seen >= q) {
			uint64_t v = hist_bucket_lo(i) + (hist_bucket_width(i) - 1) / 2;

			return v < lo_min ? lo_min : v > hi_max ? hi_max : v;
		}
	}
	return hi_max;
}

double hist_mean(const struct hist *h)
{
	return h->count ? (ldexp((double)h->sum_hi, 64) + (double)h->sum_lo) / (double)h->count : 0;
}
