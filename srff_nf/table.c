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

/* The lock of every flow whose hash is @n, in any array, and of bucket @n
 * of every array: a table never has fewer buckets than locks, so a hash and
 * its bucket share the low bits that choose the lock (table.h).
 */
static spinlock_t *stripe_lock(struct srff_table *t, u32 n)
{
	return &t->locks[n & t->lock_mask].lock;
}

/* The buckets of @lock changed: a walk split in one of them must know. */
static void stripe_changed(spinlock_t *lock)
{
	struct srff_lock *l = container_of(lock, struct srff_lock, lock);

	lockdep_assert_held(lock);
	smp_store_release(&l->gen, l->gen + 1);	/* after the list change */
}

/* Bucket @n's stripe generation, read before walking the bucket. */
static unsigned int stripe_gen(const struct srff_table *t, unsigned int n)
{
	return smp_load_acquire(&t->locks[n & t->lock_mask].gen);
}

static struct hlist_head *bucket_of(struct srff_buckets *a, u32 hash)
{
	return &a->b[hash & a->mask];
}

/* The flow whose node[@idx] is @n. */
static struct srff_flow *node_flow(const struct hlist_node *n, unsigned int idx)
{
	return (struct srff_flow *)((char *)n - offsetof(struct srff_flow, node) -
				    idx * sizeof(struct hlist_node));
}

/* Every flow of bucket @head of an array linking by node[@idx], under RCU
 * or the bucket's lock.
 */
#define for_each_bucket_flow(f, pos, head, idx)				\
	for (pos = rcu_dereference_raw(hlist_first_rcu(head));		\
	     pos && ((f) = node_flow(pos, (idx)), 1);			\
	     pos = rcu_dereference_raw(hlist_next_rcu(pos)))

/* The array lookups walk. Caller holds rcu_read_lock, or resize_lock. */
static struct srff_buckets *table_tbl(const struct srff_table *t)
{
	return rcu_dereference_check(t->tbl, lockdep_is_held(&t->resize_lock));
}

static void buckets_free(struct srff_buckets *a)
{
	if (a)
		kvfree(a->b);
	kvfree(a);
}

static struct srff_buckets *buckets_alloc(unsigned int n, unsigned int node)
{
	struct srff_buckets *a;
	unsigned int i;

	a = kvzalloc(sizeof(*a), GFP_KERNEL_ACCOUNT);
	if (!a)
		return NULL;
	a->b = kvcalloc(n, sizeof(*a->b), GFP_KERNEL_ACCOUNT);
	if (!a->b) {
		kvfree(a);
		return NULL;
	}
	for (i = 0; i < n; i++)
		INIT_HLIST_HEAD(&a->b[i]);
	a->mask = n - 1;
	a->node = node;
	return a;
}

/* The most buckets @t may grow to: max_buckets, or from max_flows as
 * srff_config_hash_buckets() documents (max_flows / 2, rounded up to a
 * power of two), never fewer than it has locks.
 */
static unsigned int table_max_buckets(const struct srff_table *t)
{
	unsigned long n = t->max_buckets;

	if (!n)
		n = roundup_pow_of_two(max_t(unsigned int,
					     srff_table_max_flows(t), 2)) / 2;
	n = min_t(unsigned long, n, SRFF_TABLE_MAX_BUCKETS);
	return max_t(unsigned long, n, t->lock_mask + 1);
}

/*
 * @max_buckets: the most buckets the table grows to (rounded up to a power
 * of two), or 0 to follow max_flows. It starts with as many as it has locks,
 * SRFF_MAX_LOCKS or fewer.
 */
int srff_table_init(struct srff_table *t, unsigned int max_buckets,
		    unsigned int max_flows, struct srff_slots *shared)
{
	unsigned int i, nlocks;

	t->max_buckets = max_buckets ?
		roundup_pow_of_two(min_t(unsigned int, max_buckets,
					 SRFF_TABLE_MAX_BUCKETS)) : 0;
	nlocks = t->max_buckets ?: SRFF_MAX_LOCKS;
	nlocks = min_t(unsigned int, nlocks, SRFF_MAX_LOCKS);

	RCU_INIT_POINTER(t->tbl, buckets_alloc(nlocks, 0));
	if (!rcu_access_pointer(t->tbl))
		return -ENOMEM;
	t->flows.cache = NULL;
	t->locks = kvcalloc(nlocks, sizeof(*t->locks), GFP_KERNEL_ACCOUNT);
	t->sizes = NULL;		/* at the first flow: srff_table_sizes_alloc */
	if (!t->locks || srff_slots_init(&t->flows, max_flows)) {
		kvfree(t->locks);
		buckets_free(rcu_access_pointer(t->tbl));
		return -ENOMEM;
	}
	for (i = 0; i < nlocks; i++) {
		spin_lock_init(&t->locks[i].lock);
		t->locks[i].gen = 0;
	}
	t->lock_mask = nlocks - 1;
	memset(t->shared, 0, sizeof(t->shared));
	t->shared[0] = shared;
	get_random_bytes(&t->secret, sizeof(t->secret));
	atomic64_set(&t->gc_freed, 0);
	atomic64_set(&t->fin_retired, 0);
	atomic64_set(&t->flushed, 0);
	atomic64_set(&t->evicted, 0);
	atomic64_set(&t->gc_runs, 0);
	t->gc_last_chain = 0;
	mutex_init(&t->resize_lock);
	t->future = NULL;
	atomic64_set(&t->grown, 0);
	atomic64_set(&t->shrunk, 0);
	return 0;
}

/* Callers have made sure nothing can look the table up, or resize it, any
 * more.
 */
void srff_table_uninit(struct srff_table *t)
{
	srff_table_sweep(t, SRFF_SWEEP_ALL, jiffies, 0);
	srff_slots_uninit(&t->flows);
	free_percpu(t->sizes);
	kvfree(t->locks);
	buckets_free(rcu_access_pointer(t->tbl));
	mutex_destroy(&t->resize_lock);
}

/* The bucket array's size now. Any context. */
unsigned int srff_table_buckets(const struct srff_table *t)
{
	unsigned int n;

	rcu_read_lock();
	n = rcu_dereference(t->tbl)->mask + 1;
	rcu_read_unlock();
	return n;
}

static struct srff_flow *bucket_find(struct srff_buckets *a, u32 hash,
				     const struct srff_key *key)
{
	struct hlist_node *pos;
	struct srff_flow *f;

	for_each_bucket_flow(f, pos, bucket_of(a, hash), a->node)
		if (srff_key_equal(&f->key, key))
			return f;
	return NULL;
}

/* ---- slots: capped counts, batched per CPU (table.h) ------------------- */

/* Slots a CPU takes from a pool at once: 16, or fewer, so that all the
 * caches together (normally fewer than 2 * batch slots each: table.h) hold
 * less than max / 16.
 * 0 (no caching) for a small pool on many CPUs.
 */
#define SRFF_SLOTS_BATCH	16

static unsigned int slots_batch(unsigned int max)
{
	return min_t(unsigned int, SRFF_SLOTS_BATCH,
		     max / (32 * num_possible_cpus()));
}

int srff_slots_init(struct srff_slots *s, unsigned int max)
{
	s->cache = alloc_percpu_gfp(unsigned int, GFP_KERNEL_ACCOUNT);
	if (!s->cache)
		return -ENOMEM;
	atomic_set(&s->count, 0);
	srff_slots_set_max(s, max);
	return 0;
}

/* Nothing may take or put any more: the caches go back to the pool, which
 * must then be empty.
 */
void srff_slots_uninit(struct srff_slots *s)
{
	unsigned int cpu;

	if (!s->cache)
		return;
	for_each_possible_cpu(cpu) {
		unsigned int *c = per_cpu_ptr(s->cache, cpu);

		atomic_sub(*c, &s->count);
		*c = 0;
	}
	WARN_ON(atomic_read(&s->count));
	free_percpu(s->cache);
	s->cache = NULL;
}

/* A lower cap takes no slot from a flow: a pool above it hands out
 * nothing, not even from the caches, and drains every cache a take or put
 * meets, until enough come back (pool_over).
 */
void srff_slots_set_max(struct srff_slots *s, unsigned int max)
{
	WRITE_ONCE(s->max, max);
	WRITE_ONCE(s->batch, slots_batch(max));
}

/* Take up to @want slots from the pool: how many were taken, 0 when it is
 * at its cap. A compare-and-swap loop, not an add taken back when it went
 * over: the count never reads above the cap, not even for an instant, and
 * a newcomer is never refused because another one was passing through.
 */
static unsigned int pool_take(struct srff_slots *s, unsigned int want)
{
	unsigned int max = READ_ONCE(s->max), got;
	int old = atomic_read(&s->count);

	do {
		if ((unsigned int)old >= max)
			return 0;
		got = min(want, max - (unsigned int)old);
	} while (!atomic_try_cmpxchg(&s->count, &old, old + got));
	return got;
}

/* The cap was lowered below what the pool has handed out: until enough
 * slots come back, no CPU takes from its cache and every cache met on a
 * take or put goes back to the pool. One read of the pool's line, which
 * only batches write.
 */
static bool pool_over(const struct srff_slots *s)
{
	return (unsigned int)atomic_read(&s->count) > READ_ONCE(s->max);
}

/* This CPU's cached slots back to the pool. */
static void cache_drain(struct srff_slots *s)
{
	unsigned int n = this_cpu_xchg(*s->cache, 0);

	if (n)
		atomic_sub(n, &s->count);
}

/* Take one slot: false when the pool is at its cap and this CPU has none
 * cached, or the pool is over a lowered cap. Any context. The per-CPU ops
 * are each atomic on their CPU; a task that moves to another CPU between
 * two of them takes from, or adds to, the other CPU's cache, which is as
 * good.
 */
bool srff_slots_take(struct srff_slots *s)
{
	unsigned int n, got;

	if (unlikely(pool_over(s))) {
		cache_drain(s);
		return pool_take(s, 1);
	}
	n = this_cpu_read(*s->cache);
	while (n) {
		unsigned int seen = this_cpu_cmpxchg(*s->cache, n, n - 1);

		if (seen == n)
			return true;
		n = seen;
	}
	got = pool_take(s, max(READ_ONCE(s->batch), 1U));
	if (got > 1)
		this_cpu_add(*s->cache, got - 1);
	return got;
}

/* Give one slot back, to this CPU's cache; a full cache returns a batch to
 * the pool. Any context.
 */
void srff_slots_put(struct srff_slots *s)
{
	unsigned int batch = READ_ONCE(s->batch), n;

	if (!batch || unlikely(pool_over(s))) {
		cache_drain(s);
		atomic_dec(&s->count);
		return;
	}
	n = this_cpu_inc_return(*s->cache);
	if (n >= 2 * batch && this_cpu_cmpxchg(*s->cache, n, n - batch) == n)
		atomic_sub(batch, &s->count);
}

/* Slots in use: handed out and not in a cache. Exact when nothing takes or
 * puts meanwhile, else a moment old. O(CPUs): for statistics and resizes,
 * not the packet path (srff_slots_reserved).
 */
unsigned int srff_slots_used(const struct srff_slots *s)
{
	int n = atomic_read(&s->count);
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		n -= READ_ONCE(*per_cpu_ptr(s->cache, cpu));
	return max(n, 0);
}

/*
 * One more pool @t's flows count against, before its first flow: taken
 * before the pools added earlier, so add the narrower ones last. A table
 * never takes a slot of a wider pool (the host's) unless it got one of
 * every narrower pool (the namespaces'), so the narrower caps hold in the
 * wider pool too: what the host reserves, no other namespace can take.
 * -ENOSPC: SRFF_TABLE_POOLS already.
 */
int srff_table_add_pool(struct srff_table *t, struct srff_slots *pool)
{
	if (t->shared[SRFF_TABLE_POOLS - 1])
		return -ENOSPC;
	memmove(&t->shared[1], &t->shared[0],
		(SRFF_TABLE_POOLS - 1) * sizeof(t->shared[0]));
	t->shared[0] = pool;
	return 0;
}

/* Reserve a slot in @t and in every pool it shares, narrowest first: false
 * when any is at its cap, with nothing reserved.
 */
static bool slot_reserve(struct srff_table *t)
{
	unsigned int i;

	if (!srff_slots_take(&t->flows))
		return false;
	for (i = 0; i < SRFF_TABLE_POOLS && t->shared[i]; i++) {
		if (!srff_slots_take(t->shared[i]))
			goto undo;
	}
	return true;
undo:
	while (i--)
		srff_slots_put(t->shared[i]);
	srff_slots_put(&t->flows);
	return false;
}

static void slot_release(struct srff_table *t)
{
	unsigned int i;

	for (i = 0; i < SRFF_TABLE_POOLS && t->shared[i]; i++)
		srff_slots_put(t->shared[i]);
	srff_slots_put(&t->flows);
}

void srff_table_set_max_flows(struct srff_table *t, unsigned int max_flows)
{
	srff_slots_set_max(&t->flows, max_flows);
}

/* Flows linked, or being linked. Exact when no insert or unlink runs. */
unsigned int srff_table_count(const struct srff_table *t)
{
	return srff_slots_used(&t->flows);
}

/* The flow for @key, or NULL. Caller holds rcu_read_lock. */
struct srff_flow *srff_table_find(struct srff_table *t,
				  const struct srff_key *key)
{
	return bucket_find(rcu_dereference(t->tbl), flow_hash(t, key), key);
}

/*
 * The flow of bucket @hash of @a that may make room for a newcomer: a
 * closed flow, else the longest-idle one if idle SRFF_EVICT_MIN_IDLE. NULL
 * when every flow of the bucket is busy.
 */
static struct srff_flow *bucket_victim(struct srff_buckets *a, u32 hash,
				       unsigned long now, spinlock_t *lock)
{
	struct srff_flow *f, *victim = NULL;
	unsigned long oldest = now - SRFF_EVICT_MIN_IDLE;
	struct hlist_node *pos;

	lockdep_assert_held(lock);
	for_each_bucket_flow(f, pos, bucket_of(a, hash), a->node) {
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

/*
 * The arrays a writer holding @hash's lock changes: t->tbl, and t->future
 * while a resize is linking flows into it (NULL otherwise). Caller holds
 * rcu_read_lock or resize_lock, which the resize waits for before it
 * clears `future` (table.h).
 */
static struct srff_buckets *table_future(struct srff_table *t,
					 struct srff_buckets *cur)
{
	struct srff_buckets *fut = READ_ONCE(t->future);

	return fut != cur ? fut : NULL;
}

/* Link @f, new, with @hash's lock held. */
static void flow_link(struct srff_table *t, struct srff_flow *f, u32 hash,
		      spinlock_t *lock)
{
	struct srff_buckets *cur = table_tbl(t), *fut = table_future(t, cur);

	lockdep_assert_held(lock);
	hlist_add_head_rcu(&f->node[cur->node], bucket_of(cur, hash));
	if (fut)
		hlist_add_head_rcu(&f->node[fut->node], bucket_of(fut, hash));
	stripe_changed(lock);
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
	u32 hash = flow_hash(t, key);
	spinlock_t *lock = stripe_lock(t, hash);
	struct srff_flow *f, *old;
	struct srff_buckets *a;

	*created = false;
	f = bucket_find(rcu_dereference(t->tbl), hash, key);
	if (likely(f))
		return f;

	/* Reserve a slot before allocating: the cap is never crossed. */
	if (unlikely(!slot_reserve(t))) {
		struct srff_flow *victim;
		bool room = false;

		spin_lock_bh(lock);
		a = table_tbl(t);	/* again: a resize may have published */
		old = bucket_find(a, hash, key);
		if (old) {
			spin_unlock_bh(lock);
			return old;
		}
		/* Evicting makes room only if the table is at its cap, not
		 * above it (max_flows lowered at run time: GC brings the
		 * count down), and the host-wide cap is then freed too.
		 */
		victim = srff_slots_reserved(&t->flows) <=
			 srff_table_max_flows(t) ?
			 bucket_victim(a, hash, now, lock) : NULL;
		if (victim) {
			u64 b = atomic64_read(&victim->bytes);

			srff_table_size_add(t, b,
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
	INIT_HLIST_NODE(&f->node[0]);
	INIT_HLIST_NODE(&f->node[1]);
	f->key = *key;
	atomic64_set(&f->bytes, 0);
	f->last_seen = now;
	f->created = now;
	f->flags = 0;

	spin_lock_bh(lock);
	old = bucket_find(table_tbl(t), hash, key); /* lost a race? */
	if (unlikely(old)) {
		spin_unlock_bh(lock);
		kmem_cache_free(flow_cache, f);
		slot_release(t);
		return old;
	}
	flow_link(t, f, hash, lock);
	spin_unlock_bh(lock);
	*created = true;
	trace_srff_flow_create(t, key);
	return f;
}

static void flow_free_rcu(struct rcu_head *rcu)
{
	kmem_cache_free(flow_cache, container_of(rcu, struct srff_flow, rcu));
}

/* @f is linked in t->tbl (and in t->future if a resize has linked it
 * there); @lock is its hash's. @bytes: what the flow sent, as its caller
 * recorded it (tracepoint).
 */
static void flow_unlink(struct srff_table *t, struct srff_flow *f,
			spinlock_t *lock, unsigned long now,
			enum srff_retire why, u64 bytes)
{
	struct srff_buckets *cur = table_tbl(t), *fut = table_future(t, cur);

	lockdep_assert_held(lock);
	trace_srff_flow_retire(t, f, bytes, now, why);
	hlist_del_rcu(&f->node[cur->node]);
	if (fut && !hlist_unhashed(&f->node[fut->node]))
		hlist_del_rcu(&f->node[fut->node]);
	stripe_changed(lock);
	slot_release(t);
	call_rcu(&f->rcu, flow_free_rcu);
}

/*
 * Unlink flows, bucket by bucket, rescheduling between buckets: GC (idle
 * for @idle_timeout, or closed and idle for SRFF_CLOSED_LINGER), flush or
 * teardown. Process context only; not during a resize (it waits). Returns
 * the number of flows unlinked.
 */
unsigned int srff_table_sweep(struct srff_table *t, enum srff_sweep mode,
			      unsigned long now, unsigned long idle_timeout)
{
	unsigned int i, freed = 0, idle = 0, closed = 0, chain, longest = 0;
	struct hlist_node *pos, *tmp;
	struct srff_buckets *a;
	struct srff_flow *f;

	mutex_lock(&t->resize_lock);
	a = table_tbl(t);
	for (i = 0; i <= a->mask; i++) {
		spinlock_t *lock = stripe_lock(t, i);

		/* Unlocked peek: most buckets are empty. */
		if (hlist_empty(&a->b[i]))
			goto next;
		spin_lock_bh(lock);
		chain = 0;
		for (pos = a->b[i].first; pos; pos = tmp) {
			unsigned long last;

			tmp = pos->next;
			f = node_flow(pos, a->node);
			last = READ_ONCE(f->last_seen);
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
				srff_table_size_add(t, b, why);
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
	mutex_unlock(&t->resize_lock);

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

/* More than two of @n flows per bucket of @size, and room to grow. */
static bool table_wants_grow(const struct srff_table *t, unsigned int n,
			     unsigned int size)
{
	return n / 2 > size && size < table_max_buckets(t);
}

/*
 * The size @t should be resized to now, or 0 to stay: more than two flows
 * per bucket grows it to the power of two at or above the count (one flow
 * per bucket at most), fewer than one per eight shrinks it, between
 * lock_mask + 1 and max_buckets. Any context.
 *
 * The growth test is srff_table_wants_grow()'s, on the slots handed out
 * (the per-CPU caches' included: one read on the packet path), so that a
 * new flow asks for a resize only when this gives one. A shrink counts
 * the flows themselves but stops where that test would grow it straight
 * back, so the two cannot take turns.
 */
unsigned int srff_table_resize_target(const struct srff_table *t)
{
	unsigned int size = srff_table_buckets(t);
	unsigned int held = srff_slots_reserved(&t->flows);
	unsigned int lo = t->lock_mask + 1, hi = table_max_buckets(t);
	unsigned long want;

	if (table_wants_grow(t, held, size)) {
		want = held;
	} else {
		unsigned int n = srff_table_count(t);

		if (!(n < size / 8 && size > lo))
			return 0;
		want = max(n, held / 2);
	}
	want = roundup_pow_of_two(max_t(unsigned long, want, 1));
	want = clamp_t(unsigned long, want, lo, hi);
	return want != size ? want : 0;
}

/* More than two flows per bucket, and room to grow: a new flow asks for a
 * resize, which srff_table_resize_target() then gives. Caller holds
 * rcu_read_lock.
 */
bool srff_table_wants_grow(const struct srff_table *t)
{
	return table_wants_grow(t, srff_slots_reserved(&t->flows),
				rcu_dereference(t->tbl)->mask + 1);
}

/*
 * Resize @t's bucket array to @buckets (rounded up to a power of two, at
 * least lock_mask + 1), or to srff_table_resize_target() when 0. Process
 * context: it sleeps (a grace period), but the packet path never waits for
 * it. See table.h for the steps. 0, or -ENOMEM with nothing changed.
 */
int srff_table_resize(struct srff_table *t, unsigned int buckets)
{
	struct srff_buckets *old, *new;
	struct hlist_node *pos;
	struct srff_flow *f;
	unsigned int b;

	might_sleep();
	mutex_lock(&t->resize_lock);
	old = table_tbl(t);
	if (!buckets)
		buckets = srff_table_resize_target(t);
	else
		buckets = clamp_t(unsigned long, roundup_pow_of_two(buckets),
				  t->lock_mask + 1, SRFF_TABLE_MAX_BUCKETS);
	if (!buckets || buckets == old->mask + 1) {
		mutex_unlock(&t->resize_lock);
		return 0;
	}
	new = buckets_alloc(buckets, !old->node);
	if (!new) {
		mutex_unlock(&t->resize_lock);
		return -ENOMEM;
	}

	/* 1. Writers link and unlink in both arrays from now on; each lock
	 * taken once makes the ones that did not see it visible here.
	 */
	WRITE_ONCE(t->future, new);
	for (b = 0; b <= t->lock_mask; b++) {
		spin_lock_bh(stripe_lock(t, b));
		spin_unlock_bh(stripe_lock(t, b));
	}

	/* 2. Link every flow into the new array too. */
	for (b = 0; b <= old->mask; b++) {
		spinlock_t *lock = stripe_lock(t, b);

		if (hlist_empty(&old->b[b]))
			goto next;
		spin_lock_bh(lock);
		for_each_bucket_flow(f, pos, &old->b[b], old->node) {
			if (!hlist_unhashed(&f->node[new->node]))
				continue;	/* a writer linked it there */
			hlist_add_head_rcu(&f->node[new->node],
					   bucket_of(new, flow_hash(t, &f->key)));
		}
		spin_unlock_bh(lock);
next:
		SRFF_RACE_WINDOW();	/* writers between buckets */
		cond_resched();
	}

	/* 3, 4. Publish; wait until nothing holds the old array. */
	rcu_assign_pointer(t->tbl, new);
	synchronize_rcu();
	WRITE_ONCE(t->future, NULL);

	/* The old nodes are free for the next resize. */
	for (b = 0; b <= new->mask; b++) {
		spinlock_t *lock = stripe_lock(t, b);

		if (hlist_empty(&new->b[b]))
			goto next_clear;
		spin_lock_bh(lock);
		for_each_bucket_flow(f, pos, &new->b[b], new->node)
			INIT_HLIST_NODE(&f->node[old->node]);
		spin_unlock_bh(lock);
next_clear:
		cond_resched();
	}
	atomic64_inc(new->mask > old->mask ? &t->grown : &t->shrunk);
	mutex_unlock(&t->resize_lock);
	buckets_free(old);
	return 0;
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
 * before the next call may make it skip or repeat one: the bucket's stripe
 * generation says so. So does a resize between two calls, which moves
 * flows between buckets. Either sets w->changed, for good.
 */
int srff_table_walk(struct srff_table *t, struct srff_walk *w,
		    const struct srff_walk_ops *ops, void *arg)
{
	const struct srff_flow *f;
	struct hlist_node *pos;
	struct srff_buckets *a;
	unsigned int b, i, gen;
	bool had_output;
	int err = 0;

	rcu_read_lock();
	a = rcu_dereference(t->tbl);
	if (w->buckets && w->buckets != a->mask + 1)
		w->changed = true;
	if (w->pos && w->gen != stripe_gen(t, w->bucket))
		w->changed = true;
	w->buckets = a->mask + 1;
	for (b = w->bucket; b <= a->mask; b++, w->pos = 0) {
		if (hlist_empty(&a->b[b]))	/* most are: no call */
			continue;
		/* Before the list: a change after this is seen next time. */
		gen = stripe_gen(t, b);
		had_output = ops->mark(arg);
		i = 0;
		for_each_bucket_flow(f, pos, &a->b[b], a->node) {
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
				w->gen = gen;
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

/*
 * The flow-size histogram, one copy per CPU (2 KiB each), is allocated when
 * the table gets its first flow, not with the table: an enabled namespace
 * that sends nothing does not pay for it. The hook asks for it
 * (srff_table_wants_sizes) and the resize worker allocates it; flows that
 * end before it is published are not recorded (none does in practice: the
 * first flow's creation queued the allocation). Process context; one
 * caller at a time (the resize worker). 0 or -ENOMEM.
 */
int srff_table_sizes_alloc(struct srff_table *t)
{
	struct srff_sizes __percpu *s;

	might_sleep();
	if (t->sizes)
		return 0;
	s = alloc_percpu_gfp(struct srff_sizes, GFP_KERNEL_ACCOUNT);
	if (!s)
		return -ENOMEM;
	smp_store_release(&t->sizes, s);	/* zeroed, then published */
	return 0;
}

/* The flow-size histogram, summed over CPUs into @out (zero before the
 * table's first flow). Any context.
 */
void srff_table_sizes_read(const struct srff_table *t, struct srff_sizes *out)
{
	BUILD_BUG_ON(sizeof(struct srff_sizes) % sizeof(u64));
	srff_pcpu_sum_u64((u64 *)out, READ_ONCE(t->sizes), sizeof(*out));
}

/* Flows recorded so far (every reason), summed over CPUs. Any context. */
u64 srff_table_sizes_ended(const struct srff_table *t)
{
	struct srff_sizes __percpu *sizes = READ_ONCE(t->sizes);
	unsigned int cpu, r;
	u64 n = 0;

	if (!sizes)
		return 0;
	for_each_possible_cpu(cpu) {
		const struct srff_sizes *s = per_cpu_ptr(sizes, cpu);

		for (r = 0; r < SRFF_SIZE_REASONS; r++)
			n += READ_ONCE(s->reason[r]);
	}
	return n;
}
