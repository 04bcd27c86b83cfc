// SPDX-License-Identifier: GPL-2.0-only
/*
 * The replay's fidelity section (see fidelity.h). Completions come in completion order; the
 * replayed inter-arrival gaps need issue order, which is the order of io->seq: a ring of
 * SEQ_RING slots puts them back in it (an I/O still in flight SEQ_RING issues later costs
 * its gap, counted nowhere: bounded memory).
 */
#include "fidelity.h"

#include "dist.h"
#include "scheduler.h"

#include "btape.h"

#include <errno.h>
#include <math.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEQ_RING 65536u
#define NO_TIME UINT64_MAX

struct rp_fidelity {
	struct rp_fid r;
	struct rp_sched_cfg cfg; /* the replay's: what it issues, and when */
	double speed;
	uint64_t first, prev; /* the trace's first issue time; the last recorded one taken */
	bool have_prev, rec_done;
	uint64_t *ring; /* replayed issue time by seq % SEQ_RING; NO_TIME empty; bit 63: measured */
	uint64_t next_seq, last_issue;
	bool have_last;
	bool one_pass; /* --loops 1: windows run to the later side's end; else the recording's */
};

const char *const rp_fid_late_names[RP_FID_LATE_BUCKETS] = {"<=1us",  "<=10us", "<=100us",
							     "<=1ms",  "<=10ms", ">10ms"};

static const uint64_t late_edges[RP_FID_LATE_BUCKETS - 1] = {1000, 10000, 100000, 1000000,
							     10000000};

/* An inter-arrival gap, RP_FID_GAP_FLOOR_NS at least (fidelity.h) */
static void add_gap(struct hist *h, uint64_t gap_ns)
{
	hist_add(h, gap_ns < RP_FID_GAP_FLOOR_NS ? RP_FID_GAP_FLOOR_NS : gap_ns);
}

static void side_add(struct rp_fid_side *s, uint64_t window_ns, uint64_t rel_ns, uint64_t bytes,
		     uint64_t qd, uint64_t lat_ns)
{
	uint64_t w = rel_ns / window_ns;

	s->ios++;
	hist_add(&s->size, bytes);
	if (qd)
		hist_add(&s->qd, qd);
	if (lat_ns != NO_TIME)
		hist_add(&s->lat, lat_ns);
	if (w < RP_FID_WINDOWS) {
		s->win_ios[w]++;
		s->win_qd[w] += qd;
	} else {
		s->beyond++;
	}
}

void rp_fidelity__add_recorded(struct rp_fidelity *f, const struct btape_event *evs, size_t n)
{
	const struct rp_sched_cfg *cfg = &f->cfg;

	for (size_t i = 0; i < n && !f->rec_done; i++) {
		const struct btape_event *ev = &evs[i];
		uint64_t rel = ev->issue_ns > f->first
				       ? (uint64_t)((double)(ev->issue_ns - f->first) / f->speed)
				       : 0;
		uint64_t lat = NO_TIME;

		if (rp_sched_engine_op(cfg, ev->op, ev->bytes) < 0 || ev->dev >= cfg->ndev ||
		    cfg->devs[ev->dev].target >= cfg->ntargets)
			continue;
		if (rel < cfg->warmup_ns)
			continue;
		if (cfg->duration_ns && rel >= cfg->duration_ns) {
			f->rec_done = true;
			break;
		}
		if ((ev->present & BTAPE_HAS_COMPLETE) && ev->complete_ns >= ev->issue_ns)
			lat = ev->complete_ns - ev->issue_ns;
		if (f->have_prev) /* a file's order violation (its footer counts them): 0 */
			add_gap(&f->r.rec.gap,
				ev->issue_ns > f->prev
					? (uint64_t)((double)(ev->issue_ns - f->prev) / f->speed)
					: 0);
		f->prev = ev->issue_ns;
		f->have_prev = true;
		side_add(&f->r.rec, f->r.window_ns, rel - cfg->warmup_ns, ev->bytes,
			 (ev->present & BTAPE_HAS_QD) ? ev->qd : 0, lat);
	}
}

int rp_fidelity__new(struct rp_fidelity **fp, const struct btape_summary *sum,
		     const struct rp_sched_cfg *cfg)
{
	struct rp_fidelity *f = calloc(1, sizeof(*f));
	uint64_t span;

	*fp = NULL;
	if (!f || !(f->ring = malloc(SEQ_RING * sizeof(*f->ring)))) {
		rp_fidelity__free(f);
		return -ENOMEM;
	}
	rp_fidelity__reset(f);
	f->one_pass = cfg->loops == 1;
	f->cfg = *cfg;
	f->speed = cfg->timing == RP_TIMING_ORIGINAL && cfg->speed > 0 ? cfg->speed : 1;
	f->first = sum->first_issue_ns;
	span = (uint64_t)((double)(sum->last_issue_ns - f->first) / f->speed);
	if (cfg->duration_ns && cfg->duration_ns < span)
		span = cfg->duration_ns;
	f->r.window_ns = span / (RP_FID_WINDOWS / 2) + 1;
	if (f->r.window_ns < 1000000)
		f->r.window_ns = 1000000; /* 1 ms at least: IOPS over a window means something */
	*fp = f;
	return 0;
}

void rp_fidelity__free(struct rp_fidelity *f)
{
	if (!f)
		return;
	free(f->ring);
	free(f);
}

void rp_fidelity__reset(struct rp_fidelity *f)
{
	memset(&f->r.rep, 0, sizeof(f->r.rep));
	for (unsigned int i = 0; i < SEQ_RING; i++)
		f->ring[i] = NO_TIME;
	f->next_seq = 0;
	f->have_last = false;
}

#define MEASURED (1ull << 63)

/* Takes the ring's issue times in seq order while they are there (all: up to seq `upto`). */
static void drain(struct rp_fidelity *f, uint64_t upto)
{
	while (f->next_seq < upto) {
		uint64_t *slot = &f->ring[f->next_seq % SEQ_RING], t = *slot;

		if (t == NO_TIME) {
			if (upto == UINT64_MAX)
				return;
			f->have_last = false; /* a hole forced out: that gap is lost */
		} else {
			if ((t & MEASURED) && f->have_last)
				add_gap(&f->r.rep.gap, (t & ~MEASURED) - f->last_issue);
			f->last_issue = t & ~MEASURED;
			f->have_last = (t & MEASURED) != 0;
			*slot = NO_TIME;
		}
		f->next_seq++;
	}
}

void rp_fidelity__add(struct rp_fidelity *f, const struct rp_io *io, const struct rp_stats *st)
{
	bool measured = io->intended_ns >= st->measure_start_ns;

	if (io->seq >= f->next_seq) {
		if (io->seq >= f->next_seq + SEQ_RING)
			drain(f, io->seq - SEQ_RING + 1);
		f->ring[io->seq % SEQ_RING] = io->issue_ns | (measured ? MEASURED : 0);
		drain(f, UINT64_MAX);
	}
	if (!measured)
		return;
	side_add(&f->r.rep, f->r.window_ns,
		 io->issue_ns > st->measure_start_ns ? io->issue_ns - st->measure_start_ns : 0,
		 io->bytes, io->qd,
		 io->complete_ns >= io->issue_ns ? io->complete_ns - io->issue_ns : NO_TIME);
}

static unsigned int last_window(const struct rp_fid_side *s)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < RP_FID_WINDOWS; i++)
		if (s->win_ios[i])
			n = i + 1;
	return n;
}

/* The distances and correlations of r's sides, over its first r->windows windows. */
static void compare(struct rp_fid *r)
{
	double x[RP_FID_WINDOWS], y[RP_FID_WINDOWS], qx[RP_FID_WINDOWS], qy[RP_FID_WINDOWS];

	r->gap_ks = dist_ks_hist(&r->rec.gap, &r->rep.gap);
	r->size_ks = dist_ks_hist(&r->rec.size, &r->rep.size);
	r->qd_ks = dist_ks_hist(&r->rec.qd, &r->rep.qd);
	r->lat_demerit_ns = dist_demerit_hist(&r->rec.lat, &r->rep.lat);
	for (unsigned int i = 0; i < r->windows; i++) {
		x[i] = (double)r->rec.win_ios[i];
		y[i] = (double)r->rep.win_ios[i];
		qx[i] = r->rec.win_ios[i] ? (double)r->rec.win_qd[i] / x[i] : 0;
		qy[i] = r->rep.win_ios[i] ? (double)r->rep.win_qd[i] / y[i] : 0;
	}
	r->iops_corr = dist_pearson(x, y, r->windows);
	r->qd_corr = hist_count(&r->rec.qd) ? dist_pearson(qx, qy, r->windows) : NAN;
}

double rp_fid_late_share(const struct rp_fid *f)
{
	return f->timed_ios ? (double)f->late_ios / (double)f->timed_ios : 0;
}

const struct rp_fid *rp_fidelity__finish(struct rp_fidelity *f, const struct rp_stats *st)
{
	struct rp_fid *r = &f->r;
	unsigned int n = last_window(&r->rec), nb = last_window(&r->rep), i;
	const struct hist *h = &st->issue_err;

	drain(f, f->next_seq + SEQ_RING);
	/* up to the later side's last window: a replay that stretched is compared with zeros */
	r->windows = f->one_pass && nb > n ? nb : n;
	compare(r);
	memset(r->late, 0, sizeof(r->late));
	for (i = 0; i < HIST_BUCKETS; i++) {
		unsigned int k = 0;

		if (!h->b[i])
			continue;
		while (k < RP_FID_LATE_BUCKETS - 1 && i > hist_index(late_edges[k]))
			k++;
		r->late[k] += h->b[i];
	}
	r->fell_behind = st->lag_max_ns > RP_LATE_NS;
	r->late_ios = st->late;
	r->timed_ios = st->issue_err.count;
	r->faithful = r->rep.ios && !(rp_fid_late_share(r) > RP_FID_LATE_OK) &&
		      !(r->gap_ks > RP_FID_GAP_KS_OK) && !(r->iops_corr < RP_FID_IOPS_CORR_OK);
	return r;
}

static void side_merge(struct rp_fid_side *d, const struct rp_fid_side *s, bool series)
{
	d->ios += s->ios;
	hist_merge(&d->gap, &s->gap);
	hist_merge(&d->size, &s->size);
	hist_merge(&d->qd, &s->qd);
	hist_merge(&d->lat, &s->lat);
	d->beyond += s->beyond;
	for (unsigned int i = 0; series && i < RP_FID_WINDOWS; i++) {
		d->win_ios[i] += s->win_ios[i];
		d->win_qd[i] += s->win_qd[i];
	}
}

void rp_fid_merge(struct rp_fid *dst, const struct rp_fid *src)
{
	/* the first rank's width; a rank of another width ends the cluster's series */
	bool series = !dst->ranks || (dst->window_ns == src->window_ns && dst->window_ns);

	if (!dst->ranks)
		dst->window_ns = src->window_ns;
	if (!series)
		dst->window_ns = 0;
	side_merge(&dst->rec, &src->rec, series);
	side_merge(&dst->rep, &src->rep, series);
	if (series && src->windows > dst->windows)
		dst->windows = src->windows;
	if (!series)
		dst->windows = 0;
	for (unsigned int k = 0; k < RP_FID_LATE_BUCKETS; k++)
		dst->late[k] += src->late[k];
	dst->late_ios += src->late_ios;
	dst->timed_ios += src->timed_ios;
	dst->fell_behind |= src->fell_behind;
	dst->ranks++;
	dst->ranks_unfaithful += !src->faithful;
}

void rp_fid_merge_finish(struct rp_fid *f)
{
	compare(f);
	if (!f->window_ns) {
		f->iops_corr = NAN;
		f->qd_corr = NAN;
	}
	f->faithful = f->ranks && !f->ranks_unfaithful;
}

void rp_fid_verdict(const struct rp_fid *f, char *buf, size_t len)
{
	const char *sep = " (";
	size_t at;

	if (f->ranks) {
		if (f->faithful)
			snprintf(buf, len, "every rank kept to its recording");
		else
			snprintf(buf, len, "%u of %u ranks did NOT keep to their recording",
				 f->ranks_unfaithful, f->ranks);
		return;
	}
	snprintf(buf, len, "%s", f->faithful ? "kept to the recording" :
					      "did NOT keep to the recording");
	if (f->faithful)
		return;
#define ADD(...)                                                                                   \
	do {                                                                                       \
		at = strlen(buf);                                                                  \
		snprintf(buf + at, len - at, __VA_ARGS__);                                         \
		sep = "; ";                                                                        \
	} while (0)
	if (rp_fid_late_share(f) > RP_FID_LATE_OK)
		ADD("%s%.2f%% of I/Os over %llu us late > %g%%", sep, 100 * rp_fid_late_share(f),
		    RP_LATE_NS / 1000, 100 * RP_FID_LATE_OK);
	if (f->gap_ks > RP_FID_GAP_KS_OK)
		ADD("%sinter-arrival KS %.3f > %g", sep, f->gap_ks, RP_FID_GAP_KS_OK);
	if (f->iops_corr < RP_FID_IOPS_CORR_OK)
		ADD("%sIOPS per window correlate %.3f < %g", sep, f->iops_corr,
		    RP_FID_IOPS_CORR_OK);
	if (!f->rep.ios)
		ADD("%sno measured I/O", sep);
#undef ADD
	at = strlen(buf);
	snprintf(buf + at, len - at, ")");
}

/* ---- the section as msgpack ---- */

static void pk_key(msgpack_packer *pk, const char *k)
{
	msgpack_pack_str(pk, strlen(k));
	msgpack_pack_str_body(pk, k, strlen(k));
}

/* A figure that may be undefined: nil for NaN. */
static void pk_num(msgpack_packer *pk, const char *k, double x)
{
	pk_key(pk, k);
	if (isnan(x))
		msgpack_pack_nil(pk);
	else
		msgpack_pack_double(pk, x);
}

static void pk_bool(msgpack_packer *pk, const char *k, bool b)
{
	pk_key(pk, k);
	if (b)
		msgpack_pack_true(pk);
	else
		msgpack_pack_false(pk);
}

static void pk_u64(msgpack_packer *pk, const char *k, uint64_t v)
{
	pk_key(pk, k);
	msgpack_pack_uint64(pk, v);
}

/* Per window: the I/O counts, or (qd) the mean queue depth to 0.001. */
static void pk_series(msgpack_packer *pk, const char *k, const struct rp_fid_side *s,
		      unsigned int n, bool qd)
{
	pk_key(pk, k);
	msgpack_pack_array(pk, n);
	for (unsigned int i = 0; i < n; i++) {
		if (!qd)
			msgpack_pack_uint64(pk, s->win_ios[i]);
		else
			msgpack_pack_double(pk, s->win_ios[i] ? round(1000.0 * (double)s->win_qd[i] /
								   (double)s->win_ios[i]) /
								 1000.0
							  : 0.0);
	}
}

struct sink {
	msgpack_sbuffer sb;
	bool failed; /* a write could not grow the buffer: what it holds is not the section */
};

static int sink_write(void *data, const char *buf, size_t len)
{
	struct sink *s = data;

	if (msgpack_sbuffer_write(&s->sb, buf, len))
		s->failed = true;
	return s->failed ? -1 : 0;
}

int rp_fid_pack(const struct rp_fid *f, char **buf, size_t *len)
{
	struct sink sk = {.failed = false};
	msgpack_packer pk;

	msgpack_sbuffer_init(&sk.sb);
	msgpack_packer_init(&pk, &sk, sink_write);
	msgpack_pack_map(&pk, f->ranks ? 18 : 16);
	pk_bool(&pk, "faithful", f->faithful);
	pk_bool(&pk, "fell_behind", f->fell_behind);
	pk_num(&pk, "late_share", rp_fid_late_share(f));
	pk_num(&pk, "gap_ks", f->gap_ks);
	pk_num(&pk, "size_ks", f->size_ks);
	pk_num(&pk, "qd_ks", f->qd_ks);
	pk_num(&pk, "lat_demerit_us", f->lat_demerit_ns / 1e3);
	pk_num(&pk, "iops_corr", f->iops_corr);
	pk_num(&pk, "qd_corr", f->qd_corr);
	pk_u64(&pk, "recorded_ios", f->rec.ios);
	pk_u64(&pk, "replayed_ios", f->rep.ios);
	pk_u64(&pk, "replayed_after_windows", f->rep.beyond);
	pk_key(&pk, "lateness");
	msgpack_pack_map(&pk, RP_FID_LATE_BUCKETS);
	for (unsigned int k = 0; k < RP_FID_LATE_BUCKETS; k++)
		pk_u64(&pk, rp_fid_late_names[k], f->late[k]);
	pk_num(&pk, "window_s", f->window_ns ? (double)f->window_ns / 1e9 : NAN);
	pk_key(&pk, "iops");
	msgpack_pack_map(&pk, 2);
	pk_series(&pk, "recorded", &f->rec, f->windows, false);
	pk_series(&pk, "replayed", &f->rep, f->windows, false);
	pk_key(&pk, "qd");
	msgpack_pack_map(&pk, 2);
	pk_series(&pk, "recorded", &f->rec, f->windows, true);
	pk_series(&pk, "replayed", &f->rep, f->windows, true);
	if (f->ranks) {
		pk_u64(&pk, "ranks", f->ranks);
		pk_u64(&pk, "ranks_unfaithful", f->ranks_unfaithful);
	}
	if (sk.failed) {
		msgpack_sbuffer_destroy(&sk.sb);
		return -ENOMEM;
	}
	*len = sk.sb.size;
	*buf = msgpack_sbuffer_release(&sk.sb);
	return 0;
}
