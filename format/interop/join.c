// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Request joining for blktrace and blkparse: the Q (queue), D (issue) and C (complete) events
 * of one request become one record. Requests are keyed by (device, current sector) as blkparse
 * and btt do (the traces carry no request pointer). Merges drop the merged bio's Q, a front
 * merge moves the request's key, a partial completion moves it past the completed part, a
 * remap carries the submitter's pid/comm to the target device. An open-addressing table with
 * a fixed cap and time-based expiry keeps memory bounded.
 */
#include "interop_internal.h"

#include <stdlib.h>

#define JOIN_INIT_SLOTS 4096u
#define JOIN_MAX_SLOTS (1u << 20)	    /* at most half used: 512 Ki requests in flight */
#define JOIN_EXPIRE_NS (30ull * 1000000000) /* a request idle this long is given up */
#define JOIN_SWEEP_EVENTS (1u << 20)	    /* expiry sweep period, in events */
#define COMM_LEN 32

struct pend {
	uint64_t devkey, sector; /* key; devkey 0 with used 0 = empty */
	uint64_t start_sector;	 /* first sector of the request (after front merges) */
	uint64_t bytes;		 /* request size */
	uint64_t rem;		 /* bytes not yet completed */
	uint64_t q_ns, d_ns, last_ns;
	int dev;
	uint32_t flags, pid, cpu;
	uint8_t op;
	bool used, has_q, has_d, has_pid, requeued;
	char comm[COMM_LEN]; /* "" unknown */
};

struct join {
	struct pend *slots;
	uint32_t cap, count;
	uint64_t now_ns;
	uint64_t events;
};

int join_new(struct join **jp)
{
	struct join *j = calloc(1, sizeof(*j));

	if (!j)
		return -ENOMEM;
	j->cap = JOIN_INIT_SLOTS;
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

static uint32_t hash(uint64_t devkey, uint64_t sector)
{
	uint64_t h = (sector ^ (devkey * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;

	return (uint32_t)(h >> 32);
}

static long find(struct join *j, uint64_t devkey, uint64_t sector)
{
	uint32_t mask = j->cap - 1, i = hash(devkey, sector) & mask;

	for (;;) {
		struct pend *p = &j->slots[i];

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

	j->slots[i].used = false;
	j->count--;
	for (;;) {
		uint32_t h;

		k = (k + 1) & mask;
		if (!j->slots[k].used)
			return;
		h = hash(j->slots[k].devkey, j->slots[k].sector) & mask;
		/* can slot k move to the hole at i? yes unless h lies cyclically in (i, k] */
		if ((i <= k) ? (h > i && h <= k) : (h > i || h <= k))
			continue;
		j->slots[i] = j->slots[k];
		j->slots[k].used = false;
		i = k;
	}
}

static int grow(struct join *j)
{
	struct pend *old = j->slots;
	uint32_t oldcap = j->cap;

	j->slots = calloc((size_t)oldcap * 2, sizeof(*j->slots));
	if (!j->slots) {
		j->slots = old;
		return -ENOMEM;
	}
	j->cap = oldcap * 2;
	j->count = 0;
	for (uint32_t i = 0; i < oldcap; i++) {
		if (old[i].used) {
			uint32_t mask = j->cap - 1, k = hash(old[i].devkey, old[i].sector) & mask;

			while (j->slots[k].used)
				k = (k + 1) & mask;
			j->slots[k] = old[i];
			j->count++;
		}
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

/* Gives up requests idle for JOIN_EXPIRE_NS: issued ones are written without completion. */
static int sweep(struct imp *im, bool all)
{
	struct join *j = im->join;
	int err;

	for (uint32_t i = 0; i < j->cap;) {
		struct pend *p = &j->slots[i];

		if (p->used && (all || p->last_ns + JOIN_EXPIRE_NS < j->now_ns)) {
			struct pend copy = *p;

			im->st.unmatched++;
			del(j, i);
			if (copy.has_d || copy.has_q) {
				if (copy.has_d) {
					err = emit(im, &copy, false, 0, false, 0);
					if (err)
						return err;
				}
			}
			continue; /* slot i now holds a shifted entry (or is empty) */
		}
		i++;
	}
	return 0;
}

static struct pend *add(struct imp *im, uint64_t devkey, uint64_t sector)
{
	struct join *j = im->join;
	uint32_t mask, k;

	if ((j->count + 1) * 2 > j->cap) {
		if (j->cap >= JOIN_MAX_SLOTS || grow(j))
			return NULL;
	}
	mask = j->cap - 1;
	k = hash(devkey, sector) & mask;
	while (j->slots[k].used)
		k = (k + 1) & mask;
	memset(&j->slots[k], 0, sizeof(j->slots[k]));
	j->slots[k].used = true;
	j->slots[k].devkey = devkey;
	j->slots[k].sector = sector;
	j->count++;
	return &j->slots[k];
}

/* Re-keys entry i to (devkey, sector); returns the new pointer (or NULL if occupied). */
static struct pend *rekey(struct imp *im, long i, uint64_t devkey, uint64_t sector)
{
	struct join *j = im->join;
	struct pend copy = j->slots[i], *p;

	if (find(j, devkey, sector) >= 0)
		return NULL;
	del(j, (uint32_t)i);
	p = add(im, devkey, sector);
	if (!p)
		return NULL; /* cannot happen: a slot was just freed */
	copy.devkey = devkey;
	copy.sector = sector;
	*p = copy;
	return p;
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

	if (e->time_ns > j->now_ns)
		j->now_ns = e->time_ns;
	if (++j->events % JOIN_SWEEP_EVENTS == 0 || j->count * 2 + 2 > JOIN_MAX_SLOTS) {
		err = sweep(im, false);
		if (err)
			return err;
	}
	i = find(j, e->devkey, e->sector);
	p = i >= 0 ? &j->slots[i] : NULL;
	switch (e->act) {
	case JA_QUEUE:
		if (p && (p->has_q || p->has_d)) {
			im->st.unmatched++; /* a second bio at an in-flight position */
			return 0;
		}
		if (!p) {
			p = add(im, e->devkey, e->sector);
			if (!p) {
				im->st.unmatched++;
				return 0;
			}
			set_comm(p, e);
		} else if (!p->has_pid && !p->comm[0]) {
			set_comm(p, e); /* keep a remap's attribution otherwise */
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
			struct pend *q = rekey(im, r, e->devkey, e->sector);

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
			p->last_ns = e->time_ns;
		}
		return 0;
	case JA_ISSUE:
		if (p && p->has_d) {
			im->st.unmatched++; /* issued twice without completion or requeue */
			return 0;
		}
		if (!p) {
			p = add(im, e->devkey, e->sector);
			if (!p) {
				im->st.unmatched++;
				return 0;
			}
			p->start_sector = e->sector;
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

			p->last_ns = e->time_ns;
			q = rekey(im, i, e->devkey, next);
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

			p = add(im, e->devkey, e->sector);
			if (!p)
				return 0;
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

int join_finish(struct imp *im)
{
	return im->join ? sweep(im, true) : 0;
}
