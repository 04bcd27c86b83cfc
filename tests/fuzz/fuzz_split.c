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

#include "fuzz_report.h"
#include "fuzz_trace.h"
#include "input.h"
#include "split.h"
#include "stats.h"

#define MAX_SLICES 4

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
	/* the input's last bytes pick the slices and, for one input in four, a byte of the second
	 * slice's pack (24 bits of offset) to change by any value (the first bytes are the
	 * trace's: a .btape's magic number) */
	const uint8_t *z = data + size - (size < 6 ? size : 6);
	int n = 2 + (size ? data[size - 1] % (MAX_SLICES - 1) : 0);
	uint8_t flip = size >= 6 && z[4] % 4 == 0 ? (z[3] ? z[3] : 0x80) : 0;
	size_t flip_at = size >= 6 ? (size_t)z[0] << 16 | (size_t)z[1] << 8 | z[2] : 0;
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
		char what[64];

		snprintf(what, sizeof(what), "fuzz_split: %d slices merged as exact", n);
		fuzz_same_report(what, part[0], &info[0], serial, &sinfo, p);
	}
	for (int r = 0; r < n; r++) {
		stats__free(part[r]);
		split_entry_free(&sl[r].entry);
	}
	stats__free(serial);
	close(fd);
	return 0;
}
