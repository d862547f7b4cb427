// SPDX-License-Identifier: GPL-2.0
/*
 * The packet path: the POST_ROUTING hook for IPv4 and IPv6.
 *
 * Runs on every outgoing packet, in softirq or in process context with BH
 * on (local output), always under rcu_read_lock. It never sleeps, parses
 * headers only with skb_header_pointer() (flowkey.c), allocates at most one
 * flow (GFP_ATOMIC, under the cap: table.c) and, under mark dscp, what
 * skb_ensure_writable() needs. Its work is bounded by the thresholds (<= 15),
 * the top ports (<= 32) and one bucket's chain: about two flows on average
 * once the resize worker (process context) has grown the array, unless
 * hash_buckets caps the array lower.
 *
 * Each packet is classified once, on the pass whose mark reaches the wire
 * (checked against 6.1's and 6.12's sources; docs/design.md, "Tunnels,
 * IPsec and VRF", lists every case and its limits): mostly a tunnel's
 * inner pass. WireGuard zeroes skb->priority when it encapsulates
 * (wg_reset_packet) but keeps skb->hash: its inner pass leaves a tag of the
 * inner flow in skb->hash, and its outer packet is classified, keyed by its
 * UDP 5-tuple and that tag, as are other kernel UDP tunnel sockets'.
 */
#include <linux/skbuff.h>
#include <linux/if_arp.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/dsfield.h>
#include <net/inet_ecn.h>
#include <net/l3mdev.h>
#include <net/lwtunnel.h>
#include <net/rtnetlink.h>
#include <net/tcp.h>

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

static bool is_wireguard(const struct net_device *dev)
{
	return dev->type == ARPHRD_NONE && dev->rtnl_link_ops &&
	       !strcmp(dev->rtnl_link_ops->kind, "wireguard");
}

/* A pass that another pass of the same packet classifies: the VRF device's
 * (the enslaved device's follows), or the ESP/AH packet xfrm_output()
 * flagged, which keeps the inner pass's priority.
 */
static bool other_pass(struct sk_buff *skb, const struct nf_hook_state *state)
{
	const struct net_device *out = state->out;

	if (state->pf == NFPROTO_IPV4 ?
	    IPCB(skb)->flags & IPSKB_XFRM_TRANSFORMED :
	    IP6CB(skb)->flags & IP6SKB_XFRM_TRANSFORMED)
		return true;
	return out && netif_is_l3_master(out);
}

/* The inner pass on a WireGuard device: tag the inner flow in skb->hash,
 * which WireGuard keeps for the outer packet. A hash of the inner key: a
 * TCP socket's own hash changes after a retransmission timeout (txrehash).
 */
static noinline void wg_tag_inner(const struct srff_tracker *tr,
				  struct sk_buff *skb, unsigned int nhoff,
				  u8 family)
{
	struct srff_pkt pkt;

	if (srff_flowkey_parse(skb, nhoff, family, &pkt))
		skb_get_hash(skb);
	else
		skb_set_hash(skb, srff_table_key_hash(&tr->table, &pkt.key),
			     PKT_HASH_TYPE_L4);
}

/* To a multicast or broadcast address: left alone. Seen twice when looped
 * back (ip_mc_output(), ip6_finish_output2() pass a clone here first).
 */
static bool to_many(const struct sk_buff *skb, const struct srff_pkt *p)
{
	const struct rtable *rt;

	if (p->key.family == AF_INET6)
		return ipv6_addr_is_multicast(&p->key.daddr.ip6);
	if (ipv4_is_multicast(p->key.daddr.ip) ||
	    ipv4_is_lbcast(p->key.daddr.ip))
		return true;
	rt = skb_rtable(skb);		/* a subnet's directed broadcast */
	return rt && rt->rt_flags & RTCF_BROADCAST;
}

/* A tunnel's outer IP protocol: left alone unless inner_unseen(), whether
 * this host encapsulated it (iptunnel_xmit() keeps the priority the inner
 * pass set) or forwards it.
 */
static bool ip_tunnel_outer(u8 proto)
{
	switch (proto) {
	case IPPROTO_GRE:
	case IPPROTO_IPIP:
	case IPPROTO_IPV6:
	case IPPROTO_ESP:
	case IPPROTO_AH:
	case IPPROTO_ETHERNET:
	case IPPROTO_MPLS:
	case IPPROTO_L2TP:
		return true;
	}
	return false;
}

/*
 * A tunnel packet whose inner packet passed no POST_ROUTING here, so it is
 * classified by its inner header (srff_flowkey_parse_inner): IPVS tunnel
 * mode (ip_vs_tunnel_xmit() encapsulates at LOCAL_IN, FORWARD or LOCAL_OUT
 * and sets ipvs_property, which a tunnel device's iptunnel_xmit() clears in
 * skb_scrub_packet()), and SRv6 encapsulation (an SRH) unless
 * net.netfilter.nf_hooks_lwtunnel has seg6 pass the inner packet here.
 */
static bool inner_unseen(const struct sk_buff *skb, const struct srff_pkt *pkt)
{
#if IS_ENABLED(CONFIG_IP_VS)
	if (skb->ipvs_property)
		return true;
#endif
#ifdef CONFIG_LWTUNNEL
	return pkt->srh && !static_branch_unlikely(&nf_hooks_lwtunnel_enabled);
#else
	return false;
#endif
}

/* Sent by a kernel UDP tunnel socket (udp_tunnel_xmit_skb's sk). */
static bool udp_tunnel_outer(const struct sock *sk)
{
	return sk && sk_fullsock(sk) && sk->sk_type == SOCK_DGRAM &&
	       (sk->sk_protocol == IPPROTO_UDP ||
		sk->sk_protocol == IPPROTO_UDPLITE) &&
	       READ_ONCE(udp_sk(sk)->encap_type);
}

/*
 * Local TCP: the packet's own tcp_sock, or NULL (not TCP, forwarded, or not
 * a tcp_sock: IPv4 sends RSTs, and TIME_WAIT and request sockets' ACKs,
 * on tcp_v4_init()'s per-CPU raw socket of protocol TCP, which
 * __ip_append_data() makes skb->sk; 6.1 and 6.12 alike). Its fields are
 * read locklessly, once each: a stale value only delays or advances one
 * reset decision.
 */
static const struct tcp_sock *local_tcp(const struct sk_buff *skb,
					const struct srff_pkt *p)
{
	const struct sock *sk = skb->sk;

	if (p->key.proto != IPPROTO_TCP || !p->has_ports || !sk ||
	    !sk_fullsock(sk) || sk->sk_type != SOCK_STREAM ||
	    sk->sk_protocol != IPPROTO_TCP)
		return NULL;
#ifdef SRFF_TEST_HOOKS
	/* Test builds: WARN on a socket too small for a tcp_sock; KASAN
	 * misses such a read when it lands in the slab's next object.
	 */
	if (WARN_ON_ONCE(READ_ONCE(sk->sk_prot)->obj_size <
			 max3(offsetofend(struct tcp_sock, write_seq),
			      offsetofend(struct tcp_sock, rtt_min),
			      max3(offsetofend(struct tcp_sock, snd_una),
				   offsetofend(struct tcp_sock, snd_nxt),
				   offsetofend(struct tcp_sock, retrans_out)))))
		return NULL;
#endif
	return tcp_sk(sk);
}

/* Whether the socket holds written data this skb does not carry. */
static bool tcp_pending(const struct tcp_sock *tp, const struct srff_pkt *p)
{
	return after(READ_ONCE(tp->write_seq), p->tcp_end_seq);
}

/* tcp_min_rtt(), read once: ~0U until the first sample. */
static u32 tcp_min_rtt_once(const struct tcp_sock *tp)
{
	return READ_ONCE(tp->rtt_min.s[0].v);
}

/*
 * Whether data sent before this skb is unacknowledged: in flight, or in a
 * qdisc here (TCP Small Queues). The synchronous pass runs in
 * tcp_transmit_skb() before tcp_event_new_data_sent() moves snd_nxt past
 * the skb (6.1's net/ipv4/tcp_output.c:2729). An skb starting before
 * snd_nxt is a retransmission or a deferred pass (a VRF qdisc,
 * vrf_ip_out_redirect(); NFQUEUE): earlier data is acknowledged only if
 * snd_una is its start, the socket is not in loss recovery (an RTO or fast
 * retransmit sets icsk_ca_state before resending) and retrans_out (counted
 * after the resend) is 0. docs/design.md, "Garbage collection".
 */
static bool tcp_unacked(const struct tcp_sock *tp, const struct srff_pkt *p)
{
	const struct sock *sk = (const struct sock *)tp;
	u32 una = READ_ONCE(tp->snd_una), nxt = READ_ONCE(tp->snd_nxt);

	if (p->tcp_seq == nxt)
		return una != nxt;
	return una != p->tcp_seq ||
	       inet_csk(sk)->icsk_ca_state != TCP_CA_Open ||
	       READ_ONCE(tp->retrans_out);
}

/* No idle reset on an MPTCP subflow: an empty, acknowledged one may only
 * wait for another subflow's data (docs/design.md, "Garbage collection").
 */
static bool tcp_mptcp_subflow(const struct tcp_sock *tp)
{
	return sk_is_mptcp((const struct sock *)tp);
}

/* Per CPU once the namespace's statistics exist, into early_stats before. */
#define stat_add(field, v) do {						\
	if (likely(st))							\
		this_cpu_add(st->field, (v));				\
	else								\
		atomic64_add((v), &tr->early_stats[			\
			offsetof(struct srff_pcpu_stats, field) / sizeof(u64)]); \
} while (0)
#define stat_inc(field)	stat_add(field, 1)

/*
 * mark dscp: write the band's DSCP, keeping the ECN bits, only when it
 * changes and, unless dscp_override, only over DSCP 0. A header that cannot
 * be made writable leaves unmarked (dscp_failed). docs/design.md, "DSCP
 * marking".
 */
static noinline void mark_dscp(struct srff_tracker *tr, struct sk_buff *skb,
			       unsigned int nhoff, u8 family,
			       const struct srff_config *c, unsigned int band)
{
	struct srff_pcpu_stats __percpu *st = READ_ONCE(tr->stats);
	u8 want = c->dscp[band], ds;
	__be16 _w;
	const __be16 *w;

	if (want == SRFF_DSCP_KEEP)
		return;
	/* The DS field: IPv4's second byte; IPv6's bits 4-11. */
	w = skb_header_pointer(skb, nhoff, sizeof(_w), &_w);
	if (!w)
		return;
	ds = family == AF_INET ? ntohs(*w) & 0xff : (ntohs(*w) >> 4) & 0xff;
	if (ds >> 2 == want || (ds >> 2 && !c->dscp_override))
		return;
	if (skb_ensure_writable(skb, nhoff + (family == AF_INET ?
					      sizeof(struct iphdr) :
					      sizeof(struct ipv6hdr)))) {
		stat_inc(dscp_failed);
		return;
	}
	if (family == AF_INET)
		ipv4_change_dsfield(ip_hdr(skb), INET_ECN_MASK, want << 2);
	else
		ipv6_change_dsfield(ipv6_hdr(skb), INET_ECN_MASK, want << 2);
	stat_inc(dscp_pkts);
}

unsigned int srff_hook(void *priv, struct sk_buff *skb,
		       const struct nf_hook_state *state)
{
	struct srff_tracker *tr = priv;
	struct srff_pcpu_stats __percpu *st = READ_ONCE(tr->stats);
	const struct srff_config *c = rcu_dereference(tr->sn->config);
	unsigned int nhoff = skb_network_offset(skb);
	unsigned long now = jiffies, reset;
	const struct tcp_sock *tp;
	unsigned int band, len;
	struct srff_flow *f;
	struct srff_pkt pkt;
	bool created, nodata;
	u64 before;
	u8 family = state->pf == NFPROTO_IPV4 ? AF_INET : AF_INET6;

	/* Loopback meets no qdisc that orders by priority, and a local
	 * process must not fill the table: before any allocation or lookup.
	 */
	if (unlikely(state->out && state->out->flags & IFF_LOOPBACK)) {
		stat_inc(loopback_pkts);
		return NF_ACCEPT;
	}
	if (unlikely(!st))
		srff_resize_kick(tr);	/* the namespace's first packets */
	srff_test_hook_delay(c, &tr->table);
	if (other_pass(skb, state))
		goto encap;
	if (unlikely(state->out && state->out->type == ARPHRD_NONE) &&
	    is_wireguard(state->out)) {
		wg_tag_inner(tr, skb, nhoff, family);
		goto encap;
	}
	if (srff_flowkey_parse(skb, nhoff, family, &pkt))
		goto ignore;
	if (unlikely(to_many(skb, &pkt)))
		goto ignore;
	if (unlikely(ip_tunnel_outer(pkt.key.proto)) &&
	    (!inner_unseen(skb, &pkt) || srff_flowkey_parse_inner(skb, nhoff, &pkt)))
		goto encap;
	/* After the tunnel checks: an outer packet carries the priority its
	 * inner pass set, not the application's.
	 */
	if (c->app_priority == SRFF_APP_PRIO_KEEP && skb->priority)
		goto ignore;
	/* What the qdisc will count: every GSO segment, headers included. */
	len = srff_wire_len(skb, nhoff, &pkt);
	if (pkt.key.proto == IPPROTO_UDP || pkt.key.proto == IPPROTO_UDPLITE) {
		if (c->udp_policy == SRFF_UDP_IGNORE)
			goto ignore;
		if (c->udp_policy == SRFF_UDP_TOP) {
			band = 0;
			goto mark;
		}
		if (pkt.has_ports && udp_tunnel_outer(state->sk)) {
			u32 h = skb_get_hash_raw(skb);

			pkt.key.inner = (u16)(h ^ h >> 16);
		}
	}
	if (unlikely(c->ntop_ports) && is_top_port(c, &pkt))
		goto top;

	/* A TCP segment with no data (SYN, SYN-ACK, RST, ACK, bare FIN). */
	nodata = pkt.key.proto == IPPROTO_TCP && pkt.has_ports && !pkt.payload;
	f = srff_table_find(&tr->table, &pkt.key);
	if (!f) {
		/* No flow for a segment with no data: the top band anyway,
		 * and spoofed SYNs and stray packets must not fill the table.
		 */
		if (nodata) {
			stat_inc(nodata_pkts);
			band = 0;
			goto mark;
		}
		f = srff_table_get(&tr->table, &pkt.key, now, &created);
		if (IS_ERR(f)) {
			if (PTR_ERR(f) == -ENOSPC) {
				stat_inc(table_full);
				srff_gc_kick(tr);
			} else {
				stat_inc(alloc_failed);
			}
			stat_inc(untracked_pkts);
			stat_add(untracked_bytes, len);
			skb->priority = c->untracked_priority;
			return NF_ACCEPT;
		}
		if (created) {
			stat_inc(created);
			if (unlikely(srff_table_pressure(&tr->table)))
				srff_gc_kick(tr);
			if (unlikely(srff_table_wants_grow(&tr->table) ||
				     srff_table_wants_sizes(&tr->table)))
				srff_resize_kick(tr);
		}
	} else if (unlikely(pkt.tcp_syn)) {
		srff_flow_restart(&tr->table, f, now);	/* a reused 4-tuple */
	}
	if (unlikely(pkt.tcp_fin_rst))
		srff_flow_close(f);

	reset = c->idle_reset;
	tp = reset ? local_tcp(skb, &pkt) : NULL;
	if (nodata) {
		/* The top band, as with no flow; its bytes count, but it
		 * neither ends an idle gap nor is activity.
		 */
		srff_flow_account_quiet(f, len);
		band = 0;
	} else {
		/* Local TCP: a gap ends a message only once everything sent
		 * was acknowledged (PIAS's rule), then after one round trip
		 * if shorter than idle_reset; never on an MPTCP subflow.
		 */
		if (tp)
			reset = tcp_unacked(tp, &pkt) || tcp_mptcp_subflow(tp) ? 0 :
				srff_idle_reset_rtt(reset, tcp_min_rtt_once(tp));
		before = srff_flow_account(&tr->table, f, len, now, reset);
		band = srff_band(c->thresholds, c->nthresholds, before);
	}
	if (tp)
		srff_flow_note_pending(f, tcp_pending(tp, &pkt));
	goto mark;

top:
	stat_inc(top_port_pkts);
	band = 0;
mark:
	skb->priority = srff_band_priority(c, band);
	if (unlikely(c->mark == SRFF_MARK_DSCP))
		mark_dscp(tr, skb, nhoff, family, c, band);
	stat_inc(band_pkts[band]);
	stat_add(band_bytes[band], len);
	return NF_ACCEPT;

encap:
	stat_inc(encap_pkts);
	return NF_ACCEPT;
ignore:
	stat_inc(ignored_pkts);
	return NF_ACCEPT;
}
