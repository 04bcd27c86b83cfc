/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One timeline for several traces: which clock correction each file gets before its events are
 * merged (docs/ANALYSIS.md, "Several hosts"). No I/O: the plan is made from the metadata.
 */
#ifndef BIOTAPE_ANALYZE_ALIGN_H
#define BIOTAPE_ANALYZE_ALIGN_H

#include "btape.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum an_align {
	AN_ALIGN_AUTO,	  /* cluster when the files are one cluster recording, else none when
			   * they are one host's, else refused */
	AN_ALIGN_CLUSTER, /* the stored clock offsets of one cluster recording */
	AN_ALIGN_START,	  /* every file's first issue at the earliest one */
	AN_ALIGN_WALL,	  /* through each file's wall-clock anchor (as good as the hosts' NTP) */
	AN_ALIGN_NONE,	  /* the times as recorded */
};

/* One file of the plan: what the analysis needs to know of it. */
struct an_align_in {
	const char *path;
	const struct btape_meta *meta;
	uint64_t first_ns; /* first issue on the file's own clock */
	bool has_first;
};

struct an_align_out {
	struct btape_cluster clock; /* correction: t -> btape_cluster_to_reference(&clock, t);
				     * nsync 0: none */
	char host[BTAPE_NAME_MAX];  /* this file's label in per-host rows ("" : single host) */
};

/* "auto", "cluster", "start", "wall", "none" -> mode; -EINVAL for another name. */
int an_align_parse(const char *name, enum an_align *mode);
const char *an_align_name(enum an_align mode);

/*
 * Plans the alignment of n files. Returns the mode applied (never AN_ALIGN_AUTO), or -EINVAL
 * with a one-line reason in msg when the files cannot be placed on one timeline that way.
 * *multi_host is set when the files (or a merged trace's devices) come from several hosts:
 * then out[k].host labels file k (the host name; "host/rR" or "host/#k" when two files share
 * a host name).
 */
int an_align_plan(enum an_align mode, const struct an_align_in *in, int n,
		  struct an_align_out *out, bool *multi_host, char *msg, size_t msglen);

/*
 * Moves every time of ev by clock's correction at its issue (latencies stay exact; issue
 * order is kept, the correction changing by less than 1 ns per ns), clamped to u64.
 */
void an_align_event(const struct btape_cluster *clock, struct btape_event *ev);

#endif
