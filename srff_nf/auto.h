/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Automatic thresholds: learnt from the sizes of the flows that ended.
 *
 * Every SRFF_AUTO_PERIOD the GC worker folds what the flow-size histogram
 * (sizes.h) gained since the previous period into a decayed copy,
 *
 *	recent = recent - recent / 2^SRFF_AUTO_DECAY_SHIFT + new,
 *
 * so a flow's weight halves every ~44 periods (~2 min at the default GC
 * interval): the thresholds follow a changing mix within minutes and are
 * not moved by a burst. The decay applies only while `recent` holds more
 * than SRFF_AUTO_KEEP times min_flows: in steady state it holds 64 periods'
 * flows, which a server ending fewer than min_flows / 64 flows a period
 * (16 a second by default) would never bring to min_flows; its window is
 * instead the last ~SRFF_AUTO_KEEP * min_flows flows, however long they
 * took. Once `recent` holds min_flows flows, the rule
 * below turns it into thresholds, for as many bands as are configured,
 * and they are installed (the same RCU config swap as a netlink SET) only
 * if one of them moved by more than a quarter (hysteresis: a steady mix
 * never moves them).
 *
 * The rule, "geo" (docs/thresholds.md chose it by simulation over the web
 * search, data mining and Pareto mixes, against equal-bytes, fixed
 * quantiles and PIAS-style searched thresholds): the first threshold is a
 * quantile of flow sizes, the others grow geometrically,
 *
 *	2 bands:  t1 = p60
 *	3 bands:  t1 = p50,  t2 = 32 t1
 *	4+ bands: t1 = p60,  t(i+1) = 8 t(i)
 *
 * a quantile read as the upper bound of the bucket that holds it, and t1
 * at least SRFF_AUTO_FLOOR: a TCP flow's first skb is a GSO packet of ~15
 * KB, and a lower threshold only demotes its second skb. It needs flow
 * counts alone, no link rate or load (which PIAS's optimisation needs and
 * srff does not know); bucket bounds from 1 KiB up scale by powers of two,
 * so every threshold is a bucket bound.
 *
 * Pure logic: built in the kernel and, unchanged, in user space (tests).
 * The state is the GC worker's alone: no locking.
 */
#ifndef _SRFF_AUTO_H
#define _SRFF_AUTO_H

#include "sizes.h"

#define SRFF_AUTO_DECAY_SHIFT	6		/* 1/64 per period */
#define SRFF_AUTO_FLOW_SHIFT	8		/* recent flows, x256 */
#define SRFF_AUTO_FLOOR		(16ULL << 10)	/* bytes */
#define SRFF_AUTO_MIN_FLOWS	1000		/* default of auto_min_flows */
#define SRFF_AUTO_KEEP		4		/* no decay below 4 * min_flows */

struct srff_auto {
	struct srff_sizes seen;		/* the histogram at the last update */
	u64 flows[SRFF_SIZES_BUCKETS];	/* recent, << SRFF_AUTO_FLOW_SHIFT */
};

/* Flows recorded in @now (the histogram's reason counters). Compared with
 * that of the copy's `seen`: unchanged, there is nothing to update.
 */
u64 srff_auto_ended(const struct srff_sizes *now);

/* Fold what @now gained since the previous update into the recent copy;
 * decay it first if it holds more than SRFF_AUTO_KEEP * @min_flows flows.
 */
void srff_auto_update(struct srff_auto *a, const struct srff_sizes *now,
		      u64 min_flows);

/* The recent flows, rounded down. */
u64 srff_auto_flows(const struct srff_auto *a);

/*
 * @n thresholds from the recent copy, into @out (ascending). Returns 0, or
 * -EAGAIN when it holds fewer than @min_flows flows, or -ERANGE when the
 * thresholds would not fit in 64 bits (@out is then not to be used).
 */
int srff_auto_thresholds(const struct srff_auto *a, unsigned int n,
			 u64 min_flows, u64 *out);

/* Whether @new differs enough from @old (@n each) to be installed. */
bool srff_auto_moved(const u64 *old, const u64 *new, unsigned int n);

#endif /* _SRFF_AUTO_H */
