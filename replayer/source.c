// SPDX-License-Identifier: GPL-2.0-only
#include "source.h"

#include "btape.h"
#include "thread.h"
#include "u64heap.h"

#include <errno.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- array ---- */

static int array_next(struct rp_source *s, const struct btape_event **evs)
{
	struct rp_array_source *a = (struct rp_array_source *)s;
	size_t n = a->n - a->pos;

	if (n > a->batch)
		n = a->batch;
	*evs = a->evs + a->pos;
	a->pos += n;
	return (int)n;
}

static int array_rewind(struct rp_source *s)
{
	((struct rp_array_source *)s)->pos = 0;
	return 0;
}

void rp_array_source_init(struct rp_array_source *a, const struct btape_event *evs, size_t n,
			  size_t batch)
{
	a->src.next_batch = array_next;
	a->src.rewind = array_rewind;
	a->evs = evs;
	a->n = n;
	a->pos = 0;
	a->batch = batch ? batch : 1;
}

/* ---- prefetching file source ---- */


struct block {
	struct btape_event *evs;
	size_t n;
	int status; /* 0 data, 1 end, -errno */
};

struct rp_prefetch {
	struct rp_source src;
	struct btape_reader *r;
	char errmsg[512];
	size_t block_events;
	unsigned int nblocks;
	struct block *blocks;
	/* ring of filled blocks: [head, head+count) */
	unsigned int head, count;
	int consumer_holds; /* index of the block handed out, or -1 */
	bool stop, running, ended;
	bool loop_ahead; /* after the end, the decoder goes on with the next pass */
	unsigned int pass; /* passes the decoder started after the first */
	void (*hook)(void *ctx, const struct btape_event *evs, size_t n); /* first pass */
	void *hook_ctx;
	int start_err;   /* the decoder thread could not be started */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cv;
};

/* Waits for a block that is neither filled nor handed out; returns its index or -1 on stop. */
static int acquire_block(struct rp_prefetch *p)
{
	int idx = -1;

	pthread_mutex_lock(&p->lock);
	while (!p->stop && p->count >= p->nblocks) /* count includes the block handed out */
		pthread_cond_wait(&p->cv, &p->lock);
	if (!p->stop)
		idx = (int)((p->head + p->count) % p->nblocks);
	pthread_mutex_unlock(&p->lock);
	return idx;
}

static void publish_block(struct rp_prefetch *p)
{
	pthread_mutex_lock(&p->lock);
	p->count++;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->lock);
}

static void *prefetch_thread(void *arg)
{
	struct rp_prefetch *p = arg;
	const struct btape_event *evs = NULL;
	size_t have = 0, off = 0;
	int status = 0; /* 1 end, -errno error */
	struct sched_param sp = { .sched_priority = 0 };

	/*
	 * SCHED_BATCH: a fair share of the CPU (so it keeps up with an afap replay on a busy
	 * machine) but no wakeup preemption of the issuing thread. (glibc's attr refuses it.)
	 */
	pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);

	for (;;) {
		int idx = acquire_block(p);
		struct block *b;

		if (idx < 0)
			break;
		b = &p->blocks[idx];
		b->n = 0;
		while (b->n < p->block_events) {
			size_t take;

			if (off == have) {
				int n;

				if (status)
					break;
				n = btape_reader__next_batch(p->r, &evs);
				if (n <= 0) {
					status = n ? n : 1;
					if (n < 0)
						snprintf(p->errmsg, sizeof(p->errmsg), "%s",
							 btape_reader__errmsg(p->r));
					break;
				}
				have = (size_t)n;
				off = 0;
				if (p->hook && !p->pass)
					p->hook(p->hook_ctx, evs, have);
			}
			take = p->block_events - b->n;
			if (take > have - off)
				take = have - off;
			memcpy(b->evs + b->n, evs + off, take * sizeof(*evs));
			b->n += take;
			off += take;
		}
		b->status = b->n ? 0 : status;
		publish_block(p);
		if (b->n)
			continue;
		if (status < 0 || !p->loop_ahead)
			break;
		/* the end of a pass: decode the next one ahead, so a loop never waits */
		if (btape_reader__seek(p->r, 0) < 0) {
			snprintf(p->errmsg, sizeof(p->errmsg), "%s", btape_reader__errmsg(p->r));
			idx = acquire_block(p);
			if (idx < 0)
				break;
			p->blocks[idx].n = 0;
			p->blocks[idx].status = -EIO;
			publish_block(p);
			break;
		}
		p->pass++;
		status = 0;
		have = off = 0;
	}
	return NULL;
}

static int start_thread(struct rp_prefetch *p)
{
	int err;

	p->head = 0;
	p->count = 0;
	p->consumer_holds = -1;
	p->stop = false;
	p->ended = false;
	p->errmsg[0] = '\0';
	pthread_attr_t attr;
	struct sched_param sp = {.sched_priority = 0};

	/* never real-time, even when the issuing thread is (SCHED_BATCH is set by the thread) */
	pthread_attr_init(&attr);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_OTHER);
	pthread_attr_setschedparam(&attr, &sp);
	err = -rp_thread_create(&p->thread, &attr, prefetch_thread, p);
	pthread_attr_destroy(&attr);
	p->running = err == 0;
	if (err)
		snprintf(p->errmsg, sizeof(p->errmsg), "cannot start the decoder thread: %s",
			 strerror(-err));
	p->start_err = err;
	return err;
}

static void stop_thread(struct rp_prefetch *p)
{
	if (!p->running)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	p->running = false;
}

static int prefetch_next(struct rp_source *s, const struct btape_event **evs)
{
	struct rp_prefetch *p = (struct rp_prefetch *)s;
	struct block *b;
	int ret;

	if (p->ended)
		return 0;
	if (!p->running)
		return p->start_err ? p->start_err : -ECHILD;
	pthread_mutex_lock(&p->lock);
	if (p->consumer_holds >= 0) {
		/* give back the block handed out last time */
		p->head = (p->head + 1) % p->nblocks;
		p->count--;
		p->consumer_holds = -1;
		pthread_cond_broadcast(&p->cv);
	}
	while (!p->count)
		pthread_cond_wait(&p->cv, &p->lock);
	b = &p->blocks[p->head];
	if (b->status) {
		ret = b->status > 0 ? 0 : b->status;
		p->ended = true;
		if (b->status > 0 && p->loop_ahead) {
			/* consume the end marker: the next pass follows it */
			p->head = (p->head + 1) % p->nblocks;
			p->count--;
			pthread_cond_broadcast(&p->cv);
		}
	} else {
		p->consumer_holds = (int)p->head;
		*evs = b->evs;
		ret = (int)b->n;
	}
	pthread_mutex_unlock(&p->lock);
	return ret;
}

static int prefetch_rewind(struct rp_source *s)
{
	struct rp_prefetch *p = (struct rp_prefetch *)s;
	int err;

	if (p->ended && p->loop_ahead && !p->errmsg[0]) {
		p->ended = false; /* the decoder is already into the next pass */
		return 0;
	}
	stop_thread(p);
	p->pass++;
	err = btape_reader__seek(p->r, 0);
	if (err < 0) {
		snprintf(p->errmsg, sizeof(p->errmsg), "%s", btape_reader__errmsg(p->r));
		return err;
	}
	return start_thread(p);
}

int rp_prefetch__open(struct rp_prefetch **pp, const char *path, size_t block_events,
		      unsigned int queue_blocks, char *errmsg, size_t errlen)
{
	struct rp_prefetch *p = calloc(1, sizeof(*p));
	int err;

	if (!errmsg)
		errlen = 0;
	if (!p) {
		snprintf(errmsg, errlen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	p->src.next_batch = prefetch_next;
	p->src.rewind = prefetch_rewind;
	p->block_events = block_events ? block_events : 8192;
	p->nblocks = queue_blocks >= 2 ? queue_blocks : 2;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->consumer_holds = -1;
	err = btape_reader__open(&p->r, path, errmsg, errlen);
	if (err < 0)
		goto cleanup;
	p->blocks = calloc(p->nblocks, sizeof(*p->blocks));
	if (!p->blocks) {
		err = -ENOMEM;
		snprintf(errmsg, errlen, "%s", strerror(ENOMEM));
		goto cleanup;
	}
	for (unsigned int i = 0; i < p->nblocks; i++) {
		p->blocks[i].evs = malloc(p->block_events * sizeof(struct btape_event));
		if (!p->blocks[i].evs) {
			err = -ENOMEM;
			snprintf(errmsg, errlen, "%s", strerror(ENOMEM));
			goto cleanup;
		}
	}
	*pp = p;
	return 0;
cleanup:
	rp_prefetch__close(p);
	return err;
}

struct rp_source *rp_prefetch__source(struct rp_prefetch *p)
{
	/* the thread starts lazily so that __summary() can scan first */
	if (!p->running && !p->ended)
		start_thread(p);
	return &p->src;
}

void rp_prefetch__set_first_pass_hook(struct rp_prefetch *p,
				      void (*fn)(void *ctx, const struct btape_event *evs,
						 size_t n),
				      void *ctx)
{
	p->hook = fn;
	p->hook_ctx = ctx;
}

void rp_prefetch__stop(struct rp_prefetch *p)
{
	stop_thread(p);
	p->ended = true;
}

void rp_prefetch__set_loop_ahead(struct rp_prefetch *p, bool on)
{
	p->loop_ahead = on;
}

int rp_prefetch__fill(struct rp_prefetch *p)
{
	pthread_mutex_lock(&p->lock);
	while (p->running && p->count < p->nblocks) {
		unsigned int last = (p->head + p->count + p->nblocks - 1) % p->nblocks;

		if (p->count && p->blocks[last].status && !p->loop_ahead)
			break; /* the whole trace is in */
		if (p->count && p->blocks[last].status < 0)
			break;
		pthread_cond_wait(&p->cv, &p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return 0;
}

const struct btape_meta *rp_prefetch__meta(const struct rp_prefetch *p)
{
	return btape_reader__meta(p->r);
}

int rp_prefetch__summary(struct rp_prefetch *p, struct btape_summary *s)
{
	/*
	 * Then what `biotape info` checks: every frame's checksums and events, and the footer
	 * against them. A damaged trace is refused here, before the first I/O. It costs a decode
	 * of the whole trace, once (about 20 ns an event, docs/REPLAY.md), and nothing more when
	 * there is no footer: the summary's scan did it.
	 */
	int err = btape_reader__summary(p->r, s);

	if (!err)
		err = btape_reader__verify(p->r);
	if (err < 0)
		snprintf(p->errmsg, sizeof(p->errmsg), "%s%s",
			 err == -EBADMSG ? "damaged trace: " : "", btape_reader__errmsg(p->r));
	return err;
}

const char *rp_prefetch__errmsg(const struct rp_prefetch *p)
{
	return p->errmsg[0] ? p->errmsg : NULL;
}

void rp_prefetch__close(struct rp_prefetch *p)
{
	if (!p)
		return;
	stop_thread(p);
	if (p->blocks) {
		for (unsigned int i = 0; i < p->nblocks; i++)
			free(p->blocks[i].evs);
		free(p->blocks);
	}
	btape_reader__close(p->r);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cv);
	free(p);
}

/* Pops what completed by t, pushes an I/O done at `done` (while under cap); the count after. */
static unsigned int inflight_at(uint64_t *heap, unsigned int *nh, unsigned int cap, uint64_t t,
				uint64_t done)
{
	while (*nh && heap[0] <= t)
		u64heap_pop(heap, nh);
	if (*nh < cap)
		u64heap_push(heap, nh, done);
	return *nh;
}

int rp_trace_scan(const char *path, uint64_t over, unsigned int cap, bool all,
		  struct rp_trace_scan *out, char *errmsg, size_t errlen)
{
	struct btape_reader *r = NULL;
	const struct btape_event *evs;
	uint64_t *any = NULL;
	unsigned int nany = 0;
	int n, err;

	memset(out, 0, sizeof(*out));
	if (all && cap && !(any = malloc(cap * sizeof(*any)))) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = btape_reader__open(&r, path, errmsg, errlen);
	if (err < 0)
		goto cleanup;
	btape_reader__skip_fields(r, BTAPE_HAS__ALL & ~BTAPE_HAS_COMPLETE);
	while ((n = btape_reader__next_batch(r, &evs)) > 0) {
		for (int i = 0; i < n; i++) {
			const struct btape_event *ev = &evs[i];
			bool timed = (ev->present & BTAPE_HAS_COMPLETE) &&
				     ev->complete_ns > ev->issue_ns;
			uint64_t done = timed ? ev->complete_ns : ev->issue_ns + 1;
			unsigned int k;

			if (all) {
				out->ios++;
				out->timed += timed;
				k = inflight_at(any, &nany, cap, ev->issue_ns, done);
				if (k > out->max_inflight)
					out->max_inflight = k;
			}
			if ((ev->op != BTAPE_OP_READ && ev->op != BTAPE_OP_WRITE) ||
			    ev->bytes <= over)
				continue;
			out->big++;
			if (ev->bytes > out->big_max_bytes)
				out->big_max_bytes = ev->bytes;
		}
	}
	err = n < 0 ? n : 0;
	if (err && errmsg)
		snprintf(errmsg, errlen, "%s", btape_reader__errmsg(r));
cleanup:
	btape_reader__close(r);
	free(any);
	return err;
}
