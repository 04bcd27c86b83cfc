// SPDX-License-Identifier: GPL-2.0-only
/* JSON report of an analysis; schema "biotape.analyze/1", documented in docs/ANALYSIS.md. */
#include "render.h"

#include <inttypes.h>
#include <stdlib.h>

static const char *dir_name[DIR__COUNT] = {"read", "write"};

static void j_hist(struct jw *j, const char *key, const struct hist *h, const char *unit)
{
	char k[32];

	if (!h || !h->count) {
		jw_null(j, key);
		return;
	}
	jw_obj(j, key);
	jw_u64(j, "count", h->count);
	snprintf(k, sizeof(k), "min_%s", unit);
	jw_u64(j, k, h->min);
	snprintf(k, sizeof(k), "mean_%s", unit);
	jw_dbl(j, k, hist_mean(h));
	static const char *qn[5] = {"p50", "p90", "p99", "p999", "max"};

	for (int i = 0; i < 5; i++) {
		snprintf(k, sizeof(k), "%s_%s", qn[i], unit);
		jw_u64(j, k, hist_quantile(h, REPORT_QUANTILES[i]));
	}
	jw_end_obj(j);
}

/* Non-empty buckets of a histogram as [lo, hi, count] triples, merged to <= 2 per octave. */
void j_hist_buckets(struct jw *j, const char *key, const struct hist *h)
{
	jw_arr(j, key);
	if (h) {
		uint64_t lo = 0, hi = 0, c = 0;
		bool open = false;

		for (unsigned int i = 0; i < HIST_BUCKETS; i++) {
			if (!h->b[i])
				continue;
			uint64_t blo = hist_bucket_lo(i), bhi = blo + hist_bucket_width(i);
			/* group into log2 half-octaves: [2^k, 1.5*2^k), [1.5*2^k, 2^(k+1)) */
			uint64_t glo, ghi;

			if (blo < 4) {
				glo = blo;
				ghi = blo + 1;
			} else {
				unsigned int e = 63 - (unsigned int)__builtin_clzll(blo);
				uint64_t half = 1ull << (e - 1);

				glo = (blo >> (e - 1)) << (e - 1);
				ghi = glo + half;
			}
			(void)bhi;
			if (open && glo == lo) {
				c += h->b[i];
				continue;
			}
			if (open) {
				jw_arr(j, NULL);
				jw_u64(j, NULL, lo);
				jw_u64(j, NULL, hi);
				jw_u64(j, NULL, c);
				jw_end_arr(j);
			}
			open = true;
			lo = glo;
			hi = ghi;
			c = h->b[i];
		}
		if (open) {
			jw_arr(j, NULL);
			jw_u64(j, NULL, lo);
			jw_u64(j, NULL, hi);
			jw_u64(j, NULL, c);
			jw_end_arr(j);
		}
	}
	jw_end_arr(j);
}

static void j_acc(struct jw *j, const struct stats *s, const struct acc *a)
{
	bool dur = s->duration_ns > 0, win = s->complete_windows > 0;

	jw_u64(j, "count", a->n);
	jw_u64(j, "bytes", a->bytes);
	if (dur) {
		jw_dbl(j, "iops_mean", stats_rate(s, a->n));
		jw_dbl(j, "throughput_mean_bps", stats_rate(s, a->bytes));
	} else {
		jw_null(j, "iops_mean");
		jw_null(j, "throughput_mean_bps");
	}
	if (win) {
		jw_u64(j, "iops_peak", a->peak_n);
		jw_u64(j, "throughput_peak_bps", a->peak_bytes);
		jw_dbl(j, "iops_window_mean", stats_window_mean(s, a));
		jw_dbl(j, "burstiness", stats_burstiness(s, a));
	} else {
		jw_null(j, "iops_peak");
		jw_null(j, "throughput_peak_bps");
		jw_null(j, "iops_window_mean");
		jw_null(j, "burstiness");
	}
	jw_obj(j, "by_op");
	for (unsigned int op = 0; op < BTAPE_OP__COUNT; op++) {
		if (!a->n_op[op])
			continue;
		jw_obj(j, btape_op_name(op));
		jw_u64(j, "count", a->n_op[op]);
		jw_u64(j, "bytes", a->bytes_op[op]);
		jw_end_obj(j);
	}
	jw_end_obj(j);
}

static void j_stream(struct jw *j, const char *key, const struct stream *st, bool seek)
{
	jw_obj(j, key);
	jw_u64(j, "ios", st->n);
	jw_u64(j, "sequential", st->seq);
	jw_u64(j, "near_sequential", st->near);
	if (st->n) {
		jw_dbl(j, "sequential_share", stats_seq_share(st));
		jw_dbl(j, "near_sequential_share", stats_near_share(st));
		jw_dbl(j, "random_share", 1 - stats_seq_share(st));
	} else {
		jw_null(j, "sequential_share");
		jw_null(j, "near_sequential_share");
		jw_null(j, "random_share");
	}
	if (seek) {
		jw_arr(j, "seek_histogram");
		for (unsigned int k = 0; k < STATS_SEEK_BINS; k++) {
			if (!st->seek[k])
				continue;
			int64_t lo, hi;

			stats_seek_bin_edges(k, &lo, &hi);
			jw_obj(j, NULL);
			jw_i64(j, "lo_bytes", lo);
			jw_i64(j, "hi_bytes", hi);
			jw_u64(j, "count", st->seek[k]);
			jw_end_obj(j);
		}
		jw_end_arr(j);
	}
	jw_end_obj(j);
}

static void j_fields(struct jw *j, const struct stats *s)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} f[] = {
		{BTAPE_HAS_COMPLETE, "complete"}, {BTAPE_HAS_INSERT, "insert"},
		{BTAPE_HAS_FLAGS, "flags"},	  {BTAPE_HAS_ERROR, "error"},
		{BTAPE_HAS_PID, "pid"},		  {BTAPE_HAS_TID, "tid"},
		{BTAPE_HAS_COMM, "comm"},	  {BTAPE_HAS_CGROUP, "cgroup"},
		{BTAPE_HAS_CPU, "cpu"},		  {BTAPE_HAS_QD, "qd"},
	};

	jw_obj(j, "fields");
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		jw_str(j, f[i].name,
		       (s->present_all & f[i].bit)   ? "all"
		       : (s->present_any & f[i].bit) ? "some"
						     : "none");
	jw_end_obj(j);
}

static void j_sizes(struct jw *j, const struct opstat *o)
{
	struct size_slot *v = NULL;
	uint32_t n = 0;

	jw_obj(j, "sizes");
	jw_dbl(j, "mean_bytes", o->n ? (double)o->bytes / (double)o->n : 0);
	jw_arr(j, "top");
	if (stats_sizes_sorted(o, &v, &n) == 0) {
		for (uint32_t k = 0; k < n && k < 32; k++) {
			jw_obj(j, NULL);
			jw_u64(j, "bytes", v[k].size);
			jw_u64(j, "count", v[k].n);
			jw_dbl(j, "share", (double)v[k].n / (double)o->n);
			jw_end_obj(j);
		}
	}
	jw_end_arr(j);
	jw_u64(j, "distinct", n);
	jw_u64(j, "beyond_exact_table", o->n_size_other);
	free(v);
	jw_arr(j, "log2");
	for (int k = 0; k < STATS_SIZE_LOG2_BINS; k++) {
		if (!o->size_log2[k])
			continue;
		jw_obj(j, NULL);
		jw_u64(j, "lo_bytes", k ? 1ull << (k - 1) : 0);
		if (k == 0)
			jw_u64(j, "hi_bytes", 1);
		else if (k < 64)
			jw_u64(j, "hi_bytes", 1ull << k);
		else
			jw_null(j, "hi_bytes");
		jw_u64(j, "count", o->size_log2[k]);
		jw_end_obj(j);
	}
	jw_end_arr(j);
	jw_end_obj(j);
}

/* Several hosts on one timeline: the alignment, and a row per host (only then present). */
static void j_hosts(struct jw *j, const struct report *r)
{
	const struct stats *s = r->s;
	const struct an_info *in = r->info;

	if (!s->nhosts)
		return;
	jw_obj(j, "alignment");
	jw_str(j, "align", an_align_name(in->align));
	if (in->align == AN_ALIGN_CLUSTER) {
		jw_str(j, "cluster_id", in->cluster_id);
		jw_str(j, "reference", in->reference);
	}
	jw_arr(j, "files");
	for (int k = 0; k < r->npaths && k < AN_MAX_FILES; k++) {
		const struct an_file_clock *c = &in->clocks[k];

		jw_obj(j, NULL);
		jw_str(j, "file", r->paths[k]);
		jw_str(j, "host", c->host);
		jw_i64(j, "offset_start_ns", c->offset_start_ns);
		jw_i64(j, "offset_stop_ns", c->offset_stop_ns);
		jw_u64(j, "uncertainty_ns", c->uncertainty_ns);
		jw_dbl(j, "drift_ppm", c->drift_ppm);
		jw_end_obj(j);
	}
	jw_end_arr(j);
	jw_end_obj(j);
	jw_arr(j, "hosts");
	for (uint32_t h = 0; h < s->nhosts; h++) {
		const struct hoststat *hs = &s->hosts[h];

		jw_obj(j, NULL);
		jw_str(j, "name", hs->name);
		if (!hs->acc.n) {
			jw_u64(j, "count", 0);
			jw_end_obj(j);
			continue;
		}
		j_acc(j, s, &hs->acc);
		jw_u64(j, "first_issue_ns", hs->first_issue_ns - s->trace_start_ns);
		jw_u64(j, "last_issue_ns", hs->last_issue_ns - s->trace_start_ns);
		j_hist(j, "latency_device", hs->acc.lat, "ns");
		jw_end_obj(j);
	}
	jw_end_arr(j);
}

int render_json_body(struct jw *j, const struct report *r)
{
	const struct stats *s = r->s;
	const struct an_info *in = r->info;
	unsigned int ops[BTAPE_OP__COUNT];
	int nops = report_ops(s, ops);
	uint64_t t0 = report_origin_rel(s);

	jw_str(j, "schema", ANALYZE_JSON_SCHEMA);
	jw_arr(j, "files");
	for (int i = 0; i < r->npaths; i++)
		jw_str(j, NULL, r->paths[i]);
	jw_end_arr(j);
	jw_obj(j, "source");
	jw_str(j, "tool", in->tool);
	jw_str(j, "hostname", in->hostname);
	jw_str(j, "source", in->source);
	jw_u64(j, "lost_events", in->lost_events);
	jw_bool(j, "recovered", in->recovered);
	jw_end_obj(j);
	if (in->incomplete) {
		jw_arr(j, "incomplete");
		for (int k = 0; k < r->npaths && k < AN_MAX_FILES; k++) {
			const struct an_file_end *e = &in->ends[k];

			if (!e->cut_short && !e->stopped_early)
				continue;
			jw_obj(j, NULL);
			jw_str(j, "file", r->paths[k]);
			jw_str(j, "host", e->host);
			jw_i64(j, "rank", e->rank);
			jw_bool(j, "cut_short", e->cut_short);
			jw_bool(j, "stopped_early", e->stopped_early);
			jw_end_obj(j);
		}
		jw_end_arr(j);
	}
	jw_obj(j, "window");
	jw_u64(j, "trace_start_ns", in->trace_start_ns);
	jw_bool(j, "filtered", in->filtered);
	jw_u64(j, "events_read", in->events_read);
	if (s->all.n) {
		jw_dbl(j, "start_s", (double)t0 / 1e9);
		jw_dbl(j, "end_s", (double)(t0 + s->duration_ns) / 1e9);
	} else {
		jw_null(j, "start_s");
		jw_null(j, "end_s");
	}
	jw_dbl(j, "duration_s", (double)s->duration_ns / 1e9);
	jw_u64(j, "complete_windows", s->complete_windows);
	jw_end_obj(j);
	jw_u64(j, "events", s->all.n);
	if (!s->all.n) {
		jw_str(j, "note",
		       in->events_read || in->filtered ? "no events in window"
						       : "no events in trace");
		return 0;
	}
	j_fields(j, s);
	jw_obj(j, "overall");
	j_acc(j, s, &s->all);
	jw_end_obj(j);

	jw_obj(j, "ops");
	for (int i = 0; i < nops; i++) {
		const struct opstat *o = &s->ops[ops[i]];

		jw_obj(j, btape_op_name(ops[i]));
		jw_u64(j, "count", o->n);
		jw_u64(j, "bytes", o->bytes);
		jw_dbl(j, "count_share", (double)o->n / (double)s->all.n);
		jw_dbl(j, "bytes_share",
		       s->all.bytes ? (double)o->bytes / (double)s->all.bytes : 0);
		if (s->duration_ns) {
			jw_dbl(j, "iops_mean", stats_rate(s, o->n));
			jw_dbl(j, "throughput_mean_bps", stats_rate(s, o->bytes));
		} else {
			jw_null(j, "iops_mean");
			jw_null(j, "throughput_mean_bps");
		}
		jw_u64(j, "errors", o->n_errors);
		j_sizes(j, o);
		jw_obj(j, "latency");
		j_hist(j, "device", o->lat_dev, "ns");
		j_hist(j, "queue", o->lat_queue, "ns");
		j_hist(j, "total", o->lat_total, "ns");
		jw_end_obj(j);
		jw_end_obj(j);
	}
	jw_end_obj(j);

	jw_obj(j, "locality");
	jw_u64(j, "near_sequential_bytes", s->o.near_seq_bytes);
	jw_obj(j, "streams");
	for (int d = 0; d < DIR__COUNT; d++)
		j_stream(j, dir_name[d], &s->streams_all[d], true);
	jw_end_obj(j);
	jw_end_obj(j);

	const struct ws_result *w = &s->wsr;

	jw_obj(j, "working_set");
	jw_u64(j, "block_bytes", STATS_WS_BLOCK);
	jw_bool(j, "exact", !w->estimated && !w->large_uncounted);
	jw_u64(j, "large_ios_not_counted", w->large_uncounted);
	jw_dbl(j, "sample_rate", w->sample_rate);
	jw_dbl(j, "relative_error_3sigma", w->rel_error);
	jw_u64(j, "blocks", w->blocks);
	jw_u64(j, "blocks_read", w->blocks_read);
	jw_u64(j, "blocks_written", w->blocks_written);
	jw_u64(j, "blocks_both", w->blocks_both);
	jw_u64(j, "block_accesses", w->accesses);
	if (w->blocks) {
		jw_obj(j, "skew");
		jw_dbl(j, "hottest_1pct", w->hot[0]);
		jw_dbl(j, "hottest_10pct", w->hot[1]);
		jw_dbl(j, "hottest_20pct", w->hot[2]);
		jw_dbl(j, "hottest_50pct", w->hot[3]);
		jw_end_obj(j);
	} else {
		jw_null(j, "skew");
	}
	jw_end_obj(j);

	jw_obj(j, "queue_depth");
	if (s->qd->count)
		jw_str(j, "basis", s->qd_from_trace ? "recorded" : "computed");
	else
		jw_null(j, "basis");
	j_hist(j, "depth", s->qd, "ios");
	jw_u64(j, "untracked_ios", s->qd_untracked);
	j_hist_buckets(j, "histogram", s->qd);
	/* device time by the depth at issue: per op, one entry per band with I/Os */
	jw_obj(j, "device_time_by_depth");
	for (int i = 0; i < nops; i++) {
		const struct opstat *o = &s->ops[ops[i]];
		bool any = false;

		for (int k = 0; k < STATS_QD_BANDS; k++)
			any |= hist_count(o->lat_qd[k]) > 0;
		if (!any)
			continue;
		jw_arr(j, btape_op_name(ops[i]));
		for (int k = 0; k < STATS_QD_BANDS; k++) {
			uint64_t lo, hi;

			if (!hist_count(o->lat_qd[k]))
				continue;
			stats_qd_band_range((unsigned int)k, &lo, &hi);
			jw_obj(j, NULL);
			jw_u64(j, "depth_min", lo);
			if (hi == UINT64_MAX)
				jw_null(j, "depth_max");
			else
				jw_u64(j, "depth_max", hi);
			j_hist(j, "device", o->lat_qd[k], "ns");
			jw_end_obj(j);
		}
		jw_end_arr(j);
	}
	jw_end_obj(j);
	jw_end_obj(j);
	jw_obj(j, "interarrival");
	j_hist(j, "gap", s->interarrival, "ns");
	j_hist_buckets(j, "histogram", s->interarrival);
	jw_end_obj(j);
	jw_obj(j, "idle");
	jw_str(j, "basis", s->idle_from_completions ? "in_flight" : "issue_gaps");
	jw_u64(j, "min_ns", s->o.idle_min_ns);
	jw_u64(j, "count", s->idle->count);
	jw_u64(j, "total_ns", s->idle_total_ns);
	jw_u64(j, "longest_ns", s->idle->count ? s->idle->max : 0);
	jw_dbl(j, "share", s->duration_ns ? (double)s->idle_total_ns / (double)s->duration_ns : 0);
	jw_end_obj(j);

	j_hosts(j, r);
	jw_arr(j, "devices");
	for (uint32_t i = 0; i < s->ndevs; i++) {
		const struct devstat *d = &s->devs[i];

		jw_obj(j, NULL);
		jw_u64(j, "index", i);
		jw_str(j, "name", d->name);
		jw_u64(j, "size_bytes", d->size_bytes);
		if (!d->used || !d->acc.n) {
			jw_u64(j, "count", 0);
			jw_str(j, "note", "no I/O");
			jw_end_obj(j);
			continue;
		}
		j_acc(j, s, &d->acc);
		j_hist(j, "latency_device", d->acc.lat, "ns");
		jw_obj(j, "streams");
		for (int k = 0; k < DIR__COUNT; k++)
			j_stream(j, dir_name[k], &d->streams[k], false);
		jw_end_obj(j);
		if (d->ext_end) {
			jw_u64(j, "offset_min_bytes", d->ext_min);
			jw_u64(j, "offset_end_bytes", d->ext_end);
		} else {
			jw_null(j, "offset_min_bytes");
			jw_null(j, "offset_end_bytes");
		}
		jw_obj(j, "lba_histogram");
		jw_u64(j, "bin_sectors", d->lba.width);
		jw_arr(j, "bins");
		uint32_t last = 0;

		for (uint32_t k = 0; k < d->lba.nbins; k++)
			if (d->lba.bins[k])
				last = k + 1;
		for (uint32_t k = 0; k < last; k++)
			jw_u64(j, NULL, d->lba.bins[k]);
		jw_end_arr(j);
		jw_end_obj(j);
		jw_end_obj(j);
	}
	jw_end_arr(j);

	if (s->present_any & BTAPE_HAS_PID) {
		const struct procstat **v;
		int n = report_procs(s, &v);

		jw_arr(j, "processes");
		for (int i = 0; i < n; i++) {
			jw_obj(j, NULL);
			jw_u64(j, "pid", v[i]->pid);
			if (v[i]->comm[0])
				jw_str(j, "comm", v[i]->comm);
			else
				jw_null(j, "comm");
			j_acc(j, s, &v[i]->acc);
			jw_end_obj(j);
		}
		jw_end_arr(j);
		free(v);
		jw_u64(j, "processes_folded", s->proc_other_n_procs);
	} else {
		jw_null(j, "processes");
	}

	jw_obj(j, "timeline");
	jw_u64(j, "interval_ns", s->tl_interval);
	jw_dbl(j, "start_s", (double)t0 / 1e9);
	jw_arr(j, "columns");
	static const char *cols[] = {"t_s",
				     "reads",
				     "writes",
				     "other",
				     "read_bytes",
				     "write_bytes",
				     "mean_device_latency_ns",
				     "mean_qd"};
	for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
		jw_str(j, NULL, cols[i]);
	jw_end_arr(j);
	jw_arr(j, "rows");
	for (uint64_t i = 0; i < s->tl_rows; i++) {
		const struct tl_row *x = &s->tl[i];

		jw_arr(j, NULL);
		jw_dbl(j, NULL, (double)(t0 + i * s->tl_interval) / 1e9);
		jw_u64(j, NULL, x->n_dir[0]);
		jw_u64(j, NULL, x->n_dir[1]);
		jw_u64(j, NULL, x->n_other);
		jw_u64(j, NULL, x->bytes_dir[0]);
		jw_u64(j, NULL, x->bytes_dir[1]);
		if (x->lat_n)
			jw_dbl(j, NULL, x->lat_sum / (double)x->lat_n);
		else
			jw_null(j, NULL);
		if (x->qd_n)
			jw_dbl(j, NULL, x->qd_sum / (double)x->qd_n);
		else
			jw_null(j, NULL);
		jw_end_arr(j);
	}
	jw_end_arr(j);
	if (s->nhosts > 1) { /* the same rows per host: I/Os, mean device time */
		jw_arr(j, "hosts");
		for (uint32_t h = 0; h < s->nhosts; h++) {
			const struct host_tl_row *t = s->hosts[h].tl;

			jw_obj(j, NULL);
			jw_str(j, "name", s->hosts[h].name);
			jw_arr(j, "ios");
			for (uint64_t i = 0; i < s->tl_rows; i++)
				jw_u64(j, NULL, t[i].n);
			jw_end_arr(j);
			jw_arr(j, "mean_device_latency_ns");
			for (uint64_t i = 0; i < s->tl_rows; i++)
				if (t[i].lat_n)
					jw_dbl(j, NULL, (double)t[i].lat_sum_ns / (double)t[i].lat_n);
				else
					jw_null(j, NULL);
			jw_end_arr(j);
			jw_end_obj(j);
		}
		jw_end_arr(j);
	}
	jw_end_obj(j);
	return 0;
}

int render_json(FILE *fp, const struct report *r)
{
	struct jw j;

	jw_begin(&j, fp);
	jw_obj(&j, NULL);
	render_json_body(&j, r);
	jw_end_obj(&j);
	return 0;
}
