// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the recorder's queue depth from recorded times (recorder/rec_qd.c): hand-made
 * cases with known depths, a brute-force model on random events, and the writer's release hook
 * end to end (events added out of order, read back from the file).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btape.h"
#include "rec_qd.h"

static struct btape_event ev(uint32_t dev, uint64_t issue, uint64_t complete)
{
	struct btape_event e = {0};

	e.dev = dev;
	e.issue_ns = issue;
	e.bytes = 4096;
	e.present = BTAPE_HAS_QD;
	if (complete) {
		e.complete_ns = complete;
		e.present |= BTAPE_HAS_COMPLETE;
	}
	return e;
}

/* Fills EVS in order and checks each qd against WANT. */
static void run(struct btape_event *evs, const uint32_t *want, size_t n)
{
	struct rec_qd *q;

	assert_int_equal(rec_qd__new(&q), 0);
	for (size_t i = 0; i < n; i++) {
		evs[i].qd = 0;
		evs[i].present &= ~BTAPE_HAS_QD;
		rec_qd__fill(q, &evs[i]);
		assert_true(evs[i].present & BTAPE_HAS_QD);
		if (evs[i].qd != want[i])
			fail_msg("event %zu: qd %u, want %u", i, evs[i].qd, want[i]);
	}
	rec_qd__free(q);
}

static void test_known_depths(void **state)
{
	(void)state;
	struct btape_event e[] = {
		ev(0, 0, 100), /* alone */
		ev(0, 10, 50), /* the first in flight */
		ev(0, 20, 30), /* both before it */
		ev(0, 60, 70), /* the first only: 50 and 30 are done */
		ev(0, 100, 0), /* the first completed at 100, this issue: not counted */
		ev(0, 101, 0), /* the one before has no completion time: not counted */
	};
	const uint32_t want[] = {1, 2, 3, 2, 1, 1};

	run(e, want, 6);
}

static void test_ties_and_devices(void **state)
{
	(void)state;
	struct btape_event e[] = {
		ev(0, 5, 10),  ev(0, 5, 10), /* same issue time: the second counts the first */
		ev(3, 5, 20),		     /* another device (index grows past the first) */
		ev(0, 10, 12),		     /* both done at 10 */
		ev(3, 11, 15),		     /* device 3's first still in flight */
		ev(1, 11, 11),		     /* zero latency: counts itself */
		ev(1, 11, 13),		     /* the zero-latency one is done */
	};
	const uint32_t want[] = {1, 2, 1, 1, 2, 1, 1};

	run(e, want, 7);
}

static void test_bad_device(void **state)
{
	(void)state;
	struct rec_qd *q;
	struct btape_event e = ev(UINT32_MAX, 10, 20);

	assert_int_equal(rec_qd__new(&q), 0);
	rec_qd__fill(q, &e);
	assert_false(e.present & BTAPE_HAS_QD); /* no depth rather than a wild index */
	rec_qd__free(q);
}

/* Brute force: 1 + earlier events of the device (in order) still in flight at the issue. */
static uint32_t model(const struct btape_event *e, size_t i)
{
	uint32_t n = 1;

	for (size_t j = 0; j < i; j++)
		if (e[j].dev == e[i].dev && (e[j].present & BTAPE_HAS_COMPLETE) &&
		    e[j].complete_ns > e[i].issue_ns)
			n++;
	return n;
}

static void test_model(void **state)
{
	(void)state;
	enum { N = 20000 };
	struct btape_event *e = calloc(N, sizeof(*e));
	uint32_t *want = calloc(N, sizeof(*want));
	uint64_t t = 1000, seed = 42;
	uint32_t maxq = 0;

	assert_non_null(e);
	assert_non_null(want);
	for (size_t i = 0; i < N; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		t += (seed >> 33) % 50; /* issue times do not decrease; ties happen */
		uint64_t lat = (seed >> 20) % 2000;
		uint32_t dev = (uint32_t)((seed >> 11) % 5) * 7; /* 0, 7, ... 28 */
		bool open = (seed >> 5) % 97 == 0;		 /* no completion time */

		e[i] = ev(dev, t, open ? 0 : t + lat); /* lat 0: completed at its issue */
	}
	for (size_t i = 0; i < N; i++) {
		want[i] = model(e, i);
		maxq = want[i] > maxq ? want[i] : maxq;
	}
	assert_true(maxq > 8); /* the random set has real depth */
	run(e, want, N);
	free(e);
	free(want);
}

static void qd_hook(void *ctx, struct btape_event *e)
{
	rec_qd__fill(ctx, e);
}

/* Through the writer: added out of issue order, filled in issue order as released. */
static void test_writer_hook(void **state)
{
	(void)state;
	enum { N = 5000 };
	char path[] = "/tmp/test_rec_qd.XXXXXX";
	int fd = mkstemp(path);
	struct btape_meta meta = {0};
	struct btape_device d = {.name = "loop9"};
	struct btape_writer *w;
	struct btape_reader *r;
	struct btape_event *e = calloc(N, sizeof(*e)), got;
	struct rec_qd *q;
	uint64_t seed = 7;
	size_t n = 0;

	assert_true(fd >= 0);
	assert_non_null(e);
	close(fd);
	assert_true(btape_meta_add_device(&meta, &d) >= 0);
	assert_true(btape_meta_add_device(&meta, &d) >= 0);
	assert_int_equal(btape_writer__open(&w, path, &meta, NULL, NULL, 0), 0);
	assert_int_equal(rec_qd__new(&q), 0);
	btape_writer__set_release_hook(w, qd_hook, q);
	for (size_t i = 0; i < N; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		e[i] = ev((uint32_t)(seed >> 40) % 2, 1000 + i * 10,
			  1000 + i * 10 + (seed >> 20) % 300);
		e[i].qd = 999; /* overwritten by the hook */
	}
	/* completion order, as a recorder sees them; the watermark follows */
	for (size_t i = 0; i < N; i++) {
		size_t j = i ^ 3; /* a local shuffle: each group of four in reverse-ish order */

		if (j >= N)
			j = i;
		assert_int_equal(btape_writer__add(w, &e[j]), 0);
		if (i % 64 == 63)
			assert_int_equal(btape_writer__advance(w, e[i].issue_ns - 100), 0);
	}
	/*
	 * A late event, after everything was released: written at once (the writer's direct
	 * path), still through the hook. It counts what its device had in flight at the
	 * device's latest issue (rec_qd.h): an approximation, pinned here.
	 */
	struct btape_event late = ev(0, 1500, 1600);
	uint64_t last0 = 0;
	uint32_t late_want = 1;

	late.qd = 999;
	assert_int_equal(btape_writer__advance(w, UINT64_MAX), 0);
	assert_int_equal(btape_writer__add(w, &late), 0);
	for (size_t j = 0; j < N; j++)
		last0 = e[j].dev == 0 ? e[j].issue_ns : last0;
	for (size_t j = 0; j < N; j++)
		late_want += e[j].dev == 0 && e[j].complete_ns > last0;
	assert_int_equal(btape_writer__close(w, NULL, 0), 0);
	assert_int_equal(btape_reader__open(&r, path, NULL, 0), 0);
	while (btape_reader__next(r, &got) == 1) {
		assert_true(n <= N);
		assert_true(got.present & BTAPE_HAS_QD);
		if (n == N) { /* the late one, last in the file */
			assert_int_equal(got.issue_ns, late.issue_ns);
			assert_int_equal(got.qd, late_want);
		} else {
			assert_int_equal(got.issue_ns, e[n].issue_ns);
			if (got.qd != model(e, n))
				fail_msg("event %zu: qd %u, want %u", n, got.qd, model(e, n));
		}
		n++;
	}
	assert_int_equal(n, N + 1);
	btape_reader__close(r);
	rec_qd__free(q);
	btape_meta_free(&meta);
	unlink(path);
	free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_depths), cmocka_unit_test(test_ties_and_devices),
		cmocka_unit_test(test_bad_device),   cmocka_unit_test(test_model),
		cmocka_unit_test(test_writer_hook),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
