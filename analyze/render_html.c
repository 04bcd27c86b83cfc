// SPDX-License-Identifier: GPL-2.0-only
/*
 * Self-contained HTML reports: inline CSS and SVG, no script, no network. Every chart is an
 * <svg class="chart" data-chart="NAME"> holding its drawn marks (path/rect elements), scaled to
 * the page width, with round ticks in units (common/chart.h) and values on hover (<title>).
 * The analyze page opens with headline cards (<div class="card" data-key=K data-value=V>).
 */
#include "render.h"
#include "chart.h"
#include "fidelity.h"
#include "cli.h"
#include "html.h"
#include "mpjson.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define W 720
#define H 260
#define ML 64 /* margins */
#define MR 16
#define MT 28
#define MB 40
#define HEAT_DEVICES 4
#define HOST_SERIES 6 /* per-host charts: the busiest hosts drawn (what the legend holds) */

static const char *const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
				     "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f"};

static void svg_begin(FILE *fp, const char *name, const char *title)
{
	fprintf(fp,
		"<svg class=\"chart\" data-chart=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" "
		"width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n<title>",
		name, W, H, W, H);
	html_escape(fp, title);
	fprintf(fp, "</title>\n<text x=\"%d\" y=\"16\" font-weight=\"bold\">", ML);
	html_escape(fp, title);
	fputs("</text>\n", fp);
}

static void no_data(FILE *fp, const char *name, const char *title, const char *why)
{
	svg_begin(fp, name, title);
	fprintf(fp, "<text class=\"nodata\" x=\"%d\" y=\"%d\">", ML, H / 2);
	html_escape(fp, why);
	fputs("</text></svg>\n", fp);
}

/* y axis 0..ya->top with its round ticks; x axis labels given as text at the ends. */
static void axes(FILE *fp, const struct chart_axis *ya, const char *ylab, const char *x0,
		 const char *x1, const char *xlab)
{
	int pw = W - ML - MR, ph = H - MT - MB;
	char b[32];

	fprintf(fp, "<g stroke=\"#999\" fill=\"none\"><path d=\"M%d %dV%dH%d\"/></g>\n", ML, MT,
		MT + ph, ML + pw);
	for (int k = 0; k <= ya->nticks; k++) {
		double y = MT + ph - (double)ph * k / ya->nticks;

		fprintf(fp, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", ML - 4,
			y + 4, chart_axis_label(ya, k * ya->step, b, sizeof(b)));
		if (k)
			fprintf(fp, "<path d=\"M%d %.1fH%d\" stroke=\"#eee\"/>\n", ML, y, ML + pw);
	}
	fprintf(fp,
		"<text x=\"%d\" y=\"%d\">%s</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n",
		ML, H - MB + 14, x0, ML + pw, H - MB + 14, x1);
	fprintf(fp, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", ML + pw / 2, H - 6);
	html_escape(fp, xlab);
	fprintf(fp,
		"</text><text transform=\"rotate(-90)\" x=\"%d\" y=\"12\" text-anchor=\"middle\">",
		-(MT + ph / 2));
	html_escape(fp, ylab);
	fputs("</text>\n", fp);
}

static void legend(FILE *fp, const char *const *names, int n)
{
	for (int i = 0; i < n; i++) {
		int x = W - MR - 110 * (n - i);

		fprintf(fp,
			"<rect x=\"%d\" y=\"8\" width=\"10\" height=\"10\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"17\">",
			x, colors[i % 8], x + 14);
		html_escape(fp, names[i]);
		fputs("</text>\n", fp);
	}
}

/* Line chart of nser series over npts x positions (x evenly spaced); NaN: no point there. */
static void line_chart(FILE *fp, const char *name, const char *title, const char *ylab,
		       enum chart_unit unit, const char *x0, const char *x1, const char *xlab,
		       const double *const *ys, const char *const *names, int nser, uint64_t npts)
{
	double ymax = 0;
	struct chart_axis ya;
	char b[32];

	for (int s = 0; s < nser; s++)
		for (uint64_t i = 0; i < npts; i++)
			if (ys[s][i] > ymax)
				ymax = ys[s][i];
	if (!npts || ymax <= 0) {
		no_data(fp, name, title, "no data");
		return;
	}
	svg_begin(fp, name, title);
	chart_axis_init(&ya, ymax, 5, unit);
	ymax = ya.top;
	axes(fp, &ya, ylab, x0, x1, xlab);
	legend(fp, names, nser);
	int pw = W - ML - MR, ph = H - MT - MB;

	for (int s = 0; s < nser; s++) {
		double peak = 0;

		for (uint64_t i = 0; i < npts; i++)
			peak = ys[s][i] > peak ? ys[s][i] : peak;
		fprintf(fp,
			"<path class=\"series\" fill=\"none\" stroke-width=\"1.5\" stroke=\"%s\" d=\"",
			colors[s % 8]);
		bool gap = true;

		for (uint64_t i = 0; i < npts; i++) {
			double x = ML + (npts > 1 ? (double)pw * (double)i / (double)(npts - 1)
						  : pw / 2.0);
			double y = MT + ph - ph * ys[s][i] / ymax;

			if (isnan(ys[s][i])) { /* no value here: the line stops */
				gap = true;
				continue;
			}
			fprintf(fp, "%c%.1f %.1f", gap ? 'M' : 'L', x, y);
			/* a point with no neighbour draws nothing as a path: a short stroke */
			if (gap && (i + 1 == npts || isnan(ys[s][i + 1])))
				fprintf(fp, "h2");
			gap = false;
		}
		fputs("\"><title>", fp);
		html_escape(fp, names[s]);
		fprintf(fp, ": peak %s</title></path>\n", chart_axis_label(&ya, peak, b, sizeof(b)));
	}
	fputs("</svg>\n", fp);
}

/*
 * Device time p50 and p99 by the queue depth at issue (stats_qd_band()), per op: one line for
 * each op and quantile, for each side of a comparison (sides NULL: one report). At most
 * DEPTH_LINES lines (the first ops with depths: the legend's room); a band with no I/O leaves
 * a gap.
 */
#define DEPTH_LINES 4
static void depth_chart(FILE *fp, const char *name, const char *title,
			const struct stats *const *ss, const char *const *sides, int nside,
			unsigned int op_only)
{
	double v[DEPTH_LINES][STATS_QD_BANDS];
	const double *ys[DEPTH_LINES];
	char names[DEPTH_LINES][48], x0[16], x1[16];
	const char *np[DEPTH_LINES];
	int n = 0, lo = STATS_QD_BANDS, hi = -1;

	for (unsigned int op = 0; op < BTAPE_OP__COUNT && n < DEPTH_LINES; op++) {
		if (op_only < BTAPE_OP__COUNT && op != op_only)
			continue;
		bool any = false;

		for (int d = 0; d < nside; d++)
			for (int k = 0; k < STATS_QD_BANDS; k++)
				any |= hist_count(ss[d]->ops[op].lat_qd[k]) > 0;
		for (int q = 0; any && q < 2 && n < DEPTH_LINES; q++)
			for (int d = 0; d < nside && n < DEPTH_LINES; d++, n++) {
				for (int k = 0; k < STATS_QD_BANDS; k++) {
					const struct hist *h = ss[d]->ops[op].lat_qd[k];

					v[n][k] = hist_count(h)
							  ? (double)hist_quantile(h, q ? 0.99 : 0.5)
							  : NAN;
					if (hist_count(h)) {
						lo = k < lo ? k : lo;
						hi = k > hi ? k : hi;
					}
				}
				snprintf(names[n], sizeof(names[n]), "%s%s%s %s",
					 sides ? sides[d] : "", sides ? " " : "", btape_op_name(op),
					 q ? "p99" : "p50");
			}
	}
	if (hi < 0) {
		no_data(fp, name, title, "no depth at issue with a device time");
		return;
	}
	for (int i = 0; i < n; i++) {
		ys[i] = v[i] + lo;
		np[i] = names[i];
	}
	char xl[80];

	snprintf(xl, sizeof(xl), "queue depth at issue, bands from %s to %s",
		 report_qd_band_name((unsigned int)lo, x0, sizeof(x0)),
		 report_qd_band_name((unsigned int)hi, x1, sizeof(x1)));
	line_chart(fp, name, title, "device time", CHART_NS, x0, x1, xl, ys, np, n,
		   (uint64_t)(hi - lo + 1));
}

/* Bar chart; labels every few bars. */
static void bar_chart(FILE *fp, const char *name, const char *title, const char *ylab,
		      const char *xlab, const double *v, char (*labels)[24], int n)
{
	double ymax = 0;
	struct chart_axis ya;

	for (int i = 0; i < n; i++)
		if (v[i] > ymax)
			ymax = v[i];
	if (!n || ymax <= 0) {
		no_data(fp, name, title, "no data");
		return;
	}
	svg_begin(fp, name, title);
	chart_axis_init(&ya, ymax, 5, CHART_PLAIN);
	ymax = ya.top;
	axes(fp, &ya, ylab, "", "", xlab);
	int pw = W - ML - MR, ph = H - MT - MB;
	double bw = (double)pw / n;
	int every = n > 16 ? (n + 15) / 16 : 1;

	for (int i = 0; i < n; i++) {
		double h = ph * v[i] / ymax;

		fprintf(fp,
			"<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			"fill=\"%s\"><title>%s: %.1f%%</title></rect>\n",
			ML + bw * i + 1, MT + ph - h, bw > 3 ? bw - 2 : bw, h, colors[0], labels[i],
			100 * v[i]);
		if (i % every == 0)
			fprintf(fp, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
				ML + bw * (i + 0.5), MT + ph + 12, labels[i]);
	}
	fputs("</svg>\n", fp);
}

/* CDFs of several histograms on a log x axis (ns). */
static void cdf_chart(FILE *fp, const char *name, const char *title, const struct hist *const *hs,
		      const char *const *names, int n)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	char b1[32], b2[32];

	for (int i = 0; i < n; i++) {
		if (!hs[i] || !hs[i]->count)
			continue;
		if (hs[i]->min < lo)
			lo = hs[i]->min;
		if (hs[i]->max > hi)
			hi = hs[i]->max;
	}
	if (!hi) {
		no_data(fp, name, title, "not in trace (no completion times)");
		return;
	}
	double l0 = floor(log10(lo ? (double)lo : 1)), l1 = ceil(log10((double)hi + 1));

	if (l1 <= l0)
		l1 = l0 + 1;
	struct chart_axis ya;

	svg_begin(fp, name, title);
	chart_axis_init(&ya, 1.0, 5, CHART_PLAIN);
	axes(fp, &ya, "fraction <= x", fmt_lat(pow(10, l0), b1, sizeof(b1)),
	     fmt_lat(pow(10, l1), b2, sizeof(b2)), "latency (log scale)");
	legend(fp, names, n);
	int pw = W - ML - MR, ph = H - MT - MB;

	for (double d = l0 + 1; d < l1; d++) {
		double x = ML + pw * (d - l0) / (l1 - l0);

		fprintf(fp,
			"<path d=\"M%.1f %dV%d\" stroke=\"#eee\"/><text x=\"%.1f\" y=\"%d\" "
			"text-anchor=\"middle\">%s</text>\n",
			x, MT, MT + ph, x, H - MB + 14, fmt_lat(pow(10, d), b1, sizeof(b1)));
	}
	for (int i = 0; i < n; i++) {
		const struct hist *h = hs[i];

		if (!h || !h->count)
			continue;
		fprintf(fp,
			"<path class=\"series\" fill=\"none\" stroke-width=\"1.5\" stroke=\"%s\" d=\"",
			colors[i % 8]);
		uint64_t seen = 0;
		bool first = true;

		for (unsigned int k = 0; k < HIST_BUCKETS; k++) {
			if (!h->b[k])
				continue;
			seen += h->b[k];
			double v = (double)(hist_bucket_lo(k) + hist_bucket_width(k));
			double x = ML + pw * (log10(v) - l0) / (l1 - l0);
			double y = MT + ph - ph * (double)seen / (double)h->count;

			if (x < ML)
				x = ML;
			if (x > ML + pw)
				x = ML + pw;
			fprintf(fp, "%c%.1f %.1f", first ? 'M' : 'L', x, y);
			first = false;
		}
		fputs("\"><title>", fp);
		html_escape(fp, names[i]);
		fprintf(fp, ": p50 %s, ", fmt_lat((double)hist_quantile(h, 0.5), b1, sizeof(b1)));
		fprintf(fp, "p99 %s</title></path>\n",
			fmt_lat((double)hist_quantile(h, 0.99), b2, sizeof(b2)));
	}
	fputs("</svg>\n", fp);
}

static void heat_chart(FILE *fp, const struct stats *s, const struct devstat *d, int idx)
{
	char name[32], title[BTAPE_NAME_MAX + 64], b1[32], b2[32];
	uint32_t max = 0;
	int cols = 0, rows = 0;

	snprintf(name, sizeof(name), "heatmap-%d", idx);
	snprintf(title, sizeof(title), "Offset by time: %s (I/Os per cell)", d->name);
	for (int l = 0; l < STATS_HEAT_L; l++)
		for (int c = 0; c < STATS_HEAT_T; c++) {
			uint32_t v = d->heat[l * STATS_HEAT_T + c];

			if (v > max)
				max = v;
			if (v && c + 1 > cols)
				cols = c + 1;
			if (v && l + 1 > rows)
				rows = l + 1;
		}
	if (!max) {
		no_data(fp, name, title, "no reads or writes");
		return;
	}
	svg_begin(fp, name, title);
	int pw = W - ML - MR, ph = H - MT - MB;
	double cw = (double)pw / cols, rh = (double)ph / rows;

	fprintf(fp, "<path d=\"M%d %dV%dH%d\" stroke=\"#999\" fill=\"none\"/>\n", ML, MT, MT + ph,
		ML + pw);
	for (int l = 0; l < rows; l++)
		for (int c = 0; c < cols; c++) {
			uint32_t v = d->heat[l * STATS_HEAT_T + c];

			if (!v)
				continue;
			double a = 0.15 + 0.85 * log1p(v) / log1p(max);

			fprintf(fp,
				"<rect class=\"cell\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
				"height=\"%.1f\" fill=\"#b2182b\" fill-opacity=\"%.2f\"/>\n",
				ML + c * cw, MT + ph - (l + 1) * rh, cw + 0.2, rh + 0.2, a);
		}
	uint64_t t0 = report_origin_rel(s);

	fprintf(fp,
		"<text x=\"%d\" y=\"%d\">%s</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n",
		ML, H - MB + 14, fmt_lat((double)t0, b1, sizeof(b1)), ML + pw, H - MB + 14,
		fmt_lat((double)(t0 + (uint64_t)cols * d->heat_tw), b2, sizeof(b2)));
	fprintf(fp,
		"<text x=\"%d\" y=\"%d\" text-anchor=\"end\">0</text><text x=\"%d\" y=\"%d\" "
		"text-anchor=\"end\">%s</text>\n",
		ML - 4, MT + ph, ML - 4, MT + 10,
		cli_fmt_bytes((uint64_t)rows * d->heat_lw * 512, b1, sizeof(b1)));
	fprintf(fp,
		"<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">time since trace start</text>"
		"<text transform=\"rotate(-90)\" x=\"%d\" y=\"12\" text-anchor=\"middle\">offset</text>"
		"</svg>\n",
		ML + pw / 2, H - 6, -(MT + ph / 2));
}

/* log2-binned histogram chart from a hist (quantities: "ns" formats as latency). */
static void hist_bars(FILE *fp, const char *name, const char *title, const struct hist *h,
		      bool time, const char *why_empty)
{
	double v[66] = {0};
	char labels[66][24];
	int lo = 65, hi = -1;

	if (!h || !h->count) {
		no_data(fp, name, title, why_empty);
		return;
	}
	for (unsigned int k = 0; k < HIST_BUCKETS; k++) {
		if (!h->b[k])
			continue;
		uint64_t b = hist_bucket_lo(k);
		int e = b ? 64 - __builtin_clzll(b) : 0; /* bin e: [2^(e-1), 2^e) */

		v[e] += (double)h->b[k];
		if (e < lo)
			lo = e;
		if (e > hi)
			hi = e;
	}
	int n = hi - lo + 1;

	for (int i = 0; i < n; i++) {
		int e = lo + i;
		uint64_t edge = e ? 1ull << (e - 1) : 0;

		if (time)
			fmt_lat((double)edge, labels[i], sizeof(labels[i]));
		else
			snprintf(labels[i], sizeof(labels[i]), "%" PRIu64, edge);
		v[i] = v[e] / (double)h->count;
	}
	bar_chart(fp, name, title, "fraction",
		  time ? "lower bin edge (log2 bins)" : "lower bin edge (log2 bins)", v, labels, n);
}

static void size_bars(FILE *fp, const struct stats *s, unsigned int op)
{
	const struct opstat *o = &s->ops[op];
	double v[STATS_SIZE_LOG2_BINS];
	char labels[STATS_SIZE_LOG2_BINS][24], name[48], title[64];
	int lo = STATS_SIZE_LOG2_BINS, hi = -1;

	snprintf(name, sizeof(name), "sizes-%s", btape_op_name(op));
	snprintf(title, sizeof(title), "Request sizes: %s (share of I/Os)", btape_op_name(op));
	for (int k = 0; k < STATS_SIZE_LOG2_BINS; k++)
		if (o->size_log2[k]) {
			if (k < lo)
				lo = k;
			hi = k;
		}
	if (hi < 0) {
		no_data(fp, name, title, "no I/O");
		return;
	}
	if (!o->bytes)
		return; /* flushes and the like carry no data: no size chart */
	int n = hi - lo + 1;

	for (int i = 0; i < n; i++) {
		int k = lo + i;

		v[i] = (double)o->size_log2[k] / (double)o->n;
		if (k == 0)
			snprintf(labels[i], sizeof(labels[i]), "0");
		else
			fmt_size(1ull << (k - 1), labels[i], sizeof(labels[i]));
	}
	bar_chart(fp, name, title, "fraction", "size bin [2^k, 2^(k+1))", v, labels, n);
}

static int timeline_charts(FILE *fp, const struct report *const *rs, int nr)
{
	/* series: per report, reads and writes (IOPS) and total throughput */
	uint64_t npts = 0;
	char b0[32], b1[32];

	for (int i = 0; i < nr; i++)
		if (rs[i]->s->tl_rows > npts)
			npts = rs[i]->s->tl_rows;
	double *buf = calloc((size_t)(4 * nr) * (npts ? npts : 1), sizeof(double));
	const double *ys[8], *ts[4];
	const char *names[8], *tnames[4];
	char nbuf[8][48];
	int ns = 0, nt = 0;

	if (!buf)
		return -ENOMEM;
	for (int i = 0; i < nr; i++) {
		const struct stats *s = rs[i]->s;
		double iv = (double)s->tl_interval / 1e9;
		double *r = buf + (size_t)(4 * i) * npts, *w = r + npts, *tp = w + npts,
		       *all = tp + npts;

		for (uint64_t k = 0; k < s->tl_rows; k++) {
			r[k] = (double)s->tl[k].n_dir[0] / iv;
			w[k] = (double)s->tl[k].n_dir[1] / iv;
			all[k] =
				(double)(s->tl[k].n_dir[0] + s->tl[k].n_dir[1] + s->tl[k].n_other) /
				iv;
			tp[k] = (double)(s->tl[k].bytes_dir[0] + s->tl[k].bytes_dir[1]) / iv;
		}
		const char *lab = rs[i]->label;

		if (nr == 1) {
			ys[ns] = r;
			names[ns++] = "read";
			ys[ns] = w;
			names[ns++] = "write";
			ys[ns] = all;
			names[ns++] = "all ops";
		} else {
			snprintf(nbuf[ns], sizeof(nbuf[ns]), "%s all ops", lab);
			ys[ns] = all;
			names[ns] = nbuf[ns];
			ns++;
		}
		ts[nt] = tp;
		tnames[nt++] = nr == 1 ? "read+write" : lab;
	}
	const struct stats *s0 = rs[0]->s;
	uint64_t t0 = report_origin_rel(s0);

	fmt_lat((double)t0, b0, sizeof(b0));
	fmt_lat((double)(t0 + npts * s0->tl_interval), b1, sizeof(b1));
	fputs("<div class=\"charts wide\">\n", fp);
	line_chart(fp, "iops", "IOPS over time", "IOPS", CHART_COUNT, nr == 1 ? b0 : "start",
		   nr == 1 ? b1 : "end", "time", ys, names, ns, npts);
	line_chart(fp, "throughput", "Throughput over time (per second)", "bytes/s", CHART_BYTES,
		   nr == 1 ? b0 : "start", nr == 1 ? b1 : "end", "time", ts, tnames, nt, npts);
	fputs("</div>\n", fp);
	free(buf);
	return 0;
}

static int cmp_host_n(const void *x, const void *y)
{
	const struct hoststat *a = *(const struct hoststat *const *)x,
			      *b = *(const struct hoststat *const *)y;

	return a->acc.n < b->acc.n ? 1 : a->acc.n > b->acc.n ? -1 : strcmp(a->name, b->name);
}

/*
 * Several hosts on one timeline: IOPS and mean device time per timeline row, a series per
 * host (the HOST_SERIES busiest), so that who was busy or slow at the same moment shows.
 * side: NULL (analyze), or "A" / "B" (compare: names host-iops-a, titles "A: ...").
 */
static int host_charts(FILE *fp, const struct stats *s, const char *side)
{
	const struct hoststat *hv[STATS_MAX_HOSTS];
	const double *ys[HOST_SERIES] = {0}, *ls[HOST_SERIES] = {0};
	const char *names[HOST_SERIES] = {0};
	uint64_t npts = s->tl_rows;
	double iv = (double)s->tl_interval / 1e9;
	int n = 0, nl = 0;
	char b0[32], b1[32];

	for (uint32_t h = 0; h < s->nhosts; h++)
		if (s->hosts[h].acc.n)
			hv[n++] = &s->hosts[h];
	qsort(hv, (size_t)n, sizeof(hv[0]), cmp_host_n);
	int nd = n < HOST_SERIES ? n : HOST_SERIES;
	double *buf = calloc((size_t)(2 * nd) * (npts ? npts : 1), sizeof(double));

	if (!buf)
		return -ENOMEM;
	for (int i = 0; i < nd; i++) {
		double *iops = buf + (size_t)(2 * i) * npts, *lat = iops + npts;

		for (uint64_t k = 0; k < npts; k++) {
			const struct host_tl_row *r = &hv[i]->tl[k];

			iops[k] = (double)r->n / iv;
			lat[k] = r->lat_n ? (double)r->lat_sum_ns / (double)r->lat_n : NAN;
			if (r->lat_n)
				nl = i + 1;
		}
		ys[i] = iops;
		ls[i] = lat;
		names[i] = hv[i]->name;
	}
	uint64_t t0 = report_origin_rel(s);

	fmt_lat((double)t0, b0, sizeof(b0));
	fmt_lat((double)(t0 + npts * s->tl_interval), b1, sizeof(b1));
	char n_iops[32], n_lat[32], t_iops[64], t_lat[64];
	const char *sfx = side ? (side[0] == 'A' ? "-a" : "-b") : "", *pfx = side ? side : "";

	snprintf(n_iops, sizeof(n_iops), "host-iops%s", sfx);
	snprintf(n_lat, sizeof(n_lat), "host-latency%s", sfx);
	snprintf(t_iops, sizeof(t_iops), "%s%sIOPS per host over time", pfx, side ? ": " : "");
	snprintf(t_lat, sizeof(t_lat), "%s%sMean device time per host over time", pfx,
		 side ? ": " : "");
	fprintf(fp, "<h2>%s%ser host over time</h2>\n<div class=\"charts wide\">\n", pfx,
		side ? ", p" : "P");
	line_chart(fp, n_iops, t_iops, "IOPS", CHART_COUNT, b0, b1, "time (one timeline)", ys,
		   names, nd, npts);
	if (nl)
		line_chart(fp, n_lat, t_lat, "device time", CHART_NS, b0, b1,
			   "time (one timeline)", ls, names, nd, npts);
	else
		no_data(fp, n_lat, t_lat, "no completion times in trace");
	if (n > nd)
		fprintf(fp, "<p class=\"note\">%d less busy host%s not drawn</p>\n", n - nd,
			n - nd == 1 ? "" : "s");
	fputs("</div>\n", fp);
	free(buf);
	return 0;
}

static int text_pre(FILE *fp, int (*fn)(FILE *, const struct report *, const struct report *),
		    const struct report *a, const struct report *b)
{
	char *txt = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&txt, &len);

	if (!m)
		return -ENOMEM;
	fn(m, a, b);
	if (fclose(m)) {
		free(txt);
		return -ENOMEM;
	}
	fputs("<pre class=\"report\">", fp);
	html_escape(fp, txt);
	fputs("</pre>\n", fp);
	free(txt);
	return 0;
}

static int text_one(FILE *fp, const struct report *a, const struct report *b)
{
	return render_text(fp, a);
}

/* Headline cards: IOPS, throughput, read share, p99 device latency per op, working set. */
static void cards(FILE *fp, const struct stats *s)
{
	struct chart_axis ax;
	char b[48], what[64];

	fputs("<div class=\"cards\">\n", fp);
	if (s->duration_ns) {
		double iops = stats_rate(s, s->all.n), bps = stats_rate(s, s->all.bytes);

		chart_axis_init(&ax, iops, 1, CHART_COUNT);
		ax.decimals = iops >= 1000 ? 1 : 0;
		html_card(fp, "iops_mean", "IOPS (mean)", chart_axis_label(&ax, iops, b, sizeof(b)), iops);
		html_card(fp, "throughput_mean_bps", "throughput (mean)",
		     fmt_rate_bytes(bps, b, sizeof(b)), bps);
	}
	uint64_t rw = s->all.n_dir[DIR_READ] + s->all.n_dir[DIR_WRITE];

	if (rw) {
		double rs = (double)s->all.n_dir[DIR_READ] / (double)rw;

		snprintf(b, sizeof(b), "%.1f%%", 100 * rs);
		html_card(fp, "read_share", "reads of reads + writes", b, rs);
	}
	for (unsigned int op = 0; op < BTAPE_OP__COUNT; op++) {
		struct op_summary o;

		report_op_summary(s, op, &o);
		if (!o.has_lat || !o.n)
			continue;
		snprintf(what, sizeof(what), "p99 %s latency (device)", btape_op_name(op));
		char key[48];

		snprintf(key, sizeof(key), "p99_%s_ns", btape_op_name(op));
		html_card(fp, key, what, fmt_lat((double)o.q[2], b, sizeof(b)), (double)o.q[2]);
	}
	if (s->wsr.blocks)
		html_card(fp, "working_set_blocks",
		     s->wsr.estimated	      ? "working set (estimated)"
		     : s->wsr.large_uncounted ? "working set (at least)"
					      : "working set",
		     cli_fmt_bytes(s->wsr.blocks * STATS_WS_BLOCK, b, sizeof(b)),
		     (double)s->wsr.blocks);
	fputs("</div>\n", fp);
}

/* The fidelity score of B against A as cards (the compare page's headline). */
static void fidelity_cards(FILE *fp, const struct fidelity *f)
{
	double tvd = NAN;
	char b[32];

	for (int k = 0; k < f->nphases; k++)
		for (int d = 0; d < DIR__COUNT; d++)
			if (isfinite(f->ph[k].size_tvd[d]) && !(f->ph[k].size_tvd[d] <= tvd))
				tvd = f->ph[k].size_tvd[d];
	fputs("<h2>Fidelity of B to A</h2>\n<div class=\"cards\">\n", fp);
	snprintf(b, sizeof(b), "%.3f", f->iops_corr);
	html_card(fp, "iops_window_correlation", "IOPS correlation per window", b, f->iops_corr);
	snprintf(b, sizeof(b), "%.3f", f->gap_ks);
	html_card(fp, "interarrival_ks", "inter-arrival KS distance", b, f->gap_ks);
	snprintf(b, sizeof(b), "%.3f", tvd);
	html_card(fp, "size_tvd_max", "size TVD, worst phase", b, tvd);
	if (f->ptm_a > 0 && f->ptm_b > 0) {
		snprintf(b, sizeof(b), "%.2fx", f->ptm_b / f->ptm_a);
		html_card(fp, "peak_to_mean_ratio", "peak-to-mean B/A", b, f->ptm_b / f->ptm_a);
	}
	if (f->ws_a && f->ws_b) {
		snprintf(b, sizeof(b), "%.2fx", (double)f->ws_b / (double)f->ws_a);
		html_card(fp, "working_set_ratio", "working set B/A", b,
			  (double)f->ws_b / (double)f->ws_a);
	}
	snprintf(b, sizeof(b), "%d", f->nphases);
	html_card(fp, "phases", "phases of A", b, f->nphases);
	fputs("</div>\n", fp);
}

/*
 * The replay fidelity stored in B by `biotape replay -o` (BTAPE_TAG_FIDELITY: B against the
 * trace it replayed, docs/REPLAY.md "Fidelity") as cards; the whole section stays in the text
 * block below. Nothing when a figure is missing.
 */
static void replay_fidelity_cards(FILE *fp, const struct report *r)
{
	static const char *const late[] = {"lateness.<=1ms", "lateness.<=10ms", "lateness.>10ms"};
	double faithful, behind, ios, ks, corr, demerit, over = 0, v;
	char b[32];

	if (mpjson_number(r->replay_fid, r->replay_fid_len, "faithful", &faithful) ||
	    mpjson_number(r->replay_fid, r->replay_fid_len, "fell_behind", &behind) ||
	    mpjson_number(r->replay_fid, r->replay_fid_len, "replayed_ios", &ios) ||
	    mpjson_number(r->replay_fid, r->replay_fid_len, "gap_ks", &ks) ||
	    mpjson_number(r->replay_fid, r->replay_fid_len, "iops_corr", &corr) ||
	    mpjson_number(r->replay_fid, r->replay_fid_len, "lat_demerit_us", &demerit))
		return;
	for (size_t k = 0; k < sizeof(late) / sizeof(late[0]); k++) {
		if (mpjson_number(r->replay_fid, r->replay_fid_len, late[k], &v))
			return;
		over += v;
	}
	fputs("<h2>Replay fidelity of B (stored by biotape replay)</h2>\n<div class=\"cards\">\n",
	      fp);
	html_card(fp, "replay_faithful", "B kept to its recording", faithful ? "yes" : "no",
		  faithful);
	html_card(fp, "replay_fell_behind", "the replayer fell behind", behind ? "yes" : "no",
		  behind);
	if (!mpjson_number(r->replay_fid, r->replay_fid_len, "late_share", &v))
		v *= 100; /* exact; before it was stored, from the lateness decades */
	else
		v = ios > 0 ? 100 * over / ios : NAN;
	snprintf(b, sizeof(b), "%.2f%%", v);
	html_card(fp, "replay_late_share", "issued over 100 µs late", b, v);
	snprintf(b, sizeof(b), "%.3f", ks);
	html_card(fp, "replay_interarrival_ks", "inter-arrival KS, recorded vs replayed", b, ks);
	snprintf(b, sizeof(b), "%.3f", corr);
	html_card(fp, "replay_iops_correlation", "IOPS correlation per window", b, corr);
	snprintf(b, sizeof(b), "%.1f µs", demerit);
	html_card(fp, "replay_latency_demerit_us", "latency demerit", b, demerit);
	fputs("</div>\n", fp);
}

static int cmp_dev_n(const void *x, const void *y)
{
	const struct devstat *a = *(const struct devstat *const *)x;
	const struct devstat *b = *(const struct devstat *const *)y;

	return a->acc.n < b->acc.n ? 1 : a->acc.n > b->acc.n ? -1 : 0;
}

/* render_text_warnings() as paragraphs at the top of a page, where they are seen first. */
static int warnings(FILE *fp, const struct report *r, const char *lead)
{
	char *txt = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&txt, &len);

	if (!m)
		return -ENOMEM;
	render_text_warnings(m, r, lead);
	if (fclose(m)) {
		free(txt);
		return -ENOMEM;
	}
	for (char *line = txt, *nl; line && *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			break;
		*nl = 0;
		fputs("<p class=\"warn\">", fp);
		html_escape(fp, line);
		fputs("</p>\n", fp);
	}
	free(txt);
	return 0;
}

int render_html(FILE *fp, const struct report *r)
{
	const struct stats *s = r->s;
	unsigned int ops[BTAPE_OP__COUNT];
	int nops = report_ops(s, ops), err;
	char title[600];

	snprintf(title, sizeof(title), "biotape analyze: %s%s", r->paths[0],
		 r->npaths > 1 ? " ..." : "");
	html_page_begin(fp, title);
	fputs("<h1>", fp);
	html_escape(fp, title);
	fputs("</h1>\n", fp);
	if ((err = warnings(fp, r, "WARNING: ")))
		return err;
	if (!s->all.n) {
		fprintf(fp, "<p class=\"note\">%s</p>\n",
			r->info->events_read || r->info->filtered ? "no events in window"
								  : "no events in trace");
		err = text_pre(fp, text_one, r, NULL);
		fputs("</body></html>\n", fp);
		return err;
	}
	const struct report *rs[1] = {r};

	cards(fp, s);
	fputs("<h2>Rate over time</h2>\n", fp);
	err = timeline_charts(fp, rs, 1);
	if (!err && s->nhosts > 1)
		err = host_charts(fp, s, NULL);
	if (err)
		return err;
	fputs("<h2>Request sizes per op</h2>\n<div class=\"charts\">\n", fp);
	for (int i = 0; i < nops; i++)
		size_bars(fp, s, ops[i]);
	fputs("</div>\n<h2>Latency CDFs per op (device time)</h2>\n<div class=\"charts\">\n", fp);
	{
		const struct hist *hs[BTAPE_OP__COUNT] = {0};
		const char *names[BTAPE_OP__COUNT] = {0};
		int n = 0;

		for (int i = 0; i < nops && n < 8; i++) {
			if (!s->ops[ops[i]].lat_dev)
				continue;
			hs[n] = s->ops[ops[i]].lat_dev;
			names[n++] = btape_op_name(ops[i]);
		}
		cdf_chart(fp, "latency-cdf", "Latency CDF (device time)", hs, names, n);
		n = 0;
		for (int i = 0; i < nops && n < 8; i++) {
			if (!s->ops[ops[i]].lat_queue)
				continue;
			hs[n] = s->ops[ops[i]].lat_queue;
			names[n++] = btape_op_name(ops[i]);
		}
		if (n)
			cdf_chart(fp, "queue-cdf", "Queue time CDF (issue - insert)", hs, names, n);
	}
	fputs("</div>\n<h2>Offsets over time</h2>\n<div class=\"charts\">\n", fp);
	{
		const struct devstat *dv[STATS_MAX_DEVICES];
		int n = 0;

		for (uint32_t i = 0; i < s->ndevs; i++)
			if (s->devs[i].used && s->devs[i].acc.n)
				dv[n++] = &s->devs[i];
		qsort(dv, (size_t)n, sizeof(dv[0]), cmp_dev_n);
		for (int i = 0; i < n && i < HEAT_DEVICES; i++)
			heat_chart(fp, s, dv[i], i);
		if (n > HEAT_DEVICES)
			fprintf(fp, "<p class=\"note\">%d more devices not drawn</p>\n",
				n - HEAT_DEVICES);
	}
	fputs("</div>\n<h2>Queue depth and inter-arrival times</h2>\n<div class=\"charts\">\n", fp);
	hist_bars(fp, "queue-depth", "Queue depth at issue", s->qd, false,
		  "not in trace (no depth field and no completion times)");
	depth_chart(fp, "latency-by-depth", "Device time by depth at issue", &s, NULL, 1,
		    BTAPE_OP__COUNT);
	hist_bars(fp, "interarrival", "Inter-arrival times", s->interarrival, true,
		  "fewer than two events");
	fputs("</div>\n<h2>All numbers</h2>\n", fp);
	err = text_pre(fp, text_one, r, NULL);
	fputs("</body></html>\n", fp);
	return err;
}

static int text_cmp(FILE *fp, const struct report *a, const struct report *b)
{
	return render_compare_text(fp, a, b);
}

int render_compare_html(FILE *fp, const struct report *a, const struct report *b)
{
	char title[600];
	int err;

	snprintf(title, sizeof(title), "biotape compare: %s vs %s", a->paths[0], b->paths[0]);
	html_page_begin(fp, title);
	fputs("<h1>", fp);
	html_escape(fp, title);
	fputs("</h1>\n", fp);
	if ((err = warnings(fp, a, "WARNING: A: ")) || (err = warnings(fp, b, "WARNING: B: ")))
		return err;
	if (a->fid)
		fidelity_cards(fp, a->fid);
	if (b->replay_fid)
		replay_fidelity_cards(fp, b);
	err = text_pre(fp, text_cmp, a, b);
	if (err)
		return err;
	if (!a->s->all.n || !b->s->all.n) {
		fputs("</body></html>\n", fp);
		return 0;
	}
	fputs("<h2>Latency CDFs, A and B overlaid</h2>\n<div class=\"charts\">\n", fp);
	for (unsigned int op = 0; op < BTAPE_OP__COUNT; op++) {
		const struct hist *hs[2] = {a->s->ops[op].lat_dev, b->s->ops[op].lat_dev};
		char name[48], t[64];

		if (!hs[0] && !hs[1])
			continue;
		const char *names[2] = {"A", "B"};

		snprintf(name, sizeof(name), "latency-cdf-%s", btape_op_name(op));
		snprintf(t, sizeof(t), "%s latency CDF (device time)", btape_op_name(op));
		cdf_chart(fp, name, t, hs, names, 2);
	}
	fputs("</div>\n<h2>Latency by queue depth at issue, A and B</h2>\n<div class=\"charts\">\n",
	      fp);
	{
		const struct stats *ss[2] = {a->s, b->s};
		const char *sides[2] = {"A", "B"};

		for (unsigned int op = 0; op < BTAPE_OP__COUNT; op++) {
			char name[48], t[80];

			if (!a->s->ops[op].lat_dev && !b->s->ops[op].lat_dev)
				continue;
			snprintf(name, sizeof(name), "latency-by-depth-%s", btape_op_name(op));
			snprintf(t, sizeof(t), "%s: device time by depth", btape_op_name(op));
			depth_chart(fp, name, t, ss, sides, 2, op);
		}
	}
	fputs("</div>\n<h2>Rate over time</h2>\n", fp);
	const struct report *rs[2] = {a, b};

	err = timeline_charts(fp, rs, 2);
	if (!err && a->s->nhosts > 1)
		err = host_charts(fp, a->s, "A");
	if (!err && b->s->nhosts > 1)
		err = host_charts(fp, b->s, "B");
	fputs("<h2>Request sizes</h2>\n<div class=\"charts\">\n", fp);
	for (unsigned int op = 0; op < BTAPE_OP__COUNT; op++) {
		if (a->s->ops[op].n)
			size_bars(fp, a->s, op);
		if (b->s->ops[op].n)
			size_bars(fp, b->s, op);
	}
	fputs("</div>\n</body></html>\n", fp);
	return err;
}
