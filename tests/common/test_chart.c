// SPDX-License-Identifier: GPL-2.0-only
/* Chart axes (common/chart.h): round ticks and labels with units. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "chart.h"

static void check(double max, int nt, enum chart_unit u, double step, int nticks,
		  const char *top_label)
{
	struct chart_axis a;
	char b[32];

	chart_axis_init(&a, max, nt, u);
	assert_float_equal(a.step, step, step * 1e-9);
	assert_int_equal(a.nticks, nticks);
	assert_true(a.top >= max);
	assert_string_equal(chart_axis_label(&a, a.top, b, sizeof(b)), top_label);
}

static void test_ticks(void **st)
{
	(void)st;
	/* 10,500 IOPS in 5 steps: 2.1k raw -> 5k steps, 0 5k 10k 15k */
	check(10500, 5, CHART_COUNT, 5000, 3, "15k");
	/* 7,860: 1.57k raw -> 2k steps up to 8k */
	check(7860, 5, CHART_COUNT, 2000, 4, "8k");
	/* 3,890 (a sweep's IOPS): 778 raw -> 1k steps up to 4k */
	check(3890, 5, CHART_COUNT, 1000, 4, "4k");
	/* 2.3 M */
	check(2.3e6, 4, CHART_COUNT, 1e6, 3, "3M");
	/* fractions 0..1 in 5 steps: 0.2 */
	check(1.0, 5, CHART_PLAIN, 0.2, 5, "1.0");
	/* 45 MiB/s: in MiB, 9 raw -> 10 MiB steps */
	check(45.0 * 1048576, 5, CHART_BYTES, 10.0 * 1048576, 5, "50 MiB");
	/* 700 KiB */
	check(700.0 * 1024, 4, CHART_BYTES, 200.0 * 1024, 4, "800 KiB");
	/* 1.3 ms of latency: 0.26 ms raw -> 0.5 ms steps */
	check(1.3e6, 5, CHART_NS, 0.5e6, 3, "1.5 ms");
	/* 250 µs */
	check(250e3, 5, CHART_NS, 50e3, 5, "250 µs");
	/* nothing to draw: 0..1 */
	check(0, 5, CHART_COUNT, 0.2, 5, "1.0");
}

static void test_labels(void **st)
{
	struct chart_axis a;
	char b[32];

	(void)st;
	chart_axis_init(&a, 1.2e6, 6, CHART_NS); /* 0.2 ms steps */
	assert_string_equal(chart_axis_label(&a, 0, b, sizeof(b)), "0");
	assert_string_equal(chart_axis_label(&a, 0.4e6, b, sizeof(b)), "0.4 ms");
	chart_axis_init(&a, 900, 3, CHART_COUNT); /* below 1k: no suffix, 500 steps */
	assert_string_equal(chart_axis_label(&a, 500, b, sizeof(b)), "500");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ticks),
		cmocka_unit_test(test_labels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
