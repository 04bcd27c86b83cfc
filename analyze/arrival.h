/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The arrival process of a phase, fitted to the gaps between its issues (a histogram): on/off
 * bursts, Poisson, or neither (fio's linear rate). Method in docs/ANALYSIS.md ("Arrival
 * process, per phase").
 */
#ifndef BIOTAPE_ANALYZE_ARRIVAL_H
#define BIOTAPE_ANALYZE_ARRIVAL_H

#include "hist.h"

#include <stdbool.h>
#include <stdint.h>

#define ARRIVAL_POISSON_KS 0.25 /* on-period gaps within this KS of an exponential: Poisson */

enum an_arrival_kind { AN_ARRIVAL_LINEAR, AN_ARRIVAL_POISSON, AN_ARRIVAL_ONOFF };

struct an_arrival {
	enum an_arrival_kind kind;
	bool poisson;	     /* the on-period gaps pass as exponential */
	double ks_exp;	     /* KS distance of the on-period gaps to an exponential of their mean */
	uint64_t long_min_ns; /* gaps from this length on may be pauses: max(1 ms, 10 x mean gap) */
	uint64_t long_n;     /* gaps >= long_min_ns */
	uint64_t off_n;	     /* of which pauses (off periods): the others are stalls in a burst */
	double off_ns;	     /* the pauses' total length */
	uint64_t off_min_ns; /* the shortest gap that is a pause */
};

/*
 * Fits the arrival process to gaps, the histogram of the gaps between successive issues over
 * active_ns (first to last issue). Never fails; an empty histogram is linear.
 */
void an_arrival_fit(struct an_arrival *a, const struct hist *gaps, uint64_t active_ns);

#endif
