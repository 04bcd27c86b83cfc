// SPDX-License-Identifier: GPL-2.0-only
/*
 * Decode floor for the analyzer benchmark: read every batch of a trace, touch each event.
 * An optional BTAPE_HAS_* mask (0x1a4: the fields analyze skips) is passed to
 * btape_reader__skip_fields; without it every field is decoded.
 */
#include "btape.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	struct btape_reader *r;
	const struct btape_event *evs;
	char msg[BTAPE_ERRMSG_LEN] = "";
	uint64_t n = 0, sum = 0;
	int k;

	if (argc < 2 || argc > 3 || btape_reader__open(&r, argv[1], msg, sizeof(msg)) ||
	    btape_reader__skip_fields(r, argc == 3 ? (uint32_t)strtoul(argv[2], NULL, 0) : 0)) {
		fprintf(stderr, "usage: read_floor FILE [SKIP_MASK] (%s)\n", msg);
		return 2;
	}
	while ((k = btape_reader__next_batch(r, &evs)) > 0) {
		for (int i = 0; i < k; i++)
			sum += evs[i].bytes;
		n += (uint64_t)k;
	}
	btape_reader__close(r);
	printf("%llu events %llu bytes\n", (unsigned long long)n, (unsigned long long)sum);
	return k < 0;
}
