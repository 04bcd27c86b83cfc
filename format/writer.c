// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libbiotape: the streaming writer. Events enter a reorder buffer (sorted by issue_ns when
 * something is released, ties in arrival order); the watermark promise or the buffer's size
 * limit releases them in issue order into the current chunk; a chunk is encoded, compressed
 * and written as one frame as soon as it is full or old (flush interval). See docs/BTAPE-FORMAT.md
 * "Writer".
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <zstd.h>

#include "btape_internal.h"
#include "ftags.h"

#define DEFAULT_ZSTD_LEVEL 3
#define DEFAULT_CHUNK_EVENTS 65536
#define DEFAULT_FLUSH_INTERVAL_NS 1000000000ull
#define DEFAULT_REORDER_MAX_EVENTS (4u << 20)
#define REORDER_MAX_LIMIT (1ull << 31)
#define WRITER_COMM_MAX_BYTES (256u << 20)
#define CLOCK_CHECK_EVERY_ADDS 256
#define EMIT_BLOCK 256 /* released events put into the columns together */
#define FOOTER_RESERVE_STEP (64u << 10) /* the footer's reserve grows in steps of this */

enum wmode { W_TMP, W_DIRECT, W_FD };

/* A held event, in the reorder buffer's arrival-order array; its key is in the pending list. */
struct held {
	struct btape_event ev;
	uint32_t comm_id;
};

struct hkey {
	uint64_t key; /* issue_ns */
	uint32_t idx; /* in buf */
};

struct btape_writer {
	int fd;
	enum wmode mode;
	char *path, *tmp;
	bool sink;    /* W_DIRECT onto the null device: never truncated or removed */
	bool created; /* W_DIRECT: this writer created path (dev, ino: the file it made) */
	dev_t created_dev;
	ino_t created_ino;
	int zstd_level;
	uint32_t chunk_events;
	uint64_t flush_interval_ns;
	uint64_t reorder_max;
	bool fsync_chunks;
	bool writeback_chunks;
	bool keep_on_full;	/* opts.footer_reserve */
	bool full;		/* a write failed for space; the file ends at its last frame */
	int reserve_fd;		/* unnamed file holding the footer's space (-1: none) */
	uint64_t reserved;	/* its size */

	/* the reorder buffer: held events in arrival order (buf), their keys (pend; sorted at a
	 * release, pend_tmp is the radix sort's other half), released flags (gone) */
	struct held *buf;
	struct hkey *pend, *pend_tmp;
	uint8_t *gone;
	size_t npend, pend_cap;
	uint64_t pend_min, pend_max; /* smallest and largest pending key (none: MAX, 0) */
	uint64_t release_wm;	     /* the watermark of the last release */
	uint64_t watermark;
	uint64_t high; /* largest issue_ns released so far */
	bool released_any;

	struct chunk_cols cc; /* the pending chunk, column-major */
	/* released events on their way into cc (pointers into buf, or the event being added) */
	const struct btape_event *blk_ev[EMIT_BLOCK];
	uint32_t blk_comm[EMIT_BLOCK], nblk;
	uint32_t nc;
	uint64_t chunk_t0;
	uint32_t adds_since_check;

	void (*release_fn)(void *ctx, struct btape_event *ev);
	void *release_ctx;

	struct btape_intern *it;
	uint32_t last_comm_id; /* the last event's name (UINT32_MAX: none yet) */
	uint32_t *stamp, *local, stamp_cap, gen;
	const char **comms;
	uint32_t *comm_len;

	struct chunk_enc *ce;
	struct bbuf raw, comp, fbuf;
	ZSTD_CCtx *cctx;

	struct btape_summary sum;
	struct btape_summary in_file; /* sum as of the last chunk written completely */
	struct btape_index ix;
	struct btape_ftags ftags; /* the footer's tags */
	uint64_t off;
	uint64_t added;
	int err;
	char errmsg[BTAPE_ERRMSG_LEN];
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((format(printf, 3, 4))) static int fail(struct btape_writer *w, int err,
						      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->errmsg, sizeof(w->errmsg), fmt, ap);
	va_end(ap);
	if (!w->err)
		w->err = err;
	return err;
}

static const char *wname(const struct btape_writer *w)
{
	return w->path ? w->path : "trace";
}

static int write_all(struct btape_writer *w, const void *a, size_t alen, const void *b, size_t blen)
{
	struct iovec iov[2] = {{(void *)a, alen}, {(void *)b, blen}};
	int cnt = blen ? 2 : 1, i = 0;

	while (i < cnt) {
		ssize_t n = writev(w->fd, iov + i, cnt - i);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return fail(w, -errno, "write %s: %s", wname(w), strerror(errno));
		}
		w->off += (uint64_t)n;
		while (i < cnt && (size_t)n >= iov[i].iov_len) {
			n -= (ssize_t)iov[i].iov_len;
			i++;
		}
		if (i < cnt) {
			iov[i].iov_base = (char *)iov[i].iov_base + n;
			iov[i].iov_len -= (size_t)n;
		}
	}
	return 0;
}

static int sync_fd(struct btape_writer *w)
{
	if (fdatasync(w->fd) && errno != EINVAL && errno != EROFS && errno != ENOTSUP)
		return fail(w, -errno, "fdatasync %s: %s", wname(w), strerror(errno));
	return 0;
}

static bool space_err(int err)
{
	return err == -ENOSPC || err == -EDQUOT || err == -EFBIG;
}

/*
 * After a write that failed for lack of space (opts.footer_reserve, __open_direct): cuts the
 * file back to OFF, the end of its last complete frame, so that it is readable to there and
 * the footer can still go after it.
 */
static void cut_back(struct btape_writer *w, uint64_t off, int err)
{
	if (!w->keep_on_full || w->mode != W_DIRECT || !space_err(err))
		return;
	if (ftruncate(w->fd, (off_t)off) || lseek(w->fd, (off_t)off, SEEK_SET) != (off_t)off)
		return;
	w->off = off;
	w->full = true;
}

/* Gives the footer's space back to the file system (right before the footer is written). */
static void reserve_release(struct btape_writer *w)
{
	if (w->reserve_fd < 0)
		return;
	/* truncated first, so the blocks are free when this returns on any file system */
	if (ftruncate(w->reserve_fd, 0)) {
		/* close frees them too */
	}
	close(w->reserve_fd);
	w->reserve_fd = -1;
	w->reserved = 0;
}

/* An upper bound of the footer frame and the trailer for a file of NCHUNKS chunks. */
static uint64_t footer_bound(const struct btape_writer *w, uint64_t nchunks)
{
	/* msgpack: keys, totals and the version under 1 KiB, two count arrays, four numbers of
	 * at most 9 bytes per chunk, and the tags (their map header: at most 5 bytes); zstd's
	 * bound and write_frame's slack on top */
	uint64_t raw = 1024 + 2 * BTAPE_OP__COUNT * 9 + nchunks * 4 * 9 + w->ftags.body_bytes + 5;

	return ZSTD_compressBound(raw) + 64 + BTAPE_ENV_SIZE + BTAPE_TRAILER_SIZE;
}

/*
 * Keeps the space for the footer of a file of NCHUNKS chunks set aside (opts.footer_reserve):
 * an unnamed file (O_TMPFILE) in the trace's directory, on the same file system, that
 * __close empties just before it writes the footer. When it cannot grow, the disk is full as
 * far as the trace is concerned: the error is -ENOSPC, and the file ends at its last chunk.
 */
static int reserve_grow(struct btape_writer *w, uint64_t nchunks)
{
	uint64_t need = footer_bound(w, nchunks);
	int e;

	if (w->reserve_fd < 0 || need <= w->reserved)
		return 0;
	need = (need + FOOTER_RESERVE_STEP - 1) / FOOTER_RESERVE_STEP * FOOTER_RESERVE_STEP;
	if (fallocate(w->reserve_fd, 0, 0, (off_t)need) == 0) {
		w->reserved = need;
		return 0;
	}
	e = errno;
	if (space_err(-e)) {
		w->full = true;
		return fail(w, -e, "write %s: %s (no room left for the footer)", wname(w),
			    strerror(e));
	}
	reserve_release(w); /* a file system without fallocate: no reserve */
	return 0;
}

/* Opens the footer's reserve (opts.footer_reserve); best effort: O_TMPFILE may be missing. */
static int reserve_open(struct btape_writer *w)
{
	char *copy;

	if (!w->keep_on_full || w->mode != W_DIRECT || !w->path)
		return 0;
	copy = strdup(w->path);
	if (!copy)
		return fail(w, -ENOMEM, "%s: out of memory", wname(w));
	w->reserve_fd = open(dirname(copy), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	free(copy);
	return reserve_grow(w, 1);
}

/* Compresses raw (with zstd block ends at cuts[]) and writes it as one frame. */
static int write_frame(struct btape_writer *w, unsigned int type, const struct bbuf *raw,
		       const size_t *cuts, size_t ncuts)
{
	uint8_t env[BTAPE_ENV_SIZE];
	ZSTD_outBuffer out;
	size_t cap, pos = 0, r;
	uint64_t start = w->off;
	int err;

	if (raw->len > BTAPE_FRAME_MAX_BYTES)
		return fail(w, -EFBIG, "%s: frame too large (%zu bytes)", wname(w), raw->len);
	cap = ZSTD_compressBound(raw->len) + 16 * ncuts + 64;
	w->comp.len = 0;
	err = bbuf_reserve(&w->comp, cap);
	if (err)
		return fail(w, err, "%s: out of memory", wname(w));
	ZSTD_CCtx_reset(w->cctx, ZSTD_reset_session_only);
	ZSTD_CCtx_setPledgedSrcSize(w->cctx, raw->len);
	out = (ZSTD_outBuffer){w->comp.p, cap, 0};
	for (size_t c = 0; c <= ncuts; c++) {
		size_t end = c < ncuts ? cuts[c] : raw->len;
		ZSTD_EndDirective mode = c < ncuts ? ZSTD_e_flush : ZSTD_e_end;
		ZSTD_inBuffer in;

		if (end < pos || end > raw->len)
			continue;
		if (end == pos && c < ncuts)
			continue;
		in = (ZSTD_inBuffer){raw->p + pos, end - pos, 0};
		do {
			r = ZSTD_compressStream2(w->cctx, &out, &in, mode);
			if (ZSTD_isError(r))
				return fail(w, -EIO, "%s: zstd: %s", wname(w),
					    ZSTD_getErrorName(r));
			if (r && out.pos == out.size)
				return fail(w, -EIO, "%s: zstd: output buffer too small", wname(w));
		} while (r || in.pos < in.size);
		pos = end;
	}
	w->comp.len = out.pos;
	btape_env_build(env, type, (uint32_t)out.pos, (uint32_t)raw->len, w->comp.p);
	err = write_all(w, env, sizeof(env), w->comp.p, out.pos);
	if (err)
		cut_back(w, start, err);
	return err;
}

/* The released events not yet in the chunk's columns go in (before anything moves them). */
static void cols_flush(struct btape_writer *w)
{
	btape_chunk_cols_add_n(&w->cc, w->blk_ev, w->blk_comm, w->nblk);
	w->nblk = 0;
}

static int flush_chunk(struct btape_writer *w)
{
	uint64_t off = w->off, tmin = UINT64_MAX, tmax = 0;
	uint64_t *cid = w->cc.v[BTAPE_COL_COMM], *issue = w->cc.v[1];
	uint32_t ncomms = 0, nc = w->nc;
	size_t *cuts, ncuts;
	int err;

	if (!w->nc)
		return 0;
	err = reserve_grow(w, w->ix.n + 1);
	if (err)
		return err;
	cols_flush(w);
	if (++w->gen == 0) {
		memset(w->stamp, 0, sizeof(*w->stamp) * w->stamp_cap);
		w->gen = 1;
	}
	for (uint32_t i = 0; i < nc; i++) {
		tmin = issue[i] < tmin ? issue[i] : tmin;
		tmax = issue[i] > tmax ? issue[i] : tmax;
	}
	/* global comm ids -> this chunk's table */
	for (uint32_t j = 0; j < w->cc.m[BTAPE_COL_COMM]; j++) {
		uint32_t id = (uint32_t)cid[j];

		if (w->stamp[id] != w->gen) {
			w->stamp[id] = w->gen;
			w->local[id] = ncomms;
			w->comms[ncomms] = btape_intern_str(w->it, id);
			w->comm_len[ncomms] = btape_intern_len(w->it, id);
			ncomms++;
		}
		cid[j] = w->local[id];
	}
	err = btape_chunk_encode_cols(w->ce, &w->cc, w->comms, w->comm_len, ncomms, &w->raw, &cuts,
				      &ncuts);
	if (err)
		return fail(w, err, "%s: encoding a chunk: %s", wname(w), strerror(-err));
	w->nc = 0;
	err = write_frame(w, BTAPE_FRAME_CHUNK, &w->raw, cuts, ncuts);
	if (err)
		return err;
	err = btape_index_add(&w->ix, off, tmin, tmax, nc);
	if (err)
		return fail(w, err, "%s: out of memory", wname(w));
	w->in_file = w->sum; /* every event released so far was in this chunk */
	if (w->fsync_chunks)
		return sync_fd(w);
	if (w->writeback_chunks && w->off > off)
		/* best effort (a pipe or an odd file system says no): writeback comes later then */
		(void)sync_file_range(w->fd, (off_t)off, (off_t)(w->off - off),
				      SYNC_FILE_RANGE_WRITE);
	return 0;
}

static int emit(struct btape_writer *w, struct held *h)
{
	const struct btape_event *e = &h->ev;
	struct btape_summary *s = &w->sum;

	if (w->release_fn)
		w->release_fn(w->release_ctx, &h->ev);
	if (!w->nc)
		w->chunk_t0 = mono_ns();
	w->blk_ev[w->nblk] = e;
	w->blk_comm[w->nblk++] = h->comm_id;
	w->nc++;
	if (!s->events || e->issue_ns < s->first_issue_ns)
		s->first_issue_ns = e->issue_ns;
	if (e->issue_ns > s->last_issue_ns)
		s->last_issue_ns = e->issue_ns;
	if ((e->present & BTAPE_HAS_COMPLETE) && e->complete_ns > s->last_complete_ns)
		s->last_complete_ns = e->complete_ns;
	s->events++;
	s->count_by_op[e->op]++;
	s->bytes_by_op[e->op] += e->bytes;
	if (!w->released_any || e->issue_ns > w->high)
		w->high = e->issue_ns;
	w->released_any = true;
	if (w->nblk == EMIT_BLOCK)
		cols_flush(w);
	if (w->nc >= w->chunk_events)
		return flush_chunk(w);
	return 0;
}

/* Sorts pending keys of up to this many by insertion (stable), more with the radix sort. */
#define PEND_INSERTION_MAX 64
#define RADIX_BITS_MAX 11 /* digit size for large lists; 8 bits below RADIX_SMALL keys */
#define RADIX_SMALL 4096

/*
 * Sorts the pending keys by issue time, stably: equal keys keep their order in the list, which
 * is arrival order (buf keeps it, and the keys are rebuilt from buf after a release). An
 * LSD radix sort on the keys' offsets from the smallest, 11 bits a pass (8 for short lists),
 * as many passes as the range needs (three up to 8.6 s), and passes in which every key has the
 * same digit skipped: completion order is close to issue order but not close enough for an
 * insertion sort.
 */
static void pend_sort(struct btape_writer *w)
{
	struct hkey *a = w->pend, *b = w->pend_tmp;
	const size_t n = w->npend;
	const uint64_t lo = w->pend_min;
	uint64_t span = 0;

	if (n <= PEND_INSERTION_MAX) {
		for (size_t i = 1; i < n; i++) {
			struct hkey k = a[i];
			size_t j = i;

			for (; j && a[j - 1].key > k.key; j--)
				a[j] = a[j - 1];
			a[j] = k;
		}
		return;
	}
	for (size_t i = 0; i < n; i++)
		span |= a[i].key - lo;
	const unsigned int bits = n < RADIX_SMALL ? 8 : RADIX_BITS_MAX;
	const uint32_t nb = 1u << bits, mask = nb - 1;

	for (unsigned int shift = 0; shift < 64 && (span >> shift); shift += bits) {
		uint32_t cnt[1u << RADIX_BITS_MAX], sum = 0;
		bool one = false;

		memset(cnt, 0, nb * sizeof(cnt[0]));
		for (size_t i = 0; i < n; i++)
			cnt[((a[i].key - lo) >> shift) & mask]++;
		for (uint32_t d = 0; d < nb; d++) {
			uint32_t c = cnt[d];

			one |= c == n;
			cnt[d] = sum;
			sum += c;
		}
		if (one)
			continue;
		for (size_t i = 0; i < n; i++)
			b[cnt[((a[i].key - lo) >> shift) & mask]++] = a[i];
		struct hkey *t = a;

		a = b;
		b = t;
	}
	w->pend = a;
	w->pend_tmp = b;
}

BTAPE_API void btape_writer__set_release_hook(struct btape_writer *w,
					      void (*fn)(void *ctx, struct btape_event *ev),
					      void *ctx)
{
	w->release_fn = fn;
	w->release_ctx = ctx;
}

/* Resizes *pp to n elements of size sz; false (and *pp untouched) without memory. */
static bool grow(void *pp, size_t n, size_t sz)
{
	void *p = realloc(*(void **)pp, n * sz);

	if (p)
		*(void **)pp = p;
	return p != NULL;
}

/* Appends x to the held events and its issue time to the pending keys. */
static int pend_push(struct btape_writer *w, const struct held *x)
{
	const uint64_t key = x->ev.issue_ns;

	if (w->npend == w->pend_cap) {
		size_t cap = w->pend_cap ? w->pend_cap * 2 : 1024;

		if (cap > w->reorder_max + 1)
			cap = w->reorder_max + 1; /* the add past the limit releases */
		if (!grow(&w->pend, cap, sizeof(*w->pend)) ||
		    !grow(&w->pend_tmp, cap, sizeof(*w->pend_tmp)) ||
		    !grow(&w->buf, cap, sizeof(*w->buf)) || !grow(&w->gone, cap, 1))
			return fail(w, -ENOMEM, "%s: out of memory (reorder buffer)", wname(w));
		memset(w->gone + w->pend_cap, 0, cap - w->pend_cap);
		w->pend_cap = cap;
	}
	w->buf[w->npend] = *x;
	w->pend[w->npend] = (struct hkey){.key = key, .idx = (uint32_t)w->npend};
	w->npend++;
	if (key < w->pend_min)
		w->pend_min = key;
	if (key > w->pend_max)
		w->pend_max = key;
	return 0;
}

/*
 * Whether a release is worth its cost now. A release sorts and compacts everything held, so
 * it waits until the watermark has moved by a quarter of the distance to the newest held
 * event since the last release (about a quarter of what is held, at a steady rate) or has
 * passed every held event. A caller that advances often with a long window (the importer:
 * every 256 events, windows of seconds) then pays a few sorts per event held, not one per
 * advance. A recorder's watermark moves far more than that between its advances.
 */
static bool release_due(const struct btape_writer *w)
{
	uint64_t wm = w->watermark;

	if (w->pend_min >= wm)
		return false;
	return w->pend_max < wm || wm - w->release_wm >= (w->pend_max - wm) / 4;
}

/*
 * Releases what the watermark and the size limit allow, in issue order; all == true releases
 * everything. Over the size limit, the oldest go until a quarter of it is free again, so that
 * a stalled watermark costs one sort per limit/4 events, not one per event. The events held
 * on move to the front of buf, still in arrival order; arrival is close to issue order, so
 * both the appends and the reads in issue order run through buf nearly sequentially.
 */
static int release(struct btape_writer *w, bool all)
{
	size_t n = w->npend, i = 0, j = 0, keep;
	uint64_t lo = UINT64_MAX, hi = 0;
	int err = 0;

	if (!n || (!all && n <= w->reorder_max && !release_due(w)))
		return 0;
	w->release_wm = w->watermark;
	pend_sort(w);
	keep = all ? 0 : n > w->reorder_max ? w->reorder_max - w->reorder_max / 4 : n;
	for (; i < n && (w->pend[i].key < w->watermark || n - i > keep); i++) {
		err = emit(w, &w->buf[w->pend[i].idx]);
		if (err) {
			i++;
			break;
		}
	}
	cols_flush(w);
	if (i < n) {
		for (size_t k = 0; k < i; k++)
			w->gone[w->pend[k].idx] = 1;
		for (size_t k = 0; k < n; k++) {
			if (w->gone[k]) {
				w->gone[k] = 0;
				continue;
			}
			if (j != k)
				w->buf[j] = w->buf[k];
			w->pend[j] = (struct hkey){.key = w->buf[j].ev.issue_ns, .idx = (uint32_t)j};
			lo = w->pend[j].key < lo ? w->pend[j].key : lo;
			hi = w->pend[j].key > hi ? w->pend[j].key : hi;
			j++;
		}
	}
	w->npend = j;
	w->pend_min = lo;
	w->pend_max = hi;
	return err;
}

static int check_interval(struct btape_writer *w)
{
	w->adds_since_check = 0;
	if (w->nc && mono_ns() - w->chunk_t0 >= w->flush_interval_ns)
		return flush_chunk(w);
	return 0;
}

BTAPE_API int btape_writer__add(struct btape_writer *w, const struct btape_event *ev)
{
	struct held h;
	int err;

	if (!w || !ev)
		return -EINVAL;
	if (w->err)
		return w->err;
	if (ev->op >= BTAPE_OP__COUNT || (ev->present & ~(uint32_t)BTAPE_HAS__ALL) ||
	    ((ev->present & BTAPE_HAS_COMM) && !ev->comm)) {
		snprintf(w->errmsg, sizeof(w->errmsg), "%s: invalid event (op %u, present %#x)",
			 wname(w), ev->op, ev->present);
		return -EINVAL;
	}
	if (!btape_extent_ok(ev->sector, ev->bytes)) {
		snprintf(w->errmsg, sizeof(w->errmsg),
			 "%s: invalid event (sector %" PRIu64 ", %" PRIu64
			 " bytes): past the extent limits (docs/BTAPE-FORMAT.md)",
			 wname(w), ev->sector, ev->bytes);
		return -EINVAL;
	}
	h.ev = *ev;
	h.comm_id = UINT32_MAX;
	h.ev.comm = NULL;
	/* zero absent fields so the file never depends on garbage */
	if (!(ev->present & BTAPE_HAS_COMPLETE))
		h.ev.complete_ns = 0;
	if (!(ev->present & BTAPE_HAS_INSERT))
		h.ev.insert_ns = 0;
	if (ev->present & BTAPE_HAS_COMM) {
		size_t len = strlen(ev->comm);
		int64_t id;

		/* a recording's names repeat: check the last one before hashing */
		if (w->last_comm_id != UINT32_MAX &&
		    len == btape_intern_len(w->it, w->last_comm_id) &&
		    !memcmp(ev->comm, btape_intern_str(w->it, w->last_comm_id), len))
			id = w->last_comm_id;
		else
			id = btape_intern_get(w->it, ev->comm, len);

		if (id < 0) {
			snprintf(w->errmsg, sizeof(w->errmsg), "%s: process name: %s", wname(w),
				 id == -E2BIG ? "too many distinct names" : strerror((int)-id));
			return (int)id;
		}
		if ((uint32_t)id >= w->stamp_cap) {
			uint32_t cap = w->stamp_cap ? w->stamp_cap * 2 : 256;
			uint32_t *st, *lo;

			while (cap <= (uint32_t)id)
				cap *= 2;
			st = realloc(w->stamp, sizeof(*st) * cap);
			if (st)
				w->stamp = st;
			lo = realloc(w->local, sizeof(*lo) * cap);
			if (lo)
				w->local = lo;
			if (!st || !lo)
				return fail(w, -ENOMEM, "%s: out of memory", wname(w));
			memset(w->stamp + w->stamp_cap, 0, sizeof(*st) * (cap - w->stamp_cap));
			w->stamp_cap = cap;
		}
		h.comm_id = w->last_comm_id = (uint32_t)id;
		h.ev.comm = btape_intern_str(w->it, (uint32_t)id);
	}
	if (ev->issue_ns < w->watermark || (w->released_any && ev->issue_ns < w->high))
		w->sum.order_violations++;
	if (ev->issue_ns < w->watermark && w->pend_min >= w->watermark) {
		/* every held event is at or past the watermark: this one is the oldest */
		w->added++;
		err = emit(w, &h);
		cols_flush(w);
	} else {
		err = pend_push(w, &h);
		if (err)
			return err;
		w->added++;
		if (w->npend > w->reorder_max)
			err = release(w, false);
	}
	if (err)
		return err;
	if (w->nc && ++w->adds_since_check >= CLOCK_CHECK_EVERY_ADDS)
		return check_interval(w);
	return 0;
}

BTAPE_API int btape_writer__advance(struct btape_writer *w, uint64_t watermark_ns)
{
	int err;

	if (!w)
		return -EINVAL;
	if (w->err)
		return w->err;
	if (watermark_ns > w->watermark)
		w->watermark = watermark_ns;
	err = release(w, false);
	if (err)
		return err;
	return check_interval(w);
}

BTAPE_API int btape_writer__flush(struct btape_writer *w)
{
	int err;

	if (!w)
		return -EINVAL;
	if (w->err)
		return w->err;
	err = release(w, true);
	if (!err)
		err = flush_chunk(w);
	if (!err)
		err = sync_fd(w);
	return err;
}

BTAPE_API void btape_writer__set_clock_stop(struct btape_writer *w,
					   const struct btape_clock_sync *sync)
{
	w->sum.has_clock_stop = true;
	w->sum.clock_stop = *sync;
}

BTAPE_API void btape_writer__set_interrupted(struct btape_writer *w)
{
	w->sum.interrupted = true;
}

BTAPE_API int btape_writer__set_footer_tag(struct btape_writer *w, const char *key,
					   const void *value, size_t len)
{
	char why[BTAPE_ERRMSG_LEN - 64];
	int err;

	if (!w)
		return -EINVAL;
	if (w->err)
		return w->err;
	err = btape_ftags_set(&w->ftags, key, value, len, why, sizeof(why));
	if (err) {
		snprintf(w->errmsg, sizeof(w->errmsg), "%s: %s", wname(w), why);
		return err;
	}
	/* the footer's reserve (opts.footer_reserve) holds the tags too */
	return reserve_grow(w, w->ix.n + 1);
}

BTAPE_API void btape_writer__add_lost(struct btape_writer *w, uint64_t ringbuf, uint64_t inflight,
				      uint64_t writer)
{
	if (!w)
		return;
	w->sum.lost_ringbuf += ringbuf;
	w->sum.lost_inflight += inflight;
	w->sum.lost_writer += writer;
	w->sum.lost_events += ringbuf + inflight + writer;
}

BTAPE_API uint64_t btape_writer__bytes(const struct btape_writer *w)
{
	return w ? w->off : 0;
}

BTAPE_API uint64_t btape_writer__events(const struct btape_writer *w)
{
	return w ? w->added : 0;
}

BTAPE_API int btape_writer__file_summary(const struct btape_writer *w, struct btape_summary *s)
{
	struct btape_summary f;

	if (!w || !s)
		return -EINVAL;
	f = w->in_file;
	f.chunks = w->ix.n;
	f.file_bytes = w->off;
	return btape_summary_copy_out(s, &f);
}

BTAPE_API uint64_t btape_writer__order_violations(const struct btape_writer *w)
{
	return w ? w->sum.order_violations : 0;
}

BTAPE_API const char *btape_writer__errmsg(const struct btape_writer *w)
{
	if (!w)
		return "no writer";
	return w->errmsg[0] ? w->errmsg : "no error";
}

static void writer_free(struct btape_writer *w)
{
	if (!w)
		return;
	if (w->reserve_fd >= 0)
		close(w->reserve_fd);
	free(w->path);
	free(w->tmp);
	free(w->buf);
	free(w->pend);
	free(w->pend_tmp);
	free(w->gone);
	btape_chunk_cols_free(&w->cc);
	free(w->stamp);
	free(w->local);
	free(w->comms);
	free(w->comm_len);
	btape_intern_free(w->it);
	btape_chunk_enc_free(w->ce);
	bbuf_free(&w->raw);
	bbuf_free(&w->comp);
	bbuf_free(&w->fbuf);
	ZSTD_freeCCtx(w->cctx);
	btape_index_free(&w->ix);
	btape_ftags_free(&w->ftags);
	free(w);
}

/* Header + metadata frame. */
static int write_start(struct btape_writer *w, const struct btape_meta *meta)
{
	struct btape_meta empty = {0};
	uint8_t hdr[BTAPE_HEADER_SIZE] = {0};
	int err;

	btape_header_build(hdr, BTAPE_FORMAT_VERSION_MAJOR, BTAPE_FORMAT_VERSION_MINOR);
	err = write_all(w, hdr, sizeof(hdr), NULL, 0);
	if (err)
		return err;
	w->fbuf.len = 0;
	if (!meta)
		meta = &empty;
	err = btape_meta_pack(&w->fbuf, meta);
	if (err == -E2BIG)
		return fail(w, err,
			    "%s: metadata too large: %u devices, %u tags (a file holds at most %u "
			    "devices and %u tags)",
			    wname(w), meta->ndevices, meta->ntags, BTAPE_DEVICES_MAX,
			    BTAPE_TAGS_MAX);
	if (err)
		return fail(w, err, "%s: out of memory", wname(w));
	err = write_frame(w, BTAPE_FRAME_META, &w->fbuf, NULL, 0);
	if (err)
		return err;
	return reserve_open(w);
}

static int writer_new(struct btape_writer **wp, const struct btape_meta *meta,
		      const struct btape_writer_opts *uopts)
{
	struct btape_writer_opts o = {0};
	struct btape_writer *w;

	*wp = NULL;
	if (meta && ((meta->ndevices && !meta->devices) || (meta->ntags && !meta->tags)))
		return -EINVAL;
	if (uopts && uopts->sz)
		memcpy(&o, uopts, uopts->sz < sizeof(o) ? uopts->sz : sizeof(o));
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fd = -1;
	w->reserve_fd = -1;
	w->zstd_level = o.zstd_level ? o.zstd_level : DEFAULT_ZSTD_LEVEL;
	w->chunk_events = o.chunk_events ? o.chunk_events : DEFAULT_CHUNK_EVENTS;
	if (w->chunk_events > BTAPE_WRITER_CHUNK_MAX)
		w->chunk_events = BTAPE_WRITER_CHUNK_MAX;
	w->flush_interval_ns =
		o.flush_interval_ns ? o.flush_interval_ns : DEFAULT_FLUSH_INTERVAL_NS;
	w->reorder_max = o.reorder_max_events ? o.reorder_max_events : DEFAULT_REORDER_MAX_EVENTS;
	if (w->reorder_max > REORDER_MAX_LIMIT)
		w->reorder_max = REORDER_MAX_LIMIT; /* held events are indexed with 32 bits */
	w->pend_min = UINT64_MAX;
	w->last_comm_id = UINT32_MAX;
	w->fsync_chunks = o.fsync;
	w->writeback_chunks = o.writeback;
	w->keep_on_full = o.footer_reserve;
	w->comms = malloc(sizeof(*w->comms) * w->chunk_events);
	w->comm_len = malloc(sizeof(*w->comm_len) * w->chunk_events);
	w->it = btape_intern_new(WRITER_COMM_MAX_BYTES);
	w->ce = btape_chunk_enc_new();
	w->cctx = ZSTD_createCCtx();
	if (btape_chunk_cols_init(&w->cc, w->chunk_events) || !w->comms || !w->comm_len || !w->it ||
	    !w->ce || !w->cctx) {
		writer_free(w);
		return -ENOMEM;
	}
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, w->zstd_level);
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1);
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_contentSizeFlag, 1);
	*wp = w;
	return 0;
}

static bool is_null_dev(const struct stat *sb)
{
	return S_ISCHR(sb->st_mode) && major(sb->st_rdev) == 1 && minor(sb->st_rdev) == 3;
}

static const char *kind_name(mode_t m)
{
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISSOCK(m))
		return "a socket";
	return "not a regular file";
}

/* 0: regular; 1: the null device; -EISDIR / -EPERM (with the reason in why): anything else. */
static int check_kind(const char *path, const struct stat *sb, char *why, size_t len)
{
	if (S_ISREG(sb->st_mode))
		return 0;
	if (is_null_dev(sb))
		return 1;
	snprintf(why, len, "%s is %s: refusing to write over it (outputs must be regular files)",
		 path, kind_name(sb->st_mode));
	return S_ISDIR(sb->st_mode) ? -EISDIR : -EPERM;
}

BTAPE_API int btape_output_check(const char *path, char *errmsg, size_t errlen)
{
	char *why = errmsg;
	size_t len = errmsg ? errlen : 0;

	struct stat sb;

	if (!path || !*path) {
		snprintf(why, len, "no output path");
		return -EINVAL;
	}
	if (lstat(path, &sb) < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(why, len, "%s: %s", path, strerror(errno));
		return -errno;
	}
	if (S_ISLNK(sb.st_mode) && stat(path, &sb) < 0) {
		if (errno == ENOENT)
			return 0; /* a dangling symlink: renaming over it replaces the link only */
		snprintf(why, len, "%s: %s", path, strerror(errno));
		return -errno;
	}
	return check_kind(path, &sb, why, len);
}

/*
 * W_DIRECT: creates path, or truncates an existing regular file; the null device is opened
 * as it is. Nothing else is opened for writing (a device, FIFO, directory...): it is refused
 * first by its stat(), and again by the opened fd's fstat() in case it changed in between.
 */
static int open_direct(struct btape_writer *w, const char *path, char *errmsg, size_t errlen)
{
	struct stat sb;
	int err;

	for (int tries = 0; tries < 3; tries++) {
		w->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (w->fd >= 0) {
			w->created = true;
			break;
		}
		if (errno != EEXIST)
			goto sys_err;
		err = btape_output_check(path, errmsg, errlen);
		if (err < 0)
			return err;
		/* O_NONBLOCK: a FIFO put there since the check must not hang the open */
		w->fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (w->fd >= 0)
			break;
		if (errno != ENOENT) /* ENOENT: removed in between, or a dangling symlink */
			goto sys_err;
	}
	if (w->fd < 0 && lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode)) {
		snprintf(errmsg, errlen,
			 "%s is a dangling symbolic link: not followed to create a file", path);
		return -ENOENT;
	}
	if (w->fd < 0)
		goto sys_err;
	if (fstat(w->fd, &sb) < 0)
		goto sys_err;
	if (w->created) {
		w->created_dev = sb.st_dev;
		w->created_ino = sb.st_ino;
	}
	err = check_kind(path, &sb, errmsg, errlen);
	if (err < 0) {
		close(w->fd);
		w->fd = -1;
		return err;
	}
	w->sink = err == 1;
	if (!w->sink && !w->created) {
		/*
		 * Emptied in place: not while anyone else has it open (a loop device over it, a
		 * database's file, another recorder), which a write lease detects: it is refused
		 * (EAGAIN) unless this is the only open of the file. Held across the truncate.
		 * Where leases are not available (EINVAL: a filesystem without them; EACCES: not
		 * the owner, no CAP_LEASE) there is nothing to tell by.
		 */
		bool leased = fcntl(w->fd, F_SETLEASE, F_WRLCK) == 0;

		if (!leased && (errno == EAGAIN || errno == EBUSY)) {
			snprintf(
				errmsg, errlen,
				"%s is open elsewhere (a loop device over it, or another program): "
				"refusing to empty it",
				path);
			close(w->fd);
			w->fd = -1;
			return -EBUSY;
		}
		int terr = ftruncate(w->fd, 0) < 0 ? errno : 0;

		if (leased)
			fcntl(w->fd, F_SETLEASE, F_UNLCK);
		if (terr) {
			errno = terr;
			goto sys_err;
		}
	}
	if (fcntl(w->fd, F_SETFL, 0) < 0) /* back to blocking writes */
		goto sys_err;
	return 0;
sys_err:
	err = -errno;
	snprintf(errmsg, errlen, "create %s: %s", path, strerror(errno));
	return err;
}

static int open_common(struct btape_writer **wp, const char *path, const struct btape_meta *meta,
		       const struct btape_writer_opts *opts, enum wmode mode, int fd, char *errmsg,
		       size_t errlen)
{
	struct btape_writer *w;
	int err;

	if (!errmsg)
		errlen = 0; /* snprintf(NULL, 0, ...) writes nothing */
	else if (errlen)
		errmsg[0] = '\0';
	if (!wp || (mode != W_FD && (!path || !*path))) {
		snprintf(errmsg, errlen, "invalid argument");
		return -EINVAL;
	}
	*wp = NULL;
	err = writer_new(&w, meta, opts);
	if (err) {
		snprintf(errmsg, errlen, "%s: %s", path ? path : "trace", strerror(-err));
		return err;
	}
	if (mode != W_FD && !strcmp(path, "-")) {
		mode = W_FD;
		fd = STDOUT_FILENO;
	}
	if (mode == W_TMP) {
		/* refused before any work; the null device is written to, never renamed over */
		err = btape_output_check(path, errmsg, errlen);
		if (err < 0)
			goto cleanup;
		if (err == 1)
			mode = W_DIRECT;
	}
	w->mode = mode;
	if (mode == W_FD) {
		w->fd = fd;
	} else {
		w->path = strdup(path);
		if (!w->path) {
			err = -ENOMEM;
			goto cleanup;
		}
	}
	if (mode == W_TMP) {
		size_t n = strlen(path) + 32;
		static unsigned int counter;

		w->tmp = malloc(n);
		if (!w->tmp) {
			err = -ENOMEM;
			goto cleanup;
		}
		for (int tries = 0; tries < 100; tries++) {
			unsigned int r = (unsigned int)(mono_ns() ^ ((uint64_t)getpid() << 16)) ^
					 __atomic_fetch_add(&counter, 7919, __ATOMIC_RELAXED);

			snprintf(w->tmp, n, "%s.tmp.%06x", path, r & 0xffffff);
			w->fd = open(w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
			if (w->fd >= 0 || errno != EEXIST)
				break;
		}
		if (w->fd < 0) {
			err = -errno;
			snprintf(errmsg, errlen, "create %s: %s", w->tmp, strerror(errno));
			free(w->tmp);
			w->tmp = NULL;
			goto cleanup;
		}
	} else if (mode == W_DIRECT) {
		err = open_direct(w, path, errmsg, errlen);
		if (err)
			goto cleanup;
	}
	err = write_start(w, meta);
	if (err) {
		snprintf(errmsg, errlen, "%s", w->errmsg);
		goto cleanup;
	}
	*wp = w;
	return 0;
cleanup:
	if (err == -ENOMEM)
		snprintf(errmsg, errlen, "%s: out of memory", path ? path : "trace");
	else if (errlen && !errmsg[0])
		snprintf(errmsg, errlen, "%s: %s", path ? path : "trace", strerror(-err));
	btape_writer__discard(w);
	return err;
}

BTAPE_API int btape_writer__open(struct btape_writer **wp, const char *path,
				 const struct btape_meta *meta,
				 const struct btape_writer_opts *opts, char *errmsg, size_t errlen)
{
	return open_common(wp, path, meta, opts, W_TMP, -1, errmsg, errlen);
}

BTAPE_API int btape_writer__open_direct(struct btape_writer **wp, const char *path,
					const struct btape_meta *meta,
					const struct btape_writer_opts *opts, char *errmsg,
					size_t errlen)
{
	return open_common(wp, path, meta, opts, W_DIRECT, -1, errmsg, errlen);
}

BTAPE_API int btape_writer__open_fd(struct btape_writer **wp, int fd, const struct btape_meta *meta,
				    const struct btape_writer_opts *opts, char *errmsg,
				    size_t errlen)
{
	if (fd < 0) {
		if (errmsg && errlen)
			snprintf(errmsg, errlen, "trace: %s", strerror(EBADF));
		return -EBADF;
	}
	return open_common(wp, NULL, meta, opts, W_FD, fd, errmsg, errlen);
}

static int fsync_dir(const char *path)
{
	char *copy = strdup(path);
	int fd, err = 0;

	if (!copy)
		return -ENOMEM;
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		if (fsync(fd) && errno != EINVAL)
			err = -errno;
		close(fd);
	}
	free(copy);
	return err;
}

BTAPE_API int btape_writer__close(struct btape_writer *w, char *errmsg, size_t errlen)
{
	uint8_t trailer[BTAPE_TRAILER_SIZE] = {0};
	struct btape_summary *s;
	uint64_t footer_off = 0;
	int err;

	if (!w) {
		if (errmsg && errlen)
			snprintf(errmsg, errlen, "invalid argument");
		return -EINVAL;
	}
	err = w->err;
	if (!err)
		err = release(w, true);
	if (!err)
		err = flush_chunk(w);
	s = &w->sum;
	if (err && w->full) {
		/* out of space: the file ends at its last chunk; a footer for what it holds */
		s = &w->in_file;
		s->lost_events = w->sum.lost_events;
		s->lost_ringbuf = w->sum.lost_ringbuf;
		s->lost_inflight = w->sum.lost_inflight;
		s->lost_writer = w->sum.lost_writer;
		s->order_violations = w->sum.order_violations;
		s->has_clock_stop = w->sum.has_clock_stop;
		s->clock_stop = w->sum.clock_stop;
		s->interrupted = w->sum.interrupted;
		err = 0;
	}
	reserve_release(w);
	if (!err) {
		footer_off = w->off;
		s->chunks = w->ix.n;
		w->fbuf.len = 0;
		err = btape_footer_pack(&w->fbuf, s, &w->ix, &w->ftags);
		if (err)
			fail(w, err, "%s: out of memory", wname(w));
	}
	if (!err)
		err = write_frame(w, BTAPE_FRAME_FOOTER, &w->fbuf, NULL, 0);
	if (!err) {
		btape_trailer_build(trailer, footer_off);
		err = write_all(w, trailer, sizeof(trailer), NULL, 0);
		if (err)
			cut_back(w, footer_off, err);
	}
	if (!err)
		err = sync_fd(w);
	if (!err && w->mode != W_FD) {
		if (close(w->fd)) {
			err = fail(w, -errno, "close %s: %s", wname(w), strerror(errno));
		}
		w->fd = -1;
	}
	if (!err && w->mode == W_TMP) {
		/* the path may have changed since the open: never rename over a device node */
		char why[sizeof(w->errmsg)];
		int k = btape_output_check(w->path, why, sizeof(why));

		if (k < 0)
			err = fail(w, k, "%s", why);
		else if (k)
			err = fail(w, -EPERM, "%s is the null device now: not replaced", w->path);
		else if (rename(w->tmp, w->path))
			err = fail(w, -errno, "rename %s to %s: %s", w->tmp, w->path,
				   strerror(errno));
		else {
			free(w->tmp);
			w->tmp = NULL;
			fsync_dir(w->path);
		}
	}
	if (err) {
		if (errmsg && errlen)
			snprintf(errmsg, errlen, "%s", w->errmsg);
		btape_writer__abort(w);
		return err;
	}
	writer_free(w);
	return 0;
}

BTAPE_API void btape_writer__abort(struct btape_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0 && w->mode != W_FD)
		close(w->fd);
	w->fd = -1;
	if (w->mode == W_TMP && w->tmp)
		unlink(w->tmp);
	writer_free(w);
}

BTAPE_API void btape_writer__discard(struct btape_writer *w)
{
	struct stat sb;

	if (!w)
		return;
	if (w->mode == W_DIRECT && w->fd >= 0 && !w->sink) {
		if (w->created) {
			/* only the file this writer made, if it still is at path */
			if (lstat(w->path, &sb) == 0 && S_ISREG(sb.st_mode) &&
			    sb.st_dev == w->created_dev && sb.st_ino == w->created_ino)
				unlink(w->path);
		} else if (fstat(w->fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
			/* existing: emptied at the open already; leave no partial trace */
			(void)!ftruncate(w->fd, 0);
		}
	}
	btape_writer__abort(w);
}
