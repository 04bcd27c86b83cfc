// SPDX-License-Identifier: GPL-2.0-only
/* Round chart ticks with units (see chart.h). */
#include "chart.h"

#include <math.h>
#include <stdio.h>

static void pick_unit(struct chart_axis *a, double max)
{
	static const char *const count[] = {"", "k", "M", "G", "T"};
	static const char *const bytes[] = {" B", " KiB", " MiB", " GiB", " TiB"};
	static const char *const ns[] = {" ns", " µs", " ms", " s"};
	int i = 0;

	a->scale = 1;
	a->suffix = "";
	switch (a->unit) {
	case CHART_COUNT:
		for (; i < 4 && max >= 1000 * a->scale; i++)
			a->scale *= 1000;
		a->suffix = count[i];
		break;
	case CHART_BYTES:
		for (; i < 4 && max >= 1024 * a->scale; i++)
			a->scale *= 1024;
		a->suffix = bytes[i];
		break;
	case CHART_NS:
		for (; i < 3 && max >= 1000 * a->scale; i++)
			a->scale *= 1000;
		a->suffix = ns[i];
		break;
	default:
		break;
	}
}

void chart_axis_init(struct chart_axis *a, double max, int max_ticks, enum chart_unit unit)
{
	if (!(max > 0) || !isfinite(max))
		max = 1;
	if (max_ticks < 1)
		max_ticks = 1;
	a->unit = unit;
	pick_unit(a, max);
	double m = max / a->scale, raw = m / max_ticks, mag = pow(10, floor(log10(raw)));
	double r = raw / mag, step;

	step = r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10;
	step *= mag;
	a->nticks = (int)ceil(m / step - 1e-9);
	if (a->nticks < 1)
		a->nticks = 1;
	a->decimals = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
	a->step = step * a->scale;
	a->top = a->nticks * a->step;
}

const char *chart_axis_label(const struct chart_axis *a, double v, char *buf, size_t len)
{
	if (v == 0)
		snprintf(buf, len, "0");
	else
		snprintf(buf, len, "%.*f%s", a->decimals, v / a->scale, a->suffix);
	return buf;
}
