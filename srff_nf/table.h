/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The flow table: one per network namespace.
 *
 *   buckets[hash & hash_mask] --> flow --> flow --> NULL   (hlist, RCU)
 *   locks[hash & lock_mask]      one spinlock guards many buckets
 *
 * Locking (all of it lives in table.c):
 * - Lookups walk a bucket under RCU only (the packet path holds
 *   rcu_read_lock from netfilter). Byte counts are atomic64, last_seen is a
 *   plain word written with WRITE_ONCE, the closed bit is set_bit: a flow
 *   is never locked to be accounted.
 * - Insert and unlink take the bucket's spinlock with BH off (the hook can
 *   run in process context on local output and in softirq on forward).
 *   Insert re-checks the bucket under the lock, so a key is never in the
 *   table twice.
 * - `count` is reserved with atomic_inc_return() *before* anything is
 *   allocated and given back on every failure path: the table never holds,
 *   nor allocates for, more than max_flows flows.
 * - Unlinked flows are freed after an RCU grace period (call_rcu); module
 *   exit waits for them with rcu_barrier() before destroying the cache.
 * - The hash is SipHash-2-4 with a per-table random key, so a remote peer
 *   cannot aim many flows at one bucket.
 */
#ifndef _SRFF_TABLE_H
#define _SRFF_TABLE_H

#include "compat.h"
#include "flowkey.h"

#define SRFF_FLOW_CLOSED_BIT	0	/* TCP FIN or RST seen */

struct srff_flow {
	struct hlist_node node;
	struct srff_key key;
	atomic64_t bytes;		/* sent since creation or idle reset */
	unsigned long last_seen;	/* jiffies of the latest packet */
	unsigned long created;		/* jiffies */
	unsigned long flags;		/* SRFF_FLOW_*_BIT */
	struct rcu_head rcu;
};

struct srff_table {
	struct hlist_head *buckets;
	spinlock_t *locks;
	unsigned int hash_mask;
	unsigned int lock_mask;
	unsigned int max_flows;		/* READ_ONCE: may change at run time */
	atomic_t count;			/* flows linked or being linked */
	atomic_t gen;			/* bumped on every link and unlink */
	siphash_key_t secret;
	atomic64_t gc_freed;
	atomic64_t fin_retired;
	atomic64_t flushed;
	atomic64_t gc_runs;
	unsigned int gc_last_chain;	/* longest chain of the latest GC */
};

/* A flow whose FIN/RST was seen is retired once idle this long, so that a
 * retransmitted FIN still finds it.
 */
#define SRFF_CLOSED_LINGER	(HZ / 5)

/* Bucket locks: enough to keep insert contention low, few enough to stay
 * small (4 KiB of spinlocks without lock debugging).
 */
#define SRFF_MAX_LOCKS		1024

enum srff_sweep {
	SRFF_SWEEP_GC,		/* idle or closed flows; counted */
	SRFF_SWEEP_FLUSH,	/* every flow; counted as flushed */
	SRFF_SWEEP_ALL,		/* every flow, at teardown; not counted */
};

int srff_table_cache_init(void);
void srff_table_cache_uninit(void);

int srff_table_init(struct srff_table *t, unsigned int buckets,
		    unsigned int max_flows);
void srff_table_uninit(struct srff_table *t);

struct srff_flow *srff_table_get(struct srff_table *t,
				 const struct srff_key *key,
				 unsigned long now, bool *created);
unsigned int srff_table_sweep(struct srff_table *t, enum srff_sweep mode,
			      unsigned long now, unsigned long idle_timeout);
int srff_table_walk(struct srff_table *t, unsigned int *bucket,
		    unsigned int *pos,
		    int (*fn)(const struct srff_flow *f, void *arg), void *arg);

static inline unsigned int srff_table_count(const struct srff_table *t)
{
	return atomic_read(&t->count);
}

/*
 * Account @len bytes to @f and return what it had sent before them. With
 * a non-zero @idle_reset, a flow idle for that long starts again at 0, so
 * a new response on a kept-alive connection starts in the top band.
 */
static inline u64 srff_flow_account(struct srff_flow *f, unsigned int len,
				    unsigned long now,
				    unsigned long idle_reset)
{
	unsigned long last = READ_ONCE(f->last_seen);

	if (last != now)
		WRITE_ONCE(f->last_seen, now);
	if (idle_reset && time_after_eq(now, last + idle_reset)) {
		atomic64_set(&f->bytes, len);
		return 0;
	}
	return atomic64_fetch_add(len, &f->bytes);
}

static inline void srff_flow_close(struct srff_flow *f)
{
	if (!test_bit(SRFF_FLOW_CLOSED_BIT, &f->flags))
		set_bit(SRFF_FLOW_CLOSED_BIT, &f->flags);
}

#endif /* _SRFF_TABLE_H */
