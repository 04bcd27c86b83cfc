// SPDX-License-Identifier: GPL-2.0-only
/* Trace input for the analyzer: open, unify devices, seek, merge by issue time, filter. */
#include "input.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF_EVENTS 1024
/* Fields the analyzer never reads (only their presence bits): not decoded. */
#define AN_UNUSED_FIELDS (BTAPE_HAS_TID | BTAPE_HAS_CPU | BTAPE_HAS_CGROUP | BTAPE_HAS_FLAGS)

struct src {
	struct btape_reader *r;
	const struct btape_event *evs;
	int n, i;
	bool eof;
	uint32_t *map; /* local device index -> global */
	uint32_t nmap;
	bool ident; /* map[i] == i for every i: events of devices < nmap pass through as they are */
	uint64_t first_ns;
	bool has_first;
	struct btape_cluster clock; /* correction to the timeline (nsync 0: none) */
	struct btape_event *shifted; /* the current batch, corrected */
	int shifted_cap;
	const char *host; /* its host's label (multi-host), else "" */
};

struct gdev {
	char name[BTAPE_NAME_MAX];
	char host[BTAPE_NAME_MAX]; /* multi-host: its host's label */
	uint32_t major, minor;
	uint64_t size;
};

/* "PATH: why", without repeating PATH when the reader's message already starts with it. */
static void path_msg(char *msg, size_t msglen, const char *path, const char *why)
{
	size_t pl = strlen(path);

	if (strncmp(why, path, pl) == 0 && why[pl] == ':')
		snprintf(msg, msglen, "%s", why);
	else
		snprintf(msg, msglen, "%s: %s", path, why);
}

/* The batch on the timeline (an_align_event). */
static int src_shift(struct src *sr, int n)
{
	if (n > sr->shifted_cap) {
		struct btape_event *p = realloc(sr->shifted, (size_t)n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		sr->shifted = p;
		sr->shifted_cap = n;
	}
	for (int i = 0; i < n; i++) {
		sr->shifted[i] = sr->evs[i];
		an_align_event(&sr->clock, &sr->shifted[i]);
	}
	sr->evs = sr->shifted;
	return 0;
}

static int src_fill(struct src *sr, char *msg, size_t msglen, const char *path)
{
	while (!sr->eof && sr->i >= sr->n) {
		int n = btape_reader__next_batch(sr->r, &sr->evs);

		if (n > 0 && sr->clock.nsync && src_shift(sr, n)) {
			path_msg(msg, msglen, path, strerror(ENOMEM));
			return -ENOMEM;
		}
		if (n < 0) {
			path_msg(msg, msglen, path, btape_reader__errmsg(sr->r));
			return n;
		}
		if (n == 0)
			sr->eof = true;
		sr->n = n;
		sr->i = 0;
	}
	return 0;
}

static uint32_t gdev_find(struct gdev *g, uint32_t *ng, const char *host, const char *name,
			  uint32_t major, uint32_t minor, uint64_t size)
{
	for (uint32_t i = 0; i < *ng; i++)
		if (strcmp(g[i].name, name) == 0 && g[i].major == major && g[i].minor == minor &&
		    strcmp(g[i].host, host) == 0)
			return i;
	if (*ng >= STATS_MAX_DEVICES)
		return STATS_MAX_DEVICES - 1;
	struct gdev *d = &g[(*ng)++];

	if (host[0])
		snprintf(d->name, sizeof(d->name), "%.120s:%.120s", host, name);
	else
		snprintf(d->name, sizeof(d->name), "%s", name);
	snprintf(d->host, sizeof(d->host), "%s", host);
	d->major = major;
	d->minor = minor;
	d->size = size;
	return *ng - 1;
}

/* Global index of local device idx of a source (devices missing from the table: "dev<N>"). */
static uint32_t map_dev(struct src *sr, struct gdev *g, uint32_t *ng, uint32_t idx)
{
	if (idx < sr->nmap)
		return sr->map[idx];
	char name[32];

	snprintf(name, sizeof(name), "dev%" PRIu32, idx);
	return gdev_find(g, ng, sr->host, name, 0, 0, 0);
}

static bool dev_matches(const struct gdev *d, uint32_t idx, const char *want)
{
	char buf[64];

	if (strcmp(d->name, want) == 0)
		return true;
	snprintf(buf, sizeof(buf), "%" PRIu32 ":%" PRIu32, d->major, d->minor);
	if ((d->major || d->minor) && strcmp(buf, want) == 0)
		return true;
	snprintf(buf, sizeof(buf), "%" PRIu32, idx);
	return strcmp(buf, want) == 0;
}

/* stats__add_batch(); in a slice, the entry state is recorded before its first event. */
static int add_events(struct stats *s, struct an_slice *sl, const struct btape_event *evs,
		      size_t n)
{
	if (sl && !sl->entry.captured) {
		int err = split_entry_capture(&sl->entry, s);

		if (err)
			return err;
		split_stamp(sl, SPLIT_T_WARM);
		sl->entry.first_issue_ns = evs[0].issue_ns;
	}
	return stats__add_batch(s, evs, n);
}

/*
 * The events per 1 s window of every file, on the timeline, from their chunk index: 0, 1 when
 * a file has no index (or the trace is too long: plan by time), or -ENOMEM.
 */
static int slice_load(struct split_load *l, const struct src *srcs, int npaths,
		      uint64_t origin_ns, uint64_t end_ns)
{
	int err = split_load_init(l, origin_ns, end_ns);

	if (err)
		return err == -ENOMEM ? err : 1;
	for (int k = 0; k < npaths; k++) {
		const struct src *sr = &srcs[k];
		struct btape_chunk_info ci = {.sz = sizeof(ci)};
		uint64_t i = 0;

		while (btape_reader__chunk_info(sr->r, i, &ci) == 1) {
			uint64_t lo = ci.issue_min_ns, hi = ci.issue_max_ns;

			if (sr->clock.nsync) {
				lo = btape_cluster_to_reference(&sr->clock, lo);
				hi = btape_cluster_to_reference(&sr->clock, hi);
			}
			split_load_add(l, lo, hi, ci.events);
			i++;
		}
		if (!i && sr->has_first) { /* events but no index: recovered, or a stream */
			split_load_free(l);
			return 1;
		}
	}
	return 0;
}

/*
 * Whether issue time t is before the selection's end: UINT64_MAX is no end (no --to; the last
 * slice), so that an event issued at 2^64 - 1 ns is counted, not dropped.
 */
static bool before_end(uint64_t t, uint64_t to_abs)
{
	return to_abs == UINT64_MAX || t < to_abs;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

static uint64_t nice_interval(uint64_t span_ns)
{
	uint64_t target = span_ns / 100, v = 1000; /* at least 1 us */

	if (!span_ns)
		return 1000000000ull;
	for (;;) {
		if (v >= target)
			return v;
		if (2 * v >= target)
			return 2 * v;
		if (5 * v >= target)
			return 5 * v;
		v *= 10;
	}
}

int an_run(char *const *paths, int npaths, const struct an_filter *f, const struct stats_opts *so,
	   struct stats **out, struct an_info *info, char *msg, size_t msglen)
{
	struct src *srcs = calloc((size_t)npaths, sizeof(*srcs));
	struct gdev *g = calloc(STATS_MAX_DEVICES, sizeof(*g));
	struct btape_event *buf = malloc(BUF_EVENTS * sizeof(*buf));
	struct stats *s = NULL;
	struct stats_opts o = so ? *so : (struct stats_opts){0};
	struct an_align_in *ain = calloc((size_t)npaths, sizeof(*ain));
	struct an_align_out *aout = calloc((size_t)npaths, sizeof(*aout));
	uint64_t *last = calloc((size_t)npaths, sizeof(*last));
	static const struct btape_meta no_meta;
	uint32_t ng = 0, ng_table, want_dev = UINT32_MAX;
	struct an_slice *sl = f->slice;
	int err = -ENOMEM;
	int nb = 0;

	*out = NULL;
	memset(info, 0, sizeof(*info));
	info->nfiles = npaths;
	info->filtered = f->has_from || f->has_to || f->device || f->has_pid;
	msg[0] = 0;
	if (!srcs || !g || !buf || !ain || !aout || !last)
		goto cleanup;

	/* open; first and last issue from the summaries */
	for (int k = 0; k < npaths; k++) {
		struct src *sr = &srcs[k];
		char emsg[BTAPE_ERRMSG_LEN];
		struct btape_summary sum = {.sz = sizeof(sum)};

		err = btape_reader__open(&sr->r, paths[k], emsg, sizeof(emsg));
		if (err) {
			path_msg(msg, msglen, paths[k], emsg);
			goto cleanup;
		}
		/* no consumer (stats, profile, compare, renderers) reads these values */
		err = btape_reader__skip_fields(sr->r, AN_UNUSED_FIELDS);
		if (err)
			goto cleanup;
		const struct btape_meta *m = btape_reader__meta(sr->r);

		ain[k] = (struct an_align_in){.path = paths[k], .meta = m ? m : &no_meta};
		if (k == 0 && m) {
			snprintf(info->tool, sizeof(info->tool), "%s", m->tool);
			snprintf(info->hostname, sizeof(info->hostname), "%s", m->hostname);
			snprintf(info->source, sizeof(info->source), "%s", m->source);
		}
		if (btape_reader__summary(sr->r, &sum) == 0) {
			info->lost_events += sum.lost_events;
			info->recovered |= sum.recovered;
			if (k < AN_MAX_FILES && (sum.recovered || sum.interrupted)) {
				info->ends[k] = (struct an_file_end){
					.cut_short = sum.recovered,
					.stopped_early = sum.interrupted,
					.rank = m && m->cluster.id[0] ? (int32_t)m->cluster.rank : -1};
				info->incomplete++;
			}
			if (sum.events) {
				sr->first_ns = sum.first_issue_ns;
				sr->has_first = true;
				last[k] = sum.last_issue_ns;
			}
		}
		if (!sr->has_first) {
			err = src_fill(sr, msg, msglen, paths[k]);
			if (err)
				goto cleanup;
			if (sr->n) {
				sr->first_ns = sr->evs[0].issue_ns;
				sr->has_first = true;
			}
		}
		ain[k].first_ns = sr->first_ns;
		ain[k].has_first = sr->has_first;
	}

	/* one timeline: each file's correction, then its device table */
	err = an_align_plan(f->align, ain, npaths, aout, &info->multi_host, msg, msglen);
	if (err < 0)
		goto cleanup;
	info->align = (enum an_align)err;
	err = 0;
	if (info->align == AN_ALIGN_CLUSTER) {
		snprintf(info->cluster_id, sizeof(info->cluster_id), "%s", ain[0].meta->cluster.id);
		snprintf(info->reference, sizeof(info->reference), "%s",
			 ain[0].meta->cluster.reference);
	}
	for (int k = 0; k < npaths; k++) {
		struct src *sr = &srcs[k];
		const struct btape_meta *m = ain[k].meta;
		const struct btape_cluster *ck = &aout[k].clock;

		sr->clock = *ck;
		sr->host = aout[k].host;
		if (k < AN_MAX_FILES) {
			struct an_file_clock *fc = &info->clocks[k];
			uint32_t ns = ck->nsync ? ck->nsync - 1 : 0;

			snprintf(fc->host, sizeof(fc->host), "%s", aout[k].host);
			snprintf(info->ends[k].host, sizeof(info->ends[k].host), "%s",
				 aout[k].host[0] ? aout[k].host : m->hostname);
			fc->offset_start_ns = ck->sync[0].offset_ns;
			fc->offset_stop_ns = ck->sync[ns].offset_ns;
			fc->uncertainty_ns = btape_cluster_uncertainty(ck);
			fc->drift_ppm = btape_cluster_drift_ppm(ck);
		}
		if (sr->clock.nsync) {
			if (sr->n) { /* the batch read for its first issue */
				err = src_shift(sr, sr->n);
				if (err)
					goto cleanup;
			}
			sr->first_ns = btape_cluster_to_reference(ck, sr->first_ns);
			last[k] = btape_cluster_to_reference(ck, last[k]);
		}
		if (sr->has_first && last[k] > info->trace_end_ns)
			info->trace_end_ns = last[k];
		if (m->ndevices) {
			sr->map = calloc(m->ndevices, sizeof(*sr->map));
			if (!sr->map) {
				err = -ENOMEM;
				goto cleanup;
			}
			sr->nmap = m->ndevices;
			for (uint32_t i = 0; i < m->ndevices; i++) {
				const struct btape_device *d = &m->devices[i];
				const char *host = !info->multi_host ? ""
						   : d->host[0]	     ? d->host
									: sr->host;
				char name[BTAPE_NAME_MAX];

				if (d->name[0])
					snprintf(name, sizeof(name), "%s", d->name);
				else
					snprintf(name, sizeof(name), "dev%" PRIu32, i);
				sr->map[i] = gdev_find(g, &ng, host, name, d->dev_t_major,
						       d->dev_t_minor, d->size_bytes);
			}
		}
	}
	bool any = false;

	for (int k = 0; k < npaths; k++) {
		if (srcs[k].has_first && (!any || srcs[k].first_ns < info->trace_start_ns)) {
			info->trace_start_ns = srcs[k].first_ns;
			any = true;
		}
	}
	if (info->trace_end_ns < info->trace_start_ns)
		info->trace_end_ns = 0;

	/* device filter */
	size_t dl = 0;

	for (uint32_t i = 0; i < ng && dl + 2 < sizeof(info->devices); i++)
		dl += (size_t)snprintf(info->devices + dl, sizeof(info->devices) - dl, "%s%s",
				       i ? ", " : "", g[i].name);
	if (f->device) {
		for (uint32_t i = 0; i < ng; i++) {
			if (dev_matches(&g[i], i, f->device)) {
				want_dev = i;
				break;
			}
		}
		if (want_dev == UINT32_MAX) {
			snprintf(msg, msglen, "no device '%s' in the trace (devices: %s)",
				 f->device, ng ? info->devices : "none listed");
			err = -EINVAL;
			goto cleanup;
		}
	}

	/* window in absolute ns */
	uint64_t from_abs = add_sat(info->trace_start_ns, f->has_from ? f->from_ns : 0);
	uint64_t to_abs = f->has_to ? add_sat(info->trace_start_ns, f->to_ns) : UINT64_MAX;
	uint64_t seek_abs = from_abs;


	if (f->has_to && f->to_ns < f->from_ns) {
		snprintf(msg, msglen, "--to is before --from");
		err = -EINVAL;
		goto cleanup;
	}
	if (!o.interval_ns) {
		uint64_t lo = from_abs, hi = info->trace_end_ns;

		if (to_abs < hi)
			hi = to_abs;
		o.interval_ns = nice_interval(hi > lo ? hi - lo : 0);
	}
	ng_table = ng;
	split_stamp(sl, SPLIT_T_OPEN);
	if (sl) { /* a slice: no other filter (the caller's rule), the warm-up read uncounted */
		struct split_load load;

		err = slice_load(&load, srcs, npaths, info->trace_start_ns, info->trace_end_ns);
		if (err < 0)
			goto cleanup;
		split_plan(sl, info->trace_start_ns, info->trace_end_ns, err ? NULL : &load);
		split_load_free(&load);
		err = 0;
		from_abs = sl->lo;
		to_abs = sl->hi;
		seek_abs = sl->warm_lo;
	}
	err = stats__new(&s, &o);
	if (err)
		goto cleanup;
	s->trace_start_ns = info->trace_start_ns;
	if (sl && sl->lo)
		stats__set_origin(s, info->trace_start_ns);
	for (uint32_t i = 0; i < ng; i++) {
		err = stats__set_device(s, i, g[i].name, g[i].size);
		if (!err && info->multi_host)
			err = stats__set_host(s, i, g[i].host);
		if (err < 0)
			goto cleanup;
	}
	err = 0;
	if (f->has_from || (sl && sl->lo)) {
		for (int k = 0; k < npaths; k++) {
			if (srcs[k].n || srcs[k].eof)
				continue; /* already reading: filter instead */
			/* on the file's clock at most from + its smallest offset: seek there */
			const struct btape_cluster *ck = &srcs[k].clock;
			int64_t lo = ck->sync[0].offset_ns;

			for (uint32_t y = 1; y < ck->nsync && y < BTAPE_CLOCK_SYNC_MAX; y++)
				lo = ck->sync[y].offset_ns < lo ? ck->sync[y].offset_ns : lo;
			struct btape_cluster back = {.nsync = 1};

			back.sync[0].offset_ns = lo == INT64_MIN ? INT64_MAX : -lo;
			err = btape_reader__seek(srcs[k].r,
						 btape_cluster_to_reference(&back, seek_abs));
			if (err < 0 && err != -ENOSYS && err != -ESPIPE) {
				path_msg(msg, msglen, paths[k], btape_reader__errmsg(srcs[k].r));
				goto cleanup;
			}
		}
	}

	/* merge; without a pid or device filter most events need no copy */
	bool fast = !f->has_pid && want_dev == UINT32_MAX;

	for (int k = 0; k < npaths; k++) {
		srcs[k].ident = true;
		for (uint32_t i = 0; i < srcs[k].nmap; i++)
			srcs[k].ident &= srcs[k].map[i] == i;
	}
	for (;;) {
		int best = -1;

		for (int k = 0; k < npaths; k++) {
			err = src_fill(&srcs[k], msg, msglen, paths[k]);
			if (err)
				goto cleanup;
			if (srcs[k].eof)
				continue;
			if (best < 0 ||
			    srcs[k].evs[srcs[k].i].issue_ns < srcs[best].evs[srcs[best].i].issue_ns)
				best = k;
		}
		if (best < 0)
			break;
		struct src *sr = &srcs[best];
		/* take a run from the best source: while it stays <= every other head */
		uint64_t limit = UINT64_MAX;

		for (int k = 0; k < npaths; k++)
			if (k != best && !srcs[k].eof && srcs[k].evs[srcs[k].i].issue_ns < limit)
				limit = srcs[k].evs[srcs[k].i].issue_ns;
		while (sr->i < sr->n) {
			if (fast && sr->ident) {
				/*
				 * a run that needs no change: straight from the reader's batch;
				 * from <= issue <= limit and issue < to as one unsigned compare
				 */
				uint64_t end = limit < to_abs ? limit + 1 : to_abs;
				uint64_t span = end > from_abs ? end - from_abs : 0;
				int j = sr->i;

				while (j < sr->n && sr->evs[j].issue_ns - from_abs < span &&
				       sr->evs[j].dev < sr->nmap)
					j++;
				if (j > sr->i) {
					if (nb) {
						err = add_events(s, sl, buf, (size_t)nb);
						if (err)
							goto cleanup;
						info->events_selected += (uint64_t)nb;
						nb = 0;
					}
					err = add_events(s, sl, sr->evs + sr->i,
							 (size_t)(j - sr->i));
					if (err)
						goto cleanup;
					info->events_read += (uint64_t)(j - sr->i);
					info->events_selected += (uint64_t)(j - sr->i);
					sr->i = j;
					continue;
				}
			}
			const struct btape_event *e = &sr->evs[sr->i];

			if (e->issue_ns > limit)
				break;
			sr->i++;
			if (sl) { /* a slice counts its own events only */
				if (e->issue_ns >= sl->warm_lo && e->issue_ns < from_abs) {
					struct btape_event w = *e;

					w.dev = map_dev(sr, g, &ng, e->dev);
					if ((err = stats__warm(s, &w)))
						goto cleanup;
				}
				info->events_read +=
					e->issue_ns >= from_abs && before_end(e->issue_ns, to_abs);
			} else {
				info->events_read++;
			}
			if (e->issue_ns < from_abs)
				continue;
			if (!before_end(e->issue_ns, to_abs)) {
				sr->eof = true; /* issue order: nothing later qualifies */
				sr->i = sr->n;
				break;
			}
			if (f->has_pid && (!(e->present & BTAPE_HAS_PID) || e->pid != f->pid))
				continue;
			uint32_t gd = map_dev(sr, g, &ng, e->dev);

			if (want_dev != UINT32_MAX && gd != want_dev)
				continue;
			if (gd >= s->ndevs && gd < STATS_MAX_DEVICES && !s->devs[gd].name[0]) {
				stats__set_device(s, gd, g[gd].name, g[gd].size);
				if (info->multi_host)
					stats__set_host(s, gd, g[gd].host);
			}
			buf[nb] = *e;
			buf[nb].dev = gd;
			if (++nb == BUF_EVENTS) {
				err = add_events(s, sl, buf, (size_t)nb);
				if (err)
					goto cleanup;
				info->events_selected += (uint64_t)nb;
				nb = 0;
			}
		}
	}
	if (nb) {
		err = add_events(s, sl, buf, (size_t)nb);
		if (err)
			goto cleanup;
		info->events_selected += (uint64_t)nb;
	}
	if (sl) { /* unfinished: the slices are merged first (split_merge) */
		sl->undeclared = ng > ng_table;
		if (!sl->entry.captured)
			err = split_entry_capture(&sl->entry, s);
		sl->events = info->events_read;
		split_stamp(sl, SPLIT_T_READ);
	} else {
		err = stats__finish(s);
	}
	if (err)
		goto cleanup;
	*out = s;
	s = NULL;
cleanup:
	if (err && !msg[0])
		snprintf(msg, msglen, "%s", strerror(-err));
	stats__free(s);
	if (srcs)
		for (int k = 0; k < npaths; k++) {
			btape_reader__close(srcs[k].r);
			free(srcs[k].map);
			free(srcs[k].shifted);
		}
	free(srcs);
	free(ain);
	free(aout);
	free(last);
	free(g);
	free(buf);
	return err;
}
