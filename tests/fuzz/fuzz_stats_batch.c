// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the analysis's batch path: the trace's events given to
 * stats__add_batch() (the block fast path, runs of events with the same fields) and to
 * stats__add() one at a time (the reference) must give the same report, JSON byte for byte and
 * every heat map; a difference aborts (a finding). The batch is cut where the input's last
 * byte says, so that runs begin and end anywhere; the devices are declared as analyze does,
 * on two hosts for one input in two.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "btape.h"
#include "fuzz_report.h"
#include "fuzz_trace.h"
#include "stats.h"

#define MAX_EVENTS 200000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char p[64], msg[BTAPE_ERRMSG_LEN];
	int fd = fuzz_trace(data, size, 4, NULL, p, sizeof(p));
	size_t cut = size ? 1 + data[size - 1] % 64 : 1; /* events per stats__add_batch call */
	bool hosts = size > 1 && data[size - 2] % 2;
	struct btape_reader *r = NULL;
	const struct btape_meta *meta;
	struct btape_event *e = NULL;
	struct stats *a = NULL, *b = NULL;
	struct an_info info = {0};
	size_t n = 0;
	int rc;

	if (fd < 0)
		return 0;
	if (btape_reader__open(&r, p, msg, sizeof(msg)) || !(e = malloc(MAX_EVENTS * sizeof(*e))))
		goto out;
	meta = btape_reader__meta(r);
	/* comm stays valid until the reader is closed (btape.h) */
	while (n < MAX_EVENTS && (rc = btape_reader__next(r, &e[n])) != 0)
		n += rc > 0;
	if (stats__new(&a, NULL) || stats__new(&b, NULL))
		goto out;
	/* the devices as analyze declares them (a name and size: the heat map's rows), and
	 * for one input in two on two hosts (the per-host rows of a multi-host trace) */
	for (uint32_t d = 0; d < meta->ndevices && d < STATS_MAX_DEVICES; d++) {
		const struct btape_device *dv = &meta->devices[d];

		if (stats__set_device(a, d, dv->name, dv->size_bytes) < 0 ||
		    stats__set_device(b, d, dv->name, dv->size_bytes) < 0)
			goto out;
		if (hosts && (stats__set_host(a, d, d % 2 ? "h1" : "h0") < 0 ||
			      stats__set_host(b, d, d % 2 ? "h1" : "h0") < 0))
			goto out;
	}
	for (size_t i = 0; i < n; i += cut)
		if (stats__add_batch(a, e + i, n - i < cut ? n - i : cut))
			goto out;
	for (size_t i = 0; i < n; i++)
		if (stats__add(b, &e[i]))
			goto out;
	if (!stats__finish(a) && !stats__finish(b))
		fuzz_same_report("fuzz_stats_batch: in batches and one at a time", a, &info, b,
				 &info, p);
out:
	stats__free(a);
	stats__free(b);
	free(e);
	btape_reader__close(r);
	close(fd);
	return 0;
}
