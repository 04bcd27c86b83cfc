// SPDX-License-Identifier: GPL-2.0-only
/*
 * Arrival process of a phase (see arrival.h). Pauses: the long gaps, split by Otsu's method on
 * their log lengths for as long as a split is clear and its longer class holds most of the idle
 * time; what the splits leave below is jitter and stalls inside a burst. fio repeats one pause
 * (thinktime) and catches up on its rate after a stall (its schedule counts from the job's
 * start), so a stall belongs to the burst: counted as a pause it would shorten the on time and
 * raise the in-burst rate (on a loaded machine, stalls of 5-35 ms between 120 ms pauses made a
 * profile's in-burst rate 10% too high and its bursts 17% too short).
 */
#include "arrival.h"

#include <math.h>
#include <string.h>

/*
 * Long gaps: >= max(ARRIVAL_LONG_MIN_NS, ARRIVAL_LONG_MEANS x the mean gap); Poisson arrivals
 * spend e^-10 x 11 = 0.05% of the time in such gaps. With at least ARRIVAL_ONOFF_MIN_N pauses
 * covering >= ARRIVAL_ONOFF_SHARE of the phase, the phase is on/off. A split of the long gaps is
 * clear when the geometric means of its classes are >= 2^ARRIVAL_SPLIT_LOG2 apart and Otsu's
 * separability (between-class over total variance of the log lengths) is >= ARRIVAL_SPLIT_ETA
 * (two tight clusters: near 1; one spread cluster: 0.64 for a normal, 0.75 for a uniform).
 * Of what is left, gaps under 1/ARRIVAL_PAUSE_SPREAD of its median are stalls too (a 64 ms
 * stall among 120 ms pauses, 1.9x apart: as a pause it made 762 I/Os a burst, not 800, and an
 * in-burst rate 8% too high). A longer gap stays a pause (a pause with a stall beside it: 134
 * and 178 ms among 120 ms ones): fio does not catch up on a sleep that overran.
 */
#define ARRIVAL_LONG_MIN_NS 1000000ull
#define ARRIVAL_LONG_MEANS 10
#define ARRIVAL_ONOFF_MIN_N 3
#define ARRIVAL_ONOFF_SHARE 0.2
#define ARRIVAL_SPLIT_LOG2 1.0
#define ARRIVAL_SPLIT_ETA 0.8
#define ARRIVAL_PAUSE_SPREAD 1.5

static double bucket_mid(const struct hist *h, unsigned int i)
{
	double mid = (double)hist_bucket_lo(i) + ((double)hist_bucket_width(i) - 1) / 2;

	if (mid < (double)h->min)
		mid = (double)h->min;
	if (mid > (double)h->max)
		mid = (double)h->max;
	return mid;
}

/* Otsu's split of the gaps in buckets [lo, HIST_BUCKETS) on their log2 lengths. */
struct split {
	unsigned int cut;  /* the longer class starts at this bucket */
	double eta;	   /* between-class variance / total variance */
	double m0, m1;	   /* mean log2 length of the shorter and the longer class */
	double t0, t1;	   /* total length of each class */
};

static bool otsu(const struct hist *h, unsigned int lo, struct split *sp)
{
	double w = 0, lw = 0, llw = 0, w0 = 0, lw0 = 0, t0 = 0, t = 0, best = -1;

	for (unsigned int i = lo; i < HIST_BUCKETS; i++) {
		if (!h->b[i])
			continue;
		double x = log2(bucket_mid(h, i)), b = (double)h->b[i];

		w += b;
		lw += b * x;
		llw += b * x * x;
		t += b * bucket_mid(h, i);
	}
	for (unsigned int i = lo; i < HIST_BUCKETS && w > 0; i++) {
		if (!h->b[i])
			continue;
		if (w0 > 0) { /* split before bucket i */
			double w1 = w - w0, m0 = lw0 / w0, m1 = (lw - lw0) / w1;
			double between = w0 * w1 * (m1 - m0) * (m1 - m0) / (w * w);

			if (between > best) {
				best = between;
				*sp = (struct split){.cut = i, .m0 = m0, .m1 = m1, .t0 = t0, .t1 = t - t0};
			}
		}
		w0 += (double)h->b[i];
		lw0 += (double)h->b[i] * log2(bucket_mid(h, i));
		t0 += (double)h->b[i] * bucket_mid(h, i);
	}
	if (best < 0)
		return false; /* one bucket: nothing to split */
	double var = llw / w - (lw / w) * (lw / w);

	sp->eta = var > 0 ? best / var : 0;
	return true;
}

void an_arrival_fit(struct an_arrival *a, const struct hist *h, uint64_t active_ns)
{
	double mean = hist_mean(h);
	unsigned int cut = HIST_BUCKETS, first;
	struct split sp;

	memset(a, 0, sizeof(*a));
	a->long_min_ns = (uint64_t)(mean * ARRIVAL_LONG_MEANS);
	if (a->long_min_ns < ARRIVAL_LONG_MIN_NS)
		a->long_min_ns = ARRIVAL_LONG_MIN_NS;
	a->off_min_ns = a->long_min_ns;
	if (!hist_count(h))
		return;
	first = hist_index(a->long_min_ns);
	if (hist_bucket_lo(first) < a->long_min_ns)
		first++;
	/* the pauses: the long gaps less what clear splits leave below */
	cut = first;
	while (otsu(h, cut, &sp) && sp.m1 - sp.m0 >= ARRIVAL_SPLIT_LOG2 &&
	       sp.eta >= ARRIVAL_SPLIT_ETA && sp.t1 >= sp.t0)
		cut = sp.cut;
	/* shorter than 1/ARRIVAL_PAUSE_SPREAD of the class's median: a stall */
	uint64_t n_cls = 0, rank = 0;
	double pause = 0;

	for (unsigned int i = cut; i < HIST_BUCKETS; i++)
		n_cls += h->b[i];
	for (unsigned int i = cut; i < HIST_BUCKETS && n_cls; i++) {
		rank += h->b[i];
		if (2 * rank >= n_cls) {
			pause = bucket_mid(h, i);
			break;
		}
	}
	while (cut < HIST_BUCKETS && (double)(hist_bucket_lo(cut) + hist_bucket_width(cut)) *
						   ARRIVAL_PAUSE_SPREAD <= pause)
		cut++;
	for (unsigned int i = first; i < HIST_BUCKETS; i++) {
		a->long_n += h->b[i];
		if (i >= cut) {
			a->off_n += h->b[i];
			a->off_ns += (double)h->b[i] * bucket_mid(h, i);
		}
	}
	if (cut < HIST_BUCKETS)
		a->off_min_ns = hist_bucket_lo(cut) > a->long_min_ns ? hist_bucket_lo(cut)
								      : a->long_min_ns;
	if (a->off_n >= ARRIVAL_ONOFF_MIN_N &&
	    a->off_ns >= ARRIVAL_ONOFF_SHARE * (double)active_ns)
		a->kind = AN_ARRIVAL_ONOFF;
	else
		cut = HIST_BUCKETS; /* not on/off: every gap is an on-period gap */

	/* the on-period gaps against an exponential of their mean */
	uint64_t n = 0, c = 0;
	double sum = 0;

	for (unsigned int i = 0; i < cut; i++) {
		n += h->b[i];
		sum += (double)h->b[i] * bucket_mid(h, i);
	}
	double m = n ? sum / (double)n : 0;

	for (unsigned int i = 0; i < cut && m > 0; i++) {
		if (!h->b[i])
			continue;
		double lo = (double)hist_bucket_lo(i), hi = lo + (double)hist_bucket_width(i);
		double f0 = (double)c / (double)n, f1 = (double)(c + h->b[i]) / (double)n;
		double e0 = 1 - exp(-lo / m), e1 = 1 - exp(-hi / m);

		a->ks_exp = fmax(a->ks_exp, fmax(fabs(f0 - e0), fabs(f1 - e1)));
		c += h->b[i];
	}
	a->poisson = n && a->ks_exp <= ARRIVAL_POISSON_KS;
	if (a->kind != AN_ARRIVAL_ONOFF && a->poisson)
		a->kind = AN_ARRIVAL_POISSON;
}
