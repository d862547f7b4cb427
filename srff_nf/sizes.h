/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The flow-size histogram: how much each finished flow of a namespace sent.
 *
 * A flow's size is recorded once, when it ends (table.c and table.h):
 *   SRFF_SIZE_FIN   its FIN or RST was sent: GC retires it after
 *                   SRFF_CLOSED_LINGER, or a full table evicts it, or a SYN
 *                   on the same 4-tuple starts a new connection;
 *   SRFF_SIZE_IDLE  it sent nothing for idle_timeout (GC), or for
 *                   SRFF_EVICT_MIN_IDLE in a full table (evicted);
 *   SRFF_SIZE_MSG   a response on a kept-alive connection, ended by an idle
 *                   gap of idle_reset (srff_flow_account's reset).
 * Flushed flows and a namespace's teardown record nothing. The size is what
 * srff counted: what the qdisc counts, every segment's headers included.
 *
 * Buckets are log-linear, as HdrHistogram's, over 256-byte units: the first
 * four buckets are one unit wide (0-255, 256-511, 512-767, 768-1023 bytes),
 * then every power of two is split into four equal buckets (1024-1279, ...,
 * 1792-2047, 2048-2559, ...), so a bucket is at most a quarter of its lower
 * bound wide, and a quantile read at a bucket's bounds is off by < 25 %.
 * 128 buckets reach 2 TiB; bigger flows are counted in the last.
 *
 * Each CPU has its own copy (struct srff_sizes, written with this_cpu ops
 * from GC, eviction, a SYN or an idle reset: never per packet); readers sum
 * them (srff_table_sizes_read, table.c).
 */
#ifndef _SRFF_SIZES_H
#define _SRFF_SIZES_H

#include "compat.h"

#define SRFF_SIZES_UNIT_SHIFT	8	/* 256-byte units */
#define SRFF_SIZES_SUB_SHIFT	2	/* 4 buckets per power of two */
#define SRFF_SIZES_SUB		(1U << SRFF_SIZES_SUB_SHIFT)
#define SRFF_SIZES_BUCKETS	128

enum srff_size_reason {
	SRFF_SIZE_FIN,
	SRFF_SIZE_IDLE,
	SRFF_SIZE_MSG,
	SRFF_SIZE_REASONS
};

struct srff_sizes {
	u64 flows[SRFF_SIZES_BUCKETS];
	u64 bytes[SRFF_SIZES_BUCKETS];
	u64 reason[SRFF_SIZE_REASONS];	/* flows, by how they ended */
};

/* The bucket of a flow that sent @bytes. */
static inline unsigned int srff_sizes_bucket(u64 bytes)
{
	u64 u = bytes >> SRFF_SIZES_UNIT_SHIFT;
	unsigned int msb, b;

	if (u < SRFF_SIZES_SUB)
		return u;
	msb = fls64(u) - 1;			/* >= SRFF_SIZES_SUB_SHIFT */
	b = ((msb - SRFF_SIZES_SUB_SHIFT + 1) << SRFF_SIZES_SUB_SHIFT) |
	    ((u >> (msb - SRFF_SIZES_SUB_SHIFT)) & (SRFF_SIZES_SUB - 1));
	return min_t(unsigned int, b, SRFF_SIZES_BUCKETS - 1);
}

/* The smallest size bucket @b counts; bucket b holds [low(b), low(b + 1)),
 * the last one everything from its low bound up.
 */
static inline u64 srff_sizes_low(unsigned int b)
{
	unsigned int msb, sub;

	if (b < SRFF_SIZES_SUB)
		return (u64)b << SRFF_SIZES_UNIT_SHIFT;
	msb = (b >> SRFF_SIZES_SUB_SHIFT) + SRFF_SIZES_SUB_SHIFT - 1;
	sub = b & (SRFF_SIZES_SUB - 1);
	return ((u64)(SRFF_SIZES_SUB | sub) << (msb - SRFF_SIZES_SUB_SHIFT))
		<< SRFF_SIZES_UNIT_SHIFT;
}

/* Record a flow of @bytes that ended for @reason. Any context. */
static inline void srff_sizes_add(struct srff_sizes __percpu *s, u64 bytes,
				  enum srff_size_reason reason)
{
	unsigned int b = srff_sizes_bucket(bytes);

	this_cpu_inc(s->flows[b]);
	this_cpu_add(s->bytes[b], bytes);
	this_cpu_inc(s->reason[reason]);
}

#endif /* _SRFF_SIZES_H */
