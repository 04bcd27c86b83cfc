/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Event sources for the scheduler: batches of events in issue order, rewindable (loops, sweep
 * steps). The file source prefetches: a reader thread decodes chunks into a bounded queue, so
 * memory stays flat whatever the trace length.
 */
#ifndef RP_SOURCE_H
#define RP_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct btape_event;
struct btape_meta;
struct btape_summary;

struct rp_source {
	/* Points *evs at the next batch (valid until the next call): count, 0 at the end, -errno.
	 */
	int (*next_batch)(struct rp_source *s, const struct btape_event **evs);
	/* Restarts from the first event: 0 or -errno. */
	int (*rewind)(struct rp_source *s);
};

/* An in-memory source over n events (tests), handed out batch events at a time. */
struct rp_array_source {
	struct rp_source src;
	const struct btape_event *evs;
	size_t n, pos, batch;
};
void rp_array_source_init(struct rp_array_source *a, const struct btape_event *evs, size_t n,
			  size_t batch);

/*
 * What a replay needs to know of a trace before its clock starts, from one pass over it: the
 * reads and writes larger than `over` bytes (those that need a buffer of their own: the
 * replayer's registered ones are `over` bytes), how many and the largest; with `all`, also the
 * most I/Os in flight at once in the recording (--iodepth recorded, the hold). That count stops
 * at cap; an I/O with no completion time counts as done when the next one is issued.
 */
struct rp_trace_scan {
	uint64_t big;
	uint64_t big_max_bytes;
	uint64_t ios, timed;	   /* with all: every I/O, and those with a completion time */
	unsigned int max_inflight; /* with all */
};
/* Reads PATH once for them: 0, or -errno with ERRMSG saying why. */
int rp_trace_scan(const char *path, uint64_t over, unsigned int cap, bool all,
		  struct rp_trace_scan *out, char *errmsg, size_t errlen);

struct rp_prefetch;
/*
 * Opens PATH and starts the decoding thread (queue_blocks blocks of block_events events).
 * On failure ERRMSG (ERRLEN bytes, may be NULL) says why.
 */
int rp_prefetch__open(struct rp_prefetch **pp, const char *path, size_t block_events,
		      unsigned int queue_blocks, char *errmsg, size_t errlen);
struct rp_source *rp_prefetch__source(struct rp_prefetch *p);
/*
 * FN(CTX, EVS, N) sees every batch of the first pass as the decoder thread reads it, in file
 * order, on that thread (later passes: loops, sweep steps, are not shown): what the replay's
 * fidelity section records of the trace, without a read of its own. Set it before the first
 * rp_prefetch__source(); NULL removes it. Read what it collected after rp_prefetch__stop().
 */
void rp_prefetch__set_first_pass_hook(struct rp_prefetch *p,
				      void (*fn)(void *ctx, const struct btape_event *evs,
						 size_t n),
				      void *ctx);
/* Stops the decoder thread (the source ends): the hook is not running after it returns. */
void rp_prefetch__stop(struct rp_prefetch *p);
/* Decode the next pass ahead at the end of each one (for loops and sweeps). */
void rp_prefetch__set_loop_ahead(struct rp_prefetch *p, bool on);
/* Waits until the queue is full (or holds the whole trace): a replay starts with a head start. */
int rp_prefetch__fill(struct rp_prefetch *p);
const struct btape_meta *rp_prefetch__meta(const struct rp_prefetch *p);
/*
 * Footer summary (may scan the whole file when there is no footer; call before reading), and
 * the whole trace verified against it as `biotape info` does (btape_reader__verify): a
 * damaged trace fails here with "damaged trace: ..." and -EBADMSG, before any I/O.
 */
int rp_prefetch__summary(struct rp_prefetch *p, struct btape_summary *s);
/* The reader's message for the last -errno of next_batch/rewind/summary, or NULL. */
const char *rp_prefetch__errmsg(const struct rp_prefetch *p);
void rp_prefetch__close(struct rp_prefetch *p); /* stops the thread; NULL-safe */

#endif
