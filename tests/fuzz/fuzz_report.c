// SPDX-License-Identifier: GPL-2.0-only
#include "fuzz_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"

/* The JSON report of a finished analysis, in a malloc'd buffer. */
static char *json_of(const struct stats *s, const struct an_info *info, char *path, size_t *len)
{
	char *paths[1] = {path}, *buf = NULL;
	struct report r = {.s = s, .info = info, .paths = paths, .npaths = 1};
	FILE *fp = open_memstream(&buf, len);

	if (!fp)
		abort();
	render_json(fp, &r);
	fclose(fp);
	return buf;
}

/* The first device whose heat map differs, or -1. */
static int heat_differs(const struct stats *a, const struct stats *b)
{
	for (uint32_t i = 0; i < a->ndevs && i < b->ndevs; i++) {
		const struct devstat *x = &a->devs[i], *y = &b->devs[i];

		if (x->used != y->used)
			return (int)i;
		if (x->used &&
		    (x->heat_tshift != y->heat_tshift || x->heat_lshift != y->heat_lshift ||
		     memcmp(x->heat, y->heat, STATS_HEAT_L * STATS_HEAT_T * sizeof(*x->heat))))
			return (int)i;
	}
	return a->ndevs == b->ndevs ? -1 : 0;
}

void fuzz_same_report(const char *what, const struct stats *a, const struct an_info *ia,
		      const struct stats *b, const struct an_info *ib, char *path)
{
	size_t la, lb, k = 0;
	char *x = json_of(a, ia, path, &la), *y = json_of(b, ib, path, &lb);
	int d;

	if (la != lb || memcmp(x, y, la)) {
		while (k < la && k < lb && x[k] == y[k])
			k++;
		fprintf(stderr, "%s: the JSON reports differ at byte %zu:\n  %.120s\n  %.120s\n",
			what, k, x + (k > 60 ? k - 60 : 0), y + (k > 60 ? k - 60 : 0));
		abort();
	}
	free(x);
	free(y);
	if ((d = heat_differs(a, b)) >= 0) {
		fprintf(stderr, "%s: device %d's heat maps differ\n", what, d);
		abort();
	}
}
