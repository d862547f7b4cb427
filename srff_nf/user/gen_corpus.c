// SPDX-License-Identifier: GPL-2.0
/*
 * Writes the fuzzer's seed corpus: one file per packet, byte 0 the
 * selector fuzz_flowkey.c reads (family, head split), then the packet.
 * Usage: gen_corpus DIR
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pkt.h"

#define V4	0x00
#define V6	0x01
/* Linear head of 2 * (k - 1) bytes. */
#define HEAD(k)	((uint8_t)((k) << 1))

#define P_TCP		6
#define P_UDP		17
#define P_ICMP		1
#define P_HOPOPTS	0
#define P_ROUTING	43
#define P_FRAGMENT	44
#define P_AH		51
#define P_ICMPV6	58
#define P_DSTOPTS	60

static const char *dir;

static void put(const char *name, uint8_t sel, const uint8_t *p, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(&sel, 1, 1, f) != 1 || fwrite(p, 1, len, f) != len ||
	    fclose(f)) {
		perror(path);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	uint8_t b[512], s[16], d[16];
	size_t n;
	int i;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	dir = argv[1];
	if (mkdir(dir, 0755) && errno != EEXIST) {
		perror(dir);
		return 1;
	}
	pb_addr6(s, 1);
	pb_addr6(d, 2);

	n = pb_ipv4_tcp(b, 0x0a000001, 0xc0a80102, 40000, 443, PB_SYN);
	put("v4-tcp-syn", V4, b, n);
	n = pb_ipv4_tcp(b, 0x0a000001, 0xc0a80102, 40000, 443, PB_FIN | PB_ACK);
	put("v4-tcp-fin-split", V4 | HEAD(11), b, n);	/* head of 20 */
	n = pb_ipv4_tcp(b, 0x0a000002, 0xc0a80102, 40001, 80, PB_RST);
	put("v4-tcp-rst", V4, b, n);

	n = pb_ipv4(b, 0x0a000001, 0x08080808, P_UDP, 0, 0, 16);
	n += pb_udp(b + n, 5353, 53, 8);
	put("v4-udp", V4, b, n + pb_fill(b + n, 8));

	n = pb_ipv4(b, 0x0a000001, 0x08080808, P_UDP, 0, 12, 8);
	put("v4-udp-options", V4 | HEAD(17), b, n + pb_udp(b + n, 1, 2, 0));

	n = pb_ipv4(b, 0x0a000001, 0x08080808, P_ICMP, 0, 0, 8);
	put("v4-icmp", V4, b, n + pb_icmp(b + n, 8));

	n = pb_ipv4(b, 0x0a000001, 0xc0a80102, P_UDP, PB_IP_MF, 0, 16);
	n += pb_udp(b + n, 4500, 4500, 1400);
	put("v4-frag-first", V4, b, n + pb_fill(b + n, 8));

	n = pb_ipv4(b, 0x0a000001, 0xc0a80102, P_UDP, 185, 0, 16);
	put("v4-frag-last", V4, b, n + pb_fill(b + n, 16));

	n = pb_ipv6_tcp(b, 1, 2, 50000, 22, PB_ACK);
	put("v6-tcp", V6, b, n);

	n = pb_ipv6(b, s, d, P_UDP, 8);
	put("v6-udp", V6 | HEAD(5), b, n + pb_udp(b + n, 443, 50001, 0));

	n = pb_ipv6(b, s, d, P_HOPOPTS, 68);
	n += pb_ext6(b + n, P_HOPOPTS, P_ROUTING, 8);
	n += pb_ext6(b + n, P_ROUTING, P_DSTOPTS, 24);
	n += pb_ext6(b + n, P_DSTOPTS, P_TCP, 16);
	put("v6-hbh-rt-dst-tcp", V6, b, n + pb_tcp(b + n, 1, 2, PB_FIN));

	n = pb_ipv6(b, s, d, P_HOPOPTS, 32);
	n += pb_ext6(b + n, P_HOPOPTS, P_FRAGMENT, 8);
	n += pb_frag6(b + n, P_UDP, 0, true, 0x01020304);
	n += pb_udp(b + n, 4500, 4500, 8);
	put("v6-hbh-frag-udp", V6 | HEAD(26), b, n + pb_fill(b + n, 8));

	n = pb_ipv6(b, s, d, P_AH, 44);
	n += pb_ext6(b + n, P_AH, P_TCP, 24);
	put("v6-ah-tcp", V6, b, n + pb_tcp(b + n, 3, 4, 0));

	n = pb_ipv6(b, s, d, P_ICMPV6, 8);
	put("v6-icmpv6", V6, b, n + pb_icmp(b + n, 128));

	n = pb_ipv6(b, s, d, P_DSTOPTS, 9 * 8 + 20);
	for (i = 0; i < 9; i++)
		n += pb_ext6(b + n, P_DSTOPTS, i < 8 ? P_DSTOPTS : P_TCP, 8);
	put("v6-9-dstopts-tcp", V6, b, n + pb_tcp(b + n, 5, 6, 0));

	/* Tunnels the hook keys by their inner flow (SRv6, IPVS). */
	n = pb_ipv6(b, s, d, P_ROUTING, 40 + 40 + 20);
	n += pb_srh(b + n, 41, 2);
	n += pb_ipv6(b + n, d, s, P_TCP, 20);
	put("v6-srh-v6-tcp", V6, b, n + pb_tcp(b + n, 443, 40000, PB_ACK));

	n = pb_ipv4(b, 0x0a000001, 0x0a000002, 4, 0, 0, 20 + 8);
	n += pb_ipv4(b + n, 0x0a000003, 0x0a000004, P_UDP, 0, 0, 8);
	put("v4-ipip-udp", V4, b, n + pb_udp(b + n, 53, 5353, 0));

	n = pb_ipv4(b, 0x0a000001, 0x0a000002, 47, 0, 0, 8 + 40 + 20);
	n += pb_gre(b + n, 0x2000, 0x86dd);
	n += pb_ipv6(b + n, s, d, P_TCP, 20);
	put("v4-gre-key-v6-tcp", V4 | HEAD(13), b, n + pb_tcp(b + n, 80, 40001, PB_SYN));
	return 0;
}
