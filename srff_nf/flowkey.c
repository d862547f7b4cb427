// SPDX-License-Identifier: GPL-2.0
/*
 * Flow-key extraction from packet bytes. Built into the module and, unchanged,
 * into the user-space library (user/) for unit tests and fuzzing.
 * See flowkey.h for what a key is.
 */
#include "flowkey.h"

#ifndef IP_MF
#define IP_MF		0x2000
#define IP_OFFSET	0x1FFF
#endif

/* The IPv6 fragment header (RFC 8200 4.5); net/ipv6.h is kernel-only. */
#define IP6_OFFSET_MASK	0xFFF8
#define IP6_MF_FLAG	0x0001
struct srff_frag_hdr {
	u8 nexthdr;
	u8 reserved;
	__be16 frag_off;
	__be32 identification;
};

/* Header bytes from @nhoff to the end of a transport header of @l4len at
 * @thoff, and what follows them in @skb.
 */
static void set_lengths(const struct sk_buff *skb, unsigned int nhoff,
			unsigned int thoff, unsigned int l4len,
			struct srff_pkt *pkt)
{
	unsigned int end = thoff + l4len;

	pkt->hdr_len = end - nhoff;
	pkt->payload = skb->len > end ? skb->len - end : 0;
}

static void parse_transport(const struct sk_buff *skb, unsigned int nhoff,
			    unsigned int thoff, struct srff_pkt *pkt)
{
	switch (pkt->key.proto) {
	case IPPROTO_TCP: {
		struct tcphdr _th;
		const struct tcphdr *th;

		th = skb_header_pointer(skb, thoff, sizeof(_th), &_th);
		if (!th)
			return;
		pkt->key.sport = th->source;
		pkt->key.dport = th->dest;
		pkt->tcp_fin_rst = th->fin || th->rst;
		pkt->tcp_syn = th->syn;
		pkt->has_ports = true;
		/* A data offset under 5 words is malformed: count 20 bytes. */
		set_lengths(skb, nhoff, thoff,
			    th->doff > 5 ? th->doff * 4 : sizeof(*th), pkt);
		pkt->tcp_seq = ntohl(th->seq);
		pkt->tcp_end_seq = pkt->tcp_seq + pkt->payload + th->syn + th->fin;
		return;
	}
	case IPPROTO_UDP:
	case IPPROTO_UDPLITE: {
		struct udphdr _uh;
		const struct udphdr *uh;

		uh = skb_header_pointer(skb, thoff, sizeof(_uh), &_uh);
		if (!uh)
			return;
		pkt->key.sport = uh->source;
		pkt->key.dport = uh->dest;
		pkt->has_ports = true;
		set_lengths(skb, nhoff, thoff, sizeof(*uh), pkt);
		return;
	}
	case IPPROTO_SCTP:
	case IPPROTO_DCCP: {
		/* Both start with the ports, as TCP and UDP do, in a common
		 * header of 12 bytes at least (RFC 9260 3.1; RFC 4340 5.1,
		 * whose data offset counts 4-byte words).
		 */
		struct { __be16 source, dest; u8 dccp_doff, rest[7]; } _ph;
		const typeof(_ph) *ph;
		unsigned int hl = sizeof(_ph);

		ph = skb_header_pointer(skb, thoff, sizeof(_ph), &_ph);
		if (!ph)
			return;
		pkt->key.sport = ph->source;
		pkt->key.dport = ph->dest;
		pkt->has_ports = true;
		if (pkt->key.proto == IPPROTO_DCCP && ph->dccp_doff * 4 > hl)
			hl = ph->dccp_doff * 4;
		set_lengths(skb, nhoff, thoff, hl, pkt);
		return;
	}
	}
}

static int parse_ipv4(const struct sk_buff *skb, unsigned int nhoff,
		      struct srff_pkt *pkt)
{
	struct iphdr _iph;
	const struct iphdr *iph;

	iph = skb_header_pointer(skb, nhoff, sizeof(_iph), &_iph);
	if (!iph || iph->version != 4 || iph->ihl < 5)
		return -EINVAL;

	pkt->key.family = AF_INET;
	pkt->key.proto = iph->protocol;
	pkt->key.saddr.ip = iph->saddr;
	pkt->key.daddr.ip = iph->daddr;
	if (iph->frag_off & htons(IP_MF | IP_OFFSET)) {
		pkt->fragment = true;
		return 0;
	}
	pkt->inner_off = nhoff + iph->ihl * 4;
	parse_transport(skb, nhoff, pkt->inner_off, pkt);
	return 0;
}

static int parse_ipv6(const struct sk_buff *skb, unsigned int nhoff,
		      struct srff_pkt *pkt)
{
	struct ipv6hdr _ip6h;
	const struct ipv6hdr *ip6h;
	unsigned int off, i;
	u8 nexthdr;

	ip6h = skb_header_pointer(skb, nhoff, sizeof(_ip6h), &_ip6h);
	if (!ip6h || ip6h->version != 6)
		return -EINVAL;

	pkt->key.family = AF_INET6;
	pkt->key.saddr.ip6 = ip6h->saddr;
	pkt->key.daddr.ip6 = ip6h->daddr;
	nexthdr = ip6h->nexthdr;
	off = nhoff + sizeof(*ip6h);

	/* Bounded walk: at most SRFF_MAX_IPV6_EXTHDRS extension headers, then
	 * the transport header.
	 */
	for (i = 0; ; i++) {
		switch (nexthdr) {
		case IPPROTO_HOPOPTS:
		case IPPROTO_ROUTING:
		case IPPROTO_DSTOPTS:
		case IPPROTO_AH: {
			struct ipv6_opt_hdr _oh;
			const struct ipv6_opt_hdr *oh;

			if (i == SRFF_MAX_IPV6_EXTHDRS)
				goto portless;
			oh = skb_header_pointer(skb, off, sizeof(_oh), &_oh);
			if (!oh)
				goto portless;
			/* A routing header's third byte is its type: 4 is
			 * SRv6's segment routing header (RFC 8754).
			 */
			if (nexthdr == IPPROTO_ROUTING) {
				u8 _type;
				const u8 *type;

				type = skb_header_pointer(skb, off + 2, 1, &_type);
				if (type && *type == 4)
					pkt->srh = true;
			}
			/* AH counts 4-octet units less 2, the rest 8-octet
			 * units less 1 (RFC 4302 2.2, RFC 8200 4.3).
			 */
			off += nexthdr == IPPROTO_AH ? (oh->hdrlen + 2) << 2
						     : (oh->hdrlen + 1) << 3;
			nexthdr = oh->nexthdr;
			continue;
		}
		case IPPROTO_FRAGMENT: {
			struct srff_frag_hdr _fh;
			const struct srff_frag_hdr *fh;

			if (i == SRFF_MAX_IPV6_EXTHDRS)
				goto portless;
			fh = skb_header_pointer(skb, off, sizeof(_fh), &_fh);
			if (!fh)
				goto portless;
			/* An "atomic" fragment (offset 0, no M flag) is a whole
			 * packet (RFC 6946): read on to its transport header.
			 */
			if (!(fh->frag_off & htons(IP6_OFFSET_MASK | IP6_MF_FLAG))) {
				nexthdr = fh->nexthdr;
				off += sizeof(*fh);
				continue;
			}
			pkt->key.proto = fh->nexthdr;
			pkt->fragment = true;
			return 0;
		}
		default:
			pkt->key.proto = nexthdr;
			pkt->inner_off = off;
			parse_transport(skb, nhoff, off, pkt);
			return 0;
		}
	}
portless:
	pkt->key.proto = nexthdr;
	return 0;
}

int srff_flowkey_parse(const struct sk_buff *skb, unsigned int nhoff,
		       u8 family, struct srff_pkt *pkt)
{
	memset(pkt, 0, sizeof(*pkt));
	switch (family) {
	case AF_INET:
		return parse_ipv4(skb, nhoff, pkt);
	case AF_INET6:
		return parse_ipv6(skb, nhoff, pkt);
	}
	return -EINVAL;
}

/* GRE (RFC 2784, 2890): flags and version, the protocol, then a checksum
 * word, key and sequence number, each there if its flag is set.
 */
#define SRFF_GRE_C	0x8000
#define SRFF_GRE_K	0x2000
#define SRFF_GRE_S	0x1000
#define SRFF_GRE_VER	0x0007

int srff_flowkey_parse_inner(const struct sk_buff *skb, unsigned int nhoff,
			     struct srff_pkt *pkt)
{
	unsigned int off = pkt->inner_off;
	struct srff_pkt in;
	u8 family;
	int err;

	if (pkt->fragment || !off)
		return -EINVAL;
	switch (pkt->key.proto) {
	case IPPROTO_IPIP:
		family = AF_INET;
		break;
	case IPPROTO_IPV6:
		family = AF_INET6;
		break;
	case IPPROTO_GRE: {
		__be16 _gh[2];
		const __be16 *gh;
		u16 flags;

		gh = skb_header_pointer(skb, off, sizeof(_gh), &_gh);
		if (!gh)
			return -EINVAL;
		flags = ntohs(gh[0]);
		if (flags & SRFF_GRE_VER)
			return -EINVAL;	/* PPTP's enhanced GRE */
		if (gh[1] == htons(ETH_P_IP))
			family = AF_INET;
		else if (gh[1] == htons(ETH_P_IPV6))
			family = AF_INET6;
		else
			return -EINVAL;	/* Ethernet (gretap), MPLS, ... */
		off += 4 + (flags & SRFF_GRE_C ? 4 : 0) +
		       (flags & SRFF_GRE_K ? 4 : 0) + (flags & SRFF_GRE_S ? 4 : 0);
		break;
	}
	default:
		return -EINVAL;
	}
	err = srff_flowkey_parse(skb, off, family, &in);
	if (err)
		return err;
	if (in.hdr_len)
		in.hdr_len += off - nhoff;
	*pkt = in;
	return 0;
}

unsigned int srff_wire_len(const struct sk_buff *skb, unsigned int nhoff,
			   const struct srff_pkt *pkt)
{
	unsigned int len = skb->len - nhoff, size, segs;

	if (!skb_is_gso(skb) || !pkt->hdr_len)
		return len;
	size = skb_shinfo(skb)->gso_size;
	/* From the payload, not gso_segs: what SKB_GSO_DODGY makes the qdisc
	 * do, and never more segments than the bytes allow.
	 */
	segs = DIV_ROUND_UP(pkt->payload, size);
	return segs > 1 ? len + (segs - 1) * pkt->hdr_len : len;
}
