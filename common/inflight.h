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

#define BTAPE_INFLIGHT_MAX (1u << 20) /* completions kept per device */

/*
 * Completion times, sorted: v[head..n); the allocation starts a few slots before v (below).
 * untracked: requests counted at their issue but not kept in flight (BTAPE_INFLIGHT_MAX in
 * flight, or no memory), so later depths are too low.
 */
struct btape_inflight {
	uint64_t *v;
	uint32_t head, n, cap;
	uint64_t untracked;
};

/*
 * In-flight completions as a sorted array v[head..n) (cheaper than a binary heap, measured);
 * v[0..head) are expired. The INFLIGHT_PAD slots from n hold UINT64_MAX: the expiry reads the
 * first four slots from head at once, independent loads and no bound check. INFLIGHT_WIN slots
 * before v[0] (the allocation starts there) let the insertion window read below v[0].
 */
#define INFLIGHT_PAD 4
#define INFLIGHT_WIN 8

static inline void inflight_pad(uint64_t *v, uint32_t n)
{
	for (uint32_t i = 0; i < INFLIGHT_PAD; i++)
		v[n + i] = UINT64_MAX;
}

/* Makes room for one more (compacts or grows); false when the array is at its bound. */
static __attribute__((unused)) bool inflight_make_room(struct btape_inflight *h)
{
	if (h->head) {
		uint32_t live = h->n - h->head;

		memmove(h->v, h->v + h->head, live * sizeof(*h->v));
		h->n = live;
		h->head = 0;
		inflight_pad(h->v, h->n);
		return true;
	}
	uint32_t ncap = h->cap ? h->cap * 2 : 64;
	uint64_t *nv;

	if (ncap > BTAPE_INFLIGHT_MAX ||
	    !(nv = realloc(h->v ? h->v - INFLIGHT_WIN : NULL,
			   (INFLIGHT_WIN + ncap + INFLIGHT_PAD) * sizeof(*nv))))
		return false;
	nv += INFLIGHT_WIN;
	if (!h->cap) {
		memset(nv - INFLIGHT_WIN, 0, INFLIGHT_WIN * sizeof(*nv));
		inflight_pad(nv, 0);
	}
	h->v = nv; /* the slots before v[0] and the pad past n moved along */
	h->cap = ncap;
	return true;
}

static __attribute__((unused)) void inflight_free(struct btape_inflight *h)
{
	if (h->v)
		free(h->v - INFLIGHT_WIN);
	h->v = NULL;
}

static inline void inflight_push(struct btape_inflight *h, uint64_t v)
{
	if (h->n == h->cap && !inflight_make_room(h)) {
		h->untracked++;
		return;
	}
	uint64_t *p = h->v + h->n;

	/*
	 * The insertion point is random on real traces (random device times): a scan from the
	 * end mispredicts its exit about once per push (42% of all mispredicts, measured).
	 * Instead each slot j of an 8-slot window takes max(p[j-1], min(p[j], v)) (p sorted:
	 * the old p[j] below the insertion point, v at it, p[j-1] above), top down so that
	 * each step reads old values: per slot a load, a compare, two cmovs and a store, no
	 * branch, and the loads are of the 8-byte slots the previous push stored (forwarded).
	 * When the insertion point is below the window (13% of pushes on the bench trace), the
	 * window moves up whole and the next 8 slots down are tried. Slots below head are
	 * expired and may hold anything (issue times can go backwards): a 0 under head makes
	 * the step at head right and the steps below it write only expired slots; the scan is
	 * kept for a window that would cross head while the slot under it is later than v.
	 * Measured and not kept: a branchless binary search plus a fixed 16-slot move
	 * (dependent loads, 2.5x the time of the scan); a 16-slot window (twice the
	 * instructions, slower in a micro-benchmark); AVX2 windows (8 slots: no faster; 16:
	 * slower, their unaligned loads straddle the previous push's stores).
	 */
	uint64_t *lo = h->v + h->head;

	lo[-1] = 0;
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

static inline uint32_t inflight_count(const struct btape_inflight *h)
{
	return h->n - h->head;
}

/* Drops the completions at or before t (sorted: those are a prefix). */
static inline void inflight_expire(struct btape_inflight *h, uint64_t t)
{
	if (!h->v)
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

#endif
