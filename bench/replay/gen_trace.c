// SPDX-License-Identifier: GPL-2.0-only
/*
 * gen_trace: writes a synthetic .btape trace (for replay tests and benchmarks).
 *
 *   gen_trace -o FILE -n COUNT [-r IOPS] [-a poisson|fixed] [-p randread|randwrite|seqread|
 *             seqwrite|mix:READ_PCT] [-b BS] [-s SPAN_BYTES] [-S DEV_SIZE] [-q QD]
 *             [-d NDEV] [-N NAME] [-F FLUSH_EVERY] [-D DISCARD_EVERY] [-l LBS] [-x SEED]
 *
 * Events are in issue order, one device per index; latencies are a fixed 50 us.
 */
#include "btape.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double unif(void)
{
	return (double)((rnd() >> 11) + 1) * 0x1p-53;
}

int main(int argc, char **argv)
{
	const char *out = NULL, *pattern = "randread", *arrival = "poisson", *name = "loop0";
	uint64_t n = 1000, bs = 4096, span = 0, devsize = 64ull << 20, seed = 1;
	uint64_t flush_every = 0, discard_every = 0, lbs = 512;
	double rate = 20000;
	unsigned int qd = 1, ndev = 1;
	struct btape_meta meta;
	struct btape_writer *w = NULL;
	struct btape_writer_opts wo = {.sz = sizeof(wo)};
	int c, err, read_pct = 100;
	bool seq = false;

	while ((c = getopt(argc, argv, "o:n:r:a:p:b:s:S:q:d:N:F:D:l:x:")) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'n':
			n = strtoull(optarg, NULL, 0);
			break;
		case 'r':
			rate = strtod(optarg, NULL);
			break;
		case 'a':
			arrival = optarg;
			break;
		case 'p':
			pattern = optarg;
			break;
		case 'b':
			bs = strtoull(optarg, NULL, 0);
			break;
		case 's':
			span = strtoull(optarg, NULL, 0);
			break;
		case 'S':
			devsize = strtoull(optarg, NULL, 0);
			break;
		case 'q':
			qd = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'd':
			ndev = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'N':
			name = optarg;
			break;
		case 'F':
			flush_every = strtoull(optarg, NULL, 0);
			break;
		case 'D':
			discard_every = strtoull(optarg, NULL, 0);
			break;
		case 'l':
			lbs = strtoull(optarg, NULL, 0);
			break;
		case 'x':
			seed = strtoull(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "gen_trace: bad option (see the comment in gen_trace.c)\n");
			return 2;
		}
	}
	if (!out || !bs || rate <= 0 || !ndev) {
		fprintf(stderr, "gen_trace: -o FILE is required; -b, -r, -d must be positive\n");
		return 2;
	}
	if (!span || span > devsize)
		span = devsize;
	rng_state ^= seed * 0x2545f4914f6cdd1dull;
	if (strcmp(pattern, "randread") == 0) {
		read_pct = 100;
	} else if (strcmp(pattern, "randwrite") == 0) {
		read_pct = 0;
	} else if (strcmp(pattern, "seqread") == 0) {
		read_pct = 100;
		seq = true;
	} else if (strcmp(pattern, "seqwrite") == 0) {
		read_pct = 0;
		seq = true;
	} else if (strncmp(pattern, "mix:", 4) == 0) {
		read_pct = atoi(pattern + 4);
	} else {
		fprintf(stderr, "gen_trace: unknown pattern '%s'\n", pattern);
		return 2;
	}

	memset(&meta, 0, sizeof(meta));
	snprintf(meta.tool, sizeof(meta.tool), "gen_trace");
	snprintf(meta.source, sizeof(meta.source), "synthetic");
	snprintf(meta.hostname, sizeof(meta.hostname), "localhost");
	snprintf(meta.capture, sizeof(meta.capture), "%s %s %.0f IOPS bs %llu", pattern, arrival,
		 rate, (unsigned long long)bs);
	meta.clock_mono_ns = 1000000000ull;
	meta.clock_real_ns = (uint64_t)time(NULL) * 1000000000ull;
	for (unsigned int d = 0; d < ndev; d++) {
		struct btape_device dev = {.size_bytes = devsize,
					   .logical_block = (uint32_t)lbs,
					   .physical_block = 4096,
					   .rotational = 0,
					   .dev_t_major = 7,
					   .dev_t_minor = d};

		if (ndev == 1)
			snprintf(dev.name, sizeof(dev.name), "%s", name);
		else
			snprintf(dev.name, sizeof(dev.name), "%s%u", name, d);
		if (btape_meta__add_device(&meta, &dev) < 0) {
			fprintf(stderr, "gen_trace: out of memory\n");
			return 1;
		}
	}
	err = btape_writer__open(&w, out, &meta, &wo);
	if (err < 0) {
		fprintf(stderr, "gen_trace: %s: %s\n", out, strerror(-err));
		return 1;
	}
	uint64_t t = 1000000000ull, seqpos = 0, blocks = span / bs;
	double gap = 1e9 / rate;

	for (uint64_t i = 0; i < n; i++) {
		struct btape_event ev = {0};

		ev.issue_ns = t;
		ev.complete_ns = t + 50000;
		ev.insert_ns = t;
		ev.dev = (uint32_t)(i % ndev);
		ev.bytes = bs;
		ev.op = (rnd() % 100) < (uint64_t)read_pct ? BTAPE_OP_READ : BTAPE_OP_WRITE;
		if (seq) {
			ev.sector = seqpos / 512;
			seqpos = (seqpos + bs) % (blocks * bs);
		} else {
			ev.sector = (rnd() % blocks) * bs / 512;
		}
		if (flush_every && i % flush_every == flush_every - 1) {
			ev.op = BTAPE_OP_FLUSH;
			ev.sector = 0;
			ev.bytes = 0;
		} else if (discard_every && i % discard_every == discard_every - 1) {
			ev.op = BTAPE_OP_DISCARD;
		}
		ev.qd = qd;
		ev.pid = 4242;
		ev.tid = 4242;
		ev.comm = "gen";
		ev.present = BTAPE_HAS_COMPLETE | BTAPE_HAS_INSERT | BTAPE_HAS_QD | BTAPE_HAS_PID |
			     BTAPE_HAS_TID | BTAPE_HAS_COMM;
		err = btape_writer__add(w, &ev);
		if (err < 0) {
			fprintf(stderr, "gen_trace: %s: %s\n", out, btape_writer__errmsg(w));
			btape_writer__abort(w);
			return 1;
		}
		if (strcmp(arrival, "poisson") == 0)
			t += (uint64_t)(-log(unif()) * gap) + 1;
		else
			t += (uint64_t)gap;
		if ((i & 65535) == 65535)
			btape_writer__advance(w, t);
	}
	err = btape_writer__close(w);
	btape_meta__free(&meta);
	if (err < 0) {
		fprintf(stderr, "gen_trace: %s: %s\n", out, strerror(-err));
		return 1;
	}
	return 0;
}
