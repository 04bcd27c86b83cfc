// SPDX-License-Identifier: GPL-2.0-only
/* Recorder core: conversion, batching, bounded queue, writer thread. No BPF here. */
#include "rec_core.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_BATCH_EVENTS 4096
#define DEFAULT_QUEUE_BATCHES 64

struct batch {
	struct batch *next;
	uint32_t n;
	bool has_wm;
	uint64_t wm;
	struct biotape_rq_event ev[]; /* batch_events */
};

struct rec_core {
	struct rec_sink sink;
	uint32_t batch_events;
	uint32_t ndevices;
	pthread_t thread;
	bool thread_started;

	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct batch *free_list;           /* lock */
	struct batch *q_head, *q_tail;     /* lock: full batches for the writer */
	bool done;                         /* lock: no more batches */

	struct batch *cur; /* consumer only: the batch being filled */
	struct batch **all;
	uint32_t nall;

	_Atomic uint64_t pushed, written, dropped_writer, bad_records, sink_bytes;
	_Atomic uint64_t count_by_op[BTAPE_OP__COUNT];
	_Atomic int sink_err;
};

static int writer_add(void *ctx, const struct btape_event *ev)
{
	return btape_writer__add(ctx, ev);
}

static int writer_advance(void *ctx, uint64_t wm)
{
	return btape_writer__advance(ctx, wm);
}

static uint64_t writer_bytes(void *ctx)
{
	return btape_writer__bytes(ctx);
}

void rec_sink_writer(struct rec_sink *s, struct btape_writer *w)
{
	s->add = writer_add;
	s->advance = writer_advance;
	s->bytes = writer_bytes;
	s->ctx = w;
}

int rec_blk_status_errno(unsigned int status)
{
	/* BLK_STS_* of Linux 6.x; mirrors blk_errors[] in block/blk-core.c. */
	static const int map[] = {
		[0] = 0,	     [1] = -EOPNOTSUPP, [2] = -ETIMEDOUT, [3] = -ENOSPC,
		[4] = -ENOLINK,	     [5] = -EREMOTEIO,	[6] = -EBADE,	  [7] = -ENODATA,
		[8] = -EILSEQ,	     [9] = -ENOMEM,	[10] = -EIO,	  [11] = -EREMCHG,
		[12] = -EAGAIN,	     [13] = -EBUSY,	[14] = -ETOOMANYREFS,
		[15] = -EOVERFLOW,   [16] = -ENODEV,	[17] = -ETIME,	  [18] = -EIO,
		[19] = -EINVAL,
	};

	if (status < sizeof(map) / sizeof(map[0]))
		return map[status];
	return -EIO;
}

static uint8_t conv_op(uint8_t op)
{
	static const uint8_t map[] = {
		[BIOTAPE_RQ_OP_READ] = BTAPE_OP_READ,
		[BIOTAPE_RQ_OP_WRITE] = BTAPE_OP_WRITE,
		[BIOTAPE_RQ_OP_FLUSH] = BTAPE_OP_FLUSH,
		[BIOTAPE_RQ_OP_DISCARD] = BTAPE_OP_DISCARD,
		[BIOTAPE_RQ_OP_SECURE_ERASE] = BTAPE_OP_SECURE_ERASE,
		[BIOTAPE_RQ_OP_WRITE_ZEROES] = BTAPE_OP_WRITE_ZEROES,
		[BIOTAPE_RQ_OP_ZONE_OPEN] = BTAPE_OP_ZONE_OPEN,
		[BIOTAPE_RQ_OP_ZONE_CLOSE] = BTAPE_OP_ZONE_CLOSE,
		[BIOTAPE_RQ_OP_ZONE_FINISH] = BTAPE_OP_ZONE_FINISH,
		[BIOTAPE_RQ_OP_ZONE_APPEND] = BTAPE_OP_ZONE_APPEND,
		[BIOTAPE_RQ_OP_ZONE_RESET] = BTAPE_OP_ZONE_RESET,
		[BIOTAPE_RQ_OP_ZONE_RESET_ALL] = BTAPE_OP_ZONE_RESET_ALL,
		[BIOTAPE_RQ_OP_OTHER] = BTAPE_OP_OTHER,
	};

	return op < sizeof(map) / sizeof(map[0]) ? map[op] : BTAPE_OP_OTHER;
}

static uint32_t conv_flags(uint16_t f)
{
	static const struct {
		uint16_t from;
		uint32_t to;
	} map[] = {
		{ BIOTAPE_RQF_SYNC, BTAPE_FLAG_SYNC },
		{ BIOTAPE_RQF_FUA, BTAPE_FLAG_FUA },
		{ BIOTAPE_RQF_PREFLUSH, BTAPE_FLAG_PREFLUSH },
		{ BIOTAPE_RQF_META, BTAPE_FLAG_META },
		{ BIOTAPE_RQF_READAHEAD, BTAPE_FLAG_READAHEAD },
		{ BIOTAPE_RQF_ATOMIC, BTAPE_FLAG_ATOMIC },
		{ BIOTAPE_RQF_PRIO, BTAPE_FLAG_PRIO },
		{ BIOTAPE_RQF_NOMERGE, BTAPE_FLAG_NOMERGE },
		{ BIOTAPE_RQF_IDLE, BTAPE_FLAG_IDLE },
		{ BIOTAPE_RQF_REQUEUED, BTAPE_FLAG_REQUEUED },
	};
	uint32_t out = 0;

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		if (f & map[i].from)
			out |= map[i].to;
	}
	return out;
}

int rec_event_convert(const struct biotape_rq_event *in, struct btape_event *out,
		      char comm_buf[BIOTAPE_COMM_LEN + 1], uint32_t ndevices)
{
	if (in->dev_idx >= ndevices)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->issue_ns = in->issue_ns;
	out->sector = in->sector;
	out->bytes = in->bytes;
	out->dev = in->dev_idx;
	out->op = conv_op(in->op);
	out->flags = conv_flags(in->flags);
	out->present = BTAPE_HAS_FLAGS | BTAPE_HAS_ERROR | BTAPE_HAS_CPU | BTAPE_HAS_QD;
	out->error = rec_blk_status_errno(in->status);
	out->cpu = in->cpu;
	out->qd = in->qd;
	if (in->complete_ns >= in->issue_ns && in->complete_ns) {
		out->complete_ns = in->complete_ns;
		out->present |= BTAPE_HAS_COMPLETE;
	}
	if ((in->attr & BIOTAPE_ATTR_INSERT) && in->insert_ns && in->insert_ns <= in->issue_ns) {
		out->insert_ns = in->insert_ns;
		out->present |= BTAPE_HAS_INSERT;
	}
	if (in->attr & BIOTAPE_ATTR_TASK) {
		memcpy(comm_buf, in->comm, BIOTAPE_COMM_LEN);
		comm_buf[BIOTAPE_COMM_LEN] = '\0';
		out->pid = in->pid;
		out->tid = in->tid;
		out->cgroup = in->cgroup;
		out->comm = comm_buf;
		out->present |= BTAPE_HAS_PID | BTAPE_HAS_TID | BTAPE_HAS_COMM | BTAPE_HAS_CGROUP;
		/* the thread's wake before it submitted (so at or before the issue) */
		if ((in->attr & BIOTAPE_ATTR_WAKE) && in->wake_ns && in->wake_ns <= in->issue_ns &&
		    in->slept_ns <= in->wake_ns) {
			out->wake_ns = in->wake_ns;
			out->slept_ns = in->slept_ns;
			out->present |= BTAPE_HAS_WAKE;
		}
	}
	return 0;
}

static void write_batch(struct rec_core *c, struct batch *b)
{
	struct btape_event ev;
	char comm[BIOTAPE_COMM_LEN + 1];
	uint64_t written = 0, bad = 0, dropped = 0;
	uint64_t by_op[BTAPE_OP__COUNT] = { 0 };
	int err = atomic_load(&c->sink_err);

	for (uint32_t i = 0; i < b->n; i++) {
		if (err) {
			dropped += b->n - i;
			break;
		}
		if (rec_event_convert(&b->ev[i], &ev, comm, c->ndevices)) {
			bad++;
			continue;
		}
		err = c->sink.add(c->sink.ctx, &ev);
		if (err) {
			dropped += b->n - i;
			break;
		}
		written++;
		by_op[ev.op]++;
	}
	if (!err && b->has_wm)
		err = c->sink.advance(c->sink.ctx, b->wm);
	if (err) {
		int zero = 0;

		atomic_compare_exchange_strong(&c->sink_err, &zero, err);
	}
	atomic_fetch_add(&c->written, written);
	atomic_fetch_add(&c->bad_records, bad);
	atomic_fetch_add(&c->dropped_writer, dropped);
	for (int i = 0; i < BTAPE_OP__COUNT; i++) {
		if (by_op[i])
			atomic_fetch_add(&c->count_by_op[i], by_op[i]);
	}
	if (c->sink.bytes)
		atomic_store(&c->sink_bytes, c->sink.bytes(c->sink.ctx));
}

static void *writer_main(void *arg)
{
	struct rec_core *c = arg;
	struct batch *b;

	for (;;) {
		pthread_mutex_lock(&c->lock);
		while (!c->q_head && !c->done)
			pthread_cond_wait(&c->cond, &c->lock);
		b = c->q_head;
		if (b) {
			c->q_head = b->next;
			if (!c->q_head)
				c->q_tail = NULL;
		}
		pthread_mutex_unlock(&c->lock);
		if (!b)
			break; /* done and drained */
		write_batch(c, b);
		b->n = 0;
		b->has_wm = false;
		pthread_mutex_lock(&c->lock);
		b->next = c->free_list;
		c->free_list = b;
		pthread_mutex_unlock(&c->lock);
	}
	return NULL;
}

int rec_core__new(struct rec_core **cp, const struct rec_sink *sink,
		  const struct rec_core_opts *opts)
{
	struct rec_core *c;
	uint32_t nq;
	int err;

	*cp = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->sink = *sink;
	c->batch_events = opts && opts->batch_events ? opts->batch_events : DEFAULT_BATCH_EVENTS;
	nq = opts && opts->queue_batches ? opts->queue_batches : DEFAULT_QUEUE_BATCHES;
	c->ndevices = opts ? opts->ndevices : 0;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	c->all = calloc(nq, sizeof(*c->all));
	if (!c->all) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (uint32_t i = 0; i < nq; i++) {
		struct batch *b = calloc(1, sizeof(*b) + (size_t)c->batch_events *
							 sizeof(struct biotape_rq_event));

		if (!b) {
			err = -ENOMEM;
			goto cleanup;
		}
		c->all[c->nall++] = b;
		b->next = c->free_list;
		c->free_list = b;
	}
	err = -pthread_create(&c->thread, NULL, writer_main, c);
	if (err)
		goto cleanup;
	c->thread_started = true;
	pthread_setname_np(c->thread, "bt-writer"); /* per-thread CPU: bench/cluster/record_overhead.sh */
	*cp = c;
	return 0;
cleanup:
	rec_core__free(c);
	return err;
}

/* Appends B to the writer queue. Caller holds the lock. */
static void enqueue_locked(struct rec_core *c, struct batch *b)
{
	b->next = NULL;
	if (c->q_tail)
		c->q_tail->next = b;
	else
		c->q_head = b;
	c->q_tail = b;
	pthread_cond_signal(&c->cond);
}

int rec_core__push(struct rec_core *c, const struct biotape_rq_event *ev)
{
	atomic_fetch_add_explicit(&c->pushed, 1, memory_order_relaxed);
	if (!c->cur) {
		pthread_mutex_lock(&c->lock);
		c->cur = c->free_list;
		if (c->cur)
			c->free_list = c->cur->next;
		pthread_mutex_unlock(&c->lock);
		if (!c->cur) {
			/* The writer is behind and the pool is exhausted: drop, never wait. */
			atomic_fetch_add_explicit(&c->dropped_writer, 1, memory_order_relaxed);
			return -ENOBUFS;
		}
		c->cur->n = 0;
		c->cur->has_wm = false;
	}
	c->cur->ev[c->cur->n++] = *ev;
	if (c->cur->n == c->batch_events) {
		pthread_mutex_lock(&c->lock);
		enqueue_locked(c, c->cur);
		pthread_mutex_unlock(&c->lock);
		c->cur = NULL;
	}
	return 0;
}

void rec_core__mark(struct rec_core *c, uint64_t wm)
{
	pthread_mutex_lock(&c->lock);
	if (!c->cur && c->q_tail) {
		/* Not yet taken by the writer: everything pushed so far is in or before it. */
		c->q_tail->has_wm = true;
		c->q_tail->wm = wm;
	} else {
		if (!c->cur) {
			c->cur = c->free_list;
			if (c->cur) {
				c->free_list = c->cur->next;
				c->cur->n = 0;
			}
		}
		if (c->cur) {
			c->cur->has_wm = true;
			c->cur->wm = wm;
			enqueue_locked(c, c->cur);
			c->cur = NULL;
		}
	}
	pthread_mutex_unlock(&c->lock);
}

static void stop_thread(struct rec_core *c)
{
	pthread_mutex_lock(&c->lock);
	if (c->cur) {
		enqueue_locked(c, c->cur);
		c->cur = NULL;
	}
	c->done = true;
	pthread_cond_signal(&c->cond);
	pthread_mutex_unlock(&c->lock);
	if (c->thread_started) {
		pthread_join(c->thread, NULL);
		c->thread_started = false;
	}
}

int rec_core__finish(struct rec_core *c)
{
	stop_thread(c);
	return atomic_load(&c->sink_err);
}

void rec_core__stats(struct rec_core *c, struct rec_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->pushed = atomic_load(&c->pushed);
	s->written = atomic_load(&c->written);
	s->dropped_writer = atomic_load(&c->dropped_writer);
	s->bad_records = atomic_load(&c->bad_records);
	s->sink_bytes = atomic_load(&c->sink_bytes);
	for (int i = 0; i < BTAPE_OP__COUNT; i++)
		s->count_by_op[i] = atomic_load(&c->count_by_op[i]);
	s->sink_err = atomic_load(&c->sink_err);
}

void rec_core__free(struct rec_core *c)
{
	if (!c)
		return;
	stop_thread(c);
	for (uint32_t i = 0; i < c->nall; i++)
		free(c->all[i]);
	free(c->all);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->cond);
	free(c);
}
