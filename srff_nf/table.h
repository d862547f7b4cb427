/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The flow table: one per network namespace (docs/design.md, "The table").
 *
 *   tbl->b[hash & tbl->mask] --> flow --> flow --> NULL   (hlist, RCU)
 *   locks[hash & lock_mask]       one spinlock guards many buckets
 *
 * Locking (all of it in table.c):
 * - Lookups walk a bucket under RCU only (netfilter holds rcu_read_lock).
 *   Accounting waits for no lock: bytes are atomic64, last_seen is written
 *   with WRITE_ONCE (cmpxchg at an idle reset), flags with bitops, and
 *   SRFF_FLOW_RESTART_BIT is a bit lock that is only ever tried.
 * - Insert, eviction and unlink take the lock of the key's hash with BH off
 *   (the hook also runs in process context, on local output). Insert
 *   re-checks the bucket under it: a key is never in the table twice. A
 *   table never has fewer buckets than locks, so a bucket's flows share a
 *   lock in an array of any size, and a resize never changes a flow's lock.
 * - A new flow takes a slot of `flows` and of each pool in `shared` before
 *   anything is allocated, and gives them back on every failure path and
 *   when it is unlinked: nothing is allocated past a cap (a lowered
 *   max_flows takes no flow back; GC does). A compare-and-swap loop never
 *   raises a pool's count above its cap; slots are taken a batch at a time
 *   into per-CPU caches (struct srff_slots): fewer than 2 * batch per CPU,
 *   max / 16 in all, plus one batch while softirq puts interrupt a take
 *   between pool and cache. So a pool may say "full" that much early, never
 *   late.
 * - Unlinked flows are freed after an RCU grace period (call_rcu); module
 *   exit waits for them with rcu_barrier() before destroying the cache.
 *
 * Resizing (srff_table_resize; process context, under resize_lock, which
 * sweeps take too). Every flow has two hlist nodes; tbl->node says which
 * one links flows into that array. A resize:
 *   1. allocates the new array, sets t->future and takes every lock once:
 *      a writer that sees `future` (read under its lock) links and unlinks
 *      in both arrays, and one that did not has finished;
 *   2. links every flow of the old array into the new one through the
 *      other node, under each bucket's lock, rescheduling between buckets
 *      (a flow a writer already linked there is skipped: its node is
 *      hashed);
 *   3. publishes the new array (rcu_assign_pointer): readers walk one
 *      complete array or the other, and the packet path never waits;
 *   4. synchronize_rcu(): no reader or writer holds the old array any
 *      more. Then clears `future`, marks every flow's old node unhashed,
 *      for the next resize, and frees the old array.
 */
#ifndef _SRFF_TABLE_H
#define _SRFF_TABLE_H

#include "compat.h"
#include "flowkey.h"
#include "sizes.h"

#define SRFF_FLOW_CLOSED_BIT	0	/* TCP FIN or RST seen */
#define SRFF_FLOW_PENDING_BIT	1	/* local TCP: the latest packet left
					 * written data unsent in its socket */
#define SRFF_FLOW_RESTART_BIT	2	/* an idle reset or a SYN restart is
					 * rewriting the count (bit lock) */

struct srff_flow {
	struct hlist_node node[2];	/* links in t->tbl, and in t->future
					 * during a resize (which: tbl->node) */
	struct srff_key key;
	atomic64_t bytes;		/* sent since creation or idle reset */
	unsigned long last_seen;	/* jiffies of the latest packet */
	unsigned long created;		/* jiffies */
	unsigned long flags;		/* SRFF_FLOW_*_BIT */
	struct rcu_head rcu;
};

/* A capped count of flows: a table's own, or a pool tables share (main.c).
 * `count` is what was handed out, to flows and to the per-CPU caches;
 * `cache` is each CPU's slots not used yet, or given back and not returned.
 */
struct srff_slots {
	atomic_t count;			/* never raised above max */
	unsigned int max;		/* READ_ONCE */
	unsigned int batch;		/* READ_ONCE; 0: no caching */
	unsigned int __percpu *cache;
};

int srff_slots_init(struct srff_slots *s, unsigned int max);
void srff_slots_uninit(struct srff_slots *s);
void srff_slots_set_max(struct srff_slots *s, unsigned int max);
bool srff_slots_take(struct srff_slots *s);
void srff_slots_put(struct srff_slots *s);
unsigned int srff_slots_used(const struct srff_slots *s);

/* Slots handed out, the caches' included: above srff_slots_used() by what
 * the caches hold (the top of this file). One read, any context.
 */
static inline unsigned int srff_slots_reserved(const struct srff_slots *s)
{
	return atomic_read(&s->count);
}

/* A lock stripe: its lock, and the generation of its buckets, bumped under
 * the lock on every link and unlink, which a walk split inside a bucket
 * checks. Per stripe: inserts into different stripes share no line.
 */
struct srff_lock {
	spinlock_t lock;
	unsigned int gen;
};

/* A bucket array. The heads are an allocation of their own, a power of two
 * in size, so that a table's first 256 take 2 KiB, not 4.
 */
struct srff_buckets {
	struct hlist_head *b;
	unsigned int mask;		/* buckets - 1 */
	unsigned int node;		/* links flows by their node[node] */
};

/* Pools a table may share besides its own (main.c). */
#define SRFF_TABLE_POOLS	3

struct srff_table {
	/* Read on the packet path, seldom written (init, resize). */
	struct srff_buckets __rcu *tbl;
	struct srff_lock *locks;
	unsigned int lock_mask;		/* locks - 1: the fewest buckets - 1 */
	unsigned int max_buckets;	/* 0: from max_flows (table.c) */
	struct srff_slots *shared[SRFF_TABLE_POOLS];	/* caps shared with
					 * other tables, in the order taken;
					 * NULL-terminated when fewer */
	/* Finished flows (sizes.h); READ_ONCE, NULL until the first flow. */
	struct srff_sizes __percpu *sizes;
	unsigned int netns_ino;		/* for tracepoints: the namespace */
	siphash_key_t secret;
	/* Written by one insert or unlink in a batch: a line of its own,
	 * away from the one every lookup reads. flows.max is max_flows.
	 */
	struct srff_slots flows ____cacheline_aligned_in_smp;
	/* Written by GC, flush and eviction only. */
	atomic64_t gc_freed ____cacheline_aligned_in_smp;
	atomic64_t fin_retired;
	atomic64_t flushed;
	atomic64_t evicted;		/* unlinked to make room for a new flow */
	atomic64_t gc_runs;
	unsigned int gc_last_chain;	/* longest chain of the latest GC */
	/* Resizing: see the top of this file. */
	struct mutex resize_lock;	/* resizes and sweeps */
	struct srff_buckets *future;	/* READ_ONCE under a bucket lock */
	atomic64_t grown;		/* resizes up */
	atomic64_t shrunk;		/* resizes down */
};

/* A closed flow lingers this long idle: a retransmitted FIN still finds it. */
#define SRFF_CLOSED_LINGER	(HZ / 5)

/* Bucket locks (2 KiB with their generations, no lock debugging), and the
 * fewest buckets a table has (2 KiB), unless hash_buckets is lower.
 */
#define SRFF_MAX_LOCKS		256

/* hash_buckets' cap: 128 MiB of bucket heads. */
#define SRFF_TABLE_MAX_BUCKETS	(1U << 24)

/* A full table evicts an open flow idle this long (a closed one at once). */
#define SRFF_EVICT_MIN_IDLE	(HZ / 4)

/* Why a flow left the table: the srff_flow_retire tracepoint's reason. */
enum srff_retire {
	SRFF_RETIRE_FIN,	/* GC: FIN or RST seen, then SRFF_CLOSED_LINGER */
	SRFF_RETIRE_IDLE,	/* GC: idle for idle_timeout */
	SRFF_RETIRE_EVICTED,	/* made room for a new flow in a full table */
	SRFF_RETIRE_FLUSHED,	/* FLUSH_FLOWS */
	SRFF_RETIRE_TEARDOWN,	/* the namespace or the module went away */
};

enum srff_sweep {
	SRFF_SWEEP_GC,		/* idle or closed flows; counted */
	SRFF_SWEEP_FLUSH,	/* every flow; counted as flushed */
	SRFF_SWEEP_ALL,		/* every flow, at teardown; not counted */
};

int srff_table_cache_init(void);
void srff_table_cache_uninit(void);

int srff_table_init(struct srff_table *t, unsigned int max_buckets,
		    unsigned int max_flows, struct srff_slots *shared);
int srff_table_add_pool(struct srff_table *t, struct srff_slots *pool);
void srff_table_uninit(struct srff_table *t);
void srff_table_set_max_flows(struct srff_table *t, unsigned int max_flows);
unsigned int srff_table_count(const struct srff_table *t);
unsigned int srff_table_buckets(const struct srff_table *t);
unsigned int srff_table_resize_target(const struct srff_table *t);
bool srff_table_wants_grow(const struct srff_table *t);
int srff_table_resize(struct srff_table *t, unsigned int buckets);

u32 srff_table_key_hash(const struct srff_table *t, const struct srff_key *key);
struct srff_flow *srff_table_find(struct srff_table *t,
				  const struct srff_key *key);
struct srff_flow *srff_table_get(struct srff_table *t,
				 const struct srff_key *key,
				 unsigned long now, bool *created);
unsigned int srff_table_sweep(struct srff_table *t, enum srff_sweep mode,
			      unsigned long now, unsigned long idle_timeout);
int srff_table_sizes_alloc(struct srff_table *t);
void srff_table_sizes_read(const struct srff_table *t, struct srff_sizes *out);
u64 srff_table_sizes_ended(const struct srff_table *t);
/* A walk's cursor, kept between calls (a netlink dump's cb->ctx). */
struct srff_walk {
	unsigned int bucket;	/* the bucket to walk next */
	unsigned int pos;	/* its flows walked already: non-zero only
				 * when one bucket did not fit in one call */
	unsigned int buckets;	/* the array's size at the previous call */
	unsigned int gen;	/* the split bucket's stripe generation */
	bool changed;		/* resized, or a split bucket changed, between
				 * two calls: flows may have been skipped or
				 * repeated (the dump says so) */
};

struct srff_walk_ops {
	/* 0: go on (the flow was put out, or filtered out); else: full. */
	int (*flow)(const struct srff_flow *f, void *arg);
	/* A bucket with flows starts: remember the output's end; say
	 * whether the output holds anything yet.
	 */
	bool (*mark)(void *arg);
	/* Drop what was put out since the latest mark. */
	void (*undo)(void *arg);
};

int srff_table_walk(struct srff_table *t, struct srff_walk *w,
		    const struct srff_walk_ops *ops, void *arg);

static inline unsigned int srff_table_max_flows(const struct srff_table *t)
{
	return READ_ONCE(t->flows.max);
}

/* Milliseconds from @then to @now (jiffies), 64-bit; 0 when @then is later
 * (a packet moved last_seen after the caller sampled @now).
 */
static inline u64 srff_ms_since(unsigned long then, unsigned long now)
{
	return time_after(then, now) ? 0 : jiffies64_to_msecs(now - then);
}

/* No size histogram yet: the table's first flow asks for one. */
static inline bool srff_table_wants_sizes(const struct srff_table *t)
{
	return !READ_ONCE(t->sizes);
}

/* Record a flow of @bytes that ended for @why (sizes.h). Any context. */
static inline void srff_table_size_add(struct srff_table *t, u64 bytes,
				       enum srff_size_reason why)
{
	struct srff_sizes __percpu *s = READ_ONCE(t->sizes);

	if (likely(s))
		srff_sizes_add(s, bytes, why);
}

/* More than 7/8 full: time to collect early. */
static inline bool srff_table_pressure(const struct srff_table *t)
{
	unsigned int max = srff_table_max_flows(t);

	return srff_slots_reserved(&t->flows) > max - max / 8;
}

/*
 * The idle reset (srff_flow_account) loses no bytes when CPUs race: bytes
 * are only ever added, and the one CPU whose cmpxchg moves last_seen past
 * the gap subtracts @b, what the flow sent before it. @b is read before
 * last_seen and every sender writes last_seen before its fully ordered add,
 * so a @b read while last_seen still showed the gap holds no later packet.
 * A reset and a SYN restart exclude each other with SRFF_FLOW_RESTART_BIT,
 * only ever tried: a CPU that finds it taken leaves the rewrite to its
 * holder. Under it, a count below @b means a restart zeroed it (recording
 * that size) after @b was read: nothing is subtracted.
 */
static inline void srff_flow_reset(struct srff_table *t, struct srff_flow *f,
				   s64 b, unsigned long last,
				   unsigned long now)
{
	if (test_and_set_bit_lock(SRFF_FLOW_RESTART_BIT, &f->flags))
		return;		/* a restart, or another CPU's reset */
	if (cmpxchg(&f->last_seen, last, now) == last &&
	    atomic64_read(&f->bytes) >= b) {
		atomic64_sub(b, &f->bytes);
		if (b > 0)
			srff_table_size_add(t, b, SRFF_SIZE_MSG);
	}
	clear_bit_unlock(SRFF_FLOW_RESTART_BIT, &f->flags);
}

/*
 * Account @len bytes to @f and return what it had sent before them. With a
 * non-zero @idle_reset, a flow idle that long, unless its latest packet
 * left data unsent in its socket (SRFF_FLOW_PENDING_BIT), starts again at 0
 * and what it sent before the gap is recorded as one message (SRFF_SIZE_MSG).
 */
static inline u64 srff_flow_account(struct srff_table *t,
				    struct srff_flow *f, unsigned int len,
				    unsigned long now,
				    unsigned long idle_reset)
{
	unsigned long last;
	s64 b = 0;

	if (idle_reset) {
		b = atomic64_read(&f->bytes);
		smp_rmb();	/* bytes, then last_seen */
	}
	last = READ_ONCE(f->last_seen);
	SRFF_RACE_WINDOW();	/* where another CPU may account the same flow */
	if (idle_reset && time_after_eq(now, last + idle_reset) &&
	    !test_bit(SRFF_FLOW_PENDING_BIT, &f->flags))
		srff_flow_reset(t, f, b, last, now);
	else if (last != now)
		WRITE_ONCE(f->last_seen, now);
	return atomic64_fetch_add(len, &f->bytes);
}

/* A TCP segment with no data: its bytes count, but last_seen stays, so it
 * neither ends an idle gap nor keeps the flow from going idle. A racing
 * reset may record its bytes with the message before the gap, never lose them.
 */
static inline void srff_flow_account_quiet(struct srff_flow *f,
					   unsigned int len)
{
	atomic64_add(len, &f->bytes);
}

/*
 * The idle gap that ends a message on a local TCP flow: @idle_reset, or the
 * path's minimum RTT if shorter (docs/design.md, "Garbage collection"), in
 * ticks rounded down (a gap of at least min_rtt crosses that many tick
 * boundaries), at least SRFF_IDLE_RESET_MIN_TICKS (one boundary can be
 * crossed in a microsecond). @min_rtt_us is ~0U before the first sample.
 */
#define SRFF_IDLE_RESET_MIN_TICKS	2UL

static inline unsigned long srff_idle_reset_rtt(unsigned long idle_reset,
						u32 min_rtt_us)
{
	unsigned long rtt = min_rtt_us / (USEC_PER_SEC / HZ);

	return min_t(unsigned long, idle_reset,
		     max(rtt, SRFF_IDLE_RESET_MIN_TICKS));
}

/* Local TCP: whether @f's socket still holds data this packet left. */
static inline void srff_flow_note_pending(struct srff_flow *f, bool pending)
{
	if (test_bit(SRFF_FLOW_PENDING_BIT, &f->flags) == pending)
		return;		/* most packets: no write */
	if (pending)
		set_bit(SRFF_FLOW_PENDING_BIT, &f->flags);
	else
		clear_bit(SRFF_FLOW_PENDING_BIT, &f->flags);
}

static inline void srff_flow_close(struct srff_flow *f)
{
	if (!test_bit(SRFF_FLOW_CLOSED_BIT, &f->flags))
		set_bit(SRFF_FLOW_CLOSED_BIT, &f->flags);
}

/* A SYN on a key the table still holds (a reused 4-tuple) starts a new
 * connection: the old one's size is recorded, its count and closed flag
 * cleared. If a reset holds SRFF_FLOW_RESTART_BIT, the count is left to
 * it: it is zeroing what the old connection sent before the gap.
 */
static inline void srff_flow_restart(struct srff_table *t,
				     struct srff_flow *f, unsigned long now)
{
	if (!test_and_set_bit_lock(SRFF_FLOW_RESTART_BIT, &f->flags)) {
		s64 b = atomic64_xchg(&f->bytes, 0);

		if (b > 0)
			srff_table_size_add(t, b, SRFF_SIZE_FIN);
		WRITE_ONCE(f->last_seen, now);
		clear_bit_unlock(SRFF_FLOW_RESTART_BIT, &f->flags);
	}
	if (test_bit(SRFF_FLOW_CLOSED_BIT, &f->flags))
		clear_bit(SRFF_FLOW_CLOSED_BIT, &f->flags);
	WRITE_ONCE(f->created, now);
}

#endif
