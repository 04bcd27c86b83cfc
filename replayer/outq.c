// SPDX-License-Identifier: GPL-2.0-only
#include "outq.h"

#include "btape.h"
#include "thread.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define WAKE_BATCH 1024 /* wake the writer thread once this many entries wait */

struct entry {
	struct btape_event ev;
	bool watermark;
};

struct rp_outq {
	struct btape_writer *w;
	struct entry *ring;
	size_t cap, head, count;
	bool done;
	int err;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t has_work, has_room;
};

static void *writer_thread(void *arg)
{
	struct rp_outq *q = arg;
	struct entry e;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		while (!q->count && !q->done)
			pthread_cond_wait(&q->has_work, &q->lock);
		if (!q->count && q->done)
			break;
		e = q->ring[q->head];
		q->head = (q->head + 1) % q->cap;
		q->count--;
		pthread_cond_signal(&q->has_room);
		pthread_mutex_unlock(&q->lock);
		if (!q->err) {
			int err = e.watermark ? btape_writer__advance(q->w, e.ev.issue_ns)
					      : btape_writer__add(q->w, &e.ev);

			if (err < 0)
				q->err = err;
		}
		pthread_mutex_lock(&q->lock);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

int rp_outq__start(struct rp_outq **qp, struct btape_writer *w, size_t capacity)
{
	struct rp_outq *q = calloc(1, sizeof(*q));
	int err;

	if (!q)
		return -ENOMEM;
	q->w = w;
	q->cap = capacity > WAKE_BATCH ? capacity : WAKE_BATCH * 2;
	q->ring = malloc(q->cap * sizeof(*q->ring));
	if (!q->ring) {
		free(q);
		return -ENOMEM;
	}
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->has_work, NULL);
	pthread_cond_init(&q->has_room, NULL);
	err = -rp_thread_create(&q->thread, NULL, writer_thread, q);
	if (err) {
		pthread_mutex_destroy(&q->lock);
		pthread_cond_destroy(&q->has_work);
		pthread_cond_destroy(&q->has_room);
		free(q->ring);
		free(q);
		return err;
	}
	*qp = q;
	return 0;
}

static void push(struct rp_outq *q, const struct btape_event *ev, bool watermark)
{
	pthread_mutex_lock(&q->lock);
	while (q->count == q->cap)
		pthread_cond_wait(&q->has_room, &q->lock);
	q->ring[(q->head + q->count) % q->cap] = (struct entry){.ev = *ev, .watermark = watermark};
	q->count++;
	if (q->count >= WAKE_BATCH || q->count == q->cap)
		pthread_cond_signal(&q->has_work);
	pthread_mutex_unlock(&q->lock);
}

void rp_outq__push(struct rp_outq *q, const struct btape_event *ev)
{
	push(q, ev, false);
}

void rp_outq__watermark(struct rp_outq *q, uint64_t watermark_ns)
{
	struct btape_event ev = {.issue_ns = watermark_ns};

	push(q, &ev, true);
}

int rp_outq__finish(struct rp_outq *q)
{
	int err;

	if (!q)
		return 0;
	pthread_mutex_lock(&q->lock);
	q->done = true;
	pthread_cond_signal(&q->has_work);
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->thread, NULL);
	err = q->err;
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->has_work);
	pthread_cond_destroy(&q->has_room);
	free(q->ring);
	free(q);
	return err;
}
