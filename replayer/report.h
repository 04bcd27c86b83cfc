/* SPDX-License-Identifier: GPL-2.0-only */
/* Rendering replay results: text summary, JSON, sweep table and its HTML/SVG plot. */
#ifndef RP_REPORT_H
#define RP_REPORT_H

#include <stdio.h>

#include "fidelity.h"
#include "scheduler.h"

struct rp_run_info {
	const char *trace;
	const char *engine;
	const char *timing;
	const char *layout;
	double speed;
	const char *order; /* --order mode name (NULL: none) */
	uint64_t think_ns; /* --order causal: the think-time window */
	const char *xthread; /* --order causal: the cross-thread rule's name (NULL: none) */
	unsigned int iodepth;
	bool iodepth_recorded; /* --iodepth recorded: the recording's most I/Os in flight */
	unsigned int hold_depth; /* per copy (rp_sched_cfg), 0: none */
	unsigned int scale;
	const char *const *targets;
	unsigned int ntargets;
	const struct rp_target *topen; /* the opened targets (kind, size), or NULL */
	unsigned int rt_priority;      /* the issuing thread's SCHED_FIFO priority, 0: normal */
	unsigned int spin_us;
	const struct rp_fid *fid; /* the fidelity section (NULL: none, e.g. a sweep) */
};

/* One step of a sweep (or the one run). */
struct rp_step {
	unsigned int factor;
	double seconds, iops, mbps;
	uint64_t ios;
	uint64_t op_ios[RP_IO__COUNT];
	uint64_t p50[RP_IO__COUNT], p99[RP_IO__COUNT];
	uint64_t p50_all, p99_all;
	bool knee;
};

/* Engine op name: "read", "write", "flush", "discard", "write_zeroes". */
const char *rp_io_op_name(unsigned int op);
/* Measured seconds of a run (first measured issue to last completion). */
double rp_stats_seconds(const struct rp_stats *st);
void rp_step_from_stats(struct rp_step *s, unsigned int factor, const struct rp_stats *st);
/* Marks the knee: the first step whose p99 grows by a larger factor than its IOPS. */
int rp_steps_mark_knee(struct rp_step *steps, unsigned int n);

void rp_report_text(FILE *fp, const struct rp_run_info *info, const struct rp_stats *st);
void rp_report_json(FILE *fp, const struct rp_run_info *info, const struct rp_stats *st);
void rp_report_sweep_text(FILE *fp, const struct rp_run_info *info, const struct rp_step *steps,
			  unsigned int n);
void rp_report_sweep_json(FILE *fp, const struct rp_run_info *info, const struct rp_step *steps,
			  unsigned int n);
/* A single run's page: its figures and fidelity section, with inline SVG charts. */
void rp_report_html(FILE *fp, const struct rp_run_info *info, const struct rp_stats *st);
/* A self-contained HTML page with an inline SVG plot of IOPS versus p50/p99 latency. */
void rp_report_sweep_html(FILE *fp, const struct rp_run_info *info, const struct rp_step *steps,
			  unsigned int n);

#endif
