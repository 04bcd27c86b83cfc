/* SPDX-License-Identifier: GPL-2.0-only */
/* A cmocka check of a histogram quantile against the exact value (include after cmocka.h). */
#ifndef BIOTAPE_TEST_HIST_ASSERT_H
#define BIOTAPE_TEST_HIST_ASSERT_H

#include <math.h>
#include <stdint.h>

#include "hist.h"

/* |got - want| within the histogram's stated bound */
static inline void assert_hist_close(uint64_t got, uint64_t want)
{
	double err = fabs((double)got - (double)want);

	if (err > HIST_REL_ERROR * (double)want + 0.5)
		fail_msg("got %llu want %llu (rel err %.4f > %.4f)", (unsigned long long)got,
			 (unsigned long long)want, err / (double)want, HIST_REL_ERROR);
}

#endif
