/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srff internals shared by main.c, config.c, hook.c and netlink.c.
 * The algorithm is stated once, at the top of main.c.
 */
#ifndef _SRFF_H
#define _SRFF_H

#include <linux/netfilter.h>
#include <linux/workqueue.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <uapi/linux/srff.h>

#include "table.h"
#include "auto.h"

/*
 * One namespace's configuration. Immutable once published: a change builds
 * a new one and swaps the pointer (srff_config_swap), so a packet sees the
 * old or the new configuration whole, never a mix.
 */
struct srff_config {
	u64 thresholds[SRFF_MAX_THRESHOLDS];	/* bytes, ascending */
	u32 priorities[SRFF_MAX_BANDS];		/* skb->priority per band */
	u32 nthresholds;			/* bands = nthresholds + 1 */
	u32 npriorities;
	u16 classid_major;			/* 0: use priorities[] */
	u8 udp_policy;				/* enum srff_udp_policy */
	u8 app_priority;			/* enum srff_app_prio */
	u8 auto_thresholds;			/* 1: learnt (auto.h) */
	u8 enabled;				/* 1: hooked, with a tracker */
	u32 idle_timeout_ms;
	u32 gc_interval_ms;
	u32 idle_reset_ms;			/* 0: off */
	u32 max_flows;
	u32 untracked_priority;
	u32 ntop_ports;
	u16 top_ports[SRFF_MAX_TOP_PORTS];	/* host order */
	u8 mark;				/* enum srff_mark */
	u8 dscp_override;			/* 1: rewrite any DSCP */
	u8 dscp_map_set;			/* 0: dscp[] is the default */
	u32 ndscp;				/* = bands, once checked */
	u8 dscp[SRFF_MAX_BANDS];		/* per band, or SRFF_DSCP_KEEP */
	/* Derived in srff_config_check(), in jiffies. */
	unsigned long idle_timeout;
	unsigned long idle_reset;
	struct rcu_head rcu;
};

/* Per-CPU counters written on the packet path with this_cpu_inc/add (or,
 * before they are allocated, atomically into srff_tracker.early_stats).
 */
struct srff_pcpu_stats {
	u64 band_pkts[SRFF_MAX_BANDS];
	u64 band_bytes[SRFF_MAX_BANDS];
	u64 created;
	u64 table_full;
	u64 alloc_failed;
	u64 untracked_pkts;
	u64 untracked_bytes;
	u64 ignored_pkts;
	u64 top_port_pkts;
	u64 nodata_pkts;	/* TCP segments with no data, no flow: top band */
	u64 encap_pkts;		/* passes another pass classifies (hook.c) */
	u64 loopback_pkts;	/* sent through a loopback device */
	u64 dscp_pkts;		/* DSCP written (mark dscp) */
	u64 dscp_failed;	/* header could not be made writable */
};

#define SRFF_STATS_WORDS	(sizeof(struct srff_pcpu_stats) / sizeof(u64))

/*
 * What a namespace where srff is enabled has (SRFF_A_ENABLED): its hooks,
 * its flow table, its statistics and its GC. Allocated when srff is
 * enabled there and freed when it is disabled or the namespace goes away,
 * so a namespace that does not use srff pays only for struct srff_net and
 * its configuration (main.c: srff_tracker_start, srff_tracker_stop).
 */
struct srff_owner;

struct srff_tracker {
	struct srff_net *sn;
	struct srff_table table;
	/* NULL until the first packet: the hook asks the resize worker for
	 * them, and counts into early_stats (the same layout, atomic) until
	 * they are published; readers add both. READ_ONCE.
	 */
	struct srff_pcpu_stats __percpu *stats;
	atomic64_t early_stats[SRFF_STATS_WORDS];
	struct delayed_work gc_work;
	struct work_struct resize_work;		/* grows the table */
	atomic64_t gc_last_ns;			/* the latest sweep's duration */
	unsigned long gc_next_early;		/* jiffies: no early GC before */
	unsigned long gc_flags;			/* SRFF_GC_*_BIT */
	atomic64_t gc_early;			/* sweeps started early */
	struct srff_owner *owner;		/* the pool of the user behind
						 * this namespace's user
						 * namespace; NULL: the host's */
	struct mem_cgroup *memcg;		/* charged for what the workers
						 * allocate (a reference); NULL:
						 * none (main.c tracker_memcg) */
	struct srff_auto *autoth;		/* the GC worker's alone; NULL
						 * until a flow has ended */
	unsigned long auto_next;		/* jiffies: next update */
	u64 auto_flows;				/* READ_ONCE: recent flows */
	atomic64_t auto_changes;		/* thresholds installed */
	struct nf_hook_ops ops[2];		/* IPv4, IPv6; .priv = this */
};

#define SRFF_GC_KICKED_BIT	0	/* an early sweep is queued */
#define SRFF_AUTO_DIRTY_BIT	1	/* config changed: recompute auto */
#define SRFF_RESIZE_QUEUED_BIT	2	/* resize_work is queued */

/* Per-namespace state, net_generic(net, srff_net_id). */
struct srff_net {
	struct net *net;
	struct srff_config __rcu *config;
	struct mutex config_lock;		/* serialises config writers,
						 * and starts and stops the
						 * tracker */
	/* NULL while srff is disabled here. Readers: the hook (its .priv),
	 * the GC worker (its own), and netlink under rcu_read_lock or
	 * config_lock; srff_tracker_stop waits for them before freeing.
	 */
	struct srff_tracker __rcu *tracker;
};

/* Summed statistics, for netlink. */
struct srff_stats {
	struct srff_pcpu_stats sum;
	u32 flows;
	u32 max_flows;
	u64 gc_freed;
	u64 fin_retired;
	u64 flushed;
	u64 gc_runs;
	u64 gc_early;
	u64 gc_last_us;
	u32 gc_last_chain;
	u64 evicted;
	bool host;		/* the initial namespace's: the two below */
	u32 flows_host;		/* every namespace together */
	u32 max_flows_host;
	u64 auto_flows;
	u64 auto_changes;
	u32 buckets;
	u64 grown;
	u64 shrunk;
};

extern unsigned int srff_net_id;
/* The host-wide cap on flows of every namespace together (main.c). */
extern struct srff_slots srff_host_flows;

static inline struct srff_net *srff_pernet(struct net *net)
{
	return net_generic(net, srff_net_id);
}

/* config.c */
struct srff_config *srff_config_from_params(void);
int srff_config_check(struct srff_config *c, const char **msg);
void srff_config_swap(struct srff_net *sn, struct srff_config *c);
struct srff_config *srff_config_get_locked(struct srff_net *sn);
int srff_config_params_check(void);
unsigned int srff_config_hash_buckets(void);
unsigned int srff_config_max_flows_host(void);
unsigned int srff_config_max_flows_reserved(void);
unsigned int srff_config_max_flows_owner(void);
unsigned int srff_config_auto_min_flows(void);
void srff_config_auto_default(struct srff_config *c, unsigned int n);
int srff_config_check_limits(const struct srff_config *c, bool host,
			     bool userns, const char **msg);
bool srff_config_enabled_at_init(bool host);

static inline u32 srff_band_priority(const struct srff_config *c,
				     unsigned int band)
{
	if (c->classid_major)
		return ((u32)c->classid_major << 16) | (band + 1);
	return c->priorities[band];
}

/* hook.c */
unsigned int srff_hook(void *priv, struct sk_buff *skb,
		       const struct nf_hook_state *state);

/* main.c */
void srff_stats_read(struct srff_tracker *tr, bool host, struct srff_stats *st);
void srff_gc_reschedule(struct srff_tracker *tr);
void srff_gc_kick(struct srff_tracker *tr);
void srff_resize_kick(struct srff_tracker *tr);
int srff_tracker_start(struct srff_net *sn, const struct srff_config *c);
void srff_tracker_stop(struct srff_net *sn);

static inline struct srff_tracker *srff_tracker_locked(struct srff_net *sn)
{
	return rcu_dereference_protected(sn->tracker,
					 lockdep_is_held(&sn->config_lock));
}

#ifdef SRFF_TEST_HOOKS
/* Test builds only (make SRFF_TEST=1): widen race windows on purpose. */
extern unsigned int srff_test_hook_delay_us;
void srff_test_hook_delay(const struct srff_config *c,
			  const struct srff_table *t);
#else
static inline void srff_test_hook_delay(const struct srff_config *c,
					const struct srff_table *t)
{
}
#endif

/* netlink.c */
int srff_genl_init(void);
void srff_genl_uninit(void);

#endif /* _SRFF_H */
