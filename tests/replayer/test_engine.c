// SPDX-License-Identifier: GPL-2.0-only
/*
 * Engine tests on a real file: every io_uring ring setup the engine can fall back to (deferred
 * task work, cooperative task work, plain) and psync write, read back and verify data, complete
 * every I/O through blocking and through non-blocking reaps only, and run whole schedules.
 * A setup the kernel refuses falls through to the next one, so on an old kernel some cases
 * test the same ring twice: still correct, never skipped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <liburing.h>

#include "btape.h"
#include "clock.h"
#include "engine.h"
#include "scheduler.h"
#include "source.h"

#define DEPTH 8
#define BLOCKS 64
#define BLK 4096
#define POLL_TRIES 10000000u /* non-blocking reaps before giving up (a hang, not a timing) */

struct fx {
	char path[64];
	struct rp_target t;
	struct rp_clock clock;
	void *bufs[DEPTH];
	struct rp_io ios[DEPTH];
};

static struct fx *fx_new(void)
{
	struct fx *f = calloc(1, sizeof(*f));
	const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	int fd;

	assert_non_null(f);
	snprintf(f->path, sizeof(f->path), "%s/btape-engine.XXXXXX", dir);
	fd = mkstemp(f->path);
	assert_true(fd >= 0);
	unlink(f->path); /* gone even when an assertion ends the test early */
	assert_int_equal(ftruncate(fd, BLOCKS * BLK), 0);
	f->t = (struct rp_target){.fd = fd, .size = BLOCKS * BLK, .lbs = 512, .path = f->path};
	rp_clock_init_real(&f->clock, 0);
	for (unsigned int i = 0; i < DEPTH; i++)
		assert_int_equal(posix_memalign(&f->bufs[i], 4096, BLK), 0);
	return f;
}

static void fx_free(struct fx *f)
{
	for (unsigned int i = 0; i < DEPTH; i++)
		free(f->bufs[i]);
	close(f->t.fd);
	free(f);
}

static int open_engine(struct fx *f, const struct rp_engine_ops *ops, unsigned int setup,
		       struct rp_engine **e)
{
	struct rp_engine_cfg ec = {.targets = &f->t,
				   .ntargets = 1,
				   .depth = DEPTH,
				   .bufs = f->bufs,
				   .buf_bytes = BLK,
				   .clock = &f->clock,
				   .uring_setup_first = setup};

	return ops->open(e, &ec);
}

/* Reaps until n I/Os have completed; blocking reaps or only non-blocking ones. */
static void reap_all(const struct rp_engine_ops *ops, struct rp_engine *e, unsigned int n,
		     bool blocking, struct rp_clock *clock)
{
	struct rp_io *done[DEPTH];
	unsigned int got = 0, tries = 0;

	while (got < n) {
		uint64_t wait = blocking ? clock->now(clock) + 1000000000ull : 0;
		int r = ops->reap(e, done, DEPTH, wait);

		assert_true(r >= 0);
		for (int i = 0; i < r; i++) {
			assert_int_equal(done[i]->res, (int64_t)done[i]->bytes);
			done[i]->busy = false;
		}
		got += (unsigned int)r;
		if (!r && !blocking) {
			assert_true(++tries < POLL_TRIES);
			sched_yield();
		}
	}
}

/* Writes every block with a pattern of its own, reads them all back and checks them. */
static void write_read_verify(const struct rp_engine_ops *ops, unsigned int setup, bool blocking)
{
	struct fx *f = fx_new();
	struct rp_engine *e = NULL;
	uint8_t *check = malloc(BLK);

	assert_non_null(check);
	assert_int_equal(open_engine(f, ops, setup, &e), 0);
	for (int pass = 0; pass < 2; pass++) {
		for (unsigned int b = 0; b < BLOCKS; b += DEPTH) {
			struct rp_io *batch[DEPTH];

			for (unsigned int i = 0; i < DEPTH; i++) {
				struct rp_io *io = &f->ios[i];

				*io = (struct rp_io){.offset = (uint64_t)(b + i) * BLK,
						     .bytes = BLK,
						     .buf = f->bufs[i],
						     .buf_index = (int)i,
						     .op = pass ? RP_IO_READ : RP_IO_WRITE,
						     .busy = true};
				memset(f->bufs[i], pass ? 0 : (int)(b + i + 1), BLK);
				batch[i] = io;
			}
			/* half of the batches go in two submits: both must be handed over */
			if (b % (2 * DEPTH)) {
				assert_int_equal(ops->submit(e, batch, DEPTH / 2), DEPTH / 2);
				assert_int_equal(ops->submit(e, batch + DEPTH / 2, DEPTH / 2),
						 DEPTH / 2);
			} else {
				assert_int_equal(ops->submit(e, batch, DEPTH), DEPTH);
			}
			reap_all(ops, e, DEPTH, blocking, &f->clock);
			for (unsigned int i = 0; pass && i < DEPTH; i++) {
				memset(check, (int)(b + i + 1), BLK);
				assert_memory_equal(f->bufs[i], check, BLK);
			}
		}
	}
	/* and the file really holds the data (not only the engine's view of it) */
	assert_int_equal(pread(f->t.fd, check, BLK, 5 * BLK), BLK);
	assert_int_equal(check[0], 6);
	assert_int_equal(check[BLK - 1], 6);
	ops->close(e);
	free(check);
	fx_free(f);
}

static void test_uring_setups_blocking(void **state)
{
	for (unsigned int s = 0; s < RP_URING_SETUPS; s++)
		write_read_verify(&rp_engine_uring, s, true);
}

/* The original-timing spin reaps without blocking: deferred completions must still come. */
static void test_uring_setups_polling(void **state)
{
	for (unsigned int s = 0; s < RP_URING_SETUPS; s++)
		write_read_verify(&rp_engine_uring, s, false);
}

static void test_psync(void **state)
{
	write_read_verify(&rp_engine_psync, 0, true);
	write_read_verify(&rp_engine_psync, 0, false);
}

/* A reap that waits returns by its deadline when nothing is in flight or nothing completes. */
static void test_uring_wait_idle(void **state)
{
	for (unsigned int s = 0; s < RP_URING_SETUPS; s++) {
		struct fx *f = fx_new();
		struct rp_engine *e = NULL;
		struct rp_io *done[DEPTH];

		assert_int_equal(open_engine(f, &rp_engine_uring, s, &e), 0);
		assert_int_equal(rp_engine_uring.reap(e, done, DEPTH, 0), 0);
		assert_int_equal(
			rp_engine_uring.reap(e, done, DEPTH, f->clock.now(&f->clock) + 1000000), 0);
		rp_engine_uring.close(e);
		fx_free(f);
	}
}

/* A read or write longer than an SQE's 32-bit length fails (EINVAL), never runs truncated. */
static void test_uring_too_long(void **state)
{
	struct fx *f = fx_new();
	struct rp_engine *e = NULL;
	struct rp_io *done[DEPTH], *batch[2];
	int got = 0;

	assert_int_equal(open_engine(f, &rp_engine_uring, 0, &e), 0);
	for (int i = 0; i < 2; i++) {
		/* 2^32 bytes: as (unsigned int) a 0-byte I/O that "succeeds" */
		f->ios[i] = (struct rp_io){.offset = 0,
					   .bytes = (uint64_t)UINT32_MAX + 1,
					   .buf = f->bufs[i],
					   .buf_index = -1,
					   .op = i ? RP_IO_WRITE : RP_IO_READ,
					   .busy = true};
		batch[i] = &f->ios[i];
	}
	assert_int_equal(rp_engine_uring.submit(e, batch, 2), 2);
	while (got < 2) {
		int r = rp_engine_uring.reap(e, done + got, DEPTH - (unsigned int)got,
					     f->clock.now(&f->clock) + 1000000000ull);

		assert_true(r >= 0);
		got += r;
	}
	assert_int_equal(f->ios[0].res, -EINVAL);
	assert_int_equal(f->ios[1].res, -EINVAL);
	rp_engine_uring.close(e);
	fx_free(f);
}

/*
 * Whole schedules through the scheduler: afap, original timing (spins), closed loop; the
 * engine's system calls per I/O stay bounded (batched submission: bench/replay/syscalls.sh).
 */
/*
 * Flushes run in io-wq workers: the engine allows twice the kernel's default of them (4 per
 * CPU), never more than its depth. The limit belongs to the thread, so a second ring of this
 * thread reads it back (values 0 change nothing and return the current ones).
 */
static void test_uring_flush_workers(void **state)
{
	const unsigned int depth = 64;
	struct fx *f = fx_new();
	struct rp_engine_cfg ec = {
		.targets = &f->t, .ntargets = 1, .depth = depth, .clock = &f->clock};
	struct rp_engine *e = NULL;
	struct io_uring probe;
	unsigned int limits[2] = {0, 0};
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned long want = (unsigned long)(cpus > 0 ? cpus : 1) * RP_URING_FLUSH_WORKERS_PER_CPU;
	int ret;

	(void)state;
	assert_int_equal(rp_engine_uring.open(&e, &ec), 0);
	assert_int_equal(io_uring_queue_init(4, &probe, 0), 0);
	ret = io_uring_register_iowq_max_workers(&probe, limits);
	io_uring_queue_exit(&probe);
	rp_engine_uring.close(e);
	fx_free(f);
	if (ret == -EINVAL) {
		skip(); /* before 5.15: the kernel's own limit stays */
		return;
	}
	assert_int_equal(ret, 0);
	assert_int_equal(limits[0], want < depth ? want : depth);
}

static void test_uring_setups_sched(void **state)
{
	enum rp_timing timings[] = {RP_TIMING_AFAP, RP_TIMING_ORIGINAL, RP_TIMING_LOAD};
	enum { NEV = 512 };
	struct btape_event *evs = calloc(NEV, sizeof(*evs));

	assert_non_null(evs);
	for (unsigned int i = 0; i < NEV; i++)
		evs[i] = (struct btape_event){.issue_ns = 1000000000ull + i * 2000ull,
					      .op = BTAPE_OP_READ,
					      .sector = (i * 7 % BLOCKS) * (BLK / 512),
					      .bytes = BLK,
					      .qd = 1 + i % 4,
					      .present = BTAPE_HAS_QD};
	for (unsigned int s = 0; s < RP_URING_SETUPS; s++) {
		for (unsigned int t = 0; t < 3; t++) {
			struct fx *f = fx_new();
			struct rp_engine *e = NULL;
			struct rp_array_source src;
			struct rp_devmap dev = {.target = 0, .src_size = BLOCKS * BLK};
			struct rp_stats *st = calloc(1, sizeof(*st));
			struct rp_sched_cfg cfg = {.timing = timings[t],
						   .speed = 1,
						   .iodepth = DEPTH,
						   .scale = 1,
						   .layout = RP_LAYOUT_SHARD,
						   .fit = RP_FIT_ERROR,
						   .loops = 1,
						   .ndev = 1,
						   .devs = &dev,
						   .targets = &f->t,
						   .ntargets = 1,
						   .bufs = f->bufs,
						   .buf_bytes = BLK};

			assert_non_null(st);
			f->clock.spin_ns = 50000; /* original timing: spin 50 us before each I/O */
			rp_array_source_init(&src, evs, NEV, 100);
			assert_int_equal(open_engine(f, &rp_engine_uring, s, &e), 0);
			assert_int_equal(
				rp_sched_run(&cfg, &rp_engine_uring, e, &f->clock, &src.src, st),
				0);
			rp_engine_uring.close(e);
			assert_int_equal(st->issued, NEV);
			assert_int_equal(st->completed, NEV);
			assert_int_equal(st->ios[RP_IO_READ], NEV);
			assert_int_equal(st->bytes[RP_IO_READ], (uint64_t)NEV * BLK);
			assert_int_equal(st->errors, 0);
			assert_true(st->max_inflight <= DEPTH);
			/*
			 * The engine counts its system calls: one io_uring_enter submits a batch
			 * and reaps, so 0.15-0.72 per I/O measured here. The bound is loose (a
			 * wait and a submit per I/O at most, and a timer wake): 1 per I/O failed
			 * 1 run in 60 on an idle machine, one half for afap 5 in 30 at load 10.
			 * bench/replay/syscalls.sh measures it.
			 */
			assert_true(st->stage.syscalls > 0);
			assert_true(st->stage.syscalls <= 3 * NEV);
			free(st);
			fx_free(f);
		}
	}
	free(evs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uring_setups_blocking),
		cmocka_unit_test(test_uring_setups_polling),
		cmocka_unit_test(test_psync),
		cmocka_unit_test(test_uring_wait_idle),
		cmocka_unit_test(test_uring_too_long),
		cmocka_unit_test(test_uring_setups_sched),
		cmocka_unit_test(test_uring_flush_workers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
