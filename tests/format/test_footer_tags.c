// SPDX-License-Identifier: GPL-2.0-only
/*
 * libbiotape: the footer's tags map. Round trips (file and stream), a key replaced, the
 * writer's checks of keys, values and limits, and footers whose tags are malformed: the file
 * still opens and its events read, the footer is refused as damage (verify says why).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <msgpack.h>
#include <zstd.h>

#include "btape.h"
#include "btape_internal.h"
#include "mp_internal.h"
#include "test_util.h"

#define NEVENTS 1000

/* One msgpack value, packed by FILL into a fresh buffer. */
struct mpv {
	struct bbuf b;
	msgpack_packer pk;
};

static msgpack_packer *mpv_start(struct mpv *v)
{
	memset(v, 0, sizeof(*v));
	msgpack_packer_init(&v->pk, &v->b, btape_mp_write);
	return &v->pk;
}

/* Writes NEVENTS events to PATH, with the tags set by SET (may be NULL). */
static void write_trace(const char *path, void (*set)(struct btape_writer *w))
{
	struct btape_writer *w;
	struct btape_meta meta;
	struct btape_event ev;
	uint64_t rs = 7;

	tu_meta(&meta, 1);
	assert_int_equal(btape_writer__open(&w, path, &meta, NULL, NULL, 0), 0);
	for (int i = 0; i < NEVENTS; i++) {
		tu_random_event(&rs, &ev, 1000 + (uint64_t)i * 10, false);
		ev.dev = 0;
		assert_int_equal(btape_writer__add(w, &ev), 0);
	}
	if (set)
		set(w);
	assert_int_equal(btape_writer__close(w, NULL, 0), 0);
	btape_meta_free(&meta);
}

static struct mpv fid, blob, nested;

static void free_values(void)
{
	bbuf_free(&fid.b);
	bbuf_free(&blob.b);
	bbuf_free(&nested.b);
}

static void make_values(void)
{
	msgpack_packer *pk;

	free_values();
	pk = mpv_start(&fid);

	msgpack_pack_map(pk, 3);
	tu_pk_str(pk, "gap_ks");
	msgpack_pack_double(pk, 0.0625);
	tu_pk_str(pk, "faithful");
	msgpack_pack_true(pk);
	tu_pk_str(pk, "iops");
	msgpack_pack_array(pk, 3);
	msgpack_pack_uint64(pk, 10);
	msgpack_pack_uint64(pk, 20);
	msgpack_pack_uint64(pk, 1ull << 40);
	pk = mpv_start(&blob);
	msgpack_pack_bin(pk, 5);
	msgpack_pack_bin_body(pk, "\x00\x01\x02\xff\x00", 5);
	pk = mpv_start(&nested); /* 14 arrays deep: the deepest a value may be */
	for (int i = 0; i < BTAPE_FOOTER_TAG_MAX_DEPTH; i++)
		msgpack_pack_array(pk, 1);
	msgpack_pack_int(pk, -3);
}

static void set_three(struct btape_writer *w)
{
	struct mpv old;

	/* set, then replaced: the file holds the second value, in the first one's place */
	msgpack_pack_uint8(mpv_start(&old), 1);
	assert_int_equal(btape_writer__set_footer_tag(w, "fidelity", old.b.p, old.b.len), 0);
	assert_int_equal(btape_writer__set_footer_tag(w, "blob", blob.b.p, blob.b.len), 0);
	assert_int_equal(btape_writer__set_footer_tag(w, "fidelity", fid.b.p, fid.b.len), 0);
	assert_int_equal(btape_writer__set_footer_tag(w, "deep", nested.b.p, nested.b.len), 0);
	bbuf_free(&old.b);
}

static void expect_tag(struct btape_reader *r, const char *key, const struct mpv *v)
{
	const void *p;
	size_t len;

	assert_int_equal(btape_reader__footer_tag(r, key, &p, &len), 1);
	assert_int_equal(len, v->b.len);
	assert_memory_equal(p, v->b.p, len);
}

static void expect_three(struct btape_reader *r)
{
	const char *k;
	const void *p;
	size_t len;

	expect_tag(r, "fidelity", &fid);
	expect_tag(r, "blob", &blob);
	expect_tag(r, "deep", &nested);
	assert_int_equal(btape_reader__footer_tag(r, "fidelit", &p, &len), 0);
	assert_int_equal(btape_reader__footer_tag_at(r, 0, &k, &p, &len), 1);
	assert_string_equal(k, "blob");
	assert_int_equal(btape_reader__footer_tag_at(r, 1, &k, &p, &len), 1);
	assert_string_equal(k, "fidelity");
	assert_int_equal(btape_reader__footer_tag_at(r, 2, &k, &p, &len), 1);
	assert_string_equal(k, "deep");
	assert_int_equal(btape_reader__footer_tag_at(r, 3, &k, &p, &len), 0);
}

static void test_roundtrip(void **state)
{
	char *dir = tu_tmpdir();
	const char *path = tu_path(dir, "t.btape", 0);
	struct btape_reader *r;
	struct btape_event ev;
	const void *p;
	size_t len;
	int fds[2], n = 0, fd;
	char msg[BTAPE_ERRMSG_LEN];

	(void)state;
	make_values();
	write_trace(path, set_three);
	assert_int_equal(btape_reader__open(&r, path, msg, sizeof(msg)), 0);
	expect_three(r);
	assert_int_equal(btape_reader__verify(r), 0);
	btape_reader__close(r);

	/* a stream: the tags come with the footer, after the last event */
	assert_int_equal(pipe(fds), 0);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	if (fork() == 0) {
		char buf[65536];
		ssize_t k;

		close(fds[0]);
		while ((k = read(fd, buf, sizeof(buf))) > 0)
			if (write(fds[1], buf, (size_t)k) != k)
				_exit(1);
		_exit(0);
	}
	close(fd);
	close(fds[1]);
	assert_int_equal(btape_reader__open_fd(&r, fds[0], msg, sizeof(msg)), 0);
	assert_int_equal(btape_reader__footer_tag(r, "fidelity", &p, &len), 0);
	while (btape_reader__next(r, &ev) == 1)
		n++;
	assert_int_equal(n, NEVENTS);
	expect_three(r);
	btape_reader__close(r);
	close(fds[0]);

	/* no tags: none read */
	write_trace(path, NULL);
	assert_int_equal(btape_reader__open(&r, path, msg, sizeof(msg)), 0);
	assert_int_equal(btape_reader__footer_tag_at(r, 0, (const char **)&p, &p, &len), 0);
	btape_reader__close(r);
	tu_cleanup_dir(dir);
}

/* Bad keys and values are refused with -EINVAL, and the writer goes on as if not asked. */
static void set_bad(struct btape_writer *w)
{
	char key[300];
	struct mpv two, deep;
	msgpack_packer *pk = mpv_start(&two);

	msgpack_pack_uint8(pk, 1);
	msgpack_pack_uint8(pk, 2);
	pk = mpv_start(&deep);
	for (int i = 0; i <= BTAPE_FOOTER_TAG_MAX_DEPTH; i++)
		msgpack_pack_array(pk, 1);
	msgpack_pack_int(pk, -3);
	memset(key, 'k', sizeof(key));
	key[BTAPE_NAME_MAX] = '\0';
	assert_int_equal(btape_writer__set_footer_tag(w, key, fid.b.p, fid.b.len), -EINVAL);
	assert_non_null(strstr(btape_writer__errmsg(w), "longer than 255 bytes"));
	assert_int_equal(btape_writer__set_footer_tag(w, "", fid.b.p, fid.b.len), -EINVAL);
	assert_int_equal(btape_writer__set_footer_tag(w, NULL, fid.b.p, fid.b.len), -EINVAL);
	assert_int_equal(btape_writer__set_footer_tag(w, "x", NULL, 0), -EINVAL);
	assert_int_equal(btape_writer__set_footer_tag(w, "x", fid.b.p, fid.b.len - 1), -EINVAL);
	assert_non_null(strstr(btape_writer__errmsg(w), "not one well-formed msgpack value"));
	assert_int_equal(btape_writer__set_footer_tag(w, "x", two.b.p, two.b.len), -EINVAL);
	assert_int_equal(btape_writer__set_footer_tag(w, "x", deep.b.p, deep.b.len), -EINVAL);
	assert_int_equal(btape_writer__set_footer_tag(w, "x", "\xc1", 1), -EINVAL);
	assert_int_equal(btape_writer__set_footer_tag(w, "fidelity", fid.b.p, fid.b.len), 0);
	bbuf_free(&two.b);
	bbuf_free(&deep.b);
}

/* The limits: keys, bytes, msgpack values; a refused tag leaves the others as they were. */
static void set_limits(struct btape_writer *w)
{
	struct mpv big, many;
	msgpack_packer *pk = mpv_start(&big);
	char key[32];
	size_t fill = BTAPE_FOOTER_TAGS_MAX_BYTES - 20;
	uint8_t *zeros = calloc(1, fill + 1000);

	msgpack_pack_bin(pk, fill + 1000);
	msgpack_pack_bin_body(pk, zeros, fill + 1000);
	assert_int_equal(btape_writer__set_footer_tag(w, "big", big.b.p, big.b.len), -E2BIG);
	assert_non_null(strstr(btape_writer__errmsg(w), "exceed their limits"));
	/* just under the bytes: fits, and the next tag no longer does */
	big.b.len = 0;
	msgpack_pack_bin(pk, fill);
	msgpack_pack_bin_body(pk, zeros, fill);
	if (btape_writer__set_footer_tag(w, "big", big.b.p, big.b.len))
		fail_msg("%s", btape_writer__errmsg(w));
	assert_int_equal(btape_writer__set_footer_tag(w, "fidelity", fid.b.p, fid.b.len), -E2BIG);
	/* replacing the big one by a small one makes room again */
	assert_int_equal(btape_writer__set_footer_tag(w, "big", blob.b.p, blob.b.len), 0);
	assert_int_equal(btape_writer__set_footer_tag(w, "fidelity", fid.b.p, fid.b.len), 0);

	pk = mpv_start(&many); /* more msgpack values than the map may hold */
	msgpack_pack_array(pk, BTAPE_FOOTER_TAGS_MAX_ITEMS);
	for (unsigned int i = 0; i < BTAPE_FOOTER_TAGS_MAX_ITEMS; i++)
		msgpack_pack_nil(pk);
	assert_int_equal(btape_writer__set_footer_tag(w, "many", many.b.p, many.b.len), -E2BIG);
	many.b.len = 0;
	msgpack_pack_array(pk, BTAPE_FOOTER_TAGS_MAX_ITEMS - 20);
	for (unsigned int i = 0; i < BTAPE_FOOTER_TAGS_MAX_ITEMS - 20; i++)
		msgpack_pack_nil(pk);
	assert_int_equal(btape_writer__set_footer_tag(w, "many", many.b.p, many.b.len), 0);
	assert_int_equal(btape_writer__set_footer_tag(w, "more", many.b.p, many.b.len), -E2BIG);
	assert_int_equal(btape_writer__set_footer_tag(w, "many", blob.b.p, blob.b.len), 0);

	/* keys: up to BTAPE_FOOTER_TAGS_MAX */
	for (unsigned int i = 3; i < BTAPE_FOOTER_TAGS_MAX; i++) {
		snprintf(key, sizeof(key), "k%u", i);
		assert_int_equal(btape_writer__set_footer_tag(w, key, "\x01", 1), 0);
	}
	assert_int_equal(btape_writer__set_footer_tag(w, "one too many", "\x01", 1), -E2BIG);
	assert_int_equal(btape_writer__set_footer_tag(w, "k3", "\x02", 1), 0); /* a replacement */
	free(zeros);
	bbuf_free(&big.b);
	bbuf_free(&many.b);
}

static void test_writer_checks(void **state)
{
	char *dir = tu_tmpdir();
	const char *path = tu_path(dir, "t.btape", 0);
	struct btape_reader *r;
	struct btape_summary s = {.sz = sizeof(s)};
	const char *k;
	const void *p;
	size_t len;
	char msg[BTAPE_ERRMSG_LEN];

	(void)state;
	make_values();
	write_trace(path, set_bad);
	assert_int_equal(btape_reader__open(&r, path, msg, sizeof(msg)), 0);
	expect_tag(r, "fidelity", &fid);
	assert_int_equal(btape_reader__footer_tag_at(r, 1, &k, &p, &len), 0);
	btape_reader__close(r);

	write_trace(path, set_limits);
	assert_int_equal(btape_reader__open(&r, path, msg, sizeof(msg)), 0);
	assert_int_equal(btape_reader__summary(r, &s), 0);
	assert_true(s.has_footer);
	expect_tag(r, "big", &blob);
	expect_tag(r, "fidelity", &fid);
	expect_tag(r, "many", &blob);
	assert_int_equal(btape_reader__footer_tag(r, "k3", &p, &len), 1);
	assert_memory_equal(p, "\x02", 1);
	assert_int_equal(btape_reader__footer_tag_at(r, BTAPE_FOOTER_TAGS_MAX - 1, &k, &p, &len),
			 1);
	assert_int_equal(btape_reader__footer_tag_at(r, BTAPE_FOOTER_TAGS_MAX, &k, &p, &len), 0);
	assert_int_equal(btape_reader__verify(r), 0);
	btape_reader__close(r);
	tu_cleanup_dir(dir);
}

/*
 * Rewrites PATH's footer with EXTRA (msgpack key and value pairs, NPAIRS of them) added to its
 * map: the frame and the trailer are rebuilt, so only the map's contents are wrong.
 */
static void add_to_footer(const char *path, const void *extra, size_t elen, unsigned int npairs)
{
	size_t flen, clen;
	uint8_t *f = tu_read_file(path, &flen), *raw;
	uint64_t foff = 0;
	unsigned int type;
	uint32_t cl, rl, crc;
	struct bbuf out = {0};
	uint8_t tr[BTAPE_TRAILER_SIZE];
	unsigned long long rlen;

	assert_non_null(f);
	assert_int_equal(btape_trailer_parse(f + flen - BTAPE_TRAILER_SIZE, &foff), 0);
	assert_int_equal(btape_env_parse(f + foff, &type, &cl, &rl, &crc), 0);
	assert_int_equal(type, BTAPE_FRAME_FOOTER);
	rlen = ZSTD_getFrameContentSize(f + foff + BTAPE_ENV_SIZE, cl);
	raw = malloc(rlen + elen);
	clen = ZSTD_decompress(raw, rlen, f + foff + BTAPE_ENV_SIZE, cl);
	assert_int_equal(clen, rlen);
	assert_true(raw[0] >= 0x80 && raw[0] + npairs <= 0x8f); /* a fixmap */
	raw[0] = (uint8_t)(raw[0] + npairs);
	memcpy(raw + rlen, extra, elen);
	bbuf_put(&out, f, foff);
	tu_put_frame(&out, BTAPE_FRAME_FOOTER, raw, rlen + elen);
	btape_trailer_build(tr, foff);
	bbuf_put(&out, tr, sizeof(tr));
	assert_int_equal(tu_write_file(path, out.p, out.len), 0);
	bbuf_free(&out);
	free(raw);
	free(f);
}

static void expect_refused(const char *path, void (*set)(struct btape_writer *w),
			   const struct mpv *extra, const char *why)
{
	struct btape_reader *r;
	struct btape_summary s = {.sz = sizeof(s)};
	struct btape_event ev;
	const void *p;
	size_t len;
	char msg[BTAPE_ERRMSG_LEN];
	int n = 0;

	write_trace(path, set);
	add_to_footer(path, extra->b.p, extra->b.len, 1);
	assert_int_equal(btape_reader__open(&r, path, msg, sizeof(msg)), 0);
	while (btape_reader__next(r, &ev) == 1)
		n++;
	assert_int_equal(n, NEVENTS); /* the events are whole */
	assert_int_equal(btape_reader__footer_tag(r, "fidelity", &p, &len), 0);
	assert_int_equal(btape_reader__summary(r, &s), 0);
	assert_false(s.has_footer);
	assert_int_equal(btape_reader__verify(r), -EBADMSG);
	if (!strstr(btape_reader__errmsg(r), why))
		fail_msg("'%s' does not say '%s'", btape_reader__errmsg(r), why);
	btape_reader__close(r);
}

/* "tags" and the start of its value */
static msgpack_packer *tags_start(struct mpv *x)
{
	msgpack_packer *pk;

	bbuf_free(&x->b);
	pk = mpv_start(x);
	tu_pk_str(pk, "tags");
	return pk;
}

static void test_malformed(void **state)
{
	char *dir = tu_tmpdir();
	const char *path = tu_path(dir, "t.btape", 0);
	struct mpv x = {0};
	msgpack_packer *pk;
	uint8_t *zeros = calloc(1, BTAPE_FOOTER_TAGS_MAX_BYTES);

	(void)state;
	make_values();
	pk = tags_start(&x); /* the writer's footer has tags already: a second map */
	msgpack_pack_map(pk, 0);
	expect_refused(path, set_three, &x, "more than one tags map");
	pk = tags_start(&x);
	msgpack_pack_uint8(pk, 5);
	expect_refused(path, NULL, &x, "tags: not a well-formed map");
	pk = tags_start(&x);
	msgpack_pack_map(pk, 1);
	msgpack_pack_uint8(pk, 1);
	msgpack_pack_uint8(pk, 2);
	expect_refused(path, NULL, &x, "tags: a key is not a string of 1..255 bytes");
	pk = tags_start(&x);
	msgpack_pack_map(pk, 1);
	tu_pk_str(pk, "");
	msgpack_pack_uint8(pk, 2);
	expect_refused(path, NULL, &x, "tags: a key is not a string of 1..255 bytes");
	pk = tags_start(&x); /* declares two pairs, holds one: the footer ends */
	msgpack_pack_map(pk, 2);
	tu_pk_str(pk, "a");
	msgpack_pack_uint8(pk, 2);
	expect_refused(path, NULL, &x, "tags: not a well-formed map");
	pk = tags_start(&x);
	msgpack_pack_map(pk, 2);
	tu_pk_str(pk, "a");
	msgpack_pack_uint8(pk, 1);
	tu_pk_str(pk, "a");
	msgpack_pack_uint8(pk, 2);
	expect_refused(path, NULL, &x, "tags: a key appears twice");
	pk = tags_start(&x);
	msgpack_pack_map(pk, 1);
	tu_pk_str(pk, "a");
	for (int i = 0; i <= BTAPE_FOOTER_TAG_MAX_DEPTH; i++)
		msgpack_pack_array(pk, 1);
	msgpack_pack_nil(pk);
	expect_refused(path, NULL, &x, "tags: malformed value");
	pk = tags_start(&x); /* within what the footer allows, past what tags may take */
	msgpack_pack_map(pk, 1);
	tu_pk_str(pk, "a");
	msgpack_pack_array(pk, BTAPE_FOOTER_TAGS_MAX_ITEMS);
	for (unsigned int i = 0; i < BTAPE_FOOTER_TAGS_MAX_ITEMS; i++)
		msgpack_pack_nil(pk);
	expect_refused(path, NULL, &x, "tags: larger than the limit");
	pk = tags_start(&x);
	msgpack_pack_map(pk, 1);
	tu_pk_str(pk, "a");
	msgpack_pack_bin(pk, BTAPE_FOOTER_TAGS_MAX_BYTES);
	msgpack_pack_bin_body(pk, zeros, BTAPE_FOOTER_TAGS_MAX_BYTES);
	expect_refused(path, NULL, &x, "tags: larger than the limit");
	bbuf_free(&x.b);
	free(zeros);
	tu_cleanup_dir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_writer_checks),
		cmocka_unit_test(test_malformed),
	};

	int ret = cmocka_run_group_tests(tests, NULL, NULL);

	free_values();
	return ret;
}
