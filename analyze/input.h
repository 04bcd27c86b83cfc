/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading traces into the statistics core: several files merged by issue time (k-way merge),
 * devices unified by name and dev_t across files, time window / device / pid filters.
 */
#ifndef BIOTAPE_ANALYZE_INPUT_H
#define BIOTAPE_ANALYZE_INPUT_H

#include "align.h"
#include "split.h"
#include "stats.h"

#include <stdbool.h>
#include <stdint.h>

struct an_filter {
	bool has_from, has_to;
	uint64_t from_ns, to_ns; /* relative to the trace start (earliest first issue) */
	const char *device;	 /* name, "major:minor" or table index; NULL: every device */
	bool has_pid;
	uint32_t pid;
	enum an_align align; /* several files: how their clocks are put on one timeline */
	/* parallel analysis: only this slice (split.h), and the result is not finished; no
	 * window, device or pid filter then */
	struct an_slice *slice;
};

#define AN_MAX_FILES 256

/* How one file was placed on the timeline (several files, or a multi-host trace). */
struct an_file_clock {
	char host[BTAPE_NAME_MAX]; /* its label in per-host rows */
	int64_t offset_start_ns, offset_stop_ns; /* corrections at its first and last sync */
	uint64_t uncertainty_ns;
	double drift_ppm;
};

/* How one file ended, when not as planned (info->incomplete counts them). */
struct an_file_end {
	bool cut_short;	    /* no footer: read up to its last complete frame (writer killed) */
	bool stopped_early; /* its footer says the run stopped early (a peer died, interrupted) */
	int32_t rank;	    /* its rank in a cluster recording, else -1 */
	char host[BTAPE_NAME_MAX]; /* its host's label (multi-host), else its hostname */
};

struct an_info {
	int nfiles;
	char tool[BTAPE_NAME_MAX], hostname[BTAPE_NAME_MAX], source[BTAPE_NAME_MAX];
	uint64_t trace_start_ns, trace_end_ns; /* earliest first / latest last issue (0: unknown) */
	uint64_t events_read, events_selected;
	uint64_t lost_events;
	bool recovered;	    /* some file was cut short (read up to its last complete frame) */
	bool filtered;	    /* a window, device or pid filter was given */
	char devices[1024]; /* device names, for messages */
	enum an_align align;  /* the alignment applied (AN_ALIGN_NONE: times as recorded) */
	bool multi_host;      /* per-host rows (stats.hosts) */
	char cluster_id[BTAPE_NAME_MAX], reference[BTAPE_NAME_MAX]; /* --align cluster */
	struct an_file_clock clocks[AN_MAX_FILES]; /* per file, when align is not none */
	int incomplete;				   /* files with cut_short or stopped_early */
	struct an_file_end ends[AN_MAX_FILES];	   /* per file */
};

/*
 * Reads PATHS (issue order, merged) through the filter into a new analysis. When
 * so->interval_ns is 0 a timeline interval of about 1/100 of the selected range is chosen.
 * Several files are placed on one timeline as f->align says (align.h); files that cannot be
 * are refused with -EINVAL. Returns 0, -EINVAL with msg "no device ..." when the device
 * filter matches nothing, or another -errno with a one-line message in msg.
 */
int an_run(char *const *paths, int npaths, const struct an_filter *f, const struct stats_opts *so,
	   struct stats **out, struct an_info *info, char *msg, size_t msglen);

#endif
