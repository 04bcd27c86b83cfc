// SPDX-License-Identifier: GPL-2.0-only
/*
 * btape2iolog: a .btape trace as a fio iolog v3 (timestamps in us from the first I/O), every
 * I/O aimed at one file or device, for `fio --read_iolog`. Usage: btape2iolog TRACE TARGET
 * (iolog on stdout). Reads, writes, discards (trim) and flushes (sync); other ops are dropped
 * and counted on stderr.
 */
#include "btape.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	static const char *const act[BTAPE_OP__COUNT] = {
		[BTAPE_OP_READ] = "read",
		[BTAPE_OP_WRITE] = "write",
		[BTAPE_OP_FLUSH] = "sync",
		[BTAPE_OP_DISCARD] = "trim",
	};
	struct btape_reader *r = NULL;
	const struct btape_event *evs;
	char msg[BTAPE_ERRMSG_LEN];
	const char *target;
	uint64_t t0 = 0, last = 0, dropped = 0;
	bool first = true;
	int n;

	if (argc != 3) {
		fprintf(stderr, "usage: btape2iolog TRACE TARGET > out.iolog\n");
		return 2;
	}
	target = argv[2];
	if (btape_reader__open(&r, argv[1], msg, sizeof(msg)) < 0) {
		fprintf(stderr, "btape2iolog: %s: %s\n", argv[1], msg);
		return 1;
	}
	printf("fio version 3 iolog\n0 %s add\n0 %s open\n", target, target);
	while ((n = btape_reader__next_batch(r, &evs)) > 0) {
		for (int i = 0; i < n; i++) {
			const struct btape_event *ev = &evs[i];

			if (ev->op >= BTAPE_OP__COUNT || !act[ev->op]) {
				dropped++;
				continue;
			}
			if (first) {
				t0 = ev->issue_ns;
				first = false;
			}
			last = (ev->issue_ns - t0) / 1000;
			if (ev->op == BTAPE_OP_FLUSH)
				printf("%" PRIu64 " %s sync\n", last, target);
			else
				printf("%" PRIu64 " %s %s %" PRIu64 " %" PRIu64 "\n", last, target,
				       act[ev->op], ev->sector * 512, ev->bytes);
		}
	}
	if (n < 0) {
		fprintf(stderr, "btape2iolog: %s: %s\n", argv[1], btape_reader__errmsg(r));
		btape_reader__close(r);
		return 1;
	}
	printf("%" PRIu64 " %s close\n", last, target);
	btape_reader__close(r);
	if (dropped)
		fprintf(stderr, "btape2iolog: %" PRIu64 " I/Os fio cannot issue were dropped\n",
			dropped);
	return 0;
}
