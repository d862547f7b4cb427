// SPDX-License-Identifier: GPL-2.0
/*
 * Flow table tests: creation, the cap, accounting, GC, flush, teardown and
 * the resumable walk. Every test tears its table down, and test_main.c
 * then fails it if a flow, an array or an RCU callback was left behind.
 */
#include <pthread.h>
#include <stdlib.h>

#include "kernel.h"
#include "table.h"
#include "test.h"

#define IDLE	(HZ * 5 / 2)		/* the default idle_timeout, 2.5 s */

static void setup(struct srff_table *t, unsigned int buckets,
		  unsigned int max_flows)
{
	CHECK_EQ_INT(srff_table_cache_init(), 0);
	CHECK_EQ_INT(srff_table_init(t, buckets, max_flows, NULL), 0);
}

static void teardown(struct srff_table *t)
{
	srff_table_uninit(t);
	rcu_barrier();			/* as module exit does */
	srff_table_cache_uninit();
}

/* The histogram summed over CPUs. */
static struct srff_sizes hist(const struct srff_table *t)
{
	struct srff_sizes h;

	srff_table_sizes_read(t, &h);
	return h;
}

/* A distinct TCP key per @i; its index can be read back with key_index. */
static struct srff_key key(u32 i)
{
	struct srff_key k;

	memset(&k, 0, sizeof(k));
	k.family = AF_INET;
	k.proto = IPPROTO_TCP;
	k.saddr.ip = htonl(0x0a000000 | (i >> 16));
	k.daddr.ip = htonl(0xc0a80001);
	k.sport = htons(i & 0xffff);
	k.dport = htons(443);
	return k;
}

static u32 key_index(const struct srff_key *k)
{
	return (ntohl(k->saddr.ip) & 0xffff) << 16 | ntohs(k->sport);
}

static struct srff_flow *get(struct srff_table *t, u32 i, unsigned long now,
			     bool *created)
{
	struct srff_key k = key(i);

	return srff_table_get(t, &k, now, created);
}

/* Links and unlinks so far, over every lock stripe. */
static unsigned int gen_sum(const struct srff_table *t)
{
	unsigned int i, n = 0;

	for (i = 0; i <= t->lock_mask; i++)
		n += t->locks[i].gen;
	return n;
}

/* Flows in bucket @b of @t's array (any node index: next pointers only). */
static unsigned int chain_len(struct srff_table *t, unsigned int b)
{
	struct hlist_node *n;
	unsigned int len = 0;

	for (n = t->tbl->b[b].first; n; n = n->next)
		len++;
	return len;
}

/* A table starts with as many buckets as locks, SRFF_MAX_LOCKS at most,
 * and records the most it may grow to (0: from max_flows).
 */
static void table_init_sizes(void)
{
	static const struct {
		unsigned int max_buckets, mask, lock_mask, max;
	} cases[] = {
		{ 0, 255, 255, 0 }, { 1, 0, 0, 1 }, { 8, 7, 7, 8 },
		{ 1000, 255, 255, 1024 }, { 4096, 255, 255, 4096 },
		{ 1 << 19, 255, 255, 1 << 19 },
		{ 1U << 31, 255, 255, SRFF_TABLE_MAX_BUCKETS },
	};
	struct srff_table t;
	unsigned int i;

	CHECK_EQ(SRFF_MAX_LOCKS, 256);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		setup(&t, cases[i].max_buckets, 100);
		CHECK_EQ(srff_table_buckets(&t), cases[i].mask + 1);
		CHECK_EQ(t.lock_mask, cases[i].lock_mask);
		CHECK_EQ(t.max_buckets, cases[i].max);
		CHECK_EQ(srff_table_count(&t), 0);
		CHECK_EQ(srff_user_kv_live, 4); /* array, heads, locks, slots */
		teardown(&t);
	}
}

/* Each allocation of init failing in turn: -ENOMEM, nothing left over. */
static void table_init_enomem(void)
{
	struct srff_table t;
	int nth;

	for (nth = 1; nth <= 4; nth++) { /* array, heads, locks, slots */
		srff_user_kv_fail_nth = nth;
		CHECK_EQ_INT(srff_table_init(&t, 64, 100, NULL), -ENOMEM);
		CHECK_EQ(srff_user_kv_live, 0);
	}
	srff_user_kv_fail_nth = 0;
}

static void get_creates_once(void)
{
	struct srff_flow *a, *b, *c;
	struct srff_table t;
	bool created;

	setup(&t, 16, 100);
	a = get(&t, 1, 1000, &created);
	CHECK(!IS_ERR(a) && created);
	CHECK_EQ(srff_table_count(&t), 1);
	CHECK_EQ(gen_sum(&t), 1);
	CHECK_EQ(a->created, 1000);
	CHECK_EQ(a->last_seen, 1000);
	CHECK_EQ(atomic64_read(&a->bytes), 0);
	CHECK_EQ(a->flags, 0);

	b = get(&t, 1, 2000, &created);
	CHECK(b == a && !created);
	CHECK_EQ(a->created, 1000);		/* a lookup changes nothing */
	CHECK_EQ(srff_table_count(&t), 1);
	CHECK_EQ(gen_sum(&t), 1);
	CHECK_EQ(srff_user_slab_live, 1);

	c = get(&t, 2, 2000, &created);
	CHECK(!IS_ERR(c) && c != a && created);
	CHECK_EQ(srff_table_count(&t), 2);
	CHECK_EQ(gen_sum(&t), 2);
	CHECK(get(&t, 2, 2001, &created) == c && !created);
	CHECK(get(&t, 1, 2001, &created) == a && !created);
	teardown(&t);
}

/* Keys that differ in one field only are different flows. */
static void get_distinguishes_every_field(void)
{
	struct srff_key k[6];
	struct srff_flow *f[6];
	struct srff_table t;
	unsigned int i, j;
	bool created;

	setup(&t, 4, 100);
	for (i = 0; i < 6; i++)
		k[i] = key(7);
	k[1].proto = IPPROTO_UDP;
	k[2].family = AF_INET6;
	k[3].dport = htons(444);
	k[4].daddr.ip6.s6_addr[15] = 1;		/* beyond the IPv4 address */
	for (i = 0; i < 6; i++) {
		f[i] = srff_table_get(&t, &k[i], 1, &created);
		CHECK(!IS_ERR(f[i]));
		CHECK_EQ(created, i < 5);
	}
	for (i = 0; i < 5; i++)
		for (j = i + 1; j < 5; j++)
			CHECK(f[i] != f[j]);
	CHECK(f[5] == f[0]);
	CHECK_EQ(srff_table_count(&t), 5);
	teardown(&t);
}

/* The cap is never crossed, and a refused flow allocates nothing. */
static void max_flows_cap(void)
{
	struct srff_flow *f;
	struct srff_table t;
	unsigned long allocs;
	bool created;
	u32 i;

	setup(&t, 8, 16);
	for (i = 0; i < 16; i++)
		CHECK(!IS_ERR(get(&t, i, 1, &created)) && created);
	allocs = srff_user_slab_allocs;
	for (i = 16; i < 64; i++) {
		f = get(&t, i, 1, &created);
		CHECK(IS_ERR(f) && PTR_ERR(f) == -ENOSPC && !created);
		CHECK_EQ(srff_table_count(&t), 16);
	}
	CHECK_EQ(srff_user_slab_allocs, allocs);	/* not even tried */
	CHECK_EQ(srff_user_slab_live, 16);
	CHECK_EQ(gen_sum(&t), 16);
	/* Flows already in the table are still found at the cap. */
	for (i = 0; i < 16; i++)
		CHECK(!IS_ERR(get(&t, i, 2, &created)) && !created);

	/* Lowered at run time below the count: no new flow, old ones found. */
	srff_table_set_max_flows(&t, 4);
	CHECK(IS_ERR(get(&t, 100, 3, &created)));
	CHECK(!IS_ERR(get(&t, 15, 3, &created)));
	CHECK_EQ(srff_table_count(&t), 16);

	/* Room again once flows are gone. */
	srff_table_set_max_flows(&t, 16);
	CHECK_EQ(srff_table_sweep(&t, SRFF_SWEEP_FLUSH, 4, IDLE), 16);
	CHECK(!IS_ERR(get(&t, 100, 5, &created)) && created);
	teardown(&t);
}

/* A failed GFP_ATOMIC allocation gives the reserved slot back. */
static void alloc_failure_gives_slot_back(void)
{
	struct srff_flow *f;
	struct srff_table t;
	bool created = true;

	setup(&t, 8, 2);
	srff_user_slab_fail_nth = 1;
	f = get(&t, 1, 1, &created);
	CHECK(IS_ERR(f) && PTR_ERR(f) == -ENOMEM && !created);
	CHECK_EQ(srff_table_count(&t), 0);
	CHECK_EQ(srff_user_slab_live, 0);
	CHECK_EQ(gen_sum(&t), 0);
	CHECK(!IS_ERR(get(&t, 1, 1, &created)) && created);
	CHECK(!IS_ERR(get(&t, 2, 1, &created)) && created);
	CHECK(IS_ERR(get(&t, 3, 1, &created)));	/* the cap counts right */
	teardown(&t);
}

/* srff_flow_account() returns the bytes sent before this packet. */
static void account_returns_bytes_before(void)
{
	struct srff_table t;
	struct srff_flow *f;
	bool created;

	setup(&t, 8, 8);
	f = get(&t, 1, 100, &created);
	CHECK_EQ(srff_flow_account(&t, f, 100, 100, 0), 0);
	CHECK_EQ(srff_flow_account(&t, f, 200, 100, 0), 100);
	CHECK_EQ(srff_flow_account(&t, f, 1500, 101, 0), 300);
	CHECK_EQ(atomic64_read(&f->bytes), 1800);
	CHECK_EQ(f->last_seen, 101);
	/* Without idle reset, a long silence changes nothing. */
	CHECK_EQ(srff_flow_account(&t, f, 1, 101 + 100 * HZ, 0), 1800);
	CHECK_EQ(f->last_seen, 101 + 100 * HZ);
	CHECK_EQ(f->created, 100);
	teardown(&t);
}

/* With idle_reset, a flow idle that long starts again from 0. */
static void account_idle_reset(void)
{
	const unsigned long reset = HZ;
	unsigned long t0, now;
	struct srff_table t;
	struct srff_flow *f;
	bool created;
	int wrap;

	setup(&t, 8, 8);
	for (wrap = 0; wrap < 2; wrap++) {
		/* The second time across the jiffies wrap. */
		t0 = wrap ? ULONG_MAX - reset / 2 : 5000;
		f = get(&t, wrap, t0, &created);
		CHECK_EQ(srff_flow_account(&t, f, 1000, t0, reset), 0);
		now = t0 + reset - 1;		/* just under: keeps counting */
		CHECK_EQ(srff_flow_account(&t, f, 1000, now, reset), 1000);
		now += reset;			/* exactly idle_reset later */
		CHECK_EQ(srff_flow_account(&t, f, 700, now, reset), 0);
		CHECK_EQ(atomic64_read(&f->bytes), 700);
		CHECK_EQ(f->last_seen, now);
		CHECK_EQ(srff_flow_account(&t, f, 5, now + 1, reset), 700);
		now += 1 + 5 * reset;
		CHECK_EQ(srff_flow_account(&t, f, 9, now, reset), 0);
		CHECK_EQ(atomic64_read(&f->bytes), 9);
	}
	teardown(&t);
}

/*
 * A local TCP flow's idle gap follows its path's minimum RTT, in whole ticks
 * rounded down (HZ 250: 4 ms), never under two ticks and never over
 * idle_reset; off stays off.
 */
static void idle_reset_rtt(void)
{
	const unsigned long reset = 25;		/* 100 ms */

	CHECK_EQ(srff_idle_reset_rtt(reset, 21000), 5);	/* 21 ms: 5.25 */
	CHECK_EQ(srff_idle_reset_rtt(reset, 20000), 5);
	CHECK_EQ(srff_idle_reset_rtt(reset, 19999), 4);
	CHECK_EQ(srff_idle_reset_rtt(reset, 150000), reset);	/* longer path */
	CHECK_EQ(srff_idle_reset_rtt(reset, ~0U), reset);	/* no sample yet */
	CHECK_EQ(srff_idle_reset_rtt(reset, 50), 2);	/* a LAN: the floor */
	CHECK_EQ(srff_idle_reset_rtt(reset, 0), 2);
	CHECK_EQ(srff_idle_reset_rtt(1, 50), 1);	/* idle_reset below it */
	CHECK_EQ(srff_idle_reset_rtt(0, 20000), 0);	/* off */
}

/*
 * Kept-alive over a 20 ms path: responses 30 ms apart with nothing unsent
 * between them each start from 0 under the RTT's gap (5 ticks), where the
 * 100 ms idle_reset alone would add them up.
 */
static void account_idle_reset_rtt(void)
{
	const unsigned long reset = 25, gap = 30 * HZ / 1000;	/* 7 ticks */
	unsigned long rtt_reset = srff_idle_reset_rtt(reset, 20000);
	unsigned long now = 5000;
	struct srff_table t;
	struct srff_flow *f;
	bool created;
	int i;

	setup(&t, 8, 8);
	CHECK_EQ_INT(srff_table_sizes_alloc(&t), 0);
	f = get(&t, 1, now, &created);
	for (i = 0; i < 4; i++, now += gap) {
		CHECK_EQ(srff_flow_account(&t, f, 9000, now, rtt_reset), 0);
		CHECK_EQ(srff_flow_account(&t, f, 3000, now, rtt_reset), 9000);
	}
	CHECK_EQ(hist(&t).reason[SRFF_SIZE_MSG], 3);
	f = get(&t, 2, now, &created);
	for (i = 0; i < 4; i++, now += gap)
		CHECK_EQ(srff_flow_account(&t, f, 12000, now, reset),
			 (u64)i * 12000);
	teardown(&t);
}

/*
 * A segment with no data counts its bytes but is no activity: an ACK in the
 * middle of a gap neither ends it (no message of its own) nor shortens it,
 * and the next data packet still starts from 0.
 */
static void account_quiet(void)
{
	const unsigned long reset = 5;
	struct srff_table t;
	struct srff_flow *f;
	bool created;

	setup(&t, 8, 8);
	CHECK_EQ_INT(srff_table_sizes_alloc(&t), 0);
	f = get(&t, 1, 100, &created);
	CHECK_EQ(srff_flow_account(&t, f, 9000, 100, reset), 0);
	srff_flow_account_quiet(f, 52);
	CHECK_EQ(f->last_seen, 100);
	srff_flow_account_quiet(f, 52);
	CHECK_EQ(atomic64_read(&f->bytes), 9104);
	CHECK_EQ(hist(&t).reason[SRFF_SIZE_MSG], 0);
	CHECK_EQ(srff_flow_account(&t, f, 3000, 106, reset), 0);
	CHECK_EQ(hist(&t).reason[SRFF_SIZE_MSG], 1);
	CHECK_EQ(hist(&t).bytes[srff_sizes_bucket(9104)], 9104);
	teardown(&t);
}

/* GC frees flows idle for idle_timeout, to the jiffy, and keeps the rest. */
static void gc_frees_idle_keeps_busy(void)
{
	const unsigned long now = 100000;
	struct srff_flow *busy, *idle, *older;
	struct srff_table t;
	unsigned int gen;
	bool created;

	setup(&t, 16, 100);
	busy = get(&t, 1, now - IDLE + 1, &created);
	idle = get(&t, 2, now - IDLE, &created);
	older = get(&t, 3, now - 10 * IDLE, &created);
	gen = gen_sum(&t);
	CHECK_EQ(srff_table_sweep(&t, SRFF_SWEEP_GC, now, IDLE), 2);
	CHECK_EQ(srff_table_count(&t), 1);
	CHECK_EQ(gen_sum(&t), gen + 2);
	CHECK_EQ(atomic64_read(&t.gc_freed), 2);
	CHECK_EQ(atomic64_read(&t.fin_retired), 0);
	CHECK_EQ(atomic64_read(&t.gc_runs), 1);
	CHECK(get(&t, 1, now, &created) == busy && !created);
	CHECK_EQ(busy->last_seen, now - IDLE + 1);	/* lookups don't touch it */
	srff_flow_account(&t, busy, 100, now, 0);

	/* Unlinked flows stay readable until the grace period ends. */
	CHECK_EQ(srff_user_rcu_pending, 2);
	CHECK_EQ(srff_user_slab_live, 3);
	CHECK_EQ(idle->created, now - IDLE);
	CHECK_EQ(older->created, now - 10 * IDLE);
	rcu_barrier();
	CHECK_EQ(srff_user_slab_live, 1);

	/* busy was seen at `now`: one jiffy short of idle, then idle. */
	CHECK_EQ(srff_table_sweep(&t, SRFF_SWEEP_GC, now + IDLE - 1, IDLE), 0);
	CHECK_EQ(srff_table_sweep(&t, SRFF_SWEEP_GC, now + IDLE, IDLE), 1);
	CHECK_EQ(atomic64_read(&t.gc_runs), 3);
	CHECK_EQ(atomic64_read(&t.gc_freed), 3);
	CHECK_EQ(srff_table_count(&t), 0);
	/* The key comes back as a new flow. */
	CHECK(!IS_ERR(get(&t, 1, now + IDLE, &created)) && created);
	teardown(&t);
}

/* ... also when jiffies wrapped between the last packet and the sweep. */
static void gc_across_jiffies_wrap(void)
{
	const unsigned long seen = ULONG_MAX - 5;
	struct srff_table t;
	bool created;

	setup(&t, 16, 100);
	get(&t, 1, seen, &created);
	CHECK_EQ(srff_table_sweep(&t, SRFF_SWEEP_GC, seen + IDLE - 1, IDLE), 0);
	CHECK_EQ(srff_table_sweep(&t, SRFF_SWEEP_GC, seen + IDLE, IDLE), 1);
	teardown(&t);
}

/* Closed flows go after SRFF_CLOSED_LINGER idle, counted as fin_retired. */
static void gc_retires_closed_flows(void)
{
	const unsigned long now = 50000;
	struct srff_flow *f;
	struct srff_table t;
	bool created;

	CHECK(SRFF_CLOSED_LINGER > 0 && SRFF_CLOSED_LINGER < IDLE);
	setup(&t, 16, 100);
	f = get(&t, 1, now - SRFF_CLOSED_LINGER, &created);	/* lingered */
	srff_flow_close(f);
	srff_flow_close(f);					/* idempotent */
	CHECK_EQ(f->flags, 1UL << SRFF_FLOW_CLOSED_BIT);
	f = get(&t, 2, now - SRFF_CLOSED_LINGER + 1, &created); /* not yet */
	srff_flow_close(f);
	f = get(&t, 3, now - 2 * IDLE, &created);	/* closed and idle */
	srff_flow_close(f);
	get(&t, 4, now - IDLE, &created);		/* just idle */
	get(&t, 5, now - SRFF_CLOSED_LINGER, &created);	/* open, recent */

	CHECK_EQ(srff_table_sweep(&t, SRFF_SWEEP_GC, now, IDLE), 3);
	CHECK_EQ(atomic64_read(&t.fin_retired), 2);	/* 1 and 3 */
	CHECK_EQ(atomic64_read(&t.gc_freed), 1);	/* 4 */
	CHECK_EQ(atomic64_read(&t.flushed), 0);
	f = get(&t, 2, now, &created);
	CHECK(!IS_ERR(f) && !created);
	CHECK(get(&t, 5, now, &created) && !created);
	CHECK_EQ(srff_table_count(&t), 2);
	/* A closed flow that keeps sending is kept until it goes quiet. */
	srff_flow_account(&t, f, 100, now, 0);
	CHECK_EQ(srff_table_sweep(&t, SRFF_SWEEP_GC, now + SRFF_CLOSED_LINGER - 1, IDLE), 0);
	CHECK_EQ(srff_table_sweep(&t, SRFF_SWEEP_GC, now + SRFF_CLOSED_LINGER, IDLE), 1);
	CHECK_EQ(atomic64_read(&t.fin_retired), 3);
	teardown(&t);
}

static void flush_counts(void)
{
	struct srff_table t;
	unsigned int gen;
	bool created;
	u32 i;

	setup(&t, 64, 1000);
	for (i = 0; i < 500; i++)
		get(&t, i, i, &created);
	gen = gen_sum(&t);
	CHECK_EQ(gen, 500);
	CHECK_EQ(srff_table_sweep(&t, SRFF_SWEEP_FLUSH, 0, IDLE), 500);
	CHECK_EQ(atomic64_read(&t.flushed), 500);
	CHECK_EQ(atomic64_read(&t.gc_freed), 0);
	CHECK_EQ(atomic64_read(&t.gc_runs), 0);
	CHECK_EQ(gen_sum(&t), 1000);
	CHECK_EQ(srff_table_count(&t), 0);
	CHECK_EQ(srff_table_sweep(&t, SRFF_SWEEP_FLUSH, 0, IDLE), 0);
	CHECK_EQ(atomic64_read(&t.flushed), 500);
	teardown(&t);
}

/* Teardown frees every flow without counting it anywhere. */
static void sweep_all_at_uninit(void)
{
	struct srff_table t;
	bool created;
	u32 i;

	setup(&t, 256, 5000);
	for (i = 0; i < 3000; i++)
		get(&t, i, 1, &created);
	CHECK_EQ(srff_user_slab_live, 3000);
	CHECK_EQ(srff_table_sweep(&t, SRFF_SWEEP_ALL, 0, 0), 3000);
	CHECK_EQ(atomic64_read(&t.flushed) + atomic64_read(&t.gc_freed) +
		 atomic64_read(&t.fin_retired) + atomic64_read(&t.gc_runs), 0);
	for (i = 0; i < 3000; i++)
		get(&t, i, 1, &created);
	srff_table_uninit(&t);
	CHECK_EQ(srff_user_warnings, 0);	/* count reached 0 */
	CHECK_EQ(srff_user_rcu_pending, 6000);	/* freed after the grace period */
	rcu_barrier();
	CHECK_EQ(srff_user_slab_live, 0);
	srff_table_cache_uninit();
}

/* The sweep offers to reschedule once per bucket, empty or not. */
static void sweep_reschedules_per_bucket(void)
{
	struct srff_table t;
	unsigned long calls;
	bool created;
	u32 i;

	setup(&t, 512, 5000);
	for (i = 0; i < 2000; i++)
		get(&t, i, 1, &created);
	CHECK_EQ_INT(srff_table_resize(&t, 512), 0);
	CHECK_EQ(srff_table_buckets(&t), 512);
	calls = srff_user_resched_calls;
	srff_table_sweep(&t, SRFF_SWEEP_GC, 2, IDLE);
	CHECK_EQ(srff_user_resched_calls - calls, 512);
	teardown(&t);
}

/*
 * gc_last_chain is the longest chain the latest GC sweep held a lock over,
 * counting the flows it kept and the ones it freed; flushes leave it alone.
 */
static void gc_reports_longest_chain(void)
{
	struct srff_table t;
	unsigned int b, n, longest = 0;
	bool created;
	u32 i;

	setup(&t, 8, 1000);
	CHECK_EQ(t.gc_last_chain, 0);
	for (i = 0; i < 100; i++)
		get(&t, i, i < 50 ? 1 : 1 + IDLE, &created);
	for (b = 0; b < srff_table_buckets(&t); b++) {
		n = chain_len(&t, b);
		longest = n > longest ? n : longest;
	}
	CHECK(longest >= 100 / 8);
	CHECK_EQ(srff_table_sweep(&t, SRFF_SWEEP_GC, 1 + IDLE, IDLE), 50);
	CHECK_EQ(t.gc_last_chain, longest);
	CHECK_EQ(srff_table_sweep(&t, SRFF_SWEEP_FLUSH, 0, 0), 50);
	CHECK_EQ(t.gc_last_chain, longest);
	CHECK_EQ(srff_table_sweep(&t, SRFF_SWEEP_GC, 1 + IDLE, IDLE), 0);
	CHECK_EQ(t.gc_last_chain, 0);
	teardown(&t);
}

/* SipHash spreads sequential keys: no bucket is much longer than average. */
static void hash_spreads_keys(void)
{
	struct srff_table t;
	unsigned int b, n, longest = 0;
	bool created;
	u32 i;

	setup(&t, 4096, 1 << 16);
	for (i = 0; i < 8192; i++)
		get(&t, i, 1, &created);
	CHECK_EQ_INT(srff_table_resize(&t, 0), 0);	/* to max_buckets */
	CHECK_EQ(srff_table_buckets(&t), 4096);
	for (b = 0; b < 4096; b++) {
		n = chain_len(&t, b);
		if (n > longest)
			longest = n;
	}
	/* Poisson(2) over 4096 buckets: the longest is ~9; 20 is absurd. */
	CHECK(longest >= 3 && longest <= 20);
	teardown(&t);
}

struct walk_ctx {
	unsigned int in_msg;	/* flows put in the current message */
	unsigned int per_msg;	/* how many fit */
	unsigned int *visits;	/* per flow index */
	u32 msg[64];		/* what the current message holds (per_msg <= 64) */
	unsigned int mark;	/* in_msg where the current bucket began */
	unsigned int marks;	/* mark() calls: buckets walked */
	unsigned int undos;
};

static int walk_fn(const struct srff_flow *f, void *arg)
{
	struct walk_ctx *c = arg;
	u32 idx = key_index(&f->key);

	if (c->in_msg == c->per_msg)
		return -EMSGSIZE;
	c->msg[c->in_msg++] = idx;
	c->visits[idx]++;
	return 0;
}

static bool walk_mark(void *arg)
{
	struct walk_ctx *c = arg;

	c->mark = c->in_msg;
	c->marks++;
	return c->in_msg;
}

static void walk_undo(void *arg)
{
	struct walk_ctx *c = arg;

	while (c->in_msg > c->mark)
		c->visits[c->msg[--c->in_msg]]--;
	c->undos++;
}

static const struct srff_walk_ops walk_ops = {
	.flow = walk_fn, .mark = walk_mark, .undo = walk_undo,
};

/* Flows per bucket of @t, into @len (one entry per bucket). */
static void chain_lengths(struct srff_table *t, unsigned int *len)
{
	unsigned int b;

	for (b = 0; b < srff_table_buckets(t); b++)
		len[b] = chain_len(t, b);
}

/* A dump in many small messages sees every flow exactly once, and a
 * message ends on a bucket boundary unless one bucket alone overflows it.
 */
static void walk_resumes_from_cursor(void)
{
	static const unsigned int per_msg[] = { 1, 2, 7, 20, 50, 64 };
	const unsigned int nflows = 1000;
	unsigned int len[64], p, i, msgs, gen, longest = 0;
	struct srff_table t;
	struct srff_walk w;
	bool created;
	int err;

	setup(&t, 64, nflows);			/* chains of ~16 */
	for (i = 0; i < nflows; i++)
		get(&t, i, 1, &created);
	gen = gen_sum(&t);
	chain_lengths(&t, len);
	CHECK_EQ(srff_table_buckets(&t), 64);
	for (i = 0; i < 64; i++)
		longest = len[i] > longest ? len[i] : longest;
	for (p = 0; p < sizeof(per_msg) / sizeof(per_msg[0]); p++) {
		struct walk_ctx c = { .per_msg = per_msg[p] };

		c.visits = calloc(nflows, sizeof(*c.visits));
		memset(&w, 0, sizeof(w));
		msgs = 0;
		do {
			unsigned int b0 = w.bucket, p0 = w.pos;

			c.in_msg = 0;
			err = srff_table_walk(&t, &w, &walk_ops, &c);
			msgs++;
			CHECK(err == 0 || err == -EMSGSIZE);
			CHECK(c.in_msg > 0 || !err);	/* always progress */
			/* Split only a bucket that did not fit alone. */
			if (w.pos)
				CHECK(w.bucket == b0 ? len[b0] - p0 > per_msg[p]
						     : len[w.bucket] > per_msg[p]);
		} while (err && msgs <= nflows + 1);
		CHECK_EQ_INT(err, 0);
		for (i = 0; i < nflows; i++)
			if (c.visits[i] != 1)
				break;
		CHECK_EQ(i, nflows);
		if (per_msg[p] >= longest)	/* no bucket split */
			CHECK(c.undos + 1 >= msgs);
		/* The finished cursor stays finished. */
		CHECK_EQ(w.bucket, 64);
		CHECK(!w.changed);
		CHECK_EQ_INT(srff_table_walk(&t, &w, &walk_ops, &c), 0);
		free(c.visits);
	}
	CHECK_EQ(gen_sum(&t), gen);	/* walking changes nothing */
	teardown(&t);
}

static void walk_empty_table(void)
{
	unsigned int visits[1] = { 0 };
	struct walk_ctx c = { .per_msg = 1, .visits = visits };
	struct srff_walk w = { 0 };
	struct srff_table t;

	setup(&t, 16, 10);
	CHECK_EQ_INT(srff_table_walk(&t, &w, &walk_ops, &c), 0);
	CHECK_EQ(visits[0], 0);
	CHECK_EQ(c.marks, 0);		/* empty buckets cost no call */
	teardown(&t);
}

/*
 * What whole-bucket messages are for: a dump of a table that changes
 * between every two of its messages (new flows linked, closed ones
 * unlinked, in every bucket) lists each flow that stays linked throughout
 * exactly once, and splits no bucket. A cursor that resumed inside a bucket
 * would skip one flow per unlink in front of it and repeat one per link.
 */
static void walk_under_churn_lists_stable_flows_once(void)
{
	const unsigned int stable = 2000, per_msg = 50, churn = 20;
	unsigned int i, msgs = 0, next = stable, bad = 0;
	struct walk_ctx c = { .per_msg = per_msg };
	struct srff_walk w = { 0 };
	struct srff_table t;
	struct srff_flow *f;
	bool created;
	int err;

	setup(&t, 512, 100000);			/* chains of ~4 */
	c.visits = calloc(100000, sizeof(*c.visits));
	for (i = 0; i < stable; i++)
		get(&t, i, 1, &created);
	do {
		/* Between messages: close and retire the churn flows made
		 * last time, make new ones everywhere.
		 */
		for (i = stable; i < next; i++) {
			struct srff_key k = key(i);

			f = srff_table_find(&t, &k);
			if (f)
				srff_flow_close(f);
		}
		srff_table_sweep(&t, SRFF_SWEEP_GC, 1 + SRFF_CLOSED_LINGER, IDLE);
		for (i = 0; i < churn && next < 100000; i++)
			get(&t, next++, 1 + SRFF_CLOSED_LINGER, &created);
		c.in_msg = 0;
		err = srff_table_walk(&t, &w, &walk_ops, &c);
		CHECK_EQ(w.pos, 0);
		msgs++;
	} while (err && msgs < 10000);
	CHECK_EQ_INT(err, 0);
	CHECK(msgs > 40);		/* 2 000 flows, 50 a message */
	CHECK(next - stable > 800);	/* churn happened throughout */
	for (i = 0; i < stable; i++)
		bad += c.visits[i] != 1;
	CHECK_EQ(bad, 0);
	free(c.visits);
	teardown(&t);
}

/*
 * Why a split bucket is flagged: a link or unlink in front of the cursor,
 * in the bucket a walk resumes in, shifts the cursor's position by one, so
 * the resumed walk repeats a flow (link) or skips one (unlink). Both must
 * move the generation, which is what netlink.c turns into NLM_F_DUMP_INTR.
 * One bucket longer than a message: the one case that splits.
 */
static void walk_shift_is_seen_by_gen(void)
{
	const unsigned int nflows = 10, per_msg = 4;
	unsigned int i, gen, visits[12], skipped, repeated;
	struct srff_table t;
	struct srff_walk w;
	bool created;
	int unlink;

	for (unlink = 0; unlink <= 1; unlink++) {
		struct walk_ctx c = { .per_msg = per_msg, .visits = visits };

		memset(visits, 0, sizeof(visits));
		setup(&t, 1, 100);
		/* Flows link at the head: flow 0 last, idle since jiffies 1. */
		for (i = 1; i < nflows; i++)
			get(&t, i, 1000, &created);
		get(&t, 0, 1, &created);
		memset(&w, 0, sizeof(w));
		CHECK_EQ_INT(srff_table_walk(&t, &w, &walk_ops, &c), -EMSGSIZE);
		CHECK_EQ(w.bucket, 0);
		CHECK_EQ(w.pos, per_msg);	/* split: kept, not undone */
		CHECK_EQ(c.undos, 0);
		CHECK_EQ(visits[0], 1);		/* the head was in message 1 */
		gen = gen_sum(&t);		/* one bucket, one stripe */

		if (unlink)	/* GC takes flow 0, in front of the cursor */
			CHECK_EQ(srff_table_sweep(&t, SRFF_SWEEP_GC, 1 + IDLE,
						  IDLE), 1);
		else		/* flow 10 links at the head */
			get(&t, nflows, 1000, &created);
		CHECK(gen_sum(&t) != gen);

		CHECK(!w.changed);
		do {
			c.in_msg = 0;
		} while (srff_table_walk(&t, &w, &walk_ops, &c));
		CHECK(w.changed);		/* the dump says so */
		skipped = repeated = 0;
		for (i = 0; i < nflows; i++) {
			skipped += visits[i] == 0;
			repeated += visits[i] > 1;
		}
		CHECK_EQ(visits[nflows], 0);	/* linked behind the cursor */
		CHECK_EQ(skipped, unlink ? 1 : 0);
		CHECK_EQ(repeated, unlink ? 0 : 1);
		teardown(&t);
	}
}

/* The generation moves on every link and unlink, and on nothing else.
 * One bucket, so that the closed flow is always the one evicted (with
 * more, whether it shares the newcomer's bucket depends on the secret).
 */
static void gen_counts_links_and_unlinks(void)
{
	struct srff_table t;
	struct srff_flow *f;
	bool created;

	setup(&t, 1, 3);
	CHECK_EQ(gen_sum(&t), 0);
	f = get(&t, 1, 10, &created);
	CHECK_EQ(gen_sum(&t), 1);
	get(&t, 1, 11, &created);			/* lookup */
	srff_flow_account(&t, f, 100, 11, 0);		/* accounting */
	srff_flow_close(f);
	CHECK_EQ(gen_sum(&t), 1);
	get(&t, 2, 10, &created);
	get(&t, 3, 10, &created);
	get(&t, 4, 10, &created);	/* over the cap: evicts 1 */
	CHECK_EQ(gen_sum(&t), 5);
	srff_user_slab_fail_nth = 1;
	CHECK_EQ(srff_table_sweep(&t, SRFF_SWEEP_FLUSH, 0, 0), 3);
	CHECK(IS_ERR(get(&t, 5, 10, &created)));	/* allocation failed */
	srff_user_slab_fail_nth = 0;
	CHECK_EQ(gen_sum(&t), 8);
	CHECK_EQ(srff_table_sweep(&t, SRFF_SWEEP_GC, 12, IDLE), 0);
	CHECK_EQ(gen_sum(&t), 8);
	teardown(&t);
}

/* A full table makes room in the newcomer's bucket: a closed flow first,
 * else the longest-idle one, but never a flow that sent within
 * SRFF_EVICT_MIN_IDLE.
 */
static void full_table_evicts_closed_then_idle(void)
{
	const unsigned long t0 = 1000, later = t0 + SRFF_EVICT_MIN_IDLE + 5;
	struct srff_flow *f;
	struct srff_table t;
	struct srff_key k;
	bool created;
	u32 i;

	setup(&t, 1, 4);		/* one bucket: every flow collides */
	for (i = 0; i < 4; i++)
		CHECK(!IS_ERR(get(&t, i, t0, &created)) && created);
	/* Every flow busy: the newcomer is refused, nothing evicted. */
	f = get(&t, 10, t0 + 1, &created);
	CHECK(IS_ERR(f) && PTR_ERR(f) == -ENOSPC);
	CHECK_EQ(atomic64_read(&t.evicted), 0);

	/* A closed flow goes first, however recently it sent. */
	k = key(2);
	srff_flow_close(srff_table_find(&t, &k));
	CHECK(!IS_ERR(get(&t, 10, t0 + 1, &created)) && created);
	CHECK(srff_table_find(&t, &k) == NULL);
	CHECK_EQ(atomic64_read(&t.evicted), 1);
	CHECK_EQ(srff_table_count(&t), 4);

	/* Flows 0 and 1 keep sending; 3 (idle since t0) is older than 10. */
	for (i = 0; i < 2; i++) {
		k = key(i);
		srff_flow_account(&t, srff_table_find(&t, &k), 100, later, 0);
	}
	CHECK(!IS_ERR(get(&t, 11, later, &created)) && created);
	k = key(3);
	CHECK(srff_table_find(&t, &k) == NULL);
	for (i = 0; i < 2; i++) {
		k = key(i);
		CHECK(srff_table_find(&t, &k) != NULL);
	}
	k = key(10);
	CHECK(srff_table_find(&t, &k) != NULL);
	CHECK_EQ(atomic64_read(&t.evicted), 2);
	CHECK_EQ(srff_table_count(&t), 4);

	/* Cap lowered below the count: evicting one would not make room, so
	 * nothing is evicted (GC brings the count down).
	 */
	srff_table_set_max_flows(&t, 2);
	f = get(&t, 12, later + 10 * HZ, &created);
	CHECK(IS_ERR(f) && PTR_ERR(f) == -ENOSPC);
	CHECK_EQ(atomic64_read(&t.evicted), 2);
	CHECK_EQ(srff_table_count(&t), 4);
	synchronize_rcu();
	CHECK_EQ(srff_user_slab_live, 4);	/* the victims were freed */
	teardown(&t);
}

/* A host-wide cap bounds several tables together, each still by its own. */
static void shared_cap_bounds_all_tables(void)
{
	struct srff_slots sh;
	struct srff_table a, b;
	struct srff_flow *f;
	bool created;
	u32 i;

	CHECK_EQ_INT(srff_slots_init(&sh, 6), 0);
	CHECK_EQ_INT(srff_table_cache_init(), 0);
	CHECK_EQ_INT(srff_table_init(&a, 16, 5, &sh), 0);
	CHECK_EQ_INT(srff_table_init(&b, 16, 5, &sh), 0);
	for (i = 0; i < 5; i++)
		CHECK(!IS_ERR(get(&a, i, 1, &created)) && created);
	CHECK(IS_ERR(get(&a, 5, 1, &created)));		/* a's own cap */
	CHECK(!IS_ERR(get(&b, 0, 1, &created)) && created);
	f = get(&b, 1, 1, &created);			/* the host's cap */
	CHECK(IS_ERR(f) && PTR_ERR(f) == -ENOSPC);
	CHECK_EQ(srff_slots_used(&sh), 6);
	CHECK_EQ(srff_table_count(&b), 1);
	CHECK_EQ(srff_user_slab_live, 6);
	/* Flows a forgets are room for b. */
	CHECK_EQ(srff_table_sweep(&a, SRFF_SWEEP_FLUSH, 2, IDLE), 5);
	CHECK_EQ(srff_slots_used(&sh), 1);
	for (i = 1; i < 5; i++)
		CHECK(!IS_ERR(get(&b, i, 2, &created)) && created);
	srff_table_uninit(&a);
	srff_table_uninit(&b);
	CHECK_EQ(srff_slots_used(&sh), 0);
	srff_slots_uninit(&sh);		/* WARNs unless the pool is empty */
	rcu_barrier();
	srff_table_cache_uninit();
}

/*
 * The pools of main.c: the host's (10), every namespace's but the host's
 * (7: 3 reserved for the host), each owner's (4). Two namespaces of one
 * owner hold 4 together; a second owner gets what the namespaces' pool has
 * left (3); the host's own table still gets its reserved 3, and a refusal
 * in a later pool gives back the slots of the earlier ones.
 */
static void pools_reserve_and_bound_owners(void)
{
	struct srff_slots host, others, u, v;
	struct srff_table h, u1, u2, v1;
	struct srff_flow *f;
	bool created;
	u32 i, n;

	CHECK_EQ_INT(srff_slots_init(&host, 10), 0);
	CHECK_EQ_INT(srff_slots_init(&others, 7), 0);
	CHECK_EQ_INT(srff_slots_init(&u, 4), 0);
	CHECK_EQ_INT(srff_slots_init(&v, 4), 0);
	CHECK_EQ_INT(srff_table_cache_init(), 0);
	CHECK_EQ_INT(srff_table_init(&h, 16, 10, &host), 0);
	CHECK_EQ_INT(srff_table_init(&u1, 16, 10, &host), 0);
	CHECK_EQ_INT(srff_table_init(&u2, 16, 10, &host), 0);
	CHECK_EQ_INT(srff_table_init(&v1, 16, 10, &host), 0);
	CHECK_EQ_INT(srff_table_add_pool(&u1, &others), 0);
	CHECK_EQ_INT(srff_table_add_pool(&u1, &u), 0);
	CHECK_EQ_INT(srff_table_add_pool(&u2, &others), 0);
	CHECK_EQ_INT(srff_table_add_pool(&u2, &u), 0);
	CHECK_EQ_INT(srff_table_add_pool(&v1, &others), 0);
	CHECK_EQ_INT(srff_table_add_pool(&v1, &v), 0);
	CHECK_EQ_INT(srff_table_add_pool(&v1, &u), -ENOSPC);	/* 3 at most */
	CHECK(v1.shared[0] == &v && v1.shared[1] == &others && v1.shared[2] == &host);
	for (i = 0; i < 3; i++)
		CHECK(!IS_ERR(get(&u1, i, 1, &created)) && created);
	for (n = 0, i = 0; i < 5; i++)
		n += !IS_ERR(get(&u2, i, 1, &created));
	CHECK_EQ(n, 1);					/* u's 4 in all */
	CHECK_EQ(srff_slots_used(&u), 4);
	for (n = 0, i = 0; i < 5; i++)
		n += !IS_ERR(get(&v1, i, 1, &created));
	CHECK_EQ(n, 3);					/* what others had left */
	CHECK_EQ(srff_slots_used(&v), 3);		/* the 4th gave it back */
	CHECK_EQ(srff_slots_used(&others), 7);
	CHECK_EQ(srff_slots_used(&host), 7);		/* never past others' */
	for (n = 0, i = 0; i < 5; i++)
		n += !IS_ERR(get(&h, i, 1, &created));
	CHECK_EQ(n, 3);					/* the host's reserve */
	CHECK_EQ(srff_slots_used(&host), 10);
	f = get(&h, 9, 1, &created);
	CHECK(IS_ERR(f) && PTR_ERR(f) == -ENOSPC);
	srff_table_uninit(&u1);
	srff_table_uninit(&u2);
	srff_table_uninit(&v1);
	srff_table_uninit(&h);
	CHECK_EQ(srff_slots_used(&host) + srff_slots_used(&others) +
		 srff_slots_used(&u) + srff_slots_used(&v), 0);
	srff_slots_uninit(&u);
	srff_slots_uninit(&v);
	srff_slots_uninit(&others);
	srff_slots_uninit(&host);
	rcu_barrier();
	srff_table_cache_uninit();
}

/* ---- slots: capped counts, batched per CPU ------------------------------ */

/* One CPU takes a batch from the pool at its first take, then from its
 * cache: the pool's count moves once per batch. Puts fill the cache and
 * return a batch when it holds two. Used slots are exact throughout.
 */
static void slots_batch_per_cpu(void)
{
	struct srff_slots s;
	unsigned int i, b;

	CHECK_EQ_INT(srff_slots_init(&s, 1000), 0);
	b = s.batch;
	CHECK_EQ(b, 1000 / (32 * SRFF_USER_NR_CPUS));	/* 7: less than 16 */
	CHECK(srff_slots_take(&s));
	CHECK_EQ(srff_slots_reserved(&s), b);
	CHECK_EQ(srff_slots_used(&s), 1);
	for (i = 1; i < b; i++)
		CHECK(srff_slots_take(&s));
	CHECK_EQ(srff_slots_reserved(&s), b);		/* all from the cache */
	CHECK(srff_slots_take(&s));
	CHECK_EQ(srff_slots_reserved(&s), 2 * b);	/* the next batch */
	CHECK_EQ(srff_slots_used(&s), b + 1);
	for (i = 0; i < b + 1; i++)
		srff_slots_put(&s);
	CHECK_EQ(srff_slots_used(&s), 0);
	CHECK(srff_slots_reserved(&s) < 2 * b);	/* a full cache went back */
	srff_slots_uninit(&s);			/* WARNs unless empty */
	CHECK_EQ(srff_user_kv_live, 0);

	/* A pool too small for caching on this many CPUs: none. */
	CHECK_EQ_INT(srff_slots_init(&s, 100), 0);
	CHECK_EQ(s.batch, 0);
	for (i = 0; i < 100; i++)
		CHECK(srff_slots_take(&s));
	CHECK(!srff_slots_take(&s));
	CHECK_EQ(srff_slots_reserved(&s), 100);
	for (i = 0; i < 100; i++)
		srff_slots_put(&s);
	CHECK_EQ(srff_slots_reserved(&s), 0);
	srff_slots_uninit(&s);
}

/* A cap lowered below what is out: no take succeeds, not even from the
 * cache, which goes back to the pool; puts bring the count down, and the
 * pool then fills to the new cap and no further.
 */
static void slots_lowered_cap(void)
{
	struct srff_slots s;
	unsigned int i;

	CHECK_EQ_INT(srff_slots_init(&s, 10000), 0);
	CHECK_EQ(s.batch, 16);
	for (i = 0; i < 6001; i++)
		CHECK(srff_slots_take(&s));
	CHECK_EQ(srff_slots_reserved(&s), 6016);	/* the cache holds 15 */
	srff_slots_set_max(&s, 5000);
	CHECK(!srff_slots_take(&s));
	CHECK_EQ(srff_slots_reserved(&s), 6001);	/* the cache went back */
	CHECK_EQ(srff_slots_used(&s), 6001);
	for (i = 0; i < 1501; i++)
		srff_slots_put(&s);
	CHECK_EQ(srff_slots_used(&s), 4500);
	while (srff_slots_take(&s))
		;
	CHECK_EQ(srff_slots_used(&s), 5000);
	CHECK_EQ(srff_slots_reserved(&s), 5000);
	for (i = 0; i < 5000; i++)
		srff_slots_put(&s);
	CHECK_EQ(srff_slots_used(&s), 0);
	srff_slots_uninit(&s);			/* WARNs unless empty */
}

struct slots_taker {
	struct srff_slots *s;
	unsigned int taken;
	bool over;		/* the pool's count was seen above its cap */
};

static void *slots_take_all(void *arg)
{
	struct slots_taker *k = arg;

	while (srff_slots_take(k->s)) {
		k->taken++;
		if (srff_slots_reserved(k->s) > READ_ONCE(k->s->max))
			k->over = true;
	}
	return NULL;
}

/*
 * Threads standing for every CPU take until refused: the pool's count never
 * reads above its cap, and what the caches hold when the pool says "full"
 * is less than max / 16 (srff_slots_batch). Given back, the pool is empty.
 */
static void slots_cap_across_cpus(void)
{
	struct slots_taker k[SRFF_USER_NR_CPUS];
	pthread_t th[SRFF_USER_NR_CPUS];
	const unsigned int max = 100003;	/* not a multiple of the batch */
	unsigned int i, j, taken = 0;
	struct srff_slots s;

	CHECK_EQ_INT(srff_slots_init(&s, max), 0);
	CHECK_EQ(s.batch, 16);
	for (i = 0; i < SRFF_USER_NR_CPUS; i++) {
		k[i] = (struct slots_taker){ .s = &s };
		CHECK_EQ_INT(pthread_create(&th[i], NULL, slots_take_all, &k[i]), 0);
	}
	for (i = 0; i < SRFF_USER_NR_CPUS; i++) {
		pthread_join(th[i], NULL);
		CHECK(!k[i].over);
		taken += k[i].taken;
	}
	CHECK_EQ(srff_slots_reserved(&s), max);
	CHECK_EQ(srff_slots_used(&s), taken);
	CHECK(taken > max - max / 16);
	for (i = 0; i < SRFF_USER_NR_CPUS; i++)
		for (j = 0; j < k[i].taken; j++)
			srff_slots_put(&s);	/* from this thread's CPU */
	CHECK_EQ(srff_slots_used(&s), 0);
	CHECK(srff_slots_reserved(&s) < 2 * s.batch);
	srff_slots_uninit(&s);
	CHECK_EQ(srff_user_kv_live, 0);
}

/* A SYN on a reused 4-tuple starts from 0 and open again. */
static void restart_clears_count_and_closed(void)
{
	struct srff_table t;
	struct srff_flow *f;
	bool created;

	setup(&t, 8, 8);
	f = get(&t, 1, 10, &created);
	srff_flow_account(&t, f, 50000, 10, 0);
	srff_flow_close(f);
	srff_flow_restart(&t, f, 20);
	CHECK_EQ(atomic64_read(&f->bytes), 0);
	CHECK(!test_bit(SRFF_FLOW_CLOSED_BIT, &f->flags));
	CHECK_EQ(f->last_seen, 20);
	CHECK_EQ(f->created, 20);
	CHECK_EQ(srff_flow_account(&t, f, 100, 20, 0), 0);
	/* No longer retired as a closed flow would be. */
	CHECK_EQ(srff_table_sweep(&t, SRFF_SWEEP_GC, 20 + SRFF_CLOSED_LINGER, IDLE), 0);
	teardown(&t);
}

/*
 * Idle reset with a second CPU accounting the same flow between this CPU's
 * read of last_seen and its write (SRFF_RACE_WINDOW): both saw the gap,
 * and both packets must count in the new response.
 */
static struct srff_table *race_table;
static struct srff_flow *race_flow;
static unsigned long race_now;
static u64 race_before;

static void race_other_cpu(void)
{
	race_before = srff_flow_account(race_table, race_flow, 300, race_now, HZ);
}

static void account_idle_reset_interleaved(void)
{
	struct srff_table t;
	bool created;
	u64 before;

	setup(&t, 8, 8);
	race_table = &t;
	race_flow = get(&t, 1, 100, &created);
	CHECK_EQ(srff_flow_account(&t, race_flow, 5000, 100, HZ), 0);
	race_now = 100 + 3 * HZ;
	srff_user_race_hook = race_other_cpu;
	before = srff_flow_account(&t, race_flow, 700, race_now, HZ);
	CHECK(srff_user_race_hook == NULL);		/* it ran */
	CHECK_EQ(atomic64_read(&race_flow->bytes), 1000);	/* 300 + 700 */
	CHECK_EQ(race_before, 0);			/* the other CPU reset */
	CHECK_EQ(before, 300);				/* and went first */
	teardown(&t);
}

/*
 * A SYN restart on another CPU between this CPU's read of the count and its
 * reset, from a packet that sampled jiffies before the gap ended (so it
 * writes back the last_seen this CPU read, and the cmpxchg still
 * succeeds): the reset must not subtract the old count from the restarted
 * one (it went to -5000 + 700), and the size is recorded once.
 */
static void race_restart_cpu(void)
{
	srff_flow_restart(race_table, race_flow, 100);
}

static void restart_races_reset(void)
{
	struct srff_table t;
	struct srff_sizes sz;
	bool created;
	u64 before;

	setup(&t, 8, 8);
	CHECK_EQ(srff_table_sizes_alloc(&t), 0);
	race_table = &t;
	race_flow = get(&t, 1, 100, &created);
	CHECK_EQ(srff_flow_account(&t, race_flow, 5000, 100, HZ), 0);
	srff_user_race_hook = race_restart_cpu;
	before = srff_flow_account(&t, race_flow, 700, 100 + 3 * HZ, HZ);
	CHECK(srff_user_race_hook == NULL);		/* it ran */
	CHECK_EQ(before, 0);
	CHECK_EQ(atomic64_read(&race_flow->bytes), 700);
	srff_table_sizes_read(&t, &sz);
	CHECK_EQ(sz.reason[SRFF_SIZE_FIN], 1);		/* once, as the FIN's */
	CHECK_EQ(sz.reason[SRFF_SIZE_MSG], 0);
	CHECK(!test_bit(SRFF_FLOW_RESTART_BIT, &race_flow->flags));
	teardown(&t);
}

/* A restart that finds the bit held (a reset on another CPU) leaves the
 * count to that reset, and still opens the flow again.
 */
static void restart_leaves_count_to_reset(void)
{
	struct srff_table t;
	struct srff_flow *f;
	bool created;

	setup(&t, 8, 8);
	f = get(&t, 1, 10, &created);
	srff_flow_account(&t, f, 5000, 10, 0);
	srff_flow_close(f);
	set_bit(SRFF_FLOW_RESTART_BIT, &f->flags);	/* the reset's */
	srff_flow_restart(&t, f, 20);
	CHECK_EQ(atomic64_read(&f->bytes), 5000);
	CHECK(!test_bit(SRFF_FLOW_CLOSED_BIT, &f->flags));
	CHECK_EQ(f->created, 20);
	/* And a reset that finds it held leaves the count to its holder. */
	CHECK_EQ(srff_flow_account(&t, f, 100, 20 + 3 * HZ, HZ), 5000);
	clear_bit(SRFF_FLOW_RESTART_BIT, &f->flags);
	teardown(&t);
}

/*
 * Two threads send on one flow right after each idle gap: every byte sent
 * after the gap must be counted, whichever thread resets. (Resetting with
 * atomic64_set(len) lost the other thread's packet whenever both saw the
 * gap.)
 */
#define RACE_ROUNDS	20000
#define RACE_LEN	1000

/* Both threads spin (a futex barrier would stagger them by microseconds,
 * far wider than the race) until the main thread opens round i.
 */
struct race {
	struct srff_table *t;
	struct srff_flow *f;
	unsigned int round;		/* round open to both threads */
	unsigned int done;		/* rounds the helper finished */
	unsigned long now[RACE_ROUNDS];
};

static void *race_sender(void *arg)
{
	struct race *r = arg;
	unsigned int i;

	for (i = 1; i <= RACE_ROUNDS; i++) {
		while (__atomic_load_n(&r->round, __ATOMIC_ACQUIRE) != i)
			;
		srff_flow_account(r->t, r->f, RACE_LEN, r->now[i - 1], HZ);
		__atomic_store_n(&r->done, i, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void account_idle_reset_race_loses_nothing(void)
{
	struct srff_table t;
	struct race *r = calloc(1, sizeof(*r));
	unsigned int i, lost = 0;
	pthread_t th;
	bool created;

	CHECK(r != NULL);
	if (!r)
		return;
	setup(&t, 8, 8);
	r->t = &t;
	r->f = get(&t, 1, 0, &created);
	for (i = 0; i < RACE_ROUNDS; i++)
		r->now[i] = (i + 1) * 2 * HZ;	/* an idle gap before each */
	CHECK_EQ_INT(pthread_create(&th, NULL, race_sender, r), 0);
	for (i = 1; i <= RACE_ROUNDS; i++) {
		__atomic_store_n(&r->round, i, __ATOMIC_RELEASE);
		srff_flow_account(&t, r->f, RACE_LEN, r->now[i - 1], HZ);
		while (__atomic_load_n(&r->done, __ATOMIC_ACQUIRE) != i)
			;
		lost += atomic64_read(&r->f->bytes) != 2 * RACE_LEN;
	}
	pthread_join(th, NULL);
	printf("    # %u of %u rounds lost bytes\n", lost, RACE_ROUNDS);
	CHECK_EQ(lost, 0);
	free(r);
	teardown(&t);
}

/* A dumped age or idle time is 64-bit ms (50 days is past a u32 of ms),
 * and a last_seen later than the sampled "now" reads as 0, not ~2^64.
 */
static void ms_since_is_64bit_and_never_negative(void)
{
	const unsigned long day = 86400UL * HZ;

	CHECK_EQ(srff_ms_since(1000, 1000 + 50 * day), 50ULL * 86400 * 1000);
	CHECK(srff_ms_since(1000, 1000 + 50 * day) > 0xffffffffULL);
	CHECK_EQ(srff_ms_since(ULONG_MAX - HZ + 1, HZ), 2000);	/* across the wrap */
	CHECK_EQ(srff_ms_since(2000, 1999), 0);
	CHECK_EQ(srff_ms_since(5, 5), 0);
}

/* A gap after a packet that left data in its socket (local TCP, waiting
 * for ACKs) is not the end of a response: no reset. After one that
 * drained it, or when unknown (forwarded, UDP), the gap resets.
 */
static void account_pending_blocks_reset(void)
{
	struct srff_flow *f;
	struct srff_table t;
	bool created;

	setup(&t, 8, 8);
	CHECK_EQ_INT(srff_table_sizes_alloc(&t), 0);
	f = get(&t, 1, 100, &created);
	CHECK_EQ(srff_flow_account(&t, f, 15000, 100, HZ / 10), 0);
	srff_flow_note_pending(f, true);
	CHECK_EQ(srff_flow_account(&t, f, 15000, 100 + HZ, HZ / 10), 15000);
	srff_flow_note_pending(f, false);
	CHECK_EQ(srff_flow_account(&t, f, 1000, 100 + 2 * HZ, HZ / 10), 0);
	CHECK_EQ(hist(&t).reason[SRFF_SIZE_MSG], 1);
	CHECK_EQ(hist(&t).bytes[srff_sizes_bucket(30000)], 30000);
	teardown(&t);
}

/* ---- the flow-size histogram (sizes.h) ---------------------------------- */

/* Buckets tile the sizes: every bucket's low bound maps back to it, the
 * byte before the next bound too, bounds rise, and no bucket from 1 KiB on
 * is wider than a quarter of its low bound.
 */
static void sizes_buckets_tile(void)
{
	unsigned int b;

	CHECK_EQ(srff_sizes_bucket(0), 0);
	CHECK_EQ(srff_sizes_bucket(255), 0);
	CHECK_EQ(srff_sizes_bucket(256), 1);
	CHECK_EQ(srff_sizes_bucket(1023), 3);
	CHECK_EQ(srff_sizes_bucket(1024), 4);
	CHECK_EQ(srff_sizes_low(4), 1024);
	CHECK_EQ(srff_sizes_low(8), 2048);
	CHECK_EQ(srff_sizes_bucket(1500), 5);		/* 1280-1535 */
	CHECK_EQ(srff_sizes_bucket(1ULL << 30), 84);	/* 2^22 units: (22 - 1) * 4 */
	CHECK_EQ(srff_sizes_low(srff_sizes_bucket(1ULL << 30)), 1ULL << 30);
	CHECK_EQ(srff_sizes_bucket(1ULL << 41), SRFF_SIZES_BUCKETS - 1);
	CHECK_EQ(srff_sizes_bucket(~0ULL), SRFF_SIZES_BUCKETS - 1);
	for (b = 0; b < SRFF_SIZES_BUCKETS; b++) {
		u64 lo = srff_sizes_low(b);

		CHECK_EQ(srff_sizes_bucket(lo), b);
		if (b + 1 == SRFF_SIZES_BUCKETS)
			break;
		CHECK(srff_sizes_low(b + 1) > lo);
		CHECK_EQ(srff_sizes_bucket(srff_sizes_low(b + 1) - 1), b);
		if (lo >= 1024)
			CHECK(srff_sizes_low(b + 1) - lo <= lo / 4);
	}
}

static u64 sizes_total(const struct srff_table *t, int what)
{
	struct srff_sizes h = hist(t);
	u64 n = 0;
	unsigned int b;

	for (b = 0; b < SRFF_SIZES_BUCKETS; b++)
		n += what ? h.bytes[b] : h.flows[b];
	return n;
}

/* An enabled namespace that sends nothing has no histogram (one copy per
 * CPU): the first flow asks for it. Until then, nothing is recorded and
 * readers see zeros; afterwards, ends are recorded.
 */
static void sizes_allocated_at_first_flow(void)
{
	struct srff_flow *f;
	struct srff_table t;
	bool created;

	setup(&t, 8, 8);
	CHECK_EQ(srff_user_kv_live, 4);		/* array, heads, locks, slots */
	CHECK(srff_table_wants_sizes(&t));
	f = get(&t, 1, 10, &created);
	srff_flow_account(&t, f, 5000, 10, 0);
	srff_flow_restart(&t, f, 11);		/* ends a connection */
	CHECK_EQ(srff_table_sizes_ended(&t), 0);
	CHECK_EQ(sizes_total(&t, 0), 0);
	CHECK_EQ_INT(srff_table_sizes_alloc(&t), 0);
	CHECK(!srff_table_wants_sizes(&t));
	CHECK_EQ(srff_user_kv_live, 5);
	CHECK_EQ_INT(srff_table_sizes_alloc(&t), 0);	/* once */
	CHECK_EQ(srff_user_kv_live, 5);
	srff_flow_account(&t, f, 7000, 12, 0);
	srff_flow_restart(&t, f, 13);
	CHECK_EQ(srff_table_sizes_ended(&t), 1);
	CHECK_EQ(sizes_total(&t, 1), 7000);
	teardown(&t);
	CHECK_EQ(srff_user_kv_live, 0);

	setup(&t, 8, 8);
	srff_user_kv_fail_nth = 1;
	CHECK_EQ_INT(srff_table_sizes_alloc(&t), -ENOMEM);
	srff_user_kv_fail_nth = 0;
	CHECK(srff_table_wants_sizes(&t));	/* the next flow asks again */
	teardown(&t);
}

/* A flow's size is recorded once, when it ends, with the reason. */
static void sizes_record_each_end(void)
{
	struct srff_flow *f;
	struct srff_table t;
	bool created;

	setup(&t, 1, 2);
	CHECK_EQ_INT(srff_table_sizes_alloc(&t), 0);
	/* Retired after FIN: its bytes, in its bucket. */
	f = get(&t, 1, 10, &created);
	srff_flow_account(&t, f, 3000, 10, 0);
	srff_flow_close(f);
	/* Idle: collected by GC. */
	f = get(&t, 2, 10, &created);
	srff_flow_account(&t, f, 70000, 10, 0);
	CHECK_EQ(sizes_total(&t, 0), 0);		/* nothing ended yet */
	CHECK_EQ(srff_table_sweep(&t, SRFF_SWEEP_GC, 10 + SRFF_CLOSED_LINGER, IDLE), 1);
	CHECK_EQ(hist(&t).reason[SRFF_SIZE_FIN], 1);
	CHECK_EQ(hist(&t).flows[srff_sizes_bucket(3000)], 1);
	CHECK_EQ(hist(&t).bytes[srff_sizes_bucket(3000)], 3000);
	CHECK_EQ(srff_table_sweep(&t, SRFF_SWEEP_GC, 10 + IDLE, IDLE), 1);
	CHECK_EQ(hist(&t).reason[SRFF_SIZE_IDLE], 1);
	CHECK_EQ(hist(&t).flows[srff_sizes_bucket(70000)], 1);
	CHECK_EQ(sizes_total(&t, 1), 73000);

	/* Kept alive: each response ended by an idle gap is one. */
	f = get(&t, 3, 1000, &created);
	srff_flow_account(&t, f, 5000, 1000, HZ);
	srff_flow_account(&t, f, 5000, 1001, HZ);
	srff_flow_account(&t, f, 800, 1000 + 2 * HZ, HZ);	/* gap: 10000 ended */
	CHECK_EQ(hist(&t).reason[SRFF_SIZE_MSG], 1);
	CHECK_EQ(hist(&t).flows[srff_sizes_bucket(10000)], 1);
	/* A SYN on the same 4-tuple: the 800 of the old connection ended. */
	srff_flow_restart(&t, f, 1000 + 3 * HZ);
	CHECK_EQ(hist(&t).reason[SRFF_SIZE_FIN], 2);
	CHECK_EQ(hist(&t).flows[srff_sizes_bucket(800)], 1);
	srff_flow_account(&t, f, 400, 1000 + 3 * HZ, HZ);

	/* Evicted idle from the full table (cap 2): its 400 ended. */
	f = get(&t, 4, 1000 + 3 * HZ, &created);
	srff_flow_account(&t, f, 100, 1000 + 3 * HZ, 0);
	CHECK(!IS_ERR(get(&t, 5, 1000 + 3 * HZ + SRFF_EVICT_MIN_IDLE, &created)) && created);
	CHECK_EQ(atomic64_read(&t.evicted), 1);
	CHECK_EQ(hist(&t).reason[SRFF_SIZE_IDLE], 2);
	CHECK_EQ(hist(&t).flows[srff_sizes_bucket(400)] +
		 hist(&t).flows[srff_sizes_bucket(100)], 1);

	/* A flush and the teardown record nothing. */
	CHECK_EQ(srff_table_sweep(&t, SRFF_SWEEP_FLUSH, 0, 0), 2);
	CHECK_EQ(sizes_total(&t, 0), 5);
	CHECK_EQ(hist(&t).reason[SRFF_SIZE_FIN] + hist(&t).reason[SRFF_SIZE_IDLE] +
		 hist(&t).reason[SRFF_SIZE_MSG], 5);
	CHECK_EQ(srff_table_sizes_ended(&t), 5);
	teardown(&t);
}

/* ---- resizing ------------------------------------------------------- */

/*
 * Walk all of @t: every flow's index is counted in @visits (@n of them);
 * returns the number of flows walked.
 */
static unsigned int walk_all(struct srff_table *t, unsigned int *visits,
			     unsigned int n)
{
	struct walk_ctx c = { .per_msg = 64 };
	struct srff_walk w = { 0 };
	unsigned int i, total = 0;
	int err;

	c.visits = calloc(1u << 20, sizeof(*c.visits));
	do {
		c.in_msg = 0;
		err = srff_table_walk(t, &w, &walk_ops, &c);
		total += c.in_msg;
	} while (err);
	for (i = 0; i < n; i++)
		visits[i] = c.visits[i];
	free(c.visits);
	return total;
}

/* Every flow of @t is found by its key, in its bucket, exactly once. */
static void check_whole(struct srff_table *t, const bool *live, unsigned int n)
{
	unsigned int *visits = calloc(n, sizeof(*visits)), i, nlive = 0;
	struct srff_key k;

	CHECK_EQ(walk_all(t, visits, n), srff_table_count(t));
	for (i = 0; i < n; i++) {
		k = key(i);
		CHECK_EQ(visits[i], live[i] ? 1 : 0);
		CHECK_EQ(srff_table_find(t, &k) != NULL, live[i]);
		nlive += live[i];
	}
	CHECK_EQ(srff_table_count(t), nlive);
	free(visits);
}

/*
 * More than two flows per bucket grows the table to one per bucket at
 * most, fewer than one per eight shrinks it, never past its bounds; every
 * flow stays found across resizes, whichever node each array links by.
 */
static void resize_grows_and_shrinks(void)
{
	const unsigned int n = 5000;
	bool *live = calloc(n, sizeof(*live));
	struct srff_table t;
	unsigned int i, gen;
	bool created;

	setup(&t, 0, 1 << 16);			/* max from max_flows: 32768 */
	CHECK_EQ(srff_table_buckets(&t), 256);
	for (i = 0; i < 512; i++) {
		CHECK(!IS_ERR(get(&t, i, 1, &created)) && created);
		live[i] = true;
	}
	CHECK(!srff_table_wants_grow(&t));	/* 2 per bucket: not more */
	CHECK_EQ(srff_table_resize_target(&t), 0);
	CHECK(!IS_ERR(get(&t, 512, 1, &created)) && created);
	CHECK(!IS_ERR(get(&t, 513, 1, &created)) && created);
	live[512] = live[513] = true;
	CHECK(srff_table_wants_grow(&t));
	CHECK_EQ(srff_table_resize_target(&t), 1024);
	for (i = 514; i < n; i++) {
		CHECK(!IS_ERR(get(&t, i, 1, &created)) && created);
		live[i] = true;
	}
	CHECK_EQ(srff_table_resize_target(&t), 8192);	/* one step */
	gen = gen_sum(&t);
	CHECK_EQ_INT(srff_table_resize(&t, 0), 0);
	CHECK_EQ(srff_table_buckets(&t), 8192);
	CHECK_EQ(atomic64_read(&t.grown), 1);
	CHECK_EQ(gen_sum(&t), gen);	/* a move is no link: walks see resizes */
	CHECK(t.future == NULL);
	check_whole(&t, live, n);
	CHECK(!srff_table_wants_grow(&t));
	CHECK_EQ_INT(srff_table_resize(&t, 0), 0);	/* nothing to do */
	CHECK_EQ(atomic64_read(&t.grown), 1);

	/* GC leaves 900 of 5000 (idle since 1): 900 < 8192 / 8. */
	for (i = 0; i < n; i++) {
		struct srff_key k = key(i);

		if (i < 900)
			srff_flow_account(&t, srff_table_find(&t, &k), 1, IDLE, 0);
		else
			live[i] = false;
	}
	CHECK_EQ(srff_table_sweep(&t, SRFF_SWEEP_GC, 1 + IDLE, IDLE), n - 900);
	CHECK_EQ(srff_table_resize_target(&t), 1024);
	CHECK_EQ_INT(srff_table_resize(&t, 0), 0);
	CHECK_EQ(srff_table_buckets(&t), 1024);
	CHECK_EQ(atomic64_read(&t.shrunk), 1);
	check_whole(&t, live, n);

	/* Back and forth by hand: each array reuses the node the one before
	 * last linked by.
	 */
	for (i = 0; i < 6; i++) {
		unsigned int node = t.tbl->node;

		CHECK_EQ_INT(srff_table_resize(&t, i & 1 ? 256 : 16384), 0);
		CHECK_EQ(srff_table_buckets(&t), i & 1 ? 256 : 16384);
		CHECK_EQ(t.tbl->node, !node);
		check_whole(&t, live, n);
	}
	/* Bounds: never fewer buckets than locks, never past the cap. */
	CHECK_EQ_INT(srff_table_resize(&t, 1), 0);
	CHECK_EQ(srff_table_buckets(&t), 256);
	CHECK_EQ_INT(srff_table_resize(&t, 1000), 0);
	CHECK_EQ(srff_table_buckets(&t), 1024);
	check_whole(&t, live, n);
	teardown(&t);
	free(live);
}

/* The automatic size stops at max_buckets, and a full-size table does not
 * ask to grow.
 */
static void resize_stops_at_max(void)
{
	struct srff_table t;
	bool created;
	u32 i;

	setup(&t, 512, 1 << 16);
	for (i = 0; i < 4000; i++)
		get(&t, i, 1, &created);
	CHECK(srff_table_wants_grow(&t));
	CHECK_EQ(srff_table_resize_target(&t), 512);
	CHECK_EQ_INT(srff_table_resize(&t, 0), 0);
	CHECK_EQ(srff_table_buckets(&t), 512);
	CHECK(!srff_table_wants_grow(&t));
	CHECK_EQ(srff_table_resize_target(&t), 0);
	teardown(&t);

	/* From max_flows: 1000 flows give at most 512 buckets. */
	setup(&t, 0, 1000);
	for (i = 0; i < 1000; i++)
		get(&t, i, 1, &created);
	CHECK_EQ(srff_table_resize_target(&t), 512);
	teardown(&t);
}

/* A thread standing for one CPU creates flow @i. */
struct flow_maker {
	struct srff_table *t;
	u32 i;
};

static void *make_flow(void *arg)
{
	struct flow_maker *m = arg;
	bool created;

	CHECK(!IS_ERR(get(m->t, m->i, 1, &created)) && created);
	return NULL;
}

/*
 * A new flow asks for a resize (srff_table_wants_grow: the slots handed
 * out, the per-CPU caches' included) exactly when the worker then gives
 * one: no wasted kick while the caches hold slots no flow uses, and no
 * size it resizes to, a shrink included, asks to grow straight back.
 */
static void resize_agrees_with_new_flows(void)
{
	struct flow_maker m[SRFF_USER_NR_CPUS];
	pthread_t th[SRFF_USER_NR_CPUS];
	unsigned int i, size, target;
	unsigned int resizes = 0, window = 0;
	struct srff_table t;
	bool created;

	setup(&t, 0, 1 << 16);
	CHECK_EQ(t.flows.batch, 16);
	/* Every CPU takes a batch and uses one slot: the caches hold 60. */
	for (i = 0; i < SRFF_USER_NR_CPUS; i++) {
		m[i] = (struct flow_maker){ .t = &t, .i = i };
		CHECK_EQ_INT(pthread_create(&th[i], NULL, make_flow, &m[i]), 0);
		pthread_join(th[i], NULL);
	}
	CHECK(srff_slots_reserved(&t.flows) - srff_table_count(&t) >= 45);

	for (i = SRFF_USER_NR_CPUS; i < 5000; i++) {
		CHECK(!IS_ERR(get(&t, i, 1, &created)) && created);
		size = srff_table_buckets(&t);
		target = srff_table_resize_target(&t);
		if (!srff_table_wants_grow(&t)) {
			CHECK_EQ(target, 0);
			continue;
		}
		if (srff_table_count(&t) / 2 <= size)
			window++;	/* the flows alone would not ask */
		CHECK(target > size);
		CHECK_EQ_INT(srff_table_resize(&t, 0), 0);
		CHECK_EQ(srff_table_buckets(&t), target);
		CHECK(!srff_table_wants_grow(&t));
		CHECK_EQ(srff_table_resize_target(&t), 0);
		resizes++;
	}
	CHECK_EQ(resizes, 2);			/* 256 -> 1024 -> 4096 */
	CHECK_EQ(atomic64_read(&t.grown), 2);
	CHECK(window > 0);

	/* Caches holding 4000 slots (as many CPUs' would) and 20 flows: the
	 * shrink stops at 2048 buckets, where the caches' slots do not ask
	 * for a grow, not at 256.
	 */
	for (i = 0; i < 20; i++) {
		struct srff_key k = key(i);

		srff_flow_account(&t, srff_table_find(&t, &k), 1, IDLE, 0);
	}
	CHECK_EQ(srff_table_sweep(&t, SRFF_SWEEP_GC, 1 + IDLE, IDLE), 4980);
	*per_cpu_ptr(t.flows.cache, 0) += 4000;
	atomic_add(4000, &t.flows.count);
	CHECK_EQ(srff_table_count(&t), 20);
	CHECK_EQ(srff_table_resize_target(&t), 2048);
	CHECK_EQ_INT(srff_table_resize(&t, 0), 0);
	CHECK_EQ(srff_table_buckets(&t), 2048);
	CHECK(!srff_table_wants_grow(&t));
	CHECK_EQ(srff_table_resize_target(&t), 0);	/* and it stays */
	*per_cpu_ptr(t.flows.cache, 0) -= 4000;
	atomic_sub(4000, &t.flows.count);
	CHECK_EQ(srff_table_resize_target(&t), 256);	/* caches drained */
	teardown(&t);
}

/* A resize that cannot allocate changes nothing. */
static void resize_enomem(void)
{
	bool live[600] = { false };
	int nth;
	struct srff_table t;
	bool created;
	u32 i;

	setup(&t, 0, 1 << 16);
	for (i = 0; i < 600; i++) {
		get(&t, i, 1, &created);
		live[i] = true;
	}
	for (nth = 1; nth <= 2; nth++) {	/* the array, its heads */
		srff_user_kv_fail_nth = nth;
		CHECK_EQ_INT(srff_table_resize(&t, 0), -ENOMEM);
		srff_user_kv_fail_nth = 0;
		CHECK_EQ(srff_user_kv_live, 4);	/* nothing left over */
	}
	CHECK_EQ(srff_table_buckets(&t), 256);
	CHECK(t.future == NULL);
	CHECK_EQ(atomic64_read(&t.grown), 0);
	check_whole(&t, live, 600);
	teardown(&t);
}

/*
 * Writers between the resize's buckets: new flows, evictions (of flows
 * already moved and of flows not yet moved) and lookups, on "another CPU"
 * at every bucket boundary of the move. Afterwards every flow is in the
 * new array exactly once, none that was unlinked is (ASan would see it
 * freed: synchronize_rcu() runs the callbacks), and the count is exact.
 */
static struct {
	struct srff_table *t;
	bool *live;
	u32 next;		/* next new key */
	unsigned int windows;
	unsigned long now;
} rw;

static void resize_writer(void)
{
	struct srff_flow *f;
	bool created;
	u32 i;

	rw.windows++;
	for (i = 0; i < 3; i++) {
		u32 k = rw.next++;
		struct srff_key key_k = key(k);
		unsigned int before = srff_table_count(rw.t);

		f = get(rw.t, k, rw.now, &created);
		if (IS_ERR(f))
			continue;	/* no victim in this bucket */
		CHECK(created);
		rw.live[k] = true;
		CHECK(srff_table_find(rw.t, &key_k) == f);
		if (srff_table_count(rw.t) == before) {	/* it evicted one */
			u32 j;

			for (j = 0; j < k; j++) {
				struct srff_key kj = key(j);

				if (rw.live[j] && !srff_table_find(rw.t, &kj)) {
					rw.live[j] = false;
					break;
				}
			}
		}
	}
	srff_user_race_hook = resize_writer;	/* again at the next window */
}

static void resize_races_writers(void)
{
	const unsigned int n = 3000, cap = 2000;
	bool *live = calloc(n + 4096, sizeof(*live));
	struct srff_table t;
	struct srff_key k;
	bool created;
	u32 i;

	setup(&t, 0, cap);
	for (i = 0; i < cap; i++) {
		CHECK(!IS_ERR(get(&t, i, 1, &created)) && created);
		live[i] = true;
	}
	/* Half the flows closed: the full table evicts them for newcomers. */
	for (i = 0; i < cap; i += 2) {
		k = key(i);
		srff_flow_close(srff_table_find(&t, &k));
	}
	rw.t = &t;
	rw.live = live;
	rw.next = cap;
	rw.windows = 0;
	rw.now = 2;
	srff_user_race_hook = resize_writer;
	CHECK_EQ_INT(srff_table_resize(&t, 1024), 0);
	srff_user_race_hook = NULL;
	CHECK_EQ(rw.windows, 256);		/* one per old bucket */
	CHECK(rw.next > cap + 500);
	CHECK_EQ(srff_table_buckets(&t), 1024);
	CHECK(atomic64_read(&t.evicted) > 0);
	check_whole(&t, live, rw.next);

	/* And shrinking, with the same writers. */
	rw.now = 3;
	srff_user_race_hook = resize_writer;
	CHECK_EQ_INT(srff_table_resize(&t, 256), 0);
	srff_user_race_hook = NULL;
	CHECK_EQ(rw.windows, 256 + 1024);
	check_whole(&t, live, rw.next);
	synchronize_rcu();
	CHECK_EQ(srff_user_slab_live, srff_table_count(&t));
	teardown(&t);
	free(live);
}

/* A dump that spans a resize is told (the dump then says so to its
 * reader, who retries); one that does not, is not.
 */
static void walk_across_resize(void)
{
	unsigned int visits[600];
	struct walk_ctx c = { .per_msg = 10, .visits = visits };
	struct srff_walk w = { 0 };
	struct srff_table t;
	bool created;
	u32 i;

	memset(visits, 0, sizeof(visits));
	setup(&t, 0, 1 << 16);
	for (i = 0; i < 600; i++)
		get(&t, i, 1, &created);
	CHECK_EQ_INT(srff_table_walk(&t, &w, &walk_ops, &c), -EMSGSIZE);
	CHECK(!w.changed);
	CHECK_EQ(w.buckets, 256);
	CHECK_EQ_INT(srff_table_resize(&t, 0), 0);
	c.in_msg = 0;
	srff_table_walk(&t, &w, &walk_ops, &c);
	CHECK(w.changed);
	CHECK_EQ(w.buckets, 1024);
	teardown(&t);
}

/*
 * The counters written on links and unlinks (the flow pool's count, once a
 * batch; gen) share no cache line with what every lookup reads (buckets ...
 * secret): otherwise each insert on one CPU would evict the line every
 * other CPU's lookups need.
 */
static void hot_counters_have_their_own_line(void)
{
	const size_t line = SMP_CACHE_BYTES;
	const size_t read_end = offsetof(struct srff_table, secret) +
				sizeof(((struct srff_table *)0)->secret) - 1;
	const size_t count = offsetof(struct srff_table, flows);

	CHECK_EQ(line, 64);
	CHECK(offsetof(struct srff_table, tbl) / line < count / line);
	CHECK(read_end / line < count / line);
	/* ... nor with what GC, flush and eviction write. */
	CHECK(count / line < offsetof(struct srff_table, gc_freed) / line);
	/* A link or unlink writes its own stripe's generation, beside the
	 * lock it holds, not a line common to every insert.
	 */
	CHECK_EQ(offsetof(struct srff_lock, gen) / line, 0);
	CHECK_EQ(sizeof(struct srff_lock) % sizeof(unsigned int), 0);
}

const struct srff_test srff_tests_table[] = {
	SRFF_TEST(hot_counters_have_their_own_line),
	SRFF_TEST(table_init_sizes),
	SRFF_TEST(table_init_enomem),
	SRFF_TEST(get_creates_once),
	SRFF_TEST(get_distinguishes_every_field),
	SRFF_TEST(max_flows_cap),
	SRFF_TEST(alloc_failure_gives_slot_back),
	SRFF_TEST(account_returns_bytes_before),
	SRFF_TEST(account_idle_reset),
	SRFF_TEST(idle_reset_rtt),
	SRFF_TEST(account_idle_reset_rtt),
	SRFF_TEST(account_quiet),
	SRFF_TEST(gc_frees_idle_keeps_busy),
	SRFF_TEST(gc_across_jiffies_wrap),
	SRFF_TEST(gc_retires_closed_flows),
	SRFF_TEST(flush_counts),
	SRFF_TEST(sweep_all_at_uninit),
	SRFF_TEST(sweep_reschedules_per_bucket),
	SRFF_TEST(gc_reports_longest_chain),
	SRFF_TEST(hash_spreads_keys),
	SRFF_TEST(walk_resumes_from_cursor),
	SRFF_TEST(walk_empty_table),
	SRFF_TEST(walk_under_churn_lists_stable_flows_once),
	SRFF_TEST(walk_shift_is_seen_by_gen),
	SRFF_TEST(gen_counts_links_and_unlinks),
	SRFF_TEST(full_table_evicts_closed_then_idle),
	SRFF_TEST(shared_cap_bounds_all_tables),
	SRFF_TEST(pools_reserve_and_bound_owners),
	SRFF_TEST(slots_batch_per_cpu),
	SRFF_TEST(slots_lowered_cap),
	SRFF_TEST(sizes_allocated_at_first_flow),
	SRFF_TEST(slots_cap_across_cpus),
	SRFF_TEST(restart_clears_count_and_closed),
	SRFF_TEST(restart_races_reset),
	SRFF_TEST(restart_leaves_count_to_reset),
	SRFF_TEST(ms_since_is_64bit_and_never_negative),
	SRFF_TEST(account_idle_reset_interleaved),
	SRFF_TEST(account_idle_reset_race_loses_nothing),
	SRFF_TEST(account_pending_blocks_reset),
	SRFF_TEST(sizes_buckets_tile),
	SRFF_TEST(sizes_record_each_end),
	SRFF_TEST(resize_grows_and_shrinks),
	SRFF_TEST(resize_stops_at_max),
	SRFF_TEST(resize_agrees_with_new_flows),
	SRFF_TEST(resize_enomem),
	SRFF_TEST(resize_races_writers),
	SRFF_TEST(walk_across_resize),
	{ NULL, NULL }
};
