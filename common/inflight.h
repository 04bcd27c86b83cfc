/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Requests in flight on a device, by completion time: what the queue depth at an issue is
 * computed from when a trace has no recorded depth (the analyzer, analyze/stats.c) and what
 * the recorder derives it with (recorder/rec_qd.c). In issue order: inflight_expire(h, issue),
 * then the depth is inflight_count(h) + 1, then inflight_push(h, complete). Part of common/
 * (the tools' shared code, not libbiotape).
 */
#ifndef BIOTAPE_INFLIGHT_H
#define BIOTAPE_INFLIGHT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "u64heap.h"

#define BTAPE_INFLIGHT_MAX (1u << 20) /* completions kept per device */

/*
 * The completions in flight, a multiset in two parts: the sorted array v[head..n) (the
 * allocation starts a few slots before v, below), which takes nearly every push, and a
 * binary min-heap hv[0..hn) (u64heap.h) of those that would have gone deep into it (usually
 * none). inflight_settle() moves the heap into the array: then v[head..n) holds every one, sorted,
 * which is what analyze/split.c reads. room: a push with n < room takes the fast path (cap
 * while the heap is empty, else 0); hmin: so does an expiry at t < hmin. untracked: requests
 * counted at their issue but not kept in flight (BTAPE_INFLIGHT_MAX in flight, or no
 * memory), so later depths are too low.
 */
struct btape_inflight {
	uint64_t *v;
	uint32_t head, n, cap, room;
	uint64_t hmin; /* the heap's smallest; UINT64_MAX without one; 0 until v is allocated */
	uint32_t hn, hcap;
	uint64_t *hv;
	uint64_t untracked;
	/*
	 * Slots that every device's arrays and heaps may still take, shared (NULL: no bound but
	 * BTAPE_INFLIGHT_MAX per device). The analyzer's: a 14 KB trace of 4 devices per chunk
	 * with a million never-completing requests each grew 8 MiB per device, up to 1,024
	 * devices (8 GiB).
	 */
	uint64_t *budget;
};

/*
 * The array is cheaper than a binary heap (measured: most insertions are near the top);
 * v[0..head) are expired. The INFLIGHT_PAD slots from n hold UINT64_MAX: the expiry reads the
 * first four slots from head at once, independent loads and no bound check. INFLIGHT_WIN slots
 * before v[0] (the allocation starts there) let the insertion window read below v[0].
 *
 * Bounds, whatever the input (n in flight): an insertion into the array moves fewer than
 * INFLIGHT_DEEP slots; a deeper one goes into the heap, O(log n). A completion leaves the
 * array (O(1)) or the heap (O(log n)) once. The array is compacted only when at least half of
 * it has expired, and grows otherwise (at BTAPE_INFLIGHT_MAX slots the heap takes the pushes
 * until half has expired), so a compaction's moves are paid by the pushes before it: O(log n)
 * amortised per operation. With the array alone an insertion moved every slot above it: a
 * 403-byte trace of 2^20 completions, each earlier than those in flight, took 2 min 19 s
 * (0.3 s now), and 127 in flight in order compacted all of them at every push.
 */
#define INFLIGHT_PAD 4
#define INFLIGHT_WIN 8
#define INFLIGHT_DEEP 256 /* a deeper insertion goes into the heap (a multiple of the window) */
_Static_assert(INFLIGHT_DEEP % INFLIGHT_WIN == 0, "the window moves whole");

static inline void inflight_pad(uint64_t *v, uint32_t n)
{
	for (uint32_t i = 0; i < INFLIGHT_PAD; i++)
		v[n + i] = UINT64_MAX;
}

static inline uint32_t inflight_count(const struct btape_inflight *h)
{
	return h->n - h->head + h->hn;
}

/* The array's allocation to ncap slots (> cap, <= BTAPE_INFLIGHT_MAX); false without memory. */
static __attribute__((unused)) bool inflight_grow(struct btape_inflight *h, uint32_t ncap)
{
	uint64_t *nv;

	if (ncap > BTAPE_INFLIGHT_MAX || (h->budget && *h->budget < ncap - h->cap) ||
	    !(nv = realloc(h->v ? h->v - INFLIGHT_WIN : NULL,
			   (INFLIGHT_WIN + (size_t)ncap + INFLIGHT_PAD) * sizeof(*nv))))
		return false;
	if (h->budget)
		*h->budget -= ncap - h->cap;
	nv += INFLIGHT_WIN;
	if (!h->cap) {
		memset(nv - INFLIGHT_WIN, 0, INFLIGHT_WIN * sizeof(*nv));
		inflight_pad(nv, 0);
		h->hmin = h->hn ? h->hv[0] : UINT64_MAX;
	}
	h->v = nv; /* the slots before v[0] and the pad past n moved along */
	h->cap = ncap;
	h->room = h->hn ? 0 : ncap;
	return true;
}

/*
 * v into the heap. The array is first made large enough for all in flight, so that
 * inflight_settle() needs no memory.
 */
static __attribute__((unused, noinline)) void inflight_push_heap(struct btape_inflight *h,
								 uint64_t v)
{
	uint32_t total = inflight_count(h);

	if (total >= BTAPE_INFLIGHT_MAX) {
		h->untracked++;
		return;
	}
	if (h->cap < total + 1) {
		uint32_t ncap = h->cap ? h->cap : 64;

		while (ncap < total + 1)
			ncap *= 2;
		if (!inflight_grow(h, ncap)) {
			h->untracked++;
			return;
		}
	}
	if (h->hn == h->hcap) {
		uint32_t ncap = h->hcap ? h->hcap * 2 : 64;
		uint64_t *nh = h->budget && *h->budget < ncap - h->hcap
				       ? NULL
				       : realloc(h->hv, (size_t)ncap * sizeof(*nh));

		if (!nh) {
			h->untracked++;
			return;
		}
		if (h->budget)
			*h->budget -= ncap - h->hcap;
		h->hv = nh;
		h->hcap = ncap;
	}
	u64heap_push(h->hv, &h->hn, v);
	h->hmin = h->hv[0];
	h->room = 0; /* every push checks the bound now (the heap counts) */
}

/*
 * inflight_push with n >= room: the heap in use, or the array full. True: v goes into the
 * array (there is room); false: done (into the heap, or not kept).
 */
static __attribute__((unused, noinline)) bool inflight_push_slow(struct btape_inflight *h,
								 uint64_t v, uint32_t deep_at)
{
	uint32_t live = h->n - h->head, total = live + h->hn;

	if (total >= BTAPE_INFLIGHT_MAX) {
		h->untracked++;
		return false;
	}
	if (live >= deep_at && h->v[h->n - deep_at] > v) {
		inflight_push_heap(h, v);
		return false;
	}
	if (h->n == h->cap) {
		if (h->cap && live <= h->cap / 2) { /* compact: as many pushes came before */
			memmove(h->v, h->v + h->head, live * sizeof(*h->v));
			h->n = live;
			h->head = 0;
			inflight_pad(h->v, h->n);
		} else if (h->cap == BTAPE_INFLIGHT_MAX) { /* until half the array has expired */
			inflight_push_heap(h, v);
			return false;
		} else if (!inflight_grow(h, h->cap ? h->cap * 2 : 64)) {
			h->untracked++;
			return false;
		}
	}
	if (h->hn && h->cap < total + 1 && !inflight_grow(h, h->cap * 2)) {
		h->untracked++; /* (cap doubles: total + 1 <= BTAPE_INFLIGHT_MAX, one more each) */
		return false;
	}
	if (!h->hn)
		h->room = h->cap;
	return true;
}

static __attribute__((unused)) void inflight_free(struct btape_inflight *h)
{
	if (h->v)
		free(h->v - INFLIGHT_WIN);
	free(h->hv);
	if (h->budget)
		*h->budget += (uint64_t)h->cap + h->hcap;
	h->v = h->hv = NULL;
	h->head = h->n = h->cap = h->room = h->hn = h->hcap = 0;
	h->hmin = 0;
}

/*
 * Adds a completion: into the array, or into the heap when deep_at (>= INFLIGHT_DEEP) of the
 * array's slots are above it. inflight_push() is deep_at = INFLIGHT_DEEP; UINT32_MAX keeps
 * every completion in the array, moving any number of slots (a slice's warm-up,
 * analyze/stats.c: its entry state is read from the array).
 */
static inline __attribute__((always_inline)) void inflight_push_k(struct btape_inflight *h,
								  uint64_t v, uint32_t deep_at)
{
	if (__builtin_expect(h->n >= h->room, 0) && !inflight_push_slow(h, v, deep_at))
		return;
	uint64_t *p = h->v + h->n;

	/*
	 * The insertion point is random on real traces (random device times): a scan from the
	 * end mispredicts its exit about once per push (42% of all mispredicts, measured).
	 * Instead each slot j of an 8-slot window takes max(p[j-1], min(p[j], v)) (p sorted:
	 * the old p[j] below the insertion point, v at it, p[j-1] above), top down so that
	 * each step reads old values: per slot a load, a compare, two cmovs and a store, no
	 * branch, and the loads are of the 8-byte slots the previous push stored (forwarded).
	 * When the insertion point is below the window (13% of pushes on the bench trace), the
	 * window moves up whole and the next 8 slots down are tried, fewer than
	 * deep_at / INFLIGHT_WIN times: a deeper one goes into the heap (tested here only, off
	 * the common path). Slots below head are expired and may hold anything (issue times can
	 * go backwards): a 0 under head makes the step at head right and the steps below it
	 * write only expired slots; the scan is kept for a window that would cross head while
	 * the slot under it is later than v.
	 * Measured and not kept: a branchless binary search plus a fixed 16-slot move
	 * (dependent loads, 2.5x the time of the scan); a 16-slot window (twice the
	 * instructions, slower in a micro-benchmark); AVX2 windows (8 slots: no faster; 16:
	 * slower, their unaligned loads straddle the previous push's stores).
	 */
	uint64_t *lo = h->v + h->head;

	lo[-1] = 0;
	if (__builtin_expect(p[-INFLIGHT_WIN] > v, 0) && h->n - h->head >= deep_at &&
	    h->v[h->n - deep_at] > v) {
		inflight_push_heap(h, v);
		return;
	}
	while (__builtin_expect(p[-INFLIGHT_WIN] > v, 0)) {
		if (p - INFLIGHT_WIN < lo) { /* only when issue times went backwards */
			while (p > lo && p[-1] > v) {
				*p = p[-1];
				p--;
			}
			*p = v;
			goto done;
		}
#pragma GCC unroll 8
		for (int j = 0; j > -INFLIGHT_WIN; j--) /* the whole window moves up */
			p[j] = p[j - 1];
		p -= INFLIGHT_WIN; /* p[0] now is larger than v, as the pad was */
	}
	uint64_t m = v; /* min(p[j], v), first for j = 0: p[0] is larger than v */

#pragma GCC unroll 8
	for (int j = 0; j > -INFLIGHT_WIN; j--) {
		uint64_t b = p[j - 1];
		bool above = b > v; /* one compare for both selects */

		p[j] = above ? b : m;
		m = above ? v : b;
	}
done:
	h->n++;
	h->v[h->n + INFLIGHT_PAD - 1] = UINT64_MAX; /* the rest of the pad was there already */
}

static inline __attribute__((always_inline)) void inflight_push(struct btape_inflight *h,
								uint64_t v)
{
	inflight_push_k(h, v, INFLIGHT_DEEP);
}

/* True when inflight_push(h, v) would put v into the heap (INFLIGHT_DEEP slots above it). */
static inline bool inflight_deep(const struct btape_inflight *h, uint64_t v)
{
	return h->n - h->head >= INFLIGHT_DEEP && h->v[h->n - INFLIGHT_DEEP] > v;
}

/* The heap's part of inflight_expire (t >= hmin: in it, or no array yet). False: no array. */
static __attribute__((unused, noinline)) bool inflight_expire_heap(struct btape_inflight *h,
								   uint64_t t)
{
	if (!h->v)
		return false;
	if (t == UINT64_MAX)
		h->hn = 0;
	while (h->hn && h->hv[0] <= t)
		u64heap_pop(h->hv, &h->hn);
	h->hmin = h->hn ? h->hv[0] : UINT64_MAX;
	if (!h->hn)
		h->room = h->cap;
	return true;
}

/* Drops the completions at or before t (in the array, sorted: those are a prefix). */
static inline void inflight_expire(struct btape_inflight *h, uint64_t t)
{
	if (__builtin_expect(t >= h->hmin, 0) && !inflight_expire_heap(h, t))
		return;
	const uint64_t *v = h->v + h->head;

	if (t == UINT64_MAX) {
		h->head = h->n;
		return;
	}
	uint32_t c = (v[0] <= t) + (v[1] <= t) + (v[2] <= t) + (v[3] <= t);

	h->head += c;
	if (c == 4) {
		while (h->v[h->head] <= t)
			h->head++;
	}
}

/*
 * Moves the heap into the array: then v[head..n) holds every completion in flight, sorted.
 * O(n + k log k) for k in the heap, and no memory (the array has room for all).
 */
static __attribute__((unused)) void inflight_settle(struct btape_inflight *h)
{
	if (!h->hn)
		return;
	uint32_t live = h->n - h->head, k = h->hn, m = k;

	if (h->head)
		memmove(h->v, h->v + h->head, live * sizeof(*h->v));
	while (m) { /* heapsort: hv[0..k) descending */
		uint64_t x = u64heap_pop(h->hv, &m);

		h->hv[m] = x;
	}
	/* merged from the top: the array ascending, the heap's values descending */
	uint32_t i = live, j = 0, w = live + k;

	while (j < k) {
		if (i && h->v[i - 1] > h->hv[j])
			h->v[--w] = h->v[--i];
		else
			h->v[--w] = h->hv[j++];
	}
	h->head = 0;
	h->n = live + k;
	h->hn = 0;
	h->hmin = UINT64_MAX;
	h->room = h->cap;
	inflight_pad(h->v, h->n);
}

#endif
