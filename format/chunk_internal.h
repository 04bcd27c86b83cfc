/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libbiotape: event chunks, what the encoder (chunk_enc.c) and the decoder (chunk_dec.c)
 * share: the column ids and names, and the per-device sector prediction table.
 *
 * Event chunk encoding (docs/BTAPE-FORMAT.md "Event chunk"). A chunk is a msgpack map
 * holding one bin blob per field; a blob is a small header (kind, width, shift, base, origin)
 * followed by the field's values as fixed-width little-endian integers split into byte planes
 * (all first bytes, then all second bytes, ...), so zstd sees each plane as its own stream.
 */
#ifndef BTAPE_CHUNK_INTERNAL_H
#define BTAPE_CHUNK_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "btape_internal.h"

enum col_id {
	C_PRESENT,
	C_ISSUE,
	C_DEV,
	C_OP,
	C_BYTES,
	C_SECTOR,
	C_COMPLETE,
	C_INSERT,
	C_FLAGS,
	C_ERROR,
	C_PID,
	C_TID,
	C_COMM,
	C_CGROUP,
	C_CPU,
	C_QD,
	C_WAKE,  /* format 1.2: issue_ns - wake_ns, zig-zag */
	C_SLEPT, /* format 1.2: slept_ns */
	C__COUNT
};

static const char *const col_names[C__COUNT] = {
	"present", "issue", "dev", "op",  "bytes", "sector", "complete", "insert",
	"flags",   "error", "pid", "tid", "comm",  "cgroup", "cpu",	 "qd",
	"wake",	   "slept",
};

/* Presence bit of an optional column; 0 for the always-present ones. */
static const uint32_t col_bit[C__COUNT] = {
	[C_COMPLETE] = BTAPE_HAS_COMPLETE, [C_INSERT] = BTAPE_HAS_INSERT,
	[C_FLAGS] = BTAPE_HAS_FLAGS,	   [C_ERROR] = BTAPE_HAS_ERROR,
	[C_PID] = BTAPE_HAS_PID,	   [C_TID] = BTAPE_HAS_TID,
	[C_COMM] = BTAPE_HAS_COMM,	   [C_CGROUP] = BTAPE_HAS_CGROUP,
	[C_CPU] = BTAPE_HAS_CPU,	   [C_QD] = BTAPE_HAS_QD,
	[C_WAKE] = BTAPE_HAS_WAKE,	   [C_SLEPT] = BTAPE_HAS_WAKE,
};

_Static_assert(C__COUNT == BTAPE_NCOLS && C_COMM == BTAPE_COL_COMM, "column ids");

/* ---------------------------------------------------------------------------------------- */
/* Per-device prediction table (sector column).                                             */

struct pred_tab {
	uint32_t *dev;
	uint64_t *pred;
	uint8_t *used;
	uint32_t cap, n;
	uint32_t last_dev;
	uint32_t last_slot;
	uint32_t seed; /* random, per table: a trace cannot choose devices that share a slot */
	bool have_last;
};

/*
 * A device's home slot: murmur3's finaliser of dev ^ seed, whose low bits depend on every bit
 * of dev. The bare multiply used before kept only dev's low bits there: 32,768 devices that
 * were multiples of 2^17 shared one chain, and a 1 KiB file took 10 s to read.
 */
static inline uint32_t pred_home(const struct pred_tab *t, uint32_t dev, uint32_t cap)
{
	uint32_t h = dev ^ t->seed;

	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h & (cap - 1);
}

static inline void pred_reset(struct pred_tab *t)
{
	if (t->used)
		memset(t->used, 0, t->cap);
	t->n = 0;
	t->have_last = false;
}

static inline void pred_free(struct pred_tab *t)
{
	free(t->dev);
	free(t->pred);
	free(t->used);
	memset(t, 0, sizeof(*t));
}

static inline int pred_grow(struct pred_tab *t)
{
	uint32_t cap = t->cap ? t->cap * 2 : 16;
	uint32_t *dev = calloc(cap, sizeof(*dev));
	uint64_t *pred = calloc(cap, sizeof(*pred));
	uint8_t *used = calloc(cap, 1);

	if (!dev || !pred || !used) {
		free(dev);
		free(pred);
		free(used);
		return -ENOMEM;
	}
	if (!t->cap && getrandom(&t->seed, sizeof(t->seed), GRND_NONBLOCK) != sizeof(t->seed))
		t->seed = (uint32_t)(uintptr_t)t ^ (uint32_t)getpid() ^ (uint32_t)clock();
	for (uint32_t i = 0; i < t->cap; i++) {
		uint32_t j;

		if (!t->used[i])
			continue;
		for (j = pred_home(t, t->dev[i], cap); used[j]; j = (j + 1) & (cap - 1))
			;
		used[j] = 1;
		dev[j] = t->dev[i];
		pred[j] = t->pred[i];
	}
	free(t->dev);
	free(t->pred);
	free(t->used);
	t->dev = dev;
	t->pred = pred;
	t->used = used;
	t->cap = cap;
	t->have_last = false;
	return 0;
}

/* pred_slot() for a device other than the last one (out of line: rare). */
static __attribute__((noinline)) int64_t pred_find(struct pred_tab *t, uint32_t dev, uint64_t origin)
{
	uint32_t j;

	if ((t->n + 1) * 2 > t->cap && pred_grow(t))
		return -ENOMEM;
	for (j = pred_home(t, dev, t->cap); t->used[j]; j = (j + 1) & (t->cap - 1))
		if (t->dev[j] == dev)
			goto found;
	t->used[j] = 1;
	t->dev[j] = dev;
	t->pred[j] = origin;
	t->n++;
found:
	t->have_last = true;
	t->last_dev = dev;
	t->last_slot = j;
	return j;
}

/* Slot of dev (inserted with pred = origin when new), or -ENOMEM. Inline: the same device. */
static inline int64_t pred_slot(struct pred_tab *t, uint32_t dev, uint64_t origin)
{
	if (t->have_last && t->last_dev == dev)
		return t->last_slot;
	return pred_find(t, dev, origin);
}
#endif
