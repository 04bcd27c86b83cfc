// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libbiotape: event chunk encoding (docs/FORMAT.md "Event chunk"). A chunk is a msgpack map
 * holding one bin blob per field; a blob is a small header (kind, width, shift, base, origin)
 * followed by the field's values as fixed-width little-endian integers split into byte planes
 * (all first bytes, then all second bytes, ...), so zstd sees each plane as its own stream.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

#include "btape_internal.h"
#include "mp_internal.h"

enum col_id {
	C_PRESENT,
	C_ISSUE,
	C_DEV,
	C_OP,
	C_BYTES,
	C_SECTOR,
	C_COMPLETE,
	C_INSERT,
	C_FLAGS,
	C_ERROR,
	C_PID,
	C_TID,
	C_COMM,
	C_CGROUP,
	C_CPU,
	C_QD,
	C__COUNT
};

static const char *const col_names[C__COUNT] = {
	"present", "issue", "dev", "op", "bytes", "sector", "complete", "insert",
	"flags", "error", "pid", "tid", "comm", "cgroup", "cpu", "qd",
};

/* Presence bit of an optional column; 0 for the always-present ones. */
static const uint32_t col_bit[C__COUNT] = {
	[C_COMPLETE] = BTAPE_HAS_COMPLETE, [C_INSERT] = BTAPE_HAS_INSERT,
	[C_FLAGS] = BTAPE_HAS_FLAGS,       [C_ERROR] = BTAPE_HAS_ERROR,
	[C_PID] = BTAPE_HAS_PID,           [C_TID] = BTAPE_HAS_TID,
	[C_COMM] = BTAPE_HAS_COMM,         [C_CGROUP] = BTAPE_HAS_CGROUP,
	[C_CPU] = BTAPE_HAS_CPU,           [C_QD] = BTAPE_HAS_QD,
};

/* Upper bound of a decoded value (range check), per column. */
static const uint64_t col_max[C__COUNT] = {
	[C_PRESENT] = UINT32_MAX, [C_ISSUE] = UINT64_MAX,   [C_DEV] = UINT32_MAX,
	[C_OP] = UINT8_MAX,       [C_BYTES] = UINT64_MAX,   [C_SECTOR] = UINT64_MAX,
	[C_COMPLETE] = UINT64_MAX, [C_INSERT] = UINT64_MAX, [C_FLAGS] = UINT32_MAX,
	[C_ERROR] = UINT64_MAX,   [C_PID] = UINT32_MAX,     [C_TID] = UINT32_MAX,
	[C_COMM] = UINT32_MAX,    [C_CGROUP] = UINT64_MAX,  [C_CPU] = UINT32_MAX,
	[C_QD] = UINT32_MAX,
};

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

static int get_varint(const uint8_t *p, size_t len, size_t *off, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned int s = 0; s < 64 && *off < len; s += 7) {
		uint8_t b = p[(*off)++];

		x |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -EBADMSG;
}

static unsigned int bitlen(uint64_t v)
{
	return v ? 64 - (unsigned int)__builtin_clzll(v) : 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Per-device prediction table (sector column).                                             */

struct pred_tab {
	uint32_t *dev;
	uint64_t *pred;
	uint8_t *used;
	uint32_t cap, n;
	uint32_t last_dev;
	uint32_t last_slot;
	bool have_last;
};

static void pred_reset(struct pred_tab *t)
{
	if (t->used)
		memset(t->used, 0, t->cap);
	t->n = 0;
	t->have_last = false;
}

static void pred_free(struct pred_tab *t)
{
	free(t->dev);
	free(t->pred);
	free(t->used);
	memset(t, 0, sizeof(*t));
}

static int pred_grow(struct pred_tab *t)
{
	uint32_t cap = t->cap ? t->cap * 2 : 16;
	uint32_t *dev = calloc(cap, sizeof(*dev));
	uint64_t *pred = calloc(cap, sizeof(*pred));
	uint8_t *used = calloc(cap, 1);

	if (!dev || !pred || !used) {
		free(dev);
		free(pred);
		free(used);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < t->cap; i++) {
		uint32_t j;

		if (!t->used[i])
			continue;
		for (j = (t->dev[i] * 2654435761u) & (cap - 1); used[j]; j = (j + 1) & (cap - 1))
			;
		used[j] = 1;
		dev[j] = t->dev[i];
		pred[j] = t->pred[i];
	}
	free(t->dev);
	free(t->pred);
	free(t->used);
	t->dev = dev;
	t->pred = pred;
	t->used = used;
	t->cap = cap;
	t->have_last = false;
	return 0;
}

/* Slot of dev (inserted with pred = origin when new), or -ENOMEM. */
static int64_t pred_slot(struct pred_tab *t, uint32_t dev, uint64_t origin)
{
	uint32_t j;

	if (t->have_last && t->last_dev == dev)
		return t->last_slot;
	if ((t->n + 1) * 2 > t->cap && pred_grow(t))
		return -ENOMEM;
	for (j = (dev * 2654435761u) & (t->cap - 1); t->used[j]; j = (j + 1) & (t->cap - 1))
		if (t->dev[j] == dev)
			goto found;
	t->used[j] = 1;
	t->dev[j] = dev;
	t->pred[j] = origin;
	t->n++;
found:
	t->have_last = true;
	t->last_dev = dev;
	t->last_slot = j;
	return j;
}

/* ---------------------------------------------------------------------------------------- */
/* Encoder                                                                                  */

struct chunk_enc {
	uint64_t *v, *t, *t2;
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
	free(ce->v);
	free(ce->t);
	free(ce->t2);
	free(ce->cuts);
	bbuf_free(&ce->blob);
	pred_free(&ce->pt);
	free(ce);
}

static int enc_reserve(struct chunk_enc *ce, uint32_t n)
{
	uint64_t *a[3];

	if (n <= ce->cap)
		return 0;
	a[0] = realloc(ce->v, sizeof(uint64_t) * n);
	if (a[0])
		ce->v = a[0];
	a[1] = realloc(ce->t, sizeof(uint64_t) * n);
	if (a[1])
		ce->t = a[1];
	a[2] = realloc(ce->t2, sizeof(uint64_t) * n);
	if (a[2])
		ce->t2 = a[2];
	if (!a[0] || !a[1] || !a[2])
		return -ENOMEM;
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
static int pack_column(struct chunk_enc *ce, msgpack_packer *pk, struct bbuf *out,
		       const char *name, unsigned int kind, uint64_t origin, const uint64_t *t,
		       uint32_t m)
{
	uint64_t base = UINT64_MAX, or = 0, max = 0;
	unsigned int shift = 0, width = 0;
	uint8_t hdr[3 + 10 + 10];
	size_t hlen = 0, total, body_off;
	uint8_t *planes;
	int err;

	for (uint32_t j = 0; j < m; j++)
		if (t[j] < base)
			base = t[j];
	if (!m)
		base = 0;
	for (uint32_t j = 0; j < m; j++)
		or |= t[j] - base;
	if (or) {
		shift = (unsigned int)__builtin_ctzll(or);
		for (uint32_t j = 0; j < m; j++) {
			uint64_t u = (t[j] - base) >> shift;

			if (u > max)
				max = u;
		}
		width = (bitlen(max) + 7) / 8;
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

int btape_chunk_encode(struct chunk_enc *ce, const struct btape_event *evs,
		       const uint32_t *comm_idx, uint32_t n, const char *const *comms,
		       const uint32_t *comm_len, uint32_t ncomms, struct bbuf *out,
		       size_t **cuts, size_t *ncuts)
{
	uint64_t tmin = UINT64_MAX, tmax = 0;
	msgpack_packer pk;
	int err;

	err = enc_reserve(ce, n ? n : 1);
	if (err)
		return err;
	ce->ncuts = 0;
	out->len = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (evs[i].issue_ns < tmin)
			tmin = evs[i].issue_ns;
		if (evs[i].issue_ns > tmax)
			tmax = evs[i].issue_ns;
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
		uint64_t *t = ce->t, origin = 0;
		unsigned int kind = COL_RAW;
		uint32_t m = 0;

		for (uint32_t i = 0; i < n; i++) {
			const struct btape_event *e = &evs[i];
			uint64_t v;

			if (col_bit[c] && !(e->present & col_bit[c]))
				continue;
			switch (c) {
			case C_PRESENT: v = e->present & BTAPE_HAS__ALL; break;
			case C_ISSUE: v = e->issue_ns; break;
			case C_DEV: v = e->dev; break;
			case C_OP: v = e->op; break;
			case C_BYTES: v = e->bytes; break;
			case C_SECTOR: v = e->sector; break;
			case C_COMPLETE: v = zz_enc((int64_t)(e->complete_ns - e->issue_ns)); break;
			case C_INSERT: v = zz_enc((int64_t)(e->issue_ns - e->insert_ns)); break;
			case C_FLAGS: v = e->flags; break;
			case C_ERROR: v = zz_enc(e->error); break;
			case C_PID: v = e->pid; break;
			case C_TID: v = e->tid; break;
			case C_COMM: v = comm_idx[i]; break;
			case C_CGROUP: v = e->cgroup; break;
			case C_CPU: v = e->cpu; break;
			default: v = e->qd; break;
			}
			t[m++] = v;
		}
		if (c == C_COMPLETE || c == C_INSERT || c == C_ERROR)
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
		if (c == C_SECTOR && m) {
			/* raw, or delta from the per-device prediction: whichever is smaller */
			uint64_t cost_raw = 0, cost_pred = 0, *t2 = ce->t2;

			origin = 0;
			pred_reset(&ce->pt);
			for (uint32_t j = 0; j < m; j++) {
				int64_t s = pred_slot(&ce->pt, evs[j].dev, origin);

				if (s < 0)
					return (int)s;
				t2[j] = zz_enc((int64_t)(t[j] - ce->pt.pred[s]));
				ce->pt.pred[s] = t[j] + (evs[j].bytes >> 9);
				cost_raw += bitlen(t[j]);
				cost_pred += bitlen(t2[j]);
			}
			if (cost_pred < cost_raw) {
				kind = COL_SECTOR_PRED;
				t = t2;
			}
		}
		err = pack_column(ce, &pk, out, col_names[c], kind, origin, t, m);
		if (err)
			return err;
	}
	*cuts = ce->cuts;
	*ncuts = ce->ncuts;
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Decoder                                                                                  */

struct col {
	bool have;
	uint8_t kind, width, shift;
	uint64_t base, origin, prev;
	const uint8_t *planes;
	uint32_t m, j; /* values, next value */
};

struct dec_priv {
	struct col cols[C__COUNT];
	struct pred_tab pt;
	uint64_t tmp[1024];
};

#define DEC_SLICE 1024

static int parse_col(struct col *c, const uint8_t *p, size_t len, uint32_t m)
{
	size_t off = 3;

	if (len < 3)
		return -EBADMSG;
	c->kind = p[0];
	c->width = p[1];
	c->shift = p[2];
	if (c->kind > COL_SECTOR_PRED || c->width > 8 || c->shift > 63)
		return -EBADMSG;
	if (get_varint(p, len, &off, &c->base))
		return -EBADMSG;
	c->origin = 0;
	if ((c->kind == COL_DELTA || c->kind == COL_SECTOR_PRED) &&
	    get_varint(p, len, &off, &c->origin))
		return -EBADMSG;
	if ((len - off) != (size_t)c->width * m)
		return -EBADMSG;
	c->planes = p + off;
	c->m = m;
	c->j = 0;
	c->prev = c->origin;
	c->have = true;
	return 0;
}

static void dec_free_priv(struct chunk_dec *d)
{
	struct dec_priv *p = d->priv;

	if (p) {
		pred_free(&p->pt);
		free(p);
	}
	d->priv = NULL;
}

void btape_chunk_dec_free(struct chunk_dec *d)
{
	if (!d)
		return;
	dec_free_priv(d);
	free(d->comms);
	d->comms = NULL;
	d->ncomms = d->comms_cap = 0;
}

/* Reads cnt values of column c into dst (after shift/base, before the kind's transform). */
static void col_take(struct col *c, uint64_t *dst, uint32_t cnt)
{
	const uint8_t *p = c->planes + c->j;
	unsigned int sh = c->shift;
	uint64_t base = c->base;

	switch (c->width) {
	case 0:
		for (uint32_t k = 0; k < cnt; k++)
			dst[k] = base;
		break;
	case 1:
		for (uint32_t k = 0; k < cnt; k++)
			dst[k] = ((uint64_t)p[k] << sh) + base;
		break;
	case 2:
		for (uint32_t k = 0; k < cnt; k++)
			dst[k] = (((uint64_t)p[k] | (uint64_t)p[k + c->m] << 8) << sh) + base;
		break;
	default:
		for (uint32_t k = 0; k < cnt; k++)
			dst[k] = p[k];
		for (unsigned int b = 1; b < c->width; b++) {
			const uint8_t *pb = p + (size_t)b * c->m;

			for (uint32_t k = 0; k < cnt; k++)
				dst[k] |= (uint64_t)pb[k] << (8 * b);
		}
		for (uint32_t k = 0; k < cnt; k++)
			dst[k] = (dst[k] << sh) + base;
		break;
	}
	c->j += cnt;
	if (c->kind == COL_ZIGZAG) {
		for (uint32_t k = 0; k < cnt; k++)
			dst[k] = (uint64_t)zz_dec(dst[k]);
	} else if (c->kind == COL_DELTA) {
		uint64_t prev = c->prev;

		for (uint32_t k = 0; k < cnt; k++) {
			prev += (uint64_t)zz_dec(dst[k]);
			dst[k] = prev;
		}
		c->prev = prev;
	}
}

int btape_chunk_dec_start(struct chunk_dec *d, const uint8_t *data, size_t len,
			  struct btape_intern *it, char *err, size_t errlen)
{
	const msgpack_object *cols = NULL, *comms = NULL;
	const char *what = "bad chunk map";
	uint64_t n = UINT64_MAX, counts[C__COUNT] = { 0 };
	struct dec_priv *p;
	msgpack_unpacked u;
	int ret;

	dec_free_priv(d);
	d->n = d->pos = 0;
	d->ncomms = 0;
	d->issue_min = d->issue_max = 0;
	ret = btape_mp_unpack(&u, data, len);
	if (ret) {
		snprintf(err, errlen, "%s", what);
		return ret;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		ret = -ENOMEM;
		what = "out of memory";
		goto cleanup;
	}
	d->priv = p;
	ret = -EBADMSG;
	for (uint32_t i = 0; i < u.data.via.map.size; i++) {
		const msgpack_object *k = &u.data.via.map.ptr[i].key;
		const msgpack_object *v = &u.data.via.map.ptr[i].val;

		if (btape_mp_keyis(k, "n")) {
			if (btape_mp_u64(v, &n))
				goto cleanup;
		} else if (btape_mp_keyis(k, "issue_min")) {
			if (btape_mp_u64(v, &d->issue_min))
				goto cleanup;
		} else if (btape_mp_keyis(k, "issue_max")) {
			if (btape_mp_u64(v, &d->issue_max))
				goto cleanup;
		} else if (btape_mp_keyis(k, "comms")) {
			comms = v;
		} else if (btape_mp_keyis(k, "cols")) {
			cols = v;
		}
	}
	if (n == UINT64_MAX || !cols || cols->type != MSGPACK_OBJECT_MAP) {
		what = "chunk map lacks n or cols";
		goto cleanup;
	}
	if (n > BTAPE_CHUNK_MAX_EVENTS) {
		what = "chunk too large";
		goto cleanup;
	}
	d->n = (uint32_t)n;
	if (comms) {
		if (comms->type != MSGPACK_OBJECT_ARRAY) {
			what = "bad comms table";
			goto cleanup;
		}
		if (comms->via.array.size > d->comms_cap) {
			const char **c = realloc(d->comms, sizeof(*c) * comms->via.array.size);

			if (!c) {
				ret = -ENOMEM;
				what = "out of memory";
				goto cleanup;
			}
			d->comms = c;
			d->comms_cap = comms->via.array.size;
		}
		for (uint32_t i = 0; i < comms->via.array.size; i++) {
			const msgpack_object *s = &comms->via.array.ptr[i];
			int64_t id;

			if (s->type != MSGPACK_OBJECT_STR || memchr(s->via.str.ptr, 0, s->via.str.size)) {
				what = "bad process name";
				goto cleanup;
			}
			id = btape_intern_get(it, s->via.str.ptr, s->via.str.size);
			if (id < 0) {
				ret = (int)id;
				what = id == -E2BIG ? "too many distinct process names"
						    : "process name too long";
				goto cleanup;
			}
			d->comms[i] = btape_intern_str(it, (uint32_t)id);
		}
		d->ncomms = comms->via.array.size;
	}
	/* present first: it decides how many values each optional column holds */
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < cols->via.map.size; i++) {
			const msgpack_object *k = &cols->via.map.ptr[i].key;
			const msgpack_object *v = &cols->via.map.ptr[i].val;

			for (int c = 0; c < C__COUNT; c++) {
				uint64_t m = col_bit[c] ? counts[c] : n;

				if ((c == C_PRESENT) != (pass == 0) || !btape_mp_keyis(k, col_names[c]))
					continue;
				if (v->type != MSGPACK_OBJECT_BIN || p->cols[c].have ||
				    parse_col(&p->cols[c], (const uint8_t *)v->via.bin.ptr,
					      v->via.bin.size, (uint32_t)m)) {
					snprintf(err, errlen, "bad column %s", col_names[c]);
					ret = -EBADMSG;
					goto fail;
				}
			}
		}
		if (pass == 0) {
			struct col *pc = &p->cols[C_PRESENT];

			if (!pc->have) {
				what = "chunk lacks column present";
				goto cleanup;
			}
			for (uint32_t i = 0; i < n; i += DEC_SLICE) {
				uint32_t cnt = n - i < DEC_SLICE ? (uint32_t)(n - i) : DEC_SLICE;

				col_take(pc, p->tmp, cnt);
				for (uint32_t k = 0; k < cnt; k++) {
					if (p->tmp[k] > UINT32_MAX) {
						what = "bad presence bits";
						goto cleanup;
					}
					for (int c = C_COMPLETE; c < C__COUNT; c++)
						counts[c] += !!(p->tmp[k] & col_bit[c]);
				}
			}
			pc->j = 0;
		}
	}
	for (int c = 0; c < C__COUNT; c++) {
		if (!p->cols[c].have && (!col_bit[c] || counts[c])) {
			snprintf(err, errlen, "chunk lacks column %s", col_names[c]);
			ret = -EBADMSG;
			goto fail;
		}
	}
	pred_reset(&p->pt);
	msgpack_unpacked_destroy(&u);
	return 0;
cleanup:
	snprintf(err, errlen, "%s", what);
fail:
	msgpack_unpacked_destroy(&u);
	dec_free_priv(d);
	d->n = 0;
	return ret;
}

static int range_err(char *err, size_t errlen, int c)
{
	snprintf(err, errlen, "column %s: value out of range", col_names[c]);
	return -EBADMSG;
}

int btape_chunk_dec_next(struct chunk_dec *d, struct btape_event *ev, uint32_t max, char *err,
			 size_t errlen)
{
	struct dec_priv *p = d->priv;
	uint64_t *tmp;
	uint32_t cnt;

	if (!p || d->pos >= d->n)
		return 0;
	tmp = p->tmp;
	cnt = d->n - d->pos;
	if (cnt > max)
		cnt = max;
	if (cnt > DEC_SLICE)
		cnt = DEC_SLICE;

	col_take(&p->cols[C_PRESENT], tmp, cnt);
	for (uint32_t k = 0; k < cnt; k++) {
		ev[k].present = (uint32_t)tmp[k] & BTAPE_HAS__ALL;
		ev[k].comm = NULL;
	}
	col_take(&p->cols[C_ISSUE], tmp, cnt);
	for (uint32_t k = 0; k < cnt; k++)
		ev[k].issue_ns = tmp[k];
	col_take(&p->cols[C_DEV], tmp, cnt);
	for (uint32_t k = 0; k < cnt; k++) {
		if (tmp[k] > UINT32_MAX)
			return range_err(err, errlen, C_DEV);
		ev[k].dev = (uint32_t)tmp[k];
	}
	col_take(&p->cols[C_OP], tmp, cnt);
	for (uint32_t k = 0; k < cnt; k++) {
		if (tmp[k] > UINT8_MAX)
			return range_err(err, errlen, C_OP);
		ev[k].op = (uint8_t)tmp[k];
	}
	col_take(&p->cols[C_BYTES], tmp, cnt);
	for (uint32_t k = 0; k < cnt; k++)
		ev[k].bytes = tmp[k];
	col_take(&p->cols[C_SECTOR], tmp, cnt);
	if (p->cols[C_SECTOR].kind == COL_SECTOR_PRED) {
		for (uint32_t k = 0; k < cnt; k++) {
			int64_t s = pred_slot(&p->pt, ev[k].dev, p->cols[C_SECTOR].origin);

			if (s < 0)
				return (int)s;
			ev[k].sector = p->pt.pred[s] + (uint64_t)zz_dec(tmp[k]);
			p->pt.pred[s] = ev[k].sector + (ev[k].bytes >> 9);
		}
	} else {
		for (uint32_t k = 0; k < cnt; k++)
			ev[k].sector = tmp[k];
	}
	for (int c = C_COMPLETE; c < C__COUNT; c++) {
		struct col *cl = &p->cols[c];
		uint32_t bit = col_bit[c], have = 0, j = 0;

		for (uint32_t k = 0; k < cnt; k++)
			have += !!(ev[k].present & bit);
		if (have)
			col_take(cl, tmp, have);
		for (uint32_t k = 0; k < cnt; k++) {
			bool on = ev[k].present & bit;
			uint64_t v = on ? tmp[j++] : 0;

			if (v > col_max[c])
				return range_err(err, errlen, c);
			switch (c) {
			case C_COMPLETE: ev[k].complete_ns = on ? ev[k].issue_ns + v : 0; break;
			case C_INSERT: ev[k].insert_ns = on ? ev[k].issue_ns - v : 0; break;
			case C_FLAGS: ev[k].flags = (uint32_t)v; break;
			case C_ERROR:
				if ((int64_t)v < INT32_MIN || (int64_t)v > INT32_MAX)
					return range_err(err, errlen, c);
				ev[k].error = (int32_t)(int64_t)v;
				break;
			case C_PID: ev[k].pid = (uint32_t)v; break;
			case C_TID: ev[k].tid = (uint32_t)v; break;
			case C_COMM:
				if (on && v >= d->ncomms) {
					snprintf(err, errlen, "column comm: index out of range");
					return -EBADMSG;
				}
				ev[k].comm = on ? d->comms[v] : NULL;
				break;
			case C_CGROUP: ev[k].cgroup = v; break;
			case C_CPU: ev[k].cpu = (uint32_t)v; break;
			default: ev[k].qd = (uint32_t)v; break;
			}
		}
	}
	d->pos += cnt;
	return (int)cnt;
}
