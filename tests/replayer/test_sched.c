// SPDX-License-Identifier: GPL-2.0-only
/* Scheduler tests: the null engine and a fake clock, so every time is exact. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btape.h"
#include "clock.h"
#include "engine.h"
#include "order.h"
#include "scheduler.h"
#include "source.h"

#define US 1000ull
#define MIB (1024ull * 1024)
#define MAX_DONE 4096

struct capture {
	struct rp_io done[MAX_DONE];
	unsigned int n;
	struct rp_clock *clock;
	uint64_t stall_after_first_ns; /* advance the fake clock once, after the first completion */
};

static void on_done(void *ctx, const struct rp_io *io)
{
	struct capture *c = ctx;

	if (c->n < MAX_DONE)
		c->done[c->n++] = *io;
	if (c->n == 1 && c->stall_after_first_ns)
		rp_clock_advance(c->clock, c->clock->now(c->clock) + c->stall_after_first_ns);
}

struct fixture {
	struct rp_clock clock;
	struct rp_target target;
	struct rp_devmap dev;
	struct rp_sched_cfg cfg;
	struct rp_stats st;
	struct capture cap;
	uint64_t latency_ns;
};

static struct fixture *fx_new(void)
{
	struct fixture *f = calloc(1, sizeof(*f));

	rp_clock_init_fake(&f->clock, 1000000000ull);
	f->target = (struct rp_target){.fd = -1, .size = 64 * MIB, .lbs = 512, .path = "t"};
	f->dev = (struct rp_devmap){.target = 0, .src_size = 64 * MIB};
	f->cfg = (struct rp_sched_cfg){
		.timing = RP_TIMING_ORIGINAL,
		.speed = 1,
		.iodepth = 64,
		.scale = 1,
		.layout = RP_LAYOUT_SHARD,
		.fit = RP_FIT_ERROR,
		.loops = 1,
		.ndev = 1,
		.devs = &f->dev,
		.targets = &f->target,
		.ntargets = 1,
		.on_done = on_done,
		.ctx = &f->cap,
	};
	f->cap.clock = &f->clock;
	return f;
}

static int fx_run(struct fixture *f, const struct btape_event *evs, size_t n)
{
	struct rp_array_source src;
	struct rp_engine *e = NULL;
	struct rp_engine_cfg ec = {.targets = &f->target,
				   .ntargets = 1,
				   .depth = f->cfg.iodepth * f->cfg.scale,
				   .clock = &f->clock,
				   .null_latency_ns = f->latency_ns};
	int err;

	rp_array_source_init(&src, evs, n, 3); /* small batches: crosses batch edges */
	assert_int_equal(rp_engine_null.open(&e, &ec), 0);
	err = rp_sched_run(&f->cfg, &rp_engine_null, e, &f->clock, &src.src, &f->st);
	rp_engine_null.close(e);
	return err;
}

static struct btape_event ev_at(uint64_t t_us, uint8_t op, uint64_t sector, uint64_t bytes)
{
	return (struct btape_event){
		.issue_ns = 5000000000ull + t_us * US, .op = op, .sector = sector, .bytes = bytes};
}

/* issue time relative to the first deadline */
static uint64_t rel(const struct fixture *f, unsigned int i)
{
	return f->cap.done[i].issue_ns - f->st.start_ns;
}

static void test_deadlines_exact(void **state)
{
	struct fixture *f = fx_new();
	struct btape_event evs[] = {
		ev_at(0, BTAPE_OP_READ, 0, 4096), ev_at(100, BTAPE_OP_READ, 8, 4096),
		ev_at(250, BTAPE_OP_READ, 16, 4096), ev_at(1000, BTAPE_OP_READ, 24, 4096)};

	assert_int_equal(fx_run(f, evs, 4), 0);
	assert_int_equal(f->cap.n, 4);
	assert_int_equal(rel(f, 0), 0);
	assert_int_equal(rel(f, 1), 100 * US);
	assert_int_equal(rel(f, 2), 250 * US);
	assert_int_equal(rel(f, 3), 1000 * US);
	assert_int_equal(f->st.issue_err.max, 0);
	assert_int_equal(f->st.late, 0);
	assert_int_equal(f->st.ios[RP_IO_READ], 4);
	assert_int_equal(f->st.bytes[RP_IO_READ], 4 * 4096);
	assert_int_equal(f->cap.done[2].offset, 16 * 512);
	free(f);
}

static void test_speed(void **state)
{
	struct fixture *f = fx_new();
	struct btape_event evs[] = {ev_at(0, BTAPE_OP_READ, 0, 4096),
				    ev_at(100, BTAPE_OP_READ, 8, 4096),
				    ev_at(1000, BTAPE_OP_READ, 24, 4096)};

	f->cfg.speed = 2;
	assert_int_equal(fx_run(f, evs, 3), 0);
	assert_int_equal(rel(f, 1), 50 * US);
	assert_int_equal(rel(f, 2), 500 * US);
	f->cfg.speed = 0.5;
	f->cap.n = 0;
	assert_int_equal(fx_run(f, evs, 3), 0);
	assert_int_equal(rel(f, 2), 2000 * US);
	free(f);
}

/* A late I/O (here: the replayer stalled 300 us) goes at once; the next keeps its deadline. */
static void test_late_does_not_shift(void **state)
{
	struct fixture *f = fx_new();
	struct btape_event evs[] = {
		ev_at(0, BTAPE_OP_READ, 0, 4096), ev_at(100, BTAPE_OP_READ, 8, 4096),
		ev_at(350, BTAPE_OP_READ, 16, 4096), ev_at(1000, BTAPE_OP_READ, 24, 4096)};

	f->cap.stall_after_first_ns = 300 * US;
	assert_int_equal(fx_run(f, evs, 4), 0);
	assert_int_equal(f->cap.n, 4);
	assert_int_equal(rel(f, 1), 300 * US); /* 200 us late */
	assert_int_equal(rel(f, 2), 350 * US); /* on time */
	assert_int_equal(rel(f, 3), 1000 * US);
	assert_int_equal(f->st.late, 1);
	assert_int_equal(f->st.issue_err.max, 200 * US);
	/* fell behind by 200 us at 100 us; more than 100 us behind from 200 us to 300 us */
	assert_int_equal(f->st.lag_max_ns, 200 * US);
	assert_int_equal(f->st.lag_at_ns, 100 * US);
	assert_int_equal(f->st.behind_ns, 100 * US);
	free(f);
}

/*
 * Falling behind at the depth cap (depth 1, each I/O takes 150 us): the worst lag and when, and
 * the time behind summed over two separate episodes whose late intervals overlap within each.
 */
static void test_fell_behind(void **state)
{
	struct fixture *f = fx_new();
	struct btape_event evs[] = {
		ev_at(0, BTAPE_OP_READ, 0, 4096),     ev_at(10, BTAPE_OP_READ, 8, 4096),
		ev_at(20, BTAPE_OP_READ, 16, 4096),   ev_at(400, BTAPE_OP_READ, 24, 4096),
		ev_at(1000, BTAPE_OP_READ, 32, 4096), ev_at(1010, BTAPE_OP_READ, 40, 4096)};

	f->cfg.iodepth = 1;
	f->latency_ns = 150 * US;
	assert_int_equal(fx_run(f, evs, 6), 0);
	assert_int_equal(f->cap.n, 6);
	assert_int_equal(rel(f, 1), 150 * US); /* 140 us late */
	assert_int_equal(rel(f, 2), 300 * US); /* 280 us late: the worst */
	assert_int_equal(rel(f, 3), 450 * US); /* 50 us: not late */
	assert_int_equal(rel(f, 4), 1000 * US);
	assert_int_equal(rel(f, 5), 1150 * US); /* 140 us late, a second episode */
	assert_int_equal(f->st.late, 3);
	assert_int_equal(f->st.lag_max_ns, 280 * US);
	assert_int_equal(f->st.lag_at_ns, 20 * US);
	/* [110, 150] and [120, 300] make [110, 300]; then [1110, 1150] */
	assert_int_equal(f->st.behind_ns, 190 * US + 40 * US);
	/* held by the cap: #1 from 10 to 150, #2 150-300, #3 400-450, #5 1010-1150 */
	assert_int_equal(f->st.depth_capped, 4);
	assert_int_equal(f->st.stage.capped_ns, (140 + 150 + 50 + 140) * US);
	/* the fake clock only moves while the scheduler waits: every ns of it is a wait */
	assert_int_equal(f->st.stage.wait_ns, f->st.stage.run_ns);
	assert_int_equal(f->st.stage.reaped, 6);
	free(f);
}

/* On time: no lag, nothing behind. */
static void test_kept_up(void **state)
{
	struct fixture *f = fx_new();
	struct btape_event evs[] = {ev_at(0, BTAPE_OP_READ, 0, 4096),
				    ev_at(500, BTAPE_OP_READ, 8, 4096)};

	f->latency_ns = 150 * US;
	assert_int_equal(fx_run(f, evs, 2), 0);
	assert_int_equal(f->st.lag_max_ns, 0);
	assert_int_equal(f->st.behind_ns, 0);
	assert_int_equal(f->st.stage.capped_ns, 0);
	free(f);
}

/* Depth cap in original timing: a delayed I/O is counted, and does not delay the next one. */
static void test_depth_cap_original(void **state)
{
	struct fixture *f = fx_new();
	struct btape_event evs[] = {ev_at(0, BTAPE_OP_READ, 0, 4096),
				    ev_at(10, BTAPE_OP_READ, 8, 4096),
				    ev_at(400, BTAPE_OP_READ, 16, 4096)};

	f->cfg.iodepth = 1;
	f->latency_ns = 150 * US;
	assert_int_equal(fx_run(f, evs, 3), 0);
	assert_int_equal(f->cap.n, 3);
	assert_int_equal(rel(f, 0), 0);
	assert_int_equal(rel(f, 1), 150 * US); /* waited for the slot */
	assert_int_equal(rel(f, 2), 400 * US); /* not shifted */
	assert_int_equal(f->st.depth_capped, 1);
	assert_int_equal(f->st.late, 1);
	assert_int_equal(f->st.max_inflight, 1);
	assert_int_equal(f->st.lat[RP_IO_READ].max, 150 * US);
	free(f);
}

/*
 * The hold at the recording's depth: an I/O that finds hold_depth in flight waits for a
 * completion, never more than hold_ns past its deadline; the deadlines do not move. An I/O that
 * then goes with hold_depth or more in flight is counted past the depth.
 */
static void test_hold_depth(void **state)
{
	struct btape_event evs[] = {
		ev_at(0, BTAPE_OP_READ, 0, 4096), ev_at(0, BTAPE_OP_READ, 8, 4096),
		ev_at(0, BTAPE_OP_READ, 16, 4096), ev_at(400, BTAPE_OP_READ, 24, 4096)};
	struct fixture *f = fx_new();

	(void)state;
	/* completions come sooner than the hold ends: each held I/O goes at one */
	f->cfg.hold_depth = 1;
	f->cfg.hold_ns = 50 * US;
	f->latency_ns = 20 * US;
	assert_int_equal(fx_run(f, evs, 4), 0);
	assert_int_equal(f->cap.n, 4);
	assert_int_equal(rel(f, 0), 0);
	assert_int_equal(rel(f, 1), 20 * US);
	assert_int_equal(rel(f, 2), 40 * US);
	assert_int_equal(rel(f, 3), 400 * US); /* not shifted */
	assert_int_equal(f->st.held, 2);
	assert_int_equal(f->st.past_depth, 0);
	assert_int_equal(f->st.max_inflight, 1);
	assert_int_equal(f->st.late, 0);
	assert_int_equal(f->st.depth_capped, 0);
	free(f);

	/* a slow completion: the held I/Os go hold_ns after their deadline, past the depth */
	f = fx_new();
	f->cfg.hold_depth = 1;
	f->cfg.hold_ns = 50 * US;
	f->latency_ns = 150 * US;
	assert_int_equal(fx_run(f, evs, 4), 0);
	assert_int_equal(rel(f, 0), 0);
	assert_int_equal(rel(f, 1), 50 * US);
	assert_int_equal(rel(f, 2), 50 * US);
	assert_int_equal(rel(f, 3), 400 * US);
	assert_int_equal(f->st.held, 1);
	assert_int_equal(f->st.past_depth, 2); /* I/Os 1 and 2 went with 1 and 2 in flight */
	assert_int_equal(f->st.max_inflight, 3);
	assert_int_equal(f->st.late, 0);
	free(f);

	/* afap ignores it */
	f = fx_new();
	f->cfg.timing = RP_TIMING_AFAP;
	f->cfg.hold_depth = 1;
	f->cfg.hold_ns = 50 * US;
	f->latency_ns = 150 * US;
	assert_int_equal(fx_run(f, evs, 4), 0);
	assert_int_equal(f->st.held, 0);
	assert_int_equal(f->st.past_depth, 0);
	assert_int_equal(f->st.max_inflight, 4);
	free(f);
}

/* At each depth-cap hit the I/Os in flight are summed, and the flushes among them. */
static void test_capped_flush_share(void **state)
{
	struct fixture *f = fx_new();
	struct btape_event evs[] = {
		ev_at(0, BTAPE_OP_FLUSH, 0, 0),
		ev_at(10, BTAPE_OP_WRITE, 0, 4096),
		ev_at(20, BTAPE_OP_WRITE, 8, 4096), /* held: a flush and a write out */
		ev_at(400, BTAPE_OP_FLUSH, 0, 0),
		ev_at(410, BTAPE_OP_FLUSH, 0, 0),
		ev_at(420, BTAPE_OP_WRITE, 16, 4096), /* held: two flushes out */
		ev_at(900, BTAPE_OP_WRITE, 24, 4096), /* none held */
	};

	(void)state;
	f->cfg.allow_writes = true;
	f->cfg.iodepth = 2;
	f->latency_ns = 150 * US;
	assert_int_equal(fx_run(f, evs, 7), 0);
	assert_int_equal(f->cap.n, 7);
	assert_int_equal(f->st.depth_capped, 2);
	assert_int_equal(f->st.capped_slots, 4);
	assert_int_equal(f->st.capped_flush_slots, 3);
	free(f);
}

static void test_afap_depth(void **state)
{
	struct fixture *f = fx_new();
	struct btape_event evs[100];

	for (unsigned int i = 0; i < 100; i++)
		evs[i] = ev_at(i * 1000, BTAPE_OP_READ, i * 8, 4096);
	f->cfg.timing = RP_TIMING_AFAP;
	f->cfg.iodepth = 4;
	f->latency_ns = 10 * US;
	assert_int_equal(fx_run(f, evs, 100), 0);
	assert_int_equal(f->cap.n, 100);
	assert_int_equal(f->st.max_inflight, 4);
	assert_int_equal(f->st.depth_capped, 0);
	assert_int_equal(f->st.ios[RP_IO_READ], 100); /* all measured: afap starts at once */
	/* 100 I/Os, 4 at a time, 10 us each: 25 rounds */
	assert_int_equal(f->st.end_ns - f->cap.done[0].issue_ns, 250 * US);
	/* order kept */
	for (unsigned int i = 0; i < 100; i++)
		assert_int_equal(f->cap.done[i].offset, i * 4096);
	free(f);
}

static void test_load_keeps_recorded_qd(void **state)
{
	struct fixture *f = fx_new();
	struct btape_event evs[40];

	for (unsigned int i = 0; i < 40; i++) {
		evs[i] = ev_at(i, BTAPE_OP_READ, i * 8, 4096);
		evs[i].present = BTAPE_HAS_QD;
		evs[i].qd = i < 20 ? 2 : 5;
	}
	f->cfg.timing = RP_TIMING_LOAD;
	f->latency_ns = 10 * US;
	assert_int_equal(fx_run(f, evs, 40), 0);
	assert_int_equal(f->cap.n, 40);
	assert_int_equal(f->st.max_inflight, 5);
	for (unsigned int i = 0; i < 20; i++)
		assert_true(f->cap.done[i].qd <= 2);
	free(f);
}

static void test_shard_and_overlay(void **state)
{
	struct fixture *f = fx_new();
	struct btape_event evs[] = {ev_at(0, BTAPE_OP_READ, 0, 4096),
				    ev_at(10, BTAPE_OP_READ, 2048, 8192)};
	uint64_t off, len;

	f->cfg.scale = 4;
	f->target.size = 16 * MIB;
	f->dev.src_size = 4 * MIB;
	assert_int_equal(fx_run(f, evs, 2), 0);
	assert_int_equal(f->cap.n, 8);
	for (unsigned int i = 0; i < 8; i++) {
		const struct rp_io *io = &f->cap.done[i];
		uint64_t want = io->copy * 4 * MIB + (i < 4 ? 0 : 2048 * 512);

		assert_int_equal(io->offset, want);
		/* copies share the deadline */
		assert_int_equal(io->intended_ns, f->cap.done[i < 4 ? 0 : 4].intended_ns);
	}
	f->cfg.layout = RP_LAYOUT_OVERLAY;
	f->cap.n = 0;
	assert_int_equal(fx_run(f, evs, 2), 0);
	assert_int_equal(f->cap.n, 8);
	for (unsigned int i = 4; i < 8; i++)
		assert_int_equal(f->cap.done[i].offset, 2048 * 512);
	/* shard regions are aligned to the logical block size */
	f->cfg.layout = RP_LAYOUT_SHARD;
	f->cfg.scale = 3;
	f->target.lbs = 4096;
	f->target.size = 3 * MIB + 4096 * 2;
	assert_int_equal(rp_region_bytes(&f->cfg, &f->target), MIB);
	assert_int_equal(rp_map_extent(&f->cfg, 0, 2, 0, 4096, &off, &len), 0);
	assert_int_equal(off, 2 * MIB);
	free(f);
}

static void test_fit_rules(void **state)
{
	struct fixture *f = fx_new();
	uint64_t off = 0, len = 0;

	f->target.size = 1 * MIB;
	f->dev.src_size = 2 * MIB;
	f->cfg.fit = RP_FIT_ERROR;
	assert_int_equal(rp_map_extent(&f->cfg, 0, 0, MIB / 2, 4096, &off, &len), 0);
	assert_int_equal(off, MIB / 2);
	assert_int_equal(rp_map_extent(&f->cfg, 0, 0, MIB + MIB / 2, 4096, &off, &len), -ERANGE);
	/* the last block ending exactly at the end fits */
	assert_int_equal(rp_map_extent(&f->cfg, 0, 0, MIB - 4096, 4096, &off, &len), 0);
	f->cfg.fit = RP_FIT_WRAP;
	assert_int_equal(rp_map_extent(&f->cfg, 0, 0, MIB + MIB / 2, 4096, &off, &len), 0);
	assert_int_equal(off, MIB / 2);
	/* an extent straddling the end after wrapping is pulled inside */
	assert_int_equal(rp_map_extent(&f->cfg, 0, 0, 2 * MIB - 512, 4096, &off, &len), 0);
	assert_true(off + len <= MIB);
	f->cfg.fit = RP_FIT_SCALE;
	assert_int_equal(rp_map_extent(&f->cfg, 0, 0, MIB + MIB / 2, 4096, &off, &len), 0);
	assert_int_equal(off, 3 * MIB / 4);
	assert_int_equal(rp_map_extent(&f->cfg, 0, 0, 2 * MIB - 4096, 4096, &off, &len), 0);
	assert_int_equal(off + len, MIB);
	/* bigger than the whole region: refused whatever the rule */
	assert_int_equal(rp_map_extent(&f->cfg, 0, 0, 0, 2 * MIB, &off, &len), -ERANGE);
	/* bad device */
	assert_int_equal(rp_map_extent(&f->cfg, 3, 0, 0, 4096, &off, &len), -EINVAL);
	/* a run under --fit error fails at the offending I/O instead of writing elsewhere */
	f->cfg.fit = RP_FIT_ERROR;
	struct btape_event evs[] = {ev_at(0, BTAPE_OP_READ, 0, 4096),
				    ev_at(10, BTAPE_OP_READ, 3 * MIB / 512, 4096)};
	assert_int_equal(fx_run(f, evs, 2), -ERANGE);
	assert_int_equal(f->cap.n, 1);
	free(f);
}

/* An extent whose end passes 2^64 fits under no rule: no wrapped length, no offset near 2^64. */
static void test_end_overflow(void **state)
{
	static const enum rp_fit fits[] = {RP_FIT_ERROR, RP_FIT_WRAP, RP_FIT_SCALE};
	struct fixture *f = fx_new();
	uint64_t off, len;

	f->target.size = 1 * MIB;
	f->dev.src_size = 2 * MIB;
	for (size_t i = 0; i < sizeof(fits) / sizeof(fits[0]); i++) {
		f->cfg.fit = fits[i];
		off = len = 7;
		/* 2^64 - 1 bytes: was a 0-byte I/O at offset 0 */
		assert_int_equal(rp_map_extent(&f->cfg, 0, 0, 0, UINT64_MAX, &off, &len), -ERANGE);
		/* 4 KiB at 2^64 - 512: was issued at offset 2^64 - 512 */
		assert_int_equal(rp_map_extent(&f->cfg, 0, 0, UINT64_MAX - 511, 4096, &off, &len),
				 -ERANGE);
		/* ends within 2^64 but the rounding up to the block would pass it */
		assert_int_equal(rp_map_extent(&f->cfg, 0, 0, UINT64_MAX - 511, 511, &off, &len),
				 -ERANGE);
		assert_int_equal(off, 7);
		assert_int_equal(len, 7);
	}
	/* a run under --fit error stops at such an I/O instead of issuing it */
	f->cfg.fit = RP_FIT_ERROR;
	struct btape_event evs[] = {ev_at(0, BTAPE_OP_READ, 0, 4096),
				    ev_at(10, BTAPE_OP_READ, UINT64_MAX >> 9, 4096)};
	assert_int_equal(fx_run(f, evs, 2), -ERANGE);
	assert_int_equal(f->cap.n, 1);
	/* the largest extent the format allows maps as usual under wrap */
	f->cfg.fit = RP_FIT_WRAP;
	assert_int_equal(rp_map_extent(&f->cfg, 0, 0, BTAPE_END_MAX - 4095, 4096, &off, &len), 0);
	assert_true(off + len <= MIB && len == 4096);
	free(f);
}

static void test_alignment(void **state)
{
	struct fixture *f = fx_new();
	uint64_t off, len;

	f->target.lbs = 4096;
	assert_int_equal(rp_map_extent(&f->cfg, 0, 0, 3 * 512, 1024, &off, &len), 0);
	assert_int_equal(off, 0);
	assert_int_equal(len, 4096);
	assert_int_equal(rp_map_extent(&f->cfg, 0, 0, 7 * 512, 1024, &off, &len), 0);
	assert_int_equal(off, 0);
	assert_int_equal(len, 8192);
	f->target.lbs = 512;
	assert_int_equal(rp_map_extent(&f->cfg, 0, 0, 7 * 512, 1024, &off, &len), 0);
	assert_int_equal(off, 7 * 512);
	assert_int_equal(len, 1024);
	free(f);
}

/* Discards and write-zeroes round inward: never a byte outside the recorded extent. */
static void test_inward_alignment(void **state)
{
	struct fixture *f = fx_new();
	uint64_t off, len;

	f->target.lbs = 4096;
	/* sectors 1..16: only the block at 4096 lies wholly inside */
	assert_int_equal(rp_map_io(&f->cfg, RP_IO_DISCARD, 0, 0, 512, 8192, &off, &len), 0);
	assert_int_equal(off, 4096);
	assert_int_equal(len, 4096);
	assert_int_equal(rp_map_io(&f->cfg, RP_IO_ZERO, 0, 0, 512, 8192, &off, &len), 0);
	assert_int_equal(off, 4096);
	assert_int_equal(len, 4096);
	/* a write of the same extent still covers it whole */
	assert_int_equal(rp_map_io(&f->cfg, RP_IO_WRITE, 0, 0, 512, 8192, &off, &len), 0);
	assert_int_equal(off, 0);
	assert_int_equal(len, 12288);
	/* under one block: nothing to do */
	assert_int_equal(rp_map_io(&f->cfg, RP_IO_DISCARD, 0, 0, 512, 7 * 512, &off, &len),
			 -ENODATA);
	assert_int_equal(rp_map_io(&f->cfg, RP_IO_ZERO, 0, 0, 4096 + 512, 4096, &off, &len),
			 -ENODATA);
	/* a discard just under 4 GiB stays under 4 GiB (the result trace's size field) */
	f->target.size = 8ull << 30;
	f->cfg.fit = RP_FIT_ERROR;
	assert_int_equal(rp_map_io(&f->cfg, RP_IO_DISCARD, 0, 0, 512, (4ull << 30) - 512, &off,
				   &len),
			 0);
	assert_int_equal(off, 4096);
	assert_true(len < (4ull << 30));
	assert_int_equal(len, (4ull << 30) - 4096);

	/* the run: the sub-block discard is skipped and counted, the other goes inward */
	struct btape_event evs[] = {
		ev_at(0, BTAPE_OP_DISCARD, 1, 7 * 512),
		ev_at(10, BTAPE_OP_DISCARD, 1, 8192),
		ev_at(20, BTAPE_OP_WRITE_ZEROES, 9, 4096),
	};
	f->cfg.allow_writes = true;
	assert_int_equal(fx_run(f, evs, 3), 0);
	assert_int_equal(f->cap.n, 1);
	assert_int_equal(f->cap.done[0].offset, 4096);
	assert_int_equal(f->cap.done[0].bytes, 4096);
	assert_int_equal(f->st.sub_block, 2);
	assert_int_equal(f->st.skipped[BTAPE_OP_DISCARD], 1);
	assert_int_equal(f->st.skipped[BTAPE_OP_WRITE_ZEROES], 1);
	free(f);
}

static void test_ops_and_safety(void **state)
{
	struct fixture *f = fx_new();
	struct btape_event evs[] = {
		ev_at(0, BTAPE_OP_WRITE, 0, 4096),   ev_at(1, BTAPE_OP_READ, 8, 4096),
		ev_at(2, BTAPE_OP_FLUSH, 0, 0),	     ev_at(3, BTAPE_OP_DISCARD, 16, 8192),
		ev_at(4, BTAPE_OP_ZONE_RESET, 0, 0), ev_at(5, BTAPE_OP_WRITE_ZEROES, 32, 4096)};

	/* no --write: writes, discards and write-zeroes are skipped (counted), never issued */
	assert_int_equal(fx_run(f, evs, 6), 0);
	assert_int_equal(f->cap.n, 2);
	assert_int_equal(f->cap.done[0].op, RP_IO_READ);
	assert_int_equal(f->cap.done[1].op, RP_IO_FSYNC);
	assert_int_equal(f->st.skipped[BTAPE_OP_WRITE], 1);
	assert_int_equal(f->st.skipped[BTAPE_OP_DISCARD], 1);
	assert_int_equal(f->st.skipped[BTAPE_OP_ZONE_RESET], 1);
	assert_int_equal(f->st.skipped[BTAPE_OP_WRITE_ZEROES], 1);
	/* --writes-as-reads */
	f->cfg.writes_as_reads = true;
	f->cap.n = 0;
	assert_int_equal(fx_run(f, evs, 6), 0);
	assert_int_equal(f->cap.n, 3);
	assert_int_equal(f->cap.done[0].op, RP_IO_READ);
	assert_int_equal(f->cap.done[0].trace_op, BTAPE_OP_WRITE);
	/* --write */
	f->cfg.writes_as_reads = false;
	f->cfg.allow_writes = true;
	f->cap.n = 0;
	assert_int_equal(fx_run(f, evs, 6), 0);
	assert_int_equal(f->cap.n, 5);
	assert_int_equal(f->cap.done[0].op, RP_IO_WRITE);
	assert_int_equal(f->cap.done[3].op, RP_IO_DISCARD);
	assert_int_equal(f->cap.done[3].bytes, 8192);
	assert_int_equal(f->cap.done[4].op, RP_IO_ZERO);
	assert_int_equal(f->st.skipped[BTAPE_OP_ZONE_RESET], 1);
	free(f);
}

static void test_unmapped_device_counted(void **state)
{
	struct fixture *f = fx_new();
	struct rp_devmap devs[2] = {{.target = 0, .src_size = MIB}, {.target = RP_NO_TARGET}};
	struct btape_event evs[] = {ev_at(0, BTAPE_OP_READ, 0, 4096),
				    ev_at(1, BTAPE_OP_READ, 8, 4096)};

	evs[1].dev = 1;
	f->cfg.devs = devs;
	f->cfg.ndev = 2;
	assert_int_equal(fx_run(f, evs, 2), 0);
	assert_int_equal(f->cap.n, 1);
	assert_int_equal(f->st.unmapped, 1);
	assert_int_equal(f->st.skipped[BTAPE_OP_READ], 1);
	free(f);
}

static void test_loops_warmup_duration(void **state)
{
	struct fixture *f = fx_new();
	struct btape_event evs[] = {ev_at(0, BTAPE_OP_READ, 0, 4096),
				    ev_at(100, BTAPE_OP_READ, 8, 4096),
				    ev_at(200, BTAPE_OP_READ, 16, 4096)};

	f->cfg.loops = 3;
	assert_int_equal(fx_run(f, evs, 3), 0);
	assert_int_equal(f->cap.n, 9);
	assert_int_equal(f->st.events, 9);
	assert_int_equal(f->st.loops, 3);
	/* a pass lasts span + mean gap = 300 us */
	assert_int_equal(rel(f, 3), 300 * US);
	assert_int_equal(rel(f, 8), 800 * US);
	/* warmup: the first 250 us are replayed but not measured */
	f->cfg.warmup_ns = 250 * US;
	f->cap.n = 0;
	assert_int_equal(fx_run(f, evs, 3), 0);
	assert_int_equal(f->cap.n, 9);
	assert_int_equal(f->st.ios[RP_IO_READ], 6);
	/* duration: stops issuing after 450 us of an endless loop */
	f->cfg.warmup_ns = 0;
	f->cfg.loops = 0;
	f->cfg.duration_ns = 450 * US;
	f->cap.n = 0;
	assert_int_equal(fx_run(f, evs, 3), 0);
	assert_int_equal(f->cap.n, 5); /* 0 100 200 300 400 */
	assert_true(f->st.duration_hit);
	free(f);
}

static void test_stop_flag(void **state)
{
	struct fixture *f = fx_new();
	volatile sig_atomic_t stop = 1;
	struct btape_event evs[] = {ev_at(0, BTAPE_OP_READ, 0, 4096)};

	f->cfg.stop = &stop;
	assert_int_equal(fx_run(f, evs, 1), 0);
	assert_int_equal(f->cap.n, 0);
	assert_true(f->st.interrupted);
	free(f);
}

/*
 * I/Os over buf_bytes borrow one of cfg.big_bufs (made before the run) and give it back when
 * they complete; one that finds none free, or is larger, gets a buffer made then, counted.
 */
static void test_big_buffers(void **state)
{
	struct fixture *f = fx_new();
	static char small[64][4096], big[2][16384];
	void *bufs[64], *bigs[2] = {big[0], big[1]};
	struct btape_event evs[] = {
		ev_at(0, BTAPE_OP_READ, 0, 8192),     ev_at(10, BTAPE_OP_WRITE, 64, 16384),
		ev_at(20, BTAPE_OP_READ, 128, 8192),  /* both lent: made */
		ev_at(30, BTAPE_OP_READ, 256, 4096),  /* registered */
		ev_at(200, BTAPE_OP_READ, 512, 32768), /* larger than big_bytes: made */
		ev_at(400, BTAPE_OP_READ, 1024, 8192), ev_at(410, BTAPE_OP_WRITE, 2048, 12288),
		ev_at(600, BTAPE_OP_DISCARD, 4096, 16 * MIB), /* no data: no buffer */
	};
	struct rp_payload pay;

	(void)state;
	for (int i = 0; i < 64; i++)
		bufs[i] = small[i];
	rp_payload_init(&pay, RP_PAYLOAD_RANDOM, 1, 1, 7);
	f->cfg.allow_writes = true;
	f->cfg.payload = &pay;
	f->cfg.bufs = bufs;
	f->cfg.buf_bytes = 4096;
	f->cfg.big_bufs = bigs;
	f->cfg.nbig = 2;
	f->cfg.big_bytes = 16384;
	f->latency_ns = 100 * US;
	assert_int_equal(fx_run(f, evs, 8), 0);
	assert_int_equal(f->cap.n, 8);
	for (unsigned int i = 0; i < 8; i++) {
		const struct rp_io *io = &f->cap.done[i];
		bool lent = io->buf == big[0] || io->buf == big[1];

		assert_int_equal(io->pooled, lent);
		if (io->op == RP_IO_DISCARD)
			assert_null(io->buf);
		else if (io->bytes <= 4096)
			assert_true(io->buf_index >= 0 && io->buf == small[io->buf_index]);
		else
			assert_int_equal(io->buf_index, -1);
		switch (rel(f, i) / US) {
		case 0: case 10: case 400: case 410: /* a free one each time: given back */
			assert_true(lent);
			break;
		default:
			assert_false(lent);
		}
	}
	assert_int_equal(f->st.stage.buf_allocs, 2);
	free(f);
}

/*
 * The I/Os' own buffers hold at most own_bufs_max at once: 64 KiB reads (none lent, none
 * registered) at depth 8 under 128 KiB go two at a time, each waiting as at the depth cap,
 * and all complete; at the default nothing waits.
 */
static void test_own_buffers_bounded(void **state)
{
	struct fixture *f = fx_new();
	struct btape_event evs[16];

	(void)state;
	for (unsigned int i = 0; i < 16; i++)
		evs[i] = ev_at(i, BTAPE_OP_READ, i * 128, 65536);
	f->cfg.iodepth = 8;
	f->cfg.own_bufs_max = 128 << 10;
	f->latency_ns = 100 * US;
	assert_int_equal(fx_run(f, evs, 16), 0);
	assert_int_equal(f->cap.n, 16);
	assert_int_equal(f->st.max_inflight, 2);
	assert_true(f->st.depth_capped > 0);
	for (unsigned int i = 0; i < 16; i++)
		assert_int_equal(f->cap.done[i].bytes, 65536);
	free(f);

	f = fx_new();
	f->cfg.iodepth = 8;
	f->latency_ns = 100 * US;
	assert_int_equal(fx_run(f, evs, 16), 0);
	assert_int_equal(f->st.max_inflight, 8);
	free(f);
}

/*
 * A trace cannot make the causal tracker keep unbounded state: a new thread id on every event
 * (a crafted trace held 3 GB at 4 M events) stops adding threads at 2^18; their I/Os still go.
 */
static void test_order_threads_bounded(void **state)
{
	struct rp_order_cfg oc = {.mode = RP_ORDER_CAUSAL,
				  .think_ns = RP_THINK_WINDOW_NS,
				  .window = RP_ORDER_WINDOW,
				  .speed = 1};
	struct rp_order *o;
	const unsigned int n = (1u << 18) + 1000;

	(void)state;
	assert_int_equal(rp_order__new(&o, &oc), 0);
	for (unsigned int i = 0; i < n; i++) {
		struct btape_event ev = ev_at(1000 + i, BTAPE_OP_READ, (uint64_t)i * 8, 4096);
		uint64_t t = 1000000 + (uint64_t)i * 1000, eligible, wake = 0;
		int kind;

		ev.present |= BTAPE_HAS_TID;
		ev.tid = i + 1;
		int64_t id = rp_order__add(o, &ev, 0, t);

		assert_true(id >= 0);
		assert_int_equal(rp_order__check(o, (uint64_t)id, t, &eligible, &wake, &kind), 1);
		rp_order__done(o, (uint64_t)id, t + 500);
	}
	assert_int_equal(rp_order__threads(o), 1u << 18);
	rp_order__free(o);
}

static void test_payload(void **state)
{
	static uint8_t a[8192], b[8192];
	struct rp_payload p;

	rp_payload_init(&p, RP_PAYLOAD_RANDOM, 1, 1, 42);
	rp_payload_fill(&p, a, sizeof(a));
	rp_payload_fill(&p, b, sizeof(b));
	rp_payload_stamp(&p, a, sizeof(a), 1);
	rp_payload_stamp(&p, b, sizeof(b), 2);
	assert_true(memcmp(a, b, 4096) != 0);	     /* unique per write */
	assert_true(memcmp(a, a + 4096, 4096) != 0); /* unique per block */
	assert_memory_equal(a + 16, p.pattern + 16, 4080);
	/* compressible:4 -> three quarters of each block are zero */
	rp_payload_init(&p, RP_PAYLOAD_COMPRESSIBLE, 4, 1, 42);
	rp_payload_fill(&p, a, 4096);
	for (unsigned int i = 1024; i < 4096; i++)
		assert_int_equal(a[i], 0);
	/* dedupe 2: about half of many blocks are the bare pattern */
	rp_payload_init(&p, RP_PAYLOAD_RANDOM, 1, 2, 42);
	unsigned int dup = 0;

	for (uint64_t s = 0; s < 2000; s++) {
		rp_payload_fill(&p, a, 4096);
		rp_payload_stamp(&p, a, 4096, s);
		dup += a[0] == 0 && memcmp(a, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16) == 0;
	}
	assert_true(dup > 800 && dup < 1200);
	/* zero payload stays zero */
	rp_payload_init(&p, RP_PAYLOAD_ZERO, 1, 1, 42);
	memset(a, 0xff, 4096);
	rp_payload_fill(&p, a, 4096);
	rp_payload_stamp(&p, a, 4096, 9);
	for (unsigned int i = 0; i < 4096; i++)
		assert_int_equal(a[i], 0);
}

/* The prefetching decoder: every event once, in order, across block edges, rewinds, loops. */
static void check_passes(struct rp_prefetch *p, unsigned int passes, uint64_t n, bool rewind_first)
{
	struct rp_source *src = rp_prefetch__source(p);

	for (unsigned int pass = 0; pass < passes; pass++) {
		const struct btape_event *evs;
		uint64_t seen = 0;
		int got;

		if (pass || rewind_first)
			assert_int_equal(src->rewind(src), 0);
		rp_prefetch__fill(p);
		while ((got = src->next_batch(src, &evs)) > 0) {
			for (int i = 0; i < got; i++, seen++)
				assert_int_equal(evs[i].sector, seen * 8);
		}
		assert_int_equal(got, 0);
		assert_int_equal(seen, n);
		assert_int_equal(src->next_batch(src, &evs), 0); /* stays at the end */
	}
}

static void test_prefetch_source(void **state)
{
	char path[] = "/tmp/biotape-test-prefetch.XXXXXX";
	struct btape_meta meta = {.tool = "test"};
	struct btape_device dev = {.name = "d0", .size_bytes = 1ull << 30, .logical_block = 512};
	struct btape_writer_opts wo = {.sz = sizeof(wo), .chunk_events = 777};
	struct btape_writer *w = NULL;
	struct rp_prefetch *p = NULL;
	const uint64_t n = 10007;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	assert_true(btape_meta_add_device(&meta, &dev) >= 0);
	assert_int_equal(btape_writer__open(&w, path, &meta, &wo, NULL, 0), 0);
	for (uint64_t i = 0; i < n; i++) {
		struct btape_event ev = ev_at(i * 10, BTAPE_OP_READ, i * 8, 4096);

		assert_int_equal(btape_writer__add(w, &ev), 0);
	}
	assert_int_equal(btape_writer__close(w, NULL, 0), 0);
	btape_meta_free(&meta);

	/* blocks smaller and larger than the file's chunks, queues of 2 and 5 */
	size_t blocks[] = {100, 1000, 4096};

	for (unsigned int b = 0; b < 3; b++) {
		for (int ahead = 0; ahead < 2; ahead++) {
			assert_int_equal(rp_prefetch__open(&p, path, blocks[b], b ? 5 : 2, NULL, 0),
					 0);
			rp_prefetch__set_loop_ahead(p, ahead);
			check_passes(p, 3, n, false);
			/* a rewind in the middle of a pass (a run stopped by --duration) */
			const struct btape_event *evs;
			struct rp_source *src = rp_prefetch__source(p);

			assert_int_equal(src->rewind(src), 0);
			assert_true(src->next_batch(src, &evs) > 0);
			check_passes(p, 2, n, true);
			rp_prefetch__close(p);
		}
	}
	/* a bad file is refused with a message */
	char msg[BTAPE_ERRMSG_LEN];

	assert_true(rp_prefetch__open(&p, "/nonexistent/x.btape", 100, 2, msg, sizeof(msg)) < 0);
	unlink(path);
}

/* The pre-scan for big I/Os: reads and writes over the size only, the most in flight at once. */
static void test_trace_scan(void **state)
{
	char path[] = "/tmp/biotape-test-big.XXXXXX";
	struct btape_meta meta = {.tool = "test"};
	struct btape_device dev = {.name = "d0", .size_bytes = 1ull << 30, .logical_block = 512};
	struct btape_writer_opts wo = {.sz = sizeof(wo)};
	struct btape_writer *w = NULL;
	struct rp_trace_scan b;
	/* (issue, complete, op, bytes): 3 big ones overlap at 30 us; the flush, the discard and
	 * the small ones do not count; the last has no completion (done at the next issue) */
	const struct {
		uint64_t t, done;
		uint8_t op;
		uint64_t bytes;
	} ios[] = {
		{0, 50, BTAPE_OP_READ, 65536},	     {10, 40, BTAPE_OP_WRITE, 131072},
		{20, 60, BTAPE_OP_WRITE, 4096},	     {25, 90, BTAPE_OP_DISCARD, 1 << 20},
		{30, 35, BTAPE_OP_READ, 524288},     {45, 80, BTAPE_OP_WRITE, 98304},
		{70, 0, BTAPE_OP_FLUSH, 0},	     {100, 0, BTAPE_OP_WRITE, 262144},
		{101, 300, BTAPE_OP_READ, 200000},
	};
	char msg[BTAPE_ERRMSG_LEN];
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_true(btape_meta_add_device(&meta, &dev) >= 0);
	assert_int_equal(btape_writer__open(&w, path, &meta, &wo, NULL, 0), 0);
	for (unsigned int i = 0; i < sizeof(ios) / sizeof(ios[0]); i++) {
		struct btape_event ev = ev_at(ios[i].t, ios[i].op, i * 2048, ios[i].bytes);

		if (ios[i].done) {
			ev.complete_ns = ev.issue_ns + (ios[i].done - ios[i].t) * US;
			ev.present |= BTAPE_HAS_COMPLETE;
		}
		assert_int_equal(btape_writer__add(w, &ev), 0);
	}
	assert_int_equal(btape_writer__close(w, NULL, 0), 0);
	btape_meta_free(&meta);

	/* over 64 KiB: 131072, 524288, 98304, 262144, 200000 (the 64 KiB read is not over) */
	assert_int_equal(rp_trace_scan(path, 65536, 128, false, &b, msg, sizeof(msg)), 0);
	assert_int_equal(b.big, 5);
	assert_int_equal(b.big_max_bytes, 524288);
	assert_int_equal(b.ios, 0); /* not asked for */
	assert_int_equal(b.max_inflight, 0);
	/* over 4 KiB the 64 KiB read joins */
	assert_int_equal(rp_trace_scan(path, 4096, 128, false, &b, msg, sizeof(msg)), 0);
	assert_int_equal(b.big, 6);
	/* none */
	assert_int_equal(rp_trace_scan(path, 1 << 20, 128, false, &b, msg, sizeof(msg)), 0);
	assert_int_equal(b.big, 0);
	assert_int_equal(b.big_max_bytes, 0);
	/* every I/O (--iodepth recorded): at 30 us 0-50, 10-40, 20-60, 25-90 and 30-35, five;
	 * the flush and the write at 100 have no completion (done at the next issue) */
	assert_int_equal(rp_trace_scan(path, 1 << 20, 128, true, &b, msg, sizeof(msg)), 0);
	assert_int_equal(b.ios, 9);
	assert_int_equal(b.timed, 7);
	assert_int_equal(b.max_inflight, 5);
	assert_int_equal(b.big, 0);
	assert_int_equal(rp_trace_scan(path, 1 << 20, 4, true, &b, msg, sizeof(msg)), 0);
	assert_int_equal(b.max_inflight, 4);
	/* cap 0 stops only the count: the big I/Os and the totals are still there */
	assert_int_equal(rp_trace_scan(path, 65536, 0, true, &b, msg, sizeof(msg)), 0);
	assert_int_equal(b.max_inflight, 0);
	assert_int_equal(b.big, 5);
	assert_int_equal(b.ios, 9);
	assert_int_equal(b.timed, 7);
	unlink(path);
	/* a missing file: an error and a message */
	msg[0] = '\0';
	assert_true(rp_trace_scan(path, 4096, 128, true, &b, msg, sizeof(msg)) < 0);
	assert_true(msg[0] != '\0');
}

/* ---- --order: dependency-aware replay against a brute-force model ---- */

#define ORD_MAX 128
#define THINK_NS (20 * US)

static struct btape_event ev_rec(uint64_t t_us, uint64_t done_us, uint8_t op, uint32_t dev,
				 uint64_t sector, uint64_t bytes, uint32_t tid, uint32_t flags)
{
	struct btape_event e = ev_at(t_us, op, sector, bytes);

	e.complete_ns = 5000000000ull + done_us * US;
	e.dev = dev;
	e.tid = tid;
	e.flags = flags;
	e.present = BTAPE_HAS_COMPLETE | BTAPE_HAS_FLAGS | (tid ? BTAPE_HAS_TID : 0);
	return e;
}

/*
 * Device 0: thread 100 is a WAL chain write -> flush -> write -> FUA write -> flush -> write, 10
 * us of think time after each completion; beside it writes that overlap (no thread: never
 * causal) and a read overlapping both. Device 1: thread 200 reads, 70 us after each completion
 * (past the 20 us think window), nothing to wait for in any mode.
 */
static size_t order_trace(struct btape_event *evs)
{
	size_t n = 0;

	evs[n++] = ev_rec(0, 50, BTAPE_OP_WRITE, 0, 0, 8192, 100, 0);
	evs[n++] = ev_rec(5, 55, BTAPE_OP_WRITE, 0, 1000, 8192, 0, 0);
	evs[n++] = ev_rec(10, 40, BTAPE_OP_READ, 1, 10000, 4096, 200, 0);
	evs[n++] = ev_rec(15, 65, BTAPE_OP_WRITE, 0, 1004, 4096, 0, 0);
	evs[n++] = ev_rec(25, 55, BTAPE_OP_READ, 0, 1006, 4096, 0, 0);
	evs[n++] = ev_rec(60, 160, BTAPE_OP_FLUSH, 0, 0, 0, 100, 0);
	evs[n++] = ev_rec(110, 140, BTAPE_OP_READ, 1, 10008, 4096, 200, 0);
	evs[n++] = ev_rec(170, 220, BTAPE_OP_WRITE, 0, 16, 8192, 100, 0);
	evs[n++] = ev_rec(210, 240, BTAPE_OP_READ, 1, 10016, 4096, 200, 0);
	evs[n++] = ev_rec(230, 280, BTAPE_OP_WRITE, 0, 32, 4096, 100, BTAPE_FLAG_FUA);
	evs[n++] = ev_rec(290, 390, BTAPE_OP_FLUSH, 0, 0, 0, 100, 0);
	evs[n++] = ev_rec(310, 340, BTAPE_OP_READ, 1, 10024, 4096, 200, 0);
	evs[n++] = ev_rec(400, 450, BTAPE_OP_WRITE, 0, 48, 8192, 100, 0);
	evs[n++] = ev_rec(410, 440, BTAPE_OP_READ, 1, 10032, 4096, 200, 0);
	return n;
}

static bool is_write(const struct btape_event *e)
{
	return e->op == BTAPE_OP_WRITE;
}

static bool is_barrier(const struct btape_event *e)
{
	return e->op == BTAPE_OP_FLUSH || (e->flags & (BTAPE_FLAG_FUA | BTAPE_FLAG_PREFLUSH));
}

/*
 * The rules of order.h, by brute force over every earlier event, with a constant latency and
 * no depth limit: issue[i] (ns after the first deadline). Causal: the anchor is the source's
 * replayed completion + the think time, else (a thread's I/O) the deadline shifted by the
 * offset of the thread's previous I/O (never before 0), else the deadline; conflicts and
 * barriers then only delay.
 */
static double model_speed = 1; /* --speed: recorded times and think times divided by it */
static int model_xthread;      /* enum rp_xthread: cross-thread sources */

/*
 * a may be b's cross-thread source: another thread's (a barrier unless any) on b's device,
 * issued at or after idle, the latest completion of b's thread's earlier I/Os (0: it has none).
 */
static bool model_xsource(const struct btape_event *a, const struct btape_event *b, uint64_t idle)
{
	if (model_xthread == RP_XTHREAD_OFF || !a->tid || !b->tid || a->tid == b->tid ||
	    a->dev != b->dev || (model_xthread == RP_XTHREAD_BARRIER && !is_barrier(a)))
		return false;
	return idle && a->issue_ns >= idle;
}

/* --cross-thread wake: a completed while b's thread slept (its wake before b's issue). */
static bool model_wake_source(const struct btape_event *a, const struct btape_event *b)
{
	return (b->present & BTAPE_HAS_WAKE) && b->wake_ns <= b->issue_ns &&
	       (a->present & BTAPE_HAS_COMPLETE) && a->complete_ns <= b->wake_ns &&
	       a->complete_ns + b->slept_ns >= b->wake_ns;
}

/*
 * Thread depth: b (evs[i]) goes no sooner than when no more of its thread's earlier I/Os are
 * unfinished than the most that were in flight at one of its thread's recorded issues up to
 * b's: the (depth + 1)-th latest of their replayed completions.
 */
static uint64_t model_depth(const struct btape_event *evs, size_t i, uint64_t lat,
			    const uint64_t *issue, uint64_t t)
{
	static uint64_t done[4096];
	static size_t most[4096]; /* the limit of each event before i (filled in order) */
	size_t n = 0, depth = 0, inflight = 0;

	for (size_t j = 0; j < i; j++) {
		if (evs[j].tid != evs[i].tid)
			continue;
		inflight += evs[j].complete_ns > evs[i].issue_ns;
		if (most[j] > depth)
			depth = most[j];
	}
	if (inflight > depth)
		depth = inflight;
	most[i] = depth;
	for (size_t j = 0; j < i; j++)
		if (evs[j].tid == evs[i].tid)
			done[n++] = issue[j] + lat;
	if (n <= depth)
		return t;
	/* the (depth + 1)-th latest: sort descending by selection, enough of it */
	for (size_t k = 0; k <= depth; k++)
		for (size_t m = k + 1; m < n; m++)
			if (done[m] > done[k]) {
				uint64_t x = done[k];

				done[k] = done[m];
				done[m] = x;
			}
	return done[depth] > t ? done[depth] : t;
}

static uint64_t model_rel(const struct btape_event *evs, uint64_t t)
{
	return (uint64_t)((double)(t - evs[0].issue_ns) / model_speed);
}

static void order_model(const struct btape_event *evs, size_t n, int mode, uint64_t lat,
			uint64_t *issue)
{
	for (size_t i = 0; i < n; i++) {
		const struct btape_event *b = &evs[i];
		uint64_t dl = model_rel(evs, b->issue_ns), t = dl, src_done = 0;
		size_t src = SIZE_MAX, prev = SIZE_MAX;
		uint64_t idle = 0;

		for (size_t j = 0; j < i && b->tid; j++)
			if (evs[j].tid == b->tid && evs[j].complete_ns > idle)
				idle = evs[j].complete_ns;
		for (size_t j = 0; j < i && mode == RP_ORDER_CAUSAL; j++) {
			const struct btape_event *a = &evs[j];

			if (a->tid && a->tid == b->tid)
				prev = j;
			if (model_xthread == RP_XTHREAD_WAKE) {
				/* what b's thread woke for: any I/O completed in its sleep's end */
				if (b->tid && model_wake_source(a, b) &&
				    (src == SIZE_MAX || a->complete_ns >= src_done)) {
					src = j;
					src_done = a->complete_ns;
				}
				continue;
			}
			/* of two that completed together, the later */
			if (((a->tid && a->tid == b->tid) || model_xsource(a, b, idle)) &&
			    a->complete_ns <= b->issue_ns &&
			    b->issue_ns - a->complete_ns <= THINK_NS &&
			    (src == SIZE_MAX || a->complete_ns >= src_done)) {
				src = j;
				src_done = a->complete_ns;
			}
		}
		if (src != SIZE_MAX) {
			/* wake sources: think time up to its submission (insert, after the wake) */
			uint64_t sub = b->issue_ns;

			if (model_xthread == RP_XTHREAD_WAKE && (b->present & BTAPE_HAS_INSERT) &&
			    b->insert_ns <= b->issue_ns && b->insert_ns >= b->wake_ns)
				sub = b->insert_ns;
			/* ... from the wake when it woke for it (the replay's reap stands in) */
			uint64_t from = src_done;

			if (model_xthread == RP_XTHREAD_WAKE && b->wake_ns >= src_done &&
			    b->wake_ns <= sub)
				from = b->wake_ns;
			t = issue[src] + lat + (uint64_t)((double)(sub - from) / model_speed);
		} else if (prev != SIZE_MAX) {
			int64_t x = (int64_t)dl + (int64_t)issue[prev] -
				    (int64_t)model_rel(evs, evs[prev].issue_ns);

			t = x > 0 ? (uint64_t)x : 0;
		}
		if (mode == RP_ORDER_CAUSAL && b->tid)
			t = model_depth(evs, i, lat, issue, t);
		for (size_t j = 0; j < i; j++) {
			const struct btape_event *a = &evs[j];
			uint64_t done = issue[j] + lat;
			bool overlap = a->dev == b->dev && a->sector < b->sector + b->bytes / 512 &&
				       b->sector < a->sector + a->bytes / 512;
			bool before = a->dev == b->dev && a->complete_ns <= b->issue_ns;

			if (mode >= RP_ORDER_CONFLICT && overlap && (is_write(a) || is_write(b)))
				t = done > t ? done : t;
			if (mode >= RP_ORDER_BARRIER && before &&
			    ((is_barrier(b) && is_write(a)) || is_barrier(a)))
				t = done > t ? done : t;
		}
		issue[i] = t;
	}
}

/* The replayed issue time of every event (ns after start), matched by offset, flushes in turn. */
static void order_replayed(const struct fixture *f, const struct btape_event *evs, size_t n,
			   uint64_t *issue)
{
	unsigned int used[MAX_DONE] = {0};

	for (size_t i = 0; i < n; i++) {
		unsigned int best = UINT32_MAX;

		for (unsigned int k = 0; k < f->cap.n; k++) {
			const struct rp_io *io = &f->cap.done[k];

			if (used[k] || io->trace_op != evs[i].op ||
			    (io->op != RP_IO_FSYNC && io->offset != evs[i].sector * 512))
				continue;
			if (best == UINT32_MAX || io->issue_ns < f->cap.done[best].issue_ns)
				best = k;
		}
		assert_int_not_equal(best, UINT32_MAX);
		used[best] = 1;
		issue[i] = f->cap.done[best].issue_ns - f->st.start_ns;
	}
}

/* Two devices onto one target, writes allowed, mode and think window, the engine's latency. */
static void order_cfg(struct fixture *f, int mode, uint64_t lat)
{
	static struct rp_devmap devs[2];

	devs[0] = (struct rp_devmap){.target = 0, .src_size = 64 * MIB};
	devs[1] = devs[0];
	f->cfg.ndev = 2;
	f->cfg.devs = devs;
	f->cfg.allow_writes = true;
	f->cfg.order = mode;
	f->cfg.think_ns = THINK_NS;
	f->cfg.xthread = model_xthread;
	f->latency_ns = lat;
}

static void order_run(struct fixture *f, int mode, uint64_t lat, struct btape_event *evs,
		      size_t n, uint64_t *got)
{
	uint64_t want[ORD_MAX];

	order_cfg(f, mode, lat);
	f->cap.n = 0;
	assert_int_equal(fx_run(f, evs, n), 0);
	assert_int_equal(f->cap.n, n);
	order_replayed(f, evs, n, got);
	order_model(evs, n, mode, lat, want);
	for (size_t i = 0; i < n; i++) {
		if (got[i] != want[i])
			fail_msg("mode %s latency %llu us: event %zu issued at %llu us, model %llu us",
				 rp_order_mode_name(mode), (unsigned long long)(lat / US), i,
				 (unsigned long long)(got[i] / US),
				 (unsigned long long)(want[i] / US));
	}
}

/* Every flush / FUA write went out after the writes that completed before it in the recording. */
static bool barriers_held(const struct btape_event *evs, size_t n, const uint64_t *issue,
			  uint64_t lat)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i && is_barrier(&evs[i]); j++)
			if (is_write(&evs[j]) && evs[j].dev == evs[i].dev &&
			    evs[j].complete_ns <= evs[i].issue_ns && issue[i] < issue[j] + lat)
				return false;
	return true;
}

/* Each mode matches the model at the recorded latency and at 10x it. */
static void test_order_model(void **state)
{
	struct btape_event evs[ORD_MAX];
	size_t n = order_trace(evs);
	uint64_t got[ORD_MAX];

	for (int mode = RP_ORDER_NONE; mode <= RP_ORDER_CAUSAL; mode++) {
		for (uint64_t lat = 50 * US; lat <= 500 * US; lat *= 10) {
			struct fixture *f = fx_new();

			order_run(f, mode, lat, evs, n, got);
			/*
			 * the independent reads of device 1 keep their deadlines in every mode;
			 * but at 10x in causal order each waits for the one before (thread depth:
			 * its thread never had two in flight)
			 */
			for (size_t i = 0; i < n && (mode != RP_ORDER_CAUSAL || lat == 50 * US); i++)
				if (evs[i].dev == 1)
					assert_int_equal(got[i], evs[i].issue_ns - evs[0].issue_ns);
			if (mode == RP_ORDER_NONE)
				for (int k = 0; k < 3; k++)
					assert_int_equal(f->st.dep_waited[k], 0);
			free(f);
		}
	}
}

/*
 * At 10x the recorded latency: causal mode stretches the WAL chain by the replayed completions
 * (each link: the previous completion + 10 us of think time) and keeps every barrier; open loop
 * (none) sends the first flush 440 us before the write it covers has completed.
 */
static void test_order_causal_stretch(void **state)
{
	struct btape_event evs[ORD_MAX];
	size_t n = order_trace(evs);
	uint64_t got[ORD_MAX];
	/* thread 100's chain: events 0, 5, 7, 9, 10, 12 */
	const size_t chain[] = {0, 5, 7, 9, 10, 12};
	const uint64_t causal[] = {0, 510, 1020, 1530, 2040, 2550}; /* us */
	const uint64_t open[] = {0, 60, 170, 230, 290, 400};
	struct fixture *f = fx_new();

	order_run(f, RP_ORDER_CAUSAL, 500 * US, evs, n, got);
	for (size_t k = 0; k < 6; k++)
		assert_int_equal(got[chain[k]], causal[k] * US);
	assert_true(barriers_held(evs, n, got, 500 * US));
	/*
	 * every link of the chain waited (on its thread's previous I/O), and so did thread 200's
	 * 4 later reads (thread depth: each for the read before, 400-1600 us); deadline to release
	 */
	assert_int_equal(f->st.dep_waited[RP_DEP_CAUSAL], 5 + 4);
	assert_int_equal(f->st.dep_wait_ns[RP_DEP_CAUSAL],
			 (510 - 60 + 1020 - 170 + 1530 - 230 + 2040 - 290 + 2550 - 400 + 400 +
			  800 + 1200 + 1600) *
				 US);
	/* none of thread 200's reads went with the one before it still in flight */
	for (size_t i = 0, prev = SIZE_MAX; i < n; i++) {
		if (evs[i].tid != 200)
			continue;
		if (prev != SIZE_MAX)
			assert_true(got[i] >= got[prev] + 500 * US);
		prev = i;
	}
	/* overlapping writes: the second waited for the first (issued at 5, done at 505) */
	assert_int_equal(got[3], 505 * US);
	assert_int_equal(f->st.dep_waited[RP_DEP_CONFLICT], 2); /* and the read after it */
	free(f);

	f = fx_new();
	order_run(f, RP_ORDER_NONE, 500 * US, evs, n, got);
	for (size_t k = 0; k < 6; k++)
		assert_int_equal(got[chain[k]], open[k] * US);
	assert_false(barriers_held(evs, n, got, 500 * US));
	free(f);
}

/*
 * Thread depth: thread 300 reads every 50 us, each taking 75 us, so at most 2 in flight (each
 * issued while the one before runs; 25 us after the one before that completed, past the think
 * window: no source); thread 400 writes 3, 10 us apart, every 100 us (3 in flight, none when
 * each batch starts). Replayed on 10x slower storage (750 us): in causal order thread 300 never
 * has more than 2 in flight, thread 400 never more than 3 (but a batch starts when one of the
 * batch before completes: the most it had in flight, not what it had at that issue), and each
 * goes when one of its own completes; open loop (none) has 15 of thread 300's in flight at
 * once, as no application did.
 */
static void test_order_thread_depth(void **state)
{
	struct btape_event evs[ORD_MAX];
	uint64_t got[ORD_MAX];
	size_t n = 0;
	const uint64_t lat = 750 * US;

	for (uint64_t k = 0; k < 24; k++)
		evs[n++] = ev_rec(50 * k, 50 * k + 75, BTAPE_OP_READ, 0, 16 * k, 4096, 300, 0);
	for (uint64_t k = 0; k < 12; k++)
		for (uint64_t j = 0; j < 3; j++)
			evs[n++] = ev_rec(100 * k + 1 + 10 * j, 100 * k + 40, BTAPE_OP_WRITE, 1,
					  10000 + 16 * (3 * k + j), 4096, 400, 0);
	for (size_t i = 1; i < n; i++) /* recorded issue order */
		for (size_t j = i; j > 0 && evs[j].issue_ns < evs[j - 1].issue_ns; j--) {
			struct btape_event x = evs[j];

			evs[j] = evs[j - 1];
			evs[j - 1] = x;
		}
	for (int mode = RP_ORDER_NONE; mode <= RP_ORDER_CAUSAL; mode += RP_ORDER_CAUSAL) {
		struct fixture *f = fx_new();
		unsigned int most[2] = {0, 0};

		order_run(f, mode, lat, evs, n, got); /* and matches the model */
		for (size_t i = 0; i < n; i++) {
			unsigned int inflight = 1, th = evs[i].tid == 400;

			for (size_t j = 0; j < n; j++)
				inflight += j != i && evs[j].tid == evs[i].tid && got[j] <= got[i] &&
					    got[i] < got[j] + lat;
			if (inflight > most[th])
				most[th] = inflight;
		}
		if (mode == RP_ORDER_CAUSAL) {
			assert_int_equal(most[0], 2);
			assert_int_equal(most[1], 3);
			/* each batch of thread 400 starts before the batch before has completed */
			for (size_t i = 0, k = 0, last = SIZE_MAX; i < n; i++) {
				if (evs[i].tid != 400)
					continue;
				if (k++ % 3 == 0 && last != SIZE_MAX)
					assert_true(got[i] < got[last] + lat);
				last = i;
			}
			/* thread 300's k-th read goes when its (k - 2)-th completes */
			for (size_t i = 0, k = 0; i < n; i++)
				if (evs[i].tid == 300 && ++k > 2)
					assert_int_equal(got[i], (k - 1) / 2 * lat +
								 ((k - 1) % 2 ? 50 * US : 0));
		} else {
			assert_true(most[0] >= 10);
		}
		free(f);
	}
}

/*
 * A closed-loop chain (thread 100: 20 writes, each 2 us after the previous completed), then,
 * after a pause longer than the think window, 5 more of its writes (sourceless: they keep the
 * thread's offset), and writes without a thread (their deadlines), all at recorded latency L.
 * The chain starts at 0; its k-th write at k * (L + 2 us).
 */
#define CH_N 20
static size_t chain_trace(struct btape_event *evs, uint64_t lat_us)
{
	uint64_t t = 0;
	size_t n = 0;

	for (size_t k = 0; k < CH_N; k++, t += lat_us + 2)
		evs[n++] = ev_rec(t, t + lat_us, BTAPE_OP_WRITE, 0, 16 * k, 4096, 100, 0);
	t += 1000 - 2; /* 1 ms after the last completion: past the 20 us window */
	for (size_t k = 0; k < 5; k++, t += 300)
		evs[n++] = ev_rec(t, t + lat_us, BTAPE_OP_WRITE, 0, 16 * (CH_N + k), 4096, 100, 0);
	for (size_t k = 0; k < 4; k++)
		evs[n++] = ev_rec(5 + k * 2000, 5 + k * 2000 + lat_us, BTAPE_OP_READ, 1,
				  10000 + 16 * k, 4096, 0, 0);
	/* recorded issue order */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && evs[j].issue_ns < evs[j - 1].issue_ns; j--) {
			struct btape_event x = evs[j];

			evs[j] = evs[j - 1];
			evs[j - 1] = x;
		}
	return n;
}

/* The replayed issue time of thread 100's k-th write (sector 16 k) and of read k. */
static uint64_t chain_at(const struct btape_event *evs, size_t n, const uint64_t *got, uint32_t tid,
			 size_t k)
{
	for (size_t i = 0; i < n; i++)
		if (evs[i].tid == tid && evs[i].sector == (tid ? 16 * k : 10000 + 16 * k))
			return got[i];
	fail_msg("no event %zu of thread %u", k, tid);
	return 0;
}

/*
 * Recorded on storage of 500 us, replayed on 50 us storage (10x faster): causal issues each
 * link at the previous one's replayed completion + its 2 us of think time, before its deadline,
 * so the chain finishes about 10x sooner (as the application would have); the thread's later,
 * sourceless writes keep its shift; the threadless reads keep their deadlines. Open loop (none)
 * runs as long as the recording. Recorded on 50 us, replayed on 500 us (10x slower): every
 * link still waits for its source, as before.
 */
static void test_order_causal_faster(void **state)
{
	struct btape_event evs[ORD_MAX];
	uint64_t got[ORD_MAX];
	size_t n = chain_trace(evs, 500);
	struct fixture *f = fx_new();
	uint64_t last = (CH_N - 1) * 502, rec_last = last, shift;

	order_run(f, RP_ORDER_CAUSAL, 50 * US, evs, n, got); /* and matches the model */
	for (size_t k = 0; k < CH_N; k++)
		assert_int_equal(chain_at(evs, n, got, 100, k), k * 52 * US);
	/* the chain's last write issued 9.65x sooner (10x, less the think times) */
	last = chain_at(evs, n, got, 100, CH_N - 1);
	assert_true(rec_last * US >= 9 * last && rec_last * US <= 10 * last);
	/* the pause and the writes after it: the last link's offset, kept */
	shift = rec_last * US - (CH_N - 1) * 52 * US;
	for (size_t k = 0; k < 5; k++)
		assert_int_equal(chain_at(evs, n, got, 100, CH_N + k),
				 (rec_last + 500 + 1000 + 300 * k) * US - shift);
	for (size_t k = 0; k < 4; k++)
		assert_int_equal(chain_at(evs, n, got, 0, k), (5 + 2000 * k) * US);
	/* nothing waited past its deadline */
	assert_int_equal(f->st.dep_waited[RP_DEP_CAUSAL], 0);
	free(f);

	f = fx_new();
	order_run(f, RP_ORDER_NONE, 50 * US, evs, n, got);
	assert_int_equal(chain_at(evs, n, got, 100, CH_N - 1), rec_last * US);
	free(f);

	/*
	 * 10x slower: the chain stretches link by link, the later writes keep the (late) shift;
	 * recorded 300 us apart with one in flight, they go 500 us apart (thread depth)
	 */
	n = chain_trace(evs, 50);
	f = fx_new();
	order_run(f, RP_ORDER_CAUSAL, 500 * US, evs, n, got);
	for (size_t k = 0; k < CH_N; k++)
		assert_int_equal(chain_at(evs, n, got, 100, k), k * 502 * US);
	shift = (CH_N - 1) * (502 - 52) * US;
	for (size_t k = 0; k < 5; k++)
		assert_int_equal(chain_at(evs, n, got, 100, CH_N + k),
				 ((CH_N - 1) * 52 + 50 + 1000 + 500 * k) * US + shift);
	for (size_t k = 0; k < 4; k++)
		assert_int_equal(chain_at(evs, n, got, 0, k), (5 + 2000 * k) * US);
	assert_int_equal(f->st.dep_waited[RP_DEP_CAUSAL], CH_N - 1 + 5);
	free(f);
}

/*
 * An fdatasync waiting on a journal thread, as the block layer sees it, K cycles at recorded
 * latency L: the application (thread 100) writes its WAL (W), 5 us after that completes the
 * journal thread (300) writes the journal (J), 5 us later its commit block (C, preflush +
 * FUA), and 5 us after the commit completes the application writes again. Beside them thread
 * 200 reads every 110 us, each taking 500 us: always I/O in flight, never waiting on anyone.
 * Events of cycle k: W, J, C at wjc[3 k ...].
 */
#define JR_K 5
static size_t journal_trace(struct btape_event *evs, uint64_t lat_us, size_t *wjc)
{
	uint64_t c = 0;
	size_t n = 0, nw = 0;

	for (size_t k = 0; k < JR_K; k++, c += 3 * lat_us + 15) {
		evs[n++] = ev_rec(c, c + lat_us, BTAPE_OP_WRITE, 0, 16 * k, 8192, 100, 0);
		evs[n++] = ev_rec(c + lat_us + 5, c + 2 * lat_us + 5, BTAPE_OP_WRITE, 0,
				  4000 + 16 * k, 4096, 300, 0);
		evs[n++] = ev_rec(c + 2 * lat_us + 10, c + 3 * lat_us + 10, BTAPE_OP_WRITE, 0,
				  8000 + 16 * k, 4096, 300, BTAPE_FLAG_PREFLUSH | BTAPE_FLAG_FUA);
	}
	for (uint64_t t = 3; t < c; t += 110, n++)
		evs[n] = ev_rec(t, t + 500, BTAPE_OP_READ, 0, 20000 + 16 * n, 4096, 200, 0);
	for (size_t i = 1; i < n; i++) /* recorded issue order */
		for (size_t j = i; j > 0 && evs[j].issue_ns < evs[j - 1].issue_ns; j--) {
			struct btape_event x = evs[j];

			evs[j] = evs[j - 1];
			evs[j - 1] = x;
		}
	for (size_t i = 0; i < n; i++)
		if (evs[i].tid != 200)
			wjc[nw++] = i;
	assert_int_equal(nw, 3 * JR_K);
	return n;
}

/*
 * --cross-thread: the application's write after the commit follows the journal thread's
 * commit block (another thread's barrier: it waited for it), not its own last completion
 * long before. Every issue time matches the model, in each rule.
 *   On 10x slower storage (recorded at 50 us, replayed at 500): the barrier rule holds each W
 *   until the commit before it has completed; with cross-thread sources it then also waits
 *   the recorded 5 us (held, counted as cross-thread).
 *   On 10x faster storage (500 us, replayed at 50): each W goes at the commit's replayed
 *   completion + 5 us, before its deadline, where off keeps the recorded gaps; any also
 *   chains the journal thread to the W it followed (the whole cycle 10x shorter); the reads
 *   (never waiting) keep their deadlines.
 */
static void test_order_cross_thread(void **state)
{
	struct btape_event evs[ORD_MAX];
	uint64_t got[ORD_MAX];
	size_t wjc[3 * JR_K], n = journal_trace(evs, 50, wjc);
	struct fixture *f;

	for (int x = RP_XTHREAD_OFF; x <= RP_XTHREAD_ANY; x++) {
		f = fx_new();
		model_xthread = x;
		order_run(f, RP_ORDER_CAUSAL, 500 * US, evs, n, got);
		for (size_t k = 0; k + 1 < JR_K; k++) {
			uint64_t w = got[wjc[3 * k + 3]], c_done = got[wjc[3 * k + 2]] + 500 * US;

			assert_int_equal(w, c_done + (x != RP_XTHREAD_OFF ? 5 * US : 0));
		}
		if (x == RP_XTHREAD_BARRIER)
			assert_int_equal(f->st.dep_waited[RP_DEP_XTHREAD], JR_K - 1);
		if (x == RP_XTHREAD_OFF)
			assert_int_equal(f->st.dep_waited[RP_DEP_XTHREAD], 0);
		free(f);
	}

	n = journal_trace(evs, 500, wjc);
	for (int x = RP_XTHREAD_OFF; x <= RP_XTHREAD_ANY; x++) {
		f = fx_new();
		model_xthread = x;
		order_run(f, RP_ORDER_CAUSAL, 50 * US, evs, n, got);
		for (size_t k = 0; k + 1 < JR_K; k++) {
			uint64_t w = got[wjc[3 * k + 3]], c_done = got[wjc[3 * k + 2]] + 50 * US;

			if (x == RP_XTHREAD_OFF)
				assert_int_equal(w, (k + 1) * 1515 * US); /* its deadline */
			else
				assert_int_equal(w, c_done + 5 * US);
			/*
			 * W, 5 us, J, 5 us, C, 5 us: 165 us a cycle, after the first (J of cycle
			 * 0 is its thread's first I/O: at its deadline, 505 us)
			 */
			if (x == RP_XTHREAD_ANY)
				assert_int_equal(w, (450 + (k + 1) * 165) * US);
		}
		for (size_t i = 0; i < n; i++)
			if (evs[i].tid == 200)
				assert_int_equal(got[i], evs[i].issue_ns - evs[0].issue_ns);
		free(f);
	}
	model_xthread = RP_XTHREAD_OFF;
}

/* Sets e's recorded wake: woke at wake_us (as ev_rec counts), after sleeping slept_us. */
static void set_wake(struct btape_event *e, uint64_t wake_us, uint64_t slept_us)
{
	e->present |= BTAPE_HAS_WAKE;
	e->wake_ns = 5000000000ull + wake_us * US;
	e->slept_ns = slept_us * US;
}

/*
 * --cross-thread wake, on the fdatasync of journal_trace(): the application thread (100)
 * sleeps from its W's completion until the journal thread wakes it 2 us after its commit
 * block C completed, and writes the next W 3 us later; the journal thread sleeps from its
 * J's completion until 2 us after (C follows J); the reader (200) never sleeps (always I/O
 * in flight). Each W then follows the commit's replayed completion + 3 us (from the wake:
 * the replay's notice of C stands in for the 2 us wake-up), another thread's
 * I/O (counted as cross-thread), on 10x slower and on 10x faster storage, and every issue
 * time matches the model; the reader, never woken, is chained to nothing: on faster storage
 * its deadlines.
 */
static void test_order_wake_chain(void **state)
{
	struct btape_event evs[ORD_MAX];
	uint64_t got[ORD_MAX];
	size_t wjc[3 * JR_K], n;
	struct fixture *f;

	(void)state;
	for (int faster = 0; faster < 2; faster++) {
		uint64_t rec = faster ? 500 : 50, lat = (faster ? 50 : 500) * US;

		n = journal_trace(evs, rec, wjc);
		for (size_t k = 0; k < JR_K; k++) {
			struct btape_event *w = &evs[wjc[3 * k]], *j = &evs[wjc[3 * k + 1]];
			struct btape_event *c = &evs[wjc[3 * k + 2]];
			uint64_t c_done = (c->complete_ns - 5000000000ull) / US;
			uint64_t j_done = (j->complete_ns - 5000000000ull) / US;

			set_wake(c, j_done + 2, rec);
			if (k + 1 < JR_K)
				set_wake(&evs[wjc[3 * k + 3]], c_done + 2,
					 c_done + 2 - (w->complete_ns - 5000000000ull) / US);
		}
		f = fx_new();
		model_xthread = RP_XTHREAD_WAKE;
		order_run(f, RP_ORDER_CAUSAL, lat, evs, n, got);
		for (size_t k = 0; k + 1 < JR_K; k++)
			assert_int_equal(got[wjc[3 * k + 3]], got[wjc[3 * k + 2]] + lat + 3 * US);
		for (size_t i = 0; i < n && faster; i++) /* (slower: barriers hold them) */
			if (evs[i].tid == 200)
				assert_int_equal(got[i], evs[i].issue_ns - evs[0].issue_ns);
		if (!faster)
			assert_int_equal(f->st.dep_waited[RP_DEP_XTHREAD], JR_K - 1);
		free(f);
	}
	model_xthread = RP_XTHREAD_OFF;
}

/*
 * The wake decides, not the think window. chain_trace(): thread 100 writes 2 us after each of
 * its writes completed, recorded at 500 us, replayed on 50 us storage. Recorded without
 * wakes (the thread never slept: it polled, or was busy), --cross-thread wake chains nothing:
 * every write at its deadline, where the think-window rule (off) runs the chain 10x sooner.
 * With a wake 1 us after each completion (it slept through each write), the chain is closed
 * loop again: each write at the previous one's replayed completion + 1 us (the think time
 * runs from the wake: the replay's own notice of the completion stands in for the wake-up).
 */
static void test_order_wake_runnable(void **state)
{
	struct btape_event evs[ORD_MAX];
	uint64_t got[ORD_MAX];
	size_t n = chain_trace(evs, 500);
	struct fixture *f;

	(void)state;
	model_xthread = RP_XTHREAD_WAKE;
	f = fx_new();
	order_run(f, RP_ORDER_CAUSAL, 50 * US, evs, n, got);
	for (size_t k = 0; k < CH_N; k++)
		assert_int_equal(chain_at(evs, n, got, 100, k), k * 502 * US);
	assert_int_equal(f->st.dep_waited[RP_DEP_CAUSAL] + f->st.dep_waited[RP_DEP_XTHREAD], 0);
	free(f);

	for (size_t i = 1; i < n; i++) {
		for (size_t j = i; j-- > 0;) {
			if (evs[j].tid != 100 || evs[i].tid != 100)
				continue;
			if (evs[j].complete_ns < evs[i].issue_ns)
				set_wake(&evs[i], (evs[j].complete_ns - 5000000000ull) / US + 1, 499);
			break;
		}
	}
	f = fx_new();
	order_run(f, RP_ORDER_CAUSAL, 50 * US, evs, n, got);
	for (size_t k = 0; k < CH_N; k++)
		assert_int_equal(chain_at(evs, n, got, 100, k), k * 51 * US);
	free(f);
	model_xthread = RP_XTHREAD_OFF;
}

/*
 * Which rule a trace gets by default: wake only for a trace recorded with --waits (in the
 * capture settings, not in the recorded command's arguments); otherwise, as before.
 */
static void test_order_wake_default(void **state)
{
	(void)state;
	assert_int_equal(rp_xthread_default("--layer rq -d loop0 --waits -- sqlite3 db"),
			 RP_XTHREAD_WAKE);
	assert_int_equal(rp_xthread_default("--waits"), RP_XTHREAD_WAKE);
	assert_int_equal(rp_xthread_default("--layer rq -d loop0 -- sqlite3 db"),
			 RP_XTHREAD_DEFAULT);
	assert_int_equal(rp_xthread_default("--layer rq -- prog --waits"), RP_XTHREAD_DEFAULT);
	assert_int_equal(rp_xthread_default("--layer rq --waitsx"), RP_XTHREAD_DEFAULT);
	assert_int_equal(rp_xthread_default(""), RP_XTHREAD_DEFAULT);
	assert_int_equal(rp_xthread_parse("wake"), RP_XTHREAD_WAKE);
	assert_string_equal(rp_xthread_name(RP_XTHREAD_WAKE), "wake");
}

/*
 * Random traces, dense enough that hundreds of I/Os are unfinished at once (the per-device
 * indexes of order.c, not a scan): every event's replayed issue time matches the model, in
 * every mode, at the recorded latency scale and at 10x. Sectors are unique per event (so that
 * events are matched by offset) and extents long, so overlaps are many; flushes are matched as
 * a sorted list of times.
 */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

#define RND_N 1200

static void test_order_model_random(void **state)
{
	static struct btape_event evs[RND_N];
	static uint64_t got[RND_N], want[RND_N], fg[RND_N], fw[RND_N];
	uint64_t seed = 0x5eed, t = 0;

	/* rounds 4 and 5: sparse and short, so that threads are often idle (cross-thread) */
	for (int round = 0; round < 6; round++) {
		uint64_t lat_us = round < 4 ? 300 : 60;

		for (size_t i = 0; i < RND_N; i++) {
			uint32_t r;

			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			r = (uint32_t)(seed >> 33);
			t += 1 + r % (round < 2 ? 8 : 40); /* us */
			uint8_t op = r % 7 < 3 ? BTAPE_OP_WRITE : r % 7 < 6 ? BTAPE_OP_READ
									 : BTAPE_OP_FLUSH;
			uint32_t flags = op == BTAPE_OP_WRITE && (r >> 8) % 10 == 0
						 ? BTAPE_FLAG_FUA
						 : 0;
			uint64_t bytes = op == BTAPE_OP_FLUSH ? 0 : 512ull * (1 + (r >> 12) % 64);

			/* rounds 1 and 3: every 97th I/O a 3 ms outlier (a slow flush, a throttled
			 * write), longer than the rest of the trace is from it */
			uint64_t done = t + 10 + (r >> 4) % lat_us + (round % 2 && i % 97 == 0 ? 3000 : 0);

			evs[i] = ev_rec(t, done, op, (r >> 20) % 2, op == BTAPE_OP_FLUSH ? 0 : 16 * i,
					bytes, (r >> 22) % 4 * 100, flags);
			/* two in three woke up to 60 us before their issue, from sleeps of 0-250 us */
			if (evs[i].tid && (r >> 24) % 3) {
				evs[i].present |= BTAPE_HAS_WAKE;
				evs[i].wake_ns = evs[i].issue_ns - (r >> 26) % 61 * US;
				evs[i].slept_ns = (seed >> 8) % 251 * US;
				/* half of them queued in the block layer since half-way there */
				if ((seed >> 20) % 2) {
					evs[i].present |= BTAPE_HAS_INSERT;
					evs[i].insert_ns = (evs[i].wake_ns + evs[i].issue_ns) / 2;
				}
			}
		}
		for (int mode = RP_ORDER_NONE; mode <= RP_ORDER_CAUSAL; mode++) {
			/*
			 * causal also at --speed 2 and 0.5 (look-ahead in replayed time), each
			 * with every cross-thread rule (wake: c 12-15)
			 */
			for (int c = 0; c < (mode == RP_ORDER_CAUSAL ? 16 : 2); c++) {
				uint64_t lat = c % 4 == 1 ? 500 * US : 50 * US;
				struct fixture *f = fx_new();
				size_t nf = 0;

				model_speed = c % 4 < 2 ? 1 : c % 4 == 2 ? 2 : 0.5;
				model_xthread = c / 4;
				order_cfg(f, mode, lat);
				f->cfg.speed = model_speed;
				f->cfg.iodepth = RND_N;
				assert_int_equal(fx_run(f, evs, RND_N), 0);
				assert_int_equal(f->cap.n, RND_N);
				order_model(evs, RND_N, mode, lat, want);
				for (unsigned int k = 0; k < f->cap.n; k++) {
					const struct rp_io *io = &f->cap.done[k];

					if (io->op == RP_IO_FSYNC)
						fg[nf++] = io->issue_ns - f->st.start_ns;
					else
						got[io->offset / 512 / 16] = io->issue_ns - f->st.start_ns;
				}
				nf = 0;
				for (size_t i = 0; i < RND_N; i++) {
					if (evs[i].op == BTAPE_OP_FLUSH) {
						fw[nf++] = want[i];
						continue;
					}
					if (got[i] != want[i])
						fail_msg("round %d mode %s cross-thread %s speed %g "
							 "latency %llu us: event %zu issued at "
							 "%llu ns, model %llu ns",
							 round, rp_order_mode_name(mode),
							 rp_xthread_name(model_xthread), model_speed,
							 (unsigned long long)(lat / US), i,
							 (unsigned long long)got[i],
							 (unsigned long long)want[i]);
				}
				qsort(fg, nf, sizeof(*fg), cmp_u64);
				qsort(fw, nf, sizeof(*fw), cmp_u64);
				for (size_t i = 0; i < nf; i++)
					if (fg[i] != fw[i])
						fail_msg("round %d mode %s latency %llu us: flush %zu "
							 "at %llu ns, model %llu ns",
							 round, rp_order_mode_name(mode),
							 (unsigned long long)(lat / US), i,
							 (unsigned long long)fg[i],
							 (unsigned long long)fw[i]);
				/* the trace exercises every rule it may (at --speed 1) */
				if (mode >= RP_ORDER_CONFLICT && c % 4 < 2 && round < 4)
					assert_true(f->st.dep_waited[RP_DEP_CONFLICT] >
						    (c < 12 ? 250u : 200u));
				/* (wake: think times from the wake, chains go sooner, meet fewer) */
				if (mode >= RP_ORDER_BARRIER && c % 4 < 2)
					assert_true(f->st.dep_waited[RP_DEP_BARRIER] >
						    (c >= 12 ? 10u : 20u));
				if (mode >= RP_ORDER_CAUSAL && c % 4 < 2)
					assert_true(f->st.dep_waited[RP_DEP_CAUSAL] > 20);
				/* cross-thread sources held I/Os (only when on; 10x slower) */
				if (mode == RP_ORDER_CAUSAL && round >= 4 && c % 4 == 1)
					print_message("round %d cross-thread %s: %llu held\n", round,
						      rp_xthread_name(model_xthread),
						      (unsigned long long)
							      f->st.dep_waited[RP_DEP_XTHREAD]);
				if (c < 4)
					assert_int_equal(f->st.dep_waited[RP_DEP_XTHREAD], 0);
				/*
				 * only causal goes before a deadline (at speed 1, 50 us: often; not in
				 * round 0, so dense that its threads' unfinished earlier I/Os hold most:
				 * thread depth)
				 */
				nf = 0;
				for (size_t i = 0; i < RND_N; i++)
					nf += want[i] < evs[i].issue_ns - evs[0].issue_ns;
				if (mode == RP_ORDER_CAUSAL && c % 4 == 0 && round >= 1 && round < 4)
					assert_true(nf > 5);
				if (mode != RP_ORDER_CAUSAL)
					assert_int_equal(nf, 0);
				model_speed = 1;
				model_xthread = RP_XTHREAD_OFF;
				free(f);
			}
		}
	}
}

/*
 * Memory is bounded: while the I/O RP_ORDER_WINDOW events back is unfinished, the stream
 * stops (counted per stop), and goes on as each completes; nothing is lost.
 */
static void test_order_window_full(void **state)
{
	static struct btape_event evs[RP_ORDER_WINDOW + 100];
	size_t n = RP_ORDER_WINDOW + 100;
	struct fixture *f = fx_new();

	for (size_t i = 0; i < n; i++)
		evs[i] = ev_at(i, BTAPE_OP_READ, (i % 1000) * 8, 4096);
	f->cfg.iodepth = RP_ORDER_WINDOW + 200;
	f->cfg.order = RP_ORDER_CONFLICT;
	f->latency_ns = 10000 * US; /* 10 ms: all of the first window is in flight */
	assert_int_equal(fx_run(f, evs, n), 0);
	assert_int_equal(f->st.completed, n);
	/* each of the 100 past the window waited for the one a window back: at 10 ms + i us */
	assert_int_equal(f->st.dep_window_full, 100);
	assert_int_equal(f->st.max_inflight, RP_ORDER_WINDOW);
	assert_int_equal(f->st.end_ns - f->st.start_ns, (10000 + 99 + 10000) * US);
	free(f);
}

/* The replayed issue times (us after start) of the trace's flushes, in issue order. */
static unsigned int flush_issues(const struct fixture *f, uint64_t *t_us, unsigned int max)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < f->cap.n && n < max; i++)
		if (f->cap.done[i].op == RP_IO_FSYNC)
			t_us[n++] = rel(f, i) / US;
	for (unsigned int i = 1; i < n; i++) /* insertion sort: completions come in any order */
		for (unsigned int j = i; j && t_us[j - 1] > t_us[j]; j--) {
			uint64_t x = t_us[j];

			t_us[j] = t_us[j - 1];
			t_us[j - 1] = x;
		}
	return n;
}

/*
 * --flushes-apart: a flush recorded after the previous flush had completed waits in the replay
 * until that one has completed (else the block layer folds the two into one device flush);
 * writes do not wait for it, and flushes that overlapped in the recording still overlap. By
 * default they go at their deadlines, and those sent while the one before was out are
 * counted. Replayed at 10x the recorded latency (500 us).
 */
static void test_flushes_apart(void **state)
{
	struct btape_event evs[] = {
		ev_rec(0, 50, BTAPE_OP_FLUSH, 0, 0, 0, 0, 0),
		ev_rec(50, 80, BTAPE_OP_WRITE, 0, 0, 4096, 0, 0),
		ev_rec(100, 150, BTAPE_OP_FLUSH, 0, 0, 0, 0, 0),    /* apart: waits until 500 */
		ev_rec(150, 180, BTAPE_OP_FLUSH, 0, 0, 0, 0, 0),    /* behind it: until 1000 */
		ev_rec(200, 230, BTAPE_OP_WRITE, 0, 8, 4096, 0, 0), /* goes past them at 200 */
		ev_rec(1200, 1250, BTAPE_OP_FLUSH, 0, 0, 0, 0, 0),  /* the one before: done 1500 */
		ev_rec(3000, 3050, BTAPE_OP_FLUSH, 0, 0, 0, 0, 0),  /* none out: at its deadline */
		ev_rec(3010, 3100, BTAPE_OP_FLUSH, 0, 0, 0, 0, 0), /* overlapped it: goes at 3010 */
	};
	const uint64_t apart[] = {0, 500, 1000, 1500, 3000, 3010};
	const uint64_t overlap[] = {0, 100, 150, 1200, 3000, 3010};
	uint64_t t[6];
	struct fixture *f = fx_new();

	f->cfg.allow_writes = true;
	f->cfg.flushes_apart = true;
	f->latency_ns = 500 * US;
	assert_int_equal(fx_run(f, evs, 8), 0);
	assert_int_equal(f->st.completed, 8);
	assert_int_equal(flush_issues(f, t, 6), 6);
	for (int i = 0; i < 6; i++)
		assert_int_equal(t[i], apart[i]);
	for (unsigned int i = 0; i < f->cap.n; i++)
		if (f->cap.done[i].op == RP_IO_WRITE)
			assert_int_equal(rel(f, i), f->cap.done[i].offset ? 200 * US : 50 * US);
	/* three waited past their deadlines, for a reason: not late, counted apart */
	assert_int_equal(f->st.flush_waited, 3);
	assert_int_equal(f->st.flush_wait_ns, (400 + 850 + 300) * US);
	assert_int_equal(f->st.late, 0);
	free(f);

	f = fx_new();
	f->cfg.allow_writes = true; /* the default: open loop, each flush at its deadline */
	f->latency_ns = 500 * US;
	assert_int_equal(fx_run(f, evs, 8), 0);
	assert_int_equal(flush_issues(f, t, 6), 6);
	for (int i = 0; i < 6; i++)
		assert_int_equal(t[i], overlap[i]);
	assert_int_equal(f->st.flush_waited, 0);
	/* sent while the one before was out, though recorded apart: at 100 and 150 */
	assert_int_equal(f->st.flush_overlapped, 2);
	free(f);

	/* a run that ends (--duration 300us) while flushes are parked: they are taken back */
	f = fx_new();
	f->cfg.allow_writes = true;
	f->cfg.flushes_apart = true;
	f->cfg.duration_ns = 300 * US;
	f->latency_ns = 500 * US;
	assert_int_equal(fx_run(f, evs, 8), 0);
	assert_true(f->st.duration_hit);
	assert_int_equal(f->st.issued, 3); /* the flush at 0, the writes at 50 and 200 */
	assert_int_equal(f->st.completed, 3);
	assert_int_equal(f->cap.n, 3);
	free(f);
}

/*
 * --flushes-apart is a rule of the order tracker, so it holds for a flush the tracker releases
 * for another reason. Under barrier order the flush at 100 waits for the write that completed
 * before it (replayed: done at 510); the flush before it (at 50, its completion not recorded:
 * apart) is still out until 550, and the flush waits for it too. Without --flushes-apart it
 * goes at 510, while that one is out (counted). (Times in the test: after the first deadline,
 * 10.)
 */
static void test_flushes_apart_released(void **state)
{
	struct btape_event evs[] = {
		ev_rec(10, 60, BTAPE_OP_WRITE, 0, 0, 4096, 0, 0),
		ev_rec(50, 0, BTAPE_OP_FLUSH, 0, 0, 0, 0, 0),
		ev_rec(100, 150, BTAPE_OP_FLUSH, 0, 0, 0, 0, 0),
	};
	uint64_t t[2];
	struct fixture *f;

	evs[1].present &= ~BTAPE_HAS_COMPLETE;
	for (int apart = 0; apart < 2; apart++) {
		f = fx_new();
		f->cfg.allow_writes = true;
		f->cfg.order = RP_ORDER_BARRIER;
		f->cfg.flushes_apart = apart;
		f->latency_ns = 500 * US;
		assert_int_equal(fx_run(f, evs, 3), 0);
		assert_int_equal(f->st.completed, 3);
		assert_int_equal(flush_issues(f, t, 2), 2);
		assert_int_equal(t[0], 40);
		assert_int_equal(t[1], apart ? 540 : 500);
		assert_int_equal(f->st.flush_waited, apart);
		assert_int_equal(f->st.flush_wait_ns, apart ? 450 * US : 0);
		assert_int_equal(f->st.flush_overlapped, !apart);
		assert_int_equal(f->st.dep_waited[RP_DEP_BARRIER], !apart);
		free(f);
	}
}

/* Flushes apart per copy (--scale 2: each copy's flushes wait for that copy's), and in afap. */
static void test_flushes_apart_scale(void **state)
{
	struct btape_event evs[] = {
		ev_rec(0, 50, BTAPE_OP_FLUSH, 0, 0, 0, 0, 0),
		ev_rec(600, 650, BTAPE_OP_FLUSH, 0, 0, 0, 0, 0), /* none out: at its deadline */
		ev_rec(610, 700, BTAPE_OP_FLUSH, 0, 0, 0, 0, 0), /* overlapped the one before */
		ev_rec(700, 750, BTAPE_OP_FLUSH, 0, 0, 0, 0, 0), /* apart: after both */
	};
	const uint64_t want[] = {0, 0, 600, 600, 610, 610, 1110, 1110};
	uint64_t t[8];
	struct fixture *f = fx_new();

	f->cfg.flushes_apart = true;
	f->cfg.scale = 2;
	f->latency_ns = 500 * US;
	assert_int_equal(fx_run(f, evs, 4), 0);
	assert_int_equal(flush_issues(f, t, 8), 8);
	for (int i = 0; i < 8; i++)
		assert_int_equal(t[i], want[i]);
	for (unsigned int i = 0; i < f->cap.n; i++) /* each copy's flush on its own lane */
		assert_int_equal(f->cap.done[i].lane, f->cap.done[i].copy);
	free(f);

	/* afap: all due at once, each waits (the third behind the waiting second) */
	f = fx_new();
	f->cfg.flushes_apart = true;
	f->cfg.timing = RP_TIMING_AFAP;
	f->latency_ns = 500 * US;
	assert_int_equal(fx_run(f, evs, 4), 0);
	assert_int_equal(f->st.completed, 4);
	for (unsigned int i = 0; i < f->cap.n; i++)
		t[i] = f->cap.done[i].issue_ns;
	qsort(t, 4, sizeof(*t), cmp_u64);
	for (int i = 1; i < 4; i++)
		assert_int_equal(t[i] - t[i - 1], 500 * US);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deadlines_exact),
		cmocka_unit_test(test_speed),
		cmocka_unit_test(test_late_does_not_shift),
		cmocka_unit_test(test_fell_behind),
		cmocka_unit_test(test_kept_up),
		cmocka_unit_test(test_depth_cap_original),
		cmocka_unit_test(test_capped_flush_share),
		cmocka_unit_test(test_afap_depth),
		cmocka_unit_test(test_load_keeps_recorded_qd),
		cmocka_unit_test(test_shard_and_overlay),
		cmocka_unit_test(test_fit_rules),
		cmocka_unit_test(test_end_overflow),
		cmocka_unit_test(test_alignment),
		cmocka_unit_test(test_inward_alignment),
		cmocka_unit_test(test_ops_and_safety),
		cmocka_unit_test(test_unmapped_device_counted),
		cmocka_unit_test(test_loops_warmup_duration),
		cmocka_unit_test(test_stop_flag),
		cmocka_unit_test(test_big_buffers),
		cmocka_unit_test(test_own_buffers_bounded),
		cmocka_unit_test(test_order_threads_bounded),
		cmocka_unit_test(test_payload),
		cmocka_unit_test(test_prefetch_source),
		cmocka_unit_test(test_trace_scan),
		cmocka_unit_test(test_hold_depth),
		cmocka_unit_test(test_order_model),
		cmocka_unit_test(test_order_causal_stretch),
		cmocka_unit_test(test_order_causal_faster),
		cmocka_unit_test(test_order_thread_depth),
		cmocka_unit_test(test_order_cross_thread),
		cmocka_unit_test(test_order_wake_chain),
		cmocka_unit_test(test_order_wake_runnable),
		cmocka_unit_test(test_order_wake_default),
		cmocka_unit_test(test_order_model_random),
		cmocka_unit_test(test_order_window_full),
		cmocka_unit_test(test_flushes_apart),
		cmocka_unit_test(test_flushes_apart_released),
		cmocka_unit_test(test_flushes_apart_scale),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
