// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the flow-key parser and the flow table.
 *
 * Input: byte 0 selects how the packet is presented, the rest is the packet
 * from its network header on:
 *   bit 0      family: 0 AF_INET, 1 AF_INET6
 *   bits 1..6  linear head: 0 = all of it, k = 2 * (k - 1) + bit 7 bytes
 * The last byte of the packet also drives the table (time steps, sweeps,
 * idle reset, cap changes).
 *
 * Checked on every input:
 * - parsing reads nothing past the packet (ASan: exact-size buffers) and
 *   gives the same answer for the linear and the split packet;
 * - a parsed packet is self-consistent (see check_pkt());
 * - the table behaves like a trivial model of it (an array searched
 *   linearly): same flow for the same key, the cap (count <= max_flows,
 *   -ENOSPC exactly when full), bytes-before, idle reset, what GC frees and
 *   how it counts it, and a walk visits each modelled flow once;
 * - band <= nthresholds.
 * Unlinked flows are freed (rcu_barrier) right after each sweep, so a
 * table that kept a pointer to one would be caught by ASan.
 */
#include <stdio.h>
#include <stdlib.h>

#include "kernel.h"
#include "flowkey.h"
#include "table.h"
#include "band.h"
#include "../../include/uapi/linux/srff.h"

#define MAX_FLOWS	64
#define SMALL_CAP	16
#define BUCKETS		16
#define IDLE		64		/* jiffies */

#define FUZZ_CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: invariant failed: %s\n",	\
			__FILE__, __LINE__, #cond);			\
		abort();						\
	}								\
} while (0)

struct model_flow {
	struct srff_flow *f;
	struct srff_key key;
	u64 bytes;
	unsigned long last_seen;
	bool closed;
	unsigned int visits;
};

static struct srff_table table;
static struct model_flow model[MAX_FLOWS];
static unsigned int nmodel;
static u64 m_gc_freed, m_fin_retired, m_flushed, m_gc_runs, m_evicted;
static unsigned long inputs;

static void setup(void)
{
	srff_user_warn_abort = true;
	FUZZ_CHECK(srff_table_cache_init() == 0);
	FUZZ_CHECK(srff_table_init(&table, BUCKETS, MAX_FLOWS, NULL) == 0);
	FUZZ_CHECK(srff_table_sizes_alloc(&table) == 0);
	jiffies = ULONG_MAX - 50000;	/* cross the wrap during the run */
}

static void check_pkt(const struct srff_pkt *p, u8 family, size_t len)
{
	static const u8 zero[12];
	const struct srff_key *k = &p->key;

	FUZZ_CHECK(k->family == family);
	FUZZ_CHECK(len >= (family == AF_INET ? 20u : 40u));
	FUZZ_CHECK(!k->inner);
	if (family == AF_INET) {
		FUZZ_CHECK(!memcmp((const u8 *)&k->saddr + 4, zero, 12));
		FUZZ_CHECK(!memcmp((const u8 *)&k->daddr + 4, zero, 12));
	}
	if (!p->has_ports)
		FUZZ_CHECK(!k->sport && !k->dport && !p->tcp_fin_rst);
	if (p->fragment)
		FUZZ_CHECK(!p->has_ports);
	if (p->has_ports)
		FUZZ_CHECK(k->proto == IPPROTO_TCP || k->proto == IPPROTO_UDP ||
			   k->proto == IPPROTO_UDPLITE || k->proto == IPPROTO_SCTP ||
			   k->proto == IPPROTO_DCCP);
	if (p->tcp_fin_rst)
		FUZZ_CHECK(k->proto == IPPROTO_TCP);
}

static int parse(const u8 *b, size_t len, size_t head, u8 family,
		 struct srff_pkt *p)
{
	struct sk_buff *skb = srff_user_skb_new(b, len, head);
	int ret;

	FUZZ_CHECK(skb);
	ret = srff_flowkey_parse(skb, 0, family, p);
	srff_user_skb_free(skb);
	return ret;
}

/* The outer parse, then srff_flowkey_parse_inner(): -EINVAL unless both
 * succeed; a failed inner parse leaves the outer result as it was.
 */
static int parse_inner(const u8 *b, size_t len, size_t head, u8 family,
		       struct srff_pkt *p)
{
	struct sk_buff *skb = srff_user_skb_new(b, len, head);
	struct srff_pkt outer;
	int ret;

	FUZZ_CHECK(skb);
	ret = srff_flowkey_parse(skb, 0, family, p);
	if (!ret) {
		outer = *p;
		ret = srff_flowkey_parse_inner(skb, 0, p);
		if (ret)
			FUZZ_CHECK(!memcmp(&outer, p, sizeof(outer)));
	}
	srff_user_skb_free(skb);
	return ret;
}

/* A tunnel's packet keyed by what it carries, as the hook does for SRv6
 * and IPVS: the same at both splits, self-consistent, every header
 * counted from the outer one.
 */
static void fuzz_inner(const u8 *b, size_t len, size_t head, u8 family,
		       struct srff_pkt *pkt)
{
	struct srff_pkt lin, split;
	int r1, r2;

	if (pkt->key.proto != IPPROTO_IPIP && pkt->key.proto != IPPROTO_IPV6 &&
	    pkt->key.proto != IPPROTO_GRE)
		return;
	r1 = parse_inner(b, len, len, family, &lin);
	r2 = parse_inner(b, len, head, family, &split);
	FUZZ_CHECK(r1 == r2);
	if (r1) {
		FUZZ_CHECK(r1 == -EINVAL);
		return;
	}
	FUZZ_CHECK(!memcmp(&lin, &split, sizeof(lin)));
	check_pkt(&lin, lin.key.family, len);
	/* (A transport header may claim more bytes than the packet has.) */
	FUZZ_CHECK(!lin.hdr_len || lin.hdr_len > len || lin.hdr_len + lin.payload == len);
	*pkt = lin;
}

static struct model_flow *model_find(const struct srff_key *k)
{
	unsigned int i;

	for (i = 0; i < nmodel; i++)
		if (!memcmp(&model[i].key, k, sizeof(*k)))
			return &model[i];
	return NULL;
}

static void model_check_counts(void)
{
	FUZZ_CHECK(srff_table_count(&table) == nmodel);
	FUZZ_CHECK(nmodel <= MAX_FLOWS);
	FUZZ_CHECK((u64)atomic64_read(&table.gc_freed) == m_gc_freed);
	FUZZ_CHECK((u64)atomic64_read(&table.fin_retired) == m_fin_retired);
	FUZZ_CHECK((u64)atomic64_read(&table.flushed) == m_flushed);
	FUZZ_CHECK((u64)atomic64_read(&table.gc_runs) == m_gc_runs);
	FUZZ_CHECK((u64)atomic64_read(&table.evicted) == m_evicted);
}

static void sweep(enum srff_sweep mode, unsigned long now)
{
	unsigned int i, expect = 0, idle = 0, closed = 0;

	for (i = 0; i < nmodel; ) {
		struct model_flow *m = &model[i];
		unsigned long age = now - m->last_seen;
		bool go = mode != SRFF_SWEEP_GC;

		/* (long)(now - (last + x)) >= 0, as time_after_eq() says. */
		if (mode == SRFF_SWEEP_GC) {
			if (m->closed && (long)(age - SRFF_CLOSED_LINGER) >= 0)
				go = true, closed++;
			else if ((long)(age - IDLE) >= 0)
				go = true, idle++;
		}
		if (go) {
			expect++;
			*m = model[--nmodel];
		} else {
			i++;
		}
	}
	FUZZ_CHECK(srff_table_sweep(&table, mode, now, IDLE) == expect);
	if (mode == SRFF_SWEEP_GC) {
		m_gc_freed += idle;
		m_fin_retired += closed;
		m_gc_runs++;
	} else {
		m_flushed += expect;
	}
	rcu_barrier();
	FUZZ_CHECK(srff_user_slab_live == (long)nmodel);
	model_check_counts();
}

#define WALK_PER_MSG	5

/* A "message" of WALK_PER_MSG flows, and where the current bucket began. */
struct walk_msg {
	struct model_flow *in[WALK_PER_MSG];
	unsigned int n, mark;
};

/* Takes WALK_PER_MSG flows per message, refuses the next. */
static int walk_fn(const struct srff_flow *f, void *arg)
{
	struct model_flow *m = model_find(&f->key);
	struct walk_msg *msg = arg;

	FUZZ_CHECK(m && m->f == f);
	if (msg->n == WALK_PER_MSG)
		return -EMSGSIZE;
	msg->in[msg->n++] = m;
	m->visits++;
	return 0;
}

static bool walk_mark(void *arg)
{
	struct walk_msg *msg = arg;

	msg->mark = msg->n;
	return msg->n;
}

static void walk_undo(void *arg)
{
	struct walk_msg *msg = arg;

	while (msg->n > msg->mark)
		msg->in[--msg->n]->visits--;
}

static const struct srff_walk_ops walk_ops = {
	.flow = walk_fn, .mark = walk_mark, .undo = walk_undo,
};

/* A walk in small messages visits every flow exactly once, and every
 * message but the last holds something.
 */
static void walk(void)
{
	struct srff_walk w = { 0 };
	struct walk_msg msg;
	unsigned int i, msgs = 0;
	int err;

	for (i = 0; i < nmodel; i++)
		model[i].visits = 0;
	do {
		msg.n = 0;
		err = srff_table_walk(&table, &w, &walk_ops, &msg);
		FUZZ_CHECK(!err || (err == -EMSGSIZE && msg.n > 0));
		FUZZ_CHECK(++msgs <= MAX_FLOWS + 1);
	} while (err);
	for (i = 0; i < nmodel; i++)
		FUZZ_CHECK(model[i].visits == 1);
}

static void drive_table(const struct srff_pkt *p, unsigned int len, u8 op)
{
	static const u64 thresholds[SRFF_MAX_BANDS] = {
		100, 200, 400, 800, 1500, 3000, 6000, 12000, 25000, 50000,
		100000, 200000, 400000, 800000, 1600000
	};
	unsigned long now, idle_reset = (op & 0x40) ? 20 : 0;
	unsigned int n = len % 16, band;
	struct model_flow *m;
	struct srff_flow *f;
	bool created;
	u64 before, mb;

	jiffies += (unsigned long)(op & 0x0f) << (((op >> 4) & 3) * 2);
	now = jiffies;

	if (op == 0xfe) {			/* move the cap */
		srff_table_set_max_flows(&table,
			srff_table_max_flows(&table) == MAX_FLOWS ?
			SMALL_CAP : MAX_FLOWS);
	}
	m = model_find(&p->key);
	f = srff_table_get(&table, &p->key, now, &created);
	if (m) {
		FUZZ_CHECK(f == m->f && !created);
	} else if (nmodel >= srff_table_max_flows(&table)) {
		if (IS_ERR(f)) {
			FUZZ_CHECK(PTR_ERR(f) == -ENOSPC && !created);
		} else {
			/* Room was made: exactly one modelled flow is gone,
			 * only at the cap (not above it), and it was closed or
			 * idle long enough to be evicted.
			 */
			struct model_flow *gone = NULL;
			unsigned int i;

			FUZZ_CHECK(created && nmodel == srff_table_max_flows(&table));
			for (i = 0; i < nmodel; i++) {
				if (srff_table_find(&table, &model[i].key))
					continue;
				FUZZ_CHECK(!gone);
				gone = &model[i];
			}
			FUZZ_CHECK(gone);
			FUZZ_CHECK(gone->closed ||
				   (long)(now - gone->last_seen - SRFF_EVICT_MIN_IDLE) >= 0);
			m_evicted++;
			*gone = (struct model_flow){ .f = f, .key = p->key,
						     .last_seen = now };
			m = gone;
		}
	} else {
		FUZZ_CHECK(!IS_ERR(f) && created);
		FUZZ_CHECK(srff_key_equal(&f->key, &p->key));
		m = &model[nmodel++];
		*m = (struct model_flow){ .f = f, .key = p->key,
					  .last_seen = now };
	}
	model_check_counts();

	if (m) {
		if (p->tcp_fin_rst) {
			srff_flow_close(f);
			m->closed = true;
		}
		if (idle_reset && (long)(now - m->last_seen - idle_reset) >= 0) {
			mb = 0;
			m->bytes = len;
		} else {
			mb = m->bytes;
			m->bytes += len;
		}
		m->last_seen = now;
		before = srff_flow_account(&table, f, len, now, idle_reset);
		FUZZ_CHECK(before == mb);
		FUZZ_CHECK((u64)atomic64_read(&f->bytes) == m->bytes);
		FUZZ_CHECK(f->last_seen == now);
		FUZZ_CHECK(test_bit(SRFF_FLOW_CLOSED_BIT, &f->flags) == m->closed);
		band = srff_band(thresholds, n, before);
		FUZZ_CHECK(band <= n);
		FUZZ_CHECK(before || band == 0);
	}

	if ((op & 0x30) == 0x30)
		sweep(SRFF_SWEEP_GC, now);
	if (op == 0xff)
		sweep(SRFF_SWEEP_FLUSH, now);
	if (++inputs % 64 == 0)
		walk();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct srff_pkt lin, split;
	unsigned int k;
	size_t len, head;
	u8 family;
	int r1, r2;

	if (!table.tbl)
		setup();
	if (size < 1)
		return 0;
	family = data[0] & 1 ? AF_INET6 : AF_INET;
	k = (data[0] >> 1) & 0x3f;
	len = size - 1;
	head = k ? 2 * (k - 1) + (data[0] >> 7) : len;

	r1 = parse(data + 1, len, len, family, &lin);
	r2 = parse(data + 1, len, head, family, &split);
	FUZZ_CHECK(r1 == r2);
	if (r1) {
		FUZZ_CHECK(r1 == -EINVAL);
		return 0;
	}
	FUZZ_CHECK(!memcmp(&lin, &split, sizeof(lin)));
	check_pkt(&lin, family, len);
	fuzz_inner(data + 1, len, head, family, &lin);
	drive_table(&lin, len, data[size - 1]);
	return 0;
}
