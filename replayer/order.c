// SPDX-License-Identifier: GPL-2.0-only
/*
 * Dependency tracking for --order (rules in order.h). A ring of the last `window` events in
 * recorded issue order, each with its recorded times and replayed state; the unfinished ones
 * (held or in flight) are also on an unordered list, which is all that conflict and barrier
 * checks scan: a check costs O(I/Os unfinished), a causal source lookup O(events within the
 * think window + the longest recorded latency).
 */
#include "order.h"

#include "btape.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define CLS_WRITE 1u   /* changes data: write, discard, write zeroes */
#define CLS_BARRIER 2u /* flush, FUA, preflush */
#define NO_TIME UINT64_MAX
#define NO_ID UINT64_MAX

enum { ST_FREE, ST_HELD, ST_FLIGHT, ST_DONE };

struct ent {
	struct btape_event ev; /* comm dropped */
	uint64_t id;
	uint64_t rissue, rdone; /* recorded (plus the loop offset); rdone NO_TIME: unknown */
	uint64_t start, end;	/* sectors [start, end) */
	uint64_t key;		/* thread: tid, else pid | 1 << 32; 0 none */
	uint64_t deadline, done_ns;
	uint64_t src, src_done_ns, think; /* causal source (NO_ID none) */
	uint64_t blocker;     /* the unfinished I/O that held it at the last check, or NO_ID */
	uint64_t cb_clear_ns; /* when conflict/barrier holds were last seen cleared */
	unsigned int open_pos;
	uint8_t cls, state, kind;
	bool cb_held;
};

struct rp_order {
	enum rp_order_mode mode;
	uint64_t think_ns;
	double speed;
	uint64_t mask, next; /* ring size - 1, the next id */
	struct ent *ring;
	uint64_t *open; /* ids unfinished */
	unsigned int nopen;
	uint64_t *held; /* ids held, in recorded order */
	unsigned int nheld;
	uint64_t max_lat; /* longest recorded latency seen */
	/*
	 * Held I/Os can only be released by a completion or by time: a walk that found none
	 * ready is not repeated until one completes (dirty) or min_wake passes.
	 */
	bool dirty;
	uint64_t min_wake;
};

static const char *const mode_names[] = {"none", "conflict", "barrier", "causal"};
static const char *const dep_names[] = {"conflict", "barrier", "causal"};

int rp_order_mode_parse(const char *name)
{
	for (int i = 0; i < 4; i++)
		if (!strcmp(name, mode_names[i]))
			return i;
	return -1;
}

const char *rp_order_mode_name(enum rp_order_mode m)
{
	return (unsigned int)m < 4 ? mode_names[m] : "?";
}

const char *rp_dep_name(enum rp_dep d)
{
	return (unsigned int)d < RP_DEP__COUNT ? dep_names[d] : "?";
}

int rp_order__new(struct rp_order **op, enum rp_order_mode mode, uint64_t think_ns,
		  unsigned int window, double speed)
{
	struct rp_order *o;
	uint64_t size = 2;
	int err = -ENOMEM;

	*op = NULL;
	if ((unsigned int)mode > RP_ORDER_CAUSAL || window > (1u << 24))
		return -EINVAL;
	while (size < window)
		size <<= 1;
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->mode = mode;
	o->think_ns = think_ns;
	o->speed = speed > 0 ? speed : 1;
	o->mask = size - 1;
	o->ring = calloc(size, sizeof(*o->ring));
	o->open = calloc(size, sizeof(*o->open));
	o->held = calloc(size, sizeof(*o->held));
	if (!o->ring || !o->open || !o->held)
		goto cleanup;
	*op = o;
	return 0;
cleanup:
	rp_order__free(o);
	return err;
}

void rp_order__free(struct rp_order *o)
{
	if (!o)
		return;
	free(o->ring);
	free(o->open);
	free(o->held);
	free(o);
}

static struct ent *get(struct rp_order *o, uint64_t id)
{
	struct ent *e = &o->ring[id & o->mask];

	return e->state != ST_FREE && e->id == id ? e : NULL;
}

static uint64_t thread_key(const struct btape_event *ev)
{
	if ((ev->present & BTAPE_HAS_TID) && ev->tid)
		return ev->tid;
	if ((ev->present & BTAPE_HAS_PID) && ev->pid)
		return (uint64_t)ev->pid | 1ull << 32;
	return 0;
}

/* The same thread's latest recorded completion at or before b's issue, within the window. */
static void find_source(struct rp_order *o, struct ent *b)
{
	uint64_t best = NO_ID, best_done = 0;
	uint64_t horizon =
		b->rissue > o->think_ns + o->max_lat ? b->rissue - o->think_ns - o->max_lat : 0;

	b->src = NO_ID;
	if (!b->key)
		return;
	for (uint64_t id = b->id; id-- > 0 && b->id - id <= o->mask;) {
		struct ent *a = get(o, id);

		if (!a || a->rissue < horizon)
			break;
		if (a->key != b->key || a->rdone == NO_TIME || a->rdone > b->rissue)
			continue;
		if (b->rissue - a->rdone > o->think_ns)
			continue;
		if (best == NO_ID || a->rdone > best_done) {
			best = id;
			best_done = a->rdone;
		}
	}
	if (best == NO_ID)
		return;
	b->src = best;
	b->think = (uint64_t)((double)(b->rissue - best_done) / o->speed);
	b->src_done_ns = get(o, best)->state == ST_DONE ? get(o, best)->done_ns : NO_TIME;
}

int64_t rp_order__add(struct rp_order *o, const struct btape_event *ev, uint64_t rec_off,
		      uint64_t deadline)
{
	struct ent *e = &o->ring[o->next & o->mask];
	uint64_t sectors = (ev->bytes + 511) / 512;

	if (e->state == ST_HELD || e->state == ST_FLIGHT)
		return -EBUSY;
	memset(e, 0, sizeof(*e));
	e->ev = *ev;
	e->ev.comm = NULL;
	e->id = o->next++;
	e->rissue = ev->issue_ns + rec_off;
	e->rdone = (ev->present & BTAPE_HAS_COMPLETE) && ev->complete_ns >= ev->issue_ns
			   ? ev->complete_ns + rec_off
			   : NO_TIME;
	if (e->rdone != NO_TIME && e->rdone - e->rissue > o->max_lat)
		o->max_lat = e->rdone - e->rissue;
	e->start = ev->sector;
	e->end = ev->sector + sectors;
	e->key = thread_key(ev);
	e->deadline = deadline;
	e->done_ns = NO_TIME;
	e->blocker = NO_ID;
	e->cb_clear_ns = 0;
	if (ev->op == BTAPE_OP_WRITE || ev->op == BTAPE_OP_DISCARD ||
	    ev->op == BTAPE_OP_WRITE_ZEROES)
		e->cls |= CLS_WRITE;
	if (ev->op == BTAPE_OP_FLUSH || ((ev->present & BTAPE_HAS_FLAGS) &&
					 (ev->flags & (BTAPE_FLAG_FUA | BTAPE_FLAG_PREFLUSH))))
		e->cls |= CLS_BARRIER;
	e->state = ST_FLIGHT; /* unfinished; check/hold decide */
	e->open_pos = o->nopen;
	o->open[o->nopen++] = e->id;
	if (o->mode == RP_ORDER_CAUSAL)
		find_source(o, e);
	else
		e->src = NO_ID;
	return (int64_t)e->id;
}

/* Must b wait for the unfinished, earlier a? By which rule (RP_DEP_*), or -1. */
static int holds(const struct rp_order *o, const struct ent *a, const struct ent *b)
{
	if (a->id >= b->id || a->ev.dev != b->ev.dev)
		return -1;
	if (o->mode >= RP_ORDER_CONFLICT && ((a->cls | b->cls) & CLS_WRITE) && a->start < b->end &&
	    b->start < a->end)
		return RP_DEP_CONFLICT;
	if (o->mode >= RP_ORDER_BARRIER && a->rdone != NO_TIME && a->rdone <= b->rissue) {
		if ((b->cls & CLS_BARRIER) && (a->cls & CLS_WRITE))
			return RP_DEP_BARRIER;
		if (a->cls & CLS_BARRIER)
			return RP_DEP_BARRIER;
	}
	return -1;
}

int rp_order__check(struct rp_order *o, uint64_t id, uint64_t now, uint64_t *eligible,
		    uint64_t *wake, int *kind)
{
	struct ent *b = get(o, id);
	uint64_t t;

	*wake = 0;
	if (!b)
		return 1;
	if (b->blocker != NO_ID) {
		const struct ent *a = get(o, b->blocker);

		if (a && (a->state == ST_HELD || a->state == ST_FLIGHT)) {
			*kind = b->kind;
			return 0;
		}
		b->blocker = NO_ID;
	}
	for (unsigned int i = 0; i < o->nopen; i++) {
		const struct ent *a = get(o, o->open[i]);
		int k = a ? holds(o, a, b) : -1;

		if (k >= 0) {
			b->blocker = a->id;
			b->kind = (uint8_t)k;
			b->cb_held = true;
			*kind = k;
			return 0;
		}
	}
	if (b->cb_held && !b->cb_clear_ns)
		b->cb_clear_ns = now;
	t = b->deadline;
	if (b->cb_clear_ns > t)
		t = b->cb_clear_ns;
	if (b->src != NO_ID) {
		if (b->src_done_ns == NO_TIME) {
			b->kind = RP_DEP_CAUSAL;
			*kind = RP_DEP_CAUSAL;
			return 0;
		}
		if (b->src_done_ns + b->think > t) {
			t = b->src_done_ns + b->think;
			b->kind = RP_DEP_CAUSAL;
		}
		if (t > now) {
			*wake = t;
			*kind = RP_DEP_CAUSAL;
			return 0;
		}
	}
	*eligible = t;
	*kind = b->kind;
	return 1;
}

void rp_order__hold(struct rp_order *o, uint64_t id, uint64_t wake)
{
	struct ent *e = get(o, id);

	if (!e || e->state == ST_HELD)
		return;
	if (wake && (!o->min_wake || wake < o->min_wake))
		o->min_wake = wake;
	e->state = ST_HELD;
	o->held[o->nheld++] = id;
}

unsigned int rp_order__held(const struct rp_order *o)
{
	return o->nheld;
}

int rp_order__next_ready(struct rp_order *o, uint64_t now, unsigned int *pos, uint64_t *id,
			 const struct btape_event **ev, uint64_t *deadline, uint64_t *eligible,
			 int *kind, uint64_t *wake)
{
	if (!*pos) {
		if (!o->dirty && (!o->min_wake || now < o->min_wake)) {
			if (o->min_wake && (!*wake || o->min_wake < *wake))
				*wake = o->min_wake;
			return 0;
		}
		o->dirty = false;
		o->min_wake = 0;
	}
	while (*pos < o->nheld) {
		uint64_t w, hid = o->held[*pos];
		struct ent *e = get(o, hid);

		if (rp_order__check(o, hid, now, eligible, &w, kind)) {
			memmove(o->held + *pos, o->held + *pos + 1,
				(o->nheld - *pos - 1) * sizeof(*o->held));
			o->nheld--;
			e->state = ST_FLIGHT;
			*id = hid;
			*ev = &e->ev;
			*deadline = e->deadline;
			o->dirty = true; /* the walk may stop here: walk again next time */
			return 1;
		}
		if (w && (!*wake || w < *wake))
			*wake = w;
		if (w && (!o->min_wake || w < o->min_wake))
			o->min_wake = w;
		(*pos)++;
	}
	return 0;
}

void rp_order__done(struct rp_order *o, uint64_t id, uint64_t t)
{
	struct ent *e = get(o, id);
	unsigned int p;

	if (!e || e->state == ST_DONE)
		return;
	e->state = ST_DONE;
	e->done_ns = t;
	o->dirty = true;
	p = e->open_pos;
	o->open[p] = o->open[--o->nopen];
	if (p < o->nopen)
		get(o, o->open[p])->open_pos = p;
	/* dependants keep the time: the ring may reuse this slot while they wait */
	for (unsigned int i = 0; i < o->nopen; i++) {
		struct ent *b = get(o, o->open[i]);

		if (b && b->src == id)
			b->src_done_ns = t;
	}
}
