// SPDX-License-Identifier: GPL-2.0-only
/*
 * libbiotape: damaged and unusual files (flipped bytes, truncation at every offset, foreign
 * files, unknown keys and frames), seeking, reordering and the watermark, writer file
 * handling (temp + rename, abort, direct mode under SIGKILL, pipes).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>

#include <cmocka.h>
#include <msgpack.h>
#include <zstd.h>

#include "btape.h"
#include "btape_internal.h"
#include "mp_internal.h"
#include "test_util.h"

/* Writes n simple events (issue = 1000 + 10 i) with chunk_events per chunk. */
static void write_simple(const char *path, size_t n, uint32_t chunk_events)
{
	struct btape_writer_opts o = {.sz = sizeof(o), .chunk_events = chunk_events};
	struct btape_writer *w;
	struct btape_meta meta;
	uint64_t seed = 7;

	tu_meta(&meta, 2);
	assert_int_equal(btape_writer__open(&w, path, &meta, &o, NULL, 0), 0);
	for (size_t i = 0; i < n; i++) {
		struct btape_event e;

		tu_random_event(&seed, &e, 1000 + 10 * i, (i % 3) != 0);
		assert_int_equal(btape_writer__add(w, &e), 0);
	}
	btape_writer__add_lost(w, 5, 6, 7);
	assert_int_equal(btape_writer__close(w, NULL, 0), 0);
	btape_meta_free(&meta);
}

/* Reads everything; returns events read, *errors the number of failed calls. */
static size_t read_all(const char *path, int *open_err, int *errors, char *msg, size_t msglen)
{
	struct btape_reader *r;
	struct btape_event ev;
	char m[BTAPE_ERRMSG_LEN];
	size_t n = 0;
	int ret, guard = 0;

	*errors = 0;
	msg[0] = '\0';
	*open_err = btape_reader__open(&r, path, m, sizeof(m));
	if (*open_err) {
		assert_non_null(m);
		assert_true(strlen(m) > 0);
		snprintf(msg, msglen, "%s", m);
		return 0;
	}
	while ((ret = btape_reader__next(r, &ev)) != 0 && guard++ < 1000000) {
		if (ret < 0) {
			if (!*errors)
				snprintf(msg, msglen, "%s", btape_reader__errmsg(r));
			(*errors)++;
			if (*errors > 100)
				break;
			continue;
		}
		n++;
	}
	btape_reader__close(r);
	return n;
}

static void get_index(const char *path, struct btape_index *ix, uint64_t *size)
{
	/* rebuild the chunk offsets by parsing envelopes */
	size_t len;
	uint8_t *d = tu_read_file(path, &len);
	uint64_t off;

	assert_non_null(d);
	memset(ix, 0, sizeof(*ix));
	off = BTAPE_HEADER_SIZE;
	while (off + BTAPE_ENV_SIZE <= len) {
		unsigned int type;
		uint32_t clen, rlen, pcrc;

		if (btape_env_parse(d + off, &type, &clen, &rlen, &pcrc))
			break;
		/* index holds every frame: offset, type in issue_min, end in issue_max */
		btape_index_add(ix, off, type, off + BTAPE_ENV_SIZE + clen, 0);
		off += BTAPE_ENV_SIZE + clen;
	}
	*size = len;
	free(d);
}

static void test_foreign_and_version(void **state)
{
	char *dir = tu_tmpdir();
	const char *p = tu_path(dir, "x", 0);
	struct btape_reader *r = NULL;
	char msg[BTAPE_ERRMSG_LEN];
	uint8_t hdr[BTAPE_HEADER_SIZE];
	int ret;

	assert_int_equal(tu_write_file(p, "hello world, no trace here\n", 27), 0);
	assert_int_equal(btape_reader__open(&r, p, msg, sizeof(msg)), -EINVAL);
	assert_null(r);
	assert_non_null(strstr(msg, "not a biotape trace (bad magic)"));
	assert_int_equal(tu_write_file(p, "", 0), 0);
	assert_true(btape_reader__open(&r, p, msg, sizeof(msg)) < 0);
	assert_non_null(strstr(msg, "empty"));
	assert_int_equal(btape_reader__open(&r, tu_path(dir, "missing", 1), msg, sizeof(msg)),
			 -ENOENT);
	assert_non_null(strstr(msg, "missing"));
	/* a newer major version is refused */
	btape_header_build(hdr, BTAPE_FORMAT_VERSION_MAJOR + 1, 0);
	assert_int_equal(tu_write_file(p, hdr, sizeof(hdr)), 0);
	ret = btape_reader__open(&r, p, msg, sizeof(msg));
	assert_int_equal(ret, -EPROTONOSUPPORT);
	assert_non_null(strstr(msg, "version 2.0"));
	/* header only: truncated in the metadata frame */
	btape_header_build(hdr, BTAPE_FORMAT_VERSION_MAJOR, 0);
	assert_int_equal(tu_write_file(p, hdr, sizeof(hdr)), 0);
	assert_int_equal(btape_reader__open(&r, p, msg, sizeof(msg)), -EBADMSG);
	assert_non_null(strstr(msg, "metadata"));
	tu_cleanup_dir(dir);
}

static void test_flip_every_byte(void **state)
{
	char *dir = tu_tmpdir();
	const char *orig = tu_path(dir, "orig.btape", 0), *bad = tu_path(dir, "bad.btape", 1);
	struct btape_index ix;
	uint64_t size;
	size_t len;
	uint8_t *d;
	char msg[512];

	write_simple(orig, 60, 8);
	get_index(orig, &ix, &size);
	assert_true(ix.n >= 9); /* meta + 8 chunks + footer */
	d = tu_read_file(orig, &len);
	for (size_t pos = 0; pos < len; pos++) {
		struct btape_reader *r;
		struct btape_summary s = {.sz = sizeof(s)};
		char m[BTAPE_ERRMSG_LEN];
		int open_err, errors;
		uint64_t frame = UINT64_MAX;
		size_t n;

		d[pos] ^= 0x10;
		assert_int_equal(tu_write_file(bad, d, len), 0);
		d[pos] ^= 0x10;
		for (uint64_t f = 0; f < ix.n; f++)
			if (pos >= ix.offset[f] && pos < ix.issue_max[f])
				frame = f;
		n = read_all(bad, &open_err, &errors, msg, sizeof(msg));
		if (pos < BTAPE_HEADER_SIZE || frame == 0) {
			assert_true(open_err < 0);
			continue;
		}
		assert_int_equal(open_err, 0);
		if (frame != UINT64_MAX && ix.issue_min[frame] == BTAPE_FRAME_FOOTER) {
			/* a damaged footer: every event, then an error naming the footer frame */
			char want[128];

			snprintf(want, sizeof(want), "frame %" PRIu64 " at offset %" PRIu64 ": ",
				 frame, ix.offset[frame]);
			if (errors != 1 || !strstr(msg, want))
				fail_msg("flip at %zu (footer): errors %d, msg '%s'", pos, errors,
					 msg);
			assert_int_equal(n, 60);
			assert_int_equal(btape_reader__open(&r, bad, m, sizeof(m)), 0);
			assert_true(btape_reader__verify(r) < 0);
			assert_true(btape_reader__summary(r, &s) < 0);
			btape_reader__close(r);
			continue;
		}
		if (frame != UINT64_MAX && ix.issue_min[frame] == BTAPE_FRAME_CHUNK) {
			char want[128];

			/* a damaged chunk: an error naming the frame and offset, then the rest */
			snprintf(want, sizeof(want), "frame %" PRIu64 " at offset %" PRIu64 ": ",
				 frame, ix.offset[frame]);
			if (!errors || !strstr(msg, want))
				fail_msg("flip at %zu (frame %" PRIu64 "): errors %d, msg '%s'",
					 pos, frame, errors, msg);
			if (!(n >= 60 - 8 && n < 60))
				fail_msg("flip at %zu (frame %" PRIu64 "): %zu events, msg %s", pos,
					 frame, n, msg);
			continue;
		}
		/* footer or trailer damage: events intact, footer not trusted */
		assert_int_equal(errors, 0);
		assert_int_equal(n, 60);
		assert_int_equal(btape_reader__open(&r, bad, m, sizeof(m)), 0);
		assert_int_equal(btape_reader__summary(r, &s), 0);
		if (s.has_footer) {
			/* only possible when nothing was changed that matters */
			fail_msg("flip at %zu not detected", pos);
		}
		assert_true(s.recovered);
		assert_true(s.footer_damaged); /* the writer finished: not called cut short */
		assert_int_equal(s.events, 60);
		btape_reader__close(r);
	}
	free(d);
	btape_index_free(&ix);
	tu_cleanup_dir(dir);
}

static void test_truncate_every_offset(void **state)
{
	char *dir = tu_tmpdir();
	const char *orig = tu_path(dir, "orig.btape", 0), *cut = tu_path(dir, "cut.btape", 1);
	uint64_t maxframe = BTAPE_TRAILER_SIZE;
	struct btape_index ix;
	uint64_t size;
	size_t len;
	uint8_t *d;

	write_simple(orig, 40, 5);
	get_index(orig, &ix, &size);
	d = tu_read_file(orig, &len);
	for (uint64_t f = 0; f < ix.n; f++)
		if (ix.issue_max[f] - ix.offset[f] > maxframe)
			maxframe = ix.issue_max[f] - ix.offset[f];
	for (size_t l = 0; l <= len; l++) {
		struct btape_reader *r;
		struct btape_summary s = {.sz = sizeof(s)};
		struct btape_event ev;
		char m[BTAPE_ERRMSG_LEN];
		size_t complete = 0, n = 0;
		int ret;

		for (uint64_t f = 0; f < ix.n; f++)
			if (ix.issue_min[f] == BTAPE_FRAME_CHUNK && ix.issue_max[f] <= l)
				complete += 5;
		assert_int_equal(tu_write_file(cut, d, l), 0);
		ret = btape_reader__open(&r, cut, m, sizeof(m));
		if (l < ix.issue_max[0]) {
			assert_true(ret < 0);
			assert_null(r);
			continue;
		}
		assert_int_equal(ret, 0);
		while ((ret = btape_reader__next(r, &ev)) > 0)
			n++;
		if (ret < 0)
			fail_msg("cut at %zu: %s", l, btape_reader__errmsg(r));
		assert_int_equal(n, complete);
		assert_int_equal(btape_reader__summary(r, &s), 0);
		assert_int_equal(s.events, complete);
		if (l == len) {
			assert_true(s.has_footer);
			assert_false(s.recovered);
		} else {
			assert_false(s.has_footer);
			assert_true(s.recovered);
			assert_false(s.footer_damaged);
			assert_true(s.recovered_bytes_ignored <= maxframe);
		}
		assert_int_equal(btape_reader__verify(r), 0);
		/* seeking works without the index too */
		assert_int_equal(btape_reader__seek(r, 1000 + 10 * 17), 0);
		ret = btape_reader__next(r, &ev);
		if (complete > 17) {
			assert_int_equal(ret, 1);
			assert_int_equal(ev.issue_ns, 1000 + 10 * 17);
		} else {
			assert_int_equal(ret, 0);
		}
		btape_reader__close(r);
	}
	free(d);
	btape_index_free(&ix);
	tu_cleanup_dir(dir);
}

static void test_unknown_keys_and_frames(void **state)
{
	char *dir = tu_tmpdir();
	const char *p = tu_path(dir, "future.btape", 0);
	struct bbuf file = {0}, meta = {0}, chunk = {0}, foot = {0};
	struct btape_event evs[3];
	const char *comms[1] = {"future"};
	uint32_t comm_len[1] = {6}, comm_idx[3] = {0, 0, 0};
	struct chunk_enc *ce = btape_chunk_enc_new();
	struct btape_summary sum = {.sz = sizeof(sum)};
	struct btape_index ix = {0};
	struct btape_reader *r;
	struct btape_event ev;
	msgpack_packer pk;
	char m[BTAPE_ERRMSG_LEN];
	size_t *cuts, ncuts;
	uint8_t hdr[BTAPE_HEADER_SIZE], tr[BTAPE_TRAILER_SIZE];
	uint64_t chunk_off, foot_off;

	memset(evs, 0, sizeof(evs));
	for (int i = 0; i < 3; i++) {
		evs[i].issue_ns = 100 + (uint64_t)i;
		evs[i].present = BTAPE_HAS_COMM;
		evs[i].comm = "future";
		evs[i].bytes = 4096;
		evs[i].sector = 8 * (uint64_t)i;
	}
	btape_header_build(hdr, BTAPE_FORMAT_VERSION_MAJOR, BTAPE_FORMAT_VERSION_MINOR + 7);
	bbuf_put(&file, hdr, sizeof(hdr)); /* a newer minor */

	/* metadata with unknown keys, one holding a nested map */
	msgpack_packer_init(&pk, &meta, btape_mp_write);
	msgpack_pack_map(&pk, 4);
	tu_pk_str(&pk, "hostname");
	tu_pk_str(&pk, "futurehost");
	tu_pk_str(&pk, "quantum_settings");
	msgpack_pack_map(&pk, 1);
	tu_pk_str(&pk, "entangled");
	msgpack_pack_true(&pk);
	tu_pk_str(&pk, "devices");
	msgpack_pack_array(&pk, 1);
	msgpack_pack_map(&pk, 2);
	tu_pk_str(&pk, "name");
	tu_pk_str(&pk, "nvme9n1");
	tu_pk_str(&pk, "wear_level");
	msgpack_pack_double(&pk, 0.5);
	tu_pk_str(&pk, "tags");
	msgpack_pack_array(&pk, 1);
	msgpack_pack_array(&pk, 3);
	tu_pk_str(&pk, "k");
	tu_pk_str(&pk, "v");
	tu_pk_str(&pk, "extra element");
	tu_put_frame(&file, BTAPE_FRAME_META, meta.p, meta.len);

	/* an unknown frame type is skipped */
	tu_put_frame(&file, 77, "whatever", 8);

	/* chunk with an extra column and an extra top-level key appended */
	assert_int_equal(
		btape_chunk_encode(ce, evs, comm_idx, 3, comms, comm_len, 1, &chunk, &cuts, &ncuts),
		0);
	assert_int_equal(chunk.p[0], 0x85);
	chunk.p[0] = 0x86;
	{
		/* the cols map is the last value: a map16 header "de 00 12" */
		uint8_t *q = memmem(chunk.p, chunk.len,
				    "\xa4"
				    "cols"
				    "\xde\x00\x12",
				    8);

		assert_non_null(q);
		q[7] = 0x13;
	}
	msgpack_packer_init(&pk, &chunk, btape_mp_write);
	tu_pk_str(&pk, "temperature");
	msgpack_pack_bin(&pk, 3);
	msgpack_pack_bin_body(&pk, "\x00\x00\x00", 3);
	tu_pk_str(&pk, "future_top");
	msgpack_pack_array(&pk, 2);
	msgpack_pack_nil(&pk);
	msgpack_pack_int(&pk, -5);
	chunk_off = file.len;
	tu_put_frame(&file, BTAPE_FRAME_CHUNK, chunk.p, chunk.len);

	sum.events = 3;
	sum.first_issue_ns = 100;
	sum.last_issue_ns = 102;
	sum.count_by_op[0] = 3;
	sum.bytes_by_op[0] = 3 * 4096;
	btape_index_add(&ix, chunk_off, 100, 102, 3);
	btape_footer_pack(&foot, &sum, &ix, NULL);
	assert_int_equal(foot.p[0], 0x8b);
	foot.p[0] = 0x8c;
	msgpack_packer_init(&pk, &foot, btape_mp_write);
	tu_pk_str(&pk, "checksum_of_the_universe");
	msgpack_pack_uint64(&pk, 42);
	foot_off = file.len;
	tu_put_frame(&file, BTAPE_FRAME_FOOTER, foot.p, foot.len);
	btape_trailer_build(tr, foot_off);
	bbuf_put(&file, tr, sizeof(tr));
	assert_int_equal(tu_write_file(p, file.p, file.len), 0);

	assert_int_equal(btape_reader__open(&r, p, m, sizeof(m)), 0);
	assert_string_equal(btape_reader__meta(r)->hostname, "futurehost");
	assert_int_equal(btape_reader__meta(r)->ndevices, 1);
	assert_string_equal(btape_reader__meta(r)->devices[0].name, "nvme9n1");
	assert_int_equal(btape_reader__meta(r)->devices[0].rotational, -1);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(btape_reader__next(r, &ev), 1);
		assert_int_equal(tu_event_cmp(&ev, &evs[i]), 0);
	}
	assert_int_equal(btape_reader__next(r, &ev), 0);
	{
		struct btape_summary s = {.sz = sizeof(s)};

		assert_int_equal(btape_reader__summary(r, &s), 0);
		assert_true(s.has_footer);
		assert_int_equal(s.events, 3);
	}
	assert_int_equal(btape_reader__verify(r), 0);
	btape_reader__close(r);

	btape_chunk_enc_free(ce);
	bbuf_free(&file);
	bbuf_free(&meta);
	bbuf_free(&chunk);
	bbuf_free(&foot);
	btape_index_free(&ix);
	tu_cleanup_dir(dir);
}

static void test_seek(void **state)
{
	char *dir = tu_tmpdir();
	const char *p = tu_path(dir, "s.btape", 0);
	uint64_t targets[] = {0,
			      999,
			      1000,
			      1001,
			      1005,
			      1010,
			      1000 + 10 * 333,
			      1000 + 10 * 999,
			      1000 + 10 * 999 + 1,
			      UINT64_MAX,
			      1000 + 10 * 500 - 3};
	struct btape_reader *r;
	struct btape_event ev;
	char m[BTAPE_ERRMSG_LEN];

	write_simple(p, 1000, 64);
	assert_int_equal(btape_reader__open(&r, p, m, sizeof(m)), 0);
	for (size_t t = 0; t < sizeof(targets) / sizeof(targets[0]); t++) {
		uint64_t want =
			targets[t] <= 1000 ? 1000 : 1000 + ((targets[t] - 1000 + 9) / 10) * 10;

		if (targets[t] > 1000 + 10 * 999)
			want = UINT64_MAX;
		int ret;

		assert_int_equal(btape_reader__seek(r, targets[t]), 0);
		ret = btape_reader__next(r, &ev);
		if (want == UINT64_MAX) {
			assert_int_equal(ret, 0);
			continue;
		}
		assert_int_equal(ret, 1);
		assert_int_equal(ev.issue_ns, want);
		/* reading continues in order */
		if (want < 1000 + 10 * 999) {
			assert_int_equal(btape_reader__next(r, &ev), 1);
			assert_int_equal(ev.issue_ns, want + 10);
		}
	}
	btape_reader__close(r);
	tu_cleanup_dir(dir);
}

/* The footer's index, chunk by chunk: events and issue range of each, in file order; none
 * once the footer is cut off (recovery). */
static void test_chunk_info(void **state)
{
	char *dir = tu_tmpdir();
	const char *p = tu_path(dir, "c.btape", 0);
	struct btape_chunk_info ci = {.sz = sizeof(ci)}, small = {.sz = sizeof(ci) - 1};
	struct btape_reader *r;
	char m[BTAPE_ERRMSG_LEN];
	uint64_t i, total = 0;
	struct stat st;

	(void)state;
	write_simple(p, 1000, 64);
	assert_int_equal(btape_reader__open(&r, p, m, sizeof(m)), 0);
	for (i = 0; btape_reader__chunk_info(r, i, &ci) == 1; i++) {
		uint64_t want = 1000 - 64 * i < 64 ? 1000 - 64 * i : 64;

		assert_int_equal(ci.events, want);
		assert_int_equal(ci.issue_min_ns, 1000 + 10 * 64 * i);
		assert_int_equal(ci.issue_max_ns, 1000 + 10 * (64 * i + want - 1));
		total += ci.events;
	}
	assert_int_equal(i, 16);
	assert_int_equal(total, 1000);
	assert_int_equal(btape_reader__chunk_info(r, 0, &small), -EINVAL);
	btape_reader__close(r);
	/* the footer cut off: read by recovery, no index */
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(truncate(p, st.st_size - 8), 0);
	assert_int_equal(btape_reader__open(&r, p, m, sizeof(m)), 0);
	assert_int_equal(btape_reader__chunk_info(r, 0, &ci), 0);
	btape_reader__close(r);
	tu_cleanup_dir(dir);
}

static void test_reorder_watermark(void **state)
{
	char *dir = tu_tmpdir();
	const char *p = tu_path(dir, "o.btape", 0);
	struct btape_writer_opts o = {.sz = sizeof(o), .chunk_events = 100};
	struct btape_writer *w;
	struct btape_reader *r;
	struct btape_summary s = {.sz = sizeof(s)};
	struct btape_event ev;
	char m[BTAPE_ERRMSG_LEN];
	uint64_t seed = 3, prev = 0, n = 0;
	/* in-flight window: events complete in random order within 64 outstanding requests */
	struct btape_event inflight[64];
	int nin = 0;

	assert_int_equal(btape_writer__open(&w, p, NULL, &o, NULL, 0), 0);
	for (uint64_t i = 0; i < 5000; i++) {
		struct btape_event e = {
			.issue_ns = 1000 + i * 5, .bytes = 512, .present = BTAPE_HAS_COMPLETE};

		e.complete_ns = e.issue_ns + tu_rand(&seed) % 400;
		inflight[nin++] = e;
		if (nin == 64 || i == 4999) {
			/* complete a random one; watermark = earliest issue still in flight */
			while (nin > (i == 4999 ? 0 : 32)) {
				int k = (int)(tu_rand(&seed) % (uint64_t)nin);
				uint64_t wm = UINT64_MAX;

				assert_int_equal(btape_writer__add(w, &inflight[k]), 0);
				inflight[k] = inflight[--nin];
				for (int j = 0; j < nin; j++)
					if (inflight[j].issue_ns < wm)
						wm = inflight[j].issue_ns;
				if (nin)
					assert_int_equal(btape_writer__advance(w, wm), 0);
			}
		}
	}
	assert_int_equal(btape_writer__close(w, NULL, 0), 0);
	assert_int_equal(btape_reader__open(&r, p, m, sizeof(m)), 0);
	while (btape_reader__next(r, &ev) == 1) {
		assert_true(ev.issue_ns >= prev);
		assert_int_equal(ev.issue_ns, 1000 + n * 5);
		prev = ev.issue_ns;
		n++;
	}
	assert_int_equal(n, 5000);
	assert_int_equal(btape_reader__summary(r, &s), 0);
	assert_int_equal(s.order_violations, 0);
	btape_reader__close(r);
	tu_cleanup_dir(dir);
}

static void test_order_violations(void **state)
{
	char *dir = tu_tmpdir();
	const char *p = tu_path(dir, "v.btape", 0);
	struct btape_writer_opts o = {.sz = sizeof(o), .reorder_max_events = 4};
	struct btape_writer *w;
	struct btape_reader *r;
	struct btape_summary s = {.sz = sizeof(s)};
	struct btape_event ev, e = {0};
	uint64_t got[16];
	int n = 0;
	char m[BTAPE_ERRMSG_LEN];

	assert_int_equal(btape_writer__open(&w, p, NULL, &o, NULL, 0), 0);
	e.issue_ns = 100;
	assert_int_equal(btape_writer__add(w, &e), 0);
	assert_int_equal(btape_writer__advance(w, 1000), 0); /* 100 is final */
	e.issue_ns = 50;				     /* breaks the promise */
	assert_int_equal(btape_writer__order_violations(w), 0);
	assert_int_equal(btape_writer__add(w, &e), 0);
	assert_int_equal(btape_writer__order_violations(w), 1);
	/* size limit: 4 held, the 5th add releases the oldest (2000) */
	for (uint64_t t = 2000; t <= 6000; t += 1000) {
		e.issue_ns = t;
		assert_int_equal(btape_writer__add(w, &e), 0);
	}
	e.issue_ns = 1500; /* earlier than 2000 already written: violation */
	assert_int_equal(btape_writer__add(w, &e), 0);
	e.issue_ns = 3500; /* still held: fine */
	assert_int_equal(btape_writer__add(w, &e), 0);
	assert_int_equal(btape_writer__events(w), 9);
	assert_int_equal(btape_writer__order_violations(w), 2);
	assert_int_equal(btape_writer__close(w, NULL, 0), 0);

	assert_int_equal(btape_reader__open(&r, p, m, sizeof(m)), 0);
	while (n < 16 && btape_reader__next(r, &ev) == 1)
		got[n++] = ev.issue_ns;
	assert_int_equal(n, 9);
	assert_int_equal(got[0], 100);
	assert_int_equal(got[1], 50);
	assert_int_equal(got[2], 2000);
	assert_int_equal(btape_reader__summary(r, &s), 0);
	assert_int_equal(s.order_violations, 2);
	assert_int_equal(s.events, 9);
	assert_int_equal(s.first_issue_ns, 50);
	assert_int_equal(s.last_issue_ns, 6000);
	btape_reader__close(r);
	tu_cleanup_dir(dir);
}

static int count_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	if (d)
		closedir(d);
	return n;
}

/*
 * The reorder buffer against a model (a stable sort of the held events at every release, with
 * the writer's rules for when a release is due and how much the size limit releases): random
 * adds, watermark advances (into the held range, to exactly a held key, past all of it) and
 * flushes, keys from narrow and very wide ranges, many equal keys, lists short and long, small
 * limits hit again and again, small chunks (flushed in the middle of a release), and events
 * with random fields. The file must hold exactly the model's sequence, every field intact
 * (each event's sector is its arrival number).
 */
struct model_ev {
	uint64_t key, id;
};

struct model {
	struct model_ev *pend;
	size_t n;
	uint64_t lo, hi; /* smallest and largest held key */
	uint64_t *out;
	size_t nout;
	uint64_t wm, rel_wm, max;
	size_t most_held, limit_releases;
};

/* (key, arrival): ids are arrival numbers, so this order is the stable one */
static int model_by_key(const void *a, const void *b)
{
	const struct model_ev *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int model_by_id(const void *a, const void *b)
{
	const struct model_ev *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static void model_release(struct model *m, bool all)
{
	size_t keep, i = 0;

	if (!m->n)
		return;
	if (!all && m->n <= m->max &&
	    (m->lo >= m->wm || (m->hi >= m->wm && m->wm - m->rel_wm < (m->hi - m->wm) / 4)))
		return;
	m->rel_wm = m->wm;
	qsort(m->pend, m->n, sizeof(*m->pend), model_by_key);
	keep = all ? 0 : m->n > m->max ? m->max - m->max / 4 : m->n;
	m->limit_releases += !all && m->n > m->max;
	while (i < m->n && (m->pend[i].key < m->wm || m->n - i > keep))
		m->out[m->nout++] = m->pend[i++].id;
	memmove(m->pend, m->pend + i, (m->n - i) * sizeof(*m->pend));
	m->n -= i;
	/* the writer keeps the rest in arrival order */
	qsort(m->pend, m->n, sizeof(*m->pend), model_by_id);
	m->lo = UINT64_MAX;
	m->hi = 0;
	for (size_t a = 0; a < m->n; a++) {
		m->lo = m->pend[a].key < m->lo ? m->pend[a].key : m->lo;
		m->hi = m->pend[a].key > m->hi ? m->pend[a].key : m->hi;
	}
}

struct model_cfg {
	uint64_t seed, nev, max;
	unsigned int span_bits;
	uint32_t chunk_events;
	uint32_t advance_every; /* events between advances, about (0: never) */
	size_t want_held;     /* at least this many held at once (0: no check) */
	bool want_limit;      /* the size limit must release */
};

static void model_run(const struct model_cfg *c)
{
	char *dir = tu_tmpdir();
	const char *p = tu_path(dir, "model.btape", 0);
	struct btape_writer_opts o = {.sz = sizeof(o), .reorder_max_events = c->max,
				      .chunk_events = c->chunk_events};
	struct model m = {.pend = malloc(c->nev * sizeof(*m.pend)), .out = malloc(c->nev * 8),
			  .max = c->max, .lo = UINT64_MAX};
	struct btape_event *orig = malloc(c->nev * sizeof(*orig));
	struct btape_writer *w;
	struct btape_reader *r;
	struct btape_meta meta;
	struct btape_event ev;
	uint64_t seed = c->seed, base = 1000000, n = 0;
	char msg[BTAPE_ERRMSG_LEN];

	assert_non_null(m.pend);
	assert_non_null(m.out);
	assert_non_null(orig);
	tu_meta(&meta, 4);
	assert_int_equal(btape_writer__open(&w, p, &meta, &o, NULL, 0), 0);
	for (uint64_t id = 0; id < c->nev; id++) {
		uint64_t x = tu_rand(&seed), k;

		if (x % 11 == 0 && m.wm)
			k = m.wm; /* exactly the watermark: held, not late */
		else if (x % 5 == 0)
			k = base + (tu_rand(&seed) % 8) * 1000; /* a tie with a recent key */
		else
			k = base + (tu_rand(&seed) & ((1ull << c->span_bits) - 1));
		tu_random_event(&seed, &orig[id], k, x % 3 == 0);
		orig[id].sector = id;
		assert_int_equal(btape_writer__add(w, &orig[id]), 0);
		if (k < m.wm && m.lo >= m.wm) {
			m.out[m.nout++] = id;
		} else {
			m.pend[m.n++] = (struct model_ev){k, id};
			m.lo = k < m.lo ? k : m.lo;
			m.hi = k > m.hi ? k : m.hi;
			if (m.n > m.most_held)
				m.most_held = m.n;
			if (m.n > m.max)
				model_release(&m, false);
		}
		if (c->advance_every && tu_rand(&seed) % c->advance_every == 0) {
			uint64_t t;

			if (x % 4 == 0 && m.n)
				t = m.hi + 1; /* past everything held */
			else if (x % 4 == 1 && m.n)
				t = m.pend[tu_rand(&seed) % m.n].key; /* exactly a held key */
			else
				t = base + tu_rand(&seed) % ((1ull << c->span_bits) + 8000);
			assert_int_equal(btape_writer__advance(w, t), 0);
			if (t > m.wm)
				m.wm = t;
			model_release(&m, false);
			if (x % 3 == 0 && base < m.wm)
				base = m.wm; /* time moves on */
		}
		if (tu_rand(&seed) % 20000 == 0) {
			assert_int_equal(btape_writer__flush(w), 0);
			model_release(&m, true);
		}
	}
	model_release(&m, true);
	assert_int_equal(btape_writer__close(w, NULL, 0), 0);
	assert_int_equal(m.nout, c->nev);
	if (m.most_held < c->want_held)
		fail_msg("run %" PRIu64 ": at most %zu events held, it needs %zu", c->seed,
			 m.most_held, c->want_held);
	if (c->want_limit && !m.limit_releases)
		fail_msg("run %" PRIu64 ": the size limit never released", c->seed);

	assert_int_equal(btape_reader__open(&r, p, msg, sizeof(msg)), 0);
	while (btape_reader__next(r, &ev) == 1) {
		assert_true(n < c->nev);
		if (ev.sector != m.out[n])
			fail_msg("event %" PRIu64 ": sector %" PRIu64 ", model %" PRIu64, n,
				 ev.sector, m.out[n]);
		if (tu_event_cmp(&ev, &orig[m.out[n]]))
			fail_msg("event %" PRIu64 " (sector %" PRIu64 "): fields differ", n,
				 ev.sector);
		n++;
	}
	assert_int_equal(n, c->nev);
	btape_reader__close(r);
	btape_meta_free(&meta);
	free(m.pend);
	free(m.out);
	free(orig);
	tu_cleanup_dir(dir);
}

static void test_reorder_model(void **state)
{
	static const struct model_cfg runs[] = {
		/* short lists: insertion sort and 8-bit digits */
		{.seed = 1, .nev = 3000, .max = 1u << 20, .span_bits = 12, .advance_every = 97},
		/* 11-bit digits, two and three passes */
		{.seed = 2, .nev = 40000, .max = 1u << 20, .span_bits = 20, .advance_every = 6000,
		 .want_held = 4096},
		{.seed = 3, .nev = 40000, .max = 1u << 20, .span_bits = 30, .advance_every = 6000,
		 .want_held = 4096},
		/* keys 2^56 apart: six passes */
		{.seed = 4, .nev = 20000, .max = 1u << 20, .span_bits = 56, .advance_every = 6000,
		 .want_held = 4096},
		/* the size limit, hit again and again, below and above the radix threshold */
		{.seed = 5, .nev = 20000, .max = 100, .span_bits = 30, .advance_every = 400,
		 .want_limit = true},
		{.seed = 6, .nev = 30000, .max = 5000, .span_bits = 40, .advance_every = 20000,
		 .want_held = 5001, .want_limit = true},
		/* limits of one to four events */
		{.seed = 7, .nev = 2000, .max = 1, .span_bits = 16, .advance_every = 97, .want_limit = true},
		{.seed = 8, .nev = 2000, .max = 2, .span_bits = 16, .advance_every = 97, .want_limit = true},
		{.seed = 9, .nev = 2000, .max = 3, .span_bits = 16, .advance_every = 97, .want_limit = true},
		{.seed = 10, .nev = 2000, .max = 4, .span_bits = 16, .advance_every = 97, .want_limit = true},
		/* no watermark at all: only the limit and the flushes release */
		{.seed = 11, .nev = 20000, .max = 6000, .span_bits = 24, .want_held = 6001,
		 .want_limit = true},
		/* small chunks: a chunk is written in the middle of a release */
		{.seed = 12, .nev = 20000, .max = 1u << 20, .span_bits = 20, .chunk_events = 7,
		 .advance_every = 97},
		{.seed = 13, .nev = 20000, .max = 3000, .span_bits = 20, .chunk_events = 257,
		 .advance_every = 5000, .want_limit = true},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++)
		model_run(&runs[i]);
}

static void test_tmp_rename_abort(void **state)
{
	char *dir = tu_tmpdir();
	const char *p = tu_path(dir, "t.btape", 0);
	struct btape_writer *w;
	struct btape_event e = {.issue_ns = 1};
	struct stat st;
	char why[BTAPE_ERRMSG_LEN];
	size_t len;
	uint8_t *d;

	/* abort leaves nothing */
	assert_int_equal(btape_writer__open(&w, p, NULL, NULL, NULL, 0), 0);
	assert_int_equal(btape_writer__add(w, &e), 0);
	assert_int_equal(count_files(dir), 1); /* the temp file */
	assert_int_equal(stat(p, &st), -1);
	btape_writer__abort(w);
	assert_int_equal(count_files(dir), 0);
	btape_writer__abort(NULL);

	/* an existing PATH is untouched until close, then replaced */
	assert_int_equal(tu_write_file(p, "old", 3), 0);
	assert_int_equal(btape_writer__open(&w, p, NULL, NULL, NULL, 0), 0);
	assert_int_equal(btape_writer__add(w, &e), 0);
	assert_int_equal(btape_writer__flush(w), 0);
	d = tu_read_file(p, &len);
	assert_int_equal(len, 3);
	free(d);
	btape_writer__abort(w);
	d = tu_read_file(p, &len);
	assert_int_equal(len, 3);
	free(d);
	assert_int_equal(btape_writer__open(&w, p, NULL, NULL, NULL, 0), 0);
	assert_int_equal(btape_writer__add(w, &e), 0);
	assert_int_equal(count_files(dir), 2);
	assert_int_equal(btape_writer__close(w, NULL, 0), 0);
	assert_int_equal(count_files(dir), 1);
	d = tu_read_file(p, &len);
	assert_true(len > 3 && !memcmp(d + 8, btape_file_magic, 8));
	free(d);

	/* failure to create names the path */
	assert_true(btape_writer__open(&w, "/nonexistent-dir/x.btape", NULL, NULL, why,
				       sizeof(why)) < 0);
	assert_null(w);
	assert_non_null(strstr(why, "/nonexistent-dir/x.btape"));
	/* invalid events are refused */
	assert_int_equal(btape_writer__open(&w, p, NULL, NULL, NULL, 0), 0);
	e.op = BTAPE_OP__COUNT;
	assert_int_equal(btape_writer__add(w, &e), -EINVAL);
	e.op = 0;
	e.present = BTAPE_HAS_COMM;
	e.comm = NULL;
	assert_int_equal(btape_writer__add(w, &e), -EINVAL);
	btape_writer__abort(w);
	tu_cleanup_dir(dir);
}

static void test_direct_sigkill(void **state)
{
	char *dir = tu_tmpdir();
	const char *p = tu_path(dir, "k.btape", 0);
	struct btape_reader *r;
	struct btape_summary s = {.sz = sizeof(s)};
	struct btape_event ev;
	char m[BTAPE_ERRMSG_LEN];
	pid_t pid;
	int status, n = 0;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct btape_writer_opts o = {.sz = sizeof(o), .chunk_events = 10};
		struct btape_writer *w;

		if (btape_writer__open_direct(&w, p, NULL, &o, NULL, 0))
			_exit(3);
		for (uint64_t i = 0; i < 105; i++) {
			struct btape_event e = {.issue_ns = i};

			btape_writer__add(w, &e);
			btape_writer__advance(w, i + 1);
		}
		raise(SIGKILL);
		_exit(4);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(btape_reader__open(&r, p, m, sizeof(m)), 0);
	while (btape_reader__next(r, &ev) == 1) {
		assert_int_equal(ev.issue_ns, (uint64_t)n);
		n++;
	}
	assert_int_equal(n, 100); /* 10 complete chunks; the 5 pending events are lost */
	assert_int_equal(btape_reader__summary(r, &s), 0);
	assert_false(s.has_footer);
	assert_true(s.recovered);
	assert_int_equal(s.events, 100);
	assert_int_equal(s.chunks, 10);
	btape_reader__close(r);
	tu_cleanup_dir(dir);
}

static void test_pipe_and_fd(void **state)
{
	char *dir = tu_tmpdir();
	const char *p = tu_path(dir, "p.btape", 0);
	struct btape_reader *r;
	struct btape_summary s = {.sz = sizeof(s)};
	struct btape_event ev;
	char m[BTAPE_ERRMSG_LEN];
	int fds[2], status, n = 0, fd;
	pid_t pid;
	struct btape_writer *w;

	/* writer on an fd */
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(btape_writer__open_fd(&w, fd, NULL, NULL, NULL, 0), 0);
	for (uint64_t i = 0; i < 3000; i++) {
		struct btape_event e = {.issue_ns = i * 3};

		assert_int_equal(btape_writer__add(w, &e), 0);
	}
	assert_int_equal(btape_writer__close(w, NULL, 0), 0);
	assert_int_equal(close(fd), 0);

	/* reader on a pipe: no seeking, footer read at the end */
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		size_t len;
		uint8_t *d = tu_read_file(p, &len);
		size_t off = 0;

		close(fds[0]);
		while (d && off < len) {
			ssize_t k = write(fds[1], d + off, len - off > 100 ? 100 : len - off);

			if (k <= 0)
				_exit(1);
			off += (size_t)k;
		}
		_exit(0);
	}
	close(fds[1]);
	assert_int_equal(btape_reader__open_fd(&r, fds[0], m, sizeof(m)), 0);
	assert_int_equal(btape_reader__summary(r, &s), -ESPIPE);
	assert_int_equal(btape_reader__seek(r, 300), 0);
	while (btape_reader__next(r, &ev) == 1) {
		assert_int_equal(ev.issue_ns, 300 + (uint64_t)n * 3);
		n++;
	}
	assert_int_equal(n, 3000 - 100);
	assert_int_equal(btape_reader__verify(r), -ESPIPE);
	/* the footer arrived at the end of the stream */
	assert_int_equal(btape_reader__summary(r, &s), 0);
	assert_true(s.has_footer);
	assert_int_equal(s.events, 3000);
	btape_reader__close(r);
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	tu_cleanup_dir(dir);
}

static void test_flush_interval(void **state)
{
	char *dir = tu_tmpdir();
	const char *p = tu_path(dir, "f.btape", 0);
	struct btape_writer_opts o = {.sz = sizeof(o), .flush_interval_ns = 1};
	struct btape_writer *w;
	struct btape_reader *r;
	struct btape_summary s = {.sz = sizeof(s)};
	char m[BTAPE_ERRMSG_LEN];
	struct timespec ts = {0, 1000};

	assert_int_equal(btape_writer__open(&w, p, NULL, &o, NULL, 0), 0);
	for (uint64_t i = 0; i < 10; i++) {
		struct btape_event e = {.issue_ns = i};

		assert_int_equal(btape_writer__add(w, &e), 0);
		nanosleep(&ts, NULL);
		assert_int_equal(btape_writer__advance(w, i + 1), 0);
	}
	assert_true(btape_writer__bytes(w) > 0);
	assert_int_equal(btape_writer__close(w, NULL, 0), 0);
	assert_int_equal(btape_reader__open(&r, p, m, sizeof(m)), 0);
	assert_int_equal(btape_reader__summary(r, &s), 0);
	assert_int_equal(s.events, 10);
	assert_int_equal(s.chunks, 10); /* each advance found its chunk older than 1 ns */
	assert_int_equal(s.lost_events, 0);
	btape_reader__close(r);
	tu_cleanup_dir(dir);
}

static void test_write_errors(void **state)
{
	struct btape_writer_opts o = {.sz = sizeof(o), .chunk_events = 4};
	struct btape_writer *w = NULL;
	char why[BTAPE_ERRMSG_LEN];
	int fd = open("/dev/full", O_WRONLY);

	if (fd < 0)
		skip();
	/* the header write fails: open reports it, nothing leaks */
	assert_int_equal(btape_writer__open_fd(&w, fd, NULL, &o, why, sizeof(why)), -ENOSPC);
	assert_null(w);
	assert_non_null(strstr(why, "No space left"));
	close(fd);
	/* an invalid fd */
	assert_int_equal(btape_writer__open_fd(&w, -1, NULL, NULL, NULL, 0), -EBADF);
	assert_int_equal(btape_writer__close(NULL, NULL, 0), -EINVAL);
	assert_int_equal(btape_writer__add(NULL, NULL), -EINVAL);
}

/* btape.h's error rule: a caller buffer for what leaves no object, truncated to fit, and no
 * shared state (one failure never rewrites the message of another). */
static void test_error_messages(void **state)
{
	char *dir = tu_tmpdir();
	const char *p = tu_path(dir, "big.btape", 0);
	struct btape_meta meta = {0};
	struct btape_reader *r = NULL;
	struct btape_writer *w = NULL;
	char a[BTAPE_ERRMSG_LEN], b[BTAPE_ERRMSG_LEN], tiny[8];

	(void)state;
	assert_int_equal(btape_reader__open(&r, tu_path(dir, "first", 1), a, sizeof(a)), -ENOENT);
	assert_int_equal(btape_reader__open(&r, tu_path(dir, "second", 1), b, sizeof(b)), -ENOENT);
	assert_non_null(strstr(a, "first: No such file"));
	assert_non_null(strstr(b, "second: No such file"));
	assert_int_equal(btape_reader__open(&r, tu_path(dir, "first", 1), tiny, sizeof(tiny)),
			 -ENOENT);
	assert_int_equal(strlen(tiny), sizeof(tiny) - 1);
	assert_int_equal(btape_reader__open(&r, tu_path(dir, "first", 1), NULL, 0), -ENOENT);
	assert_int_equal(btape_reader__open(NULL, "x", a, sizeof(a)), -EINVAL);
	assert_string_equal(a, "invalid argument");

	/* a device table past the format's limit is named as such, not "out of memory" */
	meta.ndevices = BTAPE_DEVICES_MAX + 1;
	meta.devices = calloc(meta.ndevices, sizeof(*meta.devices));
	assert_non_null(meta.devices);
	assert_int_equal(btape_writer__open(&w, p, &meta, NULL, a, sizeof(a)), -E2BIG);
	assert_null(w);
	assert_non_null(strstr(a, "metadata too large: 65537 devices"));
	assert_null(strstr(a, "out of memory"));
	assert_int_equal(access(p, F_OK), -1);
	meta.ndevices = 1;
	meta.ntags = BTAPE_TAGS_MAX + 1;
	meta.tags = calloc(meta.ntags, sizeof(*meta.tags));
	assert_non_null(meta.tags);
	assert_int_equal(btape_writer__open_direct(&w, p, &meta, NULL, b, sizeof(b)), -E2BIG);
	assert_non_null(strstr(b, "4097 tags"));
	assert_int_equal(access(p, F_OK), -1); /* the file it created is removed again */
	btape_meta_free(&meta);
	tu_cleanup_dir(dir);
}

static void test_lost_accounting(void **state)
{
	char *dir = tu_tmpdir();
	const char *p = tu_path(dir, "l.btape", 0);
	struct btape_reader *r;
	struct btape_summary s = {.sz = sizeof(s)};
	char m[BTAPE_ERRMSG_LEN];

	write_simple(p, 10, 0);
	assert_int_equal(btape_reader__open(&r, p, m, sizeof(m)), 0);
	assert_int_equal(btape_reader__summary(r, &s), 0);
	assert_int_equal(s.lost_ringbuf, 5);
	assert_int_equal(s.lost_inflight, 6);
	assert_int_equal(s.lost_writer, 7);
	assert_int_equal(s.lost_events, 18);
	assert_int_equal(s.file_bytes, btape_reader__summary(r, &s) == 0 ? s.file_bytes : 0);
	btape_reader__close(r);
	tu_cleanup_dir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_foreign_and_version),
		cmocka_unit_test(test_flip_every_byte),
		cmocka_unit_test(test_truncate_every_offset),
		cmocka_unit_test(test_unknown_keys_and_frames),
		cmocka_unit_test(test_seek),
		cmocka_unit_test(test_chunk_info),
		cmocka_unit_test(test_reorder_watermark),
		cmocka_unit_test(test_order_violations),
		cmocka_unit_test(test_reorder_model),
		cmocka_unit_test(test_tmp_rename_abort),
		cmocka_unit_test(test_direct_sigkill),
		cmocka_unit_test(test_pipe_and_fd),
		cmocka_unit_test(test_flush_interval),
		cmocka_unit_test(test_lost_accounting),
		cmocka_unit_test(test_write_errors),
		cmocka_unit_test(test_error_messages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
