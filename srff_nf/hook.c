// SPDX-License-Identifier: GPL-2.0
/*
 * The packet path: the POST_ROUTING hook for IPv4 and IPv6.
 *
 * Runs on every outgoing packet, in softirq or in process context with BH
 * on (local output), always under rcu_read_lock. It never sleeps, reads
 * headers only through skb_header_pointer() (flowkey.c), allocates at most
 * one flow with GFP_ATOMIC and only under the cap (table.c), and does work
 * bounded by the thresholds (<= 15), the top ports (<= 32) and one bucket.
 */
#include <linux/skbuff.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>

#include "srff.h"
#include "band.h"

static bool is_top_port(const struct srff_config *c, const struct srff_pkt *p)
{
	u16 sport = ntohs(p->key.sport), dport = ntohs(p->key.dport);
	unsigned int i;

	if (!p->has_ports)
		return false;
	for (i = 0; i < c->ntop_ports; i++)
		if (c->top_ports[i] == sport || c->top_ports[i] == dport)
			return true;
	return false;
}

unsigned int srff_hook(void *priv, struct sk_buff *skb,
		       const struct nf_hook_state *state)
{
	struct srff_net *sn = priv;
	struct srff_pcpu_stats __percpu *st = sn->stats;
	const struct srff_config *c = rcu_dereference(sn->config);
	unsigned long now = jiffies;
	struct srff_flow *f;
	struct srff_pkt pkt;
	unsigned int band;
	bool created;
	u64 before;
	u8 family = state->pf == NFPROTO_IPV4 ? AF_INET : AF_INET6;

	if (c->app_priority == SRFF_APP_PRIO_KEEP && skb->priority)
		goto ignore;
	if (srff_flowkey_parse(skb, skb_network_offset(skb), family, &pkt))
		goto ignore;
	if (pkt.key.proto == IPPROTO_UDP || pkt.key.proto == IPPROTO_UDPLITE) {
		if (c->udp_policy == SRFF_UDP_IGNORE)
			goto ignore;
		if (c->udp_policy == SRFF_UDP_TOP) {
			band = 0;
			goto mark;
		}
	}
	if (unlikely(c->ntop_ports) && is_top_port(c, &pkt))
		goto top;

	f = srff_table_get(&sn->table, &pkt.key, now, &created);
	if (IS_ERR(f)) {
		if (PTR_ERR(f) == -ENOSPC)
			this_cpu_inc(st->table_full);
		else
			this_cpu_inc(st->alloc_failed);
		this_cpu_inc(st->untracked_pkts);
		this_cpu_add(st->untracked_bytes, skb->len);
		skb->priority = c->untracked_priority;
		return NF_ACCEPT;
	}
	if (created)
		this_cpu_inc(st->created);
	if (unlikely(pkt.tcp_fin_rst))
		srff_flow_close(f);

	/* skb->len is the whole L3 packet, all segments of a GSO one. */
	before = srff_flow_account(f, skb->len, now, c->idle_reset);
	band = srff_band(c->thresholds, c->nthresholds, before);
	goto mark;

top:
	this_cpu_inc(st->top_port_pkts);
	band = 0;
mark:
	skb->priority = srff_band_priority(c, band);
	this_cpu_inc(st->band_pkts[band]);
	this_cpu_add(st->band_bytes[band], skb->len);
	return NF_ACCEPT;

ignore:
	this_cpu_inc(st->ignored_pkts);
	return NF_ACCEPT;
}
