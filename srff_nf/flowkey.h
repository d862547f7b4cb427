/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Flow keys: what identifies a flow, read from an outgoing packet.
 *
 * A key is (family, L4 protocol, source address, destination address,
 * source port, destination port) exactly as the packet carries them when it
 * leaves POST_ROUTING (after SNAT). Ports are read for TCP, UDP, UDP-Lite,
 * SCTP and DCCP. Every other protocol (ICMP, ESP, GRE, ...), every IP fragment
 * (but not an IPv6 atomic fragment, RFC 6946), every packet whose transport
 * header is truncated or lies past SRFF_MAX_IPV6_EXTHDRS extension headers
 * is keyed with ports 0: one flow per address pair and protocol. Fragments are keyed that way
 * whether or not they are the first, so all fragments of one datagram share
 * a band.
 *
 * A TCP segment with no payload (SYN, SYN-ACK, pure ACK, RST, bare FIN) is
 * told apart (payload == 0): srff creates no flow for it.
 *
 * Headers are read only with skb_header_pointer(), so linear, paged and
 * frag_list skbs are all fine, and no byte past skb->len is ever read.
 */
#ifndef _SRFF_FLOWKEY_H
#define _SRFF_FLOWKEY_H

#include "compat.h"

union srff_addr {
	__be32 ip;
	struct in6_addr ip6;
	u64 w[2];
};

/* Hashed and compared as five u64 words: every byte must be initialised. */
struct srff_key {
	union srff_addr saddr;
	union srff_addr daddr;
	__be16 sport;
	__be16 dport;
	u8 family;		/* AF_INET or AF_INET6 */
	u8 proto;		/* IPPROTO_* (upper protocol for fragments) */
	__u16 inner;		/* 0; for a UDP tunnel's outer packets, a tag
				 * of the inner flow (hook.c) */
} __aligned(8);

#define SRFF_KEY_WORDS (sizeof(struct srff_key) / sizeof(u64))

/* What the packet path needs from one packet besides its key. */
struct srff_pkt {
	struct srff_key key;
	unsigned int hdr_len;	/* IP (+ extension) + transport header bytes;
				 * 0 when the transport header was not read */
	unsigned int payload;	/* transport payload bytes in the whole skb */
	bool fragment;		/* IPv4 MF/offset or IPv6 fragment header */
	bool has_ports;		/* TCP/UDP/SCTP/DCCP ports were read */
	bool tcp_fin_rst;	/* TCP FIN or RST flag set */
	bool tcp_syn;		/* TCP SYN flag set (a new connection) */
	bool srh;		/* IPv6: a segment routing header (SRv6) came
				 * before the upper-layer header */
	unsigned int inner_off;	/* IPIP, IPv6-in-IP, GRE: where what they
				 * carry begins (their header, for GRE) */
	u32 tcp_seq;		/* TCP: the sequence number of its first byte */
	u32 tcp_end_seq;	/* TCP: the sequence number after this skb
				 * (seq + payload + SYN + FIN) */
};

/* IPv6 extension headers read before the transport header, at most. */
#define SRFF_MAX_IPV6_EXTHDRS	8

/*
 * Parse the network header at @nhoff of @skb (family AF_INET or AF_INET6)
 * into @pkt. Returns 0, or -EINVAL when not even the IP header can be read
 * or it is not of @family; the packet is then left alone.
 */
int srff_flowkey_parse(const struct sk_buff *skb, unsigned int nhoff,
		       u8 family, struct srff_pkt *pkt);

/*
 * For @pkt parsed by srff_flowkey_parse() as IPIP, IPv6-in-IP, or GRE over
 * IPv4 or IPv6: parse the packet it carries instead (one level; GRE only
 * when it carries IPv4 or IPv6, and not GRE version 1) and key @pkt by it,
 * its hdr_len then counted from @nhoff (the outer headers too, for
 * srff_wire_len). Returns 0, or -EINVAL with @pkt unchanged.
 */
int srff_flowkey_parse_inner(const struct sk_buff *skb, unsigned int nhoff,
			     struct srff_pkt *pkt);

/*
 * The bytes @skb puts on the wire at L3, as the qdisc counts them
 * (qdisc_pkt_len_init): a GSO super-packet of n segments carries its
 * IP and transport headers n times, not once.
 */
unsigned int srff_wire_len(const struct sk_buff *skb, unsigned int nhoff,
			   const struct srff_pkt *pkt);

static inline bool srff_key_equal(const struct srff_key *a,
				  const struct srff_key *b)
{
	const u64 *x = (const u64 *)a, *y = (const u64 *)b;

	return ((x[0] ^ y[0]) | (x[1] ^ y[1]) | (x[2] ^ y[2]) |
		(x[3] ^ y[3]) | (x[4] ^ y[4])) == 0;
}

#endif /* _SRFF_FLOWKEY_H */
