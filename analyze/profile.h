/* SPDX-License-Identifier: GPL-2.0-only */
/* fio job files reproducing an analysed workload (biotape profile). */
#ifndef BIOTAPE_ANALYZE_PROFILE_H
#define BIOTAPE_ANALYZE_PROFILE_H

#include "render.h"

#include <stdio.h>

#define PROFILE_MAX_PROCS 16   /* --per-process: jobs for at most this many processes */
#define PROFILE_BSSPLIT_MAX 64 /* fio's limit on bssplit entries per direction */

/* A complete job file: [global] and one job for the whole analysis. */
int profile_write(FILE *fp, const struct report *r, const char *unused, int unused2);
/* The header comments and [global] section (per_process: jobs follow for each process). */
int profile_write_global(FILE *fp, const struct report *r, bool per_process);
/* One job section for an analysis (pid/comm name the job when pid != 0). */
int profile_write_job(FILE *fp, const struct report *r, uint32_t pid, const char *comm);

/* Integer percentages (sum 100) from weights by largest remainder; n <= 256. */
void profile_round_percent(const double *w, int n, int *out);

#endif
