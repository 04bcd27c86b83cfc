// SPDX-License-Identifier: GPL-2.0-only
#include "report.h"

#include "order.h"

#include "btape.h"
#include "cli.h"
#include "mpjson.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The spin the lag summary suggests when the thread's wake-ups made it late (docs/REPLAY.md) */
#define HINT_SPIN_US 1000u
/* past the recording's depth: over this share of the I/Os, the summary names --iodepth recorded */
#define HINT_PAST_DEPTH 0.01

static const char *const io_op_names[RP_IO__COUNT] = {"read", "write", "flush", "discard",
						      "write_zeroes"};

const char *rp_io_op_name(unsigned int op)
{
	return op < RP_IO__COUNT ? io_op_names[op] : "?";
}

double rp_stats_seconds(const struct rp_stats *st)
{
	if (st->end_ns <= st->measure_start_ns)
		return 0;
	return (double)(st->end_ns - st->measure_start_ns) / 1e9;
}

static uint64_t total_ios(const struct rp_stats *st)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < RP_IO__COUNT; i++)
		n += st->ios[i];
	return n;
}

static uint64_t total_bytes(const struct rp_stats *st)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < RP_IO__COUNT; i++)
		n += st->bytes[i];
	return n;
}

static uint64_t total_skipped(const struct rp_stats *st)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < 32; i++)
		n += st->skipped[i];
	return n;
}

static double rate(uint64_t n, double s)
{
	return s > 0 ? (double)n / s : 0;
}

void rp_step_from_stats(struct rp_step *s, unsigned int factor, const struct rp_stats *st)
{
	static struct hist all; /* big: not on the stack */

	memset(s, 0, sizeof(*s));
	s->factor = factor;
	s->seconds = rp_stats_seconds(st);
	s->ios = total_ios(st);
	s->iops = rate(s->ios, s->seconds);
	s->mbps = rate(total_bytes(st), s->seconds) / 1e6;
	hist_init(&all);
	for (unsigned int i = 0; i < RP_IO__COUNT; i++) {
		s->op_ios[i] = st->ios[i];
		s->p50[i] = hist_quantile(&st->lat[i], 0.5);
		s->p99[i] = hist_quantile(&st->lat[i], 0.99);
		hist_merge(&all, &st->lat[i]);
	}
	s->p50_all = hist_quantile(&all, 0.5);
	s->p99_all = hist_quantile(&all, 0.99);
}

int rp_steps_mark_knee(struct rp_step *steps, unsigned int n)
{
	for (unsigned int i = 1; i < n; i++) {
		const struct rp_step *a = &steps[i - 1], *b = &steps[i];

		if (!a->p99_all || !a->iops)
			continue;
		if ((double)b->p99_all / (double)a->p99_all > b->iops / a->iops) {
			steps[i].knee = true;
			return (int)i;
		}
	}
	return -1;
}

/* "block", "file" or "created file" (made by --create); NULL when unknown. */
static const char *target_kind(const struct rp_run_info *info, unsigned int i)
{
	if (!info->topen)
		return NULL;
	if (info->topen[i].is_blkdev)
		return "block";
	return info->topen[i].created ? "created file" : "file";
}

static bool ordered(const struct rp_run_info *info)
{
	return info->order && strcmp(info->order, "none");
}

/* --order: how many I/Os a dependency held past their deadline, and for how long, by rule. */
static void text_deps(FILE *fp, const struct rp_stats *st)
{
	char a[32];

	/* the mean hold per held I/O: the sum over I/Os held at once exceeds the run's length */
	fprintf(fp, "  held by a dependency:");
	for (unsigned int k = 0; k < RP_DEP__COUNT; k++)
		fprintf(fp, "%s %s %" PRIu64 " (%s each)", k ? "," : "", rp_dep_name((enum rp_dep)k),
			st->dep_waited[k],
			cli_fmt_ns(st->dep_waited[k] ? st->dep_wait_ns[k] / st->dep_waited[k] : 0, a,
				   sizeof(a)));
	fprintf(fp, "; window full %" PRIu64 " time(s)\n", st->dep_window_full);
}

static void header(FILE *fp, const struct rp_run_info *info)
{
	char b[32];

	fprintf(fp, "replay of %s -> ", info->trace);
	for (unsigned int i = 0; i < info->ntargets; i++)
		fprintf(fp, "%s%s", i ? ", " : "", info->targets[i]);
	fputc('\n', fp);
	/* a file where a device was meant (a typo, a missing node) must not pass unseen */
	for (unsigned int i = 0; info->topen && i < info->ntargets; i++) {
		if (info->topen[i].is_blkdev)
			continue;
		fprintf(fp, "  target %s is a regular file (%s%s)\n", info->targets[i],
			info->topen[i].created ? "created by --create, " : "",
			cli_fmt_bytes(info->topen[i].size, b, sizeof(b)));
	}
	fprintf(fp, "  engine %s, timing %s", info->engine, info->timing);
	if (strcmp(info->timing, "original") == 0)
		fprintf(fp, " x%g", info->speed);
	if (ordered(info)) {
		fprintf(fp, ", order %s", info->order);
		if (info->think_ns)
			fprintf(fp, " (think window %s)", cli_fmt_ns(info->think_ns, b, sizeof(b)));
		if (info->xthread)
			fprintf(fp, " (cross-thread %s)", info->xthread);
	}
	fprintf(fp, ", iodepth %u%s, scale %u (%s)\n", info->iodepth,
		info->iodepth_recorded ? " (the recording's most in flight)" : "", info->scale,
		info->layout);
	if (strcmp(info->timing, "original") == 0) {
		if (info->rt_priority)
			fprintf(fp, "  issuing thread SCHED_FIFO %u, spin %u us\n",
				info->rt_priority, info->spin_us);
		else
			fprintf(fp, "  issuing thread in the normal class, spin %u us\n",
				info->spin_us);
	}
}

static double sec(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* Of the slots taken when the depth cap held I/Os back, the share flushes held (0: never). */
static double capped_flush_share(const struct rp_stats *st)
{
	return st->capped_slots ? (double)st->capped_flush_slots / (double)st->capped_slots : 0;
}

/*
 * Whether the replay kept to its schedule, and if not, by how much, when, and what held it:
 * the depth cap (the target completed slower than the recording needs) or the issuing thread
 * itself (waiting for a CPU).
 */
static void text_lag(FILE *fp, const struct rp_run_info *info, const struct rp_stats *st)
{
	const struct rp_stage *sg = &st->stage;
	char a[32];

	if (!st->issue_err.count)
		return;
	if (st->lag_max_ns <= RP_LATE_NS) {
		fprintf(fp, "  kept up: never more than %llu us behind (worst %s at %.3f s)\n",
			RP_LATE_NS / 1000, cli_fmt_ns(st->lag_max_ns, a, sizeof(a)),
			sec(st->lag_at_ns));
		return;
	}
	fprintf(fp,
		"  the replayer fell behind by %s at %.3f s; it was more than %llu us behind for "
		"%.3f s of %.3f s\n",
		cli_fmt_ns(st->lag_max_ns, a, sizeof(a)), sec(st->lag_at_ns), RP_LATE_NS / 1000,
		sec(st->behind_ns), rp_stats_seconds(st));
	fprintf(fp,
		"    held back: %.3f s by the depth cap (%" PRIu64 " I/Os; a target slower "
		"than the recording fills it), %.3f s waiting for a CPU (%" PRIu64
		" preemptions)\n",
		sec(sg->capped_ns), st->depth_capped, sec(sg->runq_ns), sg->nivcsw);
	if (capped_flush_share(st) >= 0.5)
		fprintf(fp,
			"    flushes held %.0f%% of the slots at the depth cap: the kernel runs each "
			"in an io-wq worker thread, and they fell behind (docs/REPLAY.md, \"Where the "
			"time goes\")\n",
			100.0 * capped_flush_share(st));
	/* late, not for the device, by a thread that mostly slept: its wake-ups (docs/REPLAY.md) */
	if ((double)st->late > RP_FID_LATE_OK * (double)st->issue_err.count &&
	    sg->runq_ns > sg->capped_ns && 2 * sg->wait_ns >= sg->run_ns && !info->rt_priority &&
	    info->spin_us < HINT_SPIN_US && strcmp(info->timing, "original") == 0)
		fprintf(fp,
			"    the thread sleeps until %u us before a deadline and wakes late: where "
			"this host's CPUs do not also serve the target, --spin-us %u keeps it on a "
			"CPU (docs/REPLAY.md, \"Where the time goes\")\n",
			info->spin_us, HINT_SPIN_US);
}

static void text_stages(FILE *fp, const struct rp_stats *st)
{
	const struct rp_stage *sg = &st->stage;

	fprintf(fp,
		"  issuing thread: %.3f s, on a CPU %.3f s; submit %.3f s (%" PRIu64
		" calls), wait %.3f s (%" PRIu64 "), spin %.3f s, prepare %.3f s, trace %.3f s; "
		"%.1f completions per reap",
		sec(sg->run_ns), sec(sg->cpu_ns), sec(sg->submit_ns), sg->submit_calls,
		sec(sg->wait_ns), sg->waits, sec(sg->spin_ns), sec(sg->prepare_ns),
		sec(sg->source_ns),
		sg->wakes_with_completions ? (double)sg->reaped / (double)sg->wakes_with_completions
					   : 0.0);
	if (sg->syscalls && st->issued)
		fprintf(fp, "; %.2f system calls per I/O",
			(double)sg->syscalls / (double)st->issued);
	if (sg->buf_allocs)
		fprintf(fp, "; %" PRIu64 " buffers made while issuing (page faults at deadlines)",
			sg->buf_allocs);
	fputc('\n', fp);
}


/* "%.3f" of x, or "n/a" when it is undefined */
static const char *fmt_num(double x, char *b, size_t n)
{
	if (isnan(x))
		snprintf(b, n, "n/a");
	else
		snprintf(b, n, "%.3f", x);
	return b;
}

/* The fidelity section: did the replay do what the recording did (fidelity.h). */
static void text_fidelity(FILE *fp, const struct rp_fid *f)
{
	char a[32], b[32], c[32], d[32], e[32], v[RP_FID_VERDICT_MAX];

	rp_fid_verdict(f, v, sizeof(v));
	if (f->ranks) /* a cluster's: the ranks' own verdicts are in rp_cluster__report_text() */
		fprintf(fp, "  fidelity, %u ranks merged: %s%s", f->ranks, v,
			f->faithful ? "" : " (per rank below)");
	else
		fprintf(fp, "  fidelity: %s", v);
	fputc('\n', fp);
	fprintf(fp, "    issue lateness:");
	for (unsigned int k = 0; k < RP_FID_LATE_BUCKETS; k++)
		fprintf(fp, " %s %" PRIu64, rp_fid_late_names[k], f->late[k]);
	fprintf(fp, "\n    recorded vs replayed: inter-arrival KS %s%s, size KS %s, QD KS %s, "
		    "latency demerit %s\n",
		fmt_num(f->gap_ks, a, sizeof(a)), f->ranks ? " (each rank's gaps, pooled)" : "",
		fmt_num(f->size_ks, b, sizeof(b)), fmt_num(f->qd_ks, c, sizeof(c)),
		isnan(f->lat_demerit_ns) ? "n/a" : cli_fmt_ns((uint64_t)f->lat_demerit_ns, d,
								  sizeof(d)));
	if (f->window_ns)
		fprintf(fp, "    per %s window (%u): IOPS correlation %s, mean QD correlation %s",
			cli_fmt_ns(f->window_ns, e, sizeof(e)), f->windows,
			fmt_num(f->iops_corr, a, sizeof(a)), fmt_num(f->qd_corr, b, sizeof(b)));
	else
		fprintf(fp, "    per window: per rank only (the ranks' traces give windows of "
			    "different widths)");
	if (f->rep.beyond)
		fprintf(fp, "; %" PRIu64 " replayed I/Os past the last window", f->rep.beyond);
	fputc('\n', fp);
}

void rp_report_text(FILE *fp, const struct rp_run_info *info, const struct rp_stats *st)
{
	double secs = rp_stats_seconds(st);
	char a[32], b[32], c[32], d[32], e[32];
	uint64_t skipped = total_skipped(st);

	header(fp, info);
	fprintf(fp, "  measured %.3f s: %" PRIu64 " I/Os, %.0f IOPS, %.1f MB/s%s\n", secs,
		total_ios(st), rate(total_ios(st), secs), rate(total_bytes(st), secs) / 1e6,
		st->interrupted	   ? " (interrupted)"
		: st->duration_hit ? " (duration reached)"
				   : "");
	fprintf(fp, "  %-12s %10s %10s %9s %10s %10s %10s %10s %10s\n", "op", "ios", "IOPS", "MB/s",
		"p50", "p90", "p99", "p99.9", "max");
	for (unsigned int i = 0; i < RP_IO__COUNT; i++) {
		const struct hist *h = &st->lat[i];

		if (!st->ios[i])
			continue;
		fprintf(fp, "  %-12s %10" PRIu64 " %10.0f %9.1f %10s %10s %10s %10s %10s\n",
			rp_io_op_name(i), st->ios[i], rate(st->ios[i], secs),
			rate(st->bytes[i], secs) / 1e6,
			cli_fmt_ns(hist_quantile(h, 0.5), a, sizeof(a)),
			cli_fmt_ns(hist_quantile(h, 0.9), b, sizeof(b)),
			cli_fmt_ns(hist_quantile(h, 0.99), c, sizeof(c)),
			cli_fmt_ns(hist_quantile(h, 0.999), d, sizeof(d)),
			cli_fmt_ns(h->max, e, sizeof(e)));
	}
	if (st->issue_err.count) {
		fprintf(fp,
			"  issue-time error: p50 %s, p99 %s, max %s; late (>%llu us): %" PRIu64
			" (%.3f%%)\n",
			cli_fmt_ns(hist_quantile(&st->issue_err, 0.5), a, sizeof(a)),
			cli_fmt_ns(hist_quantile(&st->issue_err, 0.99), b, sizeof(b)),
			cli_fmt_ns(st->issue_err.max, c, sizeof(c)), RP_LATE_NS / 1000, st->late,
			100.0 * (double)st->late / (double)st->issue_err.count);
	}
	text_lag(fp, info, st);
	if (ordered(info))
		text_deps(fp, st);
	if (st->flush_overlapped)
		fprintf(fp,
			"  flushes sent while the one before was out: %" PRIu64
			" (recorded apart; the block layer may fold them into one: --flushes-apart)\n",
			st->flush_overlapped);
	if (st->flush_waited)
		fprintf(fp, "  flushes held behind the one before: %" PRIu64 " (%s)\n",
			st->flush_waited, cli_fmt_ns(st->flush_wait_ns, a, sizeof(a)));
	if (info->fid)
		text_fidelity(fp, info->fid);
	if (info->hold_depth) {
		double past = st->issued ? (double)st->past_depth / (double)st->issued : 0;

		fprintf(fp,
			"  held at the recording's %u in flight: %" PRIu64
			" I/Os, each at most %llu us; %" PRIu64 " (%.2f%%) went with %u or more in "
			"flight\n",
			info->hold_depth, st->held, RP_HOLD_NS / 1000, st->past_depth, 100 * past,
			info->hold_depth * (info->scale ? info->scale : 1)); /* all copies' */
		/* the write tail after a late stretch (docs/REPLAY.md, "Timing") */
		if (past > HINT_PAST_DEPTH)
			fprintf(fp,
				"    their latencies include a pile-up that an application waiting "
				"on its I/Os would not have made; --iodepth recorded holds them as "
				"it would (docs/REPLAY.md, \"Timing\")\n");
	}
	fprintf(fp, "  depth-capped: %" PRIu64 ", max in flight: %u, errors: %" PRIu64,
		st->depth_capped, st->max_inflight, st->errors);
	if (st->errors)
		fprintf(fp, " (first: %s at offset %" PRIu64 ")", strerror(-st->first_error),
			st->first_error_offset);
	fprintf(fp, "\n  skipped: %" PRIu64, skipped);
	if (skipped) {
		const char *sep = " (";

		for (unsigned int i = 0; i < 32; i++) {
			if (st->skipped[i]) {
				fprintf(fp, "%s%s %" PRIu64, sep, btape_op_name(i), st->skipped[i]);
				sep = ", ";
			}
		}
		fprintf(fp,
			"; of which refused by the target %" PRIu64 ", unmapped device %" PRIu64,
			st->unsupported, st->unmapped);
		if (st->sub_block)
			fprintf(fp, ", under one target block %" PRIu64, st->sub_block);
		fputc(')', fp);
	}
	fprintf(fp, "\n  trace events: %" PRIu64 " in %" PRIu64 " pass(es)\n", st->events,
		st->loops);
	text_stages(fp, st);
}

static void json_lat(FILE *fp, const struct hist *h)
{
	fprintf(fp, "{\"p50\":%.3f,\"p90\":%.3f,\"p99\":%.3f,\"p99.9\":%.3f,\"max\":%.3f}",
		(double)hist_quantile(h, 0.5) / 1e3, (double)hist_quantile(h, 0.9) / 1e3,
		(double)hist_quantile(h, 0.99) / 1e3, (double)hist_quantile(h, 0.999) / 1e3,
		(double)h->max / 1e3);
}

static void json_info(FILE *fp, const struct rp_run_info *info)
{
	fprintf(fp, "\"trace\":");
	cli_json_str(fp, info->trace);
	fprintf(fp, ",\"targets\":[");
	for (unsigned int i = 0; i < info->ntargets; i++) {
		if (i)
			fputc(',', fp);
		cli_json_str(fp, info->targets[i]);
	}
	if (info->topen) {
		fprintf(fp, "],\"target_kinds\":[");
		for (unsigned int i = 0; i < info->ntargets; i++)
			fprintf(fp, "%s\"%s\"", i ? "," : "", target_kind(info, i));
	}
	fprintf(fp, "],\"engine\":");
	cli_json_str(fp, info->engine);
	fprintf(fp, ",\"timing\":");
	cli_json_str(fp, info->timing);
	fprintf(fp, ",\"order\":");
	cli_json_str(fp, info->order ? info->order : "none");
	if (info->think_ns)
		fprintf(fp, ",\"think_window_us\":%.3f", (double)info->think_ns / 1e3);
	if (info->xthread) {
		fprintf(fp, ",\"cross_thread\":");
		cli_json_str(fp, info->xthread);
	}
	fprintf(fp,
		",\"speed\":%g,\"iodepth\":%u,\"iodepth_recorded\":%s,\"rt_priority\":%u,"
		"\"spin_us\":%u,\"layout\":",
		info->speed, info->iodepth, info->iodepth_recorded ? "true" : "false",
		info->rt_priority, info->spin_us);
	cli_json_str(fp, info->layout);
}

/* The section as rp_fid_pack() stores it in a result trace: the same figures, the same text. */
static void json_fidelity(FILE *fp, const struct rp_fid *f)
{
	char *buf = NULL;
	size_t len = 0;

	fprintf(fp, ",\"fidelity\":");
	if (rp_fid_pack(f, &buf, &len) || mpjson_write(fp, buf, len))
		fputs("null", fp);
	free(buf);
}

void rp_report_json(FILE *fp, const struct rp_run_info *info, const struct rp_stats *st)
{
	double secs = rp_stats_seconds(st);
	uint64_t n = st->issue_err.count;
	bool first = true;

	fputc('{', fp);
	json_info(fp, info);
	fprintf(fp,
		",\"scale\":%u,\"seconds\":%.6f,\"ios\":%" PRIu64 ",\"iops\":%.1f,\"mbps\":%.3f",
		info->scale, secs, total_ios(st), rate(total_ios(st), secs),
		rate(total_bytes(st), secs) / 1e6);
	fprintf(fp, ",\"ops\":{");
	for (unsigned int i = 0; i < RP_IO__COUNT; i++) {
		if (!st->ios[i])
			continue;
		fprintf(fp, "%s\"%s\":{\"ios\":%" PRIu64 ",\"iops\":%.1f,\"mbps\":%.3f,\"lat_us\":",
			first ? "" : ",", rp_io_op_name(i), st->ios[i], rate(st->ios[i], secs),
			rate(st->bytes[i], secs) / 1e6);
		json_lat(fp, &st->lat[i]);
		fputc('}', fp);
		first = false;
	}
	fprintf(fp, "}");
	if (n) {
		fprintf(fp, ",\"issue_error_us\":{\"p50\":%.3f,\"p99\":%.3f,\"max\":%.3f}",
			(double)hist_quantile(&st->issue_err, 0.5) / 1e3,
			(double)hist_quantile(&st->issue_err, 0.99) / 1e3,
			(double)st->issue_err.max / 1e3);
		fprintf(fp, ",\"late\":%" PRIu64 ",\"late_rate\":%.6f", st->late,
			(double)st->late / (double)n);
		fprintf(fp,
			",\"fell_behind\":%s,\"lag\":{\"max_us\":%.3f,\"at_s\":%.6f,"
			"\"behind_s\":%.6f}",
			st->lag_max_ns > RP_LATE_NS ? "true" : "false",
			(double)st->lag_max_ns / 1e3, sec(st->lag_at_ns), sec(st->behind_ns));
	}
	{
		const struct rp_stage *sg = &st->stage;

		fprintf(fp,
			",\"stages_s\":{\"run\":%.6f,\"cpu\":%.6f,\"runq\":%.6f,\"submit\":%.6f,"
			"\"wait\":%.6f,\"spin\":%.6f,\"prepare\":%.6f,\"source\":%.6f,"
			"\"capped\":%.6f},\"submit_calls\":%" PRIu64 ",\"engine_syscalls\":%" PRIu64
			",\"waits\":%" PRIu64 ",\"reaped_per_wake\":%.3f,\"preempted\":%" PRIu64
			",\"buffers_made\":%" PRIu64,
			sec(sg->run_ns), sec(sg->cpu_ns), sec(sg->runq_ns), sec(sg->submit_ns),
			sec(sg->wait_ns), sec(sg->spin_ns), sec(sg->prepare_ns), sec(sg->source_ns),
			sec(sg->capped_ns), sg->submit_calls, sg->syscalls, sg->waits,
			sg->wakes_with_completions
				? (double)sg->reaped / (double)sg->wakes_with_completions
				: 0.0,
			sg->nivcsw, sg->buf_allocs);
	}
	fprintf(fp, ",\"dep_waits\":{");
	for (unsigned int k = 0; k < RP_DEP__COUNT; k++)
		fprintf(fp, "\"%s\":{\"ios\":%" PRIu64 ",\"wait_s\":%.6f},",
			rp_dep_name((enum rp_dep)k), st->dep_waited[k], sec(st->dep_wait_ns[k]));
	fprintf(fp, "\"window_full\":%" PRIu64 "}", st->dep_window_full);
	fprintf(fp,
		",\"flushes\":{\"overlapped\":%" PRIu64 ",\"waited\":%" PRIu64 ",\"wait_s\":%.6f}",
		st->flush_overlapped, st->flush_waited, sec(st->flush_wait_ns));
	if (info->fid)
		json_fidelity(fp, info->fid);
	fprintf(fp,
		",\"depth_capped\":%" PRIu64 ",\"capped_flush_share\":%.3f,\"hold_depth\":%u,"
		"\"held\":%" PRIu64 ",\"past_depth\":%" PRIu64 ",\"max_inflight\":%u,"
		"\"errors\":%" PRIu64,
		st->depth_capped, capped_flush_share(st), info->hold_depth, st->held,
		st->past_depth, st->max_inflight, st->errors);
	fprintf(fp,
		",\"skipped\":{\"total\":%" PRIu64 ",\"unsupported\":%" PRIu64
		",\"unmapped\":%" PRIu64 ",\"sub_block\":%" PRIu64 ",\"by_op\":{",
		total_skipped(st), st->unsupported, st->unmapped, st->sub_block);
	first = true;
	for (unsigned int i = 0; i < 32; i++) {
		if (!st->skipped[i])
			continue;
		fprintf(fp, "%s\"%s\":%" PRIu64, first ? "" : ",", btape_op_name(i),
			st->skipped[i]);
		first = false;
	}
	fprintf(fp, "}},\"events\":%" PRIu64 ",\"passes\":%" PRIu64 ",\"interrupted\":%s}\n",
		st->events, st->loops, st->interrupted ? "true" : "false");
}

void rp_report_sweep_text(FILE *fp, const struct rp_run_info *info, const struct rp_step *steps,
			  unsigned int n)
{
	char a[32], b[32];

	header(fp, info);
	fprintf(fp, "  %6s %10s %9s", "scale", "IOPS", "MB/s");
	for (unsigned int o = 0; o < RP_IO__COUNT; o++) {
		bool any = false;

		for (unsigned int i = 0; i < n; i++)
			any |= steps[i].op_ios[o] != 0;
		if (any)
			fprintf(fp, " %8s-p50 %8s-p99", rp_io_op_name(o), rp_io_op_name(o));
	}
	fputc('\n', fp);
	for (unsigned int i = 0; i < n; i++) {
		fprintf(fp, "  %6u %10.0f %9.1f", steps[i].factor, steps[i].iops, steps[i].mbps);
		for (unsigned int o = 0; o < RP_IO__COUNT; o++) {
			bool any = false;

			for (unsigned int j = 0; j < n; j++)
				any |= steps[j].op_ios[o] != 0;
			if (any)
				fprintf(fp, " %12s %12s", cli_fmt_ns(steps[i].p50[o], a, sizeof(a)),
					cli_fmt_ns(steps[i].p99[o], b, sizeof(b)));
		}
		fprintf(fp, "%s\n", steps[i].knee ? "   <- knee (p99 grows faster than IOPS)" : "");
	}
}

void rp_report_sweep_json(FILE *fp, const struct rp_run_info *info, const struct rp_step *steps,
			  unsigned int n)
{
	int knee = -1;

	fputc('{', fp);
	json_info(fp, info);
	fprintf(fp, ",\"sweep\":[");
	for (unsigned int i = 0; i < n; i++) {
		bool first = true;

		if (steps[i].knee)
			knee = (int)steps[i].factor;
		fprintf(fp,
			"%s{\"scale\":%u,\"seconds\":%.6f,\"ios\":%" PRIu64
			",\"iops\":%.1f,\"mbps\":%.3f,\"p50_us\":%.3f,\"p99_us\":%.3f,\"ops\":{",
			i ? "," : "", steps[i].factor, steps[i].seconds, steps[i].ios,
			steps[i].iops, steps[i].mbps, (double)steps[i].p50_all / 1e3,
			(double)steps[i].p99_all / 1e3);
		for (unsigned int o = 0; o < RP_IO__COUNT; o++) {
			if (!steps[i].op_ios[o])
				continue;
			fprintf(fp,
				"%s\"%s\":{\"ios\":%" PRIu64 ",\"p50_us\":%.3f,\"p99_us\":%.3f}",
				first ? "" : ",", rp_io_op_name(o), steps[i].op_ios[o],
				(double)steps[i].p50[o] / 1e3, (double)steps[i].p99[o] / 1e3);
			first = false;
		}
		fprintf(fp, "}}");
	}
	fprintf(fp, "],\"knee\":");
	if (knee < 0)
		fprintf(fp, "null}\n");
	else
		fprintf(fp, "%d}\n", knee);
}
