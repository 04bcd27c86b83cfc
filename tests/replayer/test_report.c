// SPDX-License-Identifier: GPL-2.0-only
/* Sweep knee detection and the sweep renderers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "scheduler.h"

static struct rp_step step(unsigned int f, double iops, uint64_t p99_us)
{
	struct rp_step s = {.factor = f,
			    .iops = iops,
			    .ios = 1000,
			    .p50_all = p99_us * 500,
			    .p99_all = p99_us * 1000};

	s.op_ios[RP_IO_READ] = 1000;
	s.p50[RP_IO_READ] = s.p50_all;
	s.p99[RP_IO_READ] = s.p99_all;
	return s;
}

static void test_knee(void **state)
{
	/* IOPS doubles with latency flat, then IOPS +10% while p99 x3: knee at the 3rd step */
	struct rp_step s[] = {step(1, 10000, 100), step(2, 20000, 105), step(4, 22000, 300),
			      step(8, 22500, 900)};

	assert_int_equal(rp_steps_mark_knee(s, 4), 2);
	assert_true(s[2].knee);
	assert_false(s[1].knee);
	assert_false(s[3].knee); /* only the first */

	/* linear scaling: no knee */
	struct rp_step t[] = {step(1, 10000, 100), step(2, 20000, 100), step(4, 40000, 120)};

	assert_int_equal(rp_steps_mark_knee(t, 3), -1);
	/* a single step has no knee */
	assert_int_equal(rp_steps_mark_knee(t, 1), -1);
}

static void test_html_selfcontained(void **state)
{
	struct rp_step s[] = {step(1, 10000, 100), step(2, 20000, 105), step(4, 22000, 300)};
	const char *targets[] = {"/dev/loop<1>"};
	struct rp_run_info info = {.trace = "t&.btape",
				   .engine = "io_uring",
				   .timing = "afap",
				   .layout = "shard",
				   .speed = 1,
				   .iodepth = 32,
				   .scale = 1,
				   .targets = targets,
				   .ntargets = 1};
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	rp_steps_mark_knee(s, 3);
	rp_report_sweep_html(fp, &info, s, 3);
	fclose(fp);
	assert_non_null(strstr(buf, "<svg"));
	assert_non_null(strstr(buf, "knee"));
	assert_non_null(strstr(buf, "/dev/loop&lt;1&gt;")); /* escaped */
	assert_null(strstr(buf, "<script"));
	assert_null(strstr(buf, "src="));
	free(buf);

	buf = NULL;
	fp = open_memstream(&buf, &len);
	rp_report_sweep_json(fp, &info, s, 3);
	fclose(fp);
	assert_non_null(strstr(buf, "\"knee\":4"));
	free(buf);
}

static const char *const one_target[] = {"t"};

/* A run of trace "t" onto target "t". */
static struct rp_run_info small_run(const char *engine, const char *timing)
{
	return (struct rp_run_info){.trace = "t", .engine = engine, .timing = timing,
				    .layout = "shard", .speed = 1, .iodepth = 1, .scale = 1,
				    .targets = one_target, .ntargets = 1};
}

/* The sweep page names the knee's step, or says plainly that there is none. */
static char *sweep_page(struct rp_step *s, unsigned int n)
{
	struct rp_run_info info = small_run("null", "afap");
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	rp_steps_mark_knee(s, n);
	rp_report_sweep_html(fp, &info, s, n);
	fclose(fp);
	return buf;
}

static void test_html_knee_named(void **state)
{
	struct rp_step s[] = {step(1, 10000, 100), step(2, 20000, 105), step(4, 22000, 300)};
	struct rp_step t[] = {step(1, 10000, 100), step(2, 20000, 100), step(8, 80000, 110)};
	char *buf = sweep_page(s, 3);

	(void)state;
	/* x2 -> x4: p99 x2.86 while IOPS x1.10 */
	assert_non_null(strstr(buf, "Knee at x4: from x2 to x4, p99 latency grew 2.86x while IOPS grew 1.10x"));
	assert_non_null(strstr(buf, "<tr class=\"knee\"><td>x4 (knee)</td>"));
	assert_null(strstr(buf, "<th></th>")); /* no empty column */
	assert_null(strstr(buf, "e+0")); /* round ticks, no exponents */
	assert_non_null(strstr(buf, ">20k<")); /* an IOPS tick with its unit */
	free(buf);
	buf = sweep_page(t, 3);
	assert_non_null(strstr(buf, "No knee up to x8"));
	assert_non_null(strstr(buf, "none up to x8"));
	free(buf);
}

/* A replay held at the depth cap mostly by flushes says so; JSON always has the share. */
static char *report_of(const struct rp_run_info *info, const struct rp_stats *st, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	if (json)
		rp_report_json(fp, info, st);
	else
		rp_report_text(fp, info, st);
	fclose(fp);
	return buf;
}

static char *run_report(const struct rp_stats *st, bool json)
{
	struct rp_run_info info = small_run("io_uring", "original");

	return report_of(&info, st, json);
}

static void test_capped_flushes_named(void **state)
{
	struct rp_stats st;
	char *buf;

	(void)state;
	rp_stats_reset(&st);
	st.issued = st.completed = 10;
	hist_add(&st.issue_err, 2000000);
	st.late = 1;
	st.lag_max_ns = 2000000;
	st.depth_capped = 3;
	st.capped_slots = 12;
	st.capped_flush_slots = 9;
	buf = run_report(&st, false);
	assert_non_null(strstr(buf, "the replayer fell behind by"));
	assert_non_null(strstr(buf, "flushes held 75% of the slots at the depth cap"));
	free(buf);
	buf = run_report(&st, true);
	assert_non_null(strstr(buf, "\"capped_flush_share\":0.750"));
	free(buf);
	st.capped_flush_slots = 3; /* a quarter: not the flushes' doing */
	buf = run_report(&st, false);
	assert_null(strstr(buf, "flushes held"));
	free(buf);
	st.capped_slots = st.capped_flush_slots = 0;
	buf = run_report(&st, true);
	assert_non_null(strstr(buf, "\"capped_flush_share\":0.000"));
	free(buf);
}

/*
 * More than 1% late, held back more by waiting for a CPU than by the depth cap, with a short
 * spin in the normal class: the summary proposes the longer spin; otherwise it does not.
 */
static void test_wakeup_hint(void **state)
{
	struct rp_run_info info = small_run("io_uring", "original");
	static const char hint[] = "wakes late: where this host's CPUs do not also serve the "
				   "target, --spin-us 1000 keeps it on a CPU";
	struct rp_stats st;
	char *buf;

	(void)state;
	info.spin_us = 40;
	rp_stats_reset(&st);
	st.issued = st.completed = 1000;
	for (int i = 0; i < 1000; i++)
		hist_add(&st.issue_err, i < 20 ? 2000000 : 1000);
	st.late = 20; /* 2% */
	st.lag_max_ns = 2000000;
	st.stage.runq_ns = 500000000;
	st.stage.capped_ns = 100000000;
	st.stage.run_ns = 10000000000;
	st.stage.wait_ns = 6000000000; /* mostly asleep */
	buf = report_of(&info, &st, false);
	assert_non_null(
		strstr(buf, "the thread sleeps until 40 us before a deadline and wakes late"));
	assert_non_null(strstr(buf, hint));
	free(buf);
	st.late = 10; /* 1%: kept */
	buf = report_of(&info, &st, false);
	assert_null(strstr(buf, hint));
	free(buf);
	st.late = 20;
	st.stage.capped_ns = 600000000; /* the device held it back more */
	buf = report_of(&info, &st, false);
	assert_null(strstr(buf, hint));
	free(buf);
	st.stage.capped_ns = 0;
	info.spin_us = 1000; /* already spinning that long */
	buf = report_of(&info, &st, false);
	assert_null(strstr(buf, hint));
	free(buf);
	info.spin_us = 10;
	info.rt_priority = 1; /* real-time: its wake-ups are not what waits */
	buf = report_of(&info, &st, false);
	assert_null(strstr(buf, hint));
	free(buf);
	info.rt_priority = 0;
	buf = report_of(&info, &st, false);
	assert_non_null(strstr(buf, hint));
	free(buf);
	st.stage.wait_ns = 4000000000; /* mostly awake: preempted, not woken late */
	buf = report_of(&info, &st, false);
	assert_null(strstr(buf, hint));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_knee),
		cmocka_unit_test(test_html_selfcontained),
		cmocka_unit_test(test_html_knee_named),
		cmocka_unit_test(test_capped_flushes_named),
		cmocka_unit_test(test_wakeup_hint),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
