/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The fidelity score of `biotape compare`: how well trace B reproduces trace A (a profile's
 * run, a replay). Phases are A's (analyze/phases.h), laid on B at the same offsets from its
 * first I/O. Distances come from common/dist.h. Definitions in docs/ANALYSIS.md ("Fidelity").
 */
#ifndef BIOTAPE_ANALYZE_FIDELITY_H
#define BIOTAPE_ANALYZE_FIDELITY_H

#include "input.h"
#include "phases.h"

#define FIDELITY_WINDOW_NS 1000000000ull /* IOPS windows (shorter traces: a tenth of A) */

struct fid_phase {
	uint64_t from_ns, to_ns;      /* relative to each trace's first selected I/O */
	double iops_a, iops_b;	      /* I/Os per second of the phase's length */
	double mix_tvd;		      /* op mix */
	double size_tvd[DIR__COUNT];  /* request sizes of reads, of writes (NAN: none in A) */
	double gap_ks;		      /* inter-arrival gaps */
};

struct fidelity {
	uint64_t window_ns;
	size_t windows;		     /* whole windows in both traces */
	double iops_corr;	     /* Pearson correlation of the per-window I/O counts */
	double gap_ks;		     /* KS distance of the inter-arrival gaps, whole traces */
	double ptm_a, ptm_b;	     /* peak-to-mean over 1 s windows (0: n/a) */
	uint64_t ws_a, ws_b;	     /* working set, 4 KiB blocks */
	double demerit_ns[DIR__COUNT]; /* RMS distance of the device latency CDFs of read, write */
	int nphases;
	struct fid_phase ph[PHASES_MAX];
};

/*
 * Scores B against A. a and b are the finished analyses of PA (na traces, on one timeline) and
 * PB (nb) under filter f and options so; window_ns 0 chooses FIDELITY_WINDOW_NS. Reads both
 * sides again (once for the windows, once per phase). Returns 0 or -errno with a one-line
 * message in msg.
 */
int fidelity_compute(struct fidelity *fid, char *const *pa, int na, char *const *pb, int nb,
		     const struct an_filter *f, const struct stats_opts *so, const struct stats *a,
		     const struct stats *b, uint64_t window_ns, char *msg, size_t msglen);

#endif
