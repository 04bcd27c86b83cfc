// SPDX-License-Identifier: GPL-2.0-only
/* Statistics core on synthetic events with exactly known statistics. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "hist.h"
#include "../common/hist_assert.h"
#include "split.h"
#include "stats.h"
#include "workset.h"

#define MS 1000000ull
#define S 1000000000ull

static struct btape_event ev_rw(uint64_t t, unsigned int op, uint64_t sector, uint64_t bytes)
{
	struct btape_event e = {0};

	e.issue_ns = t;
	e.op = (uint8_t)op;
	e.sector = sector;
	e.bytes = bytes;
	return e;
}

static struct stats *run(const struct btape_event *evs, size_t n, const struct stats_opts *o)
{
	struct stats *s;

	assert_int_equal(stats__new(&s, o), 0);
	assert_int_equal(stats__add_batch(s, evs, n), 0);
	assert_int_equal(stats__finish(s), 0);
	return s;
}

/* The same events added one at a time with stats__add (the reference for the batch path). */
static struct stats *run_one_by_one(const struct btape_event *evs, size_t n,
				    const struct stats_opts *o)
{
	struct stats *s;

	assert_int_equal(stats__new(&s, o), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(stats__add(s, &evs[i]), 0);
	assert_int_equal(stats__finish(s), 0);
	return s;
}

/* xorshift64: the tests' random streams, the same for every run */
static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void test_empty(void **st)
{
	struct stats *s = run(NULL, 0, NULL);

	assert_int_equal(s->all.n, 0);
	assert_int_equal(s->duration_ns, 0);
	assert_true(stats_rate(s, s->all.n) == 0);
	assert_true(stats_burstiness(s, &s->all) == 0);
	assert_false(s->wsr.valid && s->wsr.blocks);
	stats__free(s);
}

static void test_one_event(void **st)
{
	struct btape_event e = ev_rw(5 * S, BTAPE_OP_READ, 8, 4096);

	e.present = BTAPE_HAS_COMPLETE | BTAPE_HAS_INSERT;
	e.insert_ns = e.issue_ns - 100;
	e.complete_ns = e.issue_ns + 50000;
	struct stats *s = run(&e, 1, NULL);

	assert_int_equal(s->all.n, 1);
	assert_int_equal(s->all.bytes, 4096);
	assert_int_equal(s->ops[BTAPE_OP_READ].n, 1);
	assert_int_equal(s->duration_ns, 0);
	assert_int_equal(s->complete_windows, 0);
	assert_true(stats_rate(s, 1) == 0); /* no duration: no rate, no division */
	assert_true(stats_burstiness(s, &s->all) == 0);
	assert_int_equal(s->ops[BTAPE_OP_READ].lat_dev->max, 50000);
	assert_hist_close(hist_quantile(s->ops[BTAPE_OP_READ].lat_dev, 0.5), 50000);
	assert_int_equal(hist_quantile(s->ops[BTAPE_OP_READ].lat_queue, 0.99), 100);
	assert_int_equal(hist_quantile(s->ops[BTAPE_OP_READ].lat_total, 1), 50100);
	assert_int_equal(s->devs[0].streams[DIR_READ].n, 0);
	assert_true(stats_seq_share(&s->devs[0].streams[DIR_READ]) == 0);
	assert_int_equal(s->wsr.blocks, 1);
	assert_int_equal(s->wsr.blocks_read, 1);
	assert_int_equal(s->wsr.blocks_written, 0);
	assert_int_equal(s->interarrival->count, 0);
	assert_int_equal(hist_quantile(s->qd, 1), 1);
	assert_int_equal(s->idle->count, 0);
	assert_int_equal(s->tl_rows, 1);
	stats__free(s);
}

static void test_all_flushes(void **st)
{
	struct btape_event e[10];

	for (int i = 0; i < 10; i++)
		e[i] = ev_rw((uint64_t)i * MS, BTAPE_OP_FLUSH, 0, 0);
	struct stats *s = run(e, 10, NULL);

	assert_int_equal(s->all.n, 10);
	assert_int_equal(s->all.bytes, 0);
	assert_int_equal(s->ops[BTAPE_OP_FLUSH].n, 10);
	assert_int_equal(s->ops[BTAPE_OP_FLUSH].size_log2[0], 10);
	assert_int_equal(s->all.n_dir[DIR_READ] + s->all.n_dir[DIR_WRITE], 0);
	assert_int_equal(s->streams_all[DIR_READ].n + s->streams_all[DIR_WRITE].n, 0);
	assert_int_equal(s->wsr.blocks, 0);
	assert_null(s->ops[BTAPE_OP_FLUSH].lat_dev); /* no completions: absent, not zero */
	assert_int_equal(s->qd->count, 0);
	assert_int_equal(s->qd_missing, 10);
	assert_int_equal(s->present_all & BTAPE_HAS_COMPLETE, 0);
	/* 9 ms duration: IOPS = 10 / 0.009 */
	assert_true(fabs(stats_rate(s, s->all.n) - 10 / 0.009) < 1e-6);
	stats__free(s);
}

static void test_identical_timestamps(void **st)
{
	struct btape_event e[16];

	for (int i = 0; i < 16; i++)
		e[i] = ev_rw(7 * S, BTAPE_OP_WRITE, (uint64_t)i * 8, 4096);
	struct stats *s = run(e, 16, NULL);

	assert_int_equal(s->duration_ns, 0);
	assert_int_equal(s->interarrival->count, 15);
	assert_int_equal(s->interarrival->max, 0);
	assert_int_equal(s->streams_all[DIR_WRITE].n, 15);
	assert_int_equal(s->streams_all[DIR_WRITE].seq, 15);
	assert_int_equal(s->streams_all[DIR_WRITE].seek[64], 15);
	assert_true(stats_rate(s, 16) == 0);
	assert_int_equal(s->wsr.blocks_written, 16);
	stats__free(s);
}

static void test_windows_and_burstiness(void **st)
{
	static const uint64_t ts[] = {0, 500 * MS, 1200 * MS, 1300 * MS, 1400 * MS, 2500 * MS};
	struct btape_event e[6];

	for (int i = 0; i < 6; i++)
		e[i] = ev_rw(100 * S + ts[i], i % 2 ? BTAPE_OP_WRITE : BTAPE_OP_READ,
			     (uint64_t)i * 1000, 8192);
	struct stats *s = run(e, 6, NULL);

	assert_int_equal(s->duration_ns, 2500 * MS);
	assert_int_equal(s->complete_windows, 2);
	assert_int_equal(s->all.peak_n, 3);
	assert_int_equal(s->all.peak_bytes, 3 * 8192);
	assert_int_equal(s->all.n_partial, 1);
	assert_true(fabs(stats_window_mean(s, &s->all) - 2.5) < 1e-9);
	assert_true(fabs(stats_burstiness(s, &s->all) - 1.2) < 1e-9);
	assert_true(fabs(stats_rate(s, s->all.n) - 2.4) < 1e-9);
	assert_int_equal(s->all.n_dir[DIR_READ], 3);
	assert_int_equal(s->all.n_dir[DIR_WRITE], 3);
	assert_int_equal(s->all.peak_n_dir[DIR_READ], 2); /* 1.2 s, 1.4 s */
	assert_int_equal(s->all.peak_n_dir[DIR_WRITE], 1);
	/* timeline at 1 s: rows 2, 3, 1 */
	assert_int_equal(s->tl_rows, 3);
	assert_int_equal(s->tl[0].n_dir[0] + s->tl[0].n_dir[1], 2);
	assert_int_equal(s->tl[1].n_dir[0] + s->tl[1].n_dir[1], 3);
	assert_int_equal(s->tl[2].n_dir[0] + s->tl[2].n_dir[1], 1);
	/* interarrival: max 1100 ms, min 100 ms */
	assert_int_equal(s->interarrival->max, 1100 * MS);
	assert_int_equal(s->interarrival->min, 100 * MS);
	/* idle (no completions: gaps between issues >= 1 ms): all 5 gaps */
	assert_false(s->idle_from_completions);
	assert_int_equal(s->idle->count, 5);
	assert_int_equal(s->idle_total_ns, 2500 * MS);
	stats__free(s);
}

static void test_sequential_and_seek(void **st)
{
	struct btape_event e[300];
	int n = 0;

	/* 100 sequential 4 KiB reads; interleaved writes jumping by +1 MiB (near: no) */
	for (int i = 0; i < 100; i++) {
		e[n] = ev_rw((uint64_t)n * MS, BTAPE_OP_READ, (uint64_t)i * 8, 4096);
		n++;
		e[n] = ev_rw((uint64_t)n * MS, BTAPE_OP_WRITE, 1000000 + (uint64_t)i * 2048 + 8,
			     4096);
		n++;
	}
	/* 50 reads going backwards by 64 KiB - 4 KiB each: near-sequential within 128 KiB */
	for (int i = 0; i < 50; i++) {
		e[n] = ev_rw((uint64_t)n * MS, BTAPE_OP_READ, 500000 - (uint64_t)i * 128, 4096);
		n++;
	}
	struct stats *s = run(e, (size_t)n, NULL);
	const struct stream *r = &s->streams_all[DIR_READ], *w = &s->streams_all[DIR_WRITE];

	assert_int_equal(r->n, 149);
	assert_int_equal(r->seq, 99);
	/* the jump to 500000 is far; the 49 following are 64 KiB + 4 KiB back: near */
	assert_int_equal(r->near, 99 + 49);
	assert_int_equal(w->n, 99);
	assert_int_equal(w->seq, 0);
	assert_int_equal(w->near, 0);
	/* writes: distance = 1 MiB - 4 KiB each -> bin 64 + 20 */
	assert_int_equal(w->seek[64 + 20], 99);
	/* backward reads: distance -(64 KiB + 4 KiB) = -69632 -> bin 64 - 17 */
	assert_int_equal(r->seek[64 - 17], 49);
	int64_t lo, hi;

	/* 1 MiB - 4 KiB in [2^19, 2^20); 69632 back in [2^16, 2^17) back */
	stats_seek_bin_edges(64 + 20, &lo, &hi);
	assert_true(lo == 1 << 19 && hi == 1 << 20);
	stats_seek_bin_edges(64 - 17, &lo, &hi);
	assert_true(lo == -(1 << 16) && hi == -(1 << 17));
	stats_seek_bin_edges(64, &lo, &hi);
	assert_true(lo == 0 && hi == 0);
	/* the far bins: no overflow (a hostile trace's seeks), edges saturated */
	stats_seek_bin_edges(127, &lo, &hi);
	assert_true(lo == INT64_C(1) << 62 && hi == INT64_MAX);
	stats_seek_bin_edges(128, &lo, &hi);
	assert_true(lo == INT64_MAX && hi == INT64_MAX);
	stats_seek_bin_edges(0, &lo, &hi);
	assert_true(lo == -INT64_MAX && hi == -INT64_MAX);
	assert_int_equal(s->wsr.blocks_read, 150);
	assert_int_equal(s->wsr.blocks_written, 100);
	assert_int_equal(s->wsr.blocks, 250);
	stats__free(s);
}

static void test_working_set_skew(void **st)
{
	struct btape_event e[200];
	int n = 0;

	/* block 0: 91 reads; blocks 1..9: once each (write) ; so 10 blocks, 100 accesses */
	for (int i = 0; i < 91; i++) {
		e[n] = ev_rw((uint64_t)n, BTAPE_OP_READ, 0, 4096);
		n++;
	}
	for (int i = 1; i < 10; i++) {
		e[n] = ev_rw((uint64_t)n, BTAPE_OP_WRITE, (uint64_t)i * 8, 4096);
		n++;
	}
	/* block 0 also written once, via an 8 KiB write spanning blocks 0 and 1 */
	e[n] = ev_rw((uint64_t)n, BTAPE_OP_WRITE, 0, 8192);
	n++;
	struct stats *s = run(e, (size_t)n, NULL);

	assert_false(s->wsr.estimated);
	assert_int_equal(s->wsr.blocks, 10);
	assert_int_equal(s->wsr.blocks_read, 1);
	assert_int_equal(s->wsr.blocks_written, 10);
	assert_int_equal(s->wsr.blocks_both, 1);
	assert_int_equal(s->wsr.accesses, 102);
	/* hottest 1% and 10% = 1 block (92 accesses), 20% = 2 blocks (92 + 2), 50% = 5 */
	assert_true(fabs(s->wsr.hot[0] - 92.0 / 102) < 1e-9);
	assert_true(fabs(s->wsr.hot[1] - 92.0 / 102) < 1e-9);
	assert_true(fabs(s->wsr.hot[2] - 94.0 / 102) < 1e-9);
	assert_true(fabs(s->wsr.hot[3] - 97.0 / 102) < 1e-9);
	stats__free(s);
}

static void test_working_set_estimate(void **st)
{
	const size_t n = 200000;
	struct btape_event *e = calloc(n, sizeof(*e));
	struct stats_opts o = {.ws_limit = 4096};

	assert_non_null(e);
	/* 100000 distinct blocks: the first 10000 get 10 accesses each, 90000 get one... */
	for (size_t i = 0; i < n; i++) {
		uint64_t blk = i < 100000 ? i * 7919 % 100000 : (i - 100000) % 10000;

		e[i] = ev_rw(i, i % 3 ? BTAPE_OP_READ : BTAPE_OP_WRITE, blk * 8, 4096);
	}
	/* ... no: blocks < 10000 get 1 + 10 = 11 accesses; 90000 get 1 (total 200000) */
	struct stats *s = run(e, n, &o);

	assert_true(s->wsr.estimated);
	assert_true(s->wsr.rel_error > 0 && s->wsr.rel_error < 0.2);
	double err = fabs((double)s->wsr.blocks - 100000) / 100000;

	if (err > s->wsr.rel_error)
		fail_msg("estimate %llu vs 100000: error %.4f > bound %.4f",
			 (unsigned long long)s->wsr.blocks, err, s->wsr.rel_error);
	/* hottest 10% = the 10000 hot blocks = 110000 / 200000 accesses = 0.55 */
	assert_true(fabs(s->wsr.hot[1] - 0.55) < 0.05);
	assert_int_equal(s->wsr.accesses, n);
	free(e);
	stats__free(s);
}

/* ---- large I/Os (more than STATS_WS_LARGE_BLOCKS blocks): kept as extents ---- */

/* Skew of a count histogram (mult[c] blocks with c accesses), by the definition. */
static void ref_skew(const uint64_t *mult, uint64_t maxc, double hot[4])
{
	static const double fr[4] = {0.01, 0.10, 0.20, 0.50};
	uint64_t nb = 0, sum = 0;

	for (uint64_t c = 1; c <= maxc; c++) {
		nb += mult[c];
		sum += mult[c] * c;
	}
	for (int k = 0; k < 4; k++) {
		uint64_t want = (uint64_t)ceil(fr[k] * (double)nb), taken = 0, acc = 0;

		for (uint64_t c = maxc; c > 0 && taken < want; c--) {
			uint64_t take = mult[c] < want - taken ? mult[c] : want - taken;

			acc += take * c;
			taken += take;
		}
		hot[k] = (double)acc / (double)sum;
	}
}

static void assert_hot(const struct stats *s, const double want[4])
{
	for (int k = 0; k < 4; k++)
		if (fabs(s->wsr.hot[k] - want[k]) > 1e-12)
			fail_msg("hot[%d] = %.15f, want %.15f", k, s->wsr.hot[k], want[k]);
}

/*
 * Random reads and writes on two devices, a third of them large, overlapping each other and
 * the small ones: every working-set figure equals a block-by-block count (the definition).
 */
static void test_working_set_large_exact(void **st)
{
	enum { N = 3000, SPACE = 1 << 16, MAXB = 8000 };
	const size_t cells = 2 * (SPACE + MAXB + 2);
	uint32_t *r = calloc(cells, sizeof(*r)), *w = calloc(cells, sizeof(*w));
	struct btape_event *e = calloc(N, sizeof(*e));
	uint64_t *mult = calloc(4 * N + 2, sizeof(*mult)), seed = 42, accesses = 0, large = 0;
	uint64_t nb = 0, nr = 0, nw = 0, nrw = 0, maxc = 0;
	double hot[4];

	assert_true(r && w && e && mult);
	for (size_t i = 0; i < N; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t x = seed >> 20, sector = x % (SPACE * 8ull), bytes;
		unsigned int dev = (unsigned int)(x >> 40) & 1, op = (x >> 41) & 1;

		if (x % 3 == 0) /* large: from just over the threshold to ~8000 blocks */
			bytes = (STATS_WS_LARGE_BLOCKS * 8ull + 1 + (x >> 5) % 56000) * 512;
		else
			bytes = (1 + (x >> 5) % 500) * 512;
		e[i] = ev_rw(i, op ? BTAPE_OP_WRITE : BTAPE_OP_READ, sector, bytes);
		e[i].dev = dev;
		uint64_t b0 = sector * 512 / 4096, b1 = (sector * 512 + bytes - 1) / 4096;

		large += b1 - b0 + 1 > STATS_WS_LARGE_BLOCKS;
		for (uint64_t b = b0; b <= b1; b++) {
			(op ? w : r)[dev * (cells / 2) + b]++;
			accesses++;
		}
	}
	for (size_t i = 0; i < cells; i++) {
		uint64_t c = (uint64_t)r[i] + w[i];

		nb += c > 0;
		nr += r[i] > 0;
		nw += w[i] > 0;
		nrw += r[i] && w[i];
		mult[c]++;
		maxc = c > maxc ? c : maxc;
	}
	ref_skew(mult, maxc, hot);
	assert_true(large > N / 4);
	for (int way = 0; way < 2; way++) {
		struct stats *s = way ? run_one_by_one(e, N, NULL) : run(e, N, NULL);

		assert_true(s->ws.nedges > 0); /* the large ones took the extent path */
		assert_false(s->wsr.estimated);
		assert_int_equal(s->wsr.blocks, nb);
		assert_int_equal(s->wsr.blocks_read, nr);
		assert_int_equal(s->wsr.blocks_written, nw);
		assert_int_equal(s->wsr.blocks_both, nrw);
		assert_int_equal(s->wsr.accesses, accesses);
		assert_hot(s, hot);
		stats__free(s);
	}
	free(r);
	free(w);
	free(e);
	free(mult);
}

/*
 * The issue's case: I/Os of the largest size the format allows over a 4 TiB range finish at
 * once with exact figures (block by block they were 2.6 G block updates, and sampled).
 * 1000 disjoint extents of 4 GiB - 4 KiB at 4 GiB steps, each read twice, the even ones also
 * written; a 4 KiB write inside an odd extent and a 4 KiB read outside every extent.
 */
static void test_working_set_huge_extents(void **st)
{
	enum { K = 1000 };
	const uint64_t len = (4ull << 30) - 4096, L = len / 4096, step = 4ull << 30;
	struct btape_event *e = calloc(3 * K + 2, sizeof(*e));
	size_t n = 0;
	uint64_t mult[4] = {0};
	double hot[4];

	assert_non_null(e);
	for (int pass = 0; pass < 3; pass++)
		for (uint64_t k = 0; k < K; k++)
			if (pass < 2 || k % 2 == 0)
				e[n] = ev_rw(n, pass < 2 ? BTAPE_OP_READ : BTAPE_OP_WRITE,
					     k * step / 512, len),
				n++;
	e[n] = ev_rw(n, BTAPE_OP_WRITE, (step + 8192) / 512, 4096); /* in extent 1 (odd) */
	n++;
	e[n] = ev_rw(n, BTAPE_OP_READ, (K * step + 8192) / 512, 4096); /* beyond them all */
	n++;
	struct stats *s = run(e, n, NULL);

	assert_false(s->wsr.estimated);
	assert_int_equal(s->wsr.blocks, K * L + 1);
	assert_int_equal(s->wsr.blocks_read, K * L + 1);
	assert_int_equal(s->wsr.blocks_written, K / 2 * L + 1);
	assert_int_equal(s->wsr.blocks_both, K / 2 * L + 1);
	assert_int_equal(s->wsr.accesses, (2 * K + K / 2) * L + 2);
	mult[3] = K / 2 * L + 1; /* even extents (2 reads + 1 write), and the written block */
	mult[2] = K / 2 * L - 1;
	mult[1] = 1;
	ref_skew(mult, 3, hot);
	assert_hot(s, hot);
	assert_true(fabs(s->wsr.hot[3] - 3.0 * (K / 2 * L + 1) / (2.5 * K * L + 2)) < 1e-9);
	free(e);
	stats__free(s);
}

/*
 * More disjoint large extents than STATS_WS_EDGES_MAX edges hold: the rest are counted
 * block by block, and the figures stay exact. Then a sampled table with extents: the distinct
 * count estimate is within its stated error.
 */
static void test_working_set_large_fallback(void **st)
{
	const uint64_t extra = 200, k_all = STATS_WS_EDGES_MAX / 2 + extra, nbl = 1025;
	struct btape_event *e = calloc(k_all, sizeof(*e));

	assert_non_null(e);
	for (uint64_t k = 0; k < k_all; k++)
		e[k] = ev_rw(k, BTAPE_OP_READ, k * (nbl + 1) * 8, nbl * 4096);
	struct stats *s = run(e, k_all, NULL);

	assert_true(s->ws.edges_full);
	assert_true(s->ws.n >= extra * nbl); /* the table took the ones past the edges */
	assert_false(s->wsr.estimated);
	assert_int_equal(s->wsr.blocks, k_all * nbl);
	assert_int_equal(s->wsr.blocks_read, k_all * nbl);
	assert_int_equal(s->wsr.accesses, k_all * nbl);
	stats__free(s);
	free(e);

	/* sampled: 200,000 random small reads over 10^6 blocks, and 50 large extents */
	const size_t n = 200050;
	struct stats_opts o = {.ws_limit = 4096};
	uint8_t *seen = calloc(1 << 21, 1);
	uint64_t seed = 9, truth = 0;

	e = calloc(n, sizeof(*e));
	assert_true(e && seen);
	for (size_t i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t blk = (seed >> 33) % 1000000, nb = 1;

		if (i % 4001 == 0) /* large: 1500 blocks */
			nb = 1500;
		e[i] = ev_rw(i, BTAPE_OP_READ, blk * 8, nb * 4096);
		for (uint64_t b = blk; b < blk + nb; b++)
			if (!seen[b]++)
				truth++;
	}
	s = run(e, n, &o);
	assert_true(s->wsr.estimated && s->ws.nedges > 0);
	double err = fabs((double)s->wsr.blocks - (double)truth) / (double)truth;

	if (err > s->wsr.rel_error)
		fail_msg("estimate %llu vs %llu: error %.4f > bound %.4f",
			 (unsigned long long)s->wsr.blocks, (unsigned long long)truth, err,
			 s->wsr.rel_error);
	stats__free(s);
	free(e);
	free(seen);
}

/*
 * The working-set table never holds more than ws_limit blocks nor more than half its slots,
 * after every add: one event at a time through stats__add, batches of one event, and batches
 * of 64 (single-block and 64 KiB I/Os), with limits below the first table's half (the limit
 * binds) and above it (the table grows, then the sampling level rises).
 */
static void test_working_set_bounds(void **st)
{
	static const uint64_t limits[] = {16, 1000, 3000, 9000};
	const size_t n = 64 * 1000; /* whole batches */
	struct btape_event *e = calloc(n, sizeof(*e));

	(void)st;
	assert_non_null(e);
	for (size_t i = 0; i < n; i++)
		e[i] = ev_rw(i, i % 3 ? BTAPE_OP_READ : BTAPE_OP_WRITE, i * 7919 % 1000003 * 128,
			     i % 5 ? 4096 : 65536);
	for (int mode = 0; mode < 3; mode++) {
		for (size_t l = 0; l < sizeof(limits) / sizeof(limits[0]); l++) {
			struct stats_opts o = {.ws_limit = limits[l]};
			const size_t step = mode == 2 ? 64 : 1;
			struct stats *s;
			uint64_t cap0;

			assert_int_equal(stats__new(&s, &o), 0);
			assert_int_equal(stats__set_device(s, 0, "d", 1ull << 40), 0);
			cap0 = s->ws.cap;
			for (size_t i = 0; i < n; i += step) {
				if (mode)
					assert_int_equal(stats__add_batch(s, e + i, step), 0);
				else
					assert_int_equal(stats__add(s, &e[i]), 0);
				if (s->ws.n > limits[l] || 2 * s->ws.n > s->ws.cap)
					fail_msg("limit %llu, mode %d: %llu blocks in %llu slots "
						 "after %zu",
						 (unsigned long long)limits[l], mode,
						 (unsigned long long)s->ws.n,
						 (unsigned long long)s->ws.cap, i);
			}
			if (limits[l] > cap0 / 2)
				assert_true(s->ws.cap > cap0); /* it grew */
			assert_true(s->ws.level > 0);		/* and sampled */
			assert_true(s->ws.n > limits[l] / 4);	/* a level drops about half */
			stats__free(s);
		}
	}
	free(e);
}

/*
 * The used slots of a working-set table (b->n of them), sorted by hash: two tables with the
 * same blocks and counts give the same array, wherever their multipliers put them (ws_home).
 */
static int slot_cmp(const void *a, const void *b)
{
	const struct ws_slot *x = a, *y = b;

	return x->h < y->h ? -1 : x->h > y->h;
}

static struct ws_slot *ws_sorted(const struct blockset *b)
{
	struct ws_slot *v = malloc((b->n + 1) * sizeof(*v));
	uint64_t k = 0;

	assert_non_null(v);
	for (uint64_t i = 0; i < b->cap + WS_PAD; i++)
		if (b->t[i].h) {
			assert_true(k < b->n);
			v[k++] = b->t[i];
		}
	assert_int_equal(k, b->n);
	qsort(v, k, sizeof(*v), slot_cmp);
	return v;
}

/* The longest run of used slots in a working-set table (probing wraps at cap + WS_PAD). */
static uint64_t ws_longest_run(const struct blockset *b)
{
	const uint64_t slots = b->cap + WS_PAD;
	uint64_t run = 0, best = 0;

	for (uint64_t i = 0; i < 2 * slots && best < slots; i++) {
		run = b->t[i % slots].h ? run + 1 : 0;
		best = run > best ? run : best;
	}
	return best;
}

/*
 * n keys of 4 KiB blocks whose hashes share their low 20 bits: mix64 has no seed and unmix64
 * inverts it, so a trace can have them (devices below STATS_MAX_DEVICES, as a CSV names them).
 */
static uint64_t *colliding_keys(size_t n)
{
	uint64_t *key = calloc(n, sizeof(*key));

	assert_non_null(key);
	for (uint64_t x = 1, k = 0; k < n; x++) {
		uint64_t h = x << 20 | 0x2b5c1, y = unmix64(h);

		if (y && y - 1 < (uint64_t)STATS_MAX_DEVICES << WS_KEY_BLOCK_BITS) {
			assert_true(mix64(y) == h);
			key[k++] = y;
		}
	}
	return key;
}

static void assert_short_runs(const struct blockset *b, const char *what)
{
	uint64_t run = ws_longest_run(b);

	/* at most half full, with homes spread: a run of 200 has odds under 0.824^200 = 2^-55
	 * per slot (format/btape_internal.h); the homes h & (cap - 1) made one of every block */
	if (run > 200)
		fail_msg("%s: a run of %llu used slots of %llu, with %llu blocks (want <= 200)",
			 what, (unsigned long long)run, (unsigned long long)b->cap,
			 (unsigned long long)b->n);
}

/*
 * 20,000 blocks of a crafted trace whose hashes share their low 20 bits: their homes are still
 * spread (ws_home keys them per table), so no probe chain grows with the blocks, and every
 * block is counted. Through ws_add, through whole events (the queued puts, with prefetches),
 * sampled (the rebuilds at the same size), and two halves merged as slices are (ws_merge).
 * With the homes h & (cap - 1), one chain held every block: 20,000 slots walked per put.
 */
static void test_working_set_collide(void **st)
{
	const size_t n = 20000;
	const uint64_t kmask = (1ull << WS_KEY_BLOCK_BITS) - 1;
	uint64_t *key = colliding_keys(n);
	struct btape_event *e = calloc(n, sizeof(*e));
	struct blockset b = {0}, half[2] = {{0}};
	struct ws_result r;
	struct stats *s;

	(void)st;
	assert_non_null(e);
	/* ws_add: each block read, then written */
	assert_int_equal(ws_init(&b, STATS_WS_LIMIT_DEFAULT), 0);
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++)
			assert_int_equal(ws_add(&b, key[i], pass ? DIR_WRITE : DIR_READ), 0);
	assert_int_equal(b.n, n);
	assert_short_runs(&b, "ws_add");
	ws_finish(&b, &r);
	assert_false(r.estimated);
	assert_int_equal(r.blocks, n);
	assert_int_equal(r.blocks_both, n);
	assert_int_equal(r.accesses, 2 * n);

	/* the same blocks as events, in batches, exact and sampled */
	for (size_t i = 0; i < n; i++) {
		e[i] = ev_rw(i, i % 3 ? BTAPE_OP_READ : BTAPE_OP_WRITE, ((key[i] - 1) & kmask) * 8,
			     4096);
		e[i].dev = (uint32_t)((key[i] - 1) >> WS_KEY_BLOCK_BITS);
	}
	s = run(e, n, NULL);
	assert_short_runs(&s->ws, "events");
	assert_false(s->wsr.estimated);
	assert_int_equal(s->wsr.blocks, n);
	stats__free(s);
	s = run(e, n, &(struct stats_opts){.ws_limit = 4096});
	assert_true(s->ws.level > 0 && s->wsr.estimated);
	assert_short_runs(&s->ws, "sampled");
	stats__free(s);

	/* two tables of half the blocks each (some in both) merged into the first */
	for (int k = 0; k < 2; k++) {
		assert_int_equal(ws_init(&half[k], STATS_WS_LIMIT_DEFAULT), 0);
		for (size_t i = k ? n / 3 : 0; i < (k ? n : 2 * n / 3); i++)
			assert_int_equal(ws_add(&half[k], key[i], DIR_READ), 0);
		assert_short_runs(&half[k], "a half");
	}
	struct ws_slot *sl = ws_sorted(&half[1]);

	assert_int_equal(ws_merge(&half[0], sl, half[1].n, half[1].level, false, half[1].accesses),
			 0);
	free(sl);
	assert_int_equal(half[0].n, n);
	assert_short_runs(&half[0], "merged");
	ws_finish(&half[0], &r);
	assert_int_equal(r.blocks, n);
	assert_int_equal(r.accesses, 2 * n / 3 + (n - n / 3));
	for (int k = 0; k < 2; k++)
		ws_destroy(&half[k]);
	ws_destroy(&b);
	free(key);
	free(e);
}

/*
 * A few events without a completion time (a recorder keeps the I/Os whose completion it did
 * not see) leave idle periods measured from completions; many turn them into issue gaps.
 */
static void test_idle_basis_with_missing_completions(void **st)
{
	enum { N = 300 };
	struct btape_event *e = calloc(N, sizeof(*e));

	assert_non_null(e);
	for (int missing = 1; missing <= 150; missing += 149) {
		for (int i = 0; i < N; i++) {
			e[i] = ev_rw((uint64_t)i * MS, BTAPE_OP_READ, (uint64_t)i * 8, 4096);
			e[i].present = BTAPE_HAS_COMPLETE;
			e[i].complete_ns = (uint64_t)i * MS + 100000; /* 100 us each, then idle */
		}
		for (int i = 0; i < missing; i++)
			e[i * (N / missing)].present = 0;
		struct stats *s = run(e, N, NULL);

		if (missing == 1)
			assert_true(s->idle_from_completions); /* 1 in 300 */
		else
			assert_false(s->idle_from_completions); /* half */
		assert_int_equal(s->idle_no_complete, missing);
		stats__free(s);
	}
	free(e);
	(void)st;
}

static void test_qd_and_idle_from_completions(void **st)
{
	struct btape_event e[4];

	for (int i = 0; i < 3; i++) {
		e[i] = ev_rw((uint64_t)i * 1000, BTAPE_OP_READ, (uint64_t)i * 64, 4096);
		e[i].present = BTAPE_HAS_COMPLETE;
		e[i].complete_ns = 10000 + (uint64_t)i * 1000;
	}
	e[3] = ev_rw(10 * MS, BTAPE_OP_READ, 0, 4096);
	e[3].present = BTAPE_HAS_COMPLETE;
	e[3].complete_ns = 10 * MS + 500;
	struct stats *s = run(e, 4, NULL);

	assert_false(s->qd_from_trace);
	assert_int_equal(s->qd->count, 4);
	assert_int_equal(s->qd->max, 3);
	assert_int_equal(s->qd->b[1], 2); /* 1st and 4th at depth 1 */
	assert_int_equal(s->qd->b[2], 1);
	assert_int_equal(s->qd->b[3], 1);
	assert_true(s->idle_from_completions);
	assert_int_equal(s->idle->count, 1);
	assert_int_equal(s->idle_total_ns, 10 * MS - 12000);
	assert_int_equal(s->ops[BTAPE_OP_READ].lat_dev->count, 4);
	assert_int_equal(s->ops[BTAPE_OP_READ].lat_dev->max, 10000);
	assert_int_equal(s->ops[BTAPE_OP_READ].lat_dev->min, 500);
	assert_null(s->ops[BTAPE_OP_READ].lat_queue); /* no insert times: absent */
	/* device time by the depth at issue: depth 1 (10000, 500), 2 (10000), 3 (10000) */
	const struct opstat *o = &s->ops[BTAPE_OP_READ];

	assert_int_equal(hist_count(o->lat_qd[0]), 2);
	assert_int_equal(o->lat_qd[0]->min, 500);
	assert_int_equal(o->lat_qd[0]->max, 10000);
	assert_int_equal(hist_count(o->lat_qd[1]), 1);
	assert_int_equal(hist_count(o->lat_qd[2]), 1);
	for (int k = 3; k < STATS_QD_BANDS; k++)
		assert_null(o->lat_qd[k]);
	stats__free(s);
}

/*
 * The bands of depth (stats_qd_band): 1, 2, 3-4, 5-8, ..., 33-64, then 65 and more; a recorded
 * depth puts each I/O's device time in its band, an I/O without a completion in none.
 */
static void test_latency_by_depth(void **st)
{
	static const uint64_t qd[] = {1, 2, 3, 4, 5, 8, 9, 16, 17, 32, 33, 64, 65, 1000};
	static const unsigned int band[] = {0, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7};
	const size_t n = sizeof(qd) / sizeof(qd[0]);
	struct btape_event e[sizeof(qd) / sizeof(qd[0]) + 1];

	(void)st;
	for (size_t i = 0; i < n; i++) {
		uint64_t lo, hi;

		assert_int_equal(stats_qd_band(qd[i]), band[i]);
		stats_qd_band_range(band[i], &lo, &hi);
		assert_true(lo <= qd[i] && qd[i] <= hi);
		e[i] = ev_rw(i * 1000, BTAPE_OP_WRITE, i * 8, 4096);
		e[i].present = BTAPE_HAS_COMPLETE | BTAPE_HAS_QD;
		e[i].qd = (uint32_t)qd[i];
		e[i].complete_ns = e[i].issue_ns + 100 * (i + 1);
	}
	e[n] = ev_rw(n * 1000, BTAPE_OP_WRITE, 0, 4096); /* no completion: no device time */
	e[n].present = BTAPE_HAS_QD;
	e[n].qd = 1;
	struct stats *s = run(e, n + 1, NULL);
	const struct opstat *o = &s->ops[BTAPE_OP_WRITE];

	for (unsigned int k = 0; k < STATS_QD_BANDS; k++) {
		uint64_t want = 0, min = UINT64_MAX, max = 0;

		for (size_t i = 0; i < n; i++)
			if (band[i] == k) {
				want++;
				min = 100 * (i + 1) < min ? 100 * (i + 1) : min;
				max = 100 * (i + 1) > max ? 100 * (i + 1) : max;
			}
		assert_int_equal(hist_count(o->lat_qd[k]), want);
		assert_int_equal(o->lat_qd[k]->min, min);
		assert_int_equal(o->lat_qd[k]->max, max);
	}
	assert_int_equal(stats_qd_band(0), 0);
	assert_int_equal(stats_qd_band(UINT64_MAX), STATS_QD_BANDS - 1);
	stats__free(s);
}

static void test_devices_and_procs(void **st)
{
	struct stats *s;
	struct btape_event e[6];

	assert_int_equal(stats__new(&s, NULL), 0);
	assert_int_equal(stats__set_device(s, 0, "idle0", 0), 0);
	assert_int_equal(stats__set_device(s, 1, "busy1", 1 << 30), 0);
	for (int i = 0; i < 6; i++) {
		e[i] = ev_rw((uint64_t)i * MS, BTAPE_OP_WRITE, (uint64_t)i * 8, 512 * (i + 1));
		e[i].dev = 1;
		e[i].present = BTAPE_HAS_PID | BTAPE_HAS_COMM;
		e[i].pid = i < 4 ? 100 : 200;
		e[i].comm = i < 4 ? "postgres" : "fio";
	}
	assert_int_equal(stats__add_batch(s, e, 6), 0);
	assert_int_equal(stats__finish(s), 0);
	assert_int_equal(s->ndevs, 2);
	assert_false(s->devs[0].used);
	assert_int_equal(s->devs[0].acc.n, 0);
	assert_int_equal(s->devs[1].acc.n, 6);
	assert_int_equal(s->devs[1].acc.bytes, 512 * 21);
	assert_int_equal(s->nprocs, 2);
	int found = 0;

	for (int i = 0; i < 2 * STATS_MAX_PROCS; i++) {
		const struct procstat *p = &s->procs[i];

		if (!p->used)
			continue;
		if (p->pid == 100) {
			assert_string_equal(p->comm, "postgres");
			assert_int_equal(p->acc.n, 4);
			assert_int_equal(p->acc.bytes, 512 * 10);
			found++;
		} else {
			assert_int_equal(p->pid, 200);
			assert_int_equal(p->acc.n, 2);
			found++;
		}
	}
	assert_int_equal(found, 2);
	/* sizes: six distinct, one each; log2 bins */
	assert_int_equal(s->ops[BTAPE_OP_WRITE].nsizes, 6);
	assert_int_equal(s->ops[BTAPE_OP_WRITE].size_log2[10], 1); /* 512 in [512, 1024) */
	assert_int_equal(s->ops[BTAPE_OP_WRITE].size_log2[11], 2); /* 1024, 1536 */
	assert_int_equal(s->ops[BTAPE_OP_WRITE].size_log2[12], 3); /* 2048 .. 3072 */
	stats__free(s);
}

/* The device extent counts every op with data (a replay target must hold discards too); the
 * read/write range the profile uses does not. Batch and single paths agree. */
static void test_extent_includes_discards(void **st)
{
	struct btape_event e[4] = {
		ev_rw(0, BTAPE_OP_DISCARD, 0, 2ull << 30),
		ev_rw(1 * MS, BTAPE_OP_WRITE, 8, 4096),
		ev_rw(2 * MS, BTAPE_OP_READ, 16, 4096),
		ev_rw(3 * MS, BTAPE_OP_FLUSH, 1ull << 40, 0), /* no data: no extent */
	};

	(void)st;
	for (int pass = 0; pass < 2; pass++) {
		struct stats *s = pass ? run_one_by_one(e, 4, NULL) : run(e, 4, NULL);
		const struct devstat *d = &s->devs[0];

		assert_int_equal(d->ext_min, 0);
		assert_int_equal(d->ext_end, 2ull << 30);
		assert_int_equal(d->min_off, 4096);
		assert_int_equal(d->max_end, 12288);
		stats__free(s);
	}
}

static void test_timeline_coarsens(void **st)
{
	struct stats_opts o = {.interval_ns = MS};
	struct btape_event e[3] = {ev_rw(0, BTAPE_OP_READ, 0, 512),
				   ev_rw(5 * S, BTAPE_OP_READ, 8, 512),
				   ev_rw(20 * S, BTAPE_OP_READ, 16, 512)};
	struct stats *s = run(e, 3, &o);

	/* 20 s at 1 ms = 20000 rows > 8192: doubled twice to 4 ms */
	assert_int_equal(s->tl_interval, 4 * MS);
	assert_int_equal(s->tl_rows, 5001);
	assert_int_equal(s->tl[0].n_dir[0], 1);
	assert_int_equal(s->tl[1250].n_dir[0], 1);
	assert_int_equal(s->tl[5000].n_dir[0], 1);
	stats__free(s);
}

static void test_sizes_sorted(void **st)
{
	struct btape_event e[10];
	static const uint64_t sz[10] = {4096, 4096, 4096, 8192, 8192, 65536, 4096, 512, 8192, 4096};

	for (int i = 0; i < 10; i++)
		e[i] = ev_rw((uint64_t)i, BTAPE_OP_READ, (uint64_t)i * 1000, sz[i]);
	struct stats *s = run(e, 10, NULL);
	struct size_slot *v;
	uint32_t n;

	assert_int_equal(stats_sizes_sorted(&s->ops[BTAPE_OP_READ], &v, &n), 0);
	assert_int_equal(n, 4);
	assert_int_equal(v[0].size, 4096);
	assert_int_equal(v[0].n, 5);
	assert_int_equal(v[1].size, 8192);
	assert_int_equal(v[1].n, 3);
	assert_int_equal(v[2].size, 512);
	assert_int_equal(v[3].size, 65536);
	free(v);
	stats__free(s);
}

/* The longest run of consecutive used slots of an open-addressing table (wrapping). */
static uint32_t longest_run(const bool *used, uint32_t nslots)
{
	uint32_t best = 0, run = 0;

	for (uint32_t i = 0; i < 2 * nslots; i++) { /* twice round: a run across the end */
		run = used[i % nslots] ? run + 1 : 0;
		if (run > best)
			best = run;
	}
	return best > nslots ? nslots : best;
}

/*
 * The process and request-size tables (linear probing, half full at most) spread keys that
 * share a factor: 4096 pids and 4096 sizes, multiples of 832040 (the Fibonacci number F30).
 * A bare Fibonacci multiply put them in 19 home slots: runs of thousands of used slots, each
 * new key probing past the others (3 s for a 3.7 KB trace). Hashed, the longest run is a few
 * dozen slots.
 */
static void test_tables_spread(void **st)
{
	const uint32_t n = STATS_MAX_PROCS, nslots = 2 * STATS_MAX_PROCS;
	const uint64_t f30 = 832040;
	struct btape_event *e = calloc(n, sizeof(*e));
	bool *used = calloc(2 * STATS_SIZE_EXACT_MAX, sizeof(bool));
	struct stats *s;

	(void)st;
	assert_true(e && used);
	_Static_assert(STATS_SIZE_EXACT_MAX == STATS_MAX_PROCS, "one count for both tables");
	for (uint32_t i = 0; i < n; i++) {
		e[i] = ev_rw(S + i, BTAPE_OP_READ, (uint64_t)i * 8, (i + 1) * f30);
		e[i].present = BTAPE_HAS_PID;
		e[i].pid = (uint32_t)((i + 1) * f30);
	}
	s = run(e, n, NULL);
	assert_int_equal(s->nprocs, n);
	assert_int_equal(s->proc_other_n_procs, 0);
	for (uint32_t i = 0; i < nslots; i++)
		used[i] = s->procs[i].used;
	uint32_t procs_run = longest_run(used, nslots);

	assert_int_equal(s->ops[BTAPE_OP_READ].nsizes, n);
	for (uint32_t i = 0; i < 2 * STATS_SIZE_EXACT_MAX; i++)
		used[i] = s->ops[BTAPE_OP_READ].sizes[i].n != 0;
	uint32_t sizes_run = longest_run(used, 2 * STATS_SIZE_EXACT_MAX);

	if (procs_run > 100 || sizes_run > 100)
		fail_msg("longest runs of used slots: processes %u, sizes %u (want <= 100)",
			 procs_run, sizes_run);
	stats__free(s);
	free(used);
	free(e);
}

/*
 * Sizes and pids chosen offline to share their home slots (mix64 has no seed: its top 13 bits
 * in 0..7): a lookup gives up after STATS_SLOT_PROBES slots, as if the table were full, instead
 * of walking a chain of thousands for every event. Every I/O is still counted: those not kept
 * exactly go to the log2 bins and the other processes.
 */
static void test_tables_collide(void **st)
{
	const uint32_t n = STATS_MAX_PROCS;
	struct btape_event *e = calloc(n, sizeof(*e));
	struct stats *s;
	uint32_t k = 0;

	(void)st;
	assert_non_null(e);
	for (uint64_t x = 1; k < n; x++) {
		if (mix64(x * 512) >> (64 - 13) < 8) {
			e[k] = ev_rw(S + k, BTAPE_OP_READ, (uint64_t)k * 8, x * 512);
			e[k].present = BTAPE_HAS_PID;
			e[k].pid = 0;
			k++;
		}
	}
	for (uint32_t i = 0, found = 0; found < n; i++) {
		if (mix64(i) >> (64 - 13) < 8)
			e[found++].pid = i;
	}
	s = run(e, n, NULL);
	assert_true(s->ops[BTAPE_OP_READ].nsizes < 100);
	assert_int_equal(s->ops[BTAPE_OP_READ].nsizes + s->ops[BTAPE_OP_READ].n_size_other, n);
	assert_true(s->nprocs < 100);
	assert_int_equal(s->nprocs + s->proc_other_n_procs, n);
	assert_int_equal(s->ops[BTAPE_OP_READ].n, n);
	/* such clusters make a merge of slices order-dependent: split_check says so */
	char why[128] = "";

	assert_int_equal(split_check(s, why, sizeof(why)), 1);
	assert_non_null(strstr(why, "colliding"));
	stats__free(s);
	free(e);
}

/*
 * Disjoint large reads (1025 blocks) that fill the working set's extent table, then `more`
 * (each of nbl blocks at block base + k * step, read or write): the events of the tests below.
 */
static size_t spill_events(struct btape_event **ep, size_t more, uint64_t nbl, uint64_t step,
			   bool cut)
{
	const uint64_t fill = STATS_WS_EDGES_MAX / 2 - 1, fnbl = 1025; /* the last that fit */
	const uint64_t base = fill * (fnbl + 1) + 1000;
	size_t cap = fill + more * (cut ? (nbl + 1023) / 1024 : 1), n = 0;
	struct btape_event *e = calloc(cap, sizeof(*e));

	assert_non_null(e);
	for (uint64_t k = 0; k < fill; k++)
		e[n++] = ev_rw(k, BTAPE_OP_READ, k * (fnbl + 1) * 8, fnbl * 4096);
	for (uint64_t k = 0; k < more; k++) {
		unsigned int op = k % 3 ? BTAPE_OP_READ : BTAPE_OP_WRITE;
		uint64_t b0 = base + k * step;

		/* cut: the same blocks in the same order, as I/Os of 1024 blocks at most */
		for (uint64_t b = b0; b < b0 + nbl; b += cut ? 1024 : nbl) {
			uint64_t m = b0 + nbl - b < 1024 || !cut ? b0 + nbl - b : 1024;

			e[n++] = ev_rw(fill + k, op, b * 8, m * 4096);
		}
	}
	*ep = e;
	return n;
}

/*
 * Past the extent table, a large I/O's blocks go into the table one by one (ws_spill, with
 * prefetching): the same blocks with the same counts as the same blocks in I/Os small enough
 * to be counted block by block anyway. Sampled (a small limit) and exact.
 */
static void test_working_set_spill_same(void **st)
{
	(void)st;
	for (int sampled = 0; sampled < 2; sampled++) {
		struct stats_opts o = {.ws_limit = sampled ? 4096 : 0};
		struct btape_event *e, *c;
		size_t n = spill_events(&e, 60, 3001, 1700, false);
		size_t nc = spill_events(&c, 60, 3001, 1700, true);
		/* b one by one: the batch path puts a block's queued small I/Os after a long one */
		struct stats *a = run(e, n, &o), *b = run_one_by_one(c, nc, &o);
		struct stats *a1 = run_one_by_one(e, n, &o);

		assert_true(a->ws.edges_full);
		assert_int_equal(a->ws.spilled, 60 * 3001);
		assert_int_equal(a->ws.large_uncounted, 0);
		assert_int_equal(b->ws.spilled, 0);
		for (int k = 0; k < 2; k++) {
			const struct blockset *x = k ? &a1->ws : &a->ws, *y = &b->ws;

			assert_int_equal(x->level, y->level);
			assert_int_equal(x->cap, y->cap);
			assert_int_equal(x->n, y->n);
			assert_int_equal(x->accesses, y->accesses);
			struct ws_slot *xs = ws_sorted(x), *ys = ws_sorted(y);

			assert_memory_equal(xs, ys, x->n * sizeof(*xs));
			free(xs);
			free(ys);
		}
		assert_true(sampled ? a->ws.level > 0 : a->ws.level == 0);
		assert_int_equal(a->wsr.blocks, b->wsr.blocks);
		stats__free(a);
		stats__free(a1);
		stats__free(b);
		free(e);
		free(c);
	}
}

/*
 * The blocks counted one by one past the extent table are bounded (STATS_WS_SPILL_BLOCKS,
 * 2^26: about 0.7 s of puts at worst, where 2^28 took 13 s for a 4.7 KB trace): 200 reads of
 * 2 GiB past a full extent table ask for 2^19 blocks each, 128 are counted, 72 are left out
 * (the working set says "at least").
 */
static void test_working_set_spill_budget(void **st)
{
	struct stats_opts o = {.ws_limit = 4096}; /* a small table: the test runs fast */
	struct btape_event *e;
	size_t n = spill_events(&e, 200, 1ull << 19, 1ull << 19, false);
	struct stats *s = run(e, n, &o);

	(void)st;
	assert_true(s->ws.edges_full);
	if (s->ws.spilled > (1ull << 26))
		fail_msg("%llu blocks counted one by one (want at most 2^26)",
			 (unsigned long long)s->ws.spilled);
	assert_int_equal(s->ws.spilled, 128ull << 19);
	assert_int_equal(s->wsr.large_uncounted, 72);
	assert_int_equal(s->wsr.accesses, (STATS_WS_EDGES_MAX / 2 - 1) * 1025 + (128ull << 19));
	stats__free(s);
	free(e);
}

/*
 * One budget of in-flight slots for all devices (STATS_QD_SLOTS_MAX): I/Os that never complete
 * on three devices, more than the budget holds. The first device's table takes the budget; the
 * others' I/Os beyond it are counted untracked, never allocated past it, and the slots held
 * plus what is left is the budget, whichever path added them.
 */
static void test_qd_budget_shared(void **st)
{
	const uint32_t ndev = 3, block = 64;
	const uint64_t n = STATS_QD_SLOTS_MAX / 2 + 3 * 64 * 1024;
	struct btape_event *e = calloc(block, sizeof(*e));

	(void)st;
	assert_non_null(e);
	for (int path = 0; path < 2; path++) { /* stats__add_batch, then stats__warm */
		struct stats *s;
		uint64_t held = 0, untracked = 0, t = S;

		assert_int_equal(stats__new(&s, NULL), 0);
		for (uint64_t i = 0; i < n; i += block) {
			for (uint32_t k = 0; k < block; k++, t++) {
				/* device 0 first, then all three: device 0 takes the budget */
				e[k] = ev_rw(t, BTAPE_OP_READ, 8 * (i + k), 4096);
				e[k].dev = i < STATS_QD_SLOTS_MAX / 2 ? 0 : k % ndev;
				e[k].present |= BTAPE_HAS_COMPLETE;
				e[k].complete_ns = UINT64_MAX / 2 - t; /* never, before the end */
			}
			if (path)
				for (uint32_t k = 0; k < block; k++)
					assert_int_equal(stats__warm(s, &e[k]), 0);
			else
				assert_int_equal(stats__add_batch(s, e, block), 0);
		}
		assert_int_equal(s->ndevs, ndev);
		for (uint32_t d = 0; d < ndev; d++) {
			assert_ptr_equal(s->devs[d].inflight.budget, &s->qd_budget);
			held += (uint64_t)s->devs[d].inflight.cap + s->devs[d].inflight.hcap;
			untracked += s->devs[d].inflight.untracked;
		}
		assert_true(held <= STATS_QD_SLOTS_MAX);
		assert_int_equal(held + s->qd_budget, STATS_QD_SLOTS_MAX);
		assert_true(untracked > 0);
		stats__free(s);
	}
	free(e);
}

/* bounded tables: more processes, sizes and devices than tracked are folded, never lost */
static void test_bounded_tables(void **st)
{
	struct stats *s;
	struct btape_event e = {0};
	const uint32_t n = STATS_MAX_PROCS + 100;

	assert_int_equal(stats__new(&s, NULL), 0);
	for (uint32_t i = 0; i < n; i++) {
		e = ev_rw((uint64_t)i * 1000, BTAPE_OP_READ, (uint64_t)i * 8,
			  512 * (uint64_t)(i + 1));
		e.present = BTAPE_HAS_PID;
		e.pid = i + 1;
		e.dev = i % 2 ? 5000
			      : 3; /* 5000 is beyond STATS_MAX_DEVICES: folded into the last */
		assert_int_equal(stats__add(s, &e), 0);
	}
	assert_int_equal(stats__finish(s), 0);
	assert_int_equal(s->nprocs, STATS_MAX_PROCS);
	assert_int_equal(s->proc_other.n, 100);
	assert_int_equal(s->proc_other_n_procs, 100);
	/* the walk over used slots visits each used slot once, in slot order, and no other */
	uint32_t walked = 0, next = stats_proc_next(s, 0);

	for (uint32_t i = 0; i < 2 * STATS_MAX_PROCS; i++) {
		assert_int_equal(next == i, s->procs[i].used);
		if (next == i) {
			walked++;
			next = stats_proc_next(s, i + 1);
		}
	}
	assert_int_equal(next, 2 * STATS_MAX_PROCS);
	assert_int_equal(walked, s->nprocs);
	assert_int_equal(s->ops[BTAPE_OP_READ].nsizes, STATS_SIZE_EXACT_MAX);
	assert_int_equal(s->ops[BTAPE_OP_READ].n_size_other, n - STATS_SIZE_EXACT_MAX);
	/* the log2 bins hold every size, those in the exact table and those beyond it */
	uint64_t bins[STATS_SIZE_LOG2_BINS] = {0};

	for (uint32_t i = 0; i < n; i++) {
		uint64_t b = 512 * (uint64_t)(i + 1);
		unsigned int w = 0;

		while (b >> w)
			w++;
		bins[w]++;
	}
	assert_memory_equal(s->ops[BTAPE_OP_READ].size_log2, bins, sizeof(bins));
	assert_int_equal(s->devs[3].acc.n + s->devs[STATS_MAX_DEVICES - 1].acc.n, n);
	assert_int_equal(s->devs[STATS_MAX_DEVICES - 1].acc.n, n / 2);
	assert_int_equal(s->all.n, n);
	stats__free(s);
}

/* Compares two analyses field by field (everything the renderers read). */
static void assert_same_acc(const struct acc *a, const struct acc *b)
{
	assert_int_equal(a->n, b->n);
	assert_int_equal(a->bytes, b->bytes);
	assert_memory_equal(a->n_op, b->n_op, sizeof(a->n_op));
	assert_memory_equal(a->bytes_op, b->bytes_op, sizeof(a->bytes_op));
	assert_memory_equal(a->n_dir, b->n_dir, sizeof(a->n_dir));
	assert_memory_equal(a->bytes_dir, b->bytes_dir, sizeof(a->bytes_dir));
	assert_int_equal(a->peak_n, b->peak_n);
	assert_int_equal(a->peak_bytes, b->peak_bytes);
	assert_memory_equal(a->peak_n_dir, b->peak_n_dir, sizeof(a->peak_n_dir));
	assert_memory_equal(a->peak_bytes_dir, b->peak_bytes_dir, sizeof(a->peak_bytes_dir));
	assert_int_equal(a->n_partial, b->n_partial);
}

static void assert_same_hist(const struct hist *a, const struct hist *b)
{
	assert_true((a == NULL) == (b == NULL));
	if (a)
		assert_memory_equal(a, b, sizeof(*a));
}

/* Counts of one scope, by hand: per-op counters are the only ones kept per event. */
static void assert_acc_by_hand(const struct acc *a, const struct btape_event *evs, size_t n)
{
	uint64_t cnt = 0, bytes = 0, nd[DIR__COUNT] = {0};

	for (size_t i = 0; i < n; i++) {
		int d = stats_dir_of(evs[i].op < BTAPE_OP__COUNT ? evs[i].op : BTAPE_OP_OTHER);

		cnt++;
		bytes += evs[i].bytes;
		if (d >= 0)
			nd[d]++;
	}
	assert_int_equal(a->n, cnt);
	assert_int_equal(a->bytes, bytes);
	assert_int_equal(a->n_dir[DIR_READ], nd[DIR_READ]);
	assert_int_equal(a->n_dir[DIR_WRITE], nd[DIR_WRITE]);
}

/*
 * stats__add_batch (blocks, prefetch queue, working-set keys queued then inserted) gives exactly
 * what stats__add one event at a time gives: random mix of ops, sizes up to 2 MiB (more blocks
 * than the queue holds), 3 devices, windows, a small working-set limit so that sampling levels
 * rise mid-batch, a few out-of-order issue times.
 */
static void test_batch_equals_single(void **st)
{
	const size_t n = 60000;
	struct btape_event *e = calloc(n, sizeof(*e));
	struct stats_opts o = {.ws_limit = 3000, .interval_ns = 10 * MS};
	struct stats *a, *b;
	uint64_t x = 12345, t = S;

	(void)st;
	assert_non_null(e);
	for (size_t i = 0; i < n; i++) {
		xorshift(&x);
		static const unsigned int ops[8] = {BTAPE_OP_READ,	  BTAPE_OP_READ,
						    BTAPE_OP_WRITE,	  BTAPE_OP_FLUSH,
						    BTAPE_OP_DISCARD,	  BTAPE_OP_WRITE_ZEROES,
						    BTAPE_OP_ZONE_APPEND, 200};
		uint64_t sz = (x >> 20) % 64 == 0 ? 2u << 20 : 4096u << ((x >> 8) % 5);

		t += (x >> 30) % 7 == 0 ? 0 : 1000 + (x >> 33) % 900000;
		e[i] = ev_rw((x >> 40) % 50 == 0 ? t - 3 * MS : t, ops[x % 8], (x >> 12) % 200000,
			     sz);
		e[i].dev = (uint32_t)((x >> 3) % 3);
		e[i].present = BTAPE_HAS_COMPLETE | BTAPE_HAS_INSERT | BTAPE_HAS_PID;
		e[i].complete_ns = e[i].issue_ns + 20000 + (x >> 24) % 400000;
		e[i].insert_ns = e[i].issue_ns - (x >> 44) % 5000;
		e[i].pid = 100 + (uint32_t)((x >> 50) % 40);
	}
	a = run_one_by_one(e, n, &o);
	assert_int_equal(stats__new(&b, &o), 0);
	for (size_t i = 0, k = 1; i < n; i += k, k = k * 7 % 1500 + 1)
		assert_int_equal(stats__add_batch(b, e + i, i + k < n ? k : n - i), 0);
	assert_int_equal(stats__finish(b), 0);

	assert_true(a->ws.level > 0); /* the sampling path was exercised */
	assert_memory_equal(&a->wsr, &b->wsr, sizeof(a->wsr));
	assert_int_equal(a->ws.accesses, b->ws.accesses);
	assert_same_acc(&a->all, &b->all);
	assert_acc_by_hand(&a->all, e, n);
	for (uint32_t i = 0; i < 3; i++) {
		assert_same_acc(&a->devs[i].acc, &b->devs[i].acc);
		assert_same_hist(a->devs[i].acc.lat, b->devs[i].acc.lat);
		assert_memory_equal(a->devs[i].streams, b->devs[i].streams,
				    sizeof(a->devs[i].streams));
	}
	for (uint32_t i = 0; i < 2 * STATS_MAX_PROCS; i++) {
		assert_int_equal(a->procs[i].used, b->procs[i].used);
		if (a->procs[i].used)
			assert_same_acc(&a->procs[i].acc, &b->procs[i].acc);
	}
	for (int op = 0; op < BTAPE_OP__COUNT; op++) {
		assert_int_equal(a->ops[op].n, b->ops[op].n);
		assert_memory_equal(a->ops[op].size_log2, b->ops[op].size_log2,
				    sizeof(a->ops[op].size_log2));
		assert_same_hist(a->ops[op].lat_dev, b->ops[op].lat_dev);
		assert_same_hist(a->ops[op].lat_queue, b->ops[op].lat_queue);
		assert_same_hist(a->ops[op].lat_total, b->ops[op].lat_total);
	}
	assert_same_hist(a->qd, b->qd);
	assert_same_hist(a->interarrival, b->interarrival);
	assert_same_hist(a->idle, b->idle);
	assert_int_equal(a->tl_rows, b->tl_rows);
	assert_memory_equal(a->tl, b->tl, a->tl_rows * sizeof(*a->tl));
	assert_int_equal(a->complete_windows, b->complete_windows);
	stats__free(a);
	stats__free(b);
	free(e);
}

/* Queue depths one event at a time and through the batch path both equal want. */
static void assert_qd_both_ways(const struct btape_event *e, size_t n, const struct hist *want,
				uint64_t missing)
{
	struct stats *a = run_one_by_one(e, n, NULL), *b = run(e, n, NULL);

	assert_memory_equal(a->qd, want, sizeof(*want));
	assert_memory_equal(b->qd, want, sizeof(*want));
	assert_int_equal(a->qd_missing, missing);
	assert_int_equal(b->qd_missing, missing);
	stats__free(a);
	stats__free(b);
}

/*
 * Queue depth computed from completions equals a brute-force count (1 + earlier requests on
 * the device still in flight at this issue) through both paths (stats__add one by one, and
 * stats__add_batch whose blocks take the fast path): 3 devices, bursts of identical issue
 * times, zero device times, long tails (more than 32 in flight: the in-flight array's
 * search window and fixed-size move are exceeded), events without completion.
 */
static void test_qd_matches_brute_force(void **st)
{
	const size_t n = 20000;
	struct btape_event *e = calloc(n, sizeof(*e));
	struct hist *want = calloc(1, sizeof(*want));
	uint64_t x = 777, t = S, missing = 0;

	(void)st;
	assert_non_null(e);
	assert_non_null(want);
	for (size_t i = 0; i < n; i++) {
		xorshift(&x);
		t += (x >> 5) % 5 == 0 ? 0 : 100 + (x >> 9) % 3000;
		e[i] = ev_rw(t, (x & 1) ? BTAPE_OP_READ : BTAPE_OP_WRITE, (x >> 14) % 100000, 4096);
		e[i].dev = (uint32_t)((x >> 3) % 3);
		e[i].present = (x >> 40) % 97 == 0 ? 0 : BTAPE_HAS_COMPLETE;
		uint64_t d = (x >> 20) % 11 == 0 ? 0 : (x >> 24) % 20000;

		if ((x >> 50) % 4 == 0)
			d += 200000 + (x >> 30) % 800000; /* long tail: many in flight */
		e[i].complete_ns = t + d;
	}
	for (size_t i = 0; i < n; i++) {
		if (!(e[i].present & BTAPE_HAS_COMPLETE)) {
			missing++;
			continue;
		}
		uint64_t qd = 1;

		for (size_t j = 0; j < i; j++)
			qd += e[j].dev == e[i].dev && (e[j].present & BTAPE_HAS_COMPLETE) &&
			      e[j].complete_ns > e[i].issue_ns;
		hist_add(want, qd);
	}
	assert_true(want->max > 40 && want->min == 1);
	assert_qd_both_ways(e, n, want, missing);
	free(want);
	free(e);
}

/*
 * The queue depth rule of the in-flight array, by a plain model: per device an unsorted list;
 * an event with a usable completion first drops the completions at or before its issue, then
 * counts the rest (+1), then joins (not when STATS_QD_HEAP_MAX are in flight: dropped).
 * Unlike the brute force above this also holds when issue times go backwards.
 */
static void qd_model(const struct btape_event *e, size_t n, struct hist *want, uint64_t *missing)
{
	uint64_t *fl[3];
	size_t cnt[3] = {0}, cap = 1u << 12;

	for (int d = 0; d < 3; d++) {
		fl[d] = malloc(cap * sizeof(*fl[d]));
		assert_non_null(fl[d]);
	}
	*missing = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t *f = fl[e[i].dev];
		size_t *c = &cnt[e[i].dev], k = 0;

		if (!(e[i].present & BTAPE_HAS_COMPLETE) || e[i].complete_ns < e[i].issue_ns) {
			(*missing)++;
			continue;
		}
		for (size_t j = 0; j < *c; j++)
			if (f[j] > e[i].issue_ns)
				f[k++] = f[j];
		*c = k;
		hist_add(want, k + 1);
		assert_true(k < cap);
		f[(*c)++] = e[i].complete_ns;
	}
	for (int d = 0; d < 3; d++)
		free(fl[d]);
}

enum { QW_DEEP, QW_DESCENDING, QW_TIES, QW_ZERO_TIME, QW_BACKWARDS, QW__COUNT };

/*
 * Queue depth through both paths equals the model, where the in-flight array's insertion
 * window (the top 8 slots) is not enough or meets its edges: hundreds in flight with random
 * device times (insertion points far below the window), the array growing past 1024 slots,
 * completions in descending order (every insertion at the bottom), bursts of identical
 * issue and completion times, completion == issue with a deep queue, and issue times that go
 * backwards (expired slots then hold completions later than new ones).
 */
static void test_qd_window_edges(void **st)
{
	const size_t n = 24000;
	struct btape_event *e = calloc(n, sizeof(*e));

	(void)st;
	assert_non_null(e);
	for (int sc = 0; sc < QW__COUNT; sc++) {
		struct hist *want = calloc(1, sizeof(*want));
		uint64_t x = 4242 + (uint64_t)sc, t = S, missing;

		assert_non_null(want);
		for (size_t i = 0; i < n; i++) {
			xorshift(&x);
			uint64_t d = (x >> 24) % 300000;

			if (sc == QW_TIES) {
				t += (x >> 5) % 8 == 0 ? 1000 + (x >> 9) % 5000 : 0;
				d = (x >> 24) % 4 == 0 ? 0 : 20000 * (1 + (x >> 26) % 3);
			} else {
				t += 50 + (x >> 9) % 150;
			}
			if (sc == QW_DESCENDING)
				d = 1200000 - (i % 1200) * 1000; /* restarts from the top */
			if (sc == QW_ZERO_TIME && (x >> 30) % 3 == 0)
				d = 0;
			e[i] = ev_rw(t, BTAPE_OP_READ, (x >> 14) % 100000, 4096);
			if (sc == QW_BACKWARDS && (x >> 40) % 5 == 0)
				e[i].issue_ns = t - (x >> 42) % 400000;
			e[i].dev = (uint32_t)((x >> 3) % 3);
			e[i].present = (x >> 50) % 61 == 0 ? 0 : BTAPE_HAS_COMPLETE;
			e[i].complete_ns = e[i].issue_ns + d;
			if ((x >> 56) % 97 == 0)
				e[i].complete_ns = e[i].issue_ns - 1; /* unusable */
		}
		qd_model(e, n, want, &missing);
		assert_true(want->max > (sc == QW_TIES ? 40u : 300u));
		assert_qd_both_ways(e, n, want, missing);
		free(want);
	}
	free(e);
}

/*
 * At STATS_QD_HEAP_MAX requests in flight on a device a new one is counted but not kept
 * (the in-flight array does not grow further): later events do not see it. Once some
 * complete, the array compacts and keeps new ones again.
 */
static void test_qd_bound(void **st)
{
	const size_t extra = 10, n = STATS_QD_HEAP_MAX + extra + 2, chunk = 4096;
	const uint64_t far = 1000 * S;
	struct btape_event *e = calloc(chunk, sizeof(*e));
	struct hist *want = calloc(1, sizeof(*want));
	struct stats *a, *b;

	(void)st;
	assert_non_null(e);
	assert_non_null(want);
	assert_int_equal(stats__new(&a, NULL), 0);
	assert_int_equal(stats__new(&b, NULL), 0);
	for (size_t i0 = 0; i0 < n; i0 += chunk) {
		size_t m = n - i0 < chunk ? n - i0 : chunk;

		for (size_t k = 0; k < m; k++) {
			size_t i = i0 + k;

			e[k] = ev_rw(S + i, BTAPE_OP_WRITE, i * 8, 4096);
			e[k].present = BTAPE_HAS_COMPLETE;
			e[k].complete_ns = far + i;
			if (i == n - 2) { /* after the first 5 completions */
				e[k].issue_ns = far + 4;
				e[k].complete_ns = far + 2 * S;
			} else if (i == n - 1) {
				e[k].issue_ns = far + 5;
				e[k].complete_ns = far + 2 * S;
			}
			assert_int_equal(stats__add(a, &e[k]), 0);
		}
		assert_int_equal(stats__add_batch(b, e, m), 0);
	}
	assert_int_equal(stats__finish(a), 0);
	assert_int_equal(stats__finish(b), 0);
	for (size_t i = 0; i < STATS_QD_HEAP_MAX; i++)
		hist_add(want, i + 1);
	for (size_t i = 0; i < extra; i++)
		hist_add(want, STATS_QD_HEAP_MAX + 1); /* counted, not kept */
	hist_add(want, STATS_QD_HEAP_MAX - 5 + 1); /* 5 completed; the dropped ones do not count */
	hist_add(want, STATS_QD_HEAP_MAX - 5 + 1); /* 1 more completed, the one before was kept */
	assert_int_equal(a->devs[0].inflight.untracked, extra);
	assert_int_equal(b->devs[0].inflight.untracked, extra);
	assert_int_equal(a->qd_untracked, extra); /* what the reports print */
	assert_int_equal(b->qd_untracked, extra);
	assert_memory_equal(a->qd, want, sizeof(*want));
	assert_memory_equal(b->qd, want, sizeof(*want));
	stats__free(a);
	stats__free(b);
	free(want);
	free(e);
}

/* Every statistic of two analyses is the same (the working-set table layout aside). */
/* Same, but the process and size tables by content (a merge fills their slots in another
 * order: the renderers sort them). */
static void assert_same_tables(const struct stats *a, const struct stats *b)
{
	assert_int_equal(a->nprocs, b->nprocs);
	for (uint32_t i = 0; i < 2 * STATS_MAX_PROCS; i++) {
		uint32_t j = 0;

		if (!a->procs[i].used)
			continue;
		while (j < 2 * STATS_MAX_PROCS && !(b->procs[j].used && b->procs[j].pid == a->procs[i].pid))
			j++;
		assert_true(j < 2 * STATS_MAX_PROCS);
		assert_string_equal(a->procs[i].comm, b->procs[j].comm);
		assert_same_acc(&a->procs[i].acc, &b->procs[j].acc);
	}
	for (int op = 0; op < BTAPE_OP__COUNT; op++) {
		struct size_slot *x, *y;
		uint32_t nx, ny;

		assert_int_equal(stats_sizes_sorted(&a->ops[op], &x, &nx), 0);
		assert_int_equal(stats_sizes_sorted(&b->ops[op], &y, &ny), 0);
		assert_int_equal(nx, ny);
		if (nx)
			assert_memory_equal(x, y, nx * sizeof(*x));
		free(x);
		free(y);
	}
}

static void assert_same_stats_tables(const struct stats *a, const struct stats *b, bool by_slot)
{
	assert_int_equal(a->nadd, b->nadd);
	assert_int_equal(a->origin_ns, b->origin_ns);
	assert_int_equal(a->last_issue_ns, b->last_issue_ns);
	assert_int_equal(a->last_complete_ns, b->last_complete_ns);
	assert_int_equal(a->present_all, b->present_all);
	assert_int_equal(a->present_any, b->present_any);
	assert_int_equal(a->duration_ns, b->duration_ns);
	assert_int_equal(a->complete_windows, b->complete_windows);
	assert_same_acc(&a->all, &b->all);
	assert_same_hist(a->all.lat, b->all.lat);
	assert_int_equal(a->ndevs, b->ndevs);
	for (uint32_t i = 0; i < a->ndevs; i++) {
		const struct devstat *x = &a->devs[i], *y = &b->devs[i];

		assert_int_equal(x->used, y->used);
		if (!x->used)
			continue;
		assert_same_acc(&x->acc, &y->acc);
		assert_same_hist(x->acc.lat, y->acc.lat);
		assert_memory_equal(x->streams, y->streams, sizeof(x->streams));
		assert_int_equal(x->lba.shift, y->lba.shift);
		assert_memory_equal(x->lba.bins, y->lba.bins, x->lba.nbins * sizeof(*x->lba.bins));
		assert_int_equal(x->heat_tshift, y->heat_tshift);
		assert_int_equal(x->heat_lshift, y->heat_lshift);
		assert_memory_equal(x->heat, y->heat,
				    STATS_HEAT_L * STATS_HEAT_T * sizeof(*x->heat));
		assert_int_equal(x->min_off, y->min_off);
		assert_int_equal(x->max_end, y->max_end);
		assert_int_equal(x->ext_min, y->ext_min);
		assert_int_equal(x->ext_end, y->ext_end);
		assert_int_equal(x->inflight.n - x->inflight.head,
				 y->inflight.n - y->inflight.head);
	}
	assert_same_tables(a, b);
	for (uint32_t i = 0; by_slot && i < 2 * STATS_MAX_PROCS; i++) {
		assert_int_equal(a->procs[i].used, b->procs[i].used);
		if (!a->procs[i].used)
			continue;
		assert_int_equal(a->procs[i].pid, b->procs[i].pid);
		assert_string_equal(a->procs[i].comm, b->procs[i].comm);
		assert_same_acc(&a->procs[i].acc, &b->procs[i].acc);
	}
	assert_same_acc(&a->proc_other, &b->proc_other);
	for (int op = 0; op < BTAPE_OP__COUNT; op++) {
		const struct opstat *x = &a->ops[op], *y = &b->ops[op];

		assert_int_equal(x->n, y->n);
		assert_int_equal(x->bytes, y->bytes);
		assert_int_equal(x->n_errors, y->n_errors);
		assert_int_equal(x->nsizes, y->nsizes);
		assert_int_equal(x->n_size_other, y->n_size_other);
		if (by_slot)
			assert_memory_equal(x->sizes, y->sizes,
					    2 * STATS_SIZE_EXACT_MAX * sizeof(*x->sizes));
		assert_memory_equal(x->size_log2, y->size_log2, sizeof(x->size_log2));
		assert_same_hist(x->lat_dev, y->lat_dev);
		assert_same_hist(x->lat_queue, y->lat_queue);
		assert_same_hist(x->lat_total, y->lat_total);
		for (int k = 0; k < STATS_QD_BANDS; k++)
			assert_same_hist(x->lat_qd[k], y->lat_qd[k]);
	}
	assert_memory_equal(a->streams_all, b->streams_all, sizeof(a->streams_all));
	assert_memory_equal(&a->wsr, &b->wsr, sizeof(a->wsr));
	assert_int_equal(a->ws.accesses, b->ws.accesses);
	assert_int_equal(a->ws.level, b->ws.level);
	assert_int_equal(a->ws.n, b->ws.n);
	assert_same_hist(a->qd, b->qd);
	assert_int_equal(a->qd_missing, b->qd_missing);
	assert_int_equal(a->qd_from_trace, b->qd_from_trace);
	assert_same_hist(a->interarrival, b->interarrival);
	assert_same_hist(a->idle, b->idle);
	assert_int_equal(a->busy_until, b->busy_until);
	assert_int_equal(a->idle_no_complete, b->idle_no_complete);
	assert_int_equal(a->idle_total_ns, b->idle_total_ns);
	assert_int_equal(a->idle_from_completions, b->idle_from_completions);
	assert_int_equal(a->tl_interval, b->tl_interval);
	assert_int_equal(a->tl_rows, b->tl_rows);
	assert_memory_equal(a->tl, b->tl, a->tl_rows * sizeof(*a->tl));
}

static void assert_same_stats(const struct stats *a, const struct stats *b)
{
	assert_same_stats_tables(a, b, true);
}

/* Random events in issue order (the block fast path's case), by scenario. */
enum {
	SC_MIXED,
	SC_SAME_TIME,
	SC_NO_COMPLETE,
	SC_SOME_COMPLETE,
	SC_QD,
	SC_FLUSH,
	SC_FULL, /* every latency, no error or queue-depth field: the fast path's FULL blocks */
	SC_FULL_QD, /* a recorded queue depth, an error field of 0 (biotape record's traces) */
	SC_FULL_SOME_QD, /* the same with the queue depth on about half the events */
	SC__COUNT
};

static void gen_events(struct btape_event *e, size_t n, int sc, uint64_t seed)
{
	static const unsigned int ops[8] = {
		BTAPE_OP_READ,	BTAPE_OP_READ,	  BTAPE_OP_WRITE,	 BTAPE_OP_WRITE,
		BTAPE_OP_FLUSH, BTAPE_OP_DISCARD, BTAPE_OP_WRITE_ZEROES, 77};
	static const char *comms[3] = {"a", "bb", "ccc"};
	uint64_t x = seed * 2654435761u + 1, t = 5 * S;

	for (size_t i = 0; i < n; i++) {
		xorshift(&x);
		if (sc != SC_SAME_TIME || (x >> 61) == 0)
			t += (x >> 6) % 4 == 0 ? 0 : (x >> 8) % 40000; /* ties, 1 s windows cross */
		unsigned int op = sc == SC_FLUSH ? BTAPE_OP_FLUSH : ops[x % 8];
		uint64_t sz = op == BTAPE_OP_FLUSH ? 0
			      : (x >> 20) % 9 == 0 ? 0
						   : 512u << ((x >> 24) % 9);

		e[i] = ev_rw(t, op, (x >> 28) % 4000000, sz);
		e[i].dev = (uint32_t)((x >> 3) % 4);
		e[i].present = BTAPE_HAS_INSERT | BTAPE_HAS_ERROR | BTAPE_HAS_COMM |
			       ((x >> 40) % 3 ? BTAPE_HAS_PID : 0);
		if (sc != SC_NO_COMPLETE && (sc != SC_SOME_COMPLETE || (x >> 45) % 5))
			e[i].present |= BTAPE_HAS_COMPLETE;
		if (sc == SC_QD || sc == SC_FULL_QD || (sc == SC_FULL_SOME_QD && (x >> 58) % 2))
			e[i].present |= BTAPE_HAS_QD;
		if (sc == SC_FULL)
			e[i].present = (e[i].present & ~BTAPE_HAS_ERROR) | BTAPE_HAS_COMPLETE;
		e[i].complete_ns = t + (x >> 33) % 900000;
		e[i].insert_ns = t - (x >> 50) % 7000;
		e[i].error = sc != SC_FULL_QD && sc != SC_FULL_SOME_QD && (x >> 55) % 17 == 0 ? -5 : 0;
		e[i].pid = 200 + (uint32_t)((x >> 36) % 23);
		e[i].comm = comms[e[i].pid % 3];
		e[i].qd = 1 + (uint32_t)((x >> 42) % 64);
	}
}

/*
 * The block fast path of stats__add_batch gives exactly what stats__add (one event at a
 * time, add_core) gives, for every statistic: issue-ordered random events over 4 devices
 * (one declared that gets I/O only later), ties, 1 s windows and timeline rows crossed inside
 * blocks, missing pids, zero-byte and flush I/Os, and per scenario: identical timestamps, no
 * completion, some completions missing, recorded queue depth, all flushes, every latency
 * (FULL blocks), every latency with a recorded queue depth and errors of 0 (FULL_QD), the
 * same with the depth on some events only (never FULL_QD); batch sizes from 1 to 300
 * events; a small working-set limit (sampling levels rise mid-batch). Each scenario runs
 * twice: with the AVX2 probe of the working set (where the CPU has it) and with SSE2.
 */
static void test_fast_path_equals_single(void **st)
{
	const size_t n = 30000;
	struct btape_event *e = calloc(n, sizeof(*e));

	(void)st;
	assert_non_null(e);
	for (int run = 0; run < 2 * SC__COUNT; run++) {
		struct stats_opts o = {.ws_limit = 5000, .interval_ns = 20 * MS};
		struct stats *a, *b;
		int sc = run / 2;

		gen_events(e, n, sc, (uint64_t)sc + 1);
		assert_int_equal(stats__new(&a, &o), 0);
		assert_int_equal(stats__new(&b, &o), 0);
		if (run % 2) /* the SSE2 probe of the working set where AVX2 would be used */
			b->ws_avx2 = false;
		else if (!b->ws_avx2 && run == 0)
			print_message("no AVX2 here: its working-set probe is not tested\n");
		for (uint32_t d = 0; d < 3; d++) {
			assert_int_equal(stats__set_device(a, d, "d", 1ull << 33), 0);
			assert_int_equal(stats__set_device(b, d, "d", 1ull << 33), 0);
		}
		for (size_t i = 0; i < n; i++)
			assert_int_equal(stats__add(a, &e[i]), 0);
		for (size_t i = 0, k = 1; i < n; i += k, k = k * 5 % 301 + 1)
			assert_int_equal(stats__add_batch(b, e + i, i + k < n ? k : n - i), 0);
		assert_int_equal(stats__finish(a), 0);
		assert_int_equal(stats__finish(b), 0);
		assert_int_equal(a->nadd_fast, 0);
		assert_true(b->nadd_fast > n / 2); /* most blocks took the fast path */
		if (sc == SC_FULL || sc == SC_FULL_QD)
			assert_true(b->nadd_full > n / 2);
		else if (sc == SC_NO_COMPLETE)
			assert_int_equal(b->nadd_full, 0);
		else /* only the blocks without an error (-5 in one event of 17), or with the
		      * queue depth on all events or none */
			assert_true(b->nadd_full < n / 2);
		if (sc != SC_FLUSH)
			assert_true(a->ws.level > 0);
		assert_same_stats(a, b);
		stats__free(a);
		stats__free(b);
	}
	free(e);
}

/*
 * Per-host timeline rows (the HTML report's per-host charts): the same through stats__add and
 * the block fast path; every host's rows add up to its counts and its device times, through a
 * timeline that coarsens (about 0.45 s at 20 us rows: 22,000 rows, doubled twice).
 */
static void test_host_timeline(void **st)
{
	const size_t n = 30000;
	struct btape_event *e = calloc(n, sizeof(*e));

	(void)st;
	assert_non_null(e);
	gen_events(e, n, SC_FULL, 5);
	/* 20 ms rows: most blocks take the fast path; 20 us rows: the timeline coarsens */
	for (int run = 0; run < 2; run++) {
		struct stats_opts o = {.interval_ns = run ? 20000 : 20 * MS};
		struct stats *a, *b;

		assert_int_equal(stats__new(&a, &o), 0);
		assert_int_equal(stats__new(&b, &o), 0);
		for (uint32_t d = 0; d < 4; d++) {
			const char *h = d % 2 ? "hostB" : "hostA";

			assert_int_equal(stats__set_device(a, d, "d", 1ull << 33), 0);
			assert_int_equal(stats__set_device(b, d, "d", 1ull << 33), 0);
			assert_int_equal(stats__set_host(a, d, h), (int)(d % 2));
			assert_int_equal(stats__set_host(b, d, h), (int)(d % 2));
		}
		for (size_t i = 0; i < n; i++)
			assert_int_equal(stats__add(a, &e[i]), 0);
		assert_int_equal(stats__add_batch(b, e, n), 0);
		assert_int_equal(stats__finish(a), 0);
		assert_int_equal(stats__finish(b), 0);
		if (run)
			assert_true(a->tl_interval >= 4 * o.interval_ns); /* coarsened twice */
		else
			assert_true(b->nadd_fast > n / 2);
		assert_int_equal(b->tl_interval, a->tl_interval);
		assert_int_equal(b->tl_rows, a->tl_rows);
		for (uint32_t h = 0; h < 2; h++) {
			uint64_t sum_n = 0, sum_lat_n = 0, sum_lat = 0, want_lat = 0, want_n = 0;

			for (size_t i = 0; i < n; i++)
				if (e[i].dev % 2 == h) {
					want_n++;
					want_lat += e[i].complete_ns - e[i].issue_ns;
				}
			for (uint64_t r = 0; r < a->tl_rows; r++) {
				const struct host_tl_row *x = &a->hosts[h].tl[r],
							 *y = &b->hosts[h].tl[r];

				assert_int_equal(x->n, y->n);
				assert_int_equal(x->lat_n, y->lat_n);
				assert_int_equal(x->lat_sum_ns, y->lat_sum_ns);
				sum_n += x->n;
				sum_lat_n += x->lat_n;
				sum_lat += x->lat_sum_ns;
			}
			assert_int_equal(sum_n, want_n);
			assert_int_equal(sum_n, a->hosts[h].acc.n);
			assert_int_equal(sum_lat_n, want_n); /* SC_FULL: every event completes */
			assert_int_equal(sum_lat, want_lat);
		}
		stats__free(a);
		stats__free(b);
	}
	free(e);
}

/* Edge cases through the batch path: one event; two identical events; one block of one op. */
static void test_fast_path_edges(void **st)
{
	struct btape_event e[130];

	(void)st;
	for (size_t n = 1; n <= 130; n += n < 3 ? 1 : 63) {
		struct stats *a, *b;

		gen_events(e, n, SC_SAME_TIME, 9);
		for (size_t i = 0; i < n; i++)
			e[i].issue_ns = e[0].issue_ns; /* all at one instant */
		a = run_one_by_one(e, n, NULL);
		b = run(e, n, NULL);
		assert_same_stats(a, b);
		assert_int_equal(b->duration_ns, 0);
		stats__free(a);
		stats__free(b);
	}
}

/*
 * Device indexes beyond the table (folded into its last entry) and so large that the
 * working-set key reaches bit 63 (the batch path then puts the event into the table directly):
 * batch equals one by one.
 */
static void test_batch_huge_device_index(void **st)
{
	static const uint32_t devs[5] = {0, 5000, 1u << 19, 1u << 20, UINT32_MAX};
	const size_t n = 3000;
	struct btape_event *e = calloc(n, sizeof(*e));
	struct stats *a, *b;

	(void)st;
	assert_non_null(e);
	gen_events(e, n, SC_MIXED, 11);
	for (size_t i = 0; i < n; i++)
		e[i].dev = devs[i % 5];
	a = run_one_by_one(e, n, NULL);
	b = run(e, n, NULL);
	assert_same_stats(a, b);
	assert_true(a->devs[STATS_MAX_DEVICES - 1].used);
	stats__free(a);
	stats__free(b);
	free(e);
}

/* Events [i0, i1) of e into a new slice analysis (split.h): warm-up, entry, slice. */
static void slice_run(struct stats **sp, struct an_slice *sl, const struct btape_event *e,
		      size_t n, const struct stats_opts *o, uint64_t origin)
{
	struct stats *s;

	assert_int_equal(stats__new(&s, o), 0);
	if (sl->lo)
		stats__set_origin(s, origin);
	for (size_t i = 0; i < n; i++)
		if (e[i].issue_ns >= sl->warm_lo && e[i].issue_ns < sl->lo)
			assert_int_equal(stats__warm(s, &e[i]), 0);
	assert_int_equal(split_entry_capture(&sl->entry, s), 0);
	for (size_t i = 0; i < n; i++) {
		if (e[i].issue_ns < sl->lo || e[i].issue_ns >= sl->hi)
			continue;
		if (!sl->entry.first_issue_ns)
			sl->entry.first_issue_ns = e[i].issue_ns;
		assert_int_equal(stats__add_batch(s, &e[i], 1), 0);
	}
	*sp = s;
}

/* e split into nr slices and merged: 0 (exact), or 1 (not: why). *out: finished. */
static int split_run(struct stats **out, const struct btape_event *e, size_t n, int nr,
		     const struct stats_opts *o, char *why, size_t whylen)
{
	struct stats *dst = NULL;
	int rc = 0;

	for (int r = 0; r < nr; r++) {
		struct an_slice sl = {.rank = r, .nranks = nr};
		struct stats *s;
		void *buf;
		size_t len;
		uint64_t er = 0, es = 0;

		split_plan(&sl, e[0].issue_ns, e[n - 1].issue_ns, NULL);
		slice_run(&s, &sl, e, n, o, e[0].issue_ns);
		if (!r) {
			dst = s;
		} else {
			assert_int_equal(split_pack(s, &sl, 0, 0, &buf, &len), 0);
			if (!rc)
				rc = split_merge(dst, buf, len, &er, &es, why, whylen);
			assert_true(rc >= 0);
			free(buf);
			stats__free(s);
		}
		split_entry_free(&sl.entry);
	}
	if (!rc)
		rc = split_check(dst, why, whylen);
	assert_int_equal(stats__finish(dst), 0);
	*out = dst;
	return rc;
}

/*
 * Slices planned by events (split_load from a chunk index): 600 events over the first 3 s
 * of 9.5 s, 65 over the rest. A chunk's events spread over its windows by overlap; each cut
 * goes to the window boundary nearest its share of the events, and the slices tile the
 * timeline. Without a load, or one of another timeline, the plan is by time.
 */
static void test_split_plan_events(void **st)
{
	const uint64_t o = 1000000000ull, s1 = 1000000000ull;
	struct split_load l, big;
	uint64_t want2[] = {0, o + 2 * s1, UINT64_MAX}, want3[] = {0, o + s1, o + 2 * s1, UINT64_MAX};

	(void)st;
	assert_int_equal(split_load_init(&l, o, o + 9 * s1 + s1 / 2), 0);
	assert_int_equal(l.nwin, 10);
	split_load_add(&l, o, o + 3 * s1, 600);
	split_load_add(&l, o + 3 * s1, o + 9 * s1 + s1 / 2, 65);
	assert_int_equal(l.total, 665);
	assert_int_equal(l.events[0], 200);
	assert_int_equal(l.events[2], 200);
	assert_int_equal(l.events[3], 10);
	assert_int_equal(l.events[9], 5);
	for (int n = 2; n <= 3; n++) {
		for (int r = 0; r < n; r++) {
			struct an_slice sl = {.rank = r, .nranks = n};
			const uint64_t *w = n == 2 ? want2 : want3;

			split_plan(&sl, o, o + 9 * s1 + s1 / 2, &l);
			assert_int_equal(sl.lo, w[r]);
			assert_int_equal(sl.hi, w[r + 1]);
			split_plan(&sl, o, o + 9 * s1 + s1 / 2, NULL); /* by time */
			assert_int_equal(sl.lo, r ? o + (uint64_t)r * 10 / n * s1 : 0);
		}
	}
	struct an_slice sl = {.rank = 1, .nranks = 2};

	split_plan(&sl, o, o + 20 * s1, &l); /* another timeline: by time */
	assert_int_equal(sl.lo, o + 10 * s1);
	split_load_free(&l);
	assert_int_equal(split_load_init(&big, 0, (uint64_t)SPLIT_LOAD_MAX_WINDOWS * s1), -E2BIG);
	split_load_free(&big);
	/* chunks that each claim the whole timeline: past SPLIT_LOAD_WORK_MAX, no load (by time) */
	const uint64_t end = (uint64_t)(SPLIT_LOAD_MAX_WINDOWS - 1) * s1;

	assert_int_equal(split_load_init(&big, 0, end), 0);
	for (int i = 0; i < 3; i++)
		split_load_add(&big, 0, end, 1000);
	assert_non_null(big.events);
	assert_int_equal(big.total, 3000);
	split_load_add(&big, 0, end, 1000);
	split_load_add(&big, 0, end, 1000);
	assert_null(big.events);
	split_load_free(&big);
}

/*
 * Parallel analysis (split.c): the events cut into 2, 3 and 5 time slices, each analysed
 * after its warm-up, merged in order, give what one pass gives, every statistic (process and
 * size tables by content): random events over 9 s on 4 devices (1 s windows, timeline rows
 * and slices crossed), per scenario, with a small working-set limit (sampled, levels rising
 * in the slices and in the merge) and the timeline coarsening. Then what must not merge: an
 * I/O outliving the warm-up (queue depth, idle), more processes than the table holds.
 */
static void test_split_merge_exact(void **st)
{
	const size_t n = 60000;
	struct btape_event *e = calloc(n, sizeof(*e));
	static const int scs[] = {SC_MIXED, SC_SOME_COMPLETE, SC_QD, SC_FULL, SC_NO_COMPLETE};
	char why[160];

	(void)st;
	assert_non_null(e);
	for (size_t k = 0; k < sizeof(scs) / sizeof(scs[0]); k++) {
		gen_events(e, n, scs[k], k + 7);
		for (size_t i = 0; i < n; i++) { /* about 9 s: ten times the spacing */
			uint64_t t = 5 * S + (e[i].issue_ns - 5 * S) * 10;

			e[i].complete_ns = t + (e[i].complete_ns - e[i].issue_ns);
			e[i].insert_ns = t - (e[i].issue_ns - e[i].insert_ns);
			e[i].issue_ns = t;
		}
		for (int nr = 2; nr <= 5; nr += nr == 3 ? 2 : 1) {
			struct stats_opts o = {.ws_limit = 5000 + (uint64_t)nr * 1000,
					       .interval_ns = nr == 5 ? 300000 : 20 * MS};
			struct stats *a = run(e, n, &o), *b;

			why[0] = 0;
			assert_int_equal(split_run(&b, e, n, nr, &o, why, sizeof(why)), 0);
			assert_true(a->ws.level > 0 || scs[k] == SC_FLUSH);
			assert_same_stats_tables(a, b, false);
			stats__free(a);
			stats__free(b);
		}
	}
	/* no I/O from 3 s to 5.5 s: the slice from 4 s has an empty warm-up (its first
	 * inter-arrival and idle period, and every stream's first seek, come at the merge) */
	gen_events(e, n, SC_MIXED, 3);
	struct stats *b;
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t t = 5 * S + (e[i].issue_ns - 5 * S) * 10;

		e[i].complete_ns = t + (e[i].complete_ns - e[i].issue_ns);
		e[i].insert_ns = t - (e[i].issue_ns - e[i].insert_ns);
		e[i].issue_ns = t;
	}
	while (e[m].issue_ns < e[0].issue_ns + 3 * S)
		m++;
	for (size_t i = m; i < n; i++) {
		e[i].issue_ns += 2500 * MS;
		e[i].complete_ns += 2500 * MS;
		e[i].insert_ns += 2500 * MS;
	}
	{
		struct stats *a = run(e, n, NULL);

		assert_int_equal(split_run(&b, e, n, 3, &(struct stats_opts){0}, why, sizeof(why)), 0);
		assert_true(a->idle->max >= 2 * S);
		assert_same_stats_tables(a, b, false);
		stats__free(a);
		stats__free(b);
	}
	for (size_t i = m; i < n; i++) {
		e[i].issue_ns -= 2500 * MS;
		e[i].complete_ns -= 2500 * MS;
		e[i].insert_ns -= 2500 * MS;
	}
	/* an I/O of 3 s 1.5 s before the second slice: its warm-up (1 s) does not see it */
	e[m - 10000].complete_ns = e[m - 10000].issue_ns + 3 * S;
	why[0] = 0;
	assert_int_equal(split_run(&b, e, n, 3, &(struct stats_opts){0}, why, sizeof(why)), 1);
	assert_non_null(strstr(why, "outlived the warm-up"));
	stats__free(b);
	/* more processes than the table: one pass folds by arrival order */
	for (size_t i = 0; i < n; i++)
		e[i].pid = (uint32_t)(i % (STATS_MAX_PROCS + 100));
	e[m - 10000].complete_ns = e[m - 10000].issue_ns + 1000;
	assert_int_equal(split_run(&b, e, n, 2, &(struct stats_opts){0}, why, sizeof(why)), 1);
	assert_non_null(strstr(why, "processes"));
	stats__free(b);
	/* 100 sizes that share their home slots, 50 in each slice: neither slice gives up, but one
	 * pass does (after STATS_SLOT_PROBES), so the merge may not call itself exact */
	for (size_t i = 0, k = 0, x = 1; i < n; i++) {
		e[i].pid = 7;
		if (i % (n / 100) == 0 && k < 100) {
			while (mix64(++x * 512) >> (64 - 13) >= 8)
				;
			k++;
		}
		e[i].bytes = x * 512;
		e[i].op = BTAPE_OP_READ; /* 100 in one table, 50 in each slice's */
	}
	why[0] = 0;
	if (split_run(&b, e, n, 2, &(struct stats_opts){0}, why, sizeof(why)) != 1 ||
	    !strstr(why, "colliding"))
		fail_msg("colliding sizes merged as exact (%s)", why);
	stats__free(b);
	free(e);
}

/*
 * Slices whose device saw sectors far apart (no size declared): the first slice's LBA histogram
 * and heat map widen 33-36 times, the second's not at all. The merge moves the second's bins by
 * that difference, 32 or more: found by fuzz_split (a 32-bit shift there).
 */
static void test_split_merge_far_sectors(void **st)
{
	const size_t n = 4000;
	struct btape_event *e = calloc(n, sizeof(*e));
	struct stats *a, *b;
	char why[160] = "";

	(void)st;
	assert_non_null(e);
	for (size_t i = 0; i < n; i++) {
		bool far = i < n / 2; /* the first 2 s at sectors near 2^41, then near 0 */

		e[i] = ev_rw(5 * S + i * MS, i % 3 ? BTAPE_OP_READ : BTAPE_OP_WRITE,
			     far ? (1ull << 41) + i * 8 : (i % 97) * 8, 4096);
		e[i].present |= BTAPE_HAS_COMPLETE;
		e[i].complete_ns = e[i].issue_ns + MS / 10;
	}
	a = run(e, n, NULL);
	assert_true(a->devs[0].lba.shift >= 33 && a->devs[0].heat_lshift >= 33);
	assert_int_equal(split_run(&b, e, n, 2, &(struct stats_opts){0}, why, sizeof(why)), 0);
	assert_same_stats(a, b);
	stats__free(a);
	stats__free(b);
	free(e);
}
/*
 * Parallel analysis with deep queues: about 1500 in flight on a device, random device times,
 * so that most insertions are deeper than the in-flight array's INFLIGHT_DEEP (its heap takes
 * them). The warm-up keeps them in the array (the slice's entry is read from it), so the
 * merge stays exact, and every statistic equals one pass.
 */
static void test_split_merge_deep_queue(void **st)
{
	const size_t n = 200000;
	struct btape_event *e = calloc(n, sizeof(*e));
	uint64_t x = 99, t = 5 * S;
	char why[160] = "";

	(void)st;
	assert_non_null(e);
	for (size_t i = 0; i < n; i++) {
		xorshift(&x);
		t += 20000;
		e[i] = ev_rw(t, (x & 1) ? BTAPE_OP_READ : BTAPE_OP_WRITE, (x >> 14) % 1000000 * 8,
			     4096);
		e[i].present = BTAPE_HAS_COMPLETE;
		e[i].complete_ns = t + (x >> 20) % (60 * MS);
	}
	struct stats *a = run(e, n, NULL), *b;

	assert_true(a->qd->max > 4 * INFLIGHT_DEEP);
	for (int nr = 2; nr <= 3; nr++) {
		int rc = split_run(&b, e, n, nr, &(struct stats_opts){0}, why, sizeof(why));

		if (rc)
			fail_msg("%d slices: not exact: %s", nr, why);
		assert_same_stats_tables(a, b, false);
		stats__free(b);
	}
	stats__free(a);
	free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_one_event),
		cmocka_unit_test(test_all_flushes),
		cmocka_unit_test(test_identical_timestamps),
		cmocka_unit_test(test_windows_and_burstiness),
		cmocka_unit_test(test_sequential_and_seek),
		cmocka_unit_test(test_working_set_skew),
		cmocka_unit_test(test_working_set_estimate),
		cmocka_unit_test(test_working_set_large_exact),
		cmocka_unit_test(test_working_set_huge_extents),
		cmocka_unit_test(test_working_set_large_fallback),
		cmocka_unit_test(test_working_set_spill_same),
		cmocka_unit_test(test_working_set_spill_budget),
		cmocka_unit_test(test_working_set_bounds),
		cmocka_unit_test(test_working_set_collide),
		cmocka_unit_test(test_qd_and_idle_from_completions),
		cmocka_unit_test(test_latency_by_depth),
		cmocka_unit_test(test_idle_basis_with_missing_completions),
		cmocka_unit_test(test_devices_and_procs),
		cmocka_unit_test(test_extent_includes_discards),
		cmocka_unit_test(test_timeline_coarsens),
		cmocka_unit_test(test_sizes_sorted),
		cmocka_unit_test(test_bounded_tables),
		cmocka_unit_test(test_qd_budget_shared),
		cmocka_unit_test(test_tables_spread),
		cmocka_unit_test(test_tables_collide),
		cmocka_unit_test(test_batch_equals_single),
		cmocka_unit_test(test_qd_matches_brute_force),
		cmocka_unit_test(test_qd_window_edges),
		cmocka_unit_test(test_qd_bound),
		cmocka_unit_test(test_fast_path_equals_single),
		cmocka_unit_test(test_fast_path_edges),
		cmocka_unit_test(test_batch_huge_device_index),
		cmocka_unit_test(test_host_timeline),
		cmocka_unit_test(test_split_plan_events),
		cmocka_unit_test(test_split_merge_exact),
		cmocka_unit_test(test_split_merge_deep_queue),
		cmocka_unit_test(test_split_merge_far_sectors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
