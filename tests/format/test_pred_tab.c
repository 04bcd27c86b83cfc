// SPDX-License-Identifier: GPL-2.0-only
/*
 * libbiotape: the sector column's per-device prediction table (format/chunk_internal.h). Device
 * numbers come from the files read, so its hash must not let a file choose collisions: 32,768
 * devices that are multiples of 2^17 (all in one slot under the old multiply-and-mask, where a
 * 1 KiB chunk of them took 10 s to read) must spread over the table. No timing: probes are
 * counted, by walking each device's chain from its home slot.
 */
#include "chunk_internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#define NDEV 32768u

/* Slots from dev's home to its own: 1 when it sits at home. */
static uint32_t probes(const struct pred_tab *t, uint32_t dev)
{
	uint32_t n = 1;

	for (uint32_t j = pred_home(t, dev, t->cap); t->dev[j] != dev; j = (j + 1) & (t->cap - 1))
		n++;
	return n;
}

static void test_aligned_devices_spread(void **state)
{
	struct pred_tab t = {0};
	uint64_t total = 0;
	uint32_t worst = 0;

	(void)state;
	for (uint32_t i = 0; i < NDEV; i++) {
		int64_t s = pred_slot(&t, i << 17, i);

		assert_true(s >= 0);
		assert_int_equal(t.dev[s], i << 17);
	}
	assert_int_equal(t.n, NDEV);
	for (uint32_t i = 0; i < NDEV; i++) {
		uint32_t p = probes(&t, i << 17);
		int64_t s = pred_slot(&t, i << 17, 0); /* may grow the table: then read it */

		total += p;
		worst = p > worst ? p : worst;
		/* found again, with the prediction it was given */
		assert_true(s >= 0);
		assert_int_equal(t.pred[s], i);
	}
	/* linear probing at load <= 1/2 averages 1.5 probes a hit; one shared chain is NDEV / 2 */
	assert_true(total < 3ull * NDEV);
	assert_true(worst < 200);
	pred_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_aligned_devices_spread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
