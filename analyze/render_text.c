// SPDX-License-Identifier: GPL-2.0-only
/* Text report of an analysis: readable tables, absent fields named as absent. */
#include "render.h"
#include "cli.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TEXT_TIMELINE_ROWS 40 /* without --interval, rows are merged down to about this */
#define TEXT_TOP_SIZES 6
#define TEXT_TOP_PROCS 20

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0;
}

static void line_acc(FILE *fp, const struct stats *s, const struct acc *a)
{
	char b1[32], b2[32], b3[32];

	if (!s->duration_ns) {
		fprintf(fp, "  IOPS        n/a (all events at one instant: no duration)\n");
		return;
	}
	fprintf(fp, "  IOPS        mean %.1f", stats_rate(s, a->n));
	if (s->complete_windows)
		fprintf(fp, "   peak %s (1 s windows)   burstiness %.2fx peak/mean\n",
			fmt_count(a->peak_n, b1, sizeof(b1)), stats_burstiness(s, a));
	else
		fprintf(fp, "   peak n/a (trace shorter than one 1 s window)\n");
	fprintf(fp, "  throughput  mean %s",
		fmt_rate_bytes(stats_rate(s, a->bytes), b2, sizeof(b2)));
	if (s->complete_windows)
		fprintf(fp, "   peak %s\n", fmt_rate_bytes((double)a->peak_bytes, b3, sizeof(b3)));
	else
		fputc('\n', fp);
}

static void print_quants(FILE *fp, const struct hist *h, bool lat)
{
	char b[32];

	for (int i = 0; i < 5; i++) {
		uint64_t v = hist_quantile(h, REPORT_QUANTILES[i]);

		if (lat)
			fprintf(fp, " %10s", fmt_lat((double)v, b, sizeof(b)));
		else
			fprintf(fp, " %10" PRIu64, v);
	}
	if (lat)
		fprintf(fp, " %10s", fmt_lat(hist_mean(h), b, sizeof(b)));
	else
		fprintf(fp, " %10.2f", hist_mean(h));
	fputc('\n', fp);
}

static void section_latency(FILE *fp, const struct stats *s, const unsigned int *ops, int nops)
{
	bool any_c = false, any_i = false;

	for (int i = 0; i < nops; i++) {
		any_c |= s->ops[ops[i]].lat_dev != NULL;
		any_i |= s->ops[ops[i]].lat_queue != NULL;
	}
	fprintf(fp, "\nLatency per op (log-bucketed histogram, values within %.2f%%)\n",
		100 * HIST_REL_ERROR);
	if (!any_c) {
		fprintf(fp, "  not in trace: no completion times, so no device or total latency\n");
	} else {
		fprintf(fp, "  device time (complete - issue)\n  %-8s %10s", "op", "count");
		for (int i = 0; i < 5; i++)
			fprintf(fp, " %10s", REPORT_QUANTILE_NAMES[i]);
		fprintf(fp, " %10s\n", "mean");
		for (int i = 0; i < nops; i++) {
			const struct opstat *o = &s->ops[ops[i]];

			if (!o->lat_dev)
				continue;
			fprintf(fp, "  %-8s %10" PRIu64, btape_op_name(ops[i]), o->lat_dev->count);
			print_quants(fp, o->lat_dev, true);
		}
		uint64_t no_c = 0;

		for (int i = 0; i < nops; i++)
			no_c += s->ops[ops[i]].n - hist_count(s->ops[ops[i]].lat_dev);
		if (no_c)
			fprintf(fp, "  %" PRIu64 " event%s without a completion time (not in these "
				"latencies)\n", no_c, no_c == 1 ? "" : "s");
	}
	if (!any_i) {
		fprintf(fp, "  queue time: not in trace (no insert times)\n");
		return;
	}
	fprintf(fp, "  queue time (issue - insert)\n");
	for (int i = 0; i < nops; i++) {
		const struct opstat *o = &s->ops[ops[i]];

		if (!o->lat_queue)
			continue;
		fprintf(fp, "  %-8s %10" PRIu64, btape_op_name(ops[i]), o->lat_queue->count);
		print_quants(fp, o->lat_queue, true);
	}
	if (any_c) {
		fprintf(fp, "  total (complete - insert, or - issue without insert)\n");
		for (int i = 0; i < nops; i++) {
			const struct opstat *o = &s->ops[ops[i]];

			if (!o->lat_total)
				continue;
			fprintf(fp, "  %-8s %10" PRIu64, btape_op_name(ops[i]),
				o->lat_total->count);
			print_quants(fp, o->lat_total, true);
		}
	}
}

static void section_sizes(FILE *fp, const struct stats *s, const unsigned int *ops, int nops)
{
	char b1[32], b2[32];

	fprintf(fp, "\nRequest sizes per op\n");
	for (int i = 0; i < nops; i++) {
		const struct opstat *o = &s->ops[ops[i]];
		struct size_slot *v;
		uint32_t n;

		if (stats_sizes_sorted(o, &v, &n))
			return;
		fprintf(fp, "  %-8s mean %s; top:", btape_op_name(ops[i]),
			cli_fmt_bytes(o->n ? o->bytes / o->n : 0, b1, sizeof(b1)));
		for (uint32_t k = 0; k < n && k < TEXT_TOP_SIZES; k++)
			fprintf(fp, " %s %.1f%%", fmt_size(v[k].size, b2, sizeof(b2)),
				pct(v[k].n, o->n));
		if (n > TEXT_TOP_SIZES)
			fprintf(fp, " (+%u more sizes)", n - TEXT_TOP_SIZES);
		if (o->n_size_other)
			fprintf(fp, " (%" PRIu64 " I/Os of other sizes beyond %d distinct)",
				o->n_size_other, STATS_SIZE_EXACT_MAX);
		fprintf(fp, "\n  %-8s log2:", "");
		for (int k = 0; k < STATS_SIZE_LOG2_BINS; k++) {
			if (!o->size_log2[k])
				continue;
			if (k == 0)
				fprintf(fp, " 0 B %.1f%%", pct(o->size_log2[k], o->n));
			else
				fprintf(fp, " [%s,%s) %.1f%%",
					fmt_size(1ull << (k - 1), b1, sizeof(b1)),
					k < 64 ? fmt_size(1ull << k, b2, sizeof(b2)) : "inf",
					pct(o->size_log2[k], o->n));
		}
		fputc('\n', fp);
		free(v);
	}
}

static void section_locality(FILE *fp, const struct stats *s)
{
	char b1[32], b2[32];
	static const char *dn[] = {"read", "write"};
	bool any = false;

	fprintf(fp,
		"\nLocality (streams = device x direction; near = within %s of the previous end)\n",
		fmt_size(s->o.near_seq_bytes, b1, sizeof(b1)));
	for (int d = 0; d < DIR__COUNT; d++) {
		const struct stream *st = &s->streams_all[d];

		if (!st->n)
			continue;
		any = true;
		fprintf(fp,
			"  %-6s %10" PRIu64 " I/Os after the first: sequential %.1f%%, "
			"near-sequential %.1f%%, random %.1f%%\n",
			dn[d], st->n, 100 * stats_seq_share(st), 100 * stats_near_share(st),
			100 * (1 - stats_seq_share(st)));
	}
	if (!any) {
		fprintf(fp, "  no read or write stream with two or more I/Os\n");
		return;
	}
	/* compact: the JSON report has every log2 bin */
	static const uint64_t edges[] = {4096, 131072, 1048576, 67108864, 1073741824, UINT64_MAX};
	static const char *en[] = {"<=4K", "<=128K", "<=1M", "<=64M", "<=1G", ">1G"};
	uint64_t back[6] = {0}, fwd[6] = {0}, zero = 0, tot = 0;

	for (int k = 0; k < STATS_SEEK_BINS; k++) {
		uint64_t c = s->streams_all[0].seek[k] + s->streams_all[1].seek[k];
		int64_t lo, hi;

		stats_seek_bin_edges((unsigned int)k, &lo, &hi);
		uint64_t a = lo < 0 ? -(uint64_t)lo : (uint64_t)lo;
		int e = 0;

		tot += c;
		if (k == 64) {
			zero += c;
			continue;
		}
		while (e < 5 && a >= edges[e])
			e++;
		if (lo < 0)
			back[e] += c;
		else
			fwd[e] += c;
	}
	fprintf(fp,
		"  seek distance (start - previous end, reads and writes): 0: %.1f%%\n    backward:",
		pct(zero, tot));
	for (int e = 0; e < 6; e++)
		fprintf(fp, " %s %.1f%%", en[e], pct(back[e], tot));
	fprintf(fp, "\n    forward: ");
	for (int e = 0; e < 6; e++)
		fprintf(fp, " %s %.1f%%", en[e], pct(fwd[e], tot));
	fputc('\n', fp);
	(void)b2;
}

static void section_ws(FILE *fp, const struct stats *s)
{
	const struct ws_result *w = &s->wsr;
	char b1[32], b2[32], b3[32], b4[32], b5[32];

	fprintf(fp, "\nWorking set (distinct 4 KiB blocks)\n");
	if (!w->blocks) {
		fprintf(fp, "  no reads or writes with data\n");
		return;
	}
	fprintf(fp, "  touched %s (%s): read %s, written %s, both %s",
		fmt_count(w->blocks, b1, sizeof(b1)),
		cli_fmt_bytes(w->blocks * STATS_WS_BLOCK, b2, sizeof(b2)),
		fmt_count(w->blocks_read, b3, sizeof(b3)),
		fmt_count(w->blocks_written, b4, sizeof(b4)),
		fmt_count(w->blocks_both, b5, sizeof(b5)));
	if (w->estimated)
		fprintf(fp,
			"\n  estimated from a 1/%.0f hash sample of blocks: +-%.2f%% (3 sigma)\n",
			1 / w->sample_rate, 100 * w->rel_error);
	else if (!w->large_uncounted)
		fprintf(fp, " (exact)\n");
	else
		fprintf(fp, "\n");
	if (w->large_uncounted)
		fprintf(fp,
			"  at least: %" PRIu64 " I/Os of more than %u blocks not counted (past the "
			"extent table and %llu blocks counted one by one)\n",
			w->large_uncounted, STATS_WS_LARGE_BLOCKS, STATS_WS_SPILL_BLOCKS);
	fprintf(fp,
		"  skew: hottest 1%% of blocks take %.1f%% of block accesses, 10%%: %.1f%%, "
		"20%%: %.1f%%, 50%%: %.1f%%\n",
		100 * w->hot[0], 100 * w->hot[1], 100 * w->hot[2], 100 * w->hot[3]);
}

/* Device time by the queue depth each I/O found at its issue: one row per op and band. */
static void section_depth_latency(FILE *fp, const struct stats *s, const unsigned int *ops,
				  int nops)
{
	char b[32];
	bool any = false;

	for (int i = 0; i < nops; i++)
		for (int k = 0; k < STATS_QD_BANDS; k++)
			any |= s->ops[ops[i]].lat_qd[k] != NULL;
	if (!any)
		return;
	fprintf(fp,
		"  device time by the depth at issue (how the device answered at each load)\n"
		"  %-8s %-6s %10s %6s",
		"op", "depth", "count", "share");
	for (int i = 0; i < 5; i++)
		fprintf(fp, " %10s", REPORT_QUANTILE_NAMES[i]);
	fprintf(fp, " %10s\n", "mean");
	for (int i = 0; i < nops; i++) {
		const struct opstat *o = &s->ops[ops[i]];
		uint64_t n = 0;

		for (int k = 0; k < STATS_QD_BANDS; k++)
			n += hist_count(o->lat_qd[k]);
		for (int k = 0; k < STATS_QD_BANDS; k++) {
			const struct hist *h = o->lat_qd[k];

			if (!h || !h->count)
				continue;
			fprintf(fp, "  %-8s %-6s %10" PRIu64 " %5.1f%%", btape_op_name(ops[i]),
				report_qd_band_name((unsigned int)k, b, sizeof(b)), h->count,
				100.0 * (double)h->count / (double)n);
			print_quants(fp, h, true);
		}
	}
}

static void section_depth(FILE *fp, const struct stats *s, const unsigned int *ops, int nops)
{
	char b1[32], b2[32];

	fprintf(fp, "\nQueue depth at issue");
	if (!s->qd->count) {
		fprintf(fp, ": not in trace (no depth field and no completion times)\n");
	} else {
		fprintf(fp, " (%s)\n  %-19s",
			s->qd_from_trace ? "recorded" : "computed from issue and completion times",
			"");
		for (int i = 0; i < 5; i++)
			fprintf(fp, " %10s", REPORT_QUANTILE_NAMES[i]);
		fprintf(fp, " %10s\n  %-19s", "mean", "depth");
		print_quants(fp, s->qd, false);
		if (s->qd_untracked)
			fprintf(fp,
				"  %" PRIu64 " request%s not tracked in flight (over %u at once on "
				"a device, the tables of all devices past %llu slots, or no memory): "
				"the depths after them are too low\n",
				s->qd_untracked, s->qd_untracked == 1 ? " was" : "s were",
				STATS_QD_HEAP_MAX, STATS_QD_SLOTS_MAX);
		section_depth_latency(fp, s, ops, nops);
	}
	fprintf(fp, "\nInter-arrival times (consecutive issues, all devices)\n");
	if (!s->interarrival->count) {
		fprintf(fp, "  fewer than two events\n");
	} else {
		fprintf(fp, "  %-19s", "");
		for (int i = 0; i < 5; i++)
			fprintf(fp, " %10s", REPORT_QUANTILE_NAMES[i]);
		fprintf(fp, " %10s\n  %-19s", "mean", "gap");
		print_quants(fp, s->interarrival, true);
	}
	fprintf(fp, "\nIdle periods (>= %s with %s)\n",
		fmt_lat((double)s->o.idle_min_ns, b1, sizeof(b1)),
		s->idle_from_completions
			? "no I/O in flight"
			: "no issue; completion times missing, so gaps between issues");
	if (!s->idle->count) {
		fprintf(fp, "  none\n");
		return;
	}
	fprintf(fp, "  %" PRIu64 " periods, %s in total (%.1f%% of the duration), longest %s\n",
		s->idle->count, fmt_lat((double)s->idle_total_ns, b1, sizeof(b1)),
		pct(s->idle_total_ns, s->duration_ns),
		fmt_lat((double)s->idle->max, b2, sizeof(b2)));
}

static void section_devices(FILE *fp, const struct stats *s)
{
	char b1[32], b2[32], b3[32], b4[32];

	fprintf(fp, "\nPer device\n  %-16s %10s %7s %10s %10s %10s %12s %10s\n", "device", "I/Os",
		"read%", "bytes", "IOPS", "peak IOPS", "MiB/s", "p99 lat");
	for (uint32_t i = 0; i < s->ndevs; i++) {
		const struct devstat *d = &s->devs[i];

		if (!d->used || !d->acc.n) {
			fprintf(fp, "  %-16s no I/O\n", d->name);
			continue;
		}
		fprintf(fp, "  %-16.16s %10" PRIu64 " %6.1f%% %10s %10.1f %10s %12.2f %10s\n",
			d->name, d->acc.n, pct(d->acc.n_dir[DIR_READ], d->acc.n),
			cli_fmt_bytes(d->acc.bytes, b1, sizeof(b1)), stats_rate(s, d->acc.n),
			s->complete_windows ? fmt_count(d->acc.peak_n, b2, sizeof(b2)) : "n/a",
			stats_rate(s, d->acc.bytes) / 1048576.0,
			d->acc.lat && d->acc.lat->count
				? fmt_lat((double)hist_quantile(d->acc.lat, 0.99), b3, sizeof(b3))
				: "-");
		if (d->ext_end)
			fprintf(fp, "  %-16s offsets %s .. %s\n", "",
				cli_fmt_bytes(d->ext_min, b3, sizeof(b3)),
				cli_fmt_bytes(d->ext_end, b4, sizeof(b4)));
	}
}

/* Per host (several hosts on one timeline): the cluster-wide totals are the Overall section. */
static void section_hosts(FILE *fp, const struct report *r)
{
	const struct stats *s = r->s;
	const struct an_info *in = r->info;
	char b1[32], b2[32], b3[32], b4[32];

	if (!s->nhosts)
		return;
	fprintf(fp, "\nPer host (cluster-wide totals and peaks: Overall)\n");
	fprintf(fp, "  %-20s %10s %7s %10s %10s %10s %10s %10s %12s\n", "host", "I/Os", "read%",
		"bytes", "IOPS", "peak IOPS", "MiB/s", "p99 lat", "first I/O");
	for (uint32_t h = 0; h < s->nhosts; h++) {
		const struct hoststat *hs = &s->hosts[h];
		const struct acc *a = &hs->acc;

		if (!a->n) {
			fprintf(fp, "  %-20.20s no I/O\n", hs->name);
			continue;
		}
		fprintf(fp, "  %-20.20s %10" PRIu64 " %6.1f%% %10s %10.1f %10s %10.2f %10s %12s\n",
			hs->name, a->n, pct(a->n_dir[DIR_READ], a->n),
			cli_fmt_bytes(a->bytes, b1, sizeof(b1)), stats_rate(s, a->n),
			s->complete_windows ? fmt_count(a->peak_n, b2, sizeof(b2)) : "n/a",
			stats_rate(s, a->bytes) / 1048576.0,
			a->lat && a->lat->count
				? fmt_lat((double)hist_quantile(a->lat, 0.99), b3, sizeof(b3))
				: "-",
			fmt_lat((double)(hs->first_issue_ns - s->trace_start_ns), b4, sizeof(b4)));
	}
	if (in->align == AN_ALIGN_NONE)
		return;
	fprintf(fp, "  clock corrections (%s):\n", an_align_name(in->align));
	for (int k = 0; k < r->npaths && k < AN_MAX_FILES; k++) {
		const struct an_file_clock *c = &in->clocks[k];

		fprintf(fp, "  %-20.20s offset %+.3f us", c->host[0] ? c->host : r->paths[k],
			(double)c->offset_start_ns / 1e3);
		if (in->align == AN_ALIGN_CLUSTER)
			fprintf(fp, " +- %.3f us, at stop %+.3f us, drift %+.3f ppm",
				(double)c->uncertainty_ns / 1e3, (double)c->offset_stop_ns / 1e3,
				c->drift_ppm);
		fputc('\n', fp);
	}
}

static int cmp_proc(const void *a, const void *b)
{
	const struct procstat *x = *(const struct procstat *const *)a;
	const struct procstat *y = *(const struct procstat *const *)b;

	if (x->acc.n != y->acc.n)
		return x->acc.n < y->acc.n ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Used processes sorted by I/O count (caller frees). */
int report_procs(const struct stats *s, const struct procstat ***out)
{
	const struct procstat **v = calloc(s->nprocs ? s->nprocs : 1, sizeof(*v));
	int n = 0;

	*out = NULL;
	if (!v)
		return -1;
	for (uint32_t i = stats_proc_next(s, 0); i < 2 * STATS_MAX_PROCS;
	     i = stats_proc_next(s, i + 1))
		v[n++] = &s->procs[i];
	qsort(v, (size_t)n, sizeof(*v), cmp_proc);
	*out = v;
	return n;
}

static void section_procs(FILE *fp, const struct stats *s)
{
	const struct procstat **v;
	char b1[32];

	fprintf(fp, "\nPer process");
	if (!(s->present_any & BTAPE_HAS_PID)) {
		fprintf(fp, ": not in trace (no pid field)\n");
		return;
	}
	int n = report_procs(s, &v);

	if (n < 0)
		return;
	fprintf(fp, " (top %d of %u by I/Os)\n  %-8s %-16s %10s %7s %10s %10s\n",
		n < TEXT_TOP_PROCS ? n : TEXT_TOP_PROCS, s->nprocs, "pid", "comm", "I/Os", "read%",
		"bytes", "IOPS");
	for (int i = 0; i < n && i < TEXT_TOP_PROCS; i++)
		fprintf(fp, "  %-8u %-16s %10" PRIu64 " %6.1f%% %10s %10.1f\n", v[i]->pid,
			v[i]->comm[0] ? v[i]->comm : "-", v[i]->acc.n,
			pct(v[i]->acc.n_dir[DIR_READ], v[i]->acc.n),
			cli_fmt_bytes(v[i]->acc.bytes, b1, sizeof(b1)), stats_rate(s, v[i]->acc.n));
	if (s->proc_other.n)
		fprintf(fp,
			"  (%" PRIu64 " I/Os of %" PRIu64 " further processes folded together)\n",
			s->proc_other.n, s->proc_other_n_procs);
	if (!(s->present_all & BTAPE_HAS_PID))
		fprintf(fp, "  (some events have no pid)\n");
	free(v);
}

static void section_timeline(FILE *fp, const struct report *r)
{
	const struct stats *s = r->s;
	uint64_t group = 1;

	if (!r->interval_given)
		while (s->tl_rows / group > TEXT_TIMELINE_ROWS)
			group *= 2;
	double iv = (double)(s->tl_interval * group) / 1e9;
	uint64_t t0 = report_origin_rel(s);
	char b1[32];

	fprintf(fp, "\nTimeline (interval %s, t relative to trace start)\n",
		fmt_lat(iv * 1e9, b1, sizeof(b1)));
	fprintf(fp, "  %12s %10s %10s %10s %12s %12s %10s %8s\n", "t (s)", "IOPS", "reads",
		"writes", "read MiB/s", "write MiB/s", "mean lat", "mean qd");
	for (uint64_t i = 0; i < s->tl_rows; i += group) {
		struct tl_row m = {0};

		for (uint64_t k = i; k < i + group && k < s->tl_rows; k++) {
			const struct tl_row *x = &s->tl[k];

			for (int d = 0; d < DIR__COUNT; d++) {
				m.n_dir[d] += x->n_dir[d];
				m.bytes_dir[d] += x->bytes_dir[d];
			}
			m.n_other += x->n_other;
			m.lat_n += x->lat_n;
			m.lat_sum += x->lat_sum;
			m.qd_n += x->qd_n;
			m.qd_sum += x->qd_sum;
		}
		uint64_t n = m.n_dir[0] + m.n_dir[1] + m.n_other;
		char lat[32], qd[32];

		if (m.lat_n)
			fmt_lat(m.lat_sum / (double)m.lat_n, lat, sizeof(lat));
		else
			snprintf(lat, sizeof(lat), "-");
		if (m.qd_n)
			snprintf(qd, sizeof(qd), "%.2f", m.qd_sum / (double)m.qd_n);
		else
			snprintf(qd, sizeof(qd), "-");
		fprintf(fp, "  %12.3f %10.1f %10" PRIu64 " %10" PRIu64 " %12.2f %12.2f %10s %8s\n",
			(double)(t0 + i * s->tl_interval) / 1e9, (double)n / iv, m.n_dir[0],
			m.n_dir[1], (double)m.bytes_dir[0] / iv / 1048576.0,
			(double)m.bytes_dir[1] / iv / 1048576.0, lat, qd);
	}
}

void render_text_warnings(FILE *fp, const struct report *r, const char *lead)
{
	const struct an_info *in = r->info;

	if (in->lost_events)
		fprintf(fp, "%sthe recorder lost %" PRIu64 " events; counts are lower bounds\n",
			lead, in->lost_events);
	for (int k = 0; in->incomplete && k < r->npaths && k < AN_MAX_FILES; k++) {
		const struct an_file_end *e = &in->ends[k];

		if (!e->cut_short && !e->stopped_early)
			continue;
		char b1[PATH_MAX], b2[BTAPE_NAME_MAX];

		/* one line each, whatever the names hold: these lines are also comments of a
		 * profile's job file, where a newline would start a line fio reads */
		fprintf(fp, "%s%s", lead, cli_text_safe(r->paths[k], b1, sizeof(b1)));
		if (e->rank >= 0)
			fprintf(fp, " (host %s, rank %d)", cli_text_safe(e->host, b2, sizeof(b2)),
				e->rank);
		fprintf(fp, "%s\n",
			e->cut_short
				? " was cut short (no footer: its writer was killed?); read up "
				  "to its last complete frame"
				: " stopped early (a peer died or the run was interrupted)");
	}
}

void render_text_header(FILE *fp, const struct report *r)
{
	const struct stats *s = r->s;
	const struct an_info *in = r->info;
	char b1[32], b2[32], b3[32];

	fprintf(fp, "biotape analyze:");
	for (int i = 0; i < r->npaths; i++)
		fprintf(fp, " %s", r->paths[i]);
	fputc('\n', fp);
	if (in->source[0] || in->hostname[0])
		fprintf(fp, "  source %s%s%s%s\n", in->source[0] ? in->source : "?",
			in->hostname[0] ? ", host " : "", in->hostname,
			r->npaths > 1 ? " (first file)" : "");
	if (in->align == AN_ALIGN_CLUSTER)
		fprintf(fp, "  one timeline: cluster recording %s, %d files, on the clock of %s\n",
			in->cluster_id, in->nfiles, in->reference[0] ? in->reference : "rank 0");
	else if (in->align != AN_ALIGN_NONE)
		fprintf(fp, "  one timeline: %d files aligned by --align %s\n", in->nfiles,
			an_align_name(in->align));
	render_text_warnings(fp, r, "  WARNING: ");
	if (!s->all.n) {
		fprintf(fp, "  %s\n",
			in->events_read || in->filtered ? "no events in window"
							: "no events in trace");
		return;
	}
	uint64_t t0 = report_origin_rel(s);

	char b4[32];

	fprintf(fp, "  window %s .. %s after trace start (duration %s), %s events%s\n",
		fmt_lat((double)t0, b1, sizeof(b1)),
		fmt_lat((double)(t0 + s->duration_ns), b2, sizeof(b2)),
		fmt_lat((double)s->duration_ns, b3, sizeof(b3)),
		fmt_count(s->all.n, b4, sizeof(b4)), in->filtered ? " selected" : "");
}

int render_text(FILE *fp, const struct report *r)
{
	const struct stats *s = r->s;
	unsigned int ops[BTAPE_OP__COUNT];
	int nops = report_ops(s, ops);
	char b1[32], b2[32];

	render_text_header(fp, r);
	if (!s->all.n)
		return 0;
	fprintf(fp, "\nOverall\n  I/Os        %s   bytes %s\n", fmt_count(s->all.n, b1, sizeof(b1)),
		cli_fmt_bytes(s->all.bytes, b2, sizeof(b2)));
	line_acc(fp, s, &s->all);
	fprintf(fp, "\nMix per op\n  %-13s %10s %8s %12s %8s %10s %10s\n", "op", "count", "%count",
		"bytes", "%bytes", "IOPS", "MiB/s");
	for (int i = 0; i < nops; i++) {
		const struct opstat *o = &s->ops[ops[i]];

		fprintf(fp, "  %-13s %10" PRIu64 " %7.2f%% %12s %7.2f%% %10.1f %10.2f",
			btape_op_name(ops[i]), o->n, pct(o->n, s->all.n),
			cli_fmt_bytes(o->bytes, b1, sizeof(b1)), pct(o->bytes, s->all.bytes),
			stats_rate(s, o->n), stats_rate(s, o->bytes) / 1048576.0);
		if (o->n_errors)
			fprintf(fp, "  (%" PRIu64 " errors)", o->n_errors);
		fputc('\n', fp);
	}
	section_sizes(fp, s, ops, nops);
	section_locality(fp, s);
	section_ws(fp, s);
	section_latency(fp, s, ops, nops);
	section_depth(fp, s, ops, nops);
	section_hosts(fp, r);
	section_devices(fp, s);
	section_procs(fp, s);
	section_timeline(fp, r);
	return 0;
}
