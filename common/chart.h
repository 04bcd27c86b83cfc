/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Chart axes for the HTML reports (analyze, compare, replay --sweep): round ticks (1, 2 or 5 x
 * 10^k in the axis' unit) and labels with units (k/M/G for counts, KiB/MiB/GiB for bytes,
 * ns/µs/ms/s for times).
 */
#ifndef BIOTAPE_CHART_H
#define BIOTAPE_CHART_H

#include <stddef.h>

enum chart_unit { CHART_PLAIN, CHART_COUNT, CHART_BYTES, CHART_NS };

struct chart_axis {
	enum chart_unit unit;
	double scale;	    /* unit multiple the labels are in (1024 for KiB, 1e3 for k, ...) */
	const char *suffix; /* its name ("k", " KiB", " ms") */
	double step;	    /* tick step, in the axis' own unit (not scaled) */
	double top;	    /* the axis maximum: the last tick, >= the data's maximum */
	int nticks;	    /* ticks above 0: ticks are k * step for k = 0..nticks */
	int decimals;	    /* digits after the point the labels need */
};

/* An axis from 0 to at least max (> 0; else 0..1) with at most max_ticks steps (>= 1). */
void chart_axis_init(struct chart_axis *a, double max, int max_ticks, enum chart_unit unit);
/* Label of value v on the axis ("0", "2.5k", "512 KiB", "1.5 ms"). */
const char *chart_axis_label(const struct chart_axis *a, double v, char *buf, size_t len);

#endif
