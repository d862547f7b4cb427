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

void srff_auto_update(struct srff_auto *a, const struct srff_sizes *now)
{
	unsigned int b;

	for (b = 0; b < SRFF_SIZES_BUCKETS; b++) {
		/* Per-CPU sums only grow; a CPU's increment of flows may be
		 * seen before its bytes (or after): never subtract below 0.
		 */
		u64 df = now->flows[b] - min(now->flows[b], a->seen.flows[b]);
		u64 db = now->bytes[b] - min(now->bytes[b], a->seen.bytes[b]);

		a->flows[b] -= a->flows[b] >> SRFF_AUTO_DECAY_SHIFT;
		a->flows[b] += df << SRFF_AUTO_FLOW_SHIFT;
		a->bytes[b] -= a->bytes[b] >> SRFF_AUTO_DECAY_SHIFT;
		a->bytes[b] += db;
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
	u64 total = 0, below, above = 0, t, prev = 0;
	unsigned int b, k, i;

	if (!n || !min_flows || srff_auto_flows(a) < min_flows)
		return -EAGAIN;
	for (b = 0; b < SRFF_SIZES_BUCKETS; b++) {
		total += a->bytes[b];
		above += a->flows[b] >> SRFF_AUTO_FLOW_SHIFT;
	}

	/*
	 * Before crossing t = low(k), every flow sends min(size, t): all of
	 * its bytes if its bucket is below k (`below`: their sum), t if not
	 * (`above`: how many). Bucket bounds are the only candidates, so no
	 * bucket straddles t. Bands 0..i carry (i + 1) / (n + 1) of the
	 * bytes at the smallest such t; k only moves up.
	 */
	k = 1;
	below = a->bytes[0];
	above -= a->flows[0] >> SRFF_AUTO_FLOW_SHIFT;
	for (i = 0; i < n; i++) {
		u64 want = div64_u64(total, n + 1) * (i + 1);

		for (; k < SRFF_SIZES_BUCKETS - 1; k++) {
			u64 lo = srff_sizes_low(k);

			if (above && lo > div64_u64(U64_MAX - below, above))
				break;		/* would overflow: far enough */
			if (below + above * lo >= want)
				break;
			below += a->bytes[k];
			above -= a->flows[k] >> SRFF_AUTO_FLOW_SHIFT;
		}
		t = max(srff_sizes_low(k), SRFF_AUTO_FLOOR);
		if (i)
			t = max(t, prev * SRFF_AUTO_SPACING);
		out[i] = t;
		prev = t;
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
