// SPDX-License-Identifier: GPL-2.0
/*
 * Flow-key parser tests. Every parse goes through parse(), which runs the
 * parser on exact-size buffers for every split of the packet into linear
 * head and fragment (ASan catches any byte read past either), demands the
 * same answer from all of them, and checks the invariants every parsed
 * packet must satisfy.
 */
#include <stdlib.h>

#include "kernel.h"
#include "flowkey.h"
#include "pkt.h"
#include "test.h"

#define SADDR4	0x0a000001u	/* 10.0.0.1 */
#define DADDR4	0xc0a80102u	/* 192.168.1.2 */

static void check_invariants(const struct srff_pkt *p)
{
	static const u8 zero[12];
	const struct srff_key *k = &p->key;

	CHECK(k->family == AF_INET || k->family == AF_INET6);
	CHECK(!k->inner);
	if (k->family == AF_INET) {
		/* The key is hashed whole: bytes past an IPv4 address are 0. */
		CHECK(!memcmp((const u8 *)&k->saddr + 4, zero, 12));
		CHECK(!memcmp((const u8 *)&k->daddr + 4, zero, 12));
	}
	if (!p->has_ports)
		CHECK(!k->sport && !k->dport);
	if (p->fragment)
		CHECK(!p->has_ports);
	if (p->has_ports)
		CHECK(k->proto == IPPROTO_TCP || k->proto == IPPROTO_UDP ||
		      k->proto == IPPROTO_UDPLITE || k->proto == IPPROTO_SCTP ||
		      k->proto == IPPROTO_DCCP);
	if (p->tcp_fin_rst || p->tcp_syn)
		CHECK(p->has_ports && k->proto == IPPROTO_TCP);
	if (!p->has_ports)
		CHECK(!p->hdr_len && !p->payload);
}

/* srff_flowkey_parse(), and with @inner srff_flowkey_parse_inner() after it. */
static int parse_one(const u8 *b, size_t len, size_t head, unsigned int nhoff,
		     u8 family, bool inner, struct srff_pkt *pkt)
{
	struct sk_buff *skb = srff_user_skb_new(b, len, head);
	int ret;

	CHECK(skb);
	if (!skb)
		return -ENOMEM;
	memset(pkt, 0xa5, sizeof(*pkt));	/* the parser must set it all */
	ret = srff_flowkey_parse(skb, nhoff, family, pkt);
	if (!ret && inner)
		ret = srff_flowkey_parse_inner(skb, nhoff, pkt);
	srff_user_skb_free(skb);
	return ret;
}

/* Parse @len bytes at every head/fragment split; all splits must agree. */
static int parse_splits(const u8 *b, size_t len, unsigned int nhoff, u8 family,
			bool inner, struct srff_pkt *pkt)
{
	struct srff_pkt other;
	size_t head;
	int ret, r;

	ret = parse_one(b, len, len, nhoff, family, inner, pkt);
	for (head = 0; head < len; head++) {
		r = parse_one(b, len, head, nhoff, family, inner, &other);
		if (r != ret || (!ret && memcmp(&other, pkt, sizeof(other)))) {
			srff_test_fail(__FILE__, __LINE__,
				       "len %zu: head %zu parses differently", len, head);
			break;
		}
	}
	if (!ret)
		check_invariants(pkt);
	return ret;
}

static int parse(const u8 *b, size_t len, unsigned int nhoff, u8 family,
		 struct srff_pkt *pkt)
{
	return parse_splits(b, len, nhoff, family, false, pkt);
}

/* srff_flowkey_parse, then srff_flowkey_parse_inner, at every split. */
static int parse_inner(const u8 *b, size_t len, unsigned int nhoff, u8 family,
		       struct srff_pkt *pkt)
{
	return parse_splits(b, len, nhoff, family, true, pkt);
}

static struct srff_key key4(u8 proto, u16 sport, u16 dport)
{
	struct srff_key k;

	memset(&k, 0, sizeof(k));
	k.family = AF_INET;
	k.proto = proto;
	k.saddr.ip = htonl(SADDR4);
	k.daddr.ip = htonl(DADDR4);
	k.sport = htons(sport);
	k.dport = htons(dport);
	return k;
}

static struct srff_key key6(u8 proto, u16 sport, u16 dport)
{
	struct srff_key k;

	memset(&k, 0, sizeof(k));
	k.family = AF_INET6;
	k.proto = proto;
	pb_addr6((u8 *)&k.saddr.ip6, SADDR4);
	pb_addr6((u8 *)&k.daddr.ip6, DADDR4);
	k.sport = htons(sport);
	k.dport = htons(dport);
	return k;
}

static void check_key(const struct srff_key *got, const struct srff_key *want,
		      const char *what)
{
	const u8 *g = (const u8 *)got, *w = (const u8 *)want;
	unsigned int i;

	if (!memcmp(got, want, sizeof(*got)) && srff_key_equal(got, want))
		return;
	for (i = 0; i < sizeof(*got); i++)
		if (g[i] != w[i])
			break;
	srff_test_fail(__FILE__, __LINE__,
		       "%s: key byte %u is 0x%02x, want 0x%02x (proto %u/%u ports %u>%u want %u>%u)",
		       what, i, g[i], w[i], got->proto, want->proto,
		       ntohs(got->sport), ntohs(got->dport),
		       ntohs(want->sport), ntohs(want->dport));
}

static void ipv4_tcp(void)
{
	struct srff_key want = key4(IPPROTO_TCP, 0x1234, 80);
	struct srff_pkt p;
	u8 b[64];
	size_t n = pb_ipv4_tcp(b, SADDR4, DADDR4, 0x1234, 80, PB_SYN);

	CHECK_EQ_INT(parse(b, n, 0, AF_INET, &p), 0);
	check_key(&p.key, &want, "ipv4 tcp");
	/* Ports stay in network order, byte for byte as on the wire. */
	CHECK_EQ(((u8 *)&p.key.sport)[0], 0x12);
	CHECK_EQ(((u8 *)&p.key.sport)[1], 0x34);
	CHECK_EQ(((u8 *)&p.key.saddr)[0], 10);
	CHECK_EQ(((u8 *)&p.key.daddr)[3], 2);
	CHECK(p.has_ports && !p.fragment && !p.tcp_fin_rst);
}

/* FIN or RST, alone or with others, and nothing else, marks a close. */
static void tcp_fin_rst_flags(void)
{
	unsigned int flags, fam;

	for (fam = 0; fam < 2; fam++) {
		for (flags = 0; flags < 256; flags++) {
			struct srff_pkt p;
			u8 b[80];
			size_t n = fam ? pb_ipv6_tcp(b, SADDR4, DADDR4, 443, 5555, flags)
				       : pb_ipv4_tcp(b, SADDR4, DADDR4, 443, 5555, flags);

			CHECK_EQ_INT(srff_flowkey_parse(&(struct sk_buff){
					.data = b, .len = n }, 0,
					fam ? AF_INET6 : AF_INET, &p), 0);
			CHECK_EQ(p.tcp_fin_rst, !!(flags & (PB_FIN | PB_RST)));
			CHECK(p.has_ports);
		}
	}
}

static void ipv4_udp_and_udplite(void)
{
	static const u8 protos[] = { IPPROTO_UDP, IPPROTO_UDPLITE };
	unsigned int i;

	for (i = 0; i < 2; i++) {
		struct srff_key want = key4(protos[i], 53, 40000);
		struct srff_pkt p;
		u8 b[64];
		size_t n = pb_ipv4(b, SADDR4, DADDR4, protos[i], 0, 0, 12);

		n += pb_udp(b + n, 53, 40000, 4);
		n += pb_fill(b + n, 4);
		CHECK_EQ_INT(parse(b, n, 0, AF_INET, &p), 0);
		check_key(&p.key, &want, "udp");
		CHECK(p.has_ports && !p.tcp_fin_rst && !p.fragment);
	}
}

/*
 * SCTP and DCCP are keyed by their ports, as TCP and UDP: every association
 * between two hosts (Diameter, SIGTRAN) is a flow of its own. Their header
 * lengths: SCTP's common header, DCCP's data offset (words).
 */
static void sctp_dccp_ports(void)
{
	static const u8 protos[] = { IPPROTO_SCTP, IPPROTO_DCCP };
	unsigned int i, fam;

	for (fam = 0; fam < 2; fam++) {
		for (i = 0; i < 2; i++) {
			struct srff_key want = fam ? key6(protos[i], 3868, 40000) :
						     key4(protos[i], 3868, 40000);
			unsigned int iph = fam ? 40 : 20;
			struct srff_pkt p;
			u8 b[128], s[16], d[16];
			size_t n;

			pb_addr6(s, SADDR4);
			pb_addr6(d, DADDR4);
			n = fam ? pb_ipv6(b, s, d, protos[i], 16 + 30) :
				  pb_ipv4(b, SADDR4, DADDR4, protos[i], 0, 0, 16 + 30);
			/* ports, then a DCCP data offset of 4 words */
			pb_fill(b + n + 4, 12 + 30);
			b[n] = 3868 >> 8; b[n + 1] = 3868 & 0xff;
			b[n + 2] = 40000 >> 8; b[n + 3] = 40000 & 0xff;
			b[n + 4] = 4;
			n += 16 + 30;
			CHECK_EQ_INT(parse(b, n, 0, fam ? AF_INET6 : AF_INET, &p), 0);
			check_key(&p.key, &want, "sctp/dccp");
			CHECK(p.has_ports && !p.fragment && !p.tcp_fin_rst && !p.tcp_syn);
			CHECK_EQ_INT(p.hdr_len, iph + (protos[i] == IPPROTO_SCTP ? 12 : 16));
			CHECK_EQ_INT(p.payload, 46 - (protos[i] == IPPROTO_SCTP ? 12 : 16));
			/* Cut inside the common header: port-less. */
			CHECK_EQ_INT(parse(b, iph + 11, 0, fam ? AF_INET6 : AF_INET, &p), 0);
			CHECK(!p.has_ports && !p.key.sport && p.key.proto == protos[i]);
		}
	}
}

/* ICMP, GRE, ESP, AH over IPv4: keyed without ports. */
static void ipv4_portless_protocols(void)
{
	static const u8 protos[] = { IPPROTO_ICMP, IPPROTO_GRE,
				     IPPROTO_ESP, IPPROTO_AH, 0, 255 };
	unsigned int i;

	for (i = 0; i < sizeof(protos); i++) {
		struct srff_key want = key4(protos[i], 0, 0);
		struct srff_pkt p;
		u8 b[64];
		size_t n = pb_ipv4(b, SADDR4, DADDR4, protos[i], 0, 0, 20);

		/* Port-shaped bytes that must not be read as ports. */
		n += pb_tcp(b + n, 0x1111, 0x2222, PB_FIN);
		CHECK_EQ_INT(parse(b, n, 0, AF_INET, &p), 0);
		check_key(&p.key, &want, "port-less");
		CHECK(!p.has_ports && !p.fragment && !p.tcp_fin_rst);
	}
}

static void ipv4_fragments(void)
{
	static const struct {
		u16 frag_off;
		bool fragment;
	} cases[] = {
		{ PB_IP_MF, true },			/* first fragment */
		{ PB_IP_MF | 185, true },		/* middle */
		{ 185, true },				/* last */
		{ PB_IP_DF | PB_IP_MF | 1, true },
		{ 0x1fff, true },			/* largest offset */
		{ PB_IP_DF, false },			/* DF alone: whole */
		{ 0x8000, false },			/* reserved bit alone */
		{ 0, false },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct srff_key want = key4(IPPROTO_TCP, cases[i].fragment ? 0 : 1000,
					    cases[i].fragment ? 0 : 2000);
		struct srff_pkt p;
		u8 b[64];
		size_t n = pb_ipv4(b, SADDR4, DADDR4, IPPROTO_TCP,
				   cases[i].frag_off, 0, 20);

		/* Even the first fragment's TCP header is ignored. */
		n += pb_tcp(b + n, 1000, 2000, PB_RST);
		CHECK_EQ_INT(parse(b, n, 0, AF_INET, &p), 0);
		check_key(&p.key, &want, "ipv4 fragment");
		CHECK_EQ(p.fragment, cases[i].fragment);
		CHECK_EQ(p.has_ports, !cases[i].fragment);
		CHECK_EQ(p.tcp_fin_rst, !cases[i].fragment);
	}
}

/* The transport header is found at IHL * 4, whatever the options. */
static void ipv4_options(void)
{
	unsigned int optlen;

	for (optlen = 0; optlen <= 40; optlen += 4) {
		struct srff_key want = key4(IPPROTO_UDP, 5060, 5061);
		struct srff_pkt p;
		u8 b[96];
		size_t n = pb_ipv4(b, SADDR4, DADDR4, IPPROTO_UDP, 0, optlen, 8);

		n += pb_udp(b + n, 5060, 5061, 0);
		CHECK_EQ_INT(parse(b, n, 0, AF_INET, &p), 0);
		check_key(&p.key, &want, "ipv4 options");
	}
}

static void bad_headers_are_einval(void)
{
	struct srff_pkt p;
	u8 b[80], v6[80];
	size_t n = pb_ipv4_tcp(b, SADDR4, DADDR4, 1, 2, 0);
	size_t n6 = pb_ipv6_tcp(v6, SADDR4, DADDR4, 1, 2, 0);
	unsigned int ihl, version;

	for (ihl = 0; ihl < 5; ihl++) {
		b[0] = 0x40 | ihl;
		CHECK_EQ_INT(parse(b, n, 0, AF_INET, &p), -EINVAL);
	}
	b[0] = 0x45;
	for (version = 0; version < 16; version++) {
		if (version == 4)
			continue;
		b[0] = version << 4 | 5;
		CHECK_EQ_INT(parse(b, n, 0, AF_INET, &p), -EINVAL);
	}
	b[0] = 0x45;
	for (version = 0; version < 16; version++) {
		if (version == 6)
			continue;
		v6[0] = version << 4;
		CHECK_EQ_INT(parse(v6, n6, 0, AF_INET6, &p), -EINVAL);
	}
	v6[0] = 0x60;
	/* Each family's packet read as the other: wrong version. */
	CHECK_EQ_INT(parse(b, n, 0, AF_INET6, &p), -EINVAL);
	CHECK_EQ_INT(parse(v6, n6, 0, AF_INET, &p), -EINVAL);
	/* Families the parser does not know. */
	CHECK_EQ_INT(parse(b, n, 0, 0, &p), -EINVAL);
	CHECK_EQ_INT(parse(b, n, 0, 1, &p), -EINVAL);
	CHECK_EQ_INT(parse(b, n, 0, 255, &p), -EINVAL);
	/* Still fine once restored. */
	CHECK_EQ_INT(parse(b, n, 0, AF_INET, &p), 0);
	CHECK_EQ_INT(parse(v6, n6, 0, AF_INET6, &p), 0);
}

/* The network header need not start the buffer (e.g. after a MAC header). */
static void network_offset(void)
{
	struct srff_key want4 = key4(IPPROTO_TCP, 7, 8), want6 = key6(IPPROTO_TCP, 7, 8);
	struct srff_pkt p;
	u8 b[96];
	size_t n;

	memset(b, 0xff, 14);
	n = 14 + pb_ipv4_tcp(b + 14, SADDR4, DADDR4, 7, 8, 0);
	CHECK_EQ_INT(parse(b, n, 14, AF_INET, &p), 0);
	check_key(&p.key, &want4, "nhoff ipv4");
	CHECK_EQ_INT(parse(b, n, n, AF_INET, &p), -EINVAL);
	CHECK_EQ_INT(parse(b, n, 1000000, AF_INET, &p), -EINVAL);

	n = 14 + pb_ipv6_tcp(b + 14, SADDR4, DADDR4, 7, 8, 0);
	CHECK_EQ_INT(parse(b, n, 14, AF_INET6, &p), 0);
	check_key(&p.key, &want6, "nhoff ipv6");
}

static void ipv6_tcp_udp(void)
{
	struct srff_key want = key6(IPPROTO_TCP, 0xabcd, 22);
	struct srff_pkt p;
	u8 b[96], s[16], d[16];
	size_t n = pb_ipv6_tcp(b, SADDR4, DADDR4, 0xabcd, 22, PB_ACK | PB_FIN);

	CHECK_EQ_INT(parse(b, n, 0, AF_INET6, &p), 0);
	check_key(&p.key, &want, "ipv6 tcp");
	CHECK(p.has_ports && p.tcp_fin_rst && !p.fragment);
	CHECK_EQ(((u8 *)&p.key.saddr)[0], 0x20);
	CHECK_EQ(((u8 *)&p.key.saddr)[15], 0x01);

	pb_addr6(s, SADDR4);
	pb_addr6(d, DADDR4);
	n = pb_ipv6(b, s, d, IPPROTO_UDP, 8);
	n += pb_udp(b + n, 443, 50000, 0);
	want = key6(IPPROTO_UDP, 443, 50000);
	CHECK_EQ_INT(parse(b, n, 0, AF_INET6, &p), 0);
	check_key(&p.key, &want, "ipv6 udp");
}

/* Hop-by-hop, routing and destination options of several sizes, then TCP. */
static void ipv6_extension_headers(void)
{
	static const unsigned int lens[][3] = {
		{ 8, 8, 8 }, { 8, 24, 16 }, { 16, 8, 2048 }, { 2048, 2048, 2048 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		struct srff_key want = key6(IPPROTO_TCP, 80, 33000);
		static u8 b[40 + 3 * 2048 + 20];
		struct srff_pkt p;
		u8 s[16], d[16];
		size_t n;

		pb_addr6(s, SADDR4);
		pb_addr6(d, DADDR4);
		n = pb_ipv6(b, s, d, IPPROTO_HOPOPTS, 0);
		n += pb_ext6(b + n, IPPROTO_HOPOPTS, IPPROTO_ROUTING, lens[i][0]);
		n += pb_ext6(b + n, IPPROTO_ROUTING, IPPROTO_DSTOPTS, lens[i][1]);
		n += pb_ext6(b + n, IPPROTO_DSTOPTS, IPPROTO_TCP, lens[i][2]);
		n += pb_tcp(b + n, 80, 33000, PB_RST);
		/* All splits of a 6 KiB packet would be slow: linear and 3. */
		if (n > 512) {
			size_t heads[] = { n, 41, 40 + lens[i][0] + 1, n - 10 };
			unsigned int h;

			for (h = 0; h < 4; h++) {
				CHECK_EQ_INT(parse_one(b, n, heads[h], 0, AF_INET6, false, &p), 0);
				check_key(&p.key, &want, "big ext headers");
				CHECK(p.tcp_fin_rst);
			}
			continue;
		}
		CHECK_EQ_INT(parse(b, n, 0, AF_INET6, &p), 0);
		check_key(&p.key, &want, "ext headers");
		CHECK(p.has_ports && p.tcp_fin_rst && !p.fragment);
	}
}

/* A fragment header makes a fragment of the upper protocol, port-less. */
static void ipv6_fragment_header(void)
{
	static const struct {
		u16 offset;
		bool mf;
		bool hbh;
	} cases[] = {
		{ 0, true, false },	/* first fragment, UDP header inside */
		{ 100, true, false },
		{ 100, false, false },
		{ 0, true, true },	/* after hop-by-hop */
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct srff_key want = key6(IPPROTO_UDP, 0, 0);
		struct srff_pkt p;
		u8 b[128], s[16], d[16];
		size_t n;

		pb_addr6(s, SADDR4);
		pb_addr6(d, DADDR4);
		n = pb_ipv6(b, s, d, cases[i].hbh ? IPPROTO_HOPOPTS : IPPROTO_FRAGMENT, 0);
		if (cases[i].hbh)
			n += pb_ext6(b + n, IPPROTO_HOPOPTS, IPPROTO_FRAGMENT, 8);
		n += pb_frag6(b + n, IPPROTO_UDP, cases[i].offset, cases[i].mf, 0xdeadbeef);
		n += pb_udp(b + n, 4500, 4500, 8);
		n += pb_fill(b + n, 8);
		CHECK_EQ_INT(parse(b, n, 0, AF_INET6, &p), 0);
		check_key(&p.key, &want, "ipv6 fragment");
		CHECK(p.fragment && !p.has_ports);
	}
}

/* An atomic fragment (offset 0, M clear) is a whole packet (RFC 6946). */
static void ipv6_atomic_fragment(void)
{
	struct srff_key want = key6(IPPROTO_UDP, 4500, 4501);
	struct srff_pkt p;
	u8 b[128], s[16], d[16];
	size_t n;

	pb_addr6(s, SADDR4);
	pb_addr6(d, DADDR4);
	n = pb_ipv6(b, s, d, IPPROTO_FRAGMENT, 0);
	n += pb_frag6(b + n, IPPROTO_UDP, 0, false, 0xdeadbeef);
	n += pb_udp(b + n, 4500, 4501, 8);
	n += pb_fill(b + n, 8);
	CHECK_EQ_INT(parse(b, n, 0, AF_INET6, &p), 0);
	check_key(&p.key, &want, "ipv6 atomic fragment");
	CHECK(!p.fragment && p.has_ports);
}

/*
 * AH's length is in 4-octet units minus 2 (RFC 4302), not 8-octet units
 * minus 1 like the others: read the wrong way, the ports come from the
 * filler (0x5a5a) or the middle of the TCP header.
 */
static void ipv6_ah_length(void)
{
	static const unsigned int lens[] = { 12, 16, 20, 24, 28, 1028 };
	unsigned int i;

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		struct srff_key want = key6(IPPROTO_TCP, 1234, 4321);
		u8 b[40 + 1028 + 8 + 20], s[16], d[16];
		struct srff_pkt p;
		size_t n;

		pb_addr6(s, SADDR4);
		pb_addr6(d, DADDR4);
		n = pb_ipv6(b, s, d, IPPROTO_AH, 0);
		n += pb_ext6(b + n, IPPROTO_AH, IPPROTO_DSTOPTS, lens[i]);
		n += pb_ext6(b + n, IPPROTO_DSTOPTS, IPPROTO_TCP, 8);
		n += pb_tcp(b + n, 1234, 4321, 0);
		CHECK_EQ(b[41], lens[i] / 4 - 2);
		if (n > 512)
			CHECK_EQ_INT(parse_one(b, n, n, 0, AF_INET6, false, &p), 0);
		else
			CHECK_EQ_INT(parse(b, n, 0, AF_INET6, &p), 0);
		check_key(&p.key, &want, "AH");
	}
}

/*
 * At most SRFF_MAX_IPV6_EXTHDRS (8) extension headers are walked. The
 * counter counts headers examined, so with exactly 8 extension headers the
 * walk stops on the TCP header without reading it: proto TCP, no ports.
 * With 9 or more it stops on the 9th, whose type becomes the proto.
 */
static void ipv6_extension_header_limit(void)
{
	unsigned int k, nexts;

	for (nexts = 0; nexts <= 12; nexts++) {
		struct srff_pkt p;
		u8 b[40 + 12 * 8 + 20], s[16], d[16];
		size_t n;

		pb_addr6(s, SADDR4);
		pb_addr6(d, DADDR4);
		n = pb_ipv6(b, s, d, nexts ? IPPROTO_DSTOPTS : IPPROTO_TCP, 0);
		for (k = 0; k < nexts; k++)
			n += pb_ext6(b + n, IPPROTO_DSTOPTS,
				     k + 1 < nexts ? IPPROTO_DSTOPTS : IPPROTO_TCP, 8);
		n += pb_tcp(b + n, 25, 26, 0);
		CHECK_EQ_INT(parse(b, n, 0, AF_INET6, &p), 0);
		if (nexts <= SRFF_MAX_IPV6_EXTHDRS) {
			struct srff_key want = key6(IPPROTO_TCP, 25, 26);

			check_key(&p.key, &want, "under the limit");
			CHECK(p.has_ports);
		} else {
			struct srff_key want = key6(IPPROTO_DSTOPTS, 0, 0);

			check_key(&p.key, &want, "over the limit");
			CHECK(!p.has_ports && !p.fragment);
		}
	}
}

static void ipv6_portless(void)
{
	static const u8 protos[] = { IPPROTO_ICMPV6, IPPROTO_NONE, IPPROTO_ESP,
				     IPPROTO_GRE, 253 };
	unsigned int i;

	for (i = 0; i < sizeof(protos); i++) {
		struct srff_key want = key6(protos[i], 0, 0);
		struct srff_pkt p;
		u8 b[96], s[16], d[16];
		size_t n;

		pb_addr6(s, SADDR4);
		pb_addr6(d, DADDR4);
		n = pb_ipv6(b, s, d, protos[i], 20);
		n += pb_tcp(b + n, 0x1111, 0x2222, PB_FIN);
		CHECK_EQ_INT(parse(b, n, 0, AF_INET6, &p), 0);
		check_key(&p.key, &want, "ipv6 port-less");
		CHECK(!p.has_ports && !p.tcp_fin_rst);
	}
}

/*
 * Truncation: every prefix of a valid packet, at every head split. The
 * expected answer comes from a description of the packet (where each
 * header starts and how much of it the parser must read), not from the
 * parser: a header that is cut short ends the walk, port-less, with the
 * type of that header as the protocol.
 */
struct trunc_hop {
	unsigned int off;	/* where the header starts */
	unsigned int need;	/* bytes of it that must be present */
	u8 type;		/* proto if it is cut short */
};

struct trunc_case {
	const char *name;
	u8 family;
	u8 b[160];
	size_t len;
	unsigned int iphlen;
	struct trunc_hop hops[4];
	unsigned int nhops;
	unsigned int thoff, tneed;	/* transport; tneed 0: port-less */
	bool fragment;
	bool fin;
	struct srff_key full;		/* the key of the whole packet */
};

static void check_prefix(const struct trunc_case *c, size_t len)
{
	struct srff_key want = c->full;
	bool ports = false, frag = false;
	struct srff_pkt p;
	unsigned int i;
	int ret = parse(c->b, len, 0, c->family, &p);

	if (len < c->iphlen) {
		CHECK_EQ_INT(ret, -EINVAL);
		return;
	}
	CHECK_EQ_INT(ret, 0);
	for (i = 0; i < c->nhops; i++) {
		if (len < c->hops[i].off + c->hops[i].need) {
			want.proto = c->hops[i].type;
			goto portless;
		}
	}
	if (c->fragment) {
		frag = true;
		goto portless;
	}
	if (c->tneed && len >= c->thoff + c->tneed) {
		ports = true;
		goto check;
	}
portless:
	want.sport = 0;
	want.dport = 0;
check:
	check_key(&p.key, &want, c->name);
	CHECK_EQ(p.has_ports, ports);
	CHECK_EQ(p.fragment, frag);
	CHECK_EQ(p.tcp_fin_rst, ports && c->fin);
	if (srff_test_failed_checks)
		printf("    # %s: prefix of %zu bytes\n", c->name, len);
}

static void truncated_at_every_length(void)
{
	static struct trunc_case c[9];
	u8 s[16], d[16];
	unsigned int i, nc = 0;
	size_t n, len;

	pb_addr6(s, SADDR4);
	pb_addr6(d, DADDR4);

	c[nc] = (struct trunc_case){ .name = "ipv4 tcp", .family = AF_INET,
		.iphlen = 20, .thoff = 20, .tneed = 20, .fin = true,
		.full = key4(IPPROTO_TCP, 1, 2) };
	c[nc].len = pb_ipv4_tcp(c[nc].b, SADDR4, DADDR4, 1, 2, PB_FIN | PB_ACK);
	nc++;

	c[nc] = (struct trunc_case){ .name = "ipv4 options udp", .family = AF_INET,
		.iphlen = 20, .thoff = 28, .tneed = 8,
		.full = key4(IPPROTO_UDP, 3, 4) };
	n = pb_ipv4(c[nc].b, SADDR4, DADDR4, IPPROTO_UDP, 0, 8, 16);
	n += pb_udp(c[nc].b + n, 3, 4, 8);
	c[nc].len = n + pb_fill(c[nc].b + n, 8);
	nc++;

	c[nc] = (struct trunc_case){ .name = "ipv4 icmp", .family = AF_INET,
		.iphlen = 20, .full = key4(IPPROTO_ICMP, 0, 0) };
	n = pb_ipv4(c[nc].b, SADDR4, DADDR4, IPPROTO_ICMP, 0, 0, 8);
	c[nc].len = n + pb_icmp(c[nc].b + n, 8);
	nc++;

	c[nc] = (struct trunc_case){ .name = "ipv4 first fragment", .family = AF_INET,
		.iphlen = 20, .fragment = true, .full = key4(IPPROTO_TCP, 0, 0) };
	n = pb_ipv4(c[nc].b, SADDR4, DADDR4, IPPROTO_TCP, PB_IP_MF, 0, 20);
	c[nc].len = n + pb_tcp(c[nc].b + n, 5, 6, 0);
	nc++;

	c[nc] = (struct trunc_case){ .name = "ipv6 tcp", .family = AF_INET6,
		.iphlen = 40, .thoff = 40, .tneed = 20, .fin = true,
		.full = key6(IPPROTO_TCP, 7, 8) };
	c[nc].len = pb_ipv6_tcp(c[nc].b, SADDR4, DADDR4, 7, 8, PB_RST);
	nc++;

	c[nc] = (struct trunc_case){ .name = "ipv6 hbh rt dst tcp", .family = AF_INET6,
		.iphlen = 40, .hops = { { 40, 2, IPPROTO_HOPOPTS },
					{ 48, 2, IPPROTO_ROUTING },
					{ 72, 2, IPPROTO_DSTOPTS } },
		.nhops = 3, .thoff = 88, .tneed = 20,
		.full = key6(IPPROTO_TCP, 9, 10) };
	n = pb_ipv6(c[nc].b, s, d, IPPROTO_HOPOPTS, 68);
	n += pb_ext6(c[nc].b + n, IPPROTO_HOPOPTS, IPPROTO_ROUTING, 8);
	n += pb_ext6(c[nc].b + n, IPPROTO_ROUTING, IPPROTO_DSTOPTS, 24);
	n += pb_ext6(c[nc].b + n, IPPROTO_DSTOPTS, IPPROTO_TCP, 16);
	c[nc].len = n + pb_tcp(c[nc].b + n, 9, 10, 0);
	nc++;

	c[nc] = (struct trunc_case){ .name = "ipv6 ah udp", .family = AF_INET6,
		.iphlen = 40, .hops = { { 40, 2, IPPROTO_AH } }, .nhops = 1,
		.thoff = 64, .tneed = 8, .full = key6(IPPROTO_UDP, 11, 12) };
	n = pb_ipv6(c[nc].b, s, d, IPPROTO_AH, 32);
	n += pb_ext6(c[nc].b + n, IPPROTO_AH, IPPROTO_UDP, 24);
	c[nc].len = n + pb_udp(c[nc].b + n, 11, 12, 0);
	nc++;

	c[nc] = (struct trunc_case){ .name = "ipv6 hbh frag udp", .family = AF_INET6,
		.iphlen = 40, .hops = { { 40, 2, IPPROTO_HOPOPTS },
					{ 48, 8, IPPROTO_FRAGMENT } },
		.nhops = 2, .fragment = true, .full = key6(IPPROTO_UDP, 0, 0) };
	n = pb_ipv6(c[nc].b, s, d, IPPROTO_HOPOPTS, 24);
	n += pb_ext6(c[nc].b + n, IPPROTO_HOPOPTS, IPPROTO_FRAGMENT, 8);
	n += pb_frag6(c[nc].b + n, IPPROTO_UDP, 0, true, 1);
	c[nc].len = n + pb_udp(c[nc].b + n, 13, 14, 0);
	nc++;

	c[nc] = (struct trunc_case){ .name = "ipv6 dst icmpv6", .family = AF_INET6,
		.iphlen = 40, .hops = { { 40, 2, IPPROTO_DSTOPTS } }, .nhops = 1,
		.full = key6(IPPROTO_ICMPV6, 0, 0) };
	n = pb_ipv6(c[nc].b, s, d, IPPROTO_DSTOPTS, 16);
	n += pb_ext6(c[nc].b + n, IPPROTO_DSTOPTS, IPPROTO_ICMPV6, 8);
	c[nc].len = n + pb_icmp(c[nc].b + n, 128);
	nc++;

	for (i = 0; i < nc; i++) {
		unsigned int before = srff_test_failed_checks;

		for (len = 0; len <= c[i].len; len++) {
			check_prefix(&c[i], len);
			if (srff_test_failed_checks != before)
				break;
		}
	}
}

/* srff_key_equal() compares all 40 bytes: flip any one and keys differ. */
static void key_equal_needs_every_byte(void)
{
	struct srff_key a, b;
	unsigned int i, bit;

	CHECK_EQ(sizeof(struct srff_key), 40);
	CHECK_EQ(SRFF_KEY_WORDS, 5);
	CHECK_EQ(offsetof(struct srff_key, inner) + sizeof(a.inner), sizeof(a));
	for (i = 0; i < sizeof(a); i++)
		((u8 *)&a)[i] = i * 7 + 1;
	b = a;
	CHECK(srff_key_equal(&a, &b));
	for (i = 0; i < sizeof(a); i++) {
		for (bit = 0; bit < 8; bit++) {
			b = a;
			((u8 *)&b)[i] ^= 1u << bit;
			CHECK(!srff_key_equal(&a, &b));
			CHECK(!srff_key_equal(&b, &a));
		}
	}
}

/* What a segment carries after its headers: SYNs, pure ACKs and RSTs carry
 * nothing (no flow is created for them), data segments their payload.
 */
static void tcp_udp_payload_and_syn(void)
{
	u8 b[2200], s6[16], d6[16];
	struct srff_pkt p;
	size_t n;

	n = pb_ipv4(b, SADDR4, DADDR4, IPPROTO_TCP, 0, 0, 20);
	n += pb_tcp(b + n, 80, 40000, PB_SYN | PB_ACK);
	CHECK_EQ_INT(parse(b, n, 0, AF_INET, &p), 0);
	CHECK(p.tcp_syn && !p.tcp_fin_rst);
	CHECK_EQ(p.hdr_len, 40);
	CHECK_EQ(p.payload, 0);
	CHECK_EQ(p.tcp_seq, 1000);		/* pb_tcp's seq */
	CHECK_EQ(p.tcp_end_seq, 1000 + 1);	/* and the SYN */

	n = pb_ipv4(b, SADDR4, DADDR4, IPPROTO_TCP, 0, 8, 20 + 1000);
	n += pb_tcp(b + n, 80, 40000, PB_ACK | PB_PSH);
	n += pb_fill(b + n, 1000);
	CHECK_EQ_INT(parse(b, n, 0, AF_INET, &p), 0);
	CHECK(!p.tcp_syn);
	CHECK_EQ(p.hdr_len, 48);		/* 8 bytes of IP options */
	CHECK_EQ(p.payload, 1000);
	CHECK_EQ(p.tcp_seq, 1000);
	CHECK_EQ(p.tcp_end_seq, 1000 + 1000);	/* seq + payload */

	/* TCP options: the data offset says where the payload starts. */
	b[20 + 8 + 12] = 8 << 4;		/* doff 8: 12 option bytes */
	CHECK_EQ_INT(parse(b, n, 0, AF_INET, &p), 0);
	CHECK_EQ(p.hdr_len, 60);
	CHECK_EQ(p.payload, 988);
	b[20 + 8 + 12] = 2 << 4;		/* malformed: counted as 20 */
	CHECK_EQ_INT(parse(b, n, 0, AF_INET, &p), 0);
	CHECK_EQ(p.hdr_len, 48);

	pb_addr6(s6, SADDR4);
	pb_addr6(d6, DADDR4);
	n = pb_ipv6(b, s6, d6, IPPROTO_DSTOPTS, 16 + 8 + 30);
	n += pb_ext6(b + n, IPPROTO_DSTOPTS, IPPROTO_UDP, 16);
	n += pb_udp(b + n, 443, 50000, 30);
	n += pb_fill(b + n, 30);
	CHECK_EQ_INT(parse(b, n, 0, AF_INET6, &p), 0);
	CHECK_EQ(p.hdr_len, 40 + 16 + 8);
	CHECK_EQ(p.payload, 30);

	/* A fragment has no transport header to count. */
	n = pb_ipv4(b, SADDR4, DADDR4, IPPROTO_UDP, PB_IP_MF, 0, 1000);
	n += pb_fill(b + n, 1000);
	CHECK_EQ_INT(parse(b, n, 0, AF_INET, &p), 0);
	CHECK(p.fragment && !p.hdr_len && !p.payload);
}

/*
 * SRv6 encapsulation (an SRH, then IPv6 or IPv4) and IPVS's tunnels (IPIP,
 * GRE): the outer parse stops at the tunnel protocol and says where its
 * payload starts and whether an SRH came first; the inner parse keys the
 * packet by what it carries and counts every header from the outer one.
 */
static void inner_srv6_ipip_gre(void)
{
	struct srff_key want6 = key6(IPPROTO_TCP, 443, 40000);
	struct srff_key want4 = key4(IPPROTO_UDP, 53, 5353);
	struct srff_pkt p;
	u8 b[256], s[16], d[16];
	size_t n, h;

	pb_addr6(s, 0x0a0a);
	pb_addr6(d, 0x0b0b);

	/* IPv6, SRH of 2 segments, IPv6, TCP with 100 bytes. */
	n = pb_ipv6(b, s, d, IPPROTO_ROUTING, 40 + 40 + 20 + 100);
	n += pb_srh(b + n, IPPROTO_IPV6, 2);
	h = n;
	{
		u8 is[16], id[16];

		pb_addr6(is, SADDR4);
		pb_addr6(id, DADDR4);
		n += pb_ipv6(b + n, is, id, IPPROTO_TCP, 20 + 100);
	}
	n += pb_tcp(b + n, 443, 40000, PB_ACK);
	n += pb_fill(b + n, 100);
	CHECK_EQ_INT(parse(b, n, 0, AF_INET6, &p), 0);
	CHECK(p.srh && p.key.proto == IPPROTO_IPV6 && p.inner_off == h && !p.has_ports);
	CHECK_EQ_INT(parse_inner(b, n, 0, AF_INET6, &p), 0);
	check_key(&p.key, &want6, "srv6 ipv6 tcp");
	CHECK_EQ_INT(p.hdr_len, 40 + 40 + 40 + 20);
	CHECK_EQ_INT(p.payload, 100);
	CHECK(p.has_ports && !p.srh);

	/* IPv6, SRH of 1 segment, IPv4, UDP. */
	n = pb_ipv6(b, s, d, IPPROTO_ROUTING, 24 + 20 + 8 + 10);
	n += pb_srh(b + n, IPPROTO_IPIP, 1);
	n += pb_ipv4(b + n, SADDR4, DADDR4, IPPROTO_UDP, 0, 0, 8 + 10);
	n += pb_udp(b + n, 53, 5353, 10);
	n += pb_fill(b + n, 10);
	CHECK_EQ_INT(parse_inner(b, n, 0, AF_INET6, &p), 0);
	check_key(&p.key, &want4, "srv6 ipv4 udp");
	CHECK_EQ_INT(p.hdr_len, 40 + 24 + 20 + 8);

	/* Another routing type is not an SRH. */
	n = pb_ipv6(b, s, d, IPPROTO_ROUTING, 24 + 20 + 8);
	n += pb_ext6(b + n, IPPROTO_ROUTING, IPPROTO_IPIP, 24);
	n += pb_ipv4(b + n, SADDR4, DADDR4, IPPROTO_UDP, 0, 0, 8);
	n += pb_udp(b + n, 53, 5353, 0);
	CHECK_EQ_INT(parse(b, n, 0, AF_INET6, &p), 0);
	CHECK(!p.srh && p.key.proto == IPPROTO_IPIP);

	/* IPVS's IPIP: IPv4 in IPv4, at a network offset of 14. */
	memset(b, 0, 14);
	n = 14 + pb_ipv4(b + 14, 0x0a000001, 0x0a000002, IPPROTO_IPIP, 0, 0, 20 + 8);
	n += pb_ipv4(b + n, SADDR4, DADDR4, IPPROTO_UDP, 0, 0, 8);
	n += pb_udp(b + n, 53, 5353, 0);
	CHECK_EQ_INT(parse_inner(b, n, 14, AF_INET, &p), 0);
	check_key(&p.key, &want4, "ipip udp");
	CHECK_EQ_INT(p.hdr_len, 20 + 20 + 8);

	/* GRE with a key and a sequence number, carrying IPv6. */
	n = pb_ipv4(b, 0x0a000001, 0x0a000002, IPPROTO_GRE, 0, 0, 12 + 40 + 20);
	n += pb_gre(b + n, 0x3000, 0x86dd);
	{
		u8 is[16], id[16];

		pb_addr6(is, SADDR4);
		pb_addr6(id, DADDR4);
		n += pb_ipv6(b + n, is, id, IPPROTO_TCP, 20);
	}
	n += pb_tcp(b + n, 443, 40000, PB_ACK);
	CHECK_EQ_INT(parse_inner(b, n, 0, AF_INET, &p), 0);
	check_key(&p.key, &want6, "gre ipv6 tcp");
	CHECK_EQ_INT(p.hdr_len, 20 + 12 + 40 + 20);

	/* GRE carrying Ethernet (gretap), or version 1 (PPTP): not parsed,
	 * and the outer parse is left as it was.
	 */
	n = pb_ipv4(b, 0x0a000001, 0x0a000002, IPPROTO_GRE, 0, 0, 4 + 20 + 8);
	h = n + pb_gre(b + n, 0, 0x6558);
	n = h + pb_ipv4(b + h, SADDR4, DADDR4, IPPROTO_UDP, 0, 0, 8);
	n += pb_udp(b + n, 53, 5353, 0);
	CHECK_EQ_INT(parse_inner(b, n, 0, AF_INET, &p), -EINVAL);
	pb_gre(b + 20, 0x0001, 0x0800);
	CHECK_EQ_INT(parse_inner(b, n, 0, AF_INET, &p), -EINVAL);
	{
		struct sk_buff *skb;

		pb_gre(b + 20, 0, 0x6558);
		skb = srff_user_skb_new(b, n, n);
		CHECK(skb);
		if (skb) {
			struct srff_pkt q;

			CHECK_EQ_INT(srff_flowkey_parse(skb, 0, AF_INET, &p), 0);
			q = p;
			CHECK_EQ_INT(srff_flowkey_parse_inner(skb, 0, &p), -EINVAL);
			CHECK(!memcmp(&p, &q, sizeof(p)));
			srff_user_skb_free(skb);
		}
	}

	/* A fragment of an IPIP packet: its payload is not a whole header. */
	n = pb_ipv4(b, 0x0a000001, 0x0a000002, IPPROTO_IPIP, PB_IP_MF, 0, 20 + 8);
	n += pb_ipv4(b + n, SADDR4, DADDR4, IPPROTO_UDP, 0, 0, 8);
	n += pb_udp(b + n, 53, 5353, 0);
	CHECK_EQ_INT(parse_inner(b, n, 0, AF_INET, &p), -EINVAL);

	/* A truncated inner header: -EINVAL, at every length. */
	n = pb_ipv4(b, 0x0a000001, 0x0a000002, IPPROTO_IPIP, 0, 0, 20 + 8);
	n += pb_ipv4(b + n, SADDR4, DADDR4, IPPROTO_UDP, 0, 0, 8);
	for (h = 20; h < n; h++)
		CHECK_EQ_INT(parse_inner(b, h, 0, AF_INET, &p), -EINVAL);
}

/* A GSO super-packet puts its headers on the wire once per segment. */
static void wire_len_counts_headers_per_segment(void)
{
	u8 b[64 + 4000];
	struct sk_buff *skb;
	struct srff_pkt p;
	size_t n;

	n = pb_ipv4(b, SADDR4, DADDR4, IPPROTO_TCP, 0, 0, 20 + 4000);
	n += pb_tcp(b + n, 80, 40000, PB_ACK);
	n += pb_fill(b + n, 4000);
	skb = srff_user_skb_new(b, n, 60);
	CHECK(skb);
	if (!skb)
		return;
	CHECK_EQ_INT(srff_flowkey_parse(skb, 0, AF_INET, &p), 0);
	CHECK_EQ(srff_wire_len(skb, 0, &p), 4040);	/* not GSO */
	skb_shinfo(skb)->gso_size = 1448;		/* 3 segments */
	CHECK_EQ(srff_wire_len(skb, 0, &p), 4040 + 2 * 40);
	skb_shinfo(skb)->gso_size = 4000;		/* one: as sent */
	CHECK_EQ(srff_wire_len(skb, 0, &p), 4040);
	skb_shinfo(skb)->gso_size = 1000;		/* exactly 4 */
	CHECK_EQ(srff_wire_len(skb, 0, &p), 4040 + 3 * 40);
	/* No transport header read: nothing to repeat. */
	p.hdr_len = 0;
	CHECK_EQ(srff_wire_len(skb, 0, &p), 4040);
	srff_user_skb_free(skb);
}

const struct srff_test srff_tests_flowkey[] = {
	SRFF_TEST(ipv4_tcp),
	SRFF_TEST(tcp_fin_rst_flags),
	SRFF_TEST(ipv4_udp_and_udplite),
	SRFF_TEST(sctp_dccp_ports),
	SRFF_TEST(ipv4_portless_protocols),
	SRFF_TEST(ipv4_fragments),
	SRFF_TEST(ipv4_options),
	SRFF_TEST(bad_headers_are_einval),
	SRFF_TEST(network_offset),
	SRFF_TEST(ipv6_tcp_udp),
	SRFF_TEST(ipv6_extension_headers),
	SRFF_TEST(ipv6_fragment_header),
	SRFF_TEST(ipv6_atomic_fragment),
	SRFF_TEST(ipv6_ah_length),
	SRFF_TEST(ipv6_extension_header_limit),
	SRFF_TEST(ipv6_portless),
	SRFF_TEST(truncated_at_every_length),
	SRFF_TEST(key_equal_needs_every_byte),
	SRFF_TEST(tcp_udp_payload_and_syn),
	SRFF_TEST(wire_len_counts_headers_per_segment),
	SRFF_TEST(inner_srv6_ipip_gre),
	{ NULL, NULL }
};
