// SPDX-License-Identifier: GPL-2.0-only
/*
 * The chunk decoder against an independent reference decoder. Random hand-built chunks: every
 * column kind (raw, zigzag, delta; the sector prediction has its own tests), widths 0-8, shifts,
 * bases and origins; presence constant, random, in runs or half and half; values mostly in
 * range, or anything (a quarter of the chunks). They are decoded as the reader does: one
 * decoder and one 256-event slice kept across chunks, a skip mask and a slice size that change
 * from call to call, the decoder freed after an error. For every event: each decoded field
 * equals the reference's, skipped fields read 0 (comm NULL), an out-of-range value in a
 * decoded column (or an extent past btape_extent_ok) is reported, and no error comes from a
 * skipped column alone.
 * (Written by an independent reviewer of btape_reader__skip_fields, then tidied.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <msgpack.h>

#include "btape.h"
#include "btape_internal.h"
#include "test_util.h"

#define NCOLS 18
#define MAX_EVENTS 1400
#define CHUNKS 3000

/* The chunk columns in order; the first six are always present. */
enum { P_PRESENT, P_ISSUE, P_DEV, P_OP, P_BYTES, P_SECTOR, P_COMPLETE, P_INSERT, P_COMM = 12 };
static const char *const names[NCOLS] = {
	"present", "issue", "dev", "op",  "bytes", "sector", "complete", "insert",
	"flags",   "error", "pid", "tid", "comm",  "cgroup", "cpu",	 "qd",
	"wake",	   "slept",
};
static const uint32_t bits[NCOLS] = {
	0,		  0,		    0,		     0,
	0,		  0,		    BTAPE_HAS_COMPLETE, BTAPE_HAS_INSERT,
	BTAPE_HAS_FLAGS,  BTAPE_HAS_ERROR,  BTAPE_HAS_PID,	     BTAPE_HAS_TID,
	BTAPE_HAS_COMM,	  BTAPE_HAS_CGROUP, BTAPE_HAS_CPU,	     BTAPE_HAS_QD,
	BTAPE_HAS_WAKE,	  BTAPE_HAS_WAKE,
};
static const char *const comms[4] = {"a", "bb", "ccc", "dddd"};

static uint64_t rs = 88172645463325252ull;

static uint64_t rnd(void)
{
	return tu_rand(&rs);
}

/* One column as written: codec, byte planes, and the values the decoder must produce. */
struct rcol {
	unsigned int kind, width, shift;
	uint64_t base, origin;
	uint32_t m;
	uint8_t *planes;
	uint64_t *t; /* after shift, base and the kind's transform */
};

static struct rcol cols[NCOLS];
static uint32_t ncomms;

static uint64_t zz(uint64_t u)
{
	return (u >> 1) ^ -(u & 1);
}

static void set_values(struct rcol *r, const uint64_t *raw)
{
	uint64_t prev = r->origin;

	for (uint32_t j = 0; j < r->m; j++) {
		uint64_t x = (raw[j] << r->shift) + r->base;

		for (unsigned int b = 0; b < r->width; b++)
			r->planes[j + (size_t)b * r->m] = (uint8_t)(raw[j] >> (8 * b));
		if (r->kind == COL_ZIGZAG)
			x = zz(x);
		else if (r->kind == COL_DELTA)
			x = prev += zz(x);
		r->t[j] = x;
	}
}

static void col_alloc(struct rcol *r, uint32_t m)
{
	free(r->planes);
	free(r->t);
	r->m = m;
	r->planes = malloc((size_t)r->width * m + 1);
	r->t = malloc(sizeof(*r->t) * (m + 1));
	assert_non_null(r->planes);
	assert_non_null(r->t);
}

/* A random column c of m values; wild = 0 keeps the small columns mostly in range. */
static void gen_col(int c, uint32_t m, int wild)
{
	static const unsigned int widths[9] = {0, 0, 1, 1, 2, 3, 4, 5, 8};
	struct rcol *r = &cols[c];
	uint64_t *raw = malloc(sizeof(*raw) * (m + 1));

	assert_non_null(raw);
	r->kind = (unsigned int)(rnd() % 3); /* raw, zigzag, delta */
	r->width = widths[rnd() % 9];
	r->shift = rnd() % 8 == 0 ? (unsigned int)(rnd() % 5) : 0;
	r->base = rnd() % 4 == 0 ? rnd() % 1000 : 0;
	r->origin = rnd() % 3 == 0 ? rnd() : rnd() % 100;
	if (!wild && c != P_ISSUE && c != P_COMPLETE && c != P_INSERT && c != P_BYTES &&
	    c != P_SECTOR && c != 13 /* cgroup */ && c != 16 /* wake */ && c != 17 /* slept */) {
		if (r->width > 2)
			r->width = (unsigned int)(rnd() % 3);
		if (r->kind == COL_DELTA)
			r->origin = rnd() % 50;
		if (rnd() % 4)
			r->kind = COL_RAW;
	}
	if (!wild && c == P_OP) {
		r->width = (unsigned int)(rnd() % 2);
		r->base = r->width || rnd() % 3 ? 0 : rnd() % 200;
		r->shift = 0;
		if (r->kind == COL_DELTA || (r->kind == COL_ZIGZAG && r->width))
			r->kind = COL_RAW;
	}
	if (!wild && c == P_COMM) {
		r->kind = rnd() % 2 ? COL_RAW : COL_DELTA;
		r->width = (unsigned int)(rnd() % 2);
		r->base = rnd() % ncomms;
		r->shift = rnd() % 4 == 0; /* even indexes: the decoder's shifted one-byte path */
		r->origin = 0;
		if (r->kind == COL_DELTA)
			r->width = 0, r->base = 0;
	}
	if (!wild && (c == P_BYTES || c == P_SECTOR) && rnd() % 4) {
		/* mostly within the extent limits (btape_extent_ok), as a writer's are */
		r->kind = COL_RAW;
		if (r->width > (c == P_BYTES ? 3u : 6u))
			r->width = c == P_BYTES ? 3 : 6;
	}
	col_alloc(r, m);
	for (uint32_t j = 0; j < m; j++) {
		uint64_t v = rnd();

		raw[j] = r->width >= 8 ? v : v & ((1ull << (8 * r->width)) - 1);
		if (!wild && c == P_COMM && r->width)
			raw[j] = (rnd() % ncomms) >> r->shift;
	}
	set_values(r, raw);
	free(raw);
}

/* A sane presence column (constant, random, runs of 300, half and half) for a tame chunk. */
static void gen_presence(uint32_t n)
{
	struct rcol *p = &cols[P_PRESENT];
	int style = (int)(rnd() % 4);
	uint64_t cst = rnd() & BTAPE_HAS__ALL;
	uint64_t *raw = malloc(sizeof(*raw) * (n + 1));

	assert_non_null(raw);
	p->kind = COL_RAW;
	p->shift = 0;
	p->width = style ? 2 : 0;
	p->base = style ? 0 : cst;
	col_alloc(p, n);
	for (uint32_t j = 0; j < n; j++)
		raw[j] = style == 0   ? 0
			 : style == 1 ? rnd() & 0xffff /* bits beyond BTAPE_HAS__ALL: dropped */
			 : style == 2 ? cst ^ ((j / 300) % 2 ? BTAPE_HAS__ALL : 0)
				      : (j < n / 2 ? cst : 0);
	set_values(p, raw);
	free(raw);
}

static void pack_col(msgpack_packer *pk, int c)
{
	const struct rcol *r = &cols[c];
	uint8_t *b = malloc(32 + (size_t)r->width * r->m);
	size_t len = 3;

	assert_non_null(b);
	b[0] = (uint8_t)r->kind;
	b[1] = (uint8_t)r->width;
	b[2] = (uint8_t)r->shift;
	for (int f = 0; f < 1 + (r->kind == COL_DELTA); f++) { /* base, then origin: varints */
		uint64_t x = f ? r->origin : r->base;

		while (x >= 0x80) {
			b[len++] = (uint8_t)(x | 0x80);
			x >>= 7;
		}
		b[len++] = (uint8_t)x;
	}
	memcpy(b + len, r->planes, (size_t)r->width * r->m);
	len += (size_t)r->width * r->m;
	msgpack_pack_str(pk, strlen(names[c]));
	msgpack_pack_str_body(pk, names[c], strlen(names[c]));
	msgpack_pack_bin(pk, len);
	msgpack_pack_bin_body(pk, b, len);
	free(b);
}

static struct btape_event ref[MAX_EVENTS];
static uint32_t ref_bad_ev[MAX_EVENTS]; /* per event: bit c, column c's value out of range */

/* Builds a chunk of n events into sb; fills ref[] and returns the columns with a bad value. */
static uint32_t make_chunk(msgpack_sbuffer *sb, uint32_t n, int wild)
{
	uint32_t cnt[NCOLS] = {0}, jj[NCOLS] = {0}, bad = 0;
	msgpack_packer pk;

	ncomms = 1 + (uint32_t)(rnd() % 4);
	gen_col(P_PRESENT, n, wild);
	if (!wild)
		gen_presence(n);
	for (uint32_t j = 0; j < n; j++) {
		if (cols[P_PRESENT].t[j] > UINT32_MAX)
			bad |= 1u << P_PRESENT;
		for (int c = P_COMPLETE; c < NCOLS; c++)
			cnt[c] += !!(cols[P_PRESENT].t[j] & bits[c]);
	}
	for (int c = 1; c < NCOLS; c++)
		gen_col(c, c < P_COMPLETE ? n : cnt[c], wild);
	for (uint32_t k = 0; k < n; k++) {
		struct btape_event *e = &ref[k];
		uint32_t b = 0;

		memset(e, 0, sizeof(*e));
		e->present = (uint32_t)cols[P_PRESENT].t[k] & BTAPE_HAS__ALL;
		e->issue_ns = cols[P_ISSUE].t[k];
		b |= (uint32_t)(cols[P_DEV].t[k] > UINT32_MAX) << P_DEV;
		e->dev = (uint32_t)cols[P_DEV].t[k];
		b |= (uint32_t)(cols[P_OP].t[k] > UINT8_MAX) << P_OP;
		e->op = (uint8_t)cols[P_OP].t[k];
		e->bytes = cols[P_BYTES].t[k];
		e->sector = cols[P_SECTOR].t[k];
		b |= (uint32_t)!btape_extent_ok(e->sector, e->bytes) << P_BYTES; /* the extent */
		for (int c = P_COMPLETE; c < NCOLS; c++) {
			if (!(e->present & bits[c]))
				continue;
			uint64_t v = cols[c].t[jj[c]++];
			bool over32 = v > UINT32_MAX;

			switch (c) {
			case P_COMPLETE:
				e->complete_ns = cols[c].kind == COL_DELTA ? v : e->issue_ns + v;
				break;
			case P_INSERT:
				e->insert_ns = e->issue_ns - v;
				break;
			case 8:
				b |= (uint32_t)over32 << c;
				e->flags = (uint32_t)v;
				break;
			case 9:
				b |= (uint32_t)((int64_t)v < INT32_MIN || (int64_t)v > INT32_MAX) << c;
				e->error = (int32_t)(int64_t)v;
				break;
			case 10:
				b |= (uint32_t)over32 << c;
				e->pid = (uint32_t)v;
				break;
			case 11:
				b |= (uint32_t)over32 << c;
				e->tid = (uint32_t)v;
				break;
			case P_COMM:
				b |= (uint32_t)(v >= ncomms) << c;
				e->comm = v < ncomms ? comms[v] : NULL;
				break;
			case 13:
				e->cgroup = v;
				break;
			case 14:
				b |= (uint32_t)over32 << c;
				e->cpu = (uint32_t)v;
				break;
			case 16:
				e->wake_ns = e->issue_ns - v;
				break;
			case 17:
				e->slept_ns = v;
				break;
			default:
				b |= (uint32_t)over32 << c;
				e->qd = (uint32_t)v;
				break;
			}
		}
		ref_bad_ev[k] = b;
		bad |= b;
	}
	msgpack_sbuffer_init(sb);
	msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 3);
	msgpack_pack_str(&pk, 1);
	msgpack_pack_str_body(&pk, "n", 1);
	msgpack_pack_uint32(&pk, n);
	msgpack_pack_str(&pk, 5);
	msgpack_pack_str_body(&pk, "comms", 5);
	msgpack_pack_array(&pk, ncomms);
	for (uint32_t i = 0; i < ncomms; i++) {
		msgpack_pack_str(&pk, strlen(comms[i]));
		msgpack_pack_str_body(&pk, comms[i], strlen(comms[i]));
	}
	msgpack_pack_str(&pk, 4);
	msgpack_pack_str_body(&pk, "cols", 4);
	msgpack_pack_map(&pk, NCOLS);
	for (int c = 0; c < NCOLS; c++)
		pack_col(&pk, c);
	return bad;
}

/* 0 when the decoded event g matches the reference w under skip mask skip. */
static int mismatch(const struct btape_event *g, const struct btape_event *w, uint32_t skip)
{
#define FIELD(bit, f)                                       \
	do {                                                \
		if ((skip & (bit)) ? g->f != 0 : g->f != w->f) \
			return 1;                           \
	} while (0)
	if (g->present != w->present || g->issue_ns != w->issue_ns || g->dev != w->dev ||
	    g->op != w->op || g->bytes != w->bytes || g->sector != w->sector)
		return 1;
	FIELD(BTAPE_HAS_COMPLETE, complete_ns);
	FIELD(BTAPE_HAS_INSERT, insert_ns);
	FIELD(BTAPE_HAS_FLAGS, flags);
	FIELD(BTAPE_HAS_ERROR, error);
	FIELD(BTAPE_HAS_PID, pid);
	FIELD(BTAPE_HAS_TID, tid);
	FIELD(BTAPE_HAS_CGROUP, cgroup);
	FIELD(BTAPE_HAS_CPU, cpu);
	FIELD(BTAPE_HAS_QD, qd);
	FIELD(BTAPE_HAS_WAKE, wake_ns);
	FIELD(BTAPE_HAS_WAKE, slept_ns);
#undef FIELD
	if (skip & BTAPE_HAS_COMM)
		return g->comm != NULL;
	if (!g->comm || !w->comm)
		return g->comm != w->comm;
	return strcmp(g->comm, w->comm) != 0;
}

/* Whether a bad value in columns bad is visible under skip (not all in skipped columns). */
static bool visible(uint32_t bad, uint32_t skip)
{
	for (int c = P_DEV; c < NCOLS; c++)
		if ((bad & (1u << c)) && (c < P_COMPLETE || !(skip & bits[c])))
			return true;
	return false;
}

static void test_decoder_matches_reference(void **st)
{
	static struct btape_event slice[256]; /* one buffer for every call, as the reader's */
	struct chunk_dec d = {0};	      /* kept across chunks, as the reader's */
	struct btape_intern *it = btape_intern_new(1 << 20);
	uint64_t checked = 0, errors = 0, bad_chunks = 0;
	char err[256];

	(void)st;
	assert_non_null(it);
	for (int ci = 0; ci < CHUNKS; ci++) {
		msgpack_sbuffer sb;
		uint32_t n = (uint32_t)(rnd() % 5 == 0 ? rnd() % 20 : rnd() % MAX_EVENTS);
		int wild = rnd() % 4 == 0;
		uint32_t bad = make_chunk(&sb, n, wild);
		int ret = btape_chunk_dec_start(&d, (const uint8_t *)sb.data, sb.size, it, err,
						sizeof(err));

		if (ret) {
			/* a tame chunk is refused only for a presence value beyond 32 bits */
			if (!wild && !(bad & 1u << P_PRESENT))
				fail_msg("chunk %d refused: %s", ci, err);
			msgpack_sbuffer_destroy(&sb);
			continue;
		}
		if (bad & 1u << P_PRESENT)
			fail_msg("chunk %d: a presence value beyond 32 bits accepted", ci);
		bad_chunks += bad != 0;
		uint32_t got = 0, fixed = rnd() % 3 == 0 ? (uint32_t)(rnd() & BTAPE_HAS__ALL) : 0;
		bool changing = rnd() % 2;

		for (;;) {
			uint32_t skip = changing ? (uint32_t)(rnd() & BTAPE_HAS__ALL) : fixed;

			if (rnd() % 4 == 0)
				skip = 0;
			d.skip = skip;
			uint32_t max = rnd() % 3 ? 256 : 1 + (uint32_t)(rnd() % 300);
			int k = btape_chunk_dec_next(&d, slice, max, err, sizeof(err));

			if (k < 0) {
				errors++;
				if (!visible(bad, skip))
					fail_msg("chunk %d: error '%s' from skipped columns only (skip %x)",
						 ci, err, skip);
				btape_chunk_dec_free(&d);
				break;
			}
			if (k == 0)
				break;
			for (int i = 0; i < k; i++) {
				if (mismatch(&slice[i], &ref[got + i], skip))
					fail_msg("chunk %d event %u differs (skip %x, wild %d)", ci,
						 got + (uint32_t)i, skip, wild);
				if (visible(ref_bad_ev[got + i], skip))
					fail_msg("chunk %d event %u: an out-of-range value not reported",
						 ci, got + (uint32_t)i);
				checked++;
			}
			got += (uint32_t)k;
		}
		msgpack_sbuffer_destroy(&sb);
	}
	printf("%llu events checked, %llu chunks with a bad value, %llu errors\n",
	       (unsigned long long)checked, (unsigned long long)bad_chunks,
	       (unsigned long long)errors);
	assert_true(checked > 100000 && errors > 100); /* both paths were exercised */
	btape_chunk_dec_free(&d);
	btape_intern_free(it);
	for (int c = 0; c < NCOLS; c++) {
		free(cols[c].planes);
		free(cols[c].t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decoder_matches_reference),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
