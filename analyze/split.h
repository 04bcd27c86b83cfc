/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Parallel analysis: one analysis split into time slices (one per rank), each slice's partial
 * statistics packed into a byte buffer, and the buffers merged in slice order into the first
 * slice's statistics, exactly (docs/ANALYSIS.md section 8).
 *
 * A slice other than the first starts on a whole 1 s window from the shared origin (the first
 * issue of the trace) and re-reads up to SPLIT_WARM_NS before it without counting (its
 * warm-up: stats__warm()). What the warm-up left is the slice's entry state; the merge checks
 * it against the state the slices before it ended with, and where they differ (an I/O older
 * than the warm-up still in flight) or a table folded (processes, request sizes, working-set
 * edges), or the working set's sampling level is not the one one pass would reach, the merge
 * says the result would not be exact: the caller analyses serially instead.
 */
#ifndef BIOTAPE_ANALYZE_SPLIT_H
#define BIOTAPE_ANALYZE_SPLIT_H

#include "stats.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SPLIT_WARM_NS 1000000000ull /* warm-up re-read before a slice */

/* The state a slice starts from: what its warm-up left (stats__warm()). */
struct split_dev_entry {
	uint64_t *inflight; /* completions still pending, ascending */
	uint32_t ninflight;
};

struct split_entry {
	bool captured;
	bool has_prev; /* the warm-up saw an I/O */
	uint64_t last_issue_ns, busy_until;
	uint64_t first_issue_ns; /* the slice's first (set by the caller; without a warm-up, the
				  * merge adds its inter-arrival and idle samples) */
	uint32_t ndevs;
	struct split_dev_entry *devs;
};

/*
 * Where a rank's time goes ($BIOTAPE_SPLIT_TIMES, a debugging aid; docs/ANALYSIS.md section 8):
 * CLOCK_REALTIME stamps, so that a launcher's start time can be subtracted.
 */
enum split_stamp {
	SPLIT_T_START,	/* the command started (after exec and the dynamic loader) */
	SPLIT_T_INIT,	/* MPI up */
	SPLIT_T_OPEN,	/* the files opened, the timeline planned */
	SPLIT_T_WARM,	/* the warm-up read: the slice's first event */
	SPLIT_T_READ,	/* the slice analysed */
	SPLIT_T_PACK,	/* packed (ranks > 0) */
	SPLIT_T_SENT,	/* sent (ranks > 0); rank 0: every part received */
	SPLIT_T_FINISH, /* rank 0: merged and finished (while MPI closes) */
	SPLIT_T_END,	/* the report written, MPI closed */
	SPLIT_T__COUNT
};

/* Slice `rank` of `nranks` (set by the caller) and what an_run() makes of it. */
struct an_slice {
	int rank, nranks;
	uint64_t lo, hi;      /* issue times of the slice: [lo, hi) on the analysis timeline */
	uint64_t warm_lo;     /* the warm-up: [warm_lo, lo) */
	bool undeclared;      /* an event's device was not in its file's table (named by order) */
	struct split_entry entry;
	uint64_t t_ns[SPLIT_T__COUNT];	 /* split_stamp() */
	uint64_t cpu_ns[SPLIT_T__COUNT]; /* ... the process's CPU time then */
	uint64_t runq_ns[SPLIT_T__COUNT]; /* ... the stamping thread's time runnable but not
					   * running (schedstat's run_delay; 0 if unknown) */
	uint64_t wait_ns, merge_ns;    /* rank 0: waiting for parts, merging them */
	uint64_t events;	       /* events of the slice read (for the times line) */
};

/* Stamps phase k of sl (when sl is not NULL). */
void split_stamp(struct an_slice *sl, enum split_stamp k);
/* With $BIOTAPE_SPLIT_TIMES set: one line on stderr, the phases in ms from the variable's
 * value (ns since the epoch, e.g. `date +%s%N` before mpirun) or else from SPLIT_T_START,
 * and the rank's CPU time. */
void split_times_print(const struct an_slice *sl);

/*
 * Events per 1 s window from an origin, estimated from the files' chunk index (each chunk's
 * events spread evenly over its issue range, in integers: every rank plans the same slices).
 */
#define SPLIT_LOAD_MAX_WINDOWS (1u << 22) /* longer traces are planned by time */
/*
 * Windows split_load_add may visit in all: a trace's chunks follow each other, so they visit
 * about one window each plus the windows of the trace. Past this the chunks overlap as no
 * recording's do (a 29 KB footer of chunks each claiming 2^22 windows took 9.4 s under
 * mpirun), and the plan is by time.
 */
#define SPLIT_LOAD_WORK_MAX (4ull * SPLIT_LOAD_MAX_WINDOWS)
struct split_load {
	uint64_t origin_ns, nwin;
	uint64_t *events; /* nwin windows; NULL: unknown (plan by time) */
	uint64_t total;
	uint64_t work; /* windows visited by split_load_add (SPLIT_LOAD_WORK_MAX) */
};
/* Windows [origin, end] all empty; 0, or -E2BIG past SPLIT_LOAD_MAX_WINDOWS, or -ENOMEM. */
int split_load_init(struct split_load *l, uint64_t origin_ns, uint64_t end_ns);
/* Adds a chunk of `events` issued over [lo_ns, hi_ns] (times past either end count there). */
void split_load_add(struct split_load *l, uint64_t lo_ns, uint64_t hi_ns, uint64_t events);
void split_load_free(struct split_load *l);

/*
 * The slice bounds of rank of nranks over [origin, end] (issue times), whole 1 s windows: as
 * many events in each as the windows allow when load (NULL: unknown) knows them, else as many
 * windows.
 */
void split_plan(struct an_slice *sl, uint64_t origin_ns, uint64_t end_ns,
		const struct split_load *load);
/* Records s's state as the slice's entry state (after its warm-up). 0 or -ENOMEM. */
int split_entry_capture(struct split_entry *e, const struct stats *s);
void split_entry_free(struct split_entry *e);

/* Packs an unfinished slice analysis (stats__settle() done here) and its counts of events. */
int split_pack(struct stats *s, const struct an_slice *sl, uint64_t events_read,
	       uint64_t events_selected, void **buf, size_t *len);
/*
 * Merges the next slice's packed buffer into dst (the slices before it, unfinished), adding
 * its event counts to *events_read, *events_selected. Returns 0, 1 when the result would not
 * be exact (why says what, in a few words), or -errno (why set too).
 */
int split_merge(struct stats *dst, const void *buf, size_t len, uint64_t *events_read,
		uint64_t *events_selected, char *why, size_t whylen);
/* After the last merge: 0, or 1 when the working set's sampling would differ (why set). */
int split_check(const struct stats *dst, char *why, size_t whylen);

#endif
