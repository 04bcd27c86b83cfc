/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading traces into the statistics core: several files merged by issue time (k-way merge),
 * devices unified by name and dev_t across files, time window / device / pid filters.
 */
#ifndef BIOTAPE_ANALYZE_INPUT_H
#define BIOTAPE_ANALYZE_INPUT_H

#include "stats.h"

#include <stdbool.h>
#include <stdint.h>

struct an_filter {
	bool has_from, has_to;
	uint64_t from_ns, to_ns; /* relative to the trace start (earliest first issue) */
	const char *device;	 /* name, "major:minor" or table index; NULL: every device */
	bool has_pid;
	uint32_t pid;
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
};

/*
 * Reads PATHS (issue order, merged) through the filter into a new analysis. When
 * so->interval_ns is 0 a timeline interval of about 1/100 of the selected range is chosen.
 * Returns 0, -ENOENT with msg "no device ..." when the device filter matches nothing,
 * or another -errno with a one-line message in msg.
 */
int an_run(char *const *paths, int npaths, const struct an_filter *f, const struct stats_opts *so,
	   struct stats **out, struct an_info *info, char *msg, size_t msglen);

#endif
