// SPDX-License-Identifier: GPL-2.0-only
/* Distances between distributions and series (see dist.h). */
#include "dist.h"

#include <math.h>

static double sum_of(const double *v, size_t n)
{
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += v[i] > 0 ? v[i] : 0;
	return s;
}

double dist_tvd(const double *a, const double *b, size_t n)
{
	double sa = sum_of(a, n), sb = sum_of(b, n), d = 0;

	if (!(sa > 0) || !(sb > 0))
		return NAN;
	for (size_t i = 0; i < n; i++)
		d += fabs((a[i] > 0 ? a[i] / sa : 0) - (b[i] > 0 ? b[i] / sb : 0));
	return d / 2;
}

double dist_ks_bins(const double *a, const double *b, size_t n)
{
	double sa = sum_of(a, n), sb = sum_of(b, n), ca = 0, cb = 0, d = 0;

	if (!(sa > 0) || !(sb > 0))
		return NAN;
	for (size_t i = 0; i < n; i++) {
		ca += a[i] > 0 ? a[i] : 0;
		cb += b[i] > 0 ? b[i] : 0;
		double x = fabs(ca / sa - cb / sb);

		if (x > d)
			d = x;
	}
	return d;
}

double dist_ks_hist(const struct hist *a, const struct hist *b)
{
	uint64_t ca = 0, cb = 0;
	double d = 0;

	if (!hist_count(a) || !hist_count(b))
		return NAN;
	for (unsigned int i = 0; i < HIST_BUCKETS; i++) {
		ca += a->b[i];
		cb += b->b[i];
		double x = fabs((double)ca / (double)a->count - (double)cb / (double)b->count);

		if (x > d)
			d = x;
	}
	return d;
}

double dist_pearson(const double *x, const double *y, size_t n)
{
	double mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;

	if (n < 2)
		return NAN;
	for (size_t i = 0; i < n; i++) {
		mx += x[i];
		my += y[i];
	}
	mx /= (double)n;
	my /= (double)n;
	for (size_t i = 0; i < n; i++) {
		sxy += (x[i] - mx) * (y[i] - my);
		sxx += (x[i] - mx) * (x[i] - mx);
		syy += (y[i] - my) * (y[i] - my);
	}
	if (!(sxx > 0) || !(syy > 0))
		return NAN;
	return sxy / sqrt(sxx * syy);
}

double dist_demerit_hist(const struct hist *a, const struct hist *b)
{
	double acc = 0;

	if (!hist_count(a) || !hist_count(b))
		return NAN;
	for (int i = 0; i < DIST_DEMERIT_POINTS; i++) {
		double q = (i + 0.5) / DIST_DEMERIT_POINTS;
		double d = (double)hist_quantile(a, q) - (double)hist_quantile(b, q);

		acc += d * d;
	}
	return sqrt(acc / DIST_DEMERIT_POINTS);
}
