// SPDX-License-Identifier: GPL-2.0
/*
 * The flow table. All of srff's flow locking is in this file; table.h states
 * the rules. Built into the module and, unchanged, into the user-space
 * library for tests and benchmarks.
 */
#include "table.h"
#ifdef __KERNEL__
#define CREATE_TRACE_POINTS
#include "trace.h"
#endif

static struct kmem_cache *flow_cache;

int srff_table_cache_init(void)
{
	flow_cache = KMEM_CACHE(srff_flow, 0);
	return flow_cache ? 0 : -ENOMEM;
}

void srff_table_cache_uninit(void)
{
	kmem_cache_destroy(flow_cache);
}

static u32 flow_hash(const struct srff_table *t, const struct srff_key *key)
{
	return (u32)siphash(key, sizeof(*key), &t->secret);
}

/* The table's keyed hash of a key, for tags of flows it does not hold
 * (hook.c: a WireGuard inner flow's).
 */
u32 srff_table_key_hash(const struct srff_table *t, const struct srff_key *key)
{
	return flow_hash(t, key);
}

static spinlock_t *bucket_lock(struct srff_table *t, unsigned int bucket)
{
	return &t->locks[bucket & t->lock_mask];
}

int srff_table_init(struct srff_table *t, unsigned int buckets,
		    unsigned int max_flows, struct srff_table_shared *shared)
{
	unsigned int i, nlocks;

	buckets = roundup_pow_of_two(buckets ? buckets : 1);
	nlocks = min_t(unsigned int, buckets, SRFF_MAX_LOCKS);

	t->buckets = kvcalloc(buckets, sizeof(*t->buckets), GFP_KERNEL_ACCOUNT);
	if (!t->buckets)
		return -ENOMEM;
	t->locks = kvcalloc(nlocks, sizeof(*t->locks), GFP_KERNEL_ACCOUNT);
	t->sizes = alloc_percpu_gfp(struct srff_sizes, GFP_KERNEL_ACCOUNT);
	if (!t->locks || !t->sizes) {
		free_percpu(t->sizes);
		kvfree(t->locks);
		kvfree(t->buckets);
		return -ENOMEM;
	}
	for (i = 0; i < buckets; i++)
		INIT_HLIST_HEAD(&t->buckets[i]);
	for (i = 0; i < nlocks; i++)
		spin_lock_init(&t->locks[i]);
	t->hash_mask = buckets - 1;
	t->lock_mask = nlocks - 1;
	t->max_flows = max_flows;
	t->shared = shared;
	atomic_set(&t->count, 0);
	atomic_set(&t->gen, 0);
	get_random_bytes(&t->secret, sizeof(t->secret));
	atomic64_set(&t->gc_freed, 0);
	atomic64_set(&t->fin_retired, 0);
	atomic64_set(&t->flushed, 0);
	atomic64_set(&t->evicted, 0);
	atomic64_set(&t->gc_runs, 0);
	t->gc_last_chain = 0;
	return 0;
}

/* Callers have made sure nothing can look the table up any more. */
void srff_table_uninit(struct srff_table *t)
{
	srff_table_sweep(t, SRFF_SWEEP_ALL, jiffies, 0);
	WARN_ON(atomic_read(&t->count));
	free_percpu(t->sizes);
	kvfree(t->locks);
	kvfree(t->buckets);
}

static struct srff_flow *bucket_find(struct hlist_head *head,
				     const struct srff_key *key)
{
	struct srff_flow *f;

	hlist_for_each_entry_rcu(f, head, node)
		if (srff_key_equal(&f->key, key))
			return f;
	return NULL;
}

/* Take one of @max slots of @count: false, with nothing taken, when all
 * are. A compare-and-swap loop, not an increment taken back when it went
 * over: the count never reads above the cap, not even for an instant, and
 * a newcomer is never refused because another one was passing through.
 */
static bool count_reserve(atomic_t *count, unsigned int max)
{
	int old = atomic_read(count);

	do {
		if ((unsigned int)old >= max)
			return false;
	} while (!atomic_try_cmpxchg(count, &old, old + 1));
	return true;
}

/* Reserve a slot in @t and in the host-wide count: false when either is
 * at its cap, with nothing reserved.
 */
static bool slot_reserve(struct srff_table *t)
{
	struct srff_table_shared *sh = t->shared;

	if (!count_reserve(&t->count, READ_ONCE(t->max_flows)))
		return false;
	if (sh && !count_reserve(&sh->count, READ_ONCE(sh->max))) {
		atomic_dec(&t->count);
		return false;
	}
	return true;
}

static void slot_release(struct srff_table *t)
{
	if (t->shared)
		atomic_dec(&t->shared->count);
	atomic_dec(&t->count);
}

/* The flow for @key, or NULL. Caller holds rcu_read_lock. */
struct srff_flow *srff_table_find(struct srff_table *t,
				  const struct srff_key *key)
{
	return bucket_find(&t->buckets[flow_hash(t, key) & t->hash_mask], key);
}

/*
 * The flow of @head that may make room for a newcomer: a closed flow, else
 * the longest-idle one if idle SRFF_EVICT_MIN_IDLE. NULL when every flow of
 * the bucket is busy.
 */
static struct srff_flow *bucket_victim(struct hlist_head *head,
				       unsigned long now, spinlock_t *lock)
{
	struct srff_flow *f, *victim = NULL;
	unsigned long oldest = now - SRFF_EVICT_MIN_IDLE;

	lockdep_assert_held(lock);
	hlist_for_each_entry_rcu(f, head, node, lockdep_is_held(lock)) {
		unsigned long last = READ_ONCE(f->last_seen);

		if (test_bit(SRFF_FLOW_CLOSED_BIT, &f->flags))
			return f;
		if (time_before_eq(last, oldest)) {
			oldest = last;
			victim = f;
		}
	}
	return victim;
}

static void flow_unlink(struct srff_table *t, struct srff_flow *f,
			spinlock_t *lock, unsigned long now,
			enum srff_retire why, u64 bytes);

/*
 * The flow for @key, created if need be. Caller holds rcu_read_lock.
 * When the table (or the host) is at its cap, a closed or long-idle flow
 * of the newcomer's bucket is evicted to make room. Returns
 * ERR_PTR(-ENOSPC) when there was no room even so, ERR_PTR(-ENOMEM) when
 * the atomic allocation failed; nothing is left allocated or reserved then.
 */
struct srff_flow *srff_table_get(struct srff_table *t,
				 const struct srff_key *key,
				 unsigned long now, bool *created)
{
	unsigned int bucket = flow_hash(t, key) & t->hash_mask;
	struct hlist_head *head = &t->buckets[bucket];
	spinlock_t *lock = bucket_lock(t, bucket);
	struct srff_flow *f, *old;

	*created = false;
	f = bucket_find(head, key);
	if (likely(f))
		return f;

	/* Reserve a slot before allocating: the cap is never crossed. */
	if (unlikely(!slot_reserve(t))) {
		struct srff_flow *victim;
		bool room = false;

		spin_lock_bh(lock);
		old = bucket_find(head, key);
		if (old) {
			spin_unlock_bh(lock);
			return old;
		}
		/* Evicting makes room only if the table is at its cap, not
		 * above it (max_flows lowered at run time: GC brings the
		 * count down), and the host-wide cap is then freed too.
		 */
		victim = srff_table_count(t) <= READ_ONCE(t->max_flows) ?
			 bucket_victim(head, now, lock) : NULL;
		if (victim) {
			u64 b = atomic64_read(&victim->bytes);

			srff_sizes_add(t->sizes, b,
				       test_bit(SRFF_FLOW_CLOSED_BIT, &victim->flags) ?
				       SRFF_SIZE_FIN : SRFF_SIZE_IDLE);
			flow_unlink(t, victim, lock, now, SRFF_RETIRE_EVICTED, b);
			atomic64_inc(&t->evicted);
			/* Another CPU may take the slot first: then refuse. */
			room = slot_reserve(t);
		}
		spin_unlock_bh(lock);
		if (!room)
			return ERR_PTR(-ENOSPC);
	}
	f = kmem_cache_alloc(flow_cache, GFP_ATOMIC | __GFP_NOWARN);
	if (unlikely(!f)) {
		slot_release(t);
		return ERR_PTR(-ENOMEM);
	}
	f->key = *key;
	atomic64_set(&f->bytes, 0);
	f->last_seen = now;
	f->created = now;
	f->flags = 0;

	spin_lock_bh(lock);
	old = bucket_find(head, key);	/* lost a race with another CPU? */
	if (unlikely(old)) {
		spin_unlock_bh(lock);
		kmem_cache_free(flow_cache, f);
		slot_release(t);
		return old;
	}
	hlist_add_head_rcu(&f->node, head);
	atomic_inc(&t->gen);
	spin_unlock_bh(lock);
	*created = true;
	trace_srff_flow_create(t, key);
	return f;
}

static void flow_free_rcu(struct rcu_head *rcu)
{
	kmem_cache_free(flow_cache, container_of(rcu, struct srff_flow, rcu));
}

/* @bytes: what the flow sent, as its caller recorded it (tracepoint). */
static void flow_unlink(struct srff_table *t, struct srff_flow *f,
			spinlock_t *lock, unsigned long now,
			enum srff_retire why, u64 bytes)
{
	lockdep_assert_held(lock);
	trace_srff_flow_retire(t, f, bytes, now, why);
	hlist_del_rcu(&f->node);
	atomic_inc(&t->gen);
	slot_release(t);
	call_rcu(&f->rcu, flow_free_rcu);
}

/*
 * Unlink flows, bucket by bucket, rescheduling between buckets: GC (idle
 * for @idle_timeout, or closed and idle for SRFF_CLOSED_LINGER), flush or
 * teardown. Process context only. Returns the number of flows unlinked.
 */
unsigned int srff_table_sweep(struct srff_table *t, enum srff_sweep mode,
			      unsigned long now, unsigned long idle_timeout)
{
	unsigned int i, freed = 0, idle = 0, closed = 0, chain, longest = 0;
	struct hlist_node *tmp;
	struct srff_flow *f;

	for (i = 0; i <= t->hash_mask; i++) {
		spinlock_t *lock = bucket_lock(t, i);

		/* Unlocked peek: most buckets are empty. */
		if (hlist_empty(&t->buckets[i]))
			goto next;
		spin_lock_bh(lock);
		chain = 0;
		hlist_for_each_entry_safe(f, tmp, &t->buckets[i], node) {
			unsigned long last = READ_ONCE(f->last_seen);

			chain++;
			if (mode == SRFF_SWEEP_GC) {
				enum srff_size_reason why;
				u64 b;

				if (test_bit(SRFF_FLOW_CLOSED_BIT, &f->flags) &&
				    time_after_eq(now, last + SRFF_CLOSED_LINGER)) {
					closed++;
					why = SRFF_SIZE_FIN;
				} else if (time_after_eq(now, last + idle_timeout)) {
					idle++;
					why = SRFF_SIZE_IDLE;
				} else {
					continue;
				}
				b = atomic64_read(&f->bytes);
				srff_sizes_add(t->sizes, b, why);
				flow_unlink(t, f, lock, now, why == SRFF_SIZE_FIN ?
					    SRFF_RETIRE_FIN : SRFF_RETIRE_IDLE, b);
			} else {
				flow_unlink(t, f, lock, now,
					    mode == SRFF_SWEEP_FLUSH ?
					    SRFF_RETIRE_FLUSHED :
					    SRFF_RETIRE_TEARDOWN,
					    atomic64_read(&f->bytes));
			}
			freed++;
		}
		spin_unlock_bh(lock);
		longest = max_t(unsigned int, longest, chain);
next:
		cond_resched();
	}

	switch (mode) {
	case SRFF_SWEEP_GC:
		atomic64_add(idle, &t->gc_freed);
		atomic64_add(closed, &t->fin_retired);
		atomic64_inc(&t->gc_runs);
		WRITE_ONCE(t->gc_last_chain, longest);
		break;
	case SRFF_SWEEP_FLUSH:
		atomic64_add(freed, &t->flushed);
		break;
	case SRFF_SWEEP_ALL:
		break;
	}
	return freed;
}

/*
 * Call @ops->flow on every flow from the cursor @w on, under RCU, a bucket
 * at a time, until it returns non-zero (its output is full) or the table
 * ends (returns 0).
 *
 * Output ends on a bucket boundary: a bucket that does not fit whole after
 * the output of earlier buckets is undone (@ops->undo, back to where
 * @ops->mark was called at its start) and the cursor stays at its start,
 * so the next call walks it whole. A walk of one bucket, in one RCU read
 * section, sees every flow that stays linked throughout exactly once
 * (links are at the head, behind the walker; an unlinked flow keeps its
 * next pointer). So a dump resumed this way lists every flow that existed
 * for the whole dump exactly once, however much the table changes
 * between its messages: links and unlinks only decide whether flows that
 * came or went during the dump are listed.
 *
 * Only a bucket that does not fit even into empty output (@ops->mark says
 * whether output holds anything) is split: the cursor then names the flow
 * @ops->flow refused (w->pos != 0), and a link or unlink in that bucket
 * before the next call may make it skip or repeat one; callers detect that
 * with t->gen.
 */
int srff_table_walk(struct srff_table *t, struct srff_walk *w,
		    const struct srff_walk_ops *ops, void *arg)
{
	const struct srff_flow *f;
	unsigned int b, i;
	bool had_output;
	int err = 0;

	rcu_read_lock();
	for (b = w->bucket; b <= t->hash_mask; b++, w->pos = 0) {
		if (hlist_empty(&t->buckets[b]))	/* most are: no call */
			continue;
		had_output = ops->mark(arg);
		i = 0;
		hlist_for_each_entry_rcu(f, &t->buckets[b], node) {
			if (i++ < w->pos)
				continue;
			err = ops->flow(f, arg);
			if (!err)
				continue;
			w->bucket = b;
			if (had_output) {
				ops->undo(arg);	/* the whole bucket next time */
				w->pos = 0;
			} else {
				w->pos = i - 1;	/* alone it does not fit: split */
			}
			goto out;
		}
	}
	w->bucket = b;
	w->pos = 0;
out:
	rcu_read_unlock();
	return err;
}

/* The flow-size histogram, summed over CPUs into @out. Any context. */
void srff_table_sizes_read(const struct srff_table *t, struct srff_sizes *out)
{
	BUILD_BUG_ON(sizeof(struct srff_sizes) % sizeof(u64));
	srff_pcpu_sum_u64((u64 *)out, t->sizes, sizeof(*out));
}

/* Flows recorded so far (every reason), summed over CPUs. Any context. */
u64 srff_table_sizes_ended(const struct srff_table *t)
{
	unsigned int cpu, r;
	u64 n = 0;

	for_each_possible_cpu(cpu) {
		const struct srff_sizes *s = per_cpu_ptr(t->sizes, cpu);

		for (r = 0; r < SRFF_SIZE_REASONS; r++)
			n += READ_ONCE(s->reason[r]);
	}
	return n;
}
