// SPDX-License-Identifier: GPL-2.0-only
/*
 * libbiotape: hostile files. Tiny inputs whose zstd payloads expand into huge msgpack
 * structures (a device table of millions of one-byte maps, a chunk holding an array of 100 M
 * zeros, a footer index of millions of entries, a comm table longer than the chunk) must fail
 * cleanly, and in bounded memory: each case runs in a forked child that reports the growth of
 * its peak RSS (getrusage), so a reader that builds the structure fails the test.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <msgpack.h>
#include <zstd.h>

#include "btape.h"
#include "btape_internal.h"
#include "mp_internal.h"
#include "test_util.h"

#define MIB 1024L /* in KiB, the unit of ru_maxrss */

/* Header and an ordinary metadata frame (one device). */
static void start_file(struct bbuf *f)
{
	uint8_t hdr[BTAPE_HEADER_SIZE];
	struct btape_meta m;
	struct bbuf raw = {0};

	btape_header_build(hdr, BTAPE_FORMAT_VERSION_MAJOR, BTAPE_FORMAT_VERSION_MINOR);
	bbuf_put(f, hdr, sizeof(hdr));
	tu_meta(&m, 1);
	assert_int_equal(btape_meta_pack(&raw, &m), 0);
	tu_put_frame(f, BTAPE_FRAME_META, raw.p, raw.len);
	btape_meta_free(&m);
	bbuf_free(&raw);
}

/* RAW (msgpack) followed by COUNT copies of BYTE: a container body of COUNT tiny values. */
static void put_run(struct bbuf *raw, uint8_t byte, size_t count)
{
	assert_int_equal(bbuf_reserve(raw, count), 0);
	memset(raw->p + raw->len, byte, count);
	raw->len += count;
}

/* What a child reports: the first failure of opening and reading everything, and how much
 * its peak RSS grew meanwhile. */
struct probe {
	int ret;
	int events;
	long rss_kib;
	char msg[512];
};

/* open, read every event (errors are resumable: at most 8), __summary, __verify */
static void read_everything(const char *path, struct probe *pr)
{
	struct btape_reader *r;
	struct btape_summary s = {.sz = sizeof(s)};
	struct btape_event ev;
	char m[BTAPE_ERRMSG_LEN];
	int ret, errors = 0;

	pr->ret = btape_reader__open(&r, path, m, sizeof(m));
	if (pr->ret) {
		snprintf(pr->msg, sizeof(pr->msg), "%s", m);
		return;
	}
	while ((ret = btape_reader__next(r, &ev)) != 0 && errors < 8) {
		if (ret > 0) {
			pr->events++;
			continue;
		}
		if (!pr->ret) {
			pr->ret = ret;
			snprintf(pr->msg, sizeof(pr->msg), "%s", btape_reader__errmsg(r));
		}
		errors++;
	}
	ret = btape_reader__summary(r, &s);
	if (!ret)
		ret = btape_reader__verify(r);
	if (ret && !pr->ret) {
		pr->ret = ret;
		snprintf(pr->msg, sizeof(pr->msg), "%s", btape_reader__errmsg(r));
	}
	btape_reader__close(r);
}

/* Runs read_everything(PATH) in a child process. */
static void probe(const char *path, struct probe *pr)
{
	int pfd[2], status;
	pid_t pid;
	size_t got = 0;

	memset(pr, 0, sizeof(*pr));
	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct rusage a, b;
		struct probe res = {0};

		close(pfd[0]);
		getrusage(RUSAGE_SELF, &a);
		read_everything(path, &res);
		getrusage(RUSAGE_SELF, &b);
		res.rss_kib = b.ru_maxrss - a.ru_maxrss;
		_exit(write(pfd[1], &res, sizeof(res)) == sizeof(res) ? 0 : 1);
	}
	close(pfd[1]);
	while (got < sizeof(*pr)) {
		ssize_t n = read(pfd[0], (char *)pr + got, sizeof(*pr) - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(pfd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(got, sizeof(*pr));
	print_message("    %s: ret %d, %d events, peak RSS +%ld KiB: %s\n", strrchr(path, '/') + 1,
		      pr->ret, pr->events, pr->rss_kib, pr->msg);
}

/* Item 6 of issue #15: a device table of 2 M one-byte maps, in a file of a few hundred bytes,
 * made the reader allocate 544 bytes for each (1.1 GB). */
static void test_device_table(void **state)
{
	char *dir = tu_tmpdir();
	const char *p = tu_path(dir, "devices.btape", 0);
	struct bbuf f = {0}, raw = {0};
	uint8_t hdr[BTAPE_HEADER_SIZE];
	msgpack_packer pk;
	struct probe pr;
	static const uint32_t counts[] = {2u << 20, BTAPE_DEVICES_MAX + 1, BTAPE_DEVICES_MAX};

	for (int i = 0; i < 3; i++) {
		f.len = raw.len = 0;
		btape_header_build(hdr, BTAPE_FORMAT_VERSION_MAJOR, BTAPE_FORMAT_VERSION_MINOR);
		bbuf_put(&f, hdr, sizeof(hdr));
		msgpack_packer_init(&pk, &raw, btape_mp_write);
		msgpack_pack_map(&pk, 2);
		tu_pk_str(&pk, "tool");
		tu_pk_str(&pk, "hostile");
		tu_pk_str(&pk, "devices");
		msgpack_pack_array(&pk, counts[i]);
		put_run(&raw, 0x80, counts[i]); /* empty maps: every field takes its default */
		tu_put_frame(&f, BTAPE_FRAME_META, raw.p, raw.len);
		assert_int_equal(tu_write_file(p, f.p, f.len), 0);
		if (i == 0)
			assert_true(f.len < 1024); /* the file was 147 bytes */
		probe(p, &pr);
		if (counts[i] > BTAPE_DEVICES_MAX) {
			assert_int_equal(pr.ret, -EBADMSG);
			assert_non_null(strstr(pr.msg, "frame 0 at offset 24: metadata:"));
			assert_non_null(strstr(pr.msg, "device table"));
			/* 2 MiB of decompressed payload, nothing built from it */
			assert_true(pr.rss_kib < 32 * MIB);
		} else {
			/* the limit itself is readable: 65 536 devices of 544 bytes */
			assert_int_equal(pr.ret, 0);
			assert_true(pr.rss_kib < 96 * MIB);
		}
	}
	bbuf_free(&f);
	bbuf_free(&raw);
	tu_cleanup_dir(dir);
}

/* Item 7: a 100 M raw length of compressible zeros, an array of 100 M fixints under an
 * unknown key of a chunk, took 2.4 GB (24 bytes per msgpack-c object) and seconds. */
static void test_chunk_items(void **state)
{
	char *dir = tu_tmpdir();
	const char *p = tu_path(dir, "items.btape", 0);
	struct bbuf f = {0}, raw = {0};
	msgpack_packer pk;
	struct probe pr;
	const uint32_t n = 100u << 20;

	start_file(&f);
	msgpack_packer_init(&pk, &raw, btape_mp_write);
	msgpack_pack_map(&pk, 1);
	tu_pk_str(&pk, "pad");
	msgpack_pack_array(&pk, n);
	put_run(&raw, 0x00, n);
	tu_put_frame(&f, BTAPE_FRAME_CHUNK, raw.p, raw.len);
	bbuf_free(&raw);
	assert_int_equal(tu_write_file(p, f.p, f.len), 0);
	assert_true(f.len < 64 * 1024);
	probe(p, &pr);
	assert_int_equal(pr.ret, -EBADMSG);
	assert_non_null(strstr(pr.msg, "frame 1 at offset"));
	assert_non_null(strstr(pr.msg, "too many msgpack items"));
	/* the decompressed payload itself (the format allows 256 MiB), nothing more */
	assert_true(pr.rss_kib < 200 * MIB);
	bbuf_free(&f);
	tu_cleanup_dir(dir);
}

/* A comm table of more names than a chunk may hold events: refused before the decoder
 * allocates a pointer for each. */
static void test_chunk_comms(void **state)
{
	char *dir = tu_tmpdir();
	const char *p = tu_path(dir, "comms.btape", 0);
	struct bbuf f = {0}, raw = {0};
	msgpack_packer pk;
	struct probe pr;
	const uint32_t n = BTAPE_CHUNK_MAX_EVENTS + 1; /* within the item limit */

	start_file(&f);
	msgpack_packer_init(&pk, &raw, btape_mp_write);
	msgpack_pack_map(&pk, 3);
	tu_pk_str(&pk, "cols");
	msgpack_pack_map(&pk, 0);
	tu_pk_str(&pk, "n");
	msgpack_pack_uint32(&pk, 1);
	tu_pk_str(&pk, "comms");
	msgpack_pack_array(&pk, n);
	put_run(&raw, 0xa0, n); /* empty strings */
	tu_put_frame(&f, BTAPE_FRAME_CHUNK, raw.p, raw.len);
	bbuf_free(&raw);
	assert_int_equal(tu_write_file(p, f.p, f.len), 0);
	probe(p, &pr);
	assert_int_equal(pr.ret, -EBADMSG);
	assert_non_null(strstr(pr.msg, "bad comms table"));
	assert_true(pr.rss_kib < 32 * MIB);
	bbuf_free(&f);
	tu_cleanup_dir(dir);
}

/*
 * Two chunks whose comm tables hold 8 M distinct three-byte names (a 22 MB file): the
 * reader's 64 MiB budget for names counts each name's table overhead too, so the table stays
 * near its cap instead of growing to several times it.
 */
static void test_distinct_names(void **state)
{
	char *dir = tu_tmpdir();
	const char *p = tu_path(dir, "names.btape", 0);
	struct bbuf f = {0}, raw = {0};
	msgpack_packer pk;
	struct probe pr;
	const uint32_t per = BTAPE_CHUNK_MAX_EVENTS;
	uint32_t k = 0;

	start_file(&f);
	for (int chunk = 0; chunk < 2; chunk++) {
		raw.len = 0;
		msgpack_packer_init(&pk, &raw, btape_mp_write);
		msgpack_pack_map(&pk, 3);
		tu_pk_str(&pk, "n");
		msgpack_pack_uint32(&pk, 0);
		tu_pk_str(&pk, "comms");
		msgpack_pack_array(&pk, per);
		assert_int_equal(bbuf_reserve(&raw, (size_t)per * 4), 0);
		for (uint32_t i = 0; i < per; i++, k++) {
			uint8_t *q = raw.p + raw.len;

			q[0] = 0xa3; /* no NUL bytes: 1..255 */
			q[1] = (uint8_t)(k % 255 + 1);
			q[2] = (uint8_t)(k / 255 % 255 + 1);
			q[3] = (uint8_t)(k / 65025 + 1);
			raw.len += 4;
		}
		tu_pk_str(&pk, "cols");
		msgpack_pack_map(&pk, 0);
		tu_put_frame(&f, BTAPE_FRAME_CHUNK, raw.p, raw.len);
	}
	bbuf_free(&raw);
	assert_int_equal(tu_write_file(p, f.p, f.len), 0);
	probe(p, &pr);
	assert_int_equal(pr.ret, -E2BIG);
	assert_non_null(strstr(pr.msg, "too many distinct process names"));
	assert_true(pr.rss_kib < 300 * MIB);
	bbuf_free(&f);
	tu_cleanup_dir(dir);
}

/*
 * A footer whose index claims far more chunks than a file of a few KiB has room for: ignored
 * as damage without building the index (the events stay readable, __verify says why). With
 * 2 M entries the footer is larger than its offset + 1 MiB; with 250 K it is not, but holds
 * more entries than chunk frames fit before it.
 */
static void test_footer_index(void **state)
{
	char *dir = tu_tmpdir();
	const char *p = tu_path(dir, "footer.btape", 0);
	struct bbuf f = {0}, raw = {0};
	uint8_t tr[BTAPE_TRAILER_SIZE];
	static const char *const cols[4] = {"offset", "issue_min", "issue_max", "events"};
	static const uint32_t counts[2] = {2u << 20, 250000};
	msgpack_packer pk;
	struct probe pr;
	uint64_t foot_off;

	for (int i = 0; i < 2; i++) {
		f.len = raw.len = 0;
		start_file(&f);
		foot_off = f.len;
		msgpack_packer_init(&pk, &raw, btape_mp_write);
		msgpack_pack_map(&pk, 2);
		tu_pk_str(&pk, "events");
		msgpack_pack_uint64(&pk, 0);
		tu_pk_str(&pk, "index");
		msgpack_pack_map(&pk, 4);
		for (int c = 0; c < 4; c++) {
			tu_pk_str(&pk, cols[c]);
			msgpack_pack_array(&pk, counts[i]);
			put_run(&raw, 0x00, counts[i]);
		}
		tu_put_frame(&f, BTAPE_FRAME_FOOTER, raw.p, raw.len);
		btape_trailer_build(tr, foot_off);
		bbuf_put(&f, tr, sizeof(tr));
		assert_int_equal(tu_write_file(p, f.p, f.len), 0);
		probe(p, &pr);
		assert_int_equal(pr.ret, -EBADMSG);
		/* the item limit (4 per chunk the file has room for) comes first */
		assert_non_null(strstr(pr.msg, i ? ": footer: too many msgpack"
						 : "footer frame too large"));
		assert_true(pr.rss_kib < 12 * MIB);
	}
	bbuf_free(&raw);
	bbuf_free(&f);
	tu_cleanup_dir(dir);
}

/* The per-type decompressed-size limits: a metadata frame over 64 MiB is refused from its
 * envelope, before anything is allocated for it. */
static void test_frame_size_limits(void **state)
{
	char *dir = tu_tmpdir();
	const char *p = tu_path(dir, "bigmeta.btape", 0);
	struct bbuf f = {0}, raw = {0};
	uint8_t hdr[BTAPE_HEADER_SIZE];
	msgpack_packer pk;
	struct probe pr;
	const uint32_t pad = BTAPE_META_MAX_BYTES;

	btape_header_build(hdr, BTAPE_FORMAT_VERSION_MAJOR, BTAPE_FORMAT_VERSION_MINOR);
	bbuf_put(&f, hdr, sizeof(hdr));
	msgpack_packer_init(&pk, &raw, btape_mp_write);
	msgpack_pack_map(&pk, 1);
	tu_pk_str(&pk, "future_blob");
	msgpack_pack_bin(&pk, pad);
	put_run(&raw, 0x00, pad);
	tu_put_frame(&f, BTAPE_FRAME_META, raw.p, raw.len);
	bbuf_free(&raw);
	assert_int_equal(tu_write_file(p, f.p, f.len), 0);
	probe(p, &pr);
	assert_int_equal(pr.ret, -EBADMSG);
	assert_non_null(strstr(pr.msg, "frame 0 at offset 24: metadata frame too large"));
	assert_true(pr.rss_kib < 16 * MIB);
	bbuf_free(&f);
	tu_cleanup_dir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_table),
		cmocka_unit_test(test_chunk_items),
		cmocka_unit_test(test_chunk_comms),
		cmocka_unit_test(test_distinct_names),
		cmocka_unit_test(test_footer_index),
		cmocka_unit_test(test_frame_size_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
