// SPDX-License-Identifier: GPL-2.0-only
/* Phase detection (analyze/phases.h): segmentation of known series, phases of a known trace. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "phases.h"

#define MS 1000000ull
#define S 1000000000ull

static void test_segment_steps(void **st)
{
	double x[30];
	size_t starts[PHASES_MAX];

	(void)st;
	for (int i = 0; i < 30; i++)
		x[i] = i >= 10 && i < 20 ? 5 : 0;
	/* auto: the two steps cost 250 / 125 each, far above the penalty */
	assert_int_equal(phases_segment(x, 30, 1, 2, 0, 10, starts, PHASES_MAX), 3);
	assert_int_equal(starts[0], 0);
	assert_int_equal(starts[1], 10);
	assert_int_equal(starts[2], 20);
	/* at most two: one of the two steps */
	assert_int_equal(phases_segment(x, 30, 1, 2, 2, 0, starts, PHASES_MAX), 2);
	assert_true(starts[1] == 10 || starts[1] == 20);
	/* a penalty above the gain: one piece */
	assert_int_equal(phases_segment(x, 30, 1, 2, 0, 1000, starts, PHASES_MAX), 1);
	/* pieces of at least 11 rows cannot isolate the middle step: a split near it at most */
	int n = phases_segment(x, 30, 1, 11, 0, 10, starts, PHASES_MAX);

	assert_true(n <= 2);
	for (int i = 1; i < n; i++)
		assert_true(starts[i] >= 11 && starts[i] <= 19);
}

static void test_segment_flat(void **st)
{
	double x[40];
	size_t starts[PHASES_MAX];

	(void)st;
	for (int i = 0; i < 40; i++)
		x[i] = (i % 2) ? 1 : -1; /* jitter, no change of level */
	assert_int_equal(phases_segment(x, 40, 1, 2, 0, 20, starts, PHASES_MAX), 1);
	assert_int_equal(starts[0], 0);
}

/* 3 s of 1,000 4 KiB reads/s, then 3 s of 200 64 KiB writes/s: two phases, split at 3 s. */
static void test_detect_two_phases(void **st)
{
	struct stats_opts o = {.interval_ns = 100 * MS};
	struct btape_event *ev = calloc(4000, sizeof(*ev));
	struct phase_span sp[PHASES_MAX];
	struct stats *s;
	size_t n = 0;

	(void)st;
	assert_non_null(ev);
	for (uint64_t t = 0; t < 3 * S; t += MS)
		ev[n++] = (struct btape_event){.issue_ns = t, .op = BTAPE_OP_READ,
					       .sector = n * 8, .bytes = 4096};
	for (uint64_t t = 3 * S; t < 6 * S; t += 5 * MS)
		ev[n++] = (struct btape_event){.issue_ns = t, .op = BTAPE_OP_WRITE,
					       .sector = n * 128, .bytes = 65536};
	assert_int_equal(stats__new(&s, &o), 0);
	assert_int_equal(stats__add_batch(s, ev, n), 0);
	assert_int_equal(stats__finish(s), 0);
	assert_int_equal(phases_detect(s, 0, sp, PHASES_MAX), 2);
	assert_int_equal(sp[0].from_ns, 0);
	assert_int_equal(sp[0].to_ns, 3 * S);
	assert_int_equal(sp[1].from_ns, 3 * S);
	assert_int_equal(sp[1].to_ns, s->last_issue_ns - s->origin_ns + 1);
	/* --phases 1: the whole trace */
	assert_int_equal(phases_detect(s, 1, sp, PHASES_MAX), 1);
	assert_int_equal(sp[0].to_ns, s->last_issue_ns - s->origin_ns + 1);
	stats__free(s);
	free(ev);
}

/*
 * Locality as a phase feature: 3 s of a sequential scan (1,000 4 KiB reads/s) then 3 s of random
 * 4 KiB reads over 1 GiB at the same rate: the same IOPS, mix and sizes, two phases, split at
 * 3 s (within a window). A scan alone, 6 s long, moving over 1.5 GiB with a jump to the next
 * file every 256 reads (a backup), is one phase: its offsets change in every window, its
 * locality does not.
 */
static void scan(struct btape_event *ev, size_t *n, uint64_t from, uint64_t to, uint64_t bs)
{
	uint64_t sector = 0;

	for (uint64_t t = from; t < to; t += MS) {
		if (*n % 256 == 255)
			sector += 4096; /* the next file, 2 MiB on */
		ev[*n] = (struct btape_event){.issue_ns = t, .op = BTAPE_OP_READ, .sector = sector,
					      .bytes = (uint32_t)bs};
		sector += bs / 512;
		(*n)++;
	}
}

static int phases_of(const struct btape_event *ev, size_t n, struct phase_span *sp)
{
	struct stats_opts o = {.interval_ns = 100 * MS};
	struct stats *s;
	int k;

	assert_int_equal(stats__new(&s, &o), 0);
	assert_int_equal(stats__add_batch(s, ev, n), 0);
	assert_int_equal(stats__finish(s), 0);
	k = phases_detect(s, 0, sp, PHASES_MAX);
	stats__free(s);
	return k;
}

/* Random reads of bs bytes at 1,000/s in [from, to), over blocks [lo_blk, lo_blk + nblk) of bs. */
static void random_reads(struct btape_event *ev, size_t *n, uint64_t from, uint64_t to,
			 uint64_t lo_blk, uint64_t nblk, uint32_t bs, uint64_t *x)
{
	for (uint64_t t = from; t < to; t += MS) {
		*x ^= *x << 13;
		*x ^= *x >> 7;
		*x ^= *x << 17;
		ev[(*n)++] = (struct btape_event){.issue_ns = t, .op = BTAPE_OP_READ,
						  .sector = (lo_blk + *x % (nblk - 1)) * (bs / 512),
						  .bytes = bs};
	}
}

static void test_detect_scan_then_random(void **st)
{
	struct btape_event *ev = calloc(6000, sizeof(*ev));
	struct phase_span sp[PHASES_MAX];
	uint64_t x = 88172645463325252ull;
	size_t n = 0;

	(void)st;
	assert_non_null(ev);
	scan(ev, &n, 0, 3 * S, 4096);
	random_reads(ev, &n, 3 * S, 6 * S, 0, 262144, 4096, &x);
	assert_int_equal(phases_of(ev, n, sp), 2);
	assert_true(sp[1].from_ns >= 3 * S - 100 * MS && sp[1].from_ns <= 3 * S + 100 * MS);
	/* the scan alone, 6 s, 64 KiB reads: 1.5 GiB of offsets, one phase */
	n = 0;
	scan(ev, &n, 0, 6 * S, 65536);
	assert_int_equal(phases_of(ev, n, sp), 1);
	free(ev);
}

/*
 * A hot zone that moves: 4 s of random 8 KiB reads at 1,000/s over the first quarter of 1 GiB,
 * then, after 0.2 s without I/O (fio's pause between stonewalled jobs, two windows: not a
 * phase of its own), 4 s of the same over the last quarter. Rate, mix, sizes, sequential share
 * and seek lengths do not change; where the jumps land does: two phases, split in the pause. The same 8 s uniformly over the whole GiB is one phase, and so are two scans
 * interleaved read by read (two readers, one from the start, one from the middle of 375 MiB:
 * every read jumps, and where they land moves with the scans, by half the range in 6 s).
 */
static void test_detect_moving_zone(void **st)
{
	const uint64_t gib_blk = (1ull << 30) / 8192, q = gib_blk / 4;
	struct btape_event *ev = calloc(8000, sizeof(*ev));
	struct phase_span sp[PHASES_MAX];
	uint64_t x = 88172645463325252ull;
	size_t n = 0;

	(void)st;
	assert_non_null(ev);
	random_reads(ev, &n, 0, 4 * S, 0, q, 8192, &x);
	random_reads(ev, &n, 4200 * MS, 8200 * MS, 3 * q, q, 8192, &x);
	assert_int_equal(phases_of(ev, n, sp), 2);
	assert_true(sp[1].from_ns >= 4 * S && sp[1].from_ns <= 4200 * MS);
	/* uniform over the whole GiB: one phase */
	n = 0;
	random_reads(ev, &n, 0, 8 * S, 0, gib_blk, 8192, &x);
	assert_int_equal(phases_of(ev, n, sp), 1);
	/* two interleaved 64 KiB scans, 6 s: one phase */
	uint64_t at[2] = {0, 6000 / 2 * 128};

	n = 0;
	for (uint64_t t = 0; t < 6 * S; t += MS, n++) {
		ev[n] = (struct btape_event){.issue_ns = t, .op = BTAPE_OP_READ,
					     .sector = at[n & 1], .bytes = 65536};
		at[n & 1] += 128;
	}
	assert_int_equal(phases_of(ev, n, sp), 1);
	free(ev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_segment_steps),
		cmocka_unit_test(test_segment_flat),
		cmocka_unit_test(test_detect_two_phases),
		cmocka_unit_test(test_detect_scan_then_random),
		cmocka_unit_test(test_detect_moving_zone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
