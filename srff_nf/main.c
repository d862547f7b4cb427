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
 * Tunables (module parameters set every namespace's defaults; the "srff"
 * generic netlink family changes them per namespace at run time):
 *   thresholds        up to 15 ascending byte counts (default 1500, 5000)
 *   priorities        skb->priority per band (default 6, 0, 2), or
 *   classid_major     write major:(band + 1) for a prio qdisc instead
 *   idle_timeout_ms   a flow idle this long is forgotten (default 2500 ms)
 *   gc_interval_ms    how often idle flows are collected (default 2500 ms)
 *   max_flows         hard cap per namespace (default 1 per 64 KiB of RAM)
 *   untracked_priority for packets of flows the full table cannot hold (0)
 *   idle_reset_ms     restart a kept-alive flow's count after idle (off)
 *   udp_policy, app_priority, top_ports: see docs/design.md
 *
 * Where things are: flowkey.c reads the packet, band.h maps bytes to a band,
 * table.c holds the flows and all their locking, hook.c is the packet path,
 * config.c the parameters and their checks, netlink.c the control plane.
 * This file only brings a namespace up and down and runs its GC.
 */
#include <linux/module.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <net/netns/generic.h>

#include "srff.h"

unsigned int srff_net_id __read_mostly;

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

void srff_stats_read(struct srff_net *sn, struct srff_stats *st)
{
	const u64 *src;
	u64 *dst = (u64 *)&st->sum;
	unsigned int i, cpu;

	BUILD_BUG_ON(sizeof(struct srff_pcpu_stats) % sizeof(u64));
	memset(st, 0, sizeof(*st));
	for_each_possible_cpu(cpu) {
		src = (const u64 *)per_cpu_ptr(sn->stats, cpu);
		for (i = 0; i < sizeof(st->sum) / sizeof(u64); i++)
			dst[i] += READ_ONCE(src[i]);
	}
	st->flows = srff_table_count(&sn->table);
	st->max_flows = READ_ONCE(sn->table.max_flows);
	st->gc_freed = atomic64_read(&sn->table.gc_freed);
	st->fin_retired = atomic64_read(&sn->table.fin_retired);
	st->flushed = atomic64_read(&sn->table.flushed);
	st->gc_runs = atomic64_read(&sn->table.gc_runs);
	st->gc_last_us = div_u64(atomic64_read(&sn->gc_last_ns), NSEC_PER_USEC);
	st->gc_last_chain = READ_ONCE(sn->table.gc_last_chain);
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

static void gc_worker(struct work_struct *work)
{
	struct srff_net *sn = container_of(to_delayed_work(work),
					   struct srff_net, gc_work);
	unsigned long idle;
	u64 t0;

	rcu_read_lock();
	idle = rcu_dereference(sn->config)->idle_timeout;
	rcu_read_unlock();

	t0 = ktime_get_ns();
	srff_table_sweep(&sn->table, SRFF_SWEEP_GC, jiffies, idle);
	atomic64_set(&sn->gc_last_ns, ktime_get_ns() - t0);
	queue_delayed_work(system_power_efficient_wq, &sn->gc_work,
			   gc_interval(sn));
}

/* The GC interval changed: run at the new pace from now on. */
void srff_gc_reschedule(struct srff_net *sn)
{
	mod_delayed_work(system_power_efficient_wq, &sn->gc_work,
			 gc_interval(sn));
}

static int __net_init srff_net_init(struct net *net)
{
	struct srff_net *sn = srff_pernet(net);
	struct srff_config *c;
	const char *msg;
	int err;

	sn->net = net;
	mutex_init(&sn->config_lock);
	c = srff_config_from_params();
	if (!c)
		return -ENOMEM;
	if (srff_config_check(c, &msg)) {	/* checked at load: cannot fail */
		err = -EINVAL;
		goto err_config;
	}
	RCU_INIT_POINTER(sn->config, c);

	err = srff_table_init(&sn->table, srff_config_hash_buckets(c->max_flows),
			      c->max_flows);
	if (err)
		goto err_config;

	sn->stats = alloc_percpu(struct srff_pcpu_stats);
	if (!sn->stats) {
		err = -ENOMEM;
		goto err_table;
	}

	INIT_DEFERRABLE_WORK(&sn->gc_work, gc_worker);
	atomic64_set(&sn->gc_last_ns, 0);

	BUILD_BUG_ON(ARRAY_SIZE(srff_ops_template) != ARRAY_SIZE(sn->ops));
	memcpy(sn->ops, srff_ops_template, sizeof(sn->ops));
	sn->ops[0].priv = sn;
	sn->ops[1].priv = sn;
	err = nf_register_net_hooks(net, sn->ops, ARRAY_SIZE(sn->ops));
	if (err)
		goto err_stats;

	queue_delayed_work(system_power_efficient_wq, &sn->gc_work,
			   msecs_to_jiffies(c->gc_interval_ms));
	return 0;

err_stats:
	free_percpu(sn->stats);
err_table:
	srff_table_uninit(&sn->table);
err_config:
	kfree(c);
	return err;
}

/*
 * Mirror of srff_net_init: once the hooks are gone (nf_unregister_net_hooks
 * waits for packets inside them) and GC has stopped, nothing can reach the
 * table or the config, and both are freed. Flows go through call_rcu;
 * module exit waits for them.
 */
static void __net_exit srff_net_exit(struct net *net)
{
	struct srff_net *sn = srff_pernet(net);

	nf_unregister_net_hooks(net, sn->ops, ARRAY_SIZE(sn->ops));
	cancel_delayed_work_sync(&sn->gc_work);
	free_percpu(sn->stats);
	srff_table_uninit(&sn->table);
	kfree(rcu_dereference_protected(sn->config, true));
}

static struct pernet_operations srff_net_ops = {
	.init = srff_net_init,
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
	err = srff_table_cache_init();
	if (err)
		return err;
	err = register_pernet_subsys(&srff_net_ops);
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
	return err;
}

static void __exit srff_exit(void)
{
	srff_genl_uninit();
	unregister_pernet_subsys(&srff_net_ops);
	rcu_barrier();		/* flows and configs freed by RCU callbacks */
	srff_table_cache_uninit();
	pr_info("srff: unloaded\n");
}

module_init(srff_init);
module_exit(srff_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("srff developers");
MODULE_DESCRIPTION("srff: mark egress packets by flow size (shortest remaining flow first)");
MODULE_VERSION("0.1");
