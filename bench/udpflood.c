// SPDX-License-Identifier: GPL-2.0
/*
 * udpflood: send small UDP datagrams round-robin over N flows through the
 * IP stack (an ordinary socket, so every packet passes POST_ROUTING), and
 * report packets per second.
 *
 *   udpflood DST4 NFLOWS SECONDS [PAYLOAD] [NADDR] [SLICE_MS]
 *
 * Flows are (DST4 + i % NADDR, port 1024 + (i / NADDR) % 60000): up to
 * 60000 * NADDR distinct flows. sendmmsg() sends 64 datagrams a call, each
 * to the next flow. The first pass over all flows is not timed (it creates
 * them in srff's table); then packets are counted for SECONDS.
 * Prints: "flows N pps P" on stdout. With SLICE_MS, also a line
 * "slice T_NS PPS" at the end of every SLICE_MS of the timed phase (T_NS:
 * CLOCK_REALTIME, comparable with `date +%s%N`), so a run can be lined up
 * with something else happening on the machine.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BATCH 64

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long long realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct sockaddr_in *dst;
	struct mmsghdr msgs[BATCH];
	struct iovec iov;
	char payload[1500] = { 0 };
	unsigned long nflows, naddr, i, next = 0, sent = 0;
	unsigned long slice_sent = 0;
	double secs, slice = 0, t0, t, ts;
	struct in_addr base;
	size_t len;
	int fd;

	if (argc < 4 || !inet_aton(argv[1], &base)) {
		fprintf(stderr, "usage: udpflood DST4 NFLOWS SECONDS [PAYLOAD] [NADDR] [SLICE_MS]\n");
		return 2;
	}
	nflows = strtoul(argv[2], NULL, 0);
	secs = atof(argv[3]);
	len = argc > 4 ? strtoul(argv[4], NULL, 0) : 18;
	naddr = argc > 5 ? strtoul(argv[5], NULL, 0) : 1;
	slice = argc > 6 ? atof(argv[6]) / 1e3 : 0;
	if (!nflows || !naddr || len > sizeof(payload) || nflows > 60000 * naddr ||
	    slice < 0) {
		fprintf(stderr, "udpflood: bad arguments\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);	/* slices are read while it runs */
	dst = calloc(nflows, sizeof(*dst));
	if (!dst)
		return 1;
	for (i = 0; i < nflows; i++) {
		dst[i].sin_family = AF_INET;
		dst[i].sin_addr.s_addr = htonl(ntohl(base.s_addr) + i % naddr);
		dst[i].sin_port = htons(1024 + (i / naddr) % 60000);
	}
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0) {
		perror("socket");
		return 1;
	}
	iov.iov_base = payload;
	iov.iov_len = len;
	memset(msgs, 0, sizeof(msgs));
	for (i = 0; i < BATCH; i++) {
		msgs[i].msg_hdr.msg_iov = &iov;
		msgs[i].msg_hdr.msg_iovlen = 1;
		msgs[i].msg_hdr.msg_namelen = sizeof(*dst);
	}

	/* Warm-up: every flow once. Then the timed phase. */
	for (int timed = 0; timed < 2; timed++) {
		unsigned long goal = timed ? ~0UL : nflows;

		sent = 0;
		t0 = ts = now();
		while (sent < goal) {
			int n;

			for (i = 0; i < BATCH; i++) {
				msgs[i].msg_hdr.msg_name = &dst[next];
				next = next + 1 == nflows ? 0 : next + 1;
			}
			n = sendmmsg(fd, msgs, BATCH, 0);
			if (n < 0) {
				perror("sendmmsg");
				return 1;
			}
			sent += n;
			if (timed && slice) {
				t = now();
				if (t - ts >= slice) {
					printf("slice %lld %.0f\n", realtime_ns(),
					       (sent - slice_sent) / (t - ts));
					slice_sent = sent;
					ts = t;
				}
				if (t - t0 >= secs)
					break;
			} else if (timed && (sent & 4095) < BATCH && now() - t0 >= secs) {
				break;
			}
		}
	}
	t = now() - t0;
	printf("flows %lu pps %.0f\n", nflows, sent / t);
	return 0;
}
