// SPDX-License-Identifier: GPL-2.0
/*
 * srff: shortest-remaining-flow-first marking of outgoing packets.
 *
 * A server cannot know how long a response will be, but it knows how much
 * each flow has sent so far, and flow sizes are heavy-tailed: a flow that has
 * sent little is likely to finish soon. srff counts the bytes every flow has
 * sent and sets skb->priority from that count, so the first bytes of every
 * flow leave through the top band of a pfifo_fast/prio qdisc and long
 * transfers sink to lower bands:
 *
 *   bytes sent before this packet:  0 ........ t0 ........ t1 ..........
 *   band:                            0          1           2   ...
 *   skb->priority (default):         6          0           2
 *   pfifo_fast band:                 0          1           2
 *
 * The thresholds (up to 15, ascending; learnt from the sizes of finished
 * flows unless set) and the priorities (or classid_major: major:(band + 1)
 * for a prio qdisc) are module parameters (srff(8)), every namespace's
 * defaults, which the "srff" generic netlink family changes per namespace.
 * A flow idle for idle_reset_ms (100) counts again from 0, so each response
 * on a kept-alive connection starts in the top band; for local TCP the gap
 * is its min RTT if shorter, and counts only with nothing left unsent or
 * unacknowledged (never on an MPTCP subflow).
 *
 * Where things are: flowkey.c reads the packet, band.h maps bytes to a band,
 * table.c holds the flows and all their locking, hook.c is the packet path,
 * config.c the parameters and their checks, netlink.c the control plane,
 * auto.c the learnt thresholds. This file brings namespaces up and down and
 * runs their workers: GC, resizes, automatic thresholds.
 */
#include <linux/module.h>
#include <linux/delay.h>
#include <linux/memcontrol.h>
#include <linux/sched/mm.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <net/netns/generic.h>

#include "srff.h"

unsigned int srff_net_id __read_mostly;

/*
 * The pools a table's flows may also count against (table.h: taken
 * narrowest first):
 *   srff_host_flows    every namespace: max_flows_total;
 *   srff_others_flows  every namespace but the initial one: max_flows_total
 *                      less max_flows_reserved, which only the host's own
 *                      namespace can then use, whatever the others do;
 *   an owner's pool    the namespaces owned by user namespaces that one
 *                      host user created (at any depth): max_flows in all,
 *                      one namespace's worth, however many they create.
 */
struct srff_slots srff_host_flows;
static struct srff_slots srff_others_flows;

struct srff_owner {
	struct list_head node;		/* srff_owners, under srff_owners_lock */
	kuid_t uid;			/* in init_user_ns */
	unsigned int users;		/* trackers; under srff_owners_lock */
	struct srff_slots flows;
};

static LIST_HEAD(srff_owners);
static DEFINE_MUTEX(srff_owners_lock);

/* The host user behind @ns: the owner of its outermost user namespace
 * below the initial one. Many namespaces, nested or not, one uid.
 */
static kuid_t owner_uid(const struct user_namespace *ns)
{
	while (ns->parent != &init_user_ns)
		ns = ns->parent;
	return ns->owner;
}

/* The pool of @net's owner (a reference), or NULL on -ENOMEM. */
static struct srff_owner *owner_get(const struct net *net)
{
	kuid_t uid = owner_uid(net->user_ns);
	struct srff_owner *o;

	mutex_lock(&srff_owners_lock);
	list_for_each_entry(o, &srff_owners, node) {
		if (uid_eq(o->uid, uid)) {
			o->users++;
			goto out;
		}
	}
	o = kzalloc(sizeof(*o), GFP_KERNEL);
	if (o && srff_slots_init(&o->flows, srff_config_max_flows_owner())) {
		kfree(o);
		o = NULL;
	}
	if (o) {
		o->uid = uid;
		o->users = 1;
		list_add(&o->node, &srff_owners);
	}
out:
	mutex_unlock(&srff_owners_lock);
	return o;
}

/* After the table that used @o has released every slot. */
static void owner_put(struct srff_owner *o)
{
	mutex_lock(&srff_owners_lock);
	if (!--o->users) {
		list_del(&o->node);
		srff_slots_uninit(&o->flows);
		kfree(o);
	}
	mutex_unlock(&srff_owners_lock);
}

/* Early GC (srff_gc_kick): never sooner than SRFF_GC_EARLY_GAP after the
 * previous sweep ended, nor than SRFF_GC_EARLY_DUTY times its duration: at
 * most a fifth of a CPU.
 */
#define SRFF_GC_EARLY_GAP	(HZ / 10)
#define SRFF_GC_EARLY_DUTY	4

#ifdef SRFF_TEST_HOOKS
unsigned int srff_test_hook_delay_us;
module_param_named(test_hook_delay_us, srff_test_hook_delay_us, uint, 0644);
MODULE_PARM_DESC(test_hook_delay_us, "TEST BUILD: busy-wait this long in the hook, holding the namespace's config and table");

static bool test_unsafe_teardown;
module_param(test_unsafe_teardown, bool, 0444);
MODULE_PARM_DESC(test_unsafe_teardown, "TEST BUILD: unregister the hooks in .exit, not .pre_exit, and free a disabled namespace's tracker without waiting (the use-after-frees this build must show)");

/* Hold @c and @t across a delay, then read them: a teardown that frees
 * them under a packet in the hook is a use-after-free KASAN reports.
 */
void srff_test_hook_delay(const struct srff_config *c,
			  const struct srff_table *t)
{
	unsigned int us = READ_ONCE(srff_test_hook_delay_us);

	if (!us)
		return;
	while (us > 1000) {
		mdelay(1);
		us -= 1000;
	}
	udelay(us);
	(void)READ_ONCE(c->nthresholds);
	(void)READ_ONCE(rcu_dereference(t->tbl)->b[0].first);
}
#define unsafe_teardown() READ_ONCE(test_unsafe_teardown)

static unsigned int test_worker_delay_ms;
module_param(test_worker_delay_ms, uint, 0644);
MODULE_PARM_DESC(test_worker_delay_ms, "TEST BUILD: the GC and resize workers sleep this long before touching their tracker");

/* The workers sleep before touching their tracker; under the unsafe
 * teardown they then read one field (KASAN's report, if freed) and stop:
 * working on in freed memory could hang the guest.
 */
static bool test_worker_delay(const struct srff_tracker *tr)
{
	unsigned int ms = READ_ONCE(test_worker_delay_ms);

	if (!ms)
		return false;
	msleep(ms);
	if (!unsafe_teardown())
		return false;
	(void)READ_ONCE(tr->gc_flags);
	return true;
}

/* Before unhooking, wait as long as the hook holds a packet, so that a
 * sender is inside it, pointers in hand, when it is unhooked (unhooking at
 * once usually beats the sender back in).
 */
static void test_unhook_delay(void)
{
	unsigned int us = READ_ONCE(srff_test_hook_delay_us);

	if (us)
		fsleep(2 * us);
}
#else
#define unsafe_teardown() false
static inline void test_unhook_delay(void)
{
}

static inline bool test_worker_delay(const struct srff_tracker *tr)
{
	return false;
}
#endif

/* After SNAT, so keys are the addresses on the wire; before conntrack
 * confirms. Later than mangle, so app_priority=keep also keeps CLASSIFY.
 */
#define SRFF_HOOK_PRIORITY	(NF_IP_PRI_NAT_SRC + 1)

static const struct nf_hook_ops srff_ops_template[] = {
	{
		.hook = srff_hook,
		.pf = NFPROTO_IPV4,
		.hooknum = NF_INET_POST_ROUTING,
		.priority = SRFF_HOOK_PRIORITY,
	},
	{
		.hook = srff_hook,
		.pf = NFPROTO_IPV6,
		.hooknum = NF_INET_POST_ROUTING,
		.priority = SRFF_HOOK_PRIORITY,
	},
};

/* The packet path's counters: the per-CPU ones, if allocated, and what was
 * counted before they were (early_stats).
 */
static void srff_stats_sum(struct srff_tracker *tr, struct srff_pcpu_stats *sum)
{
	u64 *w = (u64 *)sum;
	unsigned int i;

	srff_pcpu_sum_u64(w, READ_ONCE(tr->stats), sizeof(*sum));
	for (i = 0; i < SRFF_STATS_WORDS; i++)
		w[i] += atomic64_read(&tr->early_stats[i]);
}

/* Allocate the per-CPU statistics, which the namespace's first packet asks
 * for (docs/design.md, "Per-namespace enablement"). Resize worker only.
 * -ENOMEM: the next packet asks again; counting goes on in early_stats.
 */
static int srff_stats_alloc(struct srff_tracker *tr)
{
	struct srff_pcpu_stats __percpu *pcpu;

	if (tr->stats)
		return 0;
	pcpu = alloc_percpu_gfp(struct srff_pcpu_stats, GFP_KERNEL_ACCOUNT);
	if (!pcpu)
		return -ENOMEM;
	smp_store_release(&tr->stats, pcpu);	/* zeroed, then published */
	return 0;
}

/* @host: the initial namespace's, whose replies alone carry the host-wide
 * figures (st->host).
 */
void srff_stats_read(struct srff_tracker *tr, bool host, struct srff_stats *st)
{
	BUILD_BUG_ON(sizeof(struct srff_pcpu_stats) % sizeof(u64));
	memset(st, 0, sizeof(*st));
	st->host = host;
	if (host) {
		st->flows_host = srff_slots_used(&srff_host_flows);
		st->max_flows_host = READ_ONCE(srff_host_flows.max);
	}
	if (!tr)		/* srff is disabled here: nothing counted */
		return;
	srff_stats_sum(tr, &st->sum);
	st->flows = srff_table_count(&tr->table);
	st->max_flows = srff_table_max_flows(&tr->table);
	st->gc_freed = atomic64_read(&tr->table.gc_freed);
	st->fin_retired = atomic64_read(&tr->table.fin_retired);
	st->flushed = atomic64_read(&tr->table.flushed);
	st->gc_runs = atomic64_read(&tr->table.gc_runs);
	st->gc_early = atomic64_read(&tr->gc_early);
	st->evicted = atomic64_read(&tr->table.evicted);
	st->gc_last_us = div_u64(atomic64_read(&tr->gc_last_ns), NSEC_PER_USEC);
	st->gc_last_chain = READ_ONCE(tr->table.gc_last_chain);
	st->auto_flows = READ_ONCE(tr->auto_flows);
	st->auto_changes = atomic64_read(&tr->auto_changes);
	st->buckets = srff_table_buckets(&tr->table);
	st->grown = atomic64_read(&tr->table.grown);
	st->shrunk = atomic64_read(&tr->table.shrunk);
}

static unsigned long gc_interval(struct srff_net *sn)
{
	const struct srff_config *c;
	unsigned long j;

	rcu_read_lock();
	c = rcu_dereference(sn->config);
	j = msecs_to_jiffies(c->gc_interval_ms);
	rcu_read_unlock();
	return j;
}

/*
 * Automatic thresholds (auto.h), from the GC worker at most once a
 * SRFF_AUTO_PERIOD: fold the flows that ended since into the recent
 * histogram and install new thresholds if they moved enough. With no flow
 * ended and no new configuration (SRFF_AUTO_DIRTY_BIT), it only reads the
 * per-CPU reason counters. It only tries config_lock, which
 * srff_tracker_stop holds while it waits for this worker
 * (cancel_delayed_work_sync); a busy lock leaves the update to the next run.
 */
#define SRFF_AUTO_PERIOD	HZ

static void auto_step(struct srff_tracker *tr)
{
	struct srff_net *sn = tr->sn;
	struct srff_auto *a = tr->autoth;
	u64 th[SRFF_MAX_THRESHOLDS], ended;
	struct srff_config *old, *c;
	const char *msg;
	unsigned int n;
	bool on;

	if (time_before(jiffies, tr->auto_next))
		return;
	tr->auto_next = jiffies + SRFF_AUTO_PERIOD;
	ended = srff_table_sizes_ended(&tr->table);
	if (!a) {
		/* 3 KiB, not kept by a namespace where no flow has ended. */
		if (!ended)
			return;
		a = kzalloc(sizeof(*a), GFP_KERNEL_ACCOUNT);
		if (!a)
			return;		/* the next GC run tries again */
		tr->autoth = a;
	}
	if (ended != srff_auto_ended(&a->seen)) {
		/* 2 KiB: not on the stack, and not kept between updates. */
		struct srff_sizes *now = kmalloc(sizeof(*now), GFP_KERNEL);

		if (!now)
			return;		/* the next GC run tries again */
		srff_table_sizes_read(&tr->table, now);
		srff_auto_update(a, now, srff_config_auto_min_flows());
		kfree(now);
		WRITE_ONCE(tr->auto_flows, srff_auto_flows(a));
	} else if (!test_and_clear_bit(SRFF_AUTO_DIRTY_BIT, &tr->gc_flags)) {
		return;		/* nothing new, and no new configuration */
	}

	rcu_read_lock();
	c = rcu_dereference(sn->config);
	on = c->auto_thresholds;
	n = c->nthresholds;
	rcu_read_unlock();
	if (!on || srff_auto_thresholds(a, n, srff_config_auto_min_flows(), th))
		return;

	if (!mutex_trylock(&sn->config_lock)) {
		set_bit(SRFF_AUTO_DIRTY_BIT, &tr->gc_flags);	/* next run */
		tr->auto_next = jiffies;
		return;
	}
	old = srff_config_get_locked(sn);
	/* Still learning, with as many bands, and moved enough? */
	if (!old->auto_thresholds || old->nthresholds != n ||
	    !srff_auto_moved(old->thresholds, th, n))
		goto out;
	c = kmemdup(old, sizeof(*c), GFP_KERNEL_ACCOUNT);
	if (!c)
		goto out;
	memcpy(c->thresholds, th, n * sizeof(th[0]));
	if (WARN_ON_ONCE(srff_config_check(c, &msg))) {	/* ascending, > 0 */
		kfree(c);
		goto out;
	}
	srff_config_swap(sn, c);
	atomic64_inc(&tr->auto_changes);
out:
	mutex_unlock(&sn->config_lock);
}

static void gc_worker(struct work_struct *work)
{
	struct srff_tracker *tr = container_of(to_delayed_work(work),
					       struct srff_tracker, gc_work);
	struct srff_net *sn;
	struct mem_cgroup *memcg;
	unsigned long idle;
	u64 t0;

	if (test_worker_delay(tr))
		return;
	sn = tr->sn;
	rcu_read_lock();
	idle = rcu_dereference(sn->config)->idle_timeout;
	rcu_read_unlock();

	t0 = ktime_get_ns();
	memcg = set_active_memcg(tr->memcg);
	srff_table_sweep(&tr->table, SRFF_SWEEP_GC, jiffies, idle);
	srff_table_resize(&tr->table, 0);	/* shrink, if it emptied */
	auto_step(tr);
	set_active_memcg(memcg);
	t0 = ktime_get_ns() - t0;
	atomic64_set(&tr->gc_last_ns, t0);
	WRITE_ONCE(tr->gc_next_early, jiffies +
		   max_t(unsigned long, SRFF_GC_EARLY_GAP,
			 SRFF_GC_EARLY_DUTY * nsecs_to_jiffies(t0)));
	clear_bit(SRFF_GC_KICKED_BIT, &tr->gc_flags);
	queue_delayed_work(system_power_efficient_wq, &tr->gc_work,
			   gc_interval(sn));
}

/*
 * The table is filling: sweep early (see SRFF_GC_EARLY_GAP). Any context,
 * the packet path included; at most one early sweep is queued at a time.
 */
void srff_gc_kick(struct srff_tracker *tr)
{
	unsigned long now = jiffies, next = READ_ONCE(tr->gc_next_early);

	if (test_bit(SRFF_GC_KICKED_BIT, &tr->gc_flags) ||
	    test_and_set_bit(SRFF_GC_KICKED_BIT, &tr->gc_flags))
		return;
	atomic64_inc(&tr->gc_early);
	mod_delayed_work(system_power_efficient_wq, &tr->gc_work,
			 time_after(next, now) ? next - now : 0);
}

static void resize_worker(struct work_struct *work)
{
	struct srff_tracker *tr = container_of(work, struct srff_tracker,
					       resize_work);
	struct mem_cgroup *memcg;

	if (test_worker_delay(tr))
		return;
	clear_bit(SRFF_RESIZE_QUEUED_BIT, &tr->gc_flags);
	memcg = set_active_memcg(tr->memcg);
	srff_stats_alloc(tr);		/* -ENOMEM: the next packet asks */
	srff_table_sizes_alloc(&tr->table);	/* -ENOMEM: the next flow asks */
	srff_table_resize(&tr->table, 0);
	set_active_memcg(memcg);
}

/*
 * Ask the resize worker (process context) to grow the table, or to allocate
 * its size histogram (first flow) or the per-CPU statistics (first packet).
 * Any context; one is queued at a time, and sizes the table from the count
 * it then finds.
 */
void srff_resize_kick(struct srff_tracker *tr)
{
	if (test_bit(SRFF_RESIZE_QUEUED_BIT, &tr->gc_flags) ||
	    test_and_set_bit(SRFF_RESIZE_QUEUED_BIT, &tr->gc_flags))
		return;
	queue_work(system_unbound_wq, &tr->resize_work);
}

/* The GC interval changed: run at the new pace from now on. */
void srff_gc_reschedule(struct srff_tracker *tr)
{
	mod_delayed_work(system_power_efficient_wq, &tr->gc_work,
			 gc_interval(tr->sn));
}

/* Free what tracker_alloc allocated; nothing may look at @tr any more. */
static void tracker_free(struct srff_tracker *tr)
{
	kfree(tr->autoth);
	free_percpu(tr->stats);
	srff_table_uninit(&tr->table);
	if (tr->owner)
		owner_put(tr->owner);
	mem_cgroup_put(tr->memcg);
	kfree(tr);
}

/*
 * The memory cgroup the workers charge for this namespace (grown bucket
 * arrays, statistics, size histogram, automatic-threshold state): the
 * calling task's own, not its mm owner's, as GFP_KERNEL_ACCOUNT charged the
 * tracker; referenced for the tracker's life (as sk_memcg). None for the
 * initial namespace and those that exist at load (srff_loading): the host's
 * srff must not pin the loader's cgroup until rmmod. docs/design.md, Limits.
 */
static bool srff_loading;	/* register_pernet_subsys() in srff_init: it
				 * holds pernet_ops_rwsem for writing, so no
				 * namespace is created meanwhile */

static struct mem_cgroup *tracker_memcg(const struct net *net)
{
#ifdef CONFIG_MEMCG
	struct mem_cgroup *memcg;

	if (net_eq(net, &init_net) || READ_ONCE(srff_loading) ||
	    mem_cgroup_disabled())
		return NULL;
	rcu_read_lock();
	do {		/* a cgroup that is going: the task has moved on */
		memcg = mem_cgroup_from_task(current);
	} while (!css_tryget(&memcg->css));
	rcu_read_unlock();
	return memcg;
#else
	return NULL;
#endif
}

static struct srff_tracker *tracker_alloc(struct srff_net *sn,
					  const struct srff_config *c)
{
	struct srff_tracker *tr;

	tr = kzalloc(sizeof(*tr), GFP_KERNEL_ACCOUNT);
	if (!tr)
		return NULL;
	tr->sn = sn;
	tr->memcg = tracker_memcg(sn->net);
	if (srff_table_init(&tr->table, srff_config_hash_buckets(),
			    c->max_flows, &srff_host_flows)) {
		mem_cgroup_put(tr->memcg);
		kfree(tr);
		return NULL;
	}
	if (!net_eq(sn->net, &init_net))
		srff_table_add_pool(&tr->table, &srff_others_flows);
	if (sn->net->user_ns != &init_user_ns) {
		tr->owner = owner_get(sn->net);
		if (!tr->owner) {
			tracker_free(tr);
			return NULL;
		}
		srff_table_add_pool(&tr->table, &tr->owner->flows);
	}
	tr->table.netns_ino = sn->net->ns.inum;
	tr->auto_next = jiffies;
	tr->gc_next_early = jiffies;
	/* auto_step treats a new tracker as a new configuration. */
	set_bit(SRFF_AUTO_DIRTY_BIT, &tr->gc_flags);
	INIT_DEFERRABLE_WORK(&tr->gc_work, gc_worker);
	INIT_WORK(&tr->resize_work, resize_worker);

	BUILD_BUG_ON(ARRAY_SIZE(srff_ops_template) != ARRAY_SIZE(tr->ops));
	memcpy(tr->ops, srff_ops_template, sizeof(tr->ops));
	tr->ops[0].priv = tr;
	tr->ops[1].priv = tr;
	return tr;
}

/* Stop @tr's workers and free it, once no packet can be in its hook
 * (unhooked, then a grace period). Both are cancelled even if this path
 * never queued them: a packet that passed the hook may have queued either.
 */
static void tracker_destroy(struct srff_tracker *tr)
{
	cancel_delayed_work_sync(&tr->gc_work);
	cancel_work_sync(&tr->resize_work);
	tracker_free(tr);
}

/*
 * Enable srff in @sn's namespace, with @c (checked; the configuration about
 * to be published): allocate a tracker, publish it, then hook. Under
 * config_lock, or at namespace init. -ENOMEM: no memory for the tracker;
 * any other error is nf_register_net_hooks()'s.
 */
int srff_tracker_start(struct srff_net *sn, const struct srff_config *c)
{
	struct srff_tracker *tr;
	int err;

	if (rcu_access_pointer(sn->tracker))
		return 0;
	tr = tracker_alloc(sn, c);
	if (!tr)
		return -ENOMEM;
	rcu_assign_pointer(sn->tracker, tr);
	err = nf_register_net_hooks(sn->net, tr->ops, ARRAY_SIZE(tr->ops));
	if (err) {
		RCU_INIT_POINTER(sn->tracker, NULL);
		/* nf_register_net_hooks() may have registered the IPv4 hook
		 * and unregistered it again when IPv6 failed (-E2BIG past
		 * MAX_HOOK_COUNT, or -ENOMEM) without waiting (call_rcu). A
		 * packet may still be in the hook and may have queued either
		 * worker; netlink readers may hold @tr. Wait for all of them.
		 */
		synchronize_net();
		if (!unsafe_teardown())
			tracker_destroy(tr);
		else
			tracker_free(tr);
		return err;
	}
	queue_delayed_work(system_power_efficient_wq, &tr->gc_work,
			   msecs_to_jiffies(c->gc_interval_ms));
	return 0;
}

/*
 * Disable srff in @sn's namespace, under config_lock: unpublish, unhook,
 * wait for the packets in the hook and the netlink readers under RCU
 * (unregistering does not wait: see srff_net_pre_exit), stop GC, free.
 * The GC worker only tries config_lock (auto_step), so waiting for it
 * here cannot deadlock. The flows go through call_rcu, as at GC.
 */
void srff_tracker_stop(struct srff_net *sn)
{
	struct srff_tracker *tr = srff_tracker_locked(sn);

	if (!tr)
		return;
	RCU_INIT_POINTER(sn->tracker, NULL);
	test_unhook_delay();
	nf_unregister_net_hooks(sn->net, tr->ops, ARRAY_SIZE(tr->ops));
	if (!unsafe_teardown())
		synchronize_net();
	tracker_destroy(tr);
}

static int __net_init srff_net_init(struct net *net)
{
	struct srff_net *sn = srff_pernet(net);
	struct srff_config *c;
	const char *msg;
	int err;

	sn->net = net;
	mutex_init(&sn->config_lock);
	RCU_INIT_POINTER(sn->tracker, NULL);
	c = srff_config_from_params();
	if (!c)
		return -ENOMEM;
	c->enabled = srff_config_enabled_at_init(net_eq(net, &init_net));
	if (srff_config_check(c, &msg)) {	/* checked at load: cannot fail */
		kfree(c);
		return -EINVAL;
	}
	RCU_INIT_POINTER(sn->config, c);
	if (c->enabled) {
		err = srff_tracker_start(sn, c);
		if (err == -ENOMEM) {
			kfree(c);
			return err;
		}
		if (err) {
			/* A namespace that existed at load (netns=all) and
			 * cannot take our hooks (-E2BIG) stays off, rather than
			 * failing the load for every namespace.
			 */
			pr_notice_ratelimited("srff: not enabled in namespace %u: cannot register hooks (%d)\n",
					      net->ns.inum, err);
			c->enabled = false;
		}
	}
	return 0;
}

/*
 * Unregistering a hook does not wait for packets inside it (6.1's and
 * 6.12's __nf_unregister_net_hook() free the old array with call_rcu), but
 * the pernet core runs synchronize_rcu() between every .pre_exit and every
 * .exit (cleanup_net(), free_exit_list()): unhook here, free in .exit, as
 * iptable_filter and nf_tables do. No netlink request can race: every
 * socket of the namespace holds a reference to it, and none is left.
 */
static void __net_exit srff_net_pre_exit(struct net *net)
{
	struct srff_tracker *tr = rcu_access_pointer(srff_pernet(net)->tracker);

	if (tr && !unsafe_teardown()) {
		test_unhook_delay();
		nf_unregister_net_hooks(net, tr->ops, ARRAY_SIZE(tr->ops));
	}
}

/* After srff_net_pre_exit and a grace period: stop the workers (GC re-arms
 * itself; cancel_delayed_work_sync() handles that), free the tracker (flows
 * through call_rcu; module exit waits for them) and the config.
 */
static void __net_exit srff_net_exit(struct net *net)
{
	struct srff_net *sn = srff_pernet(net);
	struct srff_tracker *tr = rcu_access_pointer(sn->tracker);

	if (tr) {
		if (unsafe_teardown()) {
			test_unhook_delay();
			nf_unregister_net_hooks(net, tr->ops, ARRAY_SIZE(tr->ops));
		}
		tracker_destroy(tr);
	}
	kfree(rcu_dereference_protected(sn->config, true));
}

static struct pernet_operations srff_net_ops = {
	.init = srff_net_init,
	.pre_exit = srff_net_pre_exit,
	.exit = srff_net_exit,
	.id = &srff_net_id,
	.size = sizeof(struct srff_net),
};

static int __init srff_init(void)
{
	int err;

	err = srff_config_params_check();
	if (err)
		return err;
	err = srff_slots_init(&srff_host_flows, srff_config_max_flows_host());
	if (err)
		return err;
	err = srff_slots_init(&srff_others_flows, srff_config_max_flows_host() -
			      srff_config_max_flows_reserved());
	if (err)
		goto err_slots;
	err = srff_table_cache_init();
	if (err)
		goto err_others;
	WRITE_ONCE(srff_loading, true);
	err = register_pernet_subsys(&srff_net_ops);
	WRITE_ONCE(srff_loading, false);
	if (err)
		goto err_cache;
	err = srff_genl_init();
	if (err)
		goto err_pernet;
	pr_info("srff: loaded\n");
	return 0;

err_pernet:
	unregister_pernet_subsys(&srff_net_ops);
err_cache:
	rcu_barrier();
	srff_table_cache_uninit();
err_others:
	srff_slots_uninit(&srff_others_flows);
err_slots:
	srff_slots_uninit(&srff_host_flows);
	return err;
}

static void __exit srff_exit(void)
{
	srff_genl_uninit();
	unregister_pernet_subsys(&srff_net_ops);
	rcu_barrier();		/* flows freed by call_rcu callbacks (configs
				 * go to kfree_rcu, which runs no module code)
				 */
	srff_table_cache_uninit();
	srff_slots_uninit(&srff_others_flows);	/* every table is gone */
	srff_slots_uninit(&srff_host_flows);
	pr_info("srff: unloaded\n");
}

module_init(srff_init);
module_exit(srff_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("srff developers");
MODULE_DESCRIPTION("srff: mark egress packets by flow size (shortest remaining flow first)");
MODULE_VERSION("0.1");
