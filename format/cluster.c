// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The cluster clock of a trace (docs/BTAPE-FORMAT.md, "cluster"): mapping this file's event
 * times onto the reference host's clock.
 */
#include "btape_internal.h"

#include <string.h>

BTAPE_API int64_t btape_cluster_offset_at(const struct btape_cluster *cl, uint64_t local_ns)
{
	uint32_t n = cl->nsync < BTAPE_CLOCK_SYNC_MAX ? cl->nsync : BTAPE_CLOCK_SYNC_MAX;

	if (!n)
		return 0;
	const struct btape_clock_sync *a = &cl->sync[0], *b = &cl->sync[n - 1];

	/* outside the measured span the nearest measurement holds: no extrapolated drift */
	if (n == 1 || local_ns <= a->local_ns || b->local_ns <= a->local_ns)
		return a->offset_ns;
	if (local_ns >= b->local_ns)
		return b->offset_ns;
	__int128 num = (__int128)(local_ns - a->local_ns) * ((__int128)b->offset_ns - a->offset_ns);
	__int128 den = (__int128)(b->local_ns - a->local_ns);
	__int128 q = num / den, r = num % den;

	/* the change since the first sync, rounded to nearest (halves away from zero) */
	if (2 * (r < 0 ? -r : r) >= den)
		q += num < 0 ? -1 : 1;
	return (int64_t)((__int128)a->offset_ns + q); /* between the two offsets: fits */
}

BTAPE_API uint64_t btape_cluster_to_reference(const struct btape_cluster *cl, uint64_t local_ns)
{
	__int128 t = (__int128)local_ns - btape_cluster_offset_at(cl, local_ns);

	if (t < 0)
		return 0;
	if (t > (__int128)UINT64_MAX)
		return UINT64_MAX;
	return (uint64_t)t;
}

BTAPE_API uint64_t btape_cluster_uncertainty(const struct btape_cluster *cl)
{
	uint32_t n = cl->nsync < BTAPE_CLOCK_SYNC_MAX ? cl->nsync : BTAPE_CLOCK_SYNC_MAX;
	uint64_t u = 0;

	for (uint32_t i = 0; i < n; i++)
		if (cl->sync[i].uncertainty_ns > u)
			u = cl->sync[i].uncertainty_ns;
	return u;
}

BTAPE_API double btape_cluster_drift_ppm(const struct btape_cluster *cl)
{
	uint32_t n = cl->nsync < BTAPE_CLOCK_SYNC_MAX ? cl->nsync : BTAPE_CLOCK_SYNC_MAX;

	if (n < 2 || cl->sync[n - 1].local_ns <= cl->sync[0].local_ns)
		return 0;
	return ((double)cl->sync[n - 1].offset_ns - (double)cl->sync[0].offset_ns) * 1e6 /
	       (double)(cl->sync[n - 1].local_ns - cl->sync[0].local_ns);
}
