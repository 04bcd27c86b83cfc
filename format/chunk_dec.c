// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libbiotape: event chunk decoder (docs/BTAPE-FORMAT.md "Event chunk"; the layout in
 * chunk_internal.h): parses a chunk's map and columns, then decodes them slice by slice
 * into events, with range checks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

#include "chunk_internal.h"
#include "mp_internal.h"

/* Upper bound of a decoded value (range check), per column. */
static const uint64_t col_max[C__COUNT] = {
	[C_PRESENT] = UINT32_MAX,  [C_ISSUE] = UINT64_MAX,  [C_DEV] = UINT32_MAX,
	[C_OP] = UINT8_MAX,	   [C_BYTES] = UINT64_MAX,  [C_SECTOR] = UINT64_MAX,
	[C_COMPLETE] = UINT64_MAX, [C_INSERT] = UINT64_MAX, [C_FLAGS] = UINT32_MAX,
	[C_ERROR] = UINT64_MAX,	   [C_PID] = UINT32_MAX,    [C_TID] = UINT32_MAX,
	[C_COMM] = UINT32_MAX,	   [C_CGROUP] = UINT64_MAX, [C_CPU] = UINT32_MAX,
	[C_QD] = UINT32_MAX,	   [C_WAKE] = UINT64_MAX,   [C_SLEPT] = UINT64_MAX,
};

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

/* ---------------------------------------------------------------------------------------- */
/* Decoder                                                                                  */

struct col {
	bool have;
	uint8_t kind, width, shift;
	uint64_t base, origin, prev;
	const uint8_t *planes;
	uint32_t m, j; /* values, next value */
	uint32_t pj;   /* COL_DELTA: prev is the running value before value pj (pj < j: skipped) */
};

#ifndef DEC_SLICE
#define DEC_SLICE 256 /* events per decode step: the slice stays in L1/L2 */
#endif

struct dec_priv {
	struct col cols[C__COUNT];
	bool fits[C__COUNT];	     /* values need no range check */
	uint32_t all_have, any_have; /* presence bits set in every / some event */
	struct pred_tab pt;
	uint64_t tmp[DEC_SLICE];
};

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
	c->pj = 0;
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

static void col_take(struct col *c, uint64_t *restrict dst, uint32_t cnt);

/*
 * A COL_DELTA column whose values pj..j were skipped (not decoded) while its field was not
 * wanted: decodes them into scratch (DEC_SLICE values) and drops them, so that prev is the
 * running value before value j and decoding can resume there. Rare (the skip mask changed
 * in the middle of a chunk).
 */
static void col_catch_up(struct col *c, uint64_t *scratch)
{
	uint32_t end = c->j;

	c->j = c->pj; /* then col_take does not come back here */
	while (c->j < end)
		col_take(c, scratch, end - c->j < DEC_SLICE ? end - c->j : DEC_SLICE);
}

/*
 * Runs STMT for cnt values of column c from value c->j on, with k the value's number in the
 * run and x its value after shift and base (before the kind's transform); then moves c->j on.
 * The one place that knows the byte-plane layout. COL_EACH4 is for columns of width 4 at
 * most (the caller checks): less code for the fields that hold 32 bits.
 */
#define PL(b) ((uint64_t)p_[k + (size_t)(b)*m_] << (8 * (b)))
#define COL_EACH_W(W, EXPR, STMT)                     \
	case W:                                       \
		for (uint32_t k = 0; k < cnt_; k++) { \
			const uint64_t x = (EXPR);    \
			STMT;                         \
		}                                     \
		break
#define COL_EACH_UPTO(WIDE, c, cnt, STMT)                                                          \
	do {                                                                                       \
		struct col *const c_ = (c);                                                        \
		const uint32_t cnt_ = (cnt);                                                       \
		const uint8_t *restrict p_ = c_->planes + c_->j;                                   \
		const unsigned int sh_ = c_->shift;                                                \
		const uint64_t base_ = c_->base;                                                   \
		const size_t m_ = c_->m;                                                           \
		switch (c_->width) {                                                               \
			COL_EACH_W(0, base_, STMT);                                                \
			COL_EACH_W(1, (PL(0) << sh_) + base_, STMT);                               \
			COL_EACH_W(2, ((PL(0) | PL(1)) << sh_) + base_, STMT);                     \
			COL_EACH_W(3, ((PL(0) | PL(1) | PL(2)) << sh_) + base_, STMT);             \
			COL_EACH_W(4, ((PL(0) | PL(1) | PL(2) | PL(3)) << sh_) + base_, STMT);     \
		default:                                                                           \
			if (!(WIDE))                                                               \
				break;                                                             \
			switch (c_->width) {                                                       \
				COL_EACH_W(5,                                                      \
					   ((PL(0) | PL(1) | PL(2) | PL(3) | PL(4)) << sh_) +      \
						   base_,                                          \
					   STMT);                                                  \
				COL_EACH_W(                                                        \
					6,                                                         \
					((PL(0) | PL(1) | PL(2) | PL(3) | PL(4) | PL(5)) << sh_) + \
						base_,                                             \
					STMT);                                                     \
				COL_EACH_W(                                                        \
					7,                                                         \
					((PL(0) | PL(1) | PL(2) | PL(3) | PL(4) | PL(5) | PL(6))   \
					 << sh_) +                                                 \
						base_,                                             \
					STMT);                                                     \
				COL_EACH_W(8,                                                      \
					   ((PL(0) | PL(1) | PL(2) | PL(3) | PL(4) | PL(5) |       \
					     PL(6) | PL(7))                                        \
					    << sh_) +                                              \
						   base_,                                          \
					   STMT);                                                  \
			}                                                                          \
		}                                                                                  \
		c_->j += cnt_;                                                                     \
	} while (0)
#define COL_EACH(c, cnt, STMT) COL_EACH_UPTO(1, c, cnt, STMT)
#define COL_EACH4(c, cnt, STMT) COL_EACH_UPTO(0, c, cnt, STMT)

/*
 * The delta rule: runs STMT for the next cnt values of COL_DELTA column c, with k the value's
 * number and v its value (the running sum of the zigzag deltas), after catching up on values
 * skipped before; scratch holds DEC_SLICE values and is overwritten. Two passes: the unpacking
 * vectorizes, the running sum cannot.
 */
#define COL_DELTA_EACH(c, cnt, scratch, STMT)                                 \
	do {                                                                  \
		struct col *const cd_ = (c);                                  \
		uint64_t *const sd_ = (scratch);                              \
		const uint32_t nd_ = (cnt);                                   \
		uint64_t prev_;                                               \
                                                                              \
		if (cd_->pj != cd_->j)                                        \
			col_catch_up(cd_, sd_);                               \
		COL_EACH(cd_, nd_, sd_[k] = (uint64_t)zz_dec(x));             \
		prev_ = cd_->prev;                                            \
		for (uint32_t k = 0; k < nd_; k++) {                          \
			const uint64_t v = (prev_ += sd_[k]);                 \
			STMT;                                                 \
		}                                                             \
		cd_->prev = prev_;                                            \
		cd_->pj = cd_->j;                                             \
	} while (0)

/* Reads cnt values of column c into dst (after shift/base and the kind's transform). */
static void col_take(struct col *c, uint64_t *restrict dst, uint32_t cnt)
{
	if (c->kind == COL_DELTA) {
		COL_DELTA_EACH(c, cnt, dst, dst[k] = v); /* dst is DEC_SLICE values long */
		return;
	}
	COL_EACH(c, cnt, dst[k] = x);
	if (c->kind == COL_ZIGZAG) {
		for (uint32_t k = 0; k < cnt; k++)
			dst[k] = (uint64_t)zz_dec(dst[k]);
	}
}

/*
 * Decoding straight into the events, for a column every event of the slice has, coded the way
 * the writer codes it, with no range check needed: ev[k] gets value k (no scratch array).
 */
#define EV_U64(ev, k, off) (*(uint64_t *)((char *)&(ev)[k] + (off)))
#define EV_U32(ev, k, off) (*(uint32_t *)((char *)&(ev)[k] + (off)))

static const size_t col_off[C__COUNT] = {
	[C_ISSUE] = offsetof(struct btape_event, issue_ns),
	[C_DEV] = offsetof(struct btape_event, dev),
	[C_BYTES] = offsetof(struct btape_event, bytes),
	[C_SECTOR] = offsetof(struct btape_event, sector),
	[C_COMPLETE] = offsetof(struct btape_event, complete_ns),
	[C_INSERT] = offsetof(struct btape_event, insert_ns),
	[C_FLAGS] = offsetof(struct btape_event, flags),
	[C_PID] = offsetof(struct btape_event, pid),
	[C_TID] = offsetof(struct btape_event, tid),
	[C_CGROUP] = offsetof(struct btape_event, cgroup),
	[C_CPU] = offsetof(struct btape_event, cpu),
	[C_QD] = offsetof(struct btape_event, qd),
	[C_WAKE] = offsetof(struct btape_event, wake_ns),
	[C_SLEPT] = offsetof(struct btape_event, slept_ns),
};

/* COL_RAW into a uint64_t field at byte offset off. */
BTAPE_HOT_CLONES static void take_u64(struct col *c, struct btape_event *restrict ev, size_t off,
				      uint32_t cnt)
{
	COL_EACH(c, cnt, EV_U64(ev, k, off) = x);
}

/* COL_RAW into a uint32_t field at byte offset off (the values fit, width <= 4). */
BTAPE_HOT_CLONES static void take_u32(struct col *c, struct btape_event *restrict ev, size_t off,
				      uint32_t cnt)
{
	COL_EACH4(c, cnt, EV_U32(ev, k, off) = (uint32_t)x);
}

/* COL_DELTA into a uint64_t field at byte offset off; scratch holds DEC_SLICE values. */
BTAPE_HOT_CLONES static void take_delta(struct col *c, struct btape_event *restrict ev, size_t off,
					uint32_t cnt, uint64_t *restrict scratch)
{
	COL_DELTA_EACH(c, cnt, scratch, EV_U64(ev, k, off) = v);
}

/*
 * COL_ZIGZAG offsets from issue_ns into a uint64_t field at byte offset off: issue + v, or
 * issue - v when neg is all ones ((v ^ neg) - neg is -v then).
 */
BTAPE_HOT_CLONES static void take_issue_rel(struct col *c, struct btape_event *restrict ev,
					    size_t off, uint32_t cnt, uint64_t neg)
{
	COL_EACH(c, cnt, EV_U64(ev, k, off) = ev[k].issue_ns + (((uint64_t)zz_dec(x) ^ neg) - neg));
}

/*
 * Whether the next cnt values of a one-byte raw column are all below nc (valid comm indexes):
 * the largest byte of the slice, shifted and based, is (no overflow on the way).
 */
static bool comm_bytes_fit(const struct col *c, uint32_t cnt, uint64_t nc)
{
	const uint8_t *b = c->planes + c->j;
	uint8_t mx = 0;

	for (uint32_t k = 0; k < cnt; k++)
		mx = b[k] > mx ? b[k] : mx;
	return c->shift < 56 && c->base < nc && ((uint64_t)mx << c->shift) < nc - c->base;
}

static int range_err(char *err, size_t errlen, int c)
{
	snprintf(err, errlen, "column %s: value out of range", col_names[c]);
	return -EBADMSG;
}

/*
 * Decodes column c of the slice straight into the events when that path applies (see above):
 * 1, or 0 when the caller decodes through scratch, or -EBADMSG (a bad op or comm value).
 */
BTAPE_HOT_CLONES static int take_direct(struct chunk_dec *d, int c, struct btape_event *restrict ev,
					uint32_t cnt, char *err, size_t errlen)
{
	struct dec_priv *p = d->priv;
	struct col *cl = &p->cols[c];

	if (cl->width > 4 && col_max[c] <= UINT32_MAX)
		return 0; /* cannot fit, or unusual (presence, comm): less code for the rest */
	d->cache[c].buf = NULL; /* before the first store: an error can follow */
	if (cl->kind == COL_DELTA) {
		if (c != C_ISSUE && c != C_COMPLETE)
			return 0;
		take_delta(cl, ev, col_off[c], cnt, p->tmp);
	} else if (cl->kind == COL_ZIGZAG) {
		switch (c) {
		case C_COMPLETE:
			take_issue_rel(cl, ev, col_off[c], cnt, 0);
			break;
		case C_INSERT:
		case C_WAKE:
			take_issue_rel(cl, ev, col_off[c], cnt, UINT64_MAX);
			break;
		case C_ERROR:
			if (!p->fits[c] || cl->width > 4) /* fits implies width <= 4 */
				return 0;
			COL_EACH4(cl, cnt, ev[k].error = (int32_t)zz_dec(x));
			break;
		default:
			return 0;
		}
	} else if (cl->kind == COL_RAW) {
		switch (c) {
		case C_PRESENT:
			COL_EACH4(cl, cnt, ev[k].present = (uint32_t)x & BTAPE_HAS__ALL);
			break;
		case C_BYTES:
		case C_SECTOR:
		case C_CGROUP:
		case C_SLEPT:
			take_u64(cl, ev, col_off[c], cnt);
			break;
		case C_DEV:
		case C_FLAGS:
		case C_PID:
		case C_TID:
		case C_CPU:
		case C_QD:
			if (!p->fits[c])
				return 0;
			take_u32(cl, ev, col_off[c], cnt);
			break;
		case C_OP: {
			/* the range check in the same pass (the writer's base 1 does not "fit") */
			uint64_t words_or = 0;

			COL_EACH4(cl, cnt, words_or |= x; ev[k].op = (uint8_t)x);
			if (words_or > UINT8_MAX)
				return range_err(err, errlen, c);
			break;
		}
		case C_COMM: {
			const char *const *comms = d->comms;
			const uint64_t nc = d->ncomms;
			uint64_t bad = 0;

			if (!nc)
				return 0;
			if (cl->width == 1 && comm_bytes_fit(cl, cnt, nc)) {
				const uint8_t *b = cl->planes + cl->j;
				const char *const *cb = comms + cl->base;
				const unsigned int sh = cl->shift;

				if (!sh) /* the usual case: a loop without the shift */
					for (uint32_t k = 0; k < cnt; k++)
						ev[k].comm = cb[b[k]];
				else
					for (uint32_t k = 0; k < cnt; k++)
						ev[k].comm = cb[(size_t)b[k] << sh];
				cl->j += cnt;
				break;
			}
			COL_EACH4(cl, cnt, bad |= x >= nc; ev[k].comm = comms[x < nc ? x : 0]);
			if (bad) {
				snprintf(err, errlen, "column comm: index out of range");
				return -EBADMSG;
			}
			break;
		}
		default:
			return 0;
		}
	} else {
		return 0;
	}
	return 1;
}

/* Whether every value of column c is <= max before its kind's transform. */
static bool col_span_fits(const struct col *c, uint64_t max)
{
	uint64_t span;

	if (c->width >= 8)
		span = UINT64_MAX;
	else
		span = (1ull << (8 * c->width)) - 1;
	if (c->shift && span > (UINT64_MAX >> c->shift))
		return max == UINT64_MAX;
	span <<= c->shift;
	return c->base <= max && span <= max - c->base;
}

/* Whether every decoded value of column c is <= max (for skipping range checks). */
static bool col_fits(const struct col *c, uint64_t max)
{
	if (c->kind != COL_RAW)
		return max == UINT64_MAX;
	return col_span_fits(c, max);
}

/*
 * Whether every value of the error column fits an int32: raw values up to INT32_MAX, or
 * zigzag codes up to UINT32_MAX (they decode to INT32_MIN..INT32_MAX).
 */
static bool col_fits_error(const struct col *c)
{
	if (c->kind == COL_ZIGZAG)
		return col_span_fits(c, UINT32_MAX);
	return c->kind == COL_RAW && col_span_fits(c, INT32_MAX);
}

/* Where a chunk map's values are: found by one walk over the map (walk_chunk). */
struct chunk_walk {
	size_t comms_at; /* offset of the comm table's value, SIZE_MAX when absent */
	bool have_cols;	 /* a cols map was found (the last one counts) */
	struct {
		const uint8_t *p;
		uint32_t len;
		bool seen, bad; /* bad: not a bin, or a second one */
	} col[C__COUNT];
};

/* The header of the value at AT, or NIL when it has none. */
static void peek_value(const struct btape_mp *c, size_t at, struct btape_mp_val *v)
{
	struct btape_mp one;

	btape_mp_init(&one, c->p, c->len, UINT64_MAX);
	one.off = at;
	if (btape_mp_read(&one, v))
		v->type = BTAPE_MP_NIL;
}

/* The cols map, at depth 1: the position of each known column. */
static int walk_cols(struct btape_mp *c, struct chunk_walk *w)
{
	struct btape_mp_val v;
	uint32_t pairs;

	memset(w->col, 0, sizeof(w->col));
	peek_value(c, c->off, &v);
	w->have_cols = v.type == BTAPE_MP_MAP;
	if (!w->have_cols)
		return btape_mp_skip(c, 1);
	if (btape_mp_map(c, &pairs))
		return -EBADMSG;
	for (uint32_t i = 0; i < pairs; i++) {
		const char *k;
		uint32_t kn;
		size_t at;
		int col = 0;

		if (btape_mp_key_read(c, 2, &k, &kn))
			return -EBADMSG;
		at = c->off;
		if (btape_mp_skip(c, 2))
			return -EBADMSG;
		while (col < C__COUNT && !btape_mp_is(k, kn, col_names[col]))
			col++;
		if (col == C__COUNT)
			continue; /* a column of a later version */
		peek_value(c, at, &v);
		w->col[col].bad |= v.type != BTAPE_MP_BIN || w->col[col].seen;
		w->col[col].seen = true;
		w->col[col].p = v.ptr;
		w->col[col].len = (uint32_t)v.u;
	}
	return 0;
}

/*
 * Walks the whole chunk map once: checks its structure and its item count (nothing is built
 * from what it declares), reads n, issue_min and issue_max, finds the comm table and columns.
 */
static int walk_chunk(struct chunk_dec *d, const uint8_t *data, size_t len, uint64_t *n,
		      struct chunk_walk *w, const char **what)
{
	struct btape_mp c;
	uint32_t pairs;

	w->comms_at = SIZE_MAX;
	w->have_cols = false;
	btape_mp_init(&c, data, len, BTAPE_CHUNK_MAX_ITEMS);
	if (btape_mp_map(&c, &pairs))
		goto bad;
	for (uint32_t i = 0; i < pairs; i++) {
		const char *k;
		uint32_t kn;
		int err;

		if (btape_mp_key_read(&c, 1, &k, &kn))
			goto bad;
		if (btape_mp_is(k, kn, "n")) {
			err = btape_mp_uint(&c, n);
		} else if (btape_mp_is(k, kn, "issue_min")) {
			err = btape_mp_uint(&c, &d->issue_min);
		} else if (btape_mp_is(k, kn, "issue_max")) {
			err = btape_mp_uint(&c, &d->issue_max);
		} else if (btape_mp_is(k, kn, "cols")) {
			err = walk_cols(&c, w);
		} else {
			if (btape_mp_is(k, kn, "comms"))
				w->comms_at = c.off; /* the last one counts */
			err = btape_mp_skip(&c, 1);
		}
		if (err)
			goto bad;
	}
	if (c.off == len)
		return 0;
bad:
	*what = c.too_many ? "too many msgpack items" : "bad chunk map";
	return -EBADMSG;
}

/* The comm table (already walked): at most BTAPE_CHUNK_MAX_EVENTS names, interned. */
static int read_comms(struct chunk_dec *d, const uint8_t *data, size_t len, size_t at,
		      struct btape_intern *it, const char **what)
{
	struct btape_mp c;
	uint32_t nc;

	btape_mp_init(&c, data, len, UINT64_MAX); /* counted by the walk */
	c.off = at;
	if (btape_mp_array(&c, &nc) || nc > BTAPE_CHUNK_MAX_EVENTS) {
		*what = "bad comms table";
		return -EBADMSG;
	}
	if (nc > d->comms_cap) {
		const char **cp = realloc(d->comms, sizeof(*cp) * nc);

		if (!cp) {
			*what = "out of memory";
			return -ENOMEM;
		}
		d->comms = cp;
		d->comms_cap = nc;
	}
	for (uint32_t i = 0; i < nc; i++) {
		const char *s;
		uint32_t sn;
		int64_t id;

		if (btape_mp_str(&c, &s, &sn) || memchr(s, 0, sn)) {
			*what = "bad process name";
			return -EBADMSG;
		}
		id = btape_intern_get(it, s, sn);
		if (id < 0) {
			*what = id == -E2BIG	? "too many distinct process names"
				: id == -ELOOP	? "process names built to collide in the name table"
				: id == -ENOMEM ? "out of memory for process names"
						: "process name too long";
			return (int)id;
		}
		d->comms[i] = btape_intern_str(it, (uint32_t)id);
	}
	d->ncomms = nc;
	return 0;
}

int btape_chunk_dec_start(struct chunk_dec *d, const uint8_t *data, size_t len,
			  struct btape_intern *it, char *err, size_t errlen)
{
	const char *what = "bad chunk map";
	uint64_t n = UINT64_MAX, counts[C__COUNT] = {0}, bitcounts[32] = {0};
	struct chunk_walk w;
	struct dec_priv *p;
	int ret;

	dec_free_priv(d);
	d->n = d->pos = 0;
	d->ncomms = 0;
	d->issue_min = 0;
	d->issue_max = UINT64_MAX; /* unknown: never skipped by a seek */
	ret = walk_chunk(d, data, len, &n, &w, &what);
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
	if (n == UINT64_MAX || !w.have_cols) {
		what = "chunk map lacks n or cols";
		goto cleanup;
	}
	if (n > BTAPE_CHUNK_MAX_EVENTS) {
		what = "chunk too large";
		goto cleanup;
	}
	d->n = (uint32_t)n;
	if (w.comms_at != SIZE_MAX) {
		ret = read_comms(d, data, len, w.comms_at, it, &what);
		if (ret)
			goto cleanup;
		ret = -EBADMSG;
	}
	/* present first: it decides how many values each optional column holds */
	for (int pass = 0; pass < 2; pass++) {
		for (int c = 0; c < C__COUNT; c++) {
			uint64_t m = col_bit[c] ? counts[c] : n;

			if ((c == C_PRESENT) != (pass == 0) || !w.col[c].seen)
				continue;
			if (w.col[c].bad ||
			    parse_col(&p->cols[c], w.col[c].p, w.col[c].len, (uint32_t)m)) {
				snprintf(err, errlen, "bad column %s", col_names[c]);
				ret = -EBADMSG;
				goto fail;
			}
		}
		if (pass == 0) {
			struct col *pc = &p->cols[C_PRESENT];
			/* width 0 is one value, except for deltas (one step) */
			bool const_pres = pc->width == 0 && pc->kind != COL_DELTA;

			if (!pc->have) {
				what = "chunk lacks column present";
				goto cleanup;
			}
			struct {
				uint32_t hist[BTAPE_HAS__ALL + 1]; /* events per word */
				uint16_t seen[BTAPE_HAS__ALL + 1]; /* the distinct words */
			} pres;
			uint64_t words_or = 0;
			uint32_t nseen = 0;

			p->all_have = BTAPE_HAS__ALL;
			p->any_have = 0;
			if (!const_pres)
				memset(pres.hist, 0, sizeof(pres.hist));
			for (uint32_t i = 0; i < n; i += DEC_SLICE) {
				uint32_t cnt = n - i < DEC_SLICE ? (uint32_t)(n - i) : DEC_SLICE;

				col_take(pc, p->tmp, cnt);
				if (const_pres) {
					/* constant presence: the same bits in every event */
					if (p->tmp[0] > UINT32_MAX) {
						what = "bad presence bits";
						goto cleanup;
					}
					for (int c = C_COMPLETE; c < C__COUNT; c++)
						counts[c] += (p->tmp[0] & col_bit[c]) ? n : 0;
					p->all_have = (uint32_t)p->tmp[0] & BTAPE_HAS__ALL;
					p->any_have = p->all_have;
					break;
				}
				/* a histogram of the words: far fewer distinct words than events */
				for (uint32_t k = 0; k < cnt; k++) {
					const uint64_t v = p->tmp[k];
					const uint32_t h = (uint32_t)v & BTAPE_HAS__ALL;

					words_or |= v;
					if (!pres.hist[h]++)
						pres.seen[nseen++] = (uint16_t)h;
				}
				if (words_or > UINT32_MAX) {
					what = "bad presence bits";
					goto cleanup;
				}
			}
			for (uint32_t i = 0; i < nseen; i++) {
				const uint32_t h = pres.seen[i];

				p->all_have &= h;
				p->any_have |= h;
				for (uint32_t v = h; v; v &= v - 1)
					bitcounts[__builtin_ctz(v)] += pres.hist[h];
			}
			if (!const_pres)
				for (int c = C_COMPLETE; c < C__COUNT; c++)
					counts[c] = bitcounts[__builtin_ctz(col_bit[c])];
			/* decoding starts over: the same values again, whatever the kind */
			pc->j = pc->pj = 0;
			pc->prev = pc->origin;
		}
	}
	for (int c = 0; c < C__COUNT; c++) {
		if (!p->cols[c].have && (!col_bit[c] || counts[c])) {
			snprintf(err, errlen, "chunk lacks column %s", col_names[c]);
			ret = -EBADMSG;
			goto fail;
		}
	}
	for (int c = 0; c < C__COUNT; c++)
		p->fits[c] = p->cols[c].have && col_fits(&p->cols[c], col_max[c]);
	p->fits[C_ERROR] = p->cols[C_ERROR].have && col_fits_error(&p->cols[C_ERROR]);
	if (!n)
		p->all_have = p->any_have = 0;
	pred_reset(&p->pt);
	return 0;
cleanup:
	snprintf(err, errlen, "%s", what);
fail:
	dec_free_priv(d);
	d->n = 0;
	return ret;
}

/*
 * Assigns column values to a field of every event of the slice holding the column's presence
 * bit (all of them for a required column); absent fields get 0. EXPR uses v.
 */
#define ASSIGN(FIELD, EXPR)                                                        \
	do {                                                                       \
		d->cache[c].buf = NULL;                                            \
		if (have == cnt) {                                                 \
			for (uint32_t k = 0; k < cnt; k++) {                       \
				uint64_t v = tmp[k];                               \
				ev[k].FIELD = (EXPR);                              \
			}                                                          \
		} else {                                                           \
			for (uint32_t k = 0, j = 0; k < cnt; k++) {                \
				uint64_t v = (ev[k].present & bit) ? tmp[j++] : 0; \
				ev[k].FIELD = (ev[k].present & bit) ? (EXPR) : 0;  \
			}                                                          \
		}                                                                  \
	} while (0)

/*
 * A constant raw column (width 0): no per-value work. When the previous call stored the same
 * constant into the same buffer for at least as many events, the field is already there.
 */
#define ASSIGN_CONST(FIELD, EXPR)                                                 \
	do {                                                                      \
		const uint64_t v = cl->base;                                      \
		struct dec_cache *dc = &d->cache[c];                              \
		cl->j += have;                                                    \
		if (have == cnt) {                                                \
			if (dc->buf == ev && dc->val == v && dc->cnt >= cnt)      \
				break;                                            \
			for (uint32_t k = 0; k < cnt; k++)                        \
				ev[k].FIELD = (EXPR);                             \
			dc->buf = ev;                                             \
			dc->val = v;                                              \
			dc->cnt = cnt;                                            \
		} else {                                                          \
			for (uint32_t k = 0; k < cnt; k++)                        \
				ev[k].FIELD = (ev[k].present & bit) ? (EXPR) : 0; \
			dc->buf = NULL;                                           \
		}                                                                 \
	} while (0)

/*
 * A field the caller does not want (d->skip), or no event of the slice has: the column's
 * cursor moves past the slice's values without reading them, and the field reads 0 (stored
 * again only when the buffer does not hold 0 there already).
 */
#define SKIP(FIELD, ZERO)                                            \
	do {                                                         \
		struct dec_cache *dc = &d->cache[c];                 \
		cl->j += have;                                       \
		if (dc->buf == ev && dc->val == 0 && dc->cnt >= cnt) \
			break;                                       \
		for (uint32_t k = 0; k < cnt; k++)                   \
			ev[k].FIELD = (ZERO);                        \
		dc->buf = ev;                                        \
		dc->val = 0;                                         \
		dc->cnt = cnt;                                       \
	} while (0)

static void skip_field(struct chunk_dec *d, int c, struct col *cl, struct btape_event *ev,
		       uint32_t cnt, uint32_t have)
{
	switch (c) {
	case C_COMPLETE:
		SKIP(complete_ns, 0);
		break;
	case C_INSERT:
		SKIP(insert_ns, 0);
		break;
	case C_FLAGS:
		SKIP(flags, 0);
		break;
	case C_ERROR:
		SKIP(error, 0);
		break;
	case C_PID:
		SKIP(pid, 0);
		break;
	case C_TID:
		SKIP(tid, 0);
		break;
	case C_COMM:
		SKIP(comm, NULL);
		break;
	case C_CGROUP:
		SKIP(cgroup, 0);
		break;
	case C_CPU:
		SKIP(cpu, 0);
		break;
	case C_WAKE:
		SKIP(wake_ns, 0);
		break;
	case C_SLEPT:
		SKIP(slept_ns, 0);
		break;
	default:
		SKIP(qd, 0);
		break;
	}
}

static int check_range(const uint64_t *tmp, uint32_t n, uint64_t max, char *err, size_t errlen,
		       int c)
{
	for (uint32_t k = 0; k < n; k++)
		if (tmp[k] > max)
			return range_err(err, errlen, c);
	return 0;
}

/*
 * The extent limits (btape_extent_ok) over n decoded events, the first being event first of
 * the chunk: 0, or -EBADMSG naming the first event beyond them. A column whose every value
 * fits its share of the limits (a writer's narrow raw sizes) is not looked at; otherwise one
 * pass ORs the values: sizes below 2^32 and sectors below 2^53 end before 2^62 + 2^32.
 */
static int check_extents(const struct dec_priv *p, const struct btape_event *ev, uint32_t n,
			 uint32_t first, char *err, size_t errlen)
{
	const uint64_t bmask = col_fits(&p->cols[C_BYTES], BTAPE_BYTES_MAX) ? 0 : ~0ull;
	const uint64_t smask = col_fits(&p->cols[C_SECTOR], (1ull << 53) - 1) ? 0 : ~0ull;
	uint64_t x0 = 0, x1 = 0; /* bytes | sector >> 21: below 2^32 when both are */
	uint32_t k = 0;

	if (!bmask && !smask)
		return 0;
	for (; k + 2 <= n; k += 2) {
		x0 |= (ev[k].bytes & bmask) | (ev[k].sector & smask) >> 21;
		x1 |= (ev[k + 1].bytes & bmask) | (ev[k + 1].sector & smask) >> 21;
	}
	if (k < n)
		x0 |= (ev[k].bytes & bmask) | (ev[k].sector & smask) >> 21;
	if ((x0 | x1) <= BTAPE_BYTES_MAX)
		return 0;
	for (k = 0; k < n; k++) {
		if (!btape_extent_ok(ev[k].sector, ev[k].bytes)) {
			snprintf(err, errlen,
				 "event %" PRIu32 " of the chunk (sector %" PRIu64 ", %" PRIu64
				 " bytes): past the extent limits",
				 first + k, ev[k].sector, ev[k].bytes);
			return -EBADMSG;
		}
	}
	return 0;
}

int btape_chunk_dec_next(struct chunk_dec *d, struct btape_event *ev, uint32_t max, char *err,
			 size_t errlen)
{
	struct dec_priv *p = d->priv;
	struct col *cl;
	uint64_t *tmp;
	uint32_t cnt, have, bit = 0;
	int c, ret;

	if (!p || d->pos >= d->n)
		return 0;
	tmp = p->tmp;
	cnt = d->n - d->pos;
	if (cnt > max)
		cnt = max;
	if (cnt > DEC_SLICE)
		cnt = DEC_SLICE;
	have = cnt;

	c = C_PRESENT;
	cl = &p->cols[C_PRESENT];
	if (cl->width == 0 && cl->kind == COL_RAW) {
		ASSIGN_CONST(present, (uint32_t)v & BTAPE_HAS__ALL);
	} else if (!take_direct(d, c, ev, cnt, err, errlen)) {
		col_take(cl, tmp, cnt);
		d->cache[c].buf = NULL;
		for (uint32_t k = 0; k < cnt; k++)
			ev[k].present = (uint32_t)tmp[k] & BTAPE_HAS__ALL;
	}
	if (!take_direct(d, C_ISSUE, ev, cnt, err, errlen)) {
		col_take(&p->cols[C_ISSUE], tmp, cnt);
		for (uint32_t k = 0; k < cnt; k++)
			ev[k].issue_ns = tmp[k];
	}
	c = C_DEV;
	cl = &p->cols[C_DEV];
	if (cl->width == 0 && cl->kind == COL_RAW && p->fits[C_DEV]) {
		ASSIGN_CONST(dev, (uint32_t)v);
	} else if (!take_direct(d, c, ev, cnt, err, errlen)) {
		col_take(cl, tmp, cnt);
		if (!p->fits[C_DEV] && check_range(tmp, cnt, UINT32_MAX, err, errlen, C_DEV))
			return -EBADMSG;
		ASSIGN(dev, (uint32_t)v);
	}
	c = C_OP;
	cl = &p->cols[C_OP];
	if (cl->width == 0 && cl->kind == COL_RAW && p->fits[C_OP]) {
		ASSIGN_CONST(op, (uint8_t)v);
	} else if ((ret = take_direct(d, c, ev, cnt, err, errlen)) < 0) {
		return ret;
	} else if (!ret) {
		col_take(cl, tmp, cnt);
		if (!p->fits[C_OP] && check_range(tmp, cnt, UINT8_MAX, err, errlen, C_OP))
			return -EBADMSG;
		ASSIGN(op, (uint8_t)v);
	}
	c = C_BYTES;
	cl = &p->cols[C_BYTES];
	if (cl->width == 0 && cl->kind == COL_RAW) {
		ASSIGN_CONST(bytes, v);
	} else if (!take_direct(d, c, ev, cnt, err, errlen)) {
		col_take(cl, tmp, cnt);
		ASSIGN(bytes, v);
	}
	c = C_SECTOR;
	if (!take_direct(d, c, ev, cnt, err, errlen)) {
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
			ASSIGN(sector, v);
		}
	}
	for (c = C_COMPLETE; c < C__COUNT; c++) {
		cl = &p->cols[c];
		bit = col_bit[c];
		have = 0;
		if (p->all_have & bit) {
			have = cnt;
		} else if (p->any_have & bit) {
			for (uint32_t k = 0; k < cnt; k++)
				have += !!(ev[k].present & bit);
		}
		if (!have || (d->skip & bit)) {
			/* absent from the slice, or not wanted: 0 without a pass over the events */
			skip_field(d, c, cl, ev, cnt, have);
			continue;
		}
		if (cl->width == 0 && cl->kind == COL_RAW && c != C_COMM && c != C_ERROR &&
		    c != C_COMPLETE && c != C_INSERT && c != C_WAKE && p->fits[c]) {
			switch (c) {
			case C_FLAGS:
				ASSIGN_CONST(flags, (uint32_t)v);
				break;
			case C_PID:
				ASSIGN_CONST(pid, (uint32_t)v);
				break;
			case C_TID:
				ASSIGN_CONST(tid, (uint32_t)v);
				break;
			case C_CGROUP:
				ASSIGN_CONST(cgroup, v);
				break;
			case C_CPU:
				ASSIGN_CONST(cpu, (uint32_t)v);
				break;
			case C_SLEPT:
				ASSIGN_CONST(slept_ns, v);
				break;
			default:
				ASSIGN_CONST(qd, (uint32_t)v);
				break;
			}
			continue;
		}
		if (c == C_COMM && have == cnt && cl->width == 0 && cl->kind == COL_RAW) {
			if (cl->base >= d->ncomms) {
				snprintf(err, errlen, "column comm: index out of range");
				return -EBADMSG;
			}
			d->cache[c].buf = NULL;
			cl->j += cnt;
			for (uint32_t k = 0; k < cnt; k++)
				ev[k].comm = d->comms[cl->base];
			continue;
		}
		if (have == cnt) {
			ret = take_direct(d, c, ev, cnt, err, errlen);
			if (ret < 0)
				return ret;
			if (ret)
				continue;
		}
		if (have)
			col_take(cl, tmp, have);
		switch (c) {
		case C_COMPLETE:
			if (cl->kind == COL_DELTA)
				ASSIGN(complete_ns, v);
			else
				ASSIGN(complete_ns, ev[k].issue_ns + v);
			break;
		case C_INSERT:
			ASSIGN(insert_ns, ev[k].issue_ns - v);
			break;
		case C_WAKE:
			ASSIGN(wake_ns, ev[k].issue_ns - v);
			break;
		case C_SLEPT:
			ASSIGN(slept_ns, v);
			break;
		case C_FLAGS:
			if (!p->fits[c] && check_range(tmp, have, UINT32_MAX, err, errlen, c))
				return -EBADMSG;
			ASSIGN(flags, (uint32_t)v);
			break;
		case C_ERROR:
			for (uint32_t k = 0; k < have && !p->fits[c]; k++)
				if ((int64_t)tmp[k] < INT32_MIN || (int64_t)tmp[k] > INT32_MAX)
					return range_err(err, errlen, c);
			ASSIGN(error, (int32_t)(int64_t)v);
			break;
		case C_PID:
			if (!p->fits[c] && check_range(tmp, have, UINT32_MAX, err, errlen, c))
				return -EBADMSG;
			ASSIGN(pid, (uint32_t)v);
			break;
		case C_TID:
			if (!p->fits[c] && check_range(tmp, have, UINT32_MAX, err, errlen, c))
				return -EBADMSG;
			ASSIGN(tid, (uint32_t)v);
			break;
		case C_COMM:
			d->cache[c].buf = NULL;
			if (have == cnt && d->ncomms) {
				/* the range check in the same pass; a bad index reads entry 0 */
				const uint64_t nc = d->ncomms;
				uint64_t bad = 0;

				for (uint32_t k = 0; k < cnt; k++) {
					const uint64_t x = tmp[k];

					bad |= x >= nc;
					ev[k].comm = d->comms[x < nc ? x : 0];
				}
				if (!bad)
					break;
			}
			if (check_range(tmp, have, d->ncomms ? d->ncomms - 1 : 0, err, errlen, c) ||
			    (have && !d->ncomms)) {
				snprintf(err, errlen, "column comm: index out of range");
				return -EBADMSG;
			}
			if (have == cnt) {
				for (uint32_t k = 0; k < cnt; k++)
					ev[k].comm = d->comms[tmp[k]];
			} else {
				for (uint32_t k = 0, j = 0; k < cnt; k++)
					ev[k].comm =
						(ev[k].present & bit) ? d->comms[tmp[j++]] : NULL;
			}
			break;
		case C_CGROUP:
			ASSIGN(cgroup, v);
			break;
		case C_CPU:
			if (!p->fits[c] && check_range(tmp, have, UINT32_MAX, err, errlen, c))
				return -EBADMSG;
			ASSIGN(cpu, (uint32_t)v);
			break;
		default:
			if (!p->fits[c] && check_range(tmp, have, UINT32_MAX, err, errlen, c))
				return -EBADMSG;
			ASSIGN(qd, (uint32_t)v);
			break;
		}
	}
	ret = check_extents(p, ev, cnt, d->pos, err, errlen);
	if (ret)
		return ret;
	d->pos += cnt;
	return (int)cnt;
}
