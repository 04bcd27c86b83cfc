// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the parallel analysis (analyze/split.h) in one process: the trace is
 * analysed in 2-4 time slices as mpirun's ranks would (an_run() with a slice), each slice but
 * the first packed, and the packs merged into the first in slice order, as `mpirun biotape
 * analyze` does. Where the merge says the result is exact, its JSON report must be the serial
 * analysis's byte for byte: a difference aborts (a finding). When the input asks for it, one
 * byte of one pack is changed first (a rank of another build, a damaged message): the merge
 * must then refuse it or take it, never crash or read past the buffer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_trace.h"
#include "input.h"
#include "render.h"
#include "split.h"
#include "stats.h"

#define MAX_SLICES 4

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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

/* The first device whose heat map (HTML only, not in the JSON) differs, or -1. */
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

/* The slices merged into part[0]: 1 when the merge says it is exact. */
static int merge(struct stats **part, struct an_slice *sl, struct an_info *info, int n,
		 size_t flip_at, uint8_t flip, char *why, size_t whylen)
{
	int exact = 1;

	for (int r = 1; r < n && exact; r++) {
		void *buf = NULL;
		size_t len = 0;

		if (split_pack(part[r], &sl[r], info[r].events_read, info[r].events_selected, &buf,
			       &len))
			return 0;
		if (flip && r == 1 && len)
			((uint8_t *)buf)[flip_at % len] ^= flip;
		exact = !split_merge(part[0], buf, len, &info[0].events_read,
				     &info[0].events_selected, why, whylen);
		free(buf);
	}
	return exact && !split_check(part[0], why, whylen) && !stats__finish(part[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char p[64], msg[512], why[160] = "";
	int fd = fuzz_trace(data, size, 4, NULL, p, sizeof(p));
	/* the input's last bytes pick the slices, and for one input in four a byte of the second
	 * slice's pack to change (the first ones are the trace's: a .btape's magic number) */
	int n = 2 + (size ? data[size - 1] % (MAX_SLICES - 1) : 0);
	uint8_t flip = size > 3 && data[size - 2] % 4 == 0 ? data[size - 3] | 1 : 0;
	size_t flip_at = size ? (size_t)data[size / 2] * 131 : 0;
	struct an_filter f = {0};
	struct stats_opts so = {0};
	struct an_slice sl[MAX_SLICES] = {0};
	struct an_info info[MAX_SLICES], sinfo;
	struct stats *part[MAX_SLICES] = {0}, *serial = NULL;
	char *paths[1] = {p};
	int ok = 1;

	if (fd < 0)
		return 0;
	for (int r = 0; r < n && ok; r++) {
		sl[r].rank = r;
		sl[r].nranks = n;
		f.slice = &sl[r];
		ok = !an_run(paths, 1, &f, &so, &part[r], &info[r], msg, sizeof(msg));
	}
	f.slice = NULL;
	if (ok && merge(part, sl, info, n, flip_at, flip, why, sizeof(why)) && !flip &&
	    !an_run(paths, 1, &f, &so, &serial, &sinfo, msg, sizeof(msg))) {
		size_t la, lb;
		char *a = json_of(part[0], &info[0], p, &la), *b = json_of(serial, &sinfo, p, &lb);

		if (la != lb || memcmp(a, b, la)) {
			size_t k = 0;

			while (k < la && k < lb && a[k] == b[k])
				k++;
			fprintf(stderr,
				"fuzz_split: %d slices merged as exact, but the JSON differs from "
				"the serial analysis at byte %zu:\n  merged: %.120s\n  serial: "
				"%.120s\n",
				n, k, a + (k > 60 ? k - 60 : 0), b + (k > 60 ? k - 60 : 0));
			abort();
		}
		free(a);
		free(b);
		if (heat_differs(part[0], serial) >= 0) {
			fprintf(stderr,
				"fuzz_split: %d slices merged as exact, but device %d's heat map "
				"differs from the serial analysis's\n",
				n, heat_differs(part[0], serial));
			abort();
		}
	}
	for (int r = 0; r < n; r++) {
		stats__free(part[r]);
		split_entry_free(&sl[r].entry);
	}
	stats__free(serial);
	close(fd);
	return 0;
}
