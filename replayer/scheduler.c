// SPDX-License-Identifier: GPL-2.0-only
/*
 * The scheduler. One thread: it issues every I/O whose deadline has come (in batches), reaps
 * completions in a separate engine call, and waits for the next deadline by blocking in the
 * engine (or the clock) until shortly before it, then spinning (clock->spin_ns).
 *
 * Deadlines are absolute: deadline(i) = start + (issue(i) - issue(0) + loop offset) / speed.
 * An I/O issued late never moves any other deadline.
 */
#include "scheduler.h"

#include "btape.h"
#include "clock.h"
#include "order.h"
#include "source.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define BATCH_MAX 64
#define REAP_MAX 128
#define WATERMARK_EVERY 1024
#define BLOCKED_WAIT_NS 10000000ull /* waiting for a slot: re-check the stop flag this often */
#define DRAIN_STALL_NS 30000000000ull /* at the end: give up after 30 s without a completion */

/* ---- payload ---- */

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void rp_payload_init(struct rp_payload *p, int kind, double compress, double dedupe, uint64_t seed)
{
	uint64_t s = seed ? seed : 0x62696f74617065ull;
	size_t random_bytes = sizeof(p->pattern);

	memset(p, 0, sizeof(*p));
	p->kind = kind;
	p->compress = compress >= 1 ? compress : 1;
	p->dedupe = dedupe >= 1 ? dedupe : 1;
	p->seed = s;
	if (kind == RP_PAYLOAD_ZERO)
		return;
	if (kind == RP_PAYLOAD_COMPRESSIBLE)
		random_bytes = (size_t)((double)sizeof(p->pattern) / p->compress);
	if (random_bytes < 16)
		random_bytes = 16;
	for (size_t i = 0; i < random_bytes; i += 8) {
		uint64_t v = splitmix(&s);

		memcpy(p->pattern + i, &v, random_bytes - i < 8 ? random_bytes - i : 8);
	}
}

void rp_payload_fill(const struct rp_payload *p, void *buf, uint64_t bytes)
{
	uint8_t *b = buf;

	if (!p || p->kind == RP_PAYLOAD_ZERO) {
		memset(buf, 0, bytes);
		return;
	}
	for (uint64_t off = 0; off < bytes; off += sizeof(p->pattern)) {
		uint64_t n = bytes - off < sizeof(p->pattern) ? bytes - off : sizeof(p->pattern);

		memcpy(b + off, p->pattern, n);
	}
}

void rp_payload_stamp(const struct rp_payload *p, void *buf, uint64_t bytes, uint64_t seq)
{
	uint8_t *b = buf;

	if (!p || p->kind == RP_PAYLOAD_ZERO)
		return;
	/* each 4 KiB block gets a 16-byte stamp: unique, or one of a few when deduped */
	for (uint64_t off = 0, blk = 0; off + 16 <= bytes; off += sizeof(p->pattern), blk++) {
		uint64_t s = p->seed ^ (seq * 0x100000001b3ull + blk), id[2];

		id[0] = splitmix(&s);
		if (p->dedupe > 1 && (double)(id[0] >> 11) * 0x1p-53 >= 1.0 / p->dedupe) {
			id[0] = 0; /* a duplicate block: the bare pattern, stamped 0 */
			id[1] = 0;
		} else {
			id[1] = splitmix(&s);
		}
		memcpy(b + off, id, sizeof(id));
	}
}

/* ---- mapping ---- */

uint64_t rp_region_bytes(const struct rp_sched_cfg *cfg, const struct rp_target *t)
{
	uint64_t lbs = t->lbs ? t->lbs : 512;
	uint64_t region = t->size;
	unsigned int copies = cfg->copies ? cfg->copies : cfg->scale;

	if (cfg->layout == RP_LAYOUT_SHARD && copies > 1)
		region /= copies;
	return region / lbs * lbs;
}

static int map_extent(const struct rp_sched_cfg *cfg, uint32_t dev, unsigned int copy,
		      uint64_t offset, uint64_t bytes, bool inward, uint64_t *toff, uint64_t *tbytes)
{
	const struct rp_target *t;
	uint64_t lbs, region, a, end, len, src;

	if (dev >= cfg->ndev || cfg->devs[dev].target >= cfg->ntargets)
		return -EINVAL;
	t = &cfg->targets[cfg->devs[dev].target];
	lbs = t->lbs ? t->lbs : 512;
	region = rp_region_bytes(cfg, t);
	/* an end past 2^64 (rounded up to a block) would wrap: it fits nowhere */
	if (bytes > UINT64_MAX - offset || offset + bytes > UINT64_MAX - (lbs - 1))
		return -ERANGE;
	if (inward) { /* only blocks wholly inside the recorded extent */
		a = (offset + lbs - 1) / lbs * lbs;
		end = (offset + bytes) / lbs * lbs;
		if (end <= a)
			return -ENODATA;
	} else {
		a = offset / lbs * lbs;
		end = (offset + bytes + lbs - 1) / lbs * lbs;
	}
	len = end - a;
	if (len > region || !region)
		return -ERANGE;
	if (end > region) {
		switch (cfg->fit) {
		case RP_FIT_ERROR:
			return -ERANGE;
		case RP_FIT_WRAP:
			a %= region;
			break;
		case RP_FIT_SCALE:
			src = rp_devmap_span(&cfg->devs[dev]);
			if (src > region)
				a = (uint64_t)((unsigned __int128)a * region / src) / lbs * lbs;
			break;
		}
		if (a + len > region)
			a = region - len;
	}
	*toff = (cfg->layout == RP_LAYOUT_SHARD ? (uint64_t)(cfg->copy_base + copy) * region : 0) + a;
	*tbytes = len;
	return 0;
}

int rp_map_extent(const struct rp_sched_cfg *cfg, uint32_t dev, unsigned int copy, uint64_t offset,
		  uint64_t bytes, uint64_t *toff, uint64_t *tbytes)
{
	return map_extent(cfg, dev, copy, offset, bytes, false, toff, tbytes);
}

int rp_map_io(const struct rp_sched_cfg *cfg, int op, uint32_t dev, unsigned int copy,
	      uint64_t offset, uint64_t bytes, uint64_t *toff, uint64_t *tbytes)
{
	bool inward = op == RP_IO_DISCARD || op == RP_IO_ZERO;

	return map_extent(cfg, dev, copy, offset, bytes, inward, toff, tbytes);
}

int rp_sched_engine_op(const struct rp_sched_cfg *cfg, unsigned int op, uint64_t bytes)
{
	switch (op) {
	case BTAPE_OP_READ:
		return bytes ? RP_IO_READ : -1;
	case BTAPE_OP_WRITE:
		if (!bytes)
			return -1;
		return cfg->allow_writes ? RP_IO_WRITE : cfg->writes_as_reads ? RP_IO_READ : -1;
	case BTAPE_OP_FLUSH:
		return RP_IO_FSYNC;
	case BTAPE_OP_DISCARD:
		return cfg->allow_writes && bytes ? RP_IO_DISCARD : -1;
	case BTAPE_OP_WRITE_ZEROES:
		return cfg->allow_writes && bytes ? RP_IO_ZERO : -1;
	default:
		return -1;
	}
}

void rp_stats_reset(struct rp_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (unsigned int i = 0; i < RP_IO__COUNT; i++)
		hist_init(&st->lat[i]);
	hist_init(&st->issue_err);
}

/* ---- the run ---- */

struct run {
	const struct rp_sched_cfg *cfg;
	const struct rp_engine_ops *ops;
	struct rp_engine *e;
	const struct rp_clock *clock;
	struct rp_source *src;
	struct rp_stats *st;

	unsigned int depth, nfree, inflight;
	struct rp_io *slots;
	struct rp_io **freel;
	void **bigbuf;
	uint64_t *bigbuf_bytes;
	uint64_t bigbuf_total; /* the sum of bigbuf_bytes */
	void **pool; /* free cfg->big_bufs */
	unsigned int npool;
	unsigned int nlanes;
	unsigned int *lane_inflight;
	unsigned int *target_inflight;
	/*
	 * Per lane: the I/Os the order tracker holds (--timing load counts them in flight), the
	 * flushes in the engine, and when the lane's last flush completed in the recording (0:
	 * unknown).
	 */
	unsigned int *lane_held;
	unsigned int *lane_flushes;
	uint64_t *flush_done_rec;

	/* cursor */
	const struct btape_event *batch;
	int nbatch, pos;
	unsigned int copy;
	bool src_done;
	bool have_base;
	uint64_t base_ns, loop_off_ns;
	uint64_t pass_first, pass_last, pass_events;
	bool cur_capped, cur_held;
	/* the cursor's discard or write-zeroes mapped once, for the sub-block check and its I/O */
	bool cur_mapped;
	int cur_map_err;
	uint64_t cur_off, cur_bytes;
	/* --order: the tracker, the cursor's id in it, and whether the window stopped it */
	struct rp_order *order;
	bool cur_added, order_full;
	uint64_t cur_id;
	uint64_t capped_since; /* when the current event was first held by the depth cap */
	uint64_t seq;
};

/* The oldest issue time still in flight (or now): later completions cannot be older. */
static uint64_t watermark(const struct run *r, uint64_t now)
{
	uint64_t w = now;

	for (unsigned int i = 0; i < r->depth && r->inflight; i++) {
		const struct rp_io *io = &r->slots[i];

		if (io->issue_ns && io->busy && io->issue_ns < w)
			w = io->issue_ns;
	}
	return w;
}

static bool measured(const struct run *r, uint64_t issue_ns)
{
	return issue_ns >= r->st->measure_start_ns;
}

/* The flushes in flight: those submitted (lane_flushes) and those in the batch being built. */
static unsigned int flushes_out(const struct run *r, struct rp_io *const *batch, unsigned int nb)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < r->nlanes; i++)
		n += r->lane_flushes[i];
	for (unsigned int i = 0; i < nb; i++)
		n += batch[i]->op == RP_IO_FSYNC;
	return n;
}

/* An I/O done with (completed, or never submitted) returns the buffer it borrowed. */
static void give_back(struct run *r, struct rp_io *io)
{
	if (io->pooled) {
		r->pool[r->npool++] = io->buf;
		io->pooled = false;
	}
}

static void complete_io(struct run *r, struct rp_io *io, uint64_t now)
{
	struct rp_stats *st = r->st;

	if (!io->complete_ns)
		io->complete_ns = now;
	if (io->complete_ns < io->issue_ns)
		io->complete_ns = io->issue_ns;
	st->completed++;
	if (io->complete_ns > st->end_ns)
		st->end_ns = io->complete_ns;
	if (io->res == -EOPNOTSUPP || io->res == -ENOTTY ||
	    (io->res == -EINVAL && (io->op == RP_IO_DISCARD || io->op == RP_IO_ZERO))) {
		st->unsupported++;
		st->skipped[io->trace_op < 32 ? io->trace_op : 31]++;
	} else if (io->res < 0 || ((io->op == RP_IO_READ || io->op == RP_IO_WRITE) &&
				   (uint64_t)io->res < io->bytes)) {
		if (!st->errors) {
			st->first_error = io->res < 0 ? (int)io->res : -EIO;
			st->first_error_offset = io->offset;
		}
		st->errors++;
	}
	if (measured(r, io->intended_ns)) { /* by schedule: a stall does not move warmup */
		st->ios[io->op]++;
		st->bytes[io->op] += io->res > 0 ? (uint64_t)io->res : 0;
		hist_add(&st->lat[io->op], io->complete_ns - io->issue_ns);
		if (r->cfg->timing == RP_TIMING_ORIGINAL) {
			uint64_t err =
				io->issue_ns > io->intended_ns ? io->issue_ns - io->intended_ns : 0;

			hist_add(&st->issue_err, err);
			if (err > RP_LATE_NS)
				st->late++;
		}
	}
	if (r->order)
		rp_order__done(r->order, io->order_id, io->complete_ns);
	if (r->cfg->on_done)
		r->cfg->on_done(r->cfg->ctx, io);
	io->busy = false;
	give_back(r, io);
	if (io->op == RP_IO_FSYNC)
		r->lane_flushes[io->lane]--;
	r->lane_inflight[io->lane]--;
	r->target_inflight[io->target]--;
	r->inflight--;
	r->freel[r->nfree++] = io;
	if (r->cfg->on_watermark && (r->st->completed % WATERMARK_EVERY) == 0)
		r->cfg->on_watermark(r->cfg->ctx, watermark(r, now));
}

/* Reaps what is there (wait_until 0) or blocks until one completes or wait_until passes. */
static int reap(struct run *r, uint64_t wait_until)
{
	struct rp_io *done[REAP_MAX];
	int n, total = 0;
	uint64_t now;

	struct rp_stage *sg = &r->st->stage;
	uint64_t t0 = r->clock->now(r->clock);

	if (!r->inflight) {
		if (wait_until) {
			r->clock->sleep_until(r->clock, wait_until);
			sg->wait_ns += r->clock->now(r->clock) - t0;
			sg->waits++;
		}
		return 0;
	}
	do {
		bool waits = !total && wait_until;

		n = r->ops->reap(r->e, done, REAP_MAX, waits ? wait_until : 0);
		if (n < 0)
			return n;
		now = r->clock->now(r->clock);
		if (waits) {
			sg->wait_ns += now - t0;
			sg->waits++;
		} else {
			sg->submit_ns += now - t0;
		}
		for (int i = 0; i < n; i++)
			complete_io(r, done[i], now);
		total += n;
		t0 = r->clock->now(r->clock);
	} while (n == REAP_MAX);
	if (total) {
		sg->wakes_with_completions++;
		sg->reaped += (uint64_t)total;
	}
	return total;
}

/* Takes back I/Os counted as in flight that never reached the engine (an error before submit). */
static void unissue(struct run *r, struct rp_io **ios, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		struct rp_io *io = ios[i];

		io->busy = false;
		give_back(r, io);
		r->inflight--;
		r->lane_inflight[io->lane]--;
		r->target_inflight[io->target]--;
		r->freel[r->nfree++] = io;
	}
}

/* Closes the episode of falling behind being summed into behind_ns. */
static void behind_close(struct rp_stats *st)
{
	st->behind_ns += st->behind_to_ns - st->behind_from_ns;
	st->behind_from_ns = st->behind_to_ns = 0;
}

/*
 * An I/O due at deadline went at issue: the worst lag, and the time the replay was behind (by
 * more than RP_LATE_NS: from deadline + RP_LATE_NS until issue), summed over the union of
 * those intervals. I/Os come in deadline order, so an interval either extends the current
 * episode or starts a new one.
 */
static void note_lag(struct rp_stats *st, uint64_t deadline, uint64_t issue)
{
	uint64_t lag = issue > deadline ? issue - deadline : 0, from = deadline + RP_LATE_NS;

	if (lag > st->lag_max_ns) {
		st->lag_max_ns = lag;
		st->lag_at_ns = deadline - st->start_ns;
	}
	if (lag <= RP_LATE_NS)
		return;
	if (st->behind_to_ns && from > st->behind_to_ns)
		behind_close(st);
	if (!st->behind_to_ns) {
		st->behind_from_ns = from;
		st->behind_to_ns = issue;
		return;
	}
	if (from < st->behind_from_ns)
		st->behind_from_ns = from;
	if (issue > st->behind_to_ns)
		st->behind_to_ns = issue;
}

static int submit(struct run *r, struct rp_io **ios, unsigned int n)
{
	uint64_t t = r->clock->now(r->clock), t1;
	unsigned int done = 0;
	int ret;

	for (unsigned int i = 0; i < n; i++) {
		ios[i]->issue_ns = t;
		ios[i]->busy = true;
		if (r->cfg->timing != RP_TIMING_ORIGINAL)
			ios[i]->intended_ns = t;
		else if (measured(r, ios[i]->intended_ns))
			note_lag(r->st, ios[i]->intended_ns, t);
	}
	r->st->issued += n;
	while (done < n) {
		ret = r->ops->submit(r->e, ios + done, n - done);
		t1 = r->clock->now(r->clock);
		r->st->stage.submit_ns += t1 - t;
		r->st->stage.submit_calls++;
		t = t1;
		if (ret < 0) {
			r->st->issued -= n - done;
			unissue(r, ios + done, n - done);
			return ret;
		}
		for (int i = 0; i < ret; i++)
			r->lane_flushes[ios[done + i]->lane] += ios[done + i]->op == RP_IO_FSYNC;
		done += (unsigned int)ret;
		if (done < n) {
			/* the engine is full (it should not be: depth matches); make room */
			ret = reap(r, r->clock->now(r->clock) + BLOCKED_WAIT_NS);
			if (ret < 0)
				return ret;
		}
	}
	return 0;
}

/* Makes the cursor point at an event; returns 1, 0 when the source is finished, or -errno. */
static int cursor(struct run *r)
{
	const struct rp_sched_cfg *cfg = r->cfg;
	int n;

	while (r->pos >= r->nbatch) {
		if (r->src_done)
			return 0;
		uint64_t t0 = r->clock->now(r->clock);

		n = r->src->next_batch(r->src, &r->batch);
		r->st->stage.source_ns += r->clock->now(r->clock) - t0;
		if (n < 0)
			return n;
		r->pos = 0;
		r->nbatch = n;
		if (n > 0)
			continue;
		/* end of a pass */
		r->st->loops++;
		if (r->pass_events && (cfg->loops == 0 || r->st->loops < cfg->loops) &&
		    !(cfg->stop && *cfg->stop)) {
			uint64_t span = r->pass_last - r->pass_first;
			uint64_t gap = r->pass_events > 1 ? span / (r->pass_events - 1) : 1000000;

			r->loop_off_ns += span + (gap ? gap : 1);
			r->pass_events = 0;
			n = r->src->rewind(r->src);
			if (n < 0)
				return n;
			continue;
		}
		r->src_done = true;
		return 0;
	}
	if (r->copy == 0) {
		const struct btape_event *ev = &r->batch[r->pos];

		if (!r->have_base) {
			r->base_ns = ev->issue_ns;
			r->have_base = true;
		}
		if (!r->pass_events)
			r->pass_first = ev->issue_ns;
		r->pass_last = ev->issue_ns;
	}
	return 1;
}

static void advance(struct run *r)
{
	if (++r->copy >= r->cfg->scale) {
		r->copy = 0;
		r->pos++;
		r->pass_events++;
		r->st->events++;
	}
	r->cur_capped = false;
	r->cur_held = false;
	r->cur_added = false;
	r->cur_mapped = false;
}

/* Maps the cursor's event (the current copy) once: 0, or rp_map_io()'s error. */
static int map_cursor(struct run *r, const struct btape_event *ev, int op)
{
	if (!r->cur_mapped) {
		r->cur_map_err = rp_map_io(r->cfg, op, ev->dev, r->copy,
					   rp_sector_offset(ev->sector), ev->bytes, &r->cur_off,
					   &r->cur_bytes);
		r->cur_mapped = true;
	}
	return r->cur_map_err;
}

static uint64_t deadline_of(const struct run *r, const struct btape_event *ev)
{
	uint64_t rel = ev->issue_ns >= r->base_ns ? ev->issue_ns - r->base_ns : 0;
	double speed = r->cfg->speed > 0 ? r->cfg->speed : 1.0;

	rel += r->loop_off_ns + r->cfg->lead_ns;
	return r->st->start_ns + (uint64_t)((double)rel / speed);
}

static void run_free(struct run *r)
{
	if (r->bigbuf) {
		for (unsigned int i = 0; i < r->depth; i++)
			free(r->bigbuf[i]);
	}
	free(r->bigbuf);
	free(r->bigbuf_bytes);
	free(r->pool);
	free(r->slots);
	free(r->freel);
	free(r->lane_inflight);
	free(r->target_inflight);
	free(r->lane_held);
	free(r->lane_flushes);
	free(r->flush_done_rec);
	rp_order__free(r->order);
}

/*
 * Room under cfg->own_bufs_max for slot's own buffer to grow to bytes: the idle slots' buffers
 * are freed first; -EAGAIN while the I/Os in flight hold too much (wait for one). Never with
 * nothing in flight: one I/O alone always gets its buffer (the trace's largest was checked).
 */
static int own_buf_room(struct run *r, unsigned int slot, uint64_t bytes)
{
	uint64_t max = r->cfg->own_bufs_max ? r->cfg->own_bufs_max : RP_OWN_BUFS_MAX;

	for (unsigned int i = 0;
	     i < r->nfree && r->bigbuf_total - r->bigbuf_bytes[slot] + bytes > max; i++) {
		unsigned int idle = (unsigned int)(r->freel[i] - r->slots);

		free(r->bigbuf[idle]);
		r->bigbuf[idle] = NULL;
		r->bigbuf_total -= r->bigbuf_bytes[idle];
		r->bigbuf_bytes[idle] = 0;
	}
	return r->bigbuf_total - r->bigbuf_bytes[slot] + bytes > max && r->inflight ? -EAGAIN : 0;
}

/* Prepares ev of copy into io; -EAGAIN when its buffer must wait (own_buf_room()). */
static int prepare_io(struct run *r, struct rp_io *io, const struct btape_event *ev,
		      unsigned int copy, int op, uint64_t deadline)
{
	const struct rp_sched_cfg *cfg = r->cfg;
	unsigned int slot = (unsigned int)(io - r->slots);
	int err;

	io->op = (uint8_t)op;
	io->trace_op = ev->op;
	io->dev = ev->dev;
	io->copy = copy;
	io->lane = copy * cfg->ndev + ev->dev;
	io->target = cfg->devs[ev->dev].target;
	io->intended_ns = deadline;
	io->complete_ns = 0;
	io->res = 0;
	io->seq = r->seq++;
	if (op == RP_IO_FSYNC) {
		io->offset = 0;
		io->bytes = 0;
	} else if (r->cur_mapped && copy == r->copy && r->pos < r->nbatch &&
		   ev == &r->batch[r->pos]) {
		if (r->cur_map_err)
			return r->cur_map_err;
		io->offset = r->cur_off; /* the sub-block check mapped it */
		io->bytes = r->cur_bytes;
	} else {
		err = rp_map_io(cfg, op, ev->dev, copy, rp_sector_offset(ev->sector), ev->bytes,
				&io->offset, &io->bytes);
		if (err)
			return err;
	}
	io->pooled = false;
	if (op != RP_IO_READ && op != RP_IO_WRITE) {
		/* flushes, discards and write zeroes carry no data: a 4 GiB discard once got a
		 * 4 GiB buffer */
		io->buf = NULL;
		io->buf_index = -1;
	} else if (io->bytes <= cfg->buf_bytes && cfg->bufs) {
		io->buf = cfg->bufs[slot];
		io->buf_index = (int)slot;
	} else if (io->bytes && io->bytes <= cfg->big_bytes && r->npool) {
		io->buf = r->pool[--r->npool];
		io->pooled = true;
		io->buf_index = -1;
	} else if (io->bytes) {
		if (r->bigbuf_bytes[slot] < io->bytes) {
			void *b = NULL;

			if ((err = own_buf_room(r, slot, io->bytes)))
				return err;
			if (posix_memalign(&b, 4096, io->bytes))
				return -ENOMEM;
			free(r->bigbuf[slot]);
			r->bigbuf[slot] = b;
			r->bigbuf_total += io->bytes - r->bigbuf_bytes[slot];
			r->bigbuf_bytes[slot] = io->bytes;
			r->st->stage.buf_allocs++;
		}
		io->buf = r->bigbuf[slot];
		io->buf_index = -1;
	} else {
		io->buf = NULL;
		io->buf_index = -1;
	}
	if (op == RP_IO_WRITE && cfg->payload) {
		uint64_t t0 = r->clock->now(r->clock);

		rp_payload_fill(cfg->payload, io->buf, io->bytes);
		rp_payload_stamp(cfg->payload, io->buf, io->bytes, io->seq);
		r->st->stage.prepare_ns += r->clock->now(r->clock) - t0;
	}
	return 0;
}

/* Prepares ev of copy into a free slot, counted in flight (intended: when it was due). */
static int claim(struct run *r, const struct btape_event *ev, unsigned int copy, int op,
		 uint64_t intended, uint64_t order_id, struct rp_io **iop)
{
	struct rp_io *io = r->freel[--r->nfree];
	int err = prepare_io(r, io, ev, copy, op, intended);

	if (err) {
		r->freel[r->nfree++] = io;
		return err;
	}
	io->order_id = order_id;
	r->inflight++;
	r->lane_inflight[io->lane]++;
	io->qd = ++r->target_inflight[io->target];
	if (r->inflight > r->st->max_inflight)
		r->st->max_inflight = r->inflight;
	*iop = io;
	return 0;
}

/*
 * A flush of lane goes. The block layer keeps one flush in flight per queue and folds every
 * flush pending behind it into the next one, so a flush sent while the previous one is still
 * out does not reach the device of its own. When the recording kept the two apart (the
 * previous one had completed when this one was issued, or the recording does not say when it
 * completed), it is counted (flush_overlapped); --flushes-apart makes it wait instead (the
 * order tracker's rule, order.h).
 */
static void flush_goes(struct run *r, const struct btape_event *ev, unsigned int lane,
		       uint64_t intended)
{
	uint64_t rec = ev->issue_ns + r->loop_off_ns, prev_done = r->flush_done_rec[lane];

	r->flush_done_rec[lane] = (ev->present & BTAPE_HAS_COMPLETE) && ev->complete_ns
					  ? ev->complete_ns + r->loop_off_ns
					  : 0;
	if (r->lane_flushes[lane] && prev_done <= rec && !r->cfg->flushes_apart)
		r->st->flush_overlapped += measured(r, intended);
}

/*
 * Prepares ev of copy into a free slot at the end of batch (intended: when it was due), and
 * submits the batch when it is full. Returns 1 when it submitted, 0, or -errno (the batch taken
 * back).
 */
static int take(struct run *r, const struct btape_event *ev, unsigned int copy, int op,
		uint64_t intended, uint64_t order_id, struct rp_io **batch, unsigned int *nb)
{
	struct rp_io *io;
	int err;

	if (op == RP_IO_FSYNC)
		flush_goes(r, ev, copy * r->cfg->ndev + ev->dev, intended);
	err = claim(r, ev, copy, op, intended, order_id, &io);

	if (err == -EAGAIN) /* its buffer waits for a completion: the batch goes as it is */
		return err;
	if (err) {
		unissue(r, batch, *nb);
		*nb = 0;
		return err;
	}
	batch[(*nb)++] = io;
	if (*nb < BATCH_MAX)
		return 0;
	err = submit(r, batch, *nb);
	*nb = 0;
	return err ? err : 1;
}

static unsigned int held_count(const struct run *r)
{
	return r->order ? rp_order__held(r->order) : 0;
}

_Static_assert(sizeof(((struct rp_stats *)0)->dep_waited) == RP_DEP__COUNT * sizeof(uint64_t),
	       "rp_stats: one dep_waited per rule");

/*
 * A dependency held an I/O due at deadline until eligible (measured I/Os, original timing);
 * flushes apart counts as flush_waited.
 */
static void note_dep(struct run *r, uint64_t deadline, uint64_t eligible, int kind)
{
	if (eligible <= deadline || !measured(r, deadline) || kind < 0 || kind > RP_DEP__COUNT ||
	    r->cfg->timing != RP_TIMING_ORIGINAL)
		return;
	if (kind == RP_DEP_FLUSHES) {
		r->st->flush_waited++;
		r->st->flush_wait_ns += eligible - deadline;
		return;
	}
	r->st->dep_waited[kind]++;
	r->st->dep_wait_ns[kind] += eligible - deadline;
}

/*
 * --order, --flushes-apart: the cursor's event is due. Returns 1 when it may go (*intended:
 * when it could have), 0 when it is held (set aside, the events behind it go on; *held_wake:
 * the earliest timed release), -EBUSY when the dependency window is full. The tracker knows the
 * event by its lane (its device with one copy).
 */
static int order_due(struct run *r, const struct btape_event *ev, uint64_t deadline, uint64_t now,
		     uint64_t *intended, uint64_t *held_wake)
{
	unsigned int lane = r->copy * r->cfg->ndev + ev->dev;
	uint64_t w;
	int kind;

	if (!r->cur_added) {
		struct btape_event le = *ev;
		int64_t id;

		le.dev = lane;
		id = rp_order__add(r->order, &le, r->loop_off_ns, deadline);

		if (id < 0) {
			/* not counted while looking ahead (causal): nothing is due yet */
			if (deadline <= now) {
				r->st->dep_window_full += !r->order_full;
				r->order_full = true;
			}
			return -EBUSY;
		}
		r->order_full = false;
		r->cur_id = (uint64_t)id;
		r->cur_added = true;
	}
	if (!rp_order__check(r->order, r->cur_id, now, intended, &w, &kind)) {
		rp_order__hold(r->order, r->cur_id, w);
		r->lane_held[lane]++;
		if (w && (!*held_wake || w < *held_wake))
			*held_wake = w;
		return 0;
	}
	note_dep(r, deadline, *intended, kind);
	return 1;
}

/* Run time, the spin (what no other stage took) and the thread's CPU figures since cpu0. */
static void stage_close(struct rp_stage *sg, uint64_t run_ns, const struct rp_thread_cpu *cpu0)
{
	struct rp_thread_cpu cpu1;
	uint64_t other = sg->submit_ns + sg->wait_ns + sg->source_ns + sg->prepare_ns;

	sg->run_ns = run_ns;
	sg->spin_ns = run_ns > other ? run_ns - other : 0;
	rp_thread_cpu(&cpu1);
	sg->cpu_ns = cpu1.cpu_ns - cpu0->cpu_ns;
	sg->runq_ns = cpu1.runq_ns - cpu0->runq_ns;
	sg->nivcsw = cpu1.nivcsw - cpu0->nivcsw;
}

int rp_sched_run(const struct rp_sched_cfg *cfg, const struct rp_engine_ops *ops,
		 struct rp_engine *e, const struct rp_clock *clock, struct rp_source *src,
		 struct rp_stats *st)
{
	struct run rr = {.cfg = cfg, .ops = ops, .e = e, .clock = clock, .src = src, .st = st};
	struct run *r = &rr;
	struct rp_io *batch[BATCH_MAX];
	struct rp_thread_cpu cpu0;
	uint64_t next_tick, end_ns = 0, run0;
	bool draining = false, reaped = false;
	int err = 0;

	rp_stats_reset(st);
	rp_thread_cpu(&cpu0);
	run0 = clock->now(clock);
	if (cfg->scale < 1 || cfg->iodepth < 1 || !cfg->ndev)
		return -EINVAL;
	r->depth = cfg->iodepth * cfg->scale;
	r->nlanes = cfg->scale * cfg->ndev;
	r->slots = calloc(r->depth, sizeof(*r->slots));
	r->freel = calloc(r->depth, sizeof(*r->freel));
	r->bigbuf = calloc(r->depth, sizeof(*r->bigbuf));
	r->bigbuf_bytes = calloc(r->depth, sizeof(*r->bigbuf_bytes));
	r->lane_inflight = calloc(r->nlanes, sizeof(*r->lane_inflight));
	r->target_inflight = calloc(cfg->ntargets ? cfg->ntargets : 1, sizeof(unsigned int));
	r->lane_held = calloc(r->nlanes, sizeof(*r->lane_held));
	r->lane_flushes = calloc(r->nlanes, sizeof(*r->lane_flushes));
	r->flush_done_rec = calloc(r->nlanes, sizeof(*r->flush_done_rec));
	r->pool = calloc(cfg->nbig ? cfg->nbig : 1, sizeof(*r->pool));
	if (!r->slots || !r->freel || !r->bigbuf || !r->bigbuf_bytes || !r->lane_inflight ||
	    !r->target_inflight || !r->lane_held || !r->lane_flushes || !r->flush_done_rec ||
	    !r->pool) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (unsigned int i = 0; i < r->depth; i++)
		r->freel[i] = &r->slots[r->depth - 1 - i];
	for (unsigned int i = 0; cfg->big_bufs && i < cfg->nbig; i++)
		r->pool[r->npool++] = cfg->big_bufs[i];
	if (cfg->order != RP_ORDER_NONE && (cfg->timing != RP_TIMING_ORIGINAL || cfg->scale != 1)) {
		err = -EINVAL;
		goto cleanup;
	}
	r->nfree = r->depth;

	/* original timing: a little headroom before the first deadline */
	st->start_ns =
		clock->now(clock) + (cfg->timing == RP_TIMING_ORIGINAL ? RP_START_DELAY_NS : 0);
	if (cfg->start_ns && cfg->timing == RP_TIMING_ORIGINAL)
		st->start_ns = cfg->start_ns;
	st->measure_start_ns = st->start_ns + cfg->warmup_ns;
	if (cfg->duration_ns)
		end_ns = st->start_ns + cfg->duration_ns;
	next_tick = cfg->tick_ns ? st->start_ns + cfg->tick_ns : UINT64_MAX;
	if (cfg->order != RP_ORDER_NONE || cfg->flushes_apart) {
		struct rp_order_cfg oc = {.mode = (enum rp_order_mode)cfg->order,
					  .think_ns = cfg->think_ns,
					  .xthread = (enum rp_xthread)cfg->xthread,
					  .flushes_apart = cfg->flushes_apart,
					  .window = RP_ORDER_WINDOW,
					  .speed = cfg->speed,
					  .start_ns = st->start_ns};

		err = rp_order__new(&r->order, &oc);
		if (err)
			goto cleanup;
	}

	for (;;) {
		uint64_t now, next_deadline = 0, held_wake = 0;
		unsigned int nb = 0, pos = 0;
		bool issued = false;

		/*
		 * A wait that just returned completions was a reap: go straight to issuing into
		 * the slots it freed (with io_uring's deferred completions, reaping again here
		 * would be a second system call per batch for a few more completions).
		 */
		if (!reaped) {
			err = reap(r, 0);
			if (err < 0)
				goto cleanup;
		}
		reaped = false;
		now = clock->now(clock);
		if (cfg->stop && *cfg->stop && !draining) {
			st->interrupted = true;
			draining = true;
		}
		if (end_ns && now >= end_ns && !draining) {
			st->duration_hit = true;
			draining = true;
		}
		/* held by a dependency: the oldest first, each that may go now */
		while (r->order && !draining && r->nfree) {
			const struct btape_event *hev;
			struct btape_event dev_ev;
			uint64_t id, dl, elig;
			int kind, ret;

			if (!rp_order__next_ready(r->order, now, &pos, &id, &hev, &dl, &elig, &kind,
						  &held_wake))
				break;
			note_dep(r, dl, elig, kind);
			r->lane_held[hev->dev]--;
			dev_ev = *hev; /* the tracker's device is the lane */
			dev_ev.dev = hev->dev % cfg->ndev;
			ret = take(r, &dev_ev, hev->dev / cfg->ndev,
				   rp_sched_engine_op(cfg, hev->op, hev->bytes), elig, id, batch,
				   &nb);
			if (ret < 0) {
				err = ret;
				goto cleanup;
			}
			issued |= ret > 0;
		}
		while (!draining) {
			const struct btape_event *ev;
			uint64_t deadline = 0, intended, oid;
			int op, ret;

			err = cursor(r);
			if (err < 0) {
				unissue(r, batch, nb); /* prepared, never submitted */
				goto cleanup;
			}
			if (!err)
				break;
			ev = &r->batch[r->pos];
			op = rp_sched_engine_op(cfg, ev->op, ev->bytes);
			if (op < 0) {
				st->skipped[ev->op < 32 ? ev->op : 31]++;
				advance(r);
				continue;
			}
			if (ev->dev >= cfg->ndev || cfg->devs[ev->dev].target >= cfg->ntargets) {
				st->skipped[ev->op < 32 ? ev->op : 31]++;
				st->unmapped++;
				advance(r);
				continue;
			}
			if ((op == RP_IO_DISCARD || op == RP_IO_ZERO) &&
			    map_cursor(r, ev, op) == -ENODATA) {
				st->skipped[ev->op < 32 ? ev->op : 31]++;
				st->sub_block++;
				advance(r);
				continue;
			}
			if (cfg->timing == RP_TIMING_ORIGINAL) {
				/* causal: an I/O may go before its deadline, look that far ahead */
				uint64_t ahead = r->order ? rp_order__horizon(r->order) : 0;

				deadline = deadline_of(r, ev);
				if (end_ns && deadline >= end_ns && (!ahead || now >= end_ns)) {
					st->duration_hit = true;
					draining = true;
					break;
				}
				if (deadline > now + ahead) {
					next_deadline = deadline - ahead;
					break;
				}
			} else if (cfg->timing == RP_TIMING_LOAD) {
				unsigned int qd =
					(ev->present & BTAPE_HAS_QD) && ev->qd ? ev->qd : 1;
				unsigned int lane = r->copy * cfg->ndev + ev->dev;

				if (r->lane_inflight[lane] + r->lane_held[lane] >= qd)
					break;
			}
			intended = deadline;
			oid = UINT64_MAX; /* not tracked (none: only flushes are, when apart) */
			if (r->order && (cfg->order != RP_ORDER_NONE || op == RP_IO_FSYNC)) {
				ret = order_due(r, ev, deadline, now, &intended, &held_wake);
				if (ret < 0)
					break; /* the window is full: wait for a completion */
				if (!ret) {
					advance(r);
					continue;
				}
				oid = r->cur_id;
			}
			/* at the recording's depth, while not hold_ns late: wait for a completion
			 * (or until then) */
			bool at_depth = cfg->hold_depth && cfg->timing == RP_TIMING_ORIGINAL &&
					r->inflight >= cfg->hold_depth * cfg->scale;

			if (at_depth && now < intended + cfg->hold_ns) {
				st->held += !r->cur_held;
				r->cur_held = true;
				next_deadline = intended + cfg->hold_ns;
				break;
			}
			/* at the depth cap, or its buffer past own_bufs_max: wait for a completion
			 */
			uint64_t t_take = r->cur_capped ? clock->now(clock) : 0;

			ret = r->nfree ? take(r, ev, r->copy, op, intended, oid, batch, &nb)
				       : -EAGAIN;
			if (ret == -EAGAIN) {
				if (cfg->timing != RP_TIMING_AFAP && !r->cur_capped) {
					st->depth_capped++;
					st->capped_slots += r->inflight;
					st->capped_flush_slots += flushes_out(r, batch, nb);
					r->cur_capped = true;
					r->capped_since = clock->now(clock);
				}
				break;
			}
			if (r->cur_capped)
				st->stage.capped_ns += t_take - r->capped_since;
			r->cur_capped = false;
			if (ret < 0) {
				err = ret;
				goto cleanup;
			}
			st->past_depth += at_depth;
			advance(r);
			if (ret > 0) {
				issued = true;
				now = clock->now(clock);
			}
		}
		if (held_wake && (!next_deadline || held_wake < next_deadline))
			next_deadline = held_wake;
		if (nb) {
			err = submit(r, batch, nb);
			if (err)
				goto cleanup;
			issued = true;
		}
		if (!r->inflight && (draining || (r->src_done && !held_count(r))))
			break;
		now = clock->now(clock);
		if (now >= next_tick) {
			if (cfg->on_tick)
				cfg->on_tick(cfg->ctx, st, now);
			next_tick = now + cfg->tick_ns;
		}
		/*
		 * Whatever stopped the issue loop (a future deadline, no free slot, the recorded
		 * depth, the end) means waiting now; the engine submits what was just prepared in
		 * the same call.
		 */
		if (next_deadline) {
			if (next_deadline > now + clock->spin_ns) {
				uint64_t wake = next_deadline - clock->spin_ns;

				if (wake > next_tick)
					wake = next_tick;
				if (end_ns && wake > end_ns)
					wake = end_ns;
				err = reap(r, wake > now ? wake : 0);
				if (err < 0)
					goto cleanup;
			} else {
				if (issued) {
					err = reap(r, 0); /* spin: hand over what was prepared */
					if (err < 0)
						goto cleanup;
				}
				/* spin: loop, reaping without blocking */
				if (clock->relax)
					clock->relax(clock);
			}
		} else if (r->inflight) {
			uint64_t wake = now + BLOCKED_WAIT_NS;

			if (wake > next_tick)
				wake = next_tick;
			err = reap(r, wake > now ? wake : now + 1);
			if (err < 0)
				goto cleanup;
			reaped = err > 0;
		}
	}
	err = 0;
cleanup:
	/*
	 * Never leave I/Os in flight in an engine about to be closed; but never wait for ever
	 * either: after DRAIN_STALL_NS without a completion, give up (the engine's close then
	 * cancels or waits for what the kernel still has).
	 */
	{
		uint64_t progress = clock->now(clock);

		while (r->inflight) {
			uint64_t t = clock->now(clock);
			int ret = reap(r, t + BLOCKED_WAIT_NS);

			if (ret < 0)
				break;
			if (ret > 0)
				progress = t;
			else if (t - progress >= DRAIN_STALL_NS) {
				if (!err)
					err = -ETIMEDOUT;
				break;
			}
		}
	}
	if (cfg->stop && *cfg->stop)
		st->interrupted = true;
	behind_close(st);
	stage_close(&st->stage, clock->now(clock) - run0, &cpu0);
	st->stage.syscalls = ops->syscalls ? ops->syscalls(e) : 0;
	run_free(r);
	return err;
}
