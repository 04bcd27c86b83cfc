// SPDX-License-Identifier: GPL-2.0-only
/*
 * The replay sweep page (replay --sweep --html): IOPS versus p50/p99 latency per scale step,
 * the knee marked and named; and a single run's page (replay --html): its fidelity section,
 * IOPS and queue depth per window recorded against replayed. In the look of the other
 * reports (common/html.h, common/chart.h).
 */
#include "report.h"

#include "chart.h"
#include "html.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#define W 720.0
#define H 360.0
#define ML 72.0
#define MR 24.0
#define MT 28.0
#define MB 48.0

static double px_x(const struct chart_axis *ax, double v)
{
	return ML + (W - ML - MR) * v / ax->top;
}

static double px_y(const struct chart_axis *ay, double v)
{
	return H - MB - (H - MT - MB) * v / ay->top;
}

/* The page's start, its heading, and "TRACE -> TARGETS" opening a paragraph left open. */
static void page_head(FILE *fp, const struct rp_run_info *info, const char *title, const char *h1)
{
	html_page_begin(fp, title);
	fprintf(fp, "<h1>%s</h1>\n<p>", h1);
	html_escape(fp, info->trace);
	fputs(" &rarr; ", fp);
	for (unsigned int i = 0; i < info->ntargets; i++) {
		fputs(i ? ", " : "", fp);
		html_escape(fp, info->targets[i]);
	}
}

static void sweep_chart(FILE *fp, const struct rp_step *steps, unsigned int n)
{
	struct chart_axis ax, ay;
	double xmax = 0, ymax = 0;
	char b[32];

	for (unsigned int i = 0; i < n; i++) {
		if (steps[i].iops > xmax)
			xmax = steps[i].iops;
		if ((double)steps[i].p99_all > ymax)
			ymax = (double)steps[i].p99_all;
	}
	chart_axis_init(&ax, xmax * 1.05, 6, CHART_COUNT);
	chart_axis_init(&ay, ymax * 1.05, 5, CHART_NS);
	fprintf(fp,
		"<svg class=\"chart\" data-chart=\"sweep\" xmlns=\"http://www.w3.org/2000/svg\" "
		"width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n"
		"<title>IOPS versus latency per scale step</title>\n",
		W, H, W, H);
	for (int k = 0; k <= ay.nticks; k++) {
		double y = px_y(&ay, k * ay.step);

		fprintf(fp, "<path d=\"M%.1f %.1fH%.1f\" stroke=\"#eee\"/>\n", ML, y, W - MR);
		fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", ML - 4,
			y + 4, chart_axis_label(&ay, k * ay.step, b, sizeof(b)));
	}
	for (int k = 0; k <= ax.nticks; k++) {
		double x = px_x(&ax, k * ax.step);

		fprintf(fp, "<path d=\"M%.1f %.1fV%.1f\" stroke=\"#eee\"/>\n", x, MT, H - MB);
		fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", x,
			H - MB + 16, chart_axis_label(&ax, k * ax.step, b, sizeof(b)));
	}
	fprintf(fp,
		"<path d=\"M%.1f %.1fV%.1fH%.1f\" stroke=\"#999\" fill=\"none\"/>\n"
		"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">IOPS</text>\n"
		"<text transform=\"rotate(-90)\" x=\"%.1f\" y=\"14\" text-anchor=\"middle\">"
		"latency</text>\n",
		ML, MT, H - MB, W - MR, (ML + W - MR) / 2, H - 10, -(MT + H - MB) / 2);
	for (int series = 0; series < 2; series++) {
		const char *color = series ? "#d62728" : "#1f77b4", *name = series ? "p99" : "p50";

		fprintf(fp, "<path class=\"series\" fill=\"none\" stroke-width=\"2\" stroke=\"%s\" d=\"",
			color);
		for (unsigned int i = 0; i < n; i++) {
			double lat = (double)(series ? steps[i].p99_all : steps[i].p50_all);

			fprintf(fp, "%c%.1f %.1f", i ? 'L' : 'M', px_x(&ax, steps[i].iops),
				px_y(&ay, lat));
		}
		fprintf(fp, "\"><title>%s</title></path>\n", name);
		for (unsigned int i = 0; i < n; i++) {
			double lat = (double)(series ? steps[i].p99_all : steps[i].p50_all);
			double x = px_x(&ax, steps[i].iops), y = px_y(&ay, lat);
			bool knee = steps[i].knee && series;
			char bi[32];

			chart_axis_label(&ax, steps[i].iops, bi, sizeof(bi));
			fprintf(fp,
				"<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" fill=\"%s\">"
				"<title>x%u: %.0f IOPS, %s %s</title></circle>\n",
				x, y, knee ? 7 : 4, color, steps[i].factor, steps[i].iops, name,
				chart_axis_label(&ay, lat, b, sizeof(b)));
			if (series)
				fprintf(fp,
					"<text x=\"%.1f\" y=\"%.1f\"%s>x%u%s</text>\n", x + 8, y - 8,
					knee ? " font-weight=\"bold\" fill=\"#d62728\"" : "",
					steps[i].factor, knee ? " knee" : "");
		}
		fprintf(fp,
			"<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/>"
			"<text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
			W - MR - 120 + 60.0 * series, 8.0, color, W - MR - 106 + 60.0 * series, 17.0,
			name);
	}
	fputs("</svg>\n", fp);
}

void rp_report_sweep_html(FILE *fp, const struct rp_run_info *info, const struct rp_step *steps,
			  unsigned int n)
{
	struct chart_axis ax;
	int knee = -1, best = 0;
	char b[64], t[64];

	for (unsigned int i = 0; i < n; i++) {
		if (steps[i].knee && knee < 0)
			knee = (int)i;
		if (steps[i].iops > steps[best].iops)
			best = (int)i;
	}
	page_head(fp, info, "biotape replay sweep", "Replay sweep: IOPS versus latency");
	fprintf(fp, " (engine %s, timing %s, iodepth %u per copy, layout %s)</p>\n", info->engine,
		info->timing, info->iodepth, info->layout);
	if (!n) {
		fputs("<p class=\"note\">no steps</p>\n</body></html>\n", fp);
		return;
	}
	fputs("<div class=\"cards\">\n", fp);
	chart_axis_init(&ax, steps[best].iops, 1, CHART_COUNT);
	ax.decimals = steps[best].iops >= 1000 ? 1 : 0;
	snprintf(t, sizeof(t), "most IOPS (at x%u)", steps[best].factor);
	html_card(fp, "iops_max", t, chart_axis_label(&ax, steps[best].iops, b, sizeof(b)),
		  steps[best].iops);
	if (knee >= 0) {
		snprintf(b, sizeof(b), "x%u", steps[knee].factor);
		html_card(fp, "knee", "knee (scale step)", b, steps[knee].factor);
	} else {
		snprintf(b, sizeof(b), "none up to x%u", steps[n - 1].factor);
		html_card(fp, "knee", "knee (scale step)", b, 0);
	}
	fputs("</div>\n", fp);
	if (knee > 0) {
		const struct rp_step *p = &steps[knee - 1], *k = &steps[knee];

		fprintf(fp,
			"<p class=\"knee\">Knee at x%u: from x%u to x%u, p99 latency grew %.2fx "
			"while IOPS grew %.2fx. Load beyond x%u buys latency, not throughput.</p>\n",
			k->factor, p->factor, k->factor,
			p->p99_all ? (double)k->p99_all / (double)p->p99_all : 0,
			p->iops > 0 ? k->iops / p->iops : 0, p->factor);
	} else {
		fprintf(fp,
			"<p class=\"knee\">No knee up to x%u: p99 latency never grew faster than "
			"IOPS.</p>\n",
			steps[n - 1].factor);
	}
	fputs("<div class=\"charts wide\">\n", fp);
	sweep_chart(fp, steps, n);
	fputs("</div>\n<table><tr><th>scale</th><th>IOPS</th><th>MB/s</th><th>p50</th>"
	      "<th>p99</th></tr>\n",
	      fp);
	for (unsigned int i = 0; i < n; i++) {
		struct chart_axis al;
		char l1[32], l2[32];

		chart_axis_init(&al, (double)steps[i].p99_all, 1, CHART_NS);
		al.decimals = 1;
		fprintf(fp,
			"<tr%s><td>x%u%s</td><td>%.0f</td><td>%.1f</td><td>%s</td><td>%s</td></tr>\n",
			steps[i].knee ? " class=\"knee\"" : "", steps[i].factor,
			steps[i].knee ? " (knee)" : "", steps[i].iops, steps[i].mbps,
			chart_axis_label(&al, (double)steps[i].p50_all, l1, sizeof(l1)),
			chart_axis_label(&al, (double)steps[i].p99_all, l2, sizeof(l2)));
	}
	fputs("</table>\n<p class=\"note\">Knee: the first step where p99 latency grows by a larger "
	      "factor than IOPS.</p>\n</body></html>\n",
	      fp);
}

/* One series chart of the fidelity windows: recorded against replayed, over time. */
static void window_chart(FILE *fp, const char *key, const char *title, const struct rp_fid *f,
			 bool qd)
{
	struct chart_axis ax, ay;
	double ymax = 0, v[2][RP_FID_WINDOWS];
	const struct rp_fid_side *sd[2] = {&f->rec, &f->rep};
	char b[32];

	for (int s = 0; s < 2; s++) {
		for (unsigned int i = 0; i < f->windows; i++) {
			double n = (double)sd[s]->win_ios[i];

			v[s][i] = qd ? (n > 0 ? (double)sd[s]->win_qd[i] / n : 0)
				     : n * 1e9 / (double)f->window_ns;
			if (v[s][i] > ymax)
				ymax = v[s][i];
		}
	}
	chart_axis_init(&ax, (double)f->windows * (double)f->window_ns, 6, CHART_NS);
	chart_axis_init(&ay, ymax > 0 ? ymax * 1.05 : 1, 5, qd ? CHART_PLAIN : CHART_COUNT);
	fprintf(fp,
		"<svg class=\"chart\" data-chart=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" "
		"width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n"
		"<title>%s</title>\n",
		key, W, H, W, H, title);
	for (int k = 0; k <= ay.nticks; k++) {
		double y = px_y(&ay, k * ay.step);

		fprintf(fp, "<path d=\"M%.1f %.1fH%.1f\" stroke=\"#eee\"/>\n", ML, y, W - MR);
		fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", ML - 4,
			y + 4, chart_axis_label(&ay, k * ay.step, b, sizeof(b)));
	}
	for (int k = 0; k <= ax.nticks; k++)
		fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
			px_x(&ax, k * ax.step), H - MB + 16,
			chart_axis_label(&ax, k * ax.step, b, sizeof(b)));
	fprintf(fp,
		"<path d=\"M%.1f %.1fV%.1fH%.1f\" stroke=\"#999\" fill=\"none\"/>\n"
		"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time after the start</text>\n"
		"<text x=\"%.1f\" y=\"17\">%s</text>\n",
		ML, MT, H - MB, W - MR, (ML + W - MR) / 2, H - 10, ML, title);
	for (int s = 0; s < 2; s++) {
		const char *color = s ? "#d62728" : "#1f77b4", *name = s ? "replayed" : "recorded";

		fprintf(fp, "<path class=\"series\" fill=\"none\" stroke-width=\"1.5\" stroke=\"%s\" d=\"",
			color);
		for (unsigned int i = 0; i < f->windows; i++)
			fprintf(fp, "%c%.1f %.1f", i ? 'L' : 'M',
				px_x(&ax, ((double)i + 0.5) * (double)f->window_ns),
				px_y(&ay, v[s][i]));
		fprintf(fp, "\"><title>%s</title></path>\n", name);
		fprintf(fp,
			"<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/>"
			"<text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
			W - MR - 170 + 85.0 * s, 8.0, color, W - MR - 156 + 85.0 * s, 17.0, name);
	}
	fputs("</svg>\n", fp);
}

static void html_num(FILE *fp, const char *what, double x, const char *unit)
{
	if (isnan(x))
		fprintf(fp, "<tr><td>%s</td><td>n/a</td></tr>\n", what);
	else
		fprintf(fp, "<tr><td>%s</td><td>%.3f%s</td></tr>\n", what, x, unit);
}

void rp_report_html(FILE *fp, const struct rp_run_info *info, const struct rp_stats *st)
{
	static const char *const late[RP_FID_LATE_BUCKETS] = {"&le; 1 &micro;s", "&le; 10 &micro;s",
							      "&le; 100 &micro;s", "&le; 1 ms",
							      "&le; 10 ms", "&gt; 10 ms"};
	const struct rp_fid *f = info->fid;
	struct rp_step s;
	char b[64];

	rp_step_from_stats(&s, info->scale, st);
	page_head(fp, info, "biotape replay", "Replay: how it kept to the recording");
	fprintf(fp, " (engine %s, timing %s, order %s, iodepth %u)</p>\n", info->engine,
		info->timing, info->order ? info->order : "none", info->iodepth);
	fputs("<div class=\"cards\">\n", fp);
	snprintf(b, sizeof(b), "%.0f", s.iops);
	html_card(fp, "iops", "IOPS", b, s.iops);
	snprintf(b, sizeof(b), "%.1f us", (double)s.p99_all / 1e3);
	html_card(fp, "p99", "p99 latency", b, (double)s.p99_all);
	if (f)
		html_card(fp, "faithful", "kept to the recording", f->faithful ? "yes" : "no",
			  f->faithful);
	fputs("</div>\n", fp);
	if (!f) {
		fputs("<p class=\"note\">no fidelity section</p>\n</body></html>\n", fp);
		return;
	}
	if (f->windows) {
		fputs("<div class=\"charts\">\n", fp);
		window_chart(fp, "iops", "IOPS per window", f, false);
		window_chart(fp, "qd", "mean queue depth per window", f, true);
		fputs("</div>\n", fp);
	} else {
		fputs("<p class=\"note\">per-window series: per rank only (the ranks' traces give "
		      "windows of different widths)</p>\n", fp);
	}
	fputs("<table><tr><th>recorded vs replayed</th><th></th></tr>\n", fp);
	html_num(fp, "issued over 100 &micro;s late", 100 * rp_fid_late_share(f), "%");
	fprintf(fp, "<tr><td>fell behind</td><td>%s</td></tr>\n", f->fell_behind ? "yes" : "no");
	html_num(fp, "inter-arrival KS", f->gap_ks, "");
	html_num(fp, "size KS", f->size_ks, "");
	html_num(fp, "queue depth KS", f->qd_ks, "");
	html_num(fp, "latency demerit", f->lat_demerit_ns / 1e3, " &micro;s");
	html_num(fp, "IOPS per window, correlation", f->iops_corr, "");
	html_num(fp, "mean QD per window, correlation", f->qd_corr, "");
	fputs("</table>\n<table><tr><th>issue lateness</th><th>I/Os</th></tr>\n", fp);
	for (unsigned int k = 0; k < RP_FID_LATE_BUCKETS; k++)
		fprintf(fp, "<tr><td>%s</td><td>%" PRIu64 "</td></tr>\n", late[k], f->late[k]);
	fputs("</table>\n<p class=\"note\">Kept to the recording: the replayer never fell more "
	      "than 100 &micro;s behind, the inter-arrival KS is at most 0.1 and the per-window "
	      "IOPS correlate at least 0.9 (docs/REPLAY.md, \"Fidelity\").</p>\n</body></html>\n",
	      fp);
}
