/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Thresholds -> band. With n ascending thresholds t[0] < ... < t[n-1],
 * a packet whose flow had sent `before` bytes ahead of it goes to
 *
 *	band = #{ i : t[i] <= before }		(0 = top band, n = bottom)
 *
 * so the first packet of every flow (before = 0) is in band 0, however big
 * it is, and a flow moves down one band each time it crosses a threshold.
 * n <= SRFF_MAX_THRESHOLDS, so this is at most 15 compares.
 */
#ifndef _SRFF_BAND_H
#define _SRFF_BAND_H

#include "compat.h"

static inline unsigned int srff_band(const u64 *thresholds, unsigned int n,
				     u64 before)
{
	unsigned int band = 0;

	while (band < n && before >= thresholds[band])
		band++;
	return band;
}

#endif /* _SRFF_BAND_H */
