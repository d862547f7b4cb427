// SPDX-License-Identifier: GPL-2.0
/*
 * Native benchmark of the user-space build of the flow table and key
 * parser (the module's own flowkey.c and table.c, over user/kernel.h).
 *
 * 1. Per-packet cost against the number of tracked flows (1 k, 100 k, 1 M).
 *    A packet is what hook.c does with it: srff_flowkey_parse(),
 *    srff_table_get(), srff_flow_account(), srff_band(). Packets are
 *    pre-built (one per flow: 90 % IPv4/TCP, 10 % IPv6/TCP) and visited in
 *    a pre-shuffled order, so caches behave as on a server with that many
 *    flows. Flows are created in an untimed first pass; each timed repeat
 *    is 2^20 packets; the median of REPEATS is reported. The table is sized
 *    as the module sizes it (srff_config_hash_buckets(): max_flows / 2,
 *    power of two, at least 256). The same is measured for the original
 *    (2003) design: one singly linked list searched from the head, new
 *    flows appended. Then the hash table once more with some locality:
 *    the same order, but each flow sends a train of TRAIN packets back to
 *    back, as a TCP sender emits a window.
 *    Last, a floor: one 64-byte line per flow found by the same hash, no
 *    chain and no pointer, which no design keeping per-flow state in memory
 *    can undercut.
 *    "bench -p" runs only this part: bench/run runs it a second time with
 *    glibc's malloc on transparent huge pages, as the kernel's slab sits in
 *    its huge-page direct map. "bench -b F" sizes the table with F buckets
 *    per flow (of max_flows rounded up to a power of two) instead of the
 *    module's 0.5.
 * 2. Memory per tracked flow, and in total at 1 M flows.
 * 3. Garbage collection of 1 M idle flows: the sweep's duration and the
 *    longest stretch between two cond_resched() calls.
 * 4. Growth ("bench -g" runs only this part): flows created one by one
 *    from 1 k to 1 M, each followed by packets of older flows, every
 *    packet timed, once with the table at its final size and once growing
 *    from 256 buckets, resized by a second thread as the module's worker
 *    does (the shim's quiescent-state RCU readers make that safe).
 *
 * 5. Counters ("bench -c" runs only this part): a new flow's slot in its
 *    pool (srff_slots) taken one at a time or in per-CPU batches, on one
 *    thread and on two at once, alone and within whole inserts.
 *
 * Everything else runs on one thread; ratios compare numbers from the
 * same run.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/resource.h>

#include "kernel.h"
#include "flowkey.h"
#include "table.h"
#include "band.h"
#include "pkt.h"

#define SLOT		64		/* bytes per pre-built packet */
#define MAX_N		1000000u
#define PKTS		(1u << 20)	/* packets per timed repeat */
#define REPEATS		7
#define LIST_REPEATS	5
#define LIST_WORK	100000000ULL	/* list nodes visited per repeat, about */
#define GC_RUNS		3
#define TRAIN		8		/* packets per flow back to back */
#define IDLE		(HZ * 5 / 2)	/* the default idle_timeout, 2.5 s */

static const u64 thresholds[] = { 1500, 5000 };	/* the module's defaults */

static u8 *pkts;			/* MAX_N slots of SLOT bytes */
static u32 *order;			/* PKTS flow indices, shuffled */
static volatile unsigned long sink;

static u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static u64 rng_state = 0x9e3779b97f4a7c15ULL;

static u64 rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static bool is_v6(u32 i)
{
	return i % 10 == 9;
}

static unsigned int pkt_len(u32 i)
{
	return is_v6(i) ? 60 : 40;
}

/* Flow i: server 192.0.2.1:443 (2001:db8::1) to a client of its own. */
static void build_packets(void)
{
	u32 i;

	pkts = malloc((size_t)MAX_N * SLOT);
	order = malloc(PKTS * sizeof(*order));
	if (!pkts || !order)
		abort();
	for (i = 0; i < MAX_N; i++) {
		u8 *p = pkts + (size_t)i * SLOT;
		u32 client = 0x0a000000 | (i >> 16);
		u16 port = i & 0xffff;

		if (is_v6(i))
			pb_ipv6_tcp(p, 1, client, 443, port, PB_ACK);
		else
			pb_ipv4_tcp(p, 0xc0000201, client, 443, port, PB_ACK);
	}
}

/* A permutation of 0..n-1 in @perm. */
static void permutation(u32 *perm, u32 n)
{
	u32 i, j, tmp;

	for (i = 0; i < n; i++)
		perm[i] = i;
	for (i = n - 1; i > 0; i--) {	/* Fisher-Yates */
		j = rng() % (i + 1);
		tmp = perm[i];
		perm[i] = perm[j];
		perm[j] = tmp;
	}
}

/* PKTS flow indices: random permutations of 0..n-1, back to back. */
static void shuffle_order(u32 n)
{
	u32 *perm = malloc(n * sizeof(*perm)), base, len;

	if (!perm)
		abort();
	for (base = 0; base < PKTS; base += len) {
		permutation(perm, n);
		len = min_t(u32, n, PKTS - base);
		memcpy(order + base, perm, len * sizeof(*perm));
	}
	free(perm);
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

struct stat {
	double median, min, max;
};

/* ns per packet over @n timed repeats of @pkts packets. */
static struct stat summarise(u64 *ns, unsigned int n, u64 pkts_per_rep)
{
	struct stat s;

	qsort(ns, n, sizeof(*ns), cmp_u64);
	s.median = (double)ns[n / 2] / pkts_per_rep;
	s.min = (double)ns[0] / pkts_per_rep;
	s.max = (double)ns[n - 1] / pkts_per_rep;
	return s;
}

/* ---- the packet path ------------------------------------------------------ */

/* Pre-built packet @i through srff_flowkey_parse(), as hook.c parses. */
static inline int parse_pkt(u32 i, struct srff_pkt *pkt)
{
	struct sk_buff skb = { .data = pkts + (size_t)i * SLOT, .len = pkt_len(i) };

	return srff_flowkey_parse(&skb, 0, is_v6(i) ? AF_INET6 : AF_INET, pkt);
}

static inline unsigned int hash_packet(struct srff_table *t, u32 i,
				       unsigned long now)
{
	struct srff_flow *f;
	struct srff_pkt pkt;
	bool created;
	u64 before;

	if (parse_pkt(i, &pkt))
		return 0;
	f = srff_table_get(t, &pkt.key, now, &created);
	if (IS_ERR(f))
		return 0;
	if (unlikely(pkt.tcp_fin_rst))
		srff_flow_close(f);
	before = srff_flow_account(t, f, pkt_len(i), now, 0);
	return srff_band(thresholds, 2, before);
}

static inline unsigned int parse_packet(u32 i)
{
	struct srff_pkt pkt;

	if (parse_pkt(i, &pkt))
		return 0;
	return pkt.key.dport;
}

/*
 * A floor, not a design: per flow, one 64-byte line holding the key and the
 * counters, found by the same siphash with no chain and no pointer to
 * follow (direct-mapped; colliding flows would share a line, which costs
 * nothing here). Any table keeping per-flow state in memory pays at least
 * this: parse, hash, one line. Its 1M/1k ratio is what cache misses alone
 * make of the target, whatever the table's layout.
 */
struct ideal_slot {
	struct srff_key key;
	u64 bytes;
	unsigned long last_seen;
} __aligned(64);

/*
 * And the floor of any chained design (srff's table, rhashtable): the
 * bucket array holds a pointer, the flow is a line of its own elsewhere,
 * so a lookup misses twice, one miss depending on the other. `ptrs`
 * non-NULL: that floor (one flow per bucket, no chain).
 */
struct ideal_table {
	struct ideal_slot *slots;
	struct ideal_slot **ptrs;
	u32 mask;
	siphash_key_t secret;
};

static inline struct ideal_slot *ideal_slot(struct ideal_table *it,
					    const struct srff_key *key)
{
	u32 h = siphash(key, sizeof(*key), &it->secret) & it->mask;

	return it->ptrs ? it->ptrs[h] : &it->slots[h];
}

static inline unsigned int ideal_packet(struct ideal_table *it, u32 i,
					unsigned long now)
{
	struct ideal_slot *s;
	struct srff_pkt pkt;
	u64 before;

	if (parse_pkt(i, &pkt))
		return 0;
	s = ideal_slot(it, &pkt.key);
	if (!srff_key_equal(&s->key, &pkt.key))
		return 0;
	if (s->last_seen != now)
		s->last_seen = now;
	before = __atomic_fetch_add(&s->bytes, pkt_len(i), __ATOMIC_RELAXED);
	return srff_band(thresholds, 2, before);
}

/* The 2003 design: one list, searched from the head, appended to. */
struct list_flow {
	struct list_flow *next;
	struct srff_key key;
	u64 bytes;
	unsigned long last_seen;
};

struct flow_list {
	struct list_flow *head, **tail;
	unsigned long count;
};

/* A new flow at the list's tail (the 2003 module appended). */
static struct list_flow *list_append(struct flow_list *l,
				     const struct srff_key *key, unsigned long now)
{
	struct list_flow *f = malloc(sizeof(*f));

	if (!f)
		return NULL;
	f->next = NULL;
	f->key = *key;
	f->bytes = 0;
	f->last_seen = now;
	*l->tail = f;
	l->tail = &f->next;
	l->count++;
	return f;
}

static struct list_flow *list_get(struct flow_list *l,
				  const struct srff_key *key, unsigned long now)
{
	struct list_flow *f;

	for (f = l->head; f; f = f->next)
		if (srff_key_equal(&f->key, key))
			return f;
	return list_append(l, key, now);
}

static inline unsigned int list_packet(struct flow_list *l, u32 i,
				       unsigned long now)
{
	struct list_flow *f;
	struct srff_pkt pkt;
	u64 before;

	if (parse_pkt(i, &pkt))
		return 0;
	f = list_get(l, &pkt.key, now);
	if (!f)
		return 0;
	f->last_seen = now;
	before = f->bytes;
	f->bytes += pkt_len(i);
	return srff_band(thresholds, 2, before);
}

static void list_free(struct flow_list *l)
{
	struct list_flow *f, *next;

	for (f = l->head; f; f = next) {
		next = f->next;
		free(f);
	}
}

/* ---- 1. per-packet cost ---------------------------------------------------- */

/* Buckets per roundup_pow_of_two(max_flows); "bench -b F" changes it. */
static double bucket_factor = 0.5;

static unsigned int module_buckets(unsigned int max_flows)
{
	/* srff_config_hash_buckets() with the hash_buckets parameter unset. */
	return max_t(unsigned long,
		     (unsigned long)(roundup_pow_of_two(max_flows) * bucket_factor),
		     256UL);
}

struct row {
	u32 n;
	unsigned int buckets;
	struct stat parse, hash, train, ideal, ideal2, list;
	double create_ns;
	u64 list_pkts;
};

/*
 * REPEATS passes of PKTS packets through @fn, each flow of order[] sending
 * @train packets back to back; ns/packet. Always inlined with a constant
 * @fn, so the compiler calls (and inlines) it directly: no indirect call
 * is timed.
 */
static __attribute__((always_inline)) inline struct stat
time_packets(unsigned int (*fn)(void *ctx, u32 i, unsigned long now),
	     void *ctx, u32 train)
{
	unsigned int rep;
	u64 ns[REPEATS];
	u32 k;

	for (rep = 0; rep < REPEATS; rep++) {
		unsigned long s = 0;
		u64 t0 = now_ns();

		for (k = 0; k < PKTS; k++) {
			if (!(k & 1023))
				jiffies++;
			s += fn(ctx, order[k / train], jiffies);
		}
		ns[rep] = now_ns() - t0;
		sink += s;
	}
	return summarise(ns, REPEATS, PKTS);
}

static inline unsigned int parse_fn(void *ctx, u32 i, unsigned long now)
{
	(void)ctx;
	(void)now;
	return parse_packet(i);
}

static inline unsigned int table_fn(void *t, u32 i, unsigned long now)
{
	return hash_packet(t, i, now);
}

static inline unsigned int ideal_fn(void *it, u32 i, unsigned long now)
{
	return ideal_packet(it, i, now);
}

/* The one-line floor over @n flows, or the two-line one (@chained), timed
 * as the table is. The chained floor's lines are the same array, reached
 * through a shuffled array of pointers, so that neighbouring buckets do not
 * point to neighbouring lines (as flows allocated over time do not).
 */
static struct stat time_ideal(u32 n, bool chained)
{
	struct ideal_table it;
	unsigned int hits = 0;
	struct stat st;
	u32 k;

	it.mask = roundup_pow_of_two(n) - 1;
	it.slots = aligned_alloc(64, ((size_t)it.mask + 1) * sizeof(*it.slots));
	if (!it.slots)
		abort();
	memset(it.slots, 0, ((size_t)it.mask + 1) * sizeof(*it.slots));
	it.ptrs = NULL;
	if (chained) {
		u32 *perm = malloc(((size_t)it.mask + 1) * sizeof(*perm));

		it.ptrs = malloc(((size_t)it.mask + 1) * sizeof(*it.ptrs));
		if (!it.ptrs || !perm)
			abort();
		permutation(perm, it.mask + 1);
		for (k = 0; k <= it.mask; k++)
			it.ptrs[k] = &it.slots[perm[k]];
		free(perm);
	}
	get_random_bytes(&it.secret, sizeof(it.secret));
	for (k = 0; k < n; k++) {
		struct srff_pkt pkt;

		if (parse_pkt(k, &pkt))
			abort();
		ideal_slot(&it, &pkt.key)->key = pkt.key;
	}
	st = time_packets(ideal_fn, &it, 1);
	/* Most flows own their line; the rest shared one and did less work. */
	for (k = 0; k <= it.mask; k++)
		hits += it.slots[k].bytes != 0;
	if (hits < n / 2)
		abort();
	free(it.ptrs);
	free(it.slots);
	return st;
}

static void measure(struct row *r)
{
	u64 ns[REPEATS], t0;
	struct flow_list l = { .tail = &l.head };
	struct srff_table t;
	unsigned int rep;
	u32 k, *perm;

	r->buckets = module_buckets(r->n);
	shuffle_order(r->n);

	/* Parse only: what reading the pre-built packets costs by itself. */
	r->parse = time_packets(parse_fn, NULL, 1);

	/* Hash table: a first pass creates the flows, timed on its own. */
	if (srff_table_init(&t, r->buckets, r->n, NULL) ||
	    srff_table_sizes_alloc(&t) || srff_table_resize(&t, r->buckets))
		abort();
	perm = malloc(r->n * sizeof(*perm));
	permutation(perm, r->n);
	t0 = now_ns();
	for (k = 0; k < r->n; k++)
		sink += hash_packet(&t, perm[k], jiffies);
	r->create_ns = (double)(now_ns() - t0) / r->n;
	if (srff_table_count(&t) != r->n)
		abort();
	r->hash = time_packets(table_fn, &t, 1);
	r->train = time_packets(table_fn, &t, TRAIN);
	if (srff_table_count(&t) != r->n)
		abort();
	srff_table_uninit(&t);
	rcu_barrier();

	/* The floor: one line per flow, in the same order. */
	r->ideal = time_ideal(r->n, false);
	r->ideal2 = time_ideal(r->n, true);

	/* Linked list: built in one creation order, then looked up. */
	for (k = 0; k < r->n; k++) {
		struct srff_pkt pkt;

		if (parse_pkt(perm[k], &pkt) || !list_append(&l, &pkt.key, jiffies))
			abort();
	}
	/* Each lookup visits n/2 nodes on average: bound the work per repeat. */
	r->list_pkts = clamp_t(u64, LIST_WORK * 2 / r->n, 100, PKTS);
	for (rep = 0; rep < LIST_REPEATS; rep++) {
		unsigned long s = 0;

		t0 = now_ns();
		for (k = 0; k < r->list_pkts; k++)
			s += list_packet(&l, order[(rep * r->list_pkts + k) % PKTS],
					 jiffies);
		ns[rep] = now_ns() - t0;
		sink += s;
	}
	r->list = summarise(ns, LIST_REPEATS, r->list_pkts);
	if (l.count != r->n)
		abort();
	list_free(&l);
	free(perm);
}

/* ---- 2. memory ------------------------------------------------------------ */

static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

static struct srff_key bench_key(u32 i)
{
	struct srff_key k;

	memset(&k, 0, sizeof(k));
	k.family = AF_INET;
	k.proto = IPPROTO_TCP;
	k.saddr.ip = htonl(0xc0000201);
	k.daddr.ip = htonl(0x0a000000 | (i >> 16));
	k.sport = htons(443);
	k.dport = htons(i & 0xffff);
	return k;
}

static void populate(struct srff_table *t, u32 n, unsigned long now)
{
	bool created;
	u32 i;

	for (i = 0; i < n; i++) {
		struct srff_key k = bench_key(i);

		if (IS_ERR(srff_table_get(t, &k, now, &created)))
			abort();
	}
}

static void memory(void)
{
	const u32 n = MAX_N;
	const size_t flow = sizeof(struct srff_flow);
	const size_t line = (flow + 63) & ~(size_t)63;
	/* KMEM_CACHE(srff_flow, 0): align __alignof__ = 8, SLUB order-0 slabs. */
	const size_t slub_obj = (flow + 7) & ~(size_t)7;
	const unsigned int per_slab = 4096 / slub_obj;
	const double slub = 4096.0 / per_slab;
	unsigned int buckets = module_buckets(n);
	size_t bucket_bytes = (size_t)buckets * sizeof(struct hlist_head);
	unsigned int nlocks = min_t(unsigned int, buckets, SRFF_MAX_LOCKS);
	size_t before, after, usable;
	struct srff_table t;
	bool created;
	struct srff_key k = bench_key(0);

	before = heap_in_use();
	if (srff_table_init(&t, buckets, n, NULL) ||
	    srff_table_sizes_alloc(&t) || srff_table_resize(&t, buckets))
		abort();
	populate(&t, n, jiffies);
	after = heap_in_use();
	usable = malloc_usable_size(srff_table_get(&t, &k, jiffies, &created));
	srff_table_uninit(&t);
	rcu_barrier();

	printf("\n2. Memory per tracked flow\n");
	printf("   sizeof(struct srff_flow)                   %5zu B\n", flow);
	printf("   rounded up to a 64-byte cache line         %5zu B\n", line);
	printf("   kernel slab (SLUB, no debug; estimate)     %5zu B object, %u per 4 KiB page = %.1f B/flow\n",
	       slub_obj, per_slab, slub);
	printf("   glibc malloc here                          %5zu B usable, %zu B with chunk header\n",
	       usable, (usable + 8 + 15) & ~(size_t)15);
	printf("   bucket array (%u heads x %zu B)        %5.1f B/flow at %u flows\n",
	       buckets, sizeof(struct hlist_head), (double)bucket_bytes / n, n);
	printf("   (2003 linked list node: %zu B)\n", sizeof(struct list_flow));
	printf("   Total at %u flows:\n", n);
	printf("     kernel estimate   %6.1f MiB = %u x %.1f B + buckets %.1f MiB + %u locks x 4 B\n",
	       (n * slub + bucket_bytes + nlocks * 4.0) / 1048576.0, n, slub,
	       bucket_bytes / 1048576.0, nlocks);
	printf("     measured here     %6.1f MiB (heap in use, mallinfo2: %.1f B/flow all included)\n",
	       (after - before) / 1048576.0, (double)(after - before) / n);
}

/* ---- 3. garbage collection --------------------------------------------------- */

static u64 *gaps;
static size_t ngaps, gaps_cap;
static u64 last_resched;

static void resched_hook(void)
{
	u64 t = now_ns();

	if (ngaps < gaps_cap)
		gaps[ngaps++] = t - last_resched;
	last_resched = t;
}

struct gc_result {
	double ms;		/* sweep */
	double free_ms;		/* the RCU callbacks that free */
	u64 max_gap, p999_gap, median_gap;
	size_t calls;
	long preempted;		/* involuntary context switches in the sweep */
	unsigned int max_gap_chain;	/* flows in the bucket of max_gap */
	u64 longest_chain_gap;	/* slowest of the buckets with the longest chain */
};

static u8 *chains;		/* flows per bucket, before the sweep */
static unsigned int longest_chain;

static void count_chains(struct srff_table *t)
{
	struct hlist_node *pos;
	unsigned int b, n;

	longest_chain = 0;
	for (b = 0; b <= t->tbl->mask; b++) {
		n = 0;
		for (pos = t->tbl->b[b].first; pos; pos = pos->next)
			n++;
		chains[b] = min_t(unsigned int, n, 255);
		longest_chain = max_t(unsigned int, longest_chain, n);
	}
}

static long involuntary_switches(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nivcsw;
}

/* Sweep @t at @now, timing it, or else timing the stretches between calls. */
static struct gc_result gc_sweep(struct srff_table *t, unsigned long now,
				 bool stretches, unsigned int expect)
{
	struct gc_result r = { 0 };
	long csw = involuntary_switches();
	u64 t0, t1;

	ngaps = 0;
	srff_user_resched_hook = stretches ? resched_hook : NULL;
	t0 = now_ns();
	last_resched = t0;
	if (srff_table_sweep(t, SRFF_SWEEP_GC, now, IDLE) != expect)
		abort();
	t1 = now_ns();
	srff_user_resched_hook = NULL;
	r.preempted = involuntary_switches() - csw;
	r.ms = (t1 - t0) / 1e6;
	if (stretches) {
		size_t k;

		if (ngaps < gaps_cap)
			gaps[ngaps++] = t1 - last_resched;
		r.calls = ngaps - 1;
		/* gaps[k], k <= tbl->mask, is the time spent on bucket k. */
		for (k = 0; k <= t->tbl->mask && k < ngaps; k++) {
			if (gaps[k] > r.max_gap) {
				r.max_gap = gaps[k];
				r.max_gap_chain = chains[k];
			}
			if (chains[k] == longest_chain)
				r.longest_chain_gap = max_t(u64, r.longest_chain_gap, gaps[k]);
		}
		qsort(gaps, ngaps, sizeof(*gaps), cmp_u64);
		r.max_gap = gaps[ngaps - 1];
		r.p999_gap = gaps[(size_t)(ngaps * 0.999)];
		r.median_gap = gaps[ngaps / 2];
	}
	t0 = now_ns();
	rcu_barrier();
	r.free_ms = (now_ns() - t0) / 1e6;
	return r;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median_of(double *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static void gc(void)
{
	const u32 n = MAX_N;
	unsigned int buckets = module_buckets(n);
	double idle_ms[GC_RUNS], free_ms[GC_RUNS], busy_ms[GC_RUNS];
	struct gc_result idle[GC_RUNS], busy[GC_RUNS], r;
	struct srff_table t;
	unsigned int run;

	gaps_cap = buckets + 2;
	gaps = malloc(gaps_cap * sizeof(*gaps));
	chains = malloc(buckets);
	if (!gaps || !chains)
		abort();
	memset(gaps, 0, gaps_cap * sizeof(*gaps));	/* no page faults in the hook */
	/* Runs 0..GC_RUNS-1 time the sweeps; the next GC_RUNS time the stretches. */
	for (run = 0; run < 2 * GC_RUNS; run++) {
		bool stretches = run >= GC_RUNS;
		unsigned long t0 = jiffies;

		if (srff_table_init(&t, buckets, n, NULL) ||
		    srff_table_sizes_alloc(&t) || srff_table_resize(&t, buckets))
			abort();
		populate(&t, n, t0);
		count_chains(&t);
		/* Every flow busy: the sweep walks all and frees none. */
		r = gc_sweep(&t, t0 + 1, stretches, 0);
		if (stretches)
			busy[run - GC_RUNS] = r;
		else
			busy_ms[run] = r.ms;
		/* Every flow idle: the sweep unlinks them all. */
		r = gc_sweep(&t, t0 + IDLE, stretches, n);
		if (stretches) {
			idle[run - GC_RUNS] = r;
		} else {
			idle_ms[run] = r.ms;
			free_ms[run] = r.free_ms;
		}
		if (srff_table_count(&t) != 0)
			abort();
		srff_table_uninit(&t);
		rcu_barrier();
		jiffies += 10 * IDLE;
	}
	free(gaps);
	free(chains);

	printf("\n3. Garbage collection: %u flows, %u buckets (longest chain %u), median of %d runs\n",
	       n, buckets, longest_chain, GC_RUNS);
	printf("   %-42s %7.1f ms  %.1f ns/flow: unlink + call_rcu\n",
	       "sweep unlinking all of them, idle",
	       median_of(idle_ms, GC_RUNS), median_of(idle_ms, GC_RUNS) * 1e6 / n);
	printf("   %-42s %7.1f ms  in the kernel: after the grace period, outside the sweep\n",
	       "their RCU callbacks (kmem_cache_free)", median_of(free_ms, GC_RUNS));
	printf("   %-42s %7.1f ms  what every GC run costs while they stay busy\n",
	       "sweep of all of them, busy (frees none)", median_of(busy_ms, GC_RUNS));
	printf("   stretches between cond_resched() calls (%zu calls a sweep, one per bucket):\n",
	       idle[0].calls);
	printf("     run sweep  longest (its bucket)  99.9th pct   median  longest-chain bucket  preempted\n");
	for (run = 0; run < 2 * GC_RUNS; run++) {
		const struct gc_result *g = run % 2 ? &busy[run / 2] : &idle[run / 2];

		printf("     %u   %s  %7.1f us (%2u flows) %7.2f us  %4llu ns  %7.2f us            %ld\n",
		       run / 2 + 1, run % 2 ? "busy" : "idle", g->max_gap / 1e3,
		       g->max_gap_chain, g->p999_gap / 1e3,
		       (unsigned long long)g->median_gap,
		       g->longest_chain_gap / 1e3, g->preempted);
	}
	printf("     Wall-clock stretches, timestamps' own cost included; 'preempted' counts\n"
	       "     involuntary context switches during the sweep (this machine is shared).\n");
	for (run = 0; run < GC_RUNS; run++)
		if (idle[run].max_gap_chain == longest_chain ||
		    busy[run].max_gap_chain == longest_chain)
			break;
	if (run == GC_RUNS)
		printf("     No run's longest stretch was on a longest-chain bucket: those outliers are\n"
		       "     the machine (interrupts, steal, preemption), not work; the work in one\n"
		       "     stretch is one bucket, the longest-chain column.\n");
}

static void print_cpu(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "model name", 10)) {
			printf("cpu:%s", strchr(line, ':') + 1);
			break;
		}
	}
	if (f)
		fclose(f);
}

/* ---- 4. growth: the packet path while the table resizes ------------------ */

#define GROW_FROM	1000u
#define GROW_OLD_PKTS	3		/* packets of older flows per new flow */
#define HIST_BINS	64		/* log2 ns */

struct delays {
	u64 n, max, sum;
	u64 bins[HIST_BINS];
};

static struct {
	struct srff_table *t;
	bool done;		/* __atomic */
	bool resizing;		/* __atomic: a resize is running */
	unsigned int resizes;
	unsigned int idle_kicks;	/* asked, and the resize changed nothing */
	u64 resize_ns[32];
	unsigned int resize_to[32];
} grow;

static void delays_add(struct delays *d, u64 ns)
{
	d->n++;
	d->sum += ns;
	d->max = ns > d->max ? ns : d->max;
	d->bins[ns ? 64 - __builtin_clzll(ns) : 0]++;
}

/* The upper bound of the log2 bin where quantile @q falls. */
static u64 delays_quantile(const struct delays *d, double q)
{
	u64 want = (u64)(q * d->n), seen = 0;
	unsigned int b;

	for (b = 0; b < HIST_BINS; b++) {
		seen += d->bins[b];
		if (seen > want)
			return b ? 1ULL << b : 1;
	}
	return d->max;
}

/* The GC worker's part: grow whenever a new flow would ask for it. */
static void *grow_resizer(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&grow.done, __ATOMIC_ACQUIRE)) {
		unsigned int before;
		u64 t0;

		if (!srff_table_wants_grow(grow.t)) {
			__builtin_ia32_pause();
			continue;
		}
		before = srff_table_buckets(grow.t);
		__atomic_store_n(&grow.resizing, true, __ATOMIC_RELEASE);
		t0 = now_ns();
		if (srff_table_resize(grow.t, 0))
			abort();
		/* srff_table_wants_grow() asks only when the resize gives one:
		 * the module's worker would have run for nothing.
		 */
		if (srff_table_buckets(grow.t) == before) {
			grow.idle_kicks++;
			__atomic_store_n(&grow.resizing, false, __ATOMIC_RELEASE);
			continue;
		}
		if (grow.resizes < 32) {
			grow.resize_ns[grow.resizes] = now_ns() - t0;
			grow.resize_to[grow.resizes] = srff_table_buckets(grow.t);
		}
		grow.resizes++;
		__atomic_store_n(&grow.resizing, false, __ATOMIC_RELEASE);
	}
	return NULL;
}

/*
 * Create flows GROW_FROM..n-1, each new flow's packet followed by
 * GROW_OLD_PKTS packets of random older flows, timing each packet: @all
 * every packet, @during those that ran while a resize did.
 */
static void grow_packets(struct srff_table *t, u32 n, struct delays *all,
			 struct delays *during)
{
	u32 k, j;

	srff_user_rcu_register();
	for (k = 0; k < GROW_FROM; k++)
		sink += hash_packet(t, k, jiffies);
	for (k = GROW_FROM; k < n; k++) {
		for (j = 0; j <= GROW_OLD_PKTS; j++) {
			u32 i = j ? (u32)(rng() % k) : k;
			bool resizing = __atomic_load_n(&grow.resizing, __ATOMIC_ACQUIRE);
			u64 t0 = now_ns(), ns;

			sink += hash_packet(t, i, jiffies);
			ns = now_ns() - t0;
			delays_add(all, ns);
			if (resizing || __atomic_load_n(&grow.resizing, __ATOMIC_ACQUIRE))
				delays_add(during, ns);
			srff_user_rcu_quiescent();
		}
	}
	srff_user_rcu_offline();
}

static void print_delays(const char *what, const struct delays *d)
{
	if (!d->n) {
		printf("   %-36s no packets\n", what);
		return;
	}
	printf("   %-36s %9llu pkts  mean %6.0f  p99 <%6llu  p99.99 <%7llu  max %8llu\n",
	       what, (unsigned long long)d->n, (double)d->sum / d->n,
	       (unsigned long long)delays_quantile(d, 0.99),
	       (unsigned long long)delays_quantile(d, 0.9999),
	       (unsigned long long)d->max);
}

static void growth(void)
{
	const u32 n = MAX_N;
	static struct delays fixed, fixed_none, all, during;
	unsigned int buckets = module_buckets(n), i;
	struct srff_table t;
	pthread_t th;

	printf("\n4. Growth: %u flows created one by one (each followed by %d packets of older\n"
	       "   flows, random), ns per packet (clock_gettime around each; log2 bins)\n",
	       n - GROW_FROM, GROW_OLD_PKTS);

	/* The table at its final size from the start: no resize. */
	if (srff_table_init(&t, buckets, n, NULL) || srff_table_sizes_alloc(&t) ||
	    srff_table_resize(&t, buckets))
		abort();
	grow_packets(&t, n, &fixed, &fixed_none);
	srff_table_uninit(&t);
	rcu_barrier();

	/* Growing from 256 buckets, resized by another thread as the module's
	 * worker does, while this one sends.
	 */
	if (srff_table_init(&t, buckets, n, NULL) || srff_table_sizes_alloc(&t))
		abort();
	grow.t = &t;
	grow.done = false;
	grow.resizes = 0;
	grow.idle_kicks = 0;
	if (pthread_create(&th, NULL, grow_resizer, NULL))
		abort();
	grow_packets(&t, n, &all, &during);
	__atomic_store_n(&grow.done, true, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	printf("   %u resizes (%u asked for nothing), 256 -> %u buckets (%u flows):",
	       grow.resizes, grow.idle_kicks, srff_table_buckets(&t),
	       srff_table_count(&t));
	for (i = 0; i < grow.resizes && i < 32; i++)
		printf(" %u in %.1f ms%s", grow.resize_to[i], grow.resize_ns[i] / 1e6,
		       i + 1 < grow.resizes ? "," : "\n");
	srff_table_uninit(&t);
	rcu_barrier();

	print_delays("fixed size (no resize)", &fixed);
	print_delays("growing: every packet", &all);
	print_delays("growing: packets during a resize", &during);
	printf("   growing / fixed: mean %.2fx, max %.2fx; during a resize / fixed: p99.99 %.2fx, max %.2fx\n",
	       ((double)all.sum / all.n) / ((double)fixed.sum / fixed.n),
	       (double)all.max / fixed.max,
	       (double)delays_quantile(&during, 0.9999) / delays_quantile(&fixed, 0.9999),
	       (double)during.max / fixed.max);
}

/* ---- 5. counters: flow slots taken one by one, or in per-CPU batches ---- */

#define CNT_OPS		(1u << 22)	/* takes and puts per thread */
#define CNT_LIVE	64		/* slots a thread holds at most */
#define CNT_INSERTS	200000u		/* flows a thread creates */
#define CNT_ROUNDS	9

struct cnt_arg {
	struct srff_slots *s;		/* slots only */
	struct srff_table *t;		/* or whole inserts into this table */
	u32 id;
	pthread_barrier_t *go;
	u64 ns;
};

/* Take CNT_LIVE slots, put them back, again: flows created and ended. */
static void *cnt_slots(void *arg)
{
	struct cnt_arg *a = arg;
	u32 i, j;
	u64 t0;

	pthread_barrier_wait(a->go);
	t0 = now_ns();
	for (i = 0; i < CNT_OPS / (2 * CNT_LIVE); i++) {
		for (j = 0; j < CNT_LIVE; j++)
			if (!srff_slots_take(a->s))
				abort();
		for (j = 0; j < CNT_LIVE; j++)
			srff_slots_put(a->s);
	}
	a->ns = now_ns() - t0;
	return NULL;
}

/* Create CNT_INSERTS flows of this thread's own in the shared table. */
static void *cnt_inserts(void *arg)
{
	struct cnt_arg *a = arg;
	struct srff_key k;
	bool created;
	u32 i;
	u64 t0;

	memset(&k, 0, sizeof(k));
	k.family = AF_INET;
	k.proto = IPPROTO_UDP;
	k.daddr.ip = htonl(0xc0a80001 + a->id);
	pthread_barrier_wait(a->go);
	t0 = now_ns();
	for (i = 0; i < CNT_INSERTS; i++) {
		k.saddr.ip = htonl(0x0a000000 | (i >> 16));
		k.sport = htons(i & 0xffff);
		rcu_read_lock();
		if (IS_ERR(srff_table_get(a->t, &k, 1, &created)) || !created)
			abort();
		rcu_read_unlock();
	}
	a->ns = now_ns() - t0;
	return NULL;
}

/* ns per operation over @threads threads at once, median of CNT_ROUNDS:
 * slot take/put pairs (@t NULL), or whole inserts into @t.
 */
static double cnt_run(unsigned int threads, bool batched, struct srff_table *t)
{
	double per[CNT_ROUNDS];
	unsigned int r, i;

	for (r = 0; r < CNT_ROUNDS; r++) {
		struct cnt_arg a[2];
		pthread_t th[2];
		pthread_barrier_t go;
		struct srff_slots s;
		u64 ns = 0;

		if (srff_slots_init(&s, 1U << 30))
			abort();
		if (t) {
			srff_table_set_max_flows(t, 1U << 22);
			t->shared[0] = &s;	/* the host's pool, as in the module */
		}
		if (!batched) {
			WRITE_ONCE(s.batch, 0);
			if (t)
				WRITE_ONCE(t->flows.batch, 0);
		}
		pthread_barrier_init(&go, NULL, threads);
		for (i = 0; i < threads; i++) {
			cpu_set_t cpus;

			a[i] = (struct cnt_arg){ .s = &s, .t = t, .id = i, .go = &go };
			if (pthread_create(&th[i], NULL, t ? cnt_inserts : cnt_slots, &a[i]))
				abort();
			/* One thread per core: two threads time-sliced on
			 * one core would never contend for the line.
			 */
			CPU_ZERO(&cpus);
			CPU_SET(i % sysconf(_SC_NPROCESSORS_ONLN), &cpus);
			pthread_setaffinity_np(th[i], sizeof(cpus), &cpus);
		}
		for (i = 0; i < threads; i++) {
			pthread_join(th[i], NULL);
			ns += a[i].ns;
		}
		pthread_barrier_destroy(&go);
		per[r] = (double)ns / threads / (t ? CNT_INSERTS : CNT_OPS);
		if (t) {
			srff_table_sweep(t, SRFF_SWEEP_FLUSH, 2, 0);
			rcu_barrier();
			t->shared[0] = NULL;
		}
		srff_slots_uninit(&s);
	}
	qsort(per, CNT_ROUNDS, sizeof(per[0]), cmp_double);
	return per[CNT_ROUNDS / 2];
}

/*
 * The counters a new flow writes: its table's flow count and the host's.
 * Taken one at a time, every insert on every CPU writes the same two lines;
 * in per-CPU batches of 16 (table.c, srff_slots), one insert in 16 does.
 * On two threads the line moves between the cores at each write.
 */
static void counters(void)
{
	struct srff_table t;
	double s1u, s1b, s2u, s2b, i1u, i1b, i2u, i2b;

	printf("\n5. Counters: a new flow's slot, taken one at a time or in per-CPU batches\n"
	       "   (srff_slots; this machine has %ld CPUs; thread i pinned to CPU i), median of %d rounds\n",
	       sysconf(_SC_NPROCESSORS_ONLN), CNT_ROUNDS);
	s1u = cnt_run(1, false, NULL);
	s1b = cnt_run(1, true, NULL);
	s2u = cnt_run(2, false, NULL);
	s2b = cnt_run(2, true, NULL);
	printf("   slots alone, ns per take or put (%u each, %d live per thread):\n"
	       "     1 thread:  one at a time %5.1f, batched %5.1f (%.2fx)\n"
	       "     2 threads: one at a time %5.1f, batched %5.1f (%.2fx)\n",
	       CNT_OPS, CNT_LIVE, s1u, s1b, s1b / s1u, s2u, s2b, s2b / s2u);
	if (srff_table_init(&t, 1U << 20, 1U << 22, NULL) || srff_table_sizes_alloc(&t) ||
	    srff_table_resize(&t, 1U << 20))
		abort();
	i1u = cnt_run(1, false, &t);
	i1b = cnt_run(1, true, &t);
	i2u = cnt_run(2, false, &t);
	i2b = cnt_run(2, true, &t);
	srff_table_uninit(&t);
	rcu_barrier();
	printf("   whole inserts (srff_table_get creating a flow, %u per thread, 1 M buckets):\n"
	       "     1 thread:  one at a time %5.1f, batched %5.1f (%.2fx)\n"
	       "     2 threads: one at a time %5.1f, batched %5.1f (%.2fx)\n",
	       CNT_INSERTS, i1u, i1b, i1b / i1u, i2u, i2b, i2b / i2u);
}

int main(int argc, char **argv)
{
	static const u32 sizes[] = { 1000, 100000, MAX_N };
	const char *tunables = getenv("GLIBC_TUNABLES");
	bool per_packet_only = false, growth_only = false, counters_only = false;
	int opt;
	struct row rows[3];
	unsigned int i;
	u64 t0 = now_ns();

	while ((opt = getopt(argc, argv, "pgcb:")) != -1) {
		switch (opt) {
		case 'c':	/* the counters part only */
			counters_only = true;
			break;
		case 'g':	/* the growth part only */
			growth_only = true;
			break;
		case 'p':	/* the per-packet part only */
			per_packet_only = true;
			break;
		case 'b':	/* buckets per power-of-two-rounded flow */
			bucket_factor = atof(optarg);
			if (bucket_factor < 1.0 / 64 || bucket_factor > 4)
				goto usage;
			break;
		default:
			goto usage;
		}
	}
	if (optind != argc)
		goto usage;
	if (srff_table_cache_init())
		abort();
	build_packets();

	printf("srff user-space benchmark: the module's flowkey.c + table.c over user/kernel.h,\n"
	       "built with gcc -O2; one thread; HZ %d; thresholds 1500,5000; idle reset off\n", HZ);
	printf("GLIBC_TUNABLES=%s\n", tunables ? tunables : "(unset: 4 KiB pages)");
	print_cpu();
	if (counters_only) {
		counters();
		srff_table_cache_uninit();
		printf("\nbench: %.1f s in all, sink %lu\n", (now_ns() - t0) / 1e9, sink & 1);
		return 0;
	}
	if (growth_only) {
		growth();
		srff_table_cache_uninit();
		printf("\nbench: %.1f s in all, sink %lu\n", (now_ns() - t0) / 1e9, sink & 1);
		return 0;
	}
	printf("\n");
	printf("1. Per-packet cost (parse + srff_table_get + srff_flow_account + srff_band, as hook.c)\n"
	       "   %u packets per repeat, pre-built (90%% IPv4/TCP, 10%% IPv6/TCP, %d B slots),\n"
	       "   flows visited in a pre-shuffled random order; ns/packet, median [min-max]\n\n",
	       PKTS, SLOT);
	printf("     flows  buckets load | parse only | hash table (%d repeats)  1st pkt  | linked list, 2003 (%d repeats)\n",
	       REPEATS, LIST_REPEATS);
	for (i = 0; i < 3; i++) {
		struct row *r = &rows[i];

		r->n = sizes[i];
		measure(r);
		printf("   %7u  %7u  %3.1f | %7.1f    | %7.1f [%6.1f-%6.1f]  %6.0f   | %10.0f [%.0f-%.0f] (%llu pkts/repeat)\n",
		       r->n, r->buckets, (double)r->n / r->buckets,
		       r->parse.median, r->hash.median, r->hash.min, r->hash.max,
		       r->create_ns, r->list.median, r->list.min, r->list.max,
		       (unsigned long long)r->list_pkts);
	}
	printf("\n   ratio 1M/1k flows: hash table %.2fx (%.2fx net of parsing), linked list %.0fx\n",
	       rows[2].hash.median / rows[0].hash.median,
	       (rows[2].hash.median - rows[2].parse.median) /
	       (rows[0].hash.median - rows[0].parse.median),
	       rows[2].list.median / rows[0].list.median);
	printf("   linked list / hash table: %.0fx at 1k, %.0fx at 100k, %.0fx at 1M flows\n",
	       rows[0].list.median / rows[0].hash.median,
	       rows[1].list.median / rows[1].hash.median,
	       rows[2].list.median / rows[2].hash.median);
	printf("\n   With trains of %d packets per flow (the same flows and order, each flow's\n"
	       "   packets back to back), ns/packet, median [min-max]:\n", TRAIN);
	for (i = 0; i < 3; i++)
		printf("   %7u  %7.1f [%6.1f-%6.1f]\n", rows[i].n, rows[i].train.median,
		       rows[i].train.min, rows[i].train.max);
	printf("   ratio 1M/1k flows with trains: %.2fx\n",
	       rows[2].train.median / rows[0].train.median);
	printf("\n   The floor: one 64-byte line per flow, direct-mapped by the same siphash (no\n"
	       "   chain, no pointer; not a usable table), the same packets and order, ns/packet:\n");
	for (i = 0; i < 3; i++)
		printf("   %7u  %7.1f [%6.1f-%6.1f]   hash table / floor %.2fx\n", rows[i].n,
		       rows[i].ideal.median, rows[i].ideal.min, rows[i].ideal.max,
		       rows[i].hash.median / rows[i].ideal.median);
	printf("   ratio 1M/1k flows for the floor: %.2fx\n",
	       rows[2].ideal.median / rows[0].ideal.median);
	printf("\n   The chained floor: the same lines reached through a bucket array of pointers\n"
	       "   (one flow per bucket, no chain): two dependent misses, the least any chained\n"
	       "   table (this one, rhashtable) pays, ns/packet:\n");
	for (i = 0; i < 3; i++)
		printf("   %7u  %7.1f [%6.1f-%6.1f]   hash table / chained floor %.2fx, chained / one-line floor %.2fx\n",
		       rows[i].n, rows[i].ideal2.median, rows[i].ideal2.min, rows[i].ideal2.max,
		       rows[i].hash.median / rows[i].ideal2.median,
		       rows[i].ideal2.median / rows[i].ideal.median);
	if (per_packet_only) {
		printf("\nbench: %.1f s in all, sink %lu\n", (now_ns() - t0) / 1e9, sink & 1);
		return 0;
	}
	printf("   '1st pkt': a flow's first packet, which creates it (allocation included), timed apart.\n");
	printf("   The list's nodes are allocated back to back in creation order, its best case\n"
	       "   (the hardware prefetcher follows them); its repeats are capped at ~%llu M node\n"
	       "   visits each, so at 1M flows it is measured on %llu packets, not extrapolated.\n"
	       "   At 1M flows the 64 MB of packets are cache-cold too, unlike a packet the stack\n"
	       "   has just written: 'parse only' shows that share.\n",
	       LIST_WORK / 1000000, (unsigned long long)rows[2].list_pkts * LIST_REPEATS);

	memory();
	gc();
	growth();
	counters();
	srff_table_cache_uninit();
	printf("\n   (no measurement of packets on another thread during a sweep: the shim's RCU\n"
	       "    is not concurrent)\n");
	printf("\nbench: %.1f s in all, sink %lu\n", (now_ns() - t0) / 1e9, sink & 1);
	return 0;
usage:
	fprintf(stderr, "usage: bench [-p|-g|-c] [-b BUCKETS_PER_FLOW]\n"
		"  -p  the per-packet part only\n"
		"  -g  the growth part only\n"
		"  -c  the counters part only\n"
		"  -b  hash buckets per flow, of max_flows rounded up to a power of two\n"
		"      (default %g, as the module sizes its table; 1/64..4)\n", bucket_factor);
	return 2;
}
