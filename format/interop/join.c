// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Request joining for blktrace and blkparse: the Q (queue), D (issue) and C (complete) events
 * of one request become one record. Requests are keyed by (device, current sector) as blkparse
 * and btt do (the traces carry no request pointer). Merges drop the merged bio's Q, a front
 * merge moves the request's key, a partial completion moves it past the completed part, a
 * remap carries the submitter's pid/comm to the target device. Memory is bounded: at most
 * JOIN_MAX_INFLIGHT requests are kept, a request idle for JOIN_EXPIRE_NS of trace time is given
 * up, and when the table is full the least recently active one is (docs/INTEROP.md). Both
 * take the head of a list kept in order of last activity: O(1) work per event.
 */
#include "interop_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define JOIN_INIT_SLOTS 4096u
#define JOIN_MAX_INFLIGHT BTAPE_IMPORT_INFLIGHT_MAX /* beyond, the least recently active goes */
#define JOIN_MAX_SLOTS (2 * JOIN_MAX_INFLIGHT)	    /* the table is at most half full */
#define JOIN_EXPIRE_NS (30ull * 1000000000)	    /* a request idle this long is given up */
#define COMM_LEN 32
#define NIL UINT32_MAX

_Thread_local uint64_t join_steps;

struct pend {
	uint64_t devkey, sector; /* key; devkey 0 with used 0 = empty */
	uint64_t start_sector;	 /* first sector of the request (after front merges) */
	uint64_t bytes;		 /* request size */
	uint64_t rem;		 /* bytes not yet completed */
	uint64_t q_ns, d_ns, last_ns;
	uint32_t prev, next; /* age list (slot indexes): least recently active first */
	int dev;
	uint32_t flags, pid, cpu;
	uint8_t op;
	bool used, has_q, has_d, has_pid, requeued;
	char comm[COMM_LEN]; /* "" unknown */
};

/*
 * An open-addressing table (linear probing, at most half full) whose entries are also on a
 * doubly linked list in order of last activity: expiry and eviction take the list's head,
 * so no event ever walks the table.
 */
struct join {
	struct pend *slots;
	uint32_t cap, count;
	uint32_t head, tail; /* age list; NIL when empty */
	uint64_t now_ns;
	uint64_t seed; /* random, per table: a trace cannot choose sectors that share a slot */
};

int join_new(struct join **jp)
{
	struct join *j = calloc(1, sizeof(*j));

	if (!j)
		return -ENOMEM;
	j->cap = JOIN_INIT_SLOTS;
	j->head = j->tail = NIL;
	if (getrandom(&j->seed, sizeof(j->seed), GRND_NONBLOCK) != sizeof(j->seed))
		j->seed = (uint64_t)(uintptr_t)j ^ ((uint64_t)getpid() << 32) ^ (uint64_t)clock();
	j->slots = calloc(j->cap, sizeof(*j->slots));
	if (!j->slots) {
		free(j);
		return -ENOMEM;
	}
	*jp = j;
	return 0;
}

void join_free(struct join *j)
{
	if (!j)
		return;
	free(j->slots);
	free(j);
}

/* A seeded 64-bit finalizer (murmur3's fmix64): sector times a constant, as it was, let
 * sectors i << (32 + b) share one slot of a 2^b table. */
static uint32_t hash(const struct join *j, uint64_t devkey, uint64_t sector)
{
	uint64_t h = sector ^ (devkey * 0x9e3779b97f4a7c15ull) ^ j->seed;

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return (uint32_t)h;
}

/* ---- the age list ---- */

static void link_tail(struct join *j, uint32_t i)
{
	struct pend *p = &j->slots[i];

	p->prev = j->tail;
	p->next = NIL;
	if (j->tail != NIL)
		j->slots[j->tail].next = i;
	else
		j->head = i;
	j->tail = i;
}

static void unlink_entry(struct join *j, uint32_t i)
{
	const struct pend *p = &j->slots[i];

	if (p->prev != NIL)
		j->slots[p->prev].next = p->next;
	else
		j->head = p->next;
	if (p->next != NIL)
		j->slots[p->next].prev = p->prev;
	else
		j->tail = p->prev;
}

/* The entry now in slot i moved there from another slot: its neighbours point at i. */
static void relink(struct join *j, uint32_t i)
{
	const struct pend *p = &j->slots[i];

	if (p->prev != NIL)
		j->slots[p->prev].next = i;
	else
		j->head = i;
	if (p->next != NIL)
		j->slots[p->next].prev = i;
	else
		j->tail = i;
}

/* Entry i was active at time t: it goes to the list's tail. */
static void touch(struct join *j, uint32_t i, uint64_t t)
{
	j->slots[i].last_ns = t;
	if (j->tail != i) {
		unlink_entry(j, i);
		link_tail(j, i);
	}
}

/* ---- the table ---- */

static long find(struct join *j, uint64_t devkey, uint64_t sector)
{
	uint32_t mask = j->cap - 1, i = hash(j, devkey, sector) & mask;

	for (;;) {
		struct pend *p = &j->slots[i];

		join_steps++;
		if (!p->used)
			return -1;
		if (p->devkey == devkey && p->sector == sector)
			return i;
		i = (i + 1) & mask;
	}
}

/* Backward-shift deletion (linear probing). */
static void del(struct join *j, uint32_t i)
{
	uint32_t mask = j->cap - 1, k = i;

	unlink_entry(j, i);
	j->slots[i].used = false;
	j->count--;
	for (;;) {
		uint32_t h;

		join_steps++;
		k = (k + 1) & mask;
		if (!j->slots[k].used)
			return;
		h = hash(j, j->slots[k].devkey, j->slots[k].sector) & mask;
		/* can slot k move to the hole at i? yes unless h lies cyclically in (i, k] */
		if ((i <= k) ? (h > i && h <= k) : (h > i || h <= k))
			continue;
		j->slots[i] = j->slots[k];
		j->slots[k].used = false;
		relink(j, i);
		i = k;
	}
}

/* Doubles the table; the age list keeps its order. */
static int grow(struct join *j)
{
	struct pend *old = j->slots;
	uint32_t it = j->head, mask = j->cap * 2 - 1;

	j->slots = calloc((size_t)j->cap * 2, sizeof(*j->slots));
	if (!j->slots) {
		j->slots = old;
		return -ENOMEM;
	}
	j->cap *= 2;
	j->head = j->tail = NIL;
	while (it != NIL) {
		const struct pend *o = &old[it];
		uint32_t k = hash(j, o->devkey, o->sector) & mask;

		while (j->slots[k].used) {
			join_steps++;
			k = (k + 1) & mask;
		}
		join_steps++;
		j->slots[k] = *o;
		it = o->next;
		link_tail(j, k);
	}
	free(old);
	return 0;
}

static int emit(struct imp *im, const struct pend *p, bool has_c, uint64_t c_ns, bool has_err,
		int32_t error)
{
	struct btape_event ev = {0};

	ev.dev = (uint32_t)p->dev;
	ev.sector = p->start_sector;
	ev.bytes = p->bytes;
	ev.op = p->op;
	ev.flags = p->flags | (p->requeued ? BTAPE_FLAG_REQUEUED : 0);
	ev.present = BTAPE_HAS_FLAGS;
	if (p->has_d) {
		ev.issue_ns = p->d_ns;
		ev.cpu = p->cpu;
		ev.present |= BTAPE_HAS_CPU;
		if (p->has_q) {
			if (p->q_ns <= p->d_ns) {
				ev.insert_ns = p->q_ns;
				ev.present |= BTAPE_HAS_INSERT;
			} else {
				im->st.inconsistent++;
			}
		}
	} else {
		ev.issue_ns = p->q_ns; /* bio-based device: no dispatch event, queue = issue */
	}
	if (has_c) {
		if (c_ns >= ev.issue_ns) {
			ev.complete_ns = c_ns;
			ev.present |= BTAPE_HAS_COMPLETE;
		} else {
			im->st.inconsistent++;
		}
		if (has_err) {
			ev.error = error;
			ev.present |= BTAPE_HAS_ERROR;
		}
	}
	if (p->has_pid) {
		ev.pid = p->pid;
		ev.present |= BTAPE_HAS_PID;
	}
	if (p->comm[0]) {
		ev.comm = p->comm;
		ev.present |= BTAPE_HAS_COMM;
	}
	return imp_emit(im, &ev);
}

/* Gives up entry i (never completed): an issued request is written without completion. */
static int give_up(struct imp *im, uint32_t i)
{
	struct join *j = im->join;
	struct pend copy = j->slots[i];

	join_steps++;
	im->st.unmatched++;
	del(j, i);
	return copy.has_d ? emit(im, &copy, false, 0, false, 0) : 0;
}

/* Gives up the requests idle for more than JOIN_EXPIRE_NS, oldest activity first. */
static int expire(struct imp *im)
{
	struct join *j = im->join;
	int err;

	while (j->head != NIL && j->now_ns - j->slots[j->head].last_ns > JOIN_EXPIRE_NS) {
		err = give_up(im, j->head);
		if (err)
			return err;
	}
	return 0;
}

/*
 * A new entry for (devkey, sector), the newest on the age list; *pp NULL when none could be
 * made (counted unmatched). With JOIN_MAX_INFLIGHT in flight the least recently active
 * request is given up first (counted as evicted). 0 or -errno.
 */
static int add(struct imp *im, uint64_t devkey, uint64_t sector, struct pend **pp)
{
	struct join *j = im->join;
	uint32_t mask, k;
	int err;

	*pp = NULL;
	if (j->count >= JOIN_MAX_INFLIGHT ||
	    ((j->count + 1) * 2 > j->cap && (j->cap >= JOIN_MAX_SLOTS || grow(j)))) {
		/* full, or no memory to grow: make room (count * 2 <= cap holds, so one does) */
		if (j->head == NIL) {
			im->st.unmatched++;
			return 0;
		}
		im->st.evicted++;
		err = give_up(im, j->head);
		if (err)
			return err;
	}
	mask = j->cap - 1;
	k = hash(j, devkey, sector) & mask;
	while (j->slots[k].used) {
		join_steps++;
		k = (k + 1) & mask;
	}
	memset(&j->slots[k], 0, sizeof(j->slots[k]));
	j->slots[k].used = true;
	j->slots[k].devkey = devkey;
	j->slots[k].sector = sector;
	j->count++;
	link_tail(j, k);
	*pp = &j->slots[k];
	return 0;
}

/*
 * Re-keys entry i to (devkey, sector), active at time t: *pp is the new pointer, or NULL
 * when the key is taken. 0 or -errno.
 */
static int rekey(struct imp *im, long i, uint64_t devkey, uint64_t sector, uint64_t t,
		 struct pend **pp)
{
	struct join *j = im->join;
	struct pend copy = j->slots[i];
	int err;

	*pp = NULL;
	if (find(j, devkey, sector) >= 0)
		return 0;
	del(j, (uint32_t)i);
	err = add(im, devkey, sector, pp); /* a slot was just freed: no eviction */
	if (err || !*pp)
		return err;
	copy.devkey = devkey;
	copy.sector = sector;
	copy.last_ns = t;
	copy.prev = (*pp)->prev;
	copy.next = (*pp)->next;
	**pp = copy;
	return 0;
}

static void set_comm(struct pend *p, const struct jev *e)
{
	if (e->has_pid) {
		p->pid = e->pid;
		p->has_pid = true;
	}
	if (e->comm)
		snprintf(p->comm, sizeof(p->comm), "%s", e->comm);
}

int join_event(struct imp *im, const struct jev *e)
{
	struct join *j = im->join;
	struct pend *p;
	long i;
	int err;

	if (e->act != JA_OTHER) {
		err = imp_extent_check(im, e->sector, e->bytes);
		if (err <= 0)
			return err;
		if (e->act == JA_REMAP) {
			err = imp_extent_check(im, e->from_sector, e->bytes);
			if (err <= 0)
				return err;
		}
	}
	if (e->time_ns > j->now_ns)
		j->now_ns = e->time_ns;
	err = expire(im);
	if (err)
		return err;
	i = find(j, e->devkey, e->sector);
	p = i >= 0 ? &j->slots[i] : NULL;
	switch (e->act) {
	case JA_QUEUE:
		if (p && (p->has_q || p->has_d)) {
			im->st.unmatched++; /* a second bio at an in-flight position */
			return 0;
		}
		if (!p) {
			err = add(im, e->devkey, e->sector, &p);
			if (err || !p)
				return err;
			set_comm(p, e);
		} else {
			if (!p->has_pid && !p->comm[0])
				set_comm(p, e); /* keep a remap's attribution otherwise */
			touch(j, (uint32_t)i, e->time_ns);
		}
		p->has_q = true;
		p->q_ns = e->time_ns;
		p->last_ns = e->time_ns;
		p->dev = e->dev;
		p->start_sector = e->sector;
		p->bytes = p->rem = e->bytes;
		p->op = e->op;
		p->flags = e->flags;
		if (e->op == BTAPE_OP_WRITE && e->bytes == 0 && (e->flags & BTAPE_FLAG_PREFLUSH))
			p->op = BTAPE_OP_FLUSH;
		return 0;
	case JA_BACKMERGE:
		if (p && !p->has_d) {
			del(j, (uint32_t)i);
			im->st.merged++;
		}
		return 0;
	case JA_FRONTMERGE: {
		uint64_t next = e->sector + e->bytes / 512;
		long r;

		if (p && !p->has_d)
			del(j, (uint32_t)i);
		im->st.merged++;
		r = find(j, e->devkey, next);
		if (r >= 0 && !j->slots[r].has_d) {
			struct pend *q;

			err = rekey(im, r, e->devkey, e->sector, e->time_ns, &q);
			if (err)
				return err;
			if (q) {
				q->start_sector = e->sector;
				q->bytes += e->bytes;
				q->rem += e->bytes;
			}
		}
		return 0;
	}
	case JA_REQUEUE:
		if (p) {
			p->has_d = false;
			p->requeued = true;
			touch(j, (uint32_t)i, e->time_ns);
		}
		return 0;
	case JA_ISSUE:
		if (p && p->has_d) {
			im->st.unmatched++; /* issued twice without completion or requeue */
			return 0;
		}
		if (!p) {
			err = add(im, e->devkey, e->sector, &p);
			if (err || !p)
				return err;
			p->start_sector = e->sector;
		} else {
			touch(j, (uint32_t)i, e->time_ns);
		}
		p->has_d = true;
		p->d_ns = e->time_ns;
		p->last_ns = e->time_ns;
		p->cpu = e->cpu;
		p->dev = e->dev;
		p->bytes = p->rem = e->bytes;
		p->start_sector = e->sector;
		p->op = e->op;
		p->flags |= e->flags;
		if (e->op == BTAPE_OP_WRITE && e->bytes == 0 && (e->flags & BTAPE_FLAG_PREFLUSH))
			p->op = BTAPE_OP_FLUSH;
		return 0;
	case JA_COMPLETE: {
		struct pend copy;

		if (!p || (!p->has_d && !p->has_q)) {
			im->st.unmatched++;
			return 0;
		}
		if (e->bytes > 0 && e->bytes < p->rem) { /* partial completion */
			uint64_t next = e->sector + e->bytes / 512;
			struct pend *q;

			err = rekey(im, i, e->devkey, next, e->time_ns, &q);
			if (err)
				return err;
			if (q) {
				q->rem -= e->bytes;
				return 0;
			}
			/* the rest collides with another request: finish this one now */
		}
		copy = *p;
		del(j, (uint32_t)i);
		return emit(im, &copy, true, e->time_ns, e->has_error, e->error);
	}
	case JA_REMAP: {
		long s = find(j, e->from_devkey, e->from_sector);

		im->st.remaps++;
		if (s < 0)
			return 0;
		if (!p) {
			struct pend src = j->slots[s];

			err = add(im, e->devkey, e->sector, &p);
			if (err || !p)
				return err;
			p->pid = src.pid;
			p->has_pid = src.has_pid;
			memcpy(p->comm, src.comm, sizeof(p->comm));
			p->dev = e->dev;
			p->start_sector = e->sector;
			p->last_ns = e->time_ns;
		}
		return 0;
	}
	case JA_OTHER:
		im->st.ignored++;
		return 0;
	}
	return 0;
}

/* End of input: every request still in flight is given up, oldest activity first. */
int join_finish(struct imp *im)
{
	int err;

	while (im->join && im->join->head != NIL) {
		err = give_up(im, im->join->head);
		if (err)
			return err;
	}
	return 0;
}
