// SPDX-License-Identifier: GPL-2.0-only
/*
 * Dependency tracking for --order (rules in order.h). A ring of the last `window` events in
 * recorded issue order, each with its recorded times and replayed state. The unfinished ones
 * (held or in flight) are indexed per device, so that a check costs O(log unfinished) and not
 * a scan of them all:
 *   - by sector extent, writes and the rest apart (conflicts);
 *   - by recorded completion, writes and barriers apart (barriers: "every earlier write /
 *     barrier that completed, in the recording, before b was issued" is a prefix).
 * With flushes apart, also the unfinished flushes by id (each a node [id, id + 1)).
 * Each index is a treap keyed by (start, id), every node keeping its subtree's largest end
 * and smallest id, so "an unfinished I/O before b that overlaps [s, e)" is one descent.
 *
 * A held I/O waits in exactly one place: on the waiter list of the unfinished I/O that holds
 * it (conflict/barrier blocker, or its causal source), on its thread's list (thread depth:
 * any completion of the thread's wakes it), in the timer heap (causal think time), or among
 * the candidates to check again. A completion moves its waiters to the candidates;
 * next_ready checks only those, oldest first, so a release costs O(log held) and not a walk.
 * Causal sources are looked up in one more treap, of every event in the ring by recorded
 * completion: a wake source is one predecessor query, a think source a walk back over the
 * completions within the think window. A thread's recorded depth comes from a min-heap of its
 * I/Os' recorded completions still ahead. Neither depends on the longest recorded latency: one
 * 100 ms outlier in a recording must not make every later lookup walk back 100 ms.
 */
#include "order.h"

#include "btape.h"
#include "u64heap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define CLS_WRITE 1u   /* changes data: write, discard, write zeroes */
#define CLS_BARRIER 2u /* flush, FUA, preflush */
#define NO_TIME UINT64_MAX
#define NO_ID UINT64_MAX

enum { ST_FREE, ST_HELD, ST_FLIGHT, ST_DONE };

/* A node of an index: the interval [start, end) of the I/O id. */
struct xnode {
	struct xnode *l, *r;
	uint64_t start, end, id;
	uint64_t max_end, min_id; /* of the subtree */
	uint32_t prio;
};

/* One device's indexes of its unfinished I/Os. */
struct dindex {
	uint32_t dev;
	struct xnode *ext_w, *ext_o; /* sector extents of writes, of the others */
	struct xnode *rd_w, *rd_b;   /* recorded completions [rdone, max) of writes, of barriers */
	struct xnode *fl;	     /* flushes apart: unfinished flushes, [id, id + 1) */
	uint64_t last_fl, last_fl_rdone; /* the latest flush added and its recorded completion */
};

struct ent {
	struct btape_event ev; /* comm dropped */
	uint64_t id;
	uint64_t rissue, rdone; /* recorded (plus the loop offset); rdone NO_TIME: unknown */
	uint64_t rwake, rslept; /* its thread's recorded wake (NO_TIME: none) and sleep */
	uint64_t rsub; /* submitted: rissue, or (wake sources) its recorded insert (see add) */
	uint64_t start, end;	/* sectors [start, end) */
	uint64_t key;		/* thread: tid, else pid | 1 << 32; 0 none */
	uint64_t deadline, done_ns;
	uint64_t src, src_done_ns, think; /* causal source (NO_ID none) */
	uint64_t idle_from; /* its thread's latest recorded completion before it (NO_TIME: none) */
	uint64_t blocker;     /* the unfinished I/O that held it at the last check, or NO_ID */
	uint64_t cb_clear_ns; /* when conflict/barrier holds were last seen cleared */
	uint64_t wait_head, wait_next; /* held I/Os parked on this one; the next on its list */
	uint64_t dep_head, dep_next;   /* I/Os whose causal source this is; the next */
	uint64_t rel_ns;	       /* its eligible time once a check released it, or NO_TIME */
	uint64_t tnext;		       /* its thread's next I/O while this one is unreleased */
	int64_t poff;		       /* its thread's previous I/O's offset (a sourceless I/O's) */
	struct xnode ext, rdw, rdb, fln; /* its nodes in its device's indexes */
	struct xnode rdn;	       /* its node in o->rdone (causal, completion known) */
	struct xnode rdt;	       /* ... and in its thread's thr.rd */
	unsigned int dx;	       /* its device's index in o->dix */
	uint8_t cls, state, kind;
	bool cb_held, in_rdw, in_rdb, in_fl, in_rdn, in_rdt;
	bool fl_apart;	 /* a flush that waits for every earlier unfinished flush (flushes apart) */
	bool fl_held;	 /* ... and was held by that rule, not released since */
	bool poff_known; /* poff is set (else: waiting for the thread's previous I/O's release) */
	bool on_rel;	 /* held, parked until its thread's previous I/O is released */
	bool xsrc;	 /* its causal source is another thread's I/O */
	bool td_wait;	 /* held by its thread's depth, parked on its thread's list */
	uint32_t tdepth; /* the most I/Os its thread had in flight, recorded, up to its issue - 1 */
	uint64_t uprev, unext; /* its thread's unfinished I/Os, in recorded order (causal) */
};

/*
 * A thread's last added I/O and, once it was released, its offset (eligible - deadline); the
 * latest recorded completion of its I/Os (issue when unknown; NO_TIME: none yet); its
 * unfinished I/Os in recorded order (ent.uprev/unext), and the held I/Os that wait for one of
 * them to complete (thread depth; ent.wait_next).
 */
struct thr {
	uint64_t key, last, busy_until;
	int64_t off;
	uint64_t uhead, utail, dwait;
	uint32_t depth; /* the most of its earlier I/Os in flight at one's recorded issue */
	uint64_t *ahead; /* min-heap: recorded completions of its I/Os not before the last issue */
	struct xnode *rd; /* its I/Os of o->rdone: the think source without a walk over others' */
	unsigned int nahead, cap;
	bool lost;	 /* the heap could not grow: depth unknown from then on (TDEPTH_ANY) */
};

/* A thread depth that holds nothing: its thread's recorded depth is unknown (out of memory). */
#define TDEPTH_ANY (UINT32_MAX - 1)
/*
 * Bounds on what a trace can make the tracker keep: threads (a crafted trace giving every
 * event a new thread id held 3 GB at 16 M events), and each thread's recorded completions
 * ahead (one thread whose completions all lie far ahead). Past them an I/O of a new thread
 * has no thread link, and a thread's depth is unknown (TDEPTH_ANY), as when out of memory.
 */
#define THREADS_MAX (1u << 18)
#define AHEAD_MAX (1u << 22) /* over all threads */

struct theap {
	uint64_t t, id;
};

struct rp_order {
	enum rp_order_mode mode;
	enum rp_xthread xthread;
	bool flushes_apart;
	uint64_t think_ns;
	double speed;
	uint64_t mask, next; /* ring size - 1, the next id */
	struct ent *ring;
	struct dindex *dix; /* devices seen; a slot whose indexes are empty may be reused */
	unsigned int ndix, last_dx;
	uint64_t *cand; /* min-heap of held ids to check again */
	unsigned int ncand;
	struct theap *timer; /* min-heap of held ids by the time they may go */
	unsigned int ntimer;
	unsigned int nheld;
	uint64_t max_lat;  /* longest recorded latency seen */
	uint64_t seed;	   /* random, per tracker: treap priorities and the thread table's hash */
	struct xnode *rdone; /* causal: the ring's events by recorded completion [rdone, rdone] */
	uint64_t max_wake_gap; /* longest completion-to-wake of a wake source seen (think_from) */
	uint64_t start_ns; /* causal: no I/O before it */
	int64_t min_off;   /* causal: the lowest offset of a released I/O, at most 0 */
	struct thr *thr;   /* causal: open-addressed by key, nthr used of thr_mask + 1 */
	unsigned int nthr, thr_mask;
	uint64_t ahead_cap; /* the threads' ahead heaps' capacities, summed (AHEAD_MAX) */
};

static const char *const mode_names[] = {"none", "conflict", "barrier", "causal"};
static const char *const dep_names[] = {"conflict", "barrier", "causal", "cross-thread"};
static const char *const xthread_names[] = {"off", "barrier", "any", "wake"};

/* The index of name in names[n], or -1. */
static int name_index(const char *const *names, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

int rp_order_mode_parse(const char *name)
{
	return name_index(mode_names, 4, name);
}

const char *rp_order_mode_name(enum rp_order_mode m)
{
	return (unsigned int)m < 4 ? mode_names[m] : "?";
}

const char *rp_dep_name(enum rp_dep d)
{
	return (unsigned int)d < RP_DEP__COUNT ? dep_names[d] : "?";
}

int rp_xthread_parse(const char *name)
{
	return name_index(xthread_names, 4, name);
}

const char *rp_xthread_name(enum rp_xthread x)
{
	return (unsigned int)x < 4 ? xthread_names[x] : "?";
}

enum rp_xthread rp_xthread_default(const char *capture)
{
	const char *p = capture;

	while (p && *p) {
		size_t n;

		p += strspn(p, " ");
		n = strcspn(p, " ");
		if (n == 2 && !strncmp(p, "--", 2))
			break;
		if (n == 7 && !strncmp(p, "--waits", 7))
			return RP_XTHREAD_DEFAULT_WAKES;
		p += n;
	}
	return RP_XTHREAD_DEFAULT;
}

int rp_order__new(struct rp_order **op, const struct rp_order_cfg *cfg)
{
	struct rp_order *o;
	uint64_t size = 2;
	int err = -ENOMEM;

	*op = NULL;
	if ((unsigned int)cfg->mode > RP_ORDER_CAUSAL ||
	    (unsigned int)cfg->xthread > RP_XTHREAD_WAKE || cfg->window > (1u << 24))
		return -EINVAL;
	while (size < cfg->window)
		size <<= 1;
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->mode = cfg->mode;
	o->xthread = cfg->mode == RP_ORDER_CAUSAL ? cfg->xthread : RP_XTHREAD_OFF;
	o->flushes_apart = cfg->flushes_apart;
	o->think_ns = cfg->think_ns;
	o->speed = cfg->speed > 0 ? cfg->speed : 1;
	o->mask = size - 1;
	/* no randomness (getrandom fails): still a different seed per tracker and run */
	if (getrandom(&o->seed, sizeof(o->seed), GRND_NONBLOCK) != sizeof(o->seed))
		o->seed = (uint64_t)(uintptr_t)o ^ ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL);
	o->start_ns = cfg->start_ns;
	o->ring = calloc(size, sizeof(*o->ring));
	/* no more devices hold unfinished I/Os than there are slots */
	o->dix = calloc(size, sizeof(*o->dix));
	o->cand = calloc(size, sizeof(*o->cand));
	o->timer = calloc(size, sizeof(*o->timer));
	if (!o->ring || !o->dix || !o->cand || !o->timer)
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
	for (unsigned int i = 0; o->thr && i <= o->thr_mask; i++)
		free(o->thr[i].ahead);
	free(o->ring);
	free(o->dix);
	free(o->cand);
	free(o->timer);
	free(o->thr);
	free(o);
}

/* ---- the interval treap ---- */

static void xfix(struct xnode *n)
{
	n->max_end = n->end;
	n->min_id = n->id;
	if (n->l) {
		if (n->l->max_end > n->max_end)
			n->max_end = n->l->max_end;
		if (n->l->min_id < n->min_id)
			n->min_id = n->l->min_id;
	}
	if (n->r) {
		if (n->r->max_end > n->max_end)
			n->max_end = n->r->max_end;
		if (n->r->min_id < n->min_id)
			n->min_id = n->r->min_id;
	}
}

static bool xless(const struct xnode *a, const struct xnode *b)
{
	return a->start < b->start || (a->start == b->start && a->id < b->id);
}

static struct xnode *xinsert(struct xnode *t, struct xnode *n)
{
	if (!t) {
		n->l = n->r = NULL;
		xfix(n);
		return n;
	}
	if (xless(n, t)) {
		t->l = xinsert(t->l, n);
		if (t->l->prio > t->prio) { /* rotate right */
			struct xnode *l = t->l;

			t->l = l->r;
			xfix(t);
			l->r = t;
			t = l;
		}
	} else {
		t->r = xinsert(t->r, n);
		if (t->r->prio > t->prio) { /* rotate left */
			struct xnode *r = t->r;

			t->r = r->l;
			xfix(t);
			r->l = t;
			t = r;
		}
	}
	xfix(t);
	return t;
}

/* Joins two treaps, every key of a below every key of b. */
static struct xnode *xjoin(struct xnode *a, struct xnode *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	if (a->prio > b->prio) {
		a->r = xjoin(a->r, b);
		xfix(a);
		return a;
	}
	b->l = xjoin(a, b->l);
	xfix(b);
	return b;
}

static struct xnode *xremove(struct xnode *t, struct xnode *n)
{
	if (!t)
		return NULL;
	if (t == n)
		return xjoin(t->l, t->r);
	if (xless(n, t))
		t->l = xremove(t->l, n);
	else
		t->r = xremove(t->r, n);
	xfix(t);
	return t;
}

/* A node with start < qe, end > qs and id < qid (the leftmost), or NULL. */
static const struct xnode *xfind(const struct xnode *n, uint64_t qs, uint64_t qe, uint64_t qid)
{
	while (n && n->max_end > qs && n->min_id < qid) {
		const struct xnode *x = xfind(n->l, qs, qe, qid);

		if (x)
			return x;
		if (n->start >= qe)
			return NULL;
		if (n->end > qs && n->id < qid)
			return n;
		n = n->r;
	}
	return NULL;
}

/*
 * Of the nodes with start < qe and id < qid, the one with the largest start (ends ignored: the
 * recorded-completion indexes), or NULL. Held behind the latest of its barriers, an I/O is
 * not woken once for each of the earlier ones.
 */
static const struct xnode *xlast(const struct xnode *n, uint64_t qe, uint64_t qid)
{
	while (n && n->min_id < qid) {
		if (n->start < qe) {
			const struct xnode *x = xlast(n->r, qe, qid);

			if (x)
				return x;
			if (n->id < qid)
				return n;
		}
		n = n->l;
	}
	return NULL;
}

/* The node with the largest (start, id) below (qs, qid), or NULL. */
static const struct xnode *xbefore(const struct xnode *n, uint64_t qs, uint64_t qid)
{
	const struct xnode *best = NULL;

	while (n) {
		if (n->start < qs || (n->start == qs && n->id < qid)) {
			best = n;
			n = n->r;
		} else {
			n = n->l;
		}
	}
	return best;
}

/*
 * A keyed hash (splitmix64's finaliser over x ^ seed). The seed is random per tracker, so a
 * crafted trace cannot line its thread ids up in one probe chain of the thread table, nor its
 * sectors or completions up with the treaps' priorities (a chain of 16k colliding pids took
 * 1.5 s of CPU against 0.01 s; more would have been quadratic).
 */
static uint64_t mix(uint64_t x, uint64_t seed)
{
	x ^= seed;
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static void xset(struct xnode *n, uint64_t start, uint64_t end, uint64_t id, uint64_t seed)
{
	n->start = start;
	n->end = end;
	n->id = id;
	n->prio = (uint32_t)(mix(id, seed) >> 32);
}

/* ---- the held I/Os' places: candidates (by id) and timers (by time) ---- */

static void cand_push(struct rp_order *o, uint64_t id)
{
	u64heap_push(o->cand, &o->ncand, id);
}

static uint64_t cand_pop(struct rp_order *o)
{
	return u64heap_pop(o->cand, &o->ncand);
}

static bool tless(const struct theap *a, const struct theap *b)
{
	return a->t < b->t || (a->t == b->t && a->id < b->id);
}

static void timer_push(struct rp_order *o, uint64_t t, uint64_t id)
{
	struct theap x = {t, id};
	unsigned int i = o->ntimer++;

	while (i && tless(&x, &o->timer[(i - 1) / 2])) {
		o->timer[i] = o->timer[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	o->timer[i] = x;
}

static uint64_t timer_pop(struct rp_order *o)
{
	uint64_t top = o->timer[0].id;
	struct theap last = o->timer[--o->ntimer];
	unsigned int i = 0;

	for (;;) {
		unsigned int c = 2 * i + 1;

		if (c >= o->ntimer)
			break;
		if (c + 1 < o->ntimer && tless(&o->timer[c + 1], &o->timer[c]))
			c++;
		if (!tless(&o->timer[c], &last))
			break;
		o->timer[i] = o->timer[c];
		i = c;
	}
	if (o->ntimer)
		o->timer[i] = last;
	return top;
}

/* ---- events ---- */

static struct ent *get(struct rp_order *o, uint64_t id)
{
	struct ent *e = &o->ring[id & o->mask];

	return id != NO_ID && e->state != ST_FREE && e->id == id ? e : NULL;
}

static bool unfinished(const struct ent *e)
{
	return e && (e->state == ST_HELD || e->state == ST_FLIGHT);
}

static uint64_t thread_key(const struct btape_event *ev)
{
	if ((ev->present & BTAPE_HAS_TID) && ev->tid)
		return ev->tid;
	if ((ev->present & BTAPE_HAS_PID) && ev->pid)
		return (uint64_t)ev->pid | 1ull << 32;
	return 0;
}

/* The index of dev's indexes: a known one, a new one, or one all of whose I/Os finished. */
static unsigned int dev_index(struct rp_order *o, uint32_t dev)
{
	struct dindex *d;

	if (o->ndix && o->dix[o->last_dx].dev == dev)
		return o->last_dx;
	for (unsigned int i = 0; i < o->ndix; i++)
		if (o->dix[i].dev == dev)
			return o->last_dx = i;
	if (o->ndix <= o->mask) {
		o->last_dx = o->ndix++;
	} else {
		/* fewer devices hold unfinished I/Os than there are slots: one is empty */
		for (unsigned int i = 0; i < o->ndix; i++) {
			d = &o->dix[i];
			if (!d->ext_w && !d->ext_o && !d->rd_w && !d->rd_b && !d->fl) {
				o->last_dx = i;
				break;
			}
		}
	}
	d = &o->dix[o->last_dx];
	memset(d, 0, sizeof(*d));
	d->dev = dev;
	d->last_fl = NO_ID;
	return o->last_dx;
}

/* a may be b's cross-thread source (its completion in the think window apart; order.h). */
static bool xsource(const struct rp_order *o, const struct ent *a, const struct ent *b)
{
	return o->xthread != RP_XTHREAD_OFF && a->key && a->ev.dev == b->ev.dev &&
	       (o->xthread == RP_XTHREAD_ANY || (a->cls & CLS_BARRIER)) &&
	       b->idle_from != NO_TIME && a->rissue >= b->idle_from;
}

/*
 * Wake sources: the I/O, of any thread and device, with the latest recorded completion in
 * [wake - slept, wake]; NO_ID when there is none (b did not sleep since its thread's previous
 * I/O, or no I/O completed while it slept).
 */
static uint64_t find_wake_source(struct rp_order *o, const struct ent *b, uint64_t *best_done)
{
	uint64_t from;
	const struct xnode *a;

	if (b->rwake == NO_TIME)
		return NO_ID;
	from = b->rwake > b->rslept ? b->rwake - b->rslept : 0;
	/* the latest completion at or before the wake (of two at once, the later issued) */
	a = xbefore(o->rdone, b->rwake, NO_ID);
	if (!a || a->start < from)
		return NO_ID;
	*best_done = a->start;
	return a->id;
}

static struct thr *thr_find(struct rp_order *o, uint64_t key);

/*
 * The latest recorded completion at or before b's issue, within the think window, of b's
 * thread or of a cross-thread source; NO_ID when there is none.
 */
static uint64_t find_think_source(struct rp_order *o, const struct ent *b, uint64_t *best_done)
{
	const struct xnode *x;

	if (o->xthread == RP_XTHREAD_OFF) {
		/*
		 * Only b's thread's: one query of its own completions. A walk over o->rdone
		 * would pass every other thread's completion in the window, per I/O: 300k
		 * threads of one I/O each, all at one instant, took 72 s of CPU.
		 */
		const struct thr *t = thr_find(o, b->key);

		x = t ? xbefore(t->rd, b->rissue, NO_ID) : NULL;
		if (!x || b->rissue - x->start > o->think_ns)
			return NO_ID;
		*best_done = x->start;
		return x->id;
	}
	x = xbefore(o->rdone, b->rissue, NO_ID);
	/* latest completion first (of two at once, the later issued): the first that qualifies */
	for (; x && b->rissue - x->start <= o->think_ns; x = xbefore(o->rdone, x->start, x->id)) {
		const struct ent *a = get(o, x->id);

		if (a->key == b->key || xsource(o, a, b)) {
			*best_done = x->start;
			return x->id;
		}
	}
	return NO_ID;
}

/* Where b's think time starts: its thread's wake when it woke for the source, else done. */
static uint64_t think_from(struct rp_order *o, const struct ent *b, uint64_t done)
{
	if (o->xthread != RP_XTHREAD_WAKE || b->rwake == NO_TIME || b->rwake < done ||
	    b->rwake > b->rsub)
		return done;
	/* b may go that much sooner than its deadline: the look-ahead must reach it */
	if (b->rwake - done > o->max_wake_gap)
		o->max_wake_gap = b->rwake - done;
	return b->rwake;
}

/* b's causal source (order.h): what its thread woke for, or by the think window. */
static void find_source(struct rp_order *o, struct ent *b)
{
	uint64_t best, best_done = 0;
	struct ent *a;

	b->src = NO_ID;
	if (!b->key)
		return;
	if (o->xthread == RP_XTHREAD_WAKE)
		best = find_wake_source(o, b, &best_done);
	else
		best = find_think_source(o, b, &best_done);
	if (best == NO_ID)
		return;
	a = get(o, best);
	b->src = best;
	b->xsrc = a->key != b->key;
	/*
	 * The think time: from the source's completion, or with wake sources from the wake: the
	 * replay's own notice of the completion (its reap) stands in for the thread's wake-up,
	 * which counted once more would add a scheduling delay to every link of a chain.
	 */
	b->think = (uint64_t)((double)(b->rsub - think_from(o, b, best_done)) / o->speed);
	if (a->state == ST_DONE) {
		b->src_done_ns = a->done_ns;
	} else {
		/* told of the completion, which may come after the ring reused a's slot */
		b->src_done_ns = NO_TIME;
		b->dep_next = a->dep_head;
		a->dep_head = b->id;
	}
}

/* key's entry, or NULL when it has none (key 0: none). */
static struct thr *thr_find(struct rp_order *o, uint64_t key)
{
	if (!key || !o->thr)
		return NULL;
	for (unsigned int i = (unsigned int)mix(key, o->seed) & o->thr_mask;;
	     i = (i + 1) & o->thr_mask) {
		if (o->thr[i].key == key)
			return &o->thr[i];
		if (!o->thr[i].key)
			return NULL;
	}
}

/* key's entry, added when missing (last NO_ID, off 0); NULL when out of memory, or when
 * THREADS_MAX are kept. */
static struct thr *thr_get(struct rp_order *o, uint64_t key)
{
	struct thr *t = thr_find(o, key);
	unsigned int i;

	if (t)
		return t;
	if (o->nthr >= THREADS_MAX)
		return NULL;
	if ((o->nthr + 1) * 2 > o->thr_mask + 1 || !o->thr) {
		unsigned int size = o->thr ? 2 * (o->thr_mask + 1) : 64;
		struct thr *n = calloc(size, sizeof(*n));

		if (!n)
			return NULL;
		for (unsigned int j = 0; o->thr && j <= o->thr_mask; j++) {
			if (!o->thr[j].key)
				continue;
			for (i = (unsigned int)mix(o->thr[j].key, o->seed) &
				 (size - 1);
			     n[i].key; i = (i + 1) & (size - 1))
				;
			n[i] = o->thr[j];
		}
		free(o->thr);
		o->thr = n;
		o->thr_mask = size - 1;
	}
	for (i = (unsigned int)mix(key, o->seed) & o->thr_mask;;
	     i = (i + 1) & o->thr_mask) {
		t = &o->thr[i];
		if (t->key == key)
			return t;
		if (!t->key)
			break;
	}
	t->key = key;
	t->last = NO_ID;
	t->busy_until = NO_TIME;
	t->off = 0;
	t->uhead = t->utail = t->dwait = NO_ID;
	t->depth = 0;
	o->nthr++;
	return t;
}

/*
 * How many of b's thread's earlier I/Os were in flight, in the recording, when b was issued
 * (one without a recorded completion counts as completing at its issue), from the thread's
 * heap of recorded completions still ahead: those at or before b's issue leave it (events come
 * in recorded issue order), and b's own goes in. TDEPTH_ANY once the heap could not grow.
 */
static uint32_t thread_depth(struct rp_order *o, struct thr *t, const struct ent *b)
{
	unsigned int n;

	while (t->nahead && t->ahead[0] <= b->rissue)
		u64heap_pop(t->ahead, &t->nahead);
	n = t->nahead;
	if (b->rdone == NO_TIME || b->rdone <= b->rissue || t->lost)
		return t->lost ? TDEPTH_ANY : n;
	if (t->nahead == t->cap) {
		unsigned int cap = t->cap ? 2 * t->cap : 16;
		bool room = cap > t->cap && o->ahead_cap + (cap - t->cap) <= AHEAD_MAX;
		uint64_t *a = room ? realloc(t->ahead, cap * sizeof(*a)) : NULL;

		if (!a) {
			t->lost = true;
			return TDEPTH_ANY;
		}
		o->ahead_cap += cap - t->cap;
		t->ahead = a;
		t->cap = cap;
	}
	u64heap_push(t->ahead, &t->nahead, b->rdone);
	return n;
}

/*
 * Causal: links e to its thread's previous I/O, whose offset a sourceless e takes. Until that
 * one is released, e waits for it (p->tnext). Also appends e to its thread's unfinished I/Os
 * and sets its depth limit (thread depth). Out of memory, e keeps its deadline and has no
 * depth limit.
 */
static void thread_link(struct rp_order *o, struct ent *e)
{
	struct thr *t;
	struct ent *p;
	uint64_t busy;

	e->poff_known = true;
	e->idle_from = NO_TIME;
	e->uprev = e->unext = NO_ID;
	e->tdepth = UINT32_MAX;
	if (!e->key || !(t = thr_get(o, e->key)))
		return;
	e->tdepth = thread_depth(o, t, e);
	if (e->tdepth < t->depth)
		e->tdepth = t->depth;
	t->depth = e->tdepth;
	e->uprev = t->utail;
	if ((p = get(o, t->utail)))
		p->unext = e->id;
	else
		t->uhead = e->id;
	t->utail = e->id;
	e->idle_from = t->busy_until;
	busy = e->rdone != NO_TIME ? e->rdone : e->rissue;
	if (t->busy_until == NO_TIME || busy > t->busy_until)
		t->busy_until = busy;
	p = get(o, t->last);
	if (p && p->rel_ns == NO_TIME) {
		p->tnext = e->id;
		e->poff_known = false;
	} else {
		e->poff = t->off;
	}
	t->last = e->id;
}

/* A check let b go, eligible at t: its thread's offset is known now. */
static void release(struct rp_order *o, struct ent *b, uint64_t t)
{
	int64_t off = (int64_t)(t - b->deadline);
	struct ent *n;
	struct thr *th;

	b->fl_held = false;
	if (b->rel_ns != NO_TIME)
		return;
	b->rel_ns = t;
	if (o->mode != RP_ORDER_CAUSAL || !b->key)
		return;
	if (off < o->min_off)
		o->min_off = off;
	th = thr_get(o, b->key);
	if (th && th->last == b->id)
		th->off = off;
	n = get(o, b->tnext);
	if (n && !n->poff_known) {
		n->poff = off;
		n->poff_known = true;
		if (n->state == ST_HELD && n->on_rel)
			cand_push(o, n->id);
		n->on_rel = false;
	}
	b->tnext = NO_ID;
}

uint64_t rp_order__horizon(const struct rp_order *o)
{
	if (o->mode != RP_ORDER_CAUSAL)
		return 0;
	/* + 1 us: deadlines and think times are rounded apart */
	return (uint64_t)((double)(o->max_lat + o->max_wake_gap) / o->speed) +
	       (uint64_t)-o->min_off + 1000;
}

/*
 * Flushes apart: whether the flush e waits for the earlier ones (order.h), and its node among
 * its device's unfinished flushes.
 */
static void flush_add(struct rp_order *o, struct ent *e)
{
	struct dindex *d = &o->dix[e->dx];
	const struct ent *p = get(o, d->last_fl);

	e->fl_apart = d->last_fl == NO_ID || d->last_fl_rdone == NO_TIME ||
		      d->last_fl_rdone <= e->rissue || (unfinished(p) && p->fl_held);
	d->last_fl = e->id;
	d->last_fl_rdone = e->rdone;
	xset(&e->fln, e->id, e->id + 1, e->id, o->seed);
	d->fl = xinsert(d->fl, &e->fln);
	e->in_fl = true;
}

static void index_add(struct rp_order *o, struct ent *e)
{
	struct dindex *d = &o->dix[e->dx];

	xset(&e->ext, e->start, e->end, e->id, o->seed);
	if (e->cls & CLS_WRITE)
		d->ext_w = xinsert(d->ext_w, &e->ext);
	else
		d->ext_o = xinsert(d->ext_o, &e->ext);
	if (o->mode < RP_ORDER_BARRIER || e->rdone == NO_TIME)
		return;
	if (e->cls & CLS_WRITE) {
		xset(&e->rdw, e->rdone, NO_TIME, e->id, o->seed);
		d->rd_w = xinsert(d->rd_w, &e->rdw);
		e->in_rdw = true;
	}
	if (e->cls & CLS_BARRIER) {
		xset(&e->rdb, e->rdone, NO_TIME, e->id, o->seed);
		d->rd_b = xinsert(d->rd_b, &e->rdb);
		e->in_rdb = true;
	}
}

static void index_remove(struct rp_order *o, struct ent *e)
{
	struct dindex *d = &o->dix[e->dx];

	if (e->cls & CLS_WRITE)
		d->ext_w = xremove(d->ext_w, &e->ext);
	else
		d->ext_o = xremove(d->ext_o, &e->ext);
	if (e->in_rdw)
		d->rd_w = xremove(d->rd_w, &e->rdw);
	if (e->in_rdb)
		d->rd_b = xremove(d->rd_b, &e->rdb);
	if (e->in_fl)
		d->fl = xremove(d->fl, &e->fln);
	e->in_rdw = e->in_rdb = e->in_fl = false;
}

int64_t rp_order__add(struct rp_order *o, const struct btape_event *ev, uint64_t rec_off,
		      uint64_t deadline)
{
	struct ent *e = &o->ring[o->next & o->mask];
	uint64_t sectors = (ev->bytes + 511) / 512;

	if (e->state == ST_HELD || e->state == ST_FLIGHT)
		return -EBUSY;
	if (e->in_rdn) /* it leaves the window */
		o->rdone = xremove(o->rdone, &e->rdn);
	if (e->in_rdt) {
		struct thr *t = thr_find(o, e->key);

		t->rd = xremove(t->rd, &e->rdt);
	}
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
	/* a wake after the issue is not one the thread submitted after */
	e->rwake = (ev->present & BTAPE_HAS_WAKE) && ev->wake_ns <= ev->issue_ns
			   ? ev->wake_ns + rec_off
			   : NO_TIME;
	e->rslept = ev->slept_ns;
	/*
	 * Think time runs from the source's completion to when b was submitted: with wake sources
	 * its insert, when it has one after the wake. Its queueing in the block layer (behind a
	 * flush, a jbd2 commit block behind its preflush) is the device's time, which the target
	 * replays for itself.
	 */
	e->rsub = e->rissue;
	if (o->xthread == RP_XTHREAD_WAKE && e->rwake != NO_TIME &&
	    (ev->present & BTAPE_HAS_INSERT) && ev->insert_ns <= ev->issue_ns &&
	    ev->insert_ns >= ev->wake_ns)
		e->rsub = ev->insert_ns + rec_off;
	e->start = ev->sector;
	e->end = ev->sector + sectors;
	e->key = thread_key(ev);
	e->deadline = deadline;
	e->done_ns = NO_TIME;
	e->blocker = NO_ID;
	e->wait_head = e->wait_next = NO_ID;
	e->dep_head = e->dep_next = NO_ID;
	e->cb_clear_ns = 0;
	e->rel_ns = NO_TIME;
	e->tnext = NO_ID;
	e->poff_known = true;
	if (ev->op == BTAPE_OP_WRITE || ev->op == BTAPE_OP_DISCARD ||
	    ev->op == BTAPE_OP_WRITE_ZEROES)
		e->cls |= CLS_WRITE;
	if (ev->op == BTAPE_OP_FLUSH || ((ev->present & BTAPE_HAS_FLAGS) &&
					 (ev->flags & (BTAPE_FLAG_FUA | BTAPE_FLAG_PREFLUSH))))
		e->cls |= CLS_BARRIER;
	e->state = ST_FLIGHT; /* unfinished; check/hold decide */
	e->dx = dev_index(o, ev->dev);
	index_add(o, e);
	if (o->flushes_apart && ev->op == BTAPE_OP_FLUSH)
		flush_add(o, e);
	e->src = NO_ID;
	if (o->mode == RP_ORDER_CAUSAL) {
		thread_link(o, e); /* first: the thread's idle time before e */
		find_source(o, e);
		if (e->rdone != NO_TIME) { /* after: e is no source of its own */
			xset(&e->rdn, e->rdone, e->rdone, e->id, o->seed);
			o->rdone = xinsert(o->rdone, &e->rdn);
			e->in_rdn = true;
			struct thr *t = thr_find(o, e->key);

			if (t) {
				xset(&e->rdt, e->rdone, e->rdone, e->id, o->seed);
				t->rd = xinsert(t->rd, &e->rdt);
				e->in_rdt = true;
			}
		}
	}
	return (int64_t)e->id;
}

/* An unfinished, earlier I/O on b's device that b must wait for, and by which rule; or NULL. */
static const struct xnode *find_blocker(struct rp_order *o, const struct ent *b, int *kind)
{
	const struct dindex *d = &o->dix[b->dx];
	const struct xnode *a = NULL;
	uint64_t upto = b->rissue + 1; /* recorded completions at or before b's issue */

	if (o->mode >= RP_ORDER_CONFLICT) {
		*kind = RP_DEP_CONFLICT;
		a = xfind(d->ext_w, b->start, b->end, b->id);
		if (!a && (b->cls & CLS_WRITE))
			a = xfind(d->ext_o, b->start, b->end, b->id);
	}
	if (!a && o->mode >= RP_ORDER_BARRIER) {
		*kind = RP_DEP_BARRIER;
		if (b->cls & CLS_BARRIER)
			a = xlast(d->rd_w, upto, b->id);
		if (!a)
			a = xlast(d->rd_b, upto, b->id);
	}
	if (!a && b->fl_apart) {
		*kind = RP_DEP_FLUSHES;
		a = xfind(d->fl, 0, NO_TIME, b->id);
	}
	return a;
}

/*
 * Thread depth (causal): b waits while more of its thread's earlier I/Os are unfinished (held
 * or in flight) than the most the thread had in flight at one of its recorded issues up to
 * b's. A thread that never had more than 4 I/Os in flight never has more in the replay: when
 * the target stalls, its I/Os wait as the thread did; and one that kept 4 in flight may keep 4
 * on slower storage, whatever it had at each issue on the recording's.
 */
static bool depth_held(struct rp_order *o, const struct ent *b)
{
	struct thr *t;
	uint32_t n = 0;

	if (o->mode != RP_ORDER_CAUSAL || b->tdepth == UINT32_MAX ||
	    !(t = thr_get(o, b->key)))
		return false;
	for (uint64_t x = t->uhead; x != NO_ID && x != b->id;) {
		const struct ent *a = get(o, x);

		if (!a)
			break;
		if (++n > b->tdepth)
			return true;
		x = a->unext;
	}
	return false;
}

/* What a causal hold of b is: on its thread's I/O, or on another thread's. */
static int causal_kind(const struct ent *b)
{
	return b->xsrc ? RP_DEP_XTHREAD : RP_DEP_CAUSAL;
}

int rp_order__check(struct rp_order *o, uint64_t id, uint64_t now, uint64_t *eligible,
		    uint64_t *wake, int *kind)
{
	struct ent *b = get(o, id);
	const struct xnode *a;
	uint64_t t;
	int k;

	*wake = 0;
	if (!b)
		return 1;
	b->td_wait = false;
	if (b->blocker != NO_ID) {
		if (unfinished(get(o, b->blocker))) {
			*kind = b->kind;
			return 0;
		}
		b->blocker = NO_ID;
	}
	a = find_blocker(o, b, &k);
	if (a) {
		b->blocker = a->id;
		b->kind = (uint8_t)k;
		b->cb_held = true;
		b->fl_held |= k == RP_DEP_FLUSHES;
		*kind = k;
		return 0;
	}
	b->td_wait = depth_held(o, b);
	if (b->td_wait) {
		/* like a conflict: it goes no sooner than when the hold cleared */
		b->kind = RP_DEP_CAUSAL;
		b->cb_held = true;
		*kind = RP_DEP_CAUSAL;
		return 0;
	}
	if (b->cb_held && !b->cb_clear_ns)
		b->cb_clear_ns = now;
	/* the anchor: the causal source's completion, the thread's timeline, or the deadline */
	t = b->deadline;
	if (b->src != NO_ID ? b->src_done_ns == NO_TIME : !b->poff_known) {
		*kind = causal_kind(b); /* a completion, or a release, tells it when */
		return 0;
	}
	if (b->src != NO_ID) {
		t = b->src_done_ns + b->think;
	} else if (o->mode == RP_ORDER_CAUSAL && b->key) {
		int64_t x = (int64_t)b->deadline + b->poff;

		t = x > (int64_t)o->start_ns ? (uint64_t)x : o->start_ns;
	}
	if (t > b->deadline && t > b->cb_clear_ns)
		b->kind = causal_kind(b);
	if (b->cb_clear_ns > t)
		t = b->cb_clear_ns;
	if (t > now) {
		*wake = t;
		*kind = causal_kind(b);
		return 0;
	}
	*eligible = t;
	*kind = b->kind;
	release(o, b, t);
	return 1;
}

/* Parks the held e where what holds it will release it: a completion, a time, or a check. */
static void park(struct rp_order *o, struct ent *e, uint64_t wake)
{
	struct ent *a = NULL;

	if (e->blocker != NO_ID)
		a = get(o, e->blocker);
	else if (e->src != NO_ID && e->src_done_ns == NO_TIME)
		a = get(o, e->src);
	if (unfinished(a)) {
		e->wait_next = a->wait_head;
		a->wait_head = e->id;
	} else if (e->td_wait) {
		struct thr *t = thr_get(o, e->key); /* there: depth_held found it */

		e->wait_next = t->dwait;
		t->dwait = e->id;
	} else if (e->src == NO_ID && !e->poff_known) {
		e->on_rel = true; /* release() of its thread's previous I/O makes it a candidate */
	} else if (wake) {
		timer_push(o, wake, e->id);
	} else {
		cand_push(o, e->id);
	}
}

void rp_order__hold(struct rp_order *o, uint64_t id, uint64_t wake)
{
	struct ent *e = get(o, id);

	if (!e || e->state == ST_HELD)
		return;
	e->state = ST_HELD;
	o->nheld++;
	park(o, e, wake);
}

unsigned int rp_order__held(const struct rp_order *o)
{
	return o->nheld;
}

int rp_order__next_ready(struct rp_order *o, uint64_t now, unsigned int *pos, uint64_t *id,
			 const struct btape_event **ev, uint64_t *deadline, uint64_t *eligible,
			 int *kind, uint64_t *wake)
{
	(void)pos;
	while (o->ntimer && o->timer[0].t <= now)
		cand_push(o, timer_pop(o));
	while (o->ncand) {
		uint64_t w, hid = cand_pop(o);
		struct ent *e = get(o, hid);

		if (!e || e->state != ST_HELD)
			continue;
		if (rp_order__check(o, hid, now, eligible, &w, kind)) {
			o->nheld--;
			e->state = ST_FLIGHT;
			*id = hid;
			*ev = &e->ev;
			*deadline = e->deadline;
			return 1;
		}
		park(o, e, w);
	}
	if (o->ntimer && (!*wake || o->timer[0].t < *wake))
		*wake = o->timer[0].t;
	return 0;
}

/* The held I/Os of a waiter list (linked by wait_next) become candidates; the list empties. */
static void wake_list(struct rp_order *o, uint64_t *head)
{
	for (uint64_t x = *head; x != NO_ID;) {
		struct ent *b = get(o, x);

		if (!b)
			break;
		x = b->wait_next;
		if (b->state == ST_HELD)
			cand_push(o, b->id);
	}
	*head = NO_ID;
}

/* e finished: off its thread's unfinished I/Os; the I/Os its thread's depth held, checked. */
static void thread_unlink(struct rp_order *o, struct ent *e)
{
	struct thr *t;
	struct ent *n;

	if (o->mode != RP_ORDER_CAUSAL || e->tdepth == UINT32_MAX || !(t = thr_get(o, e->key)))
		return;
	if ((n = get(o, e->uprev)))
		n->unext = e->unext;
	else
		t->uhead = e->unext;
	if ((n = get(o, e->unext)))
		n->uprev = e->uprev;
	else
		t->utail = e->uprev;
	e->uprev = e->unext = NO_ID;
	wake_list(o, &t->dwait);
}

void rp_order__done(struct rp_order *o, uint64_t id, uint64_t t)
{
	struct ent *e = get(o, id);
	uint64_t x;

	if (!e || e->state == ST_DONE)
		return;
	if (e->state == ST_HELD)
		o->nheld--; /* not expected: a held I/O was never issued */
	e->state = ST_DONE;
	e->done_ns = t;
	index_remove(o, e);
	thread_unlink(o, e);
	/* dependants keep the time: the ring may reuse this slot while they wait */
	for (x = e->dep_head; x != NO_ID;) {
		struct ent *b = get(o, x);

		if (!b)
			break;
		x = b->dep_next;
		if (b->src == id)
			b->src_done_ns = t;
	}
	e->dep_head = NO_ID;
	wake_list(o, &e->wait_head);
}

unsigned int rp_order__threads(const struct rp_order *o)
{
	return o->nthr;
}
