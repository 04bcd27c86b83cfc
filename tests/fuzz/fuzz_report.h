/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * For the fuzz targets that check one analysis against another made another way
 * (fuzz_split.c, fuzz_stats_batch.c): the two must give the same report.
 */
#ifndef BIOTAPE_FUZZ_REPORT_H
#define BIOTAPE_FUZZ_REPORT_H

#include "input.h"
#include "stats.h"

/*
 * Aborts, after saying where on stderr, unless a and b (finished, with their inputs' info)
 * give the same JSON report byte for byte and the same heat map on every device (the heat map
 * is in the HTML report only). what names the two ways, for the message.
 */
void fuzz_same_report(const char *what, const struct stats *a, const struct an_info *ia,
		      const struct stats *b, const struct an_info *ib, char *path);

#endif
