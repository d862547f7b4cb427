// SPDX-License-Identifier: GPL-2.0
/* Hand-built packet bytes: see pkt.h. */
#include <string.h>

#include "pkt.h"

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

size_t pb_ipv4(uint8_t *p, uint32_t saddr, uint32_t daddr, uint8_t proto,
	       uint16_t frag_off, unsigned int optlen, size_t payload_len)
{
	size_t hlen = 20 + optlen;
	uint32_t sum = 0;
	size_t i;

	memset(p, 0, hlen);
	p[0] = 0x40 | (hlen / 4);		/* version 4, IHL */
	put16(p + 2, hlen + payload_len);	/* total length */
	put16(p + 4, 0x1234);			/* identification */
	put16(p + 6, frag_off);
	p[8] = 64;				/* TTL */
	p[9] = proto;
	put32(p + 12, saddr);
	put32(p + 16, daddr);
	memset(p + 20, 1, optlen);		/* NOP options */
	for (i = 0; i < hlen; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	put16(p + 10, ~sum);
	return hlen;
}

size_t pb_ipv6(uint8_t *p, const uint8_t saddr[16], const uint8_t daddr[16],
	       uint8_t nexthdr, size_t payload_len)
{
	memset(p, 0, 40);
	p[0] = 0x60;				/* version 6 */
	put16(p + 4, payload_len);
	p[6] = nexthdr;
	p[7] = 64;				/* hop limit */
	memcpy(p + 8, saddr, 16);
	memcpy(p + 24, daddr, 16);
	return 40;
}

size_t pb_ext6(uint8_t *p, uint8_t type, uint8_t nexthdr, unsigned int len)
{
	memset(p, PB_FILL, len);
	p[0] = nexthdr;
	if (type == 51)				/* AH: 4-octet units, minus 2 */
		p[1] = len / 4 - 2;
	else					/* 8-octet units, minus 1 */
		p[1] = len / 8 - 1;
	return len;
}

size_t pb_srh(uint8_t *p, uint8_t nexthdr, unsigned int nsegs)
{
	unsigned int i;

	p[0] = nexthdr;
	p[1] = 2 * nsegs;		/* 8-octet units past the first 8 */
	p[2] = 4;			/* routing type: segment routing */
	p[3] = nsegs - 1;		/* segments left */
	p[4] = nsegs - 1;		/* last entry */
	p[5] = 0;			/* flags */
	put16(p + 6, 0);		/* tag */
	for (i = 0; i < nsegs; i++)
		pb_addr6(p + 8 + 16 * i, 0x5e60 + i);
	return 8 + 16 * nsegs;
}

size_t pb_gre(uint8_t *p, uint16_t flags, uint16_t proto)
{
	size_t n = 4;

	put16(p, flags);
	put16(p + 2, proto);
	if (flags & 0x8000)
		n += 4;
	if (flags & 0x2000)
		n += 4;
	if (flags & 0x1000)
		n += 4;
	memset(p + 4, PB_FILL, n - 4);
	return n;
}

size_t pb_frag6(uint8_t *p, uint8_t nexthdr, uint16_t offset, bool mf,
		uint32_t id)
{
	p[0] = nexthdr;
	p[1] = 0;
	put16(p + 2, (uint16_t)(offset << 3) | (mf ? 1 : 0));
	put32(p + 4, id);
	return 8;
}

size_t pb_tcp(uint8_t *p, uint16_t sport, uint16_t dport, uint8_t flags)
{
	memset(p, 0, 20);
	put16(p, sport);
	put16(p + 2, dport);
	put32(p + 4, 1000);			/* sequence */
	put32(p + 8, flags & PB_ACK ? 2000 : 0);
	p[12] = 5 << 4;				/* data offset */
	p[13] = flags;
	put16(p + 14, 65535);			/* window */
	return 20;
}

size_t pb_udp(uint8_t *p, uint16_t sport, uint16_t dport, size_t payload_len)
{
	put16(p, sport);
	put16(p + 2, dport);
	put16(p + 4, 8 + payload_len);
	put16(p + 6, 0);
	return 8;
}

size_t pb_icmp(uint8_t *p, uint8_t type)
{
	memset(p, 0, 8);
	p[0] = type;
	put16(p + 4, 0x4242);			/* identifier */
	put16(p + 6, 1);			/* sequence */
	return 8;
}

size_t pb_fill(uint8_t *p, size_t len)
{
	memset(p, PB_FILL, len);
	return len;
}

void pb_addr6(uint8_t a[16], uint32_t n)
{
	memset(a, 0, 16);
	a[0] = 0x20;
	a[1] = 0x01;
	a[2] = 0x0d;
	a[3] = 0xb8;
	put32(a + 12, n);
}

size_t pb_ipv4_tcp(uint8_t *p, uint32_t saddr, uint32_t daddr,
		   uint16_t sport, uint16_t dport, uint8_t flags)
{
	size_t n = pb_ipv4(p, saddr, daddr, 6, PB_IP_DF, 0, 20);

	return n + pb_tcp(p + n, sport, dport, flags);
}

size_t pb_ipv6_tcp(uint8_t *p, uint32_t saddr, uint32_t daddr,
		   uint16_t sport, uint16_t dport, uint8_t flags)
{
	uint8_t s[16], d[16];
	size_t n;

	pb_addr6(s, saddr);
	pb_addr6(d, daddr);
	n = pb_ipv6(p, s, d, 6, 20);
	return n + pb_tcp(p + n, sport, dport, flags);
}
