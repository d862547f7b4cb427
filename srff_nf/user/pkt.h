/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Packet bytes for tests, the fuzzer's seed corpus and the benchmark, built
 * byte by byte from the RFCs rather than with the uapi structs the parser
 * reads, so a wrong struct or field in the parser cannot cancel out.
 * All arguments are in host order; every function writes at @p and returns
 * the number of bytes written.
 */
#ifndef _SRFF_USER_PKT_H
#define _SRFF_USER_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PB_FIN		0x01
#define PB_SYN		0x02
#define PB_RST		0x04
#define PB_PSH		0x08
#define PB_ACK		0x10
#define PB_URG		0x20
#define PB_ECE		0x40
#define PB_CWR		0x80

#define PB_IP_MF	0x2000
#define PB_IP_DF	0x4000

/* Filler of option and payload bytes: read as a port it is 0x5a5a. */
#define PB_FILL		0x5a

/* IPv4 header with @optlen (multiple of 4, <= 40) bytes of NOP options and
 * tot_len covering @payload_len; @frag_off carries the flags and offset.
 */
size_t pb_ipv4(uint8_t *p, uint32_t saddr, uint32_t daddr, uint8_t proto,
	       uint16_t frag_off, unsigned int optlen, size_t payload_len);
/* IPv6 fixed header. */
size_t pb_ipv6(uint8_t *p, const uint8_t saddr[16], const uint8_t daddr[16],
	       uint8_t nexthdr, size_t payload_len);
/* Extension header of @type (hop-by-hop, routing, destination options: @len
 * a multiple of 8; AH: a multiple of 4, >= 12), contents PB_FILL.
 */
size_t pb_ext6(uint8_t *p, uint8_t type, uint8_t nexthdr, unsigned int len);
/* IPv6 fragment header, @offset in 8-octet units. */
size_t pb_frag6(uint8_t *p, uint8_t nexthdr, uint16_t offset, bool mf,
		uint32_t id);
/* SRv6 segment routing header (RFC 8754) with @nsegs segments (2001:db8::
 * addresses ending in 0x5e60 + i): routing type 4.
 */
size_t pb_srh(uint8_t *p, uint8_t nexthdr, unsigned int nsegs);
/* GRE header (RFC 2784, 2890): @flags (C 0x8000, K 0x2000, S 0x1000, and
 * the version in the low bits) and @proto (an EtherType); the optional
 * words it announces follow, PB_FILL.
 */
size_t pb_gre(uint8_t *p, uint16_t flags, uint16_t proto);
size_t pb_tcp(uint8_t *p, uint16_t sport, uint16_t dport, uint8_t flags);
size_t pb_udp(uint8_t *p, uint16_t sport, uint16_t dport, size_t payload_len);
size_t pb_icmp(uint8_t *p, uint8_t type);
/* Fill @len payload bytes with PB_FILL. */
size_t pb_fill(uint8_t *p, size_t len);

/* 2001:db8::/32 address whose last four bytes are @n. */
void pb_addr6(uint8_t a[16], uint32_t n);

/* Whole packets, the common cases. */
size_t pb_ipv4_tcp(uint8_t *p, uint32_t saddr, uint32_t daddr,
		   uint16_t sport, uint16_t dport, uint8_t flags);
size_t pb_ipv6_tcp(uint8_t *p, uint32_t saddr, uint32_t daddr,
		   uint16_t sport, uint16_t dport, uint8_t flags);

#endif /* _SRFF_USER_PKT_H */
