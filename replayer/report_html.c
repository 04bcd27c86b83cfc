// SPDX-License-Identifier: GPL-2.0-only
/* The replay sweep page (replay --sweep --html): IOPS versus latency per scale step. */
#include "report.h"

#include "html.h"

void rp_report_sweep_html(FILE *fp, const struct rp_run_info *info, const struct rp_step *steps,
			  unsigned int n)
{
	const double W = 720, H = 420, L = 80, R = 30, T = 30, B = 60;
	double xmax = 1, ymax = 1;

	for (unsigned int i = 0; i < n; i++) {
		if (steps[i].iops > xmax)
			xmax = steps[i].iops;
		if ((double)steps[i].p99_all / 1e3 > ymax)
			ymax = (double)steps[i].p99_all / 1e3;
	}
	xmax *= 1.1;
	ymax *= 1.15;
	fprintf(fp,
		"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>biotape replay "
		"sweep</title>\n<style>body{font-family:sans-serif;margin:2em}"
		"table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;"
		"text-align:right}</style></head><body>\n<h1>Replay sweep: IOPS versus latency</h1>\n<p>");
	html_escape(fp, info->trace);
	fprintf(fp, " &rarr; ");
	for (unsigned int i = 0; i < info->ntargets; i++) {
		fprintf(fp, "%s", i ? ", " : "");
		html_escape(fp, info->targets[i]);
	}
	fprintf(fp, " (engine %s, timing %s, iodepth %u per copy, layout %s)</p>\n", info->engine,
		info->timing, info->iodepth, info->layout);
	fprintf(fp,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		"viewBox=\"0 0 %.0f %.0f\">\n",
		W, H, W, H);
	fprintf(fp, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", W,
		H);
	/* axes and grid */
	for (int g = 0; g <= 5; g++) {
		double x = L + (W - L - R) * g / 5, y = H - B - (H - T - B) * g / 5;

		fprintf(fp,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>\n",
			L, y, W - R, y);
		fprintf(fp,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>\n",
			x, T, x, H - B);
		fprintf(fp,
			"<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">%.0f"
			"</text>\n",
			x, H - B + 16, xmax * g / 5);
		fprintf(fp,
			"<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%.0f"
			"</text>\n",
			L - 6, y + 4, ymax * g / 5);
	}
	fprintf(fp, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", L,
		H - B, W - R, H - B);
	fprintf(fp, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", L,
		T, L, H - B);
	fprintf(fp,
		"<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\" text-anchor=\"middle\">IOPS"
		"</text>\n",
		(L + W - R) / 2, H - 18);
	fprintf(fp,
		"<text x=\"18\" y=\"%.1f\" font-size=\"13\" text-anchor=\"middle\" "
		"transform=\"rotate(-90 18 %.1f)\">latency (us)</text>\n",
		(T + H - B) / 2, (T + H - B) / 2);
	for (int series = 0; series < 2; series++) {
		const char *color = series ? "#d62728" : "#1f77b4";

		fprintf(fp, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"",
			color);
		for (unsigned int i = 0; i < n; i++) {
			double lat = (double)(series ? steps[i].p99_all : steps[i].p50_all) / 1e3;

			fprintf(fp, "%.1f,%.1f ", L + (W - L - R) * steps[i].iops / xmax,
				H - B - (H - T - B) * lat / ymax);
		}
		fprintf(fp, "\"/>\n");
		for (unsigned int i = 0; i < n; i++) {
			double lat = (double)(series ? steps[i].p99_all : steps[i].p50_all) / 1e3;
			double x = L + (W - L - R) * steps[i].iops / xmax;
			double y = H - B - (H - T - B) * lat / ymax;

			fprintf(fp,
				"<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" fill=\"%s\"><title>scale "
				"%u: %.0f IOPS, p%s %.1f us</title></circle>\n",
				x, y, steps[i].knee && series ? 7 : 4, color, steps[i].factor,
				steps[i].iops, series ? "99" : "50", lat);
			fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">x%u%s</text>\n",
				x + 6, y - 6, steps[i].factor,
				steps[i].knee && series ? " knee" : "");
		}
	}
	fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" fill=\"#1f77b4\">p50</text>\n",
		W - R - 60, T + 12);
	fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" fill=\"#d62728\">p99</text>\n",
		W - R - 60, T + 28);
	fprintf(fp, "</svg>\n<table><tr><th>scale</th><th>IOPS</th><th>MB/s</th><th>p50 (us)</th>"
		    "<th>p99 (us)</th><th></th></tr>\n");
	for (unsigned int i = 0; i < n; i++)
		fprintf(fp,
			"<tr><td>%u</td><td>%.0f</td><td>%.1f</td><td>%.1f</td><td>%.1f</td>"
			"<td>%s</td></tr>\n",
			steps[i].factor, steps[i].iops, steps[i].mbps,
			(double)steps[i].p50_all / 1e3, (double)steps[i].p99_all / 1e3,
			steps[i].knee ? "knee" : "");
	fprintf(fp, "</table>\n<p>Knee: the first step where p99 latency grows by a larger factor "
		    "than IOPS.</p>\n</body></html>\n");
}
