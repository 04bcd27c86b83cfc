// SPDX-License-Identifier: GPL-2.0-only
/* Queue depth at issue from issue and completion times (see rec_qd.h). */
#include "rec_qd.h"

#include <errno.h>
#include <stdlib.h>

/* The completion times of a device's requests in flight: a binary min-heap. */
struct qd_heap {
	uint64_t *t;
	uint32_t n, cap;
};

struct rec_qd {
	struct qd_heap *dev;
	uint32_t ndev;
};

int rec_qd__new(struct rec_qd **qp)
{
	*qp = calloc(1, sizeof(**qp));
	return *qp ? 0 : -ENOMEM;
}

void rec_qd__free(struct rec_qd *q)
{
	if (!q)
		return;
	for (uint32_t i = 0; i < q->ndev; i++)
		free(q->dev[i].t);
	free(q->dev);
	free(q);
}

static void heap_pop(struct qd_heap *h)
{
	uint64_t x = h->t[--h->n];
	uint32_t i = 0;

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->t[c + 1] < h->t[c])
			c++;
		if (h->t[c] >= x)
			break;
		h->t[i] = h->t[c];
		i = c;
	}
	if (h->n)
		h->t[i] = x;
}

static int heap_push(struct qd_heap *h, uint64_t x)
{
	uint32_t i;

	if (h->n == h->cap) {
		uint32_t cap = h->cap ? h->cap * 2 : 64;
		uint64_t *t = cap > h->cap ? realloc(h->t, sizeof(*t) * cap) : NULL;

		if (!t)
			return -ENOMEM;
		h->t = t;
		h->cap = cap;
	}
	for (i = h->n++; i > 0 && h->t[(i - 1) / 2] > x; i = (i - 1) / 2)
		h->t[i] = h->t[(i - 1) / 2];
	h->t[i] = x;
	return 0;
}

#define QD_MAX_DEV (1u << 20) /* beyond any device table */

static struct qd_heap *dev_heap(struct rec_qd *q, uint32_t dev)
{
	if (dev >= QD_MAX_DEV)
		return NULL;
	if (dev >= q->ndev) {
		uint32_t n = dev + 1 > 2 * q->ndev ? dev + 1 : 2 * q->ndev;
		struct qd_heap *d = realloc(q->dev, sizeof(*d) * n);

		if (!d)
			return NULL;
		for (uint32_t i = q->ndev; i < n; i++)
			d[i] = (struct qd_heap){0};
		q->dev = d;
		q->ndev = n;
	}
	return &q->dev[dev];
}

void rec_qd__fill(void *ctx, struct btape_event *ev)
{
	struct qd_heap *h = dev_heap(ctx, ev->dev);

	if (!h) { /* out of memory (or no such device): the event goes without a queue depth */
		ev->present &= ~BTAPE_HAS_QD;
		return;
	}
	/* completed at or before this issue: no longer in flight */
	while (h->n && h->t[0] <= ev->issue_ns)
		heap_pop(h);
	ev->qd = h->n + 1;
	ev->present |= BTAPE_HAS_QD;
	/* a request without a completion time (orphan, still open at the end) is not counted
	 * for later ones: when it ended is unknown */
	if ((ev->present & BTAPE_HAS_COMPLETE) && ev->complete_ns > ev->issue_ns)
		(void)heap_push(h, ev->complete_ns); /* out of memory: later ones count it not */
}
