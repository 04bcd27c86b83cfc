/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The recorder's BPF-free core: ring record -> btape_event conversion, batching, a bounded
 * queue to a writer thread, and the watermark that keeps the file in issue order.
 *
 * Threading: rec_core__push/__mark/__finish are called by ONE consumer thread and never block
 * on the sink (a full queue drops records and counts them); the sink is called only from the
 * core's writer thread until rec_core__finish() returns.
 */
#ifndef BIOTAPE_REC_CORE_H
#define BIOTAPE_REC_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "biotape.h"
#include "btape.h"

/* Where converted events go: the btape writer in production, a fake in tests. */
struct rec_sink {
	int (*add)(void *ctx, const struct btape_event *ev);
	int (*advance)(void *ctx, uint64_t watermark_ns);
	uint64_t (*bytes)(void *ctx); /* bytes written so far (may be NULL) */
	void *ctx;
};

/* The btape writer as a sink. */
void rec_sink_writer(struct rec_sink *s, struct btape_writer *w);

struct rec_core_opts {
	uint32_t batch_events;  /* records per batch; 0: default (4096) */
	uint32_t queue_batches; /* batches in the pool (bounds memory); 0: default (64) */
	uint32_t ndevices;      /* device table size: records with dev_idx >= this are dropped */
};

struct rec_stats {
	uint64_t pushed;         /* records handed to __push */
	uint64_t written;        /* events accepted by the sink */
	uint64_t dropped_writer; /* records dropped: queue full, or after a sink error */
	uint64_t bad_records;    /* records that could not be converted (bad device index) */
	uint64_t sink_bytes;     /* sink->bytes() after the last batch */
	uint64_t count_by_op[BTAPE_OP__COUNT];
	int sink_err;            /* first sink error (negative errno) or 0 */
};

struct rec_core;

/* Starts the writer thread. */
int rec_core__new(struct rec_core **cp, const struct rec_sink *sink,
		  const struct rec_core_opts *opts);
/* Queues one record (copied). Never blocks. Returns 0, or -ENOBUFS when it was dropped. */
int rec_core__push(struct rec_core *c, const struct biotape_rq_event *ev);
/* Promise: no record pushed from now on has issue_ns < watermark_ns. Hands the batch over. */
void rec_core__mark(struct rec_core *c, uint64_t watermark_ns);
/* Hands over the rest, waits for the writer thread to write everything; returns sink_err. */
int rec_core__finish(struct rec_core *c);
/* A consistent-enough snapshot (counters are read without stopping the writer). */
void rec_core__stats(struct rec_core *c, struct rec_stats *s);
/* Stops the writer thread if running and frees; NULL-safe. */
void rec_core__free(struct rec_core *c);

/* Converts a ring record. comm_buf (17 bytes) holds the NUL-terminated name ev->comm points at. */
int rec_event_convert(const struct biotape_rq_event *in, struct btape_event *out,
		      char comm_buf[BIOTAPE_COMM_LEN + 1], uint32_t ndevices);
/* blk_status_t (as in the running kernel's include/linux/blk_types.h) -> -errno. */
int rec_blk_status_errno(unsigned int status);

#endif
