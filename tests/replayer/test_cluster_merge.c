// SPDX-License-Identifier: GPL-2.0-only
/* rp_stats_merge() (replayer/cluster_replay.h): the merge of ranks' stats is the stats of all
 * their I/Os: counters summed, histograms as if one rank had added every value, the span
 * widened; an empty rank changes nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cluster_replay.h"
#include "hist.h"

static void add_io(struct rp_stats *st, unsigned int op, uint64_t bytes, uint64_t lat,
		   uint64_t ierr)
{
	st->issued++;
	st->completed++;
	st->ios[op]++;
	st->bytes[op] += bytes;
	hist_add(&st->lat[op], lat);
	hist_add(&st->issue_err, ierr);
}

static void test_merge(void **state)
{
	struct rp_stats *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct rp_stats *all = calloc(1, sizeof(*all)), *m = calloc(1, sizeof(*m));
	struct rp_stats *empty = calloc(1, sizeof(*empty));

	assert_true(a && b && all && m && empty);
	for (uint64_t i = 0; i < 1000; i++) {
		struct rp_stats *st = i % 3 ? a : b;
		unsigned int op = i % 2 ? RP_IO_READ : RP_IO_WRITE;
		uint64_t lat = 1000 + i * i * 37 % 500000, ierr = i * 13 % 9000;

		add_io(st, op, 4096, lat, ierr);
		add_io(all, op, 4096, lat, ierr);
	}
	a->start_ns = 100, a->measure_start_ns = 150, a->end_ns = 5000;
	b->start_ns = 90, b->measure_start_ns = 140, b->end_ns = 4000;
	a->errors = 0;
	b->errors = 2, b->first_error = -5, b->first_error_offset = 4096;
	a->late = 3, b->late = 4;
	a->interrupted = false, b->interrupted = true;
	a->loops = 2, b->loops = 1;
	a->max_inflight = 7, b->max_inflight = 9;
	/* a's worst lag 800 ns at 1000 ns after its start (100): at 1010 after the merged 90 */
	a->lag_max_ns = 800, a->lag_at_ns = 1000, a->behind_ns = 300;
	b->lag_max_ns = 500, b->lag_at_ns = 20, b->behind_ns = 700;
	a->dep_waited[1] = 2, b->dep_waited[1] = 3, b->dep_window_full = 1;
	a->stage.run_ns = 1000, b->stage.run_ns = 2000, a->stage.nivcsw = 4, b->stage.nivcsw = 5;

	rp_stats_merge(m, empty); /* an empty rank first: nothing */
	rp_stats_merge(m, a);
	rp_stats_merge(m, empty);
	rp_stats_merge(m, b);
	assert_int_equal(m->issued, 1000);
	assert_int_equal(m->ios[RP_IO_READ] + m->ios[RP_IO_WRITE], 1000);
	assert_int_equal(m->bytes[RP_IO_READ], all->bytes[RP_IO_READ]);
	for (unsigned int op = 0; op < RP_IO__COUNT; op++)
		assert_memory_equal(&m->lat[op], &all->lat[op], sizeof(struct hist));
	assert_memory_equal(&m->issue_err, &all->issue_err, sizeof(struct hist));
	assert_int_equal(hist_quantile(&m->lat[RP_IO_READ], 0.99),
			 hist_quantile(&all->lat[RP_IO_READ], 0.99));
	assert_int_equal(m->start_ns, 90);
	assert_int_equal(m->measure_start_ns, 140);
	assert_int_equal(m->end_ns, 5000);
	assert_int_equal(m->errors, 2);
	assert_int_equal(m->first_error, -5);
	assert_int_equal(m->first_error_offset, 4096);
	assert_int_equal(m->late, 7);
	assert_true(m->interrupted);
	assert_int_equal(m->loops, 1);
	assert_int_equal(m->max_inflight, 9);
	assert_int_equal(m->lag_max_ns, 800);
	assert_int_equal(m->lag_at_ns, 1010);
	assert_int_equal(m->behind_ns, 700);
	assert_int_equal(m->dep_waited[1], 5);
	assert_int_equal(m->dep_window_full, 1);
	assert_int_equal(m->stage.run_ns, 3000);
	assert_int_equal(m->stage.nivcsw, 9);
	free(a), free(b), free(all), free(m), free(empty);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
