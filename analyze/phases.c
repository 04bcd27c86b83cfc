// SPDX-License-Identifier: GPL-2.0-only
/*
 * Phases: binary segmentation of the timeline's window series (see phases.h). Features are
 * scaled by their own window-to-window noise (the median absolute difference of neighbours,
 * a robust estimate that a change in level hardly moves) with a floor per feature, so that the
 * penalty is in units of noise and a phase boundary is a change several times the jitter.
 */
#include "phases.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Noise floors per feature: a change smaller than about these is never a phase. The jump
 * position's 0.15 (of the range touched): at 0.05, two scans interleaved read by read (every
 * read jumps, to where the other scan is) were 2 phases (tests/analyze/test_phases.c), and
 * the WAL appends of samples/pgbench-checkpoint.btape, interleaved with its data writes, cut
 * the trace elsewhere than at the checkpoint; from 0.10 up the phases were those without the
 * feature. So a hot zone moving by less than about 0.4 of the range (mid-trace, 80-100
 * windows: 2.4-2.7 floors, by the penalty below) is not a phase on its own. */
static const double FEATURE_FLOOR[PHASES_FEATURES] = {0.15, 0.03, 0.15, 0.15, 0.03, 1.0, 0.15};
/* Penalty per split in units of the scaled noise: PENALTY_LOG_N * ln(n) (BIC-like, more
 * conservative: bursts inside a phase must not split it). 32 = 8 per feature when there were
 * four (rate, mix, two sizes); the three locality features did not raise it: at 48 the
 * checkpoint of samples/pgbench-checkpoint.btape (1 s of 6,000 IOPS) was no longer a phase
 * (with five features; with seven, the same phases as with six at 32). */
#define PENALTY_LOG_N 32.0

struct seg {
	size_t lo, hi;	 /* rows [lo, hi) */
	size_t best;	 /* best split row, 0: none */
	double gain;	 /* cost lowered by that split */
};

/* cost of rows [a, b): sum over features of the squared deviations from the mean */
static double cost(const double *S, const double *Q, size_t d, size_t a, size_t b)
{
	double c = 0, len = (double)(b - a);

	for (size_t j = 0; j < d; j++) {
		double s = S[b * d + j] - S[a * d + j];

		c += (Q[b * d + j] - Q[a * d + j]) - s * s / len;
	}
	return c;
}

static void best_split(struct seg *g, const double *S, const double *Q, size_t d, size_t min_len)
{
	double whole = cost(S, Q, d, g->lo, g->hi);

	g->best = 0;
	g->gain = 0;
	if (g->hi - g->lo < 2 * min_len)
		return;
	for (size_t t = g->lo + min_len; t + min_len <= g->hi; t++) {
		double gain = whole - cost(S, Q, d, g->lo, t) - cost(S, Q, d, t, g->hi);

		if (gain > g->gain) {
			g->gain = gain;
			g->best = t;
		}
	}
}

static int cmp_size_t(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

int phases_segment(const double *x, size_t n, size_t d, size_t min_len, int nseg, double penalty,
		   size_t *starts, int max)
{
	double *S = calloc((n + 1) * d, sizeof(double)), *Q = calloc((n + 1) * d, sizeof(double));
	struct seg g[PHASES_MAX];
	int ng = 1, err = 0, want = nseg > 0 ? nseg : max;

	if (!S || !Q) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (want > max)
		want = max;
	if (want > PHASES_MAX)
		want = PHASES_MAX;
	if (!min_len)
		min_len = 1;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < d; j++) {
			S[(i + 1) * d + j] = S[i * d + j] + x[i * d + j];
			Q[(i + 1) * d + j] = Q[i * d + j] + x[i * d + j] * x[i * d + j];
		}
	g[0] = (struct seg){.lo = 0, .hi = n};
	best_split(&g[0], S, Q, d, min_len);
	while (ng < want) {
		int k = -1;

		for (int i = 0; i < ng; i++)
			if (g[i].best && (k < 0 || g[i].gain > g[k].gain))
				k = i;
		if (k < 0 || (nseg == 0 && !(g[k].gain > penalty)))
			break;
		g[ng] = (struct seg){.lo = g[k].best, .hi = g[k].hi};
		g[k].hi = g[k].best;
		best_split(&g[k], S, Q, d, min_len);
		best_split(&g[ng], S, Q, d, min_len);
		ng++;
	}
	for (int i = 0; i < ng; i++)
		starts[i] = g[i].lo;
	qsort(starts, (size_t)ng, sizeof(starts[0]), cmp_size_t);
	err = ng;
cleanup:
	free(S);
	free(Q);
	return err;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double med3(double a, double b, double c)
{
	return a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
}

/* Robust window-to-window noise of feature j: 1.4826 * median |x[i+1] - x[i]| / sqrt(2). */
static double noise_of(const double *x, size_t n, size_t d, size_t j, double *tmp)
{
	if (n < 2)
		return 0;
	for (size_t i = 0; i + 1 < n; i++)
		tmp[i] = fabs(x[(i + 1) * d + j] - x[i * d + j]);
	qsort(tmp, n - 1, sizeof(double), cmp_double);
	return 1.4826 * tmp[(n - 1) / 2] / sqrt(2.0);
}

/*
 * The 4 KiB blocks the reads and writes touched, from the lowest of any device to the highest
 * end: several devices are one address space, as in the profile's range.
 */
static void touched_blocks(const struct stats *s, uint64_t *lo_blk, uint64_t *span_blk)
{
	uint64_t lo = UINT64_MAX, hi = 0;

	for (uint32_t i = 0; i < s->ndevs; i++) {
		const struct devstat *dv = &s->devs[i];

		if (!dv->used || !dv->max_end)
			continue;
		lo = dv->min_off < lo ? dv->min_off : lo;
		hi = dv->max_end > hi ? dv->max_end : hi;
	}
	if (lo > hi)
		lo = hi = 0;
	*lo_blk = lo / STATS_WS_BLOCK;
	*span_blk = (hi + STATS_WS_BLOCK - 1) / STATS_WS_BLOCK - *lo_blk;
	if (!*span_blk)
		*span_blk = 1;
}

int phases_detect(const struct stats *s, int nphases, struct phase_span *spans, int max)
{
	size_t n = s->tl_rows, d = PHASES_FEATURES, starts[PHASES_MAX];
	uint64_t lo_blk, span_blk;
	uint64_t iv = s->tl_interval, end = s->last_issue_ns - s->origin_ns + 1;
	double *x = NULL, *tmp = NULL;
	int ns = 1, err;

	starts[0] = 0;
	if (n && end < n * iv)
		n--; /* the last window is cut short by the last issue: it joins the last phase */
	if (nphases == 1 || n < 2 || !iv)
		goto spans;
	x = calloc(n * d, sizeof(double));
	tmp = calloc(n, sizeof(double));
	if (!x || !tmp) {
		err = -ENOMEM;
		goto cleanup;
	}
	/*
	 * the features; a window without reads (writes) keeps the previous mean size, one without
	 * I/O in a stream its sequential share and jump position, one without seeks the previous
	 * seek length, and windows before the first value take it (NAN until then). Not the mean
	 * offset: a scan moves it in every window, and would be cut into pieces
	 */
	double last[PHASES_FEATURES] = {0, NAN, NAN, NAN, NAN, NAN, NAN};

	touched_blocks(s, &lo_blk, &span_blk);

	for (size_t i = 0; i < n; i++) {
		const struct tl_row *r = &s->tl[i];
		uint64_t nr = r->n_dir[DIR_READ], nw = r->n_dir[DIR_WRITE];
		uint64_t jumps = r->loc_n - r->loc_seq;

		last[0] = log2(1 + (double)(nr + nw) * 1e9 / (double)iv);
		if (nr + nw)
			last[1] = (double)nr / (double)(nr + nw);
		if (nr && r->bytes_dir[DIR_READ])
			last[2] = log2((double)r->bytes_dir[DIR_READ] / (double)nr);
		if (nw && r->bytes_dir[DIR_WRITE])
			last[3] = log2((double)r->bytes_dir[DIR_WRITE] / (double)nw);
		if (r->loc_n)
			last[4] = (double)r->loc_seq / (double)r->loc_n;
		if (jumps)
			last[5] = (double)r->loc_log2 / (double)jumps;
		if (r->loc_n && jumps <= UINT64_MAX / (lo_blk + span_blk)) /* else the sum wrapped */
			last[6] = ((double)r->loc_jump_blk - (double)jumps * (double)lo_blk) /
				  (double)span_blk / (double)r->loc_n;
		memcpy(&x[i * d], last, sizeof(last));
	}
	/*
	 * a pause shorter than half the shortest phase (fio's 0.2 s between stonewalled jobs) is
	 * not a phase: its windows take the rate of the window before it. The median of three
	 * below removes one-window outliers only, and a pause of two windows, 66 noise floors
	 * below 1,000 IOPS, was a phase of its own
	 */
	for (size_t i = 1, a = 0; i < n; i++) {
		bool idle = !(s->tl[i].n_dir[DIR_READ] + s->tl[i].n_dir[DIR_WRITE]);

		if (idle && !a)
			a = i; /* window 0 holds the first issue: a pause starts at 1 or later */
		if (idle || !a)
			continue;
		if ((i - a) * iv < PHASES_MIN_NS / 2)
			for (size_t k = a; k < i; k++)
				x[k * d] = x[(a - 1) * d];
		a = 0;
	}
	for (size_t j = 1; j < d; j++) {
		size_t k = 0;

		while (k < n && isnan(x[k * d + j]))
			k++;
		for (size_t i = 0; i < k; i++)
			x[i * d + j] = k < n ? x[k * d + j] : 0;
	}
	/* a median of three removes one-window outliers (a pause between two jobs) but keeps
	 * steps: the phases are what lasts */
	for (size_t j = 0; j < d && n >= 3; j++) {
		double prev = x[j], first = med3(x[j], x[d + j], x[2 * d + j]);
		double last_m = med3(x[(n - 1) * d + j], x[(n - 2) * d + j], x[(n - 3) * d + j]);

		for (size_t i = 1; i + 1 < n; i++) {
			double b = x[i * d + j];

			x[i * d + j] = med3(prev, b, x[(i + 1) * d + j]);
			prev = b;
		}
		x[j] = first;
		x[(n - 1) * d + j] = last_m;
	}
	for (size_t j = 0; j < d; j++) {
		double sd = noise_of(x, n, d, j, tmp);

		if (sd < FEATURE_FLOOR[j])
			sd = FEATURE_FLOOR[j];
		for (size_t i = 0; i < n; i++)
			x[i * d + j] /= sd;
	}
	size_t min_len = (size_t)((PHASES_MIN_NS + iv - 1) / iv);

	if (min_len < 2)
		min_len = 2;
	ns = phases_segment(x, n, d, min_len, nphases > 0 ? nphases : 0,
			    PENALTY_LOG_N * log((double)n), starts,
			    max < PHASES_MAX ? max : PHASES_MAX);
	if (ns < 0) {
		err = ns;
		goto cleanup;
	}
spans:
	for (int i = 0; i < ns; i++) {
		spans[i].from_ns = i ? starts[i] * iv : 0;
		spans[i].to_ns = i + 1 < ns ? starts[i + 1] * iv : end;
	}
	err = ns;
cleanup:
	free(x);
	free(tmp);
	return err;
}
