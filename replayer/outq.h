/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The result trace is written by its own thread: the issuing thread only copies each event
 * into a bounded queue (and waits if it is full: an event is never dropped), so compressing
 * a chunk never delays an I/O.
 */
#ifndef RP_OUTQ_H
#define RP_OUTQ_H

#include <stddef.h>
#include <stdint.h>

struct btape_event;
struct btape_writer;
struct rp_outq;

/* Starts the thread feeding w (not owned) through a queue of capacity events. */
int rp_outq__start(struct rp_outq **qp, struct btape_writer *w, size_t capacity);
void rp_outq__push(struct rp_outq *q, const struct btape_event *ev);
/* Forwards btape_writer__advance(watermark_ns) in order with the events. */
void rp_outq__watermark(struct rp_outq *q, uint64_t watermark_ns);
/* Drains the queue and stops the thread: 0, or the writer's first -errno. Frees q. */
int rp_outq__finish(struct rp_outq *q);

#endif
