// SPDX-License-Identifier: GPL-2.0
/*
 * flows: dump the flow table, filtered by band and size in the kernel and
 * by the rest here, then sort and print; flush: forget every flow.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netlink/attr.h>

#include "srffctl.h"

struct flow {
	uint8_t family, proto, band;
	uint8_t saddr[16], daddr[16];
	uint16_t sport, dport;
	uint64_t bytes, age_ms, idle_ms;
	uint32_t flags;
	uint16_t inner;		/* UDP tunnel outer packets: inner-flow tag */
};

struct flows {
	struct flow *v;
	size_t n, cap;
};

static struct nla_policy flow_policy[SRFF_FLOW_A_MAX + 1] = {
	[SRFF_FLOW_A_FAMILY] = { .type = NLA_U8 },
	[SRFF_FLOW_A_PROTO] = { .type = NLA_U8 },
	[SRFF_FLOW_A_SADDR] = { .minlen = 4, .maxlen = 16 },
	[SRFF_FLOW_A_DADDR] = { .minlen = 4, .maxlen = 16 },
	[SRFF_FLOW_A_SPORT] = { .type = NLA_U16 },
	[SRFF_FLOW_A_DPORT] = { .type = NLA_U16 },
	[SRFF_FLOW_A_BYTES] = { .type = NLA_U64 },
	[SRFF_FLOW_A_BAND] = { .type = NLA_U8 },
	[SRFF_FLOW_A_AGE_MS] = { .type = NLA_U64 },
	[SRFF_FLOW_A_IDLE_MS] = { .type = NLA_U64 },
	[SRFF_FLOW_A_FLAGS] = { .type = NLA_U32 },
	[SRFF_FLOW_A_INNER] = { .type = NLA_U16 },
};

static int flow_cb(struct nlattr **tb, void *arg)
{
	struct flows *fs = arg;
	struct nlattr *a[SRFF_FLOW_A_MAX + 1];
	struct flow *f;

	if (!tb[SRFF_A_FLOW] ||
	    nla_parse_nested(a, SRFF_FLOW_A_MAX, tb[SRFF_A_FLOW], flow_policy) ||
	    !a[SRFF_FLOW_A_FAMILY]) {
		fprintf(stderr, "%s: malformed flow in the kernel's dump\n", prog);
		return EXIT_ERROR;
	}
	if (fs->n == fs->cap) {
		size_t cap = fs->cap ? fs->cap * 2 : 1024;
		struct flow *v = realloc(fs->v, cap * sizeof(*v));

		if (!v) {
			fprintf(stderr, "%s: out of memory\n", prog);
			return EXIT_ERROR;
		}
		fs->v = v;
		fs->cap = cap;
	}
	f = &fs->v[fs->n++];
	memset(f, 0, sizeof(*f));
	if (a[SRFF_FLOW_A_FAMILY])
		f->family = nla_get_u8(a[SRFF_FLOW_A_FAMILY]);
	if (a[SRFF_FLOW_A_PROTO])
		f->proto = nla_get_u8(a[SRFF_FLOW_A_PROTO]);
	if (a[SRFF_FLOW_A_SADDR] && nla_len(a[SRFF_FLOW_A_SADDR]) <= 16)
		memcpy(f->saddr, nla_data(a[SRFF_FLOW_A_SADDR]), nla_len(a[SRFF_FLOW_A_SADDR]));
	if (a[SRFF_FLOW_A_DADDR] && nla_len(a[SRFF_FLOW_A_DADDR]) <= 16)
		memcpy(f->daddr, nla_data(a[SRFF_FLOW_A_DADDR]), nla_len(a[SRFF_FLOW_A_DADDR]));
#define GET(attr, field, bits) if (a[attr]) f->field = nla_get_u##bits(a[attr])
	GET(SRFF_FLOW_A_SPORT, sport, 16);
	GET(SRFF_FLOW_A_DPORT, dport, 16);
	GET(SRFF_FLOW_A_BYTES, bytes, 64);
	GET(SRFF_FLOW_A_BAND, band, 8);
	GET(SRFF_FLOW_A_AGE_MS, age_ms, 64);
	GET(SRFF_FLOW_A_IDLE_MS, idle_ms, 64);
	GET(SRFF_FLOW_A_FLAGS, flags, 32);
	GET(SRFF_FLOW_A_INNER, inner, 16);
#undef GET
	return 0;
}

static void flows_reset(void *arg)
{
	((struct flows *)arg)->n = 0;
}

/* The names docs/interfaces.md gives in JSON; other protocols are numbers. */
static const char *proto_json_name(uint8_t p)
{
	switch (p) {
	case IPPROTO_TCP: return "tcp";
	case IPPROTO_UDP: return "udp";
	case IPPROTO_ICMP: return "icmp";
	case IPPROTO_ICMPV6: return "ipv6-icmp";
	}
	return NULL;
}

/* Filters the kernel applies (SRFF_A_FILTER_*). */
struct kfilter {
	int band;		/* -1: any */
	uint64_t min_bytes;	/* 0: any */
};

static int kfilter_fill(struct nl_msg *msg, void *arg)
{
	const struct kfilter *k = arg;

	if (k->band >= 0 && nla_put_u8(msg, SRFF_A_FILTER_BAND, k->band))
		return -1;
	if (k->min_bytes && nla_put_u64(msg, SRFF_A_FILTER_MIN_BYTES, k->min_bytes))
		return -1;
	return 0;
}

static enum { SORT_NONE, SORT_BYTES, SORT_IDLE, SORT_AGE } sort_key;

static int flow_cmp(const void *x, const void *y)
{
	const struct flow *a = x, *b = y;
	uint64_t va = 0, vb = 0;

	switch (sort_key) {
	case SORT_BYTES: va = a->bytes; vb = b->bytes; break;
	case SORT_IDLE: va = a->idle_ms; vb = b->idle_ms; break;
	case SORT_AGE: va = a->age_ms; vb = b->age_ms; break;
	case SORT_NONE: break;
	}
	return va < vb ? 1 : va > vb ? -1 : 0;	/* largest first */
}

int cmd_flows(int argc, char **argv)
{
	struct flows fs = { 0 };
	int proto = -1, family = 0, err;
	bool have_addr = false, have_port = false;
	uint8_t addr[16] = { 0 };
	int addr_family = 0;
	uint32_t port = 0, limit = 0, shown = 0, band;
	struct kfilter kf = { .band = -1 };

	sort_key = SORT_NONE;
	for (int i = 1; i < argc; i += 2) {
		const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage_error("flows: '%s' needs a value", k);
		if (!strcmp(k, "sort")) {
			if (!strcmp(v, "bytes")) sort_key = SORT_BYTES;
			else if (!strcmp(v, "idle")) sort_key = SORT_IDLE;
			else if (!strcmp(v, "age")) sort_key = SORT_AGE;
			else usage_error("flows: sort by bytes, idle or age");
		} else if (!strcmp(k, "proto")) {
			proto = parse_proto(v);
			if (proto < 0)
				usage_error("flows: '%s' is not a protocol (tcp, udp, icmp, ipv6-icmp, or a number)", v);
		} else if (!strcmp(k, "family")) {
			if (!strcmp(v, "4") || !strcmp(v, "inet")) family = AF_INET;
			else if (!strcmp(v, "6") || !strcmp(v, "inet6")) family = AF_INET6;
			else usage_error("flows: family is 4 or 6");
		} else if (!strcmp(k, "addr")) {
			if (inet_pton(AF_INET, v, addr) == 1)
				addr_family = AF_INET;
			else if (inet_pton(AF_INET6, v, addr) == 1)
				addr_family = AF_INET6;
			else
				usage_error("flows: '%s' is not an IPv4 or IPv6 address", v);
			have_addr = true;
		} else if (!strcmp(k, "port")) {
			if (parse_u32(v, &port) || port > 65535)
				usage_error("flows: '%s' is not a port", v);
			have_port = true;
		} else if (!strcmp(k, "band")) {
			if (parse_u32(v, &band) || band >= SRFF_MAX_BANDS)
				usage_error("flows: band is 0 to %d", SRFF_MAX_BANDS - 1);
			kf.band = band;
		} else if (!strcmp(k, "min-bytes")) {
			if (parse_size(v, &kf.min_bytes))
				usage_error("flows: '%s' is not a size", v);
		} else if (!strcmp(k, "limit")) {
			if (parse_u32(v, &limit))
				usage_error("flows: '%s' is not a count", v);
		} else {
			usage_error("flows: unknown option '%s'", k);
		}
	}

	err = srff_dump(SRFF_CMD_GET_FLOWS, kfilter_fill, &kf, flow_cb, flows_reset, &fs);
	if (err) {
		free(fs.v);
		return err;
	}
	if (sort_key != SORT_NONE)
		qsort(fs.v, fs.n, sizeof(*fs.v), flow_cmp);

	open_json_array(PRINT_JSON, NULL);
	for (size_t i = 0; i < fs.n; i++) {
		const struct flow *f = &fs.v[i];
		size_t alen = f->family == AF_INET ? 4 : 16;
		char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN], ep[64];
		const char *pname = proto_json_name(f->proto);

		if (proto >= 0 && f->proto != proto)
			continue;
		if (family && f->family != family)
			continue;
		if (have_port && f->sport != port && f->dport != port)
			continue;
		if (have_addr && (f->family != addr_family ||
				  (memcmp(f->saddr, addr, alen) && memcmp(f->daddr, addr, alen))))
			continue;
		if (limit && shown == limit)
			break;
		shown++;
		if (!inet_ntop(f->family, f->saddr, s, sizeof(s)))
			strcpy(s, "?");
		if (!inet_ntop(f->family, f->daddr, d, sizeof(d)))
			strcpy(d, "?");
		open_json_object(NULL);
		print_string(PRINT_JSON, "family", NULL, f->family == AF_INET ? "inet" : "inet6");
		if (pname)
			print_string(PRINT_ANY, "proto", "%-9s", pname);
		else if (f->proto == IPPROTO_UDPLITE) {
			print_uint(PRINT_JSON, "proto", NULL, f->proto);
			print_text("%-9s", "udplite");
		} else
			print_uint(PRINT_ANY, "proto", "%-9" PRIu64, f->proto);
		if (f->proto == IPPROTO_TCP || f->proto == IPPROTO_UDP || f->proto == IPPROTO_UDPLITE) {
			snprintf(ep, sizeof(ep), f->family == AF_INET ? "%s:%u" : "[%s]:%u", s, f->sport);
			print_string(PRINT_FP, NULL, " %-22s", ep);
			snprintf(ep, sizeof(ep), f->family == AF_INET ? "%s:%u" : "[%s]:%u", d, f->dport);
			print_string(PRINT_FP, NULL, " -> %-22s", ep);
		} else {
			print_string(PRINT_FP, NULL, " %-22s", s);
			print_string(PRINT_FP, NULL, " -> %-22s", d);
		}
		print_string(PRINT_JSON, "saddr", NULL, s);
		print_uint(PRINT_JSON, "sport", NULL, f->sport);
		print_string(PRINT_JSON, "daddr", NULL, d);
		print_uint(PRINT_JSON, "dport", NULL, f->dport);
		print_uint(PRINT_ANY, "bytes", " bytes %" PRIu64, f->bytes);
		print_uint(PRINT_ANY, "band", " band %" PRIu64, f->band);
		print_uint(PRINT_ANY, "age_ms", " age %" PRIu64 "ms", f->age_ms);
		print_uint(PRINT_ANY, "idle_ms", " idle %" PRIu64 "ms", f->idle_ms);
		print_bool(PRINT_ANY, "closed", " closed", f->flags & SRFF_FLOW_F_CLOSED);
		/* A UDP tunnel's outer packets, one entry per inner flow. */
		if (f->inner)
			print_uint(PRINT_ANY, "inner", " inner %" PRIu64, f->inner);
		print_text("\n");
		close_json_object();
	}
	close_json_array(PRINT_JSON, NULL);
	free(fs.v);
	return 0;
}

int cmd_flush(int argc, char **argv)
{
	(void)argv;
	if (argc > 1)
		usage_error("flush takes no arguments");
	return srff_request(srff_msg(SRFF_CMD_FLUSH_FLOWS, 0), NULL, NULL);
}
