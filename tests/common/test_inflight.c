// SPDX-License-Identifier: GPL-2.0-only
/*
 * The in-flight completions (common/inflight.h): depths equal a plain model whatever the
 * order of the completions, and the work per operation is bounded. The work is counted, not
 * timed: the array slots a push changes (a sorted array moves every slot above the new
 * value: all of them when each completion is earlier than the ones in flight) and the slots
 * a compaction moves. The heap's O(log n) steps are not counted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "inflight.h"

static uint64_t rng;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A plain model: the completions in flight, unsorted. */
struct model {
	uint64_t *v;
	size_t n;
};

static uint32_t model_expire_count(struct model *m, uint64_t t)
{
	size_t k = 0;

	for (size_t j = 0; j < m->n; j++)
		if (m->v[j] > t)
			m->v[k++] = m->v[j];
	m->n = k;
	return (uint32_t)k;
}

enum pattern { P_DESCENDING, P_RUNS, P_RANDOM_DEEP, P_BACKWARDS, P_IN_ORDER, P__COUNT };

/* Event i of a pattern: issue and completion. */
static void pattern_event(int p, size_t i, uint64_t *t, uint64_t *issue, uint64_t *complete)
{
	switch (p) {
	case P_DESCENDING: /* each earlier than all before it: every insertion at the bottom */
		*t += 1;
		*issue = *t;
		*complete = 1000000000ull - i;
		break;
	case P_RUNS: /* descending runs of 1000 over a rising base: insertions 0-999 deep */
		*t += 1;
		*issue = *t;
		*complete = 1000000000ull + (i / 1000) * 10000 - (i % 1000) * 3;
		break;
	case P_RANDOM_DEEP: /* about 2500 in flight, random device times */
		*t += 20;
		*issue = *t;
		*complete = *t + next() % 100000;
		break;
	case P_BACKWARDS: /* as random, with issue times that sometimes go backwards */
		*t += 20;
		*issue = next() % 5 ? *t : *t - next() % 50000;
		*complete = *issue + next() % 100000;
		break;
	default: /* in order, 127 in flight (one under the array's size at 128) */
		*t += 1000;
		*issue = *t;
		*complete = *t + 127000 + 500;
		break;
	}
}

/*
 * Per pattern: depths equal the model, and the slots the pushes change plus those the
 * compactions move stay within (INFLIGHT_DEEP + INFLIGHT_WIN + 2) per push, 4 in order. A
 * sorted array alone changed all slots above each insertion (P_DESCENDING: n^2 / 2 in all),
 * and compacted all in flight at each push of P_IN_ORDER (127 slots a push).
 */
static void test_depths_and_work(void **st)
{
	const size_t n = 12000;

	(void)st;
	for (int p = 0; p < P__COUNT; p++) {
		struct btape_inflight h = {0};
		struct model m = {.v = calloc(n, sizeof(uint64_t))};
		uint64_t *before = calloc(n + 1, sizeof(uint64_t));
		uint64_t t = 1000, work = 0;

		rng = 88172645463325252ull + (uint64_t)p;
		assert_non_null(m.v);
		assert_non_null(before);
		for (size_t i = 0; i < n; i++) {
			uint64_t issue, complete;

			pattern_event(p, i, &t, &issue, &complete);
			inflight_expire(&h, issue);
			assert_int_equal(inflight_count(&h), model_expire_count(&m, issue));
			/* the live slots before the push, to count what it changes */
			uint32_t head0 = h.head, live0 = h.n - h.head;

			if (h.v)
				memcpy(before, h.v + h.head, live0 * sizeof(uint64_t));
			inflight_push(&h, complete);
			m.v[m.n++] = complete;
			if (h.head != head0) { /* compacted: every live slot moved */
				assert_int_equal(h.head, 0);
				work += live0;
			}
			for (uint32_t k = 0; k < h.n - h.head; k++)
				work += k >= live0 || h.v[h.head + k] != before[k];
		}
		assert_int_equal(h.untracked, 0);
		/* in order: one slot a push, and compactions of half the array at most */
		uint64_t per = p == P_IN_ORDER ? 4 : INFLIGHT_DEEP + INFLIGHT_WIN + 2;

		if (work > per * n)
			fail_msg("pattern %d: %llu slots changed or moved by %zu pushes", p,
				 (unsigned long long)work, n);
		inflight_expire(&h, UINT64_MAX);
		assert_int_equal(inflight_count(&h), 0);
		inflight_free(&h);
		free(before);
		free(m.v);
	}
}

/*
 * In order with BTAPE_INFLIGHT_MAX - 1 in flight before each push, for three times as many
 * pushes: the array cannot grow past BTAPE_INFLIGHT_MAX, and compacting it at each push moved
 * all 2^20 - 1 slots every time. The slots the compactions move stay within 2 per push (plus
 * one whole array).
 */
static void test_steady_at_bound(void **st)
{
	struct btape_inflight h = {0};
	const uint64_t q = BTAPE_INFLIGHT_MAX - 1, n = 3ull * BTAPE_INFLIGHT_MAX;
	uint64_t moves = 0;

	(void)st;
	for (uint64_t i = 0; i < n; i++) {
		inflight_expire(&h, i * 10);
		if (inflight_count(&h) != (i < q ? i : q))
			fail_msg("push %llu: depth %u", (unsigned long long)i,
				 inflight_count(&h) + 1);
		uint32_t head0 = h.head, live0 = h.n - h.head;

		inflight_push(&h, (i + q) * 10 + 5); /* completes just after issue i + q */
		if (h.head < head0)
			moves += live0;
		if (moves > BTAPE_INFLIGHT_MAX + 2 * i)
			fail_msg("push %llu: compactions moved %llu slots", (unsigned long long)i,
				 (unsigned long long)moves);
	}
	assert_int_equal(h.untracked, 0);
	inflight_free(&h);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * inflight_settle() leaves every completion in flight in the array, sorted (what
 * analyze/split.c packs and compares), and the depths go on as before.
 */
static void test_settle(void **st)
{
	const size_t n = 20000;
	struct btape_inflight h = {0};
	struct model m = {.v = calloc(n, sizeof(uint64_t))};
	uint64_t t = 1000;

	(void)st;
	rng = 4242;
	assert_non_null(m.v);
	for (size_t i = 0; i < n; i++) {
		uint64_t issue, complete;

		pattern_event(i < n / 2 ? P_RUNS : P_RANDOM_DEEP, i, &t, &issue, &complete);
		inflight_expire(&h, issue);
		assert_int_equal(inflight_count(&h), model_expire_count(&m, issue));
		inflight_push(&h, complete);
		m.v[m.n++] = complete;
		if (i % 4999 == 4998) {
			uint32_t c = inflight_count(&h);

			inflight_settle(&h);
			assert_int_equal(h.hn, 0);
			assert_int_equal(h.n - h.head, c);
			assert_int_equal(c, m.n);
			qsort(m.v, m.n, sizeof(uint64_t), cmp_u64);
			assert_memory_equal(h.v + h.head, m.v, m.n * sizeof(uint64_t));
			assert_int_equal(h.v[h.n], UINT64_MAX); /* the pad */
		}
	}
	inflight_free(&h);
	free(m.v);
}

/*
 * At BTAPE_INFLIGHT_MAX in flight a push is counted but not kept, also when the completions
 * are in the heap; once some complete, new ones are kept again.
 */
static void test_bound(void **st)
{
	struct btape_inflight h = {0};
	const uint64_t top = 1ull << 40;

	(void)st;
	for (uint32_t i = 0; i < BTAPE_INFLIGHT_MAX + 5; i++) {
		inflight_expire(&h, 1);
		inflight_push(&h, top - i); /* descending: nearly all into the heap */
	}
	assert_int_equal(inflight_count(&h), BTAPE_INFLIGHT_MAX);
	assert_int_equal(h.untracked, 5);
	assert_true(h.hn > BTAPE_INFLIGHT_MAX / 2);
	/* the 3 earliest complete: 3 more are kept, the fourth not */
	inflight_expire(&h, top - BTAPE_INFLIGHT_MAX + 3);
	assert_int_equal(inflight_count(&h), BTAPE_INFLIGHT_MAX - 3);
	for (int i = 0; i < 4; i++)
		inflight_push(&h, top + 1);
	assert_int_equal(inflight_count(&h), BTAPE_INFLIGHT_MAX);
	assert_int_equal(h.untracked, 6);
	inflight_settle(&h);
	assert_int_equal(h.n - h.head, BTAPE_INFLIGHT_MAX);
	for (uint32_t k = h.head + 1; k < h.n; k++)
		assert_true(h.v[k - 1] <= h.v[k]);
	inflight_free(&h);
}

/*
 * A budget shared by several devices bounds what all of them allocate together: pushes past
 * it are counted, not kept, on whichever device needs the memory (ascending completions: the
 * array; descending: the heap too); freeing a device gives its slots back.
 */
static void test_shared_budget(void **st)
{
	enum { NDEV = 4, BUDGET = 3000 };
	struct btape_inflight h[NDEV] = {{0}};
	uint64_t budget = BUDGET, kept = 0, untracked = 0;

	(void)st;
	for (int d = 0; d < NDEV; d++)
		h[d].budget = &budget;
	for (uint32_t i = 0; i < 2000; i++) {
		for (int d = 0; d < NDEV; d++) {
			inflight_expire(&h[d], 1);
			inflight_push(&h[d], d & 1 ? (1ull << 40) - i : (1ull << 40) + i);
		}
	}
	uint64_t held = 0;

	for (int d = 0; d < NDEV; d++) {
		held += (uint64_t)h[d].cap + h[d].hcap;
		kept += inflight_count(&h[d]);
		untracked += h[d].untracked;
	}
	assert_int_equal(budget + held, BUDGET); /* every slot held was taken from it */
	assert_true(kept <= held);
	assert_true(untracked > 0);
	assert_int_equal(kept + untracked, NDEV * 2000);
	for (int d = 0; d < NDEV; d++)
		inflight_free(&h[d]);
	assert_int_equal(budget, BUDGET);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_depths_and_work), cmocka_unit_test(test_steady_at_bound),
		cmocka_unit_test(test_settle),		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_shared_budget),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
