/* SPDX-License-Identifier: GPL-2.0-only */
/* fio job files reproducing an analysed workload (biotape profile). */
#ifndef BIOTAPE_ANALYZE_PROFILE_H
#define BIOTAPE_ANALYZE_PROFILE_H

#include "render.h"

#include <stdio.h>

#define PROFILE_MAX_PROCS 16   /* --per-process: jobs for at most this many processes */
#define PROFILE_BSSPLIT_MAX 64 /* fio's limit on bssplit entries per direction */

/* Where a job sits in a profile with phases (profile --phases). */
struct profile_phase {
	int index, count;     /* phase index (1-based) of count */
	uint64_t start_ns;    /* relative to the trace start */
	uint64_t duration_ns; /* the phase's length: the job's runtime, and its rates' divisor */
	bool stonewall;	      /* the first job of a phase after the first: wait for the previous */
};

/* A complete job file: [global] and one job for the whole analysis. */
int profile_write(FILE *fp, const struct report *r, const char *unused, int unused2);
/* The header comments and [global] section (per_process: jobs follow for each process;
 * nphases > 0: the jobs are phases run in sequence, each with its own runtime). */
int profile_write_global(FILE *fp, const struct report *r, bool per_process, int nphases);
/* One job section for an analysis (pid/comm name the job when pid != 0; ph: the phase it
 * reproduces, with its arrival process, or NULL for the flat job). */
int profile_write_job(FILE *fp, const struct report *r, uint32_t pid, const char *comm,
		      const struct profile_phase *ph);

/* Integer percentages (sum 100) from weights by largest remainder; n <= 256. */
void profile_round_percent(const double *w, int n, int *out);

#endif
