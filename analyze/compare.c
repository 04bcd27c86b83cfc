// SPDX-License-Identifier: GPL-2.0-only
/* biotape compare: two analyses side by side, phrased for a buyer. */
#include "render.h"
#include "cli.h"
#include "fidelity.h"
#include "mpjson.h"

#include "btape.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_size(const void *a, const void *b)
{
	const struct size_slot *x = a, *y = b;

	return x->size < y->size ? -1 : x->size > y->size;
}

double report_size_tvd(const struct opstat *a, const struct opstat *b)
{
	struct size_slot *va = NULL, *vb = NULL;
	uint32_t na = 0, nb = 0, i = 0, k = 0;
	double tvd = 0;

	if (!a->n || !b->n)
		return NAN;
	if (stats_sizes_sorted(a, &va, &na) || stats_sizes_sorted(b, &vb, &nb)) {
		free(va);
		return NAN;
	}
	qsort(va, na, sizeof(*va), cmp_size);
	qsort(vb, nb, sizeof(*vb), cmp_size);
	while (i < na || k < nb) {
		double pa = 0, pb = 0;

		if (k >= nb || (i < na && va[i].size < vb[k].size)) {
			pa = (double)va[i++].n / (double)a->n;
		} else if (i >= na || vb[k].size < va[i].size) {
			pb = (double)vb[k++].n / (double)b->n;
		} else {
			pa = (double)va[i++].n / (double)a->n;
			pb = (double)vb[k++].n / (double)b->n;
		}
		tvd += fabs(pa - pb);
	}
	/* sizes beyond the exact tables are unknown: count them as different */
	tvd += (double)a->n_size_other / (double)a->n + (double)b->n_size_other / (double)b->n;
	free(va);
	free(vb);
	return tvd / 2;
}

static void fidelity_text(FILE *fp, const struct fidelity *f);
static void fidelity_json(struct jw *j, const struct fidelity *f);

/* "3.2x lower" / "1.5x higher" / "the same" for b relative to a, lower_better decides words. */
/* "p99 read latency  0.41 ms vs 1.30 ms: B 3.17x higher (worse)"; ratios are B/A. */
static void phrase(FILE *fp, const char *what, double a, double b, const char *sa, const char *sb,
		   bool lower_better)
{
	fprintf(fp, "  %-28s %12s vs %s", what, sa, sb);
	if (!(a > 0) || !(b > 0) || !isfinite(a) || !isfinite(b)) {
		fprintf(fp, " (no ratio)\n");
		return;
	}
	double r = b / a;

	if (strcmp(what, "duration") == 0) {
		fprintf(fp, ": B/A %.2fx\n", r);
		return;
	}
	if (fabs(r - 1) < 0.005) {
		fprintf(fp, ": the same\n");
		return;
	}
	bool b_better = lower_better ? b < a : b > a;
	double f = r >= 1 ? r : 1 / r;

	fprintf(fp, ": B %.2fx %s (%s)\n", f, r >= 1 ? "higher" : "lower",
		b_better ? "better" : "worse");
}

/* One-line verdict for a buyer: IOPS and p99 latency of reads and writes. */
static void verdict(FILE *fp, const struct stats *a, const struct stats *b)
{
	char s1[32], s2[32];
	bool any = false;

	fprintf(fp, "\nIn short (B relative to A):");
	if (a->duration_ns && b->duration_ns && a->all.n && b->all.n) {
		double r = stats_rate(b, b->all.n) / stats_rate(a, a->all.n);

		fprintf(fp, " %.2fx the IOPS", r);
		any = true;
	}
	for (unsigned int op = BTAPE_OP_READ; op <= BTAPE_OP_WRITE; op++) {
		struct op_summary oa, ob;

		report_op_summary(a, op, &oa);
		report_op_summary(b, op, &ob);
		if (!oa.has_lat || !ob.has_lat || !oa.q[2] || !ob.q[2])
			continue;
		double r = (double)ob.q[2] / (double)oa.q[2];

		fprintf(fp, "%s p99 %s latency %s vs %s: %.2fx %s", any ? ";" : "",
			btape_op_name(op), fmt_lat((double)oa.q[2], s1, sizeof(s1)),
			fmt_lat((double)ob.q[2], s2, sizeof(s2)), r >= 1 ? r : 1 / r,
			r >= 1 ? "higher" : "lower");
		any = true;
	}
	fprintf(fp, "%s\n", any ? "" : " no rate or latency to compare");
}

static double share(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0;
}

/*
 * Device time under A's load: the op's depth bands (stats_qd_band()) of A and of B, each
 * weighted by A's share of I/Os at that depth, quantile q of each mixture in *va, *vb. A band
 * where B has no I/O is left out of both; *uncov is A's share there. false when either side
 * has no depths with device times, or B none where A has.
 */
static bool at_a_depths(const struct opstat *oa, const struct opstat *ob, double q, uint64_t *va,
			uint64_t *vb, double *uncov)
{
	const struct hist *ha[STATS_QD_BANDS], *hb[STATS_QD_BANDS];
	double w[STATS_QD_BANDS], na = 0, nb = 0;

	*uncov = 0;
	for (int k = 0; k < STATS_QD_BANDS; k++) {
		ha[k] = oa->lat_qd[k];
		hb[k] = ob->lat_qd[k];
		na += (double)hist_count(ha[k]);
		nb += (double)hist_count(hb[k]);
	}
	if (!na || !nb)
		return false;
	for (int k = 0; k < STATS_QD_BANDS; k++) {
		w[k] = (double)hist_count(ha[k]) / na;
		if (w[k] > 0 && !hist_count(hb[k])) {
			*uncov += w[k];
			w[k] = 0;
		}
	}
	if (*uncov > 1 - 1e-9)
		return false;
	*va = hist_mix_quantile(ha, w, STATS_QD_BANDS, q);
	*vb = hist_mix_quantile(hb, w, STATS_QD_BANDS, q);
	return true;
}

/* Device time by the depth at issue, band by band, then B's under A's load (at_a_depths()). */
static void compare_depth_text(FILE *fp, const struct stats *a, const struct stats *b)
{
	char s1[32], s2[32], s3[32], s4[32], what[64];
	bool head = false;

	for (unsigned int op = 0; op < BTAPE_OP__COUNT; op++) {
		const struct opstat *oa = &a->ops[op], *ob = &b->ops[op];
		uint64_t na = 0, nb = 0, va, vb;
		double uncov;

		for (int k = 0; k < STATS_QD_BANDS; k++) {
			na += hist_count(oa->lat_qd[k]);
			nb += hist_count(ob->lat_qd[k]);
		}
		if (!na || !nb)
			continue;
		if (!head)
			fprintf(fp,
				"\nLatency at the same queue depth (device time by the depth each "
				"I/O found at its issue)\n");
		head = true;
		for (int k = 0; k < STATS_QD_BANDS; k++) {
			const struct hist *ha = oa->lat_qd[k], *hb = ob->lat_qd[k];
			if (!hist_count(ha) && !hist_count(hb))
				continue;
			fprintf(fp, "  %-8s depth %-6s I/Os %5.1f%% vs %5.1f%%", btape_op_name(op),
				report_qd_band_name((unsigned int)k, what, sizeof(what)),
				100 * share(hist_count(ha), na), 100 * share(hist_count(hb), nb));
			if (hist_count(ha) && hist_count(hb))
				fprintf(fp, "   p50 %s vs %s   p99 %s vs %s\n",
					fmt_lat((double)hist_quantile(ha, 0.5), s1, sizeof(s1)),
					fmt_lat((double)hist_quantile(hb, 0.5), s2, sizeof(s2)),
					fmt_lat((double)hist_quantile(ha, 0.99), s3, sizeof(s3)),
					fmt_lat((double)hist_quantile(hb, 0.99), s4, sizeof(s4)));
			else
				fprintf(fp, "   only in %s\n", hist_count(ha) ? "A" : "B");
		}
		bool ok = true;

		for (int q = 0; q < 2 && ok; q++) {
			double qv = q ? 0.99 : 0.5;

			if (!(ok = at_a_depths(oa, ob, qv, &va, &vb, &uncov))) {
				fprintf(fp, "  %-8s B has no I/O at the depths A has\n",
					btape_op_name(op));
				break;
			}
			snprintf(what, sizeof(what), "%s %s at A's depths", q ? "p99" : "p50",
				 btape_op_name(op));
			fmt_lat((double)va, s1, sizeof(s1));
			fmt_lat((double)vb, s2, sizeof(s2));
			phrase(fp, what, (double)va, (double)vb, s1, s2, true);
		}
		if (ok && uncov > 0)
			fprintf(fp,
				"  (%.2f%% of A's %s I/Os were at depths B never had: left out)\n",
				100 * uncov, btape_op_name(op));
	}
}

static const struct hoststat *host_named(const struct stats *s, const char *name)
{
	for (uint32_t h = 0; h < s->nhosts; h++)
		if (strcmp(s->hosts[h].name, name) == 0)
			return &s->hosts[h];
	return NULL;
}

/* Several hosts on a side: the hosts of both, matched by name (A's order, then B's others). */
static void compare_hosts_text(FILE *fp, const struct stats *a, const struct stats *b)
{
	char s1[32], s2[32];

	if (!a->nhosts && !b->nhosts)
		return;
	fprintf(fp, "\nPer host\n  %-20s %12s %12s %10s %10s\n", "host", "IOPS A", "IOPS B",
		"p99 A", "p99 B");
	for (int side = 0; side < 2; side++) {
		const struct stats *x = side ? b : a, *y = side ? a : b;

		for (uint32_t h = 0; h < x->nhosts; h++) {
			const struct hoststat *hx = &x->hosts[h], *hy = host_named(y, hx->name);
			const struct hoststat *ha = side ? hy : hx, *hb = side ? hx : hy;

			if (side && hy)
				continue; /* printed with A's */
			fprintf(fp, "  %-20.20s", hx->name);
			for (int k = 0; k < 2; k++) {
				const struct hoststat *hs = k ? hb : ha;

				if (hs)
					fprintf(fp, " %12.1f", stats_rate(k ? b : a, hs->acc.n));
				else
					fprintf(fp, " %12s", "-");
			}
			fprintf(fp, " %10s %10s\n",
				ha && ha->acc.lat && ha->acc.lat->count
					? fmt_lat((double)hist_quantile(ha->acc.lat, 0.99), s1,
						  sizeof(s1))
					: "-",
				hb && hb->acc.lat && hb->acc.lat->count
					? fmt_lat((double)hist_quantile(hb->acc.lat, 0.99), s2,
						  sizeof(s2))
					: "-");
		}
	}
}

int render_compare_text(FILE *fp, const struct report *ra, const struct report *rb)
{
	const struct stats *a = ra->s, *b = rb->s;
	char s1[48], s2[48];

	fprintf(fp, "biotape compare\n  A = %s", ra->paths[0]);
	if (ra->npaths > 1)
		fprintf(fp, " and %d more", ra->npaths - 1);
	fprintf(fp, " (%s events)\n", fmt_count(a->all.n, s1, sizeof(s1)));
	fprintf(fp, "  B = %s", rb->paths[0]);
	if (rb->npaths > 1)
		fprintf(fp, " and %d more", rb->npaths - 1);
	fprintf(fp, " (%s events)\n", fmt_count(b->all.n, s2, sizeof(s2)));
	render_text_warnings(fp, ra, "  WARNING: A: ");
	render_text_warnings(fp, rb, "  WARNING: B: ");
	if (!a->all.n || !b->all.n) {
		fprintf(fp, "  %s: no events in %s\n", !a->all.n ? "A" : "B",
			(!a->all.n ? ra : rb)->info->filtered ? "window" : "trace");
		return 0;
	}
	verdict(fp, a, b);
	fprintf(fp, "\nThroughput\n");
	snprintf(s1, sizeof(s1), "%.1f", stats_rate(a, a->all.n));
	snprintf(s2, sizeof(s2), "%.1f", stats_rate(b, b->all.n));
	phrase(fp, "IOPS (mean)", stats_rate(a, a->all.n), stats_rate(b, b->all.n), s1, s2, false);
	if (a->complete_windows && b->complete_windows) {
		fmt_count(a->all.peak_n, s1, sizeof(s1));
		fmt_count(b->all.peak_n, s2, sizeof(s2));
		phrase(fp, "IOPS (peak 1 s)", (double)a->all.peak_n, (double)b->all.peak_n, s1, s2,
		       false);
	}
	fmt_rate_bytes(stats_rate(a, a->all.bytes), s1, sizeof(s1));
	fmt_rate_bytes(stats_rate(b, b->all.bytes), s2, sizeof(s2));
	phrase(fp, "throughput (mean)", stats_rate(a, a->all.bytes), stats_rate(b, b->all.bytes),
	       s1, s2, false);
	fmt_lat((double)a->duration_ns, s1, sizeof(s1));
	fmt_lat((double)b->duration_ns, s2, sizeof(s2));
	phrase(fp, "duration", (double)a->duration_ns, (double)b->duration_ns, s1, s2, true);

	fprintf(fp, "\nLatency (device time, complete - issue)\n");
	bool any = false;

	for (unsigned int op = 0; op < BTAPE_OP__COUNT; op++) {
		struct op_summary oa, ob;

		report_op_summary(a, op, &oa);
		report_op_summary(b, op, &ob);
		if (!oa.has_lat && !ob.has_lat)
			continue;
		any = true;
		if (!oa.has_lat || !ob.has_lat) {
			fprintf(fp, "  %s: latency only in %s\n", btape_op_name(op),
				oa.has_lat ? "A" : "B");
			continue;
		}
		for (int q = 0; q < 5; q++) {
			char what[64];

			snprintf(what, sizeof(what), "%s %s latency", REPORT_QUANTILE_NAMES[q],
				 btape_op_name(op));
			fmt_lat((double)oa.q[q], s1, sizeof(s1));
			fmt_lat((double)ob.q[q], s2, sizeof(s2));
			phrase(fp, what, (double)oa.q[q], (double)ob.q[q], s1, s2, true);
		}
	}
	if (!any)
		fprintf(fp, "  not in either trace (no completion times)\n");
	compare_depth_text(fp, a, b);

	fprintf(fp, "\nWorkload shape\n");
	for (unsigned int op = 0; op < BTAPE_OP__COUNT; op++) {
		const struct opstat *oa = &a->ops[op], *ob = &b->ops[op];

		if (!oa->n && !ob->n)
			continue;
		fprintf(fp, "  %-8s share of I/Os %6.2f%% vs %6.2f%% (%+.2f points)",
			btape_op_name(op), 100 * share(oa->n, a->all.n),
			100 * share(ob->n, b->all.n),
			100 * (share(ob->n, b->all.n) - share(oa->n, a->all.n)));
		if (oa->n && ob->n && (oa->bytes || ob->bytes)) {
			fprintf(fp, "; mean size %s vs %s",
				cli_fmt_bytes(oa->bytes / oa->n, s1, sizeof(s1)),
				cli_fmt_bytes(ob->bytes / ob->n, s2, sizeof(s2)));
			fprintf(fp, "; size distributions differ by %.3f (TVD)",
				report_size_tvd(oa, ob));
		}
		fputc('\n', fp);
	}
	static const char *dn[] = {"read", "write"};

	for (int d = 0; d < DIR__COUNT; d++) {
		const struct stream *x = &a->streams_all[d], *y = &b->streams_all[d];

		if (!x->n || !y->n)
			continue;
		fprintf(fp, "  %-8s random (not sequential) %.1f%% vs %.1f%% (%+.1f points)\n",
			dn[d], 100 * (1 - stats_seq_share(x)), 100 * (1 - stats_seq_share(y)),
			100 * (stats_seq_share(x) - stats_seq_share(y)));
	}
	if (a->qd->count && b->qd->count)
		fprintf(fp,
			"  queue depth at issue: mean %.2f vs %.2f, p99 %" PRIu64 " vs %" PRIu64
			"\n",
			hist_mean(a->qd), hist_mean(b->qd), hist_quantile(a->qd, 0.99),
			hist_quantile(b->qd, 0.99));
	if (a->wsr.blocks && b->wsr.blocks)
		fprintf(fp, "  working set %s vs %s\n",
			cli_fmt_bytes(a->wsr.blocks * STATS_WS_BLOCK, s1, sizeof(s1)),
			cli_fmt_bytes(b->wsr.blocks * STATS_WS_BLOCK, s2, sizeof(s2)));
	compare_hosts_text(fp, a, b);
	if (ra->fid)
		fidelity_text(fp, ra->fid);
	if (rb->replay_fid) {
		fprintf(fp, "\nReplay fidelity (stored in B by biotape replay: B against the trace it "
			    "replayed)\n");
		if (mpjson_text(fp, rb->replay_fid, rb->replay_fid_len, "  "))
			fprintf(fp, "  (not readable)\n");
	}
	return 0;
}

void an_load_replay_fidelity(struct report *r)
{
	struct btape_reader *rd = NULL;
	const void *v;
	size_t len;
	char msg[BTAPE_ERRMSG_LEN];

	r->replay_fid = NULL;
	if (r->npaths != 1 || btape_reader__open(&rd, r->paths[0], msg, sizeof(msg)))
		return; /* the analysis read it already: a trace that cannot be opened has none */
	if (btape_reader__footer_tag(rd, BTAPE_TAG_FIDELITY, &v, &len) == 1 &&
	    (r->replay_fid = malloc(len))) {
		memcpy(r->replay_fid, v, len);
		r->replay_fid_len = len;
	}
	btape_reader__close(rd);
}

static double ratio(double a, double b)
{
	return a > 0 ? b / a : NAN;
}

/* "0.123" or "n/a" */
static const char *num3(double v, char *buf, size_t len)
{
	if (isfinite(v))
		snprintf(buf, len, "%.3f", v);
	else
		snprintf(buf, len, "n/a");
	return buf;
}

static void fidelity_text(FILE *fp, const struct fidelity *f)
{
	char s1[32], s2[32], s3[32];

	fprintf(fp, "\nFidelity (how closely B reproduces A)\n");
	fprintf(fp, "  IOPS per %s window: correlation %s over %zu windows\n",
		fmt_lat((double)f->window_ns, s1, sizeof(s1)), num3(f->iops_corr, s2, sizeof(s2)),
		f->windows);
	fprintf(fp, "  inter-arrival gaps: KS distance %s\n", num3(f->gap_ks, s1, sizeof(s1)));
	if (f->ptm_a > 0 && f->ptm_b > 0)
		fprintf(fp, "  peak-to-mean (1 s windows): %.2f vs %.2f (B/A %.3f)\n", f->ptm_a,
			f->ptm_b, f->ptm_b / f->ptm_a);
	if (f->ws_a && f->ws_b)
		fprintf(fp, "  working set: %s vs %s blocks of 4 KiB (B/A %.3f)\n",
			fmt_count(f->ws_a, s1, sizeof(s1)), fmt_count(f->ws_b, s2, sizeof(s2)),
			(double)f->ws_b / (double)f->ws_a);
	static const char *dn[] = {"read", "write"};

	for (int d = 0; d < DIR__COUNT; d++)
		if (isfinite(f->demerit_ns[d]))
			fprintf(fp, "  %s device latency: demerit (RMS distance of the CDFs) %s\n",
				dn[d], fmt_lat(f->demerit_ns[d], s1, sizeof(s1)));
	fprintf(fp, "  phases of A (%d), laid on B at the same offsets:\n", f->nphases);
	for (int k = 0; k < f->nphases; k++) {
		const struct fid_phase *p = &f->ph[k];

		fprintf(fp, "    %d: %s .. ", k + 1, fmt_lat((double)p->from_ns, s1, sizeof(s1)));
		fprintf(fp, "%s  IOPS %.1f vs %.1f; TVD mix %s, ", fmt_lat((double)p->to_ns, s2, sizeof(s2)),
			p->iops_a, p->iops_b, num3(p->mix_tvd, s3, sizeof(s3)));
		fprintf(fp, "sizes read %s ", num3(p->size_tvd[DIR_READ], s1, sizeof(s1)));
		fprintf(fp, "write %s; gap KS %s\n", num3(p->size_tvd[DIR_WRITE], s2, sizeof(s2)),
			num3(p->gap_ks, s3, sizeof(s3)));
	}
}

static void fidelity_json(struct jw *j, const struct fidelity *f)
{
	static const char *dn[] = {"read", "write"};

	jw_obj(j, "fidelity");
	jw_u64(j, "window_ns", f->window_ns);
	jw_u64(j, "windows", f->windows);
	jw_dbl(j, "iops_window_correlation", f->iops_corr);
	jw_dbl(j, "interarrival_ks", f->gap_ks);
	jw_obj(j, "peak_to_mean");
	jw_dbl(j, "a", f->ptm_a > 0 ? f->ptm_a : NAN);
	jw_dbl(j, "b", f->ptm_b > 0 ? f->ptm_b : NAN);
	jw_dbl(j, "ratio_b_over_a", f->ptm_b > 0 ? ratio(f->ptm_a, f->ptm_b) : NAN);
	jw_end_obj(j);
	jw_obj(j, "working_set_blocks");
	jw_u64(j, "a", f->ws_a);
	jw_u64(j, "b", f->ws_b);
	jw_dbl(j, "ratio_b_over_a", ratio((double)f->ws_a, (double)f->ws_b));
	jw_end_obj(j);
	jw_obj(j, "latency_demerit_ns");
	for (int d = 0; d < DIR__COUNT; d++)
		jw_dbl(j, dn[d], f->demerit_ns[d]);
	jw_end_obj(j);
	jw_arr(j, "phases");
	for (int k = 0; k < f->nphases; k++) {
		const struct fid_phase *p = &f->ph[k];

		jw_obj(j, NULL);
		jw_u64(j, "from_ns", p->from_ns);
		jw_u64(j, "to_ns", p->to_ns);
		jw_obj(j, "iops");
		jw_dbl(j, "a", p->iops_a);
		jw_dbl(j, "b", p->iops_b);
		jw_dbl(j, "ratio_b_over_a", ratio(p->iops_a, p->iops_b));
		jw_end_obj(j);
		jw_dbl(j, "mix_tvd", p->mix_tvd);
		jw_obj(j, "size_tvd");
		for (int d = 0; d < DIR__COUNT; d++)
			jw_dbl(j, dn[d], p->size_tvd[d]);
		jw_end_obj(j);
		jw_dbl(j, "interarrival_ks", p->gap_ks);
		jw_end_obj(j);
	}
	jw_end_arr(j);
	jw_end_obj(j);
}

static void j_pair(struct jw *j, const char *key, double a, double b, bool valid)
{
	jw_obj(j, key);
	if (valid) {
		jw_dbl(j, "a", a);
		jw_dbl(j, "b", b);
		jw_dbl(j, "ratio_b_over_a", a > 0 ? b / a : NAN);
	} else {
		jw_null(j, "a");
		jw_null(j, "b");
		jw_null(j, "ratio_b_over_a");
	}
	jw_end_obj(j);
}

int render_compare_json(FILE *fp, const struct report *ra, const struct report *rb)
{
	const struct stats *a = ra->s, *b = rb->s;
	struct jw j;
	bool both = a->all.n && b->all.n;

	jw_begin(&j, fp);
	jw_obj(&j, NULL);
	jw_str(&j, "schema", COMPARE_JSON_SCHEMA);
	jw_obj(&j, "diff");
	j_pair(&j, "iops_mean", stats_rate(a, a->all.n), stats_rate(b, b->all.n),
	       both && a->duration_ns && b->duration_ns);
	j_pair(&j, "throughput_mean_bps", stats_rate(a, a->all.bytes), stats_rate(b, b->all.bytes),
	       both && a->duration_ns && b->duration_ns);
	j_pair(&j, "iops_peak", (double)a->all.peak_n, (double)b->all.peak_n,
	       both && a->complete_windows && b->complete_windows);
	jw_obj(&j, "ops");
	for (unsigned int op = 0; op < BTAPE_OP__COUNT && both; op++) {
		const struct opstat *oa = &a->ops[op], *ob = &b->ops[op];
		struct op_summary sa, sb;
		static const char *qn[5] = {"p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns"};

		if (!oa->n && !ob->n)
			continue;
		report_op_summary(a, op, &sa);
		report_op_summary(b, op, &sb);
		jw_obj(&j, btape_op_name(op));
		j_pair(&j, "count_share", share(oa->n, a->all.n), share(ob->n, b->all.n), true);
		j_pair(&j, "bytes_share", share(oa->bytes, a->all.bytes),
		       share(ob->bytes, b->all.bytes), true);
		j_pair(&j, "mean_size_bytes", oa->n ? (double)oa->bytes / (double)oa->n : 0,
		       ob->n ? (double)ob->bytes / (double)ob->n : 0, oa->n && ob->n);
		jw_dbl(&j, "size_tvd", report_size_tvd(oa, ob));
		jw_obj(&j, "latency_device");
		for (int q = 0; q < 5; q++)
			j_pair(&j, qn[q], (double)sa.q[q], (double)sb.q[q],
			       sa.has_lat && sb.has_lat);
		jw_end_obj(&j);
		/* under A's load: at_a_depths() */
		uint64_t va[2], vb[2];
		double uncov = 0;
		bool ok = at_a_depths(oa, ob, 0.5, &va[0], &vb[0], &uncov) &&
			  at_a_depths(oa, ob, 0.99, &va[1], &vb[1], &uncov);

		jw_obj(&j, "latency_device_at_a_depths");
		j_pair(&j, "p50_ns", ok ? (double)va[0] : 0, ok ? (double)vb[0] : 0, ok);
		j_pair(&j, "p99_ns", ok ? (double)va[1] : 0, ok ? (double)vb[1] : 0, ok);
		if (ok || uncov > 0) /* 1: B had none of A's depths */
			jw_dbl(&j, "a_share_left_out", uncov);
		else
			jw_null(&j, "a_share_left_out");
		jw_end_obj(&j);
		jw_end_obj(&j);
	}
	jw_end_obj(&j);
	jw_obj(&j, "random_share");
	static const char *dn[] = {"read", "write"};

	for (int d = 0; d < DIR__COUNT; d++) {
		const struct stream *x = &a->streams_all[d], *y = &b->streams_all[d];

		j_pair(&j, dn[d], 1 - stats_seq_share(x), 1 - stats_seq_share(y), x->n && y->n);
	}
	jw_end_obj(&j);
	uint64_t ra_rw = a->all.n_dir[0] + a->all.n_dir[1],
		 rb_rw = b->all.n_dir[0] + b->all.n_dir[1];

	j_pair(&j, "read_share_of_rw", share(a->all.n_dir[0], ra_rw), share(b->all.n_dir[0], rb_rw),
	       ra_rw && rb_rw);
	jw_end_obj(&j);
	if (ra->fid)
		fidelity_json(&j, ra->fid);
	if (rb->replay_fid)
		jw_msgpack(&j, "replay_fidelity", rb->replay_fid, rb->replay_fid_len);
	jw_obj(&j, "a");
	render_json_body(&j, ra);
	jw_end_obj(&j);
	jw_obj(&j, "b");
	render_json_body(&j, rb);
	jw_end_obj(&j);
	jw_end_obj(&j);
	return 0;
}
