// SPDX-License-Identifier: GPL-2.0-only
/*
 * libbiotape: btape_reader__skip_fields. Events with every field (random wide values, constant
 * runs, partial presence, completions coded as deltas) are written in small chunks and read
 * back under several masks, and with the mask changed between batches: skipped fields read as
 * 0, the presence bits stay as written, every other field is exact.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <msgpack.h>

#include "btape.h"
#include "btape_internal.h"
#include "test_util.h"

#define SEG_EVENTS 1500	 /* events per segment: several chunks and decode slices each */
#define CHUNK_EVENTS 700 /* not a multiple of the decoder's slice */
#define NSEG 5

/* Process names of the last decode_chunk (its events point there). */
static struct btape_intern *hand_it;

static const char *const comms[] = {"fio", "postgres", "kworker/u8:3", "jbd2/vda1-8"};

/*
 * Segment seg of the test trace, issue times from *t on: 0 random values in every field,
 * 1 constant fields, 2 random presence, 3 completions at a steady pace while latencies vary
 * (the writer codes them as deltas), 4 no optional field at all.
 */
static void make_segment(uint64_t *rs, struct btape_event *evs, int seg, uint64_t *t)
{
	for (size_t i = 0; i < SEG_EVENTS; i++) {
		struct btape_event *e = &evs[i];
		uint64_t jitter = tu_rand(rs) % 900;

		*t += 1000;
		switch (seg) {
		case 0:
			tu_random_event(rs, e, *t, true);
			e->cgroup = tu_rand(rs); /* 8-byte planes */
			e->tid = (uint32_t)tu_rand(rs);
			e->cpu = (uint32_t)(tu_rand(rs) % 70000);
			e->error = (int32_t)tu_rand(rs); /* wide zigzag codes */
			break;
		case 1:
			tu_random_event(rs, e, *t, true);
			e->flags = BTAPE_FLAG_SYNC;
			e->error = -5;
			e->pid = 42;
			e->tid = 43;
			e->comm = comms[0];
			e->cgroup = 1ull << 40;
			e->cpu = 3;
			e->qd = 7;
			break;
		case 2:
			tu_random_event(rs, e, *t, false);
			break;
		case 3:
			tu_random_event(rs, e, *t + jitter, true);
			e->complete_ns = *t + 1000000;
			e->comm = comms[tu_rand(rs) % 4];
			break;
		default:
			tu_random_event(rs, e, *t, false);
			e->present = 0;
			break;
		}
	}
}

static char *write_trace(struct btape_event *evs, size_t n)
{
	char *dir = tu_tmpdir();
	struct btape_writer_opts o = {.sz = sizeof(o), .chunk_events = CHUNK_EVENTS};
	struct btape_writer *w;
	struct btape_meta meta;

	assert_non_null(dir);
	tu_meta(&meta, 4);
	assert_int_equal(btape_writer__open(&w, tu_path(dir, "t.btape", 0), &meta, &o, NULL, 0), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(btape_writer__add(w, &evs[i]), 0);
	assert_int_equal(btape_writer__close(w, NULL, 0), 0);
	btape_meta_free(&meta);
	return dir;
}

/* What the reader must give for event a read with skip mask m: 0 for skipped or absent. */
static void expect(const struct btape_event *a, uint32_t m, struct btape_event *x)
{
	uint32_t keep = a->present & ~m;

	*x = *a;
	x->complete_ns = (keep & BTAPE_HAS_COMPLETE) ? a->complete_ns : 0;
	x->insert_ns = (keep & BTAPE_HAS_INSERT) ? a->insert_ns : 0;
	x->flags = (keep & BTAPE_HAS_FLAGS) ? a->flags : 0;
	x->error = (keep & BTAPE_HAS_ERROR) ? a->error : 0;
	x->pid = (keep & BTAPE_HAS_PID) ? a->pid : 0;
	x->tid = (keep & BTAPE_HAS_TID) ? a->tid : 0;
	x->comm = (keep & BTAPE_HAS_COMM) ? a->comm : NULL;
	x->cgroup = (keep & BTAPE_HAS_CGROUP) ? a->cgroup : 0;
	x->cpu = (keep & BTAPE_HAS_CPU) ? a->cpu : 0;
	x->qd = (keep & BTAPE_HAS_QD) ? a->qd : 0;
}

static void check_event(const struct btape_event *got, const struct btape_event *want, uint32_t m,
			size_t i)
{
	struct btape_event x;

	expect(want, m, &x);
	if (got->present != x.present || got->issue_ns != x.issue_ns || got->dev != x.dev ||
	    got->op != x.op || got->sector != x.sector || got->bytes != x.bytes ||
	    got->complete_ns != x.complete_ns || got->insert_ns != x.insert_ns ||
	    got->flags != x.flags || got->error != x.error || got->pid != x.pid ||
	    got->tid != x.tid || got->cgroup != x.cgroup || got->cpu != x.cpu || got->qd != x.qd ||
	    (!got->comm) != (!x.comm) || (x.comm && strcmp(got->comm, x.comm))) {
		fprintf(stderr, "event %zu, mask 0x%x: differs\n", i, m);
		fail();
	}
}

struct trace {
	struct btape_event *evs;
	size_t n;
	char *dir;
};

static int setup(void **state)
{
	struct trace *tr = calloc(1, sizeof(*tr));
	uint64_t rs = 0x5eed, t = 1000000000;

	assert_non_null(tr);
	tr->n = (size_t)NSEG * 2 * SEG_EVENTS;
	tr->evs = calloc(tr->n, sizeof(*tr->evs));
	assert_non_null(tr->evs);
	/* every kind twice, in an order that changes kind inside chunks */
	for (int k = 0; k < 2 * NSEG; k++)
		make_segment(&rs, tr->evs + (size_t)k * SEG_EVENTS, (k * 3) % NSEG, &t);
	tr->dir = write_trace(tr->evs, tr->n);
	*state = tr;
	return 0;
}

static int teardown(void **state)
{
	struct trace *tr = *state;

	btape_intern_free(hand_it);
	tu_cleanup_dir(tr->dir);
	free(tr->evs);
	free(tr);
	return 0;
}

static struct btape_reader *open_trace(const struct trace *tr)
{
	struct btape_reader *r = NULL;
	char msg[BTAPE_ERRMSG_LEN];

	assert_int_equal(btape_reader__open(&r, tu_path(tr->dir, "t.btape", 0), msg, sizeof(msg)),
			 0);
	return r;
}

static void test_masks(void **state)
{
	const struct trace *tr = *state;
	uint32_t masks[4 + 10] = {0, BTAPE_HAS__ALL,
				  BTAPE_HAS_TID | BTAPE_HAS_CPU | BTAPE_HAS_CGROUP |
					  BTAPE_HAS_FLAGS,
				  BTAPE_HAS__ALL & ~BTAPE_HAS_COMM};

	for (int b = 0; b < 10; b++)
		masks[4 + b] = 1u << b;
	for (size_t mi = 0; mi < sizeof(masks) / sizeof(masks[0]); mi++) {
		struct btape_reader *r = open_trace(tr);
		const struct btape_event *b;
		struct btape_event ev;
		size_t i = 0;
		int n;

		assert_int_equal(btape_reader__skip_fields(r, masks[mi]), 0);
		/* half through __next, half in batches */
		for (; i < tr->n / 2; i++) {
			assert_int_equal(btape_reader__next(r, &ev), 1);
			check_event(&ev, &tr->evs[i], masks[mi], i);
		}
		while ((n = btape_reader__next_batch(r, &b)) > 0) {
			assert_true(i + (size_t)n <= tr->n);
			for (int k = 0; k < n; k++, i++)
				check_event(&b[k], &tr->evs[i], masks[mi], i);
		}
		assert_int_equal(n, 0);
		assert_int_equal(i, tr->n);
		btape_reader__close(r);
	}
}

/* A new mask between batches, in the middle of chunks: resumed columns go on exactly. */
static void test_mask_changes(void **state)
{
	const struct trace *tr = *state;

	for (uint64_t seed = 1; seed <= 8; seed++) {
		struct btape_reader *r = open_trace(tr);
		const struct btape_event *b;
		uint64_t rs = seed * 0x9e3779b97f4a7c15ull;
		uint32_t m = (uint32_t)tu_rand(&rs) & BTAPE_HAS__ALL;
		size_t i = 0;
		int n;

		assert_int_equal(btape_reader__skip_fields(r, m), 0);
		while ((n = btape_reader__next_batch(r, &b)) > 0) {
			assert_true(i + (size_t)n <= tr->n);
			for (int k = 0; k < n; k++, i++)
				check_event(&b[k], &tr->evs[i], m, i);
			/* often everything on or off, so that every column resumes somewhere */
			switch (tu_rand(&rs) % 4) {
			case 0:
				m = 0;
				break;
			case 1:
				m = BTAPE_HAS__ALL;
				break;
			default:
				m = (uint32_t)tu_rand(&rs) & BTAPE_HAS__ALL;
				break;
			}
			assert_int_equal(btape_reader__skip_fields(r, m), 0);
		}
		assert_int_equal(n, 0);
		assert_int_equal(i, tr->n);
		btape_reader__close(r);
	}
}

/* The mask survives a seek, and verify still checks every field. */
static void test_seek_verify(void **state)
{
	const struct trace *tr = *state;
	struct btape_reader *r = open_trace(tr);
	uint32_t m = BTAPE_HAS_COMPLETE | BTAPE_HAS_COMM | BTAPE_HAS_QD;
	size_t i = tr->n / 3;
	struct btape_event ev;

	assert_int_equal(btape_reader__skip_fields(r, m), 0);
	assert_int_equal(btape_reader__seek(r, tr->evs[i].issue_ns), 0);
	for (; i < tr->n; i++) {
		assert_int_equal(btape_reader__next(r, &ev), 1);
		check_event(&ev, &tr->evs[i], m, i);
	}
	assert_int_equal(btape_reader__next(r, &ev), 0);
	assert_int_equal(btape_reader__verify(r), 0);
	btape_reader__close(r);
}

static void test_bad_args(void **state)
{
	const struct trace *tr = *state;
	struct btape_reader *r = open_trace(tr);

	assert_int_equal(btape_reader__skip_fields(NULL, 0), -EINVAL);
	assert_int_equal(btape_reader__skip_fields(r, BTAPE_HAS__ALL + 1), -EINVAL);
	assert_int_equal(btape_reader__skip_fields(r, 1u << 31), -EINVAL);
	assert_int_equal(btape_reader__skip_fields(r, BTAPE_HAS__ALL), 0);
	btape_reader__close(r);
}

/* ---------------------------------------------------------------------------------------- */
/* Chunks made by hand, decoded directly: column kinds the writer does not produce.         */

/* Column blob: kind, width, shift 0, base, origin (delta kinds), m values in byte planes. */
static void pack_col(msgpack_packer *pk, const char *name, unsigned int kind, unsigned int width,
		     uint64_t base, uint64_t origin, const uint64_t *v, uint32_t m)
{
	uint8_t *b = malloc(32 + (size_t)width * m);
	size_t len = 3;

	assert_non_null(b);
	b[0] = (uint8_t)kind;
	b[1] = (uint8_t)width;
	b[2] = 0;
	for (int f = 0; f < 1 + (kind == COL_DELTA || kind == COL_SECTOR_PRED); f++) {
		uint64_t x = f ? origin : base;

		while (x >= 0x80) {
			b[len++] = (uint8_t)(x | 0x80);
			x >>= 7;
		}
		b[len++] = (uint8_t)x;
	}
	for (unsigned int p = 0; p < width; p++)
		for (uint32_t j = 0; j < m; j++)
			b[len++] = (uint8_t)((v[j] - base) >> (8 * p));
	msgpack_pack_str(pk, strlen(name));
	msgpack_pack_str_body(pk, name, strlen(name));
	msgpack_pack_bin(pk, len);
	msgpack_pack_bin_body(pk, b, len);
	free(b);
}

#define HAND_N 600 /* more than one decode slice */

static uint64_t hand_comm[HAND_N]; /* comm column values (the chunk names one process) */

static const char *const opt_names[] = {"complete", "insert", "flags",	"error", "pid",
					"tid",	    "comm",   "cgroup", "cpu",	 "qd",
					"wake",	    "slept"}; /* wake and slept share bit 10 */

/*
 * Chunk of HAND_N events whose presence bits are pres[] (coded as present_kind, width
 * present_width, base/origin as given), required columns 0, each optional column raw width 1
 * with 0 for every event holding it except error, coded by err_kind/err_width from err_val.
 */
static void make_chunk(msgpack_sbuffer *sb, const uint32_t *pres, unsigned int present_kind,
		       unsigned int present_width, uint64_t pbase, uint64_t porigin,
		       const uint64_t *pvals, unsigned int err_kind, unsigned int err_width,
		       uint64_t err_val)
{
	static uint64_t zero[HAND_N], errv[HAND_N];
	msgpack_packer pk;
	uint32_t m[12] = {0};

	for (uint32_t k = 0; k < HAND_N; k++)
		for (int b = 0; b < 12; b++)
			m[b] += !!(pres[k] & (1u << (b < 10 ? b : 10)));
	for (uint32_t k = 0; k < HAND_N; k++)
		errv[k] = err_val;
	msgpack_sbuffer_init(sb);
	msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 3);
	msgpack_pack_str(&pk, 1);
	msgpack_pack_str_body(&pk, "n", 1);
	msgpack_pack_uint32(&pk, HAND_N);
	msgpack_pack_str(&pk, 5);
	msgpack_pack_str_body(&pk, "comms", 5);
	msgpack_pack_array(&pk, 1);
	msgpack_pack_str(&pk, 3);
	msgpack_pack_str_body(&pk, "fio", 3);
	msgpack_pack_str(&pk, 4);
	msgpack_pack_str_body(&pk, "cols", 4);
	msgpack_pack_map(&pk, 6 + 12);
	pack_col(&pk, "present", present_kind, present_width, pbase, porigin, pvals, HAND_N);
	pack_col(&pk, "issue", COL_RAW, 0, 0, 0, zero, HAND_N);
	pack_col(&pk, "dev", COL_RAW, 0, 0, 0, zero, HAND_N);
	pack_col(&pk, "op", COL_RAW, 0, 0, 0, zero, HAND_N);
	pack_col(&pk, "bytes", COL_RAW, 0, 0, 0, zero, HAND_N);
	pack_col(&pk, "sector", COL_RAW, 0, 0, 0, zero, HAND_N);
	for (int b = 0; b < 12; b++) {
		if (b == 3)
			pack_col(&pk, opt_names[b], err_kind, err_width, 0, 0, errv, m[b]);
		else if (b == 6)
			pack_col(&pk, opt_names[b], COL_RAW, 1, 0, 0, hand_comm, m[b]);
		else
			pack_col(&pk, opt_names[b], COL_RAW, 1, 0, 0, zero, m[b]);
	}
}

/* Decodes a hand-made chunk with skip mask skip: 0 and the events, or the first error. */
static int decode_chunk(const msgpack_sbuffer *sb, uint32_t skip, struct btape_event *evs)
{
	struct btape_intern *it = btape_intern_new(1 << 20);
	struct chunk_dec d = {0};
	char err[256];
	uint32_t got = 0;
	int ret;

	assert_non_null(it);
	d.skip = skip;
	ret = btape_chunk_dec_start(&d, (const uint8_t *)sb->data, sb->size, it, err, sizeof(err));
	while (!ret) {
		int n = btape_chunk_dec_next(&d, evs + got, HAND_N - got, err, sizeof(err));

		if (n <= 0) {
			ret = n;
			break;
		}
		got += (uint32_t)n;
	}
	if (ret)
		fprintf(stderr, "hand-made chunk: %s\n", err);
	else
		assert_int_equal(got, HAND_N);
	btape_chunk_dec_free(&d);
	btape_intern_free(hand_it);
	hand_it = it;
	return ret;
}

/* Presence bits coded as deltas (constant step, and varying steps): counted right. */
static void test_delta_presence(void **state)
{
	static uint32_t pres[HAND_N];
	static uint64_t pv[HAND_N], dz[HAND_N];
	static struct btape_event evs[HAND_N];
	msgpack_sbuffer sb;
	uint64_t prev = 5;

	(void)state;
	/* width 0: every delta is +1 from origin 5 */
	for (uint32_t k = 0; k < HAND_N; k++)
		pres[k] = (uint32_t)(6 + k) & BTAPE_HAS__ALL;
	make_chunk(&sb, pres, COL_DELTA, 0, zz_enc(1), 5, dz, COL_RAW, 1, 0);
	for (uint32_t skip = 0; skip <= BTAPE_HAS__ALL; skip += BTAPE_HAS__ALL) {
		assert_int_equal(decode_chunk(&sb, skip, evs), 0);
		for (uint32_t k = 0; k < HAND_N; k++)
			assert_int_equal(evs[k].present, pres[k]);
	}
	msgpack_sbuffer_destroy(&sb);
	/* width 2: deltas in 0..300, running from origin 5 */
	for (uint32_t k = 0; k < HAND_N; k++) {
		dz[k] = zz_enc((int64_t)((k * 7919) % 301));
		prev += (uint64_t)zz_dec(dz[k]);
		pres[k] = (uint32_t)prev & BTAPE_HAS__ALL;
		pv[k] = dz[k];
	}
	make_chunk(&sb, pres, COL_DELTA, 2, 0, 5, pv, COL_RAW, 1, 0);
	assert_int_equal(decode_chunk(&sb, 0, evs), 0);
	for (uint32_t k = 0; k < HAND_N; k++)
		assert_int_equal(evs[k].present, pres[k]);
	msgpack_sbuffer_destroy(&sb);
}

/* The error column's int32 range: checked unless its coding proves it; skipped unchecked. */
static void test_error_range(void **state)
{
	static uint32_t pres[HAND_N];
	static uint64_t pv[HAND_N];
	static struct btape_event evs[HAND_N];
	const struct {
		unsigned int kind, width;
		uint64_t v;
		int ok;
		int32_t want;
	} cases[] = {
		{COL_ZIGZAG, 4, 0xffffffffull, 1, INT32_MIN},
		{COL_ZIGZAG, 4, 0xfffffffeull, 1, INT32_MAX},
		{COL_ZIGZAG, 5, 0xffffffffull, 1, INT32_MIN},
		{COL_ZIGZAG, 5, 0x100000000ull, 0, 0},
		{COL_RAW, 4, 0x7fffffffull, 1, INT32_MAX},
		{COL_RAW, 4, 0x80000000ull, 0, 0},
		{COL_RAW, 8, 0xffffffff80000000ull, 1, INT32_MIN},
		{COL_RAW, 8, 0xffffffff7fffffffull, 0, 0},
	};
	msgpack_sbuffer sb;

	(void)state;
	for (uint32_t k = 0; k < HAND_N; k++) {
		pres[k] = k % 3 ? BTAPE_HAS_ERROR | BTAPE_HAS_PID : 0;
		pv[k] = pres[k];
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		make_chunk(&sb, pres, COL_RAW, 1, 0, 0, pv, cases[i].kind, cases[i].width,
			   cases[i].v);
		assert_int_equal(decode_chunk(&sb, 0, evs), cases[i].ok ? 0 : -EBADMSG);
		for (uint32_t k = 0; cases[i].ok && k < HAND_N; k++)
			assert_int_equal(evs[k].error, pres[k] ? cases[i].want : 0);
		assert_int_equal(decode_chunk(&sb, BTAPE_HAS_ERROR, evs), 0);
		for (uint32_t k = 0; k < HAND_N; k++) {
			assert_int_equal(evs[k].error, 0);
			assert_int_equal(evs[k].present, pres[k]);
		}
		msgpack_sbuffer_destroy(&sb);
	}
}

/* A comm index past the chunk's table is an error wherever it is, unless comm is skipped. */
static void test_comm_range(void **state)
{
	static uint32_t pres[HAND_N];
	static uint64_t pv[HAND_N];
	static struct btape_event evs[HAND_N];
	msgpack_sbuffer sb;

	(void)state;
	for (int all = 0; all < 2; all++) {
		for (uint32_t bad = 0; bad < HAND_N; bad += 299) {
			uint32_t j = 0;

			for (uint32_t k = 0; k < HAND_N; k++) {
				pres[k] = all || k % 2 ? BTAPE_HAS_COMM : 0;
				pv[k] = pres[k];
				if (pres[k])
					hand_comm[j++] = k == bad || k == bad + 1;
			}
			make_chunk(&sb, pres, COL_RAW, 1, 0, 0, pv, COL_RAW, 1, 0);
			assert_int_equal(decode_chunk(&sb, 0, evs), -EBADMSG);
			assert_int_equal(decode_chunk(&sb, BTAPE_HAS_COMM, evs), 0);
			msgpack_sbuffer_destroy(&sb);
		}
	}
	memset(hand_comm, 0, sizeof(hand_comm));
	for (uint32_t k = 0; k < HAND_N; k++)
		pres[k] = BTAPE_HAS_COMM;
	for (uint32_t k = 0; k < HAND_N; k++)
		pv[k] = pres[k];
	make_chunk(&sb, pres, COL_RAW, 1, 0, 0, pv, COL_RAW, 1, 0);
	assert_int_equal(decode_chunk(&sb, 0, evs), 0);
	for (uint32_t k = 0; k < HAND_N; k++)
		assert_string_equal(evs[k].comm, "fio");
	msgpack_sbuffer_destroy(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_delta_presence), cmocka_unit_test(test_error_range),
		cmocka_unit_test(test_comm_range),     cmocka_unit_test(test_masks),
		cmocka_unit_test(test_mask_changes),   cmocka_unit_test(test_seek_verify),
		cmocka_unit_test(test_bad_args),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
