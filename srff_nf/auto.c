// SPDX-License-Identifier: GPL-2.0
/*
 * Automatic thresholds; auto.h states the rule. Built into the module and,
 * unchanged, into the user-space library for tests.
 */
#include "auto.h"

u64 srff_auto_ended(const struct srff_sizes *now)
{
	return now->reason[SRFF_SIZE_FIN] + now->reason[SRFF_SIZE_IDLE] +
	       now->reason[SRFF_SIZE_MSG];
}

void srff_auto_update(struct srff_auto *a, const struct srff_sizes *now,
		      u64 min_flows)
{
	/* A slow server keeps its last KEEP * min_flows flows undecayed. */
	bool decay = srff_auto_flows(a) > SRFF_AUTO_KEEP * min_flows;
	unsigned int b;

	for (b = 0; b < SRFF_SIZES_BUCKETS; b++) {
		/* Per-CPU sums only grow, but a sum read while a CPU adds
		 * may be read again lower by a racing reader: never below 0.
		 */
		u64 df = now->flows[b] - min(now->flows[b], a->seen.flows[b]);

		if (decay)
			a->flows[b] -= a->flows[b] >> SRFF_AUTO_DECAY_SHIFT;
		a->flows[b] += df << SRFF_AUTO_FLOW_SHIFT;
	}
	a->seen = *now;
}

u64 srff_auto_flows(const struct srff_auto *a)
{
	u64 n = 0;
	unsigned int b;

	for (b = 0; b < SRFF_SIZES_BUCKETS; b++)
		n += a->flows[b];
	return n >> SRFF_AUTO_FLOW_SHIFT;
}

int srff_auto_thresholds(const struct srff_auto *a, unsigned int n,
			 u64 min_flows, u64 *out)
{
	unsigned int b = 0, i, pct = n == 2 ? 50 : 60, shift = n == 2 ? 5 : 3;
	u64 total = 0, need, cum = 0;

	if (!n || !min_flows ||
	    srff_auto_flows(a) < min_flows)
		return -EAGAIN;
	for (b = 0; b < SRFF_SIZES_BUCKETS; b++)
		total += a->flows[b];
	/* The bucket holding the pct-th percentile of flows; its upper
	 * bound, the next bucket's low one, is the first threshold.
	 */
	need = div64_u64(total * pct + 99, 100);
	for (b = 0; b < SRFF_SIZES_BUCKETS && cum < need; b++)
		cum += a->flows[b];
	out[0] = max(srff_sizes_low(min_t(unsigned int, b, SRFF_SIZES_BUCKETS - 1)),
		     SRFF_AUTO_FLOOR);
	for (i = 1; i < n; i++) {
		if (out[i - 1] > (U64_MAX >> shift))
			return -ERANGE;		/* not ascending: keep the old */
		out[i] = out[i - 1] << shift;
	}
	return 0;
}

bool srff_auto_moved(const u64 *old, const u64 *new, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		u64 d = old[i] > new[i] ? old[i] - new[i] : new[i] - old[i];

		if (d > old[i] / 4)
			return true;
	}
	return false;
}
