// SPDX-License-Identifier: GPL-2.0-only
/* Renderers on synthetic analyses: edge cases never crash, absent data is said, JSON is sane. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "profile.h"
#include "render.h"
#include "stats.h"

#define MS 1000000ull

static char *paths[] = {"synthetic.btape"};

static struct stats *make(int kind)
{
	struct stats *s;
	struct btape_event e = {0};

	assert_int_equal(stats__new(&s, NULL), 0);
	stats__set_device(s, 0, "nvme0n1", 1ull << 30);
	stats__set_device(s, 1, "idle1", 0);
	for (int i = 0; kind && i < (kind == 1 ? 1 : 3000); i++) {
		e.issue_ns = 10 * MS + (uint64_t)i * MS;
		e.op = kind == 2 ? BTAPE_OP_FLUSH : (i % 3 ? BTAPE_OP_READ : BTAPE_OP_WRITE);
		e.bytes = kind == 2 ? 0 : 4096u << (i % 4);
		e.sector = kind == 2 ? 0 : (uint64_t)(i * 7919 % 100000) * 8;
		e.present = kind == 3 ? (BTAPE_HAS_COMPLETE | BTAPE_HAS_INSERT | BTAPE_HAS_PID |
					 BTAPE_HAS_COMM)
				      : 0;
		e.complete_ns = e.issue_ns + 100000 + (uint64_t)(i % 10) * 10000;
		e.insert_ns = e.issue_ns - 3000;
		e.pid = 100 + (uint32_t)(i % 3);
		e.comm = "db";
		assert_int_equal(stats__add(s, &e), 0);
	}
	assert_int_equal(stats__finish(s), 0);
	return s;
}

static char *render(int (*fn)(FILE *, const struct report *), const struct stats *s,
		    const struct an_info *in)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	struct report r = {.s = s, .info = in, .paths = paths, .npaths = 1};

	assert_non_null(fp);
	assert_int_equal(fn(fp, &r), 0);
	fclose(fp);
	return buf;
}

static void json_sane(const char *j)
{
	int depth = 0;
	bool str = false;

	for (const char *p = j; *p; p++) {
		if (str) {
			if (*p == '\\')
				p++;
			else if (*p == '"')
				str = false;
			continue;
		}
		if (*p == '"')
			str = true;
		else if (*p == '{' || *p == '[')
			depth++;
		else if (*p == '}' || *p == ']')
			assert_true(--depth >= 0);
	}
	assert_int_equal(depth, 0);
	assert_null(strstr(j, "nan"));
	assert_null(strstr(j, "inf"));
	assert_null(strstr(j, ",,"));
	assert_null(strstr(j, ",}"));
	assert_null(strstr(j, ",]"));
}

static void all_renderers(int kind, const char *const *must_text)
{
	struct stats *s = make(kind);
	struct an_info in = {0};
	char *t = render(render_text, s, &in), *j = render(render_json, s, &in);
	char *h = render(render_html, s, &in);

	for (int i = 0; must_text[i]; i++)
		if (!strstr(t, must_text[i]))
			fail_msg("text lacks '%s':\n%s", must_text[i], t);
	json_sane(j);
	assert_non_null(strstr(h, "</html>"));
	assert_null(strstr(h, "<script"));
	/* comparison with itself and with an empty analysis */
	struct stats *e = make(0);
	struct report ra = {.s = s, .info = &in, .paths = paths, .npaths = 1, .label = "A"};
	struct report rb = {.s = e, .info = &in, .paths = paths, .npaths = 1, .label = "B"};
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	assert_int_equal(render_compare_text(fp, &ra, &ra), 0);
	assert_int_equal(render_compare_text(fp, &ra, &rb), 0);
	assert_int_equal(render_compare_html(fp, &ra, &rb), 0);
	assert_int_equal(render_compare_html(fp, &ra, &ra), 0);
	fclose(fp);
	free(buf);
	buf = NULL;
	fp = open_memstream(&buf, &len);
	assert_int_equal(render_compare_json(fp, &ra, &rb), 0);
	fclose(fp);
	json_sane(buf);
	free(buf);
	free(t);
	free(j);
	free(h);
	stats__free(s);
	stats__free(e);
}

static void test_empty(void **st)
{
	static const char *const m[] = {"no events in trace", NULL};

	all_renderers(0, m);
}

static void test_one(void **st)
{
	static const char *const m[] = {"n/a (all events at one instant",
					"not in trace: no completion",
					"Per process: not in trace (no pid field)",
					"idle1",
					"no I/O",
					NULL};

	all_renderers(1, m);
}

static void test_flushes(void **st)
{
	static const char *const m[] = {"no reads or writes with data", "no read or write stream",
					"flush", NULL};

	all_renderers(2, m);
}

static void test_full(void **st)
{
	static const char *const m[] = {"device time (complete - issue)",
					"queue time (issue - insert)",
					"computed from issue and completion times",
					"Per process (top 3",
					"burstiness",
					NULL};

	all_renderers(3, m);
}

/* Requests the computed depth could not keep in flight are said, not hidden. */
static void test_qd_untracked(void **st)
{
	struct stats *s = make(3);
	struct an_info in = {0};
	char *t, *j;

	(void)st;
	t = render(render_text, s, &in);
	j = render(render_json, s, &in);
	assert_null(strstr(t, "not tracked in flight"));
	assert_non_null(strstr(j, "\"untracked_ios\":0"));
	free(t);
	free(j);
	s->qd_untracked = 7;
	t = render(render_text, s, &in);
	j = render(render_json, s, &in);
	if (!strstr(t, "7 requests were not tracked in flight"))
		fail_msg("text lacks the untracked requests:\n%s", t);
	assert_non_null(strstr(j, "\"untracked_ios\":7"));
	free(t);
	free(j);
	stats__free(s);
}

static void test_profile_job(void **st)
{
	struct stats *s = make(3);
	struct an_info in = {0};
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	struct report r = {.s = s, .info = &in, .paths = paths, .npaths = 1};

	assert_int_equal(profile_write(fp, &r, NULL, 0), 0);
	fclose(fp);
	/* 1/3 writes; per direction sizes 4k..32k a quarter each */
	assert_non_null(strstr(buf, "rwmixread=67\n"));
	assert_non_null(
		strstr(buf, "bssplit=4k/25:8k/25:16k/25:32k/25,4k/25:8k/25:16k/25:32k/25\n"));
	assert_non_null(strstr(buf, "iodepth="));
	assert_non_null(strstr(buf, "rate="));
	assert_non_null(strstr(buf, "filename=${TARGET}"));
	free(buf);
	stats__free(s);
}

static void test_round_percent(void **st)
{
	double w[5] = {1, 1, 1, 0, 0.001};
	int p[5], sum = 0;

	profile_round_percent(w, 5, p);
	for (int i = 0; i < 5; i++)
		sum += p[i];
	assert_int_equal(sum, 100);
	assert_int_equal(p[3], 0);
	assert_int_equal(p[0] + p[1] + p[2], 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),	    cmocka_unit_test(test_one),
		cmocka_unit_test(test_flushes),	    cmocka_unit_test(test_full),
		cmocka_unit_test(test_qd_untracked),
		cmocka_unit_test(test_profile_job), cmocka_unit_test(test_round_percent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
