// SPDX-License-Identifier: GPL-2.0-only
/* Decode floor for the analyzer benchmark: read every batch of a trace, touch each event. */
#include "btape.h"

#include <stdio.h>

int main(int argc, char **argv)
{
	struct btape_reader *r;
	const struct btape_event *evs;
	const char *msg = NULL;
	uint64_t n = 0, sum = 0;
	int k;

	if (argc != 2 || btape_reader__open(&r, argv[1], &msg)) {
		fprintf(stderr, "usage: read_floor FILE (%s)\n", msg ? msg : "");
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
