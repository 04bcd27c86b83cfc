// SPDX-License-Identifier: GPL-2.0-only
/* common/mpjson.c: a msgpack value as JSON and text, and one number looked up by its path. */
#include "mpjson.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <msgpack.h>

static void key(msgpack_packer *pk, const char *k)
{
	msgpack_pack_str(pk, strlen(k));
	msgpack_pack_str_body(pk, k, strlen(k));
}

/* {"u": 7, "i": -3, "f": 0.25, "b": true, "n": nil, "s": "x", "m": {"<=1ms": 5, "a.b": 1}} */
static msgpack_sbuffer *sample(void)
{
	msgpack_sbuffer *sb = msgpack_sbuffer_new();
	msgpack_packer pk;

	msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 7);
	key(&pk, "u");
	msgpack_pack_uint64(&pk, 7);
	key(&pk, "i");
	msgpack_pack_int64(&pk, -3);
	key(&pk, "f");
	msgpack_pack_double(&pk, 0.25);
	key(&pk, "b");
	msgpack_pack_true(&pk);
	key(&pk, "n");
	msgpack_pack_nil(&pk);
	key(&pk, "s");
	key(&pk, "x");
	key(&pk, "m");
	msgpack_pack_map(&pk, 2);
	key(&pk, "<=1ms");
	msgpack_pack_uint64(&pk, 5);
	key(&pk, "a.b");
	msgpack_pack_uint64(&pk, 1);
	return sb;
}

static void test_number(void **state)
{
	msgpack_sbuffer *sb = sample();
	double v = 99;

	(void)state;
	assert_int_equal(mpjson_number(sb->data, sb->size, "u", &v), 0);
	assert_true(v == 7);
	assert_int_equal(mpjson_number(sb->data, sb->size, "i", &v), 0);
	assert_true(v == -3);
	assert_int_equal(mpjson_number(sb->data, sb->size, "f", &v), 0);
	assert_true(v == 0.25);
	assert_int_equal(mpjson_number(sb->data, sb->size, "b", &v), 0);
	assert_true(v == 1);
	assert_int_equal(mpjson_number(sb->data, sb->size, "n", &v), 0);
	assert_true(isnan(v));
	assert_int_equal(mpjson_number(sb->data, sb->size, "m.<=1ms", &v), 0);
	assert_true(v == 5);
	v = 99;
	/* not a number, no such member, a path through a scalar, a key holding the separator */
	assert_int_equal(mpjson_number(sb->data, sb->size, "s", &v), -ENOENT);
	assert_int_equal(mpjson_number(sb->data, sb->size, "m", &v), -ENOENT);
	assert_int_equal(mpjson_number(sb->data, sb->size, "zz", &v), -ENOENT);
	assert_int_equal(mpjson_number(sb->data, sb->size, "u.x", &v), -ENOENT);
	assert_int_equal(mpjson_number(sb->data, sb->size, "m.a.b", &v), -ENOENT);
	assert_int_equal(mpjson_number(sb->data, sb->size, "m.", &v), -ENOENT);
	assert_true(v == 99);
	/* malformed: cut short, or trailing bytes */
	assert_int_equal(mpjson_number(sb->data, sb->size - 1, "u", &v), -EBADMSG);
	msgpack_sbuffer_write(sb, "\xc0", 1);
	assert_int_equal(mpjson_number(sb->data, sb->size, "u", &v), -EBADMSG);
	assert_int_equal(mpjson_number(NULL, 0, "u", &v), -EBADMSG);
	msgpack_sbuffer_free(sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_number),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
