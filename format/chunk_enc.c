// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libbiotape: event chunk encoder (docs/BTAPE-FORMAT.md "Event chunk"; the layout in
 * chunk_internal.h): the writer's pending columns, the choice of coding per column, the
 * byte planes and the msgpack map.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

#include "chunk_internal.h"
#include "mp_internal.h"

static size_t put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}
static unsigned int bitlen(uint64_t v)
{
	return v ? 64 - (unsigned int)__builtin_clzll(v) : 0;
}

/*
 * Spread of a candidate coding of a column: mean absolute deviation of the values (signed when
 * zigzag coded). For similar shapes, entropy grows with log2 of the spread, so the candidate
 * with the smaller spread compresses better. Measured on evenly spaced values, SPREAD_SAMPLES
 * to 1.5 SPREAD_SAMPLES of them (the same ones for both candidates; all of them up to twice
 * SPREAD_SAMPLES): a choice between codings whose spreads differ by less than the sampling
 * error hardly changes the size.
 */
#define SPREAD_SAMPLES 4096

static double spread(const uint64_t *t, uint32_t m, bool zigzag)
{
	const uint32_t step = m > 2 * SPREAD_SAMPLES ? m / SPREAD_SAMPLES : 1;
	double mean = 0, dev = 0;
	uint32_t k = 0;

	if (!m)
		return 0;
	for (uint32_t j = 0; j < m; j += step, k++)
		mean += zigzag ? (double)zz_dec(t[j]) : (double)t[j];
	mean /= k;
	for (uint32_t j = 0; j < m; j += step) {
		double x = (zigzag ? (double)zz_dec(t[j]) : (double)t[j]) - mean;

		dev += x < 0 ? -x : x;
	}
	return dev / k;
}

/* ---------------------------------------------------------------------------------------- */
/* Encoder                                                                                  */

struct chunk_enc {
	uint64_t *t2;
	uint32_t cap;
	struct bbuf blob;
	size_t *cuts;
	size_t ncuts, cuts_cap;
	struct pred_tab pt;
};

struct chunk_enc *btape_chunk_enc_new(void)
{
	return calloc(1, sizeof(struct chunk_enc));
}

void btape_chunk_enc_free(struct chunk_enc *ce)
{
	if (!ce)
		return;
	free(ce->t2);
	free(ce->cuts);
	bbuf_free(&ce->blob);
	pred_free(&ce->pt);
	free(ce);
}

static int enc_reserve(struct chunk_enc *ce, uint32_t n)
{
	uint64_t *t2;

	if (n <= ce->cap)
		return 0;
	t2 = realloc(ce->t2, sizeof(uint64_t) * n);
	if (!t2)
		return -ENOMEM;
	ce->t2 = t2;
	ce->cap = n;
	return 0;
}

static int add_cut(struct chunk_enc *ce, size_t off)
{
	if (ce->ncuts == ce->cuts_cap) {
		size_t cap = ce->cuts_cap ? ce->cuts_cap * 2 : 64;
		size_t *c = realloc(ce->cuts, sizeof(*c) * cap);

		if (!c)
			return -ENOMEM;
		ce->cuts = c;
		ce->cuts_cap = cap;
	}
	ce->cuts[ce->ncuts++] = off;
	return 0;
}

#define PLANE_CUT_MIN 4096 /* planes at least this long start a new zstd block */

/* Packs t[0..m) (already transformed) as column `name` into the msgpack output. */
static int pack_column(struct chunk_enc *ce, msgpack_packer *pk, struct bbuf *out, const char *name,
		       unsigned int kind, uint64_t origin, const uint64_t *t, uint32_t m)
{
	uint64_t base = UINT64_MAX, or = 0, max = 0;
	unsigned int shift = 0, width = 0;
	uint8_t hdr[3 + 10 + 10];
	size_t hlen = 0, total, body_off;
	uint8_t *planes;
	int err;

	for (uint32_t j = 0; j < m; j++) {
		base = t[j] < base ? t[j] : base;
		max = t[j] > max ? t[j] : max;
	}
	if (!m)
		base = 0;
	for (uint32_t j = 0; j < m; j++)
		or |= t[j] - base;
	if (or) {
		shift = (unsigned int)__builtin_ctzll(or);
		width = (bitlen((max - base) >> shift) + 7) / 8;
	}
	hdr[hlen++] = (uint8_t)kind;
	hdr[hlen++] = (uint8_t)width;
	hdr[hlen++] = (uint8_t)shift;
	hlen += put_varint(hdr + hlen, base);
	if (kind == COL_DELTA || kind == COL_SECTOR_PRED)
		hlen += put_varint(hdr + hlen, origin);
	total = hlen + (size_t)width * m;

	btape_mp_key(pk, name);
	msgpack_pack_bin(pk, total);
	err = bbuf_reserve(out, total);
	if (err)
		return err;
	memcpy(out->p + out->len, hdr, hlen);
	body_off = out->len + hlen;
	planes = out->p + body_off;
	for (unsigned int b = 0; b < width; b++) {
		uint8_t *pl = planes + (size_t)b * m;

		for (uint32_t j = 0; j < m; j++)
			pl[j] = (uint8_t)(((t[j] - base) >> shift) >> (8 * b));
		if (m >= PLANE_CUT_MIN) {
			err = add_cut(ce, body_off + (size_t)b * m);
			if (err)
				return err;
		}
	}
	out->len += total;
	if (width && m >= PLANE_CUT_MIN)
		return add_cut(ce, out->len);
	return 0;
}

int btape_chunk_cols_init(struct chunk_cols *cc, uint32_t cap)
{
	memset(cc, 0, sizeof(*cc));
	cc->cap = cap;
	for (int c = 0; c < C__COUNT; c++) {
		cc->v[c] = malloc(sizeof(uint64_t) * (cap ? cap : 1));
		if (!cc->v[c])
			goto fail;
	}
	cc->complete_abs = malloc(sizeof(uint64_t) * (cap ? cap : 1));
	if (cc->complete_abs)
		return 0;
fail:
	btape_chunk_cols_free(cc);
	return -ENOMEM;
}

void btape_chunk_cols_free(struct chunk_cols *cc)
{
	if (!cc)
		return;
	for (int c = 0; c < C__COUNT; c++)
		free(cc->v[c]);
	free(cc->complete_abs);
	memset(cc, 0, sizeof(*cc));
}

/*
 * Column by column, so that one array is written at a time: adding an event at a time writes
 * up to 16 arrays at once, more streams than a core has line fill buffers (the per-event add
 * was a fifth of the recorder's CPU). A column the whole batch has is a plain copy loop.
 */
#define COL_PUT(dst, m, bit, expr)                                                         \
	do {                                                                               \
		if (pall & (bit)) {                                                        \
			for (uint32_t i = 0; i < n; i++)                                   \
				(dst)[(m) + i] = (expr);                                   \
			(m) += n;                                                          \
		} else if (pany & (bit)) {                                                 \
			for (uint32_t i = 0; i < n; i++)                                   \
				if (pv[i] & (bit))                                         \
					(dst)[(m)++] = (expr);                             \
		}                                                                          \
	} while (0)
#define COL_ADD(col, bit, expr) COL_PUT(cc->v[col], cc->m[col], bit, expr)

void btape_chunk_cols_add_n(struct chunk_cols *cc, const struct btape_event *const *ev,
			    const uint32_t *comm_id, uint32_t n)
{
	uint64_t *pv = cc->v[C_PRESENT] + cc->n;
	uint32_t pall = BTAPE_HAS__ALL, pany = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t p = ev[i]->present & BTAPE_HAS__ALL;

		pv[i] = p;
		pall &= p;
		pany |= p;
	}
	for (uint32_t i = 0; i < n; i++)
		cc->v[C_ISSUE][cc->n + i] = ev[i]->issue_ns;
	for (uint32_t i = 0; i < n; i++)
		cc->v[C_DEV][cc->n + i] = ev[i]->dev;
	for (uint32_t i = 0; i < n; i++)
		cc->v[C_OP][cc->n + i] = ev[i]->op;
	for (uint32_t i = 0; i < n; i++)
		cc->v[C_BYTES][cc->n + i] = ev[i]->bytes;
	for (uint32_t i = 0; i < n; i++)
		cc->v[C_SECTOR][cc->n + i] = ev[i]->sector;
	{
		uint32_t mc = cc->m[C_COMPLETE]; /* the absolute times, at the column's indexes */

		COL_PUT(cc->complete_abs, mc, BTAPE_HAS_COMPLETE, ev[i]->complete_ns);
	}
	COL_ADD(C_COMPLETE, BTAPE_HAS_COMPLETE,
		zz_enc((int64_t)(ev[i]->complete_ns - ev[i]->issue_ns)));
	COL_ADD(C_INSERT, BTAPE_HAS_INSERT, zz_enc((int64_t)(ev[i]->issue_ns - ev[i]->insert_ns)));
	COL_ADD(C_FLAGS, BTAPE_HAS_FLAGS, ev[i]->flags);
	COL_ADD(C_ERROR, BTAPE_HAS_ERROR, zz_enc(ev[i]->error));
	COL_ADD(C_PID, BTAPE_HAS_PID, ev[i]->pid);
	COL_ADD(C_TID, BTAPE_HAS_TID, ev[i]->tid);
	COL_ADD(C_COMM, BTAPE_HAS_COMM, comm_id[i]);
	COL_ADD(C_CGROUP, BTAPE_HAS_CGROUP, ev[i]->cgroup);
	COL_ADD(C_CPU, BTAPE_HAS_CPU, ev[i]->cpu);
	COL_ADD(C_QD, BTAPE_HAS_QD, ev[i]->qd);
	COL_ADD(C_WAKE, BTAPE_HAS_WAKE, zz_enc((int64_t)(ev[i]->issue_ns - ev[i]->wake_ns)));
	COL_ADD(C_SLEPT, BTAPE_HAS_WAKE, ev[i]->slept_ns);
	cc->n += n;
}

void btape_chunk_cols_add(struct chunk_cols *cc, const struct btape_event *e, uint32_t comm_id)
{
	btape_chunk_cols_add_n(cc, &e, &comm_id, 1);
}

int btape_chunk_encode_cols(struct chunk_enc *ce, struct chunk_cols *cc, const char *const *comms,
			    const uint32_t *comm_len, uint32_t ncomms, struct bbuf *out,
			    size_t **cuts, size_t *ncuts)
{
	uint64_t tmin = UINT64_MAX, tmax = 0;
	const uint32_t n = cc->n;
	const uint64_t *dev = cc->v[C_DEV], *bytes = cc->v[C_BYTES];
	msgpack_packer pk;
	int err;

	for (int c = C_PRESENT + 1; c < C__COUNT; c++)
		if (!col_bit[c])
			cc->m[c] = n;
	cc->m[C_PRESENT] = n;
	err = enc_reserve(ce, n ? n : 1);
	if (err)
		return err;
	ce->ncuts = 0;
	out->len = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t t = cc->v[C_ISSUE][i];

		tmin = t < tmin ? t : tmin;
		tmax = t > tmax ? t : tmax;
	}
	if (!n)
		tmin = 0;

	msgpack_packer_init(&pk, out, btape_mp_write);
	msgpack_pack_map(&pk, 5);
	btape_mp_key(&pk, "n");
	msgpack_pack_uint32(&pk, n);
	btape_mp_key(&pk, "issue_min");
	msgpack_pack_uint64(&pk, tmin);
	btape_mp_key(&pk, "issue_max");
	msgpack_pack_uint64(&pk, tmax);
	btape_mp_key(&pk, "comms");
	msgpack_pack_array(&pk, ncomms);
	for (uint32_t i = 0; i < ncomms; i++) {
		msgpack_pack_str(&pk, comm_len[i]);
		msgpack_pack_str_body(&pk, comms[i], comm_len[i]);
	}
	btape_mp_key(&pk, "cols");
	msgpack_pack_map(&pk, C__COUNT);
	if (!out->p)
		return -ENOMEM;

	for (int c = 0; c < C__COUNT; c++) {
		uint64_t *t = cc->v[c], origin = 0;
		unsigned int kind = COL_RAW;
		uint32_t m = cc->m[c];

		if (c == C_COMPLETE || c == C_INSERT || c == C_ERROR || c == C_WAKE)
			kind = COL_ZIGZAG;
		if (c == C_ISSUE && m) {
			uint64_t prev = origin = t[0];

			kind = COL_DELTA;
			for (uint32_t j = 0; j < m; j++) {
				uint64_t v = t[j];

				t[j] = zz_enc((int64_t)(v - prev));
				prev = v;
			}
		}
		if (c == C_COMPLETE && m) {
			/* latency, or delta from the previous completion: whichever is smaller */
			uint64_t *t2 = cc->complete_abs, prev = t2[0];

			origin = t2[0];
			for (uint32_t j = 0; j < m; j++) {
				uint64_t v = t2[j];

				t2[j] = zz_enc((int64_t)(v - prev));
				prev = v;
			}
			if (spread(t2, m, true) < spread(t, m, true)) {
				kind = COL_DELTA;
				t = t2;
			} else {
				origin = 0;
			}
		}
		if (c == C_SECTOR && m) {
			/* raw, or delta from the per-device prediction: whichever is smaller */
			uint64_t *t2 = ce->t2;

			pred_reset(&ce->pt);
			for (uint32_t j = 0; j < m; j++) {
				int64_t s = pred_slot(&ce->pt, (uint32_t)dev[j], 0);

				if (s < 0)
					return (int)s;
				t2[j] = zz_enc((int64_t)(t[j] - ce->pt.pred[s]));
				ce->pt.pred[s] = t[j] + (bytes[j] >> 9);
			}
			if (spread(t2, m, true) < spread(t, m, false)) {
				kind = COL_SECTOR_PRED;
				t = t2;
			}
		}
		err = pack_column(ce, &pk, out, col_names[c], kind, origin, t, m);
		if (err)
			return err;
	}
	cc->n = 0;
	memset(cc->m, 0, sizeof(cc->m));
	*cuts = ce->cuts;
	*ncuts = ce->ncuts;
	return 0;
}

int btape_chunk_encode(struct chunk_enc *ce, const struct btape_event *evs,
		       const uint32_t *comm_idx, uint32_t n, const char *const *comms,
		       const uint32_t *comm_len, uint32_t ncomms, struct bbuf *out, size_t **cuts,
		       size_t *ncuts)
{
	struct chunk_cols cc;
	int err = btape_chunk_cols_init(&cc, n);

	if (err)
		return err;
	for (uint32_t i = 0; i < n; i++)
		btape_chunk_cols_add(&cc, &evs[i], comm_idx[i]);
	err = btape_chunk_encode_cols(ce, &cc, comms, comm_len, ncomms, out, cuts, ncuts);
	btape_chunk_cols_free(&cc);
	return err;
}
