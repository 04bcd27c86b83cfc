/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Phases of a workload: change-point detection (binary segmentation with a penalty) over the
 * per-window series of an analysis' timeline: IOPS, read share, mean read and write size, and
 * locality (sequential share, how far the other I/Os seek and where they land, weighted by
 * their share), features that a sequential scan moving over the device hardly changes.
 * Method in docs/ANALYSIS.md ("Phases").
 */
#ifndef BIOTAPE_ANALYZE_PHASES_H
#define BIOTAPE_ANALYZE_PHASES_H

#include "stats.h"

#include <stddef.h>
#include <stdint.h>

#define PHASES_MAX 16	    /* phases in one profile */
/* log2 IOPS, read share, log2 mean read size, log2 mean write size, sequential share, mean log2
 * seek distance of the I/Os that do not continue their stream, and where those land: their
 * offset as a share of the range touched, summed over the jumps and divided by all I/Os with
 * a predecessor (a sequential one counts 0, so a scan's rare jumps hardly move it) */
#define PHASES_FEATURES 7
#define PHASES_MIN_NS 1000000000ull /* a phase lasts at least 1 s (fio starts a job per phase) */

/* A phase: [from_ns, to_ns) relative to the analysis origin (the first selected issue). */
struct phase_span {
	uint64_t from_ns, to_ns;
};

/*
 * Segments x (n rows of d features, row-major) into pieces of at least min_len rows by binary
 * segmentation on the squared-error cost: nseg > 0 makes the best nseg pieces (fewer when the
 * rows run out); nseg == 0 splits while the best split lowers the cost by more than penalty.
 * Writes each piece's first row to starts[] (starts[0] = 0); returns the count (<= max), or
 * -ENOMEM.
 */
int phases_segment(const double *x, size_t n, size_t d, size_t min_len, int nseg, double penalty,
		   size_t *starts, int max);

/*
 * The phases of a finished analysis from its timeline (nphases 0: as many as the data shows,
 * else at most nphases). The last phase ends after the last issue. Returns the count (>= 1)
 * or -ENOMEM.
 */
int phases_detect(const struct stats *s, int nphases, struct phase_span *spans, int max);

#endif
