// SPDX-License-Identifier: GPL-2.0-only
/* The analyzer's alignment plan: which files go on one timeline, and with which correction. */
#include "align.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

static struct btape_meta metas[4];
static struct an_align_in in[4];
static struct an_align_out out[4];
static char msg[512];

/* File k: host, recording id ("" none), rank, offset at start, first issue. */
static void file(int k, const char *host, const char *id, uint32_t rank, int64_t off,
		 uint64_t first)
{
	struct btape_meta *m = &metas[k];

	memset(m, 0, sizeof(*m));
	snprintf(m->hostname, sizeof(m->hostname), "%s", host);
	snprintf(m->cluster.id, sizeof(m->cluster.id), "%s", id);
	snprintf(m->cluster.reference, sizeof(m->cluster.reference), "h0");
	m->cluster.rank = rank;
	m->cluster.nsync = id[0] ? 1 : 0;
	m->cluster.sync[0].offset_ns = off;
	m->clock_mono_ns = 1000;
	m->clock_real_ns = 5000000 + (uint64_t)k * 100;
	in[k] = (struct an_align_in){.path = host, .meta = m, .first_ns = first, .has_first = true};
}

static void test_single_file_untouched(void **state)
{
	bool multi;

	(void)state;
	file(0, "h0", "rec", 0, 123, 10);
	assert_int_equal(an_align_plan(AN_ALIGN_AUTO, in, 1, out, &multi, msg, sizeof(msg)),
			 AN_ALIGN_NONE);
	assert_false(multi);
	assert_int_equal(out[0].clock.nsync, 0);
}

static void test_cluster(void **state)
{
	bool multi;

	(void)state;
	file(0, "h0", "rec", 0, 0, 10);
	file(1, "h1", "rec", 1, 3000000, 20);
	file(2, "h1", "rec", 2, -7000000, 30); /* two ranks on one host: labelled by rank */
	assert_int_equal(an_align_plan(AN_ALIGN_AUTO, in, 3, out, &multi, msg, sizeof(msg)),
			 AN_ALIGN_CLUSTER);
	assert_true(multi);
	assert_int_equal(out[1].clock.sync[0].offset_ns, 3000000);
	assert_int_equal(btape_cluster_to_reference(&out[2].clock, 10000000), 17000000);
	assert_string_equal(out[0].host, "h0");
	assert_string_equal(out[1].host, "h1/r1");
	assert_string_equal(out[2].host, "h1/r2");
}

/* An event moves whole onto the reference timeline: every time it has, the wake included. */
static void test_event_shifted(void **state)
{
	struct btape_event ev = {.issue_ns = 50000000, .complete_ns = 50000100,
				 .insert_ns = 49999990, .wake_ns = 49999900, .slept_ns = 700,
				 .present = BTAPE_HAS_COMPLETE | BTAPE_HAS_INSERT | BTAPE_HAS_WAKE};
	bool multi;

	(void)state;
	file(0, "h0", "rec", 0, 0, 10);
	file(1, "h1", "rec", 1, 3000000, 20);
	assert_int_equal(an_align_plan(AN_ALIGN_AUTO, in, 2, out, &multi, msg, sizeof(msg)),
			 AN_ALIGN_CLUSTER);
	an_align_event(&out[1].clock, &ev);
	assert_int_equal(ev.issue_ns, 47000000);
	assert_int_equal(ev.complete_ns, 47000100);
	assert_int_equal(ev.insert_ns, 46999990);
	assert_int_equal(ev.wake_ns, 46999900);
	assert_int_equal(ev.slept_ns, 700);
}

static void test_refused(void **state)
{
	bool multi;

	(void)state;
	file(0, "h0", "rec", 0, 0, 10);
	file(1, "h1", "other", 1, 0, 20);
	assert_int_equal(an_align_plan(AN_ALIGN_AUTO, in, 2, out, &multi, msg, sizeof(msg)),
			 -EINVAL);
	assert_non_null(strstr(msg, "recording ids rec and other"));
	assert_non_null(strstr(msg, "--align"));
	assert_int_equal(an_align_plan(AN_ALIGN_CLUSTER, in, 2, out, &multi, msg, sizeof(msg)),
			 -EINVAL);
	/* no cluster clock, other hosts */
	file(0, "h0", "", 0, 0, 10);
	file(1, "h1", "", 0, 0, 20);
	assert_int_equal(an_align_plan(AN_ALIGN_AUTO, in, 2, out, &multi, msg, sizeof(msg)),
			 -EINVAL);
	assert_non_null(strstr(msg, "have no cluster clock"));
	/* one host's files, no cluster clock: as recorded, as before */
	file(1, "h0", "", 0, 0, 20);
	assert_int_equal(an_align_plan(AN_ALIGN_AUTO, in, 2, out, &multi, msg, sizeof(msg)),
			 AN_ALIGN_NONE);
	assert_false(multi);
	assert_int_equal(out[1].clock.nsync, 0);
	/* a cluster file with a plain one */
	file(1, "h0", "rec", 0, 0, 20);
	assert_int_equal(an_align_plan(AN_ALIGN_AUTO, in, 2, out, &multi, msg, sizeof(msg)),
			 -EINVAL);
}

static void test_start_and_wall(void **state)
{
	bool multi;

	(void)state;
	file(0, "h0", "", 0, 0, 5000);
	file(1, "h1", "x", 0, 0, 2000);
	file(2, "h2", "", 0, 0, 9000);
	assert_int_equal(an_align_plan(AN_ALIGN_START, in, 3, out, &multi, msg, sizeof(msg)),
			 AN_ALIGN_START);
	assert_true(multi);
	for (int k = 0; k < 3; k++)
		assert_int_equal(btape_cluster_to_reference(&out[k].clock, in[k].first_ns), 2000);
	/* wall: file k's anchor is 100 ns later per k at the same mono: its mono runs behind */
	assert_int_equal(an_align_plan(AN_ALIGN_WALL, in, 3, out, &multi, msg, sizeof(msg)),
			 AN_ALIGN_WALL);
	assert_int_equal(out[2].clock.sync[0].offset_ns, -200);
	metas[1].clock_real_ns = 0;
	assert_int_equal(an_align_plan(AN_ALIGN_WALL, in, 3, out, &multi, msg, sizeof(msg)),
			 -EINVAL);
	assert_non_null(strstr(msg, "no wall-clock anchor"));
}

static void test_parse(void **state)
{
	enum an_align m;

	(void)state;
	assert_int_equal(an_align_parse("start", &m), 0);
	assert_int_equal(m, AN_ALIGN_START);
	assert_string_equal(an_align_name(AN_ALIGN_CLUSTER), "cluster");
	assert_int_equal(an_align_parse("bogus", &m), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_file_untouched),
		cmocka_unit_test(test_cluster),
		cmocka_unit_test(test_event_shifted),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_start_and_wall),
		cmocka_unit_test(test_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
