// SPDX-License-Identifier: GPL-2.0-only
/*
 * libbiotape: the intern table of process names (format/util.c). Names come from the files
 * read, so the table's hash must not let a file choose collisions: 1024 names that all share
 * one 32-bit FNV-1a hash (the table's old hash; a Joux multicollision, as
 * /tmp/audit1/fnvflood.py builds them) must spread over the table, and a lookup that would
 * probe too far fails instead of going quadratic. No timing: counts only.
 */
#include "btape_internal.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* 4-byte blocks: either of a pair takes FNV-1a from the same state to the same state. */
static const char *const fnv_pairs[10][2] = {
	{"ngrG", "8Hik"}, {"C0mb", "gCWk"}, {"c8VZ", "1Ewv"}, {"Q6GQ", "uIYX"}, {"UPrt", "-rVz"},
	{"p2vE", "lCNL"}, {"kEty", "9bGm"}, {"dcnS", "2BOo"}, {"3Inp", "adOd"}, {"j3Tp", "vDxO"},
};
#define NFNV (1u << 10)
#define FNV_NAME_LEN 40

static uint32_t fnv1a(const char *s, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

static void fnv_name(uint32_t i, char out[FNV_NAME_LEN + 1])
{
	for (int j = 0; j < 10; j++)
		memcpy(out + 4 * j, fnv_pairs[j][(i >> j) & 1], 4);
	out[FNV_NAME_LEN] = '\0';
}

/* The inputs are what they claim: 1024 distinct names, one FNV-1a hash. */
static void test_fnv_names_collide(void **state)
{
	char a[FNV_NAME_LEN + 1], b[FNV_NAME_LEN + 1];

	(void)state;
	fnv_name(0, a);
	for (uint32_t i = 1; i < NFNV; i++) {
		fnv_name(i, b);
		assert_int_not_equal(memcmp(a, b, FNV_NAME_LEN), 0);
		assert_int_equal(fnv1a(b, FNV_NAME_LEN), fnv1a(a, FNV_NAME_LEN));
	}
	assert_int_equal(fnv1a(a, FNV_NAME_LEN), 0xada0dde9u);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/*
 * Under the table's hash they spread: (almost) all hashes distinct, few per bucket of a 2048-slot
 * table (the size that holds 1024 names at load 1/2), short linear-probe runs. With a random
 * function the bounds below fail with probability under 1e-9; under FNV-1a all three fail.
 */
static void test_fnv_collisions_spread(void **state)
{
	enum { NSLOTS = 2 * NFNV };
	uint32_t *h = malloc(sizeof(*h) * NFNV), *slots = calloc(NSLOTS, sizeof(*slots));
	unsigned int bucket[NSLOTS] = {0}, distinct = 1, maxb = 0, maxprobe = 0;
	char name[FNV_NAME_LEN + 1];

	(void)state;
	assert_non_null(h);
	assert_non_null(slots);
	for (uint32_t i = 0; i < NFNV; i++) {
		unsigned int probes = 0;
		uint32_t j;

		fnv_name(i, name);
		h[i] = btape_intern_hash(name, FNV_NAME_LEN);
		if (++bucket[h[i] & (NSLOTS - 1)] > maxb)
			maxb = bucket[h[i] & (NSLOTS - 1)];
		for (j = h[i] & (NSLOTS - 1); slots[j]; j = (j + 1) & (NSLOTS - 1))
			probes++;
		slots[j] = i + 1;
		if (probes > maxprobe)
			maxprobe = probes;
	}
	qsort(h, NFNV, sizeof(*h), cmp_u32);
	for (uint32_t i = 1; i < NFNV; i++)
		distinct += h[i] != h[i - 1];
	print_message("distinct hashes %u/%u, fullest bucket %u, longest probe %u\n", distinct,
		      NFNV, maxb, maxprobe);
	assert_true(distinct >= NFNV - 4);
	assert_true(maxb <= 12);
	assert_true(maxprobe < 128);
	free(h);
	free(slots);
}

/* Ids go 0, 1, 2... in order of first sight (so no output depends on the hash's key). */
static void test_ids_in_order(void **state)
{
	struct btape_intern *t = btape_intern_new(SIZE_MAX);
	char name[FNV_NAME_LEN + 1];

	(void)state;
	assert_non_null(t);
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < NFNV; i++) {
			fnv_name(i, name);
			assert_int_equal(btape_intern_get(t, name, FNV_NAME_LEN), i);
		}
	}
	for (uint32_t i = 0; i < NFNV; i++) {
		fnv_name(i, name);
		assert_int_equal(btape_intern_len(t, i), FNV_NAME_LEN);
		assert_string_equal(btape_intern_str(t, i), name);
	}
	/* lengths and prefixes are part of the key */
	assert_int_equal(btape_intern_get(t, name, 8), NFNV);
	assert_int_equal(btape_intern_get(t, "", 0), NFNV + 1);
	assert_int_equal(btape_intern_get(t, name, 8), NFNV);
	assert_int_equal(btape_intern_get(t, "", 0), NFNV + 1);
	btape_intern_free(t);
}

/* Many ordinary names: the probe bound never triggers at the table's load. */
static void test_many_names(void **state)
{
	struct btape_intern *t = btape_intern_new(SIZE_MAX);
	char name[32];

	(void)state;
	assert_non_null(t);
	for (uint32_t i = 0; i < (1u << 18); i++) {
		int n = snprintf(name, sizeof(name), "kworker/%u:%u", i % 64, i);

		assert_int_equal(btape_intern_get(t, name, (size_t)n), i);
	}
	for (uint32_t i = 0; i < (1u << 18); i += 97) {
		int n = snprintf(name, sizeof(name), "kworker/%u:%u", i % 64, i);

		assert_int_equal(btape_intern_get(t, name, (size_t)n), i);
	}
	btape_intern_free(t);
}

/*
 * The second guard: names that do share a slot (found here with the process's key, which a file
 * cannot know) fail cleanly once a lookup passes BTAPE_INTERN_MAX_PROBE, adding nothing.
 */
static void test_probe_bound(void **state)
{
	enum { NEED = BTAPE_INTERN_MAX_PROBE + 8 };
	struct btape_intern *t = btape_intern_new(SIZE_MAX);
	char(*names)[24] = malloc(sizeof(*names) * NEED), other[24];
	uint32_t found = 0, ctr = 0, i;
	int64_t id;

	(void)state;
	assert_non_null(t);
	assert_non_null(names);
	/* slot 0 of every table up to 4096 slots (the most NEED names need) */
	while (found < NEED) {
		int n = snprintf(names[found], sizeof(names[found]), "c%u", ctr++);

		if (!(btape_intern_hash(names[found], (size_t)n) & 4095))
			found++;
	}
	for (i = 0; i < NEED; i++) {
		id = btape_intern_get(t, names[i], strlen(names[i]));
		if (id < 0)
			break;
		assert_int_equal(id, i);
	}
	assert_int_equal(i, BTAPE_INTERN_MAX_PROBE);
	assert_int_equal(id, -ELOOP);
	assert_int_equal(btape_intern_get(t, names[BTAPE_INTERN_MAX_PROBE],
					  strlen(names[BTAPE_INTERN_MAX_PROBE])),
			 -ELOOP);
	/* what is in is still found, under its id */
	for (uint32_t k = 0; k < i; k++)
		assert_int_equal(btape_intern_get(t, names[k], strlen(names[k])), k);
	/* a name hashing away from the run still goes in, next id: nothing was added */
	do {
		snprintf(other, sizeof(other), "o%u", ctr++);
		id = btape_intern_hash(other, strlen(other)) & 4095;
	} while (id < 600 || id > 900);
	assert_int_equal(btape_intern_get(t, other, strlen(other)), BTAPE_INTERN_MAX_PROBE);
	free(names);
	btape_intern_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fnv_names_collide),
		cmocka_unit_test(test_fnv_collisions_spread),
		cmocka_unit_test(test_ids_in_order),
		cmocka_unit_test(test_many_names),
		cmocka_unit_test(test_probe_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
