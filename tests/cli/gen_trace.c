// SPDX-License-Identifier: GPL-2.0-only
/*
 * Writes a small trace with exactly known contents for the info/dump tests:
 *   gen_trace OUT N        N events on 2 devices, every 4th without completion/process,
 *                          event i: issue 1e9 + i*1e6 ns, sector i*8, 4096 B,
 *                          op write when i % 3 == 0 else read, pid 100 + i % 2, comm "p<i%2>"
 *   gen_trace --direct OUT N   same, but written in place and killed before the footer
 */
#include "btape.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	struct btape_meta meta = { 0 };
	struct btape_device dev = { 0 };
	struct btape_writer_opts opts = { .sz = sizeof(opts), .chunk_events = 100 };
	struct btape_writer *w = NULL;
	bool direct = argc > 1 && strcmp(argv[1], "--direct") == 0;
	long n;
	int err;

	if (argc != 3 + direct) {
		fprintf(stderr, "usage: gen_trace [--direct] OUT N\n");
		return 2;
	}
	n = atol(argv[2 + direct]);
	snprintf(meta.tool, sizeof(meta.tool), "gen_trace");
	snprintf(meta.source, sizeof(meta.source), "test");
	snprintf(meta.hostname, sizeof(meta.hostname), "testhost");
	meta.clock_mono_ns = 1000000000ull;
	meta.clock_real_ns = 1767225600ull * 1000000000ull; /* 2026-01-01 00:00:00 UTC */
	snprintf(dev.name, sizeof(dev.name), "loop7");
	dev.dev_t_major = 7;
	dev.dev_t_minor = 7;
	dev.size_bytes = 1ull << 30;
	dev.logical_block = dev.physical_block = 512;
	dev.rotational = 0;
	if (btape_meta__add_device(&meta, &dev) < 0)
		return 1;
	snprintf(dev.name, sizeof(dev.name), "disk,b");
	dev.dev_t_minor = 8;
	if (btape_meta__add_device(&meta, &dev) < 0 || btape_meta__add_tag(&meta, "run", "t1") < 0)
		return 1;
	err = direct ? btape_writer__open_direct(&w, argv[2], &meta, &opts)
		     : btape_writer__open(&w, argv[1], &meta, &opts);
	if (err) {
		fprintf(stderr, "gen_trace: open: %s\n", strerror(-err));
		return 1;
	}
	for (long i = 0; i < n; i++) {
		struct btape_event ev = { 0 };

		ev.issue_ns = 1000000000ull + (uint64_t)i * 1000000ull;
		ev.sector = (uint64_t)i * 8;
		ev.bytes = 4096;
		ev.dev = (uint32_t)(i % 2);
		ev.op = i % 3 == 0 ? BTAPE_OP_WRITE : BTAPE_OP_READ;
		if (i % 4 != 3) {
			ev.present = BTAPE_HAS_COMPLETE | BTAPE_HAS_PID | BTAPE_HAS_COMM |
				     BTAPE_HAS_FLAGS | BTAPE_HAS_QD;
			ev.complete_ns = ev.issue_ns + 100000 + (uint64_t)i;
			ev.pid = 100 + (uint32_t)(i % 2);
			ev.comm = i % 2 ? "p1" : "p0";
			ev.flags = ev.op == BTAPE_OP_WRITE ? BTAPE_FLAG_SYNC : 0;
			ev.qd = 1;
		}
		err = btape_writer__add(w, &ev);
		if (err) {
			fprintf(stderr, "gen_trace: add: %s\n", btape_writer__errmsg(w));
			return 1;
		}
		btape_writer__advance(w, ev.issue_ns);
	}
	if (direct) {
		btape_writer__flush(w);
		raise(SIGKILL); /* no footer: the reader must recover */
	}
	err = btape_writer__close(w);
	btape_meta__free(&meta);
	if (err) {
		fprintf(stderr, "gen_trace: close: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}
