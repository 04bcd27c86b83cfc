// SPDX-License-Identifier: GPL-2.0-only
/* The cluster layer without a launcher (one rank, no MPI) and its path expansion. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "cluster.h"

static void test_expand(void **state)
{
	char out[32];

	assert_int_equal(cl_expand_path(out, sizeof(out), "/dev/shm/t-%h-%r.btape", "n1", 12), 22);
	assert_string_equal(out, "/dev/shm/t-n1-12.btape");
	assert_int_equal(cl_expand_path(out, sizeof(out), "100%%-%r%r", "h", 3), 7);
	assert_string_equal(out, "100%-33");
	assert_int_equal(cl_expand_path(out, sizeof(out), "plain", "h", 0), 5);
	assert_string_equal(out, "plain");
	assert_int_equal(cl_expand_path(out, sizeof(out), "bad%x", "h", 0), -EINVAL);
	assert_int_equal(cl_expand_path(out, sizeof(out), "trailing%", "h", 0), -EINVAL);
	/* 31 bytes fit in 32, 32 do not */
	assert_int_equal(cl_expand_path(out, sizeof(out), "%h", "0123456789012345678901234567890", 0), 31);
	assert_int_equal(cl_expand_path(out, sizeof(out), "%h!", "0123456789012345678901234567890", 0),
			 -ENAMETOOLONG);
	assert_int_equal(cl_expand_path(out, 4, "%r", "h", 12345), -ENAMETOOLONG);
}

static void test_one_rank(void **state)
{
	struct cl_comm *c;
	int argc = 1;
	char *args[] = { "x", NULL }, **argv = args;

	assert_false(cl_launched());
	assert_int_equal(cl_comm__open(&c, &argc, &argv), 0);
	assert_int_equal(cl_comm__rank(c), 0);
	assert_int_equal(cl_comm__size(c), 1);
	assert_false(cl_comm__is_mpi(c));
	assert_true(cl_comm__host(c)[0]);
	assert_int_equal(cl_comm__barrier(c), 0);
	uint64_t v[2] = { 5, 7 };
	assert_int_equal(cl_comm__allreduce_u64(c, v, 2, CL_SUM), 0);
	assert_true(v[0] == 5 && v[1] == 7);
	/* one rank: started, it is done at once */
	assert_int_equal(cl_comm__allreduce_u64_start(c, v, 2, CL_MAX), 0);
	assert_int_equal(cl_comm__test(c), 1);
	assert_int_equal(cl_comm__wait(c), 0);
	assert_true(v[0] == 5 && v[1] == 7);
	int in = 42, out = 0;
	assert_int_equal(cl_comm__allgather(c, &in, sizeof(in), &out), 0);
	assert_int_equal(out, 42);
	char *lines = (char *)1;
	assert_int_equal(cl_comm__agree(c, NULL, &lines), 0);
	assert_null(lines);
	assert_int_equal(cl_comm__agree(c, "target busy", &lines), 1);
	assert_non_null(lines);
	char want[128];
	snprintf(want, sizeof(want), "host %s rank 0: target busy\n", cl_comm__host(c));
	assert_string_equal(lines, want);
	free(lines);
	struct cl_offset off;
	assert_int_equal(cl_comm__clock_offsets(c, 8, &off), 0);
	assert_true(off.offset_ns == 0 && off.uncert_ns == 0);
	uint64_t before = cl_now_ns(), start = 0;
	assert_int_equal(cl_comm__start_instant(c, &off, 5000000, &start), 0);
	assert_true(start >= before + 5000000 && start <= cl_now_ns() + 5000000);
	cl_comm__close(c);
	cl_comm__close(NULL);
}

static void test_clock_shift(void **state)
{
	struct timespec ts;

	assert_int_equal(cl_clock_shift_ns(), -2000000000ll); /* set in main() */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t raw = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	int64_t d = (int64_t)(cl_now_ns() - raw);
	assert_true(d >= -2000000000ll && d < -2000000000ll + 1000000);
}

int main(void)
{
	/* no launcher's variables: this test is the one-rank path */
	unsetenv("OMPI_COMM_WORLD_SIZE");
	unsetenv("PMI_SIZE");
	unsetenv("PMI_RANK");
	unsetenv("PMIX_RANK");
	setenv("BIOTAPE_TEST_CLOCK_SHIFT_NS", "-2000000000", 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expand),
		cmocka_unit_test(test_one_rank),
		cmocka_unit_test(test_clock_shift),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
