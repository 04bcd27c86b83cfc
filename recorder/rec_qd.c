// SPDX-License-Identifier: GPL-2.0-only
/*
 * Queue depth at issue from issue and completion times (see rec_qd.h), with the analyzer's
 * in-flight array (common/inflight.h): the same rule the analyzer applies to a trace without
 * recorded depths.
 */
#include "rec_qd.h"
#include "inflight.h"

#include <errno.h>
#include <stdlib.h>

#define QD_MAX_DEV (1u << 20) /* beyond any device table */

struct rec_qd {
	struct btape_inflight *dev;
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
		inflight_free(&q->dev[i]);
	free(q->dev);
	free(q);
}

static struct btape_inflight *dev_inflight(struct rec_qd *q, uint32_t dev)
{
	if (dev >= QD_MAX_DEV)
		return NULL;
	if (dev >= q->ndev) {
		uint32_t n = dev + 1 > 2 * q->ndev ? dev + 1 : 2 * q->ndev;
		struct btape_inflight *d = realloc(q->dev, sizeof(*d) * n);

		if (!d)
			return NULL;
		for (uint32_t i = q->ndev; i < n; i++)
			d[i] = (struct btape_inflight){0};
		q->dev = d;
		q->ndev = n;
	}
	return &q->dev[dev];
}

void rec_qd__fill(void *ctx, struct btape_event *ev)
{
	struct btape_inflight *h = dev_inflight(ctx, ev->dev);

	if (!h) { /* no such device (or no memory): the event goes without a queue depth */
		ev->present &= ~BTAPE_HAS_QD;
		return;
	}
	inflight_expire(h, ev->issue_ns); /* completed at or before this issue */
	ev->qd = inflight_count(h) + 1;
	ev->present |= BTAPE_HAS_QD;
	/*
	 * A request without a completion time (orphan, still open at the end) is not counted for
	 * later ones: when it ended is unknown. Past BTAPE_INFLIGHT_MAX in flight (or without
	 * memory) a request is not kept either.
	 */
	if ((ev->present & BTAPE_HAS_COMPLETE) && ev->complete_ns > ev->issue_ns)
		inflight_push(h, ev->complete_ns);
}
