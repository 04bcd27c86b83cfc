// SPDX-License-Identifier: GPL-2.0-only
/*
 * The statistics core alone (no decoding): CPU ns per event for stats__add_batch over
 * gen_trace-like events held in memory. usage: core_bench [MILLION_EVENTS]
 */
#include "stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	const size_t n = 1u << 20;
	int rounds = argc > 1 ? atoi(argv[1]) : 5;
	struct btape_event *e = calloc(n, sizeof(*e));
	struct stats *s;
	uint64_t t = 1000000000ull, range = (16ull << 30) / 512, last[2][2] = {{0}};

	struct stats_opts o = {
		.ws_limit = getenv("WS_LIMIT") ? strtoull(getenv("WS_LIMIT"), NULL, 0) : 0};

	if (!e || stats__new(&s, &o))
		return 1;
	double core = 0; /* CPU s in stats__add_batch: the generation is left out */

	for (int r = 0; r < rounds; r++) {
		for (size_t i = 0; i < n; i++) {
			uint64_t x = next();
			int dir = x % 100 < 70 ? 0 : 1;
			unsigned int dv = (x >> 8) & 1;
			uint64_t sz = (x >> 16) % 100;

			sz = sz < 60 ? 4096 : sz < 80 ? 8192 : sz < 90 ? 16384 : 65536;
			t += 2500 + next() % 5000;
			e[i].issue_ns = t;
			e[i].op = dir ? BTAPE_OP_WRITE : BTAPE_OP_READ;
			e[i].dev = dv;
			e[i].bytes = sz;
			e[i].sector = (x >> 24) % 100 < 25 ? last[dv][dir]
							   : (next() % (range - 128)) & ~7ull;
			last[dv][dir] = e[i].sector + sz / 512;
			e[i].insert_ns = t - 2000 - next() % 8000;
			e[i].complete_ns = t + 50000 + next() % 200000;
			e[i].pid = 1000 + (uint32_t)(i % 8);
			e[i].present = BTAPE_HAS_COMPLETE | BTAPE_HAS_INSERT | BTAPE_HAS_PID;
		}
		double a = cpu_s();

		if (stats__add_batch(s, e, n))
			return 1;
		core += cpu_s() - a;
		if (r == rounds - 1)
			printf("%.1f ns/event in the core (%d x %zu events)\n",
			       core * 1e9 / (double)(n * rounds), rounds, n);
	}
	stats__finish(s);
	stats__free(s);
	free(e);
	return 0;
}
