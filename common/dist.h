/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Distances between two distributions or two series: what `compare`'s fidelity score and the
 * replayer's fidelity report both measure, so that both name the same figure for the same data.
 * Every function returns NAN when the figure is undefined (an empty side, too few points).
 */
#ifndef BIOTAPE_DIST_H
#define BIOTAPE_DIST_H

#include "hist.h"

#include <stddef.h>

/* Total variation distance (0..1) of two weight vectors over the same n categories, each
 * normalised to sum 1 first: half the sum of |p_i - q_i|. */
double dist_tvd(const double *a, const double *b, size_t n);
/* Kolmogorov-Smirnov distance (0..1) of two binned samples over the same n ordered bins:
 * the largest |F_a - F_b| of the cumulative shares at the bin edges. */
double dist_ks_bins(const double *a, const double *b, size_t n);
/* KS distance of two histograms at bucket resolution (relative error <= HIST_REL_ERROR). */
double dist_ks_hist(const struct hist *a, const struct hist *b);
/* Pearson correlation (-1..1) of two series of n points; NAN when n < 2 or a series is flat. */
double dist_pearson(const double *x, const double *y, size_t n);
/* The demerit figure (Ruemmler and Wilkes): root mean square horizontal distance between the
 * two CDFs, in the histograms' unit, taken at DIST_DEMERIT_POINTS evenly spaced quantiles
 * q = (i + 0.5) / DIST_DEMERIT_POINTS. */
#define DIST_DEMERIT_POINTS 1000
double dist_demerit_hist(const struct hist *a, const struct hist *b);

#endif
