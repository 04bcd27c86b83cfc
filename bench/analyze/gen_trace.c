// SPDX-License-Identifier: GPL-2.0-only
/*
 * Synthetic trace for the analyzer benchmark and tests: gen_trace N OUT [SEED] [RANGE_GIB].
 * Known distribution: reads 70% / writes 30%; sizes 4k 60%, 8k 20%, 16k 10%, 64k 10%;
 * 25% of I/Os continue their stream sequentially, the rest are random, 20% of the random
 * ones into the first 1% of the range; 200k IOPS with jitter; device time 50-250 us;
 * queue time 2-10 us; 8 processes; 2 devices.
 * GEN_MODE=flush: every event a flush; GEN_MODE=bare: no completion, insert or process fields;
 * GEN_MODE=idle2: a third device declared that gets no I/O.
 */
#include "btape.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

int main(int argc, char **argv)
{
	struct btape_meta meta = {0};
	struct btape_device dev = {0};
	struct btape_writer *w = NULL;
	static const char *comms[8] = {"postgres", "fio",	  "kworker/u8:1", "java",
				       "mysqld",   "rocksdb:low", "jbd2/vda1-8",  "qemu-kvm"};
	uint64_t n, range_gib = 16;
	int err;

	if (argc < 3) {
		fprintf(stderr, "usage: gen_trace N OUT [SEED] [RANGE_GIB]\n");
		return 2;
	}
	const char *mode = getenv("GEN_MODE") ? getenv("GEN_MODE") : "";

	n = strtoull(argv[1], NULL, 0);
	if (argc > 3)
		rng = strtoull(argv[3], NULL, 0) * 2654435761ull + 1;
	if (argc > 4)
		range_gib = strtoull(argv[4], NULL, 0);
	snprintf(meta.tool, sizeof(meta.tool), "gen_trace");
	snprintf(meta.source, sizeof(meta.source), "synthetic");
	snprintf(meta.hostname, sizeof(meta.hostname), "bench");
	for (int d = 0; d < (strcmp(mode, "idle2") == 0 ? 3 : 2); d++) {
		snprintf(dev.name, sizeof(dev.name), "synth%d", d);
		dev.dev_t_major = 259;
		dev.dev_t_minor = (uint32_t)d;
		dev.size_bytes = range_gib << 30;
		dev.logical_block = 512;
		dev.physical_block = 4096;
		dev.rotational = 0;
		if (btape_meta__add_device(&meta, &dev) < 0)
			return 1;
	}
	err = btape_writer__open(&w, argv[2], &meta, NULL);
	if (err) {
		fprintf(stderr, "gen_trace: open %s: %s\n", argv[2], strerror(-err));
		return 1;
	}
	uint64_t t = 1000000000ull, last_end[2][2] = {{0}};
	uint64_t range_sectors = (range_gib << 30) / 512;

	for (uint64_t i = 0; i < n; i++) {
		struct btape_event e = {0};
		uint64_t r = next();
		int dir = (r % 100) < 70 ? 0 : 1;
		unsigned int dv = (unsigned int)((r >> 8) & 1);
		uint64_t sz = (r >> 16) % 100;

		sz = sz < 60 ? 4096 : sz < 80 ? 8192 : sz < 90 ? 16384 : 65536;
		t += 2500 + (next() % 5000); /* mean 5 us: 200k IOPS */
		e.issue_ns = t;
		e.op = dir ? BTAPE_OP_WRITE : BTAPE_OP_READ;
		e.dev = dv;
		e.bytes = sz;
		uint64_t p = (r >> 24) % 100;

		if (p < 25 && last_end[dv][dir] + sz / 512 < range_sectors) {
			e.sector = last_end[dv][dir];
		} else {
			uint64_t span = (r >> 32) % 100 < 20 ? range_sectors / 100 : range_sectors;

			e.sector = (next() % (span - 128)) & ~7ull;
		}
		last_end[dv][dir] = e.sector + sz / 512;
		e.insert_ns = t - 2000 - next() % 8000;
		e.complete_ns = t + 50000 + next() % 200000;
		e.pid = 1000 + (uint32_t)(i % 8);
		e.tid = e.pid;
		e.comm = comms[i % 8];
		e.cpu = (uint32_t)(i % 2);
		e.flags = dir ? BTAPE_FLAG_SYNC : 0;
		e.present = BTAPE_HAS_COMPLETE | BTAPE_HAS_INSERT | BTAPE_HAS_PID | BTAPE_HAS_TID |
			    BTAPE_HAS_COMM | BTAPE_HAS_CPU | BTAPE_HAS_FLAGS;
		if (strcmp(mode, "flush") == 0) {
			e.op = BTAPE_OP_FLUSH;
			e.bytes = 0;
			e.sector = 0;
		} else if (strcmp(mode, "bare") == 0) {
			e.present = 0;
		}
		err = btape_writer__add(w, &e);
		if (err) {
			fprintf(stderr, "gen_trace: add: %s\n", btape_writer__errmsg(w));
			btape_writer__abort(w);
			return 1;
		}
	}
	err = btape_writer__close(w);
	btape_meta__free(&meta);
	if (err) {
		fprintf(stderr, "gen_trace: close: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}
