/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A binary min-heap of u64 in a caller's array: H holds *N values, the smallest at h[0]. The
 * caller keeps the array large enough for a push.
 */
#ifndef BTAPE_U64HEAP_H
#define BTAPE_U64HEAP_H

#include <stdint.h>

static inline void u64heap_push(uint64_t *h, unsigned int *n, uint64_t v)
{
	unsigned int i = (*n)++;

	while (i && h[(i - 1) / 2] > v) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

/* Removes and returns the smallest (*n > 0). */
static inline uint64_t u64heap_pop(uint64_t *h, unsigned int *n)
{
	uint64_t top = h[0], last = h[--*n];
	unsigned int i = 0;

	for (;;) {
		unsigned int c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] < h[c])
			c++;
		if (last <= h[c])
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = last;
	return top;
}

#endif
